// The pipeline as the `uopcg` sub-commands use it. Only driver.cpp includes codegen/pipeline.hpp
// (every stage's rule sets), so the other command files compile quickly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <uopcg/codegen/target.hpp>
#include <uopcg/core/arena.hpp>
#include <uopcg/io/json.hpp>
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

/// Which opts the front half applies (--opts).
struct OptsChoice {
  enum class Kind { kernel, none, list, heuristic, beam } kind = Kind::kernel;  // kernel: tinygrad's own choice
  std::vector<uopcg::Opt> opts;                                                   // with Kind::list
  std::int64_t beam = 0;  // with Kind::beam: the width of a BEAM search on the OpenCL device
};

/// Where compilation starts: a post-opts graph, or (from_ast) a kernel AST that goes through the
/// front stages and apply_opts with `opts` first.
struct Input {
  uopcg::UOp graph;
  bool from_ast = false;
  OptsChoice opts;
};

/// The input of kernel file `k` for `--from-ast` and `--opts SPEC`: SPEC is applied (the file's
/// applied_opts; the default when the file records them), heuristic, none, beam=N (a BEAM search of
/// width N on the OpenCL device, cached), or an opt list (LOCAL:0:4,UPCAST:1:4). An --opts without
/// --from-ast, or a bad SPEC, is an error.
Input input_of(const uopcg::io::Kernel& k, bool from_ast, const std::string* opts_spec);

/// Runs the pipeline (without its own barrier check) up to `stop_after` (empty: to the program).
CompileResult compile_graph(const Input& input, const uopcg::Target& target, std::string_view stop_after = {},
                            bool barriers = true, const trace_hook& trace = {});

inline CompileResult compile_graph(uopcg::UOp post_opts, const uopcg::Target& target, std::string_view stop_after = {},
                                   bool barriers = true, const trace_hook& trace = {}) {
  return compile_graph(Input{post_opts, false, {}}, target, stop_after, barriers, trace);
}

/// The stage names, in order, then "linearize" (from_ast: the front stages and apply_opts first).
std::vector<std::string_view> stage_names(bool from_ast = false);

/// The program without its n-th BARRIER (fault injection); fails if it has no such barrier.
std::vector<uopcg::UOp> drop_barrier(std::span<const uopcg::UOp> program, std::size_t n);

/// The barrier verifier's report on `program`: empty when every LOCAL load is properly separated.
std::string barrier_report(std::span<const uopcg::UOp> program);

/// One line per BARRIER of `program`: what it orders (buffer, store -> load or load -> store), or
/// "redundant" when removing it creates no race.
std::string explain_barriers(std::span<const uopcg::UOp> program);

/// A BEAM candidate's post-opts graph to its program, as `search` and --opts beam=N compile them:
/// the pipeline, then the barrier verifier (a program it rejects is an error, so never timed).
std::vector<uopcg::UOp> beam_candidate_program(uopcg::UOp post_opts, const uopcg::Target& target);

/// Input -> OpenCL source, for timing (front half when from_ast, pipeline, render; nothing else).
uopcg::render::RenderedKernel compile_to_source(const Input& input, const uopcg::Target& target);

}  // namespace uopcg_cli
