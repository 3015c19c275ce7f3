// Stage 16, "decomp dtypes" (tinygrad/codegen/decomp/dtype.py): emulation of the dtypes the target lacks,
// plus the weak-dtype commit rules that every late round needs (pm_commit_weak, pm_cast_weak).
//
// A float dtype `fr` the target cannot hold (half without cl_khr_fp16, fp8 always, bf16 when
// emulated) is stored as unsigned bits of its width and computed in `to` (float, or half for fp8 when
// half is native and holds every fp8 value): buffers and addresses take the bits dtype (tagged with
// `fr`; so do the AFTERs and views over a buffer, e.g. a reduction's REG accumulator or a GROUP_REDUCE's
// LOCAL buffer, which the rewrite reaches before the buffer itself), loads convert bits to `to`, stores
// convert `to` back to bits, a CAST to `fr` rounds to a value
// of `fr`, and every value of `fr` becomes a value of `to`. The bit conversions (`f2f`) are IEEE-exact
// graphs of integer ops (plus one exact float multiply or add for the subnormal range): denormals are
// kept both ways, rounding is to nearest even into the subnormal range, only values that round beyond
// the largest finite value overflow (to infinity; fp8 saturates as OCP's SAT mode does), and a NaN
// stays a quiet NaN. tinygrad's own conversions flush denormals, overflow from 65504 on and can turn a
// NaN into an infinity; see docs/DIVERGENCES.md "Emulated narrow floats".
//
// int64 and uint64 without native support (EMULATED_DTYPES=long) become pairs of 32-bit words
// (long_decomp.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "../core/builder.hpp"
#include "../core/error.hpp"
#include "../core/graph.hpp"
#include "../core/print.hpp"
#include "../pattern/pattern.hpp"
#include "../render/opencl.hpp"
#include "detail/helpers.hpp"
#include "detail/vars.hpp"
#include "float_format.hpp"
#include "long_decomp.hpp"
#include "target.hpp"

namespace uopcg::codegen {


// ----------------------------------------------------------------------------------------------------
// weak commit (tinygrad's uop/weak.py): a weak operand next to a concrete one takes its width
// ----------------------------------------------------------------------------------------------------
namespace detail {

inline constexpr pat::DTypeSet weaks{DType::weakint, DType::weakfloat};
inline constexpr auto u = pat::var<"u">;


/// The concrete dtype a weak value lives at by default: int32 (int64 when its range needs it) for
/// weakint, float32 for weakfloat; a concrete dtype is its own.
constexpr DType commit_dtype(UOp s) {
  using enum DType;
  if (s.dtype() == weakint)
    return s.vmin() >= INT32_MIN && s.vmax() <= INT32_MAX ? int32 : int64;
  if (s.dtype() == weakfloat) return float32;
  return s.dtype();
}

/// CONST `c` re-made at dtype `dt` (value converted to the kind of `dt`).
constexpr UOp const_at(UOp c, DType dt) {
  const Arg& v = c.arg();
  Arena& a = c.arena();
  if (is_float(dt)) return const_(a, dt, v.is_float() ? v : Arg::floating(v.is_bool() ? double(v.as_bool()) : v.kind() == ArgKind::uint_ ? double(v.as_uint()) : double(v.as_int())));
  if (is_bool(dt)) return const_(a, dt, Arg::boolean(v.is_float() ? v.as_float() != 0 : v.as_int() != 0));
  if (v.is_float()) return const_(a, dt, Arg(static_cast<std::int64_t>(v.as_float())));
  if (v.is_bool()) return const_(a, dt, Arg(static_cast<std::int64_t>(v.as_bool())));
  return const_(a, dt, v);
}


/// `u` with its weak sources committed at `dt`: a bare weak CONST is re-made at dt when `u` itself is
/// concrete (its dtype derives from concrete operands), anything else weak gets a CAST. nullopt if
/// nothing changed.
constexpr std::optional<UOp> commit_srcs_at(UOp u, DType dt) {
  using enum Ops;
  using enum DType;
  DType meet = void_;
  for (std::size_t i = u.op() == WHERE ? 1 : 0; i < u.nsrc(); ++i)
    meet = meet == void_ ? u.src(i).dtype() : least_upper_dtype(meet, u.src(i).dtype());
  const bool bare = GroupOp::Broadcastable.contains(u.op()) && !is_weak(meet) && !is_weak(u.dtype());
  std::vector<UOp> srcs;
  bool changed = false;
  for (UOp s : u.srcs()) {
    if (!is_weak(s.dtype())) {
      srcs.push_back(s);
      continue;
    }
    changed = true;
    srcs.push_back(bare && s.op() == CONST ? const_at(s, dt) : cast(s, dt));
  }
  if (!changed) return std::nullopt;
  UOp r = with_srcs(u, srcs);
  return r == u ? std::optional<UOp>() : std::optional<UOp>(r);
}

/// A Binary/Ternary op with weak sources whose joint dtype is concrete: commit them at it.
constexpr std::optional<UOp> commit_weak_srcs(UOp u) {
  using enum Ops;
  using enum DType;
  bool any = false;
  DType dt = void_;
  for (UOp s : u.srcs()) {
    any = any || is_weak(s.dtype());
    if (s.op() == CONST && s.arg().is_invalid()) continue;
    dt = dt == void_ ? s.dtype() : least_upper_dtype(dt, s.dtype());
  }
  if (!any || is_weak(dt) || dt == void_) return std::nullopt;
  return commit_srcs_at(u, dt);
}

/// CAST(dt, weak ALU u) of the same kind: u's weak sources commit at the width dt, u's own range
/// and each weak source's range need (never narrower), and the result is cast to dt.
constexpr std::optional<UOp> cast_weak_srcs(UOp c, UOp u) {
  using enum DType;
  const DType cd = c.dtype();
  if (is_weak(cd)) return std::nullopt;
  const bool same_kind = (u.dtype() == weakint && is_int(cd)) || (u.dtype() == weakfloat && is_float(cd));
  if (!same_kind) return std::nullopt;
  DType dt = least_upper_dtype(cd, commit_dtype(u));
  for (UOp s : u.srcs())
    if (is_weak(s.dtype())) dt = least_upper_dtype(dt, commit_dtype(s));
  auto r = commit_srcs_at(u, dt);
  if (!r) return std::nullopt;
  return cast(*r, cd);
}

}  // namespace detail

/// pm_commit_weak: weak operands of Binary/Ternary ops commit at the op's concrete dtype; a stored
/// weak value commits at the destination's dtype.
inline constexpr auto pm_commit_weak = [] {
  using namespace detail;
  using enum Ops;
  using enum DType;
  return pat::rules(
      pat::rule("commit weak sources", pat::in<GroupOp::Broadcastable>, [](auto& m) { return commit_weak_srcs(m.root()); }),
      pat::rewrite("commit a weak stored value", pat::op<STORE>.any_len(idx, val.dtypes<weaks>()), [](auto& m) {
        const UOp st = m.root();
        std::vector<UOp> s = st.srcs().to_vector();
        s[1] = cast(s[1], m[idx].dtype());
        return m.arena().make(STORE, st.dtype(), s, st.arg(), st.tag());
      }, [](auto& m) { return !is_weak(m[idx].dtype()) && m[idx].dtype() != void_; }));
}();

/// pm_cast_weak: a concrete CAST over a weak node states the width the weak node computes at.
inline constexpr auto pm_cast_weak = [] {
  using namespace detail;
  using enum Ops;
  using enum DType;
  return pat::rules(
      pat::rewrite("cast of a weak const", pat::op<CAST>(c.dtypes<weaks>()), [](auto& m) { return const_at(m[c], m.root().dtype()); },
                 [](auto& m) { return !is_weak(m.root().dtype()) && m[c].arg().is_number() && m.root().dtype() != void_; }),
      pat::rule("cast of a weak alu", pat::op<CAST>(pat::in<GroupOp::ALU>.named<"u">().dtypes<weaks>()),
              [](auto& m) { return cast_weak_srcs(m.root(), m[u]); }));
}();

// ----------------------------------------------------------------------------------------------------
// float emulation through bits
// ----------------------------------------------------------------------------------------------------

namespace detail {
/// An integer CONST of `like`'s dtype.
constexpr UOp kc(UOp like, std::uint64_t v) { return const_(like.arena(), like.dtype(), Arg(static_cast<std::int64_t>(v))); }
constexpr UOp shl(UOp x, int k) { return x << kc(x, static_cast<std::uint64_t>(k)); }
constexpr UOp shr(UOp x, int k) { return x >> kc(x, static_cast<std::uint64_t>(k)); }
constexpr UOp sub_const(UOp x, std::uint64_t c) { return x.arena().make(Ops::SUB, x.dtype(), {x, kc(x, c)}); }
constexpr std::uint64_t bit(int k) { return std::uint64_t(1) << k; }
/// The bit pattern of 2^e in float format `f` (a normal number of `f`).
constexpr std::uint64_t pow2_bits(FloatFormat f, int e) { return static_cast<std::uint64_t>(e + f.bias) << f.man; }
/// Whether `a` and `b` share exponent width and bias (the narrower is then a truncation of the wider:
/// float/bf16, half/fp8e5m2).
constexpr bool same_exponent(DType a, DType b) {
  const FloatFormat x = float_format(a), y = float_format(b);
  return x.exp == y.exp && x.bias == y.bias && !is_fnuz(a) && !is_fnuz(b);
}
/// Whether every value of `fr` (subnormals included) is a normal number of `to`.
constexpr bool normal_in(DType fr, DType to) {
  const FloatFormat f = float_format(fr), t = float_format(to);
  return f.exp <= t.exp && f.man < t.man && t.bias >= f.bias + f.man && (1 << f.exp) - 1 - f.bias <= t.bias;
}
/// Whether `to` can emulate `fr` exactly through f2f both ways.
constexpr bool can_emulate(DType fr, DType to) { return same_exponent(fr, to) ? float_format(fr).man < float_format(to).man : normal_in(fr, to); }

/// Bits `v` of float `fr` (in bits_dtype(fr)) converted to the other float `to`, IEEE-exact.
///
/// Widening (every value of `fr` is a value of `to`): exact; subnormals of `fr` are read with their
/// value, infinities stay infinities, a NaN keeps its sign and payload and is made quiet (fp8e4m3's
/// S.1111.111 and fnuz's 0x80 are NaNs).
///
/// Narrowing: round to nearest, ties to even, into the subnormal range of `to`; a result beyond the
/// largest finite value is an infinity (IEEE formats), or with `sat` (fp8, OCP's saturating mode)
/// the largest finite value — infinities included; without `sat` fp8e4m3 (and fnuz) overflow to NaN,
/// fp8e5m2 to infinity. A NaN stays a NaN of the same sign, quiet, keeping the payload's top bits
/// (fp8e4m3: S.1111.111, fnuz: 0x80). fnuz formats have no negative zero.
constexpr UOp f2f(UOp v, DType fr, DType to, bool sat = true) {
  using enum DType;
  const FloatFormat F = float_format(fr), T = float_format(to);
  const DType tbits = bits_dtype(to), fbits = bits_dtype(fr);
  if (v.dtype() != fbits) fail("decomp dtypes: f2f of ", to_string(v), ": not the bits of ", name(fr));
  const std::uint64_t fsign = bit(F.bits - 1), fmag = fsign - 1, finf = (bit(F.exp) - 1) << F.man;
  const std::uint64_t tsign = bit(T.bits - 1), texp = (bit(T.exp) - 1) << T.man, tquiet = bit(T.man - 1);
  if (F.exp <= T.exp && F.man < T.man) {  // widening
    if (!can_emulate(fr, to))
      fail("decomp dtypes: ", name(fr), " has values that are not normal ", name(to));
    UOp mag = v & kc(v, fmag);
    if (same_exponent(fr, to)) {  // the bits move up; a NaN gets the quiet bit
      UOp wide = shl(cast(v, tbits), T.bits - F.bits);
      return bitcast(where(kc(mag, finf) < mag, wide | kc(wide, tquiet), wide), to);
    }
    UOp m = cast(mag, tbits);
    UOp sign = shl(cast(v & kc(v, fsign), tbits), T.bits - F.bits);
    UOp wide = shl(m, T.man - F.man);
    UOp norm = wide + kc(m, static_cast<std::uint64_t>(T.bias - F.bias) << T.man);
    // a subnormal (or zero) of fr: its integer mantissa times 2^(1-bias-man), computed in `to` (exact:
    // the integer converts exactly, the product is a normal number of `to`)
    double scale = 1.0;
    for (int e = 1 - F.bias - F.man; e < 0; ++e) scale /= 2.0;
    UOp subn = bitcast(cast(m, to) * const_(v.arena(), to, Arg::floating(scale)), tbits);
    UOp r = where(m < kc(m, bit(F.man)), subn, norm);
    if (is_fnuz(fr)) return bitcast(where(ne(v, kc(v, fsign)), sign | r, kc(m, texp | tquiet)), to);
    if (fr == fp8e4m3) return bitcast(sign | where(ne(m, kc(m, fmag)), r, wide | kc(m, texp)), to);
    UOp special = where(kc(m, finf) < m, wide | kc(m, texp | tquiet), kc(m, texp));
    return bitcast(sign | where(m < kc(m, finf), r, special), to);
  }
  if (F.exp >= T.exp && F.man > T.man) {  // narrowing, computed on the bits of fr
    if (!can_emulate(to, fr))
      fail("decomp dtypes: no exact rounding of ", name(fr), " into ", name(to));
    const int s = F.man - T.man;
    UOp mag = v & kc(v, fmag);
    UOp sign = shr(v, F.bits - T.bits) & kc(v, tsign);
    UOp hi = shr(mag, s);
    UOp rounded = shr(mag + (hi & kc(v, 1)) + kc(v, bit(s - 1) - 1), s);  // round to nearest even
    // the magnitude bits of the largest finite value, and what a larger one becomes
    std::uint64_t tmax = texp - 1, over = texp;                    // IEEE: infinity
    if (to == fp8e4m3) tmax = texp | (bit(T.man) - 2), over = sat ? tmax : tmax + 1;  // S.1111.110; NaN
    else if (is_fnuz(to)) tmax = tsign - 1, over = sat ? tmax : tsign;                       // 0x7f; NaN 0x80
    else if (sat && is_fp8(to)) over = tmax;
    UOp nan = is_fnuz(to) ? kc(v, tsign) : to == fp8e4m3 ? kc(v, tsign - 1) : hi | kc(v, texp | tquiet);
    if (!same_exponent(fr, to) && !is_fnuz(to) && to != fp8e4m3) nan = nan & kc(v, tsign - 1);
    UOp r;
    if (same_exponent(fr, to)) {  // the bits are the narrow value's bits plus extra mantissa: rounding carries into inf
      r = rounded;
      if (over != texp) r = where(kc(v, tmax) < r, kc(v, over), r);
    } else {
      UOp norm = sub_const(rounded, static_cast<std::uint64_t>(F.bias - T.bias) << T.man);
      norm = where(kc(v, over == texp ? texp : tmax) < norm, kc(v, over), norm);
      // below the smallest normal of `to`: adding 2^(1-bias-man of to) * 2^man of fr in fr rounds |x|
      // to a multiple of the smallest subnormal of `to` (IEEE addition, ties to even); the sum's low
      // bits are then that multiple
      const int em = 1 - T.bias - T.man + F.man;
      double m = 1.0;
      for (int e = em; e > 0; --e) m *= 2.0;
      for (int e = em; e < 0; ++e) m /= 2.0;
      UOp subn = sub_const(bitcast(bitcast(mag, fr) + const_(v.arena(), fr, Arg::floating(m)), fbits), pow2_bits(F, em));
      r = where(mag < kc(v, pow2_bits(F, 1 - T.bias)), subn, norm);
    }
    if (is_fnuz(to)) r = where(ne(r, kc(v, 0)), sign | r, kc(v, 0));  // no negative zero; NaN 0x80 carries the sign bit
    else r = sign | r;
    r = where(kc(v, finf) < mag, is_fnuz(to) ? nan : sign | nan, r);
    return cast(r, tbits);
  }
  fail("decomp dtypes: no bit conversion from ", name(fr), " to ", name(to));
}

/// The number of elements of a value (1 for a scalar).
constexpr std::int64_t numel(UOp x) {
  auto sh = x.shape();
  return sh.has_value() ? sh.numel() : 1;
}

/// Element i of a vector value (a STACK's element directly).
constexpr UOp lane(UOp v, std::int64_t i) {
  if (v.op() == Ops::STACK && v.nsrc() > static_cast<std::size_t>(i)) return v.src(static_cast<std::size_t>(i));
  return index(v, const_(v.arena(), DType::int32, Arg(i)));
}

/// f2f, or for half <-> float with `builtins` one call of the emitter's helper functions around
/// OpenCL C's vload_half / vstore_half_rte (same results: IEEE-exact both ways; far fewer
/// instructions, and vectorisable on CPU devices). Same contract as f2f: bits of `fr` in, a value of
/// `to` out when widening, bits of `to` out when narrowing.
///
/// The helpers take and return scalars, so a vector (an upcast CAST, e.g. a half fill's float lanes)
/// converts lane by lane into a STACK; f2f's integer graph is elementwise and takes vectors as they are.
constexpr UOp convert(UOp v, DType fr, DType to, bool builtins) {
  using enum Ops;
  using enum DType;
  using render::helper_float_to_half, render::helper_half_to_float;
  const bool widen = builtins && fr == float16 && to == float32 && v.dtype() == bits_dtype(fr);
  const bool narrow = builtins && fr == float32 && to == float16 && v.dtype() == bits_dtype(fr);
  if (!widen && !narrow) return f2f(v, fr, to);
  // narrowing calls the helper on the float value itself, not on its bits
  const UOp x = widen ? v : v.op() == BITCAST && v.src(0).dtype() == float32 ? v.src(0) : bitcast(v, float32);
  const DType out = widen ? float32 : bits_dtype(to);
  const Arg call = Arg::string(std::string(widen ? helper_half_to_float : helper_float_to_half).append("({0})"));
  const std::int64_t n = numel(x);
  if (n == 1) return x.arena().make(CUSTOM, out, {x}, call);
  std::vector<UOp> lanes;
  for (std::int64_t i = 0; i < n; ++i) lanes.push_back(x.arena().make(CUSTOM, out, {lane(x, i)}, call));
  return x.arena().make(STACK, out, lanes);
}

/// An address moved `off` elements on (a SHRINK view becomes the INDEX of its first element + off).
constexpr UOp reindex(UOp idx, std::int64_t off, std::int64_t mul = 2) {
  using enum Ops;
  if (idx.op() == SHRINK) {
    if (mul != 1) fail("decomp dtypes: cannot reindex a SHRINK with a stride");
    return idx.arena().make(INDEX, idx.dtype(), {idx.src(0), idx.src(1) + off}, Arg(), idx.tag());
  }
  if (idx.nsrc() < 2) fail("decomp dtypes: reindex of an address without an index: ", to_string(idx));
  std::vector<UOp> s = idx.srcs().to_vector();
  s[1] = s[1] * mul + off;
  return idx.arena().make(idx.op(), idx.dtype(), s, idx.arg(), idx.tag());
}

constexpr UOp f2f_load(UOp x, DType fr, DType to, bool builtins = false) {
  using enum Ops;
  const std::int64_t n = numel(x);
  const DType fb = bits_dtype(fr);
  if (n == 1) return convert(with_dtype(x, fb), fr, to, builtins);
  std::vector<UOp> lanes;
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<UOp> s = x.srcs().to_vector();
    s[0] = reindex(x.src(0), i, 1);
    lanes.push_back(convert(x.arena().make(LOAD, fb, s, x.arg(), x.tag()), fr, to, builtins));
  }
  return x.arena().make(STACK, to, lanes);
}

constexpr UOp f2f_store(UOp st, UOp idx, UOp val, DType fr, DType to, bool builtins = false) {
  using enum Ops;
  const std::int64_t n = numel(val);
  std::vector<UOp> s = st.srcs().to_vector();
  if (n == 1) {
    s[0] = idx;
    s[1] = convert(bitcast(val, bits_dtype(to)), to, fr, builtins);
    return st.arena().make(STORE, st.dtype(), s, st.arg(), st.tag());
  }
  std::vector<UOp> stores;
  for (std::int64_t i = 0; i < n; ++i) {
    s[0] = reindex(idx, i, 1);
    s[1] = convert(bitcast(lane(val, i), bits_dtype(to)), to, fr, builtins);
    stores.push_back(st.arena().make(STORE, st.dtype(), s, st.arg(), st.tag()));
  }
  return node(GROUP, stores);
}

/// A value of `to` rounded to the nearest value of `fr` (as f2f rounds), still a value of `to`:
/// what CAST(fr, x) computes when fr is emulated in `to`.
constexpr UOp round_to(UOp val, DType fr, DType to, bool builtins = false) {
  return convert(convert(bitcast(val, bits_dtype(to)), to, fr, builtins), fr, to, builtins);
}

/// `x` retyped to `dt`; a PARAM/BUFFER's ParamArg follows.
constexpr UOp retype(UOp x, DType dt, const Arg& tag) {
  Arg arg = x.arg();
  if (arg.kind() == ArgKind::param_arg) {
    ParamArg p = ParamArg::from(arg);
    p.dtype = dt;
    arg = p.to_arg();
  }
  return x.arena().make(x.op(), dt, x.srcs().to_vector(), arg, tag);
}
}  // namespace detail

/// What pm_float_decomp emulates: values of `fr` computed as `to`.
struct FloatDecompCtx {
  DType fr = DType::float16;
  DType to = DType::float32;
  bool builtins = false;  // Target::half_builtins: half <-> float through the emitter's helpers
};

namespace detail {
inline constexpr auto ld = pat::var<"ld">;
/// The rewritten node is a value (or memory) of the emulated dtype.
inline constexpr pat::predicate of_fr{[](FloatDecompCtx& c, auto& m) { return m.root().dtype() == c.fr; }};
/// An address tagged as holding `fr`'s bits (the memory rule retypes it and keeps fr as its tag).
constexpr bool holds_bits_of(UOp addr, DType fr) { return addr.tag().kind() == ArgKind::dtype && addr.tag().as_dtype() == fr; }
}  // namespace detail

/// tinygrad's pm_float_decomp (run bottom-up, ctx = FloatDecompCtx).
inline constexpr auto pm_float_decomp = [] {
  using namespace detail;
  using enum Ops;
  return pat::rules(
      // memory: the buffers themselves and every address or ordering node over one (INDEX, AFTER,
      // movement views) -- e.g. a REG accumulator `INDEX(AFTER(BUFFER, deps), i)` or a LOCAL buffer
      // read after its stores; the rewrite visits a node before its sources, so an AFTER over a
      // buffer must be retyped here, not turned into a value of `to` by the rule below
      pat::rewrite("memory of fr holds its bits", pat::in<memory_ops>,
                 [](FloatDecompCtx& c, auto& m) { return retype(m.root(), bits_dtype(c.fr), Arg::dtype(c.fr)); },
                 of_fr && [](auto& m) { return is_memory(m.root()); }),
      pat::rewrite("load bits and convert", pat::op<LOAD>,
                 [](FloatDecompCtx& c, auto& m) { return f2f_load(m.root(), c.fr, c.to, c.builtins); }, of_fr),
      pat::rewrite("bitcast of a load reads the bits", pat::op<BITCAST>(pat::op<LOAD>.named<"ld">()),
                 [](FloatDecompCtx& c, auto& m) { return bitcast(with_dtype(m[ld], bits_dtype(c.fr)), m.root().dtype()); },
                 [](FloatDecompCtx& c, auto& m) { return m[ld].dtype() == c.fr; }),
      pat::rewrite("bitcast from fr", pat::op<BITCAST>(x), [](FloatDecompCtx& c, auto& m) {
        const UOp bc = m.root();
        return bc.arena().make(BITCAST, bc.dtype(), {convert(bitcast(m[x], bits_dtype(c.to)), c.to, c.fr, c.builtins)},
                               bc.arg(), bc.tag());
      }, [](FloatDecompCtx& c, auto& m) {
        return m[x].dtype() == c.to && is_float(c.to) && bitsize(m.root().dtype()) == bitsize(c.fr);
      }),
      pat::rewrite("bitcast to fr", pat::op<BITCAST>(x),
                   [](FloatDecompCtx& c, auto& m) { return convert(bitcast(m[x], bits_dtype(c.fr)), c.fr, c.to, c.builtins); }, of_fr),
      pat::rewrite("cast to fr rounds to fr", pat::op<CAST>(val), [](FloatDecompCtx& c, auto& m) {
        const UOp v = m[val];
        return round_to(v.dtype() == c.to ? v : cast(v, c.to), c.fr, c.to, c.builtins);
      }, of_fr),
      pat::rewrite("values of fr are values of to", pat::in<GroupOp::All - OpSet{BITCAST, STORE}>, [](FloatDecompCtx& c, auto& m) {
                const UOp x = m.root();
                std::vector<UOp> s;
                for (UOp v : x.srcs()) s.push_back(v.dtype() == c.fr ? cast(v, c.to) : v);
                Arg arg = x.arg();
                if (x.op() == CAST) arg = Arg::dtype(c.to);
                return x.arena().make(x.op(), c.to, s, arg, x.tag());
              }, of_fr),
      pat::rewrite("store a bitcast to fr as its bits", pat::op<STORE>.any_len(idx, pat::op<BITCAST>.named<"val">()),
                   [](FloatDecompCtx& c, auto& m) {
                     const UOp st = m.root();
                     std::vector<UOp> s = st.srcs().to_vector();
                     s[1] = with_dtype(m[val], bits_dtype(c.fr));
                     return st.arena().make(STORE, st.dtype(), s, st.arg(), st.tag());
                   },
                   [](FloatDecompCtx& c, auto& m) { return m[val].dtype() == c.fr && holds_bits_of(m[idx], c.fr); }),
      pat::rewrite("store of fr", pat::op<STORE>.any_len(idx, val),
                   [](FloatDecompCtx& c, auto& m) { return f2f_store(m.root(), m[idx], m[val], c.fr, c.to, c.builtins); },
                   [](FloatDecompCtx& c, auto& m) {
                     const UOp base = m[idx].op() == CAST ? m[idx].src(0) : m[idx];
                     return is_float(m[val].dtype()) && m[val].dtype() == c.to && holds_bits_of(base, c.fr);
                   }));
}();

namespace detail {
/// tinygrad's DType order (priority, bitsize, name): the order emulations run in.
constexpr bool dtype_less(DType a, DType b) {
  if (priority(a) != priority(b)) return priority(a) < priority(b);
  if (bitsize(a) != bitsize(b)) return bitsize(a) < bitsize(b);
  return name(a) < name(b);
}
constexpr bool decomposable(DType d) {
  using enum DType;
  return is_fp8(d) || d == bfloat16 || d == float16 || d == int64 || d == uint64;
}
}  // namespace detail

/// The dtypes of `sink`'s graph that the target must emulate, in the order they are emulated.
constexpr std::vector<DType> emulated_dtypes(UOp sink, const Target& t) {
  std::vector<DType> out;
  for (UOp u : toposort(sink)) {
    using enum DType;
    DType d = u.dtype() == uint64 ? int64 : u.dtype();
    if (detail::decomposable(d) && !t.supports_dtype(d) && std::find(out.begin(), out.end(), d) == out.end())
      out.push_back(d);
  }
  std::sort(out.begin(), out.end(), detail::dtype_less);
  return out;
}

/// Emulates every dtype of `sink` the target lacks (tinygrad's do_dtype_decomps).
template <class = void>
constexpr UOp do_dtype_decomps(UOp sink, const Target& t) {
  using enum DType;
  for (DType fr : emulated_dtypes(sink, t)) {
    if (fr == int64) {
      sink = emulate_long(sink);
      continue;
    }
    // fp8 computes in half where half is native and holds every fp8 value as a normal number (or
    // shares its exponent); otherwise in float
    const bool in_half = is_fp8(fr) && t.supports_dtype(float16) && detail::can_emulate(fr, float16);
    const DType to = in_half ? float16 : float32;
    FloatDecompCtx ctx{fr, to, t.half_builtins};
    sink = pat::graph_rewrite(sink, pm_float_decomp, ctx, {.bottom_up = true, .name = "decomp dtypes (float emulation)"});
  }
  return sink;
}

/// Stage 16 "decomp dtypes": pm_dtype_decomps + pm_commit_weak.
template <class = void>
constexpr UOp decomp_dtypes(UOp sink, const Target& t) {
  sink = pat::graph_rewrite(sink, pm_commit_weak, {.name = "decomp dtypes"});
  const UOp emulated = do_dtype_decomps(sink, t);
  if (emulated == sink) return sink;
  return pat::graph_rewrite(emulated, pm_commit_weak, {.name = "decomp dtypes"});
}

}  // namespace uopcg::codegen
