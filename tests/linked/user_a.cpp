// A user translation unit of the linked program: builds kernels and compiles them through the
// declarations-only header; main() also reports what user_b.cpp compiled. Neither user instantiates
// the pipeline: impl.cpp does, once (check_linked.py checks the objects).
#include <uopcg/compile.hpp>

#include <string>
#include <vector>

#include "kernels.hpp"

// user_b.cpp
std::string rownorm_source(std::vector<std::string>& stages);
std::string rowsum_unrolled_source();

int main() {
  const uopcg::Target target = uopcg::Target::pocl();
  uopcg::Arena a;
  std::vector<linked_test::Section> kernels;
  kernels.push_back({"elementwise (post-opts graph)",
                     std::string(uopcg::linked::compile_opencl(linked_test::build_elementwise(a), target).source.view())});
  kernels.push_back({"rowsum (AST, tinygrad's choice of opts)",
                     std::string(uopcg::linked::compile_ast_opencl(linked_test::build_rowsum_ast(a), target).source.view())});
  kernels.push_back({"rowsum (AST, UNROLL 0 4)", rowsum_unrolled_source()});
  std::vector<std::string> stages;
  kernels.push_back({"rownorm (post-opts graph)", rownorm_source(stages)});
  return linked_test::report(kernels, stages);
}
