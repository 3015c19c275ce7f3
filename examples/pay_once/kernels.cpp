// kernels.cpp, and any number of files like it: a few seconds to compile
#include <uopcg/compile.hpp>

std::string scale_kernel() {
  using namespace uopcg;
  Arena a;
  UOp x = param(a, 0, DType::float32, 1024), out = param(a, 1, DType::float32, 1024);
  UOp i = range(a, 1024, 0, AxisType::GLOBAL);
  UOp k = sink(end(store(index(out, i), index(x, i) * 2.0), i));
  return std::string(linked::compile_opencl(k, Target::pocl()).source.view());
}
