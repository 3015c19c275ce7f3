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
//   add_war_store_barrier  on a STORE into LOCAL memory whose value or address loads the same
//                    buffer at another element, not already behind a BARRIER: the store's address
//                    waits on a BARRIER after those loads, so no work-item overwrites an element
//                    before every work-item has read it (write after read in straight-line code, which
//                    tinygrad leaves racy: the loop END's barrier is its only WAR barrier).
//
// All three look only at UOp dependencies and buffer identity. An END that already ends in a BARRIER, a
// single-iteration range, and loops whose stores and loads share no buffer are left alone.
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "target.hpp"

namespace uopcg::codegen {

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
    UOp b = buffer_of(x);
    if (b.valid() && std::find(stored.begin(), stored.end(), b) == stored.end()) stored.push_back(b);
  }
  if (stored.empty()) return std::nullopt;
  std::vector<UOp> barrier_srcs{body};
  for (std::size_t k = 0; k < slice_size; ++k) {
    const UOp x = slice(k);
    if (x.op() != LOAD || x.nsrc() == 0) continue;
    UOp b = buffer_of(x.src(0));
    if (b.valid() && std::find(stored.begin(), stored.end(), b) != stored.end()) barrier_srcs.push_back(x);
  }
  if (barrier_srcs.size() == 1) return std::nullopt;
  std::vector<UOp> new_srcs{a.make(BARRIER, void_, barrier_srcs)};
  for (std::size_t i = 1; i < end.nsrc(); ++i) new_srcs.push_back(end.src(i));
  return with_srcs(end, new_srcs);
}

/// The arg of the BARRIERs add_war_store_barrier places.
inline constexpr std::string_view war_store_barrier_tag = "war store";

/// Write after read without a loop: a STORE into LOCAL memory whose backward slice loads the same
/// buffer at another element (another INDEX or vector SHRINK), with neither the load behind a
/// BARRIER already, becomes STORE(INDEX(AFTER(buf, BARRIER(loads...)), idx...), value...). A load
/// of the element the store writes (the same address node) is each work-item's own and needs no
/// barrier. nullopt when nothing is to be done.
constexpr std::optional<UOp> add_war_store_barrier(UOp store) {
  using enum Ops;
  using enum DType;
  // the address is an INDEX, or after devectorize a vector access SHRINK(buf, offset, lanes)
  if (!is_local_store(store) || store.nsrc() < 2 || (store.src(0).op() != INDEX && store.src(0).op() != SHRINK))
    return std::nullopt;
  const UOp addr = store.src(0);
  const UOp buf = buffer_of(addr);
  if (!buf.valid()) return std::nullopt;
  Arena& a = store.arena();
  // the store's slice up to BARRIERs, and everything some BARRIER of it already waits for
  std::vector<UOp> roots;
  for (std::size_t i = 0; i < store.nsrc(); ++i) roots.push_back(store.src(i));
  Arena::scratch_vector<UOp> reached(a);
  toposort_into(std::span<const UOp>(roots), [](UOp n) { return n.op() != BARRIER; }, *reached);
  // the BARRIERs the slice reaches (the gate above stops at them, so it does not list them)
  std::vector<UOp> barriers;
  for (UOp x : *reached)
    for (std::size_t i = 0; i < x.nsrc(); ++i)
      if (x.src(i).op() == BARRIER && std::find(barriers.begin(), barriers.end(), x.src(i)) == barriers.end())
        barriers.push_back(x.src(i));
  Arena::scratch_vector<UOp> behind(a);
  if (!barriers.empty()) toposort_into(std::span<const UOp>(barriers), [](UOp) { return true; }, *behind);
  std::vector<UOp> loads;
  for (UOp x : *reached) {
    if (x.op() != LOAD || x.nsrc() == 0 || x.src(0) == addr) continue;
    if (buffer_of(x.src(0)) != buf) continue;
    if (std::find(behind->begin(), behind->end(), x) != behind->end()) continue;
    loads.push_back(x);
  }
  if (loads.empty()) return std::nullopt;
  // tagged: after linearize, one the barrier verifier proves redundant is dropped again
  const UOp barrier = a.make(BARRIER, void_, loads, Arg::string(war_store_barrier_tag));
  std::vector<UOp> idx_srcs{a.make(AFTER, addr.src(0).dtype(), {addr.src(0), barrier})};
  for (std::size_t i = 1; i < addr.nsrc(); ++i) idx_srcs.push_back(addr.src(i));
  std::vector<UOp> st_srcs{with_srcs(addr, idx_srcs)};
  for (std::size_t i = 1; i < store.nsrc(); ++i) st_srcs.push_back(store.src(i));
  return with_srcs(store, st_srcs);
}

/// pm_implicit_barriers: RAW on AFTER, WAR on END and on a LOCAL STORE.
inline constexpr auto pm_implicit_barriers = [] {
  using enum Ops;
  return pat::rules(pat::rule("add_raw_barrier", pat::op<AFTER>, [](auto& m) { return add_raw_barrier(m.root()); }),
                    pat::rule("add_war_barrier", pat::op<END>, [](auto& m) { return add_war_barrier(m.root()); }),
                    pat::rule("add_war_store_barrier", pat::op<STORE>, [](auto& m) { return add_war_store_barrier(m.root()); }));
}();

/// Stage 21: pm_implicit_barriers over the graph, children first.
template <class = void>
constexpr UOp add_implicit_barriers(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, pm_implicit_barriers, {.name = "add implicit barriers"});
}

}  // namespace uopcg::codegen
