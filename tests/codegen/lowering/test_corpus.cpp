// Stages 12, 14, 15, 17 and 18 on every corpus kernel: run uopcg's stage on tinygrad's graph before
// the stage and compare with tinygrad's graph after it (structural equality).
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include <uopcg/codegen/decompositions.hpp>
#include <uopcg/codegen/gates.hpp>
#include <uopcg/codegen/lower_index.hpp>
#include <uopcg/symbolic/util.hpp>

#include "../stage_harness.hpp"

namespace cg = uopcg::codegen;
using uopcg::Target;
using uopcg::UOp;

namespace {
/// tinygrad folds `CAST(uint, -114688)` into a uint CONST holding -114688 (its constant folding does
/// not wrap); uopcg's folding wraps to the dtype (docs/symbolic.md, divergence 1). The expected
/// graph with its out-of-range unsigned literals wrapped is the same program.
UOp wrap_unsigned_literals(UOp root) {
  namespace P = uopcg::pat;
  static constexpr auto rules = P::rules(P::rule("wrap an unsigned literal", P::op<uopcg::Ops::CONST>, [](auto& m) -> std::optional<UOp> {
    UOp c = m.root();
    if (!uopcg::is_unsigned(c.dtype()) || c.arg().kind() != uopcg::ArgKind::int_ || c.arg().as_int() >= 0) return std::nullopt;
    return uopcg::symbolic::iconst(m.arena(), c.dtype(), c.arg().as_int());
  }));
  return P::graph_rewrite(root, rules);
}

struct stage_case {
  const char* name;
  UOp (*fn)(UOp, const Target&);
};
const stage_case stages[] = {
    {"lower all index dtypes", cg::lower_index_dtypes},
    {"cast float alu operands", cg::cast_float_alu},
    {"early decompositions", cg::early_decompositions},
    {"late decompositions", cg::late_decompositions},
    {"move gates from index", cg::move_gates_from_index},
};
}  // namespace

TEST_CASE("lowering stages reproduce tinygrad's graphs on every corpus kernel") {
  const auto kernels = uopcg_test::corpus_kernels();
  REQUIRE(kernels.size() >= 16);
  for (const auto& e : kernels) {
    uopcg_test::StagedKernel k(e.name);
    for (const auto& s : stages) {
      auto r = uopcg_test::check_stage(k, s.name, s.fn);
      const std::string where = e.name + " / " + s.name;
      INFO(where);
      INFO(r.diff);
      if (!r.same && s.fn(k.before(s.name), k.target) == wrap_unsigned_literals(k.after(s.name))) {
        MESSAGE(where << ": equal up to the wrap of unsigned literals (uopcg's constant folding wraps)");
        continue;
      }
      CHECK(r.same);
    }
  }
}
