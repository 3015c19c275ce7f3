// Polynomial implementations of EXP2, LOG2, SIN and SQRT for targets that lack them (or when
// Target::transcendental >= 2 forces them): tinygrad/codegen/decomp/transcendental.py. The algorithms are SLEEF's
// (https://arxiv.org/pdf/2001.09258): exp2 by rounding to an integer power plus a polynomial on the
// fraction, log2 by splitting off the exponent and an atanh-style series on the mantissa, sin by
// reducing modulo pi/2 (Cody-Waite for small arguments, Payne-Hanek with 190 bits of 2/pi for large
// ones) and a polynomial on [-pi/2, pi/2]; sqrt as exp2(log2(x)/2) with the sign cases of pow.
//
// Everything is built in the graph's own float dtype (half, float or double); other float dtypes
// go through float32. Integer helpers use FLOORDIV/MUL by powers of two, which the surrounding
// decompositions turn into shifts.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "../symbolic/util.hpp"
#include "float_format.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {
using symbolic::i128;

constexpr bool has_poly(DType d) {
  using enum DType;
  return d == float16 || d == float32 || d == float64;
}
/// The float's layout (float_format.hpp): its integer dtypes, mantissa bits and exponent.
constexpr DType int_of(DType f) { return sbits_dtype(f); }
constexpr DType uint_of(DType f) { return bits_dtype(f); }
constexpr int mantissa_bits(DType f) { return float_format(f).man; }
constexpr i128 exponent_bias(DType f) { return float_format(f).bias; }
constexpr i128 exponent_mask(DType f) { return (static_cast<i128>(1) << float_format(f).exp) - 1; }

// a float literal holds its value rounded to its dtype, as tinygrad makes it (`1.3333333730697632f`
// for 4/3 in float32, not `1.3333333333333333f`)
constexpr UOp fc(UOp like, double v) {
  return const_(like.arena(), like.dtype(), Arg::floating(symbolic::round_float(like.dtype(), v)));
}
constexpr UOp ic(UOp like, i128 v) { return symbolic::iconst_like(like, v); }
constexpr UOp add(UOp a, UOp b) { return a.arena().make(Ops::ADD, a.dtype(), {a, b}); }
constexpr UOp mul(UOp a, UOp b) { return a.arena().make(Ops::MUL, a.dtype(), {a, b}); }
constexpr UOp neg(UOp a) { return mul(a, a.dtype() == DType::bool_ ? a : (is_float(a.dtype()) ? fc(a, -1.0) : ic(a, -1))); }
constexpr UOp sub(UOp a, UOp b) { return add(a, neg(b)); }
constexpr UOp addf(UOp a, double v) { return add(a, fc(a, v)); }
constexpr UOp mulf(UOp a, double v) { return mul(a, fc(a, v)); }
constexpr UOp addi(UOp a, i128 v) { return add(a, ic(a, v)); }
constexpr UOp andi(UOp a, i128 v) { return a.arena().make(Ops::AND, a.dtype(), {a, ic(a, v)}); }
constexpr UOp or_(UOp a, UOp b) { return a.arena().make(Ops::OR, a.dtype(), {a, b}); }
constexpr UOp lt(UOp a, UOp b) { return a.arena().make(Ops::CMPLT, DType::bool_, {a, b}); }
constexpr UOp cne(UOp a, UOp b) { return a.arena().make(Ops::CMPNE, DType::bool_, {a, b}); }
constexpr UOp ltf(UOp a, double v) { return lt(a, fc(a, v)); }
constexpr UOp nef(UOp a, double v) { return cne(a, fc(a, v)); }
constexpr UOp sel(UOp c, UOp t, UOp f) { return c.arena().make(Ops::WHERE, t.dtype(), {c, t, f}); }
constexpr UOp self(UOp c, double t, UOp f) { return sel(c, fc(f, t), f); }
constexpr UOp to(UOp a, DType dt) { return a.dtype() == dt ? a : cast(a, dt); }
/// x * 2^k and x // 2^k on integers (the decompositions make them shifts).
constexpr UOp mul_pow2(UOp x, int k) { return mul(x, ic(x, static_cast<i128>(1) << k)); }
constexpr UOp floordiv_pow2(UOp x, int k) { return x.arena().make(Ops::FLOORDIV, x.dtype(), {x, ic(x, static_cast<i128>(1) << k)}); }
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// Horner's scheme: coeffs[0]*x^(n-1) + ... + coeffs[n-1].
constexpr UOp poly(UOp x, std::initializer_list<double> coeffs) {
  UOp acc;
  for (double c : coeffs) acc = acc.valid() ? addf(mul(acc, x), c) : fc(x, c);
  return acc;
}
/// inf -> on_inf, -inf -> on_ninf, NaN -> on_nan, anything else -> other (selects, no branches).
constexpr UOp map_special(UOp x, UOp on_inf, UOp on_ninf, UOp on_nan, UOp other) {
  return sel(nef(x, inf), sel(cne(x, x), on_nan, sel(nef(x, -inf), other, on_ninf)), on_inf);
}
/// d rounded half away from zero to the integer dtype of its width.
constexpr UOp rintk(UOp d) { return cast(add(d, sel(ltf(d, 0.0), fc(d, -0.5), fc(d, 0.5))), int_of(d.dtype())); }
/// 2^q as a float (q an integer within the exponent range), by building the exponent field.
constexpr UOp pow2if(UOp q, DType float_dt) {
  using enum DType;
  const DType out = q.dtype() == int64 ? float64 : q.dtype() == int32 ? float32 : float_dt;
  return bitcast(mul_pow2(addi(q, exponent_bias(out)), mantissa_bits(out)), out);
}
/// floor(log2(d)) of a normal non-negative d, read from the exponent field.
constexpr UOp ilogb2k(UOp d) {
  const DType f = d.dtype();
  UOp bits = bitcast(d, int_of(f));
  return addi(andi(floordiv_pow2(bits, mantissa_bits(f)), exponent_mask(f)), -exponent_bias(f));
}
/// d * 2^e by adding e to the exponent field (e an integral float).
constexpr UOp ldexp3k(UOp d, UOp e) {
  const DType f = d.dtype();
  return bitcast(add(bitcast(d, int_of(f)), mul_pow2(cast(e, int_of(f)), mantissa_bits(f))), f);
}
/// d * 2^e in two steps (e an integer), for a positive normal d.
constexpr UOp ldexp2k(UOp d, UOp e) {
  UOp half = floordiv_pow2(e, 1);
  return mul(mul(d, pow2if(half, d.dtype())), pow2if(sub(e, half), d.dtype()));
}
/// (mantissa in [0.5, 1), exponent) of a non-zero v.
constexpr std::pair<UOp, UOp> frexp(UOp v) {
  using enum DType;
  const DType f = v.dtype();
  const i128 m1 = f == float64 ? 0x000FFFFFFFFFFFFF : f == float32 ? 0x807FFFFF : 0x83FF;
  const i128 m2 = f == float64 ? 0x3FE0000000000000 : f == float32 ? 0x3F000000 : 0x3800;
  UOp bits = bitcast(v, uint_of(f));
  UOp exponent = andi(floordiv_pow2(bits, mantissa_bits(f)), exponent_mask(f));
  UOp mantissa = bitcast(or_(andi(bits, m1), ic(bits, m2)), f);
  return {mantissa, addi(addi(exponent, -exponent_bias(f)), 1)};
}

/// |d| >= ~30 reduced modulo pi/2 with 190 bits of 2/pi: (remainder, quadrant as int32).
constexpr std::pair<UOp, UOp> payne_hanek_reduction(UOp d) {
  using enum Ops;
  using enum DType;
  constexpr std::uint32_t two_over_pi[] = {0x00000000, 0x28be60db, 0x9391054a, 0x7f09d5f4, 0x7d4d3770, 0x36d8a566, 0x4f10e410};
  constexpr int n_words = 7;
  Arena& ar = d.arena();
  const DType mid = d.dtype() == float16 ? float32 : d.dtype();
  auto [f, e0] = frexp(d);
  UOp ia = cast(mulf(to(f, mid), 4.294967296e9), uint64);
  UOp i = floordiv_pow2(cast(e0, uint64), 5);
  UOp e = andi(cast(e0, int32), 31);
  UOp offset = add(ic(e, 32), neg(e));
  // word k of the table, starting at the dynamic index i
  auto take = [&](int k) {
    UOp acc = const_(ar, uint32, Arg(std::int64_t{0}));
    for (int n = n_words - 2 - k; n >= 0; --n)
      acc = sel(cne(i, ic(i, n)), acc, const_(ar, uint32, Arg(static_cast<std::int64_t>(two_over_pi[n + k]))));
    return acc;
  };
  UOp w[4] = {take(0), take(1), take(2), take(3)};
  auto shl_lazy = [&](UOp x, UOp y) {
    return cast(mul(cast(x, uint64), cast(pow2if(y, d.dtype()), uint64)), uint32);
  };
  auto shr_lazy = [&](UOp x, UOp y) {
    UOp p = cast(pow2if(y, d.dtype()), uint64);
    return cast(ar.make(FLOORDIV, uint64, {cast(x, uint64), p}), uint32);
  };
  UOp hi = or_(shl_lazy(w[0], e), shr_lazy(w[1], offset));
  UOp mi = or_(shl_lazy(w[1], e), shr_lazy(w[2], offset));
  UOp lo = or_(shl_lazy(w[2], e), shr_lazy(w[3], offset));
  auto wide_mul = [](UOp x, UOp y) { return mul(cast(x, uint64), cast(y, uint64)); };
  UOp p = add(add(mul_pow2(wide_mul(ia, hi), 32), wide_mul(ia, mi)), floordiv_pow2(wide_mul(ia, lo), 32));
  UOp q = cast(floordiv_pow2(p, 62), int32);
  p = andi(p, 0x3fffffffffffffff);
  UOp r = to(mulf(cast(p, mid), 3.4061215800865545e-19), d.dtype());
  UOp small = ltf(f, 0.5);
  return {sel(small, r, addf(r, -1.5707963267948966)), sel(small, q, addi(q, 1))};
}

/// |d| <= 39800 reduced modulo pi/2 by subtracting q*pi/2 in several exact pieces.
constexpr std::pair<UOp, UOp> cody_waite_reduction(UOp d) {
  using enum DType;
  constexpr double m_1_pi = 0.318309886183790671537767526745028724;
  const DType f = d.dtype();
  // double: the quotient's high part (multiples of 2^24) is split off first
  UOp qdh = f == float64 ? mulf(cast(cast(mulf(d, m_1_pi / 16777216.0), int64), f), 16777216.0) : UOp();
  UOp quadrant = f == float64 ? rintk(sub(mulf(d, m_1_pi), qdh)) : rintk(mulf(d, m_1_pi));
  auto reduce = [&](auto& self_, UOp x, UOp q) -> UOp {
    if (x.dtype() == float64) {
      constexpr double pa = 3.1415926218032836914, pb = 3.1786509424591713469e-08, pc = 1.2246467864107188502e-16,
                       pd = 1.2736634327021899816e-24;
      UOp r = add(mulf(qdh, -pa), x);
      r = add(mulf(q, -pa), r);
      r = add(mulf(qdh, -pb), r);
      r = add(mulf(q, -pb), r);
      r = add(mulf(qdh, -pc), r);
      r = add(mulf(q, -pc), r);
      return add(mulf(add(qdh, q), -pd), r);
    }
    if (x.dtype() == float16) return cast(self_(self_, cast(x, float32), cast(q, float32)), float16);
    UOp r = add(mulf(q, -3.1414794921875), x);
    r = add(mulf(q, -0.00011315941810607910156), r);
    r = add(mulf(q, -1.9841872589410058936e-09), r);
    return add(mulf(q, -1.2154201256553420762e-10), r);
  };
  return {reduce(reduce, d, cast(quadrant, f)), cast(quadrant, int32)};
}

/// sin on [-pi/2, pi/2]: d * P(d^2).
constexpr UOp sin_poly(UOp d) {
  UOp d2 = mul(d, d);
  if (d.dtype() == DType::float64)
    return mul(d, poly(d2, {-7.97255955009037868891952e-18, 2.81009972710863200091251e-15, -7.64712219118158833288484e-13,
                            1.60590430605664501629054e-10, -2.50521083763502045810755e-08, 2.75573192239198747630416e-06,
                            -0.000198412698412696162806809, 0.00833333333333332974823815, -0.166666666666666657414808, 1.0}));
  return mul(d, poly(d2, {2.6083159809786593541503e-06, -0.0001981069071916863322258, 0.00833307858556509017944336,
                          -0.166666597127914428710938, 1.0}));
}
constexpr UOp bit_set(UOp q, int n) { return cne(andi(q, n), ic(q, 0)); }
constexpr UOp sin_poly_small(UOp d, UOp q) {
  UOp r = sin_poly(d);
  return mul(r, sel(bit_set(q, 1), fc(r, -1.0), fc(r, 1.0)));
}
constexpr UOp sin_poly_large(UOp d, UOp q) {
  UOp r = sin_poly(add(d, sel(bit_set(q, 1), fc(d, 1.5707963267948966), fc(d, 0.0))));
  return mul(r, sel(bit_set(q, 2), fc(r, -1.0), fc(r, 1.0)));
}
}  // namespace detail

/// sin(d) (about 1 ulp): Cody-Waite below |d| = switch_over, Payne-Hanek above; sin(+-inf) and
/// sin(NaN) are NaN.
constexpr UOp xsin(UOp d, bool fast = false, double switch_over = 30.0) {
  using namespace detail;
  if (!has_poly(d.dtype())) fail("transcendental: xsin needs a half, float or double operand");
  UOp x = map_special(d, fc(d, 0.0), fc(d, 0.0), fc(d, 0.0), d);
  UOp sign = sel(nef(x, 0.0), sel(ltf(x, 0.0), fc(x, -1.0), fc(x, 1.0)), fc(x, 0.0));
  UOp x_abs = mul(x, sign);
  UOp result;
  if (fast) {
    auto [r, q] = cody_waite_reduction(x_abs);
    result = sin_poly_small(r, q);
  } else {
    auto [r, q] = payne_hanek_reduction(x_abs);
    auto [rs, qs] = cody_waite_reduction(x_abs);
    result = sel(ltf(x_abs, switch_over), sin_poly_small(rs, qs), sin_poly_large(r, q));
  }
  result = mul(result, sign);
  return map_special(d, fc(d, nan), fc(d, nan), fc(d, nan), result);
}

/// 2^d (about 1 ulp): 2^round(d) times a polynomial on the fraction; overflow to inf, underflow to 0.
constexpr UOp xexp2(UOp d) {
  using enum DType;
  using namespace detail;
  if (!has_poly(d.dtype())) fail("transcendental: xexp2 needs a half, float or double operand");
  UOp x = map_special(d, fc(d, 0.0), fc(d, 0.0), fc(d, 0.0), d);
  UOp q = rintk(x);
  UOp s = sub(x, cast(q, x.dtype()));
  UOp u = d.dtype() == float64
              ? poly(s, {0.4434359082926529454e-9, 0.7073164598085707425e-8, 0.1017819260921760451e-6,
                         0.1321543872511327615e-5, 0.1525273353517584730e-4, 0.1540353045101147808e-3,
                         0.1333355814670499073e-2, 0.9618129107597600536e-2, 0.5550410866482046596e-1,
                         0.2402265069591012214e+0, 0.6931471805599452862e+0, 0.1000000000000000000e+1})
              : poly(s, {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476e+0,
                         0.6931471825e+0, 1.0});
  u = ldexp2k(u, q);
  const double upper = d.dtype() == float64 ? 1024 : d.dtype() == float32 ? 128 : 23;
  const double lower = d.dtype() == float64 ? -2000 : d.dtype() == float32 ? -150 : -22;
  u = sel(logical_not(ltf(d, upper)), fc(d, inf), u);
  u = sel(ltf(d, lower), fc(d, 0.0), u);
  return sel(cne(d, d), fc(d, nan), u);
}

/// log2(d) (about 1 ulp): exponent plus a series in (m-1)/(m+1) of the mantissa m; denormals are
/// scaled first; log2(inf) = inf, log2(+-0) = -inf, log2(<0) = log2(NaN) = NaN.
constexpr UOp xlog2(UOp d) {
  using enum Ops;
  using enum DType;
  using namespace detail;
  if (!has_poly(d.dtype())) fail("transcendental: xlog2 needs a half, float or double operand");
  const DType f = d.dtype();
  const int denormal_exp = f == float16 ? 10 : 64;
  UOp is_denormal = ltf(d, f == float16 ? 6.1e-5 : 1e-4);
  UOp a = sel(is_denormal, mulf(d, f == float16 ? 1024.0 : 18446744073709551616.0), d);
  UOp e = cast(ilogb2k(mulf(a, 1.0 / 0.75)), f);
  UOp m = ldexp3k(a, neg(e));
  e = sel(is_denormal, addf(e, -denormal_exp), e);
  UOp x = mul(addf(m, -1.0), a.arena().make(RECIPROCAL, f, {addf(m, 1.0)}));
  UOp x2 = mul(x, x);
  UOp r;
  if (f == float64) {
    UOp t = poly(x2, {0.2211941750456081490e+0, 0.2200768693152277689e+0, 0.2623708057488514656e+0, 0.3205977477944495502e+0,
                      0.4121985945485324709e+0, 0.5770780162997058982e+0, 0.96179669392608091449});
    r = add(add(mul(t, mul(x, x2)), e), mulf(x, 2.885390081777926774));
  } else {
    UOp t = poly(x2, {0.4374550283e+0, 0.5764790177e+0, 0.9618012905120});
    r = add(add(mul(t, mul(x, x2)), e), mulf(x, 2.8853900432586669922));
    if (f == float32) r = add(r, mulf(x, 3.2734474483568488616e-08));
  }
  r = sel(nef(d, inf), r, fc(r, inf));
  r = sel(nef(d, 0.0), r, fc(r, -inf));
  r = sel(ltf(d, -0.0), fc(r, nan), r);
  r = sel(cne(d, d), fc(r, nan), r);
  // log2(-0.0) = -inf, recognised through 1/d (some devices compare -0.0 == 0.0 loosely)
  return sel(nef(d.arena().make(RECIPROCAL, f, {d}), -inf), r, fc(r, -inf));
}

/// base ** exponent through exp2(exponent * log2|base|): NaN for a negative base with a non-integer
/// exponent, negated for an odd integer one, 0 ** 0 = 1.
constexpr UOp xpow(UOp base, UOp exponent) {
  using enum Ops;
  using enum DType;
  using namespace detail;
  Arena& ar = base.arena();
  const DType f = base.dtype();
  UOp abs_base = sel(ltf(base, 0.0), neg(base), base);
  UOp ret = ar.make(EXP2, f, {mul(ar.make(LOG2, f, {abs_base}), exponent)});
  UOp non_int = cne(exponent, cast(cast(exponent, int32), exponent.dtype()));
  UOp abs_exp = sel(ltf(exponent, 0.0), neg(exponent), exponent);
  UOp odd = cast(ar.make(FLOORMOD, int32, {cast(abs_exp, int32), const_(ar, int32, Arg(std::int64_t{2}))}),
                 bool_);
  UOp neg_base = sel(non_int, fc(ret, nan), sel(odd, neg(ret), ret));
  UOp zero_zero = ar.make(AND, bool_, {logical_not(nef(base, 0.0)), logical_not(nef(exponent, 0.0))});
  return sel(zero_zero, fc(ret, 1.0), sel(ltf(base, 0.0), neg_base, ret));
}

namespace detail {
inline constexpr auto td = pat::var<"d">;
inline constexpr pat::DTypeSet poly_dtypes{DType::float16, DType::float32, DType::float64};
inline constexpr pat::DTypeSet other_floats{DType::bfloat16, DType::fp8e4m3, DType::fp8e5m2, DType::fp8e4m3fnuz, DType::fp8e5m2fnuz};
constexpr bool decompose(const Target& t, Ops op) { return !t.supports_op(op) || t.transcendental >= 2; }
}  // namespace detail

/// EXP2/LOG2/SIN as polynomials, SQRT through xpow, when the target lacks the op or
/// `transcendental >= 2`; half/float/double directly, other float dtypes through float32.
inline constexpr auto pm_transcendental = [] {
  using namespace detail;
  using enum Ops;
  using enum DType;
  constexpr auto poly_op = pat::op<EXP2, LOG2, SIN>.dtypes<poly_dtypes>()(td);
  // the target lacks the op, or transcendental >= 2
  constexpr pat::predicate decomposed{[](const Target& t, auto& m) { return decompose(t, m.root().op()); }};
  constexpr auto other_op = pat::op<EXP2, LOG2, SIN>.dtypes<other_floats>()(td);
  return pat::rules(
      // (an operand of another dtype: pm_cast_float_alu has not run yet)
      pat::rewrite("transcendental polynomial", poly_op, [](auto& m) {
        const Ops op = m.root().op();
        return op == EXP2 ? xexp2(m[td]) : op == LOG2 ? xlog2(m[td]) : xsin(m[td]);
      }, decomposed && pat::root_dtype(td)),
      pat::rewrite("transcendental through float32", other_op, [](auto& m) {
        const UOp r = m.root(), in = cast(m[td], float32);
        return cast(m.arena().make(r.op(), float32, {in}), r.dtype());
      }, decomposed),
      pat::rewrite("sqrt -> xpow", pat::op<SQRT>(td), [](auto& m) { return xpow(m[td], const_(m.arena(), m[td].dtype(), Arg::floating(0.5))); },
                 decomposed && [](auto& m) { return is_float(m[td].dtype()); }));
}();

}  // namespace uopcg::codegen
