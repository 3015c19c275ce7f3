// Integer semantics, exhaustively, on the default OpenCL device (PoCL in CI): for every integer dtype
// (int8 .. uint64), every integer ALU op (ADD, SUB, MUL, floor and C division and modulo, SHL, SHR,
// AND, OR, XOR, MAX, CMPLT, CMPNE, CMPEQ, WHERE, negation, ops with a literal) and the casts between
// them, each in four rendered forms: stored, an inline operand (a CAST to int64), compared (`< c`)
// and used in an index (`table[x mod 61]`). Each kernel holds every op of one dtype in one form, so
// the matrix is 40 small kernels. The reference is the dtype's arithmetic: two's-complement
// wrap-around, shifts by counts below the width (arithmetic right shift of signed values), floor or
// truncating division of negatives, comparisons after wrap; operands are the dtype's edge values
// (every pair) and random ones, INT_MIN / -1 included (it wraps to INT_MIN; a plain C division
// traps on x86). Shift counts stay below the width (beyond it OpenCL C masks the count).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <uopcg/core/builder.hpp>

#include "../kernels/kernel_sink.hpp"
#include "kernel_runner.hpp"

using namespace uopcg;
using uopcg_test::Bytes;
using uopcg_test::kernel_sink;
using uopcg_test::run_kernel;

namespace {

using i128 = __int128;
using u128 = unsigned __int128;

constexpr int N = 64;       // operand tuples per op
constexpr int MODULUS = 61;  // the index form's table size (prime, a literal of every dtype)

struct IntType {
  DType dt;
  int bits;
  bool sign;
  i128 min() const { return sign ? -(i128{1} << (bits - 1)) : 0; }
  i128 max() const { return sign ? (i128{1} << (bits - 1)) - 1 : (i128{1} << bits) - 1; }
  /// v reduced to the dtype: its low `bits` bits, sign-extended when signed.
  i128 wrap(i128 v) const {
    const u128 m = (u128{1} << bits) - 1, u = static_cast<u128>(v) & m;
    return sign && (u >> (bits - 1)) ? static_cast<i128>(u | ~m) : static_cast<i128>(u);
  }
};
constexpr IntType int_types[] = {{DType::int8, 8, true},   {DType::uint8, 8, false},  {DType::int16, 16, true},
                                 {DType::uint16, 16, false}, {DType::int32, 32, true}, {DType::uint32, 32, false},
                                 {DType::int64, 64, true},  {DType::uint64, 64, false}};

Bytes encode(const std::vector<i128>& v, int bits) {
  Bytes b(v.size() * static_cast<std::size_t>(bits / 8));
  for (std::size_t j = 0; j < v.size(); ++j) {
    const auto u = static_cast<std::uint64_t>(v[j]);  // little-endian low bytes
    std::memcpy(b.data() + j * static_cast<std::size_t>(bits / 8), &u, static_cast<std::size_t>(bits / 8));
  }
  return b;
}
std::vector<i128> decode(const Bytes& b, IntType t) {
  std::vector<i128> v(b.size() / static_cast<std::size_t>(t.bits / 8));
  for (std::size_t j = 0; j < v.size(); ++j) {
    std::uint64_t u = 0;
    std::memcpy(&u, b.data() + j * static_cast<std::size_t>(t.bits / 8), static_cast<std::size_t>(t.bits / 8));
    v[j] = t.wrap(static_cast<i128>(u));
  }
  return v;
}

i128 floor_div(i128 a, i128 b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
i128 floor_mod(i128 a, i128 b) { return a - floor_div(a, b) * b; }

/// One tuple of operands: a, b, c (compared against), d (a divisor, never 0), s (a shift count).
struct Vals {
  i128 a, b, c, d, s;
};
struct Operands {
  UOp a, b, c, d, s;
};

/// An op of the matrix: its graph and its reference value (wrapped to the dtype; 0/1 for a bool).
struct IntOp {
  const char* name;
  bool boolean;
  UOp (*build)(const Operands&);
  i128 (*ref)(const Vals&, IntType);
};
// clang-format off
const IntOp int_ops[] = {
    {"add", false, [](const Operands& o) { return o.a + o.b; }, [](const Vals& v, IntType t) { return t.wrap(v.a + v.b); }},
    {"sub", false, [](const Operands& o) { return o.a - o.b; }, [](const Vals& v, IntType t) { return t.wrap(v.a - v.b); }},
    {"mul", false, [](const Operands& o) { return o.a * o.b; },
     [](const Vals& v, IntType t) { return t.wrap(static_cast<i128>(static_cast<u128>(v.a) * static_cast<u128>(v.b))); }},
    {"floordiv", false, [](const Operands& o) { return o.a / o.d; }, [](const Vals& v, IntType t) { return t.wrap(floor_div(v.a, v.d)); }},
    {"cdiv", false, [](const Operands& o) { return cdiv(o.a, o.d); }, [](const Vals& v, IntType t) { return t.wrap(v.a / v.d); }},
    {"floormod", false, [](const Operands& o) { return o.a % o.d; }, [](const Vals& v, IntType t) { return t.wrap(floor_mod(v.a, v.d)); }},
    {"cmod", false, [](const Operands& o) { return cmod(o.a, o.d); }, [](const Vals& v, IntType t) { return t.wrap(v.a % v.d); }},
    {"shl", false, [](const Operands& o) { return o.a << o.s; },
     [](const Vals& v, IntType t) { return t.wrap(static_cast<i128>(static_cast<u128>(v.a) << static_cast<int>(v.s))); }},
    {"shr", false, [](const Operands& o) { return o.a >> o.s; }, [](const Vals& v, IntType t) { return t.wrap(v.a >> static_cast<int>(v.s)); }},
    {"and", false, [](const Operands& o) { return o.a & o.b; }, [](const Vals& v, IntType t) { return t.wrap(v.a & v.b); }},
    {"or", false, [](const Operands& o) { return o.a | o.b; }, [](const Vals& v, IntType t) { return t.wrap(v.a | v.b); }},
    {"xor", false, [](const Operands& o) { return o.a ^ o.b; }, [](const Vals& v, IntType t) { return t.wrap(v.a ^ v.b); }},
    {"max", false, [](const Operands& o) { return maximum(o.a, o.b); }, [](const Vals& v, IntType) { return std::max(v.a, v.b); }},
    {"where", false, [](const Operands& o) { return where(o.a < o.c, o.a, o.b); }, [](const Vals& v, IntType) { return v.a < v.c ? v.a : v.b; }},
    {"neg", false, [](const Operands& o) { return -o.a; }, [](const Vals& v, IntType t) { return t.wrap(-v.a); }},
    {"add_literal", false, [](const Operands& o) { return o.a + 100; }, [](const Vals& v, IntType t) { return t.wrap(v.a + 100); }},
    {"mul_literal", false, [](const Operands& o) { return o.a * -3; },
     [](const Vals& v, IntType t) { return t.wrap(static_cast<i128>(static_cast<u128>(v.a) * static_cast<u128>(t.wrap(-3)))); }},
    {"cmplt", true, [](const Operands& o) { return o.a < o.b; }, [](const Vals& v, IntType) { return i128{v.a < v.b}; }},
    {"cmpne", true, [](const Operands& o) { return ne(o.a, o.b); }, [](const Vals& v, IntType) { return i128{v.a != v.b}; }},
    {"cmpeq", true, [](const Operands& o) { return alu(Ops::CMPEQ, o.a, o.b); }, [](const Vals& v, IntType) { return i128{v.a == v.b}; }},
};
// clang-format on
constexpr std::size_t n_ops = std::size(int_ops);

enum class Form { stored, inline_operand, compared, index };
const char* form_name(Form f) {
  switch (f) {
    case Form::stored: return "stored";
    case Form::inline_operand: return "inline operand";
    case Form::compared: return "compared";
    default: return "index";
  }
}

/// Operand tuples for dtype t: every pair of edge values for (a, b), then random values.
std::vector<Vals> operand_tuples(IntType t, unsigned seed) {
  const std::vector<i128> edges{t.min(), t.min() + 1, t.sign ? -1 : t.max() / 2 + 1, 0, 1, t.max() - 1, t.max()};
  std::mt19937_64 g(seed);
  auto any = [&] { return t.wrap(static_cast<i128>(g())); };
  std::vector<Vals> v;
  for (i128 x : edges)
    for (i128 y : edges) v.push_back({x, y, 0, 0, 0});
  while (v.size() < N) v.push_back({any(), any(), 0, 0, 0});
  for (std::size_t j = 0; j < v.size(); ++j) {
    v[j].c = j % 3 == 0 ? edges[j % edges.size()] : any();
    v[j].d = j % 2 == 0 ? v[(j + 5) % v.size()].b : any();
    if (v[j].d == 0) v[j].d = 1 + static_cast<i128>(j % 7);
    if (j % 16 == 3) v[j].d = t.sign ? -1 : 3;
    v[j].s = static_cast<i128>(j % static_cast<std::size_t>(t.bits));
  }
  v[0].a = t.min(), v[0].d = t.sign ? -1 : 2;
  return v;
}

/// Stores of every op of dtype t in form f: T results at slot 0, bool results at slot 1, int64
/// (inline) at 2, int32 (index) at 3; operands at slots 4..8, the index table at 9.
UOp matrix_kernel(Arena& ar, IntType t, Form f) {
  const std::int64_t n = static_cast<std::int64_t>(n_ops) * N;
  UOp o_t = param(ar, 0, t.dt, n), o_b = param(ar, 1, DType::bool_, n), o_64 = param(ar, 2, DType::int64, n),
      o_32 = param(ar, 3, DType::int32, n);
  UOp A = param(ar, 4, t.dt, N), B = param(ar, 5, t.dt, N), C = param(ar, 6, t.dt, N), D = param(ar, 7, t.dt, N),
      S = param(ar, 8, t.dt, N), table = param(ar, 9, DType::int32, MODULUS);
  UOp i = range(ar, N, 0, AxisType::GLOBAL);
  const Operands o{index(A, i), index(B, i), index(C, i), index(D, i), index(S, i)};
  std::vector<UOp> stores;
  for (std::size_t k = 0; k < n_ops; ++k) {
    const UOp v = int_ops[k].build(o), at = i + static_cast<std::int64_t>(k) * N;
    switch (f) {
      case Form::stored: stores.push_back(store(index(int_ops[k].boolean ? o_b : o_t, at), v)); break;
      case Form::inline_operand: stores.push_back(store(index(o_64, at), cast(v, DType::int64))); break;
      case Form::compared:
        stores.push_back(store(index(o_b, at), int_ops[k].boolean ? ne(v, o.a < o.c) : v < o.c));
        break;
      case Form::index:
        stores.push_back(store(index(o_32, at), index(table, cast(int_ops[k].boolean ? v : v % MODULUS, DType::weakint))));
        break;
    }
  }
  return kernel_sink(end(node(Ops::GROUP, stores), i), "int_matrix");
}

std::vector<i128> table_values() {
  std::vector<i128> v(MODULUS);
  for (int j = 0; j < MODULUS; ++j) v[j] = 1000 + 7 * j;
  return v;
}

}  // namespace

TEST_CASE("integer semantics: every dtype x op x rendered form on the device against the dtype's arithmetic") {
  for (const IntType& t : int_types) {
    const std::vector<Vals> vals = operand_tuples(t, 0x5eed + static_cast<unsigned>(t.bits) + (t.sign ? 1u : 0u));
    auto column = [&](i128 Vals::*m) {
      std::vector<i128> c(N);
      for (int j = 0; j < N; ++j) c[j] = vals[j].*m;
      return encode(c, t.bits);
    };
    const std::map<std::int64_t, Bytes> inputs{{4, column(&Vals::a)}, {5, column(&Vals::b)}, {6, column(&Vals::c)},
                                               {7, column(&Vals::d)}, {8, column(&Vals::s)}, {9, encode(table_values(), 32)}};
    for (Form f : {Form::stored, Form::inline_operand, Form::compared, Form::index}) {
      CAPTURE(name(t.dt));
      CAPTURE(form_name(f));
      Arena ar;
      const auto res = run_kernel(matrix_kernel(ar, t, f), inputs);
      // a buffer the form does not write is no kernel parameter
      auto out = [&](std::int64_t slot, IntType as) {
        auto it = res.buffers.find(slot);
        return it == res.buffers.end() ? std::vector<i128>() : decode(it->second, as);
      };
      const auto got_t = out(0, t), got_b = out(1, {DType::uint8, 8, false}), got_64 = out(2, {DType::int64, 64, true}),
                 got_32 = out(3, {DType::int32, 32, true});
      int bad = 0;
      for (std::size_t k = 0; k < n_ops; ++k) {
        const IntOp& op = int_ops[k];
        for (int j = 0; j < N; ++j) {
          const Vals& v = vals[j];
          const i128 want = op.ref(v, t);
          const std::size_t at = k * N + static_cast<std::size_t>(j);
          i128 got = 0, expect = 0;
          switch (f) {
            case Form::stored: got = op.boolean ? got_b[at] : got_t[at], expect = want; break;
            case Form::inline_operand: got = got_64[at], expect = IntType{DType::int64, 64, true}.wrap(want); break;
            case Form::compared: got = got_b[at], expect = op.boolean ? want != (v.a < v.c) : want < v.c; break;
            case Form::index: got = got_32[at], expect = 1000 + 7 * (op.boolean ? want : floor_mod(want, MODULUS)); break;
          }
          if (got != expect && ++bad <= 8)
            MESSAGE(std::string(op.name) << " a=" << static_cast<long long>(v.a) << " b=" << static_cast<long long>(v.b) << " c="
                            << static_cast<long long>(v.c) << " d=" << static_cast<long long>(v.d) << " s=" << static_cast<long long>(v.s)
                            << ": got " << static_cast<long long>(got) << ", want " << static_cast<long long>(expect));
        }
      }
      if (bad) MESSAGE(res.source);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("integer semantics: casts between every pair of integer dtypes, stored, inline and compared") {
  for (const IntType& from : int_types) {
    CAPTURE(name(from.dt));
    const std::vector<Vals> vals = operand_tuples(from, 0xca57 + static_cast<unsigned>(from.bits));
    std::vector<i128> va(N), vc(N);
    for (int j = 0; j < N; ++j) va[j] = vals[j].a, vc[j] = vals[j].c;
    Arena ar;
    const std::int64_t m = static_cast<std::int64_t>(std::size(int_types));
    UOp A = param(ar, 0, from.dt, N), C = param(ar, 1, from.dt, N), o_64 = param(ar, 2, DType::int64, m * N),
        o_b = param(ar, 3, DType::bool_, m * N);
    UOp i = range(ar, N, 0, AxisType::GLOBAL);
    std::vector<UOp> stores;
    for (std::size_t k = 0; k < std::size(int_types); ++k) {
      const UOp outk = param(ar, 4 + static_cast<std::int64_t>(k), int_types[k].dt, N);
      const UOp x = cast(index(A, i), int_types[k].dt), at = i + static_cast<std::int64_t>(k) * N;
      stores.push_back(store(index(outk, i), x));
      stores.push_back(store(index(o_64, at), cast(x, DType::int64)));
      stores.push_back(store(index(o_b, at), x < cast(index(C, i), int_types[k].dt)));
    }
    const auto res = run_kernel(kernel_sink(end(node(Ops::GROUP, stores), i), "int_casts"),
                                {{0, encode(va, from.bits)}, {1, encode(vc, from.bits)}});
    const auto got_64 = decode(res.buffers.at(2), {DType::int64, 64, true});
    const auto got_b = decode(res.buffers.at(3), {DType::uint8, 8, false});
    int bad = 0;
    for (std::size_t k = 0; k < std::size(int_types); ++k) {
      const IntType to = int_types[k];
      const auto stored = decode(res.buffers.at(4 + static_cast<std::int64_t>(k)), to);
      for (int j = 0; j < N; ++j) {
        const i128 want = to.wrap(va[j]), at = static_cast<i128>(k) * N + j;
        const bool ok = stored[j] == want && got_64[static_cast<std::size_t>(at)] == IntType{DType::int64, 64, true}.wrap(want) &&
                        got_b[static_cast<std::size_t>(at)] == (want < to.wrap(vc[j]));
        if (!ok && ++bad <= 8) MESSAGE(name(to.dt) << " a=" << static_cast<long long>(va[j]) << " c=" << static_cast<long long>(vc[j]));
      }
    }
    if (bad) MESSAGE(res.source);
    CHECK(bad == 0);
  }
}
