// The codegen pipeline: the seed's stages in the seed's order, from the post-opts graph (the
// expander's input) to the linearized program, for one Target. Each stage is one entry point of a
// stage header (`UOp stage(UOp sink, const Target&)`); this header only orders them, times them,
// and checks the input (typing rules) and the output (barrier placement). The same loop runs in
// constant evaluation (codegen/constexpr_compile.hpp), without the clock.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../core/print.hpp"
#include "../core/text.hpp"
#include "../core/verify.hpp"
#include "../render/opencl.hpp"
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

/// The message the pipeline rejects its input with (not a SINK, or `verify_input` and a typing or
/// scope rule broken), or empty text: checked before the first stage.
constexpr text pipeline_input_problem(UOp sink, bool verify_input = true) {
  text t;  // one variable, no ?: between texts: g++ 12 frees such a temporary twice in constant evaluation
  if (sink.op() != Ops::SINK) t.append("pipeline: the input must be a SINK, got ").append(to_text(sink));
  else if (verify_input) t = kernel_problem(sink, "pipeline input");
  return t;
}

namespace detail {

/// The pipeline's one loop, shared by run time and constant evaluation: `trace(stage, graph, us)`
/// after every stage. Only the clock is skipped in constant evaluation (the times are then 0).
template <class Trace>
constexpr PipelineResult run_pipeline_with(UOp sink, const Target& target, std::string_view stop_after, bool barriers,
                                           bool verify_input, Trace&& trace) {
  using clock = std::chrono::steady_clock;
  auto now = [] { return std::is_constant_evaluated() ? clock::time_point{} : clock::now(); };
  auto elapsed_us = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
  };
  if (!stop_after.empty() && stop_after != linearize_stage_name && !find_stage(stop_after))
    fail("pipeline: unknown stage '", stop_after, "'");
  if (text problem = pipeline_input_problem(sink, verify_input); !problem.empty()) fail(problem.view());

  PipelineResult r;
  r.timings.reserve(std::size(pipeline_stages) + 1);
  const auto t_start = now();
  UOp g = sink;
  for (const StageInfo& s : pipeline_stages) {
    if (!barriers && s.run == &add_implicit_barriers<>) continue;
    const auto t0 = now();
    g = s.run(g, target);
    const double us = elapsed_us(t0, now());
    r.timings.push_back({s.name, us});
    trace(s.name, g, us);
    if (stop_after == s.name) {
      r.sink = g;
      r.total_us = elapsed_us(t_start, now());
      return r;
    }
  }
  r.sink = g;
  const auto t0 = now();
  r.program = linearize(g, target);
  const double us = elapsed_us(t0, now());
  r.timings.push_back({linearize_stage_name, us});
  trace(linearize_stage_name, r.program.empty() ? g : r.program.back(), us);
  if (target.prune_barriers && barriers) r.program = prune_barriers(r.program);
  // not in constant evaluation, where replacing the program failed g++ 12 ("use of allocated storage
  // after deallocation" in the verifier's later read); a constexpr kernel keeps its extra barriers
  else if (barriers && !std::is_constant_evaluated() && has_war_store_barrier(r.program))
    r.program = prune_war_store_barriers(r.program);
  if (target.verify_barriers && barriers) check_barriers(r.program);
  r.total_us = elapsed_us(t_start, now());
  return r;
}

}  // namespace detail

/// Runs the pipeline on the post-opts graph `sink`. Fails (uopcg::error) on an ill-typed input
/// (naming the node), on an unknown `stop_after`, and, when `target.verify_barriers`, on a program
/// whose barrier placement the verifier rejects.
inline PipelineResult run_pipeline(UOp sink, const Target& target, const PipelineOptions& options = {}) {
  return detail::run_pipeline_with(sink, target, options.stop_after, options.barriers, options.verify_input,
                                   [&](std::string_view stage, UOp graph, double us) {
                                     if (options.trace) options.trace(stage, graph, us);
                                   });
}

/// run_pipeline with the default options, usable in constant evaluation (PipelineOptions holds a
/// std::function, which is not).
constexpr PipelineResult run_pipeline_constexpr(UOp sink, const Target& target) {
  return detail::run_pipeline_with(sink, target, {}, true, true, [](std::string_view, UOp, double) {});
}

/// The barrier verifier's findings on `program`, one line per violation; empty when it is sound.
inline std::string barrier_report(std::span<const UOp> program) { return verify_barriers(program).message(); }

/// The linearized program of the post-opts graph `sink`.
constexpr std::vector<UOp> to_program(UOp sink, const Target& target) {
  return run_pipeline_constexpr(sink, target).program;
}

/// Post-opts graph -> OpenCL C (pipeline + emitter); usable in constant evaluation.
constexpr render::RenderedKernel compile_opencl(UOp sink, const Target& target) {
  return render::render_opencl(to_program(sink, target), target.renderer);
}

}  // namespace uopcg::codegen
