// The chip gate's messages, compiled at -O3 (meson.build): g++ 12 warned falsely (-Wrestrict) on a
// `"A" + std::to_string(...)` inlined into them at -O3 only, so a release build with -Werror failed
// where the test builds (-O2) passed.
#include <doctest/doctest.h>

#include <string>

#include "uopcg/runtime/kgsl.hpp"

using namespace uopcg::kgsl;

TEST_CASE("kgsl at -O3: the chip's name and the gate's reason") {
  CHECK(chip_id{0x06030001}.name() == "A630");
  CHECK(chip_id{0x43050a01}.name() == "chip 0x43050A01");
  CHECK(unsupported_chip_reason({0x06030001}).empty());
  const std::string why = unsupported_chip_reason({0x06040001});
  CHECK(why.rfind("Adreno A640 (chip id 0x06040001) is not supported", 0) == 0);
}
