// The program of docs/embedded.md ("Using the single header"): built against single_include/ alone
// with -fno-exceptions -fno-rtti, as the page's second command line does.
// doc: embedded app
#include <uopcg/uopcg.hpp>
#include <cstdio>

int main() {
  using namespace uopcg;
  Arena a;
  UOp x = param(a, 0, DType::float32, 16), out = param(a, 1, DType::float32, 16);
  UOp i = range(a, 16, 0, AxisType::GLOBAL);
  UOp k = sink(end(store(index(out, i), index(x, i) * 2.0 + 1.0), i));
  std::puts(graph_to_string(k).c_str());
  std::puts(std::string(codegen::compile_opencl(k, Target::pocl()).source.view()).c_str());
}
// end doc
