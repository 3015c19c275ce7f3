// Simplification under a validity predicate (tinygrad's parse_valid / uop_given_valid /
// simplify_valid): in `where(c, x, Invalid)` only the values where c holds matter, so every
// expression X that a clause of c bounds (`X < k` gives an upper bound, `!(X < k)` a lower one) is
// replaced by a fresh variable with the implied range, x is simplified, and X is put back.
#pragma once

#include <optional>
#include <vector>

#include "../pattern/rewrite.hpp"
#include "util.hpp"

namespace uopcg::symbolic {

/// One clause read as a bound: `X <= c` (upper) or `X >= c` (lower).
struct valid_clause {
  UOp expr;
  bool upper = false;
  i128 bound = 0;
};

/// `X < c` → X <= c.vmax-1; `!(X < c)` → X >= c.vmin (X of an integer dtype); nullopt otherwise.
constexpr std::optional<valid_clause> parse_valid(UOp v) {
  using enum Ops;
  if (v.op() == CMPNE && v.nsrc() == 2 && v.src(1).op() == CONST && v.src(1).arg().is_number() &&
      !v.src(1).arg().is_float() && v.src(1).arg().as_int() == 1 && v.src(0).op() == CMPLT &&
      is_int(v.src(0).src(0).dtype()))
    return valid_clause{v.src(0).src(0), false, v.src(0).src(1).vmin()};
  if (v.op() == CMPLT && v.nsrc() == 2 && is_int(v.src(0).dtype()))
    return valid_clause{v.src(0), true, static_cast<i128>(v.src(1).vmax()) - 1};
  return std::nullopt;
}

/// The operands of a tree of op, left to right.
constexpr void split_op(UOp u, Ops op, std::vector<UOp>& out) {
  std::vector<UOp> st{u};
  while (!st.empty()) {
    UOp v = st.back();
    st.pop_back();
    if (v.op() == op && v.nsrc() == 2) {
      st.push_back(v.src(1));
      st.push_back(v.src(0));
    } else {
      out.push_back(v);
    }
  }
}

namespace detail {
/// A fresh weakint-or-int variable with the range [lo, hi] (a PARAM no kernel uses).
constexpr UOp fake_var(Arena& a, DType dt, i128 lo, i128 hi, std::int64_t& slot) {
  ParamArg p;
  p.slot = slot--;
  p.dtype = dt;
  p.addrspace = AddrSpace::ALU;
  p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi)};
  p.has_name = true;
  p.name = "fake";
  return a.make(Ops::PARAM, dt, {}, p.to_arg());
}
constexpr bool fits_i64(i128 v) { return v >= INT64_MIN && v <= INT64_MAX; }
}  // namespace detail

/// x simplified with `rules` assuming `valid` holds; x itself when nothing changes. With
/// try_simplex, each bounded expression is first tried alone (and a clause `X0+X1+... >= 1` of
/// irreducible terms as "some Xi >= 1": accepted when every Xi gives the same result); then all of
/// them together.
template <class RS>
constexpr UOp uop_given_valid(UOp valid, UOp x, const RS& rules, bool try_simplex = true) {
  using enum Ops;
  struct bounds_of {
    UOp expr;
    std::optional<i128> lo, hi;
  };
  std::vector<UOp> clauses;
  split_op(valid, AND, clauses);
  std::vector<bounds_of> bounds;
  for (UOp s : clauses) {
    auto c = parse_valid(s);
    if (!c) continue;
    bounds_of* b = nullptr;
    for (auto& e : bounds)
      if (e.expr == c->expr) b = &e;
    if (!b) {
      bounds.push_back({c->expr, std::nullopt, std::nullopt});
      b = &bounds.back();
    }
    (c->upper ? b->hi : b->lo) = c->bound;  // a later clause on the same side replaces an earlier one
  }
  Arena& a = x.arena();
  auto simplify = [&](UOp u) { return pat::graph_rewrite(u, rules); };
  std::int64_t slot = -1000;
  std::vector<std::pair<UOp, UOp>> all, back;
  UOp u = x;
  for (const auto& b : bounds) {
    i128 lo = b.lo ? *b.lo : b.expr.vmin(), hi = b.hi ? *b.hi : b.expr.vmax();
    if (lo > hi || !detail::fits_i64(lo) || !detail::fits_i64(hi)) continue;  // never valid: left to other rules
    UOp var = detail::fake_var(a, b.expr.dtype(), lo, hi, slot);
    all.push_back({b.expr, var});
    back.push_back({var, b.expr});
    if (!try_simplex) continue;
    // candidate sets: the whole clause; a simplex clause split into its terms
    std::vector<std::vector<std::pair<UOp, UOp>>> candidates{{{b.expr, var}}};
    if (b.expr.op() == ADD && lo == 1) {
      std::vector<UOp> terms;
      split_op(b.expr, ADD, terms);
      bool irreducible = true;
      for (UOp t : terms) irreducible &= GroupOp::Irreducible.contains(t.op());
      if (irreducible) {
        std::vector<std::pair<UOp, UOp>> cand;
        for (UOp t : terms) {
          if (t.vmax() < 1) {
            irreducible = false;
            break;
          }
          cand.push_back({t, detail::fake_var(a, t.dtype(), 1, t.vmax(), slot)});
        }
        if (irreducible) candidates.push_back(cand);
      }
    }
    for (const auto& cand : candidates) {
      std::vector<UOp> outs;
      bool missing = false;
      for (const auto& [X, nX] : cand) {
        UOp s = substitute(u, {{X, nX}});
        if (s == u) {
          missing = true;
          break;
        }
        outs.push_back(s);
      }
      if (missing) continue;  // some branch does not occur in u
      for (std::size_t i = 0; i < outs.size(); ++i)
        outs[i] = simplify(substitute(simplify(outs[i]), {{cand[i].second, cand[i].first}}));
      bool same = true;
      for (UOp o : outs) same &= o == outs[0];
      if (same) {
        u = outs[0];
      } else if (u.op() == STACK && u.nsrc() == 2) {
        for (std::size_t k = 0; k < 2; ++k) {
          bool lane_same = true;
          for (UOp o : outs) lane_same &= o.src(k) == outs[0].src(k);
          if (lane_same) {
            std::vector<UOp> s = u.srcs().to_vector();
            s[k] = outs[0].src(k);
            u = with_srcs(u, s);
          }
        }
      }
    }
  }
  // all the bounds together
  if (!all.empty()) {
    UOp s = substitute(u, all);
    if (s != u) u = simplify(substitute(simplify(s), back));
  }
  return u;
}

/// An AND chain with clauses that bound parts of later clauses put first, each clause simplified
/// given the ones before it; nullopt when nothing changes (or the chain involves an INDEX).
template <class RS>
constexpr std::optional<UOp> simplify_valid(UOp valid, const RS& rules) {
  using enum Ops;
  if (contains_op(valid, OpSet{INDEX})) return std::nullopt;
  std::vector<UOp> valids;
  split_op(valid, AND, valids);
  // priority: minus the number of clauses whose graph contains this clause's bounded expression
  std::vector<int> prio(valids.size(), 0);
  for (std::size_t i = 0; i < valids.size(); ++i) {
    auto c = parse_valid(valids[i]);
    if (!c) continue;
    for (UOp other : valids)
      if (other == c->expr || depends_on(other, c->expr)) --prio[i];
  }
  std::vector<std::size_t> order(valids.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // stable insertion sort by priority
  for (std::size_t i = 1; i < order.size(); ++i)
    for (std::size_t j = i; j > 0 && prio[order[j]] < prio[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
  std::vector<UOp> ret, seen;
  const DType dt = valid.dtype();
  auto conj = [dt](const std::vector<UOp>& xs) {
    UOp r = xs[0];
    for (std::size_t i = 1; i < xs.size(); ++i) r = r.arena().make(AND, dt, {r, xs[i]});
    return r;
  };
  for (std::size_t i : order) {
    UOp stmt = valids[i];
    bool dup = false;
    for (UOp s : seen) dup |= s == stmt;
    if (dup) continue;
    seen.push_back(stmt);
    if (!ret.empty()) stmt = uop_given_valid(conj(ret), stmt, rules);
    ret.push_back(stmt);
  }
  // nothing simplified: only the order changed (or nothing at all), which is no rewrite
  std::vector<UOp> sorted;
  for (std::size_t i : order) sorted.push_back(valids[i]);
  if (ret == sorted) return std::nullopt;
  return conj(ret);
}

}  // namespace uopcg::symbolic
