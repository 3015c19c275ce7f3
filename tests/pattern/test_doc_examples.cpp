// The code examples of docs/pattern.md, compiled and run: each block between `// doc: NAME` and
// `// end doc` is the block the document shows, word for word (the checks after a block are this
// test's own). Change one, change the other: tools/check_doc_examples.py fails when they differ.
#include <doctest/doctest.h>

#include <optional>
#include <type_traits>

#include <uopcg/core/builder.hpp>
#include <uopcg/pattern/pattern.hpp>
#include <uopcg/symbolic/rhs.hpp>

using namespace uopcg;
namespace P = uopcg::pat;

namespace {
// doc: patterns
constexpr auto x = P::var<"x">;   // any node, captured as x
constexpr auto y = P::var<"y">;
constexpr auto c = P::cvar<"c">;  // a CONST, captured as c

// The operators build the structure tinygrad's graphs have: x + 0 is ADD(x, 0) in either order,
// x - y is ADD(x, MUL(y, -1)), x < y is a bool CMPLT.
static_assert(P::root_ops_v<decltype(x + 0)> == OpSet{Ops::ADD});
static_assert(P::root_ops_v<decltype(x - y)> == OpSet{Ops::ADD});
static_assert(P::root_dtypes_v<decltype(x < y)> == P::DTypeSet{DType::bool_});

// Refinements return a new pattern type.
constexpr auto int_add = P::op<Ops::ADD>.dtype<DType::int32>().commutative(x, c);
constexpr auto load_of_index = P::load(P::op<Ops::INDEX>.any_len(P::var<"buf">, x).named<"idx">());
constexpr auto reduce_range = P::op<Ops::RANGE>.arg_such_that([](const Arg& a) { return a[1].as_axis_type() == AxisType::REDUCE; });
constexpr auto untagged = P::op<Ops::CONST>.as<"k">.such_that([](UOp u) { return !u.has_tag(); });
// end doc
static_assert(P::root_dtypes_v<std::remove_cv_t<decltype(int_add)>> == P::DTypeSet{DType::int32});
static_assert(P::name_v<std::remove_cv_t<decltype(untagged)>>.view() == "k");

// doc: rules
constexpr auto simplify = P::rules(
    P::rule("x+0", x + 0, [](auto& m) { return m[x]; }),       // total: always rewrites
    P::rule("x*c", x * c, [](auto& m) -> std::optional<UOp> {  // partial: may decline
      auto [v, k] = m;                                         // the captures, in the pattern's order
      if (k.arg().as_int() != 1) return std::nullopt;
      return v;
    }));
// end doc

// doc: context
struct counter {
  int rewrites = 0;
};
constexpr auto count_zeros = P::rules(P::rule(x + 0, [](counter& ctx, auto& m) {
  ++ctx.rewrites;
  return m[x];
}));
// end doc

// doc: short form
using symbolic::fold;
constexpr auto c0 = P::cvar<"c0">;
constexpr auto c1 = P::cvar<"c1">;
constexpr auto short_form = P::rules(
    P::rewrite(x * 1, x),
    P::rewrite("x*0", x * 0, 0),                        // 0 takes the rewritten node's dtype
    P::rewrite((x + c0) + c1, x + fold(c0 + c1)),       // fold(): the captured constants added
    P::rewrite(x & 255, P::cast<DType::int32>(P::cast<DType::uint8>(x))),
    P::rewrite("x//2", P::floordiv(x, c0), x >> 1,      // 1 takes x's dtype
               P::root_dtype(x) && [](auto& m) { return m[c0].arg().as_int() == 2; }));
// end doc

// doc: rule sets
constexpr auto more = simplify + P::rules(P::rule(P::op<Ops::RANGE>, [](auto& m) -> std::optional<UOp> {
                        return m.root().vmax() == 0 ? std::optional<UOp>(const_like(m.root(), 0)) : std::nullopt;
                      }));
static_assert(decltype(more)::size == 3);
static_assert(decltype(more)::count_for(Ops::MUL) == 1 && decltype(more)::count_for(Ops::LOAD) == 0);
static_assert(decltype(more)::required_child_ops(1) == OpSet{Ops::CONST});  // x * c: MUL(_, CONST)
// end doc

// doc: constant evaluation
constexpr bool simplified_at_compile_time = [] {
  Arena a;
  const UOp r = range(a, 16, 0, AxisType::LOOP);
  return P::graph_rewrite((r + 0) * 1, simplify) == r;
}();
static_assert(simplified_at_compile_time);
// end doc
}  // namespace

TEST_CASE("docs/pattern.md: patterns match what their operators say") {
  Arena a;
  const UOp r = range(a, 16, 0, AxisType::LOOP);
  const UOp i = cast(r, DType::int32);
  const UOp k = const_(a, DType::int32, Arg::integer(3));
  auto hit = [](auto& m) { return with_tag(m.root(), Arg::string("hit")); };
  auto tagged = [](UOp u) { return u.has_tag(); };
  CHECK(tagged(P::graph_rewrite(k + i, P::rules(P::rule(int_add, hit)))));         // either operand order
  CHECK(!tagged(P::graph_rewrite(r + 3, P::rules(P::rule(int_add, hit)))));        // weakint: not int32
  const UOp ld = load(index(param(a, 0, DType::float32, 16), r, literal(a, true)));
  CHECK(tagged(P::graph_rewrite(ld, P::rules(P::rule(load_of_index, hit)))));       // INDEX(buf, x, ...): a prefix
  const UOp red = range(a, 4, 1, AxisType::REDUCE);
  CHECK(tagged(P::graph_rewrite(red, P::rules(P::rule(reduce_range, hit)))));
  CHECK(!tagged(P::graph_rewrite(r, P::rules(P::rule(reduce_range, hit)))));
  CHECK(tagged(P::graph_rewrite(k, P::rules(P::rule(untagged, hit)))));
  CHECK(P::graph_rewrite(r - r, P::rules(P::rule(x - y, [](auto& m) { return m[y]; }))) == r);
}

TEST_CASE("docs/pattern.md: a total and a partial rule; a rewriter with a context") {
  Arena a;
  const UOp r = range(a, 16, 0, AxisType::LOOP);
  CHECK(P::graph_rewrite((r + 0) * 1, simplify) == r);
  CHECK(P::graph_rewrite(r * 2, simplify) == r * 2);  // x*c declines
  counter n;
  CHECK(P::graph_rewrite((r + 0) * (r * 2 + 0), count_zeros, n) == r * (r * 2));
  CHECK(n.rewrites == 2);
  CHECK(P::graph_rewrite((r + 0) + 0, count_zeros, n) == r);  // ADD(r, 0) rebuilt is ADD(r, 0): rewritten once
  CHECK(n.rewrites == 3);
}

TEST_CASE("docs/pattern.md: the short rule form") {
  Arena a;
  const UOp r = range(a, 16, 0, AxisType::LOOP);
  const UOp i = cast(r, DType::int32);
  auto i32 = [&](std::int64_t v) { return const_(a, DType::int32, Arg::integer(v)); };
  CHECK(P::graph_rewrite(i * i32(1), short_form) == i);
  const UOp zero = P::graph_rewrite(i * i32(0), short_form);
  CHECK((zero.op() == Ops::CONST && zero.dtype() == DType::int32 && zero.arg().as_int() == 0));
  CHECK(P::graph_rewrite((r + 3) + 4, short_form) == r + 7);
  CHECK(P::graph_rewrite(i & i32(255), short_form) == cast(cast(i, DType::uint8), DType::int32));
  CHECK(P::graph_rewrite(floordiv(i, i32(2)), short_form) == alu(Ops::SHR, i, i32(1)));
  CHECK(P::graph_rewrite(floordiv(i, i32(3)), short_form) == floordiv(i, i32(3)));  // the predicate declines
}

TEST_CASE("docs/pattern.md: rule sets compose") {
  Arena a;
  const UOp r = range(a, 1, 0, AxisType::LOOP);  // vmax 0
  CHECK(P::graph_rewrite(r * 1, more) == literal(a, 0));
  CHECK(more.info(0).label() == "x+0");
}

TEST_CASE("docs/pattern.md: graph_rewrite's modes and options") {
  // doc: modes
  Arena a;
  const UOp r = range(a, 16, 0, AxisType::LOOP);
  const UOp e = (r + 0) * 2;
  CHECK(P::graph_rewrite(e, simplify) == r * 2);  // children first (the default)

  P::rewrite_options pre_order;
  pre_order.bottom_up = true;  // tinygrad's bottom_up=True: a node's rules before its children
  CHECK(P::graph_rewrite(e, simplify, pre_order) == r * 2);
  constexpr auto stop_at_mul = P::rules(P::rule(P::op<Ops::MUL>, [](auto& m) { return P::gated{m.root()}; }),
                                        P::rule(x + 0, [](auto& m) { return m[x]; }));
  CHECK(P::graph_rewrite(e, stop_at_mul, pre_order) == e);  // gated: nothing below the MUL is visited
  // end doc

  // doc: options
  P::rewrite_stats stats;
  P::rewrite_options opts;
  opts.name = "simplify";  // named in errors and traces
  opts.stats = &stats;     // visits, attempts and matches per rule
  CHECK(P::graph_rewrite((r + 0) * 1, simplify, opts) == r);
  CHECK(stats.matches[0] == 1);  // x+0 once
  CHECK(stats.matches[1] == 1);  // x*c once

  // a rule set that never settles is an error naming the pass and the last rules applied
  constexpr auto swap = P::rules(P::rule("swap", x + y, [](auto& m) { return m[y] + m[x]; }));
  CHECK_THROWS_WITH_AS(P::graph_rewrite(r + 1, swap, opts), doctest::Contains("Last rules applied: swap"), uopcg::error);
  // end doc
}
