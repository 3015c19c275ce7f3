// Symbolic simplification: value bounds (computed in the arena, see core/detail/derive_bounds.hpp),
// concrete evaluation, the symbolic rule sets, the rule soundness tester and the term order.
#pragma once

#include "fold.hpp"
#include "render.hpp"
#include "rule_tester.hpp"
#include "sets.hpp"
#include "term_order.hpp"
