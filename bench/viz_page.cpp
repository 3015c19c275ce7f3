// The `--viz` page of two large kernels: a 256x256x256 matmul (built here, as the corpus has only a
// 64-wide one; from its AST with tinygrad's heuristic opts) and the corpus softmax's kernels. Prints
// per kernel: stages, graph sizes, how many graphs were drawn (SVG) or left as text, the page's
// size, the time to record the compilation and to write the page (Graphviz included), and the
// time headless Chromium takes to load it (minus its time for an empty page), when installed.
// A report, not a timed test.
//
// usage: viz_page [CORPUS_DIR] [OUT_DIR]   (default: $UOPCG_CORPUS, the current directory)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <uopcg/codegen/from_ast.hpp>
#include <uopcg/codegen/pipeline.hpp>
#include <uopcg/core/builder.hpp>
#include <uopcg/io/json.hpp>
#include <uopcg/io/target.hpp>
#include <uopcg/io/viz.hpp>

using namespace uopcg;

namespace {
using clock_type = std::chrono::steady_clock;
double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

UOp build_matmul(Arena& a, int n) {
  UOp c = param(a, 0, DType::float32, n * n), A = param(a, 1, DType::float32, n * n), B = param(a, 2, DType::float32, n * n);
  UOp i = range(a, n, 0, AxisType::WEAK), j = range(a, n, 1, AxisType::WEAK);
  UOp k = range(a, n, 2, AxisType::REDUCE);
  UOp dot = reduce(index(A, i * n + k) * index(B, k * n + j), Ops::ADD, k);
  return sink(end(store(index(c, i * n + j), dot), i, j));
}

/// Seconds headless Chromium takes to load `url` and print its DOM; negative without Chromium.
double chromium_load_ms(const std::string& url) {
  static const bool have = std::system("command -v chromium > /dev/null 2>&1") == 0;
  if (!have) return -1;
  const std::string cmd = "chromium --headless --disable-gpu --no-sandbox --dump-dom '" + url + "' > /dev/null 2>&1";
  const auto t0 = clock_type::now();
  if (std::system(cmd.c_str()) != 0) return -1;
  return ms_since(t0);
}

void report(const std::string& name, io::VizRecorder& rec, double record_ms, const std::filesystem::path& out_dir,
            double blank_ms) {
  const std::filesystem::path path = out_dir / (name + ".viz.html");
  io::VizOptions o;
  o.title = "uopcg: " + name;
  const auto t0 = clock_type::now();
  io::write_viz(path, rec, o);
  const double write_ms = ms_since(t0);
  std::size_t largest = 0, drawn = 0, text = 0;
  for (std::size_t k = 0; k < rec.stages().size(); ++k) {
    const std::size_t n = toposort(rec.stages()[k].graph).size();
    largest = std::max(largest, n);
    if (k > 0 && rec.stages()[k].graph == rec.stages()[k - 1].graph) continue;
    (n > o.max_drawn_nodes ? text : drawn) += 1;
  }
  std::printf("%-16s stages %2zu  largest graph %5zu nodes  drawn %2zu  text %2zu  page %8.1f KiB  record %7.1f ms  write %8.1f ms",
              name.c_str(), rec.stages().size(), largest, drawn, text,
              static_cast<double>(std::filesystem::file_size(path)) / 1024.0, record_ms, write_ms);
  const double load = chromium_load_ms("file://" + std::filesystem::absolute(path).string());
  if (load >= 0 && blank_ms >= 0) std::printf("  load %7.1f ms", load - blank_ms);
  std::printf("\n");
}
}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("UOPCG_CORPUS");
  const std::filesystem::path corpus = argc > 1 ? argv[1] : env ? env : "../shared/corpus";
  const std::filesystem::path out = argc > 2 ? argv[2] : ".";
  try {
    const std::filesystem::path blank = out / "viz_blank.html";
    std::ofstream(blank) << "<!DOCTYPE html><html><body></body></html>\n";
    const double blank_ms = chromium_load_ms("file://" + std::filesystem::absolute(blank).string());
    if (blank_ms < 0) std::printf("(no chromium: load times not measured)\n");
    else std::printf("chromium start + empty page: %.1f ms (subtracted from the load times)\n", blank_ms);
    {
      Arena a;
      const UOp ast = build_matmul(a, 256);
      io::VizRecorder rec;
      rec.set_input(ast);
      codegen::AstOptions o;
      o.opts = codegen::opt::OptsRequest::heuristics();
      o.trace = rec.stage_hook();
      const auto t0 = clock_type::now();
      {
        auto observing = rec.observe();
        const codegen::AstResult r = codegen::run_from_ast(ast, Target::pocl(), o);
        rec.set_source(std::string(render::render_opencl(r.back.program, Target::pocl().renderer).source.view()));
        rec.set_program(r.back.program);
      }
      report("matmul_256", rec, ms_since(t0), out, blank_ms);
    }
    for (const char* name : {"softmax_rows.k0", "softmax_rows.k1", "softmax_rows.k2"}) {
      Arena a;
      const io::Kernel k = io::load_kernel(a, corpus / (std::string(name) + ".json"));
      const Target t = io::target_of(k);
      io::VizRecorder rec;
      rec.set_input(k.post_opts.root);
      codegen::PipelineOptions o;
      o.trace = rec.stage_hook();
      const auto t0 = clock_type::now();
      {
        auto observing = rec.observe();
        const codegen::PipelineResult r = codegen::run_pipeline(k.post_opts.root, t, o);
        rec.set_source(std::string(render::render_opencl(r.program, t.renderer).source.view()));
        rec.set_program(r.program);
      }
      report(name, rec, ms_since(t0), out, blank_ms);
    }
  } catch (const uopcg::error& e) {
    std::fprintf(stderr, "viz_page: %s\n", e.what());
    return 1;
  }
  return 0;
}
