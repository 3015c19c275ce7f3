// Kernels that several suites build, written once. constexpr, so that the compile-time pipeline's
// tests (tests/codegen/constexpr) build the same graphs as the run-time ones (tests/e2e).
#pragma once

#include <string_view>

#include <uopcg/core/builder.hpp>

#include "kernel_sink.hpp"

namespace uopcg_test {

/// The classic shared-memory tiled GEMM at the post-opts level: c = a @ b for n x n floats, T x T
/// tiles through two LOCAL buffers, no barrier written by hand (the pipeline adds the RAW barrier
/// before the products and the WAR barrier at the K loop's tail).
constexpr uopcg::UOp tiled_matmul_kernel(uopcg::Arena& a, int n, int T, std::string_view name) {
  using namespace uopcg;
  UOp c = param(a, 0, DType::float32, n * n), A = param(a, 1, DType::float32, n * n), B = param(a, 2, DType::float32, n * n);
  UOp gx = range(a, n / T, 0, AxisType::GLOBAL), gy = range(a, n / T, 1, AxisType::GLOBAL);
  UOp ly = range(a, T, 2, AxisType::LOCAL), lx = range(a, T, 3, AxisType::LOCAL);
  UOp kt = range(a, n / T, 4, AxisType::REDUCE), kk = range(a, T, 5, AxisType::REDUCE);
  UOp As = buffer(a, 0, DType::float32, T * T, AddrSpace::LOCAL), Bs = buffer(a, 1, DType::float32, T * T, AddrSpace::LOCAL);
  UOp st_a = store(index(As, ly * T + lx), index(A, (gy * T + ly) * n + kt * T + lx));
  UOp st_b = store(index(Bs, ly * T + lx), index(B, (kt * T + ly) * n + gx * T + lx));
  UOp As2 = after(As, st_a, st_b), Bs2 = after(Bs, st_a, st_b);
  UOp acc = buffer(a, 2, DType::float32, 1, AddrSpace::REG);
  UOp zero = literal(a, 0);
  UOp acc0 = after(acc, store(index(acc, zero), const_(a, DType::float32, Arg::floating(0.0))));
  UOp acc_in = after(acc0, kt, kk);
  UOp upd = store(index(acc_in, zero), index(acc_in, zero) + index(As2, ly * T + kk) * index(Bs2, kk * T + lx));
  UOp acc_out = after(acc0, end(upd, kk, kt));
  UOp st = store(index(c, (gy * T + ly) * n + gx * T + lx), index(acc_out, zero));
  return kernel_sink(end(st, gx, gy, ly, lx), name);
}

}  // namespace uopcg_test
