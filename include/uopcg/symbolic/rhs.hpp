// Right-hand-side nodes of the short rule form (pattern/rhs.hpp) that need the symbolic module:
//   fold(c0 * c1)   the expression built and, when its sources are constants, folded to one
//                   (what tinygrad computes in Python on captured constants);
//   keep_dtype(x)   the expression given the rewritten node's dtype (as_dtype: a constant remade,
//                   else a CAST), for identities whose operand may be a weak literal's sibling.
#pragma once

#include "util.hpp"

namespace uopcg::symbolic {

namespace detail {
template <class E>
struct folded {
  using rhs_node_tag = void;
  using inner_type = E;
  E e;
  template <class M>
  constexpr UOp build(const M& m, DType hint) const {
    const UOp u = P::build_rhs(e, m, hint);
    if (auto k = fold_node(u)) return *k;
    return u;
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
    return as_dtype(P::build_rhs(e, m, dt), dt);
  }
};
}  // namespace detail

template <P::pattern_operand E>
constexpr auto fold(const E& e) {
  return detail::folded<decltype(P::to_pattern(e))>{P::to_pattern(e)};
}
template <P::pattern_operand E>
constexpr auto keep_dtype(const E& e) {
  return detail::root_typed<decltype(P::to_pattern(e))>{P::to_pattern(e)};
}

}  // namespace uopcg::symbolic
