// Simplification under a validity predicate (tinygrad's uop_given_valid / pm_simplify_valid): in
// `where(c, x, Invalid)` only the values where c holds matter, so every expression X that c bounds
// (clauses `X < k`, `k < X`, `!(X < k)` of an AND chain) is replaced by a fresh variable with the
// implied range, x is simplified, and X is put back.
#pragma once

#include <optional>
#include <vector>

#include "../pattern/rewrite.hpp"
#include "util.hpp"

namespace uopcg::symbolic {

namespace detail {
struct bounded_expr {
  UOp expr;
  i128 lo, hi;
};
constexpr void add_bound(std::vector<bounded_expr>& out, UOp e, i128 lo, i128 hi) {
  for (auto& b : out)
    if (b.expr == e) {
      if (lo > b.lo) b.lo = lo;
      if (hi < b.hi) b.hi = hi;
      return;
    }
  out.push_back({e, lo, hi});
}
/// The bounds an AND chain of comparisons implies; false if a clause is not understood (it is
/// then simply not used).
constexpr void parse_valid(UOp valid, std::vector<bounded_expr>& out) {
  std::vector<UOp> st{valid};
  while (!st.empty()) {
    UOp v = st.back();
    st.pop_back();
    if (v.op() == Ops::AND && v.dtype() == DType::bool_) {
      st.push_back(v.src(1));
      st.push_back(v.src(0));
      continue;
    }
    i128 k = 0;
    if (v.op() == Ops::CMPLT && v.src(0).dtype() == DType::weakint && int_const(v.src(1), k)) {
      add_bound(out, v.src(0), INT64_MIN, k - 1);  // X < k
    } else if (v.op() == Ops::CMPLT && v.src(1).dtype() == DType::weakint && int_const(v.src(0), k)) {
      add_bound(out, v.src(1), k + 1, INT64_MAX);  // k < X
    } else if (v.op() == Ops::CMPNE && v.src(0).op() == Ops::CMPLT && is_const(v.src(1)) && cval(v.src(1)) == 1 &&
               v.src(1).dtype() == DType::bool_) {
      UOp c = v.src(0);
      if (c.src(0).dtype() == DType::weakint && int_const(c.src(1), k)) add_bound(out, c.src(0), k, INT64_MAX);  // !(X < k)
      else if (c.src(1).dtype() == DType::weakint && int_const(c.src(0), k)) add_bound(out, c.src(1), INT64_MIN, k);  // !(k < X)
    }
  }
}
}  // namespace detail

/// x simplified with `rules` assuming `valid` holds; x itself when nothing changes.
template <class RS>
constexpr UOp uop_given_valid(UOp valid, UOp x, const RS& rules) {
  std::vector<detail::bounded_expr> bounds;
  detail::parse_valid(valid, bounds);
  Arena& a = x.arena();
  std::vector<std::pair<UOp, UOp>> fwd, back;
  std::int64_t slot = -1000;
  for (const auto& b : bounds) {
    if (b.expr.op() == Ops::CONST || !occurs_in(x, b.expr)) continue;
    i128 lo = b.lo > b.expr.vmin() ? b.lo : b.expr.vmin();
    i128 hi = b.hi < b.expr.vmax() ? b.hi : b.expr.vmax();
    if (lo == b.expr.vmin() && hi == b.expr.vmax()) continue;  // nothing new
    if (lo > hi) continue;                                      // never valid: left to other rules
    ParamArg p;
    p.slot = slot--;
    p.dtype = DType::weakint;
    p.addrspace = AddrSpace::ALU;
    p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi)};
    p.has_name = true;
    p.name = "given";
    UOp var = a.make(Ops::PARAM, DType::weakint, {}, p.to_arg());
    fwd.push_back({b.expr, var});
    back.push_back({var, b.expr});
  }
  if (fwd.empty()) return x;
  UOp sx = substitute(x, fwd);
  UOp simp = pat::graph_rewrite(sx, rules);
  if (simp == sx) return x;
  return substitute(simp, back);
}

}  // namespace uopcg::symbolic
