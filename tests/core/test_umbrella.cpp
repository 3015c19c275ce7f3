// Uses only <uopcg/uopcg.hpp>, so it also runs against the generated single header.
#include <doctest/doctest.h>

#include <uopcg/uopcg.hpp>

using namespace uopcg;

TEST_CASE("the umbrella header builds, walks and prints a kernel") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 16);
  UOp in = param(a, 1, DType::float32, 64);
  UOp g = range(a, 16, 0, AxisType::GLOBAL);
  UOp r = range(a, 4, 1, AxisType::REDUCE);
  UOp acc = reduce(load(index(in, g * 4 + r)), Ops::ADD, r);
  UOp k = sink(end(store(index(out, g), acc), g));
  CHECK(toposort(k).size() == 16);  // consts 16, 64, 4 are shared
  CHECK(ranges(acc).size() == 1);
  std::string dump = graph_to_string(k);
  CHECK(dump.find("REDUCE float") != std::string::npos);
  CHECK_THROWS_AS(UOp(k).src(5), uopcg::error);
}

static_assert([] {
  Arena a;
  UOp r = range(a, 8, 0, AxisType::LOOP);
  return (r * 2 + 1).vmax() == 15;
}());
