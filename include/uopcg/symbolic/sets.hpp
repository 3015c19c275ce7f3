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
  return P::rules(
      P::rule("simplify an AND chain", P::op<Ops::AND>.named<"valid">(),
              [](auto& m) { return simplify_valid(m.root(), symbolic); }),
      P::rule("simplify under a valid", P::where(c, xw, inv), [](auto& m) -> std::optional<UOp> {
        UOp nx = uop_given_valid(m[c], m[x], symbolic, /*try_simplex=*/false);
        if (nx == m[x]) return std::nullopt;
        return m.arena().make(Ops::WHERE, m.root().dtype(), {m[c], nx, m.root().src(2)});
      }));
}();

/// The rest of `sym`: negation and constant distribution over weakint sums, casts through WHERE.
inline constexpr auto sym_extras = [] {
  using namespace vars;
  return P::rules(
      P::rule("-(x+y)", (x + y) * P::const_<-1>, [](auto& m) -> std::optional<UOp> {
        UOp r = m.root();
        if (m[x].dtype() != r.dtype() || m[y].dtype() != r.dtype() || is_bool(r.dtype())) return std::nullopt;
        if (m[x].op() == Ops::CONST || m[y].op() == Ops::CONST) return std::nullopt;  // -(x+c): algebra
        return add(mul_c(m[x], -1), mul_c(m[y], -1));
      }),
      P::rule("(x+y)*c", (xw + yw) * c0, [](auto& m) -> std::optional<UOp> {
        if (m.root().dtype() != DType::weakint || !is_const(m[c0])) return std::nullopt;
        UOp k = as_dtype(m[c0], DType::weakint);
        return add(mul(m[x], k), mul(m[y], k));
      }),
      P::rule("cast through where", P::op<Ops::CAST>(P::where(c, a, b)), [](auto& m) -> std::optional<UOp> {
        UOp r = m.root();
        if (is_weak(r.dtype()) || is_invalid(m[a]) || is_invalid(m[b])) return std::nullopt;
        return m.arena().make(Ops::WHERE, r.dtype(), {m[c], cast(m[a], r.dtype()), cast(m[b], r.dtype())});
      }));
}();

inline constexpr auto sym = symbolic + pm_simplify_valid + sym_stack_reorder + sym_pow + sym_memory + sym_reciprocal +
                            sym_reciprocal_sums + sym_reduce +
                            sym_extras + pm_clean_up_group_sink;

inline constexpr auto lower_index = symbolic_simple + pm_lower_index_dtype;

}  // namespace uopcg::symbolic
