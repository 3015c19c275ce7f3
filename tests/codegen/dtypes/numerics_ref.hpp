// Shared by the dtypes tests: a small evaluator for value graphs (ints kept as their bits, floats as
// doubles holding a value of their dtype) and IEEE / OCP FP8 reference conversions written on bits
// and doubles, independently of the graphs under test.
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include <uopcg/core/graph.hpp>
#include <uopcg/core/print.hpp>

namespace dtypes_test {
using namespace uopcg;

// ------------------------------------------------------------------------------------------------
// reference conversions
// ------------------------------------------------------------------------------------------------
enum class Kind { ieee, e4m3fn, fnuz };
struct Fmt {
  int bits, e, m, bias;
  Kind kind = Kind::ieee;
};
inline constexpr Fmt F32{32, 8, 23, 127}, HALF{16, 5, 10, 15}, BF16{16, 8, 7, 127}, E4M3{8, 4, 3, 7, Kind::e4m3fn},
    E5M2{8, 5, 2, 15}, E4M3FNUZ{8, 4, 3, 8, Kind::fnuz}, E5M2FNUZ{8, 5, 2, 16, Kind::fnuz};

struct Decoded {
  bool nan = false, neg = false;
  double v = 0;            // magnitude (infinity for an infinity)
  std::uint64_t man = 0;   // the mantissa field (a NaN's payload)
};
inline Decoded decode(std::uint64_t b, Fmt f) {
  Decoded d;
  const std::uint64_t sign = std::uint64_t(1) << (f.bits - 1), mag = b & (sign - 1);
  const std::uint64_t exp = mag >> f.m, man = mag & ((std::uint64_t(1) << f.m) - 1), emax = (std::uint64_t(1) << f.e) - 1;
  d.neg = (b & sign) != 0;
  d.man = man;
  if (f.kind == Kind::fnuz && b == sign) d.nan = true, d.neg = false;  // fnuz's one NaN: read as +NaN
  if (f.kind == Kind::e4m3fn && mag == sign - 1) d.nan = true;
  if (f.kind == Kind::ieee && exp == emax) {
    if (man != 0) d.nan = true;
    else d.v = INFINITY;
    return d;
  }
  d.v = exp == 0 ? std::ldexp(double(man), 1 - f.bias - f.m)
                 : std::ldexp(double(man + (std::uint64_t(1) << f.m)), int(exp) - f.bias - f.m);
  return d;
}
inline double max_finite(Fmt f) {
  const int emax = (1 << f.e) - 1;
  if (f.kind == Kind::ieee) return std::ldexp(2.0 - std::ldexp(1.0, -f.m), emax - 1 - f.bias);
  if (f.kind == Kind::e4m3fn) return std::ldexp(2.0 - std::ldexp(2.0, -f.m), emax - f.bias);
  return std::ldexp(2.0 - std::ldexp(1.0, -f.m), emax - f.bias);
}
/// A NaN of format t with sign `neg` and the payload `man` of a format with `fm` mantissa bits.
inline std::uint64_t nan_bits(bool neg, std::uint64_t man, int fm, Fmt t) {
  const std::uint64_t sign = std::uint64_t(1) << (t.bits - 1);
  if (t.kind == Kind::fnuz) return sign;
  const std::uint64_t s = neg ? sign : 0;
  if (t.kind == Kind::e4m3fn) return s | (sign - 1);
  const std::uint64_t texp = ((std::uint64_t(1) << t.e) - 1) << t.m, quiet = std::uint64_t(1) << (t.m - 1);
  return s | texp | quiet | (fm >= t.m ? man >> (fm - t.m) : man << (t.m - fm));
}
/// |a| (finite or infinity) with sign `neg` rounded to nearest even into t. Beyond the largest finite
/// value: IEEE -> infinity; fp8 with `sat` -> the largest finite value; without: e4m3fn and fnuz ->
/// NaN, e5m2 -> infinity.
inline std::uint64_t encode(bool neg, double a, Fmt t, bool sat) {
  const std::uint64_t sign = std::uint64_t(1) << (t.bits - 1), s = neg ? sign : 0;
  const std::uint64_t one = std::uint64_t(1) << t.m;
  auto overflow = [&]() -> std::uint64_t {
    const double mx = max_finite(t);
    if (sat && t.bits == 8) return encode(neg, mx, t, false);
    if (t.kind == Kind::fnuz) return sign;
    if (t.kind == Kind::e4m3fn) return s | (sign - 1);
    return s | (((std::uint64_t(1) << t.e) - 1) << t.m);
  };
  if (std::isinf(a)) return overflow();
  if (a == 0) return t.kind == Kind::fnuz ? 0 : s;
  int e = std::max(std::ilogb(a), 1 - t.bias);
  double q = std::nearbyint(std::ldexp(a, t.m - e));
  if (q >= double(2 * one)) q /= 2, ++e;
  if (std::ldexp(q, e - t.m) > max_finite(t)) return overflow();
  const std::uint64_t qi = static_cast<std::uint64_t>(q);
  const std::uint64_t mag = qi >= one ? (std::uint64_t(e + t.bias) << t.m) | (qi - one) : qi;
  if (t.kind == Kind::fnuz && mag == 0) return 0;
  return s | mag;
}
/// Bits b of format f converted to format t (IEEE / OCP; `sat` for fp8 targets).
inline std::uint64_t convert(std::uint64_t b, Fmt f, Fmt t, bool sat = true) {
  const Decoded d = decode(b, f);
  if (d.nan) return nan_bits(d.neg, d.man, f.m, t);
  return encode(d.neg, d.v, t, sat);
}
inline bool same(Fmt a, Fmt b) { return a.bits == b.bits && a.e == b.e && a.m == b.m && a.bias == b.bias && a.kind == b.kind; }

/// >= 540k float bit patterns spread over all of them, plus the boundaries of format t: every
/// rounding tie between neighbouring values of t (and the float on each side), the smallest
/// float subnormals, infinities and NaNs with payloads in every bit.
inline std::vector<std::uint32_t> float_samples(Fmt t) {
  std::vector<std::uint32_t> v;
  for (std::uint64_t b = 0; b < (std::uint64_t(1) << 32); b += 7919) v.push_back(static_cast<std::uint32_t>(b));
  for (std::uint32_t b : {0u, 1u, 2u, 3u, 0x007fffffu, 0x00800000u, 0x00800001u, 0x7f7fffffu, 0x7f800000u, 0x7fc00000u,
                          0x7fffffffu, 0x3f800000u, 0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477fffffu, 0x47800000u})
    for (std::uint32_t s : {0u, 0x80000000u}) v.push_back(b | s);
  for (int k = 0; k < 23; ++k)
    for (std::uint32_t s : {0u, 0x80000000u}) {
      v.push_back(s | 0x7f800000u | (1u << k));
      v.push_back(s | 0x7f800000u | ((1u << k) - 1 + (k == 0)));
    }
  const std::uint64_t n = std::uint64_t(1) << (t.bits - 1);
  for (std::uint64_t p = 0; p + 1 < n; ++p) {
    const Decoded a = decode(p, t), b = decode(p + 1, t);
    if (a.nan || b.nan || std::isinf(b.v)) continue;
    const float mid = static_cast<float>((a.v + b.v) / 2);
    for (float x : {mid})
      for (std::uint32_t s : {0u, 0x80000000u}) {
        const std::uint32_t bits = std::bit_cast<std::uint32_t>(x) | s;
        v.push_back(bits);
        v.push_back(bits + 1);
        v.push_back(bits - 1);
      }
  }
  const float mx = static_cast<float>(max_finite(t));  // max .. max + 2 ulps of t (the overflow threshold)
  for (int k = -4; k <= 40; ++k) v.push_back(std::bit_cast<std::uint32_t>(mx) + static_cast<std::uint32_t>(k) * 0x1000u);
  return v;
}

// ------------------------------------------------------------------------------------------------
// the evaluator
// ------------------------------------------------------------------------------------------------
struct Val {
  DType dt = DType::void_;
  std::uint64_t u = 0;  // int/bool bits; for floats their exact bits
  double f = 0;         // float16/32/64 value
};
inline bool is_fl(DType dt) { return dt == DType::float16 || dt == DType::float32 || dt == DType::float64; }
inline std::uint64_t wrap(DType dt, std::uint64_t v) {
  const int b = bitsize(dt);
  if (dt == DType::bool_) return v != 0;
  if (b >= 64) return v;
  return v & ((std::uint64_t(1) << b) - 1);
}
inline std::int64_t as_signed(DType dt, std::uint64_t v) {
  const int b = bitsize(dt);
  if (b >= 64 || !is_signed_int(dt)) return static_cast<std::int64_t>(v);
  const std::uint64_t sign = std::uint64_t(1) << (b - 1);
  return static_cast<std::int64_t>((v ^ sign) - sign);
}
inline Val mk_int(DType dt, std::uint64_t v) { return Val{dt, wrap(dt, v), 0}; }
/// A float value rounded to dt (float16 through the reference encoder, ties to even).
inline Val mk_f(DType dt, double v) {
  if (dt == DType::float64) return Val{dt, std::bit_cast<std::uint64_t>(v), v};
  if (dt == DType::float32) {
    const float f = static_cast<float>(v);
    return Val{dt, std::bit_cast<std::uint32_t>(f), double(f)};
  }
  const std::uint64_t b = std::isnan(v) ? 0x7e00u : encode(std::signbit(v), std::fabs(v), HALF, false);
  return Val{dt, b, std::isnan(v) ? v : (std::signbit(v) ? -1.0 : 1.0) * decode(b, HALF).v};
}
inline Val from_bits(DType dt, std::uint64_t bits) {
  if (dt == DType::float32) return Val{dt, bits & 0xffffffffu, double(std::bit_cast<float>(static_cast<std::uint32_t>(bits)))};
  if (dt == DType::float64) return Val{dt, bits, std::bit_cast<double>(bits)};
  if (dt == DType::float16) {
    const Decoded d = decode(bits & 0xffff, HALF);
    return Val{dt, bits & 0xffff, d.nan ? NAN : d.neg ? -d.v : d.v};
  }
  return mk_int(dt, bits);  // ints and emulated floats (their bits)
}

/// Evaluates the graph of one root for many inputs. The leaves given to the constructor (ALU
/// PARAMs, LOADs: anything) get their values through set(); the graph is not followed below them.
struct Evaluator {
  std::vector<UOp> order;
  std::vector<std::vector<std::size_t>> srcpos;
  std::unordered_map<std::uint32_t, std::size_t> pos;
  std::vector<Val> vals;
  std::vector<char> fixed;  // inputs and constants: not recomputed

  Evaluator(UOp root, const std::vector<UOp>& leaves) {
    std::unordered_map<std::uint32_t, bool> seen, is_leaf;
    for (UOp l : leaves) is_leaf[l.id()] = true;
    std::vector<std::pair<UOp, bool>> st{{root, false}};
    while (!st.empty()) {
      auto [u, done] = st.back();
      st.pop_back();
      if (done) {
        pos[u.id()] = order.size();
        order.push_back(u);
        continue;
      }
      if (seen[u.id()]) continue;
      seen[u.id()] = true;
      st.push_back({u, true});
      if (!is_leaf.count(u.id()))
        for (UOp s : u.srcs())
          if (!seen[s.id()]) st.push_back({s, false});
    }
    for (UOp u : order) {
      std::vector<std::size_t> sp;
      if (!is_leaf.count(u.id()))
        for (UOp s : u.srcs()) sp.push_back(pos.at(s.id()));
      srcpos.push_back(sp);
    }
    vals.resize(order.size());
    fixed.assign(order.size(), 0);
    for (std::size_t i = 0; i < order.size(); ++i)
      if (is_leaf.count(order[i].id())) fixed[i] = 1;
      else if (order[i].op() == Ops::CONST || order[i].op() == Ops::PARAM) vals[i] = compute(i), fixed[i] = 1;
  }
  explicit Evaluator(UOp root) : Evaluator(root, {}) {}
  void set(UOp leaf, Val v) {
    auto it = pos.find(leaf.id());
    if (it != pos.end()) vals[it->second] = v;
  }
  Val run() {
    for (std::size_t i = 0; i < order.size(); ++i)
      if (!fixed[i]) vals[i] = compute(i);
    return vals.back();
  }

  static bool lt(const Val& a, const Val& b) {
    if (is_fl(a.dt)) return a.f < b.f;
    if (is_signed_int(a.dt)) return as_signed(a.dt, a.u) < as_signed(b.dt, b.u);
    return a.u < b.u;
  }
  static bool neq(const Val& a, const Val& b) { return is_fl(a.dt) ? a.f != b.f : a.u != b.u; }

  Val compute(std::size_t k) {
    const UOp u = order[k];
    const DType dt = u.dtype();
    auto s = [&](std::size_t i) -> const Val& { return vals[srcpos[k][i]]; };
    switch (u.op()) {
      case Ops::PARAM: return Val{dt, 0, 0};  // an unset leaf
      case Ops::CONST: {
        const Arg& a = u.arg();
        if (is_fl(dt)) return mk_f(dt, a.as_float());
        if (a.is_bool()) return mk_int(dt, a.as_bool());
        if (a.kind() == ArgKind::uint_) return mk_int(dt, a.as_uint());
        if (a.is_float()) return mk_int(dt, static_cast<std::uint64_t>(static_cast<std::int64_t>(a.as_float())));
        return mk_int(dt, static_cast<std::uint64_t>(a.as_int()));
      }
      case Ops::CAST: {
        const Val& x = s(0);
        if (is_fl(dt)) return mk_f(dt, is_fl(x.dt) ? x.f : is_signed_int(x.dt) ? double(as_signed(x.dt, x.u)) : double(x.u));
        if (dt == DType::bool_) return mk_int(dt, is_fl(x.dt) ? x.f != 0 : x.u != 0);
        if (is_fl(x.dt)) return mk_int(dt, static_cast<std::uint64_t>(static_cast<std::int64_t>(x.f)));
        return mk_int(dt, is_signed_int(x.dt) ? static_cast<std::uint64_t>(as_signed(x.dt, x.u)) : x.u);
      }
      case Ops::BITCAST: return from_bits(dt, s(0).u);
      case Ops::WHERE: return s(0).u ? s(1) : s(2);
      case Ops::CMPNE: return mk_int(dt, neq(s(0), s(1)));
      case Ops::CMPEQ: return mk_int(dt, !neq(s(0), s(1)));
      case Ops::CMPLT: return mk_int(dt, lt(s(0), s(1)));
      case Ops::NEG: return is_fl(dt) ? mk_f(dt, -s(0).f) : mk_int(dt, ~s(0).u + 1);
      case Ops::TRUNC: return mk_f(dt, std::trunc(s(0).f));
      case Ops::RECIPROCAL: return mk_f(dt, 1.0 / s(0).f);
      default: break;
    }
    if (u.nsrc() != 2) {
      FAIL("evaluator: unsupported node " << to_string(u));
      return {};
    }
    const Val &a = s(0), &b = s(1);
    if (is_fl(dt)) {
      switch (u.op()) {
        case Ops::ADD: return mk_f(dt, a.f + b.f);
        case Ops::SUB: return mk_f(dt, a.f - b.f);
        case Ops::MUL: return mk_f(dt, a.f * b.f);
        default: FAIL("evaluator: unsupported float node " << to_string(u)); return {};
      }
    }
    const bool sg = is_signed_int(dt);
    const std::int64_t sa = as_signed(a.dt, a.u), sb = as_signed(b.dt, b.u);
    switch (u.op()) {
      case Ops::ADD: return mk_int(dt, a.u + b.u);
      case Ops::SUB: return mk_int(dt, a.u - b.u);
      case Ops::MUL: return mk_int(dt, a.u * b.u);
      case Ops::AND: return mk_int(dt, a.u & b.u);
      case Ops::OR: return mk_int(dt, a.u | b.u);
      case Ops::XOR: return mk_int(dt, a.u ^ b.u);
      case Ops::SHL: return mk_int(dt, b.u >= 64 ? 0 : a.u << b.u);
      case Ops::SHR: return mk_int(dt, sg ? static_cast<std::uint64_t>(sa >> b.u) : a.u >> b.u);
      case Ops::CDIV: return mk_int(dt, sg ? static_cast<std::uint64_t>(sa / sb) : a.u / b.u);
      case Ops::CMOD: return mk_int(dt, sg ? static_cast<std::uint64_t>(sa % sb) : a.u % b.u);
      case Ops::FLOORDIV:
        if (!sg) return mk_int(dt, a.u / b.u);
        return mk_int(dt, static_cast<std::uint64_t>(sa / sb - ((sa % sb != 0) && ((sa < 0) != (sb < 0)))));
      default: FAIL("evaluator: unsupported int node " << to_string(u)); return {};
    }
  }
};

}  // namespace dtypes_test
