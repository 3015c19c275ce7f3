// Python-style float text (render/float_text.hpp): known reprs, the exact constexpr digit
// generation against std::to_chars on many random doubles and floats, and compile-time use.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include <uopcg/render/float_text.hpp>

using uopcg::render::python_float;
using uopcg::render::shortest_digits;
using uopcg::render::shortest_digits_exact;

namespace {

struct Known {
  double v;
  const char* repr;
};
// Expected strings: Python 3's repr() of each value.
constexpr Known known[] = {
    {0x0.0p+0, "0.0"},
    {-0x0.0p+0, "-0.0"},
    {0x1.0000000000000p+0, "1.0"},
    {-0x1.0000000000000p+0, "-1.0"},
    {0x1.0000000000000p-1, "0.5"},
    {0x1.4f8b588e368f1p-17, "1e-05"},
    {0x1.a36e2eb1c432dp-14, "0.0001"},
    {0x1.0624dd2f1a9fcp-10, "0.001"},
    {0x1.1c37937e08000p+53, "1e+16"},
    {0x1.c6bf526340000p+49, "1000000000000000.0"},
    {0x1.b69b4ba630f35p+56, "1.2345678901234568e+17"},
    {0x1.86a0000000000p+16, "100000.0"},
    {0x1.7154760000000p+0, "1.4426950216293335"},
    {0x1.62e4300000000p-1, "0.6931471824645996"},
    {-0x1.ffc0000000000p+15, "-65504.0"},
    {0x1.ffc0000000000p+15, "65504.0"},
    {0x0.0000000000001p-1022, "5e-324"},
    {0x1.0000000000000p-1022, "2.2250738585072014e-308"},
    {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"},
    {0x1.999999999999ap-4, "0.1"},
    {0x1.5555555555555p-2, "0.3333333333333333"},
    {0x1.0000000000000p+52, "4503599627370496.0"},
    {0x1.0000000000001p+53, "9007199254740994.0"},
    {0x1.0000000000000p+53, "9007199254740992.0"},
    {0x1.0f0cf064dd592p+73, "1e+22"},
    {0x1.52d02c7e14af6p+76, "1e+23"},
    {0x1.fffffe0000000p+127, "3.4028234663852886e+38"},
    {0x1.0000000000000p-126, "1.1754943508222875e-38"},
    {0x1.3a92a30553262p-12, "0.00030000000000000003"},
    {0x1.4000000000000p+1, "2.5"},
    {0x1.a36e2eb1c432cp-14, "9.999999999999999e-05"},
    {0x1.edd2f1a9fbe77p+6, "123.456"},
    {0x1.249ad2594c37dp+332, "1e+100"},
    {0x1.bff2ee48e0530p-333, "1e-100"},
    {0x1.1666666666666p+2, "4.35"},
    {0x1.99999a0000000p-4, "0.10000000149011612"},
    {0x0.0000000000003p-1022, "1.5e-323"},
    {0x1.0000000000000p+1023, "8.98846567431158e+307"},
    {0x1.0000000000000p-1000, "9.332636185032189e-302"},
    {0x1.ad7f29abcaf48p-24, "1e-07"},
    {0x1.78c29dccccccdp+23, "12345678.9"},
};

constexpr bool all_known_at_compile_time() {
  for (const Known& k : known)
    if (python_float(k.v).view() != k.repr) return false;
  return true;
}

bool same_digits(double v) {
  const auto a = shortest_digits_exact(v);
  const auto b = shortest_digits(v);  // run time: std::to_chars
  return a.count == b.count && a.exp10 == b.exp10 && std::string(a.digits, a.count) == std::string(b.digits, b.count);
}

}  // namespace

// The compile-time text is the exact algorithm's.
static_assert(all_known_at_compile_time());
static_assert(python_float(__builtin_inf()).view() == "inf");
static_assert(python_float(-__builtin_inf()).view() == "-inf");
static_assert(python_float(__builtin_nan("")).view() == "nan");

TEST_CASE("float_text: Python repr of known values (run time)") {
  for (const Known& k : known) {
    CAPTURE(k.repr);
    CHECK(python_float(k.v).view() == k.repr);
  }
  CHECK(python_float(std::bit_cast<double>(std::uint64_t(0x7FF0000000000000))).view() == "inf");
  CHECK(python_float(std::bit_cast<double>(std::uint64_t(0xFFF0000000000000))).view() == "-inf");
  CHECK(python_float(std::bit_cast<double>(std::uint64_t(0x7FF8000000000001))).view() == "nan");
}

TEST_CASE("float_text: exact digit generation agrees with std::to_chars") {
  std::mt19937_64 rng(20260101);
  int checked = 0;
  // random bit patterns over the whole double range
  for (int i = 0; i < 20000; ++i) {
    double v = std::bit_cast<double>(rng());
    if (v != v || v - v != 0 || v == 0) continue;
    CAPTURE(v);
    REQUIRE(same_digits(v));
    ++checked;
  }
  // float32 values widened to double (the literals a float kernel holds)
  for (int i = 0; i < 20000; ++i) {
    float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    if (f != f || f - f != 0 || f == 0) continue;
    CAPTURE(f);
    REQUIRE(same_digits(static_cast<double>(f)));
    ++checked;
  }
  // powers of two (asymmetric rounding intervals), their neighbours, subnormals, small integers
  for (int e = -1074; e <= 1023; ++e) {
    double p = std::ldexp(1.0, e);
    for (double v : {p, std::nextafter(p, 0.0), std::nextafter(p, 1e308)}) {
      if (v == 0 || v - v != 0) continue;
      CAPTURE(v);
      REQUIRE(same_digits(v));
      ++checked;
    }
  }
  for (int n = 1; n < 5000; ++n) {
    REQUIRE(same_digits(n));
    REQUIRE(same_digits(n / 1000.0));
    checked += 2;
  }
  MESSAGE(checked << " values agree");
}
