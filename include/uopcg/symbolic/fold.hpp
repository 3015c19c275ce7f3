// Concrete evaluation of every ALU op on constant values with OpenCL C semantics, per dtype: the
// ground truth of constant folding and of the rule tester.
//
//  - integers of a concrete width wrap (two's complement); weakint is exact (the unbounded index
//    type) and a value outside +-2^62 is `unknown` (not modelled);
//  - CDIV/CMOD truncate (C), FLOORDIV/FLOORMOD floor (Python); a zero divisor, INT_MIN / -1 and a
//    float -> int conversion out of range are `undefined` (C undefined behaviour);
//  - shift counts are taken modulo the bit width (OpenCL C 6.3.j); SHR of a signed value is
//    arithmetic;
//  - floats are IEEE with round-to-nearest-even after every op at the node's dtype (half and
//    bfloat16 rounded in software, so everything here is constexpr); MAX is `(a<b) ? b : a`, the
//    form it is rendered in; transcendental ops are `unknown` during constant evaluation;
//  - Invalid is poison: an ALU op with an Invalid operand is Invalid (WHERE: only the chosen arm
//    and the condition matter).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "../core/arena.hpp"
#include "../core/builder.hpp"

namespace uopcg::symbolic {

using i128 = __int128;

/// What a value is: a number, the Invalid poison, C undefined behaviour, or outside what is modelled.
enum class vkind : std::uint8_t { num, invalid, undefined, unknown };

/// A concrete value of some dtype: integers and bools in `i` (already wrapped to the dtype), floats
/// in `f` (already rounded to the dtype).
struct value {
  vkind kind = vkind::unknown;
  bool is_float = false;
  i128 i = 0;
  double f = 0;

  constexpr bool is_num() const { return kind == vkind::num; }
  static constexpr value integer(i128 v) { return value{vkind::num, false, v, 0}; }
  static constexpr value floating(double v) { return value{vkind::num, true, 0, v}; }
  static constexpr value invalid() { return value{vkind::invalid, false, 0, 0}; }
  static constexpr value undefined() { return value{vkind::undefined, false, 0, 0}; }
  static constexpr value unknown() { return value{vkind::unknown, false, 0, 0}; }
  /// Same value: NaN equals NaN, -0.0 equals 0.0; kinds must agree.
  friend constexpr bool same(const value& a, const value& b) {
    if (a.kind != b.kind) return false;
    if (a.kind != vkind::num) return true;
    if (a.is_float != b.is_float) return false;
    if (!a.is_float) return a.i == b.i;
    if (a.f != a.f) return b.f != b.f;
    return a.f == b.f;
  }
};

inline constexpr i128 weak_limit = static_cast<i128>(1) << 62;

/// Two's-complement wrap of v to the width of an integer dtype (bool: v != 0; weakint: exact).
constexpr i128 wrap_int(DType dt, i128 v) {
  using enum DType;
  if (dt == bool_) return v != 0;
  if (dt == weakint) return v;
  const int bits = bitsize(dt);
  if (bits >= 128) return v;
  using u128 = unsigned __int128;
  const u128 mask = (static_cast<u128>(1) << bits) - 1;
  u128 u = static_cast<u128>(v) & mask;
  if (!is_unsigned(dt) && ((u >> (bits - 1)) & 1)) return static_cast<i128>(u) - (static_cast<i128>(1) << bits);
  return static_cast<i128>(u);
}

namespace detail {
constexpr double pow2(int e) {
  double r = 1;
  if (e >= 0)
    for (int k = 0; k < e; ++k) r *= 2;
  else
    for (int k = 0; k < -e; ++k) r /= 2;
  return r;
}
constexpr double floor_nonneg(double r) {  // r < 2^63
  return static_cast<double>(static_cast<std::uint64_t>(r));
}
/// Rounds a double to the nearest value (ties to even) of a binary format with `mant` stored
/// mantissa bits and `expo` exponent bits (subnormals, overflow to infinity).
constexpr double round_ieee(double v, int mant, int expo) {
  if (v != v || v == 0 || v - v != 0) return v;  // NaN, zero, inf
  const bool neg = v < 0;
  double a = neg ? -v : v;
  const int emax = (1 << (expo - 1)) - 1, emin = 1 - emax;
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(a);
  int e = static_cast<int>((bits >> 52) & 0x7FF) - 1023;
  if (e < -1022) e = -1022;  // double subnormal: far below every small format anyway
  const int qe = (e < emin ? emin : e) - mant;
  const double q = pow2(qe);
  const double r = a / q;  // exact: scaling by a power of two
  if (r >= 9.0e18) return v;  // far above the format's range: unchanged (then overflow below)
  double fl = floor_nonneg(r);
  const double diff = r - fl;
  if (diff > 0.5 || (diff == 0.5 && static_cast<std::uint64_t>(fl) % 2 == 1)) fl += 1;
  double res = fl * q;
  const double max_finite = (2 - pow2(-mant)) * pow2(emax);
  if (res > max_finite) res = __builtin_huge_val();
  return neg ? -res : res;
}
constexpr double trunc_double(double f) {
  if (f != f || f - f != 0) return f;
  double a = f < 0 ? -f : f;
  if (a >= 4503599627370496.0) return f;
  double t = static_cast<double>(static_cast<std::int64_t>(a));
  return f < 0 ? -t : t;
}
constexpr double floor_double(double f) {
  double t = trunc_double(f);
  return (t > f) ? t - 1 : t;
}
}  // namespace detail

/// Whether the evaluator models this dtype (fp8 and the internal 128/256-bit ints are not).
constexpr bool evaluable_dtype(DType dt) {
  using enum DType;
  switch (dt) {
    case fp8e4m3: case fp8e5m2: case fp8e4m3fnuz: case fp8e5m2fnuz:
    case uint128: case uint256: case void_:
      return false;
    default:
      return true;
  }
}

/// A float rounded to a float dtype.
constexpr double round_float(DType dt, double v) {
  using enum DType;
  switch (dt) {
    case float32: return static_cast<double>(static_cast<float>(v));
    case float16: return detail::round_ieee(v, 10, 5);
    case bfloat16: return detail::round_ieee(v, 7, 8);
    default: return v;  // float64, weakfloat
  }
}

/// a*b modulo 2^128 (uint64 operands overflow a signed __int128 product; the result is wrapped to the
/// dtype's width afterwards, which the modular product leaves exact).
constexpr i128 wrapping_mul(i128 a, i128 b) {
  using u128 = unsigned __int128;
  return static_cast<i128>(static_cast<u128>(a) * static_cast<u128>(b));
}

/// A number of dtype dt from an integer (wrapped) or a double (rounded).
constexpr value make_int(DType dt, i128 v) {
  if (dt == DType::weakint && (v >= weak_limit || v <= -weak_limit)) return value::unknown();
  return value::integer(wrap_int(dt, v));
}
constexpr value make_float(DType dt, double v) { return value::floating(round_float(dt, v)); }

/// Converts a value to dtype `to` (CAST semantics).
constexpr value convert(const value& v, DType to) {
  using enum DType;
  if (!v.is_num()) return v;
  if (!evaluable_dtype(to)) return value::unknown();
  if (is_bool(to)) return value::integer(v.is_float ? (v.f != 0) : (v.i != 0));
  if (is_int(to)) {
    if (!v.is_float) return make_int(to, v.i);
    double t = detail::trunc_double(v.f);
    if (t != t || t - t != 0) return value::undefined();
    if (to == weakint) {
      if (t >= 4.0e18 || t <= -4.0e18) return value::unknown();
      return make_int(to, static_cast<i128>(static_cast<std::int64_t>(t)));
    }
    // C: out-of-range float -> int conversion is undefined
    const double lo = static_cast<double>(int_min(to)), hi = static_cast<double>(int_max_u(to));
    if (t < lo || t > hi) return value::undefined();
    if (t >= 9.2e18) return value::integer(static_cast<i128>(static_cast<std::uint64_t>(t)));
    return value::integer(static_cast<i128>(static_cast<std::int64_t>(t)));
  }
  // to a float
  if (v.is_float) return make_float(to, v.f);
  if (to == float32) return value::floating(static_cast<double>(static_cast<float>(v.i)));
  return make_float(to, static_cast<double>(v.i));
}

/// The value of a CONST's arg as dtype dt.
constexpr value from_arg(const Arg& a, DType dt) {
  if (a.is_invalid()) return value::invalid();
  if (!evaluable_dtype(dt)) return value::unknown();
  if (a.is_bool()) return convert(value::integer(a.as_bool() ? 1 : 0), dt);
  if (a.kind() == ArgKind::uint_) return convert(value::integer(static_cast<i128>(a.as_uint())), dt);
  if (a.kind() == ArgKind::int_) return convert(value::integer(a.as_int()), dt);
  if (a.is_float()) return convert(value::floating(a.as_float()), dt);
  return value::unknown();
}

/// The CONST arg for a value of dtype dt; nullopt when it has none (Invalid, undefined, too wide).
constexpr std::optional<Arg> to_arg(const value& v, DType dt) {
  if (v.kind == vkind::invalid) return Arg::invalid();
  if (!v.is_num()) return std::nullopt;
  if (is_bool(dt)) return Arg::boolean(v.is_float ? v.f != 0 : v.i != 0);
  if (is_float(dt)) return Arg::floating(v.is_float ? v.f : static_cast<double>(v.i));
  if (v.is_float) return std::nullopt;
  if (v.i >= 0 && v.i <= static_cast<i128>(UINT64_MAX)) return Arg::uinteger(static_cast<std::uint64_t>(v.i));
  if (v.i < 0 && v.i >= static_cast<i128>(INT64_MIN)) return Arg::integer(static_cast<std::int64_t>(v.i));
  return std::nullopt;
}

/// The dtype an op computes in: comparisons in the operands' common dtype, SHL/SHR in src 0's,
/// everything else in the node's.
constexpr DType compute_dtype(Ops op, DType node_dt, std::span<const DType> in_dt) {
  if (GroupOp::Comparison.contains(op)) {
    DType d = DType::void_;
    for (DType s : in_dt) d = d == DType::void_ ? s : least_upper_dtype(d, s);
    return d;
  }
  return node_dt;
}

namespace detail {
constexpr bool transcendental(Ops op) {
  using enum Ops;
  return op == SQRT || op == EXP2 || op == LOG2 || op == SIN || op == POW;
}
constexpr value float_math(Ops op, DType dt, double a, double b) {
  using enum Ops;
  if (std::is_constant_evaluated()) return value::unknown();
  switch (op) {
    case SQRT: return make_float(dt, std::sqrt(a));
    case EXP2: return make_float(dt, std::exp2(a));
    case LOG2: return make_float(dt, std::log2(a));
    case SIN: return make_float(dt, std::sin(a));
    case POW: return make_float(dt, std::pow(a, b));
    default: return value::unknown();
  }
}
constexpr i128 floor_div(i128 a, i128 b) {
  i128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
constexpr i128 floor_mod(i128 a, i128 b) { return a - floor_div(a, b) * b; }
}  // namespace detail

/// Evaluates `op` producing dtype `dt` on operands `in` of dtypes `in_dt`.
constexpr value eval_alu(Ops op, DType dt, std::span<const value> in, std::span<const DType> in_dt) {
  using enum Ops;
  using enum DType;
  if (op == WHERE) {
    if (in.size() != 3) return value::unknown();
    const value& c = in[0];
    if (c.kind != vkind::num) return c;
    bool t = c.is_float ? c.f != 0 : c.i != 0;
    return convert(t ? in[1] : in[2], dt);
  }
  for (const value& v : in)
    if (v.kind == vkind::invalid) return v;
  for (const value& v : in)
    if (v.kind == vkind::undefined) return v;
  for (const value& v : in)
    if (v.kind == vkind::unknown) return v;
  if (!evaluable_dtype(dt)) return value::unknown();
  const DType cd = compute_dtype(op, dt, in_dt);
  if (!evaluable_dtype(cd)) return value::unknown();
  value ops[3];
  const std::size_t n = in.size() < 3 ? in.size() : 3;
  for (std::size_t k = 0; k < n; ++k) {
    // a shift count keeps its own dtype
    DType t = ((op == SHL || op == SHR) && k == 1) ? in_dt[k] : cd;
    ops[k] = convert(in[k], t);
    if (!ops[k].is_num()) return ops[k];
  }
  const value& a = ops[0];
  const value& b = ops[1];
  const bool fl = is_float(cd);
  auto need = [&](std::size_t k) { return n >= k; };
  if (GroupOp::Unary.contains(op)) {
    if (!need(1)) return value::unknown();
    switch (op) {
      case NEG: return fl ? make_float(cd, -a.f) : make_int(cd, -a.i);
      case TRUNC: return fl ? make_float(cd, detail::trunc_double(a.f)) : a;
      case RECIPROCAL: return fl ? make_float(cd, 1.0 / a.f) : value::unknown();
      default: return fl ? detail::float_math(op, cd, a.f, 0) : value::unknown();
    }
  }
  if (op == MULACC) {
    if (!need(3)) return value::unknown();
    const value& c = ops[2];
    if (fl) return make_float(cd, round_float(cd, a.f * b.f) + c.f);
    value p = make_int(cd, wrapping_mul(a.i, b.i));
    if (!p.is_num()) return p;
    return make_int(cd, p.i + c.i);
  }
  if (!need(2)) return value::unknown();
  switch (op) {
    case CMPLT: return value::integer(fl ? a.f < b.f : a.i < b.i);
    case CMPNE: return value::integer(fl ? a.f != b.f : a.i != b.i);
    case CMPEQ: return value::integer(fl ? a.f == b.f : a.i == b.i);
    default: break;
  }
  if (fl) {
    switch (op) {
      case ADD: return make_float(cd, a.f + b.f);
      case SUB: return make_float(cd, a.f - b.f);
      case MUL: return make_float(cd, a.f * b.f);
      case FDIV: return make_float(cd, a.f / b.f);
      case MAX: return (a.f < b.f) ? b : a;
      case POW: return detail::float_math(op, cd, a.f, b.f);
      case FLOORDIV:
        if (b.f == 0) return value::undefined();
        return make_float(cd, detail::floor_double(a.f / b.f));
      default: return value::unknown();
    }
  }
  const bool weak = cd == weakint;
  if (weak && (a.i >= weak_limit || a.i <= -weak_limit || b.i >= weak_limit || b.i <= -weak_limit))
    return value::unknown();
  const bool signed_strong = !weak && !is_unsigned(cd) && !is_bool(cd);
  const i128 smin = static_cast<i128>(int_min(cd));
  switch (op) {
    case ADD: return make_int(cd, a.i + b.i);
    case SUB: return make_int(cd, a.i - b.i);
    case MUL: return make_int(cd, wrapping_mul(a.i, b.i));
    case MAX: return a.i < b.i ? b : a;
    case POW: {
      // an integer power (a MUL reduce over a range its value does not use): wrapping products,
      // by squaring; a negative exponent has no integer value
      if (b.i < 0) return value::unknown();
      value r = make_int(cd, 1), base = a;
      for (i128 e = b.i; e > 0; e >>= 1) {
        if (e & 1) r = make_int(cd, wrapping_mul(r.i, base.i));
        if (e > 1) base = make_int(cd, wrapping_mul(base.i, base.i));
        if (!r.is_num() || !base.is_num()) return value::unknown();  // beyond weakint's range
      }
      return r;
    }
    case AND: return make_int(cd, a.i & b.i);
    case OR: return make_int(cd, a.i | b.i);
    case XOR: return make_int(cd, a.i ^ b.i);
    case CDIV: case CMOD: case FLOORDIV: case FLOORMOD: {
      if (b.i == 0) return value::undefined();
      if (signed_strong && a.i == smin && b.i == -1) return value::undefined();
      if (op == CDIV) return make_int(cd, a.i / b.i);
      if (op == CMOD) return make_int(cd, a.i % b.i);
      if (op == FLOORDIV) return make_int(cd, detail::floor_div(a.i, b.i));
      return make_int(cd, detail::floor_mod(a.i, b.i));
    }
    case SHL: case SHR: {
      i128 k = b.i;
      if (weak) {
        if (k < 0 || k > 62) return value::unknown();
      } else {
        const int bits = bitsize(cd);
        k = ((k % bits) + bits) % bits;
      }
      if (op == SHR) return make_int(cd, a.i >> static_cast<int>(k));
      using u128 = unsigned __int128;
      return make_int(cd, static_cast<i128>(static_cast<u128>(a.i) << static_cast<int>(k)));
    }
    default: return value::unknown();
  }
}

/// BITCAST of a number to a dtype of the same size (nullopt when sizes differ or unsupported).
constexpr value bitcast_value(const value& v, DType from, DType to) {
  using enum DType;
  if (!v.is_num()) return v;
  if (!evaluable_dtype(from) || !evaluable_dtype(to) || is_weak(from) || is_weak(to) || itemsize(from) != itemsize(to))
    return value::unknown();
  std::uint64_t bits = 0;
  if (v.is_float && v.f != v.f) return value::unknown();  // NaN payloads are not modelled
  if (is_float(from)) {
    if (from == float64) bits = std::bit_cast<std::uint64_t>(v.f);
    else if (from == float32) bits = std::bit_cast<std::uint32_t>(static_cast<float>(v.f));
    else return value::unknown();  // half / bfloat16 bit patterns: not modelled
  } else {
    bits = static_cast<std::uint64_t>(v.i);
  }
  if (is_float(to)) {
    if (to == float64) return value::floating(std::bit_cast<double>(bits));
    if (to == float32) return value::floating(static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits))));
    return value::unknown();
  }
  return value::integer(wrap_int(to, static_cast<i128>(bits)));
}

/// Constant folding of one node whose sources are CONSTs: the folded CONST, or nullopt.
constexpr std::optional<UOp> fold_node(UOp u) {
  using enum Ops;
  const DType dt = u.dtype();
  if (u.nsrc() == 0 || u.nsrc() > 3) return std::nullopt;
  value in[3];
  DType in_dt[3]{};
  for (std::size_t k = 0; k < u.nsrc(); ++k) {
    UOp s = u.src(k);
    if (s.op() != CONST || s.shape().size() != 0) return std::nullopt;
    in[k] = from_arg(s.arg(), s.dtype());
    in_dt[k] = s.dtype();
  }
  value r;
  if (u.op() == CAST && is_weak(dt)) return std::nullopt;  // CAST(weak, CONST) is a lowered literal
  if (u.op() == CAST) r = convert(in[0], dt);
  else if (u.op() == BITCAST) r = bitcast_value(in[0], in_dt[0], dt);
  else r = eval_alu(u.op(), dt, std::span<const value>(in, u.nsrc()), std::span<const DType>(in_dt, u.nsrc()));
  // Invalid folds only through ops that propagate it; undefined / unknown values are not folded
  if (r.kind != vkind::num && r.kind != vkind::invalid) return std::nullopt;
  auto arg = to_arg(r, dt);
  if (!arg) return std::nullopt;
  if (arg->is_invalid()) return invalid(u.arena());
  return const_(u.arena(), dt, *arg);
}

}  // namespace uopcg::symbolic
