// indexing_simplify (tinygrad's codegen/late/coalese.py): the index of a gated address
// `INDEX(buf, where(cond, idx, Invalid))` simplified assuming cond. Used by the stages
// devectorize2, extra symbolic and lower all index dtypes.
#pragma once

#include <optional>

#include "sets.hpp"

namespace uopcg::symbolic {

/// INDEX(buf, idx.valid(cond)) with idx simplified given cond; nullopt when that gives nothing a
/// plain simplification would not.
constexpr std::optional<UOp> simplify_valid_load(UOp index, UOp buf, UOp idx, UOp cond) {
  using enum Ops;
  UOp n = uop_given_valid(cond, idx, symbolic);
  if (n == idx || n == pat::graph_rewrite(idx, symbolic)) return std::nullopt;
  Arena& a = index.arena();
  UOp g = a.make(WHERE, n.dtype(), {cond, n, invalid(a)});
  return a.make(INDEX, index.dtype(), {buf, g}, index.arg(), index.tag());
}

inline constexpr auto indexing_simplify = [] {
  using namespace vars;
  using enum Ops;
  return pat::rules(pat::rule("simplify a gated index", pat::op<INDEX>(b, pat::where(c, x, inv)),
                          [](auto& m) { return simplify_valid_load(m.root(), m[b], m[x], m[c]); }));
}();

}  // namespace uopcg::symbolic
