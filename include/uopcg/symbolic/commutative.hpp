// Operand order of commutative weakint ops (tinygrad's `commutative`): src0 <= src1 in the
// structural order, so constants end up on the right and SPECIALs on the left.
#pragma once

#include <optional>

#include "util.hpp"

namespace uopcg::symbolic {

inline constexpr auto commutative = [] {
  using namespace vars;
  return P::rules(P::rule("commutative order", P::in<GroupOp::Commutative>.dtype<DType::weakint>()(a, b),
                          [](auto& m) -> std::optional<UOp> {
                            if (!structural_less(m[b], m[a])) return std::nullopt;
                            UOp r = m.root();
                            return r.arena().make(r.op(), r.dtype(), {m[b], m[a]}, r.arg());
                          }));
}();

}  // namespace uopcg::symbolic
