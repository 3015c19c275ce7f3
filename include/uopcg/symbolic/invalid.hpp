// Invalid propagation (tinygrad's pm_data_invalid): Invalid is poison that travels up to the
// address that uses it; a gate `where(c, x, Invalid)` is lifted over the ops around it.
#pragma once

#include <optional>

#include "rhs.hpp"
#include "util.hpp"

namespace uopcg::symbolic {

namespace detail {
inline constexpr OpSet unary_or_cast = GroupOp::Unary | OpSet{Ops::CAST, Ops::BITCAST};
inline constexpr OpSet binary_no_cmp = GroupOp::Binary - GroupOp::Comparison;
/// `u` rebuilt with new sources (same op, dtype, arg).
constexpr UOp rebuild(UOp u, std::initializer_list<UOp> srcs) {
  return u.arena().make(u.op(), u.dtype(), srcs, u.arg());
}
constexpr UOp bool_or(UOp a, UOp b) { return a.arena().make(Ops::OR, DType::bool_, {a, b}); }
constexpr UOp bool_and(UOp a, UOp b) { return a.arena().make(Ops::AND, DType::bool_, {a, b}); }
}  // namespace detail

inline constexpr auto pm_data_invalid = [] {
  using namespace vars;
  using enum Ops;
  using enum DType;
  constexpr auto cb = c.dtype<bool_>();
  // the other arm is a value, and c, evaluated where the original did not evaluate it, is not
  // undefined there
  constexpr auto liftable = [](auto& m) { return !is_invalid(m[e]) && !may_be_undefined(m[c]); };
  return pat::rules(
      pat::rewrite("unary of Invalid", pat::in<detail::unary_or_cast>(inv), inv),
      // not a CAST to a weak dtype: that is index lowering's wrapper around a lowered gate, and
      // moving it back inside would undo the lowering (lower_index looped on every gated index)
      pat::rewrite("unary of a gate", pat::in<detail::unary_or_cast>(pat::where(c, x, inv)),
                   [](auto& m) { return where_(m[c], detail::rebuild(m.root(), {m[x]}), invalid(m.arena())); },
                   [](auto& m) { return m.root().op() != CAST || !is_weak(m.root().dtype()); }),
      pat::rewrite("binary with Invalid (left)", pat::in<detail::binary_no_cmp>(inv, y), inv),
      pat::rewrite("binary with Invalid (right)", pat::in<detail::binary_no_cmp>(y, inv), inv),
      pat::rule("binary of a gate (left)", pat::in<GroupOp::Binary>(pat::where(c, x, inv), y),
              [](auto& m) { return where_(m[c], detail::rebuild(m.root(), {m[x], m[y]}), invalid(m.arena())); }),
      pat::rule("binary of a gate (right)", pat::in<GroupOp::Binary>(y, pat::where(c, x, inv)),
              [](auto& m) { return where_(m[c], detail::rebuild(m.root(), {m[y], m[x]}), invalid(m.arena())); }),
      pat::rewrite("where with Invalid condition", pat::where(inv, a, b), inv),
      pat::rule("where with a gated condition", pat::where(pat::where(c, x, inv), a, b),
              [](auto& m) { return where_(m[c], where_(m.root().dtype(), m[x], m[a], m[b]), invalid(m.arena())); }),
      pat::rewrite("Invalid into the false arm", pat::where(c, inv, f), pat::where(pat::logical_not(cb), f, inv),
                 [](auto& m) { return !is_invalid(m[f]); }),
      pat::rewrite(
          "lift a gate out of the true arm", pat::where(a, pat::where(c, x, inv), e),
          [](auto& m) {
            auto [a, c, x, e] = m;
            return where_(detail::bool_or(not_(a), c), where_(m.root().dtype(), a, x, e), invalid(m.arena()));
          },
          liftable),
      pat::rewrite(
          "lift a gate out of the false arm", pat::where(a, e, pat::where(c, x, inv)),
          [](auto& m) {
            auto [a, e, c, x] = m;
            return where_(detail::bool_or(a, c), where_(m.root().dtype(), a, e, x), invalid(m.arena()));
          },
          liftable));
}();

}  // namespace uopcg::symbolic
