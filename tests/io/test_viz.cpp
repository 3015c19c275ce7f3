// io/viz.hpp: the page of a corpus kernel's compilation (stages, SVGs, rule attribution, program,
// barriers), the text form of a graph too large to draw, the page of a kernel that fails in a stage,
// and the rewrite observer the recorder rides on. The drawn graphs need Graphviz's dot (Debian
// package graphviz; scripts/test.sh installs it).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <uopcg/codegen/from_ast.hpp>
#include <uopcg/codegen/opt/parse.hpp>
#include <uopcg/codegen/pipeline.hpp>
#include <uopcg/io/json.hpp>
#include <uopcg/io/target.hpp>
#include <uopcg/io/viz.hpp>

using namespace uopcg;

namespace {

std::filesystem::path corpus_kernel(const std::string& name) {
  const char* env = std::getenv("UOPCG_CORPUS");
  return std::filesystem::path(env ? env : "../shared/corpus") / (name + ".json");
}

std::size_t count(std::string_view hay, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = hay.find(needle); at != std::string_view::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

bool dot_installed() { return std::system("dot -V > /dev/null 2>&1") == 0; }

struct Compiled {
  Arena arena;
  io::Kernel kernel;
  Target target;
  io::VizRecorder rec;
};

// doc: record
/// The post-opts pipeline of corpus kernel `name` recorded, its program and OpenCL C included.
void compile_recorded(Compiled& c, const std::string& name) {
  c.kernel = io::load_kernel(c.arena, corpus_kernel(name));
  c.target = io::target_of(c.kernel);
  c.rec.set_input(c.kernel.post_opts.root);
  codegen::PipelineOptions o;
  o.trace = c.rec.stage_hook();
  codegen::PipelineResult r;
  {
    auto observing = c.rec.observe();
    r = codegen::run_pipeline(c.kernel.post_opts.root, c.target, o);
  }
  c.rec.set_source(std::string(render::render_opencl(r.program, c.target.renderer).source.view()));
  c.rec.set_program(r.program);
}
// end doc

/// The stages whose graph the page shows: the first, and each that changed its input.
std::vector<std::size_t> graph_stages(const io::VizRecorder& rec) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < rec.stages().size(); ++k)
    if (k == 0 || rec.stages()[k].graph != rec.stages()[k - 1].graph) out.push_back(k);
  return out;
}

}  // namespace

TEST_CASE("viz: the page of a corpus kernel has every stage, an SVG per changed graph and each node's rule") {
  Compiled c;
  compile_recorded(c, "dmm_stage_local");
  const auto& stages = c.rec.stages();
  REQUIRE(stages.size() == std::size(codegen::pipeline_stages) + 1);  // and linearize
  CHECK(stages.back().name == codegen::linearize_stage_name);

  // the program has a BARRIER: the stage that added it names the rule that made it, and counts it
  bool has_barrier = false;
  for (UOp u : c.rec.program()) has_barrier = has_barrier || u.op() == Ops::BARRIER;
  REQUIRE(has_barrier);
  std::size_t barriers_stage = stages.size();
  for (std::size_t k = 0; k < stages.size(); ++k)
    if (stages[k].name == "add implicit barriers") barriers_stage = k;
  REQUIRE(barriers_stage < stages.size());
  const io::VizOrigin* origin = nullptr;
  UOp barrier;
  for (UOp u : toposort(stages[barriers_stage].graph))
    if (u.op() == Ops::BARRIER) origin = c.rec.origin(u.id()), barrier = u;
  REQUIRE(origin);
  CHECK(origin->stage == barriers_stage);
  REQUIRE(!origin->rule.empty());
  bool counted = false;
  for (const auto& [rule, n] : stages[barriers_stage].rules) counted = counted || (rule == origin->rule && n >= 1);
  CHECK(counted);

  if (!dot_installed()) {
    MESSAGE("Graphviz dot is not installed: only the error is checked");
    CHECK_THROWS_WITH_AS((void)io::viz_html(c.rec), doctest::Contains("graphviz"), uopcg::error);
    return;
  }
  const std::string page = io::viz_html(c.rec);
  CHECK(count(page, "<section class=\"stage-view\"") == stages.size());
  CHECK(count(page, "<li class=") == stages.size());
  const std::size_t graphs = graph_stages(c.rec).size();
  CHECK(graphs > 5);
  CHECK(graphs < stages.size());  // some stages leave the graph as it is
  CHECK(count(page, "<svg") == graphs);
  CHECK(count(page, "data-svgs=\"" + std::to_string(graphs) + "\"") == 1);
  // the node carries its rule, in the SVG of the stage that added it
  const std::string key = "<g id=\"s" + std::to_string(barriers_stage) + "n" + std::to_string(barrier.id()) +
                          "\" class=\"node added\" data-node=\"" + std::to_string(barrier.id()) +
                          "\" data-op=\"BARRIER\" data-rule=\"" + io::detail::viz::escape(origin->rule) + "\"";
  CHECK_MESSAGE(count(page, key) == 1, key);
  CHECK(count(page, "<pre id=\"program\">") == 1);
  CHECK(count(page, "<pre id=\"opencl\">") == 1);
  CHECK(count(page, "barrier(CLK_LOCAL_MEM_FENCE)") >= 1);
  CHECK(count(page, "<pre id=\"barriers\">") == 1);
  CHECK(count(page, "orders LOCAL") >= 1);
  CHECK(count(page, "http://") + count(page, "https://") == count(page, "http://www.w3.org/"));  // only XML namespaces
}

TEST_CASE("viz: a graph over the drawing limit is offered in its text form") {
  if (!dot_installed()) {
    MESSAGE("Graphviz dot is not installed: skipped");
    return;
  }
  Compiled c;
  compile_recorded(c, "dmm_stage_local");
  io::VizOptions o;
  o.max_drawn_nodes = 60;
  const std::string page = io::viz_html(c.rec, o);
  std::size_t large = 0, small = 0;
  for (std::size_t k : graph_stages(c.rec)) {
    const UOp g = c.rec.stages()[k].graph;
    if (toposort(g).size() > o.max_drawn_nodes) {
      ++large;
      CHECK(count(page, io::detail::viz::escape(graph_to_string(g))) >= 1);
    } else {
      ++small;
    }
  }
  CHECK(large > 0);
  CHECK(small > 0);
  CHECK(count(page, "<div class=\"too-large\"") == large);
  CHECK(count(page, "<svg") == small);
}

TEST_CASE("viz: a kernel that fails in a stage gets every stage up to it and the error") {
  if (!dot_installed()) {
    MESSAGE("Graphviz dot is not installed: skipped");
    return;
  }
  Arena a;
  const io::Kernel k = io::load_kernel(a, corpus_kernel("matmul_64"));
  io::VizRecorder rec;
  rec.set_input(k.ast.root);
  codegen::AstOptions o;
  o.opts = codegen::opt::OptsRequest::of(codegen::opt::parse_opts("UPCAST:9:4"));  // the kernel has 3 axes
  o.trace = rec.stage_hook();
  std::vector<std::string_view> order;
  for (const auto& s : codegen::front_stages) order.push_back(s.name);
  order.push_back(codegen::apply_opts_stage_name);
  try {
    auto observing = rec.observe();
    (void)codegen::run_from_ast(k.ast.root, io::target_of(k), o);
    FAIL("UPCAST:9:4 was accepted");
  } catch (const uopcg::error& e) {
    rec.set_failure(e.what(), order);
  }
  CHECK(rec.stages().size() == std::size(codegen::front_stages));
  CHECK(rec.failed_stage() == codegen::apply_opts_stage_name);
  CHECK(rec.error().find("UPCAST") != std::string::npos);
  const std::string page = io::viz_html(rec);
  CHECK(count(page, "<section class=\"stage-view\"") == rec.stages().size());
  CHECK(count(page, "<section class=\"stage-view failed\"") == 1);
  CHECK(count(page, io::detail::viz::escape(rec.error())) == 1);
  CHECK(count(page, "<svg") == graph_stages(rec).size());
  CHECK(count(page, "<pre id=\"program\">") == 0);  // no program to show
}

TEST_CASE("viz: the rewrite observer sees rules only while installed, and an inner one gives way to the outer") {
  Compiled c;
  c.kernel = io::load_kernel(c.arena, corpus_kernel("red_sum_4096_group"));
  c.target = io::target_of(c.kernel);
  io::VizRecorder unobserved;
  codegen::PipelineOptions o;
  o.trace = unobserved.stage_hook();
  o.stop_after = "remove reduces";
  (void)codegen::run_pipeline(c.kernel.post_opts.root, c.target, o);  // not observed
  REQUIRE(unobserved.stages().size() == 3);
  for (const auto& s : unobserved.stages()) CHECK(s.rules.empty());

  io::VizRecorder inner, after;
  auto observing = after.observe();
  {
    auto scope = inner.observe();
    o.trace = inner.stage_hook();
    (void)codegen::run_pipeline(c.kernel.post_opts.root, c.target, o);
  }
  o.trace = after.stage_hook();
  (void)codegen::run_pipeline(c.kernel.post_opts.root, c.target, o);
  REQUIRE(inner.stages().size() == 3);
  REQUIRE(after.stages().size() == 3);
  std::size_t fired = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(inner.stages()[k].rules == after.stages()[k].rules);  // the same run, seen by each in turn
    for (const auto& r : inner.stages()[k].rules) fired += r.second;
  }
  CHECK(fired > 0);
}

TEST_CASE("viz: without Graphviz, writing a page with graphs is an error that says so") {
  Compiled c;
  compile_recorded(c, "ew_add_f32");
  io::VizOptions o;
  o.dot = "/nonexistent/dot";
  CHECK_THROWS_WITH_AS((void)io::viz_html(c.rec, o), doctest::Contains("install Graphviz"), uopcg::error);
}
