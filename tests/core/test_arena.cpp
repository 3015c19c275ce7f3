// The arena: hash-consing, handles, args, derived shape / address space / bounds, errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include <uopcg/core/arena.hpp>
#include <uopcg/core/builder.hpp>
#include <uopcg/core/graph.hpp>
#include <uopcg/core/print.hpp>

using namespace uopcg;

TEST_CASE("equal nodes are the same handle") {
  Arena a;
  UOp c1 = a.make(Ops::CONST, DType::weakint, {}, Arg(3));
  UOp c2 = a.make(Ops::CONST, DType::weakint, {}, Arg(3));
  UOp c3 = a.make(Ops::CONST, DType::int32, {}, Arg(3));
  CHECK(c1 == c2);
  CHECK(c1.id() == c2.id());
  CHECK(c1 != c3);
  UOp add1 = a.make(Ops::ADD, DType::weakint, {c1, c3});
  UOp add2 = a.make(Ops::ADD, DType::weakint, {c2, c3});
  UOp add3 = a.make(Ops::ADD, DType::weakint, {c3, c1});
  CHECK(add1 == add2);
  CHECK(add1 != add3);  // source order is part of identity
  CHECK(a.size() == 4);
  // a tag makes a node distinct from its untagged twin
  UOp tagged = a.make(Ops::ADD, DType::weakint, {c1, c3}, Arg(), Arg::string("mergeable"));
  CHECK(tagged != add1);
  CHECK(tagged.tag().as_string() == "mergeable");
  CHECK(with_tag(tagged, Arg()) == add1);
}

TEST_CASE("const args: NaN is unique, -0.0 and 0.0 are distinct, kinds are distinct") {
  Arena a;
  double nan1 = std::numeric_limits<double>::quiet_NaN();
  double nan2 = -std::numeric_limits<double>::quiet_NaN();
  CHECK(const_(a, DType::float32, Arg(nan1)) == const_(a, DType::float32, Arg(nan2)));
  CHECK(const_(a, DType::float32, Arg(0.0)) != const_(a, DType::float32, Arg(-0.0)));
  CHECK(const_(a, DType::int32, Arg(1)) != const_(a, DType::int32, Arg::boolean(true)));
  // but pattern (Python) equality treats 0, 0.0, -0.0 and False alike
  CHECK(Arg(0).py_equal(Arg(-0.0)));
  CHECK(Arg(1).py_equal(Arg::boolean(true)));
  CHECK(Arg(1.0).py_equal(Arg(1)));
  CHECK_FALSE(Arg(1).py_equal(Arg(2)));
  CHECK(Arg::tuple_of(1, 2).py_equal(Arg::tuple_of(1.0, 2)));
  // the number forms the matcher's constant tests use agree with it
  CHECK(Arg::boolean(true).py_equal(std::int64_t{1}));
  CHECK(Arg(-0.0).py_equal(std::int64_t{0}));
  CHECK(Arg(2).py_equal(2.0));
  CHECK(Arg::uinteger(UINT64_MAX).py_equal(Arg::uinteger(UINT64_MAX)));
  CHECK_FALSE(Arg::uinteger(UINT64_MAX).py_equal(std::int64_t{-1}));
  CHECK_FALSE(Arg::string("2").py_equal(std::int64_t{2}));
  CHECK(Arg(std::numeric_limits<double>::infinity()).as_float() > 1e308);
}

TEST_CASE("arg kinds round-trip through their typed views") {
  ParamArg p;
  p.slot = 3;
  p.dtype = DType::float16;
  p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{0, 10};
  p.has_name = true;
  p.name = "n";
  p.addrspace = AddrSpace::LOCAL;
  p.device = Arg::string("CL");
  Arg pa = p.to_arg();
  ParamArg q = ParamArg::from(pa);
  CHECK(q.slot == 3);
  CHECK(q.dtype == DType::float16);
  CHECK(q.vmin_vmax->second == 10);
  CHECK(q.name == "n");
  CHECK(*q.addrspace == AddrSpace::LOCAL);
  CHECK(q.to_arg() == pa);

  KernelInfo k;
  k.name = "r\x1b[90m_\x1b[0m16";
  k.applied_opts.push_back(Opt{OptOps::GROUPTOP, 0, Arg(16)});
  KernelInfo k2 = KernelInfo::from(k.to_arg());
  CHECK(k2.applied_opts.size() == 1);
  CHECK(k2.applied_opts[0].op == OptOps::GROUPTOP);
  CHECK(function_name(k2.name.view()) == "r_16");
  CHECK(function_name("a-b") == "a2Db");

  BufferizeOpts b{Arg(2), AddrSpace::LOCAL, false};
  CHECK(BufferizeOpts::from(b.to_arg()).addrspace == AddrSpace::LOCAL);
}

TEST_CASE("wrong arg kind is a clear error") {
  Arg a = Arg::string("gidx0");
  CHECK_THROWS_WITH_AS(a.as_int(), "Arg: expected int, found str", uopcg::error);
  CHECK_THROWS_AS(ParamArg::from(Arg(3)), uopcg::error);
}

TEST_CASE("derived shapes follow the snapshot") {
  Arena a;
  UOp buf = param(a, 0, DType::float32, 64);
  CHECK(buf.shape() == std::initializer_list<std::int64_t>{64});
  CHECK(buf.addrspace() == AddrSpace::GLOBAL);
  UOp r = range(a, 16, 0, AxisType::LOOP);
  UOp idx = index(buf, r);
  CHECK(idx.shape() == std::initializer_list<std::int64_t>{});
  CHECK(idx.addrspace() == AddrSpace::GLOBAL);
  UOp ld = load(idx);
  CHECK(ld.addrspace() == AddrSpace::ALU);
  UOp v4 = stack(ld, ld, ld, ld);
  CHECK(v4.shape() == std::initializer_list<std::int64_t>{4});
  CHECK(index(v4, literal(a, 2)).shape() == std::initializer_list<std::int64_t>{});
  // broadcasting (right-aligned, size-1 axes stretch)
  UOp m = a.make(Ops::RESHAPE, DType::float32, {v4, stack(literal(a, 4), literal(a, 1))});
  CHECK(m.shape() == std::initializer_list<std::int64_t>{4, 1});
  UOp b = a.make(Ops::ADD, DType::float32, {m, v4});
  CHECK(b.shape() == std::initializer_list<std::int64_t>{4, 4});
  UOp e = a.make(Ops::EXPAND, DType::float32, {v4, stack(literal(a, 3), literal(a, 2))});
  CHECK(e.shape() == std::initializer_list<std::int64_t>{3, 2, 4});
  UOp p = a.make(Ops::PERMUTE, DType::float32, {e}, Arg::tuple_of(2, 0, 1));
  CHECK(p.shape() == std::initializer_list<std::int64_t>{4, 3, 2});
  // horizontal reduce drops the leading axes
  UOp red = a.make(Ops::REDUCE, DType::float32, {p}, Arg::tuple_of(Ops::ADD, 2));
  CHECK(red.shape() == std::initializer_list<std::int64_t>{2});
  // statements have no shape; mismatched broadcasts are ill-formed, not a crash
  CHECK_FALSE(sink(store(idx, ld)).shape().has_value());
  UOp bad = a.make(Ops::ADD, DType::float32, {v4, stack(ld, ld, ld)});
  CHECK(bad.shape().ill_formed());
  // STAGE: one axis per range (bound = vmax + 1), then the value's shape
  UOp st = stage(ld, AddrSpace::LOCAL, r);
  CHECK(st.shape() == std::initializer_list<std::int64_t>{16});
  // BITCAST rescales the last axis
  UOp bc = bitcast(v4, DType::float16);
  CHECK(bc.shape() == std::initializer_list<std::int64_t>{8});
}

TEST_CASE("address space: common of sources, or none when they disagree") {
  Arena a;
  UOp g = index(param(a, 0, DType::float32, 8), literal(a, 0));
  UOp l = index(buffer(a, 0, DType::float32, 8, AddrSpace::LOCAL), literal(a, 0));
  CHECK((g + 1.0).addrspace() == AddrSpace::GLOBAL);
  CHECK_FALSE((g + l).addrspace().has_value());
  CHECK_FALSE(literal(a, 1).addrspace().has_value());
  CHECK(cast(g, DType::float16).addrspace() == AddrSpace::GLOBAL);
}

TEST_CASE("value bounds of index math") {
  Arena a;
  UOp r = range(a, 16, 0, AxisType::LOOP);
  UOp s = range(a, 4, 1, AxisType::LOOP);
  CHECK(r.vmin() == 0);
  CHECK(r.vmax() == 15);
  UOp e = r * 4 + s;
  CHECK(e.vmax() == 63);
  CHECK((e % 8).vmax() == 7);
  CHECK(floordiv(e, literal(a, 4)).vmax() == 15);
  CHECK((r - 20).vmin() == -20);
  CHECK((r < 100).vmin() == 1);  // always true
  CHECK(cast(r, DType::int8).vmax() == 15);
  CHECK(literal(a, true).vmax() == 1);
}

TEST_CASE("sources out of range and foreign handles are errors") {
  Arena a, b;
  UOp c = literal(a, 1);
  CHECK_THROWS_WITH_AS(c.src(0), doctest::Contains("source index 0 out of range"), uopcg::error);
  UOp foreign = literal(b, 1);
  CHECK_THROWS_WITH_AS(a.make(Ops::ADD, DType::weakint, {c, foreign}),
                       doctest::Contains("another arena"), uopcg::error);
}

TEST_CASE("dtype lattice") {
  CHECK(least_upper_dtype(DType::weakint, DType::float32) == DType::float32);
  CHECK(least_upper_dtype(DType::int32, DType::uint32) == DType::int64);
  CHECK(least_upper_dtype(DType::int8, DType::uint8) == DType::int16);
  CHECK(least_upper_dtype(DType::float16, DType::bfloat16) == DType::float32);
  CHECK(least_upper_dtype(DType::bool_, DType::int8) == DType::int8);
  CHECK(least_upper_dtype(DType::weakfloat, DType::float16) == DType::float16);
  CHECK(least_upper_dtype(DType::weakint, DType::weakfloat) == DType::weakfloat);
  CHECK(name(DType::int8) == "char");
  CHECK(itemsize(DType::bfloat16) == 2);
  DType d{};
  CHECK(dtype_from_name("half", d));
  CHECK(d == DType::float16);
  CHECK_FALSE(dtype_from_name("float4", d));
}

TEST_CASE("op groups") {
  CHECK(GroupOp::Commutative.contains(Ops::ADD));
  CHECK_FALSE(GroupOp::Commutative.contains(Ops::SUB));
  CHECK(GroupOp::ALU.contains(Ops::WHERE));
  CHECK(GroupOp::Elementwise.contains(Ops::CAST));
  CHECK(GroupOp::Movement.size() == 6);
  CHECK((GroupOp::Unary | GroupOp::Binary | GroupOp::Ternary) == GroupOp::ALU);
  CHECK(static_cast<int>(Ops::REDUCE) == 78);
  Ops o{};
  CHECK(op_from_name("FLOORMOD", o));
  CHECK(o == Ops::FLOORMOD);
  CHECK_FALSE(op_from_name("NOPE", o));
}

TEST_CASE("shape derivation never overflows or throws on hostile sizes") {
  Arena a;
  // BITCAST of a 2^62-element buffer to a narrower type would overflow: ill-formed, not UB
  UOp huge = param(a, 0, DType::float32, std::int64_t(1) << 62);
  CHECK(huge.shape() == std::initializer_list<std::int64_t>{std::int64_t(1) << 62});
  CHECK(bitcast(huge, DType::float16).shape().ill_formed());
  UOp big = param(a, 1, DType::float32, INT64_MAX);
  UOp pad = a.make(Ops::PAD, DType::float32, {big, literal(a, 0), literal(a, 2)});
  CHECK(pad.shape().ill_formed());
  // a size above INT64_MAX is not a shape: the node is built (and stays unique), its shape ill-formed
  UOp usize = const_(a, DType::weakint, Arg::uinteger(~std::uint64_t(0)));
  ParamArg p;
  p.slot = 2;
  UOp odd = a.make(Ops::PARAM, DType::float32, {usize}, p.to_arg());
  CHECK(odd.shape().ill_formed());
  CHECK(a.make(Ops::PARAM, DType::float32, {usize}, p.to_arg()) == odd);
  // a permutation that is not a tuple of ints
  UOp v = stack(literal(a, 1.0), literal(a, 2.0));
  CHECK(a.make(Ops::PERMUTE, DType::float32, {v}, Arg::tuple_of(Arg::string("x"))).shape().ill_formed());
  // a long chain of CASTs as a size does not recurse
  UOp sz = literal(a, 8);
  for (int i = 0; i < 100000; ++i) sz = a.make(Ops::CAST, DType::int32, {sz}, Arg::dtype(DType::int32));
  CHECK(a.make(Ops::BUFFER, DType::float32, {sz}, p.to_arg()).shape() == std::initializer_list<std::int64_t>{8});
}

TEST_CASE("may_contain: the per-node summary of the ops below a node") {
  Arena a;
  UOp r = range(a, 16, 0, AxisType::LOOP);
  UOp idx = r * 4 + 1;
  UOp buf = a.make(Ops::PARAM, DType::float32, {}, Arg());
  UOp ld = a.make(Ops::LOAD, DType::float32, {a.make(Ops::INDEX, DType::float32, {buf, idx})});
  UOp sum = ld + ld;
  CHECK(a.may_contain(idx.id(), OpSet{Ops::RANGE}));
  CHECK(a.may_contain(idx.id(), OpSet{Ops::CONST, Ops::WHERE}));
  CHECK_FALSE(a.may_contain(idx.id(), OpSet{Ops::LOAD, Ops::INDEX, Ops::PARAM}));
  CHECK(a.may_contain(sum.id(), OpSet{Ops::PARAM}));  // three levels down
  CHECK(a.may_contain(sum.id(), OpSet{Ops::ADD}));     // the node itself
  CHECK_FALSE(a.may_contain(r.id(), OpSet{Ops::MUL}));
  CHECK_FALSE(a.may_contain(sum.id(), OpSet{}));
  // a superset test: every op that is there is reported (ops 64 and up share bits, so a clear bit
  // is the only exact answer)
  for (UOp n : toposort(sum))
    for (UOp m : toposort(n)) CHECK(a.may_contain(n.id(), OpSet{m.op()}));
}

TEST_CASE("clear: the arena is as new (ids from 0, nothing interned, caches empty), its memory kept") {
  Arena a;
  auto build = [](Arena& ar, int salt) {
    UOp r = range(ar, 16 + salt, 0, AxisType::LOOP);
    UOp buf = ar.make(Ops::PARAM, DType::float32, {}, Arg(0));
    UOp idx = ar.make(Ops::INDEX, DType::float32, {buf, r * 4 + salt});
    UOp st = ar.make(Ops::STORE, DType::void_, {idx, ar.make(Ops::CONST, DType::float32, {}, Arg(1.5))});
    UOp end = ar.make(Ops::END, DType::void_, {st, r});
    for (int i = 0; i < 300; ++i) ar.make(Ops::CONST, DType::weakint, {}, Arg(1000 + i + salt));  // > a chunk of args
    return end;
  };
  UOp first = build(a, 0);
  CHECK(ranges(first.src(0)).size() == 1);  // fills the range cache
  CHECK_FALSE(backward_slice_ids(first).empty());
  a.clear();
  CHECK(a.size() == 0);
  Arena b;
  UOp in_a = build(a, 7), in_b = build(b, 7);
  CHECK(a.size() == b.size());
  CHECK(in_a.id() == in_b.id());
  CHECK(print_graph(in_a).str() == print_graph(in_b).str());
  // cached properties are those of the new nodes, not of the ones that had the same ids
  REQUIRE(ranges(in_a.src(0)).size() == 1);
  CHECK(ranges(in_a.src(0))[0].src(0).arg().as_int() == 23);
  CHECK(backward_slice_ids(in_a).size() == backward_slice_ids(in_b).size());
  CHECK(in_a.src(0).src(1).arg().as_float() == 1.5);
  // nothing of the first graph is found again: a node that only it had is new
  const std::size_t n = a.size();
  CHECK(a.make(Ops::CONST, DType::weakint, {}, Arg(1000)).id() == n);  // built by the first graph (salt 0) only
  CHECK(a.size() == n + 1);
  // the op summaries are the new nodes' (an array of their own, emptied by clear()): in a new
  // arena, the ids of the graph below held CONSTs first
  Arena c;
  for (int i = 0; i < 40; ++i) c.make(Ops::CONST, DType::int32, {}, Arg(i));
  c.clear();
  UOp again = build(c, 3);
  for (UOp u : toposort(again)) {
    CHECK(c.may_contain(u.id(), OpSet{u.op()}));
    CHECK(c.may_contain(u.id(), OpSet{Ops::CONST}) == (u.op() == Ops::CONST || u.nsrc() > 0));
  }
}

TEST_CASE("scratch maps: an untracked range is empty again when the map is lent again") {
  Arena a;
  std::vector<UOp> nodes;
  for (int i = 0; i < 200; ++i) nodes.push_back(a.make(Ops::CONST, DType::int32, {}, Arg(i)));
  const node_id lo = nodes[20].id(), hi = nodes[150].id();
  {
    Arena::scratch_map m(a);
    m.cover_arena();
    m.untracked(lo, hi);
    for (node_id id = lo; id <= hi; id += 3) m.set_untracked(id, nodes[0].id());
    m.set_unchecked(nodes[5].id(), nodes[1].id());  // tracked, beside the range
    m.set_unchecked(hi, nodes[2].id());               // tracked, inside it
    CHECK(m.get(lo) == nodes[0].id());
    CHECK(m.get(hi) == nodes[2].id());
  }
  {
    Arena::scratch_map m(a);  // the same storage, from the pool
    for (UOp u : nodes) CHECK(m.get(u.id()) == no_node);
    m.cover_arena();
    m.set_unchecked(nodes[199].id(), nodes[3].id());
  }
  Arena::scratch_map m(a);
  for (UOp u : nodes) CHECK(m.get(u.id()) == no_node);
}

TEST_CASE("scratch maps: a map lent again is empty, also after many sets, a regrowth and a nested loan") {
  Arena a;
  std::vector<UOp> nodes;
  for (int i = 0; i < 300; ++i) nodes.push_back(a.make(Ops::CONST, DType::int32, {}, Arg(i)));
  for (int round = 0; round < 3; ++round) {
    {
      Arena::scratch_map m(a);
      // every slot reads empty: nothing of an earlier loan shows through
      for (UOp u : nodes) CHECK(m.get(u.id()) == no_node);
      m.cover_arena();
      for (std::size_t i = 0; i < nodes.size(); i += round + 1) m.set_unchecked(nodes[i].id(), nodes[(i + 1) % 300].id());
      m.set(nodes[0].id(), nodes[5].id());  // set again: still one note of it
      CHECK(m.get(nodes[0].id()) == nodes[5].id());
      {
        Arena::scratch_map inner(a);  // lent while the outer one is out: a different, empty map
        CHECK(inner.get(nodes[0].id()) == no_node);
        inner.set(nodes[1].id(), nodes[2].id());
        // the arena grows while maps are lent out; set() grows the map to reach the new node
        nodes.push_back(a.make(Ops::CONST, DType::int32, {}, Arg(1000 + round)));
        inner.set(nodes.back().id(), nodes[3].id());
        CHECK(inner.get(nodes.back().id()) == nodes[3].id());
      }
      CHECK(m.get(nodes[1].id()) == (round == 0 ? nodes[2].id() : no_node));
      CHECK(m.get(nodes.back().id()) == no_node);
    }
  }
}
