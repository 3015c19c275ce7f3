// expect: pipeline: the input must be a SINK, got %9 = END void (%8, %3)
// A kernel the pipeline rejects does not compile, and the diagnostic carries the run-time pipeline's
// message, the node at fault included.
#include <uopcg/codegen/constexpr_compile.hpp>
#include <uopcg/core/builder.hpp>
using namespace uopcg;
struct kernel {
  constexpr UOp operator()(Arena& a) const {
    UOp out = param(a, 0, DType::float32, 16), x = param(a, 1, DType::float32, 16);
    UOp i = range(a, 16, 0, AxisType::GLOBAL);
    UOp e = end(store(index(out, i), index(x, i) * 2.0), i);
#ifdef CONTROL
    return sink(e);
#else
    return e;  // the END, not the SINK above it
#endif
  }
};
[[maybe_unused]] constexpr auto compiled = compile_opencl_constexpr<kernel>();
int main() { return 0; }
