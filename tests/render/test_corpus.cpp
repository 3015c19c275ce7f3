// Every corpus kernel: the OpenCL source rendered from its imported `linear` program is
// byte-identical to tinygrad's `source`, and the name, launch sizes and parameter list match
// `function_name` and `program`.
#include <doctest/doctest.h>

#include <string>

#include <uopcg/render/opencl.hpp>

#include "corpus.hpp"

using namespace uopcg;
using uopcg::render::ParamKind;

namespace {

/// First differing line, for a readable failure.
std::string first_difference(std::string_view got, std::string_view want) {
  std::size_t line = 1, i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) {
    if (got[i] == '\n') ++line;
    ++i;
  }
  auto line_at = [](std::string_view s, std::size_t at) {
    std::size_t b = s.rfind('\n', at == 0 ? 0 : at - 1);
    b = b == std::string_view::npos ? 0 : b + 1;
    std::size_t e = s.find('\n', at);
    return std::string(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
  };
  return "line " + std::to_string(line) + "\n  got:  " + line_at(got, i) + "\n  want: " + line_at(want, i);
}

render::OpenCLRenderer target_for(const io::Kernel& k) {
  return k.renderer_kind == "fp16" ? render::OpenCLRenderer::pocl_fp16() : render::OpenCLRenderer::pocl();
}

}  // namespace

TEST_CASE("corpus: rendered source is byte-identical to tinygrad's") {
  const auto kernels = uopcg_test::corpus_kernels();
  REQUIRE(kernels.size() >= 16);
  int identical = 0;
  for (const auto& e : kernels) {
    CAPTURE(e.name);
    Arena a;
    const io::Kernel k = io::load_kernel(a, uopcg_test::corpus_dir() / (e.name + ".json"));
    const render::RenderedKernel rk = render::render_opencl(k.linear.instructions, target_for(k));
    const std::string got(rk.source.view());
    INFO(first_difference(got, k.source));
    CHECK(got == k.source);
    identical += got == k.source;
    CHECK(rk.function_name.view() == k.function_name);
  }
  MESSAGE(identical << " of " << kernels.size() << " corpus kernels render byte-identically");
}

TEST_CASE("corpus: launch sizes and kernel arguments match `program`") {
  for (const auto& e : uopcg_test::corpus_kernels()) {
    CAPTURE(e.name);
    Arena a;
    const io::Kernel k = io::load_kernel(a, uopcg_test::corpus_dir() / (e.name + ".json"));
    const render::RenderedKernel rk = render::render_opencl(k.linear.instructions, target_for(k));
    const io::LaunchInfo& p = k.program;
    CHECK(rk.global_size == p.global_size);
    REQUIRE(rk.local_size.has_value() == p.local_size.has_value());
    if (p.local_size) CHECK(*rk.local_size == *p.local_size);
    CHECK(rk.globals == p.globals);
    CHECK(rk.outs == p.outs);
    CHECK(rk.ins == p.ins);
    REQUIRE(rk.params.size() == p.kernel_args.size());
    for (std::size_t i = 0; i < rk.params.size(); ++i) {
      const auto& got = rk.params[i];
      const auto& want = p.kernel_args[i];
      CAPTURE(i);
      CHECK(got.index == want.index);
      CHECK(want.kind == "buffer");
      CHECK(got.kind == ParamKind::buffer);
      CHECK(got.slot == want.slot);
      CHECK(got.dtype == want.dtype);
      CHECK(got.size == want.size);
      CHECK(got.itemsize == want.itemsize);
      CHECK(got.nbytes == want.nbytes);
      CHECK(want.addrspace == AddrSpace::GLOBAL);
      CHECK(got.addrspace == AddrSpace::GLOBAL);
      CHECK(got.name.view() == "data" + std::to_string(want.slot) + "_" + std::to_string(want.size));
    }
    // the logical dtype of each data entry is the param's tag (emulated half) or its own dtype
    for (const auto& d : k.data.inputs) {
      const auto* prm = rk.param_for_slot(d.slot);
      REQUIRE(prm != nullptr);
      CHECK(prm->logical_dtype.value_or(prm->dtype) == d.dtype);
    }
  }
}

TEST_CASE("corpus: the renderer configs match the corpus renderer objects") {
  const auto index = io::parse_json(io::read_file(uopcg_test::corpus_dir() / "index.json"), "index.json");
  for (const char* kind : {"pocl", "fp16"}) {
    CAPTURE(kind);
    const auto& j = index.at("renderers").at(kind);
    const auto arch = j.at("arch").get<std::string>();
    const render::OpenCLRenderer from_arch = render::OpenCLRenderer::for_arch(arch);
    const render::OpenCLRenderer preset =
        std::string(kind) == "fp16" ? render::OpenCLRenderer::pocl_fp16() : render::OpenCLRenderer::pocl();
    for (const auto* r : {&from_arch, &preset}) {
      CHECK(r->arch.view() == arch);
      CHECK(r->device.view() == j.at("device").get<std::string>());
      CHECK(r->supports_fp16 == j.at("supports_fp16").get<bool>());
      CHECK(r->supports_fp64 == j.at("supports_fp64").get<bool>());
      CHECK(r->supports_bf16 == j.at("supports_bf16").get<bool>());
      CHECK(r->has_local == j.at("has_local").get<bool>());
      CHECK(r->has_shared == j.at("has_shared").get<bool>());
      CHECK(r->has_threads == j.at("has_threads").get<bool>());
      CHECK(r->supports_float4 == j.at("supports_float4").get<bool>());
      CHECK(r->shared_max == j.at("shared_max").get<std::int64_t>());
      for (int d = 0; d < 3; ++d) {
        CHECK(r->global_max[d] == j.at("global_max")[d].get<std::int64_t>());
        CHECK(r->local_max[d] == j.at("local_max")[d].get<std::int64_t>());
      }
      CHECK(j.at("global_prod_max").is_null() == !r->global_prod_max.has_value());
      CHECK(r->tensor_cores == j.at("tensor_cores").get<int>());
    }
  }
}
