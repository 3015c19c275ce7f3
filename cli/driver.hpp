// The pipeline as the `uopcg` sub-commands use it. Only driver.cpp includes codegen/pipeline.hpp
// (every stage's rule sets), so the other command files compile quickly.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <uopcg/codegen/target.hpp>
#include <uopcg/core/arena.hpp>
#include <uopcg/render/opencl.hpp>

namespace uopcg_cli {

struct StageTime {
  std::string stage;
  double us = 0;
};

struct CompileResult {
  uopcg::UOp graph;                  // the graph after the last stage run
  std::vector<uopcg::UOp> program;   // empty when stopped at a stage
  std::vector<StageTime> timings;
  double total_us = 0;
};

using trace_hook = std::function<void(std::string_view stage, uopcg::UOp graph, double us)>;

/// Runs the pipeline (without its own barrier check) up to `stop_after` (empty: to the program).
CompileResult compile_graph(uopcg::UOp post_opts, const uopcg::Target& target, std::string_view stop_after = {},
                            bool barriers = true, const trace_hook& trace = {});

/// The pipeline's stage names, in order, then "linearize".
std::vector<std::string_view> stage_names();

/// The program without its n-th BARRIER (fault injection); fails if it has no such barrier.
std::vector<uopcg::UOp> drop_barrier(std::span<const uopcg::UOp> program, std::size_t n);

/// The barrier verifier's report on `program`: empty when every LOCAL load is properly separated.
std::string barrier_report(std::span<const uopcg::UOp> program);

/// Post-opts graph -> OpenCL source, for timing (pipeline + render, nothing else).
uopcg::render::RenderedKernel compile_to_source(uopcg::UOp post_opts, const uopcg::Target& target);

}  // namespace uopcg_cli
