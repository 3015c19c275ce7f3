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
constexpr bool is_weak_cast(UOp u) { return u.op() == Ops::CAST && u.dtype() == DType::weakint && u.nsrc() == 1 && u.src(0).dtype() != DType::weakint; }
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
  while (buf.op() == Ops::AFTER && buf.nsrc() > 0) buf = buf.src(0);
  if ((buf.op() != Ops::PARAM && buf.op() != Ops::BUFFER) || buf.dtype() == DType::weakint || buf.nsrc() < 1) return -1;
  UOp size = buf.src(0);
  if (is_weak_cast(size)) size = size.src(0);
  if (!is_int(size.dtype()) || size.vmax() == INT64_MAX) return -1;
  return size.vmax();
}
constexpr bool strong_int(UOp u) { return (is_int(u.dtype()) && !is_weak(u.dtype())) || is_bool(u.dtype()); }
/// op rebuilt at int32/int64 (by the node's and the operands' ranges) over lowered operands.
constexpr std::optional<UOp> lower_op(UOp r, std::initializer_list<UOp> inner) {
  if (r.shape().size() != 0) return std::nullopt;
  DType dt = index_dtype_for(r);
  for (UOp s : inner) {
    if (!strong_int(s) && !is_invalid(s)) return std::nullopt;
    if (is_int(s.dtype()) && !fits_i32(s.vmin(), s.vmax())) dt = DType::int64;
  }
  constexpr OpSet divs{Ops::CDIV, Ops::CMOD, Ops::FLOORDIV, Ops::FLOORMOD};
  if (divs.contains(r.op())) {
    // INT_MIN / -1 overflows the narrow type where the exact weakint result is fine
    UOp num = *inner.begin(), den = *(inner.begin() + 1);
    if (den.vmin() <= -1 && den.vmax() >= -1) {
      if (num.vmin() <= INT64_MIN) return std::nullopt;
      if (num.vmin() <= INT32_MIN) dt = DType::int64;
    }
  }
  if (r.op() == Ops::SHL || r.op() == Ops::SHR) {
    // a C shift count is taken modulo the width: it must stay below it
    UOp k = *(inner.begin() + 1);
    if (k.vmin() < 0 || k.vmax() >= 63) return std::nullopt;
    if (k.vmax() >= 31) dt = DType::int64;
  }
  UOp srcs[3];  // at most three operands (WHERE): no allocation
  std::size_t i = 0;
  for (UOp s : inner) {
    if (i == 3) fail("lower_op: more than three operands");
    bool value_operand = !(r.op() == Ops::WHERE && i == 0) && !is_invalid(s);
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
constexpr std::optional<UOp> strong_where(UOp r, UOp c, UOp lowered_in, bool then_side, UOp other) {
  if (is_weak(r.dtype())) return std::nullopt;
  UOp v = to_dt(lowered_in, r.dtype());
  return r.arena().make(Ops::WHERE, r.dtype(), {c, then_side ? v : other, then_side ? other : v});
}
}  // namespace detail

inline constexpr auto pm_lower_index_dtype = [] {
  using namespace vars;
  constexpr auto la = detail::lowered_pat<"a">;
  constexpr auto lb = detail::lowered_pat<"b">;
  constexpr auto weak_alu = pat::in<GroupOp::ALU - GroupOp::Comparison>.dtype<DType::weakint>();
  return pat::rules(
      pat::rule("lower weak const", pat::op<Ops::CONST>.dtype<DType::weakint>(), [](auto& m) -> std::optional<UOp> {
        UOp r = m.root();
        if (!r.arg().is_int()) return std::nullopt;
        DType dt = detail::index_dtype_for(r);
        return detail::weak_cast(const_(m.arena(), dt, r.arg()));
      }),
      pat::rule("lower weak variable", pat::op<Ops::PARAM>.dtype<DType::weakint>(), [](auto& m) -> std::optional<UOp> {
        UOp r = m.root();
        if (r.arg().kind() != ArgKind::param_arg) return std::nullopt;
        ParamArg p = ParamArg::from(r.arg());
        DType dt = detail::index_dtype_for(r);
        p.dtype = dt;
        auto srcs = r.srcs().to_vector();
        return detail::weak_cast(m.arena().make(Ops::PARAM, dt, srcs, p.to_arg()));
      }),
      pat::rule("lower weak range", pat::op<Ops::RANGE, Ops::SPECIAL>.dtype<DType::weakint>()(la),
              [](auto& m) { return detail::lower_op(m.root(), {m[pat::var<"a">]}); }),
      pat::rule("lower weak unary", weak_alu(la), [](auto& m) { return detail::lower_op(m.root(), {m[pat::var<"a">]}); }),
      pat::rule("lower weak binary", weak_alu(la, lb),
              [](auto& m) { return detail::lower_op(m.root(), {m[pat::var<"a">], m[pat::var<"b">]}); }),
      pat::rule("lower weak where", weak_alu(pat::var<"c">.dtype<DType::bool_>(), la, lb),
              [](auto& m) { return detail::lower_op(m.root(), {m[c], m[pat::var<"a">], m[pat::var<"b">]}); }),
      pat::rule("lower weak gate", weak_alu(pat::var<"c">.dtype<DType::bool_>(), la, inv),
              [](auto& m) { return detail::lower_op(m.root(), {m[c], m[pat::var<"a">], invalid(m.arena())}); }),
      // a comparison is lowered as a whole: both operands at one width. One side may already be
      // strong (`load < 0` of a gather index: an int LOAD beside a weak constant).
      pat::rule("lower a comparison", pat::in<GroupOp::Comparison>(la, lb),
              [](auto& m) { return detail::lower_cmp(m.root(), m[pat::var<"a">], true, m[pat::var<"b">], true); }),
      pat::rule("lower a comparison (strong left)", pat::in<GroupOp::Comparison>(y, lb),
              [](auto& m) { return detail::lower_cmp(m.root(), m[y], false, m[pat::var<"b">], true); }),
      pat::rule("lower a comparison (strong right)", pat::in<GroupOp::Comparison>(la, y),
              [](auto& m) { return detail::lower_cmp(m.root(), m[pat::var<"a">], true, m[y], false); }),
      pat::rule("cast of a lowered value", pat::op<Ops::CAST>(la), [](auto& m) -> std::optional<UOp> {
        UOp r = m.root();
        if (is_weak(r.dtype())) return std::nullopt;
        return detail::to_dt(m[pat::var<"a">], r.dtype());
      }),
      pat::rule("strong op of a lowered value (left)", pat::in<GroupOp::ALU - GroupOp::Comparison>(la, y),
              [](auto& m) -> std::optional<UOp> {
                UOp r = m.root();
                if (is_weak(r.dtype()) || r.op() == Ops::WHERE) return std::nullopt;
                return m.arena().make(r.op(), r.dtype(), {detail::to_dt(m[pat::var<"a">], r.dtype()), m[y]});
              }),
      pat::rule("strong op of a lowered value (right)", pat::in<GroupOp::ALU - GroupOp::Comparison>(y, la),
              [](auto& m) -> std::optional<UOp> {
                UOp r = m.root();
                if (is_weak(r.dtype()) || r.op() == Ops::WHERE) return std::nullopt;
                // a weak operand is committed at the op's dtype, a shift count too (`x >> 1` of a
                // uchar x shifts by a uchar 1, as tinygrad commits it)
                return m.arena().make(r.op(), r.dtype(), {m[y], detail::to_dt(m[pat::var<"a">], r.dtype())});
              }),
      // a strong WHERE with a weak branch (`(x > 3).where(x, 7)` on an int x): the branch is
      // committed at the WHERE's dtype
      pat::rule("strong where of a lowered value (then)", pat::op<Ops::WHERE>(c, la, y),
              [](auto& m) { return detail::strong_where(m.root(), m[c], m[pat::var<"a">], true, m[y]); }),
      pat::rule("strong where of a lowered value (else)", pat::op<Ops::WHERE>(c, y, la),
              [](auto& m) { return detail::strong_where(m.root(), m[c], m[pat::var<"a">], false, m[y]); }),
      // any other strong consumer (INDEX, STORE, STACK, ...) takes the value directly
      pat::rule("strong consumer absorbs the weak cast", pat::in<GroupOp::All - GroupOp::ALU - OpSet{Ops::CAST, Ops::CONST, Ops::PARAM, Ops::RANGE, Ops::SPECIAL, Ops::BITCAST}>, [](auto& m) -> std::optional<UOp> {
        UOp r = m.root();
        if (r.dtype() == DType::weakint || GroupOp::Comparison.contains(r.op()) || r.op() == Ops::CAST) return std::nullopt;
        // tried on nearly every node that is not ALU: look before building anything
        bool any = false;
        for (UOp s : r.srcs()) any = any || (detail::is_weak_cast(s) && detail::strong_int(s.src(0)));
        if (!any) return std::nullopt;
        Arena::scratch_vector<UOp> srcs_v(m.arena());
        std::vector<UOp>& srcs = *srcs_v;
        for (UOp s : r.srcs()) {
          if (detail::is_weak_cast(s) && detail::strong_int(s.src(0))) {
            UOp in = s.src(0);
            bool value_op = GroupOp::ALU.contains(r.op()) && !(r.op() == Ops::WHERE && srcs.empty());
            // a stored weak value is committed at the destination's dtype (a uint accumulator's
            // `0` is a uint, not an int stored through a pointer cast)
            const bool stored = r.op() == Ops::STORE && srcs.size() == 1 && !is_weak(r.src(0).dtype()) &&
                                r.src(0).dtype() != DType::void_;
            srcs.push_back(value_op ? detail::to_dt(in, r.dtype()) : stored ? detail::to_dt(in, r.src(0).dtype()) : in);
          } else {
            srcs.push_back(s);
          }
        }
        return m.arena().make(r.op(), r.dtype(), srcs, r.arg(), r.tag());
      }),
      // a valid index into an n-element buffer lies in [0, n): where n-1 fits int32, a gated int64
      // index is narrowed (outside the gate the value is discarded)
      pat::rule("narrow a gated long index",
              pat::op<Ops::INDEX, Ops::SHRINK>.any_len(pat::var<"buf">, pat::where(c, pat::var<"idx">.dtype<DType::int64>(), inv)),
              [](auto& m) -> std::optional<UOp> {
                UOp r = m.root();
                std::int64_t n = detail::buffer_max_numel(m[pat::var<"buf">]);
                if (n < 1 || n - 1 > INT32_MAX) return std::nullopt;
                UOp gated = m.arena().make(Ops::WHERE, DType::int32, {m[c], cast(m[pat::var<"idx">], DType::int32), r.src(1).src(2)});
                std::vector<UOp> srcs = r.srcs().to_vector();
                srcs[1] = gated;
                return m.arena().make(r.op(), r.dtype(), srcs, r.arg(), r.tag());
              }));
}();

}  // namespace uopcg::symbolic
