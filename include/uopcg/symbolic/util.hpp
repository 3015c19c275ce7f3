// Helpers shared by the symbolic rule families: the pattern variables, constant access, sums as
// term lists, constant factors, dtype-preserving results, and tinygrad's structural order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "fold.hpp"

namespace uopcg::symbolic {

/// Pattern variables shared by every family.
namespace vars {
inline constexpr auto x = pat::var<"x">;
inline constexpr auto y = pat::var<"y">;
inline constexpr auto z = pat::var<"z">;
inline constexpr auto a = pat::var<"a">;
inline constexpr auto b = pat::var<"b">;
inline constexpr auto c = pat::var<"c">;
inline constexpr auto d = pat::var<"d">;
inline constexpr auto e = pat::var<"e">;
inline constexpr auto t = pat::var<"t">;
inline constexpr auto f = pat::var<"f">;
inline constexpr auto c0 = pat::cvar<"c0">;
inline constexpr auto c1 = pat::cvar<"c1">;
inline constexpr auto c2 = pat::cvar<"c2">;
inline constexpr auto c3 = pat::cvar<"c3">;
inline constexpr auto cv = pat::cvar<"cv">;
inline constexpr auto xi = pat::var<"x">.dtypes<pat::ints>();
inline constexpr auto yi = pat::var<"y">.dtypes<pat::ints>();
inline constexpr auto xb = pat::var<"x">.dtype<DType::bool_>();
inline constexpr auto yb = pat::var<"y">.dtype<DType::bool_>();
inline constexpr auto xw = pat::var<"x">.dtype<DType::weakint>();
inline constexpr auto yw = pat::var<"y">.dtype<DType::weakint>();
inline constexpr auto inv = pat::invalid_const;
inline constexpr pat::DTypeSet ints_bool = pat::ints | pat::DTypeSet{DType::bool_};
}  // namespace vars

using pat::DTypeSet;

constexpr bool is_const(UOp u) { return u.op() == Ops::CONST && !u.arg().is_invalid(); }
constexpr bool is_invalid(UOp u) { return u.op() == Ops::CONST && u.arg().is_invalid(); }
/// An integer (or bool) CONST's value.
constexpr bool int_const(UOp u, i128& out) {
  if (u.op() != Ops::CONST) return false;
  const Arg& a = u.arg();
  if (a.kind() == ArgKind::int_ || a.is_bool()) {
    out = a.as_int();
    return true;
  }
  if (a.kind() == ArgKind::uint_) {
    out = static_cast<i128>(a.as_uint());
    return true;
  }
  return false;
}
constexpr i128 cval(UOp u) {
  i128 v = 0;
  int_const(u, v);
  return v;
}
/// An integer CONST's value as an operand of an op computing in dtype dt (a weak literal next to a
/// strong operand is converted: -1 in a uint32 op is 4294967295).
constexpr i128 cval_as(UOp u, DType dt) {
  value v = convert(from_arg(u.arg(), u.dtype()), dt);
  return v.is_num() && !v.is_float ? v.i : cval(u);
}
/// A float CONST's value (NaN/inf included).
constexpr double fval(UOp u) { return u.arg().is_number() ? u.arg().as_float() : 0.0; }
constexpr bool is_nan_or_inf(UOp u) {
  if (!is_const(u) || !u.arg().is_float()) return false;
  double v = u.arg().as_float();
  return v != v || v - v != 0;
}
/// Whether u is, or depends on, a literal inf/NaN (leaves are finite by the snapshot's assumption).
constexpr bool holds_nonfinite_literal(UOp u) {
  if (is_nan_or_inf(u)) return true;
  for (node_id id : backward_slice_ids(u))
    if (is_nan_or_inf(u.arena().node(id))) return true;
  return false;
}

/// A CONST of dtype dt holding integer v (wrapped to dt); invalid UOp if not representable.
constexpr UOp iconst(Arena& a, DType dt, i128 v) {
  value r = is_float(dt) ? convert(value::integer(v), dt) : make_int(dt, v);
  auto arg = to_arg(r, dt);
  if (!arg) return UOp();
  return const_(a, dt, *arg);
}
constexpr UOp iconst_like(UOp like, i128 v) { return iconst(like.arena(), like.dtype(), v); }
/// Whether v is exactly representable in dt (no wrap).
constexpr bool fits(DType dt, i128 v) {
  if (dt == DType::weakint) return v < weak_limit && v > -weak_limit;
  if (!is_int(dt) && !is_bool(dt)) return false;
  return wrap_int(dt, v) == v;
}

/// x given the dtype dt: unchanged when it already has it, a CONST remade, else a CAST.
constexpr UOp as_dtype(UOp x, DType dt) {
  if (x.dtype() == dt) return x;
  if (is_invalid(x)) return x;
  if (x.op() == Ops::CONST) {
    value v = convert(from_arg(x.arg(), x.dtype()), dt);
    if (auto arg = to_arg(v, dt)) return const_(x.arena(), dt, *arg);
  }
  return cast(x, dt);
}

/// A binary node of op over (a, b) with an explicit dtype (no promotion surprises).
constexpr UOp bin(Ops op, DType dt, UOp a, UOp b) { return a.arena().make(op, dt, {a, b}); }
constexpr UOp add(UOp a, UOp b) { return bin(Ops::ADD, a.dtype(), a, b); }
constexpr UOp mul(UOp a, UOp b) { return bin(Ops::MUL, a.dtype(), a, b); }
constexpr UOp mul_c(UOp a, i128 c) { return mul(a, iconst_like(a, c)); }
constexpr UOp add_c(UOp a, i128 c) { return add(a, iconst_like(a, c)); }
constexpr UOp lt(UOp a, UOp b) { return a.arena().make(Ops::CMPLT, DType::bool_, {a, b}); }
constexpr UOp not_(UOp a) { return a.arena().make(Ops::CMPNE, DType::bool_, {a, literal(a.arena(), true)}); }
constexpr UOp where_(UOp c, UOp t, UOp f) {
  DType dt = is_invalid(t) ? f.dtype() : t.dtype();
  return c.arena().make(Ops::WHERE, dt, {c, t, f});
}
/// A select of a given dtype: a rule that swaps or regroups a select's arms keeps its dtype, since the
/// arm that comes first may be a weak literal beside a strong value (`where(!c, x, 0)` of an int x).
constexpr UOp where_(DType dt, UOp c, UOp t, UOp f) { return c.arena().make(Ops::WHERE, dt, {c, t, f}); }
constexpr UOp fdiv(UOp a, UOp b) { return bin(Ops::FLOORDIV, a.dtype(), a, b); }
constexpr UOp fmod(UOp a, UOp b) { return bin(Ops::FLOORMOD, a.dtype(), a, b); }

// --- sums as term lists --------------------------------------------------------------------------

/// The leaves of a tree of binary `op` nodes, left to right (appended to out).
constexpr void split_tree(Ops op, UOp u, std::vector<UOp>& out) {
  // the work stack is borrowed from the arena's pool: a fresh one per call was a tenth of a matmul
  // compile's allocations
  Arena& a = u.arena();
  Arena::scratch_vector<node_id> st_v(a);
  std::vector<node_id>& st = *st_v;
  if (out.capacity() == 0) out.reserve(8);  // one allocation, not one per doubling
  st.push_back(u.id());
  while (!st.empty()) {
    const node_id v = st.back();
    st.pop_back();
    const auto& r = a.raw(v);
    if (r.op == op && r.nsrc == 2) {
      const node_id l = a.src_ids(v)[0], rt = a.src_ids(v)[1];
      st.push_back(rt);
      st.push_back(l);
    } else {
      out.push_back(UOp(&a, v));
    }
  }
}
/// The summands of an ADD tree, left to right.
constexpr void split_add(UOp u, std::vector<UOp>& out) { split_tree(Ops::ADD, u, out); }
/// Sum of terms (left-associated) of dtype dt; 0 for none.
constexpr UOp sum(Arena& a, DType dt, const std::vector<UOp>& terms) {
  if (terms.empty()) return iconst(a, dt, 0);
  UOp r = terms[0];
  for (std::size_t i = 1; i < terms.size(); ++i) r = bin(Ops::ADD, dt, r, terms[i]);
  return r;
}
/// The term with its integer factor: MUL(t, c) / MUL(c, t) -> (t, c); CONST c -> (none, c); else (u, 1).
struct factored {
  UOp term;  // invalid for a constant
  i128 factor;
};
constexpr factored factor_of(UOp u) {
  i128 v = 0;
  if (int_const(u, v)) return {UOp(), v};
  if (u.op() == Ops::MUL && u.nsrc() == 2) {
    if (int_const(u.src(1), v)) return {u.src(0), v};
    if (int_const(u.src(0), v)) return {u.src(1), v};
  }
  return {u, 1};
}
/// term * f, folded when f is 1.
constexpr UOp scaled(UOp term, i128 f) {
  if (f == 1) return term;
  return mul_c(term, f);
}
constexpr i128 gcd(i128 a, i128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    i128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}
constexpr i128 floor_div(i128 a, i128 b) { return detail::floor_div(a, b); }
constexpr i128 floor_mod(i128 a, i128 b) { return detail::floor_mod(a, b); }

/// Whether `x` occurs in the graph of `u` (u included).
constexpr bool occurs_in(UOp u, UOp x) { return depends_on(u, x); }
/// Whether the graph of u contains an op of the set.
constexpr bool contains_op(UOp u, OpSet ops) {
  if (ops.contains(u.op())) return true;
  if (!u.arena().may_contain(u.id(), ops)) return false;  // the node's summary proves it: no walk
  for (node_id id : backward_slice_ids(u))
    if (ops.contains(u.arena().raw(id).op)) return true;
  return false;
}

/// Whether evaluating u may be undefined (a division or modulo whose divisor range contains 0):
/// such a value must not be evaluated where the original graph did not evaluate it.
constexpr bool may_be_undefined(UOp u) {
  using enum Ops;
  using enum DType;
  auto bad = [](UOp n) {
    constexpr OpSet divs{CDIV, CMOD, FLOORDIV, FLOORMOD};
    if (!divs.contains(n.op()) || n.nsrc() != 2) return false;
    UOp d = n.src(1);
    if (d.vmin() <= 0 && d.vmax() >= 0) return true;  // division by zero
    // INT_MIN / -1 overflows a signed type of concrete width
    const DType dt = n.dtype();
    return is_signed_int(dt) && dt != weakint && d.vmin() <= -1 && d.vmax() >= -1 &&
           n.src(0).vmin() <= int_min(dt);
  };
  if (bad(u)) return true;
  for (node_id id : backward_slice_ids(u))
    if (bad(u.arena().node(id))) return true;
  return false;
}

// --- structural order (tinygrad's tuplize) ---------------------------------------------------------

namespace detail {
constexpr int cmp_dtype(DType a, DType b) {
  if (a == b) return 0;
  if (priority(a) != priority(b)) return priority(a) < priority(b) ? -1 : 1;
  if (bitsize(a) != bitsize(b)) return bitsize(a) < bitsize(b) ? -1 : 1;
  if (name(a) != name(b)) return name(a) < name(b) ? -1 : 1;
  return 0;
}
constexpr int cmp_arg(const Arg& a, const Arg& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      double x = a.as_float(), y = b.as_float();
      return x < y ? -1 : (y < x ? 1 : 0);
    }
    i128 x = a.kind() == ArgKind::uint_ ? static_cast<i128>(a.as_uint()) : static_cast<i128>(a.as_int());
    i128 y = b.kind() == ArgKind::uint_ ? static_cast<i128>(b.as_uint()) : static_cast<i128>(b.as_int());
    return x < y ? -1 : (y < x ? 1 : 0);
  }
  if (a.kind() != b.kind()) return a.kind() < b.kind() ? -1 : 1;
  if (a.kind() == ArgKind::string || a.kind() == ArgKind::sym || a.kind() == ArgKind::bigint) {
    auto x = a.as_string(), y = b.as_string();
    return x < y ? -1 : (y < x ? 1 : 0);
  }
  if (!a.items().empty() || !b.items().empty()) {
    std::size_t n = a.size() < b.size() ? a.size() : b.size();
    for (std::size_t i = 0; i < n; ++i)
      if (int r = cmp_arg(a[i], b[i])) return r;
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  }
  return a.bits() < b.bits() ? -1 : (b.bits() < a.bits() ? 1 : 0);
}
/// The part of structural_cmp that reads only the two nodes themselves: op, arg, dtype.
constexpr int cmp_own(UOp a, UOp b) {
  Arena &aa = a.arena(), &ba = b.arena();
  const auto &x = aa.raw(a.id()), &y = ba.raw(b.id());
  if (x.op != y.op) return static_cast<int>(x.op) < static_cast<int>(y.op) ? -1 : 1;
  // an arena interns each arg value once: the same id is the same value (the linearizer's sort
  // compares many nodes that share their arg)
  if (&aa != &ba || x.arg != y.arg)
    if (int r = cmp_arg(a.arg(), b.arg())) return r;
  return cmp_dtype(x.dtype, y.dtype);
}
}  // namespace detail

/// Three-way structural comparison: (op value, arg, dtype, srcs...) lexicographically.
constexpr int structural_cmp(UOp a, UOp b) {
  if (a == b) return 0;
  if (int r = detail::cmp_own(a, b)) return r;
  Arena &aa = a.arena(), &ba = b.arena();
  const auto &x = aa.raw(a.id()), &y = ba.raw(b.id());
  const std::uint32_t n = x.nsrc < y.nsrc ? x.nsrc : y.nsrc;
  // comparing creates no node, so the source lists stay where they are
  const node_id *sa = aa.src_ids(a.id()), *sb = ba.src_ids(b.id());
  for (std::uint32_t i = 0; i < n; ++i)
    if (int r = structural_cmp(UOp(&aa, sa[i]), UOp(&ba, sb[i]))) return r;
  if (x.nsrc != y.nsrc) return x.nsrc < y.nsrc ? -1 : 1;
  return 0;
}
constexpr bool structural_less(UOp a, UOp b) { return structural_cmp(a, b) < 0; }

}  // namespace uopcg::symbolic
