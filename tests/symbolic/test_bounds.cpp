// vmin/vmax: the behaviours of tinygrad's test_uop_vmin_vmax.py, plus the wrap-around rule of
// concrete-width dtypes.
#include <doctest/doctest.h>

#include <vector>

#include "sym_helpers.hpp"

using namespace uopcg;
using symtest::var;

#define BOUNDS(u, lo, hi)        \
  do {                           \
    UOp u_ = (u);                \
    CHECK(u_.vmin() == (lo));    \
    CHECK(u_.vmax() == (hi));    \
  } while (0)

TEST_CASE("constants, comparisons, arithmetic") {
  Arena ar;
  BOUNDS(literal(ar, 42), 42, 42);
  BOUNDS(literal(ar, true), 1, 1);
  UOp x = var(ar, "x", 10, 20);
  BOUNDS(ne(x, literal(ar, 0)), 1, 1);
  BOUNDS(ne(x, literal(ar, 15)), 0, 1);
  BOUNDS(x + 5, 15, 25);
  BOUNDS(x - 5, 5, 15);
  BOUNDS(x * 2, 20, 40);
  BOUNDS(x * -2, -40, -20);
  UOp y = var(ar, "y", -3, 4);
  BOUNDS(x * y, -60, 80);
  BOUNDS(x - y, 6, 23);
  BOUNDS(x < 25, 1, 1);
  BOUNDS(x < 10, 0, 0);
  BOUNDS(x < 15, 0, 1);
  // a bool variable's bounds are bools (load collapse lifts a bool input as one)
  ParamArg p;
  p.dtype = DType::bool_;
  p.addrspace = AddrSpace::ALU;
  p.has_name = true;
  p.name = "b";
  std::vector<Arg> f = p.to_arg().items();
  f[2] = Arg::tuple_of(Arg::boolean(false), Arg::boolean(false));
  UOp b = ar.make(Ops::PARAM, DType::bool_, {ar.make(Ops::STACK, DType::void_, {})}, Arg::record(ArgKind::param_arg, std::move(f)));
  BOUNDS(b, 0, 0);
  BOUNDS(b & (x < 15), 0, 0);
}

TEST_CASE("bit ops, shifts, max/min, where") {
  Arena ar;
  UOp x = var(ar, "x", 10, 20);
  BOUNDS(x & 15, 0, 15);
  BOUNDS(x & 32, 0, 20);  // the known imprecision: not [0, 0]
  UOp n = var(ar, "n", -5, 5);
  BOUNDS(n & 7, 0, 7);
  // only a constant second operand bounds an AND, as tinygrad's: tighter bounds fold more in load
  // collapse, before the opts, and the axis the file's opts name is gone
  UOp m = var(ar, "m", 1, 3, DType::int32);
  BOUNDS(cast(literal(ar, 0), DType::int32) & m, INT32_MIN, INT32_MAX);
  BOUNDS(var(ar, "z", 0, 0, DType::int32) & m, INT32_MIN, INT32_MAX);
  BOUNDS(m & cast(literal(ar, 0), DType::int32), 0, 0);
  // OR and XOR likewise: only NOT (XOR with a -1 second operand) is bounded
  BOUNDS(m | cast(literal(ar, 4), DType::int32), INT32_MIN, INT32_MAX);
  BOUNDS(m ^ cast(literal(ar, 4), DType::int32), INT32_MIN, INT32_MAX);
  BOUNDS(cast(literal(ar, -1), DType::int32) ^ m, INT32_MIN, INT32_MAX);
  BOUNDS(m ^ cast(literal(ar, -1), DType::int32), -4, -2);
  BOUNDS(x << 2, 40, 80);
  BOUNDS(x >> 1, 5, 10);
  BOUNDS(~x, -21, -11);
  BOUNDS(maximum(x, literal(ar, 15)), 15, 20);
  BOUNDS(minimum(x, literal(ar, 15)), 10, 15);
  BOUNDS(maximum(maximum(x, literal(ar, 12)), literal(ar, 18)), 18, 20);
  BOUNDS(where(n < 0, x, n), -5, 20);
  BOUNDS(valid(x, n < 0), 10, 20);  // the Invalid arm is don't-care
  BOUNDS(invalid(ar), 0, 1);
}

TEST_CASE("division and modulo") {
  Arena ar;
  UOp x = var(ar, "x", 0, 100);
  BOUNDS(x / 4, 0, 25);
  BOUNDS(x % 4, 0, 3);
  BOUNDS(floordiv(x, literal(ar, -4)), -25, 0);
  BOUNDS(floormod(x, literal(ar, -4)), -3, 0);
  UOp n = var(ar, "n", -7, 7);
  BOUNDS(n / 2, -4, 3);
  BOUNDS(cdiv(n, literal(ar, 2)), -3, 3);
  BOUNDS(cmod(n, literal(ar, 3)), -2, 2);
  BOUNDS(n % 3, 0, 2);
  UOp w = var(ar, "w", 5, 7);
  BOUNDS(w % 8, 5, 7);  // one period
  UOp d = var(ar, "d", 2, 5);
  BOUNDS(x / d, 0, 50);
  BOUNDS(x % d, 0, 4);
  // C's remainder as tinygrad bounds it: by the divisor alone when it varies, and from 0 up when a
  // positive numerator meets a constant one (tighter bounds folded reductions away before the opts)
  UOp y = var(ar, "y", 0, 2);
  BOUNDS(cmod(y, d), 0, 4);
  BOUNDS(cmod(w, literal(ar, 8)), 0, 7);
  BOUNDS(cmod(n, d), -4, 4);
  // an empty range: vmax -1; its // and % give (0, 0)
  UOp r0 = range(ar, 0, 0, AxisType::LOOP);
  BOUNDS(r0, 0, -1);
  BOUNDS(r0 / 4, 0, 0);
  BOUNDS(r0 % 4, 0, 0);
  // dividing by an empty range (vmin 0 > vmax -1) bounds nothing: the dtype's range, and no division
  // by zero while deriving it (found by tests/fuzz/fuzz_pipeline.cpp)
  UOp rn = range(ar, -7, 2, AxisType::LOOP);
  for (UOp q : {x / r0, x % r0, cdiv(x, r0), cmod(x, r0), x / rn, cmod(x, rn)}) {
    CHECK(q.vmin() < 0);  // not narrowed
    CHECK(q.vmax() > 100);
  }
  UOp r = range(ar, 16, 1, AxisType::LOOP);
  BOUNDS(r, 0, 15);
  BOUNDS(special(var(ar, "s", 1, 32), "gidx0"), 0, 31);
}

TEST_CASE("casts and widths") {
  Arena ar;
  UOp x = var(ar, "x", -5, 300);
  BOUNDS(cast(x, DType::int32), -5, 300);
  BOUNDS(cast(x, DType::uint8), 0, 255);   // does not fit: full range
  BOUNDS(cast(x, DType::bool_), 0, 1);
  UOp p = var(ar, "p", 3, 300);
  BOUNDS(cast(p, DType::bool_), 1, 1);
  BOUNDS(cast(var(ar, "q", 0, 200), DType::uint8), 0, 200);
  // int32 arithmetic that may wrap gets the full int32 range
  UOp i = var(ar, "i", 0, 2147483647, DType::int32);
  BOUNDS(i + 1, INT32_MIN, INT32_MAX);
  BOUNDS(i + 0, 0, INT32_MAX);
  // a weak literal that does not fit the strong dtype it is used in
  UOp u = var(ar, "u", 0, 10, DType::uint32);
  BOUNDS(u + literal(ar, std::int64_t(1) << 40), 0, 4294967295);
  // floats are not tracked; 0.0 * a load stays unbounded
  UOp f = var(ar, "f", 0, 0, DType::float32);
  BOUNDS(f * 0.0, INT64_MIN, INT64_MAX);
}
