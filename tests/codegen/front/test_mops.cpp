// Graph-level tests of the movement-op rules (symbolic/mops.hpp): mop_cleanup and pm_mops.
#include <doctest/doctest.h>

#include <uopcg/core/builder.hpp>
#include <uopcg/core/print.hpp>
#include <uopcg/symbolic/mops.hpp>
#include <uopcg/symbolic/sets.hpp>

using namespace uopcg;
namespace P = uopcg::pat;
namespace S = uopcg::symbolic;

namespace {

UOp reshape_to(UOp x, std::vector<std::int64_t> shp) {
  return x.arena().make(Ops::RESHAPE, x.dtype(), {x, S::mops::shape_node(x.arena(), shp)});
}
UOp permute_by(UOp x, std::vector<std::int64_t> perm) {
  std::vector<Arg> items;
  for (auto p : perm) items.push_back(Arg(p));
  return x.arena().make(Ops::PERMUTE, x.dtype(), {x}, Arg::tuple(items));
}
UOp lanes(Arena& a, int n) {
  std::vector<UOp> s;
  for (int i = 0; i < n; ++i) s.push_back(literal(a, i));
  return a.make(Ops::STACK, DType::weakint, s);
}
/// The value of a weakint expression with the given ranges set to constants.
std::int64_t eval_at(UOp e, std::vector<std::pair<UOp, std::int64_t>> at) {
  std::vector<std::pair<UOp, UOp>> sub;
  for (auto [r, v] : at) sub.emplace_back(r, literal(e.arena(), v));
  UOp c = P::graph_rewrite(substitute(e, sub), S::detail::mops_symbolic);
  REQUIRE(c.op() == Ops::CONST);
  return c.arg().as_int();
}

}  // namespace

TEST_CASE("mop_cleanup: RESHAPE and PERMUTE chains") {
  Arena a;
  UOp x = param(a, 0, DType::float32, 24);
  UOp v = index(x, range(a, 24, 0, AxisType::GLOBAL));  // a scalar value
  UOp s = S::mops::reshape(lanes(a, 24), std::vector<std::int64_t>{2, 3, 4});
  UOp rr = reshape_to(reshape_to(s, {6, 4}), {4, 6});
  UOp got = P::graph_rewrite(rr, S::mop_cleanup);
  CHECK(got.op() == Ops::RESHAPE);
  CHECK(got.src(0) == lanes(a, 24));  // merged and the inner RESHAPE gone
  CHECK(got.shape() == std::initializer_list<std::int64_t>{4, 6});
  // a RESHAPE back to the source's shape disappears
  CHECK(P::graph_rewrite(reshape_to(reshape_to(lanes(a, 24), {4, 6}), {24}), S::mop_cleanup) == lanes(a, 24));
  // PERMUTE(PERMUTE(y, (1,2,0)), (1,2,0)) = PERMUTE(y, (2,0,1)); twice more is the identity
  UOp p1 = permute_by(s, {1, 2, 0});
  UOp p2 = P::graph_rewrite(permute_by(p1, {1, 2, 0}), S::mop_cleanup);
  REQUIRE(p2.op() == Ops::PERMUTE);
  CHECK(p2.src(0) == s);
  CHECK(S::mops::perm_of(p2) == std::vector<std::int64_t>{2, 0, 1});
  CHECK(p2.shape() == std::initializer_list<std::int64_t>{4, 2, 3});
  CHECK(P::graph_rewrite(permute_by(p2, {1, 2, 0}), S::mop_cleanup) == s);
  // scalars and non-movement nodes are left alone
  CHECK(P::graph_rewrite(v, S::mop_cleanup) == v);
}

TEST_CASE("mop_cleanup: STACK and INDEX") {
  Arena a;
  UOp r = range(a, 8, 0, AxisType::GLOBAL);
  UOp buf = param(a, 0, DType::float32, 32);
  UOp vec = r * 4 + lanes(a, 4);  // a (4,) value
  REQUIRE(vec.shape() == std::initializer_list<std::int64_t>{4});
  // all lanes in order re-assemble the value
  UOp all = stack(index(vec, literal(a, 0)), index(vec, literal(a, 1)), index(vec, literal(a, 2)), index(vec, literal(a, 3)));
  CHECK(P::graph_rewrite(all, S::mop_cleanup) == vec);
  // lanes out of order or missing ones do not
  UOp swapped = stack(index(vec, literal(a, 1)), index(vec, literal(a, 0)), index(vec, literal(a, 2)), index(vec, literal(a, 3)));
  CHECK(P::graph_rewrite(swapped, S::mop_cleanup) == swapped);
  UOp partial = stack(index(vec, literal(a, 0)), index(vec, literal(a, 1)));
  CHECK(P::graph_rewrite(partial, S::mop_cleanup) == partial);

  // a lane of a scalar value is the value (a scalar broadcasts: where(c, x, x) under a vector c
  // folds to the scalar x, whose lanes the devectorizer still takes); a buffer's element is not
  UOp x = r * 3;
  CHECK(P::graph_rewrite(index(x, literal(a, 2)), S::mop_cleanup) == x);
  CHECK(P::graph_rewrite(index(where(vec < 9, x, x), literal(a, 2)), S::symbolic_simple) == x);
  CHECK(P::graph_rewrite(index(buf, literal(a, 2)), S::mop_cleanup) == index(buf, literal(a, 2)));

  // INDEX(STACK, k) is element k; extra indices apply to the element
  UOp e0 = S::mops::reshape(lanes(a, 6), std::vector<std::int64_t>{2, 3});
  UOp e1 = e0 * 2;
  UOp st = stack(e0, e1);  // (2, 2, 3)
  CHECK(P::graph_rewrite(index(st, literal(a, 1)), S::mop_cleanup) == e1);
  UOp deep = P::graph_rewrite(index(st, literal(a, 0), literal(a, 1), literal(a, 2)), S::mop_cleanup);
  CHECK(deep.op() == Ops::INDEX);  // into the RESHAPE: only pm_mops goes through it
  CHECK(deep.src(0) == e0);
  CHECK(P::graph_rewrite(index(lanes(a, 4), literal(a, 3)), S::mop_cleanup) == literal(a, 3));
  // out of range or non-constant lanes are left alone
  UOp oob = index(lanes(a, 4), literal(a, 7));
  CHECK(P::graph_rewrite(oob, S::mop_cleanup) == oob);

  // INDEX(INDEX(x, i), j) merges when all indices are scalars
  UOp p2 = a.make(Ops::PARAM, DType::float32, {S::mops::shape_node(a, std::vector<std::int64_t>{8, 4})},
                  buf.arg());
  UOp j = range(a, 4, 1, AxisType::LOOP);
  UOp merged = P::graph_rewrite(index(index(p2, r), j), S::mop_cleanup);
  CHECK(merged == index(p2, r, j));
  // INDEX(INDEX(buf, shaped), j) -> INDEX(buf, INDEX(shaped, j))
  UOp shaped = r * 4 + lanes(a, 4);
  UOp lane2 = P::graph_rewrite(index(index(buf, shaped), literal(a, 2)), S::mop_cleanup);
  REQUIRE(lane2.op() == Ops::INDEX);
  CHECK(lane2.src(0) == buf);
  CHECK(lane2.shape().size() == 0);
}

TEST_CASE("pm_mops: INDEX through PERMUTE, EXPAND, SHRINK, FLIP") {
  Arena a;
  UOp buf = a.make(Ops::BUFFER, DType::float32, {S::mops::shape_node(a, std::vector<std::int64_t>{4, 8})},
                   buffer(a, 0, DType::float32, 32, AddrSpace::LOCAL).arg());
  UOp i = range(a, 8, 0, AxisType::LOOP), j = range(a, 4, 1, AxisType::LOOP), k = range(a, 3, 2, AxisType::LOOP);
  // PERMUTE: view (8,4) of (4,8)
  CHECK(P::graph_rewrite(index(permute_by(buf, {1, 0}), i, j), S::pm_mops) == index(buf, j, i));
  // EXPAND prepends an axis of 3: its index is dropped
  UOp ex = a.make(Ops::EXPAND, DType::float32, {buf, literal(a, 3)});
  REQUIRE(ex.shape() == std::initializer_list<std::int64_t>{3, 4, 8});
  CHECK(P::graph_rewrite(index(ex, k, j, i), S::pm_mops) == index(buf, j, i));
  // SHRINK adds the start offsets
  UOp sh = a.make(Ops::SHRINK, DType::float32,
                  {buf, S::mops::shape_node(a, std::vector<std::int64_t>{1, 0}), S::mops::shape_node(a, std::vector<std::int64_t>{3, 8})});
  REQUIRE(sh.shape() == std::initializer_list<std::int64_t>{3, 8});
  UOp got = P::graph_rewrite(index(sh, k, i), S::pm_mops);
  CHECK(got == index(buf, k + 1, i));
  // FLIP of axis 1: 7 - i
  UOp fl = a.make(Ops::FLIP, DType::float32, {buf}, Arg::tuple_of(Arg::boolean(false), Arg::boolean(true)));
  UOp f = P::graph_rewrite(index(fl, j, i), S::pm_mops);
  REQUIRE(f.op() == Ops::INDEX);
  CHECK(f.src(1) == j);
  CHECK(eval_at(f.src(2), {{i, 2}}) == 5);
  // wrong number of indices: left alone
  UOp part = index(permute_by(buf, {1, 0}), i);
  CHECK(P::graph_rewrite(part, S::pm_mops) == part);
}

TEST_CASE("pm_mops: INDEX through PAD gets a validity gate") {
  Arena a;
  UOp buf = param(a, 0, DType::float32, 8);
  UOp pad = a.make(Ops::PAD, DType::float32, {buf, literal(a, 2), literal(a, 1)});
  REQUIRE(pad.shape() == std::initializer_list<std::int64_t>{11});
  UOp r = range(a, 11, 0, AxisType::LOOP);
  UOp got = P::graph_rewrite(index(pad, r), S::pm_mops);
  REQUIRE(got.op() == Ops::INDEX);
  CHECK(got.src(0) == buf);
  UOp g = got.src(1);
  REQUIRE(g.op() == Ops::WHERE);
  CHECK(S::is_invalid(g.src(2)));
  for (std::int64_t v : {0, 1, 2, 5, 9, 10}) {
    std::vector<std::pair<UOp, UOp>> sub{{r, literal(a, v)}};
    UOp cond = P::graph_rewrite(substitute(g.src(0), sub), S::detail::mops_symbolic);
    REQUIRE(cond.op() == Ops::CONST);
    CHECK(cond.arg().as_int() == (v >= 2 && v < 10 ? 1 : 0));
    if (v >= 2 && v < 10) CHECK(eval_at(g.src(1), {{r, v}}) == v - 2);
  }
}

TEST_CASE("pm_mops: INDEX through RESHAPE is row-major index math") {
  Arena a;
  UOp buf = buffer(a, 0, DType::float32, 32, AddrSpace::LOCAL);
  UOp i = range(a, 4, 0, AxisType::LOOP), j = range(a, 8, 1, AxisType::LOOP);
  UOp got = P::graph_rewrite(index(reshape_to(buf, {4, 8}), i, j), S::pm_mops);
  REQUIRE(got.op() == Ops::INDEX);
  REQUIRE(got.nsrc() == 2);
  CHECK(got.src(0) == buf);
  for (auto [vi, vj] : {std::pair{0, 0}, {1, 3}, {3, 7}, {2, 0}}) CHECK(eval_at(got.src(1), {{i, vi}, {j, vj}}) == vi * 8 + vj);
  // the index math simplified away the div/mod: (i*8+j) already lies in [0, 32)
  for (UOp n : toposort(got.src(1))) CHECK((n.op() != Ops::FLOORMOD && n.op() != Ops::FLOORDIV));

  // (32,) viewed as (2,16), source (4,8): i' = (16a+b)//8, j' = (16a+b)%8
  UOp b2 = a.make(Ops::BUFFER, DType::float32, {S::mops::shape_node(a, std::vector<std::int64_t>{4, 8})}, buf.arg());
  UOp ra = range(a, 2, 2, AxisType::LOOP), rb = range(a, 16, 3, AxisType::LOOP);
  UOp g2 = P::graph_rewrite(index(reshape_to(b2, {2, 16}), ra, rb), S::pm_mops);
  REQUIRE(g2.nsrc() == 3);
  for (int va = 0; va < 2; ++va)
    for (int vb = 0; vb < 16; vb += 5) {
      CHECK(eval_at(g2.src(1), {{ra, va}, {rb, vb}}) == (16 * va + vb) / 8);
      CHECK(eval_at(g2.src(2), {{ra, va}, {rb, vb}}) == (16 * va + vb) % 8);
    }
  // the ranges of the result are the original ones (the PLACEHOLDER ranges are substituted back)
  for (UOp n : toposort(g2)) CHECK(!(n.op() == Ops::RANGE && n.arg()[1].as_axis_type() == AxisType::PLACEHOLDER));

  // a partial INDEX through a RESHAPE that keeps the trailing dims: (4,8) viewed as (2,2,8)
  UOp g3 = P::graph_rewrite(index(reshape_to(b2, {2, 2, 8}), ra, literal(a, 1)), S::pm_mops);
  REQUIRE(g3.op() == Ops::INDEX);
  CHECK(g3.src(0) == b2);
  CHECK(g3.shape() == std::initializer_list<std::int64_t>{8});
  CHECK(eval_at(g3.src(1), {{ra, 1}}) == 3);
}

TEST_CASE("pm_mops: movement ops move outside AFTER and END") {
  Arena a;
  UOp buf = buffer(a, 0, DType::float32, 32, AddrSpace::LOCAL);
  UOp r = range(a, 32, 0, AxisType::LOOP);
  UOp st = end(store(index(buf, r), literal(a, 1.0f)), r);
  UOp view = reshape_to(buf, {4, 8});
  UOp got = P::graph_rewrite(after(view, st), S::pm_mops);
  CHECK(got == reshape_to(after(buf, st), {4, 8}));
  UOp idx = index(buf, literal(a, 3));
  CHECK(P::graph_rewrite(after(idx, st), S::pm_mops) == index(after(buf, st), literal(a, 3)));
  UOp ev = a.make(Ops::END, DType::void_, {view, r});
  CHECK(P::graph_rewrite(ev, S::pm_mops) == a.make(Ops::END, DType::void_, {buf, r}));
}

TEST_CASE("mops helpers: errors name the node") {
  Arena a;
  UOp s = lanes(a, 6);
  CHECK_THROWS_WITH_AS(S::mops::reshape(s, std::vector<std::int64_t>{4}), doctest::Contains("cannot be reshaped"),
                       uopcg::error);
  CHECK_THROWS_WITH_AS(S::mops::permute(s, std::vector<std::int64_t>{1, 0}), doctest::Contains("does not match the rank"),
                       uopcg::error);
}
