// A kernel's AST to its program: the front stages (front_stages.hpp), apply_opts (opt/), then the
// back half (pipeline.hpp) — tinygrad's full_rewrite_to_sink and linearize in one call
// (tinygrad/codegen/__init__.py, full_rewrite_to_sink and to_program). The AST is what tinygrad's
// scheduler emits, or a plain kernel written with the builder: LOOP and REDUCE ranges, no GPU axes.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "../render/opencl.hpp"
#include "front_stages.hpp"
#include "opt/apply_opts.hpp"
#include "pipeline.hpp"

namespace uopcg::codegen {

/// apply_opts' name in traces and stage dumps (tinygrad records it under this name).
inline constexpr std::string_view apply_opts_stage_name = "apply_opts";

struct AstOptions {
  /// Which opts: tinygrad's choice by default (the AST's own opts_to_apply, else its BEAM request,
  /// else the heuristics).
  opt::OptsRequest opts;
  /// Called after every stage (front, apply_opts, back, linearize) with its graph.
  std::function<void(std::string_view stage, UOp graph, double us)> trace;
  /// Stop after this stage (a front stage, "apply_opts", a back stage or "linearize"); empty: all.
  std::string_view stop_after;
  /// false: skip "add implicit barriers" (and the barrier verifier).
  bool barriers = true;
};

struct AstResult {
  UOp post_opts;         // apply_opts' output (invalid when stopped before it)
  PipelineResult back;   // sink, program and timings of the back half (front ones first)
};

/// Whether `name` is a stage of the AST path (front, apply_opts, back or linearize).
constexpr bool is_ast_stage(std::string_view name) {
  return find_front_stage(name) || name == apply_opts_stage_name || find_stage(name) || name == linearize_stage_name;
}

/// Runs the whole path from the AST. Fails (uopcg::error) on an AST that is not a kernel (naming
/// the node), on an invalid opt (naming it and why), on an unknown `stop_after`, and where the
/// barrier verifier rejects the program.
inline AstResult run_from_ast(UOp ast, const Target& target, const AstOptions& options = {}) {
  using clock = std::chrono::steady_clock;
  if (!options.stop_after.empty() && !is_ast_stage(options.stop_after))
    fail("compile from AST: unknown stage '", options.stop_after, "'");
  const auto t_start = clock::now();
  AstResult r;
  FrontOptions fo;
  fo.trace = options.trace;
  if (find_front_stage(options.stop_after)) fo.stop_after = options.stop_after;
  FrontResult front = run_front(ast, target, fo);
  r.back.timings = front.timings;
  auto total = [&] { return std::chrono::duration<double, std::micro>(clock::now() - t_start).count(); };
  if (!fo.stop_after.empty()) {
    r.back.sink = front.sink;
    r.back.total_us = total();
    return r;
  }
  const auto t0 = clock::now();
  r.post_opts = opt::apply_opts(front.sink, target, options.opts);
  const double us = std::chrono::duration<double, std::micro>(clock::now() - t0).count();
  r.back.timings.push_back({apply_opts_stage_name, us});
  if (options.trace) options.trace(apply_opts_stage_name, r.post_opts, us);
  if (options.stop_after == apply_opts_stage_name) {
    r.back.sink = r.post_opts;
    r.back.total_us = total();
    return r;
  }
  PipelineOptions po;
  po.trace = options.trace;
  po.stop_after = options.stop_after;
  po.barriers = options.barriers;
  PipelineResult back = run_pipeline(r.post_opts, target, po);
  r.back.timings.insert(r.back.timings.end(), back.timings.begin(), back.timings.end());
  r.back.sink = back.sink;
  r.back.program = std::move(back.program);
  r.back.total_us = total();
  return r;
}

/// AST -> OpenCL C: front stages, apply_opts, back half, emitter.
inline render::RenderedKernel compile_ast_opencl(UOp ast, const Target& target, const opt::OptsRequest& opts = {}) {
  AstOptions o;
  o.opts = opts;
  return render::render_opencl(run_from_ast(ast, target, o).back.program, target.renderer);
}

}  // namespace uopcg::codegen
