// Graph operations: toposort order, backward slices, substitute, rebuilding, ranges.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <random>
#include <vector>

#include <uopcg/core/builder.hpp>
#include <uopcg/core/graph.hpp>
#include <uopcg/core/print.hpp>

using namespace uopcg;

TEST_CASE("toposort is a DFS post-order visiting sources in order, each node once") {
  Arena a;
  UOp x = literal(a, 1), y = literal(a, 2), z = literal(a, 3);
  UOp xy = x + y;
  UOp root = a.make(Ops::ADD, DType::weakint, {xy, a.make(Ops::MUL, DType::weakint, {z, x})});
  auto order = toposort(root);
  REQUIRE(order.size() == 6);
  CHECK(order[0] == x);
  CHECK(order[1] == y);
  CHECK(order[2] == xy);
  CHECK(order[3] == z);
  CHECK(order[4].op() == Ops::MUL);
  CHECK(order[5] == root);
  // gate: stops descent and excludes the gated node
  auto gated = toposort(root, [&](UOp u) { return u != xy; });
  CHECK(gated.size() == 4);
  for (UOp u : gated) CHECK(u != xy);
}

TEST_CASE("backward slice") {
  Arena a;
  UOp r = range(a, 4, 0, AxisType::LOOP);
  UOp e = r + 1;
  auto bs = backward_slice(e);
  CHECK(bs.size() == 3);  // CONST 4, RANGE, CONST 1
  CHECK(backward_slice_with_self(e).back() == e);
  CHECK(depends_on(e, r));
  CHECK_FALSE(depends_on(r, e));
}

TEST_CASE("substitute: largest subgraph first, keys inside replacements, tags kept") {
  Arena a;
  UOp x = literal(a, 1), y = literal(a, 2), z = literal(a, 7);
  UOp xy = x + y;
  UOp root = with_tag(xy * x, Arg(1));
  // replacing x everywhere keeps the tag of the rebuilt root
  UOp r1 = substitute(root, {{x, z}});
  CHECK(r1.tag().as_int() == 1);
  CHECK(r1.src(0) == z + y);
  CHECK(r1.src(1) == z);
  // the dict is consulted before children: xy is replaced as a whole
  UOp w = literal(a, 9);
  UOp r2 = substitute(root, {{xy, w}, {x, z}});
  CHECK(r2.src(0) == w);
  CHECK(r2.src(1) == z);
  // a key inside a replacement is replaced too
  UOp r3 = substitute(root, {{xy, x + w}, {x, z}});
  CHECK(r3.src(0) == z + w);
  // identity maps and empty maps return the root itself
  CHECK(substitute(root, {{x, x}}) == root);
  // a replacement containing its own key is reported, not looped on
  CHECK_THROWS_WITH_AS(substitute(root, {{x, x + 1}}), doctest::Contains("inside its own replacement"),
                       uopcg::error);
  CHECK_THROWS_WITH_AS(substitute(root, {{x, y}, {y, x}}), doctest::Contains("leads back to itself"),
                       uopcg::error);
}

TEST_CASE("substitute: skipping subgraphs without a key's op gives the same graph as a full walk") {
  // keys are LOADs and MAXes, scattered among ADD/MUL/CMPLT arithmetic: most subgraphs hold neither
  // op and are skipped, the rest must come out exactly as a plain recursive substitute builds them
  std::mt19937 rng(20261201);
  for (int round = 0; round < 20; ++round) {
    Arena a;
    UOp buf = a.make(Ops::PARAM, DType::float32, {}, Arg::integer(0));
    std::vector<UOp> pool{literal(a, 1), literal(a, 2), literal(a, 3)};
    std::vector<UOp> loads;
    for (int k = 0; k < 200; ++k) {
      UOp x = pool[rng() % pool.size()], y = pool[rng() % pool.size()];
      switch (rng() % 6) {
        case 0: pool.push_back(x + y); break;
        case 1: pool.push_back(x * y); break;
        case 2: pool.push_back(a.make(Ops::MAX, DType::weakint, {x, y})); break;
        case 3:
          loads.push_back(a.make(Ops::LOAD, DType::weakint, {a.make(Ops::INDEX, DType::float32, {buf, x})}));
          pool.push_back(loads.back());
          break;
        default: pool.push_back(x + y * y); break;
      }
    }
    UOp root = a.make(Ops::SINK, DType::void_, pool);
    std::vector<std::pair<UOp, UOp>> mapping;
    std::map<node_id, UOp> m;
    for (UOp l : loads)
      if (rng() % 2 == 0 && !m.count(l.id())) {
        UOp to = l.src(0).src(1) + literal(a, static_cast<std::int64_t>(rng() % 5));  // holds no key of its own
        mapping.emplace_back(l, to);
        m[l.id()] = to;
      }
    for (UOp u : pool)
      if (u.op() == Ops::MAX && rng() % 3 == 0 && !m.count(u.id())) {
        mapping.emplace_back(u, u.src(0));
        m[u.id()] = u.src(0);
      }
    std::map<node_id, UOp> memo;
    std::function<UOp(UOp)> ref = [&](UOp u) -> UOp {
      if (auto it = memo.find(u.id()); it != memo.end()) return it->second;
      UOp r;
      if (auto k = m.find(u.id()); k != m.end()) {
        r = ref(k->second);
      } else {
        std::vector<UOp> srcs;
        for (UOp s : u.srcs()) srcs.push_back(ref(s));
        r = with_srcs(u, srcs);
        if (r != u && m.count(r.id())) r = ref(r);
      }
      memo[u.id()] = r;
      return r;
    };
    CHECK(substitute(root, mapping) == ref(root));
    // a key absent from the graph (but of an op it holds) changes nothing
    UOp absent = a.make(Ops::LOAD, DType::weakint, {a.make(Ops::INDEX, DType::float32, {buf, literal(a, 999)})});
    CHECK(substitute(root, {{absent, literal(a, 42)}}) == root);
  }
}

TEST_CASE("with_srcs re-derives the dtype only when a source dtype changed") {
  Arena a;
  UOp i = const_(a, DType::int32, Arg(1));
  UOp f = const_(a, DType::float32, Arg(1.0));
  UOp add = i + i;
  CHECK(add.dtype() == DType::int32);
  CHECK(with_srcs(add, {i, f}).dtype() == DType::float32);
  UOp forced = a.make(Ops::ADD, DType::int64, {i, i});
  UOp i2 = const_(a, DType::int32, Arg(2));
  CHECK(with_srcs(forced, {i2, i}).dtype() == DType::int64);
}

TEST_CASE("map_srcs: the node itself when nothing changed, else rebuilt with the mapped sources") {
  Arena a;
  UOp x = literal(a, 1), y = literal(a, 2), z = literal(a, 3);
  UOp sum = x + y;
  CHECK(map_srcs(sum, [](UOp s) { return s; }) == sum);
  // only the second source changes: the first is kept, the map is applied to each source once
  int calls = 0;
  UOp r = map_srcs(sum, [&](UOp s) {
    ++calls;
    return s == y ? z : s;
  });
  CHECK(calls == 2);
  CHECK(r == x + z);
  // a source dtype change re-derives the dtype, as with_srcs does
  UOp i = const_(a, DType::int32, Arg(1)), f = const_(a, DType::float32, Arg(1.0));
  CHECK(map_srcs(i + i, [&](UOp) { return f; }).dtype() == DType::float32);
  // more sources than the stack buffer holds
  std::vector<UOp> many, expect;
  for (int i = 0; i < 12; ++i) {
    many.push_back(literal(a, i));
    expect.push_back(literal(a, i % 2 ? i : i + 100));
  }
  UOp sink = a.make(Ops::SINK, DType::void_, many);
  UOp mapped = map_srcs(sink, [&](UOp s) { return s.arg().as_int() % 2 ? s : literal(a, s.arg().as_int() + 100); });
  CHECK(mapped == a.make(Ops::SINK, DType::void_, expect));
  CHECK(map_srcs(sink, [](UOp s) { return s; }) == sink);
}

TEST_CASE("ranges and ended ranges") {
  Arena a;
  UOp buf = param(a, 0, DType::float32, 64);
  UOp out = param(a, 1, DType::float32, 16);
  UOp g = range(a, 16, 0, AxisType::GLOBAL);
  UOp r = range(a, 4, 1, AxisType::REDUCE);
  UOp v = load(index(buf, g * 4 + r));
  UOp red = reduce(v, Ops::ADD, r);
  UOp st = store(index(out, g), red);
  UOp e = end(st, g);
  auto rv = ranges(v);
  REQUIRE(rv.size() == 2);
  CHECK(rv[0] == g);
  CHECK(rv[1] == r);
  auto rr = ranges(red);
  REQUIRE(rr.size() == 1);
  CHECK(rr[0] == g);
  CHECK(ended_ranges(red).size() == 1);
  CHECK(ranges(e).empty());
  CHECK(in_range(st, g));
  // an AFTER closes what its deps close
  UOp acc = buffer(a, 0, DType::float32, 1, AddrSpace::REG);
  UOp aft = after(acc, end(store(index(acc, literal(a, 0)), v), r));
  CHECK_FALSE(in_range(aft, r));
  CHECK(buf_uop(index(aft, literal(a, 0))) == acc);
}

TEST_CASE("printing") {
  Arena a;
  UOp r = range(a, 4, 0, AxisType::LOOP);
  UOp e = r + 1;
  std::string one = to_string(e);
  CHECK(one.find("ADD weakint") != std::string::npos);
  std::string all = graph_to_string(sink(store(index(param(a, 0, DType::int32, 4), r), cast(e, DType::int32))));
  CHECK(all.find("%0    CONST weakint () 4   ; shape=()") == 0);
  CHECK(all.find("RANGE weakint (%0) (0, AxisType.LOOP)") != std::string::npos);
  CHECK(all.find("SINK void") != std::string::npos);
  CHECK(all.find("shape=None") != std::string::npos);
  text t;
  t.append_float(1.0);
  t.append(' ').append_float(0.1).append(' ').append_float(-0.0).append(' ').append_float(1e-5);
  t.append(' ').append_float(1.4426950216293335);
  CHECK(t.view() == "1.0 0.1 -0.0 1e-05 1.4426950216293335");
}

TEST_CASE("builder operators have the snapshot's meaning") {
  Arena a;
  UOp x = range(a, 8, 0, AxisType::LOOP), y = range(a, 8, 1, AxisType::LOOP);
  UOp sub = x - y;  // ADD(x, MUL(y, -1))
  CHECK(sub.op() == Ops::ADD);
  CHECK(sub.src(1).op() == Ops::MUL);
  CHECK(sub.src(1).src(1).arg().as_int() == -1);
  CHECK((x - 3).src(1).arg().as_int() == -3);
  UOp gt = x > y;  // CMPLT(y, x)
  CHECK(gt.op() == Ops::CMPLT);
  CHECK(gt.src(0) == y);
  UOp ge = x >= y;  // CMPNE(CMPLT(x, y), True)
  CHECK(ge.op() == Ops::CMPNE);
  CHECK(ge.src(1).arg().as_bool());
  CHECK(eq(x, y).op() == Ops::CMPNE);
  CHECK((x / 2).op() == Ops::FLOORDIV);
  CHECK((x % 2).op() == Ops::FLOORMOD);
  UOp f = cast(x, DType::float32);
  UOp div = f / f;
  CHECK(div.op() == Ops::MUL);
  CHECK(div.src(1).op() == Ops::RECIPROCAL);
  CHECK(minimum(f, f).op() == Ops::MUL);   // -max(-a, -b)
  CHECK(minimum(x, y).op() == Ops::XOR);   // ~max(~a, ~b)
  CHECK((f + 1).dtype() == DType::float32);
  CHECK((x + 1.5).dtype() == DType::weakfloat);
  CHECK(exp2(x).dtype() == DType::float32);
  CHECK((x < y).dtype() == DType::bool_);
  UOp v = valid(x, x < 4);
  CHECK(v.op() == Ops::WHERE);
  CHECK(v.src(2).arg().is_invalid());
  CHECK(v.dtype() == DType::weakint);
}

TEST_CASE("range_axis: a RANGE's axis type, nullopt for another op or a malformed arg") {
  Arena a;
  const UOp r = range(a, 4, 0, AxisType::LOOP);
  CHECK(range_axis(r) == AxisType::LOOP);
  CHECK(range_axis(a.make(Ops::RANGE, DType::weakint, {literal(a, 4)}, Arg::tuple_of(3, 1, AxisType::UPCAST))) ==
        AxisType::UPCAST);
  CHECK_FALSE(range_axis(literal(a, 4)).has_value());
  CHECK_FALSE(range_axis(a.make(Ops::RANGE, DType::weakint, {literal(a, 4)}, Arg::tuple_of(AxisType::LOOP))).has_value());
  CHECK_FALSE(range_axis(a.make(Ops::RANGE, DType::weakint, {literal(a, 4)}, Arg::integer(0))).has_value());
}

TEST_CASE("variable: an ALU PARAM with bounds and a name, numbered later; equal variables are one node") {
  Arena a;
  const UOp n = variable(a, "n", 1, 64);
  CHECK(n.op() == Ops::PARAM);
  CHECK(n.dtype() == DType::weakint);
  CHECK(n.addrspace() == AddrSpace::ALU);
  CHECK(n.vmin() == 1);
  CHECK(n.vmax() == 64);
  const ParamArg p = ParamArg::from(n.arg());
  CHECK(p.slot == -1);
  CHECK(p.name.view() == "n");
  CHECK(variable(a, "n", 1, 64) == n);
  CHECK(variable(a, "n", 1, 32) != n);
  CHECK(variable(a, "m", 1, 64) != n);
  const UOp i = variable(a, "i", -3, 3, DType::int32);
  CHECK(i.dtype() == DType::int32);
  CHECK(i.vmin() == -3);
  CHECK(((n * 2 + 1).vmax()) == 129);
  CHECK_THROWS_WITH_AS(variable(a, "", 0, 1), doctest::Contains("variable(): a variable needs a name"), uopcg::error);
  CHECK_THROWS_WITH_AS(variable(a, "k", 2, 1), doctest::Contains("empty bounds for variable k"), uopcg::error);
  CHECK_THROWS_WITH_AS(variable(a, "f", 0, 1, DType::float32), doctest::Contains("variable f must have an integer dtype"),
                       uopcg::error);
}
