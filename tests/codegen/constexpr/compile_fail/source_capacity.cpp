// expect: raise the SourceCapacity argument
// A source longer than the capacity given to compile_opencl_constexpr does not compile, and says
// which argument to raise.
#include <uopcg/codegen/constexpr_compile.hpp>
#include <uopcg/core/builder.hpp>
using namespace uopcg;
struct kernel {
  constexpr UOp operator()(Arena& a) const {
    UOp out = param(a, 0, DType::float32, 16), x = param(a, 1, DType::float32, 16);
    UOp i = range(a, 16, 0, AxisType::GLOBAL);
    return sink(end(store(index(out, i), index(x, i) * 2.0), i));
  }
};
#ifdef CONTROL
[[maybe_unused]] constexpr auto compiled = compile_opencl_constexpr<kernel, constexpr_pocl_target, 4096>();
#else
[[maybe_unused]] constexpr auto compiled = compile_opencl_constexpr<kernel, constexpr_pocl_target, 64>();
#endif
int main() { return 0; }
