// The short rule form: rewrite(lhs, rhs[, pred]) builds its right-hand side from the captures.
#include <doctest/doctest.h>

#include <uopcg/core/builder.hpp>
#include <uopcg/core/print.hpp>
#include <uopcg/pattern/pattern.hpp>
#include <uopcg/symbolic/rhs.hpp>

using namespace uopcg;
namespace P = uopcg::pat;

namespace {
constexpr auto x = P::var<"x">;
constexpr auto y = P::var<"y">;
constexpr auto c0 = P::cvar<"c0">;
constexpr auto c1 = P::cvar<"c1">;

UOp i32(Arena& a, std::int64_t v) { return const_(a, DType::int32, Arg::integer(v)); }
// A scalar variable (tinygrad's Variable: a PARAM in the ALU address space).
constexpr UOp var_of(Arena& a, std::int64_t slot, DType dt) {
  ParamArg p;
  p.slot = slot;
  p.dtype = dt;
  p.addrspace = AddrSpace::ALU;
  return a.make(Ops::PARAM, dt, {}, p.to_arg());
}
UOp var32(Arena& a, std::int64_t slot) { return var_of(a, slot, DType::int32); }
}  // namespace

TEST_CASE("rewrite: a capture, a number and an op node") {
  Arena a;
  const UOp v = var32(a, 0), w = var32(a, 1);
  constexpr auto rs = P::rules(P::rewrite("x*1", x * 1, x),                    //
                               P::rewrite("x*0", x * 0, 0),                    // a number takes the node's dtype
                               P::rewrite("x+x", x + x, x * 2),                // and an operand's inside an op
                               P::rewrite("(x+y)<<1", (x + y) << 1, (x << 1) + (y << 1)));
  CHECK(P::graph_rewrite(v * i32(a, 1), rs) == v);
  const UOp zero = P::graph_rewrite(v * i32(a, 0), rs);
  CHECK(zero.op() == Ops::CONST);
  CHECK(zero.dtype() == DType::int32);
  CHECK(zero.arg().as_int() == 0);
  CHECK(P::graph_rewrite(v + v, rs) == alu(Ops::MUL, v, i32(a, 2)));
  const UOp sh = P::graph_rewrite(alu(Ops::SHL, v + w, i32(a, 1)), rs);
  CHECK(sh == alu(Ops::ADD, alu(Ops::SHL, v, i32(a, 1)), alu(Ops::SHL, w, i32(a, 1))));
  CHECK(sh.dtype() == DType::int32);
}

TEST_CASE("rewrite: a predicate reads the captures through structured bindings") {
  Arena a;
  const UOp v = var32(a, 0);
  constexpr auto rs = P::rules(P::rewrite(
      "x//2 -> x>>1", P::floordiv(x, c0), x >> 1, [](auto& m) {
        auto [xx, c] = m;
        return xx.dtype() == DType::int32 && c.arg().as_int() == 2;
      }));
  CHECK(P::graph_rewrite(alu(Ops::FLOORDIV, v, i32(a, 2)), rs) == alu(Ops::SHR, v, i32(a, 1)));
  const UOp by3 = alu(Ops::FLOORDIV, v, i32(a, 3));
  CHECK(P::graph_rewrite(by3, rs) == by3);  // the predicate declines
}

// a rule with a predicate may decline (it shadows no later rule); one without always rewrites
constexpr auto with_pred = P::rewrite(x * c0, x, [](auto& m) { return m[c0].arg().as_int() == 1; });
constexpr auto without_pred = P::rewrite(x * 1, x);
static_assert(!decltype(with_pred)::total && decltype(without_pred)::total);

TEST_CASE("rewrite: a WHERE's numbers take the other branch's dtype, a comparison's its operand's") {
  Arena a;
  const UOp v = var32(a, 0);
  const UOp f = var_of(a, 2, DType::float32);
  constexpr auto rs = P::rules(P::rewrite("max(x,0)", P::maximum(x, 0), P::where(x < 0, 0, x)));
  const UOp r = P::graph_rewrite(alu(Ops::MAX, f, const_(a, DType::float32, Arg::floating(0))), rs);
  const UOp zf = const_(a, DType::float32, Arg::floating(0));
  CHECK(r == where(alu(Ops::CMPLT, f, zf), zf, f));
  CHECK(r.dtype() == DType::float32);
  const UOp ri = P::graph_rewrite(alu(Ops::MAX, v, i32(a, 0)), rs);
  CHECK(ri == where(alu(Ops::CMPLT, v, i32(a, 0)), i32(a, 0), v));
}

TEST_CASE("rewrite: casts take their dtype from the pattern") {
  Arena a;
  const UOp v = var32(a, 0);
  constexpr auto rs = P::rules(P::rewrite("x&255 -> cast", x & 255, P::cast<DType::int32>(P::cast<DType::uint8>(x))));
  const UOp r = P::graph_rewrite(alu(Ops::AND, v, i32(a, 255)), rs);
  CHECK(r == cast(cast(v, DType::uint8), DType::int32));
}

TEST_CASE("rewrite: fold() folds captured constants, keep_dtype() keeps the node's dtype") {
  Arena a;
  const UOp v = var32(a, 0);
  using symbolic::fold;
  using symbolic::keep_dtype;
  constexpr auto rs = P::rules(P::rewrite("(x+c0)+c1", (x + c0) + c1, x + fold(c0 + c1)),
                               P::rewrite("(x*c0)*c1", (x * c0) * c1, x * fold(c0 * c1)),
                               P::rewrite("x|0", x | 0, keep_dtype(x)));
  CHECK(P::graph_rewrite((v + i32(a, 3)) + i32(a, 4), rs) == v + i32(a, 7));
  CHECK(P::graph_rewrite(alu(Ops::MUL, alu(Ops::MUL, v, i32(a, 3)), i32(a, -5)), rs) == alu(Ops::MUL, v, i32(a, -15)));
  // a weak operand of a strong OR: the result keeps the OR's dtype
  const UOp w = var_of(a, 3, DType::weakint);
  const UOp r = P::graph_rewrite(a.make(Ops::OR, DType::int32, {w, i32(a, 0)}), rs);
  CHECK(r == cast(w, DType::int32));
}

TEST_CASE("rewrite: rules compose with rule() in one set and run in constant evaluation") {
  static constexpr auto rs = P::rules(P::rewrite(x + 0, x), P::rule(x * 1, [](auto& m) { return m[x]; }));
  constexpr bool ok = [] {
    Arena a;
    const UOp v = var_of(a, 0, DType::int32);
    const UOp e = (v + const_(a, DType::int32, Arg::integer(0))) * const_(a, DType::int32, Arg::integer(1));
    return P::graph_rewrite(e, rs) == v;
  }();
  static_assert(ok);
  CHECK(ok);
}

TEST_CASE("rewrite: an integer is wrapped to the dtype it takes") {
  Arena a;
  const UOp u = var_of(a, 4, DType::uint32);
  constexpr auto rs = P::rules(P::rewrite("0-x", 0 - x, x * -1));
  const UOp r = P::graph_rewrite(alu(Ops::ADD, const_(a, DType::uint32, Arg::integer(0)), alu(Ops::MUL, u, const_(a, DType::uint32, Arg::integer(-1)))), rs);
  CHECK(r == alu(Ops::MUL, u, const_(a, DType::uint32, Arg::uinteger(4294967295u))));
}

TEST_CASE("rewrite: fold() is a number where it stands and declines when it has no value") {
  Arena a;
  const UOp v = var32(a, 0);
  using symbolic::fold;
  // in a comparison, fold() takes its sibling's dtype as a number would (not the node's bool)
  constexpr auto rs = P::rules(P::rewrite("x+c0<c1", (x + c0) < c1, x < fold(c1 - c0)),
                               P::rewrite("(x*c0)*c1", (x * c0) * c1, x * fold(c0 * c1)));
  CHECK(P::graph_rewrite(alu(Ops::CMPLT, v + i32(a, 3), i32(a, 10)), rs) == alu(Ops::CMPLT, v, i32(a, 7)));
  // int32 wraps as the op does
  CHECK(P::graph_rewrite(alu(Ops::MUL, alu(Ops::MUL, v, i32(a, 65536)), i32(a, 65536)), rs) == alu(Ops::MUL, v, i32(a, 0)));
  // a weakint product beyond what a weak literal holds: no constant, the rule declines
  const UOp w = var_of(a, 3, DType::weakint);
  auto weak = [&](std::int64_t k) { return const_(a, DType::weakint, Arg::integer(k)); };
  const UOp big = alu(Ops::MUL, alu(Ops::MUL, w, weak(std::int64_t{1} << 40)), weak(std::int64_t{1} << 40));
  CHECK(P::graph_rewrite(big, rs) == big);
  static_assert(!decltype(P::rewrite(x * c0, x * fold(c0 * 2)))::total);
}

TEST_CASE("rewrite: a predicate may read the rewrite's context, alone or beside root_dtype") {
  Arena a;
  const UOp v = var32(a, 0);
  struct limit {
    std::int64_t max;
  };
  constexpr auto small = [](const limit& l, auto& m) { return m[c0].arg().as_int() <= l.max; };
  constexpr auto rs = P::rules(P::rewrite("x*c -> x<<1", x * c0, x << 1, P::root_dtype(x) && small));
  const UOp twice = alu(Ops::MUL, v, i32(a, 2));
  const limit two{2}, one{1};
  CHECK(P::graph_rewrite(twice, rs, two) == alu(Ops::SHL, v, i32(a, 1)));
  CHECK(P::graph_rewrite(twice, rs, one) == twice);
}

TEST_CASE("rewrite: a computed right-hand side, which may read the context") {
  Arena a;
  const UOp v = var32(a, 0);
  struct shift_limit {
    std::int64_t max;
  };
  // x * 2^k -> x << k: the shift count is no expression of the captures
  constexpr auto shift = [](auto& m) {
    std::int64_t k = 0;
    while ((std::int64_t{1} << k) < m[c0].arg().as_int()) ++k;
    return alu(Ops::SHL, m[x], const_(m.arena(), m[x].dtype(), Arg::integer(k)));
  };
  constexpr auto pow2 = [](auto& m) { return (m[c0].arg().as_int() & (m[c0].arg().as_int() - 1)) == 0; };
  constexpr auto rs = P::rules(P::rewrite("x*2^k", x * c0, shift, P::root_dtype(x) && pow2));
  CHECK(P::graph_rewrite(alu(Ops::MUL, v, i32(a, 8)), rs) == alu(Ops::SHL, v, i32(a, 3)));
  CHECK(P::graph_rewrite(alu(Ops::MUL, v, i32(a, 6)), rs) == alu(Ops::MUL, v, i32(a, 6)));
  // the computed side reads the context: a shift past the limit declines
  constexpr auto limited = [](const shift_limit& l, auto& m) -> std::optional<UOp> {
    if (m[c0].arg().as_int() > l.max) return std::nullopt;
    return alu(Ops::ADD, m[x], m[x]);
  };
  constexpr auto rs2 = P::rules(P::rewrite("x*2", x * c0, limited, pow2));
  const shift_limit two{2}, one{1};
  CHECK(P::graph_rewrite(alu(Ops::MUL, v, i32(a, 2)), rs2, two) == alu(Ops::ADD, v, v));
  CHECK(P::graph_rewrite(alu(Ops::MUL, v, i32(a, 2)), rs2, one) == alu(Ops::MUL, v, i32(a, 2)));
}

TEST_CASE("rewrite: Invalid on the right-hand side is the bool Invalid, which a WHERE's dtype leaves out") {
  Arena a;
  const UOp v = var32(a, 0);
  constexpr auto rs = P::rules(P::rewrite("x+Invalid", x + P::invalid_const, P::invalid_const),
                               P::rewrite("x*1 -> gated x", x * 1, P::where(x < 0, x, P::invalid_const)));
  CHECK(P::graph_rewrite(a.make(Ops::ADD, DType::int32, {v, invalid(a)}), rs) == invalid(a));
  const UOp g = P::graph_rewrite(v * i32(a, 1), rs);
  CHECK(g == a.make(Ops::WHERE, DType::int32, {alu(Ops::CMPLT, v, i32(a, 0)), v, invalid(a)}));
}
