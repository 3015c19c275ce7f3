// uopcg run KERNEL.json [--from-ast [--opts SPEC]] [--no-barriers] [--drop-barrier N] [--unverified] [--time] [--runs N]
//           [--target T] [--show N]
// Compiles the file's post-opts graph (or, with --from-ast, its AST as compile does), runs it on the
// default OpenCL device (UOPCG_OPENCL_DEVICE picks another) with the file's inputs and compares with the file's outputs. Exit 0 only on a match;
// 3 when the barrier verifier rejects the program (not run, unless --unverified: fault injection, e.g.
// under Oclgrind to see the race a dropped barrier leaves).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <uopcg/io/json.hpp>
#include <uopcg/runtime/opencl.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "driver.hpp"
#include "execute.hpp"

namespace {
void usage() {
  std::fputs(
      "usage: uopcg run KERNEL.json [--no-barriers] [--drop-barrier N] [--unverified] [--time] [--runs N]\n"
      "                 [--from-ast [--opts SPEC]] [--target pocl|fp16|adreno] [--show N]\n"
      "  --from-ast        start from the file's ast; --opts SPEC as for compile (beam=N: a BEAM search)\n"
      "  --no-barriers     skip the implicit-barrier stage (shows what the barriers prevent)\n"
      "  --drop-barrier N  remove the N-th BARRIER (from 0, program order) before the barrier verifier runs\n"
      "  --unverified      run the program even when the barrier verifier rejects it (its report goes to stderr)\n"
      "  --time            print codegen time and the kernel's median device time\n"
      "  --show N          list the first N differing elements of each output (index, got, expected)\n",
      stderr);
}
}  // namespace

int uopcg_cmd_run(int argc, char** argv) {
  std::string file, target_name;
  bool barriers = true, time = false, unverified = false, from_ast = false;
  std::optional<std::string> opts;
  long runs = 10, show = 0;
  std::optional<long> drop;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--no-barriers") barriers = false;
    else if (a == "--from-ast") from_ast = true;
    else if (a == "--opts" && i + 1 < argc) opts = argv[++i];
    else if (a == "--time") time = true;
    else if (a == "--drop-barrier") drop = uopcg_cli::parse_count("--drop-barrier", i + 1 < argc ? argv[++i] : nullptr);
    else if (a == "--unverified") unverified = true;
    else if (a == "--runs") runs = uopcg_cli::parse_count("--runs", i + 1 < argc ? argv[++i] : nullptr);
    else if (a == "--target" && i + 1 < argc) target_name = argv[++i];
    else if (a == "--show") show = uopcg_cli::parse_count("--show", i + 1 < argc ? argv[++i] : nullptr);
    else if (a == "-h" || a == "--help") { usage(); return 0; }
    else if (!a.empty() && a[0] != '-' && file.empty()) file = argv[i];
    else { std::fprintf(stderr, "uopcg run: unexpected argument '%s'\n", argv[i]); usage(); return 2; }
  }
  if (file.empty() || runs < 1) { usage(); return 2; }
  if (drop && !barriers) { std::fputs("uopcg run: --drop-barrier needs the barriers (not --no-barriers)\n", stderr); return 2; }

  uopcg::Arena arena;
  const uopcg::io::Kernel k = uopcg::io::load_kernel(arena, file);
  const uopcg::io::KernelData data = uopcg::io::load_data(k);
  if (data.outputs.empty()) {
    std::string why = file + ": the file records no outputs to compare with";
    if (!k.program.vars.empty())
      why += " (the kernel has a variable argument, " + k.program.vars.front() +
             ", whose value kernel files do not record: `uopcg compile` it instead)";
    uopcg::fail_runtime(why);
  }
  const uopcg::Target target = uopcg_cli::target_for(k, target_name);
  const uopcg_cli::Input input = uopcg_cli::input_of(k, from_ast, opts ? &*opts : nullptr);
  const uopcg_cli::CompileResult r = uopcg_cli::compile_graph(input, target, {}, barriers);
  std::vector<uopcg::UOp> program = r.program;
  if (drop) program = uopcg_cli::drop_barrier(program, static_cast<std::size_t>(*drop));
  if (barriers) {
    if (const std::string report = uopcg_cli::barrier_report(program); !report.empty()) {
      std::fprintf(stderr, "uopcg run: the barrier verifier rejects the program%s:\n%s\n",
                   unverified ? " (running it anyway: --unverified)" : "", report.c_str());
      if (!unverified) return 3;
    }
  }
  uopcg::render::RenderedKernel rk = uopcg::render::render_opencl(program, target.renderer);
  const std::string fname(rk.function_name.view());

  uopcg::opencl::Context ctx;
  uopcg_cli::Bound bound(ctx, std::move(rk), data);
  const double exec_us = time ? bound.median_us(static_cast<int>(runs)) : bound.median_us(1);
  bool all = true;
  for (const uopcg::io::DataBuffer& want : data.outputs) {
    const uopcg::opencl::Buffer* b = bound.buffer(want.slot);
    if (!b) uopcg::fail_runtime("run: the kernel has no parameter for output slot " + std::to_string(want.slot));
    const uopcg_cli::Comparison c = uopcg_cli::compare_output(b->read_all(), want, k.data.rtol, k.data.atol,
                                                                static_cast<std::size_t>(show));
    if (c.mismatches) {
      all = false;
      std::printf("output slot %lld: %zu of %zu elements differ (first: %s)\n", static_cast<long long>(want.slot),
                  c.mismatches, c.count, c.first.c_str());
      for (const std::string& line : c.listed) std::printf("  %s\n", line.c_str());
    }
  }
  const std::string dropped = drop ? " [barrier " + std::to_string(*drop) + " dropped]" : "";
  std::printf("%s %s (%s) on %s%s\n", all ? "PASS" : "FAIL", uopcg_cli::kernel_name(file).c_str(), fname.c_str(),
              ctx.device().name().c_str(), barriers ? dropped.c_str() : " [barriers removed]");
  if (time) std::printf("codegen_us %.1f\nexec_us %.1f\n", r.total_us, exec_us);
  return all ? 0 : 1;
}
