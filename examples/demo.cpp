// The uopcg demo: a kernel built in C++ goes through the whole codegen pipeline (expander, reduce
// lowering with GROUP_REDUCE through LOCAL memory, ..., implicit barriers, linearize), its OpenCL C
// is printed with per-stage codegen timings, and it runs on the default OpenCL device (PoCL here),
// checked against a plain C++ reference.
//
// The kernel: softmax over the rows of a 32x256 matrix, each row's max reduced by a work-group of 16
// items (GROUP_REDUCE: per-item partials, a LOCAL buffer, a barrier, a second pass), its sum in each item.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <uopcg/codegen/pipeline.hpp>
#include <uopcg/core/builder.hpp>
#include <uopcg/runtime/opencl.hpp>

using namespace uopcg;

namespace {
constexpr int ROWS = 32, COLS = 256, GROUP = 16;

UOp build_softmax(Arena& a) {
  UOp out = param(a, 0, DType::float32, ROWS * COLS), x = param(a, 1, DType::float32, ROWS * COLS);
  UOp row = range(a, ROWS, 0, AxisType::GLOBAL);
  // col = g * (COLS/GROUP) + r: g is the work-group axis the reduction is split over
  UOp g1 = range(a, GROUP, 1, AxisType::GROUP_REDUCE), r1 = range(a, COLS / GROUP, 2, AxisType::REDUCE);
  // the sum: a plain REDUCE in every work-item (a second GROUP_REDUCE axis would make a 16x16 group
  // in which 16 work-items store each partial of either reduction)
  UOp r2 = range(a, COLS, 4, AxisType::REDUCE);
  UOp c = range(a, COLS, 5, AxisType::LOOP);
  constexpr double LOG2E = 1.4426950408889634;
  UOp mx = reduce(index(x, row * COLS + g1 * (COLS / GROUP) + r1), Ops::MAX, g1, r1);
  UOp sum = reduce(exp2((index(x, row * COLS + r2) - mx) * LOG2E), Ops::ADD, r2);
  UOp y = exp2((index(x, row * COLS + c) - mx) * LOG2E) * reciprocal(sum);
  KernelInfo info;
  info.name = "softmax_rows";
  return sink(std::vector<UOp>{end(store(index(out, row * COLS + c), y), row, c)}, info);
}
}  // namespace

int main() {
  Arena a;
  const UOp kernel = build_softmax(a);
  const Target target = Target::pocl();

  std::printf("==== codegen: %d stages, post-opts graph of %zu nodes ====\n",
              static_cast<int>(std::size(codegen::pipeline_stages)), toposort(kernel).size());
  // doc: pipeline
  codegen::PipelineOptions opts;
  opts.trace = [](std::string_view stage, UOp g, double us) {  // after every stage (or io::to_dot(g))
    std::printf("  %9.1f us  %-34.*s %6zu nodes\n", us, static_cast<int>(stage.size()), stage.data(), toposort(g).size());
  };
  const codegen::PipelineResult r = codegen::run_pipeline(kernel, target, opts);  // r.program, r.timings
  const render::RenderedKernel rk = render::render_opencl(r.program, target.renderer);
  // end doc
  std::printf("  total %.1f us, %zu instructions, barrier placement verified\n\n", r.total_us, r.program.size());
  std::printf("==== OpenCL C ====\n%s\n\n", std::string(rk.source.view()).c_str());

  std::vector<float> in(ROWS * COLS);
  std::mt19937 gen(7);
  for (float& v : in) v = std::uniform_real_distribution<float>(-6.f, 6.f)(gen);

  opencl::Context ctx;
  std::printf("==== run on %s / %s ====\n", ctx.device().platform_name().c_str(), ctx.device().name().c_str());
  opencl::CompiledKernel ck(ctx, rk);
  opencl::Buffer bout(ctx, in.size() * sizeof(float)), bin(ctx, in.size() * sizeof(float));
  bin.write(in.data(), in.size() * sizeof(float));
  bout.fill(std::byte{0xFF});
  ck.bind(0, bout);
  ck.bind(1, bin);
  const double us = static_cast<double>(ck.launch().duration_ns()) / 1000.0;
  const auto bytes = bout.read_all();
  std::vector<float> got(in.size());
  std::memcpy(got.data(), bytes.data(), got.size() * sizeof(float));

  double worst = 0;
  for (int i = 0; i < ROWS; ++i) {
    double m = -INFINITY, s = 0;
    for (int j = 0; j < COLS; ++j) m = std::max<double>(m, in[i * COLS + j]);
    for (int j = 0; j < COLS; ++j) s += std::exp(in[i * COLS + j] - m);
    for (int j = 0; j < COLS; ++j) worst = std::max(worst, std::abs(got[i * COLS + j] - std::exp(in[i * COLS + j] - m) / s));
  }
  const bool ok = worst < 1e-5;
  std::printf("  kernel time %.1f us; max |error| vs C++ reference %.2e: %s\n", us, worst, ok ? "OK" : "WRONG");
  return ok ? 0 : 1;
}
