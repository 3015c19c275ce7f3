// A kernel compiled by the C++ compiler: the codegen pipeline and the emitter run in constant
// evaluation (codegen/constexpr_compile.hpp), so this program carries the kernel's OpenCL C as a
// character array and no code generation: it only launches. tests: the binary holds none of the
// pipeline's symbols (examples/meson.build).
#include <cmath>
#include <cstdio>
#include <vector>

#include <uopcg/codegen/constexpr_compile.hpp>
#include <uopcg/core/builder.hpp>
#include <uopcg/runtime/opencl.hpp>

namespace {

constexpr int N = 256;

/// out[i] = 2 * x[i] + y[i], over one GLOBAL axis.
struct saxpy {
  constexpr uopcg::UOp operator()(uopcg::Arena& a) const {
    using namespace uopcg;
    UOp out = param(a, 0, DType::float32, N), x = param(a, 1, DType::float32, N), y = param(a, 2, DType::float32, N);
    UOp i = range(a, N, 0, AxisType::GLOBAL);
    KernelInfo info;
    info.name = "saxpy";
    return sink(std::vector<UOp>{end(store(index(out, i), index(x, i) * 2.0 + index(y, i)), i)}, info);
  }
};

constexpr auto kernel = uopcg::compile_opencl_constexpr<saxpy>();
static_assert(kernel.params.size() == 3 && kernel.params[0].written);

}  // namespace

int main() {
  namespace cl = uopcg::opencl;
  std::fputs(kernel.c_str(), stdout);
  std::fputc('\n', stdout);

  cl::Context ctx;
  cl::Program program(ctx, kernel.source());
  cl::Kernel k(program, kernel.function_name.view());
  std::vector<float> x(N), y(N), out(N, 0.f);
  for (int i = 0; i < N; ++i) x[i] = static_cast<float>(i), y[i] = 0.5f * static_cast<float>(i % 7);
  std::vector<cl::Buffer> buffers;
  buffers.reserve(kernel.params.size());
  for (const uopcg::constexpr_param& p : kernel.params) buffers.emplace_back(ctx, static_cast<std::size_t>(p.nbytes));
  buffers[1].write(std::span<const float>(x));
  buffers[2].write(std::span<const float>(y));
  for (const uopcg::constexpr_param& p : kernel.params)
    k.set_arg(static_cast<cl_uint>(p.index), buffers[static_cast<std::size_t>(p.slot)]);
  std::array<std::size_t, 3> global{}, local{};
  for (int d = 0; d < 3; ++d) {
    global[d] = static_cast<std::size_t>(kernel.global_work_size()[d]);
    local[d] = static_cast<std::size_t>(kernel.local_size[d]);
  }
  k.enqueue(global, kernel.has_local_size ? std::optional(local) : std::nullopt).wait();
  buffers[0].read(std::span<float>(out));
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += out[i] != 2.f * x[i] + y[i];
  std::printf("%d of %d outputs wrong\n", bad, N);
  return bad == 0 ? 0 : 1;
}
