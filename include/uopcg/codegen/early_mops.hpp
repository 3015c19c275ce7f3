// Front stage b, "early movement ops" (tinygrad/codegen/__init__.py, full_rewrite_to_sink:
// pm_mops, bottom-up): movement ops left on the buffers of a hand-written kernel (an INDEX of a
// RESHAPEd or PERMUTEd placeholder) fold into the INDEX arithmetic; movement ops and INDEX move
// outside AFTER, and an END of a movement op ends its source. The rules are symbolic/mops.hpp's
// pm_mops. A scheduler-made AST has no movement ops left: the stage leaves it unchanged.
#pragma once

#include "../pattern/pattern.hpp"
#include "../symbolic/mops.hpp"
#include "target.hpp"

namespace uopcg::codegen {

/// Stage b entry point: "early movement ops". Bottom-up, as tinygrad runs it: an INDEX is pushed
/// through a chain of views from the outside in, before the views' sources are visited.
template <class = void>
UOp early_movement_ops(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, symbolic::pm_mops, {.bottom_up = true, .name = "early movement ops"});
}

}  // namespace uopcg::codegen
