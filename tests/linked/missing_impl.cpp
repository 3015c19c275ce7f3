// A program that uses the declarations-only header but links no implementation: it must not link,
// and the linker must name the macro to define (check_linked.py --expect-link-error).
#include <uopcg/compile.hpp>

int main() {
  uopcg::Arena a;
  const uopcg::UOp x = uopcg::param(a, 0, uopcg::DType::float32, 4), out = uopcg::param(a, 1, uopcg::DType::float32, 4);
  const uopcg::UOp i = uopcg::range(a, 4, 0, uopcg::AxisType::GLOBAL);
  const uopcg::UOp k = uopcg::sink(uopcg::end(uopcg::store(uopcg::index(out, i), uopcg::index(x, i) + 1.0), i));
  return uopcg::linked::compile_opencl(k, uopcg::Target::pocl()).source.view().empty() ? 1 : 0;
}
