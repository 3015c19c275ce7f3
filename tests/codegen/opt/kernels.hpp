// Small kernels as "simplify ranges" leaves them (the input of apply_opts), built like the corpus's:
// output ranges WEAK, reduce ranges REDUCE, loads implicit (INDEX nodes).
#pragma once

#include <uopcg/core/builder.hpp>

namespace opt_test {
using namespace uopcg;

/// out[r1] = sum_r0 in[r1*cols + r0]: axes [g0=rows, R0=cols] once globalized.
constexpr UOp rowsum(Arena& a, std::int64_t rows = 64, std::int64_t cols = 256, DType dt = DType::float32) {
  UOp out = param(a, 0, dt, rows), in = param(a, 1, dt, rows * cols);
  UOp r1 = range(a, rows, 1, AxisType::WEAK), r0 = range(a, cols, 0, AxisType::REDUCE);
  UOp red = reduce(index(in, r1 * cols + r0), Ops::ADD, r0);
  return sink(end(store(index(out, r1), red), r1));
}

/// C[r1*n + r2] = sum_r0 A[r1*n + r0] * B[r0*n + r2] (the product cast to `acc` when given).
constexpr UOp matmul(Arena& a, std::int64_t n = 64, DType dt = DType::float32, DType acc = DType::void_) {
  UOp c = param(a, 0, acc == DType::void_ ? dt : acc, n * n), A = param(a, 1, dt, n * n), B = param(a, 2, dt, n * n);
  UOp r1 = range(a, n, 1, AxisType::WEAK), r2 = range(a, n, 2, AxisType::WEAK), r0 = range(a, n, 0, AxisType::REDUCE);
  UOp prod = index(A, r1 * n + r0) * index(B, r0 * n + r2);
  if (acc != DType::void_) prod = cast(prod, acc);
  return sink(end(store(index(c, r1 * n + r2), reduce(prod, Ops::ADD, r0)), r1, r2));
}

/// out[r0*cols + r1] = x[r0*cols + r1] + y[r0]: y broadcasts along r1.
constexpr UOp bcast_add(Arena& a, std::int64_t rows = 32, std::int64_t cols = 64) {
  UOp out = param(a, 0, DType::float32, rows * cols), x = param(a, 1, DType::float32, rows * cols);
  UOp y = param(a, 2, DType::float32, rows);
  UOp r0 = range(a, rows, 0, AxisType::WEAK), r1 = range(a, cols, 1, AxisType::WEAK);
  return sink(end(store(index(out, r0 * cols + r1), index(x, r0 * cols + r1) + index(y, r0)), r0, r1));
}

}  // namespace opt_test
