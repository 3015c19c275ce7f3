// Corpus stage checks of the symbolic stages (early / extra / final symbolic) and of `sym` at the
// stages before opts that run it (initial and postopt symbolic are sym plus other groups' rules:
// reported, not required).
#include <doctest/doctest.h>

#include <string>

#include <uopcg/codegen/symbolic_stages.hpp>

#include "../codegen/stage_harness.hpp"

using namespace uopcg;

namespace {
template <class Fn>
void check_all(const char* stage, Fn fn) {
  for (const auto& e : uopcg_test::corpus_kernels()) {
    const std::string name = e.name;
    uopcg_test::StagedKernel k(name);
    auto r = uopcg_test::check_stage(k, stage, fn);
    std::string msg = name + " @ " + stage + "\n" + r.diff;
    CHECK_MESSAGE(r.same, msg);
  }
}
}  // namespace

TEST_CASE("early symbolic matches every corpus kernel") {
  check_all("early symbolic", [](UOp u, const Target& t) { return codegen::early_symbolic(u, t); });
}
TEST_CASE("extra symbolic matches every corpus kernel") {
  check_all("extra symbolic", [](UOp u, const Target& t) { return codegen::extra_symbolic(u, t); });
}
TEST_CASE("final symbolic matches every corpus kernel") {
  check_all("final symbolic", [](UOp u, const Target& t) { return codegen::final_symbolic(u, t); });
}
