// Stage 1 "postopt symbolic": corpus stage checks and graph-level tests of the stage's own rule sets
// (pm_move_where_on_load, pm_flatten_range, pm_reduce_unparented).
#include <doctest/doctest.h>

#include <cstdio>
#include <uopcg/codegen/postopt.hpp>
#include <uopcg/core/builder.hpp>

#include "../stage_harness.hpp"

using namespace uopcg;
namespace P = uopcg::pat;
namespace C = uopcg::codegen;

TEST_CASE("postopt symbolic: corpus kernels") {
  int same = 0, total = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    auto r = uopcg_test::check_stage(k, "postopt symbolic", [](UOp u, const Target& t) { return C::postopt_symbolic(u, t); });
    ++total;
    if (r.same) ++same;
    else std::printf("postopt symbolic differs for %s:\n%s\n", e.name.c_str(), r.diff.c_str());
  }
  std::printf("postopt symbolic: %d/%d corpus kernels match\n", same, total);
  CHECK(total == 16);
  CHECK(same == total);
}

namespace {
UOp rewrite(UOp u, const auto& rules) { return P::graph_rewrite(u, rules); }
}  // namespace

TEST_CASE("pm_move_where_on_load: clauses on the index's ranges become the load's gate") {
  Arena a;
  UOp buf = param(a, 1, DType::float32, 64);
  UOp r = range(a, 64, 0, AxisType::GLOBAL), other = range(a, 8, 1, AxisType::REDUCE);
  UOp c_in = r < 60, c_out = other < 3;
  // where(c_in & c_out, buf[r], 0): c_in moves into the gate, c_out stays in the WHERE
  UOp w = where(c_in & c_out, index(buf, r), literal(a, 0.0));
  UOp got = rewrite(w, C::pm_move_where_on_load);
  REQUIRE(got.op() == Ops::WHERE);
  UOp idx = got.src(1);
  REQUIRE(idx.op() == Ops::INDEX);
  CHECK(idx.src(0) == buf);
  CHECK(C::detail::get_idx(idx.src(1)) == r);
  std::vector<UOp> gate, kept;
  symbolic::mops::split_and(C::detail::get_valid(idx.src(1)), gate);
  symbolic::mops::split_and(got.src(0), kept);
  CHECK(std::find(gate.begin(), gate.end(), c_in) != gate.end());
  CHECK(std::find(gate.begin(), gate.end(), c_out) == gate.end());
  CHECK(std::find(kept.begin(), kept.end(), c_out) != kept.end());
  CHECK(got.src(2).op() == Ops::CONST);
  CHECK(got.src(2).dtype() == DType::float32);

  // the whole condition moves: with sym's folding the WHERE disappears
  UOp all = rewrite(where(c_in, index(buf, r), literal(a, 0.0)), symbolic::symbolic + C::pm_move_where_on_load);
  CHECK(all == index(buf, valid(r, c_in)));
  // mirrored: where(c, 0, load) gates the load with !c
  UOp mir = rewrite(where(c_in, literal(a, 0.0), index(buf, r)), symbolic::symbolic + C::pm_move_where_on_load);
  CHECK(mir == index(buf, valid(r, logical_not(c_in))));
  // through a CAST: the gated load is cast
  UOp hbuf = param(a, 2, DType::float16, 64);
  UOp cst = rewrite(where(c_in, cast(index(hbuf, r), DType::float32), literal(a, 0.0)), symbolic::symbolic + C::pm_move_where_on_load);
  CHECK(cst == cast(index(hbuf, valid(r, c_in)), DType::float32));
  // a clause that reads another buffer (data-dependent) stays
  UOp dep = index(param(a, 3, DType::int32, 64), r) < 5;
  UOp keep = where(dep, index(buf, r), literal(a, 0.0));
  CHECK(rewrite(keep, C::pm_move_where_on_load) == keep);
  // a clause already in the gate is dropped from the WHERE
  UOp twice = rewrite(where(c_in, index(buf, valid(r, c_in)), literal(a, 0.0)), symbolic::symbolic + C::pm_move_where_on_load);
  CHECK(twice == index(buf, valid(r, c_in)));
}

TEST_CASE("pm_flatten_range: REDUCE/END list the RANGEs of their range sources") {
  Arena a;
  UOp buf = param(a, 0, DType::float32, 64);
  UOp r1 = range(a, 16, 0, AxisType::GLOBAL), r2 = range(a, 4, 1, AxisType::LOCAL);
  UOp st = store(index(buf, r1 * 4 + r2), literal(a, 1.0));
  CHECK(rewrite(end(st, r1 * 4 + r2), C::pm_flatten_range) == end(st, r1, r2));
  // constants disappear, duplicates collapse, a bool back-edge stays last
  UOp back = r1 < 3;
  UOp e = a.make(Ops::END, DType::void_, {st, literal(a, 0), r2, r2 + r1, back});
  CHECK(rewrite(e, C::pm_flatten_range) == a.make(Ops::END, DType::void_, {st, r2, r1, back}));
  UOp red = reduce(index(buf, r1), Ops::ADD, r1 + 0 * r2);
  CHECK(rewrite(red, C::pm_flatten_range) == reduce(index(buf, r1), Ops::ADD, r1, r2));
  UOp plain = end(st, r1, r2);
  CHECK(rewrite(plain, C::pm_flatten_range) == plain);
}

TEST_CASE("pm_reduce_unparented: ranges the value does not use") {
  Arena a;
  UOp buf = param(a, 0, DType::float32, 16);
  UOp r = range(a, 16, 0, AxisType::REDUCE), u = range(a, 8, 1, AxisType::REDUCE);
  UOp v = index(buf, r);
  // ADD: the sum over u of a value independent of u is 8 times the value
  CHECK(rewrite(reduce(v, Ops::ADD, r, u), C::pm_reduce_unparented) ==
        reduce(v, Ops::ADD, r) * cast(literal(a, 8), DType::float32));
  // no range left and the same dtype: the REDUCE disappears
  CHECK(rewrite(reduce(v, Ops::MAX, u), C::pm_reduce_unparented) == v);
  CHECK(rewrite(reduce(v, Ops::MUL, u), C::pm_reduce_unparented) == alu(Ops::POW, v, cast(literal(a, 8), DType::float32)));
  // an int reduce scales by the weak bound itself
  UOp iv = index(param(a, 1, DType::weakint, 16), r);
  CHECK(rewrite(reduce(iv, Ops::ADD, u), C::pm_reduce_unparented) == iv * literal(a, 8));
  // every range used: unchanged
  UOp used = reduce(index(buf, r + u), Ops::ADD, r, u);
  CHECK(rewrite(used, C::pm_reduce_unparented) == used);
  // a dtype-changing REDUCE is kept (without ranges)
  UOp wide = a.make(Ops::REDUCE, DType::float64, {v, u}, Arg::tuple_of(Ops::ADD, 0));
  UOp got = rewrite(wide, C::pm_reduce_unparented);
  REQUIRE(got.op() == Ops::MUL);
  CHECK(got.src(0) == a.make(Ops::REDUCE, DType::float64, {v}, Arg::tuple_of(Ops::ADD, 0)));
}

TEST_CASE("postopt_symbolic: the stage on a small kernel") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 1), in = param(a, 1, DType::float32, 64);
  UOp r = range(a, 64, 0, AxisType::REDUCE), dead = range(a, 4, 1, AxisType::REDUCE);
  UOp val = where(r < 60, index(in, r), literal(a, 0.0));
  UOp k = sink(store(index(out, literal(a, 0)), reduce(val, Ops::ADD, r, dead + 0)));
  UOp got = C::postopt_symbolic(k, Target::pocl());
  // the dead range is gone, the condition gates the load, the REDUCE is scaled by 4
  bool has_gated_index = false, has_dead = false;
  for (UOp n : toposort(got)) {
    has_dead |= n == dead;
    has_gated_index |= n.op() == Ops::INDEX && n.src(0) == in && n.src(1).op() == Ops::WHERE;
  }
  CHECK(has_gated_index);
  CHECK_FALSE(has_dead);
}
