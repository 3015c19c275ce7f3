// ABI: request numbers against kgsl.md §2.1, the _IOC formula, flag composites, the kgsl-abi table.
#include <doctest/doctest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "uopcg/runtime/kgsl/abi.hpp"
#include "uopcg/runtime/kgsl/sys.hpp"

using namespace uopcg::kgsl;
using namespace uopcg::kgsl::abi;

namespace {
struct golden {
  std::uint32_t request, nr, dir, size;
  const char* name;
};
// kgsl.md §2.1 (dir: 1 = W, 3 = RW).
constexpr golden table[] = {
    {0xC0180902, 0x02, 3, 24, "IOCTL_KGSL_DEVICE_GETPROPERTY"},
    {0x40080906, 0x06, 1, 8, "IOCTL_KGSL_DEVICE_WAITTIMESTAMP"},
    {0x400C0907, 0x07, 1, 12, "IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID"},
    {0xC0080911, 0x11, 3, 8, "IOCTL_KGSL_CMDSTREAM_READTIMESTAMP"},
    {0xC0080913, 0x13, 3, 8, "IOCTL_KGSL_DRAWCTXT_CREATE"},
    {0x40040914, 0x14, 1, 4, "IOCTL_KGSL_DRAWCTXT_DESTROY"},
    {0xC0300915, 0x15, 3, 48, "IOCTL_KGSL_MAP_USER_MEM"},
    {0xC00C0916, 0x16, 3, 12, "IOCTL_KGSL_CMDSTREAM_READTIMESTAMP_CTXTID"},
    {0x40080921, 0x21, 1, 8, "IOCTL_KGSL_SHAREDMEM_FREE"},
    {0x40180932, 0x32, 1, 24, "IOCTL_KGSL_SETPROPERTY"},
    {0xC0200933, 0x33, 3, 32, "IOCTL_KGSL_TIMESTAMP_EVENT"},
    {0xC0300934, 0x34, 3, 48, "IOCTL_KGSL_GPUMEM_ALLOC_ID"},
    {0xC0080935, 0x35, 3, 8, "IOCTL_KGSL_GPUMEM_FREE_ID"},
    {0xC0480936, 0x36, 3, 72, "IOCTL_KGSL_GPUMEM_GET_INFO"},
    {0x40200937, 0x37, 1, 32, "IOCTL_KGSL_GPUMEM_SYNC_CACHE"},
    {0xC018093B, 0x3B, 3, 24, "IOCTL_KGSL_PERFCOUNTER_READ"},
    {0xC038093D, 0x3D, 3, 56, "IOCTL_KGSL_SUBMIT_COMMANDS"},
    {0xC0300945, 0x45, 3, 48, "IOCTL_KGSL_GPUOBJ_ALLOC"},
    {0x40200946, 0x46, 1, 32, "IOCTL_KGSL_GPUOBJ_FREE"},
    {0xC0300947, 0x47, 3, 48, "IOCTL_KGSL_GPUOBJ_INFO"},
    {0xC0200948, 0x48, 3, 32, "IOCTL_KGSL_GPUOBJ_IMPORT"},
    {0x40100949, 0x49, 1, 16, "IOCTL_KGSL_GPUOBJ_SYNC"},
    {0xC040094A, 0x4A, 3, 64, "IOCTL_KGSL_GPU_COMMAND"},
};
}  // namespace

TEST_CASE("every ioctl request equals dir<<30 | size<<16 | 0x09<<8 | nr and the golden value") {
  REQUIRE(ioctl_rows.size() == std::size(table));
  for (std::size_t i = 0; i < std::size(table); ++i) {
    const auto& g = table[i];
    const auto& r = ioctl_rows[i];
    CAPTURE(g.name);
    CHECK(std::string(r.name) == g.name);
    CHECK(r.request == g.request);
    CHECK(r.size == g.size);
    CHECK((g.dir << 30 | g.size << 16 | 0x09u << 8 | g.nr) == g.request);
    CHECK(ioc_nr(r.request) == g.nr);
    CHECK(ioc_dir(r.request) == g.dir);
    CHECK(ioc_size(r.request) == g.size);
    CHECK(ioc_type(r.request) == KGSL_IOC_TYPE);
    CHECK(std::string(ioctl_name(g.request)) == g.name);
  }
  // The ones the launcher uses, spelled out (kgsl.md §12.3-2).
  CHECK(IOCTL_KGSL_GPU_COMMAND == 0xC040094Au);
  CHECK(IOCTL_KGSL_GPUOBJ_ALLOC == 0xC0300945u);
  CHECK(IOCTL_KGSL_DRAWCTXT_CREATE == 0xC0080913u);
  CHECK(IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID == 0x400C0907u);
  CHECK(std::string(ioctl_name(0x12345678)).empty());
}

TEST_CASE("flag composites match tinygrad's values") {
  CHECK(tinygrad_context_flags == 0x04008A12u);
  CHECK(tinygrad_alloc_flags == 0x100C0000u);
  CHECK((tinygrad_alloc_flags | cachemode(KGSL_CACHEMODE_UNCACHED)) == 0x140C0000u);
  CHECK(context_priority(8) == 0x8000u);
  CHECK(context_preempt_style(KGSL_CONTEXT_PREEMPT_STYLE_FINEGRAIN) == 0x04000000u);
  CHECK((KGSL_CONTEXT_PREAMBLE | KGSL_CONTEXT_NO_GMEM_ALLOC | KGSL_CONTEXT_SAVE_GMEM) == 0x13u);  // turnip's
}

TEST_CASE("abi_lines prints tab-separated ioctl and field rows with uapi names") {
  const auto lines = abi_lines();
  REQUIRE(lines.size() == ioctl_rows.size() + field_rows.size());
  CHECK(lines.front() == "ioctl\tIOCTL_KGSL_DEVICE_GETPROPERTY\t0xC0180902\t24");
  bool saw_cmd = false, saw_field = false, saw_devinfo = false;
  for (const auto& l : lines) {
    saw_cmd |= l == "ioctl\tIOCTL_KGSL_GPU_COMMAND\t0xC040094A\t64";
    saw_field |= l == "field\tkgsl_gpu_command\ttimestamp\t60\t4";
    saw_devinfo |= l == "field\tkgsl_devinfo\tgmem_sizebytes\t32\t8";
    CHECK(l.find(' ') == std::string::npos);
    const auto tabs = static_cast<std::size_t>(std::count(l.begin(), l.end(), '\t'));
    CHECK(tabs == (l.rfind("ioctl", 0) == 0 ? 3u : 4u));
  }
  CHECK(saw_cmd);
  CHECK(saw_field);
  CHECK(saw_devinfo);
}

TEST_CASE("errno text names the errno and its description") {
  CHECK(errno_text(ENOMEM) == "ENOMEM (" + std::string(std::strerror(ENOMEM)) + ")");
  CHECK(errno_text(EDEADLK).rfind("EDEADLK (", 0) == 0);
  CHECK(errno_text(9999).rfind("errno 9999 (", 0) == 0);
  try {
    uopcg::kgsl::detail::fail_ioctl(IOCTL_KGSL_GPUOBJ_ALLOC, ENOMEM);
    FAIL("no throw");
  } catch (const uopcg::error& e) {
    CHECK(std::string(e.what()) == "IOCTL_KGSL_GPUOBJ_ALLOC failed: ENOMEM (" + std::string(std::strerror(ENOMEM)) + ")");
  }
}
