// race_kernels: the LOCAL-memory kernels of local_patterns.hpp as a command, so that
// scripts/race-oracle.sh can run them under Oclgrind like `uopcg run` runs the corpus kernels.
//
//   race_kernels list                                    one line per kernel: NAME BARRIERS
//   race_kernels verify NAME [--drop-barrier N]          the barrier verifier: exit 0 accepted, 3 rejected
//   race_kernels run NAME [--drop-barrier N] [--unverified] [--prune] [--time]
//                                                        runs it on the OpenCL device (UOPCG_OPENCL_DEVICE
//                                                        picks one): PASS/FAIL against the reference, exit
//                                                        0/1; a program the verifier rejects is not run
//                                                        (exit 3) unless --unverified; --prune: compiled
//                                                        with Target::prune_barriers; --time: the median
//                                                        device time of 20 more launches
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <uopcg/codegen/barrier_verifier.hpp>

#include "local_patterns.hpp"

namespace {

void usage() {
  std::fputs(
      "usage: race_kernels list\n"
      "       race_kernels verify NAME [--drop-barrier N]\n"
      "       race_kernels run NAME [--drop-barrier N] [--unverified] [--prune] [--time]\n",
      stderr);
}

std::vector<uopcg_test::LocalPattern> all_kernels() {
  std::vector<uopcg_test::LocalPattern> out = uopcg_test::local_patterns();
  for (auto& k : uopcg_test::builder_local_kernels()) out.push_back(std::move(k));
  return out;
}

int main_(int argc, char** argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  const std::string_view cmd = argv[1];
  const auto kernels = all_kernels();
  if (cmd == "list") {
    for (const auto& k : kernels) std::printf("%s %zu\n", k.name.c_str(), k.barriers);
    return 0;
  }
  if ((cmd != "verify" && cmd != "run") || argc < 3) {
    usage();
    return 2;
  }
  const std::string name = argv[2];
  std::optional<std::size_t> drop;
  bool unverified = false, prune = false, time = false;
  for (int i = 3; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--drop-barrier" && i + 1 < argc) {
      char* end = nullptr;
      const long n = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 0) {
        std::fprintf(stderr, "race_kernels: --drop-barrier: expected a non-negative integer\n");
        return 2;
      }
      drop = static_cast<std::size_t>(n);
    } else if (a == "--unverified" && cmd == "run") {
      unverified = true;
    } else if (a == "--prune" && cmd == "run") {
      prune = true;
    } else if (a == "--time" && cmd == "run") {
      time = true;
    } else {
      std::fprintf(stderr, "race_kernels: unexpected argument '%s'\n", argv[i]);
      usage();
      return 2;
    }
  }
  const uopcg_test::LocalPattern* k = nullptr;
  for (const auto& c : kernels)
    if (c.name == name) k = &c;
  if (!k) {
    std::fprintf(stderr, "race_kernels: no kernel '%s' (race_kernels list)\n", name.c_str());
    return 2;
  }
  uopcg::Arena arena;
  uopcg::Target target = uopcg::Target::pocl();
  target.prune_barriers = prune;
  std::vector<uopcg::UOp> program = uopcg_test::pattern_program(arena, *k, target);
  if (drop) program = uopcg::codegen::drop_barrier(program, *drop);
  const uopcg::codegen::BarrierReport report = uopcg::codegen::verify_barriers(program);
  if (cmd == "verify") {
    if (report.ok()) return 0;
    std::fprintf(stderr, "%s", report.message().c_str());
    return 3;
  }
  if (!report.ok()) {
    std::fprintf(stderr, "race_kernels: the barrier verifier rejects the program%s:\n%s", unverified ? " (running it anyway)" : "",
                 report.message().c_str());
    if (!unverified) return 3;
  }
  uopcg::opencl::Context ctx;
  const uopcg_test::PatternRun run = uopcg_test::run_pattern(ctx, *k, program, target, time ? 20 : 0);
  if (run.mismatches) std::printf("output: %zu elements differ (first: %s)\n", run.mismatches, run.first.c_str());
  std::printf("%s %s on %s%s (%zu barriers)\n", run.mismatches ? "FAIL" : "PASS", k->name.c_str(), ctx.device().name().c_str(),
              drop ? (" [barrier " + std::to_string(*drop) + " dropped]").c_str() : "", uopcg::codegen::count_barriers(program));
  if (time) std::printf("exec_us %.1f\n", run.median_us);
  return run.mismatches ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return main_(argc, argv);
  } catch (const uopcg::error& e) {
    std::fprintf(stderr, "race_kernels: %s\n", e.what());
    return 1;
  }
}
