// graph_rewrite semantics, ported from tinygrad's test_graph_rewrite.py and
// test_rewrite_bottom_up_gate.py, plus termination, statistics and tracing.
#include <doctest/doctest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <uopcg/core/builder.hpp>
#include <uopcg/core/print.hpp>
#include <uopcg/pattern/pattern.hpp>

using namespace uopcg;
namespace P = uopcg::pat;

namespace {
constexpr auto x = P::var<"x">;
constexpr auto c1 = P::cvar<"c1">;
constexpr auto c2 = P::cvar<"c2">;

// constant folding of ADD/MUL over weakint constants
constexpr auto fold = P::rules(
    P::rule("fold add", c1 + c2, [](auto& m) {
      return literal(m.arena(), m[c1].arg().as_int() + m[c2].arg().as_int());
    }),
    P::rule("fold mul", c1 * c2, [](auto& m) {
      return literal(m.arena(), m[c1].arg().as_int() * m[c2].arg().as_int());
    }));

// records the order nodes are offered to a rule set
struct visit_log {
  std::vector<std::string> events;
};
std::string label(UOp u) {
  if (u.op() == Ops::CONST) return std::to_string(u.arg().as_int());
  return std::string(name(u.op()));
}
}  // namespace

TEST_CASE("constant folding bottom-up and top-down give the same result") {
  Arena a;
  UOp e = literal(a, 5) * literal(a, 3) + literal(a, 5) * literal(a, 7);
  UOp td = P::graph_rewrite(e, fold);
  P::rewrite_options bu;
  bu.bottom_up = true;
  UOp bt = P::graph_rewrite(e, fold, bu);
  CHECK(td == literal(a, 50));
  CHECK(bt == td);
}

TEST_CASE("a replacement is rewritten again (per-node fixpoint) and shared nodes once") {
  Arena a;
  UOp v = range(a, 8, 0, AxisType::LOOP);
  auto rs = P::rules(P::rule(x + 0, [](auto& m) { return m[x]; })) + fold;
  // (v + (2 + -2)) + 0: the inner fold yields v + 0, which must be simplified again
  UOp e = (v + (literal(a, 2) + literal(a, -2))) + 0;
  CHECK(P::graph_rewrite(e, rs) == v);
  P::rewrite_stats st;
  P::rewrite_options o;
  o.stats = &st;
  UOp shared = literal(a, 1) + literal(a, 2);
  P::graph_rewrite(shared * shared, rs, o);
  CHECK(st.matches[1] == 1);  // the shared ADD is folded once...
  CHECK(st.matches[2] == 1);  // ...then the MUL of the two (identical) results
  CHECK(st.rules.size() == 3);
  CHECK(st.rules[1].name == "fold add");
}

TEST_CASE("substitute: simple, diamond, inner subexpression, tags, order dependence") {
  Arena a;
  UOp va = range(a, 8, 0, AxisType::LOOP), vb = range(a, 8, 1, AxisType::LOOP);
  CHECK(substitute(va + 1, {{va, vb}}) == vb + 1);
  UOp diamond = (va + 4) + (va + 5);
  CHECK(substitute(diamond, {{va, vb}}) == (vb + 4) + (vb + 5));
  UOp s1 = sin(cast(va, DType::float32));
  UOp ss = sin(s1);
  CHECK(substitute(ss, {{s1, sqrt(cast(va, DType::float32))}}) == sin(sqrt(cast(va, DType::float32))));
  UOp tagged = with_tag(va + 4, Arg(7));
  CHECK(substitute(tagged, {{va, vb}}).tag().as_int() == 7);
  // {sin(a): sqrt(a), sin(sin(a)): sqrt(sin(a))} gives sqrt(sqrt(a)): the outer key wins first and
  // the inner sin(a) of its replacement is then replaced too
  UOp fa = cast(va, DType::float32);
  UOp got = substitute(sin(sin(fa)), {{sin(fa), sqrt(fa)}, {sin(sin(fa)), sqrt(sin(fa))}});
  CHECK(got == sqrt(sqrt(fa)));
}

TEST_CASE("a rule mapping a node to itself does not loop; 3->4 and 4->3 is reported") {
  Arena a;
  UOp p = param(a, 0, DType::float32, 4);
  auto same = P::rules(P::rule(P::op<Ops::PARAM>.as<"p">, [](auto& m) -> std::optional<UOp> { return m.root(); }));
  CHECK(P::graph_rewrite(p, same) == p);
  auto flip = P::rules(P::rule("3 to 4", P::const_<3>, [](auto& m) { return literal(m.arena(), 4); }),
                       P::rule("4 to 3", P::const_<4>, [](auto& m) { return literal(m.arena(), 3); }));
  CHECK_THROWS_WITH_AS(P::graph_rewrite(literal(a, 3), flip), doctest::Contains("does not terminate"), uopcg::error);
  try {
    P::graph_rewrite(literal(a, 3), flip);
  } catch (const uopcg::error& e) {
    std::string msg = e.what();
    CHECK(msg.find("3 to 4") != std::string::npos);
    CHECK(msg.find("4 to 3") != std::string::npos);
  }
  P::rewrite_options bu;
  bu.bottom_up = true;
  CHECK_THROWS_WITH_AS(P::graph_rewrite(literal(a, 3), flip, bu), doctest::Contains("does not terminate"), uopcg::error);
  // a rule set that grows forever hits the step limit and names its rule
  auto grow = P::rules(P::rule("grow", P::op<Ops::RANGE>.as<"r">, [](auto& m) {
    return range(m.arena(), m.root().src(0).arg().as_int() + 1, 0, AxisType::LOOP);
  }));
  P::rewrite_options lim;
  lim.max_rewrites = 100;
  lim.name = "growing";
  CHECK_THROWS_WITH_AS(P::graph_rewrite(range(a, 1, 0, AxisType::LOOP), grow, lim),
                       doctest::Contains("growing: more rewrites than max_rewrites"), uopcg::error);
  // a replacement that contains the node it replaces can never be final: both orders say so
  auto wrap = P::rules(P::rule("wrap", P::op<Ops::RANGE>.as<"r">, [](auto& m) { return m.root() + 1; }));
  for (bool ordered : {false, true}) {
    P::rewrite_options o;
    o.ordered = ordered;
    CHECK_THROWS_WITH_AS(P::graph_rewrite(range(a, 4, 0, AxisType::LOOP), wrap, o),
                         doctest::Contains("still being rewritten"), uopcg::error);
  }
  // walk mode applies 3->4 once and stops
  P::rewrite_options w;
  w.walk = true;
  CHECK(P::graph_rewrite(literal(a, 3), flip, w) == literal(a, 4));
}

TEST_CASE("visit orders: default, bottom-up, walk, and both rule sets") {
  Arena a;
  UOp e = literal(a, 1) + literal(a, 2);
  auto log_rule = [](const char* tagname) {
    return P::rules(P::rule(P::op<Ops::ADD, Ops::CONST>, [tagname](visit_log& ctx, auto& m) -> std::optional<UOp> {
      ctx.events.push_back(label(m.root()) + "," + tagname);
      return std::nullopt;
    }));
  };
  auto pm = log_rule("pm");
  auto bpm = log_rule("bpm");
  visit_log both;
  P::graph_rewrite(e, pm, bpm, both);
  CHECK(both.events == std::vector<std::string>{"ADD,bpm", "1,bpm", "1,pm", "2,bpm", "2,pm", "ADD,pm"});
  visit_log walk;
  P::rewrite_options wo;
  wo.walk = true;
  P::graph_rewrite(e, pm, walk, wo);
  CHECK(walk.events == std::vector<std::string>{"1,pm", "2,pm", "ADD,pm"});
  visit_log bwalk;
  wo.bottom_up = true;
  P::graph_rewrite(e, bpm, bwalk, wo);
  CHECK(bwalk.events == std::vector<std::string>{"ADD,bpm", "1,bpm", "2,bpm"});
}

TEST_CASE("walk: a matched parent's children are not visited; a bpm match skips pm") {
  Arena a;
  UOp e = literal(a, 1) + literal(a, 2);
  auto on_add = P::rules(P::rule(P::op<Ops::ADD>, [](visit_log& ctx, auto& m) {
    ctx.events.push_back("ADD");
    return literal(m.arena(), 9) + m.root().src(1);
  }));
  auto on_const = P::rules(P::rule(P::op<Ops::CONST>, [](visit_log& ctx, auto& m) -> std::optional<UOp> {
    ctx.events.push_back(label(m.root()));
    return std::nullopt;
  }));
  visit_log log;
  P::rewrite_options wo;
  wo.walk = true;
  wo.bottom_up = true;
  UOp out = P::graph_rewrite(e, on_add, log, wo);
  CHECK(log.events == std::vector<std::string>{"ADD"});
  CHECK(out == literal(a, 9) + literal(a, 2));
  visit_log both;
  P::rewrite_options w2;
  w2.walk = true;
  P::graph_rewrite(e, on_const, on_add, both, w2);  // pm = on_const, bpm = on_add
  CHECK(both.events == std::vector<std::string>{"ADD"});
}

TEST_CASE("bottom-up gate stops the descent") {
  Arena a;
  UOp va = range(a, 8, 0, AxisType::LOOP);
  // a gate on ADD: the MUL below must never be offered
  auto rs = P::rules(P::rule(P::op<Ops::ADD>, [](visit_log& ctx, auto& m) {
                       ctx.events.push_back("ADD");
                       return P::gated{m.root()};
                     }),
                     P::rule(P::op<Ops::MUL>, [](visit_log& ctx, auto& m) -> std::optional<UOp> {
                       ctx.events.push_back("MUL");
                       return m.root();
                     }));
  P::rewrite_options bu;
  bu.bottom_up = true;
  visit_log log;
  UOp e = (va * 3) + 1;
  CHECK(P::graph_rewrite(e, rs, log, bu) == e);
  CHECK(log.events == std::vector<std::string>{"ADD"});
  // a rewrite to 2*a followed by a gate on the MUL never visits the CONST
  auto rs2 = P::rules(P::rule(P::op<Ops::ADD>(x, x), [](visit_log& ctx, auto& m) {
                        ctx.events.push_back("ADD");
                        return m[x] * 2;
                      }),
                      P::rule(P::op<Ops::MUL>, [](visit_log& ctx, auto& m) {
                        ctx.events.push_back("MUL");
                        return P::gated{m.root()};
                      }),
                      P::rule(P::op<Ops::CONST>, [](visit_log& ctx, auto&) -> std::optional<UOp> {
                        ctx.events.push_back("CONST");
                        return std::nullopt;
                      }));
  visit_log log2;
  CHECK(P::graph_rewrite(a.make(Ops::ADD, DType::weakint, {va, va}), rs2, log2, bu) == va * 2);
  CHECK(log2.events == std::vector<std::string>{"ADD", "MUL"});
}

TEST_CASE("trace hook sees every rewrite with its rule") {
  Arena a;
  struct trace_log {
    std::vector<std::string> lines;
  } log;
  P::rewrite_options o;
  o.name = "fold pass";
  o.trace_user = &log;
  o.trace = [](void* user, std::string_view pass, UOp before, UOp after, const P::rule_info& r) {
    static_cast<trace_log*>(user)->lines.push_back(std::string(pass) + ": " + to_string(before) + " -> " +
                                                   std::to_string(after.arg().as_int()) + " by " + r.label().str());
  };
  P::graph_rewrite(literal(a, 2) * literal(a, 3) + literal(a, 1), fold, o);
  REQUIRE(log.lines.size() == 2);
  CHECK(log.lines[0].find("fold pass: ") == 0);
  CHECK(log.lines[0].find("-> 6 by fold mul") != std::string::npos);
  CHECK(log.lines[1].find("-> 7 by fold add") != std::string::npos);
}

TEST_CASE("rule sets compose and can be inspected") {
  auto a = P::rules(P::rule(x + 0, [](auto& m) { return m[x]; }));
  auto b = P::rules(P::rule(x * 1, [](auto& m) { return m[x]; }), P::rule(P::op<Ops::RANGE, Ops::SPECIAL>, [](auto& m) -> std::optional<UOp> { return m.root(); }));
  auto ab = a + b;
  static_assert(decltype(ab)::size == 3);
  CHECK(decltype(ab)::ops(0) == OpSet{Ops::ADD});
  CHECK(decltype(ab)::ops(2) == (OpSet{Ops::RANGE, Ops::SPECIAL}));
  CHECK(decltype(ab)::count_for(Ops::ADD) == 1);
  CHECK(decltype(ab)::count_for(Ops::RANGE) == 1);
  CHECK(decltype(ab)::count_for(Ops::LOAD) == 0);
  CHECK(decltype(ab)::required_child_ops(0) == OpSet{Ops::CONST});
  CHECK(ab.info(1).label().str().find("test_rewrite.cpp:") == 0);
  CHECK(fold.info(0).label() == "fold add");
}

TEST_CASE("two objects of one rule set type each rewrite with their own rules' numbers") {
  // the engine finds each rule in the object it is given (not at an offset per set type): a set
  // built twice from run-time numbers is one type holding different values; 5 rules or more are
  // stored as bases, fewer as members, so both layouts are checked
  auto small = [](int k) { return P::rules(P::rule(x + k, [](auto& m) { return m[x]; })); };
  auto large = [](int k) {
    auto keep = [](auto& m) { return m[x]; };
    return P::rules(P::rule(x * (k + 10), keep), P::rule(x * (k + 20), keep), P::rule(x * (k + 30), keep),
                    P::rule(x * (k + 40), keep), P::rule(x + k, keep));
  };
  const auto s1 = small(1), s2 = small(2);
  const auto l1 = large(1), l2 = large(2);
  static_assert(std::is_same_v<decltype(s1), decltype(s2)> && std::is_same_v<decltype(l1), decltype(l2)>);
  Arena a;
  UOp v = range(a, 8, 0, AxisType::LOOP);
  UOp plus1 = v + 1, plus2 = v + 2;
  CHECK(P::graph_rewrite(plus1, s1) == v);
  CHECK(P::graph_rewrite(plus2, s1) == plus2);
  CHECK(P::graph_rewrite(plus2, s2) == v);
  CHECK(P::graph_rewrite(plus1, s2) == plus1);
  CHECK(P::graph_rewrite(plus1, l1) == v);
  CHECK(P::graph_rewrite(plus2, l2) == v);
  CHECK(P::graph_rewrite(plus2, l1) == plus2);
  CHECK(P::graph_rewrite(v * 32, l2) == v);
  CHECK(P::graph_rewrite(v * 31, l2) == v * 31);
  CHECK(P::graph_rewrite(v * 31, l1) == v);
  P::no_context ctx;
  CHECK(l2.apply(v * 12, ctx).rule == 0);
  CHECK(l1.apply(v * 12, ctx).rule == -1);
}

TEST_CASE("the early reject on child ops never rejects a node the rule matches (ops 64 and up share bits)") {
  // an op set of 64 bits gives CONTIGUOUS_BACKWARD (65) and SPECIAL (1) one bit: whatever the early
  // reject does with that, a CONTIGUOUS_BACKWARD source must reach the rule and a SPECIAL one must
  // not be rewritten
  static_assert(static_cast<int>(Ops::CONTIGUOUS_BACKWARD) == static_cast<int>(Ops::SPECIAL) + 64);
  Arena a;
  auto rs = P::rules(P::rule(P::op<Ops::SINK>(P::op<Ops::CONTIGUOUS_BACKWARD>.as<"c">), [](auto& m) -> std::optional<UOp> {
    return m.arena().make(Ops::SINK, DType::void_, {P::get<"c">(m).src(0)});
  }));
  CHECK(decltype(rs)::required_child_ops(0) == OpSet{Ops::CONTIGUOUS_BACKWARD});
  UOp v = literal(a, 2.5f);
  UOp cb = a.make(Ops::CONTIGUOUS_BACKWARD, DType::float32, {v});
  UOp hit = a.make(Ops::SINK, DType::void_, {cb});
  CHECK(P::graph_rewrite(hit, rs) == a.make(Ops::SINK, DType::void_, {v}));
  UOp sp = a.make(Ops::SPECIAL, DType::int32, {literal(a, 4)}, Arg::string("gidx0"));
  UOp miss = a.make(Ops::SINK, DType::void_, {sp});
  P::rewrite_stats stats;
  P::rewrite_options o;
  o.stats = &stats;
  CHECK(P::graph_rewrite(miss, rs, o) == miss);
  CHECK(stats.matches[0] == 0);
  // a source with neither op is rejected by the table alone
  P::rewrite_stats none;
  o.stats = &none;
  CHECK(P::graph_rewrite(a.make(Ops::SINK, DType::void_, {v}), rs, o) == a.make(Ops::SINK, DType::void_, {v}));
  CHECK(none.attempts[0] == 0);
}

TEST_CASE("a total rule returning no node is an error naming the rule and node") {
  Arena a;
  auto bad = P::rules(P::rule("bad rule", P::op<Ops::RANGE>, [](auto&) { return UOp(); }));
  CHECK_THROWS_WITH_AS(P::graph_rewrite(range(a, 4, 0, AxisType::LOOP), bad), doctest::Contains("rule bad rule returned no node for node 1 (RANGE"), uopcg::error);
}

TEST_CASE("a rule returning an invalid node in an optional is an error naming the rule and node") {
  Arena a;
  auto bad = P::rules(P::rule("empty optional node", P::op<Ops::RANGE>, [](auto&) { return std::optional<UOp>(UOp()); }));
  CHECK_THROWS_WITH_AS(P::graph_rewrite(range(a, 4, 0, AxisType::LOOP), bad), doctest::Contains("rule empty optional node returned no node for node 1 (RANGE"),
                       uopcg::error);
}

// The rewrites read each rule's numbers from the set, and the rule object only for the rules that
// need it (a rewriter with state, predicates): every kind, at every position, in both pack layouts
// (up to four rules: members; more: one base per rule), and after `+`.
TEST_CASE("rules with state, predicates and run-time numbers each read their own") {
  Arena a;
  UOp r = range(a, 64, 0, AxisType::LOOP);
  int k = 100, lim = 3;  // not constants: the lambdas capture them (state)
  auto stateless_num = P::rule(x + 1, [](auto& m) { return m[x] * 11; });                // numbers, no object
  auto stateful = P::rule(x * 2, [k](auto& m) { return m[x] + k; });                     // object
  auto pred = P::rule(P::op<Ops::MAX>(x, c1).such_that([lim](UOp u) { return u.src(1).arg().as_int() > lim; }),
                      [](auto& m) { return m[c1]; });                                    // object (predicate)
  auto stateless_num2 = P::rule(x ^ 7, [](auto& m) { return m[x] * 13; });               // numbers after others
  auto both = P::rule(x - 5, [k](auto& m) { return m[x] * (k + 1); });                   // numbers and object
  auto plain = P::rule(P::op<Ops::MUL>(x, x), [](auto& m) { return m[x]; });             // neither
  auto check = [&](const auto& rs, bool all) {
    CHECK(P::graph_rewrite(r + 1, rs) == r * 11);
    CHECK(P::graph_rewrite(r * 2, rs) == r + 100);
    CHECK(P::graph_rewrite(maximum(r, literal(a, 9)), rs) == literal(a, 9));
    CHECK(P::graph_rewrite(maximum(r, literal(a, 2)), rs) == maximum(r, literal(a, 2)));  // the predicate declines
    CHECK(P::graph_rewrite(r ^ 7, rs) == r * 13);
    CHECK(P::graph_rewrite(r ^ 6, rs) == (r ^ 6));  // another number: no match
    if (all) {
      CHECK(P::graph_rewrite(r - 5, rs) == r * 101);
      CHECK(P::graph_rewrite(r * r, rs) == r);
    }
  };
  check(P::rules(stateless_num, stateful, pred, stateless_num2), false);
  check(P::rules(stateless_num, stateful, pred, stateless_num2, both, plain), true);
  check(P::rules(plain, both, stateless_num2, pred, stateful, stateless_num), true);
  check(P::rules(stateless_num, stateful) + P::rules(pred, stateless_num2, both, plain), true);
  check(P::rules(both, stateless_num2, plain) + P::rules(pred) + P::rules(stateful, stateless_num), true);
  // the rule alone, as a set of one, agrees
  P::no_context ctx;
  const P::applied out = P::rules(both).apply(r - 5, ctx);
  CHECK(out.rule == 0);
  CHECK(out.result == r * 101);
}

TEST_CASE("subgraphs without a node the rules can match are not walked, and the result is the same") {
  Arena a;
  UOp r = range(a, 8, 0, AxisType::LOOP);
  UOp math = (r + 1) * (r + 2);                     // ADD, MUL, RANGE, CONST
  UOp buf = a.make(Ops::PARAM, DType::float32, {}, Arg());
  UOp st = a.make(Ops::STORE, DType::void_, {a.make(Ops::INDEX, DType::float32, {buf, math}), literal(a, 1.5f)});
  UOp sink = a.make(Ops::SINK, DType::void_, {st});
  // rules on STORE only: the index math below it holds none, so only SINK and STORE are offered
  std::vector<std::string> seen;
  auto on_store = P::rules(P::rule(P::op<Ops::STORE, Ops::SINK>, [](std::vector<std::string>& ctx, auto& m) -> std::optional<UOp> {
    ctx.push_back(label(m.root()));
    return std::nullopt;
  }));
  P::rewrite_stats stats;
  P::rewrite_options o;
  o.stats = &stats;
  CHECK(P::graph_rewrite(sink, on_store, seen, o) == sink);
  CHECK(seen == std::vector<std::string>{"STORE", "SINK"});
  CHECK(stats.visits == 2);
  for (bool bottom_up : {false, true})
    for (bool walk : {false, true}) {
      P::rewrite_stats s;
      P::rewrite_options ob;
      ob.bottom_up = bottom_up;
      ob.walk = walk;
      ob.stats = &s;
      std::vector<std::string> log;
      CHECK(P::graph_rewrite(sink, on_store, log, ob) == sink);
      CHECK(s.visits == 2);
    }
  // a rule that matches deep inside: everything above the match is rebuilt as before
  auto fold_mul = P::rules(P::rule(P::op<Ops::MUL>, [](auto& m) { return m.root().src(0); }));
  UOp out = P::graph_rewrite(sink, fold_mul);
  CHECK(out.src(0).src(0).src(1) == r + 1);
  CHECK(out.src(0).src(1) == st.src(1));
}

TEST_CASE("a node pushed by an ancestor is not pushed again: its dependants wait (tinygrad's order)") {
  // e = (((l*308 + 1) max 10) + ((l*308 + 2) max 20)) * 3 + l. The outer ADD pushes l before the
  // left side, so every user of l*308 waits until l is popped; then l*308's waiters resume newest
  // first, and the second MAX is offered to the rules before the first. A context rule that
  // numbers nodes (tinygrad's accumulators) numbers them in that order.
  Arena a;
  UOp l = range(a, 8, 0, AxisType::LOOP);
  UOp b = l * 308;
  UOp r1 = maximum(b + 1, literal(a, 10)), r2 = maximum(b + 2, literal(a, 20));
  UOp e = (r1 + r2) * 3 + l;
  auto on_max = P::rules(P::rule(P::op<Ops::MAX>, [](visit_log& ctx, auto& m) -> std::optional<UOp> {
    ctx.events.push_back(std::to_string(m.root().src(1).arg().as_int()));
    return std::nullopt;
  }));
  visit_log log;
  P::rewrite_options o;
  o.ordered = true;  // l*308 has no MAX: skipped otherwise, it would not wait for l
  CHECK(P::graph_rewrite(e, on_max, log, o) == e);
  CHECK(log.events == std::vector<std::string>{"20", "10"});
  // without the shared pending node, plain children-first order
  visit_log tree;
  UOp t = maximum(literal(a, 1) + 1, literal(a, 10)) + maximum(literal(a, 2) + 2, literal(a, 20));
  P::graph_rewrite(t, on_max, tree, o);
  CHECK(tree.events == std::vector<std::string>{"10", "20"});
}

TEST_CASE("the default mode gives tinygrad's results in its own order, replacements reaching nodes not offered yet") {
  // The default mode offers a graph's nodes in id order, ordered=true in tinygrad's depth-first
  // order; a node's result does not depend on the order, so both give the same graph. The rules
  // fold, drop identities and swap a MUL's operands into id order: a swapped MUL may be a node of
  // the graph that is not offered yet (its id is higher), and is then rewritten through the
  // replacement's walk, before its turn.
  auto rs = P::rules(
      P::rule("fold add", c1 + c2, [](auto& m) { return literal(m.arena(), m[c1].arg().as_int() + m[c2].arg().as_int()); }),
      P::rule("x+0", x + P::const_<0>, [](auto& m) { return m[x]; }),
      P::rule("x*1", x * P::const_<1>, [](auto& m) { return m[x]; }),
      P::rule("swap", P::op<Ops::MUL>(P::var<"a">, P::var<"b">), [](auto& m) -> std::optional<UOp> {
        UOp l = m[P::var<"a">], r = m[P::var<"b">];
        if (l.id() <= r.id()) return std::nullopt;
        return r * l;
      }));
  std::uint64_t seed = 12345;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(seed >> 33);
  };
  for (int trial = 0; trial < 20; ++trial) {
    Arena a;
    std::vector<UOp> pool;
    for (int i = 0; i < 4; ++i) pool.push_back(range(a, 8 + i, i, AxisType::LOOP));
    for (int i = 0; i < 3; ++i) pool.push_back(literal(a, i));
    for (int i = 0; i < 300; ++i) {
      UOp l = pool[pool.size() - 1 - next() % std::min<std::size_t>(pool.size(), 12)];
      UOp r = pool[next() % pool.size()];
      // both operand orders of some products, so that a swap lands on a node of the graph
      if (next() % 3 == 0 && l.op() != Ops::CONST && r.op() != Ops::CONST) {
        pool.push_back(r * l);
        pool.push_back(l * r);
      } else {
        pool.push_back(next() % 2 ? l + r : l * r);
      }
    }
    std::vector<UOp> tips(pool.end() - 40, pool.end());
    UOp sink = a.make(Ops::SINK, DType::void_, tips);
    P::rewrite_stats sd, so;
    P::rewrite_options d, o;
    d.stats = &sd;
    o.stats = &so;
    o.ordered = true;
    UOp by_id = P::graph_rewrite(sink, rs, d);
    UOp tinygrad = P::graph_rewrite(sink, rs, o);
    CHECK(by_id == tinygrad);
    CHECK(sd.matches == so.matches);  // (ordered also visits the nodes no rule can match)
    CHECK(P::graph_rewrite(by_id, rs) == by_id);  // a fixpoint
  }
  // the swap's result is a node of the graph with a higher id: offered once, through the walk of
  // the replacement, and skipped when the scan reaches it
  Arena a;
  UOp r0 = range(a, 4, 0, AxisType::LOOP), r1 = range(a, 4, 1, AxisType::LOOP);
  UOp swapped = r1 * r0;  // r1's id is higher: swapped into r0*r1 ...
  UOp target = r0 * r1;   // ... which is made after it
  REQUIRE(swapped.id() < target.id());
  UOp sink = a.make(Ops::SINK, DType::void_, {swapped, target});
  std::vector<std::string> offered;
  P::rewrite_stats st;
  P::rewrite_options tr;
  tr.stats = &st;
  tr.trace_user = &offered;
  tr.trace = [](void* user, std::string_view, UOp before, UOp after, const P::rule_info& info) {
    static_cast<std::vector<std::string>*>(user)->push_back(std::string(info.label().view()) + ":" +
                                                           std::to_string(before.id()) + "->" + std::to_string(after.id()));
  };
  CHECK(P::graph_rewrite(sink, rs, tr) == a.make(Ops::SINK, DType::void_, {target, target}));
  CHECK(offered == std::vector<std::string>{"swap:" + std::to_string(swapped.id()) + "->" + std::to_string(target.id())});
  CHECK(st.visits == 3);  // swapped, target (once), the SINK
}

TEST_CASE("the default mode's scan: a rewrite's results are not seen by the next rewrite of the same nodes") {
  // the scan writes the memo of most nodes without noting them (the whole id range is emptied
  // when the memo is lent again): a second rewrite must still offer every node
  auto none = P::rules(P::rule(P::op<Ops::ADD>(x, P::const_<1>), [](auto&) -> std::optional<UOp> { return std::nullopt; }));
  auto fold = P::rules(P::rule(P::op<Ops::ADD>(x, P::const_<1>), [](auto& m) -> std::optional<UOp> { return m[x] * 2; }));
  Arena a;
  UOp g = range(a, 8, 0, AxisType::LOOP);
  for (int i = 0; i < 100; ++i) g = (g + 1) + literal(a, 3 + i);  // a graph over several bitmap words
  P::rewrite_stats st;
  P::rewrite_options o;
  o.stats = &st;
  CHECK(P::graph_rewrite(g, none, o) == g);
  const std::uint64_t visits = st.visits;
  CHECK(visits >= 200);
  UOp folded = P::graph_rewrite(g, fold);
  CHECK(folded != g);
  std::size_t muls = 0;
  for (UOp u : toposort(folded)) muls += u.op() == Ops::MUL;
  CHECK(muls == 100);  // every x + 1 became x * 2
  P::rewrite_stats again;
  o.stats = &again;
  CHECK(P::graph_rewrite(g, none, o) == g);
  CHECK(again.visits == visits);
}

TEST_CASE("the default mode's scan: sparse graphs go depth-first, and a rule that throws leaves no marks behind") {
  // sink(hi, lo): the scan offers nodes in id order (lo's graph first), the depth-first loop in
  // source order (hi's first). Over nodes spread thinly across a large arena, the scan gives up
  // and the depth-first loop runs.
  auto logged = P::rules(P::rule(P::op<Ops::ADD>, [](visit_log& ctx, auto& m) -> std::optional<UOp> {
    ctx.events.push_back(std::to_string(m.root().src(1).arg().as_int()));
    return std::nullopt;
  }));
  Arena a;
  UOp r = range(a, 8, 0, AxisType::LOOP);
  UOp lo = r + literal(a, 100);
  UOp hi = r + literal(a, 200);
  UOp beside = a.make(Ops::SINK, DType::void_, {r + literal(a, 50)});  // in the same bitmap word
  visit_log dense;
  P::graph_rewrite(a.make(Ops::SINK, DType::void_, {hi, lo}), logged, dense);
  CHECK(dense.events == std::vector<std::string>{"100", "200"});
  for (int i = 0; i < 20000; ++i) literal(a, 1000 + i);
  UOp lo2 = lo + literal(a, 300), hi2 = hi + literal(a, 400);  // over nodes 20k ids below
  visit_log sparse;
  P::graph_rewrite(a.make(Ops::SINK, DType::void_, {hi2, lo2}), logged, sparse);
  CHECK(sparse.events == std::vector<std::string>{"200", "400", "100", "300"});
  // the pass that gave up had marked lo and hi, 20k ids below where it stopped: it cleared them,
  // so the next scan over their bitmap word offers its own graph only
  visit_log after;
  P::graph_rewrite(beside, logged, after);
  CHECK(after.events == std::vector<std::string>{"50"});

  // the bitmap of a scan that a rule's exception interrupted is not lent again: the next scan
  // offers its own graph's nodes only
  auto throwing = P::rules(P::rule(P::op<Ops::ADD>, [](visit_log& ctx, auto& m) -> std::optional<UOp> {
    if (m.root().src(1).arg().as_int() == 7) throw std::runtime_error("rule failed");
    ctx.events.push_back(std::to_string(m.root().src(1).arg().as_int()));
    return std::nullopt;
  }));
  Arena b;
  UOp rb = range(b, 8, 0, AxisType::LOOP);
  UOp inner = rb + literal(b, 7);
  for (int i = 0; i < 100; ++i) literal(b, 1000 + i);  // the next nodes in other bitmap words
  UOp bad = inner + literal(b, 8);
  visit_log first;
  CHECK_THROWS_AS(P::graph_rewrite(b.make(Ops::SINK, DType::void_, {bad}), throwing, first), std::runtime_error);
  for (int i = 0; i < 100; ++i) literal(b, 2000 + i);
  UOp good = rb + literal(b, 9);  // a graph whose ids span the first one's
  visit_log second;
  P::rewrite_stats st;
  P::rewrite_options o;
  o.stats = &st;
  P::graph_rewrite(b.make(Ops::SINK, DType::void_, {good}), throwing, second, o);
  CHECK(second.events == std::vector<std::string>{"9"});
  CHECK(st.visits == 2);  // the ADD and the SINK
}
