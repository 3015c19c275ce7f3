// Stage g, apply_opts (tinygrad/codegen/opt/postrange.py, apply_opts): the "simplify ranges" graph
// becomes the post-opts graph, the input of "postopt symbolic". The output axes become GLOBAL
// where the target has local memory, the chosen opts reshape the axes, and the SINK gets the
// kernel's name, its applied opts and tag 1. Which opts: the kernel's own (KernelInfo.opts_to_apply,
// else a BEAM search when KernelInfo.beam asks for one, else the hand-coded heuristics unless
// NOOPT), or the caller's choice (none, a list, the heuristics, a search).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "heuristic.hpp"
#include "scheduler.hpp"

namespace uopcg::codegen::opt {

/// A search over opts (BEAM): from the Scheduler after globalization and a beam width, the
/// Scheduler with the opts it found.
using OptSearch = std::function<OptResult<Scheduler>(const Scheduler&, std::int64_t beam)>;

/// Which opts apply_opts applies.
struct OptsRequest {
  enum class Kind {
    from_kernel,  // tinygrad's choice: opts_to_apply, else BEAM if KernelInfo.beam >= 1, else heuristics
    none,         // no opts (the axes are still globalized and the kernel named)
    list,         // `opts`, in order
    heuristic,    // hand_coded_optimizations
    beam,         // `search` with `beam` as width
  };
  Kind kind = Kind::from_kernel;
  std::vector<Opt> opts;
  std::int64_t beam = 0;
  /// The search for Kind::beam and for kernels whose KernelInfo.beam asks for one.
  OptSearch search;

  static OptsRequest from_kernel() { return {}; }
  static OptsRequest no_opts() { return OptsRequest{Kind::none, {}, 0, {}}; }
  static OptsRequest of(std::vector<Opt> opts) { return OptsRequest{Kind::list, std::move(opts), 0, {}}; }
  static OptsRequest heuristics() { return OptsRequest{Kind::heuristic, {}, 0, {}}; }
  static OptsRequest beam_search(std::int64_t width, OptSearch search) {
    return OptsRequest{Kind::beam, {}, width, std::move(search)};
  }
};

namespace detail {
/// The heuristics do not handle kernels with STAGE blocks (tinygrad leaves those unoptimized).
constexpr bool has_stage(UOp sink) {
  for (UOp u : toposort(sink))
    if (u.op() == Ops::STAGE) return true;
  return false;
}
}  // namespace detail

/// apply_opts with the outcome as a value: the post-opts SINK, or the opt that was invalid. A graph
/// that is not a kernel SINK is an error (uopcg::error), as is a search asked for without one.
inline OptResult<UOp> try_apply_opts(UOp sink, const Target& t, const OptsRequest& req = OptsRequest::from_kernel()) {
  if (!sink.valid() || sink.op() != Ops::SINK) fail("apply_opts: the kernel's root is not a SINK");
  if (sink.has_tag()) return sink;  // optimized already
  KernelInfo info;
  if (sink.arg().kind() == ArgKind::kernel_info) info = KernelInfo::from(sink.arg());
  Scheduler k(sink, t);
  k.convert_loop_to_global();
  auto apply_list = [&](const std::vector<Opt>& opts) -> std::optional<KernelOptError> {
    for (const Opt& o : opts)
      if (auto r = k.apply_opt(o); !r.ok()) return r.error();
    return std::nullopt;
  };
  auto run = [&](OptResult<Scheduler> r) -> std::optional<KernelOptError> {
    if (!r.ok()) return r.error();
    k = std::move(r).value_or_fail();
    return std::nullopt;
  };
  auto search = [&](std::int64_t beam) -> std::optional<KernelOptError> {
    if (!req.search) {
      text m;
      m.append("apply_opts: the kernel asks for a BEAM search (beam ").append(beam).append(") and none was given");
      fail(m.view());
    }
    return run(req.search(k, beam));
  };
  std::optional<KernelOptError> err;
  switch (req.kind) {
    case OptsRequest::Kind::from_kernel:
      if (info.opts_to_apply) err = apply_list(*info.opts_to_apply);
      else if (info.beam >= 1) err = search(info.beam);
      else if (!t.noopt && info.applied_opts.empty() && !detail::has_stage(sink)) err = run(hand_coded_optimizations(k));
      break;
    case OptsRequest::Kind::none: break;
    case OptsRequest::Kind::list: err = apply_list(req.opts); break;
    case OptsRequest::Kind::heuristic:
      if (!detail::has_stage(sink)) err = run(hand_coded_optimizations(k));
      break;
    case OptsRequest::Kind::beam: err = search(req.beam); break;
  }
  if (err) return *err;
  std::optional<std::string_view> name;
  if (info.name.view() != "test") name = info.name.view();
  return k.get_optimized_ast(name);
}

/// Stage g entry point: the post-opts graph; an invalid opt is an error (uopcg::error) naming it.
inline UOp apply_opts(UOp sink, const Target& t, const OptsRequest& req = OptsRequest::from_kernel()) {
  return try_apply_opts(sink, t, req).value_or_fail();
}

}  // namespace uopcg::codegen::opt
