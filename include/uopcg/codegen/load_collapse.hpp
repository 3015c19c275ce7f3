// Front stage c, "load collapse" (tinygrad/codegen/simplify.py, pm_load_collapse): tensor indexing
// by a tensor (`t[idx]`, embeddings) reaches the kernel as a one-hot reduction,
// `sum_r (idx != r ? 0 : expr(r))`; it becomes `expr(idx)` gated by `0 <= idx < N`.
//   collapse a reduce    — REDUCE(u, r) with arg (ADD, 0): the part of u that depends on r is
//                          rewritten on its own (tinygrad's reduce_collapse), with every input it
//                          takes from outside replaced by a bounded variable `in0, in1, ...`; when no
//                          range is left, the variables are substituted back;
//   undo index math      — (x + y) < c with a loaded x and y, c free of loads: x < c - y (no
//                          arithmetic on a loaded index, which could overflow).
// The collapse rewrites with pm_reduce_load_collapse: pm_reduce_unparented, the reduce_collapse
// rules (comparisons lifted out of sums, bounded sums, gates, split sums, masks), `symbolic`, then
// the one-hot rules.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "../symbolic/sets.hpp"
#include "detail/helpers.hpp"
#include "detail/vars.hpp"
#include "postopt.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {

// tinygrad's UOp arithmetic (mixin/elementwise.py, _broadcasted): both operands go to their least
// upper dtype, a weak CONST by becoming a weak CONST of that kind, anything else by a CAST. The
// rewrites below build their results this way, so their nodes are tinygrad's.
constexpr DType weak_of(DType d) { return is_float(d) ? DType::weakfloat : is_int(d) ? DType::weakint : d; }
constexpr UOp promote(UOp t, DType out) {
  if (symbolic::is_invalid(t)) return t;
  if (is_weak(t.dtype()) && t.op() == Ops::CONST) return symbolic::as_dtype(t, weak_of(out));
  return t.dtype() == out ? t : cast(t, out);
}
constexpr UOp binop(Ops op, UOp a, UOp b) {
  const DType out = least_upper_dtype(a.dtype(), b.dtype());
  return make_node(a.arena(), op, std::vector<UOp>{promote(a, out), promote(b, out)});
}
constexpr UOp lit(Arena& a, std::int64_t v) { return literal(a, v); }
constexpr UOp promoted_neg(UOp x) { return x.dtype() == DType::bool_ ? logical_not(x) : binop(Ops::MUL, x, lit(x.arena(), -1)); }
constexpr UOp promoted_sub(UOp a, UOp b) {
  const DType out = least_upper_dtype(a.dtype(), b.dtype());
  return make_node(a.arena(), Ops::ADD, std::vector<UOp>{promote(a, out), promoted_neg(promote(b, out))});
}
constexpr UOp cast_to(UOp x, DType d) { return x.dtype() == d ? x : cast(x, d); }
constexpr UOp where_(UOp c, UOp x, UOp y) {
  const DType out = least_upper_dtype(x.dtype(), symbolic::is_invalid(y) ? x.dtype() : y.dtype());
  return make_node(c.arena(), Ops::WHERE, std::vector<UOp>{c, promote(x, out), promote(y, out)});
}
/// tinygrad's minimum: floats -max(-a, -b); integers through XOR with min+max of the dtype.
constexpr UOp minimum_(UOp a, UOp b) {
  using enum Ops;
  using enum DType;
  const DType dt = least_upper_dtype(a.dtype(), b.dtype());
  UOp t = promote(a, dt), x = promote(b, dt);
  Arena& ar = a.arena();
  if (is_float(dt)) return promoted_neg(ar.make(MAX, dt, {promoted_neg(t), promoted_neg(x)}));
  const __int128 k = static_cast<__int128>(int_min(dt)) + static_cast<__int128>(int_max_u(dt));
  UOp kc = symbolic::iconst(ar, weakint, k);
  if (!kc) fail("load collapse: no weak constant for the minimum of this dtype");
  UOp tx = binop(XOR, t, kc), xx = binop(XOR, x, kc);
  return binop(XOR, ar.make(MAX, tx.dtype(), {tx, xx}), kc);
}
constexpr UOp reduce_add(UOp x, std::span<const UOp> ranges) {
  using enum Ops;
  std::vector<UOp> s{x};
  s.insert(s.end(), ranges.begin(), ranges.end());
  return x.arena().make(REDUCE, x.dtype(), s, Arg::tuple_of(ADD, 0));
}
constexpr std::vector<UOp> reduce_ranges(UOp red) {
  std::vector<UOp> s;
  for (std::size_t i = 1; i < red.nsrc(); ++i) s.push_back(red.src(i));
  return s;
}
constexpr bool is_add_reduce(UOp red) {
  const Arg& a = red.arg();
  return a.is_tuple() && a.size() == 2 && a[0].kind() == ArgKind::op && a[0].as_op() == Ops::ADD && a[1].is_int() &&
         a[1].as_int() == 0;
}
constexpr bool no_range(UOp u) { return !symbolic::contains_op(u, OpSet{Ops::RANGE}); }
constexpr bool no_load(UOp u) { return !symbolic::contains_op(u, OpSet{Ops::INDEX}); }

/// tinygrad's UOp.variable(name, s.vmin, s.vmax, s.dtype, param=True): an ALU PARAM with s's bounds.
constexpr UOp variable_like(UOp s, std::string_view name) {
  using enum Ops;
  using enum DType;
  Arena& a = s.arena();
  Arg bounds;
  if (is_float(s.dtype())) bounds = Arg::tuple_of(Arg::floating(-INFINITY), Arg::floating(INFINITY));
  else if (is_bool(s.dtype())) bounds = Arg::tuple_of(Arg::boolean(s.vmin() != 0), Arg::boolean(s.vmax() != 0));
  else bounds = Arg::tuple_of(Arg::integer(s.vmin()), Arg::integer(s.vmax()));
  ParamArg p;
  p.slot = -1;
  p.dtype = s.dtype();
  p.multiple_of = 1;
  p.has_name = true;
  p.name = name;
  p.addrspace = AddrSpace::ALU;
  std::vector<Arg> fields = p.to_arg().items();
  fields[2] = bounds;
  return a.make(PARAM, s.dtype(), {a.make(STACK, void_, {})}, Arg::record(ArgKind::param_arg, std::move(fields)));
}

// --- pm_reduce_collapse / pm_reduce_load_collapse --------------------------------------------------

inline constexpr auto c_any = pat::var<"c">;  // tinygrad's c here: any value, not only a constant
inline constexpr auto lower = pat::var<"lower">;
inline constexpr auto upper = pat::var<"upper">;
inline constexpr auto rng = pat::op<Ops::RANGE>.named<"r">();
inline constexpr auto r = pat::var<"r">;
inline constexpr auto red = pat::op<Ops::REDUCE>.named<"red">();

/// sum over r in [0, N) of val where lower <= r < upper: clamp(min(upper, N) - max(lower, 0), 0, N) * val.
constexpr std::optional<UOp> bounded_sum(UOp red_node, UOp rr, UOp v, UOp lo, UOp hi) {
  using enum Ops;
  if (!is_add_reduce(red_node) || !no_range(v)) return std::nullopt;
  UOp n = rr.src(0);
  UOp top = hi ? minimum_(hi, n) : n;
  UOp bottom = lo ? binop(MAX, lo, lit(rr.arena(), 0)) : const_like(rr, 0);
  UOp count = minimum_(binop(MAX, promoted_sub(top, bottom), lit(rr.arena(), 0)), n);
  return binop(MUL, count, v);
}

/// Rule predicates: y and c use no RANGE; the REDUCE adds over its ranges (ADD, no horizontal axes).
inline constexpr pat::predicate range_free_y_c{[](auto& m) { return no_range(m[y]) && no_range(m[c_any]); }};
inline constexpr pat::predicate adds{[](auto& m) { return is_add_reduce(m[red]); }};

inline constexpr auto reduce_collapse_rules = [] {
  using enum Ops;
  return pat::rules(
      pat::rewrite("lift x+y out of <", pat::or_casted(x + y) < c_any, [](auto& m) { return binop(CMPLT, m[x], promoted_sub(m[c_any], m[y])); },
                 range_free_y_c),
      pat::rewrite("lift x*y out of <", (x * y) < c_any, [](auto& m) {
        const UOp yy = m[y];
        const UOp bound = binop(FLOORDIV, binop(ADD, binop(ADD, m[c_any], yy), lit(yy.arena(), -1)), yy);
        return binop(CMPLT, m[x], bound);
      }, range_free_y_c && [](auto& m) { return is_int(m[y].dtype()) && m[y].vmin() > 0; }),
      pat::rule("bounded sum: r < upper", red(pat::where(rng < upper, val, 0), r),
              [](auto& m) { return bounded_sum(m[red], m[rng], m[val], UOp(), m[upper]); }),
      pat::rule("bounded sum: r >= lower", red(pat::where(rng < lower, 0, val), r),
              [](auto& m) { return bounded_sum(m[red], m[rng], m[val], m[lower], UOp()); }),
      pat::rule("bounded sum: lower <= r < upper", red(pat::where(pat::logical_not(r < lower) & (rng < upper), val, 0), r),
              [](auto& m) { return bounded_sum(m[red], m[rng], m[val], m[lower], m[upper]); }),
      pat::rewrite("sum of a gated value", red.any_len(pat::where(pat::var<"cond">, x, pat::invalid_const.named<"i">())),
                 [](auto& m) { return where_(get<"cond">(m), reduce_add(m[x], reduce_ranges(m[red])), get<"i">(m)); },
                 adds && [](auto& m) { return no_range(get<"cond">(m)); }),
      pat::rewrite("split a sum", red.any_len(x + y), [](auto& m) {
        const auto rs = reduce_ranges(m[red]);
        return binop(ADD, reduce_add(m[x], rs), reduce_add(m[y], rs));
      }, adds),
      pat::rewrite("AND on WHERE", red.any_len(pat::where(pat::op<PARAM>.named<"x">() & y, c_any, 0)), [](auto& m) {
        return binop(MUL, reduce_add(where_(m[y], m[c_any], lit(m.arena(), 0)), reduce_ranges(m[red])), m[x]);
      }, adds),
      pat::rule("mul by a casted bool", x * pat::op<CAST>(pat::var<"gate">.dtype<DType::bool_>()),
              [](auto& m) { return where_(get<"gate">(m), m[x], lit(m.arena(), 0)); }));
}();

inline constexpr auto load_collapse_rules = [] {
  using enum Ops;
  return pat::rules(
      pat::rewrite("lift x+y out of !=", pat::ne(pat::or_casted(x + y), c_any),
                 [](auto& m) { return binop(CMPNE, m[x], promoted_sub(cast_to(m[c_any], m[y].dtype()), m[y])); }, range_free_y_c),
      pat::rewrite("one-hot gather", red(pat::where(pat::ne(pat::var<"idx">, pat::or_casted(rng)), 0, pat::var<"expr">), r), [](auto& m) {
        const UOp rr = m[rng], ic = cast_to(get<"idx">(m), rr.dtype());
        const UOp v = binop(AND, logical_not(binop(CMPLT, ic, lit(rr.arena(), 0))), binop(CMPLT, ic, rr.src(0)));
        const UOp e = substitute(get<"expr">(m), {{rr, valid(ic, v)}});
        return where_(v, e, lit(rr.arena(), 0));
      }, adds));
}();

/// The rules a collapse rewrites with (tinygrad's pm_reduce_load_collapse).
template <class = void>
inline constexpr auto pm_reduce_load_collapse =
    pm_reduce_unparented + reduce_collapse_rules + symbolic::symbolic + load_collapse_rules;

/// tinygrad's reduce_collapse for a REDUCE `red` of `u`; nullopt when a range is left.
template <class = void>
std::optional<UOp> reduce_collapse(UOp red_node, UOp u) {
  using enum Ops;
  for (std::size_t i = 1; i < red_node.nsrc(); ++i) {
    UOp rr = red_node.src(i);
    const std::vector<UOp> included = toposort(u, [&](UOp n) { return in_range(n, rr); });
    for (UOp n : included)
      if (n.op() == STORE || n.op() == REDUCE) return std::nullopt;
    // what the included part takes from outside becomes an opaque bounded variable
    auto is_included = [&](UOp s) { return detail::contains(included, s); };
    std::vector<std::pair<UOp, UOp>> replaces;
    auto replaced = [&](UOp s) {
      for (const auto& e : replaces)
        if (e.first == s) return true;
      return false;
    };
    for (UOp n : included)
      for (UOp s : n.srcs()) {
        if (is_included(s) || replaced(s) || s.op() == CONST || s.op() == PARAM || s.op() == BUFFER) continue;
        replaces.emplace_back(s, variable_like(s, "in" + std::to_string(replaces.size())));
      }
    UOp body = reduce_add(substitute(u, replaces), std::span<const UOp>(&rr, 1));
    UOp collapsed = pat::graph_rewrite(body, pm_reduce_load_collapse<>, {.name = "reduce_collapse"});
    if (!no_range(collapsed)) return std::nullopt;
    std::vector<std::pair<UOp, UOp>> back;
    for (const auto& [k, v] : replaces) back.emplace_back(v, k);
    u = substitute(collapsed, back);
  }
  return u;
}

}  // namespace detail

/// A one-hot REDUCE collapses; index arithmetic moves off a loaded value.
inline constexpr auto pm_load_collapse = [] {
  using namespace detail;
  using enum Ops;
  using enum DType;
  return pat::rules(
      pat::rewrite("collapse a reduce", red(pat::var<"u">, pat::any), [](auto& m) { return reduce_collapse(m[red], get<"u">(m)); },
                 adds),
      pat::rewrite("undo index math on a load", (x.dtype<weakint>() + y) < c_any,
                 [](auto& m) { return binop(CMPLT, m[x], promoted_sub(m[c_any], m[y])); },
                 [](auto& m) { return no_load(m[y]) && no_load(m[c_any]) && !no_load(m[x]); }));
}();

/// Stage c entry point: "load collapse".
template <class = void>
UOp load_collapse(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, pm_load_collapse, {.name = "load collapse"});
}

}  // namespace uopcg::codegen
