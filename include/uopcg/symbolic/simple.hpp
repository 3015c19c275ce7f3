// Generic folding (the body of tinygrad's symbolic_simple): identities, self folding, zeros,
// constant folding with OpenCL C semantics, bool arithmetic, casts, WHERE, div/mod recombination.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "invalid.hpp"
#include "rhs.hpp"
#include "util.hpp"

namespace uopcg::symbolic {

/// Whether every value of `from` survives a round trip through `to`.
constexpr bool safe_cast(DType from, DType to) {
  using enum DType;
  if (from == to || from == bool_) return true;
  auto mant = [](DType d) {
    switch (d) {
      case float16: return 11;
      case bfloat16: return 8;
      case float32: return 24;
      case float64: return 53;
      default: return 0;
    }
  };
  if (is_float(from)) return is_float(to) && !is_weak(to) && !is_weak(from) && mant(to) >= mant(from) &&
                             (from != bfloat16 || to != float16);
  if (!is_int(from) || is_weak(from) || is_weak(to)) return false;
  const int fb = bitsize(from);
  if (is_float(to)) return mant(to) >= fb - (is_unsigned(from) ? 0 : 1);
  if (!is_int(to)) return false;
  if (is_unsigned(from) == is_unsigned(to)) return bitsize(to) >= fb;
  return !is_unsigned(to) && bitsize(to) > fb;  // unsigned into a wider signed type
}

namespace detail {
constexpr UOp zero_like(UOp u) { return iconst_like(u, 0); }
/// Whether the mask constant (read as a signed value) has every bit from k upward set, for a
/// shift count k in [0, width) of dt (a C shift count is taken modulo the width).
constexpr bool keeps_high_bits(UOp mask, i128 k, DType dt) {
  if (!is_const(mask) || k < 0 || k >= 62 || is_unsigned(dt)) return false;
  if (dt != DType::weakint && k >= bitsize(dt)) return false;
  i128 v = cval(mask);
  return (v | ((static_cast<i128>(1) << k) - 1)) == -1;
}
}  // namespace detail

/// Identities and self folding.
inline constexpr auto simple_identities = [] {
  using namespace vars;
  using enum Ops;
  using enum DType;
  constexpr auto xib = pat::var<"x">.dtypes<ints_bool>();
  return pat::rules(
      pat::rewrite("x+0", x + pat::const_<0>, keep_dtype(x)),
      pat::rewrite("x*1", x * pat::const_<1>, keep_dtype(x)),
      pat::rewrite("x^0", xib ^ pat::const_<0>, keep_dtype(x)),  // bools too: a padded bool XORed, False ^ x
      pat::rewrite("x|0", xi | pat::const_<0>, keep_dtype(x)),
      pat::rewrite("x<<0", xi << pat::const_<0>, x),
      pat::rewrite("x>>0", xi >> pat::const_<0>, x),
      pat::rewrite("x//x", pat::floordiv(xi, xi), 1),
      pat::rewrite("x//1", pat::floordiv(xi, pat::const_<1>), keep_dtype(x)),
      // unsigned: -1 is UINT_MAX
      pat::rewrite("x//-1", pat::floordiv(xi, pat::const_<-1>), keep_dtype(x) * -1, [](auto& m) { return !is_unsigned(m.root().dtype()); }),
      pat::rewrite("(x%y)%y", pat::named<"base">(pat::var<"n"> % y) % y, pat::var<"base">),
      pat::rewrite("(x^y)^y", (xi ^ y) ^ y, keep_dtype(x)),
      pat::rule("bool x&c", xb & cv, [](auto& m) {
        auto [x, cv] = m;
        return cval(cv) ? x : as_dtype(cv, bool_);
      }),
      pat::rule("bool x|c", xb | cv, [](auto& m) {
        auto [x, cv] = m;
        return cval(cv) ? as_dtype(cv, bool_) : x;
      }),
      pat::rewrite("idempotent x op x", pat::in<GroupOp::Idempotent>(x, x), keep_dtype(x)),
      pat::rewrite("!!x", pat::logical_not(pat::logical_not(xb)), x),
      pat::rewrite("where(x,True,False)", pat::where(xb, pat::const_<true>.dtype<bool_>(), pat::const_<false>.dtype<bool_>()), x),
      pat::rewrite("where(x,False,True)", pat::where(xb, pat::const_<false>.dtype<bool_>(), pat::const_<true>.dtype<bool_>()),
                 pat::logical_not(xb)),
      pat::rewrite("trunc of int", pat::unary<TRUNC>(xib), x),
      pat::rewrite(
          "cast(bool)!=c", pat::ne(pat::op<CAST>.as<"k">(xb), cv),
          [](auto& m) {
            auto [k, x, cv] = m;
            const value c = convert(from_arg(cv.arg(), cv.dtype()), k.dtype());
            if (c.is_float ? c.f == 0 : c.i == 0) return x;
            if (c.is_float ? c.f == 1 : c.i == 1) return not_(x);
            return literal(m.arena(), true);
          },
          [](auto& m) {
            auto [k, x, cv] = m;
            const DType kt = k.dtype();
            return !is_bool(kt) && (is_int(kt) || is_float(kt)) && convert(from_arg(cv.arg(), cv.dtype()), kt).is_num();
          }),
      pat::rewrite("x!=False", pat::ne(xb, pat::const_<false>.dtype<bool_>()), x),
      // a mask that keeps every bit from k up does not change x >> k (or x // 2^k): those bits are
      // all the shift reads. Judged on the mask's value as a signed number, so an unsigned mask
      // (never -1 there) is left alone, as in the snapshot.
      pat::rewrite("(x&mask)>>k", pat::op<SHR>(pat::op<AND>(xi, c1), c2), x >> c2,
                 pat::root_dtype(x) && [](auto& m) { return detail::keeps_high_bits(m[c1], cval(m[c2]), m.root().dtype()); }),
      pat::rewrite("(x&mask)//2^k", pat::floordiv(pat::op<AND>(xi, c1), c2), pat::floordiv(x, c2), pat::root_dtype(x) && [](auto& m) {
        const i128 d = cval_as(m[c2], m.root().dtype());
        int k = 0;
        while (d > 0 && (static_cast<i128>(1) << k) < d) ++k;
        return d > 0 && (d & (d - 1)) == 0 && detail::keeps_high_bits(m[c1], k, m.root().dtype());
      }));
}();

/// Zeros: x<x, x%x, x!=x, x^x, x&0, x*0.
inline constexpr auto simple_zeros = [] {
  using namespace vars;
  constexpr auto xib = pat::var<"x">.dtypes<ints_bool>();
  return pat::rules(
      pat::rewrite("x<x", pat::lt(x, x), false),
      pat::rewrite("x%x", xi % xi, 0),
      pat::rewrite("x!=x (ints)", pat::ne(xib, xib), false),
      pat::rewrite("x^x", xib ^ xib, 0),
      pat::rewrite("x&0", xib & pat::const_<0>, 0),
      // a literal NaN or inf times 0 is NaN; other operands are assumed finite (as the snapshot does)
      pat::rewrite(
          "x*0", x * pat::const_<0>,
          [](auto& m) {
            const UOp r = m.root();
            if (is_float(r.dtype()) && is_nan_or_inf(m[x])) return const_(m.arena(), r.dtype(), Arg::floating(__builtin_nan("")));
            return detail::zero_like(r);
          },
          // a literal inf/NaN below x may make x inf/NaN: not folded
          [](auto& m) { return !is_float(m.root().dtype()) || is_nan_or_inf(m[x]) || !holds_nonfinite_literal(m[x]); }));
}();

/// Constant folding of ops whose sources are all CONSTs.
inline constexpr auto simple_const_fold = [] {
  using enum Ops;
  constexpr auto k = pat::op<CONST>;
  auto fold = [](auto& m) { return fold_node(m.root()); };
  return pat::rules(
      pat::rule("fold unary", pat::in<GroupOp::Unary | OpSet{CAST, BITCAST}>(k), fold),
      pat::rule("fold binary", pat::in<GroupOp::Binary - OpSet{THREEFRY}>(k, k), fold),
      pat::rule("fold ternary", pat::in<GroupOp::Ternary>(k, k, k), fold));
}();

/// bool MUL is AND, bool ADD and MAX are OR.
inline constexpr auto simple_bool_arith = [] {
  using namespace vars;
  return pat::rules(
      pat::rewrite("bool x*y", xb * yb, xb & yb),
      pat::rewrite("bool x+y", xb + yb, xb | yb),
      pat::rewrite("bool max(x,y)", pat::maximum(xb, yb), xb | yb));
}();


namespace detail {
/// Whether a uint64 value provably fits in 32 bits (its bounds are known and below 2^32).
constexpr bool fits_u32(UOp u) { return u.vmin() >= 0 && u.vmax() >= 0 && u.vmax() <= 0xFFFFFFFFll; }
/// cast(cast(x, mid), dt) is x: back to x's dtype through one that holds every value of it.
constexpr bool round_trips(UOp x, DType mid, DType dt) { return dt == x.dtype() && safe_cast(x.dtype(), mid); }
/// An intermediate integer cast to mid that loses nothing for x's value range.
constexpr bool holds_range(UOp x, DType mid) {
  const DType xt = x.dtype();
  return is_int(mid) && !is_weak(mid) && (is_int(xt) || is_bool(xt)) && fits(mid, x.vmin()) && fits(mid, x.vmax()) &&
         x.vmin() != INT64_MIN && x.vmax() != INT64_MAX && xt != DType::uint64;
}
/// hi of `hi * 2^32` (either operand order) or `hi << 32` (uint64), else nullopt.
constexpr std::optional<UOp> shifted_word(UOp h) {
  using enum Ops;
  constexpr DType u64 = DType::uint64;
  if (h.dtype() != u64 || h.nsrc() != 2) return std::nullopt;
  if (h.op() == SHL && is_const(h.src(1)) && cval(h.src(1)) == 32 && h.src(0).dtype() == u64) return h.src(0);
  if (h.op() == MUL)
    for (int i = 0; i < 2; ++i)
      if (is_const(h.src(i)) && cval(h.src(i)) == (i128(1) << 32) && h.src(1 - i).dtype() == u64) return h.src(1 - i);
  return std::nullopt;
}
}  // namespace detail

/// The snapshot's threefry helpers: a uint64 built from two uint32 words (`hi*2^32 | lo` or
/// `hi<<32 | lo`) read back as words, and masks / selects of such values narrowed to uint32.
/// The high-word rules need hi < 2^32 (the snapshot assumes it: hi*2^32 wraps otherwise).
inline constexpr auto simple_threefry = [] {
  using enum Ops;
  using enum DType;
  constexpr auto x64 = pat::var<"x">.dtype<uint64>();
  constexpr auto x32 = pat::var<"x">.dtype<uint32>();
  constexpr auto y32 = pat::var<"y">.dtype<uint32>();
  constexpr auto cond = pat::var<"c">;
  constexpr auto low_mask = pat::const_<std::int64_t{0xFFFFFFFF}>;
  constexpr auto low_mask64 = pat::const_<std::int64_t{0xFFFFFFFF}>.dtype<uint64>();
  constexpr auto word64 = pat::const_<(std::int64_t{1} << 32)>.dtype<uint64>();
  constexpr auto zero64 = pat::const_<0>.dtype<uint64>();
  // the shift of a word: 32 (SHL/SHR) or 2^32 (MUL/FLOORDIV/CDIV); the predicates check which goes with which
  constexpr auto word_shift = pat::any_of(pat::const_<32>, pat::const_<(std::int64_t{1} << 32)>);
  constexpr auto packed =
      (pat::named<"h">(pat::in<OpSet{MUL, SHL}>.dtype<uint64>().commutative(pat::var<"hw">.dtype<uint64>(), word_shift)) |
       pat::cast<uint64>(y32)).dtype<uint64>();
  return pat::rules(
      pat::rewrite("low word of x & 0xFFFFFFFF", pat::cast<uint32>((x64 & low_mask).dtype<uint64>()), pat::cast<uint32>(x64) & 0xFFFFFFFF),
      // hi*2^32 | lo and hi<<32 | lo (lo a widened uint32): the uint32 CAST is lo; `// 2^32` (of the
      // MUL form) or `>> 32` (of the SHL form) is hi when hi < 2^32 (else hi*2^32 wraps)
      pat::rewrite("low word of a packed pair", pat::cast<uint32>(packed), y32,
                 [](auto& m) { return detail::shifted_word(get<"h">(m)).has_value(); }),
      pat::rewrite("high word of a packed pair", pat::in<OpSet{FLOORDIV, CDIV, SHR}>.dtype<uint64>()(packed, word_shift),
                   [](auto& m) { return *detail::shifted_word(get<"h">(m)); },
                   [](auto& m) {
                     const UOp h = get<"h">(m);
                     const auto hi = detail::shifted_word(h);
                     const bool by_shift = m.root().op() == SHR;
                     return hi && (h.op() == SHL) == by_shift && cval(m.root().src(1)) == (by_shift ? 32 : (i128(1) << 32)) &&
                            detail::fits_u32(*hi);
                   }),
      pat::rewrite("widened x * where(c, 2^32, 0)", pat::cast<uint64>(x32) * pat::where(cond, word64, zero64),
                 pat::cast<uint64>(pat::where(cond, x32, 0)) * (std::int64_t{1} << 32)),
      pat::rewrite("low word of x & where(c, 0xFFFFFFFF, 0)", pat::cast<uint32>(x64 & pat::where(cond, low_mask64, zero64)),
                 pat::where(cond, pat::cast<uint32>(x64), 0)),
      pat::rewrite("low word of where(c, widened x, 0)", pat::cast<uint32>(pat::where(cond, pat::cast<uint64>(x32), zero64)),
                 pat::where(cond, x32, 0)));
}();

/// Casts (and, composed in, the threefry word helpers above).
inline constexpr auto simple_casts = [] {
  using namespace vars;
  using enum Ops;
  using enum DType;
  return pat::rules(
      pat::rewrite("cast to the same dtype", pat::op<CAST, BITCAST>(x), x, pat::root_dtype(x)),
      pat::rewrite(
          "cast(cast(x,a),b) round trip", pat::op<CAST>(pat::named<"a">(pat::op<CAST>(x))),
          [](auto& m) {
            auto [mid, x] = m;
            return detail::round_trips(x, mid.dtype(), m.root().dtype()) ? x : cast(x, m.root().dtype());
          },
          [](auto& m) {
            auto [mid, x] = m;
            return detail::round_trips(x, mid.dtype(), m.root().dtype()) || detail::holds_range(x, mid.dtype());
          }),
      pat::rule("bitcast(bitcast(x))", pat::op<BITCAST>(pat::op<BITCAST>(x)), [](auto& m) {
        const DType dt = m.root().dtype();
        return dt == m[x].dtype() ? m[x] : bitcast(m[x], dt);
      }),
      pat::rewrite("cast(x,bool) is x!=0", pat::cast<bool_>(x), pat::ne(x, 0),
                 [](auto& m) { return !is_bool(m[x].dtype()) && !is_invalid(m[x]) && m[x].op() != CONST; }));
}() + simple_threefry;

/// WHERE: equal arms, constant condition, nested selects with a shared arm.
inline constexpr auto simple_where = [] {
  using namespace vars;
  // b is evaluated where the original did not evaluate it: it must not be undefined there
  constexpr auto b_defined = [](auto& m) { return !may_be_undefined(m[b]); };
  return pat::rules(
      pat::rewrite("where(c,x,x)", pat::where(c, x, x), keep_dtype(x)),
      pat::rule("where(const,a,b)", pat::where(cv, a, b), [](auto& m) {
        auto [cv, a, b] = m;
        const UOp pick = cval(cv) || (cv.arg().is_float() && cv.arg().as_float() != 0) ? a : b;
        return is_invalid(pick) ? pick : as_dtype(pick, m.root().dtype());
      }),
      pat::rewrite(
          "where(a,where(b,c,d),d)", pat::where(a, pat::where(b, c, d), d),
          [](auto& m) {
            auto [a, b, c, d] = m;
            return where_(m.root().dtype(), detail::bool_and(a, b), c, d);
          },
          b_defined),
      pat::rewrite(
          "where(a,c,where(b,c,d))", pat::where(a, c, pat::where(b, c, d)),
          [](auto& m) {
            auto [a, c, b, d] = m;
            return where_(m.root().dtype(), detail::bool_or(a, b), c, d);
          },
          b_defined));
}();

namespace detail {
/// u as (rest, k) with u = rest op k for a constant last operand of `op`; (u, identity) otherwise.
constexpr std::pair<UOp, i128> pop_const(UOp u, Ops op) {
  i128 k = 0;
  if (u.op() == op && u.nsrc() == 2 && int_const(u.src(1), k)) return {u.src(0), k};
  return {u, op == Ops::MUL ? 1 : 0};
}
/// The B with q == B // div and B == base (mod div), or an invalid UOp. q may be (y+p)//div + s, or
/// (y+p)//(c*div) + s against a base (y'//c) + a (the merged quotient of (y//c + a)//div), where y
/// and y' share their non-constant part; then B = base - k*div for the k that lines the constants up.
constexpr UOp quotient_base(UOp q, UOp base, i128 div) {
  using enum Ops;
  using enum DType;
  auto [q0, s] = pop_const(q, ADD);
  auto [num, a] = pop_const(base, ADD);
  i128 qd = 0;
  if (q0.op() != FLOORDIV || !int_const(q0.src(1), qd)) return UOp();
  i128 D = 0, c = 0;
  if (div > 0 && num.op() == FLOORDIV && int_const(num.src(1), c) && qd == c * div && fits(weakint, a * c)) {
    num = num.src(0);
    a *= c;
    D = qd;
  } else if (qd == div) {
    D = div;
  } else {
    return UOp();
  }
  if (D == 0) return UOp();
  auto [xb, xa] = pop_const(num, ADD);
  auto [p, pa] = pop_const(q0.src(0), ADD);
  i128 t = xa + a - pa;
  if (p != xb || t % D != 0) return UOp();
  i128 k = t / D - s;
  if (k == 0) return base;
  if (!fits(weakint, k * div)) return UOp();
  return add(base, iconst_like(base, -k * div));
}
/// In a weakint sum, (B%div)*m + (B//div)*(div*m) -> B*m, and (B%div)*m + ((B//div)%d)*(div*m) ->
/// (B%(div*d))*m (d > 0), for the first such pair of terms; the other terms stay in order.
constexpr std::optional<UOp> recombine_divmod(UOp sum_root) {
  using enum Ops;
  using enum DType;
  // a pair needs a FLOORMOD and a FLOORDIV below the sum: most sums have neither, and the arena's
  // op summary says so without splitting the sum (this rule is tried on every weakint ADD)
  if (!sum_root.arena().may_contain(sum_root.id(), OpSet{FLOORMOD}) ||
      !sum_root.arena().may_contain(sum_root.id(), OpSet{FLOORDIV}))
    return std::nullopt;
  std::vector<UOp> terms;
  split_add(sum_root, terms);
  for (std::size_t i = 0; i < terms.size(); ++i) {
    auto [mod, mul] = pop_const(terms[i], MUL);
    i128 div = 0;
    if (mod.op() != FLOORMOD || !int_const(mod.src(1), div) || div == 0 || mul == 0) continue;
    UOp base = mod.src(0);
    for (std::size_t j = 0; j < terms.size(); ++j) {
      auto [q, scale] = pop_const(terms[j], MUL);
      if (i == j || scale != div * mul) continue;
      std::vector<UOp> out;
      UOp b = quotient_base(q, base, div);
      i128 d = 0;
      if (b) {
        out.push_back(scaled(b, mul));
      } else if (q.op() == FLOORMOD && int_const(q.src(1), d) && d > 0 && fits(weakint, div * d) &&
                 (b = quotient_base(q.src(0), base, div))) {
        out.push_back(scaled(fmod(b, iconst_like(b, div * d)), mul));
      } else {
        continue;
      }
      for (std::size_t k = 0; k < terms.size(); ++k)
        if (k != i && k != j) out.push_back(terms[k]);
      return sum(sum_root.arena(), weakint, out);
    }
  }
  return std::nullopt;
}
}  // namespace detail

/// Div/mod recombination on integer sums (a constant INDEX into a STACK is mop_cleanup's).
inline constexpr auto simple_recombine = [] {
  using namespace vars;
  using enum Ops;
  using enum DType;
  return pat::rules(
      pat::rewrite("(x%c)+(x//c)*c", (xi % c1) + pat::floordiv(xi, c1) * c1, x, pat::root_dtype(x)),
      pat::rewrite("(x%c1)*c2+(x//c1)*c3", (xi % c1) * c2 + pat::floordiv(xi, c1) * c3, x * keep_dtype(c2),
                 pat::root_dtype(x) && [](auto& m) {
                   const DType dt = m.root().dtype();
                   return is_int(dt) && wrap_int(dt, cval_as(m[c1], dt) * cval_as(m[c2], dt)) == cval_as(m[c3], dt);
                 }),
      pat::rule("div/mod recombine in a sum", pat::op<ADD>.dtype<weakint>(),
              [](auto& m) { return detail::recombine_divmod(m.root()); }));
}();

}  // namespace uopcg::symbolic
