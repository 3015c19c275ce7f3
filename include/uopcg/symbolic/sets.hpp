// The composed rule sets the pipeline uses (docs/symbolic.md lists them rule by rule):
//   symbolic_simple = pm_data_invalid + pm_invalid_memory + generic folding + simple_pow + mop_cleanup
//   symbolic        = symbolic_simple + commutative + algebra + pm_after_cleanup + div_and_mod_symbolic
//   sym             = symbolic + pm_simplify_valid + sym_stack_reorder + sym_pow + sym_memory +
//                     sym_reciprocal + sym_reduce + sym_extras + pm_clean_up_group_sink
//   lower_index     = symbolic_simple + pm_lower_index_dtype
#pragma once

#include "algebra.hpp"
#include "commutative.hpp"
#include "divmod.hpp"
#include "index_dtype.hpp"
#include "invalid.hpp"
#include "mop_cleanup.hpp"
#include "pow.hpp"
#include "rhs.hpp"
#include "simple.hpp"
#include "statements.hpp"
#include "valid.hpp"

namespace uopcg::symbolic {

inline constexpr auto symbolic_simple = pm_data_invalid + pm_invalid_memory + simple_identities + simple_zeros +
                                        simple_const_fold + simple_bool_arith + simple_casts + simple_where +
                                        simple_recombine + simple_pow + mop_cleanup;

inline constexpr auto algebra = algebra_terms + algebra_where + algebra_fold + algebra_compare + algebra_reorder;

inline constexpr auto symbolic = symbolic_simple + commutative + algebra + pm_after_cleanup + div_and_mod_symbolic;

/// Validity simplification: an AND chain simplified clause by clause (simplify_valid), and
/// `where(c, x, Invalid)` with weakint x: x simplified assuming c.
inline constexpr auto pm_simplify_valid = [] {
  using namespace vars;
  using enum Ops;
  return pat::rules(
      pat::rule("simplify an AND chain", pat::op<AND>, [](auto& m) { return simplify_valid(m.root(), symbolic); }),
      pat::rule("simplify under a valid", pat::where(c, xw, inv), [](auto& m) -> std::optional<UOp> {
        auto [c, x] = m;
        const UOp nx = uop_given_valid(c, x, symbolic, /*try_simplex=*/false);
        if (nx == x) return std::nullopt;
        return m.arena().make(WHERE, m.root().dtype(), {c, nx, m.root().src(2)});
      }));
}();

/// The rest of `sym`: negation and constant distribution over weakint sums, casts through WHERE.
inline constexpr auto sym_extras = [] {
  using namespace vars;
  using enum Ops;
  return pat::rules(
      // -(x+c) is algebra's
      pat::rewrite("-(x+y)", (x + y) * pat::const_<-1>, x * -1 + y * -1, pat::root_dtype(x, y) && detail::not_bool && [](auto& m) {
        return m[x].op() != CONST && m[y].op() != CONST;
      }),
      pat::rewrite("(x+y)*c", ((xw + yw) * c0).dtype<DType::weakint>(), x * keep_dtype(c0) + y * keep_dtype(c0),
                 [](auto& m) { return is_const(m[c0]); }),
      pat::rewrite(
          "cast through where", pat::op<CAST>(pat::where(c, a, b)),
          [](auto& m) {
            auto [c, a, b] = m;
            const DType dt = m.root().dtype();
            // to a weak dtype a constant arm is remade (as_dtype): constant folding leaves a CAST to
            // a weak dtype alone (it is how index lowering wraps a lowered literal)
            auto arm = [&](UOp v) { return is_weak(dt) ? as_dtype(v, dt) : cast(v, dt); };
            return m.arena().make(WHERE, dt, {c, arm(a), arm(b)});
          },
          [](auto& m) { return !is_invalid(m[a]) && !is_invalid(m[b]); }));
}();

inline constexpr auto sym = symbolic + pm_simplify_valid + sym_stack_reorder + sym_pow + sym_memory + sym_reciprocal +
                            sym_reciprocal_sums + sym_reduce +
                            sym_extras + pm_clean_up_group_sink;

inline constexpr auto lower_index = symbolic_simple + pm_lower_index_dtype;

}  // namespace uopcg::symbolic
