// expect: write after read on LOCAL buffer %6 BUFFER float (%5) ParamArg(slot=0, dtype=dtypes.float, addrspace=AddrSpace.LOCAL)
// A kernel whose barrier is missing does not compile, and the diagnostic carries the barrier
// verifier's report, computed parts included (the buffer's program line, the instructions and the
// work-items of the race): a transpose through a LOCAL tile whose read of the tile does not wait for
// its store (no AFTER), so the pipeline puts no BARRIER between them.
#include <uopcg/codegen/constexpr_compile.hpp>
#include <uopcg/core/builder.hpp>
using namespace uopcg;
struct kernel {
  constexpr UOp operator()(Arena& a) const {
    constexpr int n = 32, T = 8;
    UOp out = param(a, 0, DType::float32, n * n), in = param(a, 1, DType::float32, n * n);
    UOp gx = range(a, n / T, 0, AxisType::GLOBAL), gy = range(a, n / T, 1, AxisType::GLOBAL);
    UOp ly = range(a, T, 2, AxisType::LOCAL), lx = range(a, T, 3, AxisType::LOCAL);
    UOp tile = buffer(a, 0, DType::float32, T * (T + 1), AddrSpace::LOCAL);
    UOp fill = store(index(tile, ly * (T + 1) + lx), index(in, (gy * T + ly) * n + gx * T + lx));
#ifdef CONTROL
    UOp st = store(index(out, (gx * T + ly) * n + gy * T + lx), index(after(tile, fill), lx * (T + 1) + ly));
    UOp effect = st;
#else
    UOp st = store(index(out, (gx * T + ly) * n + gy * T + lx), index(tile, lx * (T + 1) + ly));
    UOp effect = group(fill, st);
#endif
    KernelInfo k;
    k.name = "transpose";
    return sink(std::vector<UOp>{end(effect, gx, gy, ly, lx)}, k);
  }
};
[[maybe_unused]] constexpr auto compiled = compile_opencl_constexpr<kernel>();
int main() { return 0; }
