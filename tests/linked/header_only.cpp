// The reference: the same kernels compiled header-only, in one translation unit, through
// uopcg::codegen's own functions. Its output must equal the linked programs'. Built against the
// single header with -fno-exceptions -fno-rtti, it is also the embedded build's program
// (docs/embedded.md), run under qemu in the aarch64 cross build.
#include <uopcg/uopcg.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "kernels.hpp"

int main() {
  namespace codegen = uopcg::codegen;
  const uopcg::Target target = uopcg::Target::pocl();
  uopcg::Arena a;
  std::vector<linked_test::Section> kernels;
  kernels.push_back({"elementwise (post-opts graph)",
                     std::string(codegen::compile_opencl(linked_test::build_elementwise(a), target).source.view())});
  kernels.push_back({"rowsum (AST, tinygrad's choice of opts)",
                     std::string(codegen::compile_ast_opencl(linked_test::build_rowsum_ast(a), target).source.view())});
  // the arenas as the linked program uses them (user_b.cpp: one per kernel)
  uopcg::Arena b, c;
  kernels.push_back({"rowsum (AST, UNROLL 0 4)",
                     std::string(codegen::compile_ast_opencl(linked_test::build_rowsum_ast(b), target,
                                                             codegen::opt::OptsRequest::of(linked_test::rowsum_opts()))
                                     .source.view())});
  std::vector<std::string> stages;
  codegen::PipelineOptions options;
  options.trace = [&](std::string_view stage, uopcg::UOp, double) { stages.emplace_back(stage); };
  const codegen::PipelineResult r = codegen::run_pipeline(linked_test::build_rownorm(c), target, options);
  kernels.push_back({"rownorm (post-opts graph)", std::string(uopcg::render::render_opencl(r.program, target.renderer).source.view())});
  return linked_test::report(kernels, stages);
}
