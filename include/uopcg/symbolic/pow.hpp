// POW: a constant exponent becomes products, square roots and reciprocals; a positive constant
// base becomes exp2 (both in symbolic_simple, as tinygrad's simplify_pow); `sym` turns any POW left
// into `xpow`, the exp2/log2 form with the sign cases of a negative base. An integer POW (a MUL
// reduce over a range its value does not use, x**n) becomes products too: no renderer has an
// integer pow.
//
// These are float rewrites that round differently from pow(): the soundness tests check them up to
// a relative tolerance (tinygrad's fast-math view of POW).
#pragma once

#include <cmath>
#include <limits>
#include <optional>

#include "util.hpp"

namespace uopcg::symbolic {

namespace detail {
constexpr UOp fconst(UOp like, double v) { return const_(like.arena(), like.dtype(), Arg::floating(v)); }
constexpr UOp falu(Ops op, UOp a) { return a.arena().make(op, a.dtype(), {a}); }
constexpr UOp falu(Ops op, UOp a, UOp b) { return a.arena().make(op, a.dtype(), {a, b}); }
constexpr UOp fneg(UOp a) { return falu(Ops::MUL, a, fconst(a, -1.0)); }
constexpr UOp fsel(UOp c, UOp t, UOp f) { return c.arena().make(Ops::WHERE, t.dtype(), {c, t, f}); }
constexpr UOp fne(UOp a, UOp b) { return a.arena().make(Ops::CMPNE, DType::bool_, {a, b}); }
/// A float CONST's value as a finite double (nullopt for NaN/inf or a non-number).
constexpr std::optional<double> finite_fval(UOp u) {
  if (!is_const(u) || !u.arg().is_number()) return std::nullopt;
  double v = u.arg().as_float();
  if (v != v || v - v != 0) return std::nullopt;
  return v;
}
/// 2^(mantissa bits + 1) of a float dtype: every value of at least this magnitude is an even integer.
constexpr double even_integers_from(DType d) {
  using enum DType;
  int man = 23;
  switch (d) {
    case float64: man = 52; break;
    case float16: man = 10; break;
    case bfloat16: man = 7; break;
    case fp8e4m3: case fp8e4m3fnuz: man = 3; break;
    case fp8e5m2: case fp8e5m2fnuz: man = 2; break;
    default: break;
  }
  double v = 1.0;
  for (int i = 0; i <= man; ++i) v *= 2.0;
  return v;
}
constexpr bool is_whole(double v) { return v >= -9.0e15 && v <= 9.0e15 && static_cast<double>(static_cast<std::int64_t>(v)) == v; }

/// x ** n for a whole n > 0 by squaring: (x**(n//2))**2, times x when n is odd; `half` is the
/// constant n//2 in the POW's dtype.
constexpr UOp pow_by_squaring(UOp x, UOp half, std::int64_t n) {
  const UOp h = falu(Ops::POW, x, half);
  const UOp sq = falu(Ops::MUL, h, h);
  return n % 2 == 1 ? falu(Ops::MUL, sq, x) : sq;
}
/// x ** n for an integer x and a whole n >= 0, by squaring as for floats (tinygrad's simplify_pow
/// does not look at the dtype); nullopt for a negative n, which has no integer reciprocal.
constexpr std::optional<UOp> int_pow_const_exponent(UOp root, UOp x, std::int64_t n) {
  if (n < 0) return std::nullopt;
  if (n == 0) return iconst_like(root, 1);
  return pow_by_squaring(x, iconst_like(root, n / 2), n);
}

/// A constant operand of a POW as the POW sees it: the literal in the constant's dtype, then in the
/// op's (the constant holds a finite float: finite_fval).
constexpr double pow_operand(UOp root, UOp c) { return round_float(root.dtype(), round_float(c.dtype(), *finite_fval(c))); }
/// x ** c for a finite constant c: c < 0 through the reciprocal, 0 -> 1, k + 1/2 -> x**k * sqrt(x),
/// a whole c by squaring. nullopt for other exponents.
constexpr std::optional<UOp> pow_const_exponent(UOp root, UOp x, double c) {
  using enum Ops;
  if (c < 0) return falu(POW, falu(RECIPROCAL, x), fconst(root, -c));
  if (c == 0) return fconst(root, 1.0);
  if (is_whole(c - 0.5)) {
    // pow(-inf, k+1/2) is +inf but sqrt(-inf) is NaN: not for an x holding a non-finite literal
    if (holds_nonfinite_literal(x)) return std::nullopt;
    return falu(MUL, falu(POW, x, fconst(root, c - 0.5)), falu(SQRT, x));
  }
  if (!is_whole(c)) return std::nullopt;
  const auto n = static_cast<std::int64_t>(c);
  return pow_by_squaring(x, fconst(root, static_cast<double>(n / 2)), n);
}
}  // namespace detail

/// base ** exponent as exp2(exponent * log2|base|), NaN for a negative finite base with a
/// non-integer exponent (-inf stays |base| ** exponent: pow(-inf, 0.5) is inf), negated for an odd
/// integer exponent, and x ** 0 = 1 for every x, 0, inf and NaN included (pow's definition, where
/// exp2(0 * log2(inf)) is NaN) (selects, no branches).
///
/// The integer tests cast only exponents below 2^(mantissa bits + 1) in magnitude (every larger
/// float is an even integer; such exponents take 0): the snapshot casts any exponent to int32,
/// undefined from 2^31 on (pow(-5e29, -5e29)). float64 exponents go through int64.
constexpr UOp xpow(UOp base, UOp exponent) {
  using namespace detail;
  using enum Ops;
  using enum DType;
  Arena& ar = base.arena();
  const DType et = exponent.dtype();
  const DType it = et == float64 ? int64 : int32;
  UOp negative = lt(base, fconst(base, 0.0));
  UOp ret = falu(EXP2, falu(MUL, falu(LOG2, fsel(negative, fneg(base), base)), exponent));
  UOp abs_exp = fsel(lt(exponent, fconst(exponent, 0.0)), fneg(exponent), exponent);
  UOp small = lt(abs_exp, fconst(exponent, even_integers_from(et)));
  UOp small_exp = fsel(small, exponent, fconst(exponent, 0.0));
  UOp non_int = fne(small_exp, cast(cast(small_exp, it), et));
  UOp odd = cast(ar.make(FLOORMOD, it, {cast(fsel(small, abs_exp, fconst(exponent, 0.0)), it), iconst(ar, it, 2)}), bool_);
  UOp finite_neg = fne(base, fconst(base, -std::numeric_limits<double>::infinity()));
  UOp neg_base = fsel(non_int, fsel(finite_neg, fconst(ret, std::numeric_limits<double>::quiet_NaN()), ret), fsel(odd, fneg(ret), ret));
  UOp zero_exp = not_(fne(exponent, fconst(exponent, 0.0)));
  return fsel(zero_exp, fconst(ret, 1.0), fsel(negative, neg_base, ret));
}

/// symbolic_simple's POW rules: constant exponent, positive constant base.
inline constexpr auto simple_pow = [] {
  using namespace vars;
  using enum Ops;
  constexpr auto float_pow = pat::op<POW>.dtypes<pat::floats>();
  // x of the POW's dtype, the constant operand a finite float
  constexpr auto finite_const =
      pat::root_dtype(x) && [](auto& m) { return !is_invalid(m[x]) && detail::finite_fval(m[c0]).has_value(); };
  constexpr auto int_pow = pat::op<POW>.dtypes<pat::ints>();
  return pat::rules(
      pat::rewrite("x**c (integer)", int_pow(x, c0),
                   [](auto& m) { return detail::int_pow_const_exponent(m.root(), m[x], m[c0].arg().as_int()); },
                   pat::root_dtype(x) && [](auto& m) { return !is_invalid(m[x]) && m[c0].arg().is_int(); }),
      pat::rewrite("x**c", float_pow(x, c0),
                   [](auto& m) { return detail::pow_const_exponent(m.root(), m[x], detail::pow_operand(m.root(), m[c0])); }, finite_const),
      // the base as the POW sees it: 1e-40 is 0 in half, and pow(0, x) is no exp2 of log2(1e-40)
      // (found by `uopcg check-rules --instances 1000000` on a weakfloat constant in a half POW)
      pat::rewrite(
          "c**x", float_pow(c0, x),
          [](auto& m) {
            const UOp r = m.root();
            const double c = detail::pow_operand(r, m[c0]);
            return c == 1 ? detail::fconst(r, 1.0) : detail::falu(EXP2, detail::falu(MUL, m[x], detail::fconst(r, std::log2(c))));
          },
          finite_const && [](auto& m) {
            const double c = detail::pow_operand(m.root(), m[c0]);
            return c == 1 || (c > 0 && c - c == 0);
          }));
}();

/// sym's POW rule: whatever POW is left becomes xpow.
inline constexpr auto sym_pow = [] {
  using namespace vars;
  using enum Ops;
  // exp2(0 * log2(inf)) is NaN where pow(inf, 0) is 1: not for a literal inf/NaN operand
  constexpr auto finite_floats = [](auto& m) {
    const DType dt = m.root().dtype();
    return is_float(dt) && !is_weak(dt) && !is_invalid(m[a]) && !is_invalid(m[b]) && !holds_nonfinite_literal(m[a]) &&
           !holds_nonfinite_literal(m[b]);
  };
  return pat::rules(
      pat::rewrite("pow -> xpow", pat::op<POW>(a, b), [](auto& m) { return xpow(m[a], m[b]); }, pat::root_dtype(a, b) && finite_floats));
}();

}  // namespace uopcg::symbolic
