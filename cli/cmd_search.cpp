// uopcg search KERNEL.json [--beam N] [--budget SECONDS] [--target T] [--jobs N] [--seed N] [--runs N] [--no-cache]
// BEAM search of the file's AST on the default OpenCL device (UOPCG_OPENCL_DEVICE picks another):
// the front stages, then tinygrad's search (runtime/beam_search.hpp), cached per kernel, target
// and device. Prints the opts found and the device time of the heuristics' choice next to the
// best's (both timed again here, alternately, on the same inputs), ending with the line
//   best OPTS heuristic_us H best_us B
// where OPTS pastes into --opts (none when the search kept the kernel as it was).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <uopcg/codegen/opt/apply_opts.hpp>
#include <uopcg/codegen/opt/parse.hpp>
#include <uopcg/io/json.hpp>
#include <uopcg/runtime/beam_search.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "driver.hpp"

namespace {
void usage() {
  std::fputs(
      "usage: uopcg search KERNEL.json [--beam N] [--budget SECONDS] [--target pocl|fp16|adreno] [--jobs N] [--seed N]\n"
      "                    [--runs N] [--no-cache]\n"
      "  --beam N          beam width (default 4)\n"
      "  --budget SECONDS  stop searching after this long (the best so far is printed, not cached)\n"
      "  --jobs N          threads compiling candidates (default: the CPU count)\n"
      "  --seed N          seed of the random inputs the candidates are checked and timed on\n"
      "  --runs N          launches timing the heuristics' and the best kernel at the end (median; default 20)\n"
      "  --no-cache        neither read nor write the cache (UOPCG_CACHE_DIR, else ~/.cache/uopcg)\n",
      stderr);
}
std::string opts_or_none(const std::vector<uopcg::Opt>& opts) {
  return opts.empty() ? std::string("none") : uopcg::codegen::opt::opts_text(opts).str();
}
}  // namespace

int uopcg_cmd_search(int argc, char** argv) {
  namespace O = uopcg::codegen::opt;
  std::string file, target_name;
  uopcg::opencl::BeamSearchOptions o;
  long runs = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--beam") o.beam.width = static_cast<std::size_t>(uopcg_cli::parse_count("--beam", next)), ++i;
    else if (a == "--budget") {
      char* end = nullptr;
      o.budget_s = next ? std::strtod(next, &end) : -1;
      if (!next || *next == '\0' || *end != '\0' || !(o.budget_s > 0))
        uopcg::fail_runtime("--budget: expected a positive number of seconds");
      ++i;
    } else if (a == "--target" && next) target_name = argv[++i];
    else if (a == "--jobs") o.threads = static_cast<std::size_t>(uopcg_cli::parse_count("--jobs", next)), ++i;
    else if (a == "--seed") o.beam.seed = static_cast<std::uint64_t>(uopcg_cli::parse_count("--seed", next)), ++i;
    else if (a == "--runs") runs = uopcg_cli::parse_count("--runs", next), ++i;
    else if (a == "--no-cache") o.cache = false;
    else if (a == "-h" || a == "--help") { usage(); return 0; }
    else if (!a.empty() && a[0] != '-' && file.empty()) file = argv[i];
    else { std::fprintf(stderr, "uopcg search: unexpected argument '%s'\n", argv[i]); usage(); return 2; }
  }
  if (file.empty()) { usage(); return 2; }
  if (o.beam.width < 1) uopcg::fail_runtime("--beam: the width must be at least 1");
  if (runs < 1) uopcg::fail_runtime("--runs: at least 1");

  uopcg::Arena arena;
  const uopcg::io::Kernel k = uopcg::io::load_kernel(arena, file);
  if (!k.ast.root.valid()) uopcg::fail_runtime(file + ": the kernel file has no ast to search from");
  const uopcg::Target target = uopcg_cli::target_for(k, target_name);
  // the device first: without one, nothing else happens (and nothing reaches the cache)
  const uopcg::opencl::Context ctx;
  const uopcg::UOp front = uopcg_cli::compile_graph(uopcg_cli::Input{k.ast.root, true, {}}, target, "simplify ranges").graph;
  O::Scheduler start(front, target);
  start.convert_loop_to_global();
  // as apply_opts: the heuristics leave kernels with STAGE blocks alone
  const O::Scheduler heuristic = O::detail::has_stage(front) ? start : O::hand_coded_optimizations(start).value_or_fail();

  uopcg::opencl::BeamSearch search(ctx, uopcg_cli::beam_candidate_program, o);
  const uopcg::opencl::BeamSearchResult r = search.search(start);
  const std::vector<uopcg::UOp> posts{heuristic.get_optimized_ast(), r.best.get_optimized_ast()};
  const std::vector<double> us = search.median_times(posts, target, static_cast<int>(runs));

  const uopcg::opencl::BeamSearchStats& s = r.stats;
  auto row = [](const char* what, const O::Scheduler& x, double t) {
    std::printf("%-10s %-40s %-24s %10.2f us\n", what, opts_or_none(x.applied_opts()).c_str(),
                uopcg::function_name(x.kernel_name().view()).str().c_str(), t);
  };
  std::printf("kernel     %s on %s\n", uopcg_cli::kernel_name(file).c_str(), ctx.device().name().c_str());
  row("heuristic", heuristic, us[0]);
  row("best", r.best, us[1]);
  if (s.from_cache) {
    std::printf("search     beam %zu: from the cache (%.3f s); the search timed it at %.2f us\n", o.beam.width, s.wall_s,
                r.best_us);
  } else {
    std::printf("search     beam %zu: %zu rounds, %zu candidates, %zu built, %zu timed (%.2f us), %zu duplicates, "
                "%zu over limits, %zu wrong, %zu failed; %zu threads, %.2f s (codegen %.2f, build and check %.2f, time %.2f)%s\n",
                o.beam.width, s.rounds, s.candidates, s.built, s.timed, r.best_us, s.duplicates, s.over_limits, s.wrong,
                s.failed, search.threads(), s.wall_s, s.codegen_s, s.build_s, s.time_s,
                s.stopped ? "; the budget ran out (not cached)" : "");
  }
  std::printf("best %s heuristic_us %.2f best_us %.2f\n", opts_or_none(r.best.applied_opts()).c_str(), us[0], us[1]);
  return 0;
}
