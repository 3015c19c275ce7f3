// uopcg bench KERNEL.json... [--from-ast [--opts SPEC]] [--exec] [--stages] [--interleave] [--runs N]
// TSV: kernel, codegen_us (median, post-opts graph -> OpenCL source, or with --from-ast the AST ->
// OpenCL source through the front stages and apply_opts; each run on a cleared arena);
// with --exec: exec_us (uopcg's kernel) and ref_exec_us (the file's own source, tinygrad's kernel,
// launched the same way in the same process, launches alternating), medians of device time;
// with --stages: a second table, the median time of every stage (and of the emitter) per kernel.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <cstdio>
#include <string>
#include <vector>

#include <uopcg/io/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "driver.hpp"
#if UOPCG_CLI_HAS_OPENCL
#include "execute.hpp"
#endif

namespace {
void usage() {
  std::fputs("usage: uopcg bench KERNEL.json... [--from-ast [--opts SPEC]] [--exec] [--stages] [--interleave] [--runs N]\n"
             "  prints kernel, codegen_us (and exec_us, ref_exec_us with --exec) as TSV;\n"
             "  --from-ast times AST -> source (front stages, apply_opts with --opts as for compile, pipeline)\n"
             "  --stages then prints stage, then one column per kernel: median us of each stage\n"
             "  --interleave times one compile of each kernel per round, not a kernel's runs in a row\n",
             stderr);
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int uopcg_cmd_bench(int argc, char** argv) {
  std::vector<std::string> files;
  bool exec = false;
  bool stages = false;
  bool interleave = false;
  bool from_ast = false;
  std::optional<std::string> opts;
  long runs = 51;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--exec") exec = true;
    else if (a == "--stages") stages = true;
    else if (a == "--interleave") interleave = true;
    else if (a == "--from-ast") from_ast = true;
    else if (a == "--opts" && i + 1 < argc) opts = argv[++i];
    else if (a == "--runs") runs = uopcg_cli::parse_count("--runs", i + 1 < argc ? argv[++i] : nullptr);
    else if (a == "-h" || a == "--help") { usage(); return 0; }
    else if (!a.empty() && a[0] != '-') files.emplace_back(argv[i]);
    else { std::fprintf(stderr, "uopcg bench: unexpected argument '%s'\n", argv[i]); usage(); return 2; }
  }
  if (files.empty() || runs < 1) { usage(); return 2; }

#if UOPCG_CLI_HAS_OPENCL
  std::optional<uopcg::opencl::Context> ctx;
  if (exec) ctx.emplace();
#else
  if (exec) uopcg::fail_runtime("--exec: this build of uopcg has no OpenCL launcher");
#endif
  std::printf(exec ? "kernel\tcodegen_us\texec_us\tref_exec_us\n" : "kernel\tcodegen_us\n");
  // --stages: per kernel, per stage (then the emitter), the median over the timed runs
  std::vector<std::vector<double>> stage_medians;
  struct Loaded {
    uopcg::Arena arena;
    uopcg::io::Kernel k;
    uopcg::Target target;
    uopcg_cli::Input input;
    // One arena, cleared before each run: nothing is interned when a run starts (a warm arena
    // would find every node already there), and the memory its tables grew is kept, as in a
    // program that compiles kernel after kernel (a new arena per run paid page faults again).
    uopcg::Arena fresh;
    std::vector<double> t;
  };
  std::vector<std::unique_ptr<Loaded>> loaded;
  for (const std::string& file : files) {
    auto l = std::make_unique<Loaded>();
    l->k = uopcg::io::load_kernel(l->arena, file);
    l->target = uopcg_cli::target_for(l->k);
    l->input = uopcg_cli::input_of(l->k, from_ast, opts ? &*opts : nullptr);
    l->t.reserve(static_cast<std::size_t>(runs));
    loaded.push_back(std::move(l));
  }
  // the input copied into a cleared arena
  auto fresh_input = [](Loaded& l) {
    l.fresh.clear();
    uopcg_cli::Input in = l.input;
    in.graph = uopcg::copy_graph(l.input.graph, l.fresh);
    return in;
  };
  auto time_one = [&](Loaded& l) {
    const uopcg_cli::Input in = fresh_input(l);
    const auto t0 = std::chrono::steady_clock::now();
    const uopcg::render::RenderedKernel out = uopcg_cli::compile_to_source(in, l.target);
    l.t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  };
  // By default a kernel's runs follow each other (as tinygrad's figures were taken). --interleave
  // goes round the kernels, one compile of each per round: no run follows one of the same graph,
  // so caches and branch predictors are not trained on it (measured: each compile takes about
  // 45 % longer, on every kernel).
  if (interleave) {
    for (long i = 0; i < runs; ++i)
      for (auto& l : loaded) time_one(*l);
  } else {
    for (auto& l : loaded)
      for (long i = 0; i < runs; ++i) time_one(*l);
  }
  for (std::size_t fi = 0; fi < files.size(); ++fi) {
    const std::string& file = files[fi];
    Loaded& l = *loaded[fi];
    [[maybe_unused]] const uopcg::io::Kernel& k = l.k;  // read by --exec (OpenCL builds)
    const uopcg::Target& target = l.target;
    const std::vector<double>& t = l.t;
    std::printf("%s\t%.1f", uopcg_cli::kernel_name(file).c_str(), median(t));
    if (stages) {
      // separate runs, after the timed ones: the trace's clock reads are not in codegen_us
      std::vector<std::vector<double>> per_stage;
      for (long i = 0; i < runs; ++i) {
        const uopcg_cli::CompileResult r = uopcg_cli::compile_graph(fresh_input(l), target);
        const auto t0 = std::chrono::steady_clock::now();
        const uopcg::render::RenderedKernel rk = uopcg::render::render_opencl(r.program, target.renderer);
        const double render_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        per_stage.resize(r.timings.size() + 1);
        for (std::size_t s = 0; s < r.timings.size(); ++s) per_stage[s].push_back(r.timings[s].us);
        per_stage.back().push_back(render_us);
      }
      std::vector<double> m;
      for (auto& v : per_stage) m.push_back(median(std::move(v)));
      stage_medians.push_back(std::move(m));
    }
#if UOPCG_CLI_HAS_OPENCL
    if (exec) try {
      const uopcg::io::KernelData data = uopcg::io::load_data(k);
      const uopcg::render::RenderedKernel rk = uopcg_cli::compile_to_source(fresh_input(l), target);
      uopcg_cli::Bound ours(*ctx, rk, data);
      if (k.linear.instructions.empty() || k.source.empty())
        uopcg::fail_runtime("the file has no reference program (linear and source) to time against");
      uopcg::render::RenderedKernel ref = uopcg::render::render_opencl(k.linear.instructions, target.renderer);
      ref.source = uopcg::text(std::string_view(k.source));  // tinygrad's own text, launched with the same arguments
      uopcg_cli::Bound theirs(*ctx, ref, data);
      const int n = static_cast<int>(std::max(5L, std::min(runs, 101L)));
      ours.median_us(2);  // warm up both
      theirs.median_us(2);
      // alternating launches: a change of machine load affects both kernels alike
      std::vector<double> to, tt;
      for (int i = 0; i < n; ++i) {
        to.push_back(ours.run_us());
        tt.push_back(theirs.run_us());
      }
      std::printf("\t%.1f\t%.1f", median(to), median(tt));
    } catch (const uopcg::error& e) {
      // e.g. a cl_khr_fp16 kernel on a device without it: no device figure for this file
      std::fprintf(stderr, "uopcg bench: %s: not run: %s\n", file.c_str(), e.what());
      std::printf("\tnan\tnan");
    }
#endif
    std::printf("\n");
    std::fflush(stdout);
  }
  if (stages) {
    std::vector<std::string_view> names = uopcg_cli::stage_names(from_ast);
    names.push_back("render");
    std::printf("\nstage");
    for (const std::string& file : files) std::printf("\t%s", uopcg_cli::kernel_name(file).c_str());
    std::printf("\n");
    for (std::size_t s = 0; s < names.size(); ++s) {
      std::printf("%.*s", static_cast<int>(names[s].size()), names[s].data());
      for (const auto& m : stage_medians) std::printf("\t%.1f", s < m.size() ? m[s] : 0.0);
      std::printf("\n");
    }
  }
  return 0;
}
