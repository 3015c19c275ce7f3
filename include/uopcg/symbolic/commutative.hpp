// Operand order of commutative weakint ops (tinygrad's `commutative`): src0 <= src1 in the
// structural order, so constants end up on the right and SPECIALs on the left.
#pragma once

#include <optional>

#include "util.hpp"

namespace uopcg::symbolic {

inline constexpr auto commutative = [] {
  using namespace vars;
  using enum DType;
  return pat::rules(pat::rewrite(
      "commutative order", pat::in<GroupOp::Commutative>.dtype<weakint>()(a, b),
      [](auto& m) { return m.arena().make(m.root().op(), m.root().dtype(), {m[b], m[a]}, m.root().arg()); },
      [](auto& m) { return structural_less(m[b], m[a]); }));
}();

}  // namespace uopcg::symbolic
