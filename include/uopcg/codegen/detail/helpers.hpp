// Helpers several stage files share: membership in a list, the address and gate of a gated index
// (tinygrad/codegen/simplify.py and friends, get_idx / get_valid), the slots of new buffers.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "../../core/builder.hpp"
#include "../../core/graph.hpp"
#include "../../symbolic/util.hpp"

namespace uopcg::codegen::detail {

/// The ops that can denote memory (a buffer, an address into one, a view or an ordering of one).
inline constexpr OpSet memory_ops{Ops::PARAM,   Ops::BUFFER,  Ops::INDEX,   Ops::SHRINK, Ops::AFTER, Ops::RESHAPE,
                                  Ops::EXPAND,  Ops::PERMUTE, Ops::PAD,     Ops::FLIP,   Ops::MSTACK, Ops::MSELECT};

/// Whether `x` (one of memory_ops) denotes memory rather than a value: a PARAM/BUFFER, or a node over
/// one (its address space is GLOBAL, LOCAL or REG; a value's is ALU, e.g. an INDEX into a LOAD).
constexpr bool is_memory(UOp x) {
  using enum Ops;
  if (x.op() == PARAM || x.op() == BUFFER) return true;
  if (x.op() == INDEX && x.nsrc() > 0 && (x.src(0).op() == LOAD || x.src(0).op() == STACK)) return false;
  const auto as = x.addrspace();
  return as.has_value() && *as != AddrSpace::ALU;
}

/// Whether `x` is one of `v`.
template <class T>
constexpr bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

/// Whether f holds for one of u's sources.
template <class F>
constexpr bool any_src(UOp u, F&& f) {
  for (UOp s : u.srcs())
    if (f(s)) return true;
  return false;
}

/// The rewriter of a rule that only records what it matched in the rewrite's context, f(ctx, node),
/// and never rewrites: the stage acts on the record later (at the SINK, which is rewritten last).
template <class Ctx, class F>
constexpr auto recorder(F f) {
  return [f](Ctx& ctx, auto& m) -> std::optional<UOp> {
    f(ctx, m.root());
    return std::nullopt;
  };
}

/// tinygrad's get_valid / get_idx: the gate and the address of `where(c, x, Invalid)` (an index
/// without a gate is valid).
constexpr UOp get_valid(UOp idx) {
  if (idx.op() == Ops::WHERE && idx.nsrc() == 3 && symbolic::is_invalid(idx.src(2))) return idx.src(0);
  return literal(idx.arena(), true);
}
constexpr UOp get_idx(UOp idx) {
  if (idx.op() == Ops::WHERE && idx.nsrc() == 3 && symbolic::is_invalid(idx.src(2))) return idx.src(1);
  return idx;
}

/// The REG and LOCAL buffers already in `sink`'s graph (a hand-written kernel's, or an earlier
/// stage's). A buffer a stage creates with one's slot, dtype and size would be that buffer (the
/// arena hash-conses it), so the two would share storage: tinygrad's accumulator numbering does
/// this to a hand-written REG buffer of slot 0 and overwrites it. Stages skip these slots.
constexpr std::vector<UOp> buffers_in(const std::vector<UOp>& nodes) {
  std::vector<UOp> out;
  for (UOp u : nodes) {
    if (u.op() != Ops::BUFFER) continue;
    const std::optional<AddrSpace> space = u.addrspace();
    if (space == AddrSpace::REG || space == AddrSpace::LOCAL) out.push_back(u);
  }
  return out;
}
constexpr std::vector<UOp> buffers_in(UOp sink) { return buffers_in(toposort(sink)); }

}  // namespace uopcg::codegen::detail
