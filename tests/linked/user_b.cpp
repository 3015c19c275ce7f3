// The second user translation unit: the row-norm kernel through linked::to_program with a stage
// trace, then linked::render_opencl (the emitter, compiled in the implementation translation unit);
// and the AST with explicit opts.
#include <uopcg/compile.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "kernels.hpp"

std::string rownorm_source(std::vector<std::string>& stages) {
  uopcg::Arena a;
  const uopcg::Target target = uopcg::Target::pocl();
  const std::vector<uopcg::UOp> program = uopcg::linked::to_program(
      linked_test::build_rownorm(a), target,
      [&](std::string_view stage, uopcg::UOp, double) { stages.emplace_back(stage); });
  return std::string(uopcg::linked::render_opencl(program, target).source.view());
}

std::string rowsum_unrolled_source() {
  uopcg::Arena a;
  const std::vector<uopcg::Opt> opts = linked_test::rowsum_opts();
  return std::string(
      uopcg::linked::compile_ast_opencl(linked_test::build_rowsum_ast(a), uopcg::Target::pocl(), opts).source.view());
}
