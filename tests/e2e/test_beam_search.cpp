// BEAM search on the default OpenCL device (PoCL here): a corpus kernel searched from its AST with a
// small beam; the kernel found reproduces the file's recorded outputs; a second search comes from
// the cache without touching the device; a corrupt cache file is ignored with a warning and
// replaced; a search stopped by its budget is not cached; apply_opts takes the search as its hook.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <uopcg/codegen/front_stages.hpp>
#include <uopcg/codegen/pipeline.hpp>
#include <uopcg/io/target.hpp>
#include <uopcg/runtime/beam_search.hpp>

#include "../../cli/execute.hpp"
#include "../render/corpus.hpp"
#include "kernel_runner.hpp"

using namespace uopcg;
namespace O = uopcg::codegen::opt;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "uopcg-beam-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct Captured {
  std::FILE* f = std::tmpfile();
  ~Captured() { std::fclose(f); }
  std::string text() const {
    std::fflush(f);
    std::rewind(f);
    std::string s;
    for (int c; (c = std::fgetc(f)) != EOF;) s.push_back(static_cast<char>(c));
    return s;
  }
};

std::vector<fs::path> cache_files(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::exists(dir))
    for (const auto& f : fs::recursive_directory_iterator(dir))
      if (f.is_regular_file()) out.push_back(f.path());
  return out;
}

/// The back half as the search compiles candidates.
std::vector<UOp> to_program(UOp g, const Target& t) { return codegen::to_program(g, t); }

std::string opts_of(const O::Scheduler& k) { return O::opts_text(k.applied_opts()).str(); }

/// Runs the post-opts graph `post` with the file's inputs: the number of output elements that
/// differ from the file's outputs.
std::size_t mismatches(UOp post, const Target& t, const io::Kernel& k, const io::KernelData& data) {
  uopcg_cli::Bound bound(uopcg_test::device_context(), codegen::compile_opencl(post, t), data);
  bound.kernel.launch().wait();
  std::size_t bad = 0;
  for (const io::DataBuffer& want : data.outputs) {
    const opencl::Buffer* b = bound.buffer(want.slot);
    REQUIRE(b != nullptr);
    bad += uopcg_cli::compare_output(b->read_all(), want, k.data.rtol, k.data.atol).mismatches;
  }
  return bad;
}

}  // namespace

TEST_CASE("BEAM on the device: a corpus kernel's search, its outputs, the cache") {
  auto& ctx = uopcg_test::device_context();
  TempDir dir;
  Captured warnings;
  Arena a;
  const io::Kernel k = io::load_kernel(a, uopcg_test::corpus_dir() / "red_sum_rows_f32.json");
  const io::KernelData data = io::load_data(k);
  const Target t = io::target_of(k);
  const UOp front = codegen::run_front(k.ast.root, t).sink;
  O::Scheduler start(front, t);
  start.convert_loop_to_global();

  opencl::BeamSearchOptions o;
  o.beam.width = 2;
  o.budget_s = 120;  // a safety net: the search ends by its rule long before
  o.threads = 2;
  o.cache_dir = dir.path;
  o.warnings = warnings.f;
  opencl::BeamSearch search(ctx, to_program, o);
  CHECK(search.threads() == 2);

  const opencl::BeamSearchResult r = search.search(start);
  MESSAGE("red_sum_rows_f32, beam 2: " << opts_of(r.best) << " at " << r.best_us << " us; " << r.stats.rounds << " rounds, "
                                       << r.stats.candidates << " candidates, " << r.stats.timed << " timed, " << r.stats.duplicates
                                       << " duplicates, " << r.stats.wall_s << " s");
  CHECK(!r.stats.from_cache);
  CHECK(!r.stats.stopped);
  CHECK(r.stats.rounds >= 2);
  CHECK(r.stats.candidates >= 16);  // the first round alone has 16 (tests/codegen/opt/test_beam.cpp)
  CHECK(r.stats.timed > 0);
  CHECK(r.stats.built == r.stats.timed);
  CHECK(r.stats.wrong == 0);
  CHECK(r.stats.failed == 0);
  CHECK(std::isfinite(r.best_us));
  CHECK(r.best_us > 0);
  CHECK(!r.best.applied_opts().empty());
  CHECK(warnings.text().empty());
  // the kernel found computes what tinygrad's did
  CHECK(mismatches(r.best.get_optimized_ast(), t, k, data) == 0);
  REQUIRE(cache_files(dir.path).size() == 1);

  // (steps one after the other, not SUBCASEs: each of those would run the search above again)
  {  // a second search comes from the cache, without the device
    const auto t0 = std::chrono::steady_clock::now();
    const opencl::BeamSearchResult again = search.search(start);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(again.stats.from_cache);
    CHECK(again.stats.built == 0);
    CHECK(again.stats.timed == 0);
    CHECK(opts_of(again.best) == opts_of(r.best));
    CHECK(again.best_us == r.best_us);
    CHECK(again.best.ast() == r.best.ast());
    CHECK(s < 1.0);
    // apply_opts with the search as its hook
    const UOp post = O::apply_opts(front, t, O::OptsRequest::beam_search(2, search.opt_search()));
    CHECK(post == r.best.get_optimized_ast());
    // another width is another key
    CHECK(search.cache_key(start, 3) != search.cache_key(start));
  }
  {  // a corrupt cache file is ignored with a warning and replaced
    const fs::path file = cache_files(dir.path)[0];
    std::ofstream(file, std::ios::trunc) << "uopcg beam cache 1\nkey ast 00\nopts LOCAL:0:4\n";
    opencl::BeamSearchOptions quick = o;
    quick.beam.max_rounds = 1;  // another key: seed its file, then damage it
    opencl::BeamSearch one_round(ctx, to_program, quick);
    const opencl::BeamSearchResult first = one_round.search(start);
    CHECK(first.stats.rounds == 1);
    REQUIRE(cache_files(dir.path).size() == 2);
    const fs::path quick_file = runtime::BeamCache(dir.path).path_of(one_round.cache_key(start));
    std::ofstream(quick_file, std::ios::app) << "trailing garbage\n";
    const opencl::BeamSearchResult second = one_round.search(start);
    CHECK(!second.stats.from_cache);
    CHECK(second.stats.timed > 0);
    const std::string w = warnings.text();
    CHECK(w.find("ignoring the corrupt cache file " + quick_file.string()) != std::string::npos);
    CHECK(one_round.search(start).stats.from_cache);  // replaced by a good one
    // the first file, damaged above, is not trusted either
    CHECK(!runtime::BeamCache(dir.path, nullptr).load(search.cache_key(start)));
  }
  {  // a search stopped by its budget is not cached
    opencl::BeamSearchOptions tiny = o;
    tiny.budget_s = 1e-6;
    tiny.beam.width = 3;
    opencl::BeamSearch stopped(ctx, to_program, tiny);
    const opencl::BeamSearchResult s = stopped.search(start);
    CHECK(s.stats.stopped);
    CHECK(s.stats.rounds == 1);
    CHECK(cache_files(dir.path).size() == 2);
    CHECK(!stopped.search(start).stats.from_cache);
  }
}

TEST_CASE("BEAM on the device: a candidate that computes something else is left out") {
  auto& ctx = uopcg_test::device_context();
  Arena a;
  const Target t = Target::pocl();
  // out[r1] = sum_r0 in[r1*16 + r0], a kernel as the front stages leave it
  UOp out = param(a, 0, DType::float32, 16), in = param(a, 1, DType::float32, 256);
  UOp r1 = range(a, 16, 1, AxisType::WEAK), r0 = range(a, 16, 0, AxisType::REDUCE);
  O::Scheduler start(sink(end(store(index(out, r1), reduce(index(in, r1 * 16 + r0), Ops::ADD, r0)), r1)), t);
  start.convert_loop_to_global();
  // a back half that gets every kernel but the first (the starting one) wrong: its sums become maxima
  int calls = 0;
  auto miscompile = [&calls](UOp g, const Target& target) {
    if (calls++ == 0) return codegen::to_program(g, target);
    std::vector<std::pair<UOp, UOp>> m;
    for (UOp u : toposort(g))
      if (u.op() == Ops::REDUCE)
        m.emplace_back(u, u.arena().make(Ops::REDUCE, u.dtype(), u.srcs().to_vector(), Arg::tuple_of(Ops::MAX, u.arg()[1])));
    return codegen::to_program(substitute(g, m), target);
  };
  Captured warnings;
  opencl::BeamSearchOptions o;
  o.beam.width = 2;
  o.beam.max_rounds = 1;
  o.threads = 1;  // the counter above is not atomic
  o.cache = false;
  o.warnings = warnings.f;
  opencl::BeamSearch search(ctx, miscompile, o);
  const opencl::BeamSearchResult r = search.search(start);
  CHECK(r.stats.built > 0);
  CHECK(r.stats.wrong == r.stats.built);
  CHECK(r.stats.timed == 0);
  CHECK(r.best.applied_opts().empty());  // nothing timed: the starting kernel
  CHECK(std::isinf(r.best_us));
  const std::string w = warnings.text();
  CHECK(w.find("computes other outputs than the starting kernel (output slot 0, element 0: ") != std::string::npos);
  CHECK(static_cast<std::size_t>(std::count(w.begin(), w.end(), '\n')) == r.stats.wrong);
}

TEST_CASE("BEAM on the device: median_times compares opt choices on the same inputs") {
  auto& ctx = uopcg_test::device_context();
  Arena a;
  const io::Kernel k = io::load_kernel(a, uopcg_test::corpus_dir() / "matmul_64.json");
  const Target t = io::target_of(k);
  const UOp front = codegen::run_front(k.ast.root, t).sink;
  opencl::BeamSearchOptions o;
  o.cache = false;
  opencl::BeamSearch search(ctx, to_program, o);
  const std::vector<UOp> posts{O::apply_opts(front, t, O::OptsRequest::no_opts()), O::apply_opts(front, t, O::OptsRequest::heuristics())};
  const std::vector<double> us = search.median_times(posts, t, 5);
  REQUIRE(us.size() == 2);
  CHECK(us[0] > 0);
  CHECK(us[1] > 0);
  MESSAGE("matmul_64: no opts " << us[0] << " us, heuristics " << us[1] << " us");
}

TEST_CASE("BEAM on the device: a kernel with a tinygrad Variable (slot -1 in the graph) is searched at the middle of its bounds") {
  // tinygrad's Variable is PARAM(STACK()) in the ALU address space with slot -1; the emitter numbers
  // it after the buffers, so the search reads its bounds from the rendered parameter
  auto& ctx = uopcg_test::device_context();
  Arena a;
  const Target t = Target::pocl();
  ParamArg v;
  v.dtype = DType::weakint;
  v.vmin_vmax = std::pair<std::int64_t, std::int64_t>{1, 32};
  v.has_name = true;
  v.name = "n";
  v.addrspace = AddrSpace::ALU;
  UOp n = a.make(Ops::PARAM, DType::weakint, {a.make(Ops::STACK, DType::void_, {})}, v.to_arg());
  // out[r1] = sum_r0 in[r1*16 + r0] over the first n rows
  UOp out = param(a, 0, DType::float32, 32), in = param(a, 1, DType::float32, 32 * 16);
  UOp r1 = range(n, 1, AxisType::WEAK), r0 = range(a, 16, 0, AxisType::REDUCE);
  O::Scheduler start(sink(end(store(index(out, r1), reduce(index(in, r1 * 16 + r0), Ops::ADD, r0)), r1)), t);
  start.convert_loop_to_global();
  opencl::BeamSearchOptions o;
  o.beam.width = 2;
  o.beam.max_rounds = 1;
  o.threads = 1;
  o.cache = false;
  opencl::BeamSearch search(ctx, to_program, o);
  const opencl::BeamSearchResult r = search.search(start);
  CHECK(r.stats.built > 0);
  CHECK(r.stats.wrong == 0);
  CHECK(r.stats.timed > 0);
  CHECK(std::isfinite(r.best_us));
  // timed where tinygrad times it, (vmin + vmax) / 2, not at the bound the buffers are sized for
  render::KernelParam p;
  p.kind = render::ParamKind::var;
  p.var_min = 1;
  p.var_max = 32;
  CHECK(opencl::detail::beam::var_timing_value(p) == 16);
  p.var_max = std::numeric_limits<std::int32_t>::max();
  CHECK_THROWS_WITH(opencl::detail::beam::var_timing_value(p), doctest::Contains("has no bounds"));
}
