// int64 emulation (EMULATED_DTYPES=long): each 64-bit operation of a kernel, emulated with 32-bit
// words, is evaluated by the dtype tests' interpreter on the words of edge and random values and
// compared with the same operation done natively in C++ (two's complement wrap-around, C's
// truncating division, OpenCL's shift count mod 64, exactly rounded conversions). Plus the memory
// layout: a long buffer is an int buffer of twice the size, element i at words 2i and 2i+1.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <uopcg/codegen/dtype_decomps.hpp>
#include <uopcg/core/print.hpp>

#include "numerics_ref.hpp"

using namespace uopcg;
using namespace dtypes_test;

namespace {

std::vector<std::uint64_t> samples() {
  std::vector<std::uint64_t> v{0, 1, 2, 3, 7, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000,
                               0x100000001, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF,
                               0xFFFFFFFF00000000, 0x123456789ABCDEF0, 1ull << 53, (1ull << 53) + 1,
                               (1ull << 62) + (1ull << 38) + 1, (1ull << 40) + (1ull << 16)};
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n; ++i) v.push_back(~v[i] + 1);  // negations
  std::mt19937_64 rng(7);
  for (int i = 0; i < 60; ++i) v.push_back(rng());
  for (int i = 0; i < 30; ++i) v.push_back(rng() >> (rng() % 64));
  return v;
}

/// `value` (over loads of the long inputs x, y) stored into a buffer of its dtype, emulated; then
/// evaluated on the words of each input pair.
struct Emulated {
  Arena a;
  UOp x_load, y_load;
  UOp result;
  DType out_dt = DType::void_;
  std::optional<Evaluator> lo_ev, hi_ev;
  std::map<std::pair<std::int64_t, int>, UOp> word_loads;  // (slot, word) -> LOAD
  UOp lo, hi;

  Emulated(DType in_dt, DType in2_dt) {
    UOp i0 = const_(a, DType::int32, Arg(0));
    x_load = load(index(param(a, 1, in_dt, 4), i0));
    y_load = load(index(param(a, 2, in2_dt, 4), i0));
  }
  void build(UOp value) {
    out_dt = value.dtype();
    UOp i0 = const_(a, DType::int32, Arg(0));
    UOp sink = uopcg::sink(store(index(param(a, 0, out_dt, 4), i0), value));
    result = codegen::emulate_long(sink);
    for (UOp u : toposort(result)) {
      REQUIRE_MESSAGE(!(u.dtype() == DType::int64 || u.dtype() == DType::uint64), to_string(u));
      if (u.op() == Ops::LOAD) {
        const UOp idx = u.src(0);
        const std::int64_t slot = ParamArg::from(idx.src(0).arg()).slot;
        const int word = idx.src(1).op() == Ops::ADD ? 1 : 0;
        word_loads[{slot, word}] = u;
      }
      if (u.op() == Ops::STORE) {
        const UOp idx = u.src(0);
        const int word = idx.src(1).op() == Ops::ADD ? 1 : 0;
        (word ? hi : lo) = u.src(1);
      }
    }
    std::vector<UOp> leaves;
    for (auto& [k, l] : word_loads) leaves.push_back(l);
    lo_ev.emplace(lo, leaves);
    if (hi.valid()) hi_ev.emplace(hi, leaves);
  }
  void set_input(std::int64_t slot, DType dt, std::uint64_t bits) {
    const bool wide = dt == DType::int64 || dt == DType::uint64;
    for (int w = 0; w < (wide ? 2 : 1); ++w) {
      auto it = word_loads.find({slot, w});
      if (it == word_loads.end()) continue;  // folded away
      const std::uint64_t v = wide ? (w ? bits >> 32 : bits & 0xFFFFFFFFu) : bits;
      for (auto* ev : {&lo_ev, &hi_ev})
        if (*ev) (*ev)->set(it->second, from_bits(it->second.dtype(), v));
    }
  }
  /// The stored value's bits (both words for a long output).
  std::uint64_t run(DType xdt, std::uint64_t x, DType ydt, std::uint64_t y) {
    set_input(1, xdt, x);
    set_input(2, ydt, y);
    const std::uint64_t l = lo_ev->run().u & (hi.valid() ? 0xFFFFFFFFu : ~std::uint64_t(0));
    return hi.valid() ? (l | (hi_ev->run().u << 32)) : l;
  }
};

std::int64_t s64(std::uint64_t v) { return static_cast<std::int64_t>(v); }

/// What OpenCL C computes for op on 64-bit x, y (as bits).
std::optional<std::uint64_t> native(Ops op, bool sg, std::uint64_t x, std::uint64_t y) {
  switch (op) {
    case Ops::ADD: return x + y;
    case Ops::SUB: return x - y;
    case Ops::MUL: return x * y;
    case Ops::AND: return x & y;
    case Ops::OR: return x | y;
    case Ops::XOR: return x ^ y;
    case Ops::SHL: return x << (y & 63);
    case Ops::SHR: return sg ? static_cast<std::uint64_t>(s64(x) >> (y & 63)) : x >> (y & 63);
    case Ops::CDIV:
    case Ops::CMOD:
      if (y == 0 || (sg && s64(x) == INT64_MIN && s64(y) == -1)) return std::nullopt;  // undefined in C
      if (!sg) return op == Ops::CDIV ? x / y : x % y;
      return static_cast<std::uint64_t>(op == Ops::CDIV ? s64(x) / s64(y) : s64(x) % s64(y));
    case Ops::MAX: return sg ? (s64(x) < s64(y) ? y : x) : (x < y ? y : x);
    case Ops::CMPLT: return sg ? s64(x) < s64(y) : x < y;
    case Ops::CMPNE: return x != y;
    case Ops::CMPEQ: return x == y;
    default: return std::nullopt;
  }
}

}  // namespace

TEST_CASE("int64 emulation: arithmetic, bitwise, shifts, compares, division") {
  const auto vals = samples();
  for (DType dt : {DType::int64, DType::uint64}) {
    const bool sg = dt == DType::int64;
    for (Ops op : {Ops::ADD, Ops::SUB, Ops::MUL, Ops::AND, Ops::OR, Ops::XOR, Ops::SHL, Ops::SHR, Ops::CDIV, Ops::CMOD,
                   Ops::MAX, Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ}) {
      Emulated g(dt, dt);
      const bool cmp = op == Ops::CMPLT || op == Ops::CMPNE || op == Ops::CMPEQ;
      UOp v = alu(op, g.x_load, g.y_load);
      g.build(cmp ? cast(v, DType::int32) : v);
      std::size_t checked = 0;
      for (std::uint64_t x : vals)
        for (std::size_t j = 0; j < vals.size(); j += 3) {
          const std::uint64_t y = vals[j];
          const auto want = native(op, sg, x, y);
          if (!want) continue;
          const std::uint64_t got = g.run(dt, x, dt, y);
          if (got != *want) {
            INFO(name(dt) << " " << name(op) << " x=" << x << " y=" << y << " got " << got << " want " << *want);
            CHECK(got == *want);
            return;
          }
          ++checked;
        }
      CHECK(checked > 1000);
    }
  }
}

TEST_CASE("int64 emulation: division and remainder by constants") {
  const auto vals = samples();
  for (DType dt : {DType::int64, DType::uint64}) {
    const bool sg = dt == DType::int64;
    for (std::int64_t d : std::vector<std::int64_t>{1, 3, 7, 13, 97, 65535, 65536, 1000003, 4294967311, -1, -5, -65535, INT64_MIN}) {
      if (!sg && d < 0) continue;
      for (Ops op : {Ops::CDIV, Ops::CMOD}) {
        Emulated g(dt, dt);
        g.build(alu(op, g.x_load, const_(g.a, dt, Arg(d))));
        for (std::uint64_t x : vals) {
          const auto want = native(op, sg, x, static_cast<std::uint64_t>(d));
          if (!want) continue;
          const std::uint64_t got = g.run(dt, x, dt, 0);
          INFO(name(dt) << " " << name(op) << " " << x << " by " << d);
          REQUIRE(got == *want);
        }
      }
    }
  }
}

TEST_CASE("int64 emulation: conversions") {
  const auto vals = samples();
  SUBCASE("from narrower integers and bool") {
    for (DType to : {DType::int64, DType::uint64})
      for (DType fr : {DType::bool_, DType::int8, DType::uint8, DType::int16, DType::uint16, DType::int32, DType::uint32}) {
        Emulated g(fr, fr);
        g.build(cast(g.x_load, to));
        for (std::uint64_t x : vals) {
          const std::uint64_t in = wrap(fr, x);
          const std::uint64_t want = is_signed_int(fr) ? static_cast<std::uint64_t>(as_signed(fr, in)) : in;
          INFO(name(fr) << " -> " << name(to) << " " << in);
          REQUIRE(g.run(fr, in, fr, 0) == want);
        }
      }
  }
  SUBCASE("to narrower integers and bool") {
    for (DType fr : {DType::int64, DType::uint64})
      for (DType to : {DType::bool_, DType::int8, DType::uint8, DType::int16, DType::uint16, DType::int32, DType::uint32}) {
        Emulated g(fr, fr);
        g.build(cast(g.x_load, to));
        for (std::uint64_t x : vals) {
          const std::uint64_t want = to == DType::bool_ ? x != 0 : wrap(to, x);
          INFO(name(fr) << " -> " << name(to) << " " << x);
          REQUIRE(wrap(to, g.run(fr, x, fr, 0)) == want);
        }
      }
  }
  SUBCASE("to float and double, rounded once") {
    for (DType fr : {DType::int64, DType::uint64})
      for (DType to : {DType::float32, DType::float64}) {
        Emulated g(fr, fr);
        g.build(cast(g.x_load, to));
        for (std::uint64_t x : vals) {
          const std::uint64_t want =
              to == DType::float32
                  ? std::bit_cast<std::uint32_t>(fr == DType::int64 ? static_cast<float>(s64(x)) : static_cast<float>(x))
                  : std::bit_cast<std::uint64_t>(fr == DType::int64 ? static_cast<double>(s64(x)) : static_cast<double>(x));
          INFO(name(fr) << " -> " << name(to) << " " << x);
          REQUIRE(g.run(fr, x, fr, 0) == want);
        }
      }
  }
  SUBCASE("from float and double, truncated") {
    std::vector<double> fs{0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.75, -2.75, 4294967295.0, 4294967296.0, -4294967296.0,
                           -4294967297.0, 123456789012.75, -123456789012.75, 9007199254740993.0, -9.2e18, 9.2e18,
                           1.8e19, 2147483648.5, -2147483648.5};
    for (DType fr : {DType::float32, DType::float64})
      for (DType to : {DType::int64, DType::uint64}) {
        Emulated g(fr, fr);
        g.build(cast(g.x_load, to));
        for (double f : fs) {
          const double in = fr == DType::float32 ? double(static_cast<float>(f)) : f;
          if (to == DType::uint64 ? (in <= -1.0 || in >= 18446744073709551616.0) : (in < -9223372036854775808.0 || in >= 9223372036854775808.0))
            continue;  // out of range: undefined in C
          const std::uint64_t want = to == DType::int64 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(in)) : static_cast<std::uint64_t>(in);
          const std::uint64_t bits = fr == DType::float32 ? std::bit_cast<std::uint32_t>(static_cast<float>(in)) : std::bit_cast<std::uint64_t>(in);
          INFO(name(fr) << " -> " << name(to) << " " << in);
          REQUIRE(g.run(fr, bits, fr, 0) == want);
        }
      }
  }
}

TEST_CASE("int64 emulation: memory is words, the low word first") {
  Arena a;
  Target t = Target::pocl();
  t.emulate_long = true;
  UOp out = param(a, 0, DType::int64, 4), in = param(a, 1, DType::uint64, 6);
  UOp i = const_(a, DType::int32, Arg(3));
  UOp sink = uopcg::sink(store(index(out, i), cast(load(index(in, i)), DType::int64) + const_(a, DType::int64, Arg(5))));
  UOp g = codegen::decomp_dtypes(sink, t);
  std::vector<UOp> params, stores;
  for (UOp u : toposort(g)) {
    CHECK(u.dtype() != DType::int64);
    CHECK(u.dtype() != DType::uint64);
    if (u.op() == Ops::PARAM) params.push_back(u);
    if (u.op() == Ops::STORE) stores.push_back(u);
  }
  REQUIRE(params.size() == 2);
  for (UOp p : params) {
    const bool is_out = ParamArg::from(p.arg()).slot == 0;
    CHECK(p.dtype() == (is_out ? DType::int32 : DType::uint32));
    CHECK(ParamArg::from(p.arg()).dtype == p.dtype());
    CHECK(p.src(0).arg().as_int() == (is_out ? 8 : 12));
  }
  REQUIRE(stores.size() == 2);  // one per word, at 2i and 2i+1
  std::vector<std::int64_t> at;
  for (UOp s : stores) at.push_back(static_cast<std::int64_t>(Evaluator(s.src(0).src(1)).run().u));
  std::sort(at.begin(), at.end());
  CHECK(at == std::vector<std::int64_t>{6, 7});
  // a target with long keeps the graph
  t.emulate_long = false;
  CHECK(codegen::decomp_dtypes(sink, t) == sink);
}

TEST_CASE("int64 emulation: bitcasts to and from double keep every bit") {
  std::vector<double> ds{0.0, -0.0, 1.0, -1.0, 0.1, -2.5, 3.141592653589793, 1e300, -1e-300, 4.9406564584124654e-324,
                         -4.9406564584124654e-324, 2.2250738585072009e-308, 2.2250738585072014e-308, -2.2250738585072014e-308,
                         1.7976931348623157e308, -1.7976931348623157e308, 9007199254740993.0, 123456.789e-310,
                         std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 400; ++i) {
    const double d = std::bit_cast<double>(rng());
    if (!std::isnan(d)) ds.push_back(d);
  }
  for (DType to : {DType::int64, DType::uint64}) {
    Emulated g(DType::float64, DType::float64);
    g.build(bitcast(g.x_load, to));
    for (double d : ds) {
      INFO("double -> " << name(to) << " " << d);
      REQUIRE(g.run(DType::float64, std::bit_cast<std::uint64_t>(d), DType::float64, 0) == std::bit_cast<std::uint64_t>(d));
    }
    // a NaN's sign and payload are not values: any NaN is the quiet NaN
    REQUIRE(g.run(DType::float64, 0xFFF0000000000123ull, DType::float64, 0) == 0x7FF8000000000000ull);
  }
  for (DType fr : {DType::int64, DType::uint64}) {
    Emulated g(fr, fr);
    g.build(bitcast(g.x_load, DType::float64));
    for (double d : ds) {
      INFO(name(fr) << " -> double " << d);
      REQUIRE(g.run(fr, std::bit_cast<std::uint64_t>(d), fr, 0) == std::bit_cast<std::uint64_t>(d));
    }
    REQUIRE(std::isnan(std::bit_cast<double>(g.run(fr, 0xFFF0000000000123ull, fr, 0))));
  }
}

TEST_CASE("int64 emulation: what it does not do is an error that names the node") {
  Arena a;
  Target t = Target::pocl();
  t.emulate_long = true;
  UOp out = param(a, 0, DType::int64, 4);
  UOp i0 = const_(a, DType::int32, Arg(0));
  UOp sink = uopcg::sink(store(index(out, i0), variable(a, "n", 0, 10, DType::int64)));
  CHECK_THROWS_WITH_AS(codegen::decomp_dtypes(sink, t), doctest::Contains("(PARAM long)"), uopcg::error);
}
