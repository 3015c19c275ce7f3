// Matching semantics, ported from tinygrad's test_pattern_matcher.py and test_upat_compile.py.
#include <doctest/doctest.h>

#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include <uopcg/core/builder.hpp>
#include <uopcg/pattern/pattern.hpp>

using namespace uopcg;
namespace P = uopcg::pat;

namespace {
// Applies a one-rule set to a single node (no graph walk): the rewritten node or nullopt.
template <class RS>
std::optional<UOp> apply_once(const RS& rs, UOp u) {
  P::no_context ctx;
  P::applied r = rs.apply(u, ctx);
  if (r.rule < 0) return std::nullopt;
  return r.result;
}
// A rewriter that marks what it matched by tagging the root.
constexpr auto tag_root = [](auto& m) { return with_tag(m.root(), Arg::string("hit")); };

constexpr auto x = P::var<"x">;
constexpr auto y = P::var<"y">;
constexpr auto c = P::cvar<"c">;
constexpr auto c1 = P::cvar<"c1">;
constexpr auto c2 = P::cvar<"c2">;
constexpr auto rng = P::op<Ops::RANGE>.as<"r">;
}  // namespace

TEST_CASE("match by op, op set, dtype and dtype set") {
  Arena a;
  UOp cf = const_(a, DType::float32, Arg(1.0));
  UOp ci = const_(a, DType::int32, Arg(1));
  UOp r = range(a, 4, 0, AxisType::LOOP);
  auto by_op = P::rules(P::rule(P::op<Ops::CONST>.as<"n">, tag_root));
  CHECK(apply_once(by_op, cf));
  CHECK_FALSE(apply_once(by_op, r));
  auto by_set = P::rules(P::rule(P::op<Ops::CONST, Ops::RANGE>, tag_root));
  CHECK(apply_once(by_set, cf));
  CHECK(apply_once(by_set, r));
  CHECK_FALSE(apply_once(by_set, r + 1));
  auto by_dtype = P::rules(P::rule(P::op<Ops::CONST>.dtype<DType::float32>(), tag_root));
  CHECK(apply_once(by_dtype, cf));
  CHECK_FALSE(apply_once(by_dtype, ci));
  auto by_dtypes = P::rules(P::rule(P::op<Ops::CONST>.dtype<DType::float32, DType::int32>(), tag_root));
  CHECK(apply_once(by_dtypes, cf));
  CHECK(apply_once(by_dtypes, ci));
  CHECK_FALSE(apply_once(by_dtypes, const_(a, DType::int64, Arg(1))));
  auto by_group = P::rules(P::rule(P::in<GroupOp::Commutative>, tag_root));
  CHECK(apply_once(by_group, r + 1));
  CHECK_FALSE(apply_once(by_group, r < 1));
}

TEST_CASE("match by arg uses Python equality") {
  Arena a;
  auto zero = P::rules(P::rule(P::const_<0>, tag_root));
  CHECK(apply_once(zero, const_(a, DType::float32, Arg(0.0))));
  CHECK(apply_once(zero, const_(a, DType::float32, Arg(-0.0))));
  CHECK(apply_once(zero, const_(a, DType::bool_, Arg::boolean(false))));
  CHECK_FALSE(apply_once(zero, const_(a, DType::int32, Arg(-1))));
  auto falsy = P::rules(P::rule(P::const_<false>, tag_root));
  CHECK(apply_once(falsy, const_(a, DType::bool_, Arg::boolean(false))));
  CHECK_FALSE(apply_once(falsy, const_(a, DType::bool_, Arg::boolean(true))));
  auto red = P::rules(P::rule(P::op<Ops::RANGE>.arg_such_that([](const Arg& g) { return g[1].as_axis_type() == AxisType::REDUCE; }), tag_root));
  CHECK(apply_once(red, range(a, 4, 0, AxisType::REDUCE)));
  CHECK_FALSE(apply_once(red, range(a, 4, 0, AxisType::LOOP)));
  auto inv = P::rules(P::rule(P::invalid_const, tag_root));
  CHECK(apply_once(inv, invalid(a)));
  CHECK_FALSE(apply_once(inv, literal(a, false)));
  auto by_tag = P::rules(P::rule(P::op<Ops::END>.tag<P::fixed_string("mergeable")>(), tag_root));
  UOp e = end(store(index(param(a, 0, DType::float32, 4), literal(a, 0)), literal(a, 1.0)), range(a, 4, 1, AxisType::REDUCE));
  CHECK_FALSE(apply_once(by_tag, e));
  CHECK(apply_once(by_tag, with_tag(e, Arg::string("mergeable"))));
}

TEST_CASE("the rewriter's result replaces the node; returning the node itself is no match") {
  Arena a;
  UOp r = range(a, 4, 0, AxisType::LOOP);
  auto same = P::rules(P::rule(P::op<Ops::RANGE>, [](auto& m) -> std::optional<UOp> { return m.root(); }));
  CHECK_FALSE(apply_once(same, r));
  auto tagged = P::rules(P::rule(rng, [](auto& m) { return with_tag(m[rng], Arg(1)); }));
  UOp t = *apply_once(tagged, r);
  CHECK(t.tag().as_int() == 1);
  CHECK(with_tag(t, Arg()) == r);
}

TEST_CASE("alternatives with different capture names") {
  Arena a;
  auto rs = P::rules(P::rule(P::any_of(P::op<Ops::CONST>.as<"k">, P::op<Ops::RANGE>.as<"r">), [](auto& m) {
    return m.template has<"k">() ? literal(m.arena(), 1) : literal(m.arena(), 2);
  }));
  CHECK(apply_once(rs, literal(a, 7))->arg().as_int() == 1);
  CHECK(apply_once(rs, range(a, 4, 0, AxisType::LOOP))->arg().as_int() == 2);
  CHECK_FALSE(apply_once(rs, literal(a, 7) + literal(a, 8)));
}

TEST_CASE("or_casted and or_after") {
  Arena a;
  auto rs = P::rules(P::rule(P::or_casted<"v">(P::op<Ops::RANGE>), [](auto& m) { return with_tag(m.template get<"v">(), Arg(5)); }));
  UOp r = range(a, 4, 0, AxisType::LOOP);
  CHECK(apply_once(rs, r)->op() == Ops::RANGE);
  CHECK(apply_once(rs, cast(r, DType::int32))->op() == Ops::CAST);
  CHECK_FALSE(apply_once(rs, cast(literal(a, 1), DType::int32)));
  UOp buf = buffer(a, 0, DType::float32, 4, AddrSpace::LOCAL);
  auto ra = P::rules(P::rule(P::or_after(P::op<Ops::BUFFER>.as<"b">), [](auto& m) { return with_tag(m.template get<"b">(), Arg(1)); }));
  CHECK(apply_once(ra, buf));
  CHECK(apply_once(ra, after(buf, barrier(literal(a, 1)))));
}

TEST_CASE("allow_any_len") {
  Arena a;
  auto rs = P::rules(P::rule(P::op<Ops::STACK>.any_len(P::op<Ops::CONST>, P::op<Ops::CONST>), tag_root));
  UOp c1 = literal(a, 1), c2 = literal(a, 2), c3 = literal(a, 3);
  CHECK(apply_once(rs, stack(c1, c2)));
  CHECK(apply_once(rs, stack(c1, c2, c3)));
  CHECK_FALSE(apply_once(rs, stack(c1)));
}

TEST_CASE("a rewriter with ctx is called once per successful match") {
  Arena a;
  struct counter {
    int calls = 0;
  };
  auto rs = P::rules(P::rule(P::op<Ops::CONST>.as<"k">.such_that([](UOp u) { return !u.has_tag(); }),
                             [](counter& ctx, auto& m) {
                               ++ctx.calls;
                               return with_tag(m.root(), Arg(1));
                             }));
  counter ctx;
  UOp k = literal(a, 3);
  UOp out = P::graph_rewrite(k + k, rs, ctx);
  CHECK(ctx.calls == 1);  // shared node rewritten once; the tagged result no longer matches
  CHECK(out.src(0).tag().as_int() == 1);
}

TEST_CASE("source permutations, repeats and nested permutations") {
  Arena a;
  UOp cnst = literal(a, 1), other = literal(a, 2);
  UOp alu = range(a, 4, 0, AxisType::LOOP) + 1;
  auto perm = P::rules(P::rule(P::op<Ops::ADD>.commutative(P::op<Ops::CONST>, P::in<GroupOp::ALU>), tag_root));
  CHECK(apply_once(perm, a.make(Ops::ADD, DType::weakint, {cnst, alu})));
  CHECK(apply_once(perm, a.make(Ops::ADD, DType::weakint, {alu, cnst})));
  CHECK_FALSE(apply_once(perm, a.make(Ops::ADD, DType::weakint, {cnst, other})));
  CHECK_FALSE(apply_once(perm, a.make(Ops::ADD, DType::weakint, {alu, alu})));
  auto rep = P::rules(P::rule(P::op<Ops::STACK>.repeat(P::op<Ops::CONST>), tag_root));
  CHECK(apply_once(rep, stack(cnst, other, cnst)));
  CHECK_FALSE(apply_once(rep, stack(cnst, alu)));
  // ((a + b) + b) in both operand orders
  auto nested = P::rules(P::rule((x + y) + y, tag_root));
  UOp va = range(a, 4, 0, AxisType::LOOP), vb = range(a, 4, 1, AxisType::LOOP);
  CHECK(apply_once(nested, (va + vb) + vb));
  CHECK(apply_once(nested, vb + (va + vb)));
  CHECK(apply_once(nested, vb + (vb + va)));
  CHECK_FALSE(apply_once(nested, (va + vb) + va + vb));
}

TEST_CASE("a repeated capture name must bind the same (hash-consed) node") {
  Arena a;
  auto rs = P::rules(P::rule(P::in<GroupOp::ALU>(P::cvar<"y">, P::cvar<"y">), tag_root));
  UOp c1 = literal(a, 1), c1b = literal(a, 1), c2 = literal(a, 2);
  CHECK(apply_once(rs, a.make(Ops::ADD, DType::weakint, {c1, c1})));
  CHECK(apply_once(rs, a.make(Ops::ADD, DType::weakint, {c1, c1b})));  // same node by hash-consing
  CHECK_FALSE(apply_once(rs, a.make(Ops::ADD, DType::weakint, {c1, c2})));
}

TEST_CASE("every binding is offered to the rewriter until one rewrites") {
  Arena a;
  // x*c1 + x*c2 with the rewriter declining unless c1 < c2: the other permutation must be tried
  auto rs = P::rules(P::rule(x * c1 + x * c2, [](auto& m) -> std::optional<UOp> {
    if (m[c1].arg().as_int() >= m[c2].arg().as_int()) return std::nullopt;
    return m[x] * (m[c1].arg().as_int() * 100 + m[c2].arg().as_int());
  }));
  UOp v = range(a, 4, 0, AxisType::LOOP);
  UOp e = v * 5 + v * 3;
  UOp out = *apply_once(rs, e);
  CHECK(out.src(1).arg().as_int() == 305);
}

TEST_CASE("operator sugar builds the snapshot's structure") {
  Arena a;
  UOp v = range(a, 8, 0, AxisType::LOOP), w = range(a, 8, 1, AxisType::LOOP);
  auto sub = P::rules(P::rule(x - y, tag_root));
  CHECK(apply_once(sub, v - w));
  CHECK_FALSE(apply_once(sub, v + w));
  auto sub_const = P::rules(P::rule(x - 3, tag_root));
  CHECK(apply_once(sub_const, v - 3));
  CHECK(apply_once(sub_const, v + (-3)));
  auto gt = P::rules(P::rule(x > y, [](auto& m) { return m[x] + m[y]; }));
  UOp g = *apply_once(gt, v > w);  // CMPLT(w, v): x binds v
  CHECK(g.src(0) == v);
  auto lt_is_ordered = P::rules(P::rule(P::const_<0> < x, tag_root));
  CHECK(apply_once(lt_is_ordered, literal(a, 0) < v));
  CHECK_FALSE(apply_once(lt_is_ordered, v < literal(a, 0)));
  auto neg = P::rules(P::rule(-x, tag_root));
  CHECK(apply_once(neg, -v));
  auto mod = P::rules(P::rule(x % c, tag_root));
  CHECK(apply_once(mod, v % 4));
  auto wh = P::rules(P::rule(P::where(x, y, P::invalid_const), tag_root));
  CHECK(apply_once(wh, valid(v, v < 4)));
  auto casted = P::rules(P::rule(P::cast<DType::int32>(x), tag_root));
  CHECK(apply_once(casted, cast(v, DType::int32)));
  CHECK_FALSE(apply_once(casted, cast(v, DType::int64)));
  auto notted = P::rules(P::rule(P::logical_not(x.dtype<DType::bool_>()), tag_root));
  CHECK(apply_once(notted, logical_not(v < w)));
  // the dtype constraint of a compound pattern comes from its last operand
  auto bool_mul = P::rules(P::rule(x.dtype<DType::bool_>() * y.dtype<DType::bool_>(), tag_root));
  UOp bt = v < w, bf = w < v;
  CHECK(apply_once(bool_mul, a.make(Ops::MUL, DType::bool_, {bt, bf})));
  CHECK_FALSE(apply_once(bool_mul, a.make(Ops::MUL, DType::int32, {bt, bf})));
  auto and_c = P::rules(P::rule(x.dtype<DType::bool_>() & c, tag_root));
  CHECK(apply_once(and_c, a.make(Ops::AND, DType::int32, {bt, literal(a, 1)})));
}

TEST_CASE("float constants in patterns: fval and the _c literals (clang 14 takes no double template argument)") {
  Arena a;
  using namespace P::literals;
  auto f32 = [&](double v) { return const_(a, DType::float32, Arg(v)); };
  auto is = [&](auto pat, UOp u) { return apply_once(P::rules(P::rule(pat, tag_root)), u); };
  constexpr double inf = std::numeric_limits<double>::infinity();
  CHECK(is(P::const_<P::fval(-inf)>, f32(-inf)));
  CHECK_FALSE(is(P::const_<P::fval(-inf)>, f32(inf)));
  CHECK(is(P::const_<P::fval(0.5)>, f32(0.5)));
  CHECK(is(P::const_<P::fval(2.0)>, const_(a, DType::int32, Arg(2))));  // Python equality: 2.0 == 2
  // a float literal is the double the compiler would make of it
  CHECK(is(1.5_c, f32(1.5)));
  CHECK(is(0.1_c, f32(0.1)));
  CHECK(is(2.5e-3_c, f32(2.5e-3)));
  CHECK(is(1e5_c, f32(1e5)));
  CHECK_FALSE(is(1e5_c, f32(15)));
  CHECK(is(12.5E+2_c, f32(1250)));
  CHECK(is(0.000123_c, f32(0.000123)));
  // integer literals in every base C++ writes them in
  CHECK(is(0x1e_c, const_(a, DType::int32, Arg(30))));
  CHECK(is(0b101_c, const_(a, DType::int32, Arg(5))));
  CHECK(is(017_c, const_(a, DType::int32, Arg(15))));
  CHECK(is(1'000_c, const_(a, DType::int32, Arg(1000))));
  static_assert(std::is_same_v<decltype(1.5_c), std::remove_const_t<decltype(P::const_<P::fval(1.5)>)>>);
}

TEST_CASE("the patterns of test_upat_compile match what the interpreter matches") {
  Arena a;
  UOp v = range(a, 8, 0, AxisType::LOOP), w = range(a, 8, 1, AxisType::LOOP);
  using namespace P::literals;
  auto rs = P::rules(P::rule("x*c1+x*c2", x * c1 + x * c2, tag_root));
  CHECK(apply_once(rs, v * 2 + v * 3));
  CHECK_FALSE(apply_once(rs, v * 2 + w * 3));
  auto xy = P::rules(P::rule(x + y, tag_root));
  CHECK(apply_once(xy, v + w));
  auto xx = P::rules(P::rule(x + x, tag_root));
  CHECK(apply_once(xx, v + v));
  CHECK_FALSE(apply_once(xx, v + w));
  auto x0 = P::rules(P::rule(x + 0_c, tag_root));
  CHECK(apply_once(x0, v + 0));
  CHECK(apply_once(x0, a.make(Ops::ADD, DType::weakint, {literal(a, 0), v})));
  auto xyc = P::rules(P::rule((x + y) * c, tag_root));
  CHECK(apply_once(xyc, (v + w) * 3));
  auto fold = P::rules(P::rule(P::in<GroupOp::Binary>(P::op<Ops::CONST, Ops::STACK>.as<"a">, P::op<Ops::CONST, Ops::STACK>.as<"b">), tag_root));
  CHECK(apply_once(fold, literal(a, 1) + literal(a, 2)));
  CHECK(apply_once(fold, stack(literal(a, 1), literal(a, 2)) * literal(a, 2)));
}

TEST_CASE("a pattern node's sources, one to six, are each tested and bound; a composed set keeps its rules' order") {
  // 1, 2 and more than 4 sources (the forms a pattern node keeps its sources in differ by count)
  constexpr auto one = P::op<Ops::CAST>(x);
  constexpr auto two = P::op<Ops::ADD>(x, y);
  constexpr auto six = P::op<Ops::STACK>(x, y, c, c1, P::const_<1>, P::const_<2>);
  Arena a;
  UOp v = range(a, 8, 0, AxisType::LOOP), w = range(a, 8, 1, AxisType::LOOP);
  UOp k = literal(a, 3);
  CHECK(apply_once(P::rules(P::rule(one, [](auto& m) { return m[x]; })), cast(v, DType::int32)) == v);
  CHECK_FALSE(apply_once(P::rules(P::rule(one, [](auto& m) { return m[x]; })), v + w).has_value());
  CHECK(apply_once(P::rules(P::rule(two, [](auto& m) { return m[y]; })), v + w) == w);
  // the fourth source binds c1; the fifth and the sixth are tested
  auto rs = P::rules(P::rule(six, [](auto& m) { return m[c1]; }));
  CHECK(apply_once(rs, stack(v, w, k, literal(a, 4), literal(a, 1), literal(a, 2))) == literal(a, 4));
  CHECK_FALSE(apply_once(rs, stack(v, w, k, k, literal(a, 1), literal(a, 3))).has_value());
  CHECK_FALSE(apply_once(rs, stack(v, w, k, k, literal(a, 2), literal(a, 2))).has_value());
  CHECK_FALSE(apply_once(rs, stack(v, w, k, k, literal(a, 1))).has_value());
  // a rule set of six rules, composed with +: order kept, every rule reachable
  auto r6 = P::rules(P::rule("r0", x + 0, tag_root), P::rule("r1", x * 1, tag_root), P::rule("r2", x + 2, tag_root)) +
            P::rules(P::rule("r3", x * 3, tag_root), P::rule("r4", x + 4, tag_root), P::rule("r5", x * 5, tag_root));
  static_assert(decltype(r6)::size == 6);
  CHECK(r6.info(4).name == "r4");
  CHECK(r6.info(5).name == "r5");
  CHECK(apply_once(r6, v * 5).has_value());
  P::no_context ctx;
  CHECK(r6.apply(v + 4, ctx).rule == 4);
  CHECK(r6.apply(v * 3, ctx).rule == 3);
  CHECK(r6.apply(v * 7, ctx).rule < 0);
}
