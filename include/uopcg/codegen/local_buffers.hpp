// Stage 4, "add local buffers" (tinygrad/codegen/__init__.py, pm_add_local_buffers): every STAGE becomes a placeholder BUFFER
// in the STAGE's address space (numbered from 0 in rewrite order), written by a STORE inside an END
// over the STAGE's ranges, and read through an AFTER that orders the reads after those writes
// (the seed's add_local_buffer). pm_mops then moves the placeholder's RESHAPE outside the AFTER and
// folds INDEXes through it.
#pragma once

#include <cstdint>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "../symbolic/mops.hpp"
#include "reduce.hpp"
#include "target.hpp"

namespace uopcg::codegen {

/// The context of "add local buffers": the next buffer slot (tinygrad's itertools.count(0)).
struct LocalBufferContext {
  std::int64_t next_slot = 0;
  /// The kernel's REG and LOCAL buffers before the stage, whose slots a new buffer skips.
  std::vector<UOp> taken{};
};

/// STAGE(v, r...) → AFTER(B, END(STORE(INDEX(B, r...), v), r...)) with B a placeholder of the
/// STAGE's shape and address space.
constexpr UOp add_local_buffer(LocalBufferContext& ctx, UOp x) {
  using namespace detail;
  using enum Ops;
  if (x.nsrc() < 1 || x.arg().kind() != ArgKind::bufferize_opts) {
    fail("add local buffers: ", x.arena().describe(x.id()), " is a STAGE without BufferizeOpts");
  }
  auto shp = x.shape();
  if (!shp.has_value()) {
    fail("add local buffers: ", x.arena().describe(x.id()), " has no shape (a range without bound?)");
  }
  const AddrSpace space = BufferizeOpts::from(x.arg()).addrspace;
  Arena& a = x.arena();
  UOp buf = fresh_placeholder(a, shp.to_vector(), x.dtype(), ctx.next_slot, space, ctx.taken);
  std::vector<UOp> rngs;
  for (std::size_t i = 1; i < x.nsrc(); ++i) rngs.push_back(x.src(i));
  std::vector<UOp> idx{buf};
  idx.insert(idx.end(), rngs.begin(), rngs.end());
  UOp write = store(a.make(INDEX, buf.dtype(), idx), x.src(0));
  return a.make(AFTER, buf.dtype(), {buf, end_(write, rngs)});
}

namespace detail {
/// Whether the value `v` reads the range `r` as data: a path from `v` to `r` through nodes inside
/// `r`, not through an AFTER's direct RANGE sources. Those only place a node inside the range (an
/// accumulator's initialisation inside a GROUP reduce's range): the value does not vary with it.
constexpr bool reads_range(UOp v, UOp r) {
  using enum Ops;
  std::vector<UOp> todo{v};
  std::vector<std::uint8_t> seen(v.arena().size(), 0);  // (n, 0): clang 14 rejects value-initialising it in constant evaluation
  while (!todo.empty()) {
    const UOp u = todo.back();
    todo.pop_back();
    if (u == r) return true;
    if (seen[u.id()] || !in_range(u, r)) continue;
    seen[u.id()] = 1;
    for (std::size_t i = 0; i < u.nsrc(); ++i)
      if (!(u.op() == AFTER && i > 0 && u.src(i).op() == RANGE)) todo.push_back(u.src(i));
  }
  return false;
}
}  // namespace detail

/// A LOCAL STAGE is one buffer per work-group: when its value depends on a local id (a LOCAL or
/// GROUP_REDUCE range still open there and read as data) that does not index it, work-items that
/// differ in that id store different values to one element, a race (dmm_stage_local under LOCAL on
/// the row axis). Such a STAGE is also indexed by those ranges, first, and so is each of its reads,
/// in the work-item's own slice (docs/DIVERGENCES.md P23; fix_group_for_reduce does the same for
/// its partials). A STAGE read other than through INDEX is left as it is.
constexpr UOp index_stages_by_local_ids(UOp sink) {
  using enum Ops;
  using namespace detail;
  if (!sink.arena().may_contain(sink.id(), OpSet{STAGE})) return sink;  // most kernels: no walk
  const std::vector<UOp> topo = toposort(sink);
  std::vector<std::pair<UOp, UOp>> mapping;
  for (UOp u : topo) {
    if (u.op() != STAGE || u.arg().kind() != ArgKind::bufferize_opts ||
        BufferizeOpts::from(u.arg()).addrspace != AddrSpace::LOCAL)
      continue;
    std::vector<UOp> extra;
    for (UOp r : ranges(u)) {
      const auto t = range_axis(r);
      if ((t == AxisType::LOCAL || t == AxisType::GROUP_REDUCE) && detail::reads_range(u.src(0), r)) extra.push_back(r);
    }
    if (extra.empty()) continue;
    std::vector<UOp> reads;
    bool only_indexed = true;
    for (UOp n : topo)
      for (std::size_t i = 0; i < n.nsrc(); ++i)
        if (n.src(i) == u) {
          if (n.op() == INDEX && i == 0) reads.push_back(n);
          else only_indexed = false;
        }
    if (!only_indexed) continue;
    Arena& a = u.arena();
    std::vector<UOp> stage_srcs{u.src(0)};
    stage_srcs.insert(stage_srcs.end(), extra.begin(), extra.end());
    for (std::size_t i = 1; i < u.nsrc(); ++i) stage_srcs.push_back(u.src(i));
    const UOp staged = a.make(STAGE, u.dtype(), stage_srcs, u.arg(), u.tag());
    for (UOp rd : reads) {
      std::vector<UOp> idx{staged};
      idx.insert(idx.end(), extra.begin(), extra.end());
      for (std::size_t i = 1; i < rd.nsrc(); ++i) idx.push_back(rd.src(i));
      mapping.emplace_back(rd, a.make(INDEX, rd.dtype(), idx, rd.arg(), rd.tag()));
    }
  }
  return mapping.empty() ? sink : substitute(sink, mapping);
}

/// pm_add_local_buffers: add_local_buffer + pm_mops.
inline constexpr auto pm_add_local_buffers =
    pat::rules(pat::rule("add_local_buffer", pat::op<Ops::STAGE>,
                     [](LocalBufferContext& ctx, auto& m) { return add_local_buffer(ctx, m.root()); })) +
    symbolic::pm_mops;

/// Stage 4 entry point: "add local buffers".
template <class = void>
constexpr UOp add_local_buffers(UOp sink, const Target&) {
  sink = index_stages_by_local_ids(sink);
  LocalBufferContext ctx{.taken = detail::buffers_in(sink)};
  // the context numbers what the rules create, in tinygrad's visiting order
  return pat::graph_rewrite(sink, pm_add_local_buffers, ctx, {.name = "add local buffers", .ordered = true});
}

}  // namespace uopcg::codegen
