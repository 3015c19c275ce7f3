// The single headers combine in one translation unit (their inlined headers share include guards):
// the whole library first, then the declarations-only compile.hpp, then optional parts, and names
// from each used side by side. (tests/linked/impl.cpp, built against single_include/, includes
// them the other way round: compile.hpp, then compile_impl.hpp and uopcg.hpp.) A program that
// includes compile.hpp compiles the run-time paths of graph building in one translation unit: this
// one, which calls no entry point, with UOPCG_CORE_IMPLEMENTATION.
#define UOPCG_CORE_IMPLEMENTATION
#include <uopcg/uopcg.hpp>
#include <uopcg/compile.hpp>
#include <uopcg/io/dot.hpp>
#include <uopcg/io/json.hpp>

#include <doctest/doctest.h>

TEST_CASE("single headers: compile.hpp, uopcg.hpp and io/ share one translation unit") {
  using namespace uopcg;
  Arena a;
  UOp x = param(a, 0, DType::float32, 8), out = param(a, 1, DType::float32, 8);
  UOp i = range(a, 8, 0, AxisType::LOOP);
  UOp k = sink(end(store(index(out, i), index(x, i) + 1.0), i));
  CHECK(codegen::find_stage("expander") != nullptr);  // from uopcg.hpp (pipeline.hpp)
  CHECK(io::to_dot(k).find("digraph") != std::string::npos);
  CHECK(io::export_graph(k)["nodes"].size() == toposort(k).size());
}
