// The two classes of miscompile of issue 41, end to end on the default OpenCL device (PoCL in CI):
// kernels built with the builder API, compiled by the pipeline, checked against C++ references.
// - Narrow integers: C computes bool, 8- and 16-bit operands in int, so an inline result must be
//   converted back to its dtype to wrap as the dtype does; each rendered form is checked (comparison
//   operand, WHERE condition and branch, CAST operand, index, stored value, reduction).
// - Weak floats: kernels whose floats come from literals alone (a STACK of zeros, a uint8 image
//   divided by 255.0, a sinusoidal embedding of an arange, a reduction of such values) compile, and
//   compute in float32 or the dtype of a concrete peer.
// - Half's rounding: a float cast to half and back is rounded, which tinygrad skips (DIVERGENCES P6).
// - Emulated half and bf16 in upcast kernels: a vector CAST to or from them converts lane by lane
//   (the emulation's helpers take scalars) with round-to-nearest-even.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include <uopcg/core/builder.hpp>

#include "../codegen/dtypes/numerics_ref.hpp"
#include "../kernels/kernel_sink.hpp"
#include "kernel_runner.hpp"

using namespace uopcg;
using uopcg_test::Bytes;
using uopcg_test::kernel_sink;
using uopcg_test::from_bytes;
using uopcg_test::run_kernel;
using uopcg_test::to_bytes;

namespace {

/// v wrapped to T's width (two's complement), as OpenCL C converts an int to a narrow type.
template <class T>
T wrap(std::int64_t v) {
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<std::uint64_t>(v)));
}

/// Operand pairs: every pair of T's edge values, then random ones.
template <class T>
std::pair<std::vector<T>, std::vector<T>> operand_pairs(std::size_t n, unsigned seed) {
  using L = std::numeric_limits<T>;
  const std::vector<std::int64_t> edges{L::min(), L::min() + 1, -100, -1, 0, 1, 2, 100, 127, L::max() / 2 + 1, L::max() - 1, L::max()};
  std::vector<T> a, b;
  for (std::int64_t x : edges)
    for (std::int64_t y : edges) a.push_back(wrap<T>(x)), b.push_back(wrap<T>(y));
  std::mt19937 g(seed);
  std::uniform_int_distribution<std::int64_t> d(L::min(), L::max());
  while (a.size() < n) a.push_back(static_cast<T>(d(g))), b.push_back(static_cast<T>(d(g)));
  a.resize(n), b.resize(n);
  return {a, b};
}

/// The narrow-integer kernel: one value per rendered form, for operands a, b, a divisor d (never 0)
/// and a shift count s in [0, bits).
template <class T>
void narrow_forms(DType dt) {
  constexpr int N = 256, bits = 8 * sizeof(T);
  constexpr std::int64_t OFF = std::is_signed_v<T> ? std::int64_t{1} << (bits - 1) : 0;  // table index of T's minimum
  Arena ar;
  UOp o_cmp = param(ar, 0, DType::bool_, N), o_where = param(ar, 1, dt, N), o_cast = param(ar, 2, DType::int32, N),
      o_idx = param(ar, 3, DType::int32, N), o_store = param(ar, 4, dt, N), o_misc = param(ar, 5, DType::bool_, 3 * N);
  UOp A = param(ar, 6, dt, N), B = param(ar, 7, dt, N), D = param(ar, 8, dt, N), S = param(ar, 9, dt, N);
  UOp table = param(ar, 10, DType::int32, std::int64_t{1} << bits);
  UOp i = range(ar, N, 0, AxisType::GLOBAL);
  UOp a = index(A, i), b = index(B, i), d = index(D, i), s = index(S, i);
  std::vector<UOp> st{
      store(index(o_cmp, i), (a + b) < b),                           // comparison operand
      store(index(o_where, i), where((a - b) < a, a * b, b)),         // WHERE condition and branch
      store(index(o_cast, i), cast(a * b + a, DType::int32)),        // CAST operand (and a chain)
      store(index(o_idx, i), index(table, cast(a + b, DType::weakint) + OFF)),  // index
      store(index(o_store, i), a * b - a),                           // stored value
      store(index(o_misc, i), -a < b),                               // negation
      store(index(o_misc, i + N), (a << s) < b),                     // left shift
      store(index(o_misc, i + 2 * N), cdiv(a, d) < b),               // C division (INT_MIN / -1)
  };
  UOp k = kernel_sink(end(group(st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7]), i), "narrow_forms");

  auto [va, vb] = operand_pairs<T>(N, 101);
  std::vector<T> vd(N), vs(N);
  for (int j = 0; j < N; ++j) vd[j] = vb[(j + 7) % N] == 0 ? T(1) : vb[(j + 7) % N], vs[j] = static_cast<T>(j % bits);
  va[0] = std::numeric_limits<T>::min();  // INT_MIN / -1 wraps to INT_MIN
  vd[0] = std::is_signed_v<T> ? T(-1) : T(1);
  std::vector<std::int32_t> vt(std::size_t{1} << bits);
  for (std::size_t j = 0; j < vt.size(); ++j) vt[j] = static_cast<std::int32_t>(static_cast<std::int64_t>(j) - OFF);
  auto res = run_kernel(k, {{6, to_bytes(va)}, {7, to_bytes(vb)}, {8, to_bytes(vd)}, {9, to_bytes(vs)}, {10, to_bytes(vt)}});
  auto cmp = from_bytes<std::uint8_t>(res.buffers[0]), misc = from_bytes<std::uint8_t>(res.buffers[5]);
  auto wh = from_bytes<T>(res.buffers[1]), stv = from_bytes<T>(res.buffers[4]);
  auto cs = from_bytes<std::int32_t>(res.buffers[2]), ix = from_bytes<std::int32_t>(res.buffers[3]);
  int bad = 0;
  for (int j = 0; j < N; ++j) {
    const std::int64_t x = va[j], y = vb[j];
    const T sum = wrap<T>(x + y), diff = wrap<T>(x - y), prod = wrap<T>(x * y);
    CAPTURE(j);
    bad += cmp[j] != (sum < vb[j]);
    bad += wh[j] != (diff < va[j] ? prod : vb[j]);
    bad += cs[j] != static_cast<std::int32_t>(wrap<T>(static_cast<std::int64_t>(prod) + x));
    bad += ix[j] != static_cast<std::int32_t>(sum);
    bad += stv[j] != wrap<T>(static_cast<std::int64_t>(prod) - x);
    bad += misc[j] != (wrap<T>(-x) < vb[j]);
    bad += misc[j + N] != (wrap<T>(static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << vs[j])) < vb[j]);
    bad += misc[j + 2 * N] != (wrap<T>(x / static_cast<std::int64_t>(vd[j])) < vb[j]);
  }
  INFO(res.source);
  CHECK(bad == 0);
}

/// A reduction of narrow products, stored and compared: the accumulator wraps at every step.
template <class T>
void narrow_reduction(DType dt) {
  constexpr int ROWS = 32, R = 8;
  Arena ar;
  UOp o_sum = param(ar, 0, dt, ROWS), o_cmp = param(ar, 1, DType::bool_, ROWS);
  UOp A = param(ar, 2, dt, ROWS * R), B = param(ar, 3, dt, ROWS * R);
  UOp i = range(ar, ROWS, 0, AxisType::GLOBAL), r = range(ar, R, 1, AxisType::REDUCE), r2 = range(ar, R, 2, AxisType::REDUCE);
  UOp sum = reduce(index(A, i * R + r) * index(B, i * R + r), Ops::ADD, r);
  UOp sum2 = reduce(index(A, i * R + r2) + index(B, i * R + r2), Ops::ADD, r2);
  UOp k = kernel_sink(end(group(store(index(o_sum, i), sum), store(index(o_cmp, i), sum2 < index(B, i * R))), i), "narrow_sum");
  auto [va, vb] = operand_pairs<T>(ROWS * R, 202);
  auto res = run_kernel(k, {{2, to_bytes(va)}, {3, to_bytes(vb)}});
  auto got = from_bytes<T>(res.buffers[0]);
  auto lt = from_bytes<std::uint8_t>(res.buffers[1]);
  int bad = 0;
  for (int row = 0; row < ROWS; ++row) {
    T s = 0, s2 = 0;
    for (int t = 0; t < R; ++t) {
      const std::int64_t x = va[row * R + t], y = vb[row * R + t];
      s = wrap<T>(static_cast<std::int64_t>(s) + static_cast<std::int64_t>(wrap<T>(x * y)));
      s2 = wrap<T>(static_cast<std::int64_t>(s2) + static_cast<std::int64_t>(wrap<T>(x + y)));
    }
    bad += got[row] != s;
    bad += lt[row] != (s2 < vb[row * R]);
  }
  INFO(res.source);
  CHECK(bad == 0);
}

bool close(double got, double want, double tol) { return std::abs(got - want) <= tol * (1 + std::abs(want)); }

}  // namespace

TEST_CASE("narrow integers wrap in every rendered form: comparison, WHERE, CAST operand, index, store, shifts, division") {
  SUBCASE("int8") { narrow_forms<std::int8_t>(DType::int8); }
  SUBCASE("uint8") { narrow_forms<std::uint8_t>(DType::uint8); }
  SUBCASE("int16") { narrow_forms<std::int16_t>(DType::int16); }
  SUBCASE("uint16") { narrow_forms<std::uint16_t>(DType::uint16); }
}

TEST_CASE("narrow integers wrap in a reduction, stored and compared") {
  SUBCASE("int8") { narrow_reduction<std::int8_t>(DType::int8); }
  SUBCASE("uint8") { narrow_reduction<std::uint8_t>(DType::uint8); }
  SUBCASE("int16") { narrow_reduction<std::int16_t>(DType::int16); }
  SUBCASE("uint16") { narrow_reduction<std::uint16_t>(DType::uint16); }
}

TEST_CASE("bool arithmetic is a bool: true + true compares as true") {
  constexpr int N = 4;
  Arena ar;
  UOp out = param(ar, 0, DType::bool_, N), A = param(ar, 1, DType::bool_, N), B = param(ar, 2, DType::bool_, N);
  UOp i = range(ar, N, 0, AxisType::GLOBAL);
  UOp a = index(A, i), b = index(B, i);
  auto res = run_kernel(kernel_sink(end(store(index(out, i), ne(a + b, b | a)), i), "bool_add"),
                        {{1, to_bytes(std::vector<std::uint8_t>{0, 0, 1, 1})}, {2, to_bytes(std::vector<std::uint8_t>{0, 1, 0, 1})}});
  INFO(res.source);
  CHECK(from_bytes<std::uint8_t>(res.buffers[0]) == std::vector<std::uint8_t>{0, 0, 0, 0});  // a + b is a | b
}

TEST_CASE("weak floats: a STACK of zeros (Tensor.zeros(16) upcast by 4) and a uint8 image / 255.0") {
  constexpr int N = 16;
  Arena ar;
  UOp zeros = param(ar, 0, DType::float32, N), img = param(ar, 1, DType::float32, N), u8 = param(ar, 2, DType::uint8, N);
  UOp g = range(ar, N / 4, 0, AxisType::GLOBAL), u = range(ar, 4, 1, AxisType::UPCAST), i = range(ar, N, 2, AxisType::GLOBAL);
  auto rz = run_kernel(kernel_sink(end(store(index(zeros, g * 4 + u), literal(ar, 0.0)), g, u), "zeros"), {});
  INFO(rz.source);
  CHECK(rz.source.find("float4") != std::string::npos);
  CHECK(from_bytes<float>(rz.buffers[0]) == std::vector<float>(N, 0.0f));

  std::vector<std::uint8_t> px(N);
  for (int j = 0; j < N; ++j) px[j] = static_cast<std::uint8_t>(j * 17);
  auto ri = run_kernel(kernel_sink(end(store(index(img, i), cast(index(u8, i), DType::weakfloat) / 255.0), i), "to_unit"), {{2, to_bytes(px)}});
  INFO(ri.source);
  const auto got = from_bytes<float>(ri.buffers[1]);
  // x / 255.0 is x * (1/255.0) with the literal rounded to float32
  for (int j = 0; j < N; ++j) CHECK(got[j] == static_cast<float>(px[j]) * static_cast<float>(1.0 / 255.0));
}

TEST_CASE("weak floats: a sinusoidal embedding of an arange, summed in a grouped reduction and stored per position") {
  // emb[p, j] = sin(p * 2^(-j/2)) for p < 16, j < 8; total = sum over all of them through GROUP_REDUCE
  constexpr int P = 16, J = 8;
  Arena ar;
  UOp emb = param(ar, 0, DType::float32, P * J), total = param(ar, 1, DType::float32, 1);
  UOp p = range(ar, P, 0, AxisType::GLOBAL), j = range(ar, J, 1, AxisType::LOOP);
  auto value = [&](UOp pp, UOp jj) { return sin(cast(pp, DType::weakfloat) * exp2(cast(jj, DType::weakfloat) * -0.5)); };
  auto re = run_kernel(kernel_sink(end(store(index(emb, p * J + j), value(p, j)), p, j), "embedding"), {});
  UOp gp = range(ar, P, 2, AxisType::GROUP_REDUCE), rj = range(ar, J, 3, AxisType::REDUCE);
  auto rt = run_kernel(kernel_sink(store(index(total, literal(ar, 0)), reduce(value(gp, rj), Ops::ADD, gp, rj)), "embedding_sum"), {});
  INFO(re.source);
  INFO(rt.source);
  const auto got = from_bytes<float>(re.buffers[0]);
  double want_total = 0;
  for (int pp = 0; pp < P; ++pp)
    for (int jj = 0; jj < J; ++jj) {
      const float v = std::sin(static_cast<float>(pp) * std::exp2(static_cast<float>(jj) * -0.5f));
      want_total += v;
      CHECK(close(got[pp * J + jj], v, 1e-5));
    }
  CHECK(close(from_bytes<float>(rt.buffers[1])[0], want_total, 1e-5));
  CHECK(rt.source.find("__local float") != std::string::npos);
}

TEST_CASE("weak floats: comparisons with ints, a float made an int, and concrete peers (double, emulated half)") {
  constexpr int N = 32;
  Arena ar;
  UOp o_lt = param(ar, 0, DType::bool_, N), o_int = param(ar, 1, DType::int32, N), o_dbl = param(ar, 2, DType::float64, N),
      o_half = param(ar, 3, DType::float16, N);
  UOp n = param(ar, 4, DType::int32, N), xd = param(ar, 5, DType::float64, N), xh = param(ar, 6, DType::float16, N),
      u8 = param(ar, 7, DType::uint8, N);
  UOp i = range(ar, N, 0, AxisType::GLOBAL);
  UOp f = cast(i, DType::weakfloat) * 0.25;
  UOp k = kernel_sink(end(group(store(index(o_lt, i), f < index(n, i)), store(index(o_int, i), cast(f * 10.0, DType::int32)),
                                store(index(o_dbl, i), index(xd, i) + cast(i, DType::weakfloat) * 0.1),
                                store(index(o_half, i), index(xh, i) * (cast(index(u8, i), DType::weakfloat) * 0.5))),
                          i),
                      "weak_peers");
  std::vector<std::int32_t> vn(N);
  std::vector<double> vx(N);
  std::vector<std::uint16_t> vh(N);
  std::vector<std::uint8_t> vu(N);
  for (int j = 0; j < N; ++j) {
    vn[j] = j % 9 - 1;
    vx[j] = 1.0 / (j + 3);
    vh[j] = uopcg_test::float_to_half(static_cast<float>(j) / 8.0f - 1.5f);
    vu[j] = static_cast<std::uint8_t>(j * 37);
  }
  auto res = run_kernel(k, {{4, to_bytes(vn)}, {5, to_bytes(vx)}, {6, to_bytes(vh)}, {7, to_bytes(vu)}});
  INFO(res.source);
  const auto lt = from_bytes<std::uint8_t>(res.buffers[0]);
  const auto iv = from_bytes<std::int32_t>(res.buffers[1]);
  const auto dv = from_bytes<double>(res.buffers[2]);
  const auto hv = from_bytes<std::uint16_t>(res.buffers[3]);
  for (int j = 0; j < N; ++j) {
    CAPTURE(j);
    const float fj = static_cast<float>(j) * 0.25f;
    CHECK(lt[j] == (fj < static_cast<float>(vn[j])));
    CHECK(iv[j] == static_cast<std::int32_t>(fj * 10.0f));
    CHECK(close(dv[j], vx[j] + static_cast<double>(j) * 0.1, 1e-15));  // computed in double, as its peer (may contract)
    // the weak product in float32, rounded to half once, then the half product
    const float w = uopcg_test::half_to_float(uopcg_test::float_to_half(static_cast<float>(vu[j]) * 0.5f));
    CHECK(hv[j] == uopcg_test::float_to_half(uopcg_test::half_to_float(vh[j]) * w));
  }
}

TEST_CASE("a float rounded to half and back keeps half's rounding (divergence P6)") {
  // tinygrad drops (float)(half)x in every kernel; the CAST to half rounds to 11 significant bits
  constexpr int N = 64;
  Arena ar;
  UOp out = param(ar, 0, DType::float32, N), x = param(ar, 1, DType::float32, N);
  UOp i = range(ar, N, 0, AxisType::GLOBAL);
  UOp v = index(x, i) * 3.0;
  UOp k = kernel_sink(end(store(index(out, i), cast(cast(v, DType::float16), DType::float32) * 2.0), i), "half_round_trip");
  std::vector<float> vx(N);
  for (int j = 0; j < N; ++j) vx[j] = 1.0f + static_cast<float>(j) / 1000.0f;
  auto res = run_kernel(k, {{1, to_bytes(vx)}});
  INFO(res.source);
  const auto got = from_bytes<float>(res.buffers[0]);
  int rounded = 0;
  for (int j = 0; j < N; ++j) {
    CAPTURE(j);
    const float want = uopcg_test::half_to_float(uopcg_test::float_to_half(vx[j] * 3.0f)) * 2.0f;
    CHECK(got[j] == want);
    rounded += want != vx[j] * 3.0f * 2.0f;
  }
  CHECK(rounded > N / 2);  // the inputs are ones half's rounding changes
}

TEST_CASE("weak floats: a reduction of weak float values keeps a float32 accumulator") {
  constexpr int ROWS = 8, R = 64;
  Arena ar;
  UOp out = param(ar, 0, DType::float32, ROWS);
  UOp i = range(ar, ROWS, 0, AxisType::GLOBAL), r = range(ar, R, 1, AxisType::REDUCE);
  UOp v = cast(i * R + r, DType::weakfloat) * 0.125;
  auto res = run_kernel(kernel_sink(end(store(index(out, i), cast(reduce(v, Ops::MAX, r) + reduce(v * v, Ops::ADD, r), DType::float32)), i),
                                    "weak_reduce"),
                        {});
  INFO(res.source);
  const auto got = from_bytes<float>(res.buffers[0]);
  for (int row = 0; row < ROWS; ++row) {
    float mx = -INFINITY, sum = 0;
    for (int t = 0; t < R; ++t) {
      const float x = static_cast<float>(row * R + t) * 0.125f;
      mx = std::max(mx, x);
      sum += x * x;
    }
    CHECK(close(got[row], static_cast<double>(mx) + sum, 1e-6));
  }
}

// A half constant fill upcast by 4 (Tensor.full(..., dtype=half) with UPCAST 4) casts a float4 of
// weak literals to half: the emulation rendered its scalar helper on the vector (`ushort4 x =
// uopcg_float_to_half((float4)(...))`), which PoCL refuses. Every emulated narrow float, each upcast
// width, and each vector conversion into it (from float loads, int loads, weak float lanes, a
// literal) and out of it (to float), checked bit for bit against the IEEE reference.
TEST_CASE("emulated half and bf16: vector casts of an upcast kernel convert lane by lane, rounding to nearest even") {
  using namespace dtypes_test;
  struct Case {
    const char* what;
    DType dt;
    Fmt fmt;
    Target t;
  };
  Target half_bits = Target::pocl(), bf16_decomp = Target::pocl();
  half_bits.half_builtins = false;
  bf16_decomp.emulate_bf16 = true;
  const Case cases[] = {{"half, helpers", DType::float16, HALF, Target::pocl()},
                        {"half, bit graphs", DType::float16, HALF, half_bits},
                        {"bf16", DType::bfloat16, BF16, Target::pocl()},
                        {"bf16, decomp dtypes", DType::bfloat16, BF16, bf16_decomp}};
  const int widths[] = {2, 3, 4, 8, 16};
  for (const Case& c : cases) {
    const std::vector<std::uint32_t> samples = float_samples(c.fmt);
    // ints whose float is exact: every conversion to the narrow float rounds once
    std::vector<std::int32_t> ints;
    for (std::int32_t b : {0, 1, 255, 257, 259, 2049, 2051, 4097, 32769, 65504, 65519, 65520, 65536, 1 << 24})
      for (std::int32_t d : {-1, 0, 1}) ints.push_back(b + d), ints.push_back(-(b + d));
    for (std::size_t j = 0; ints.size() < 4096; ++j) ints.push_back(static_cast<std::int32_t>((j * 2654435761u) % (1u << 25)) - (1 << 24));
    for (std::size_t wi = 0; wi < std::size(widths); ++wi) {
      const int w = widths[wi];
      CAPTURE(c.what);
      CAPTURE(w);
      // each width converts every fifth sample (every sample once over the widths: the launches stay short)
      std::vector<std::uint32_t> floats;
      for (std::size_t j = wi; j < samples.size(); j += std::size(widths)) floats.push_back(samples[j]);
      // 64 work-items a group (one per element would launch hundreds of thousands of groups); 3072 is
      // a multiple of 64 times every width
      const std::int64_t nf = static_cast<std::int64_t>(floats.size()) / 3072 * 3072, ni = static_cast<std::int64_t>(ints.size()) / 3072 * 3072;
      Arena a;
      UOp o_f = param(a, 0, c.dt, nf), o_i = param(a, 1, c.dt, ni), o_w = param(a, 2, c.dt, ni), o_c = param(a, 3, c.dt, ni),
          o_up = param(a, 4, DType::float32, ni);
      UOp in_f = param(a, 5, DType::float32, nf), in_i = param(a, 6, DType::int32, ni), in_n = param(a, 7, c.dt, ni);
      UOp gf = range(a, nf / w / 64, 0, AxisType::GLOBAL), lf = range(a, 64, 1, AxisType::LOCAL), uf = range(a, w, 2, AxisType::UPCAST);
      UOp gi = range(a, ni / w / 64, 3, AxisType::GLOBAL), li = range(a, 64, 4, AxisType::LOCAL), ui = range(a, w, 5, AxisType::UPCAST);
      UOp jf = (gf * 64 + lf) * w + uf, ji = (gi * 64 + li) * w + ui;
      UOp k = kernel_sink(group(end(store(index(o_f, jf), cast(index(in_f, jf), c.dt)), gf, lf, uf),
                                end(group(store(index(o_i, ji), cast(index(in_i, ji), c.dt)),
                                          store(index(o_w, ji), cast(ji, DType::weakfloat) * 0.1),  // weak float lanes
                                          store(index(o_c, ji), literal(a, 0.1)),                   // the fill
                                          store(index(o_up, ji), cast(index(in_n, ji), DType::float32))),
                                    gi, li, ui)),
                          "vector_casts");
      std::vector<std::uint16_t> narrow(static_cast<std::size_t>(ni));
      for (std::size_t j = 0; j < narrow.size(); ++j) narrow[j] = static_cast<std::uint16_t>(j * 40503u);  // spread over every pattern
      floats.resize(static_cast<std::size_t>(nf));
      ints.resize(static_cast<std::size_t>(ni));
      auto res = run_kernel(k, {{5, to_bytes(floats)}, {6, to_bytes(ints)}, {7, to_bytes(narrow)}}, c.t);
      INFO(res.source);
      const auto to_narrow = [&](float f) { return convert(std::bit_cast<std::uint32_t>(f), F32, c.fmt); };
      int bad_f = 0, bad_i = 0, bad_w = 0, bad_c = 0, bad_up = 0;
      const auto got_f = from_bytes<std::uint16_t>(res.buffers[0]), got_i = from_bytes<std::uint16_t>(res.buffers[1]),
                 got_w = from_bytes<std::uint16_t>(res.buffers[2]), got_c = from_bytes<std::uint16_t>(res.buffers[3]);
      const auto got_up = from_bytes<std::uint32_t>(res.buffers[4]);
      for (std::int64_t j = 0; j < nf; ++j) bad_f += got_f[j] != convert(floats[j], F32, c.fmt);
      for (std::int64_t j = 0; j < ni; ++j) {
        bad_i += got_i[j] != to_narrow(static_cast<float>(ints[j]));
        bad_w += got_w[j] != to_narrow(static_cast<float>(j) * 0.1f);
        bad_c += got_c[j] != to_narrow(0.1f);
        bad_up += got_up[j] != convert(narrow[j], c.fmt, F32);
      }
      CHECK(bad_f == 0);
      CHECK(bad_i == 0);
      CHECK(bad_w == 0);
      CHECK(bad_c == 0);
      CHECK(bad_up == 0);
    }
  }
}

// On a target without cl_khr_fp16 a chain of half ops is evaluated in float and rounded to half once,
// at the store: C's excess precision (a CAST or a store removes it), which native half does not have
// (DIVERGENCES, emulated narrow floats). So `(a + b) * c` is not rounded after the sum, and tinygrad's
// division `x * (1/y)` does not overflow where 1/y is beyond half's range but x/y is not.
TEST_CASE("emulated half evaluates a chain of half ops in float and rounds once, at the store") {
  constexpr int N = 256;
  Arena ar;
  UOp o_chain = param(ar, 0, DType::float16, N), o_div = param(ar, 1, DType::float16, N);
  UOp A = param(ar, 2, DType::float16, N), B = param(ar, 3, DType::float16, N), C = param(ar, 4, DType::float16, N);
  UOp i = range(ar, N, 0, AxisType::GLOBAL);
  UOp a = index(A, i), b = index(B, i), c = index(C, i);
  UOp k = kernel_sink(end(group(store(index(o_chain, i), (a + b) * c), store(index(o_div, i), a / b)), i), "half_chain");
  std::vector<std::uint16_t> va(N), vb(N), vc(N);
  std::mt19937 g(11);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  for (int j = 0; j < N; ++j) {
    va[j] = uopcg_test::float_to_half(d(g)), vb[j] = uopcg_test::float_to_half(d(g)), vc[j] = uopcg_test::float_to_half(d(g));
  }
  // divisions whose reciprocal overflows half: -0.0 / 2^-24 and 4.17e-7 / 6.2e-6 (as halves)
  va[0] = 0x8000, vb[0] = 0x0001;
  va[1] = uopcg_test::float_to_half(4.172325134277344e-07f), vb[1] = uopcg_test::float_to_half(6.198883056640625e-06f);
  auto res = run_kernel(k, {{2, to_bytes(va)}, {3, to_bytes(vb)}, {4, to_bytes(vc)}});
  INFO(res.source);
  const auto chain = from_bytes<std::uint16_t>(res.buffers[0]), div = from_bytes<std::uint16_t>(res.buffers[1]);
  const auto f = [](std::uint16_t h) { return uopcg_test::half_to_float(h); };
  int per_op_differs = 0;
  for (int j = 0; j < N; ++j) {
    CAPTURE(j);
    CHECK(chain[j] == uopcg_test::float_to_half((f(va[j]) + f(vb[j])) * f(vc[j])));
    per_op_differs += chain[j] != uopcg_test::float_to_half(f(uopcg_test::float_to_half(f(va[j]) + f(vb[j]))) * f(vc[j]));
  }
  CHECK(per_op_differs > 0);  // the inputs include sums that rounding to half first would change
  CHECK(div[0] == 0x8000);    // -0.0, where 1/y rounded to half (infinity) would give NaN
  CHECK(f(div[1]) == doctest::Approx(0.0673).epsilon(1e-3));  // not infinity
}
