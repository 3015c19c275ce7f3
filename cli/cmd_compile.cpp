// uopcg compile KERNEL.json [--from-ast [--opts SPEC]] [--stage NAME] [--dot] [--trace] [--drop-barrier N] [--explain-barriers]
//                     [--viz OUT.html] [--target T]
// Compiles the file's post-opts graph (or its AST, through the front stages and apply_opts) and
// prints the OpenCL C (or the graph after a stage). The barrier verifier always checks the final
// program; a rejected program exits with code 3.
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <uopcg/core/print.hpp>
#include <uopcg/io/dot.hpp>
#include <uopcg/io/json.hpp>
#include <uopcg/io/viz.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "driver.hpp"

namespace {
void usage() {
  std::fputs(
      "usage: uopcg compile KERNEL.json [--from-ast [--opts SPEC]] [--stage NAME] [--dot] [--trace] [--drop-barrier N]\n"
      "                     [--explain-barriers] [--viz OUT.html] [--target pocl|fp16|adreno]\n"
      "  --from-ast        start from the file's ast: the front stages and apply_opts, then the pipeline\n"
      "  --opts SPEC       with --from-ast: applied (the file's applied_opts, the default when it has them),\n"
      "                    heuristic, none, beam=N (a BEAM search on the OpenCL device, cached), or a list such as\n"
      "                    LOCAL:0:4,UPCAST:1:4 (default: tinygrad's choice)\n"
      "  --stage NAME      print the graph after stage NAME instead of the OpenCL C ('linearize': the program)\n"
      "  --dot             with --stage: print it as a Graphviz DOT graph\n"
      "  --trace           print per-stage codegen timings on stderr\n"
      "  --drop-barrier N  remove the N-th BARRIER (from 0, program order) before the barrier verifier runs\n"
      "  --explain-barriers  print what each BARRIER orders (buffer, store -> load or load -> store) or that it\n"
      "                    is redundant (removing it creates no race), instead of the OpenCL C\n"
      "  --dump-dir DIR    write the graph after every stage into DIR as NN-<stage>.txt and NN-<stage>.dot\n"
      "  --viz OUT.html    write one self-contained HTML page of the compilation instead of the OpenCL C: stages,\n"
      "                    graphs (laid out by Graphviz dot), rules fired, program and OpenCL C, barriers; a failing\n"
      "                    compilation gets its stages up to the failure and the error (docs/viz.md)\n",
      stderr);
}

/// --viz: the compilation recorded into a page; a failing stage ends the page (and the command,
/// with the error); otherwise the page ends with the program, its OpenCL C and the barriers.
int compile_viz(const uopcg_cli::Input& input, const uopcg::Target& target, std::string_view stop,
                const uopcg_cli::trace_hook& dump, const std::string& path, bool from_ast, std::optional<long> drop,
                const std::string& file) {
  uopcg::io::VizRecorder rec;
  rec.set_input(input.graph);
  auto stage_hook = rec.stage_hook();
  const uopcg_cli::trace_hook hook = [&](std::string_view name, uopcg::UOp g, double us) {
    stage_hook(name, g, us);
    if (dump) dump(name, g, us);
  };
  uopcg::io::VizOptions vo;
  vo.title = "uopcg: " + std::filesystem::path(file).filename().string();
  uopcg_cli::CompileResult r;
  try {
    auto observing = rec.observe();
    r = uopcg_cli::compile_graph(input, target, stop, true, hook);
  } catch (const uopcg::error& e) {
    const std::vector<std::string_view> order = uopcg_cli::stage_names(from_ast);
    rec.set_failure(e.what(), order);
    uopcg::io::write_viz(path, rec, vo);
    std::fprintf(stderr, "uopcg compile: %s (the page %s shows the stages up to the failure)\n", e.what(), path.c_str());
    return 1;
  }
  if (!r.program.empty()) {
    std::vector<uopcg::UOp> program = r.program;
    if (drop) program = uopcg_cli::drop_barrier(program, static_cast<std::size_t>(*drop));
    rec.set_source(std::string(uopcg::render::render_opencl(program, target.renderer).source.view()));
    rec.set_program(std::move(program));
  }
  uopcg::io::write_viz(path, rec, vo);
  std::fprintf(stderr, "uopcg compile: wrote %s (%zu stages)\n", path.c_str(), rec.stages().size());
  if (const std::string report = uopcg_cli::barrier_report(rec.program()); !report.empty()) {
    std::fprintf(stderr, "uopcg compile: the barrier verifier rejects the program of %s:\n%s\n", file.c_str(), report.c_str());
    return 3;
  }
  return 0;
}
}  // namespace

int uopcg_cmd_compile(int argc, char** argv) {
  std::string file, stage, target_name, dump_dir, opts, viz_path;
  bool dot = false, trace = false, from_ast = false, has_opts = false, explain = false;
  std::optional<long> drop;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--stage" && i + 1 < argc) stage = argv[++i];
    else if (a == "--dot") dot = true;
    else if (a == "--from-ast") from_ast = true;
    else if (a == "--opts" && i + 1 < argc) opts = argv[++i], has_opts = true;
    else if (a == "--trace") trace = true;
    else if (a == "--explain-barriers") explain = true;
    else if (a == "--drop-barrier") drop = uopcg_cli::parse_count("--drop-barrier", i + 1 < argc ? argv[++i] : nullptr);
    else if (a == "--target" && i + 1 < argc) target_name = argv[++i];
    else if (a == "--dump-dir" && i + 1 < argc) dump_dir = argv[++i];
    else if (a == "--viz" && i + 1 < argc) viz_path = argv[++i];
    else if (a == "-h" || a == "--help") { usage(); return 0; }
    else if (!a.empty() && a[0] != '-' && file.empty()) file = argv[i];
    else { std::fprintf(stderr, "uopcg compile: unexpected argument '%s'\n", argv[i]); usage(); return 2; }
  }
  if (file.empty()) { usage(); return 2; }
  if (!stage.empty()) {
    bool known = false;
    for (auto n : uopcg_cli::stage_names(from_ast)) known = known || n == stage;
    if (!known) {
      std::fprintf(stderr, "uopcg compile: unknown stage '%s'; stages:", stage.c_str());
      for (auto n : uopcg_cli::stage_names(from_ast)) std::fprintf(stderr, " '%.*s'", static_cast<int>(n.size()), n.data());
      std::fputc('\n', stderr);
      return 2;
    }
    if (drop) { std::fputs("uopcg compile: --drop-barrier applies to the whole pipeline, not to --stage\n", stderr); return 2; }
  }
  if (dot && stage.empty()) { std::fputs("uopcg compile: --dot needs --stage\n", stderr); return 2; }

  uopcg::Arena arena;
  const uopcg::io::Kernel k = uopcg::io::load_kernel(arena, file);
  const uopcg::Target target = uopcg_cli::target_for(k, target_name);
  const std::string_view stop = stage == "linearize" ? std::string_view{} : std::string_view(stage);
  uopcg_cli::trace_hook dump;
  int stage_no = 0;
  if (!dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dump_dir, ec);
    if (ec) uopcg::fail_runtime("--dump-dir " + dump_dir + ": " + ec.message());
    dump = [&](std::string_view name, uopcg::UOp g, double) {
      std::string base(name);
      for (char& c : base)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      char num[8];
      std::snprintf(num, sizeof num, "%02d-", stage_no++);
      const std::string path = dump_dir + "/" + num + base;
      std::ofstream(path + ".txt") << uopcg::graph_to_string(g);
      std::ofstream(path + ".dot") << uopcg::io::to_dot(g, name);
    };
  }
  const uopcg_cli::Input input = uopcg_cli::input_of(k, from_ast, has_opts ? &opts : nullptr);
  if (!viz_path.empty()) return compile_viz(input, target, stop, dump, viz_path, from_ast, drop, file);
  const uopcg_cli::CompileResult r = uopcg_cli::compile_graph(input, target, stop, true, dump);
  if (trace) {
    for (const auto& t : r.timings) std::fprintf(stderr, "%10.1f us  %s\n", t.us, t.stage.c_str());
    std::fprintf(stderr, "%10.1f us  total\n", r.total_us);
  }
  if (!stage.empty() && stage != "linearize") {
    std::fputs((dot ? uopcg::io::to_dot(r.graph, stage) : uopcg::graph_to_string(r.graph)).c_str(), stdout);
    return 0;
  }
  std::vector<uopcg::UOp> program = r.program;
  if (drop) program = uopcg_cli::drop_barrier(program, static_cast<std::size_t>(*drop));
  if (explain) {
    std::fputs(uopcg_cli::explain_barriers(program).c_str(), stdout);
    return 0;
  }
  const auto verify_start = std::chrono::steady_clock::now();
  const std::string report = uopcg_cli::barrier_report(program);
  if (trace)
    std::fprintf(stderr, "%10.1f us  barrier verifier\n",
                 std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - verify_start).count());
  if (!report.empty()) {
    std::fprintf(stderr, "uopcg compile: the barrier verifier rejects the program of %s:\n%s\n", file.c_str(),
                 report.c_str());
    return 3;
  }
  if (stage == "linearize") {
    std::fputs((dot ? uopcg::io::to_dot(program, stage) : uopcg::print_program(program).str()).c_str(), stdout);
    return 0;
  }
  const uopcg::render::RenderedKernel rk = uopcg::render::render_opencl(program, target.renderer);
  std::fputs(rk.source.view().data() ? std::string(rk.source.view()).c_str() : "", stdout);
  std::fputc('\n', stdout);
  return 0;
}
