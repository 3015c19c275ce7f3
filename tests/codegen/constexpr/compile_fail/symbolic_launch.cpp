// expect: a launch size of the kernel depends on a variable
// A kernel whose launch size depends on a variable (tinygrad's Variable bounding a GLOBAL axis) does
// not compile to a constant kernel, which carries fixed sizes only, and says so; with a fixed size it
// does (CONTROL).
#include <uopcg/codegen/constexpr_compile.hpp>
#include <uopcg/core/builder.hpp>
using namespace uopcg;
struct kernel {
  constexpr UOp operator()(Arena& a) const {
    UOp out = param(a, 0, DType::float32, 64), x = param(a, 1, DType::float32, 64);
#ifdef CONTROL
    UOp n = literal(a, 64);
#else
    ParamArg v;
    v.dtype = DType::weakint;
    v.vmin_vmax = std::pair<std::int64_t, std::int64_t>{1, 64};
    v.has_name = true;
    v.name = "n";
    v.addrspace = AddrSpace::ALU;
    UOp n = a.make(Ops::PARAM, DType::weakint, {a.make(Ops::STACK, DType::void_, {})}, v.to_arg());
#endif
    UOp i = range(n, 0, AxisType::GLOBAL);
    return sink(end(store(index(out, i), index(x, i) * 2.0), i));
  }
};
[[maybe_unused]] constexpr auto compiled = compile_opencl_constexpr<kernel>();
int main() { return 0; }
