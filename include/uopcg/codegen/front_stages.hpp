// The front stages: a kernel's AST to the "simplify ranges" graph, the input of apply_opts
// (tinygrad/codegen/__init__.py, full_rewrite_to_sink, before apply_opts):
//   a multi_pm            in-kernel UNSHARD resolved            (multi.hpp)
//   b early movement ops  movement ops folded into INDEX         (early_mops.hpp)
//   c load collapse       one-hot gathers collapsed              (load_collapse.hpp)
//   d split ranges        `r % c` ranges split in two            (split_ranges.hpp)
//   e initial symbolic    sym                                    (symbolic_stages.hpp)
//   f simplify ranges     adjacent ranges merged, gated shrunk   (simplify_ranges.hpp)
// Stages c-f optimise: an AST whose SINK is already tagged (tinygrad's "optimized" mark) skips them.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "ast_check.hpp"
#include "early_mops.hpp"
#include "load_collapse.hpp"
#include "multi.hpp"
#include "simplify_ranges.hpp"
#include "split_ranges.hpp"
#include "stage.hpp"
#include "symbolic_stages.hpp"
#include "target.hpp"

namespace uopcg::codegen {

/// The front stages in tinygrad's order, named as its graph_rewrite calls (and the corpus dumps).
inline constexpr StageInfo front_stages[] = {
    {"multi_pm", multi_pm},
    {"early movement ops", early_movement_ops},
    {"load collapse", load_collapse},
    {"split ranges", split_ranges},
    {"initial symbolic", initial_symbolic},
    {"simplify ranges", simplify_ranges},
};
/// Stages from this index on optimise, and run only on an untagged SINK (tinygrad's `optimize`:
/// a SINK tagged by apply_opts is already optimised; so is a hand-scheduled kernel tagged so).
inline constexpr std::size_t first_optimizing_front_stage = 2;

/// The front stage named `name`, or nullptr.
constexpr const StageInfo* find_front_stage(std::string_view name) {
  for (const StageInfo& s : front_stages)
    if (s.name == name) return &s;
  return nullptr;
}

struct FrontOptions {
  /// Called after every stage that ran with the graph it produced.
  std::function<void(std::string_view stage, UOp graph, double us)> trace;
  /// Stop after this stage and return its graph; empty: run every stage.
  std::string_view stop_after;
  /// Check that the input is a kernel AST before the first stage (check_kernel_ast).
  bool check_input = true;
};

struct FrontResult {
  UOp sink;  // the graph after the last stage that ran
  std::vector<StageTiming> timings;
  double total_us = 0;
  bool optimized = false;  // stages c-f ran (the input SINK had no tag)
};

/// Runs the front stages on the kernel AST `ast`. Fails (uopcg::error) on an input that is not a
/// kernel AST (naming the node) and on an unknown `stop_after`.
inline FrontResult run_front(UOp ast, const Target& target, const FrontOptions& options = {}) {
  using clock = std::chrono::steady_clock;
  if (!options.stop_after.empty() && !find_front_stage(options.stop_after))
    fail("front stages: unknown stage '", options.stop_after, "'");
  if (options.check_input) check_kernel_ast(ast);
  auto elapsed_us = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
  };
  FrontResult r;
  r.optimized = !ast.has_tag();
  r.timings.reserve(std::size(front_stages));
  const auto t_start = clock::now();
  UOp g = ast;
  for (std::size_t i = 0; i < std::size(front_stages); ++i) {
    const StageInfo& s = front_stages[i];
    if (i >= first_optimizing_front_stage && !r.optimized) break;
    const auto t0 = clock::now();
    g = s.run(g, target);
    const double us = elapsed_us(t0, clock::now());
    r.timings.push_back({s.name, us});
    if (options.trace) options.trace(s.name, g, us);
    if (options.stop_after == s.name) break;
  }
  r.sink = g;
  r.total_us = elapsed_us(t_start, clock::now());
  return r;
}

}  // namespace uopcg::codegen
