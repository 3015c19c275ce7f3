// The compiled form of patterns (pattern/program.hpp): the order in which the shared matcher offers
// bindings, predicates tested after the structural walk with backtracking to the right choice point,
// the shallow fast path agreeing with the matcher, and all of it in constant evaluation.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <uopcg/core/builder.hpp>
#include <uopcg/pattern/pattern.hpp>

using namespace uopcg;
namespace P = uopcg::pat;

namespace {
constexpr auto x = P::var<"x">;
constexpr auto y = P::var<"y">;
constexpr auto z = P::var<"z">;
constexpr auto c = P::cvar<"c">;

// Records every binding offered to it (as ids) and declines, so the matcher enumerates them all.
struct recorder {
  std::vector<std::vector<node_id>> seen;
};
template <class RS>
void offer_all(const RS& rs, UOp u, recorder& rec) {
  P::applied r = rs.apply(u, rec);
  CHECK(r.rule < 0);
}
constexpr bool is_three(UOp u) { return u.arg().is_number() && u.arg().as_int() == 3; }

// Grows a random graph: each call makes an ALU node over two nodes of the pool (ADD, MUL, WHERE of
// a comparison, MAX, and with 5 kinds a bare comparison) and adds it to the pool unless it is a
// bool. A fixed-seed LCG: the same graph on every run.
struct random_alu {
  std::uint32_t seed;
  int kinds;
  std::uint32_t next() { return (seed = seed * 1103515245u + 12345u) >> 16; }
  UOp operator()(Arena& a, std::vector<UOp>& pool) {
    UOp l = pool[next() % pool.size()], r = pool[next() % pool.size()];
    UOp e;
    switch (next() % static_cast<std::uint32_t>(kinds)) {
      case 0: e = l + r; break;
      case 1: e = l * r; break;
      case 2: e = where(l < r, l, r); break;
      case 3: e = a.make(Ops::MAX, DType::weakint, {l, r}); break;
      default: e = l < r; break;
    }
    if (e.dtype() != DType::bool_) pool.push_back(e);
    return e;
  }
};
}  // namespace

TEST_CASE("how many bindings a pattern offers: pairs in both orders, lists and alternatives as written") {
  Arena a;
  UOp v = range(a, 4, 0, AxisType::LOOP), w = range(a, 4, 1, AxisType::LOOP), k = literal(a, 3);
  auto record = [](recorder& rec, auto& m) -> std::optional<UOp> {
    using M = std::remove_cvref_t<decltype(m)>;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      rec.seen.push_back({m.template get<I>().id()...});
    }(std::make_index_sequence<static_cast<std::size_t>(M::size)>{});
    return std::nullopt;
  };
  auto offered = [&](const auto& rs, UOp u) {
    recorder rec;
    offer_all(rs, u, rec);
    return rec.seen;
  };
  using seen = std::vector<std::vector<node_id>>;
  // a commutative pair of a variable and a constant: the one order in which the constant is a CONST
  CHECK(offered(P::rules(P::rule(x + c, record)), v + 3) == seen{{v.id(), k.id()}});
  CHECK(offered(P::rules(P::rule(x + c, record)), a.make(Ops::ADD, DType::weakint, {k, v})) == seen{{v.id(), k.id()}});
  // two variables: both orders
  CHECK(offered(P::rules(P::rule(x + y, record)), v + w) == seen{{v.id(), w.id()}, {w.id(), v.id()}});
  // a non-commutative list binds in its order only
  CHECK(offered(P::rules(P::rule(P::op<Ops::WHERE>(x, y, z), record)), where(v < w, v, w)) ==
        seen{{(v < w).id(), v.id(), w.id()}});
  // identical unnamed children bind nothing that depends on the order: one binding, not two
  int calls = 0;
  auto count = [&](auto&) -> std::optional<UOp> { ++calls; return std::nullopt; };
  P::no_context ctx;
  CHECK(P::rules(P::rule(P::op<Ops::ADD>.commutative(P::any, P::any), count)).apply(v + w, ctx).rule < 0);
  CHECK(calls == 1);
  // alternatives: each that matches, in the order written
  CHECK(offered(P::rules(P::rule(P::any_of(x * c, x + c), record)), v + 3) == seen{{v.id(), k.id()}});
}

TEST_CASE("bindings are offered in nested-backtracking order (tinygrad's order)") {
  Arena a;
  UOp va = range(a, 4, 0, AxisType::LOOP), vb = range(a, 4, 1, AxisType::LOOP);
  UOp vc = range(a, 4, 2, AxisType::LOOP), vd = range(a, 4, 3, AxisType::LOOP);
  auto rs = P::rules(P::rule((x + y) + z, [](recorder& rec, auto& m) -> std::optional<UOp> {
    rec.seen.push_back({m[x].id(), m[y].id(), m[z].id()});
    return std::nullopt;
  }));
  recorder rec;
  offer_all(rs, (va + vb) + (vc + vd), rec);
  // outer order first (its choice point is met first), then the inner one
  std::vector<std::vector<node_id>> want = {{va.id(), vb.id(), (vc + vd).id()},
                                            {vb.id(), va.id(), (vc + vd).id()},
                                            {vc.id(), vd.id(), (va + vb).id()},
                                            {vd.id(), vc.id(), (va + vb).id()}};
  CHECK(rec.seen == want);
}

TEST_CASE("a predicate that fails below a choice point backtracks to that choice point") {
  Arena a;
  UOp v = range(a, 4, 0, AxisType::LOOP), w = range(a, 4, 1, AxisType::LOOP);
  // the MUL's constant must be 3: in (v*5) + (w*3) only the swapped order matches
  auto rs = P::rules(P::rule(P::op<Ops::MUL>(x, c.such_that(is_three)) + y, [](recorder& rec, auto& m) -> std::optional<UOp> {
    rec.seen.push_back({m[x].id(), m[y].id()});
    return std::nullopt;
  }));
  recorder rec;
  offer_all(rs, v * 5 + w * 3, rec);
  std::vector<std::vector<node_id>> want = {{w.id(), (v * 5).id()}};
  CHECK(rec.seen == want);
  // a predicate in an alternative: the next alternative is tried
  auto alt = P::rules(P::rule(P::op<Ops::ADD>(x, P::any_of(c.such_that(is_three), P::op<Ops::CAST>.named<"c">()(P::any))),
                              [](recorder& rec, auto& m) -> std::optional<UOp> {
                                rec.seen.push_back({m[x].id(), m[c].id()});
                                return std::nullopt;
                              }));
  recorder rec2;
  UOp four = literal(a, 4), casted = cast(v, DType::int32);
  offer_all(alt, a.make(Ops::ADD, DType::weakint, {v, four}), rec2);  // CONST 4 fails the predicate, not a CAST
  CHECK(rec2.seen.empty());
  offer_all(alt, a.make(Ops::ADD, DType::int32, {casted, casted}), rec2);
  CHECK(rec2.seen.size() == 1);
}

TEST_CASE("names inside alternatives may stay unbound; repeats of alternatives backtrack") {
  Arena a;
  UOp v = range(a, 4, 0, AxisType::LOOP);
  auto rs = P::rules(P::rule(P::op<Ops::ADD>(x, P::any_of(P::cvar<"k">, P::op<Ops::RANGE>.as<"r">)),
                             [](recorder& rec, auto& m) -> std::optional<UOp> {
                               rec.seen.push_back({m.template has<"k">() ? 1u : 0u, m.template has<"r">() ? 1u : 0u});
                               return std::nullopt;
                             }));
  recorder rec;
  offer_all(rs, v + 1, rec);
  offer_all(rs, v + v, rec);
  std::vector<std::vector<node_id>> want = {{1, 0}, {0, 1}};
  CHECK(rec.seen == want);

  // every source a CONST or a RANGE, and the first source named "f" bound again by the last
  auto rep = P::rules(P::rule(P::op<Ops::STACK>.repeat(P::any_of(P::op<Ops::CONST>, P::op<Ops::RANGE>)),
                              [](auto& m) -> std::optional<UOp> { return with_tag(m.root(), Arg::string("hit")); }));
  P::no_context ctx;
  CHECK(rep.apply(stack(literal(a, 1), v, literal(a, 2)), ctx).rule == 0);
  CHECK(rep.apply(stack(literal(a, 1), v + 1), ctx).rule < 0);
}

TEST_CASE("alternatives that cannot match are no choice points; too many choice points is a clear error") {
  Arena a;
  std::vector<UOp> srcs;
  for (int i = 0; i < 300; ++i) srcs.push_back(literal(a, i));
  UOp big = a.make(Ops::STACK, DType::weakint, srcs);
  P::no_context ctx;
  // a CONST cannot be a RANGE: no choice point per source, the 300 sources match
  auto ops = P::rules(P::rule(P::op<Ops::STACK>.repeat(P::any_of(P::op<Ops::CONST>, P::op<Ops::RANGE>)),
                              [](auto& m) -> std::optional<UOp> { return with_tag(m.root(), Arg::string("hit")); }));
  CHECK(ops.apply(big, ctx).rule == 0);
  // a CONST can match either alternative: one choice point per source, more than the matcher holds
  auto rep = P::rules(P::rule(P::op<Ops::STACK>.repeat(P::any_of(P::op<Ops::CONST>, P::any)),
                              [](auto& m) -> std::optional<UOp> { return m.root(); }));
  try {
    (void)rep.apply(big, ctx);
    FAIL("expected an error");
  } catch (const uopcg::error& e) {
    CHECK(std::string(e.what()).find("choice points") != std::string::npos);
  }
}

TEST_CASE("a commutative pair whose swapped order fails its children's own tests is no choice point") {
  Arena a;
  UOp v = range(a, 4, 0, AxisType::LOOP);
  std::vector<UOp> muls;
  for (int i = 0; i < 300; ++i) muls.push_back(v * (i + 2));  // MUL(v, CONST): only one order is x * CONST
  UOp big = a.make(Ops::STACK, DType::weakint, muls);
  P::no_context ctx;
  // one order per pair: no choice points, where two orders each were 300 (more than the matcher holds)
  auto one = P::rules(P::rule(P::op<Ops::STACK>.repeat(x * P::op<Ops::CONST>),
                              [](auto& m) -> std::optional<UOp> { return with_tag(m.root(), Arg::string("hit")); }));
  CHECK(one.apply(big, ctx).rule == 0);
  // the bindings of a pair with one feasible order, nested under one with two: still in order
  UOp w = range(a, 4, 1, AxisType::LOOP);
  auto rs = P::rules(P::rule((x * c) + y, [](recorder& rec, auto& m) -> std::optional<UOp> {
    rec.seen.push_back({m[x].id(), m[c].id(), m[y].id()});
    return std::nullopt;
  }));
  recorder rec;
  offer_all(rs, v * 3 + w * 5, rec);
  std::vector<std::vector<node_id>> want = {{v.id(), literal(a, 3).id(), (w * 5).id()},
                                            {w.id(), literal(a, 5).id(), (v * 3).id()}};
  CHECK(rec.seen == want);
}

namespace {
// The matcher, the predicates and backtracking in constant evaluation.
constexpr bool constexpr_backtracking() {
  Arena a;
  UOp v = range(a, 4, 0, AxisType::LOOP), w = range(a, 4, 1, AxisType::LOOP);
  auto rs = P::rules(P::rule(P::op<Ops::MUL>(x, c.such_that(is_three)) + y, [](auto& m) { return m[x]; }),
                     P::rule((x + y) + z, [](auto& m) -> std::optional<UOp> {
                       if (m[z].op() != Ops::RANGE) return std::nullopt;
                       return m[z];
                     }));
  P::no_context ctx;
  bool ok = rs.apply(v * 5 + w * 3, ctx).result == w;
  ok = ok && rs.apply(v + (w + v), ctx).result == v;  // (x + y) + z: only the order with z a RANGE rewrites
  return ok;
}
static_assert(constexpr_backtracking());
}  // namespace

TEST_CASE("the shallow fast path and the matcher agree") {
  // the same rule as a shallow pattern and, wrapped in a one-alternative any_of, through the matcher
  Arena a;
  UOp v = range(a, 4, 0, AxisType::LOOP);
  auto pick = [](auto& m) -> std::optional<UOp> {
    if (m[c].arg().as_int() == 0) return m[x];
    return std::nullopt;
  };
  auto shallow = P::rules(P::rule(x + c, pick));
  auto deep = P::rules(P::rule(P::any_of(x + c), pick));
  static_assert(P::program_of<decltype(x + c)>.shallow_orders == 2);
  static_assert(P::program_of<decltype(P::any_of(x + c))>.shallow_orders == 0);
  P::no_context ctx;
  for (UOp e : {v + 0, a.make(Ops::ADD, DType::weakint, {literal(a, 0), v}), v + 1, v + v,
                a.make(Ops::ADD, DType::weakint, {literal(a, 0), literal(a, 0)})}) {
    P::applied s = shallow.apply(e, ctx), d = deep.apply(e, ctx);
    CHECK(s.rule == d.rule);
    CHECK(s.result == d.result);
  }
  // every node of a random graph, against rules with repeated names, predicates and three sources
  auto first = [](auto& m) -> std::optional<UOp> { return with_tag(m.root(), Arg::string("hit")); };
  auto s2 = P::rules(P::rule(P::op<Ops::MUL>.commutative(x, x), first), P::rule(x + c.such_that(is_three), first),
                     P::rule(P::op<Ops::WHERE>(x, y, y), first), P::rule(P::in<GroupOp::ALU>(c, y), first));
  auto d2 = P::rules(P::rule(P::any_of(P::op<Ops::MUL>.commutative(x, x)), first), P::rule(P::any_of(x + c.such_that(is_three)), first),
                     P::rule(P::any_of(P::op<Ops::WHERE>(x, y, y)), first), P::rule(P::any_of(P::in<GroupOp::ALU>(c, y)), first));
  std::vector<UOp> pool = {v, range(a, 8, 1, AxisType::LOOP), literal(a, 3), literal(a, 0)};
  random_alu grow{12345, 4};
  int matched = 0;
  for (int i = 0; i < 400; ++i) {
    UOp e = grow(a, pool);
    for (UOp n : {e, e.src(0)}) {
      P::applied s = s2.apply(n, ctx), d = d2.apply(n, ctx);
      CHECK(s.rule == d.rule);
      CHECK(s.result == d.result);
      matched += s.rule >= 0;
    }
  }
  CHECK(matched > 20);  // the comparison saw real matches (31 with this seed)
}

TEST_CASE("rule sets' shaped drivers and the generic driver agree, binding by binding") {
  // At run time a rule whose root has none, a list, a prefix or a pair of sources is tried by a
  // driver specialized on the rule's shape (rule_set.hpp); any_of(...) at the root takes the generic
  // driver and the matcher. Each rewriter returns a SINK of the root and its captures, so equal
  // results mean the same rule, the same binding and the same order of bindings.
  Arena a;
  UOp v = range(a, 4, 0, AxisType::LOOP);
  auto sink = [](auto& m, std::initializer_list<UOp> caps) {
    std::vector<UOp> srcs{m.root()};
    srcs.insert(srcs.end(), caps.begin(), caps.end());
    return m.arena().make(Ops::SINK, DType::void_, srcs);
  };
  // declines the first binding whose y is not a RANGE: the next order / binding must be offered
  auto nested = [&](auto& m) -> std::optional<UOp> {
    if (m[y].op() != Ops::RANGE && m[c].arg().as_int() != 3) return std::nullopt;
    return sink(m, {m[x], m[y], m[c]});
  };
  auto three = [&](auto& m) -> std::optional<UOp> { return sink(m, {m[x], m[y]}); };
  auto rooted = [&](auto& m) -> std::optional<UOp> { return sink(m, {m[x], m[c], m[P::var<"r">]}); };
  auto one = [&](auto& m) -> std::optional<UOp> { return sink(m, {m[x]}); };
  auto src_is_range = [](UOp u) { return u.src(0).op() == Ops::RANGE; };
  constexpr auto root_max = P::op<Ops::MAX>.named<"r">();
  constexpr auto weak_mul = P::op<Ops::MUL>.dtype<DType::weakint>();
  auto rnd_rules = [&](auto wrap) {
    return P::rules(P::rule(wrap(P::op<Ops::ADD>.commutative(x * c, y)), nested),          // pair, not shallow
                    P::rule(wrap(P::op<Ops::WHERE>(x < y, x, y)), three),                 // list, not shallow
                    P::rule(wrap(root_max.such_that(src_is_range)(x, c)), rooted),            // root capture, predicate
                    P::rule(wrap(P::op<Ops::CMPLT>(x, P::const_<3>)), one),               // an arg test
                    P::rule(wrap(P::op<Ops::ADD>.commutative(x, c.such_that(is_three))), one),  // a source predicate
                    P::rule(wrap(weak_mul.any_len(x)), one));                             // a prefix, a dtype test
  };
  auto shaped = rnd_rules([](auto p) { return p; });
  auto generic = rnd_rules([](auto p) { return P::any_of(p); });
  static_assert(P::detail::has_shape(P::program_of<decltype(P::op<Ops::ADD>.commutative(x * c, y))>.view()));
  static_assert(!P::detail::has_shape(P::program_of<decltype(P::any_of(x + c))>.view()));
  P::no_context ctx;
  std::vector<UOp> pool = {v, range(a, 8, 1, AxisType::LOOP), literal(a, 3), literal(a, 0)};
  random_alu grow{777, 5};
  int hits[6] = {};
  auto compare = [&](UOp n) {
    P::applied s = shaped.apply(n, ctx), g = generic.apply(n, ctx);
    CHECK(s.rule == g.rule);
    CHECK(s.result == g.result);
    if (s.rule >= 0) ++hits[s.rule];
  };
  UOp k3 = literal(a, 3);
  // nodes each rule matches (the random ones below meet some rules rarely), both source orders
  for (UOp n : {a.make(Ops::MAX, DType::weakint, {v, k3}), a.make(Ops::MAX, DType::weakint, {k3, v}), v + 3,
                a.make(Ops::ADD, DType::weakint, {k3, v}), (v * 2) + v, v + (v * 3), v < 3})
    compare(n);
  for (int i = 0; i < 600; ++i) {
    UOp e = grow(a, pool);
    for (UOp n : {e, e.src(0)}) compare(n);
  }
  for (int h : hits) CHECK(h > 0);  // every rule matched some node
}
