// Op decompositions: rewriting the ops an OpenCL target cannot print (or prints badly) into ops it
// can (tinygrad/codegen/decomp/op.py and transcendental.py).
//
//   stage 14 "cast float alu operands"  pm_cast_float_alu          cast_float_alu(sink, t)
//   stage 15 "early decompositions"     symbolic_simple + pm_simplifying_decomps
//                                                                   early_decompositions(sink, t)
//   stage 17 "late decompositions"      pm_decomp = symbolic_simple + pm_simplifying_decomps
//                                         + pm_late_decomps + pm_transcendental
//                                                                   late_decompositions(sink, t)
//
// Every rule that depends on the target takes the `const Target&` context (a context type derived
// from Target works too) and declines when the op it would produce is not renderable, or when the op
// it removes is. The results keep OpenCL C semantics: floor division and modulo become C's truncating
// `/` and `%` plus a sign fix, shifts and masks only where they are exact for every sign.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "../symbolic/sets.hpp"
#include "detail/vars.hpp"
#include "target.hpp"
#include "transcendental.hpp"

namespace uopcg::codegen {

namespace detail {
using symbolic::i128;

inline constexpr auto a = pat::var<"a">;
inline constexpr auto d = pat::var<"d">;
inline constexpr auto key = pat::var<"key">;
inline constexpr auto c1 = pat::cvar<"c1">;
inline constexpr auto c2 = pat::cvar<"c2">;
inline constexpr auto xi = pat::var<"x">.dtypes<pat::ints>();
inline constexpr auto xb = pat::var<"x">.dtype<DType::bool_>();
inline constexpr auto yb = pat::var<"y">.dtype<DType::bool_>();
inline constexpr pat::DTypeSet sints{DType::int8, DType::int16, DType::int32, DType::int64};
inline constexpr pat::DTypeSet uints{DType::uint8, DType::uint16, DType::uint32, DType::uint64};
inline constexpr auto xs = pat::var<"x">.dtypes<sints>();
inline constexpr auto ys = pat::var<"y">.dtypes<sints>();
inline constexpr auto xu = pat::var<"x">.dtypes<uints>();

/// k when the integer CONST u is 2^k with k >= 1, else -1.
constexpr int pow2_exponent(UOp u) {
  i128 v = 0;
  if (!symbolic::int_const(u, v) || u.arg().is_bool() || v < 2 || (v & (v - 1)) != 0) return -1;
  int k = 0;
  while ((static_cast<i128>(1) << k) != v) ++k;
  return k;
}
/// The value of constant c as an operand beside x (a weak literal is converted to x's dtype).
constexpr i128 operand_value(UOp c, UOp x) { return symbolic::cval_as(c, x.dtype()); }
/// The integer CONST v with the dtype of `like`.
constexpr UOp k_like(UOp like, i128 v) { return symbolic::iconst_like(like, v); }
/// A weak integer literal (what a plain number operand becomes; committed to the operand's width
/// by the final rewrite).
constexpr UOp weak(Arena& a, i128 v) { return const_(a, DType::weakint, Arg(static_cast<std::int64_t>(v))); }
constexpr UOp alu2(Ops op, UOp l, UOp r) { return l.arena().make(op, l.dtype(), {l, r}); }
constexpr UOp cmp(Ops op, UOp l, UOp r) { return l.arena().make(op, DType::bool_, {l, r}); }
constexpr UOp where3(UOp cond, UOp t, UOp f) { return cond.arena().make(Ops::WHERE, t.dtype(), {cond, t, f}); }
/// Whether both operands' signs are provably equal (then C's truncation is floor). Unsigned
/// operands always are: bounds cannot say so where a divisor may be 0 (undefined either way) or a
/// uint64 value lies beyond the int64 bounds track.
constexpr bool same_sign(UOp num, UOp den) {
  if (is_unsigned(num.dtype()) && is_unsigned(den.dtype())) return true;
  return (num.vmin() >= 0 && den.vmin() > 0) || (num.vmax() <= 0 && den.vmax() < 0);
}
/// Rule predicates on the target: it renders every one of the ops, or none of them.
template <Ops... O>
inline constexpr pat::predicate renders{[](const Target& t, auto&) { return (t.supports_op(O) && ...); }};
template <Ops... O>
inline constexpr pat::predicate lacks{[](const Target& t, auto&) { return !(t.supports_op(O) || ...); }};
/// c is 2^k (k >= 1) and x is no weak integer.
inline constexpr auto strong_pow2 = [](auto& m) { return pow2_exponent(m[c]) >= 0 && !is_weak(m[x].dtype()); };
/// x shifted by k for c = 2^k (SHL for x * c, SHR for x // c): the count a weak literal.
template <Ops O>
inline constexpr auto shift_by_log2 = [](auto& m) { return alu2(O, m[x], weak(m.arena(), pow2_exponent(m[c]))); };
/// The target's fast integer division applies to x: not disabled, SHR renders, x no weak integer
/// and never negative.
inline constexpr pat::predicate fast_idiv_applies{[](const Target& t, auto& m) {
  const UOp v = m[x];
  return !t.disable_fast_idiv && t.supports_op(Ops::SHR) && !is_weak(v.dtype()) && (v.vmin() >= 0 || is_unsigned(v.dtype()));
}};
/// (num < 0) != (den < 0): the signs differ.
constexpr UOp signs_differ(UOp num, UOp den) {
  using enum Ops;
  return cmp(CMPNE, cmp(CMPLT, num, k_like(num, 0)), cmp(CMPLT, den, k_like(den, 0)));
}
}  // namespace detail

// --- stage 14: cast float alu operands -------------------------------------------------------------

/// SIN/LOG2/EXP2/SQRT/RECIPROCAL compute in their own (float) dtype: an operand of another dtype
/// (`sqrt` of an int) gets an explicit CAST, so the decompositions and the renderer see one dtype.
inline constexpr auto pm_cast_float_alu = [] {
  using namespace detail;
  using enum Ops;
  return pat::rules(pat::rewrite(
      "cast float alu operand", pat::op<SIN, LOG2, EXP2, SQRT, RECIPROCAL>(x),
      [](auto& m) {
        const UOp u = m.root();
        return m.arena().make(u.op(), u.dtype(), {cast(m[x], u.dtype())}, u.arg(), u.tag());
      },
      [](auto& m) { return m[x].dtype() != m.root().dtype(); }));
}();

/// Stage 14 ("cast float alu operands").
template <class = void>
constexpr UOp cast_float_alu(UOp sink, const Target& t) {
  (void)t;
  return pat::graph_rewrite(sink, pm_cast_float_alu, {.name = "cast float alu operands"});
}

// --- the decomposition algorithms (plain functions) ------------------------------------------------

/// Floor division a // b in C's truncating CDIV: exact when the signs are known equal, otherwise
/// the quotient is lowered by one where the division was inexact and the signs differ.
constexpr UOp floordiv_to_idiv(UOp a, UOp b, DType dt) {
  using enum Ops;
  using namespace detail;
  UOp q = a.arena().make(CDIV, dt, {a, b});
  if (same_sign(a, b)) return q;
  UOp r = a.arena().make(CMOD, dt, {a, b});
  UOp fix = cmp(AND, cmp(CMPNE, r, k_like(r, 0)), signs_differ(a, b));
  return alu2(ADD, q, alu2(MUL, cast(fix, dt), k_like(q, -1)));
}
/// Floor modulo a % b in C's truncating CMOD: the remainder is moved into the divisor's sign by
/// adding b where it is non-zero and the signs differ (a select, not a multiply).
constexpr UOp floormod_to_mod(UOp a, UOp b, DType dt) {
  using enum Ops;
  using namespace detail;
  UOp r = a.arena().make(CMOD, dt, {a, b});
  if (same_sign(a, b)) return r;
  UOp fix = cmp(AND, cmp(CMPNE, r, k_like(r, 0)), signs_differ(a, b));
  UOp bb = b.dtype() == dt ? b : cast(b, dt);
  return alu2(ADD, r, where3(fix, bb, k_like(r, 0)));
}

/// The Threefry-2x32 block cipher (20 rounds) on a uint64 counter and key, in uint32 arithmetic
/// (tinygrad's key schedule: [key_hi, key_lo ^ key_hi ^ 0x1BD11BDA, key_lo]).
constexpr UOp threefry2x32(UOp x, UOp key) {
  using enum Ops;
  using enum DType;
  using namespace detail;
  Arena& ar = x.arena();
  auto u32 = [&](std::int64_t v) { return const_(ar, uint32, Arg(v)); };
  auto u64 = [&](std::int64_t v) { return const_(ar, uint64, Arg(v)); };
  auto lo = [&](UOp v) { return cast(v, uint32); };
  auto hi = [&](UOp v) { return cast(alu2(SHR, v, u64(32)), uint32); };
  const UOp x0 = lo(x), x1 = hi(x), k0 = lo(key), k1 = hi(key);
  const UOp ks[3] = {k1, alu2(XOR, alu2(XOR, k0, k1), u32(0x1BD11BDA)), k0};
  constexpr int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  UOp v0 = alu2(ADD, x0, ks[2]), v1 = alu2(ADD, x1, ks[0]);
  for (int i = 0; i < 5; ++i) {
    for (int r : rot[i % 2]) {
      UOp s = alu2(ADD, v0, v1);
      UOp rotl = alu2(ADD, alu2(SHL, v1, u32(r)), alu2(SHR, v1, u32(32 - r)));
      v1 = alu2(XOR, s, rotl);
      v0 = s;
    }
    v0 = alu2(ADD, v0, ks[i % 3]);
    // (v1 + ks) + i + 1 as two additions, as tinygrad writes it: the late passes do not fold
    // constant chains, so the rendered source keeps both (and x + 0 folds away for i = 0)
    v1 = alu2(ADD, alu2(ADD, alu2(ADD, v1, ks[(i + 1) % 3]), u32(i)), u32(1));
  }
  return alu2(OR, alu2(SHL, cast(v1, uint64), u64(32)), cast(v0, uint64));
}

/// (m, s) with x // d == (x * m) >> s for every 0 <= x <= vmax (d > 0): the smallest shift whose
/// rounding error stays below one step (Hacker's Delight, ch. 10). nullopt when vmax is too wide to
/// compute with here.
constexpr std::optional<std::pair<symbolic::i128, int>> magicgu(symbolic::i128 vmax, symbolic::i128 d) {
  using symbolic::i128;
  if (d <= 0 || vmax < 0) return std::nullopt;
  int nbits = 0;
  while (nbits < 127 && (static_cast<i128>(1) << nbits) <= vmax) ++nbits;
  if (nbits > 62) return std::nullopt;
  const i128 nc = (vmax + 1) / d * d - 1;
  for (int s = 0; s <= 2 * nbits; ++s) {
    const i128 p = static_cast<i128>(1) << s;
    if (p > nc * (d - 1 - (p - 1) % d)) return std::make_pair((p + d - 1 - (p - 1) % d) / d, s);
  }
  return std::nullopt;
}

/// x CDIV d (d > 0 constant) as a multiply and a shift, for the ranges where it is exact; first in
/// x's dtype, then after dividing out d's factors of two, then in the next wider integer dtype if
/// the target has it. nullopt when none is provably exact.
constexpr std::optional<UOp> fast_idiv(const Target& t, UOp x, symbolic::i128 d, bool dont_cast = false) {
  using enum Ops;
  using enum DType;
  using namespace detail;
  const DType dt = x.dtype();
  if (!is_int(dt) || is_weak(dt) || d <= 0) return std::nullopt;
  const bool nonneg = x.vmin() >= 0 || is_unsigned(dt);
  const i128 dmin = is_unsigned(dt) ? 0 : static_cast<i128>(int_min(dt));
  const i128 dmax = static_cast<i128>(int_max_u(dt));
  i128 vmin = x.vmin() > dmin ? static_cast<i128>(x.vmin()) : dmin;
  i128 vmax = static_cast<i128>(x.vmax()) < dmax ? static_cast<i128>(x.vmax()) : dmax;
  if (is_unsigned(dt) && x.vmax() < 0) vmax = dmax;  // bounds of a uint64 beyond int64 are unknown
  if (vmin > -d && vmax < d) return k_like(x, 0);
  auto ms = magicgu(vmax > -vmin ? vmax : -vmin, d);
  if (!ms) return std::nullopt;
  const auto [m, s] = *ms;
  // m*v within [lo, hi], without overflowing i128 (m may be large when vmax is)
  auto product_in = [m = m](i128 v, i128 lo, i128 hi) {
    const i128 av = v < 0 ? -v : v;
    if (av != 0 && m > (static_cast<i128>(1) << 125) / av) return false;
    return m * v >= lo && m * v <= hi;
  };
  auto fixed = [&](UOp q) { return nonneg ? q : alu2(ADD, q, where3(cmp(CMPLT, x, k_like(x, 0)), k_like(x, 1), k_like(x, 0))); };
  if (product_in(vmin, dmin, dmax) && product_in(vmax, dmin, dmax))
    return fixed(alu2(SHR, alu2(MUL, x, k_like(x, m)), k_like(x, s)));
  if (const i128 two = d & -d; two > 1) {
    if (auto r = fast_idiv(t, alu2(CDIV, x, k_like(x, two)), d / two, true)) return r;
  }
  if (dont_cast) return std::nullopt;
  DType next = void_;
  switch (dt) {
    case int8: next = int16; break;
    case int16: next = int32; break;
    case int32: next = int64; break;
    case int64: next = uint64; break;
    case uint8: next = uint16; break;
    case uint16: next = uint32; break;
    case uint32: next = uint64; break;
    default: return std::nullopt;
  }
  if (!t.supports_dtype(next)) return std::nullopt;
  const i128 nmin = is_unsigned(next) ? 0 : static_cast<i128>(int_min(next));
  const i128 nmax = static_cast<i128>(int_max_u(next));
  if (product_in(vmin, nmin, nmax) && product_in(vmax, nmin, nmax)) {
    UOp w = cast(x, next);
    return fixed(cast(alu2(SHR, alu2(MUL, w, k_like(w, m)), k_like(w, s)), dt));
  }
  return std::nullopt;
}

// --- stage 15: the simplifying decompositions ------------------------------------------------------

/// FLOORDIV/FLOORMOD to C division (powers of two to shifts and masks first), THREEFRY to uint32
/// arithmetic, MAX to a select.
inline constexpr auto pm_simplifying_decomps = [] {
  using namespace detail;
  using enum Ops;
  return pat::rules(
      // an arithmetic shift is floor division by 2^k for either sign
      pat::rewrite("x//2^k -> x>>k", pat::floordiv(xi, c), shift_by_log2<SHR>, renders<SHR> && strong_pow2),
      pat::rewrite("floordiv -> cdiv", pat::floordiv(a, b), [](auto& m) { return floordiv_to_idiv(m[a], m[b], m.root().dtype()); },
                 lacks<FLOORDIV> && renders<CDIV>),
      // two's complement: x & (2^k-1) is the floor modulo by 2^k for either sign
      pat::rewrite("x%2^k -> x&mask", xi % c,
                 [](auto& m) { return alu2(AND, m[x], weak(m.arena(), (static_cast<i128>(1) << pow2_exponent(m[c])) - 1)); },
                 renders<AND> && strong_pow2),
      pat::rewrite("floormod -> cmod", a % b, [](auto& m) { return floormod_to_mod(m[a], m[b], m.root().dtype()); },
                 lacks<FLOORMOD> && renders<CMOD>),
      pat::rewrite("threefry", pat::op<THREEFRY>.dtype<DType::uint64>()(x, key), [](auto& m) { return threefry2x32(m[x], m[key]); },
                 lacks<THREEFRY>),
      pat::rewrite("max -> where", pat::op<MAX>(a, b), pat::where(a < b, b, a), lacks<MAX> && renders<CMPLT>));
}();

/// Stage 15 ("early decompositions").
template <class = void>
constexpr UOp early_decompositions(UOp sink, const Target& t) {
  return pat::graph_rewrite(sink, symbolic::symbolic_simple + pm_simplifying_decomps, t, {.name = "early decompositions"});
}

// --- stage 17: the late decompositions -------------------------------------------------------------

/// Late forms: shifts for multiplications and divisions by powers of two, fast integer division,
/// NEG/SUB/CMPEQ and the comparison forms that read better (all keyed on what the target renders).
inline constexpr auto pm_late_decomps = [] {
  using namespace detail;
  using enum Ops;
  using symbolic::fold;
  constexpr auto not_ = [](auto p) { return pat::ne(p, pat::lit(1)); };
  return pat::rules(
      pat::rewrite("!x & !y -> !(x|y)", not_(xb) & not_(yb), pat::logical_not(xb | yb), renders<OR>),
      pat::rewrite("x*2^k -> x<<k", xi * c, shift_by_log2<SHL>, renders<SHL> && strong_pow2),
      pat::rewrite("unsigned cdiv 2^k -> x>>k", pat::op<CDIV>(xu, c), shift_by_log2<SHR>, renders<SHR> && strong_pow2),
      // truncation toward zero: negative numerators are biased by 2^k-1 before the shift
      pat::rewrite("signed cdiv 2^k -> shift", pat::op<CDIV>(xi, c), [](auto& m) {
        const UOp v = m[x];
        const int k = pow2_exponent(m[c]);
        UOp neg = cmp(CMPLT, v, k_like(v, 0));
        if (neg.vmin() == neg.vmax()) neg = literal(v.arena(), neg.vmin() != 0);
        const UOp bias = k_like(v, (static_cast<i128>(1) << k) - 1);
        return alu2(SHR, alu2(ADD, v, where3(neg, bias, weak(v.arena(), 0))), weak(v.arena(), k));
      }, renders<SHR> && strong_pow2),
      pat::rewrite("fast idiv", pat::op<CDIV>(xi, c), [](const Target& t, auto& m) -> std::optional<UOp> {
        i128 dv = 0;
        if (!symbolic::int_const(m[c], dv)) return std::nullopt;
        return fast_idiv(t, m[x], dv);
      }, fast_idiv_applies),
      pat::rewrite("cmod -> x - d*cdiv", pat::op<CMOD>(xi, d), [](auto& m) {
        const UOp v = m[x], dv = m[d], q = alu2(CDIV, v, dv);
        return alu2(ADD, v, alu2(MUL, alu2(MUL, dv, q), k_like(v, -1)));
      }, fast_idiv_applies),
      // -1 of an unsigned dtype is stored wrapped (all ones: `x - d*q` of a uint CMOD is
      // `x + d*q*4294967295u`), and is -1 all the same
      pat::rewrite("x*-1 -> neg", x * c, pat::op<NEG>(x), renders<NEG> && [](auto& m) {
        const DType dt = m[c].dtype();
        const Arg& v = m[c].arg();
        return !is_bool(m.root().dtype()) &&
               ((v.kind() == ArgKind::int_ && v.as_int() == -1) || (v.is_float() && v.as_float() == -1.0) ||
                (is_unsigned(dt) && v.is_int() && symbolic::cval_as(m[c], dt) == static_cast<i128>(int_max_u(dt))));
      }),
      pat::rewrite("x+neg(y) -> sub", x + pat::op<NEG>(y), pat::op<SUB>(x, y), renders<NEG, SUB>),
      pat::rewrite("!(x<c) -> c-1<x", not_(pat::lt(xs, c)), fold(c - 1) < x,
                 renders<CMPLT> && [](auto& m) { return operand_value(m[c], m[x]) > int_min(m[x].dtype()); }),  // c-1 would wrap
      pat::rewrite("!(c<x) -> x<c+1", not_(pat::lt(c, xs)), x < fold(c + 1),
                 renders<CMPLT> && [](auto& m) { return operand_value(m[c], m[x]) < static_cast<i128>(int_max_u(m[x].dtype())); }),
      pat::rewrite("-x < y*c -> y*-c < x", pat::lt(xs * pat::const_<-1>, ys * c), y * fold(-c) < x,
                 renders<CMPLT> && [](auto& m) { return operand_value(m[c], m[y]) > int_min(m[y].dtype()); }),
      pat::rewrite("-x < c -> -c < x", pat::lt(xs * pat::const_<-1>, c), fold(-c) < x,
                 renders<CMPLT> && [](auto& m) { return operand_value(m[c], m[x]) > int_min(m[x].dtype()); }),
      pat::rewrite("c1<x & x<c2 -> x==c1+1", pat::lt(c1, xs) & pat::lt(xs, c2), pat::logical_not(pat::ne(x, fold(c1 + 1))),
                 renders<CMPLT> && [](auto& m) { return operand_value(m[c1], m[x]) + 1 == operand_value(m[c2], m[x]) - 1; }),
      pat::rewrite("!(x!=y) -> x==y", not_(pat::ne(x, y)), pat::op<CMPEQ>(x, y), renders<CMPEQ>));
}();

/// The combined decomposition matcher of stage 17, reused by the final rewrite (stage 19): the
/// generic folding, the simplifying and late decompositions and the transcendental polynomials.
/// Needs a `const Target&` context (or one derived from Target).
inline constexpr auto pm_decomp = symbolic::symbolic_simple + pm_simplifying_decomps + pm_late_decomps + pm_transcendental;

/// Stage 17 ("late decompositions").
template <class = void>
constexpr UOp late_decompositions(UOp sink, const Target& t) {
  return pat::graph_rewrite(sink, pm_decomp, t, {.name = "late decompositions"});
}

}  // namespace uopcg::codegen
