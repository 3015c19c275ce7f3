// Lowering of the weak index dtype (tinygrad's pm_lower_index_dtype, stage "lower all index
// dtypes"): every weakint node becomes int32, or int64 when its value range (or an operand's) does
// not fit int32. A lowered node is wrapped in CAST(weakint, ...) so that its weak consumers keep
// type-checking; a strong consumer absorbs the wrapper.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "util.hpp"

namespace uopcg::symbolic {

namespace detail {
constexpr bool fits_i32(std::int64_t lo, std::int64_t hi) { return lo >= INT32_MIN && hi <= INT32_MAX; }
constexpr DType index_dtype_for(UOp u) { return fits_i32(u.vmin(), u.vmax()) ? DType::int32 : DType::int64; }
constexpr bool is_weak_cast(UOp u) {
  using enum DType;
  return u.op() == Ops::CAST && u.dtype() == weakint && u.nsrc() == 1 && u.src(0).dtype() != weakint;
}
constexpr UOp weak_cast(UOp u) { return u.arena().make(Ops::CAST, DType::weakint, {u}, Arg::dtype(DType::weakint)); }
constexpr UOp to_dt(UOp u, DType dt) { return u.dtype() == dt ? u : cast(u, dt); }
/// The strong value inside a lowered operand (weak CAST wrapper or strong node); invalid if weak.
constexpr UOp lowered(UOp s) {
  if (is_weak_cast(s)) return s.src(0);
  if (is_invalid(s) || s.dtype() != DType::weakint) return s;
  return UOp();
}
}  // namespace detail

namespace detail {
/// CAST(weakint, <strong int or bool value>): a lowered weak operand.
template <pat::fixed_string N>
inline constexpr auto lowered_pat = pat::op<Ops::CAST>.template dtype<DType::weakint>()(pat::var<N>.template dtypes<vars::ints_bool>());
/// The largest element count of a buffer (a PARAM/BUFFER's size source, through AFTER); -1 if unknown.
constexpr std::int64_t buffer_max_numel(UOp buf) {
  using enum Ops;
  while (buf.op() == AFTER && buf.nsrc() > 0) buf = buf.src(0);
  if ((buf.op() != PARAM && buf.op() != BUFFER) || buf.dtype() == DType::weakint || buf.nsrc() < 1) return -1;
  UOp size = buf.src(0);
  if (is_weak_cast(size)) size = size.src(0);
  if (!is_int(size.dtype()) || size.vmax() == INT64_MAX) return -1;
  return size.vmax();
}
constexpr bool strong_int(UOp u) { return (is_int(u.dtype()) && !is_weak(u.dtype())) || is_bool(u.dtype()); }
/// op rebuilt at int32/int64 (by the node's and the operands' ranges) over lowered operands.
constexpr std::optional<UOp> lower_op(UOp r, std::initializer_list<UOp> inner) {
  using enum Ops;
  using enum DType;
  if (r.shape().size() != 0) return std::nullopt;
  DType dt = index_dtype_for(r);
  for (UOp s : inner) {
    if (!strong_int(s) && !is_invalid(s)) return std::nullopt;
    if (is_int(s.dtype()) && !fits_i32(s.vmin(), s.vmax())) dt = int64;
  }
  constexpr OpSet divs{CDIV, CMOD, FLOORDIV, FLOORMOD};
  if (divs.contains(r.op())) {
    // INT_MIN / -1 overflows the narrow type where the exact weakint result is fine
    UOp num = *inner.begin(), den = *(inner.begin() + 1);
    if (den.vmin() <= -1 && den.vmax() >= -1) {
      if (num.vmin() <= INT64_MIN) return std::nullopt;
      if (num.vmin() <= INT32_MIN) dt = int64;
    }
  }
  if (r.op() == SHL || r.op() == SHR) {
    // a C shift count is taken modulo the width: it must stay below it
    UOp k = *(inner.begin() + 1);
    if (k.vmin() < 0 || k.vmax() >= 63) return std::nullopt;
    if (k.vmax() >= 31) dt = int64;
  }
  UOp srcs[3];  // at most three operands (WHERE): no allocation
  std::size_t i = 0;
  for (UOp s : inner) {
    if (i == 3) fail("lower_op: more than three operands");
    bool value_operand = !(r.op() == WHERE && i == 0) && !is_invalid(s);
    srcs[i++] = value_operand ? to_dt(s, dt) : s;
  }
  return weak_cast(r.arena().make(r.op(), dt, std::span<const UOp>(srcs, i), r.arg()));
}
/// A comparison over (lowered) operands at one width: a weak operand beside a strong int one is
/// committed at that int's width (weakint is below every int in the promotion lattice, so that is
/// the width the comparison already has); two lowered operands meet at their join. `ia`/`ib` are
/// the strong values (inside the weak CAST when lowered).
constexpr std::optional<UOp> lower_cmp(UOp r, UOp ia, bool wa, UOp ib, bool wb) {
  if (!strong_int(ia) || !strong_int(ib)) return std::nullopt;
  const DType sd = (wa ? ib : ia).dtype();
  DType dt = wa != wb && is_int(sd) ? sd : least_upper_dtype(ia.dtype(), ib.dtype());
  if (!is_int(dt) || is_weak(dt)) return std::nullopt;
  return r.arena().make(r.op(), DType::bool_, {to_dt(ia, dt), to_dt(ib, dt)});
}
/// WHERE(c, lowered value, other) (or the branches swapped) of a strong dtype: the lowered branch is
/// committed at the WHERE's dtype.
constexpr UOp strong_where(UOp r, UOp c, UOp lowered_in, bool then_side, UOp other) {
  UOp v = to_dt(lowered_in, r.dtype());
  return r.arena().make(Ops::WHERE, r.dtype(), {c, then_side ? v : other, then_side ? other : v});
}
/// A weak binary op r with one lowered operand `lowered_in` (its strong value) and one strong int
/// operand: rebuilt at the strong operand's dtype, wrapped.
constexpr UOp beside_strong(UOp r, UOp lowered_in, UOp strong, bool weak_left) {
  const DType dt = strong.dtype();
  const UOp w = to_dt(lowered_in, dt);
  return weak_cast(r.arena().make(r.op(), dt, {weak_left ? w : strong, weak_left ? strong : w}, r.arg()));
}
/// A lowered operand that a strong consumer takes directly: the weak CAST of a strong int or bool.
constexpr bool is_lowered(UOp s) { return is_weak_cast(s) && strong_int(s.src(0)); }
/// A weakint STACK of lowered lanes (an UPCAST store of a weak literal: `7` stored to four int
/// lanes): rebuilt at the lanes' join, wrapped, so the consumer absorbs it as it does a scalar.
/// Invalid lanes stay Invalid.
constexpr std::optional<UOp> lower_stack(UOp r) {
  DType dt = DType::void_;
  for (UOp s : r.srcs()) {
    if (is_invalid(s)) continue;
    if (!is_lowered(s) || !is_int(s.src(0).dtype())) return std::nullopt;
    dt = dt == DType::void_ ? s.src(0).dtype() : least_upper_dtype(dt, s.src(0).dtype());
  }
  if (dt == DType::void_) return std::nullopt;
  std::vector<UOp> lanes;
  lanes.reserve(r.nsrc());
  for (UOp s : r.srcs()) lanes.push_back(is_invalid(s) ? s : to_dt(s.src(0), dt));
  return weak_cast(r.arena().make(Ops::STACK, dt, lanes, r.arg(), r.tag()));
}
/// rewrite() predicate: the rewritten node has a strong dtype (its operands are committed at it).
inline constexpr auto root_strong = [](auto& m) { return !is_weak(m.root().dtype()); };
}  // namespace detail

inline constexpr auto pm_lower_index_dtype = [] {
  using namespace vars;
  using enum Ops;
  using enum DType;
  constexpr auto la = detail::lowered_pat<"a">;
  constexpr auto lb = detail::lowered_pat<"b">;
  constexpr auto weak_alu = pat::in<GroupOp::ALU - GroupOp::Comparison>.dtype<weakint>();
  constexpr auto weak_binary = pat::in<GroupOp::Binary - GroupOp::Comparison>.dtype<weakint>();
  constexpr auto strong_int_y = [](auto& m) { return is_int(m[y].dtype()) && !is_weak(m[y].dtype()); };
  // a WHERE's branches have their own rules (its condition is no value operand)
  constexpr auto strong_alu = pat::in<GroupOp::ALU - GroupOp::Comparison - OpSet{WHERE}>;
  return pat::rules(
      pat::rewrite("lower weak const", pat::op<CONST>.dtype<weakint>(),
                   [](auto& m) { return detail::weak_cast(const_(m.arena(), detail::index_dtype_for(m.root()), m.root().arg())); },
                   [](auto& m) { return m.root().arg().is_int(); }),
      pat::rewrite(
          "lower weak variable", pat::op<PARAM>.dtype<weakint>(),
          [](auto& m) {
            const UOp r = m.root();
            ParamArg p = ParamArg::from(r.arg());
            p.dtype = detail::index_dtype_for(r);
            auto srcs = r.srcs().to_vector();
            return detail::weak_cast(m.arena().make(PARAM, p.dtype, srcs, p.to_arg()));
          },
          [](auto& m) { return m.root().arg().kind() == ArgKind::param_arg; }),
      pat::rule("lower weak range", pat::op<RANGE, SPECIAL>.dtype<weakint>()(la),
                [](auto& m) { return detail::lower_op(m.root(), {m[a]}); }),
      pat::rule("lower weak unary", weak_alu(la), [](auto& m) { return detail::lower_op(m.root(), {m[a]}); }),
      pat::rule("lower weak stack", pat::op<STACK>.dtype<weakint>(), [](auto& m) { return detail::lower_stack(m.root()); }),
      pat::rule("lower weak binary", weak_alu(la, lb), [](auto& m) { return detail::lower_op(m.root(), {m[a], m[b]}); }),
      // a weak op beside a strong int operand: a shift's dtype is its left operand's, so `169 << x`
      // of a ulong count x is weakint. tinygrad's pm_commit_weak commits the weak operand at the join,
      // the strong int's dtype (weakint is below every int), and the op takes that dtype; wrapped here
      // for its consumers
      pat::rewrite("weak binary beside a strong int (left)", weak_binary(la, y),
                   [](auto& m) { return detail::beside_strong(m.root(), m[a], m[y], true); }, strong_int_y),
      pat::rewrite("weak binary beside a strong int (right)", weak_binary(y, la),
                   [](auto& m) { return detail::beside_strong(m.root(), m[a], m[y], false); }, strong_int_y),
      pat::rule("lower weak where", weak_alu(c.dtype<bool_>(), la, lb),
                [](auto& m) { return detail::lower_op(m.root(), {m[c], m[a], m[b]}); }),
      pat::rule("lower weak gate", weak_alu(c.dtype<bool_>(), la, inv),
                [](auto& m) { return detail::lower_op(m.root(), {m[c], m[a], invalid(m.arena())}); }),
      // a comparison is lowered as a whole: both operands at one width. One side may already be
      // strong (`load < 0` of a gather index: an int LOAD beside a weak constant).
      pat::rule("lower a comparison", pat::in<GroupOp::Comparison>(la, lb),
                [](auto& m) { return detail::lower_cmp(m.root(), m[a], true, m[b], true); }),
      pat::rule("lower a comparison (strong left)", pat::in<GroupOp::Comparison>(y, lb),
                [](auto& m) { return detail::lower_cmp(m.root(), m[y], false, m[b], true); }),
      pat::rule("lower a comparison (strong right)", pat::in<GroupOp::Comparison>(la, y),
                [](auto& m) { return detail::lower_cmp(m.root(), m[a], true, m[y], false); }),
      pat::rewrite("cast of a lowered value", pat::op<CAST>(la), [](auto& m) { return detail::to_dt(m[a], m.root().dtype()); },
                   detail::root_strong),
      pat::rewrite(
          "strong op of a lowered value (left)", strong_alu(la, y),
          [](auto& m) {
            const UOp r = m.root();
            return m.arena().make(r.op(), r.dtype(), {detail::to_dt(m[a], r.dtype()), m[y]});
          },
          detail::root_strong),
      // a weak operand is committed at the op's dtype, a shift count too (`x >> 1` of a uchar x
      // shifts by a uchar 1, as tinygrad commits it)
      pat::rewrite(
          "strong op of a lowered value (right)", strong_alu(y, la),
          [](auto& m) {
            const UOp r = m.root();
            return m.arena().make(r.op(), r.dtype(), {m[y], detail::to_dt(m[a], r.dtype())});
          },
          detail::root_strong),
      // a strong WHERE with a weak branch (`(x > 3).where(x, 7)` on an int x): the branch is
      // committed at the WHERE's dtype
      pat::rewrite("strong where of a lowered value (then)", pat::op<WHERE>(c, la, y),
                   [](auto& m) { return detail::strong_where(m.root(), m[c], m[a], true, m[y]); }, detail::root_strong),
      pat::rewrite("strong where of a lowered value (else)", pat::op<WHERE>(c, y, la),
                   [](auto& m) { return detail::strong_where(m.root(), m[c], m[a], false, m[y]); }, detail::root_strong),
      // any other strong consumer (INDEX, STORE, STACK, ...) takes the value directly
      pat::rewrite(
          "strong consumer absorbs the weak cast",
          pat::in<GroupOp::All - GroupOp::ALU - OpSet{CAST, CONST, PARAM, RANGE, SPECIAL, BITCAST}>,
          [](auto& m) {
            const UOp r = m.root();
            Arena::scratch_vector<UOp> srcs_v(m.arena());
            std::vector<UOp>& srcs = *srcs_v;
            for (UOp s : r.srcs()) {
              // a stored weak value is committed at the destination's dtype (a uint accumulator's
              // `0` is a uint, not an int stored through a pointer cast)
              const bool stored = r.op() == STORE && srcs.size() == 1 && !is_weak(r.src(0).dtype()) && r.src(0).dtype() != void_;
              srcs.push_back(!detail::is_lowered(s) ? s : stored ? detail::to_dt(s.src(0), r.src(0).dtype()) : s.src(0));
            }
            return m.arena().make(r.op(), r.dtype(), srcs, r.arg(), r.tag());
          },
          [](auto& m) {
            // tried on nearly every node that is not ALU: look before building anything
            const UOp r = m.root();
            if (r.dtype() == weakint) return false;
            for (UOp s : r.srcs())
              if (detail::is_lowered(s)) return true;
            return false;
          }),
      // a valid index into an n-element buffer lies in [0, n): where n-1 fits int32, a gated int64
      // index is narrowed (outside the gate the value is discarded)
      pat::rewrite(
          "narrow a gated long index", pat::op<INDEX, SHRINK>.any_len(pat::var<"buf">, pat::where(c, pat::var<"idx">.dtype<int64>(), inv)),
          [](auto& m) {
            const UOp r = m.root();
            std::vector<UOp> srcs = r.srcs().to_vector();
            srcs[1] = m.arena().make(WHERE, int32, {m[c], cast(m[pat::var<"idx">], int32), r.src(1).src(2)});
            return m.arena().make(r.op(), r.dtype(), srcs, r.arg(), r.tag());
          },
          [](auto& m) {
            const std::int64_t n = detail::buffer_max_numel(m[pat::var<"buf">]);
            return n >= 1 && n - 1 <= INT32_MAX;
          }));
}();

}  // namespace uopcg::symbolic
