// Graph-level tests of the lowering stages beyond the corpus: the decompositions are evaluated with
// the symbolic evaluator (OpenCL C semantics per dtype) and compared with exact floor semantics and
// with the std:: math functions; gate motion, float-ALU casts and index lowering on small graphs.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <uopcg/codegen/decompositions.hpp>
#include <uopcg/codegen/gates.hpp>
#include <uopcg/codegen/lower_index.hpp>
#include <uopcg/symbolic/rule_tester.hpp>

using namespace uopcg;
namespace cg = uopcg::codegen;
namespace S = uopcg::symbolic;
using S::i128;

namespace {

/// A scalar kernel variable of dtype dt (an ALU PARAM), with bounds for integers.
UOp variable(Arena& a, std::int64_t slot, DType dt, std::int64_t lo = 0, std::int64_t hi = -1) {
  ParamArg p;
  p.slot = slot;
  p.dtype = dt;
  p.addrspace = AddrSpace::ALU;
  if (lo <= hi) p.vmin_vmax = std::make_pair(lo, hi);
  return a.make(Ops::PARAM, dt, {}, p.to_arg());
}

/// Evaluates `root` with the leaves bound to values.
S::value eval(UOp root, const std::vector<std::pair<UOp, S::value>>& leaves) {
  S::tester::env e;
  for (const auto& [u, v] : leaves) e.leaves.push_back({u.id(), v});
  std::vector<S::value> memo;
  return S::tester::evaluate(root, e, memo).v;
}

bool contains(UOp root, Ops op) { return S::contains_op(root, OpSet{op}); }

i128 floor_div(i128 a, i128 b) {
  i128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
i128 floor_mod(i128 a, i128 b) { return a - floor_div(a, b) * b; }

/// Values that exercise signs and edges of an integer dtype.
std::vector<i128> samples(DType dt, std::mt19937_64& rng) {
  const i128 lo = is_unsigned(dt) ? 0 : int_min(dt), hi = static_cast<i128>(int_max_u(dt));
  std::vector<i128> v{0, 1, 2, 3, 7, 8, 9, hi, hi - 1, hi / 2};
  if (!is_unsigned(dt)) v.insert(v.end(), {-1, -2, -3, -7, -8, -9, lo, lo + 1, lo / 2});
  for (int k = 0; k < 40; ++k) {
    i128 r = static_cast<i128>(rng() >> 1) % (hi - lo + 1 > 0 && hi - lo + 1 < (static_cast<i128>(1) << 62) ? hi - lo + 1 : (static_cast<i128>(1) << 62));
    v.push_back(lo + r);
    v.push_back(static_cast<i128>(rng() % 200) - (is_unsigned(dt) ? 0 : 100));
  }
  return v;
}

constexpr DType int_dtypes[] = {DType::int8, DType::int16, DType::int32, DType::int64,
                                DType::uint8, DType::uint16, DType::uint32, DType::uint64};

}  // namespace

TEST_CASE("floor division and modulo decompose to C division with the sign fix, for every sign") {
  std::mt19937_64 rng(7);
  const Target t = Target::pocl();
  for (DType dt : int_dtypes) {
    INFO(std::string(name(dt)));
    Arena ar;
    UOp a = variable(ar, 0, dt), b = variable(ar, 1, dt);
    UOp q = cg::early_decompositions(floordiv(a, b), t), r = cg::early_decompositions(floormod(a, b), t);
    CHECK_FALSE(contains(q, Ops::FLOORDIV));
    CHECK_FALSE(contains(r, Ops::FLOORMOD));
    CHECK(contains(q, Ops::CDIV));
    CHECK(contains(r, Ops::CMOD));
    const auto xs = samples(dt, rng);
    int checked = 0;
    for (i128 x : xs)
      for (i128 y : xs) {
        if (y == 0 || (!is_unsigned(dt) && x == int_min(dt) && y == -1)) continue;  // undefined in C
        const auto vq = eval(q, {{a, S::value::integer(x)}, {b, S::value::integer(y)}});
        const auto vr = eval(r, {{a, S::value::integer(x)}, {b, S::value::integer(y)}});
        REQUIRE(vq.is_num());
        REQUIRE(vr.is_num());
        if (vq.i != floor_div(x, y) || vr.i != floor_mod(x, y)) {
          INFO(static_cast<long long>(x) << " // " << static_cast<long long>(y));
          CHECK(vq.i == floor_div(x, y));
          CHECK(vr.i == floor_mod(x, y));
        }
        ++checked;
      }
    CHECK(checked > 1000);
  }
}

TEST_CASE("floor division by a power of two is a shift, modulo a mask, exact for negative numerators") {
  std::mt19937_64 rng(11);
  const Target t = Target::pocl();
  for (DType dt : {DType::int8, DType::int32, DType::int64, DType::uint16}) {
    INFO(std::string(name(dt)));
    Arena ar;
    UOp a = variable(ar, 0, dt);
    for (int k : {1, 3, 5}) {
      UOp c = S::iconst(ar, dt, static_cast<i128>(1) << k);
      UOp q = cg::early_decompositions(floordiv(a, c), t), r = cg::early_decompositions(floormod(a, c), t);
      CHECK(q.op() == Ops::SHR);
      CHECK(r.op() == Ops::AND);
      for (i128 x : samples(dt, rng)) {
        CHECK(eval(q, {{a, S::value::integer(x)}}).i == floor_div(x, static_cast<i128>(1) << k));
        CHECK(eval(r, {{a, S::value::integer(x)}}).i == floor_mod(x, static_cast<i128>(1) << k));
      }
    }
  }
}

TEST_CASE("non-negative operands need no sign fix: plain CDIV and CMOD") {
  Arena ar;
  const Target t = Target::pocl();
  UOp i = variable(ar, 0, DType::int32, 0, 1000);
  UOp d = S::iconst(ar, DType::int32, 7);
  CHECK(cg::early_decompositions(floordiv(i, d), t) == cdiv(i, d));
  CHECK(cg::early_decompositions(floormod(i, d), t) == cmod(i, d));
  UOp n = variable(ar, 1, DType::int32, -1000, 0), m = S::iconst(ar, DType::int32, -7);
  CHECK(cg::early_decompositions(floordiv(n, m), t) == cdiv(n, m));
  // unsigned: floor is truncation whatever the bounds say (a divisor that may be 0; a uint64 beyond
  // the int64 bounds, as keccak's rotations divide by a select of 2^k up to 2^63)
  for (DType dt : {DType::uint8, DType::uint16, DType::uint32, DType::uint64}) {
    INFO(std::string(name(dt)));
    UOp x = variable(ar, 2, dt), y = variable(ar, 3, dt);
    CHECK(cg::early_decompositions(floordiv(x, y), t) == cdiv(x, y));
    CHECK(cg::early_decompositions(floormod(x, y), t) == cmod(x, y));
  }
  UOp big = S::iconst(ar, DType::uint64, static_cast<i128>(1) << 63);
  UOp sel = where(variable(ar, 4, DType::bool_), big, S::iconst(ar, DType::uint64, 1));
  UOp u = variable(ar, 5, DType::uint64);
  CHECK(cg::early_decompositions(floordiv(u, sel), t) == cdiv(u, sel));
}

TEST_CASE("MAX becomes a select on CMPLT; a target that renders MAX keeps it") {
  Arena ar;
  UOp a = variable(ar, 0, DType::float32), b = variable(ar, 1, DType::float32);
  UOp m = maximum(a, b);
  CHECK(cg::early_decompositions(m, Target::pocl()) == where(a < b, b, a));
  Target keep = Target::pocl();
  (void)keep;
  // a target without CMPLT cannot form the select either
  Target no_lt = Target::pocl();
  no_lt.emulated_ops = OpSet{Ops::CMPLT};
  CHECK(cg::early_decompositions(m, no_lt) == m);
}

TEST_CASE("THREEFRY becomes uint32 arithmetic computing Threefry-2x32 (20 rounds)") {
  // reference: the same cipher written directly on integers
  auto ref = [](std::uint64_t x, std::uint64_t key) {
    std::uint32_t x0 = static_cast<std::uint32_t>(x), x1 = static_cast<std::uint32_t>(x >> 32);
    std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
    const std::uint32_t ks[3] = {k1, k0 ^ k1 ^ 0x1BD11BDAu, k0};
    const int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
    std::uint32_t v0 = x0 + ks[2], v1 = x1 + ks[0];
    for (int i = 0; i < 5; ++i) {
      for (int r : rot[i % 2]) {
        v0 += v1;
        v1 = ((v1 << r) | (v1 >> (32 - r))) ^ v0;
      }
      v0 += ks[i % 3];
      v1 += ks[(i + 1) % 3] + static_cast<std::uint32_t>(i + 1);
    }
    return (static_cast<std::uint64_t>(v1) << 32) | v0;
  };
  Arena ar;
  UOp x = variable(ar, 0, DType::uint64), k = variable(ar, 1, DType::uint64);
  UOp g = cg::late_decompositions(ar.make(Ops::THREEFRY, DType::uint64, {x, k}), Target::pocl());
  CHECK_FALSE(contains(g, Ops::THREEFRY));
  std::mt19937_64 rng(3);
  for (int n = 0; n < 50; ++n) {
    std::uint64_t xv = n == 0 ? 0 : rng(), kv = n == 0 ? 0 : rng();
    S::value v = eval(g, {{x, S::value::integer(static_cast<i128>(xv))}, {k, S::value::integer(static_cast<i128>(kv))}});
    REQUIRE(v.is_num());
    CHECK(static_cast<std::uint64_t>(v.i) == ref(xv, kv));
  }
}

TEST_CASE("THREEFRY's round constant is added as i, then 1, as tinygrad builds it") {
  // the late passes do not fold constant chains, so tinygrad's source keeps `+ks+1u+1u` (round 1)
  // and `+ks+4u+1u` (round 4); a folded `+5u` would render differently
  Arena ar;
  UOp x = variable(ar, 0, DType::uint64), k = variable(ar, 1, DType::uint64);
  UOp g = cg::early_decompositions(ar.make(Ops::THREEFRY, DType::uint64, {x, k}), Target::pocl());
  auto is_u32 = [](UOp u, std::int64_t v) {
    return u.op() == Ops::CONST && u.dtype() == DType::uint32 && u.arg().as_int() == v;
  };
  int plus_i_plus_1 = 0, folded = 0;
  for (UOp u : toposort(g)) {
    if (u.op() != Ops::ADD || u.nsrc() != 2) continue;
    UOp l = u.src(0);
    if (is_u32(u.src(1), 1) && l.op() == Ops::ADD && l.nsrc() == 2)
      for (std::int64_t i = 1; i < 5; ++i) plus_i_plus_1 += is_u32(l.src(1), i);
    folded += is_u32(u.src(1), 5);  // round 4's 4+1 in one constant
  }
  CHECK(plus_i_plus_1 == 4);  // rounds 1-4 (round 0's `+0` folds away)
  CHECK(folded == 0);
}

TEST_CASE("late decompositions: shifts, NEG/SUB, CMPEQ and comparison forms keep their values") {
  std::mt19937_64 rng(5);
  const Target t = Target::pocl();
  Arena ar;
  UOp x = variable(ar, 0, DType::int32), y = variable(ar, 1, DType::int32);
  // bool variables (a `!(x<c)` or `!(x!=y)` operand is rewritten first: children come first)
  UOp p = variable(ar, 2, DType::bool_), q = variable(ar, 3, DType::bool_);
  auto c = [&](i128 v) { return S::iconst(ar, DType::int32, v); };
  const std::vector<UOp> exprs = {
      x * c(8),                                          // SHL
      cdiv(x, c(4)),                                     // signed CDIV by 2^k: biased shift
      x + y * c(-1),                                     // SUB
      x * c(-1),                                         // NEG
      logical_not(ne(x, y)),                             // CMPEQ
      logical_not(x < c(5)),                             // 4 < x
      logical_not(c(5) < x),                             // x < 6
      (x * c(-1)) < y * c(3),                            // y*-3 < x
      (x * c(-1)) < c(9),                                // -9 < x
      (c(2) < x) & (x < c(4)),                           // x == 3
      logical_not(p) & logical_not(q),                   // !(p | q)
  };
  const Ops produced[] = {Ops::SHL, Ops::SHR, Ops::SUB, Ops::NEG, Ops::CMPEQ, Ops::CMPLT, Ops::CMPLT,
                          Ops::CMPLT, Ops::CMPLT, Ops::CMPEQ, Ops::OR};
  for (std::size_t i = 0; i < exprs.size(); ++i) {
    UOp g = cg::late_decompositions(exprs[i], t);
    INFO("expression " << i);
    CHECK(contains(g, produced[i]));
    for (int n = 0; n < 200; ++n) {
      i128 xv = static_cast<std::int32_t>(rng()) >> (n % 24), yv = static_cast<std::int32_t>(rng()) >> (n % 20);
      if (n < 10) xv = n - 3;
      if (xv == INT32_MIN) continue;  // -x overflows (undefined in C)
      const std::vector<std::pair<UOp, S::value>> env = {{x, S::value::integer(xv)}, {y, S::value::integer(yv)},
                                                         {p, S::value::integer(n % 2)}, {q, S::value::integer((n / 2) % 2)}};
      const auto before = eval(exprs[i], env);
      const auto after = eval(g, env);
      REQUIRE(before.is_num());
      CHECK(same(before, after));
    }
  }
}

TEST_CASE("comparison forms decline where the constant would wrap") {
  Arena ar;
  UOp x = variable(ar, 0, DType::int32);
  UOp e = logical_not(x < S::iconst(ar, DType::int32, INT32_MIN));
  UOp g = cg::late_decompositions(e, Target::pocl());
  CHECK_FALSE(contains(g, Ops::CMPEQ));
  // !(x < INT_MIN) is always true: whatever form it takes must stay true
  for (i128 v : {static_cast<i128>(INT32_MIN), static_cast<i128>(0), static_cast<i128>(INT32_MAX)})
    CHECK(eval(g, {{x, S::value::integer(v)}}).i == 1);
}

TEST_CASE("fast integer division (disable_fast_idiv = false) is exact over the numerator's range") {
  Target t = Target::pocl();
  t.disable_fast_idiv = false;
  for (DType dt : {DType::int32, DType::uint32, DType::int16, DType::uint8}) {
    for (std::int64_t d : {3, 7, 10, 12, 100, 641}) {
      if (d > static_cast<std::int64_t>(int_max_u(dt))) continue;
      Arena ar;
      const std::int64_t hi = std::min<std::int64_t>(static_cast<std::int64_t>(int_max_u(dt)), 100000);
      UOp x = variable(ar, 0, dt, 0, hi);
      UOp dc = S::iconst(ar, dt, d);
      UOp q = cg::late_decompositions(cdiv(x, dc), t), r = cg::late_decompositions(cmod(x, dc), t);
      INFO(std::string(name(dt)) << " / " << d);
      // 32-bit numerators always find a multiplier (in 64 bits if needed); narrower ones may not
      if (bitsize(dt) == 32) CHECK_FALSE(contains(q, Ops::CDIV));
      for (std::int64_t v = 0; v <= hi; v += (v < 2000 ? 1 : 97)) {
        CHECK(eval(q, {{x, S::value::integer(v)}}).i == v / d);
        CHECK(eval(r, {{x, S::value::integer(v)}}).i == v % d);
        if (v / d != eval(q, {{x, S::value::integer(v)}}).i) break;
      }
    }
  }
  // the default target keeps C division
  Arena ar;
  UOp x = variable(ar, 0, DType::int32, 0, 1000);
  UOp q = cdiv(x, S::iconst(ar, DType::int32, 7));
  CHECK(cg::late_decompositions(q, Target::pocl()) == q);
  // `x - d*q` of an unsigned CMOD: its -1 is stored wrapped (all ones) and still becomes a SUB, as
  // tinygrad renders it (`val - (10u*...)`, not `val + (10u*...*4294967295u)`)
  for (DType dt : {DType::uint32, DType::uint64, DType::int32}) {
    UOp xu = variable(ar, 1, dt, 0, 100000);
    UOp r = cg::late_decompositions(cmod(xu, S::iconst(ar, dt, 10)), t);
    INFO(std::string(name(dt)));
    CHECK(r.op() == Ops::SUB);
    CHECK_FALSE(contains(r, Ops::CMOD));
    for (std::int64_t v : {0, 9, 10, 12345, 99999}) CHECK(eval(r, {{xu, S::value::integer(v)}}).i == v % 10);
  }
}

// --- transcendental polynomials --------------------------------------------------------------------

namespace {
double ulps(double got, double want, DType dt) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e9;
  if (std::isinf(want)) return got == want ? 0 : 1e9;
  double ulp;
  if (dt == DType::float32) ulp = std::nextafter(static_cast<float>(std::fabs(want)), INFINITY) - std::fabs(static_cast<float>(want));
  else if (dt == DType::float64) ulp = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
  else ulp = std::ldexp(1.0, std::max(std::ilogb(want == 0 ? 6.1e-5 : want), -14) - 10);
  if (want == 0) return got == 0 ? 0 : std::fabs(got) / (dt == DType::float16 ? 6e-8 : std::numeric_limits<float>::denorm_min());
  return std::fabs(got - want) / ulp;
}

/// Forces the polynomial form of `op` over a variable of dt and compares with `ref` on `inputs`.
template <class F>
void check_poly(Ops op, DType dt, F ref, const std::vector<double>& inputs, double max_ulps) {
  Arena ar;
  Target t = Target::pocl();
  t.transcendental = 2;
  UOp d = variable(ar, 0, dt);
  UOp g = cg::late_decompositions(ar.make(op, dt, {d}), t);
  for (Ops o : {Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::SQRT}) CHECK_FALSE(contains(g, o));
  // every float literal holds its value rounded to its dtype (tinygrad's `1.3333333730697632f`)
  for (UOp u : toposort(g))
    if (u.op() == Ops::CONST && is_float(u.dtype()) && u.arg().is_float()) {
      const double v = u.arg().as_float();
      CHECK((std::isnan(v) || v == S::round_float(u.dtype(), v)));
    }
  double worst = 0;
  for (double in : inputs) {
    const double x = S::convert(S::value::floating(in), dt).f;
    const S::value v = eval(g, {{d, S::value::floating(x)}});
    REQUIRE(v.is_num());
    const double want = S::convert(S::value::floating(ref(x)), dt).f;
    const double e = ulps(v.f, want, dt);
    if (e > max_ulps) {
      INFO(std::string(name(op)) << " " << std::string(name(dt)) << " x=" << x << " got " << v.f << " want " << want);
      CHECK(e <= max_ulps);
    }
    worst = std::max(worst, e);
  }
  MESSAGE(std::string(name(op)) << " " << std::string(name(dt)) << ": worst " << worst << " ulp over " << inputs.size());
}

std::vector<double> spread(double lo, double hi, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(u(rng));
  return v;
}
}  // namespace

TEST_CASE("xexp2 matches std::exp2 within 2 ulp, with the IEEE special values") {
  auto in = spread(-140, 127, 3000, 1);
  in.insert(in.end(), {0.0, -0.0, 1.0, -1.0, 0.5, 127.9, 128.0, 200.0, -149.0, -151.0, -1000.0, INFINITY, -INFINITY, NAN});
  check_poly(Ops::EXP2, DType::float32, [](double x) { return std::exp2(x); }, in, 2);
  auto ind = spread(-1000, 1000, 2000, 2);
  ind.insert(ind.end(), {0.0, 1023.5, 1024.0, INFINITY, -INFINITY, NAN});
  check_poly(Ops::EXP2, DType::float64, [](double x) { return std::exp2(x); }, ind, 2);
}

TEST_CASE("xlog2 matches std::log2 within 2 ulp, with denormals, zeros, negatives and infinities") {
  auto in = spread(1e-6, 1e6, 2000, 4);
  auto small = spread(1e-38, 1e-30, 200, 5);
  in.insert(in.end(), small.begin(), small.end());
  in.insert(in.end(), {1.0, 2.0, 0.75, 1e-40, 1e-45, 0.0, -0.0, -1.0, INFINITY, NAN, 3e38});
  check_poly(Ops::LOG2, DType::float32, [](double x) { return std::log2(x); }, in, 2);
  auto ind = spread(1e-300, 1e300, 1000, 6);
  auto ind2 = spread(0.01, 100, 1000, 7);
  ind.insert(ind.end(), ind2.begin(), ind2.end());
  ind.insert(ind.end(), {1.0, 0.0, -2.0, INFINITY, NAN});
  check_poly(Ops::LOG2, DType::float64, [](double x) { return std::log2(x); }, ind, 2);
}

TEST_CASE("xsin matches std::sin (Cody-Waite and Payne-Hanek ranges), sin(inf) and sin(NaN) are NaN") {
  auto in = spread(-30, 30, 2000, 9);
  auto big = spread(30, 1e6, 800, 10);
  auto huge = spread(1e6, 1e30, 300, 11);
  in.insert(in.end(), big.begin(), big.end());
  in.insert(in.end(), huge.begin(), huge.end());
  in.insert(in.end(), {0.0, -0.0, 1e-30, 3.14159265f, 1.5707963f, -1e5, INFINITY, -INFINITY, NAN});
  // absolute error near the zeros of sin: compare in ulps of 1 there
  Arena ar;
  Target t = Target::pocl();
  t.transcendental = 2;
  UOp d = variable(ar, 0, DType::float32);
  UOp g = cg::late_decompositions(ar.make(Ops::SIN, DType::float32, {d}), t);
  CHECK_FALSE(contains(g, Ops::SIN));
  double worst = 0;
  for (double raw : in) {
    const double x = S::convert(S::value::floating(raw), DType::float32).f;
    const S::value v = eval(g, {{d, S::value::floating(x)}});
    REQUIRE(v.is_num());
    const double want = std::sin(x);
    if (std::isnan(want)) {
      CHECK(std::isnan(v.f));
      continue;
    }
    const double err = std::fabs(v.f - want) / std::max(std::fabs(want), 1e-7) * (1 << 23) / 2;
    const double e = std::min(err, std::fabs(v.f - want) / 1.2e-7);
    if (e > 4) {
      INFO("sin x=" << x << " got " << v.f << " want " << want);
      CHECK(e <= 4);
    }
    worst = std::max(worst, e);
  }
  MESSAGE("SIN float32: worst " << worst << " ulp-ish over " << in.size());
  check_poly(Ops::SIN, DType::float64, [](double x) { return std::sin(x); }, spread(-20, 20, 1000, 12), 2);
}

TEST_CASE("sqrt through xpow and other float widths through float32") {
  auto in = spread(0, 1e6, 1000, 13);
  in.insert(in.end(), {0.0, 1.0, 4.0, 2.0, INFINITY, NAN, -1.0});
  // exp2(log2(x) / 2) loses a few bits: up to 9 ulp observed on float32
  check_poly(Ops::SQRT, DType::float32, [](double x) { return std::sqrt(x); }, in, 12);
  // bfloat16 EXP2 computes in float32 and casts back
  Arena ar;
  Target t = Target::pocl();
  t.transcendental = 2;
  UOp d = variable(ar, 0, DType::bfloat16);
  UOp e = ar.make(Ops::EXP2, DType::bfloat16, {d});
  UOp g = pat::graph_rewrite(e, cg::pm_transcendental, t);
  CHECK(g.op() == Ops::CAST);
  CHECK(g.dtype() == DType::bfloat16);
  CHECK(g.src(0).dtype() == DType::float32);  // the float32 EXP2, itself decomposed (forced)
  CHECK_FALSE(contains(g, Ops::EXP2));
}

TEST_CASE("half transcendentals decompose in half (bit patterns of half are not evaluable here)") {
  // the evaluator does not model half bit patterns (BITCAST), so half is checked structurally
  Arena ar;
  Target t = Target::pocl();
  t.transcendental = 2;
  UOp d = variable(ar, 0, DType::float16);
  for (Ops op : {Ops::EXP2, Ops::LOG2, Ops::SIN}) {
    UOp g = cg::late_decompositions(ar.make(op, DType::float16, {d}), t);
    CHECK_FALSE(contains(g, op));
    CHECK(g.dtype() == DType::float16);
    CHECK(contains(g, Ops::BITCAST));
  }
}

TEST_CASE("transcendentals stay native on OpenCL unless forced") {
  Arena ar;
  UOp d = variable(ar, 0, DType::float32);
  for (Ops op : {Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::SQRT}) {
    UOp u = ar.make(op, DType::float32, {d});
    CHECK(cg::late_decompositions(u, Target::pocl()) == u);
    Target no_op = Target::pocl();
    no_op.emulated_ops = OpSet{op};
    CHECK_FALSE(contains(cg::late_decompositions(u, no_op), op));
  }
}

TEST_CASE("the polynomial builders refuse non-float operands with an error naming the function") {
  Arena ar;
  UOp i = variable(ar, 0, DType::int32);
  CHECK_THROWS_WITH_AS(cg::xexp2(i), doctest::Contains("xexp2"), std::exception);
  CHECK_THROWS_WITH_AS(cg::xlog2(i), doctest::Contains("xlog2"), std::exception);
  CHECK_THROWS_WITH_AS(cg::xsin(i), doctest::Contains("xsin"), std::exception);
}

// --- cast float alu, gates, index lowering ---------------------------------------------------------

TEST_CASE("cast float alu operands: an int operand of SQRT gets a CAST to the node's dtype") {
  Arena ar;
  UOp i = variable(ar, 0, DType::int32);
  UOp s = ar.make(Ops::SQRT, DType::float32, {i});
  UOp r = cg::cast_float_alu(s, Target::pocl());
  CHECK(r == ar.make(Ops::SQRT, DType::float32, {cast(i, DType::float32)}));
  CHECK(cg::cast_float_alu(r, Target::pocl()) == r);  // already uniform
  UOp h = variable(ar, 1, DType::float16);
  UOp e = ar.make(Ops::EXP2, DType::float32, {h});
  CHECK(cg::cast_float_alu(e, Target::pocl()).src(0) == cast(h, DType::float32));
}

TEST_CASE("move gates from index: gated loads and stores, selects over gated loads") {
  Arena ar;
  const Target t = Target::pocl();
  UOp buf = param(ar, 0, DType::float32, 64), out = param(ar, 1, DType::float32, 64);
  UOp i = variable(ar, 2, DType::int32, 0, 127);
  UOp g = i < S::iconst(ar, DType::int32, 64);
  UOp ld = load(index(buf, valid(i, g)));
  UOp st = store(index(out, valid(i, g)), ld);
  UOp r = cg::move_gates_from_index(sink(st), t);
  UOp want_ld = load(index(buf, i), const_(ar, DType::float32, Arg::floating(0.0)), g);
  CHECK(r == sink(store(index(out, i), want_ld, g)));

  // where(g, gated load, a) takes a as the load's alternative
  UOp a = variable(ar, 3, DType::float32);
  UOp w = where(g, ld, a);
  UOp r2 = cg::move_gates_from_index(sink(store(index(out, S::iconst(ar, DType::int32, 0)), w)), t);
  CHECK(r2.src(0).src(1) == load(index(buf, i), a, g));
  // mirrored: where(g, a, LOAD(.., !g))
  UOp ng = logical_not(g);
  UOp ld2 = load(index(buf, valid(i, ng)));
  UOp w2 = where(g, a, ld2);
  UOp r3 = cg::move_gates_from_index(sink(store(index(out, S::iconst(ar, DType::int32, 0)), w2)), t);
  CHECK(r3.src(0).src(1) == load(index(buf, i), a, ng));
  // an ungated access is left alone
  UOp plain = sink(store(index(out, i), load(index(buf, i))));
  CHECK(cg::move_gates_from_index(plain, t) == plain);
}

TEST_CASE("lower index dtypes: weakint index math becomes int32, buffer sizes keep plain literals") {
  Arena ar;
  UOp buf = param(ar, 0, DType::float32, 64), out = param(ar, 1, DType::float32, 64);
  UOp r = range(ar, 64, 0, AxisType::LOOP);
  UOp st = end(store(index(out, r), load(index(buf, r * 1 + 0))), r);
  UOp low = cg::lower_index_dtypes(sink(st), Target::pocl());
  bool weak_left = false;
  for (UOp u : toposort(low))
    if (u.dtype() == DType::weakint && !(u.op() == Ops::CONST)) weak_left = true;
  CHECK_FALSE(weak_left);
  for (UOp u : toposort(low)) {
    if (u.op() == Ops::RANGE) CHECK(u.dtype() == DType::int32);
    if (u.op() == Ops::PARAM) CHECK(u.src(0).op() == Ops::CONST);
  }
  // a range too large for int32 is lowered to int64
  Arena ar2;
  UOp big = param(ar2, 0, DType::float32, 4);
  UOp r2 = range(ar2, std::int64_t{1} << 33, 0, AxisType::LOOP);
  UOp st2 = end(store(index(big, r2 % 4), literal(ar2, 1.0f)), r2);
  UOp low2 = cg::lower_index_dtypes(sink(st2), Target::pocl());
  bool has64 = false;
  for (UOp u : toposort(low2))
    if (u.op() == Ops::RANGE) has64 = u.dtype() == DType::int64;
  CHECK(has64);
}

// The soundness tester gives a comparison's two operands one dtype, so index lowering's mixed
// comparisons (a weak operand beside a strong int, either side) are checked here, by value: a
// comparison computes in its operands' join, the strong dtype (a weak -1 beside a uint8 is 255).
TEST_CASE("index lowering: a comparison of a weak and a strong int operand keeps its value") {
  std::mt19937_64 rng(7);
  for (DType dt : {DType::int32, DType::int64, DType::uint8, DType::uint32}) {
    for (bool weak_left : {true, false}) {
      for (Ops op : {Ops::CMPLT, Ops::CMPNE}) {
        Arena ar;
        UOp s = variable(ar, 0, dt, 0, is_unsigned(dt) ? 255 : 100);
        if (!is_unsigned(dt)) s = variable(ar, 0, dt, -100, 100);
        UOp v = variable(ar, 1, DType::int32, -300, 300);
        UOp w = cast(v, DType::weakint);
        UOp cmp = ar.make(op, DType::bool_, {weak_left ? w : s, weak_left ? s : w});
        UOp low = pat::graph_rewrite(cmp, S::lower_index);
        INFO(std::string(name(dt)) << (weak_left ? " weak left " : " weak right ") << std::string(name(op)));
        bool weak_left_over = false;
        for (UOp u : toposort(low)) weak_left_over |= u.op() == Ops::CAST && u.dtype() == DType::weakint;
        CHECK_FALSE(weak_left_over);
        for (int k = 0; k < 200; ++k) {
          const i128 sv = is_unsigned(dt) ? static_cast<i128>(rng() % 256) : static_cast<i128>(rng() % 201) - 100;
          const i128 vv = static_cast<i128>(rng() % 601) - 300;
          const i128 wv = S::convert(S::value::integer(vv), dt).i;  // the weak value at the strong width
          const bool want = op == Ops::CMPLT ? (weak_left ? wv < sv : sv < wv) : wv != sv;
          CHECK(eval(low, {{s, S::value::integer(sv)}, {v, S::value::integer(vv)}}).i == (want ? 1 : 0));
        }
      }
    }
  }
}

// Found by the fuzz set (docs/model-differential.md): `t.maximum(7)` folded to the literal 7 and
// stored with UPCAST:0:0 stores a STACK of four weak 7s; no rule lowered a weakint STACK, so its
// lanes' weak CASTs reached the final check.
TEST_CASE("index lowering: an upcast store of a weak literal (a weakint STACK) commits at the destination") {
  Arena ar;
  UOp out = param(ar, 0, DType::int32, 5);
  UOp seven = literal(ar, 7);
  UOp lanes = stack(seven, seven, seven, seven);
  REQUIRE(lanes.dtype() == DType::weakint);
  UOp dest = node(Ops::SHRINK, {out, literal(ar, 0), literal(ar, 4)});
  UOp low = cg::lower_index_dtypes(sink(store(dest, lanes)), Target::pocl());
  int stored = 0;
  for (UOp u : toposort(low)) {
    if (u.op() != Ops::CONST) CHECK_FALSE(is_weak(u.dtype()));
    if (u.op() != Ops::STORE) continue;
    const UOp v = u.src(1);
    REQUIRE(v.op() == Ops::STACK);
    CHECK(v.dtype() == DType::int32);
    for (UOp l : v.srcs()) {
      CHECK(l.op() == Ops::CONST);
      CHECK(l.dtype() == DType::int32);
      CHECK(l.arg().as_int() == 7);
    }
    ++stored;
  }
  CHECK(stored == 1);
}

// ast-fuzz seed 10 kernel 52: `169 << (x & 63)` of a ulong x, selected into a ulong store. A shift's
// dtype is its left operand's, so tinygrad's post-opts graph holds SHL weakint(169, <ulong>); no rule
// lowered a weak op beside a strong operand, and the weak CAST of 169 reached the final check.
TEST_CASE("index lowering: a weak shift of a strong count computes at the count's dtype") {
  for (DType dt : {DType::uint64, DType::int64, DType::uint32}) {
    Arena ar;
    UOp out = param(ar, 0, dt, 1);
    const std::int64_t bits = dt == DType::uint32 ? 31 : 63;
    UOp k = variable(ar, 1, dt, 0, bits), y = variable(ar, 2, dt, 0, 100), c = variable(ar, 3, DType::bool_);
    UOp shl = ar.make(Ops::SHL, DType::weakint, {literal(ar, 169), k});
    UOp sel = ar.make(Ops::WHERE, dt, {c, shl, y});
    UOp low = cg::lower_index_dtypes(sink(store(index(out, literal(ar, 0)), sel)), Target::pocl());
    INFO(std::string(name(dt)));
    UOp v;
    for (UOp u : toposort(low)) {
      if (u.op() != Ops::CONST) CHECK_FALSE(is_weak(u.dtype()));
      if (u.op() == Ops::STORE) v = u.src(1);
    }
    REQUIRE(v.op() == Ops::WHERE);
    CHECK(v.src(1).op() == Ops::SHL);
    CHECK(v.src(1).dtype() == dt);
    const i128 mod = static_cast<i128>(1) << (dt == DType::uint32 ? 32 : 64);
    for (std::int64_t s : {0L, 1L, 7L, 24L, bits}) {
      i128 want = (static_cast<i128>(169) << s) % mod;
      if (dt == DType::int64 && want > INT64_MAX) want -= mod;
      CHECK(eval(v, {{k, S::value::integer(s)}, {y, S::value::integer(5)}, {c, S::value::integer(1)}}).i == want);
    }
  }
}

// the mirror rule: a weakint op whose left operand is the strong one (the input verifier lets a weak
// node take strong operands of its own kind)
TEST_CASE("index lowering: a weak op with a strong left operand computes at that operand's dtype") {
  for (DType dt : {DType::uint32, DType::int64}) {
    Arena ar;
    UOp out = param(ar, 0, dt, 1);
    UOp y = variable(ar, 1, dt, 0, 100000);
    UOp mul = ar.make(Ops::MUL, DType::weakint, {y, literal(ar, 169)});
    UOp low = cg::lower_index_dtypes(sink(store(index(out, literal(ar, 0)), mul)), Target::pocl());
    INFO(std::string(name(dt)));
    UOp v;
    for (UOp u : toposort(low)) {
      if (u.op() != Ops::CONST) CHECK_FALSE(is_weak(u.dtype()));
      if (u.op() == Ops::STORE) v = u.src(1);
    }
    REQUIRE(v.op() == Ops::MUL);
    CHECK(v.dtype() == dt);
    for (std::int64_t x : {0L, 1L, 99999L, 100000L})
      CHECK(eval(v, {{y, S::value::integer(x)}}).i == x * 169);
  }
}
