// Stage 16, int64 emulation (tinygrad/codegen/decomp/dtype.py, pm_long_decomp): a target without
// 64-bit integers (EMULATED_DTYPES=long) holds every long and ulong as two 32-bit words.
//
// Memory: a long buffer (PARAM, or a REG/LOCAL BUFFER) becomes an int (ulong: uint) buffer of twice
// the size, element i at words 2i (low) and 2i+1 (high), so its bytes are the long buffer's on a
// little-endian device and the host sees no difference. A LOAD or STORE becomes one per word.
// Values: each long value is a pair of uint32 words computed from its sources' words -- add and
// subtract with a carry, multiply from 16-bit halves, shifts with the count taken mod 64 (OpenCL's
// rule), compares on the high word then the unsigned low word, division and remainder by a
// restoring long division (or, by a constant below 2^16, four native 32-bit divisions), conversions
// to and from floats exactly rounded (a long to float goes through a normalised 32-bit value with a
// sticky bit, so it rounds once, as OpenCL's conversion does), bitcasts to and from double through
// the double's value (exact, save a NaN's payload). An index computed in long (an address product
// beyond int32) addresses with its low word: a valid index is below the buffer's size.
//
// tinygrad leaves long nodes that reach no store, compare or cast (index math) native, and computes a
// long-to-float conversion from two rounded halves; docs/DIVERGENCES.md, P13, says where uopcg differs.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../core/builder.hpp"
#include "../core/error.hpp"
#include "../core/graph.hpp"
#include "../core/print.hpp"
#include "../render/opencl.hpp"
#include "detail/helpers.hpp"

namespace uopcg::codegen {

namespace detail::long_emu {

using enum Ops;
using enum DType;

/// A long value as two uint32 words.
struct Words {
  UOp lo, hi;
};

constexpr bool is_long(DType d) { return d == int64 || d == uint64; }

/// Builds the word arithmetic of one graph; every helper works on uint32 words unless it says so.
class Emulator {
 public:
  constexpr explicit Emulator(Arena& a) : a_(a), lo_(a), hi_(a), new_(a) {}

  constexpr UOp run(UOp sink) {
    for (UOp x : toposort(sink)) visit(x);
    const UOp out = mapped(sink);
    for (UOp x : toposort(out))
      if (is_long(x.dtype())) bad(x, "is still a 64-bit integer after the emulation");
    return out;
  }

 private:
  Arena& a_;
  Arena::scratch_map lo_, hi_, new_;

  [[noreturn]] constexpr void bad(UOp x, std::string_view why) const {
    fail("decomp dtypes (int64 emulation): ", a_.describe(x.id()).view(), " ", why);
  }

  // ---- nodes and constants ----
  constexpr UOp mk(Ops op, DType dt, std::initializer_list<UOp> s) { return a_.make(op, dt, s); }
  constexpr UOp u32(std::uint64_t v) { return const_(a_, uint32, Arg::integer(static_cast<std::int64_t>(v & 0xFFFFFFFFu))); }
  constexpr UOp bin(Ops op, UOp x, UOp y) { return mk(op, x.dtype(), {x, y}); }
  constexpr UOp add(UOp x, UOp y) { return bin(ADD, x, y); }
  constexpr UOp sub(UOp x, UOp y) { return bin(SUB, x, y); }
  constexpr UOp mul(UOp x, UOp y) { return bin(MUL, x, y); }
  constexpr UOp and_(UOp x, UOp y) { return bin(AND, x, y); }
  constexpr UOp or_(UOp x, UOp y) { return bin(OR, x, y); }
  constexpr UOp shl(UOp x, UOp n) { return bin(SHL, x, n); }
  constexpr UOp shr(UOp x, UOp n) { return bin(SHR, x, n); }
  constexpr UOp lt(UOp x, UOp y) { return mk(CMPLT, bool_, {x, y}); }
  constexpr UOp eq(UOp x, UOp y) { return mk(CMPEQ, bool_, {x, y}); }
  constexpr UOp ne(UOp x, UOp y) { return mk(CMPNE, bool_, {x, y}); }
  constexpr UOp sel(UOp c, UOp x, UOp y) { return mk(WHERE, x.dtype(), {c, x, y}); }
  constexpr UOp both(UOp x, UOp y) { return mk(AND, bool_, {x, y}); }
  constexpr UOp either(UOp x, UOp y) { return mk(OR, bool_, {x, y}); }
  constexpr UOp not_(UOp x) { return mk(CMPNE, bool_, {x, const_(a_, bool_, Arg::boolean(true))}); }
  constexpr UOp as_u32(UOp b) { return cast(b, uint32); }  // a bool as 0 or 1
  constexpr UOp as_i32(UOp w) { return bitcast(w, int32); }
  constexpr UOp from_i32(UOp w) { return bitcast(w, uint32); }

  constexpr Words w(UOp x) const {
    if (!has_words(x)) bad(x, "is read as a 64-bit value, but it is not one the emulation computes");
    return {UOp(&a_, lo_.get(x.id())), UOp(&a_, hi_.get(x.id()))};
  }
  constexpr bool has_words(UOp x) const { return lo_.get(x.id()) != no_node; }
  constexpr UOp mapped(UOp x) const {
    const node_id n = new_.get(x.id());
    return n == no_node ? x : UOp(&a_, n);
  }
  constexpr Words konst(std::uint64_t v) { return {u32(v), u32(v >> 32)}; }

  // ---- word arithmetic ----
  constexpr Words wadd(Words x, Words y) {
    UOp lo = add(x.lo, y.lo);
    return {lo, add(add(x.hi, y.hi), as_u32(lt(lo, x.lo)))};
  }
  constexpr Words wsub(Words x, Words y) { return {sub(x.lo, y.lo), sub(sub(x.hi, y.hi), as_u32(lt(x.lo, y.lo)))}; }
  constexpr Words wneg(Words x) { return wsub(konst(0), x); }
  constexpr Words wmul(Words x, Words y) {
    // the low words' 64-bit product from 16-bit halves, plus the cross terms of the high word
    const UOp m16 = u32(0xFFFF), s16 = u32(16);
    UOp a0 = and_(x.lo, m16), a1 = shr(x.lo, s16), b0 = and_(y.lo, m16), b1 = shr(y.lo, s16);
    UOp t = mul(a0, b0), m1 = mul(a0, b1), m2 = mul(a1, b0);
    UOp s1 = add(t, shl(m1, s16)), s2 = add(s1, shl(m2, s16));
    UOp hi = add(add(mul(a1, b1), shr(m1, s16)), shr(m2, s16));
    hi = add(add(hi, as_u32(lt(s1, t))), as_u32(lt(s2, s1)));
    hi = add(hi, add(mul(x.lo, y.hi), mul(x.hi, y.lo)));
    return {s2, hi};
  }
  constexpr Words wsel(UOp c, Words x, Words y) { return {sel(c, x.lo, y.lo), sel(c, x.hi, y.hi)}; }
  constexpr UOp wlt(Words x, Words y, bool is_signed) {
    UOp hi_lt = is_signed ? lt(as_i32(x.hi), as_i32(y.hi)) : lt(x.hi, y.hi);
    return either(hi_lt, both(eq(x.hi, y.hi), lt(x.lo, y.lo)));
  }
  constexpr UOp weq(Words x, Words y) { return both(eq(x.lo, y.lo), eq(x.hi, y.hi)); }
  constexpr UOp wne(Words x, Words y) { return either(ne(x.lo, y.lo), ne(x.hi, y.hi)); }
  constexpr UOp negative(Words x) { return lt(as_i32(x.hi), const_(a_, int32, Arg::integer(0))); }
  /// x << n for n in [0, 63] (a uint32 word).
  constexpr Words wshl(Words x, UOp n) {
    UOp k = and_(n, u32(31)), big = ne(and_(n, u32(32)), u32(0));
    UOp lo = shl(x.lo, k), hi = or_(shl(x.hi, k), shr(shr(x.lo, u32(1)), sub(u32(31), k)));
    return {sel(big, u32(0), lo), sel(big, lo, hi)};
  }
  /// x >> n for n in [0, 63]: arithmetic for a signed x.
  constexpr Words wshr(Words x, UOp n, bool is_signed) {
    UOp k = and_(n, u32(31)), big = ne(and_(n, u32(32)), u32(0));
    UOp lo = or_(shr(x.lo, k), shl(shl(x.hi, u32(1)), sub(u32(31), k)));
    UOp hi = is_signed ? from_i32(shr(as_i32(x.hi), cast(k, int32))) : shr(x.hi, k);
    UOp fill = is_signed ? from_i32(shr(as_i32(x.hi), const_(a_, int32, Arg::integer(31)))) : u32(0);
    return {sel(big, hi, lo), sel(big, fill, hi)};
  }
  /// Unsigned quotient and remainder.
  constexpr std::pair<Words, Words> wdivmod(Words x, Words y, std::optional<std::uint64_t> constant) {
    if (constant && *constant != 0 && *constant < 0x10000) {
      // schoolbook division by 16-bit digits: each step divides a value below 2^32 natively
      const UOp d = u32(*constant), s16 = u32(16), m16 = u32(0xFFFF);
      const UOp digits[4] = {shr(x.hi, s16), and_(x.hi, m16), shr(x.lo, s16), and_(x.lo, m16)};
      UOp r = u32(0), q[4];
      for (int i = 0; i < 4; ++i) {
        UOp cur = or_(shl(r, s16), digits[i]);
        q[i] = mk(CDIV, uint32, {cur, d});
        r = mk(CMOD, uint32, {cur, d});
      }
      return {{or_(shl(q[2], s16), q[3]), or_(shl(q[0], s16), q[1])}, {r, u32(0)}};
    }
    // restoring division, one quotient bit per step from the top
    Words q = konst(0), r = konst(0);
    for (int i = 63; i >= 0; --i) {
      const UOp src = i >= 32 ? x.hi : x.lo, one = u32(1);
      r = {or_(shl(r.lo, one), and_(shr(src, u32(i % 32)), one)), or_(shl(r.hi, one), shr(r.lo, u32(31)))};
      UOp ge = not_(wlt(r, y, false));
      r = wsel(ge, wsub(r, y), r);
      UOp qbit = shl(as_u32(ge), u32(i % 32));
      if (i >= 32) q.hi = or_(q.hi, qbit);
      else q.lo = or_(q.lo, qbit);
    }
    return {q, r};
  }
  constexpr Words wdiv_or_mod(Ops op, Words x, Words y, bool is_signed, std::optional<std::int64_t> constant) {
    if (!is_signed) {
      auto [q, r] = wdivmod(x, y, constant ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*constant)) : std::nullopt);
      return op == CDIV ? q : r;
    }
    // C's truncating division on magnitudes: the quotient is negative when the signs differ, the
    // remainder takes the dividend's sign
    UOp xn = negative(x), yn = negative(y);
    Words ax = wsel(xn, wneg(x), x), ay = wsel(yn, wneg(y), y);
    std::optional<std::uint64_t> mag;
    if (constant && *constant != INT64_MIN) mag = static_cast<std::uint64_t>(*constant < 0 ? -*constant : *constant);
    auto [q, r] = wdivmod(ax, ay, mag);
    if (op == CDIV) return wsel(mk(XOR, bool_, {xn, yn}), wneg(q), q);
    return wsel(xn, wneg(r), r);
  }

  // ---- conversions ----
  /// A float (any width) to long/ulong, truncating toward zero as C does.
  constexpr Words from_float(UOp f, bool to_signed) {
    if (f.dtype() != float64 && f.dtype() != float32) f = cast(f, float32);
    const DType ft = f.dtype();
    const UOp zero = const_(a_, ft, Arg::floating(0.0));
    UOp t = trunc(f), neg = lt(t, zero);
    UOp m = sel(neg, mk(NEG, ft, {t}), t);
    // |t| = h * 2^32 + l with l in [0, 2^32): both steps are exact in t's format
    UOp h = trunc(mul(m, const_(a_, ft, Arg::floating(1.0 / 4294967296.0))));
    UOp l = sub(m, mul(h, const_(a_, ft, Arg::floating(4294967296.0))));
    Words mag{cast(l, uint32), cast(h, uint32)};
    return to_signed ? wsel(neg, wneg(mag), mag) : mag;
  }
  /// Leading zeros of a nonzero word.
  constexpr UOp clz(UOp x) {
    UOp n = u32(0);
    for (int s : {16, 8, 4, 2, 1}) {
      UOp small = lt(x, u32(std::uint64_t(1) << (32 - s)));
      n = sel(small, add(n, u32(static_cast<std::uint64_t>(s))), n);
      x = sel(small, shl(x, u32(static_cast<std::uint64_t>(s))), x);
    }
    return n;
  }
  /// A long/ulong to float32, rounded once.
  constexpr UOp to_float32(Words x, bool is_signed) {
    UOp neg = is_signed ? negative(x) : const_(a_, bool_, Arg::boolean(false));
    Words m = is_signed ? wsel(neg, wneg(x), x) : x;
    // the magnitude shifted so its top bit is bit 63; its top word, with a sticky bit for the rest,
    // rounds as the whole value does; 2^(32-lz) scales it back exactly
    UOp lz = clz(m.hi);
    UOp top = or_(shl(m.hi, lz), shr(shr(m.lo, u32(1)), sub(u32(31), lz)));
    UOp sticky = as_u32(ne(shl(m.lo, lz), u32(0)));
    UOp scale = bitcast(shl(sub(u32(159), lz), u32(23)), float32);
    UOp big = mul(cast(or_(top, sticky), float32), scale);
    UOp mag = sel(eq(m.hi, u32(0)), cast(m.lo, float32), big);
    return is_signed ? sel(neg, mk(NEG, float32, {mag}), mag) : mag;
  }
  constexpr UOp to_float(Words x, bool is_signed, DType to) {
    if (to == float64) {  // hi * 2^32 + lo: both exact in double, one rounding in the add
      UOp hi = is_signed ? cast(as_i32(x.hi), float64) : cast(x.hi, float64);
      return add(mul(hi, const_(a_, float64, Arg::floating(4294967296.0))), cast(x.lo, float64));
    }
    UOp f = to_float32(x, is_signed);
    return to == float32 ? f : cast(f, to);
  }
  constexpr Words from_value(UOp v) {
    const DType d = v.dtype();
    if (is_long(d)) return w(v);
    if (d == bool_ || is_unsigned(d)) return {cast(v, uint32), u32(0)};
    if (!is_int(d)) bad(v, "cannot be converted to an emulated 64-bit integer");
    UOp lo = from_i32(d == int32 ? v : cast(v, int32));
    return {lo, sel(lt(v, const_(a_, d, Arg::integer(0))), u32(0xFFFFFFFF), u32(0))};
  }
  constexpr UOp f64(double v) { return const_(a_, float64, Arg::floating(v)); }
  static constexpr double pow2(int k) {
    double r = 1.0;
    for (int i = 0; i < (k < 0 ? -k : k); ++i) r = k < 0 ? r / 2 : r * 2;
    return r;
  }
  /// The IEEE bits of a double, from its value: the exponent by a binary search of exact power-of-two
  /// scalings, the significand as an integer below 2^53 (exact in a double). A NaN becomes the quiet
  /// NaN 0x7FF8000000000000 (its sign and payload are not values).
  constexpr Words double_bits(UOp x) {
    const UOp zero = f64(0.0);
    UOp neg = either(lt(x, zero), both(eq(x, zero), lt(mk(RECIPROCAL, float64, {x}), zero)));
    UOp a = sel(lt(x, zero), mk(NEG, float64, {x}), x);
    // a normal a = v * 2^e with v in [1, 2)
    UOp v = a, e = const_(a_, int32, Arg::integer(0));
    for (int j = 512; j >= 1; j /= 2) {
      UOp up = not_(lt(v, f64(pow2(j))));
      v = sel(up, mul(v, f64(pow2(-j))), v);
      e = sel(up, add(e, const_(a_, int32, Arg::integer(j))), e);
    }
    for (int j = 512; j >= 1; j /= 2) {
      UOp down = lt(v, f64(pow2(1 - j)));
      v = sel(down, mul(v, f64(pow2(j))), v);
      e = sel(down, sub(e, const_(a_, int32, Arg::integer(j))), e);
    }
    UOp normal = not_(lt(a, f64(pow2(-1022))));
    // the significand's integer: 52 fraction bits of a normal, a * 2^1074 of a subnormal (or zero)
    UOp m = sel(normal, mul(sub(v, f64(1.0)), f64(pow2(52))), mul(mul(a, f64(pow2(474))), f64(pow2(600))));
    UOp mh = trunc(mul(m, f64(pow2(-32))));
    UOp lo = cast(sub(m, mul(mh, f64(pow2(32)))), uint32);
    UOp biased = sel(normal, from_i32(add(e, const_(a_, int32, Arg::integer(1023)))), u32(0));
    UOp hi = or_(shl(biased, u32(20)), cast(mh, uint32));
    UOp inf = eq(a, f64(std::numeric_limits<double>::infinity()));
    hi = sel(inf, u32(0x7FF00000), hi);
    lo = sel(inf, u32(0), lo);
    hi = or_(hi, shl(as_u32(neg), u32(31)));
    UOp nan = ne(x, x);
    return {sel(nan, u32(0), lo), sel(nan, u32(0x7FF80000), hi)};
  }
  /// The double whose IEEE bits are `b`: the significand exact in a double, scaled by 2^(E-1023) in
  /// exact power-of-two steps. Every NaN becomes the quiet NaN.
  constexpr UOp double_of_bits(Words b) {
    UOp biased = and_(shr(b.hi, u32(20)), u32(0x7FF));
    UOp m = add(mul(cast(and_(b.hi, u32(0xFFFFF)), float64), f64(pow2(32))), cast(b.lo, float64));
    UOp k = sub(as_i32(biased), const_(a_, int32, Arg::integer(1023)));
    UOp v = add(f64(1.0), mul(m, f64(pow2(-52))));
    UOp kneg = lt(k, const_(a_, int32, Arg::integer(0)));
    UOp kmag = from_i32(sel(kneg, sub(const_(a_, int32, Arg::integer(0)), k), k));
    for (int j = 512; j >= 1; j /= 2) {
      UOp bit = ne(and_(kmag, u32(static_cast<std::uint64_t>(j))), u32(0));
      v = sel(bit, mul(v, sel(kneg, f64(pow2(-j)), f64(pow2(j)))), v);
    }
    UOp sub_normal = mul(mul(m, f64(pow2(-600))), f64(pow2(600 - 1074)));
    v = sel(eq(biased, u32(0)), sub_normal, v);
    UOp special = sel(eq(m, f64(0.0)), f64(std::numeric_limits<double>::infinity()),
                      f64(std::numeric_limits<double>::quiet_NaN()));
    v = sel(eq(biased, u32(0x7FF)), special, v);
    return sel(ne(shr(b.hi, u32(31)), u32(0)), mk(NEG, float64, {v}), v);
  }
  constexpr UOp to_narrow(Words x, bool is_signed, DType to) {
    if (to == bool_) return ne(or_(x.lo, x.hi), u32(0));
    if (is_float(to)) return to_float(x, is_signed, to);
    if (to == uint32) return x.lo;
    if (to == int32) return as_i32(x.lo);
    return cast(x.lo, to);
  }

  // ---- memory ----
  constexpr static DType word_dtype(DType d) { return d == int64 ? int32 : uint32; }
  /// An index into a long buffer made an index of word `k` of the same element.
  constexpr UOp word_index(UOp idx, std::uint64_t k) {
    if (idx.op() == WHERE && idx.nsrc() == 3 && symbolic::is_invalid(idx.src(2)))
      return a_.make(WHERE, idx.dtype(), {idx.src(0), word_index(idx.src(1), k), idx.src(2)});
    UOp two = const_(a_, idx.dtype(), Arg::integer(2));
    UOp e = mk(MUL, idx.dtype(), {idx, two});
    return k == 0 ? e : mk(ADD, idx.dtype(), {e, const_(a_, idx.dtype(), Arg::integer(static_cast<std::int64_t>(k)))});
  }
  /// The address of word `k` of the element `addr` (an INDEX into a long buffer) names.
  constexpr UOp word_address(UOp addr, std::uint64_t k) {
    if (addr.op() != INDEX || addr.nsrc() < 2) bad(addr, "addresses a 64-bit element, but it is not an INDEX");
    std::vector<UOp> s;
    for (UOp x : addr.srcs()) s.push_back(mapped_operand(x));
    s[1] = word_index(s[1], k);
    return a_.make(INDEX, word_dtype(addr.dtype()), s, addr.arg(), addr.tag());
  }
  /// The operand `x` as a consumer that is not emulated reads it: an index computed in long
  /// addresses with its low word (as int32; an Invalid branch stays).
  constexpr UOp mapped_operand(UOp x) {
    if (!is_long(x.dtype()) || is_memory_node(x) || symbolic::is_invalid(x)) return mapped(x);
    if (x.op() == WHERE && x.nsrc() == 3 && symbolic::is_invalid(x.src(2)))
      return a_.make(WHERE, int32, {mapped(x.src(0)), mapped_operand(x.src(1)), x.src(2)});
    return as_i32(w(x).lo);
  }
  /// Memory (a buffer, an address or a view of one), not a value; a variable is a value.
  constexpr static bool is_memory_node(UOp x) {
    if (x.op() == PARAM && x.addrspace() == AddrSpace::ALU) return false;
    return memory_ops.contains(x.op()) && is_memory(x);
  }
  constexpr UOp retype_memory(UOp x) {
    std::vector<UOp> s;
    for (UOp v : x.srcs()) s.push_back(mapped_operand(v));
    Arg arg = x.arg();
    const DType wd = word_dtype(x.dtype());
    if (x.op() == PARAM || x.op() == BUFFER) {
      ParamArg p = ParamArg::from(arg);
      p.dtype = wd;
      arg = p.to_arg();
      if (s.empty()) bad(x, "has no size to double");
      const UOp n = s[0];
      s[0] = n.op() == CONST && n.arg().is_int() ? const_(a_, n.dtype(), Arg::integer(n.arg().as_int() * 2))
                                                  : mk(MUL, n.dtype(), {n, const_(a_, n.dtype(), Arg::integer(2))});
    } else if (x.op() == INDEX) {  // an address used other than by a LOAD or STORE: the low word's
      s[1] = word_index(s[1], 0);
    } else if (x.op() == SHRINK) {
      bad(x, "is a vector access to a 64-bit buffer");
    }
    return a_.make(x.op(), wd, s, arg, x.tag());
  }

  // ---- one node ----
  constexpr void set_words(UOp x, Words v) {
    lo_.set(x.id(), v.lo.id());
    hi_.set(x.id(), v.hi.id());
  }
  constexpr void set_new(UOp x, UOp v) {
    if (v != x) new_.set(x.id(), v.id());
  }

  constexpr std::optional<std::int64_t> const_operand(UOp x) const {
    if (x.op() == CONST && x.arg().is_int()) return static_cast<std::int64_t>(x.arg().as_uint());
    return std::nullopt;
  }

  constexpr Words const_words(UOp x) {
    const Arg& v = x.arg();
    if (v.kind() == ArgKind::bigint) return konst(render::detail::bigint_mod_2_64(v.as_string()));
    if (v.is_int()) return konst(v.as_uint());
    if (v.is_bool()) return konst(v.as_bool() ? 1 : 0);
    bad(x, "is a 64-bit integer constant without an integer value");
  }

  constexpr void visit(UOp x) {
    const DType d = x.dtype();
    if (is_long(d) && is_memory_node(x)) return set_new(x, retype_memory(x));
    if (is_long(d) && x.op() != CONST && !GroupOp::ALU.contains(x.op()) && x.op() != LOAD && x.op() != CAST &&
        x.op() != BITCAST)
      bad(x, "is a 64-bit value of an op the emulation does not handle");
    if (is_long(d)) return value(x);
    consumer(x);
  }

  /// A long value: its words.
  constexpr void value(UOp x) {
    const bool sgn = x.dtype() == int64;
    auto src = [&](std::size_t i) {
      UOp s = x.src(i);
      if (symbolic::is_invalid(s)) return Words{s, s};
      return w(s);
    };
    switch (x.op()) {
      case CONST:
        if (x.arg().is_invalid()) return set_words(x, {x, x});
        return set_words(x, const_words(x));
      case LOAD: {
        std::vector<Words> alt;
        Words out{};
        for (std::uint64_t k = 0; k < 2; ++k) {
          std::vector<UOp> s{word_address(x.src(0), k)};
          for (std::size_t i = 1; i < x.nsrc(); ++i) {
            UOp v = x.src(i);
            if (is_long(v.dtype())) {
              Words vw = src(i);
              s.push_back(retype_word(k == 0 ? vw.lo : vw.hi, x.dtype()));
            } else {
              s.push_back(mapped(v));
            }
          }
          UOp ld = a_.make(LOAD, word_dtype(x.dtype()), s, x.arg(), x.tag());
          (k == 0 ? out.lo : out.hi) = word_dtype(x.dtype()) == int32 ? from_i32(ld) : ld;
        }
        return set_words(x, out);
      }
      case CAST:
      case BITCAST: {
        UOp v = x.src(0);
        if (is_long(v.dtype())) return set_words(x, w(v));  // long <-> ulong: the same words
        if (x.op() == BITCAST && v.dtype() != float64) bad(x, "bitcasts to a 64-bit integer from another size");
        if (x.op() == BITCAST) return set_words(x, double_bits(mapped(v)));
        if (is_float(v.dtype())) return set_words(x, from_float(mapped(v), sgn));
        return set_words(x, from_value(mapped(v)));
      }
      case ADD: return set_words(x, wadd(src(0), src(1)));
      case SUB: return set_words(x, wsub(src(0), src(1)));
      case NEG: return set_words(x, wneg(src(0)));
      case MUL: return set_words(x, wmul(src(0), src(1)));
      case AND: return set_words(x, {and_(src(0).lo, src(1).lo), and_(src(0).hi, src(1).hi)});
      case OR: return set_words(x, {or_(src(0).lo, src(1).lo), or_(src(0).hi, src(1).hi)});
      case XOR: return set_words(x, {bin(XOR, src(0).lo, src(1).lo), bin(XOR, src(0).hi, src(1).hi)});
      case SHL:
      case SHR: {
        UOp b = x.src(1);
        UOp n = is_long(b.dtype()) ? w(b).lo : from_value(mapped(b)).lo;
        n = and_(n, u32(63));  // OpenCL takes a shift count mod the width
        return set_words(x, x.op() == SHL ? wshl(src(0), n) : wshr(src(0), n, sgn));
      }
      case MAX: return set_words(x, wsel(wlt(src(0), src(1), sgn), src(1), src(0)));
      case WHERE: return set_words(x, wsel(mapped(x.src(0)), src(1), src(2)));
      case CDIV:
      case CMOD: return set_words(x, wdiv_or_mod(x.op(), src(0), src(1), sgn, const_operand(x.src(1))));
      default: bad(x, "is a 64-bit operation the emulation does not handle");
    }
  }
  /// A uint32 word as memory of `long_dt` holds it (int32 for long).
  constexpr UOp retype_word(UOp word, DType long_dt) {
    return word_dtype(long_dt) == int32 && !symbolic::is_invalid(word) ? as_i32(word) : word;
  }

  /// A node that is not a long value: rebuilt over the emulated sources.
  constexpr void consumer(UOp x) {
    auto long_src = [&](std::size_t i) { return x.nsrc() > i && is_long(x.src(i).dtype()) && !is_memory_node(x.src(i)); };
    const Ops op = x.op();
    if ((op == CMPLT || op == CMPNE || op == CMPEQ) && long_src(0)) {
      const bool sgn = x.src(0).dtype() == int64;
      Words p = w(x.src(0)), q = w(x.src(1));
      return set_new(x, op == CMPLT ? wlt(p, q, sgn) : op == CMPNE ? wne(p, q) : weq(p, q));
    }
    if ((op == CAST || op == BITCAST) && long_src(0)) {
      if (op == BITCAST && x.dtype() != float64) bad(x, "bitcasts a 64-bit integer to another size");
      if (op == BITCAST) return set_new(x, double_of_bits(w(x.src(0))));
      return set_new(x, to_narrow(w(x.src(0)), x.src(0).dtype() == int64, x.dtype()));
    }
    if (op == STORE && x.nsrc() >= 2 && is_long(x.src(0).dtype()) && !is_memory_node(x.src(1))) {
      const Words v = symbolic::is_invalid(x.src(1)) ? Words{x.src(1), x.src(1)} : w(x.src(1));
      std::vector<UOp> stores;
      for (std::uint64_t k = 0; k < 2; ++k) {
        std::vector<UOp> s{word_address(x.src(0), k), retype_word(k == 0 ? v.lo : v.hi, x.src(0).dtype())};
        for (std::size_t i = 2; i < x.nsrc(); ++i) s.push_back(mapped(x.src(i)));
        stores.push_back(a_.make(STORE, x.dtype(), s, x.arg(), x.tag()));
      }
      return set_new(x, a_.make(GROUP, void_, stores));
    }
    std::vector<UOp> s;
    bool changed = false;
    for (std::size_t i = 0; i < x.nsrc(); ++i) {
      UOp v = x.src(i);
      if (is_long(v.dtype()) && !is_memory_node(v) && !symbolic::is_invalid(v) && op != INDEX && op != WHERE)
        bad(x, "reads a 64-bit value in a way the emulation does not handle");
      UOp m = mapped_operand(v);
      changed |= m != v;
      s.push_back(m);
    }
    if (changed) set_new(x, a_.make(op, x.dtype(), s, x.arg(), x.tag()));
  }
};

}  // namespace detail::long_emu

/// tinygrad's pm_long_decomp, as one pass: every long and ulong of `sink` becomes two 32-bit words.
template <class = void>
constexpr UOp emulate_long(UOp sink) {
  detail::long_emu::Emulator e(sink.arena());
  return e.run(sink);
}

}  // namespace uopcg::codegen
