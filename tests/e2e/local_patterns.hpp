// The classic LOCAL-memory patterns, written with the builder as post-opts graphs, and the LOCAL
// kernels of test_builder_kernels.cpp rebuilt alike: each compiles through the whole pipeline (whose
// implicit barriers place RAW barriers at LOCAL AFTERs and WAR barriers at loop tails), runs on an
// OpenCL device, and is checked against a plain C++ reference. Shared by the end-to-end test
// (tests/e2e/test_local_patterns.cpp) and the race oracle's kernel tool (tests/e2e/race_kernels.cpp,
// run under Oclgrind by scripts/race-oracle.sh).
//
// Inputs are small integers (or halves chosen so every partial result is exact), so outputs
// compare exactly.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <uopcg/codegen/pipeline.hpp>
#include <uopcg/core/builder.hpp>
#include <uopcg/runtime/opencl.hpp>

#include "../kernels/kernel_sink.hpp"
#include "../kernels/tiled_matmul.hpp"
#include "kernel_runner.hpp"

namespace uopcg_test {

struct LocalPattern {
  std::string name;
  std::function<uopcg::UOp(uopcg::Arena&)> build;  // the post-opts graph
  std::map<std::int64_t, Bytes> inputs;            // by parameter slot
  /// The expected contents of the output slot `out_slot` (of dtype `out_dtype`: float32 or float16).
  std::int64_t out_slot = 0;
  uopcg::DType out_dtype = uopcg::DType::float32;
  std::vector<float> expected;
  std::size_t barriers = 0;  // BARRIERs in the compiled program
  /// The barriers (by number) whose removal creates no race: the kernel is correct without them.
  std::vector<std::size_t> redundant;
};

namespace patterns {

using namespace uopcg;

inline std::vector<float> small_ints(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(std::uniform_int_distribution<int>(-8, 8)(g));
  return v;
}
inline UOp fzero(Arena& a) { return const_(a, DType::float32, Arg::floating(0.0)); }

/// Per-group sum by an in-place tree reduction in LOCAL memory, one barrier per step (at the loop's
/// tail). Sequential addressing: at step s work-items l < n/2^(s+1) add [l + n/2^(s+1)] into [l];
/// interleaved: work-items l with l % 2^(s+1) == 0 add [l + 2^s] into [l].
inline LocalPattern tree_reduction(bool interleaved) {
  static constexpr int G = 4, N = 64, STEPS = 6;
  LocalPattern p;
  p.name = interleaved ? "tree_reduce_interleaved" : "tree_reduce_sequential";
  const std::vector<float> x = small_ints(G * N, interleaved ? 101 : 102);
  p.inputs[1] = to_bytes(x);
  p.expected.assign(G, 0.f);
  for (int g = 0; g < G; ++g)
    for (int l = 0; l < N; ++l) p.expected[g] += x[g * N + l];
  p.barriers = 2;  // before the loop (RAW), at its tail
  p.build = [interleaved, name = p.name](Arena& a) {
    UOp out = param(a, 0, DType::float32, G), in = param(a, 1, DType::float32, G * N);
    UOp g = range(a, G, 0, AxisType::GLOBAL), l = range(a, N, 1, AxisType::LOCAL);
    UOp s = range(a, STEPS, 2, AxisType::LOOP);
    UOp buf = buffer(a, 0, DType::float32, N, AddrSpace::LOCAL);
    UOp filled = after(buf, store(index(buf, l), index(in, g * N + l)));
    UOp cur = after(filled, s);
    UOp stride = interleaved ? literal(a, 1) << s : literal(a, N / 2) >> s;
    UOp active = interleaved ? eq(l & ((literal(a, 2) << s) - 1), literal(a, 0)) : l < stride;
    UOp sum = index(cur, l) + index(cur, valid(l + stride, active));
    UOp step = end(store(index(cur, valid(l, active)), sum), s);
    UOp result = index(after(buf, step), literal(a, 0));
    return kernel_sink(end(store(index(out, valid(g, eq(l, literal(a, 0)))), result), g, l), name);
  };
  return p;
}

/// Inclusive prefix sum per group, Hillis-Steele: at step d every work-item adds the element 2^d to
/// its left; double-buffered (steps alternate between the halves of one LOCAL buffer), so a step
/// never overwrites what another work-item still reads in it.
inline LocalPattern hillis_steele_scan() {
  static constexpr int G = 2, N = 32, STEPS = 5;
  LocalPattern p;
  p.name = "scan_hillis_steele";
  const std::vector<float> x = small_ints(G * N, 103);
  p.inputs[1] = to_bytes(x);
  p.expected.resize(G * N);
  for (int g = 0; g < G; ++g) {
    float run = 0;
    for (int l = 0; l < N; ++l) p.expected[g * N + l] = run += x[g * N + l];
  }
  p.barriers = 2;
  p.build = [](Arena& a) {
    UOp out = param(a, 0, DType::float32, G * N), in = param(a, 1, DType::float32, G * N);
    UOp g = range(a, G, 0, AxisType::GLOBAL), l = range(a, N, 1, AxisType::LOCAL);
    UOp d = range(a, STEPS, 2, AxisType::LOOP);
    UOp buf = buffer(a, 0, DType::float32, 2 * N, AddrSpace::LOCAL);
    UOp cur = after(after(buf, store(index(buf, l), index(in, g * N + l))), d);
    UOp from = (d & 1) * N, to = ((d + 1) & 1) * N;
    UOp off = literal(a, 1) << d;
    UOp left = index(cur, valid(from + l - off, l >= off));
    UOp step = end(store(index(cur, to + l), index(cur, from + l) + left), d);
    // STEPS is odd: the last step wrote the upper half
    UOp result = index(after(buf, step), N + l);
    return kernel_sink(end(store(index(out, g * N + l), result), g, l), "scan_hillis_steele");
  };
  return p;
}

/// Exclusive prefix sum per group, Blelloch: an up-sweep building partial sums in place, the last
/// element cleared, then a down-sweep; a barrier after every step. Cleared by the last work-item;
/// `first_clears`: by the first, which leaves the barrier behind the clear ordering nothing (the
/// first down-sweep step is work-item 0's alone).
inline LocalPattern blelloch_scan(bool first_clears = false) {
  static constexpr int G = 2, N = 32, L = 5;
  LocalPattern p;
  p.name = first_clears ? "scan_blelloch_first_clears" : "scan_blelloch";
  if (first_clears) p.redundant = {2};
  const std::vector<float> x = small_ints(G * N, 104);
  p.inputs[1] = to_bytes(x);
  p.expected.resize(G * N);
  for (int g = 0; g < G; ++g) {
    float run = 0;
    for (int l = 0; l < N; ++l) {
      p.expected[g * N + l] = run;
      run += x[g * N + l];
    }
  }
  p.barriers = 4;  // before the up-sweep, its tail, before the down-sweep, its tail
  p.build = [first_clears, name = p.name](Arena& a) {
    UOp out = param(a, 0, DType::float32, G * N), in = param(a, 1, DType::float32, G * N);
    UOp g = range(a, G, 0, AxisType::GLOBAL), l = range(a, N, 1, AxisType::LOCAL);
    UOp up = range(a, L, 2, AxisType::LOOP), down = range(a, L, 3, AxisType::LOOP);
    UOp buf = buffer(a, 0, DType::float32, N, AddrSpace::LOCAL);
    UOp filled = after(buf, store(index(buf, l), index(in, g * N + l)));
    // up-sweep, step d: work-items l < N/2^(d+1) add [i - 2^d] into [i], i = (l+1)*2^(d+1) - 1
    UOp cu = after(filled, up);
    UOp active_u = l < (literal(a, N / 2) >> up);
    UOp iu = (l + 1) * (literal(a, 2) << up) - 1, hu = literal(a, 1) << up;
    UOp sweep_up = end(store(index(cu, valid(iu, active_u)), index(cu, valid(iu, active_u)) + index(cu, valid(iu - hu, active_u))), up);
    UOp clearer = eq(l, literal(a, first_clears ? 0 : N - 1));
    UOp cleared = after(buf, store(index(after(buf, sweep_up), valid(literal(a, N - 1), clearer)), fzero(a)));
    // down-sweep, step e (d = L-1-e): t = [i - 2^d]; [i - 2^d] = [i]; [i] += t
    UOp cd = after(cleared, down);
    UOp dd = (L - 1) - down;
    UOp active_d = l < (literal(a, 1) << down);
    UOp id = (l + 1) * (literal(a, 2) << dd) - 1, hd = literal(a, 1) << dd;
    UOp left = index(cd, valid(id - hd, active_d)), right = index(cd, valid(id, active_d));
    UOp sweep_down = end(group(store(index(cd, valid(id - hd, active_d)), right), store(index(cd, valid(id, active_d)), right + left)), down);
    UOp result = index(after(buf, sweep_down), l);
    return kernel_sink(end(store(index(out, g * N + l), result), g, l), name);
  };
  return p;
}

/// c = a @ b (n x n) through two LOCAL tiles of T x T: per K tile, every work-item stores one
/// element of each tile (RAW barrier before the products), and the next tile's stores wait for this
/// tile's reads (the write-after-read barrier at the K loop's tail).
inline LocalPattern tiled_matmul(int n = 32, int T = 8, std::string name = "tiled_matmul") {
  LocalPattern p;
  p.name = name;
  const std::vector<float> A = small_ints(static_cast<std::size_t>(n * n), 105), B = small_ints(static_cast<std::size_t>(n * n), 106);
  p.inputs[1] = to_bytes(A);
  p.inputs[2] = to_bytes(B);
  p.expected.assign(static_cast<std::size_t>(n * n), 0.f);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int t = 0; t < n; ++t) p.expected[i * n + j] += A[i * n + t] * B[t * n + j];
  p.barriers = 2;
  p.build = [n, T, name](Arena& a) { return tiled_matmul_kernel(a, n, T, name); };
  return p;
}

/// out = in^T through a padded LOCAL tile: a group reads a tile row-wise and writes it column-wise.
inline LocalPattern transpose() {
  static constexpr int n = 32, T = 8;
  LocalPattern p;
  p.name = "transpose";
  const std::vector<float> x = small_ints(n * n, 107);
  p.inputs[1] = to_bytes(x);
  p.expected.resize(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) p.expected[j * n + i] = x[i * n + j];
  p.barriers = 1;
  p.build = [](Arena& a) {
    UOp out = param(a, 0, DType::float32, n * n), in = param(a, 1, DType::float32, n * n);
    UOp gx = range(a, n / T, 0, AxisType::GLOBAL), gy = range(a, n / T, 1, AxisType::GLOBAL);
    UOp ly = range(a, T, 2, AxisType::LOCAL), lx = range(a, T, 3, AxisType::LOCAL);
    UOp tile = buffer(a, 0, DType::float32, T * (T + 1), AddrSpace::LOCAL);
    UOp filled = after(tile, store(index(tile, ly * (T + 1) + lx), index(in, (gy * T + ly) * n + gx * T + lx)));
    UOp st = store(index(out, (gx * T + ly) * n + gy * T + lx), index(filled, lx * (T + 1) + ly));
    return kernel_sink(end(st, gx, gy, ly, lx), "transpose");
  };
  return p;
}

/// out[i] = in[i-1] + in[i] + in[i+1] (0 outside), one group per tile of T with a one-element halo
/// on each side, stored by the first and the last work-item.
inline LocalPattern stencil_halo() {
  static constexpr int G = 4, T = 32, N = G * T;
  LocalPattern p;
  p.name = "stencil_halo";
  const std::vector<float> x = small_ints(N, 108);
  p.inputs[1] = to_bytes(x);
  p.expected.resize(N);
  for (int i = 0; i < N; ++i) p.expected[i] = (i > 0 ? x[i - 1] : 0.f) + x[i] + (i + 1 < N ? x[i + 1] : 0.f);
  p.barriers = 1;
  p.build = [](Arena& a) {
    UOp out = param(a, 0, DType::float32, N), in = param(a, 1, DType::float32, N);
    UOp g = range(a, G, 0, AxisType::GLOBAL), l = range(a, T, 1, AxisType::LOCAL);
    UOp buf = buffer(a, 0, DType::float32, T + 2, AddrSpace::LOCAL);
    UOp i = g * T + l;
    UOp first = eq(l, literal(a, 0)), last = eq(l, literal(a, T - 1));
    UOp st_mid = store(index(buf, l + 1), index(in, i));
    UOp st_left = store(index(buf, valid(literal(a, 0), first)), index(in, valid(i - 1, g > 0)));
    UOp st_right = store(index(buf, valid(literal(a, T + 1), last)), index(in, valid(i + 1, g < G - 1)));
    UOp tile = after(buf, st_mid, st_left, st_right);
    UOp v = index(tile, l) + index(tile, l + 1) + index(tile, l + 2);
    return kernel_sink(end(store(index(out, i), v), g, l), "stencil_halo");
  };
  return p;
}

/// Per-group variance in two passes through one LOCAL buffer: the values, a barrier, every
/// work-item sums them (the mean); the buffer is then reused for the squared deviations, which
/// must wait until every work-item has read the first pass. tinygrad's implicit barriers do not
/// order that reuse (no loop tail, no LOCAL store behind the AFTER), so the graph asks for the
/// write-after-read barrier itself: `explicit_war` false builds the graph without it.
inline LocalPattern two_pass_reduction(bool explicit_war = true) {
  static constexpr int G = 4, N = 32;
  LocalPattern p;
  p.name = explicit_war ? "two_pass_variance" : "two_pass_variance_no_war";
  std::vector<float> x = small_ints(G * N, 109);
  for (float& v : x) v *= 4;  // multiples of 4: the mean (of 1/8) and the squared deviations are exact
  p.inputs[1] = to_bytes(x);
  p.expected.resize(G);
  for (int g = 0; g < G; ++g) {
    double m = 0, s = 0;
    for (int l = 0; l < N; ++l) m += x[g * N + l];
    m /= N;
    for (int l = 0; l < N; ++l) s += (x[g * N + l] - m) * (x[g * N + l] - m);
    p.expected[g] = static_cast<float>(s);
  }
  p.barriers = explicit_war ? 3 : 2;
  p.build = [explicit_war, name = p.name](Arena& a) {
    UOp out = param(a, 0, DType::float32, G), in = param(a, 1, DType::float32, G * N);
    UOp g = range(a, G, 0, AxisType::GLOBAL), l = range(a, N, 1, AxisType::LOCAL);
    UOp k1 = range(a, N, 2, AxisType::REDUCE), k2 = range(a, N, 3, AxisType::REDUCE);
    UOp buf = buffer(a, 0, DType::float32, N, AddrSpace::LOCAL);
    UOp acc = buffer(a, 1, DType::float32, 1, AddrSpace::REG);
    UOp zero = literal(a, 0);
    UOp x = index(in, g * N + l);
    UOp pass1 = after(buf, store(index(buf, l), x));
    // the mean: a loop over the buffer into a register
    UOp acc0 = after(acc, store(index(acc, zero), fzero(a)));
    UOp acc_in = after(acc0, k1);
    UOp read1 = end(store(index(acc_in, zero), index(acc_in, zero) + index(pass1, k1)), k1);
    UOp mean = index(after(acc0, read1), zero) * (1.0 / N);
    UOp dev = x - mean;
    UOp reuse = explicit_war ? after(buf, barrier(read1)) : after(buf, read1);
    UOp pass2 = after(buf, store(index(reuse, l), dev * dev));
    UOp var = reduce(index(pass2, k2), Ops::ADD, k2);
    return kernel_sink(end(store(index(out, valid(g, eq(l, zero))), var), g, l), name);
  };
  return p;
}

/// test_builder_kernels.cpp's full sum through GROUP_REDUCE (two phases through a LOCAL buffer), in
/// float or in half (a LOCAL buffer of half; sum or max).
inline LocalPattern group_reduce(DType dt = DType::float32, Ops op = Ops::ADD) {
  static constexpr int N = 4096;
  LocalPattern p;
  p.name = dt == DType::float16 ? (op == Ops::ADD ? "builder_group_sum_half" : "builder_group_max_half") : "builder_group_sum";
  p.out_dtype = dt;
  p.barriers = 1;
  double want = op == Ops::ADD ? 0 : -INFINITY;
  if (dt == DType::float16) {
    // values in {0, 0.5, 1} (sum) or multiples of 1/8 in [-64, 0) (max): every partial result is exact in half
    std::vector<std::uint16_t> bits(N);
    for (int j = 0; j < N; ++j) {
      const float v = op == Ops::ADD ? ((j * 7) % 8 == 0 ? 1.f : (j * 7) % 8 == 3 ? 0.5f : 0.f)
                                     : -static_cast<float>(1 + (j * 37) % 511) / 8.f;
      bits[j] = float_to_half(v);
      want = op == Ops::ADD ? want + v : std::max<double>(want, v);
    }
    p.inputs[1] = to_bytes(bits);
  } else {
    const std::vector<float> x = small_ints(N, 110);
    for (float v : x) want += v;
    p.inputs[1] = to_bytes(x);
  }
  p.expected = {static_cast<float>(want)};
  p.build = [dt, op, name = p.name](Arena& a) {
    UOp out = param(a, 0, dt, 1), in = param(a, 1, dt, N);
    UOp g = range(a, 16, 1, AxisType::GROUP_REDUCE), r = range(a, 256, 0, AxisType::REDUCE);
    return kernel_sink(store(index(out, literal(a, 0)), reduce(index(in, g * 256 + r), op, g, r)), name);
  };
  return p;
}

/// A GROUP_REDUCE sum stored by every work-item of a LOCAL axis the sum does not read (issue 37):
/// the LOCAL partials are indexed by the group's local id only, so the work-items of that axis store
/// each partial with the same value, without a barrier between them. Not a race (the verifier and
/// Oclgrind's default agree); the barrier before the partials are read is needed.
inline LocalPattern group_sum_unread_local() {
  static constexpr int N = 1024, L = 4;
  LocalPattern p;
  p.name = "group_sum_unread_local";
  p.barriers = 1;
  const std::vector<float> x = small_ints(N, 114);
  double want = 0;
  for (float v : x) want += v;
  p.inputs[1] = to_bytes(x);
  p.expected.assign(L, static_cast<float>(want));
  p.build = [](Arena& a) {
    UOp out = param(a, 0, DType::float32, L), in = param(a, 1, DType::float32, N);
    UOp l = range(a, L, 2, AxisType::LOCAL);
    UOp g = range(a, 16, 1, AxisType::GROUP_REDUCE), r = range(a, N / 16, 0, AxisType::REDUCE);
    return kernel_sink(end(store(index(out, l), reduce(index(in, g * (N / 16) + r), Ops::ADD, g, r)), l),
                       "group_sum_unread_local");
  };
  return p;
}

/// test_builder_kernels.cpp's double matmul C = (A @ B) @ D, the rows of A @ B staged in LOCAL memory.
inline LocalPattern dmm_stage() {
  static constexpr int n = 16;
  LocalPattern p;
  p.name = "builder_dmm_stage";
  const std::vector<float> A = small_ints(n * n, 111), B = small_ints(n * n, 112), D = small_ints(n * n, 113);
  p.inputs[1] = to_bytes(A);
  p.inputs[2] = to_bytes(B);
  p.inputs[3] = to_bytes(D);
  p.expected.assign(n * n, 0.f);
  for (int r = 0; r < n; ++r) {
    std::vector<float> ab(n, 0.f);
    for (int j = 0; j < n; ++j)
      for (int t = 0; t < n; ++t) ab[j] += A[r * n + t] * B[t * n + j];
    for (int l = 0; l < n; ++l)
      for (int j = 0; j < n; ++j) p.expected[r * n + l] += ab[j] * D[j * n + l];
  }
  // no LOCAL opt: one work-item per group, so the LOCAL buffer is private and tinygrad's RAW
  // barrier orders nothing
  p.barriers = 1;
  p.redundant = {0};
  p.build = [](Arena& a) {
    UOp C = param(a, 0, DType::float32, n * n), A = param(a, 1, DType::float32, n * n), B = param(a, 2, DType::float32, n * n),
        D = param(a, 3, DType::float32, n * n);
    UOp i = range(a, n, 3, AxisType::GLOBAL), l = range(a, n, 4, AxisType::WEAK), kk = range(a, n, 0, AxisType::REDUCE);
    UOp j = range(a, n, 1, AxisType::WEAK), j2 = range(a, n, 2, AxisType::REDUCE);
    UOp inner = reduce(index(A, i * n + kk) * index(B, kk * n + j), Ops::ADD, kk);
    UOp st = stage(inner, AddrSpace::LOCAL, j);
    UOp outer = reduce(index(st, j2) * index(D, j2 * n + l), Ops::ADD, j2);
    return kernel_sink(end(store(index(C, i * n + l), outer), i, l), "builder_dmm_stage");
  };
  return p;
}

}  // namespace patterns

/// The LOCAL kernels of test_builder_kernels.cpp.
inline std::vector<LocalPattern> builder_local_kernels() {
  return {patterns::group_reduce(), patterns::group_reduce(uopcg::DType::float16, uopcg::Ops::ADD),
          patterns::group_reduce(uopcg::DType::float16, uopcg::Ops::MAX), patterns::tiled_matmul(64, 16, "builder_tiled_gemm"),
          patterns::dmm_stage()};
}

/// Every pattern in its correct form.
inline std::vector<LocalPattern> local_patterns() {
  return {patterns::tree_reduction(false), patterns::tree_reduction(true), patterns::hillis_steele_scan(),
          patterns::blelloch_scan(),       patterns::blelloch_scan(true),   patterns::tiled_matmul(),
          patterns::transpose(),           patterns::stencil_halo(),        patterns::two_pass_reduction(),
          patterns::group_sum_unread_local()};
}

/// The program of a pattern, compiled for `target` without the pipeline's own barrier check.
inline std::vector<uopcg::UOp> pattern_program(uopcg::Arena& a, const LocalPattern& p,
                                               const uopcg::Target& target = uopcg::Target::pocl()) {
  uopcg::Target t = target;
  t.verify_barriers = false;
  return uopcg::codegen::run_pipeline(p.build(a), t).program;
}

/// Runs `program` once on `ctx`'s device with the pattern's inputs (other buffers start as 0xFF
/// bytes, NaN); returns the number of output elements that differ from the reference, and the first.
struct PatternRun {
  std::size_t mismatches = 0;
  std::string first;
  std::string source;
  double median_us = 0;  // with `timed_runs`: the median device time of that many more launches
};
inline PatternRun run_pattern(uopcg::opencl::Context& ctx, const LocalPattern& p, std::span<const uopcg::UOp> program,
                              const uopcg::Target& target = uopcg::Target::pocl(), int timed_runs = 0) {
  uopcg::render::RenderedKernel rk = uopcg::render::render_opencl(program, target.renderer);
  PatternRun r;
  r.source = std::string(rk.source.view());
  uopcg::opencl::CompiledKernel ck(ctx, std::move(rk));
  std::vector<std::pair<std::int64_t, uopcg::opencl::Buffer>> bufs;
  for (const auto& prm : ck.info().params) {
    if (prm.kind != uopcg::render::ParamKind::buffer) uopcg::fail_runtime("run_pattern: variable parameters unsupported");
    uopcg::opencl::Buffer b(ctx, static_cast<std::size_t>(prm.nbytes));
    if (auto it = p.inputs.find(prm.slot); it != p.inputs.end()) {
      if (it->second.size() != static_cast<std::size_t>(prm.nbytes))
        uopcg::fail_runtime("run_pattern: input for slot " + std::to_string(prm.slot) + " has the wrong size");
      b.write(it->second.data(), it->second.size());
    } else {
      b.fill(std::byte{0xFF});
    }
    ck.bind(prm.slot, b);
    bufs.emplace_back(prm.slot, std::move(b));
  }
  ck.launch().wait();
  std::vector<double> times;
  for (int i = 0; i < timed_runs; ++i) times.push_back(static_cast<double>(ck.launch().duration_ns()) / 1000.0);
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    r.median_us = times[times.size() / 2];
  }
  for (auto& [slot, b] : bufs) {
    if (slot != p.out_slot) continue;
    const Bytes bytes = b.read_all();
    std::vector<float> got;
    if (p.out_dtype == uopcg::DType::float16)
      for (std::uint16_t h : from_bytes<std::uint16_t>(bytes)) got.push_back(half_to_float(h));
    else
      got = from_bytes<float>(bytes);
    if (got.size() != p.expected.size()) uopcg::fail_runtime("run_pattern: the output has the wrong size");
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!(got[i] == p.expected[i])) {
        if (r.mismatches++ == 0)
          r.first = "[" + std::to_string(i) + "] = " + std::to_string(got[i]) + ", expected " + std::to_string(p.expected[i]);
      }
  }
  return r;
}

}  // namespace uopcg_test
