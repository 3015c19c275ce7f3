// A user's path: kernels written with the builder as plain loops — WEAK ranges for the outputs (loops
// the optimizer may spread over work-groups and work-items: tinygrad's kind for a scheduled kernel's
// output axes), REDUCE ranges for the reductions, no GPU axes placed by hand — compiled from that AST
// by uopcg alone (front stages, kernel opts, the pipeline), run on the default OpenCL device and
// checked against plain C++.
//
//   matmul:  C[i, j] = sum_k A[i, k] * B[k, j]                          (512 x 512 x 512)
//   softmax: Y[r, c] = exp(X[r, c] - max_c X[r, :]) / sum_c exp(X[r, c] - max)   (256 rows of 512)
//   prefix:  out[r] = sum_{c < n} X[r, c] for r < m, with m and n variables set at launch
//
// Each is compiled with no opts (one work-item per output), with tinygrad's hand-coded heuristics,
// and with the opts given as text (the prefix sums with tinygrad's choice only); the kernel time of
// each is printed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <uopcg/codegen/from_ast.hpp>
#include <uopcg/codegen/opt/parse.hpp>
#include <uopcg/core/builder.hpp>
#include <uopcg/runtime/opencl.hpp>

using namespace uopcg;

namespace {
constexpr int N = 512;              // matmul size
constexpr int ROWS = 256, COLS = 512;  // softmax shape

// doc: matmul
UOp build_matmul(Arena& a) {                                // the arena owns every node
  UOp c = param(a, 0, DType::float32, N * N);               // buffer argument 0: the output
  UOp A = param(a, 1, DType::float32, N * N), B = param(a, 2, DType::float32, N * N);
  UOp i = range(a, N, 0, AxisType::WEAK), j = range(a, N, 1, AxisType::WEAK);   // output axes
  UOp k = range(a, N, 2, AxisType::REDUCE);                 // the reduction's axis
  UOp dot = reduce(index(A, i * N + k) * index(B, k * N + j), Ops::ADD, k);
  return sink(end(store(index(c, i * N + j), dot), i, j));  // C[i, j] = sum_k A[i, k] * B[k, j]
}
// end doc

UOp build_softmax(Arena& a) {
  UOp y = param(a, 0, DType::float32, ROWS * COLS), x = param(a, 1, DType::float32, ROWS * COLS);
  UOp r = range(a, ROWS, 0, AxisType::WEAK), c = range(a, COLS, 1, AxisType::WEAK);
  // each reduction has a range of its own: a range belongs to the one REDUCE that closes it
  UOp c1 = range(a, COLS, 2, AxisType::REDUCE), c2 = range(a, COLS, 3, AxisType::REDUCE);
  constexpr double LOG2E = 1.4426950408889634;
  UOp mx = reduce(index(x, r * COLS + c1), Ops::MAX, c1);
  UOp sum = reduce(exp2((index(x, r * COLS + c2) - mx) * LOG2E), Ops::ADD, c2);
  return sink(end(store(index(y, r * COLS + c), exp2((index(x, r * COLS + c) - mx) * LOG2E) * reciprocal(sum)), r, c));
}

// doc: variable
// out[r] = sum of X[r, :n] for the first m rows: m and n are given at launch, within their bounds
UOp build_prefix_sums(Arena& a) {
  UOp out = param(a, 0, DType::float32, ROWS), x = param(a, 1, DType::float32, ROWS * COLS);
  UOp m = variable(a, "m", 1, ROWS), n = variable(a, "n", 1, COLS);   // slots chosen by the pipeline
  UOp r = range(m, 0, AxisType::WEAK), c = range(n, 1, AxisType::REDUCE);
  return sink(end(store(index(out, r), reduce(index(x, r * COLS + c), Ops::ADD, c)), r));
}
// end doc

std::vector<float> random_floats(std::size_t n, unsigned seed, float lo, float hi) {
  std::vector<float> v(n);
  std::mt19937 gen(seed);
  for (float& f : v) f = std::uniform_real_distribution<float>(lo, hi)(gen);
  return v;
}

struct Run {
  std::string name;
  double us = 0;
  double worst = 0;  // max |error| against the C++ reference
};

// Runs `rk` on `inputs` (slots 1..) and compares slot 0's contents with `expected`.
Run run(opencl::Context& ctx, const render::RenderedKernel& rk, const std::vector<std::vector<float>>& inputs,
        const std::vector<float>& expected) {
  // doc: run
  opencl::CompiledKernel ck(ctx, rk);                       // builds the OpenCL C for the device
  opencl::Buffer out(ctx, expected.size() * sizeof(float));
  out.fill(std::byte{0xFF});                                // a kernel that writes nothing cannot pass
  ck.bind(0, out);                                          // by buffer slot
  std::vector<opencl::Buffer> ins;
  ins.reserve(inputs.size());
  for (std::size_t s = 0; s < inputs.size(); ++s) {
    ins.emplace_back(ctx, inputs[s].size() * sizeof(float));
    ins.back().write(inputs[s].data(), inputs[s].size() * sizeof(float));
    ck.bind(static_cast<std::int64_t>(s + 1), ins.back());
  }
  double best = 1e300;                                      // device time from profiling events, best of 3
  for (int rep = 0; rep < 3; ++rep) best = std::min(best, static_cast<double>(ck.launch().duration_ns()) / 1000.0);
  const auto bytes = out.read_all();
  // end doc
  std::vector<float> got(expected.size());
  std::memcpy(got.data(), bytes.data(), got.size() * sizeof(float));
  double worst = 0;
  for (std::size_t e = 0; e < got.size(); ++e) worst = std::max(worst, std::abs(static_cast<double>(got[e]) - expected[e]));
  return {std::string(rk.function_name.view()), best, worst};
}

Run compile_and_run(opencl::Context& ctx, UOp kernel, const codegen::opt::OptsRequest& opts,
                    const std::vector<std::vector<float>>& inputs, const std::vector<float>& expected) {
  return run(ctx, codegen::compile_ast_opencl(kernel, Target::pocl(), opts), inputs, expected);
}
}  // namespace

int main() {
  opencl::Context ctx;
  std::printf("device: %s / %s\n", ctx.device().platform_name().c_str(), ctx.device().name().c_str());
  bool ok = true;
  auto report = [&](const char* what, const char* how, const Run& r, double tol) {
    const bool good = r.worst <= tol;
    ok = ok && good;
    std::printf("  %-8s %-28s %-26s %10.1f us   max|err| %.1e %s\n", what, how, r.name.c_str(), r.us, r.worst, good ? "OK" : "WRONG");
  };

  Arena a;
  {  // matmul
    const std::vector<float> A = random_floats(N * N, 1, -1, 1), B = random_floats(N * N, 2, -1, 1);
    std::vector<float> C(N * N);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) {
        double s = 0;
        for (int k = 0; k < N; ++k) s += static_cast<double>(A[i * N + k]) * B[k * N + j];
        C[i * N + j] = static_cast<float>(s);
      }
    const UOp kernel = build_matmul(a);
    // doc: compile
    using codegen::opt::OptsRequest;
    render::RenderedKernel k1 = codegen::compile_ast_opencl(kernel, Target::pocl(), OptsRequest::heuristics());
    render::RenderedKernel k2 = codegen::compile_ast_opencl(kernel, Target::pocl(),
        OptsRequest::of(codegen::opt::parse_opts("LOCAL:0:8,LOCAL:1:8,UPCAST:0:4,UPCAST:1:4,UNROLL:0:4")));
    // end doc
    report("matmul", "no opts", compile_and_run(ctx, kernel, OptsRequest::no_opts(), {A, B}, C), 1e-3);
    report("matmul", "heuristics", run(ctx, k1, {A, B}, C), 1e-3);
    report("matmul", "LOCAL 8x8, UPCAST 4x4, UNROLL", run(ctx, k2, {A, B}, C), 1e-3);
  }
  {  // softmax
    const std::vector<float> X = random_floats(ROWS * COLS, 3, -6, 6);
    std::vector<float> Y(X.size());
    for (int r = 0; r < ROWS; ++r) {
      double m = -INFINITY, s = 0;
      for (int c = 0; c < COLS; ++c) m = std::max<double>(m, X[r * COLS + c]);
      for (int c = 0; c < COLS; ++c) s += std::exp(X[r * COLS + c] - m);
      for (int c = 0; c < COLS; ++c) Y[r * COLS + c] = static_cast<float>(std::exp(X[r * COLS + c] - m) / s);
    }
    const UOp kernel = build_softmax(a);
    using codegen::opt::OptsRequest;
    report("softmax", "no opts", compile_and_run(ctx, kernel, OptsRequest::no_opts(), {X}, Y), 1e-6);
    report("softmax", "heuristics", compile_and_run(ctx, kernel, OptsRequest::heuristics(), {X}, Y), 1e-6);
  }
  {  // prefix sums: one compiled kernel, launched with two pairs of variable values
    const std::vector<float> X = random_floats(ROWS * COLS, 4, -1, 1);
    const render::RenderedKernel rk = codegen::compile_ast_opencl(build_prefix_sums(a), Target::pocl());
    opencl::CompiledKernel ck(ctx, rk);
    opencl::Buffer out(ctx, ROWS * sizeof(float)), x(ctx, X.size() * sizeof(float));
    x.write(X.data(), X.size() * sizeof(float));
    ck.bind(0, out);
    ck.bind(1, x);
    for (const auto& [m, n] : {std::pair{ROWS, COLS}, std::pair{37, 100}}) {
      out.fill(std::byte{0xFF});
      // doc: set_var
      ck.set_var("m", m);                                     // by name; the launch size follows m
      ck.set_var("n", n);
      const double us = static_cast<double>(ck.launch().duration_ns()) / 1000.0;
      // end doc
      const auto bytes = out.read_all();
      std::vector<float> got(ROWS);
      std::memcpy(got.data(), bytes.data(), got.size() * sizeof(float));
      double worst = 0;
      for (int r = 0; r < ROWS; ++r) {
        double s = 0;
        for (int c = 0; c < n; ++c) s += X[r * COLS + c];
        // rows past m are not written: they keep the fill's bytes (NaN)
        worst = std::max(worst, r < m ? std::abs(got[r] - s) : (std::isnan(got[r]) ? 0.0 : 1e300));
      }
      const std::string how = "m=" + std::to_string(m) + ", n=" + std::to_string(n);
      report("prefix", how.c_str(), Run{std::string(rk.function_name.view()), us, worst}, 1e-4);
    }
  }
  std::printf(ok ? "all results match the C++ reference\n" : "SOME RESULTS ARE WRONG\n");
  return ok ? 0 : 1;
}
