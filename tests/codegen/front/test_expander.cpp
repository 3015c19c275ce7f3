// Stage 2 "expander": corpus stage checks and graph-level tests (range map, lane tensors,
// expand_reduce, expand_wmma with the synthetic shapes of tinygrad-codegen.md §3.3).
#include <doctest/doctest.h>

#include <cstdio>
#include <uopcg/codegen/expander.hpp>
#include <uopcg/core/builder.hpp>

#include "../stage_harness.hpp"

using namespace uopcg;
namespace P = uopcg::pat;
namespace C = uopcg::codegen;

TEST_CASE("expander: corpus kernels") {
  int same = 0, total = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    auto r = uopcg_test::check_stage(k, "expander", [](UOp u, const Target& t) { return C::expander(u, t); });
    ++total;
    if (r.same) ++same;
    else std::printf("expander differs for %s:\n%s\n", e.name.c_str(), r.diff.c_str());
  }
  std::printf("expander: %d/%d corpus kernels match\n", same, total);
  CHECK(total == 16);
  CHECK(same == total);
}

namespace {
UOp lanes_of(Arena& a, DType dt, int n) {
  std::vector<UOp> s;
  for (int i = 0; i < n; ++i) s.push_back(const_(a, dt, Arg(i)));
  return a.make(Ops::STACK, dt, s);
}
std::vector<std::int64_t> dims(UOp u) { return u.shape().to_vector(); }
}  // namespace

TEST_CASE("build_range_map and RANGE -> lane tensor") {
  Arena a;
  UOp g = range(a, 16, 0, AxisType::GLOBAL);
  UOp u1 = range(a, 4, 3, AxisType::UPCAST), u2 = range(a, 2, 1, AxisType::UPCAST), un = range(a, 3, 2, AxisType::UNROLL);
  UOp k = a.make(Ops::SINK, DType::void_, {g + u1, u2 * un});
  C::RangeMap m = C::build_range_map(k);
  REQUIRE(m.size() == 3);
  CHECK(*m.find(Arg(3)) == 0);  // toposort order, not axis ids
  CHECK(*m.find(Arg(1)) == 1);
  CHECK(*m.find(Arg(2)) == 2);
  CHECK(m.find(Arg(0)) == nullptr);
  CHECK_FALSE(C::range_to_lanes(m, g).has_value());
  UOp l = *C::range_to_lanes(m, un);
  CHECK(dims(l) == std::vector<std::int64_t>{1, 1, 3});
  REQUIRE(l.op() == Ops::RESHAPE);
  CHECK(l.src(0) == lanes_of(a, DType::weakint, 3));
  // with one expanded range the lane tensor is the STACK itself
  C::RangeMap one = C::build_range_map(a.make(Ops::SINK, DType::void_, {g + u1}));
  CHECK(*C::range_to_lanes(one, u1) == lanes_of(a, DType::weakint, 4));
}

TEST_CASE("RANGE -> lane tensor: a size that is not a small constant is an error naming the range") {
  Arena a;
  // found by tests/fuzz/fuzz_pipeline.cpp: an UPCAST range over a PARAM (vmax INT64_MAX) overflowed
  UOp n = a.make(Ops::PARAM, DType::weakint, {},
                 [] {
                   ParamArg p;
                   p.slot = 0;
                   p.dtype = DType::weakint;
                   p.addrspace = AddrSpace::ALU;
                   return p.to_arg();
                 }());
  UOp by_var = a.make(Ops::RANGE, DType::weakint, {n}, Arg::tuple_of(1, AxisType::UPCAST));
  UOp huge = range(a, std::int64_t{1} << 20, 2, AxisType::UNROLL);
  UOp k = a.make(Ops::SINK, DType::void_, {by_var, huge});
  C::RangeMap m = C::build_range_map(k);
  CHECK_THROWS_WITH_AS(C::range_to_lanes(m, by_var), doctest::Contains("without a constant size"), uopcg::error);
  // a bounded but variable size is no lane count either
  UOp g = range(a, 16, 0, AxisType::GLOBAL);
  UOp by_expr = range(g + 1, 4, AxisType::UPCAST);
  C::RangeMap me = C::build_range_map(a.make(Ops::SINK, DType::void_, {by_expr}));
  CHECK_THROWS_WITH_AS(C::range_to_lanes(me, by_expr), doctest::Contains("without a constant size"), uopcg::error);
  CHECK_THROWS_WITH_AS(C::range_to_lanes(m, huge), doctest::Contains("1048576 lanes (1 to 65536 allowed)"), uopcg::error);
  // the largest allowed size still expands
  UOp big = range(a, C::max_expanded_lanes, 3, AxisType::UPCAST);
  C::RangeMap mb = C::build_range_map(a.make(Ops::SINK, DType::void_, {big}));
  CHECK(dims(*C::range_to_lanes(mb, big)) == std::vector<std::int64_t>{C::max_expanded_lanes});
}

TEST_CASE("expander: an elementwise upcast kernel") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 64), in = param(a, 1, DType::float32, 64);
  UOp g = range(a, 16, 0, AxisType::GLOBAL), u = range(a, 4, 1, AxisType::UPCAST);
  UOp i = g * 4 + u;
  UOp k = sink(end(store(index(out, i), index(in, i) + 1.0), g, u));
  UOp got = C::expander(k, Target::pocl());
  UOp st = got.src(0);
  REQUIRE(st.op() == Ops::END);
  CHECK(st.nsrc() == 2);  // the UPCAST range left the END
  CHECK(st.src(1) == g);
  CHECK(dims(st.src(0)) == std::vector<std::int64_t>{4});
  for (UOp n : toposort(got)) CHECK_FALSE(n == u);
}

TEST_CASE("expand_reduce: unrolled lanes are reduced horizontally") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 1), in = param(a, 1, DType::float32, 4096);
  UOp g = range(a, 16, 1, AxisType::GROUP_REDUCE), u = range(a, 4, 2, AxisType::UNROLL), r = range(a, 64, 0, AxisType::REDUCE);
  UOp red = reduce(index(in, g * 256 + u * 64 + r), Ops::ADD, g, u, r);
  UOp k = sink(store(index(out, literal(a, 0)), red));
  UOp got = C::expander(k, Target::pocl());
  UOp v = got.src(0).src(1);  // the stored value
  REQUIRE(v.op() == Ops::RESHAPE);
  CHECK(dims(v) == std::vector<std::int64_t>{1});
  UOp nr = v.src(0);
  REQUIRE(nr.op() == Ops::REDUCE);
  CHECK(nr.arg() == Arg::tuple_of(Ops::ADD, 1));
  CHECK(nr.nsrc() == 3);
  CHECK(nr.src(1) == g);
  CHECK(nr.src(2) == r);
  CHECK(dims(nr.src(0)) == std::vector<std::int64_t>{4});

  // two unrolled / upcast axes: the unrolled one moves to the front
  Arena b;
  UOp in2 = param(b, 1, DType::float32, 64);
  UOp up = range(b, 2, 5, AxisType::UPCAST), ur = range(b, 4, 7, AxisType::UNROLL), r0 = range(b, 8, 0, AxisType::REDUCE);
  UOp red2 = reduce(index(in2, up * 32 + r0 * 4 + ur), Ops::MAX, r0, ur);
  UOp k2 = sink(store(index(param(b, 0, DType::float32, 2), up), red2));
  UOp got2 = C::expander(k2, Target::pocl());
  UOp v2 = got2.src(0).src(1);
  REQUIRE(v2.op() == Ops::RESHAPE);
  CHECK(dims(v2) == std::vector<std::int64_t>{2, 1});
  UOp nr2 = v2.src(0);
  REQUIRE(nr2.op() == Ops::REDUCE);
  CHECK(nr2.arg() == Arg::tuple_of(Ops::MAX, 1));
  REQUIRE(nr2.src(0).op() == Ops::PERMUTE);
  CHECK(symbolic::mops::perm_of(nr2.src(0)) == std::vector<std::int64_t>{1, 0});
  CHECK(dims(nr2) == std::vector<std::int64_t>{2});
}

TEST_CASE("expander: a hand-written vector keeps its own axes before the lanes") {
  // sum_r STACK(in[2(8g+r)], in[2(8g+r)+1]) with r UNROLL 4: the value is (2, 4), the lanes last, and
  // the REDUCE reduces axis 1 (the lanes), not the vector's axis 0
  Arena a;
  UOp in = param(a, 1, DType::float32, 64);
  UOp g = range(a, 4, 0, AxisType::GLOBAL), r = range(a, 4, 1, AxisType::UNROLL);
  UOp base = (g * 8 + r) * 2;
  UOp red = reduce(stack(index(in, base), index(in, base + 1)), Ops::ADD, r);
  UOp out = param(a, 0, DType::float32, 8);
  UOp k = sink(end(group(store(index(out, g * 2), index(red, literal(a, 0))), store(index(out, g * 2 + 1), index(red, literal(a, 1)))), g));
  UOp got = C::expander(k, Target::pocl());
  int reduces = 0;
  for (UOp n : toposort(got)) {
    if (n.op() != Ops::REDUCE) continue;
    ++reduces;
    CHECK(n.arg() == Arg::tuple_of(Ops::ADD, 1));
    REQUIRE(n.src(0).op() == Ops::PERMUTE);
    CHECK(symbolic::mops::perm_of(n.src(0)) == std::vector<std::int64_t>{1, 0});  // the lane axis (1) first
    CHECK(dims(n) == std::vector<std::int64_t>{2});
  }
  CHECK(reduces == 1);

  // a vector of two weights that no lane reaches, times an upcast value: (2,) -> (2, 1), then (2, 4)
  Arena b;
  UOp w = param(b, 2, DType::float32, 2), x = param(b, 1, DType::float32, 16), o = param(b, 0, DType::float32, 16);
  UOp gg = range(b, 4, 0, AxisType::GLOBAL), u = range(b, 4, 1, AxisType::UPCAST);
  UOp p = stack(index(w, literal(b, 0)), index(w, literal(b, 1))) * index(x, gg * 4 + u);
  UOp k2 = sink(end(store(index(o, gg * 4 + u), index(p, literal(b, 0)) - index(p, literal(b, 1))), gg, u));
  UOp got2 = C::expander(k2, Target::pocl());
  bool product = false;  // the weights times the upcast loads (the other float MUL is the negation, (4,))
  for (UOp n : toposort(got2))
    product = product || (n.op() == Ops::MUL && n.dtype() == DType::float32 && dims(n) == std::vector<std::int64_t>{2, 4});
  CHECK(product);
}

TEST_CASE("expand_reduce: no unrolled axis, and a REDUCE already horizontal") {
  Arena a;
  UOp in = param(a, 1, DType::float32, 64);
  UOp r = range(a, 64, 0, AxisType::REDUCE);
  UOp red = reduce(index(in, r), Ops::ADD, r);
  CHECK_FALSE(C::expand_reduce(red).has_value());
  UOp lanes = lanes_of(a, DType::weakint, 4);
  UOp bad = a.make(Ops::REDUCE, DType::float32, {index(in, lanes), lanes}, Arg::tuple_of(Ops::ADD, 1));
  CHECK_THROWS_WITH_AS(C::expand_reduce(bad), doctest::Contains("already reduces horizontal axes"), uopcg::error);
}

TEST_CASE("expand_wmma: the synthetic case of tinygrad-codegen.md 3.3") {
  Arena a;
  UOp r10 = range(a, 2, 10, AxisType::UPCAST), r11 = range(a, 2, 11, AxisType::UPCAST), r12 = range(a, 2, 12, AxisType::UNROLL);
  C::RangeMap ctx = C::build_range_map(a.make(Ops::SINK, DType::void_, {r10, r11, r12}));
  REQUIRE(ctx.size() == 3);
  UOp av = cast(*C::range_to_lanes(ctx, r10), DType::float32);  // (2,1,1)
  UOp bv = cast(*C::range_to_lanes(ctx, r11), DType::float32);  // (1,2,1)
  UOp acc = cast(lanes_of(a, DType::weakint, 4), DType::float32);  // (4,)
  auto pairs = [](std::initializer_list<std::pair<int, int>> ps) {
    std::vector<Arg> v;
    for (auto [id, n] : ps) v.push_back(Arg::tuple_of(id, n));
    return Arg::tuple(v);
  };
  Arg axes = Arg::tuple_of(pairs({{10, 2}}), pairs({{11, 2}}), pairs({{10, 2}, {11, 2}}));
  Arg warg = Arg::tuple_of(Arg::tuple_of(8, 8, 2), DType::float32, Arg::string("CL"), 32, axes);
  UOp w = a.make(Ops::WMMA, DType::float32, {av, bv, acc}, warg);
  REQUIRE(dims(w) == std::vector<std::int64_t>{2, 2, 4});
  UOp got = *C::expand_wmma(ctx, w);
  // PERMUTE(RESHAPE(w', (1,1,2,2)), (2,3,0,1)) : (2,2,1,1)
  REQUIRE(got.op() == Ops::PERMUTE);
  CHECK(symbolic::mops::perm_of(got) == std::vector<std::int64_t>{2, 3, 0, 1});
  CHECK(dims(got) == std::vector<std::int64_t>{2, 2, 1, 1});
  UOp rs = got.src(0);
  REQUIRE(rs.op() == Ops::RESHAPE);
  CHECK(dims(rs) == std::vector<std::int64_t>{1, 1, 2, 2});
  UOp nw = rs.src(0);
  REQUIRE(nw.op() == Ops::WMMA);
  CHECK(nw.arg()[4].is_none());
  CHECK(dims(nw) == std::vector<std::int64_t>{1, 1, 4});
  REQUIRE(nw.src(0).op() == Ops::PERMUTE);
  CHECK(symbolic::mops::perm_of(nw.src(0)) == std::vector<std::int64_t>{1, 2, 0});
  CHECK(dims(nw.src(0)) == std::vector<std::int64_t>{1, 1, 2});
  REQUIRE(nw.src(1).op() == Ops::PERMUTE);
  CHECK(symbolic::mops::perm_of(nw.src(1)) == std::vector<std::int64_t>{0, 2, 1});
  CHECK(nw.src(2) == acc);
  // without metadata nothing happens; an axis outside the range map is an error
  CHECK_FALSE(C::expand_wmma(ctx, nw).has_value());
  Arg bad_axes = Arg::tuple_of(pairs({{99, 2}}), pairs({{11, 2}}), pairs({{10, 2}}));
  UOp bad = a.make(Ops::WMMA, DType::float32, {av, bv, acc}, Arg::tuple_of(Arg::tuple_of(8, 8, 2), DType::float32, Arg::string("CL"), 32, bad_axes));
  CHECK_THROWS_WITH_AS(C::expand_wmma(ctx, bad), doctest::Contains("names axis 99"), uopcg::error);
}
