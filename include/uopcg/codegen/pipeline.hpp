// The codegen pipeline: the seed's stages in the seed's order, from the post-opts graph (the
// expander's input) to the linearized program, for one Target. Each stage is one entry point of a
// stage header (`UOp stage(UOp sink, const Target&)`); this header only orders them, times them,
// and checks the input (typing rules) and the output (barrier placement).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../core/verify.hpp"
#include "add_loads.hpp"
#include "barrier_explain.hpp"
#include "barrier_verifier.hpp"
#include "barriers.hpp"
#include "coalesce.hpp"
#include "control_flow.hpp"
#include "decompositions.hpp"
#include "devectorize.hpp"
#include "dtype_decomps.hpp"
#include "expander.hpp"
#include "final_rewrite.hpp"
#include "gates.hpp"
#include "gpudims.hpp"
#include "linearize.hpp"
#include "local_buffers.hpp"
#include "lower_index.hpp"
#include "postopt.hpp"
#include "reduce.hpp"
#include "stage.hpp"
#include "symbolic_stages.hpp"
#include "target.hpp"

namespace uopcg::codegen {

/// The stages in the seed's order (tinygrad/codegen/__init__.py, full_rewrite_to_sink; docs/pipeline.md).
inline constexpr StageInfo pipeline_stages[] = {
    {"postopt symbolic", postopt_symbolic},
    {"expander", expander},
    {"remove reduces", remove_reduces},
    {"add local buffers", add_local_buffers},
    {"add gpudims", add_gpudims},
    {"*** expand broadcast / add loads", expand_broadcast_add_loads},
    {"devectorize2", devectorize2},
    {"early symbolic", early_symbolic},
    {"memory_coalescing", memory_coalescing},
    {"add images", add_images},
    {"extra symbolic", extra_symbolic},
    {"lower all index dtypes", lower_index_dtypes},
    {"final symbolic", final_symbolic},
    {"cast float alu operands", cast_float_alu},
    {"early decompositions", early_decompositions},
    {"decomp dtypes", decomp_dtypes},
    {"late decompositions", late_decompositions},
    {"move gates from index", move_gates_from_index},
    {"final rewrite", final_rewrite},
    {"casted consts", casted_consts},
    {"add implicit barriers", add_implicit_barriers},
    {"add control flow", add_control_flow},
    {"number params with -1", number_params},
};
inline constexpr std::string_view linearize_stage_name = "linearize";

/// The stage named `name`, or nullptr.
constexpr const StageInfo* find_stage(std::string_view name) {
  for (const StageInfo& s : pipeline_stages)
    if (s.name == name) return &s;
  return nullptr;
}

struct PipelineOptions {
  /// Called after every stage with the graph it produced (and after linearizing, with the sink).
  std::function<void(std::string_view stage, UOp graph, double us)> trace;
  /// Stop after this stage and return its graph (no program); empty: run everything.
  std::string_view stop_after;
  /// false: skip "add implicit barriers" (to show what the barriers prevent). The barrier verifier
  /// is then not run either.
  bool barriers = true;
  /// Check the input against the IR's typing rules before the first stage.
  bool verify_input = true;
};

struct PipelineResult {
  UOp sink;                    // the graph after the last stage that ran
  std::vector<UOp> program;    // the linearized program (empty when stopped early)
  std::vector<StageTiming> timings;
  double total_us = 0;
};

/// Runs the pipeline on the post-opts graph `sink`. Fails (uopcg::error) on an ill-typed input
/// (naming the node), on an unknown `stop_after`, and, when `target.verify_barriers`, on a program
/// whose barrier placement the verifier rejects.
inline PipelineResult run_pipeline(UOp sink, const Target& target, const PipelineOptions& options = {}) {
  using clock = std::chrono::steady_clock;
  if (!options.stop_after.empty() && options.stop_after != linearize_stage_name && !find_stage(options.stop_after))
    fail("pipeline: unknown stage '", options.stop_after, "'");
  if (sink.op() != Ops::SINK) fail("pipeline: the input must be a SINK, got ", to_string(sink));
  if (options.verify_input) verify_kernel(sink, "pipeline input");

  PipelineResult r;
  r.timings.reserve(std::size(pipeline_stages) + 1);
  const auto t_start = clock::now();
  auto elapsed_us = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
  };
  UOp g = sink;
  for (const StageInfo& s : pipeline_stages) {
    if (!options.barriers && s.run == &add_implicit_barriers<>) continue;
    const auto t0 = clock::now();
    g = s.run(g, target);
    const double us = elapsed_us(t0, clock::now());
    r.timings.push_back({s.name, us});
    if (options.trace) options.trace(s.name, g, us);
    if (options.stop_after == s.name) {
      r.sink = g;
      r.total_us = elapsed_us(t_start, clock::now());
      return r;
    }
  }
  r.sink = g;
  const auto t0 = clock::now();
  r.program = linearize(g, target);
  const double us = elapsed_us(t0, clock::now());
  r.timings.push_back({linearize_stage_name, us});
  if (options.trace) options.trace(linearize_stage_name, r.program.empty() ? g : r.program.back(), us);
  if (target.prune_barriers && options.barriers) r.program = prune_barriers(r.program);
  if (target.verify_barriers && options.barriers) check_barriers(r.program);
  r.total_us = elapsed_us(t_start, clock::now());
  return r;
}

/// The barrier verifier's findings on `program`, one line per violation; empty when it is sound.
inline std::string barrier_report(std::span<const UOp> program) { return verify_barriers(program).message(); }

/// The linearized program of the post-opts graph `sink`.
inline std::vector<UOp> to_program(UOp sink, const Target& target) { return run_pipeline(sink, target).program; }

/// Post-opts graph -> OpenCL C (pipeline + emitter).
inline render::RenderedKernel compile_opencl(UOp sink, const Target& target) {
  return render::render_opencl(to_program(sink, target), target.renderer);
}

}  // namespace uopcg::codegen
