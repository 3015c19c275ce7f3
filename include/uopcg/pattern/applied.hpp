// What applying rules did: to one node (applied: which rule, and the node it built) and over one
// graph_rewrite (rewrite_stats, opt-in: attempts and matches per rule).
#pragma once

#include <cstdint>
#include <vector>

#include "../core/arena.hpp"
#include "rule.hpp"

namespace uopcg::pat {

/// Counters of one graph_rewrite (opt-in): attempts and matches per rule of the set.
struct rewrite_stats {
  /// Nodes offered to the rule set (one per node and per fixpoint round).
  std::uint64_t visits = 0;
  std::vector<std::uint64_t> attempts, matches;
  std::vector<rule_info> rules;
  constexpr void ensure(std::size_t n) {
    if (attempts.size() < n) {
      attempts.resize(n, 0);
      matches.resize(n, 0);
    }
  }
};

/// What applying a rule set to one node did.
struct applied {
  int rule = -1;  // index of the rule that rewrote, -1 if none
  bool gate = false;
  UOp result;
};

}  // namespace uopcg::pat
