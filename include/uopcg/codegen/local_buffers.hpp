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

/// pm_add_local_buffers: add_local_buffer + pm_mops.
inline constexpr auto pm_add_local_buffers =
    pat::rules(pat::rule("add_local_buffer", pat::op<Ops::STAGE>,
                     [](LocalBufferContext& ctx, auto& m) { return add_local_buffer(ctx, m.root()); })) +
    symbolic::pm_mops;

/// Stage 4 entry point: "add local buffers".
template <class = void>
constexpr UOp add_local_buffers(UOp sink, const Target&) {
  LocalBufferContext ctx{.taken = detail::buffers_in(sink)};
  // the context numbers what the rules create, in tinygrad's visiting order
  return pat::graph_rewrite(sink, pm_add_local_buffers, ctx, {.name = "add local buffers", .ordered = true});
}

}  // namespace uopcg::codegen
