// The whole path from a kernel's AST: front stages, apply_opts and the back half. With the corpus
// kernel's recorded opts, every stage equals the snapshot's dump up to apply_opts, and the program
// and its OpenCL C are the ones compiled from the post-opts graph.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include <uopcg/codegen/from_ast.hpp>
#include <uopcg/core/builder.hpp>

#include "../../fuzz/ast_input.hpp"
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

TEST_CASE("from AST: an UPCAST or UNROLL of an axis that indexes where a staged buffer is written is an opt error") {
  // dmm_stage_local's inner matmul is staged in LOCAL memory by its axis 0 and read by its second
  // reduce axis. Lanes of the axis that writes the stage failed deep in devectorize (memory
  // coalescing: an INDEX with two indices), as tinygrad 0.14's codegen fails on them. Lanes of the
  // reduce that reads it read it with a vector index, alone; with lanes of another axis they would
  // meet in the read (tinygrad fails on both: "bad reshape", "too many values to unpack")
  uopcg_test::StagedKernel k("dmm_stage_local");
  auto compile = [&](std::vector<Opt> opts) {
    return codegen::compile_ast_opencl(k.kernel.ast.root, k.target, codegen::opt::OptsRequest::of(std::move(opts)));
  };
  CHECK_THROWS_WITH_AS(compile({Opt{OptOps::UPCAST, 0, Arg::integer(4)}}), doctest::Contains("indexes a staged buffer"), uopcg::error);
  CHECK_THROWS_WITH_AS(compile({Opt{OptOps::LOCAL, 0, Arg::integer(4)}, Opt{OptOps::UPCAST, 0, Arg::integer(2)}}),
                       doctest::Contains("indexes a staged buffer"), uopcg::error);
  CHECK_THROWS_WITH_AS(compile({Opt{OptOps::UNROLL, 0, Arg::integer(4)}, Opt{OptOps::UNROLL, 1, Arg::integer(4)}}),
                       doctest::Contains("lanes would meet other lanes in a read of a staged buffer"), uopcg::error);
  CHECK_THROWS_WITH_AS(compile({Opt{OptOps::UPCAST, 1, Arg::integer(4)}, Opt{OptOps::UNROLL, 1, Arg::integer(4)}}),
                       doctest::Contains("lanes would meet other lanes in a read of a staged buffer"), uopcg::error);
  // the other axes still take them, and the reading reduce alone (its values: test_builder_kernels)
  CHECK_FALSE(compile({Opt{OptOps::UPCAST, 1, Arg::integer(4)}}).source.empty());
  CHECK_FALSE(compile({Opt{OptOps::UNROLL, 0, Arg::integer(4)}}).source.empty());
  CHECK_FALSE(compile({Opt{OptOps::UNROLL, 1, Arg::integer(4)}}).source.empty());
  CHECK_FALSE(compile({Opt{OptOps::UNROLL, 1, Arg::integer(4)}, Opt{OptOps::UNROLL, 1, Arg::integer(2)}}).source.empty());
}

TEST_CASE("from AST: inputs the AST fuzzer crashed on end in a result or an error that names the node or opt") {
  // tests/fuzz/regressions/ast_*.json: inputs of tests/fuzz/fuzz_from_ast.cpp (an AST, its opts as
  // text, a target name) that overflowed, divided by zero or never finished before the fixes
  const std::vector<std::pair<std::string, std::string>> expected = {
      // a REDUCE range sized by a double CONST: its bound was unbounded, and GROUP's "whole axis"
      // overflowed int64
      {"ast_double_sized_range", "node 13 (RANGE weakint; graph node 13) is a RANGE whose size is not an integer"},
      // a RANGE sized by the buffer itself (a PARAM, not a read of it)
      {"ast_range_sized_by_buffer", "node 6 (RANGE weakint; graph node 6) takes the buffer node 5 (PARAM long; graph node 5)"},
      // a serial REDUCE loop sized by loaded longs: GROUP:1:0 (the whole axis) computed vmax + 1 and
      // the shared memory size in overflowing int64 (test_scheduler has the kernel without the
      // graph's other faults); the first fault now is an INDEX of a short buffer typed long
      {"ast_group_whole_unbounded_axis", "node 19 (INDEX long; graph node 19) indexes a buffer whose element dtype differs"},
      // a bool `r % 1`: split ranges split r by 1 again at every visit until memory ran out
      // (test_front_rules has it alone); the AST check stops the bool FLOORMOD first now
      {"ast_split_by_one", "node 5 (FLOORMOD bool; graph node 5) has a source whose dtype is incompatible"},
      // an empty LOCAL range (size -1): symbolic folding divided by zero
      {"ast_empty_range", "is an empty RANGE"},
      // a uchar `r % 8` of a range of size 8 (tinygrad's q4k gemv, mutated): split ranges split the
      // renamed copy again at every visit until memory ran out; it compiles now
      {"ast_split_by_size", ""},
  };
  uopcg_test::check_fuzz_regressions(expected, [](Arena& a, const nlohmann::json& doc) {
    (void)codegen::compile_ast_opencl(uopcg_test::import_fuzz_graph(a, doc.at("ast")),
                                      uopcg_fuzz::ast_target(doc.value("target", "pocl")),
                                      uopcg_fuzz::ast_opts(doc.value("opts", "")));
  });
}
