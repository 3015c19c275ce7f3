// Stage 21, "add implicit barriers" (the seed's pm_implicit_barriers). Work-group barriers on LOCAL
// memory are a compile rule at the end of code generation, after op/dtype lowering and gate motion:
//
//   add_raw_barrier  on an AFTER that addresses LOCAL memory and (without looking behind an existing
//                    BARRIER) depends on a STORE into LOCAL memory: the AFTER's dependencies move into
//                    a BARRIER, so every later access of the buffer sees the stores (read after write);
//   add_war_barrier  on the END of a REDUCE/WEAK/LOOP range with at least two iterations whose body
//                    stores into a LOCAL buffer inside that loop and loads the same buffer: a BARRIER
//                    after those loads closes the body, so the next iteration's stores wait for every
//                    work-item's reads (write after read).
//
// Both look only at UOp dependencies and buffer identity. An END that already ends in a BARRIER, a
// single-iteration range, and loops whose stores and loads share no buffer are left alone.
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {

/// The buffer (PARAM/BUFFER/STAGE) a memory node addresses, or an invalid handle when it addresses
/// none (a value, a constant): the non-failing form of buf_uop.
constexpr UOp buffer_of(UOp u) {
  using enum Ops;
  UOp x = u;
  while (x.op() != PARAM && x.op() != BUFFER && x.op() != STAGE) {
    if (x.nsrc() == 0) return UOp();
    x = x.src(0);
  }
  return x;
}

}  // namespace detail

/// A STORE into LOCAL (work-group shared) memory.
constexpr bool is_local_store(UOp x) { return x.op() == Ops::STORE && x.addrspace() == AddrSpace::LOCAL; }

/// Read after write: an AFTER on LOCAL memory whose dependencies contain a LOCAL STORE not already
/// behind a BARRIER becomes AFTER(x, BARRIER(deps...)). nullopt when nothing is to be done.
constexpr std::optional<UOp> add_raw_barrier(UOp after) {
  using enum Ops;
  using enum DType;
  if (after.op() != AFTER || after.nsrc() < 2 || after.addrspace() != AddrSpace::LOCAL) return std::nullopt;
  std::vector<UOp> deps;
  for (std::size_t i = 1; i < after.nsrc(); ++i) deps.push_back(after.src(i));
  // every node the dependencies reach, not entering (nor counting) BARRIERs
  bool stored = false;
  Arena::scratch_vector<UOp> reached(after.arena());
  toposort_into(std::span<const UOp>(deps), [](UOp n) { return n.op() != BARRIER; }, *reached);
  for (UOp x : *reached)
    if (is_local_store(x)) {
      stored = true;
      break;
    }
  if (!stored) return std::nullopt;
  Arena& a = after.arena();
  UOp barrier = a.make(BARRIER, void_, deps);
  return a.make(AFTER, after.src(0).dtype(), {after.src(0), barrier});
}

/// Write after read: the END of a multi-iteration REDUCE/WEAK/LOOP range whose body stores into a
/// LOCAL buffer inside the loop and loads from that buffer becomes END(BARRIER(body, loads...),
/// ranges...). nullopt when nothing is to be done.
constexpr std::optional<UOp> add_war_barrier(UOp end) {
  using enum Ops;
  using enum DType;
  if (end.op() != END || end.nsrc() < 2) return std::nullopt;
  std::vector<UOp> loops;
  for (std::size_t i = 1; i < end.nsrc(); ++i) {
    UOp r = end.src(i);
    auto t = range_axis(r);
    if (t && (*t == AxisType::REDUCE || *t == AxisType::WEAK || *t == AxisType::LOOP) && r.vmax() > 0)
      loops.push_back(r);
  }
  UOp body = end.src(0);
  if (loops.empty() || body.op() == BARRIER) return std::nullopt;
  Arena& a = end.arena();
  // the body's backward slice, then the body itself
  const std::span<const node_id> slice_ids = backward_slice_ids(body);
  auto slice = [&](std::size_t k) { return k < slice_ids.size() ? UOp(&a, slice_ids[k]) : body; };
  const std::size_t slice_size = slice_ids.size() + 1;
  // buffers stored inside this loop (stores reached through AFTER chains from other loops do not count)
  std::vector<UOp> stored;
  for (std::size_t k = 0; k < slice_size; ++k) {
    const UOp x = slice(k);
    if (!is_local_store(x)) continue;
    bool inside = false;
    for (UOp r : loops) inside = inside || in_range(x, r);
    if (!inside) continue;
    UOp b = detail::buffer_of(x);
    if (b.valid() && std::find(stored.begin(), stored.end(), b) == stored.end()) stored.push_back(b);
  }
  if (stored.empty()) return std::nullopt;
  std::vector<UOp> barrier_srcs{body};
  for (std::size_t k = 0; k < slice_size; ++k) {
    const UOp x = slice(k);
    if (x.op() != LOAD || x.nsrc() == 0) continue;
    UOp b = detail::buffer_of(x.src(0));
    if (b.valid() && std::find(stored.begin(), stored.end(), b) != stored.end()) barrier_srcs.push_back(x);
  }
  if (barrier_srcs.size() == 1) return std::nullopt;
  std::vector<UOp> new_srcs{a.make(BARRIER, void_, barrier_srcs)};
  for (std::size_t i = 1; i < end.nsrc(); ++i) new_srcs.push_back(end.src(i));
  return with_srcs(end, new_srcs);
}

/// pm_implicit_barriers: RAW on AFTER, WAR on END.
inline constexpr auto pm_implicit_barriers = [] {
  using enum Ops;
  return pat::rules(pat::rule("add_raw_barrier", pat::op<AFTER>, [](auto& m) { return add_raw_barrier(m.root()); }),
                    pat::rule("add_war_barrier", pat::op<END>, [](auto& m) { return add_war_barrier(m.root()); }));
}();

/// Stage 21: pm_implicit_barriers over the graph, children first.
template <class = void>
constexpr UOp add_implicit_barriers(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, pm_implicit_barriers, {.name = "add implicit barriers"});
}

}  // namespace uopcg::codegen
