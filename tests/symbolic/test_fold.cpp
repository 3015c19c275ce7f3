// Concrete evaluation (symbolic/fold.hpp): OpenCL C semantics per dtype.
#include <doctest/doctest.h>

#include <uopcg/symbolic/fold.hpp>

using namespace uopcg;
using namespace uopcg::symbolic;

namespace {
value ev(Ops op, DType dt, value a, value b, DType in) {
  value v[2] = {a, b};
  DType d[2] = {in, in};
  return eval_alu(op, dt, v, d);
}
value I(i128 v) { return value::integer(v); }
}  // namespace

TEST_CASE("integers wrap at their width; weakint is exact") {
  CHECK(ev(Ops::ADD, DType::int32, I(2147483647), I(1), DType::int32).i == -2147483648LL);
  CHECK(ev(Ops::MUL, DType::uint8, I(16), I(17), DType::uint8).i == 16);
  CHECK(ev(Ops::ADD, DType::weakint, I(1LL << 40), I(1LL << 40), DType::weakint).i == (static_cast<i128>(1) << 41));
  CHECK(ev(Ops::MUL, DType::weakint, I(1LL << 40), I(1LL << 40), DType::weakint).kind == vkind::unknown);
}

TEST_CASE("C and floor division") {
  CHECK(ev(Ops::CDIV, DType::int32, I(-7), I(2), DType::int32).i == -3);
  CHECK(ev(Ops::CMOD, DType::int32, I(-7), I(2), DType::int32).i == -1);
  CHECK(ev(Ops::FLOORDIV, DType::int32, I(-7), I(2), DType::int32).i == -4);
  CHECK(ev(Ops::FLOORMOD, DType::int32, I(-7), I(2), DType::int32).i == 1);
  CHECK(ev(Ops::FLOORMOD, DType::int32, I(7), I(-2), DType::int32).i == -1);
  CHECK(ev(Ops::CDIV, DType::int32, I(1), I(0), DType::int32).kind == vkind::undefined);
  CHECK(ev(Ops::CDIV, DType::int32, I(INT32_MIN), I(-1), DType::int32).kind == vkind::undefined);
  CHECK(ev(Ops::CDIV, DType::uint32, I(4294967295LL), I(2), DType::uint32).i == 2147483647);
}

TEST_CASE("shifts take the count modulo the width") {
  CHECK(ev(Ops::SHL, DType::int32, I(1), I(33), DType::int32).i == 2);
  CHECK(ev(Ops::SHR, DType::int32, I(-8), I(1), DType::int32).i == -4);
  CHECK(ev(Ops::SHL, DType::int32, I(1), I(31), DType::int32).i == INT32_MIN);
}

TEST_CASE("floats round at their dtype; MAX is (a<b)?b:a") {
  CHECK(round_float(DType::float16, 65519.0) == 65504.0);
  CHECK(round_float(DType::float16, 65520.0) == __builtin_huge_val());
  CHECK(round_float(DType::float16, 1.0 + 1.0 / 2048) == 1.0);  // tie to even
  CHECK(round_float(DType::float16, 1e-8) == 0.0);
  CHECK(round_float(DType::float16, 6e-8) == 5.960464477539063e-08);  // smallest subnormal
  CHECK(round_float(DType::bfloat16, 1.00390625) == 1.0);
  CHECK(ev(Ops::ADD, DType::float32, value::floating(16777216.0), value::floating(1.0), DType::float32).f == 16777216.0);
  value nan = value::floating(__builtin_nan(""));
  CHECK(ev(Ops::MAX, DType::float32, nan, value::floating(1), DType::float32).f != ev(Ops::MAX, DType::float32, nan, value::floating(1), DType::float32).f);
  CHECK(ev(Ops::MAX, DType::float32, value::floating(1), nan, DType::float32).f == 1.0);
  CHECK(same(nan, nan));
  CHECK(same(value::floating(0.0), value::floating(-0.0)));
}

TEST_CASE("conversions and Invalid") {
  CHECK(convert(value::floating(-3.7), DType::int32).i == -3);
  CHECK(convert(value::floating(3e9), DType::int32).kind == vkind::undefined);
  CHECK(convert(value::floating(__builtin_nan("")), DType::int32).kind == vkind::undefined);
  CHECK(convert(I(300), DType::uint8).i == 44);
  CHECK(convert(I(16777217), DType::float32).f == 16777216.0);
  CHECK(convert(value::floating(0.5), DType::bool_).i == 1);
  CHECK(ev(Ops::ADD, DType::int32, value::invalid(), I(1), DType::int32).kind == vkind::invalid);
  value w[3] = {I(0), value::invalid(), I(5)};
  DType d[3] = {DType::bool_, DType::int32, DType::int32};
  CHECK(eval_alu(Ops::WHERE, DType::int32, w, d).i == 5);
  static_assert(wrap_int(DType::int8, 200) == -56);
  static_assert(round_float(DType::float16, 2049.0) == 2048.0);
}
