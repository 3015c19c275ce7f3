// Right-hand-side nodes of the short rule form (pattern/rhs.hpp) that need the symbolic module:
//   fold(c0 * c1)   an expression of captured constants and numbers computed to one CONST where it
//                   stands, as a number there would be (what tinygrad computes in Python on the
//                   constants' args); the rule declines when it has no value of that dtype;
//   keep_dtype(x)   the expression given the rewritten node's dtype (as_dtype: a constant remade,
//                   else a CAST), for identities whose operand may be a weak literal's sibling.
#pragma once

#include <type_traits>

#include "util.hpp"

namespace uopcg::symbolic {

namespace detail {
template <class V>
constexpr value number_value(V v, DType dt) {
  if constexpr (std::is_floating_point_v<V>) return convert(value::floating(static_cast<double>(v)), dt);
  else return convert(value::integer(static_cast<i128>(v)), dt);
}
/// E's value at dtype dt: every constant read as dt, every op computed in dt (wrapping or rounding
/// as the op does); not a number when a capture is no constant.
template <class E, class M>
constexpr value fold_value(const E& e, const M& m, DType dt) {
  if constexpr (std::is_arithmetic_v<E>) {
    return number_value(e, dt);
  } else if constexpr (!pat::name_v<E>.empty()) {
    const UOp u = m.template get<pat::name_v<E>>();
    return u.op() == Ops::CONST ? from_arg(u.arg(), dt) : value::unknown();
  } else if constexpr (E::src_type::kind == 0) {
    if constexpr (std::is_same_v<typename E::arg_type, pat::arg_number>)
      return e.arg_spec.kind == ArgKind::float_ ? number_value(e.arg_spec.f, dt) : number_value(e.arg_spec.i, dt);
    else return number_value(E::arg_type::value, dt);
  } else {
    return e.src_spec.c.apply([&](const auto&... s) {
      const value in[] = {fold_value(s, m, dt)...};
      const DType dts[] = {(static_cast<void>(s), dt)...};
      return eval_alu(pat::detail::only_op(pat::root_ops_v<E>), dt, in, dts);
    });
  }
}
template <class E>
struct folded {
  using rhs_node_tag = void;
  using inner_type = E;
  static constexpr bool is_number = true;
  static constexpr bool declines = true;
  E e;
  template <class M>
  constexpr UOp build(const M& m, DType dt) const {
    const value v = fold_value(e, m, dt);
    const auto arg = to_arg(v, dt);
    if (!arg || !v.is_num()) return UOp();
    return const_(m.arena(), dt, *arg);
  }
};
template <class E>
struct root_typed {
  using rhs_node_tag = void;
  using inner_type = E;
  E e;
  template <class M>
  constexpr UOp build(const M& m, DType) const {
    const DType dt = m.root().dtype();
    return as_dtype(pat::build_rhs(e, m, dt), dt);
  }
};
}  // namespace detail

template <pat::pattern_operand E>
constexpr auto fold(const E& e) {
  return detail::folded<decltype(pat::to_pattern(e))>{pat::to_pattern(e)};
}
template <pat::pattern_operand E>
constexpr auto keep_dtype(const E& e) {
  return detail::root_typed<decltype(pat::to_pattern(e))>{pat::to_pattern(e)};
}

}  // namespace uopcg::symbolic
