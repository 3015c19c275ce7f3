// End to end on the default OpenCL device (PoCL in CI): every corpus kernel executed on PoCL is
// rendered by uopcg from its `linear` program, built and launched through runtime/opencl.hpp with
// the recorded inputs (outputs pre-filled with a 0xFF sentinel), and its outputs must match the
// recorded outputs within `output_tolerance` (0/0 = bit-exact; half compared as half values).
#include <doctest/doctest.h>

#include <string>

#include <uopcg/runtime/opencl.hpp>

#include "../../cli/execute.hpp"
#include "../render/corpus.hpp"

using namespace uopcg;

namespace {

opencl::Context& context() {
  static opencl::Context ctx;  // the default device (UOPCG_OPENCL_DEVICE may pick another)
  return ctx;
}

}  // namespace

TEST_CASE("e2e: every executed corpus kernel, rendered by uopcg, reproduces tinygrad's outputs") {
  opencl::Context& ctx = context();
  MESSAGE("device: " << ctx.device().platform_name() << " / " << ctx.device().name());
  int run = 0, matched = 0, executable = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    if (!e.executed_on_pocl) continue;
    ++executable;
    CAPTURE(e.name);
    Arena a;
    const io::Kernel k = io::load_kernel(a, uopcg_test::corpus_dir() / (e.name + ".json"));
    const io::KernelData data = io::load_data(k);
    const render::OpenCLRenderer target =
        k.renderer_kind == "fp16" ? render::OpenCLRenderer::pocl_fp16() : render::OpenCLRenderer::pocl();
    opencl::CompiledKernel ck(ctx, render::render_opencl(k.linear.instructions, target));

    std::vector<std::pair<std::int64_t, opencl::Buffer>> buffers;
    for (const auto& p : ck.info().params) {
      REQUIRE(p.kind == render::ParamKind::buffer);
      opencl::Buffer b(ctx, static_cast<std::size_t>(p.nbytes));
      if (const io::DataBuffer* in = data.input(p.slot)) {
        REQUIRE(in->bytes.size() == static_cast<std::size_t>(p.nbytes));
        b.write(in->bytes.data(), in->bytes.size());
      } else {
        b.fill(std::byte{0xFF});  // sentinel: every output element must be written
      }
      ck.bind(p.slot, b);
      buffers.emplace_back(p.slot, std::move(b));
    }
    const opencl::Event ev = ck.launch();
    CHECK(ev.duration_ns() > 0);
    ++run;

    bool all = true;
    REQUIRE_FALSE(data.outputs.empty());
    for (const io::DataBuffer& want : data.outputs) {
      CAPTURE(want.slot);
      const opencl::Buffer* buf = nullptr;
      for (const auto& [slot, b] : buffers)
        if (slot == want.slot) buf = &b;
      REQUIRE(buf != nullptr);
      const auto got = buf->read_all();
      REQUIRE(got.size() == want.bytes.size());
      const uopcg_cli::Comparison c = uopcg_cli::compare_output(got, want, k.data.rtol, k.data.atol);
      INFO(c.mismatches << " of " << want.count << " elements differ, first " << c.first);
      CHECK(c.mismatches == 0);
      all = all && c.mismatches == 0;
      // the comparison is not vacuous: the untouched sentinel would not pass
      const std::vector<std::byte> sentinel(want.bytes.size(), std::byte{0xFF});
      CHECK(uopcg_cli::compare_output(sentinel, want, k.data.rtol, k.data.atol).mismatches > 0);
    }
    matched += all;
  }
  CHECK(executable >= 15);
  CHECK(run == executable);
  MESSAGE(matched << " of " << executable << " executed corpus kernels run on the device and match");
}
