// Graph-level tests of the statement / memory rules of sym (statements.hpp), pm_simplify_valid's
// AND-chain rule, indexing_simplify and the symbolic stage entry points.
#include <doctest/doctest.h>

#include <limits>

#include <uopcg/codegen/symbolic_stages.hpp>
#include <uopcg/core/builder.hpp>
#include <uopcg/symbolic/indexing.hpp>

#include "sym_helpers.hpp"

using namespace uopcg;
namespace S = uopcg::symbolic;

namespace {
UOp rw_sym(UOp u) { return pat::graph_rewrite(u, S::sym); }
struct Fixture {
  Arena a;
  UOp buf = param(a, 0, DType::float32, 64);
  UOp r = range(a, 16, 0, AxisType::LOOP);
  UOp idx = index(buf, r);
};
}  // namespace

TEST_CASE("store of what the address holds is a NOOP and leaves the SINK") {
  Fixture f;
  UOp st = store(f.idx, load(f.idx));
  UOp other = store(index(f.buf, f.r + 16), load(f.idx));
  UOp s = rw_sym(sink(st, other));
  REQUIRE(s.op() == Ops::SINK);
  CHECK(s.nsrc() == 1);
  CHECK(s.src(0) == other);
}

TEST_CASE("a deleted store keeps the effects its address is ordered after") {
  // an accumulator whose loop adds nothing: acc = init; for r: acc[0] = acc[0]; out = acc[0].
  // The loop's store goes, the initial store must stay before the read after the loop
  Fixture f;
  UOp acc = buffer(f.a, 0, DType::float32, 1, AddrSpace::REG);
  UOp init = store(index(acc, literal(f.a, 0)), literal(f.a, 2.0f));
  UOp in_loop = index(after(acc, init, f.r), literal(f.a, 0));
  UOp loop = end(store(in_loop, load(in_loop)), f.r);
  UOp s = rw_sym(sink(store(index(f.buf, literal(f.a, 0)), load(index(after(acc, loop), literal(f.a, 0))))));
  bool init_kept = false;
  for (UOp u : toposort(s)) init_kept = init_kept || u == init;
  CHECK(init_kept);
  // with nothing to keep, the store is a NOOP (previous case)
  CHECK(S::detail::dropped_store(store(f.idx, load(f.idx))).op() == Ops::NOOP);
  CHECK(S::detail::dropped_store(store(in_loop, load(in_loop))) == init);
}

TEST_CASE("store of where(g, a, load(i)) becomes a gated store; stores of Invalid disappear") {
  Fixture f;
  UOp g = S::lt(f.r, literal(f.a, 8));
  UOp v = literal(f.a, 2.0f);
  UOp st = rw_sym(store(f.idx, where(g, cast(v, DType::float32), load(f.idx))));
  REQUIRE(st.op() == Ops::STORE);
  REQUIRE(st.src(0).op() == Ops::INDEX);
  CHECK(st.src(0).src(1) == valid(f.r, g));
  UOp st2 = rw_sym(store(f.idx, where(g, load(index(f.buf, f.r + 16)), invalid(f.a))));
  REQUIRE(st2.op() == Ops::STORE);
  CHECK(st2.src(0).src(1) == valid(f.r, g));
  CHECK(rw_sym(store(f.idx, invalid(f.a))).op() == Ops::NOOP);
}

TEST_CASE("loads and stores at an Invalid address fold (symbolic_simple)") {
  Fixture f;
  UOp bad = index(f.buf, invalid(f.a));
  CHECK(pat::graph_rewrite(store(bad, load(f.idx)), S::symbolic_simple).op() == Ops::NOOP);
  UOp ld = pat::graph_rewrite(load(bad), S::symbolic_simple);
  REQUIRE(ld.op() == Ops::CONST);
  CHECK(ld.dtype() == DType::float32);
  CHECK(ld.arg().as_float() == 0.0);
}

TEST_CASE("AFTER keeps only side-effect dependencies; AFTER/END of one source vanish") {
  Fixture f;
  UOp acc = param(f.a, 1, DType::float32, 1, AddrSpace::REG);
  UOp st = store(index(acc, literal(f.a, 0)), literal(f.a, 0.0f));
  UOp lid = special(f.a, 4, "lidx0");
  UOp aft = after(acc, st, lid + 1);
  UOp out = pat::graph_rewrite(aft, S::symbolic);
  REQUIRE(out.op() == Ops::AFTER);
  REQUIRE(out.nsrc() == 2);  // lid + 1 -> lid, const 1 dropped -> lid (SPECIAL) -> bound const dropped
  CHECK(out.src(1) == st);
  CHECK(pat::graph_rewrite(after(acc, lid), S::symbolic) == acc);
  CHECK(pat::graph_rewrite(f.a.make(Ops::END, DType::void_, {st}), S::symbolic) == st);
}

TEST_CASE("GROUP/SINK cleanup flattens nested groups, sinks and NOOPs") {
  Fixture f;
  UOp s1 = store(f.idx, literal(f.a, 1.0f));
  UOp s2 = store(index(f.buf, f.r + 16), literal(f.a, 2.0f));
  CHECK(pat::graph_rewrite(group(s1), S::pm_clean_up_group_sink) == s1);
  UOp noop = f.a.make(Ops::NOOP, DType::void_, {});
  UOp s = pat::graph_rewrite(sink(group(s1, s2), noop), S::pm_clean_up_group_sink);
  REQUIRE(s.op() == Ops::SINK);
  CHECK(s.nsrc() == 2);
  CHECK(s.src(0) == s1);
  CHECK(s.src(1) == s2);
}

TEST_CASE("constant and loop-invariant factors leave a REDUCE") {
  Fixture f;
  UOp x = load(f.idx);
  UOp y = load(index(param(f.a, 2, DType::float32, 4), literal(f.a, 1)));
  UOp rc = rw_sym(reduce(x * cast(literal(f.a, 3.0), DType::float32), Ops::ADD, f.r));
  REQUIRE(rc.op() == Ops::MUL);
  CHECK(rc.src(0) == reduce(x, Ops::ADD, f.r));
  UOp rm = rw_sym(reduce(x * y, Ops::ADD, f.r));
  REQUIRE(rm.op() == Ops::MUL);
  CHECK(rm.src(0) == reduce(x, Ops::ADD, f.r));
  CHECK(rm.src(1) == y);
  // MAX moves only factors known non-negative: a float load is not
  UOp mx = reduce(x * y, Ops::MAX, f.r);
  CHECK(rw_sym(mx) == mx);
}

TEST_CASE("a positive float constant leaves a MAX reduce, zero and negative ones stay") {
  // as tinygrad's reduce_mul_chain does with a float constant's bounds (its value); a half sum
  // over a range the value does not depend on becomes sum*3 inside a MAX (astfz16.s5.025 from the AST)
  Fixture f;
  UOp x = load(f.idx);
  UOp three = const_(f.a, DType::float32, Arg::floating(3.0));
  UOp moved = rw_sym(reduce(x * three, Ops::MAX, f.r));
  REQUIRE(moved.op() == Ops::MUL);
  CHECK(moved.src(0) == reduce(x, Ops::MAX, f.r));
  CHECK(moved.src(1) == three);
  for (double c : {0.0, -2.0, std::numeric_limits<double>::infinity()}) {
    UOp kept = reduce(x * const_(f.a, DType::float32, Arg::floating(c)), Ops::MAX, f.r);
    CHECK(rw_sym(kept).op() == Ops::REDUCE);
  }
}

TEST_CASE("binary op of single-lane stacks reorders") {
  Arena a;
  UOp x = symtest::var(a, "x", 0, 9), y = symtest::var(a, "y", 0, 9);
  UOp out = pat::graph_rewrite(stack(x) + stack(y), S::sym_stack_reorder);
  REQUIRE(out.op() == Ops::STACK);
  CHECK(out.nsrc() == 1);
  CHECK(out.src(0).op() == Ops::ADD);
  // two lanes: left alone (tinygrad would drop lanes, see docs/symbolic.md)
  UOp two = stack(x, x) + stack(y, y);
  CHECK(pat::graph_rewrite(two, S::sym_stack_reorder) == two);
}

TEST_CASE("reciprocal rewrites keep the dtype and decline non-finite constants") {
  Arena a;
  UOp x = load(index(param(a, 0, DType::float32, 4), literal(a, 0)));
  UOp r = pat::graph_rewrite(reciprocal(x * x), S::sym_reciprocal);
  CHECK(r == reciprocal(x) * reciprocal(x));
  UOp c = const_(a, DType::float32, Arg::floating(1e-45));  // 1/c overflows
  UOp keep = reciprocal(x * c);
  CHECK(pat::graph_rewrite(keep, S::sym_reciprocal) == keep);
  UOp one = pat::graph_rewrite(x * reciprocal(const_(a, DType::float32, Arg::floating(1.0)) + x), S::sym_reciprocal_sums);
  CHECK(one.op() == Ops::ADD);
  CHECK(one.dtype() == DType::float32);
}

TEST_CASE("simplify_valid puts bounding clauses first and simplifies the others") {
  Arena a;
  UOp x = symtest::var(a, "x", 0, 100);
  // ((x%16) < 10) & (x < 8): x < 8 goes first (x occurs in both); given it, x%16 < 10 always holds
  UOp v = S::lt(floormod(x, literal(a, 16)), literal(a, 10)) & S::lt(x, literal(a, 8));
  UOp out = pat::graph_rewrite(v, S::sym);
  CHECK(S::render(out) == "(x<8)");
  // a plain chain with nothing to learn is left alone
  UOp y = symtest::var(a, "y", 0, 100);
  UOp w = S::lt(x, literal(a, 8)) & S::lt(y, literal(a, 8));
  CHECK(S::simplify_valid(w, S::symbolic) == std::nullopt);
}

TEST_CASE("indexing_simplify simplifies a gated index given its condition") {
  Arena a;
  UOp buf = param(a, 0, DType::float32, 64);
  UOp x = symtest::var(a, "x", 0, 100);
  UOp cond = S::lt(x, literal(a, 16));
  UOp idx = index(buf, valid(floormod(x, literal(a, 16)), cond));
  UOp out = pat::graph_rewrite(idx, S::indexing_simplify);
  REQUIRE(out.op() == Ops::INDEX);
  CHECK(out.src(1) == valid(x, cond));
  // nothing the condition adds: unchanged
  UOp idx2 = index(buf, valid(x + 1, cond));
  CHECK(pat::graph_rewrite(idx2, S::indexing_simplify) == idx2);
}

TEST_CASE("stage entry points run their sets") {
  Fixture f;
  Target t;
  UOp st = store(f.idx, load(f.idx));
  UOp keep = store(index(f.buf, f.r + 16), literal(f.a, 1.0f));
  CHECK(codegen::early_symbolic(sink(st, keep), t).nsrc() == 1);
  CHECK(codegen::extra_symbolic(sink(st, keep), t).nsrc() == 1);
  // final symbolic is `symbolic`: the store folding of sym is not part of it
  CHECK(codegen::final_symbolic(sink(st, keep), t).nsrc() == 2);
}
