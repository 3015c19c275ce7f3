// The whole path from a kernel's AST: front stages, apply_opts and the back half. With the corpus
// kernel's recorded opts, every stage equals the snapshot's dump up to apply_opts, and the program
// and its OpenCL C are the ones compiled from the post-opts graph.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <uopcg/codegen/from_ast.hpp>
#include <uopcg/core/builder.hpp>

#include "../stage_harness.hpp"

using namespace uopcg;

namespace {
std::vector<Opt> recorded_opts(const io::Kernel& k) {
  std::vector<Opt> out;
  for (const Arg& a : k.applied_opts) out.push_back(Opt::from(a));
  return out;
}
}  // namespace

TEST_CASE("from AST: the recorded opts reproduce every front stage and the post-opts program, on every corpus kernel") {
  int kernels = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    INFO(e.name);
    codegen::AstOptions o;
    o.opts = codegen::opt::OptsRequest::of(recorded_opts(k.kernel));
    std::vector<std::string> differing;
    bool front_done = false;
    o.trace = [&](std::string_view stage, UOp g, double) {
      if (front_done) return;
      if (g != k.after(stage)) differing.emplace_back(stage);
      front_done = stage == codegen::apply_opts_stage_name;
    };
    const codegen::AstResult r = codegen::run_from_ast(k.kernel.ast.root, k.target, o);
    CHECK_MESSAGE(differing.empty(), "stages that differ from the dump: " << differing.size() << (differing.empty() ? "" : " first: " + differing.front()));
    CHECK(r.post_opts == k.after(codegen::apply_opts_stage_name));
    // the file's post_opts is the graph after "postopt symbolic", which is idempotent on it
    const auto from_post_opts = codegen::run_pipeline(k.kernel.post_opts.root, k.target);
    CHECK(r.back.program == from_post_opts.program);
    CHECK(render::render_opencl(r.back.program, k.target.renderer).source.view() ==
          render::render_opencl(from_post_opts.program, k.target.renderer).source.view());
    CHECK(render::render_opencl(r.back.program, k.target.renderer).function_name.view() == k.kernel.function_name);
    ++kernels;
  }
  CHECK(kernels == 16);
}

TEST_CASE("from AST: tinygrad's own choice (opts_to_apply, else the heuristics) gives the corpus kernel") {
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    INFO(e.name);
    codegen::AstOptions o;
    o.stop_after = codegen::apply_opts_stage_name;
    CHECK(codegen::run_from_ast(k.kernel.ast.root, k.target, o).post_opts == k.after(codegen::apply_opts_stage_name));
  }
}

TEST_CASE("from AST: stop_after, trace order and errors") {
  uopcg_test::StagedKernel k("red_sum_4096_group");
  std::vector<std::string> seen;
  codegen::AstOptions o;
  o.trace = [&](std::string_view stage, UOp, double) { seen.emplace_back(stage); };
  o.stop_after = "apply_opts";
  const auto r = codegen::run_from_ast(k.kernel.ast.root, k.target, o);
  CHECK(r.back.sink == k.after("apply_opts"));
  CHECK(r.back.program.empty());
  REQUIRE(seen.size() == std::size(codegen::front_stages) + 1);
  CHECK(seen.front() == "multi_pm");
  CHECK(seen.back() == "apply_opts");

  o.stop_after = "expander";
  seen.clear();
  CHECK(codegen::run_from_ast(k.kernel.ast.root, k.target, o).back.sink == k.after("expander"));
  CHECK(seen.back() == "expander");

  o.stop_after = "no such stage";
  CHECK_THROWS_WITH_AS(codegen::run_from_ast(k.kernel.ast.root, k.target, o),
                       doctest::Contains("unknown stage 'no such stage'"), uopcg::error);
  // an opt on a missing axis names the opt
  codegen::AstOptions bad;
  bad.opts = codegen::opt::OptsRequest::of({Opt{OptOps::UPCAST, 7, Arg::integer(4)}});
  CHECK_THROWS_WITH_AS(codegen::run_from_ast(k.kernel.ast.root, k.target, bad), doctest::Contains("Opt(op=OptOps.UPCAST, axis=7"),
                       uopcg::error);
}
