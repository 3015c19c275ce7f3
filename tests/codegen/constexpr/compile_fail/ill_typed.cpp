// expect: pipeline input: node 8 (WHERE float) is a WHERE whose condition is not bool
// A graph that breaks a typing rule does not compile, and the diagnostic names the node at fault as
// the run-time pipeline's message does.
#include <uopcg/codegen/constexpr_compile.hpp>
#include <uopcg/core/builder.hpp>
using namespace uopcg;
struct kernel {
  constexpr UOp operator()(Arena& a) const {
    UOp out = param(a, 0, DType::float32, 16), x = param(a, 1, DType::float32, 16);
    UOp i = range(a, 16, 0, AxisType::GLOBAL);
    UOp v = index(x, i);
#ifdef CONTROL
    UOp c = v < 0.0;  // relu
#else
    UOp c = v;  // the value itself as the condition
#endif
    return sink(end(store(index(out, i), where(c, v * 0.0, v)), i));
  }
};
[[maybe_unused]] constexpr auto compiled = compile_opencl_constexpr<kernel>();
int main() { return 0; }
