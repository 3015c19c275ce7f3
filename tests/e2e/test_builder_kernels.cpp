// Kernels written with the builder API, compiled by uopcg's pipeline, run on the default OpenCL device
// (PoCL in CI) and checked against plain C++ references. The references follow OpenCL C and IEEE
// rules (wrapping narrow integers, IEEE NaN/inf, MAX(a, b) = (a < b) ? b : a), not tinygrad.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <type_traits>

#include <uopcg/codegen/opt/apply_opts.hpp>
#include <uopcg/core/builder.hpp>
#include <uopcg/core/print.hpp>

#include "../codegen/dtypes/numerics_ref.hpp"
#include "../kernels/kernel_sink.hpp"
#include "../kernels/tiled_matmul.hpp"
#include "kernel_runner.hpp"

using namespace uopcg;
using uopcg_test::Bytes;
using uopcg_test::kernel_sink;
using uopcg_test::from_bytes;
using uopcg_test::run_kernel;
using uopcg_test::to_bytes;

namespace {

UOp R(Arena& a, std::int64_t size, std::int64_t id, AxisType t) { return range(a, size, id, t); }

template <class T>
std::vector<T> random_vec(std::size_t n, T lo, T hi, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) x = std::uniform_real_distribution<T>(lo, hi)(g);
    else x = static_cast<T>(std::uniform_int_distribution<long long>(lo, hi)(g));
  }
  return v;
}

std::size_t count_ops(const std::vector<UOp>& program, Ops op) {
  return static_cast<std::size_t>(std::count_if(program.begin(), program.end(), [&](UOp u) { return u.op() == op; }));
}

bool close(double got, double want, double rtol = 1e-5, double atol = 1e-5) {
  return std::abs(got - want) <= atol + rtol * std::abs(want);
}

}  // namespace

TEST_CASE("builder kernel: elementwise with casts (int8, ushort -> float; float -> int truncates)") {
  constexpr int N = 256;
  Arena a;
  UOp out0 = param(a, 0, DType::float32, N), out1 = param(a, 1, DType::int32, N);
  UOp in_i8 = param(a, 2, DType::int8, N), in_u16 = param(a, 3, DType::uint16, N), in_f = param(a, 4, DType::float32, N);
  UOp i = R(a, N, 0, AxisType::GLOBAL);
  UOp v0 = cast(index(in_i8, i), DType::float32) * 0.5 + cast(index(in_u16, i), DType::float32);
  UOp v1 = cast(index(in_f, i), DType::int32);
  UOp k = kernel_sink(end(group(store(index(out0, i), v0), store(index(out1, i), v1)), i), "ew_casts");

  auto x8 = random_vec<std::int8_t>(N, -128, 127, 1);
  auto x16 = random_vec<std::uint16_t>(N, 0, 65535, 2);
  auto xf = random_vec<float>(N, -1000.f, 1000.f, 3);
  auto r = run_kernel(k, {{2, to_bytes(x8)}, {3, to_bytes(x16)}, {4, to_bytes(xf)}});
  auto o0 = from_bytes<float>(r.buffers[0]);
  auto o1 = from_bytes<std::int32_t>(r.buffers[1]);
  int bad = 0;
  for (int j = 0; j < N; ++j) {
    bad += o0[j] != static_cast<float>(x8[j]) * 0.5f + static_cast<float>(x16[j]);
    bad += o1[j] != static_cast<std::int32_t>(xf[j]);
  }
  INFO(r.source);
  CHECK(bad == 0);
}

TEST_CASE("builder kernel: row and column reductions (sum, max)") {
  constexpr int ROWS = 32, COLS = 64;
  auto x = random_vec<float>(ROWS * COLS, -4.f, 4.f, 7);
  for (Ops op : {Ops::ADD, Ops::MAX}) {
    for (bool rows : {true, false}) {
      CAPTURE(rows);
      CAPTURE(static_cast<int>(op));
      Arena a;
      UOp out = param(a, 0, DType::float32, rows ? ROWS : COLS), in = param(a, 1, DType::float32, ROWS * COLS);
      UOp o = R(a, rows ? ROWS : COLS, 0, AxisType::GLOBAL);
      UOp rr = R(a, rows ? COLS : ROWS, 1, AxisType::REDUCE);
      UOp idx = rows ? o * COLS + rr : rr * COLS + o;
      UOp k = kernel_sink(end(store(index(out, o), reduce(index(in, idx), op, rr)), o), "reduce_2d");
      auto r = run_kernel(k, {{1, to_bytes(x)}});
      auto got = from_bytes<float>(r.buffers[0]);
      int bad = 0;
      for (int j = 0; j < (rows ? ROWS : COLS); ++j) {
        double want = op == Ops::ADD ? 0.0 : -INFINITY;
        for (int t = 0; t < (rows ? COLS : ROWS); ++t) {
          const float v = rows ? x[j * COLS + t] : x[t * COLS + j];
          want = op == Ops::ADD ? want + v : std::max<double>(want, v);
        }
        bad += !close(got[j], want, 1e-5, 1e-4);
      }
      INFO(r.source);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("builder kernel: full sum with GROUP_REDUCE goes through LOCAL memory in two phases") {
  constexpr int N = 4096;
  Arena a;
  UOp out = param(a, 0, DType::float32, 1), in = param(a, 1, DType::float32, N);
  UOp g = R(a, 16, 1, AxisType::GROUP_REDUCE), r = R(a, 256, 0, AxisType::REDUCE);
  UOp k = kernel_sink(store(index(out, literal(a, 0)), reduce(index(in, g * 256 + r), Ops::ADD, g, r)), "group_sum");
  auto x = random_vec<float>(N, 0.f, 1.f, 11);
  auto res = run_kernel(k, {{1, to_bytes(x)}});
  const double want = std::accumulate(x.begin(), x.end(), 0.0);
  INFO(res.source);
  CHECK(close(from_bytes<float>(res.buffers[0])[0], want, 1e-5, 1e-3));
  // two phases: a LOCAL buffer is written, a barrier, then read back in a second loop
  bool local_buffer = false;
  for (UOp u : res.program) local_buffer = local_buffer || (u.op() == Ops::BUFFER && u.addrspace() == AddrSpace::LOCAL);
  CHECK(local_buffer);
  CHECK(count_ops(res.program, Ops::BARRIER) == 1);
  CHECK(res.source.find("__local") != std::string::npos);
  CHECK(res.source.find("barrier(CLK_LOCAL_MEM_FENCE)") != std::string::npos);
}

TEST_CASE("builder kernel: a reduce over a LOCAL range inside a LOOP sums across work-items") {
  // tinygrad test/device/qcom/test_emu.py test_local_reduce_in_loop: C[i] = sum_j A[i, j], i a LOOP
  // range, j a LOCAL one. Each work-item holds one j, so the sum needs LOCAL memory (tinygrad 0.14
  // reduces each work-item's own element and stores lane 0's: A[i, 0]; docs/DIVERGENCES.md P15)
  Arena a;
  UOp out = param(a, 0, DType::float32, 64), in = param(a, 1, DType::float32, 64 * 8);
  UOp i = R(a, 64, 0, AxisType::LOOP), j = R(a, 8, 1, AxisType::LOCAL);
  KernelInfo info;
  info.name = "local_reduce_in_loop";
  info.opts_to_apply = std::vector<Opt>{};
  UOp k = sink(std::vector<UOp>{end(store(index(out, i), reduce(index(in, i * 8 + j), Ops::ADD, j)), i)}, info);
  std::vector<float> x(64 * 8);
  std::iota(x.begin(), x.end(), 0.f);
  auto res = run_kernel(k, {{1, to_bytes(x)}});
  INFO(res.source);
  const auto got = from_bytes<float>(res.buffers[0]);
  int bad = 0;
  for (int r = 0; r < 64; ++r) bad += got[r] != static_cast<float>(64 * r + 28);  // 8 consecutive integers from 8r
  CHECK(bad == 0);
  CHECK(res.source.find("barrier(CLK_LOCAL_MEM_FENCE)") != std::string::npos);
}

TEST_CASE("builder kernel: a GROUP reduce nested in a reduce over a LOCAL range") {
  // tinygrad's Vulkan q4k_gemv_kernel under GROUP:0:2: out[o] = sum_g sum_(r, grp) x[o, g, r, grp],
  // g LOCAL. The inner staged buffer is indexed by g; the outer reduce over g is no second phase of it
  Arena a;
  UOp out = param(a, 0, DType::float32, 2), in = param(a, 1, DType::float32, 64);
  UOp o = R(a, 2, 0, AxisType::GLOBAL), g = R(a, 4, 1, AxisType::LOCAL);
  UOp r = R(a, 4, 2, AxisType::REDUCE), grp = R(a, 2, 3, AxisType::GROUP_REDUCE);
  UOp inner = reduce(index(in, o * 32 + g * 8 + r * 2 + grp), Ops::ADD, r, grp);
  KernelInfo info;
  info.name = "group_in_local_reduce";
  info.opts_to_apply = std::vector<Opt>{};
  UOp k = sink(std::vector<UOp>{end(store(index(out, o), reduce(inner, Ops::ADD, g)), o)}, info);
  std::vector<float> x(64);
  std::iota(x.begin(), x.end(), 0.f);
  auto res = run_kernel(k, {{1, to_bytes(x)}});
  INFO(res.source);
  const auto got = from_bytes<float>(res.buffers[0]);
  CHECK(got[0] == 496.f);   // 0 + ... + 31
  CHECK(got[1] == 1520.f);  // 32 + ... + 63
}

TEST_CASE("builder kernel: a GROUP reduce nested in a GROUP reduce whose group range it depends on") {
  // out[o] = sum_(r1, g1) (k + 1) * sum_(r, grp) x[o, k, r, grp] with k = r1*2 + g1, g1 and grp
  // GROUP_REDUCE (tinygrad's test_failure_beam_mnist under GROUP:0:0 over its GROUP:1:4). The inner
  // partials differ between work-items of different g1: its staged buffer is indexed by g1 too.
  // tinygrad's program (and uopcg's before) stored them to one element per grp, a race the barrier
  // verifier refused (write after write)
  Arena a;
  UOp out = param(a, 0, DType::float32, 2), in = param(a, 1, DType::float32, 96);
  UOp o = R(a, 2, 0, AxisType::GLOBAL), r1 = R(a, 3, 1, AxisType::REDUCE), g1 = R(a, 2, 2, AxisType::GROUP_REDUCE);
  UOp r = R(a, 4, 3, AxisType::REDUCE), grp = R(a, 2, 4, AxisType::GROUP_REDUCE);
  UOp k = r1 * 2 + g1;
  UOp inner = reduce(index(in, o * 48 + k * 8 + r * 2 + grp), Ops::ADD, r, grp);
  UOp kernel = kernel_sink(end(store(index(out, o), reduce(inner * cast(k + 1, DType::float32), Ops::ADD, r1, g1)), o),
                           "group_in_group");
  std::vector<float> x(96);
  std::iota(x.begin(), x.end(), 0.f);
  auto res = run_kernel(kernel, {{1, to_bytes(x)}});
  INFO(res.source);
  const auto got = from_bytes<float>(res.buffers[0]);
  for (int oo = 0; oo < 2; ++oo) {
    double want = 0;
    for (int kk = 0; kk < 6; ++kk)
      for (int j = 0; j < 8; ++j) want += (kk + 1) * x[static_cast<std::size_t>(oo * 48 + kk * 8 + j)];
    CHECK(got[static_cast<std::size_t>(oo)] == doctest::Approx(want));
  }
}

TEST_CASE("builder kernel: a kernel ending in its buffer AFTER the store (tinygrad's UOp.set)") {
  // tinygrad test_custom_kernel.py custom_sum: B[0] = 0, then B[0] = B[0] + A[i] over a REDUCE range;
  // UOp.set returns AFTER(B, END(STORE)), and the SINK holds that AFTER
  Arena a;
  UOp out = param(a, 0, DType::int32, 1), in = param(a, 1, DType::int32, 37);
  UOp r = R(a, 37, 0, AxisType::REDUCE);
  UOp zero = after(out, store(index(out, literal(a, 0)), literal(a, 0)));
  UOp upd = store(index(zero, literal(a, 0)), index(after(zero, r), literal(a, 0)) + index(in, r));
  KernelInfo info;
  info.name = "custom_sum";
  info.opts_to_apply = std::vector<Opt>{};
  UOp k = sink(std::vector<UOp>{after(zero, end(upd, r))}, info);
  auto x = random_vec<std::int32_t>(37, -1000, 1000, 5);
  auto res = run_kernel(k, {{1, to_bytes(x)}});
  INFO(res.source);
  CHECK(from_bytes<std::int32_t>(res.buffers[0])[0] == std::accumulate(x.begin(), x.end(), 0));
}

TEST_CASE("builder kernel: the heuristics keep a hand-written accumulation's iterations in order") {
  // acc = 0; for r (a REDUCE-typed range, no REDUCE): acc = acc*0.5 + in[g*16 + r]; out[g] = acc.
  // tinygrad's heuristics pick GROUPTOP:0:16 for it, whose work-items each see 16 iterations of 256
  // (DIVERGENCES O6)
  constexpr int G = 8, N = 256;
  Arena a;
  UOp out = param(a, 0, DType::float32, G), in = param(a, 1, DType::float32, G * N);
  UOp g = R(a, G, 0, AxisType::GLOBAL), r = R(a, N, 1, AxisType::REDUCE);
  UOp acc_buf = buffer(a, 0, DType::float32, 1, AddrSpace::REG);
  UOp acc = after(acc_buf, store(index(acc_buf, literal(a, 0)), literal(a, 0.0)));
  UOp upd = store(index(after(acc, r), literal(a, 0)), index(after(acc, r), literal(a, 0)) * 0.5 + index(in, g * N + r));
  KernelInfo info;
  info.name = "decay_sum";  // no opts_to_apply: the heuristics choose
  UOp k = sink(std::vector<UOp>{end(store(index(out, g), index(after(acc_buf, end(upd, r)), literal(a, 0))), g)}, info);
  auto x = random_vec<float>(G * N, -1.f, 1.f, 6);
  const UOp opted = codegen::opt::apply_opts(k, Target::pocl(), {});
  auto res = run_kernel(opted, {{1, to_bytes(x)}});
  INFO(res.source);
  CHECK(!KernelInfo::from(opted.arg()).applied_opts.empty());  // the heuristics did choose opts
  CHECK(count_ops(res.program, Ops::BARRIER) == 0);             // but no GROUP
  const auto o = from_bytes<float>(res.buffers[0]);
  int bad = 0;
  for (int j = 0; j < G; ++j) {
    float want = 0.f;
    for (int i = 0; i < N; ++i) want = want * 0.5f + x[static_cast<std::size_t>(j * N + i)];
    bad += !close(o[static_cast<std::size_t>(j)], want);
  }
  CHECK(bad == 0);
}

TEST_CASE("builder kernel: a REDUCE's accumulator is not a hand-written REG buffer of the same slot") {
  // acc = 0; for t (LOOP): acc = acc*0.5 + sum_r in[g, t, r]. The REDUCE's accumulator, numbered
  // from slot 0 as tinygrad does, was the hand-written float[1] at slot 0 itself: every t reset acc
  constexpr int G = 4, T = 6, N = 32;
  Arena a;
  UOp out = param(a, 0, DType::float32, G), in = param(a, 1, DType::float32, G * T * N);
  UOp g = R(a, G, 0, AxisType::GLOBAL), t = R(a, T, 1, AxisType::LOOP), r = R(a, N, 2, AxisType::REDUCE);
  UOp acc_buf = buffer(a, 0, DType::float32, 1, AddrSpace::REG);
  UOp acc = after(acc_buf, store(index(acc_buf, literal(a, 0)), literal(a, 0.0)));
  UOp s = reduce(index(in, (g * T + t) * N + r), Ops::ADD, r);
  UOp upd = store(index(after(acc, t), literal(a, 0)), index(after(acc, t), literal(a, 0)) * 0.5 + s);
  UOp k = kernel_sink(end(store(index(out, g), index(after(acc_buf, end(upd, t)), literal(a, 0))), g), "decay_of_sums");
  auto x = random_vec<float>(G * T * N, -1.f, 1.f, 7);
  auto res = run_kernel(k, {{1, to_bytes(x)}});
  INFO(res.source);
  const auto o = from_bytes<float>(res.buffers[0]);
  int bad = 0;
  for (int j = 0; j < G; ++j) {
    float want = 0.f;
    for (int i = 0; i < T; ++i) {
      float sum = 0.f;
      for (int q = 0; q < N; ++q) sum += x[static_cast<std::size_t>((j * T + i) * N + q)];
      want = want * 0.5f + sum;
    }
    bad += !close(o[static_cast<std::size_t>(j)], want, 1e-4, 1e-4);
  }
  CHECK(bad == 0);
}

namespace {
Opt opt(OptOps op, std::int64_t axis, std::int64_t amount) { return Opt{op, axis, Arg::integer(amount)}; }
UOp with_opts(UOp k, std::vector<Opt> opts) {
  KernelInfo info = KernelInfo::from(k.arg());
  info.opts_to_apply = std::move(opts);
  return codegen::opt::apply_opts(with_arg(k, info.to_arg()), Target::pocl());
}
/// `opts` applied, or the heuristics' when there is no list.
UOp with_opts_or_heuristics(UOp k, const std::optional<std::vector<Opt>>& opts) {
  return opts ? with_opts(k, *opts) : codegen::opt::apply_opts(k, Target::pocl());
}
}  // namespace

TEST_CASE("builder kernel: hand-written vectors (STACK) beside UPCAST and UNROLL lanes") {
  // A STACK is a value with an axis of its own; the expander's lanes come after such axes. Each
  // kernel runs without opts and with opts whose lanes meet the vector (tinygrad 0.14 stores 0 for
  // the vector sum with UNROLL, raises on the weights and writes 3+lane for the mixed STACK)
  constexpr int G = 8, N = 16;
  Arena a;
  UOp out = param(a, 0, DType::float32, G), in = param(a, 1, DType::float32, G * N * 2), w = param(a, 2, DType::float32, 2);
  auto x = random_vec<float>(G * N * 2, -1.f, 1.f, 31), wv = random_vec<float>(2, -2.f, 2.f, 32);
  auto lane = [&](UOp v, int i) { return index(v, literal(a, i)); };
  const std::vector<std::vector<Opt>> opt_lists = {{},
                                                   {opt(OptOps::UNROLL, 0, 4)},
                                                   {opt(OptOps::UPCAST, 0, 2), opt(OptOps::UNROLL, 0, 4)},
                                                   {opt(OptOps::UPCAST, 0, 4)},
                                                   {opt(OptOps::GROUPTOP, 0, 8)}};
  SUBCASE("a REDUCE of a vector: each lane of it reduced") {
    // out[g] = sum_r 2*in[g,r,0] - sum_r 2*in[g,r,1], the pair a STACK reduced as one value
    UOp g = R(a, G, 0, AxisType::GLOBAL), r = R(a, N, 1, AxisType::REDUCE);
    UOp base = (g * N + r) * 2;
    UOp s = reduce(stack(index(in, base), index(in, base + 1)) * 2.0, Ops::ADD, r);
    UOp k = kernel_sink(end(store(index(out, g), lane(s, 0) - lane(s, 1)), g), "vec_sum");
    for (const auto& opts : opt_lists) {
      auto res = run_kernel(with_opts(k, opts), {{1, to_bytes(x)}});
      INFO(res.source);
      const auto o = from_bytes<float>(res.buffers[0]);
      int bad = 0;
      for (int j = 0; j < G; ++j) {
        double want = 0;
        for (int i = 0; i < N; ++i) want += 2.0 * x[static_cast<std::size_t>((j * N + i) * 2)] - 2.0 * x[static_cast<std::size_t>((j * N + i) * 2 + 1)];
        bad += !close(o[static_cast<std::size_t>(j)], want, 1e-4, 1e-4);
      }
      CHECK(bad == 0);
    }
  }
  SUBCASE("a vector no lane reaches, times a reduced value") {
    // out[g] = sum_r (w[0], w[1]) * in[g*32+r] -> lane 0 + 2 * lane 1: the weights have one axis, the lanes another
    UOp g = R(a, G, 0, AxisType::GLOBAL), r = R(a, 2 * N, 1, AxisType::REDUCE);
    UOp s = reduce(stack(lane(w, 0), lane(w, 1)) * index(in, g * (2 * N) + r), Ops::ADD, r);
    UOp k = kernel_sink(end(store(index(out, g), lane(s, 0) + lane(s, 1) * 2.0), g), "weighted_sum");
    for (const auto& opts : opt_lists) {
      auto res = run_kernel(with_opts(k, opts), {{1, to_bytes(x)}, {2, to_bytes(wv)}});
      INFO(res.source);
      const auto o = from_bytes<float>(res.buffers[0]);
      int bad = 0;
      for (int j = 0; j < G; ++j) {
        double sum = 0;
        for (int i = 0; i < 2 * N; ++i) sum += x[static_cast<std::size_t>(j * 2 * N + i)];
        bad += !close(o[static_cast<std::size_t>(j)], (wv[0] + 2.0 * wv[1]) * sum, 1e-4, 1e-4);
      }
      CHECK(bad == 0);
    }
  }
  SUBCASE("movement ops on a vector (SHRINK and RESHAPE, as tinygrad's v[0] writes them; FLIP)") {
    // v = (in[2g], in[2g+1]) * (in[2g+1], w[0]); out[g] = v[1] - flip(v)[1], each lane a SHRINK then a RESHAPE to ()
    UOp g = R(a, G, 0, AxisType::GLOBAL);
    UOp v = stack(index(in, g * 2), index(in, g * 2 + 1)) * stack(index(in, g * 2 + 1), lane(w, 0));
    auto pick = [&](UOp x, int i) {
      return symbolic::mops::reshape(node(Ops::SHRINK, {x, literal(a, i), literal(a, 1)}), std::vector<std::int64_t>{});
    };
    UOp flipped = a.make(Ops::FLIP, DType::float32, {v}, Arg::tuple({Arg::boolean(true)}));
    UOp k = kernel_sink(end(store(index(out, g), pick(v, 1) - pick(flipped, 1)), g), "vector_views");
    for (const auto& opts : {std::vector<Opt>{}, std::vector<Opt>{opt(OptOps::UPCAST, 0, 4)}}) {
      auto res = run_kernel(with_opts(k, opts), {{1, to_bytes(x)}, {2, to_bytes(wv)}});
      INFO(res.source);
      const auto o = from_bytes<float>(res.buffers[0]);
      int bad = 0;
      for (std::size_t j = 0; j < G; ++j) {
        const double v0 = double(x[2 * j]) * x[2 * j + 1], v1 = double(x[2 * j + 1]) * wv[0];
        bad += !close(o[j], v1 - v0, 1e-5, 1e-5);
      }
      CHECK(bad == 0);
    }
  }
  SUBCASE("a STACK of an upcast value and a constant") {
    // v = (in[g], 3); m = max(v, v*0.5); out[g] = m[0] * m[1]
    UOp g = R(a, G, 0, AxisType::GLOBAL);
    UOp v = stack(index(in, g), literal(a, 3.0f));
    UOp m = maximum(v, v * 0.5);
    UOp k = kernel_sink(end(store(index(out, g), lane(m, 0) * lane(m, 1)), g), "mixed_stack");
    for (const auto& opts : {std::vector<Opt>{}, std::vector<Opt>{opt(OptOps::UPCAST, 0, 4)}, std::vector<Opt>{opt(OptOps::UPCAST, 0, 8)}}) {
      auto res = run_kernel(with_opts(k, opts), {{1, to_bytes(x)}});
      INFO(res.source);
      const auto o = from_bytes<float>(res.buffers[0]);
      int bad = 0;
      for (int j = 0; j < G; ++j) bad += !close(o[static_cast<std::size_t>(j)], std::max(x[static_cast<std::size_t>(j)], x[static_cast<std::size_t>(j)] * 0.5f) * 3.0);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("builder kernel: loops sized by an enclosing range or by loaded data") {
  // Triangular and ragged loops: a serial range's size may vary inside the kernel (a launch
  // dimension's may not). tinygrad's heuristics upcast the output axis that sizes the loop, and its
  // program does not compile (a vector loop bound); uopcg refuses that UPCAST and goes on
  constexpr int G = 16;
  Arena a;
  UOp out = param(a, 0, DType::float32, G), in = param(a, 1, DType::float32, G * G), n = param(a, 2, DType::int32, G);
  auto x = random_vec<float>(G * G, -1.f, 1.f, 41);
  auto lens = random_vec<std::int32_t>(G, -40, 40, 42);
  auto check_rows = [&](UOp k, const std::vector<std::optional<std::vector<Opt>>>& opt_lists, auto&& row_len) {
    for (const auto& opts : opt_lists) {
      const UOp opted = with_opts_or_heuristics(k, opts);
      auto res = run_kernel(opted, {{1, to_bytes(x)}, {2, to_bytes(lens)}});
      INFO(res.source);
      const auto o = from_bytes<float>(res.buffers[0]);
      int bad = 0;
      for (int j = 0; j < G; ++j) {
        double want = 0;
        for (int i = 0; i < row_len(j); ++i) want += x[static_cast<std::size_t>(j * G + i)];
        bad += !close(o[static_cast<std::size_t>(j)], want, 1e-4, 1e-4);
      }
      CHECK(bad == 0);
    }
  };
  const std::vector<std::optional<std::vector<Opt>>> opt_lists = {std::vector<Opt>{}, std::nullopt, std::vector<Opt>{opt(OptOps::LOCAL, 0, 4)}};
  SUBCASE("a REDUCE over r < g+1") {
    // a LOCAL split of g puts the LOCAL range in r's size, not among the ranges the REDUCE reduces
    UOp g = R(a, G, 0, AxisType::GLOBAL);
    UOp r = range(g + 1, 1, AxisType::REDUCE);
    UOp k = kernel_sink(end(store(index(out, g), reduce(index(in, g * G + r), Ops::ADD, r)), g), "tri_reduce");
    check_rows(k, opt_lists, [](int j) { return j + 1; });
    CHECK_THROWS_WITH_AS(with_opts(k, {opt(OptOps::UPCAST, 0, 4)}), doctest::Contains("the axis sizes a loop inside it"), uopcg::error);
  }
  SUBCASE("a REG accumulator over a LOOP t < g+1") {
    UOp g = R(a, G, 0, AxisType::GLOBAL);
    UOp t = range(g + 1, 1, AxisType::LOOP);
    UOp acc_buf = buffer(a, 0, DType::float32, 1, AddrSpace::REG);
    UOp acc = after(acc_buf, store(index(acc_buf, literal(a, 0)), literal(a, 0.0)));
    UOp upd = store(index(after(acc, t), literal(a, 0)), index(after(acc, t), literal(a, 0)) + index(in, g * G + t));
    UOp k = kernel_sink(end(store(index(out, g), index(after(acc_buf, end(upd, t)), literal(a, 0))), g), "tri_loop");
    // axis 0 is the LOOP (LOOP axes sort first), g is axis 1
    check_rows(k, {std::vector<Opt>{}, std::nullopt, std::vector<Opt>{opt(OptOps::LOCAL, 1, 4)}}, [](int j) { return j + 1; });
  }
  SUBCASE("a REDUCE over a row length loaded from memory (0 to 15)") {
    UOp g = R(a, G, 0, AxisType::GLOBAL);
    UOp r = range(cast(alu(Ops::AND, index(n, g), literal(a, 15)), DType::weakint), 1, AxisType::REDUCE);
    check_rows(kernel_sink(end(store(index(out, g), reduce(index(in, g * G + r), Ops::ADD, r)), g), "ragged_reduce"), opt_lists,
               [&](int j) { return lens[static_cast<std::size_t>(j)] & 15; });
  }
  SUBCASE("a prefix sum over a LOCAL tile, r < lidx+1, as tinygrad's post-opts graph lists it") {
    // tinygrad's flatten_range lists the LOCAL range that sizes r among the REDUCE's ranges; its
    // lowering reduces per work-item. Read as a reduce across work-items (P15) every output was the
    // sum of all 16 prefix sums
    constexpr int L = 16;
    UOp g = R(a, G / 4, 0, AxisType::GLOBAL), l = R(a, L / 4, 1, AxisType::LOCAL);
    UOp tile = buffer(a, 0, DType::float32, L / 4, AddrSpace::LOCAL);
    UOp filled = after(tile, store(index(tile, l), index(in, g * (L / 4) + l)));
    UOp r = range(l + 1, 2, AxisType::REDUCE);
    KernelInfo info;
    info.name = "local_prefix";
    info.opts_to_apply = std::vector<Opt>{};
    UOp k = sink(std::vector<UOp>{end(store(index(out, g * (L / 4) + l), reduce(index(filled, r), Ops::ADD, r, l)), g, l)}, info);
    auto res = run_kernel(k, {{1, to_bytes(x)}});
    INFO(res.source);
    const auto o = from_bytes<float>(res.buffers[0]);
    int bad = 0;
    for (int q = 0; q < G; ++q) {
      double want = 0;
      for (int i = (q / 4) * 4; i <= q; ++i) want += x[static_cast<std::size_t>(i)];
      bad += !close(o[static_cast<std::size_t>(q)], want, 1e-4, 1e-4);
    }
    CHECK(bad == 0);
  }
  SUBCASE("a REDUCE over r2 < r1+1 nested in a REDUCE over r1") {
    // out[g] = sum_r1 w[r1] * sum_{r2 <= r1} in[g, r2] (tinygrad raises a KeyError on this kernel);
    // with GROUPTOP the outer sum is split over a work-group, the inner loop bound is per work-item
    UOp g = R(a, G, 0, AxisType::GLOBAL), r1 = R(a, G, 1, AxisType::REDUCE);
    UOp r2 = range(r1 + 1, 2, AxisType::REDUCE);
    UOp w = param(a, 3, DType::float32, G);
    auto wv16 = random_vec<float>(G, -1.f, 1.f, 43);
    UOp k = kernel_sink(end(store(index(out, g), reduce(reduce(index(in, g * G + r2), Ops::ADD, r2) * index(w, r1), Ops::ADD, r1)), g), "nested_triangle");
    for (const auto& opts : std::vector<std::optional<std::vector<Opt>>>{std::vector<Opt>{}, std::nullopt,
                                                                         std::vector<Opt>{opt(OptOps::GROUPTOP, 0, 8)},
                                                                         std::vector<Opt>{opt(OptOps::LOCAL, 0, 4)}}) {
      const UOp opted = with_opts_or_heuristics(k, opts);
      auto res = run_kernel(opted, {{1, to_bytes(x)}, {3, to_bytes(wv16)}});
      INFO(res.source);
      const auto o = from_bytes<float>(res.buffers[0]);
      int bad = 0;
      for (int q = 0; q < G; ++q) {
        double want = 0, prefix = 0;
        for (int i = 0; i < G; ++i) {
          prefix += x[static_cast<std::size_t>(q * G + i)];
          want += prefix * wv16[static_cast<std::size_t>(i)];
        }
        bad += !close(o[static_cast<std::size_t>(q)], want, 1e-4, 1e-4);
      }
      CHECK(bad == 0);
    }
  }
  SUBCASE("a serial triangle: LOOP j < i+1 inside LOOP i") {
    // out[i] = sum_{j <= i} in[j], both loops serial (tinygrad raises a KeyError on this kernel)
    UOp i = R(a, G, 0, AxisType::LOOP);
    UOp j = range(i + 1, 1, AxisType::LOOP);
    UOp acc_buf = buffer(a, 0, DType::float32, 1, AddrSpace::REG);
    UOp acc = after(acc_buf, store(index(after(acc_buf, i), literal(a, 0)), literal(a, 0.0)));  // reset in every i
    UOp upd = store(index(after(acc, j), literal(a, 0)), index(after(acc, j), literal(a, 0)) + index(in, j));
    UOp k = kernel_sink(end(store(index(out, i), index(after(acc_buf, end(upd, j)), literal(a, 0))), i), "serial_triangle");
    for (const auto& opts : std::vector<std::optional<std::vector<Opt>>>{std::vector<Opt>{}, std::nullopt}) {
      const UOp opted = with_opts_or_heuristics(k, opts);
      auto res = run_kernel(opted, {{1, to_bytes(x)}});
      INFO(res.source);
      const auto o = from_bytes<float>(res.buffers[0]);
      int bad = 0;
      double want = 0;
      for (int q = 0; q < G; ++q) {
        want += x[static_cast<std::size_t>(q)];
        bad += !close(o[static_cast<std::size_t>(q)], want, 1e-4, 1e-4);
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("builder kernel: a GROUP reduce beside LOCAL axes its value does not use") {
  // out[p, q, s] = sum_r in[p, r] for every q and s, with LOCAL on all three output axes and GROUP
  // on r: four local dims, two of them merged into one local id. The work-items that differ only in
  // q's or s's LOCAL part compute the same partial; each stages its own now. tinygrad's program has
  // them store it to one element, and where a merged local id also feeds the partial's value the
  // barrier verifier could not tell the stores apart and refused the program (write after write)
  constexpr int P = 4, Q = 4, S = 4, N = 32;
  Arena a;
  UOp out = param(a, 0, DType::float32, P * Q * S), in = param(a, 1, DType::float32, P * N);
  UOp p = R(a, P, 0, AxisType::GLOBAL), q = R(a, Q, 1, AxisType::GLOBAL), s = R(a, S, 2, AxisType::GLOBAL);
  UOp r = R(a, N, 3, AxisType::REDUCE);
  auto x = random_vec<float>(P * N, -1.f, 1.f, 61);
  for (const auto& opts : std::vector<std::vector<Opt>>{
           {opt(OptOps::LOCAL, 0, 2), opt(OptOps::LOCAL, 1, 2), opt(OptOps::LOCAL, 2, 2), opt(OptOps::GROUP, 0, 4)},
           {opt(OptOps::LOCAL, 2, 2), opt(OptOps::GROUP, 0, 8)}}) {
    UOp k = kernel_sink(end(store(index(out, (p * Q + q) * S + s), reduce(index(in, p * N + r), Ops::ADD, r)), p, q, s),
                        "group_beside_locals");
    auto res = run_kernel(with_opts(k, opts), {{1, to_bytes(x)}});
    INFO(res.source);
    const auto o = from_bytes<float>(res.buffers[0]);
    int bad = 0;
    for (int i = 0; i < P * Q * S; ++i) {
      const int row = i / (Q * S);
      bad += !close(o[static_cast<std::size_t>(i)], std::accumulate(x.begin() + row * N, x.begin() + (row + 1) * N, 0.0), 1e-4, 1e-4);
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("builder kernel: the padded steps of a PADTO change no value") {
  // PADTO gates the indexes that use the axis, and a value computed from a gated load is Invalid in
  // a padded step (so the reduce's identity); but the other arm of a WHERE is not, so tinygrad's
  // padded steps add it to a reduce, and a REG accumulator updates in them. Axis 0 is g, axis 1 r
  constexpr int G = 6, N = 5;
  Arena a;
  UOp out = param(a, 0, DType::float32, G), x = param(a, 1, DType::float32, G * N), w = param(a, 2, DType::float32, G);
  auto xv = random_vec<float>(G * N, 1.f, 2.f, 51), wv = random_vec<float>(G, -1.f, 1.f, 52);
  UOp g = R(a, G, 0, AxisType::GLOBAL);
  UOp pick = index(w, g) < 0.0;  // x where w[g] < 0, else w[g] (or a constant): the padded lanes take the other arm
  auto xs = [&](int q, int i) { return static_cast<double>(xv[static_cast<std::size_t>(q * N + i)]); };
  auto ws = [&](int q) { return static_cast<double>(wv[static_cast<std::size_t>(q)]); };
  auto check = [&](UOp k, const std::vector<std::vector<Opt>>& opt_lists, auto&& ref) {
    for (const auto& opts : opt_lists) {
      auto res = run_kernel(with_opts(k, opts), {{1, to_bytes(xv)}, {2, to_bytes(wv)}});
      INFO(res.source);
      const auto o = from_bytes<float>(res.buffers[0]);
      int bad = 0;
      for (int q = 0; q < G; ++q) bad += !close(o[static_cast<std::size_t>(q)], ref(q), 1e-4, 1e-4);
      CHECK(bad == 0);
    }
  };
  const std::vector<std::vector<Opt>> reduce_opts = {{opt(OptOps::PADTO, 1, 8)},
                                                     {opt(OptOps::PADTO, 1, 8), opt(OptOps::UNROLL, 0, 4)},
                                                     {opt(OptOps::GROUP, 0, 0), opt(OptOps::PADTO, 1, 8)}};
  SUBCASE("ADD and MUL reduces of a WHERE whose other arm the reduce axis does not index") {
    UOp r = R(a, N, 1, AxisType::REDUCE);
    UOp xr = index(x, g * N + r);
    UOp sum = reduce(where(pick, xr, index(w, g)), Ops::ADD, r), prod = reduce(where(pick, xr, literal(a, 1.25)), Ops::MUL, r);
    check(kernel_sink(end(store(index(out, g), sum + prod), g), "pad_add_mul"), reduce_opts, [&](int q) {
      double s = 0, p = 1;
      for (int i = 0; i < N; ++i) {
        s += ws(q) < 0 ? xs(q, i) : ws(q);
        p *= ws(q) < 0 ? xs(q, i) : 1.25;
      }
      return s + p;
    });
  }
  SUBCASE("a REG accumulator over a padded LOOP") {
    // axis 0 is the LOOP t (LOOP axes sort first), g is axis 1; the store of the update is gated
    UOp t = R(a, N, 1, AxisType::LOOP);
    UOp acc_buf = buffer(a, 0, DType::float32, 1, AddrSpace::REG);
    UOp acc = after(acc_buf, store(index(acc_buf, literal(a, 0)), literal(a, 0.0)));
    UOp upd = store(index(after(acc, t), literal(a, 0)), index(after(acc, t), literal(a, 0)) + where(pick, index(x, g * N + t), index(w, g)));
    UOp k = kernel_sink(end(store(index(out, g), index(after(acc_buf, end(upd, t)), literal(a, 0))), g), "pad_reg_sum");
    check(k, {{opt(OptOps::PADTO, 0, 8)}}, [&](int q) {
      double s = 0;
      for (int i = 0; i < N; ++i) s += ws(q) < 0 ? xs(q, i) : ws(q);
      return s;
    });
  }
}

namespace {
/// The classic shared-memory tiled GEMM, 16x16 tiles (tests/kernels/tiled_matmul.hpp).
UOp tiled_matmul(Arena& a, int n) { return uopcg_test::tiled_matmul_kernel(a, n, 16, "tiled_gemm"); }
}  // namespace

TEST_CASE("builder kernel: tiled matmul through LOCAL memory gets a RAW and a WAR barrier") {
  constexpr int n = 64;
  Arena a;
  UOp k = tiled_matmul(a, n);
  auto A = random_vec<float>(n * n, -1.f, 1.f, 21), B = random_vec<float>(n * n, -1.f, 1.f, 22);
  auto res = run_kernel(k, {{1, to_bytes(A)}, {2, to_bytes(B)}});
  auto C = from_bytes<float>(res.buffers[0]);
  int bad = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int t = 0; t < n; ++t) want += static_cast<double>(A[i * n + t]) * B[t * n + j];
      bad += !close(C[i * n + j], want, 1e-4, 1e-4);
    }
  INFO(res.source);
  CHECK(bad == 0);
  CHECK(count_ops(res.program, Ops::BARRIER) == 2);  // RAW after the tile stores, WAR at the K-tile loop's end
}

namespace {
/// One LOCAL tile reused in straight-line code: tile[l] = x[g*16+l]; v = tile[15-l]; tile[l] = v*v;
/// out[g*16+l] = tile[(l+1)%16] + v. The overwrite must wait for every work-item's read of the tile.
UOp local_reuse(Arena& a) {
  UOp out = param(a, 0, DType::float32, 64), x = param(a, 1, DType::float32, 64);
  UOp g = R(a, 4, 0, AxisType::GLOBAL), l = R(a, 16, 1, AxisType::LOCAL);
  UOp tile = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp t1 = after(tile, store(index(tile, l), index(x, g * 16 + l)));
  UOp v = index(t1, 15 - l);
  UOp t2 = after(tile, store(index(t1, l), v * v));
  return kernel_sink(end(store(index(out, g * 16 + l), index(t2, (l + 1) % 16) + v), g, l), "local_reuse");
}
/// A tree sum in LOCAL memory whose gated halves never overlap: tile[l] += tile[l+s] for l < s.
UOp local_tree_sum(Arena& a) {
  UOp out = param(a, 0, DType::float32, 4), x = param(a, 1, DType::float32, 64);
  UOp g = R(a, 4, 0, AxisType::GLOBAL), l = R(a, 16, 1, AxisType::LOCAL);
  UOp tile = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp t = after(tile, store(index(tile, l), index(x, g * 16 + l)));
  for (int s = 8; s >= 1; s /= 2) {
    UOp ok = l < s;
    t = after(tile, store(index(t, valid(l, ok)), index(t, l) + index(t, valid(l + s, ok))));
  }
  return kernel_sink(end(store(index(out, valid(g, l < 1)), index(t, literal(a, 0))), g, l), "local_tree_sum");
}
}  // namespace

TEST_CASE("builder kernel: a LOCAL tile overwritten after other work-items read it gets a WAR barrier") {
  // tinygrad 0.14 places a WAR barrier only at a loop's END, so its program races here (wrong on PoCL)
  Arena a;
  auto x = random_vec<float>(64, -2.f, 2.f, 31);
  auto res = run_kernel(local_reuse(a), {{1, to_bytes(x)}});
  INFO(res.source);
  auto got = from_bytes<float>(res.buffers[0]);
  int bad = 0;
  for (int g = 0; g < 4; ++g)
    for (int l = 0; l < 16; ++l) {
      const float v = x[g * 16 + 15 - l], w = x[g * 16 + 15 - (l + 1) % 16];
      bad += !close(got[g * 16 + l], w * w + v, 1e-6, 1e-6);
    }
  CHECK(bad == 0);
  CHECK(count_ops(res.program, Ops::BARRIER) == 3);  // RAW, the WAR before the overwrite, RAW

  // lanes of the LOCAL axis (the heuristics' UPCAST:1:4): after devectorize the tile is written and
  // read through vector SHRINKs, which the WAR store barrier overlooked (the barrier verifier
  // refused the program; without it 36 of 64 outputs were wrong)
  for (const auto& opts : std::vector<std::optional<std::vector<Opt>>>{
           std::vector<Opt>{opt(OptOps::UPCAST, 1, 4)}, std::vector<Opt>{opt(OptOps::UPCAST, 1, 2)}, std::nullopt}) {
    auto lanes = run_kernel(with_opts_or_heuristics(local_reuse(a), opts), {{1, to_bytes(x)}});
    INFO(lanes.source);
    got = from_bytes<float>(lanes.buffers[0]);
    bad = 0;
    for (int g = 0; g < 4; ++g)
      for (int l = 0; l < 16; ++l) {
        const float v = x[g * 16 + 15 - l], w = x[g * 16 + 15 - (l + 1) % 16];
        bad += !close(got[g * 16 + l], w * w + v, 1e-6, 1e-6);
      }
    CHECK(bad == 0);
  }
}

TEST_CASE("builder kernel: a LOCAL tree sum keeps only the barriers a race needs") {
  // each step's store reads another element, so a WAR barrier is placed before it, then dropped: the
  // verifier proves it redundant (the gated halves never overlap), as tinygrad's program has none
  Arena a;
  auto x = random_vec<float>(64, -2.f, 2.f, 32);
  auto res = run_kernel(local_tree_sum(a), {{1, to_bytes(x)}});
  INFO(res.source);
  auto got = from_bytes<float>(res.buffers[0]);
  for (int g = 0; g < 4; ++g) {
    double want = 0;
    for (int l = 0; l < 16; ++l) want += x[g * 16 + l];
    CHECK(close(got[g], want, 1e-5, 1e-5));
  }
  CHECK(count_ops(res.program, Ops::BARRIER) == 5);  // the RAW barrier after each of the five stores
}

TEST_CASE("builder kernel: softmax over rows in one kernel (max, sum of exp, normalise)") {
  constexpr int ROWS = 16, COLS = 64;
  constexpr double LOG2E = 1.4426950408889634;
  Arena a;
  UOp out = param(a, 0, DType::float32, ROWS * COLS), x = param(a, 1, DType::float32, ROWS * COLS);
  UOp row = R(a, ROWS, 0, AxisType::GLOBAL);
  UOp r1 = R(a, COLS, 1, AxisType::REDUCE), r2 = R(a, COLS, 2, AxisType::REDUCE), c = R(a, COLS, 3, AxisType::LOOP);
  UOp m = reduce(index(x, row * COLS + r1), Ops::MAX, r1);
  UOp s = reduce(exp2((index(x, row * COLS + r2) - m) * LOG2E), Ops::ADD, r2);
  UOp v = exp2((index(x, row * COLS + c) - m) * LOG2E) * reciprocal(s);
  UOp k = kernel_sink(end(store(index(out, row * COLS + c), v), row, c), "softmax");
  auto in = random_vec<float>(ROWS * COLS, -8.f, 8.f, 31);
  auto res = run_kernel(k, {{1, to_bytes(in)}});
  auto got = from_bytes<float>(res.buffers[0]);
  int bad = 0;
  for (int i = 0; i < ROWS; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < COLS; ++j) mx = std::max<double>(mx, in[i * COLS + j]);
    for (int j = 0; j < COLS; ++j) sum += std::exp(in[i * COLS + j] - mx);
    for (int j = 0; j < COLS; ++j) bad += !close(got[i * COLS + j], std::exp(in[i * COLS + j] - mx) / sum, 1e-4, 1e-6);
  }
  INFO(res.source);
  CHECK(bad == 0);
}

TEST_CASE("builder kernel: double matmul through a LOCAL stage with no opts (tinygrad resets the accumulator)") {
  // C = (A @ B) @ D row by row: the row of A @ B is staged in LOCAL memory (STAGE closes its range),
  // then reduced against D. At the snapshot the second accumulator is reset inside its own loop.
  constexpr int n = 16;
  Arena a;
  UOp C = param(a, 0, DType::float32, n * n), A = param(a, 1, DType::float32, n * n), B = param(a, 2, DType::float32, n * n),
      D = param(a, 3, DType::float32, n * n);
  UOp i = R(a, n, 3, AxisType::GLOBAL), l = R(a, n, 4, AxisType::WEAK), kk = R(a, n, 0, AxisType::REDUCE);
  UOp j = R(a, n, 1, AxisType::WEAK), j2 = R(a, n, 2, AxisType::REDUCE);
  UOp inner = reduce(index(A, i * n + kk) * index(B, kk * n + j), Ops::ADD, kk);
  UOp st = stage(inner, AddrSpace::LOCAL, j);
  UOp outer = reduce(index(st, j2) * index(D, j2 * n + l), Ops::ADD, j2);
  UOp k = kernel_sink(end(store(index(C, i * n + l), outer), i, l), "dmm");
  auto Am = random_vec<float>(n * n, -1.f, 1.f, 41), Bm = random_vec<float>(n * n, -1.f, 1.f, 42),
       Dm = random_vec<float>(n * n, -1.f, 1.f, 43);
  auto res = run_kernel(k, {{1, to_bytes(Am)}, {2, to_bytes(Bm)}, {3, to_bytes(Dm)}});
  auto got = from_bytes<float>(res.buffers[0]);
  int bad = 0;
  for (int r = 0; r < n; ++r) {
    std::vector<double> ab(n, 0.0);
    for (int jj = 0; jj < n; ++jj)
      for (int t = 0; t < n; ++t) ab[jj] += static_cast<double>(Am[r * n + t]) * Bm[t * n + jj];
    for (int ll = 0; ll < n; ++ll) {
      double want = 0;
      for (int jj = 0; jj < n; ++jj) want += ab[jj] * Dm[jj * n + ll];
      bad += !close(got[r * n + ll], want, 1e-4, 1e-4);
    }
  }
  INFO(res.source);
  CHECK(bad == 0);
}

TEST_CASE("builder kernel: a float sum keeps its grouping in the OpenCL C (x + (y + z) cancels as written)") {
  // tinygrad's source writes x+(y+z) as x+y+z, which C computes as (x+y)+z: 1e20 + (-1e20 + 1) is 0
  // in float (the 1 is far below -1e20's ulp), (1e20 - 1e20) + 1 is 1 (docs/DIVERGENCES.md R5)
  Arena a;
  UOp out = param(a, 0, DType::float32, 4), X = param(a, 1, DType::float32, 4), Y = param(a, 2, DType::float32, 4),
      Z = param(a, 3, DType::float32, 4);
  UOp i = R(a, 4, 0, AxisType::GLOBAL);
  UOp k = kernel_sink(end(store(index(out, i), index(X, i) + (index(Y, i) + index(Z, i))), i), "grouped_sum");
  const std::vector<float> x{1e20f, 1.f, 3e-8f, -2.f}, y{-1e20f, 1e8f, 1.f, 2.f}, z{1.f, -1e8f, -1.f, 0.5f};
  auto res = run_kernel(k, {{1, to_bytes(x)}, {2, to_bytes(y)}, {3, to_bytes(z)}});
  INFO(res.source);
  const auto got = from_bytes<float>(res.buffers[0]);
  for (std::size_t j = 0; j < 4; ++j) CHECK(got[j] == x[j] + (y[j] + z[j]));
  CHECK(got[0] == 0.f);
}

namespace {
/// The elements of `got` (n x n) that differ from (A @ B) @ D, computed in double.
int dmm_mismatches(const std::vector<float>& got, const std::vector<float>& A, const std::vector<float>& B,
                   const std::vector<float>& D, int n) {
  int bad = 0;
  for (int r = 0; r < n; ++r)
    for (int ll = 0; ll < n; ++ll) {
      double want = 0;
      for (int jj = 0; jj < n; ++jj) {
        double ab = 0;
        for (int t = 0; t < n; ++t) ab += static_cast<double>(A[r * n + t]) * B[t * n + jj];
        want += ab * D[jj * n + ll];
      }
      bad += !close(got[r * n + ll], want, 1e-4, 1e-4);
    }
  return bad;
}
}  // namespace

TEST_CASE("builder kernel: a LOCAL stage whose value depends on a local id it is not indexed by") {
  // dmm_stage_local under LOCAL:2:2: the row i = ig*2 + il is split into a local id, and each
  // work-item stages its own row of A @ B. Indexed by j only, both work-items of a group stored
  // their rows to one element (a write-after-write race the barrier verifier refused; tinygrad
  // 0.14's program races the same way): the stage is now indexed by il too (DIVERGENCES.md P23)
  constexpr int n = 16;
  Arena a;
  UOp C = param(a, 0, DType::float32, n * n), A = param(a, 1, DType::float32, n * n), B = param(a, 2, DType::float32, n * n),
      D = param(a, 3, DType::float32, n * n);
  UOp ig = R(a, n / 2, 3, AxisType::GLOBAL), il = R(a, 2, 5, AxisType::LOCAL), l = R(a, n, 4, AxisType::WEAK);
  UOp kk = R(a, n, 0, AxisType::REDUCE), j = R(a, n, 1, AxisType::WEAK), j2 = R(a, n, 2, AxisType::REDUCE);
  UOp i = ig * 2 + il;
  UOp st = stage(reduce(index(A, i * n + kk) * index(B, kk * n + j), Ops::ADD, kk), AddrSpace::LOCAL, j);
  UOp outer = reduce(index(st, j2) * index(D, j2 * n + l), Ops::ADD, j2);
  UOp k = kernel_sink(end(store(index(C, i * n + l), outer), ig, il, l), "dmm_local_row");
  auto Am = random_vec<float>(n * n, -1.f, 1.f, 44), Bm = random_vec<float>(n * n, -1.f, 1.f, 45),
       Dm = random_vec<float>(n * n, -1.f, 1.f, 46);
  auto res = run_kernel(k, {{1, to_bytes(Am)}, {2, to_bytes(Bm)}, {3, to_bytes(Dm)}});
  INFO(res.source);
  CHECK(res.source.find("buf2[32]") != std::string::npos);  // one row per work-item of the group
  auto got = from_bytes<float>(res.buffers[0]);
  CHECK(dmm_mismatches(got, Am, Bm, Dm, n) == 0);
}

TEST_CASE("builder kernel: lanes of a reduce that reads a LOCAL stage read it with a vector index") {
  // out[i, l] = sum_j2 (sum_kk A[i, kk] B[kk, j2]) D[j2, l], the inner product staged over j: UNROLL of
  // either reduce (kk inside the stage, j2 reading it) computes the product; the stage of a reduce's
  // result is read lane by lane (tinygrad 0.14 fails on UNROLL of j2: "bad reshape (4,) -> (1,)").
  // Lanes of both at once would meet in the read: an opt error, as tinygrad fails on them too.
  constexpr int n = 16;
  Arena a;
  UOp C = param(a, 0, DType::float32, n * n), A = param(a, 1, DType::float32, n * n), B = param(a, 2, DType::float32, n * n),
      D = param(a, 3, DType::float32, n * n);
  UOp i = R(a, n, 3, AxisType::GLOBAL), l = R(a, n, 4, AxisType::WEAK);
  UOp kk = R(a, n, 0, AxisType::REDUCE), j = R(a, n, 1, AxisType::WEAK), j2 = R(a, n, 2, AxisType::REDUCE);
  UOp st = stage(reduce(index(A, i * n + kk) * index(B, kk * n + j), Ops::ADD, kk), AddrSpace::LOCAL, j);
  UOp k = kernel_sink(end(store(index(C, i * n + l), reduce(index(st, j2) * index(D, j2 * n + l), Ops::ADD, j2)), i, l),
                      "dmm_stage_unroll");
  auto Am = random_vec<float>(n * n, -1.f, 1.f, 56), Bm = random_vec<float>(n * n, -1.f, 1.f, 57),
       Dm = random_vec<float>(n * n, -1.f, 1.f, 58);
  for (const std::vector<Opt>& opts : std::vector<std::vector<Opt>>{
           {opt(OptOps::UNROLL, 0, 4)}, {opt(OptOps::UNROLL, 1, 4)}, {opt(OptOps::UNROLL, 1, 0)},
           {opt(OptOps::UNROLL, 1, 4), opt(OptOps::UNROLL, 1, 2)}}) {
    CAPTURE(opts.size());
    CAPTURE(opts[0].axis);
    auto res = run_kernel(with_opts(k, opts), {{1, to_bytes(Am)}, {2, to_bytes(Bm)}, {3, to_bytes(Dm)}});
    INFO(res.source);
    auto got = from_bytes<float>(res.buffers[0]);
    CHECK(dmm_mismatches(got, Am, Bm, Dm, n) == 0);
  }
  for (const std::vector<Opt>& opts : std::vector<std::vector<Opt>>{{opt(OptOps::UNROLL, 0, 4), opt(OptOps::UNROLL, 1, 4)},
                                                                     {opt(OptOps::UNROLL, 1, 4), opt(OptOps::UNROLL, 0, 4)}})
    CHECK_THROWS_WITH_AS(with_opts(k, opts), doctest::Contains("lanes would meet other lanes in a read of a staged buffer"),
                         uopcg::error);
}

TEST_CASE("builder kernel: a LOCAL stage inside a GROUP reduce whose group range its value depends on") {
  // out[i] = sum_g sum_j2 (A[g, j2] + B[i, j2]) * D[j2, i], the parenthesis staged over j inside the
  // reduce over g, a GROUP_REDUCE range: each work-item of the group stages its own g's row
  constexpr int n = 8, groups = 4;
  Arena a;
  UOp out = param(a, 0, DType::float32, n), A = param(a, 1, DType::float32, groups * n), B = param(a, 2, DType::float32, n * n),
      D = param(a, 3, DType::float32, n * n);
  UOp i = R(a, n, 0, AxisType::GLOBAL), g = R(a, groups, 1, AxisType::GROUP_REDUCE), j = R(a, n, 2, AxisType::WEAK),
      j2 = R(a, n, 3, AxisType::REDUCE);
  UOp st = stage(index(A, g * n + j) + index(B, i * n + j), AddrSpace::LOCAL, j);
  UOp per_g = reduce(index(st, j2) * index(D, j2 * n + i), Ops::ADD, j2);
  UOp k = kernel_sink(end(store(index(out, i), reduce(per_g, Ops::ADD, g)), i), "stage_in_group");
  auto Am = random_vec<float>(groups * n, -1.f, 1.f, 47), Bm = random_vec<float>(n * n, -1.f, 1.f, 48),
       Dm = random_vec<float>(n * n, -1.f, 1.f, 49);
  auto res = run_kernel(k, {{1, to_bytes(Am)}, {2, to_bytes(Bm)}, {3, to_bytes(Dm)}});
  INFO(res.source);
  auto got = from_bytes<float>(res.buffers[0]);
  int bad = 0;
  for (int ii = 0; ii < n; ++ii) {
    double want = 0;
    for (int gg = 0; gg < groups; ++gg)
      for (int jj = 0; jj < n; ++jj) want += (static_cast<double>(Am[gg * n + jj]) + Bm[ii * n + jj]) * Dm[jj * n + ii];
    bad += !close(got[ii], want, 1e-4, 1e-4);
  }
  CHECK(bad == 0);
}

TEST_CASE("builder kernel: a LOCAL stage of a GROUP reduce's result is not indexed by the group range") {
  // out[i] = sum_j2 (Y[j2] - mean(X)) * D[j2, i], the mean a GROUP reduce (g) and the parenthesis staged
  // over j: the reduce's accumulator is initialised inside g's range, but the staged value is the
  // whole group's sum, the same in every work-item, so the stage stays one row (P23 reads data
  // dependences only; it made it one row per g, 4x the LOCAL memory)
  constexpr int n = 8, groups = 4, per = 4;
  Arena a;
  UOp out = param(a, 0, DType::float32, n), X = param(a, 1, DType::float32, groups * per), Y = param(a, 2, DType::float32, n),
      D = param(a, 3, DType::float32, n * n);
  UOp i = R(a, n, 0, AxisType::GLOBAL), g = R(a, groups, 1, AxisType::GROUP_REDUCE), r = R(a, per, 2, AxisType::REDUCE),
      j = R(a, n, 3, AxisType::WEAK), j2 = R(a, n, 4, AxisType::REDUCE);
  UOp mean = reduce(index(X, g * per + r), Ops::ADD, g, r) * const_(a, DType::float32, Arg::floating(1.0 / (groups * per)));
  UOp st = stage(index(Y, j) - mean, AddrSpace::LOCAL, j);
  UOp k = kernel_sink(end(store(index(out, i), reduce(index(st, j2) * index(D, j2 * n + i), Ops::ADD, j2)), i), "stage_of_group_sum");
  auto Xm = random_vec<float>(groups * per, -1.f, 1.f, 53), Ym = random_vec<float>(n, -1.f, 1.f, 54),
       Dm = random_vec<float>(n * n, -1.f, 1.f, 55);
  auto res = run_kernel(k, {{1, to_bytes(Xm)}, {2, to_bytes(Ym)}, {3, to_bytes(Dm)}});
  INFO(res.source);
  std::vector<std::string> locals;  // the LOCAL declarations: the partials (4 floats) and the stage
  for (std::size_t at = res.source.find("__local float "); at != std::string::npos; at = res.source.find("__local float ", at + 1))
    locals.push_back(res.source.substr(at, res.source.find(';', at) - at));
  CAPTURE(locals.size());
  CHECK(std::count_if(locals.begin(), locals.end(), [](const std::string& d) { return d.ends_with("[8]"); }) == 1);
  CHECK(std::none_of(locals.begin(), locals.end(), [](const std::string& d) { return d.ends_with("[32]"); }));
  auto got = from_bytes<float>(res.buffers[0]);
  double m = 0;
  for (float x : Xm) m += x;
  m /= groups * per;
  int bad = 0;
  for (int ii = 0; ii < n; ++ii) {
    double want = 0;
    for (int jj = 0; jj < n; ++jj) want += (Ym[jj] - m) * Dm[jj * n + ii];
    bad += !close(got[ii], want, 1e-4, 1e-4);
  }
  CHECK(bad == 0);
}

namespace {
/// out0 = a*b + (a - b), out1 = a < b, out2 = max(a, b) for integer T; wrapping like OpenCL C.
template <class T>
void integer_arith(DType dt, T lo, T hi) {
  constexpr int N = 128;
  Arena a;
  UOp o0 = param(a, 0, dt, N), o1 = param(a, 1, DType::bool_, N), o2 = param(a, 2, dt, N);
  UOp A = param(a, 3, dt, N), B = param(a, 4, dt, N);
  UOp i = R(a, N, 0, AxisType::GLOBAL);
  UOp x = index(A, i), y = index(B, i);
  UOp k = kernel_sink(end(group(store(index(o0, i), x * y + (x - y)), store(index(o1, i), x < y), store(index(o2, i), maximum(x, y))), i),
                      "int_arith");
  auto va = random_vec<T>(N, lo, hi, 51), vb = random_vec<T>(N, lo, hi, 52);
  va[0] = std::numeric_limits<T>::max(), vb[0] = std::numeric_limits<T>::max();  // wraps
  va[1] = std::numeric_limits<T>::min(), vb[1] = 1;
  auto res = run_kernel(k, {{3, to_bytes(va)}, {4, to_bytes(vb)}});
  auto g0 = from_bytes<T>(res.buffers[0]);
  auto g1 = from_bytes<std::uint8_t>(res.buffers[1]);
  auto g2 = from_bytes<T>(res.buffers[2]);
  int bad = 0;
  for (int j = 0; j < N; ++j) {
    // Wrapping arithmetic in an unsigned type at least as wide as unsigned int: narrower unsigned
    // operands would promote to (signed) int, whose overflow is undefined.
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    const W a_ = static_cast<U>(va[j]), b_ = static_cast<U>(vb[j]);
    const U w = static_cast<U>(a_ * b_ + (a_ - b_));
    bad += g0[j] != static_cast<T>(w);
    bad += g1[j] != (va[j] < vb[j] ? 1 : 0);
    bad += g2[j] != (va[j] < vb[j] ? vb[j] : va[j]);
  }
  INFO(res.source);
  CHECK(bad == 0);
}
}  // namespace

TEST_CASE("builder kernel: narrow and wide integers wrap like OpenCL C") {
  SUBCASE("int8") { integer_arith<std::int8_t>(DType::int8, -128, 127); }
  SUBCASE("uint8") { integer_arith<std::uint8_t>(DType::uint8, 0, 255); }
  SUBCASE("int16") { integer_arith<std::int16_t>(DType::int16, -32768, 32767); }
  SUBCASE("uint16") { integer_arith<std::uint16_t>(DType::uint16, 0, 65535); }
  SUBCASE("uint32") { integer_arith<std::uint32_t>(DType::uint32, 0, 4000000000u); }
  SUBCASE("uint64") { integer_arith<std::uint64_t>(DType::uint64, 0, 1ull << 62); }
}

TEST_CASE("builder kernel: int32 and int64 arithmetic and sums") {
  constexpr int N = 256;
  for (DType dt : {DType::int32, DType::int64}) {
    CAPTURE(name(dt));
    Arena a;
    UOp out = param(a, 0, dt, 1), in = param(a, 1, dt, N);
    UOp r = R(a, N, 0, AxisType::REDUCE);
    UOp k = kernel_sink(store(index(out, literal(a, 0)), reduce(index(in, r) * 3 - 7, Ops::ADD, r)), "int_sum");
    auto v = random_vec<std::int64_t>(N, -100000000, 100000000, 61);
    std::int64_t want = 0;
    for (auto x : v) want += x * 3 - 7;
    Bytes inb;
    if (dt == DType::int32) {
      std::vector<std::int32_t> v32(v.begin(), v.end());
      inb = to_bytes(v32);
      want = 0;
      for (auto x : v32) want = static_cast<std::int32_t>(static_cast<std::uint32_t>(want) + static_cast<std::uint32_t>(x * 3 - 7));
    } else {
      inb = to_bytes(v);
    }
    auto res = run_kernel(k, {{1, inb}});
    const std::int64_t got = dt == DType::int32 ? from_bytes<std::int32_t>(res.buffers[0])[0] : from_bytes<std::int64_t>(res.buffers[0])[0];
    INFO(res.source);
    CHECK(got == want);
  }
}

TEST_CASE("builder kernel: bool logic") {
  constexpr int N = 64;
  Arena a;
  UOp out = param(a, 0, DType::bool_, N), A = param(a, 1, DType::bool_, N), B = param(a, 2, DType::bool_, N);
  UOp i = R(a, N, 0, AxisType::GLOBAL);
  UOp x = index(A, i), y = index(B, i);
  UOp k = kernel_sink(end(store(index(out, i), (x & y) | (x ^ logical_not(y))), i), "bool_logic");
  std::vector<std::uint8_t> va(N), vb(N);
  for (int j = 0; j < N; ++j) va[j] = j & 1, vb[j] = (j >> 1) & 1;
  auto res = run_kernel(k, {{1, to_bytes(va)}, {2, to_bytes(vb)}});
  auto got = from_bytes<std::uint8_t>(res.buffers[0]);
  int bad = 0;
  for (int j = 0; j < N; ++j) bad += got[j] != ((va[j] & vb[j]) | (va[j] ^ (vb[j] ^ 1)));
  INFO(res.source);
  CHECK(bad == 0);
}

TEST_CASE("builder kernel: half and bfloat16 sums and max-reductions") {
  // values are multiples of 1/16 (half) or 1/4 (bf16) in [0, 1): every partial sum is exact
  constexpr int N = 64;
  for (DType dt : {DType::float16, DType::bfloat16}) {
    for (Ops op : {Ops::ADD, Ops::MAX}) {
      CAPTURE(name(dt));
      CAPTURE(static_cast<int>(op));
      Arena a;
      UOp out = param(a, 0, dt, 1), in = param(a, 1, dt, N);
      UOp r = R(a, N, 0, AxisType::REDUCE);
      UOp k = kernel_sink(store(index(out, literal(a, 0)), reduce(index(in, r), op, r)), "h_reduce");
      std::vector<std::uint16_t> bits(N);
      double want = op == Ops::ADD ? 0 : -INFINITY;
      const int denom = dt == DType::float16 ? 16 : 4;
      for (int j = 0; j < N; ++j) {
        const float v = static_cast<float>((j * 7) % denom) / static_cast<float>(denom);
        bits[j] = dt == DType::float16 ? uopcg_test::float_to_half(v) : uopcg_test::float_to_bf16(v);
        want = op == Ops::ADD ? want + v : std::max<double>(want, v);
      }
      auto res = run_kernel(k, {{1, to_bytes(bits)}});
      const std::uint16_t gb = from_bytes<std::uint16_t>(res.buffers[0])[0];
      const float got = dt == DType::float16 ? uopcg_test::half_to_float(gb) : uopcg_test::bf16_to_float(gb);
      INFO(res.source);
      CHECK(got == want);
    }
  }
}

TEST_CASE("builder kernel: float edge values (nan, +-inf, +-0, overflow)") {
  const std::vector<float> vals = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, FLT_MAX, -FLT_MAX, 2.5f};
  std::vector<float> va, vb;
  for (float x : vals)
    for (float y : vals) va.push_back(x), vb.push_back(y);
  const int N = static_cast<int>(va.size());
  Arena a;
  UOp o_mul = param(a, 0, DType::float32, N), o_add = param(a, 1, DType::float32, N), o_lt = param(a, 2, DType::bool_, N),
      o_max = param(a, 3, DType::float32, N), o_ne = param(a, 4, DType::bool_, N);
  UOp A = param(a, 5, DType::float32, N), B = param(a, 6, DType::float32, N);
  UOp i = R(a, N, 0, AxisType::GLOBAL);
  UOp x = index(A, i), y = index(B, i);
  UOp k = kernel_sink(end(group(store(index(o_mul, i), x * y), store(index(o_add, i), x + y), store(index(o_lt, i), x < y),
                                store(index(o_max, i), maximum(x, y)), store(index(o_ne, i), ne(x, y))),
                          i),
                      "float_edges");
  auto res = run_kernel(k, {{5, to_bytes(va)}, {6, to_bytes(vb)}});
  auto mul = from_bytes<float>(res.buffers[0]), add = from_bytes<float>(res.buffers[1]), mx = from_bytes<float>(res.buffers[3]);
  auto lt = from_bytes<std::uint8_t>(res.buffers[2]), nev = from_bytes<std::uint8_t>(res.buffers[4]);
  auto same = [](float g, float w) { return (std::isnan(g) && std::isnan(w)) || std::bit_cast<std::uint32_t>(g) == std::bit_cast<std::uint32_t>(w); };
  int bad = 0;
  for (int j = 0; j < N; ++j) {
    bad += !same(mul[j], va[j] * vb[j]);
    bad += !same(add[j], va[j] + vb[j]);
    bad += lt[j] != (va[j] < vb[j]);
    bad += !same(mx[j], va[j] < vb[j] ? vb[j] : va[j]);
    bad += nev[j] != (va[j] != vb[j]);
  }
  INFO(res.source);
  CHECK(bad == 0);
}

TEST_CASE("builder kernel: half, bf16 and fp8 reductions with negative values, -inf and products") {
  // an emulated-dtype REG accumulator: initialised with the identity (-inf for MAX, 1 for MUL),
  // loaded and stored as bits every iteration, read back after the loop
  constexpr int N = 64;
  struct Fmt {
    DType dt;
    std::uint16_t (*to)(float);
    float (*from)(std::uint16_t);
  };
  const Fmt fmts[] = {{DType::float16, uopcg_test::float_to_half, uopcg_test::half_to_float},
                      {DType::bfloat16, uopcg_test::float_to_bf16, uopcg_test::bf16_to_float}};
  for (const Fmt& f : fmts) {
    for (Ops op : {Ops::MAX, Ops::MUL, Ops::ADD}) {
      for (int variant = 0; variant < 3; ++variant) {
        CAPTURE(name(f.dt));
        CAPTURE(static_cast<int>(op));
        CAPTURE(variant);
        Arena a;
        UOp out = param(a, 0, f.dt, 1), in = param(a, 1, f.dt, N);
        UOp r = R(a, N, 0, AxisType::REDUCE);
        UOp k = kernel_sink(store(index(out, literal(a, 0)), reduce(index(in, r), op, r)), "h_reduce_neg");
        std::vector<std::uint16_t> bits(N);
        double want = op == Ops::ADD ? 0 : op == Ops::MUL ? 1 : -INFINITY;
        for (int j = 0; j < N; ++j) {
          float v;
          // every partial result is exact in half and bf16
          if (op == Ops::MUL) v = std::array<float, 4>{variant == 1 ? -2.f : 2.f, 0.5f, -1.f, variant == 2 && j == N - 1 ? -0.25f : 1.f}[j % 4];
          else if (variant == 2) v = j % 5 == 0 ? -INFINITY : -static_cast<float>(1 + (j * 7) % 16) / 4.f;  // all negative
          else if (variant == 1) v = -INFINITY;
          else v = static_cast<float>((j * 7) % 16 - 8) / 4.f;  // mixed signs
          bits[j] = f.to(v);
          want = op == Ops::ADD ? want + v : op == Ops::MUL ? want * v : std::max<double>(want, v);
        }
        auto res = run_kernel(k, {{1, to_bytes(bits)}});
        const float got = f.from(from_bytes<std::uint16_t>(res.buffers[0])[0]);
        INFO(res.source);
        CHECK(got == want);
      }
    }
  }
}

TEST_CASE("builder kernel: fp8e4m3 product and max-reduction (emulated in float)") {
  constexpr int N = 32;
  // exact e4m3 encodings: 0.5, 1, 2, -1, -2, -0.5
  const std::pair<float, std::uint8_t> enc[] = {{0.5f, 0x30}, {1.f, 0x38}, {2.f, 0x40}, {-1.f, 0xB8}, {-2.f, 0xC0}, {-0.5f, 0xB0}};
  for (Ops op : {Ops::MUL, Ops::MAX}) {
    CAPTURE(static_cast<int>(op));
    Arena a;
    UOp out = param(a, 0, DType::fp8e4m3, 1), in = param(a, 1, DType::fp8e4m3, N);
    UOp r = R(a, N, 0, AxisType::REDUCE);
    UOp k = kernel_sink(store(index(out, literal(a, 0)), reduce(index(in, r), op, r)), "fp8_reduce");
    std::vector<std::uint8_t> bits(N);
    double want = op == Ops::MUL ? 1 : -INFINITY;
    for (int j = 0; j < N; ++j) {
      // MUL: 2, 0.5, -1, 1, ... keeps every partial product in {+-1, +-2}; MAX: negatives first
      const auto& e = enc[op == Ops::MUL ? std::array<int, 4>{2, 0, 3, 1}[j % 4] : j < N / 2 ? 3 + (j * 5) % 3 : (j * 5) % 6];
      bits[j] = e.second;
      want = op == Ops::MUL ? want * e.first : std::max<double>(want, e.first);
    }
    auto res = run_kernel(k, {{1, to_bytes(bits)}});
    const std::uint8_t gb = from_bytes<std::uint8_t>(res.buffers[0])[0];
    std::optional<float> got;
    for (const auto& e : enc)
      if (e.second == gb) got = e.first;
    INFO(res.source);
    INFO("result bits ", static_cast<int>(gb));
    REQUIRE(got.has_value());
    CHECK(*got == want);
  }
}

TEST_CASE("builder kernel: half GROUP_REDUCE sum and max go through a LOCAL buffer of half") {
  constexpr int N = 4096;
  for (Ops op : {Ops::ADD, Ops::MAX}) {
    CAPTURE(static_cast<int>(op));
    Arena a;
    UOp out = param(a, 0, DType::float16, 1), in = param(a, 1, DType::float16, N);
    UOp g = R(a, 16, 1, AxisType::GROUP_REDUCE), r = R(a, 256, 0, AxisType::REDUCE);
    UOp k = kernel_sink(store(index(out, literal(a, 0)), reduce(index(in, g * 256 + r), op, g, r)), "group_half");
    // values in {0, 0.5, 1} (sum) or multiples of 1/8 in [-64, 0) with the maximum in one group
    // (max): every partial result is exact in half
    std::vector<std::uint16_t> bits(N);
    double want = op == Ops::ADD ? 0 : -INFINITY;
    for (int j = 0; j < N; ++j) {
      const float v = op == Ops::ADD ? ((j * 7) % 8 == 0 ? 1.f : (j * 7) % 8 == 3 ? 0.5f : 0.f)
                                     : -static_cast<float>(1 + (j * 37) % 511) / 8.f;
      bits[j] = uopcg_test::float_to_half(v);
      want = op == Ops::ADD ? want + v : std::max<double>(want, v);
    }
    auto res = run_kernel(k, {{1, to_bytes(bits)}});
    INFO(res.source);
    CHECK(uopcg_test::half_to_float(from_bytes<std::uint16_t>(res.buffers[0])[0]) == want);
    bool local_half = false;
    for (UOp u : res.program) local_half = local_half || (u.op() == Ops::BUFFER && u.addrspace() == AddrSpace::LOCAL && u.dtype() == DType::uint16);
    CHECK(local_half);
    CHECK(res.source.find("__local ushort") != std::string::npos);
  }
}

// Emulated half (no cl_khr_fp16) converts through vload_half / vstore_half_rte by default
// (Target::half_builtins) and through integer bit graphs otherwise: both must be IEEE-exact on the
// device, checked bit for bit against the C++ reference of the dtype tests.
TEST_CASE("builder kernel: emulated half <-> float on the device is IEEE-exact, built-ins and bit graphs") {
  using namespace dtypes_test;
  std::vector<std::uint16_t> halves(65536);
  std::iota(halves.begin(), halves.end(), std::uint16_t{0});
  const std::vector<std::uint32_t> floats = float_samples(HALF);
  const auto n_f = static_cast<std::int64_t>(floats.size());
  for (bool builtins : {true, false}) {
    CAPTURE(builtins);
    Target t = Target::pocl();
    t.half_builtins = builtins;
    Arena a;
    UOp wide = param(a, 0, DType::float32, 65536), hin = param(a, 1, DType::float16, 65536);
    UOp narrow = param(a, 0, DType::float16, n_f), fin = param(a, 1, DType::float32, n_f);
    UOp i = R(a, 65536, 0, AxisType::GLOBAL), j = R(a, n_f, 0, AxisType::GLOBAL);
    auto up = run_kernel(kernel_sink(end(store(index(wide, i), cast(index(hin, i), DType::float32)), i), "half_to_float"),
                         {{1, to_bytes(halves)}}, t);
    auto down = run_kernel(kernel_sink(end(store(index(narrow, j), cast(index(fin, j), DType::float16)), j), "float_to_half"),
                           {{1, to_bytes(floats)}}, t);
    INFO(up.source);
    INFO(down.source);
    CHECK((up.source.find("uopcg_half_to_float") != std::string::npos) == builtins);
    CHECK((down.source.find("uopcg_float_to_half") != std::string::npos) == builtins);
    CHECK(up.source.find("cl_khr_fp16") == std::string::npos);
    const auto got_w = from_bytes<std::uint32_t>(up.buffers[0]);
    const auto got_n = from_bytes<std::uint16_t>(down.buffers[0]);
    int bad_w = 0, bad_n = 0;
    for (std::size_t h = 0; h < halves.size(); ++h) bad_w += got_w[h] != convert(halves[h], HALF, F32);
    for (std::size_t f = 0; f < floats.size(); ++f)
      if (got_n[f] != convert(floats[f], F32, HALF) && ++bad_n <= 8) {
        const std::uint32_t in = floats[f];
        const unsigned got = got_n[f], want = static_cast<unsigned>(convert(in, F32, HALF));
        MESSAGE("float bits " << in << ": got half bits " << got << ", want " << want);
      }
    CHECK(bad_w == 0);
    CHECK(bad_n == 0);
  }
}

// A gather with Python-style negative indices (tensor[idx] in tinygrad): `idx < 0` compares an int
// LOAD with a weak 0, the wrapped row is gated into range, and `where(x > 3, x, 7)` has a weak
// branch. Index lowering used to leave a CAST(weakint) in both places (found by tools/tinygrad_oracle.py).
TEST_CASE("builder kernel: gather with negative indices, and an int WHERE with a literal branch") {
  constexpr int ROWS = 64, COLS = 32, N = 8;
  Arena a;
  UOp out = param(a, 0, DType::float32, N * COLS), idx = param(a, 1, DType::int32, N), src = param(a, 2, DType::float32, ROWS * COLS);
  UOp i = R(a, N, 0, AxisType::GLOBAL), j = R(a, COLS, 1, AxisType::GLOBAL);
  UOp v = index(idx, i);                         // int
  UOp w = cast(where(v < 0, v + ROWS, v), DType::weakint);
  UOp row = valid(w * COLS + j, logical_not(w < 0) & (w < ROWS));
  UOp gathered = kernel_sink(end(store(index(out, i * COLS + j), index(src, row)), i, j), "gather");
  auto iv = std::vector<std::int32_t>{-1, 0, 5, -64, 63, -65, 64, -7};
  auto sv = random_vec<float>(ROWS * COLS, -1.f, 1.f, 91);
  auto r = run_kernel(gathered, {{1, to_bytes(iv)}, {2, to_bytes(sv)}});
  auto got = from_bytes<float>(r.buffers[0]);
  int bad = 0;
  for (int n = 0; n < N; ++n) {
    const int wr = iv[n] < 0 ? iv[n] + ROWS : iv[n];
    for (int c = 0; c < COLS; ++c) bad += got[n * COLS + c] != (wr >= 0 && wr < ROWS ? sv[wr * COLS + c] : 0.f);
  }
  INFO(r.source);
  CHECK(bad == 0);

  Arena b;
  UOp o2 = param(b, 0, DType::int32, N), in2 = param(b, 1, DType::int32, N);
  UOp k2 = R(b, N, 0, AxisType::GLOBAL);
  UOp x = index(in2, k2);
  auto r2 = run_kernel(kernel_sink(end(store(index(o2, k2), where(x > 3, x, literal(b, 7))), k2), "where_int"), {{1, to_bytes(iv)}});
  auto got2 = from_bytes<std::int32_t>(r2.buffers[0]);
  for (int n = 0; n < N; ++n) CHECK(got2[n] == (iv[n] > 3 ? iv[n] : 7));
}
