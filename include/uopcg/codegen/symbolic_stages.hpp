// The symbolic stages of full_rewrite_to_sink (tinygrad/codegen/__init__.py):
//   front e  "initial symbolic" sym + pm_flatten_range
//   stage 8  "early symbolic"  sym
//   stage 11 "extra symbolic"  sym + indexing_simplify
//   stage 13 "final symbolic"  symbolic
// All children-first rewrites without a context.
#pragma once

#include "../symbolic/indexing.hpp"
#include "../symbolic/sets.hpp"
#include "postopt.hpp"
#include "target.hpp"

namespace uopcg::codegen {

// The stage's rule set: a variable template, compiled only where the stage runs (stage.hpp).
template <class = void>
inline constexpr auto initial_symbolic_rules = symbolic::sym + pm_flatten_range;

/// Front stage e: `sym` before the opts, so that "simplify ranges" (which counts divisions) sees
/// the normal form (tinygrad/codegen/__init__.py, full_rewrite_to_sink).
template <class = void>
constexpr UOp initial_symbolic(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, initial_symbolic_rules<>, {.name = "initial symbolic"});
}

/// Stage 8: plain `sym` over the devectorized graph (canonical `base + c` index forms for memory
/// coalescing; AFTER dependency lists pruned).
template <class = void>
constexpr UOp early_symbolic(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, symbolic::sym, {.name = "early symbolic"});
}

// The stage's rule set: a variable template, compiled only where the stage runs (stage.hpp).
template <class = void>
inline constexpr auto extra_symbolic_rules = symbolic::sym + symbolic::indexing_simplify;

/// Stage 11: `sym + indexing_simplify`, while indices are still weakint.
template <class = void>
constexpr UOp extra_symbolic(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, extra_symbolic_rules<>, {.name = "extra symbolic"});
}

/// Stage 13: `symbolic` (no validity simplification, no statement rules of sym).
template <class = void>
constexpr UOp final_symbolic(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, symbolic::symbolic, {.name = "final symbolic"});
}

}  // namespace uopcg::codegen
