// Every corpus kernel compiled by uopcg's own pipeline from its post-opts graph, run on the default
// OpenCL device with the recorded inputs, must reproduce the recorded outputs; and the barrier
// verifier must reject every program obtained by dropping one barrier from a LOCAL-memory kernel.
#include <doctest/doctest.h>

#include <uopcg/codegen/pipeline.hpp>
#include <uopcg/io/target.hpp>
#include <uopcg/runtime/opencl.hpp>

#include "../../cli/execute.hpp"
#include "../render/corpus.hpp"
#include "kernel_runner.hpp"

using namespace uopcg;

using io::target_of;

TEST_CASE("e2e: every executed corpus kernel, compiled by uopcg from its post-opts graph, matches") {
  auto& ctx = uopcg_test::device_context();
  int executable = 0, matched = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    if (!e.executed_on_pocl) continue;
    ++executable;
    CAPTURE(e.name);
    Arena a;
    const io::Kernel k = io::load_kernel(a, uopcg_test::corpus_dir() / (e.name + ".json"));
    const io::KernelData data = io::load_data(k);
    Target t = target_of(k);
    t.verify_barriers = true;
    const render::RenderedKernel rk = codegen::compile_opencl(k.post_opts.root, t);
    INFO(std::string(rk.source.view()));
    uopcg_cli::Bound bound(ctx, rk, data);
    bound.kernel.launch().wait();
    bool all = true;
    for (const io::DataBuffer& want : data.outputs) {
      const opencl::Buffer* b = bound.buffer(want.slot);
      REQUIRE(b != nullptr);
      const auto c = uopcg_cli::compare_output(b->read_all(), want, k.data.rtol, k.data.atol);
      INFO(c.mismatches << " of " << c.count << " differ, first " << c.first);
      CHECK(c.mismatches == 0);
      all = all && c.mismatches == 0;
    }
    matched += all;
  }
  CHECK(executable >= 15);
  MESSAGE(matched << " of " << executable << " corpus kernels compiled by uopcg match on the device");
}

TEST_CASE("barrier verifier: dropping any single barrier of a LOCAL-memory kernel is caught") {
  int kernels = 0, dropped = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    CAPTURE(e.name);
    Arena a;
    const io::Kernel k = io::load_kernel(a, uopcg_test::corpus_dir() / (e.name + ".json"));
    Target t = target_of(k);
    const std::vector<UOp> program = codegen::to_program(k.post_opts.root, t);
    CHECK(codegen::barrier_report(program).empty());
    std::size_t nb = 0;
    for (UOp u : program) nb += u.op() == Ops::BARRIER;
    if (nb == 0) continue;
    ++kernels;
    for (std::size_t n = 0; n < nb; ++n) {
      CAPTURE(n);
      const std::vector<UOp> faulty = codegen::drop_barrier(program, n);
      std::size_t left = 0;
      for (UOp u : faulty) left += u.op() == Ops::BARRIER;
      CHECK(left == nb - 1);
      const std::string report = codegen::barrier_report(faulty);
      CHECK_FALSE(report.empty());
      CHECK(report.find("LOCAL") != std::string::npos);
      ++dropped;
    }
  }
  CHECK(kernels >= 5);
  MESSAGE(dropped << " planted faults in " << kernels << " LOCAL-memory kernels, all rejected");
}

TEST_CASE("e2e: without implicit barriers the tiled GROUP_REDUCE kernels show the race on PoCL where it can") {
  // PoCL runs a work-group's items in a way that hides some races (docs/reference/pocl-races.md);
  // the barrier verifier is the primary guard. Here we only record what PoCL shows.
  auto& ctx = uopcg_test::device_context();
  int differ = 0, tried = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    if (!e.executed_on_pocl) continue;
    Arena a;
    const io::Kernel k = io::load_kernel(a, uopcg_test::corpus_dir() / (e.name + ".json"));
    Target t = target_of(k);
    t.verify_barriers = false;
    codegen::PipelineOptions o;
    o.barriers = false;
    const auto r = codegen::run_pipeline(k.post_opts.root, t, o);
    std::size_t nb = 0;
    for (UOp u : codegen::to_program(k.post_opts.root, target_of(k))) nb += u.op() == Ops::BARRIER;
    if (nb == 0) continue;
    ++tried;
    for (UOp u : r.program) CHECK(u.op() != Ops::BARRIER);
    const io::KernelData data = io::load_data(k);
    uopcg_cli::Bound bound(ctx, render::render_opencl(r.program, t.renderer), data);
    bound.kernel.launch().wait();
    bool all = true;
    for (const io::DataBuffer& want : data.outputs)
      all = all && uopcg_cli::compare_output(bound.buffer(want.slot)->read_all(), want, k.data.rtol, k.data.atol).mismatches == 0;
    differ += !all;
  }
  CHECK(tried >= 5);
  MESSAGE("without barriers, " << differ << " of " << tried << " LOCAL-memory kernels give wrong results on this device");
}
