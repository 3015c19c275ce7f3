// The "vector" stage group against the corpus stage dumps (add gpudims, expand broadcast / add
// loads, devectorize2, memory_coalescing, add images) and graph-level unit tests of the behaviour
// the corpus does not reach.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <uopcg/codegen/add_loads.hpp>
#include <uopcg/codegen/coalesce.hpp>
#include <uopcg/codegen/devectorize.hpp>
#include <uopcg/codegen/gpudims.hpp>

#include "../stage_harness.hpp"

using namespace uopcg;

namespace {

using uopcg_test::check_corpus_stage;

}  // namespace

TEST_CASE("corpus: add gpudims") {
  check_corpus_stage("add gpudims", [](UOp u, const Target& t) { return codegen::add_gpudims(u, t); });
}

TEST_CASE("corpus: expand broadcast / add loads") {
  check_corpus_stage("*** expand broadcast / add loads",
                     [](UOp u, const Target& t) { return codegen::expand_broadcast_add_loads(u, t); });
}

TEST_CASE("corpus: devectorize2") {
  check_corpus_stage("devectorize2", [](UOp u, const Target& t) { return codegen::devectorize2(u, t); });
}

TEST_CASE("corpus: memory_coalescing") {
  check_corpus_stage("memory_coalescing", [](UOp u, const Target& t) { return codegen::memory_coalescing(u, t); });
}

TEST_CASE("corpus: add images") {
  check_corpus_stage("add images", [](UOp u, const Target& t) { return codegen::add_images(u, t); });
}

// --- graph-level tests ------------------------------------------------------------------------------

namespace {

std::vector<UOp> specials_of(UOp root) {
  std::vector<UOp> out;
  for (UOp u : toposort(root))
    if (u.op() == Ops::SPECIAL) out.push_back(u);
  return out;
}
bool has_special(UOp root, std::string_view name, std::int64_t size) {
  for (UOp u : specials_of(root))
    if (u.arg().as_string() == name && u.src(0).arg().as_int() == size) return true;
  return false;
}
/// STORE(INDEX(out, sum of ranges*strides), 1.0) over the given ranges.
UOp store_kernel(Arena& a, const std::vector<UOp>& ranges, std::int64_t out_size) {
  UOp out = param(a, 0, DType::float32, out_size);
  UOp idx = literal(a, 0);
  for (UOp r : ranges) idx = idx * r.src(0).arg().as_int() + r;
  return sink({end(store(index(out, idx), literal(a, 1.0)), ranges)});
}

}  // namespace

TEST_CASE("add gpudims: one SPECIAL per axis, the last global axis is gidx0, locals in order") {
  Arena a;
  UOp g0 = range(a, 8, 0, AxisType::GLOBAL), g1 = range(a, 16, 1, AxisType::GLOBAL);
  UOp l0 = range(a, 4, 2, AxisType::LOCAL), l1 = range(a, 2, 3, AxisType::LOCAL);
  UOp k = store_kernel(a, {g0, g1, l0, l1}, 8 * 16 * 4 * 2);
  UOp r = codegen::add_gpudims(k, Target::pocl());
  CHECK(has_special(r, "gidx0", 16));
  CHECK(has_special(r, "gidx1", 8));
  CHECK(has_special(r, "lidx0", 4));
  CHECK(has_special(r, "lidx1", 2));
  for (UOp u : toposort(r)) CHECK(u.op() != Ops::RANGE);
  // idempotent: a kernel that already has SPECIALs is left alone
  CHECK(codegen::add_gpudims(r, Target::pocl()) == r);
}

TEST_CASE("add gpudims: axes sized by variables get one SPECIAL each, without tinygrad's div/mod") {
  // tinygrad builds every id as flat // prod(dims[i+1:]) % dims[i] and leaves `gidx0 + gidx1//n`
  // and `gidx1 % n` where a size is a variable; each SPECIAL spans its axis exactly, so those are
  // the SPECIALs themselves (pipeline divergence P20)
  Arena a;
  auto variable = [&](std::string_view nm, std::int64_t lo, std::int64_t hi) {
    ParamArg v;
    v.dtype = DType::weakint;
    v.vmin_vmax = std::pair<std::int64_t, std::int64_t>{lo, hi};
    v.has_name = true;
    v.name = nm;
    v.addrspace = AddrSpace::ALU;
    return a.make(Ops::PARAM, DType::weakint, {}, v.to_arg());
  };
  UOp n = variable("n", 1, 64), m = variable("m", 2, 40);
  UOp g0 = range(n, 0, AxisType::GLOBAL), g1 = range(m, 1, AxisType::GLOBAL);
  UOp out = param(a, 0, DType::float32, 64 * 40);
  UOp k = sink({end(store(index(out, g0 * 40 + g1), literal(a, 1.0)), {g0, g1})});
  UOp r = codegen::add_gpudims(k, Target::pocl());
  const std::vector<UOp> sp = specials_of(r);
  REQUIRE(sp.size() == 2);
  for (UOp s : sp) CHECK((s.src(0) == (s.arg().as_string() == "gidx0" ? m : n)));
  for (UOp u : toposort(r)) {
    CHECK(u.op() != Ops::RANGE);
    CHECK_FALSE(u.in(OpSet{Ops::FLOORDIV, Ops::FLOORMOD, Ops::CDIV, Ops::CMOD}));
  }
}

TEST_CASE("add gpudims: more than three global axes are merged, oversized axes split") {
  Arena a;
  UOp g0 = range(a, 2, 0, AxisType::GLOBAL), g1 = range(a, 3, 1, AxisType::GLOBAL);
  UOp g2 = range(a, 5, 2, AxisType::GLOBAL), g3 = range(a, 7, 3, AxisType::GLOBAL);
  UOp r = codegen::add_gpudims(store_kernel(a, {g0, g1, g2, g3}, 210), Target::pocl());
  // reversed (7, 5, 3, 2): the first pair that fits is merged -> (35, 3, 2)
  CHECK(specials_of(r).size() == 3);
  CHECK(has_special(r, "gidx0", 35));
  CHECK(has_special(r, "gidx1", 3));
  CHECK(has_special(r, "gidx2", 2));

  Arena b;
  Target t = Target::pocl();
  t.renderer.global_max = {16, 16, 16};
  UOp big = range(b, 64, 0, AxisType::GLOBAL);
  UOp s = codegen::add_gpudims(store_kernel(b, {big}, 64), t);
  // 64 > 16: split by 2 into the next dim until it fits -> (16, 4)
  CHECK(has_special(s, "gidx0", 16));
  CHECK(has_special(s, "gidx1", 4));

  Arena c;
  UOp prime = range(c, 17, 0, AxisType::GLOBAL);
  CHECK_THROWS_WITH_AS(codegen::add_gpudims(store_kernel(c, {prime}, 17), t),
                       doctest::Contains("has no divisor to split by"), uopcg::error);
}

TEST_CASE("add gpudims: a global store that misses local axes is gated on them being 0") {
  Arena a;
  UOp g = range(a, 8, 0, AxisType::GLOBAL);
  UOp l0 = range(a, 4, 1, AxisType::LOCAL), l1 = range(a, 2, 2, AxisType::GROUP_REDUCE);
  UOp out = param(a, 0, DType::float32, 8);
  UOp k = sink({end(store(index(out, g), literal(a, 1.0)), g, l0, l1)});
  UOp r = codegen::add_gpudims(k, Target::pocl());
  UOp st;
  for (UOp u : toposort(r))
    if (u.op() == Ops::STORE) st = u;
  REQUIRE(st);
  UOp idx = st.src(0).src(1);
  REQUIRE(idx.op() == Ops::WHERE);
  CHECK(idx.src(0).op() == Ops::MUL);  // (lidx0 == 0) * (lidx1 == 0)
  CHECK(idx.src(0).dtype() == DType::bool_);
  CHECK(symbolic::is_invalid(idx.src(2)));
}

TEST_CASE("add gpudims: without locals the global axes are idx<i>; local axes are then an error") {
  Arena a;
  Target t = Target::pocl();
  t.use_locals = false;
  UOp g0 = range(a, 8, 0, AxisType::GLOBAL), g1 = range(a, 4, 1, AxisType::GLOBAL);
  UOp r = codegen::add_gpudims(store_kernel(a, {g0, g1}, 32), t);
  CHECK(has_special(r, "idx0", 4));
  CHECK(has_special(r, "idx1", 8));
  Arena b;
  UOp l = range(b, 4, 0, AxisType::LOCAL);
  CHECK_THROWS_WITH_AS(codegen::add_gpudims(store_kernel(b, {l}, 4), t),
                       doctest::Contains("does not use local memory"), uopcg::error);
}

TEST_CASE("add gpudims: a DEVICE range becomes the _device_num variable and leaves its END") {
  Arena a;
  UOp d = range(a, 2, 0, AxisType::DEVICE);
  UOp g = range(a, 8, 1, AxisType::GLOBAL);
  UOp r = codegen::add_gpudims(store_kernel(a, {d, g}, 16), Target::pocl());
  bool var = false;
  for (UOp u : toposort(r)) {
    CHECK(u.op() != Ops::RANGE);
    if (u.op() == Ops::PARAM && u.arg()[4].is_none() == false) var = u.arg()[4].as_string() == "_device_num";
    if (u.op() == Ops::END) CHECK(u.nsrc() == 2);  // the STORE and gidx0
  }
  CHECK(var);
}

TEST_CASE("expand: squeeze the growing axes, prepend them with one EXPAND, permute back") {
  Arena a;
  UOp x = symbolic::mops::reshape(make_node(a, Ops::STACK, std::vector<UOp>{literal(a, 0), literal(a, 1)}), {2, 1, 1});
  UOp e = codegen::expand_to(x, {2, 4, 1});
  REQUIRE(e.op() == Ops::PERMUTE);
  CHECK(e.arg() == Arg::tuple_of(1, 0, 2));
  CHECK(e.src(0).op() == Ops::EXPAND);
  CHECK(e.src(0).src(0).op() == Ops::RESHAPE);
  CHECK(e.shape() == std::initializer_list<std::int64_t>{2, 4, 1});
  // a scalar only gets new leading axes; an equal shape is unchanged
  UOp s = codegen::expand_to(literal(a, 3), {2, 1, 1});
  CHECK(s.op() == Ops::EXPAND);
  CHECK(s.shape() == std::initializer_list<std::int64_t>{2, 1, 1});
  CHECK(codegen::expand_to(x, {2, 1, 1}) == x);
  CHECK_THROWS_AS(codegen::expand_to(x, {3, 1, 1}), uopcg::error);
}

TEST_CASE("expand broadcast / add loads: broadcasts explicit, memory operands loaded") {
  Arena a;
  UOp buf = param(a, 0, DType::int32, 16);
  UOp lanes = make_node(a, Ops::STACK, std::vector<UOp>{literal(a, 0), literal(a, 1), literal(a, 2), literal(a, 3)});
  UOp addr = index(buf, lanes);  // (4,) int memory
  UOp v = addr + literal(a, 1);  // (4,) + scalar
  UOp out = param(a, 1, DType::int32, 16);
  UOp k = sink({store(index(out, lanes), v)});
  UOp r = codegen::expand_broadcast_add_loads(k, Target::pocl());
  UOp add;
  for (UOp u : toposort(r))
    if (u.op() == Ops::ADD && u.dtype() == DType::int32) add = u;
  REQUIRE(add);
  CHECK(add.src(0).op() == Ops::LOAD);
  CHECK(add.src(1).op() == Ops::EXPAND);
  CHECK(add.src(1).shape() == std::initializer_list<std::int64_t>{4});
}

TEST_CASE("add loads: a shape-changing BITCAST of memory is not loaded, its consumer loads it") {
  Arena a;
  UOp buf = param(a, 0, DType::float32, 4);
  UOp lanes = make_node(a, Ops::STACK, std::vector<UOp>{literal(a, 0), literal(a, 1)});
  UOp addr = index(buf, lanes);              // (2,) float memory
  UOp bc = bitcast(addr, DType::float16);    // (4,) half view of the same bytes
  REQUIRE(bc.shape() == std::initializer_list<std::int64_t>{4});
  UOp neg = bc * literal(a, -1.0);
  UOp r = codegen::expand_broadcast_add_loads(sink({store(index(param(a, 1, DType::float16, 4), make_node(a, Ops::STACK, std::vector<UOp>{literal(a, 0), literal(a, 1), literal(a, 2), literal(a, 3)})), neg)}), Target::pocl());
  bool bitcast_of_memory = false, load_of_bitcast = false;
  for (UOp u : toposort(r)) {
    if (u.op() == Ops::BITCAST) bitcast_of_memory = u.src(0).op() == Ops::INDEX;
    if (u.op() == Ops::LOAD) load_of_bitcast = load_of_bitcast || u.src(0).op() == Ops::BITCAST;
  }
  CHECK(bitcast_of_memory);
  CHECK(load_of_bitcast);
  // a same-size BITCAST is a value op: its memory source is loaded
  Arena b;
  UOp bb = param(b, 0, DType::float32, 4);
  UOp same = bitcast(index(bb, literal(b, 0)), DType::int32);
  UOp r2 = codegen::expand_broadcast_add_loads(sink({store(index(param(b, 1, DType::int32, 4), literal(b, 0)), same)}), Target::pocl());
  bool loaded = false;
  for (UOp u : toposort(r2))
    if (u.op() == Ops::BITCAST) loaded = u.src(0).op() == Ops::LOAD;
  CHECK(loaded);
}

TEST_CASE("broadcast_and_devec_wmma: one WMMA per batch coordinate, stacked back") {
  Arena a;
  auto vec = [&](int n, double base) {
    std::vector<UOp> v;
    for (int i = 0; i < n; ++i) v.push_back(const_(a, DType::float32, Arg::floating(base + i)));
    return make_node(a, Ops::STACK, v);
  };
  UOp A = symbolic::mops::reshape(vec(8, 0), {2, 4});  // batch (2,)
  UOp B = vec(4, 10);                           // batch ()
  UOp C = vec(2, 20);                           // batch ()
  UOp w = a.make(Ops::WMMA, DType::float32, {A, B, C}, Arg::tuple_of(1, 2, 3));
  REQUIRE(w.shape() == std::initializer_list<std::int64_t>{2, 2});
  auto r = codegen::broadcast_and_devec_wmma(w);
  REQUIRE(r);
  CHECK(r->shape() == std::initializer_list<std::int64_t>{2, 2});
  int wmmas = 0;
  for (UOp u : toposort(*r))
    if (u.op() == Ops::WMMA) {
      ++wmmas;
      CHECK(u.shape() == std::initializer_list<std::int64_t>{2});
      CHECK(u.arg() == w.arg());
    }
  CHECK(wmmas == 2);
  // equal batch shapes: nothing to do
  UOp w2 = a.make(Ops::WMMA, DType::float32, {B, B, C}, Arg::tuple_of(1, 2, 3));
  CHECK_FALSE(codegen::broadcast_and_devec_wmma(w2));
}

TEST_CASE("do_devectorize: per-element nodes; an unpacked broadcast is refused") {
  Arena a;
  UOp x = make_node(a, Ops::STACK, std::vector<UOp>{literal(a, 1.0), literal(a, 2.0)});
  UOp y = make_node(a, Ops::STACK, std::vector<UOp>{literal(a, 3.0), literal(a, 4.0)});
  auto r = codegen::do_devectorize(x + y);
  REQUIRE(r);
  CHECK(r->op() == Ops::STACK);
  CHECK(r->src(0) == literal(a, 1.0) + literal(a, 3.0));
  CHECK_FALSE(codegen::do_devectorize(x + literal(a, 1.0)));  // the scalar was not broadcast
  CHECK_FALSE(codegen::do_devectorize(literal(a, 1.0) + literal(a, 2.0)));
  // devectorize2 collapses a vector store into scalar stores
  UOp buf = param(a, 0, DType::float32, 2);
  UOp st = store(index(buf, make_node(a, Ops::STACK, std::vector<UOp>{literal(a, 0), literal(a, 1)})), x);
  UOp out = codegen::devectorize2(sink({st}), Target::pocl());
  int stores = 0;
  for (UOp u : toposort(out))
    if (u.op() == Ops::STORE) {
      ++stores;
      CHECK(u.src(0).shape().size() == 0);
    }
  CHECK(stores == 2);
}

namespace {
/// Four scalar loads of buf[base + k] summed and stored to out[0].
UOp four_loads(Arena& a, DType dt, UOp base, std::int64_t first = 0) {
  UOp buf = param(a, 0, dt, 64);
  UOp acc;
  for (std::int64_t k = first; k < first + 4; ++k) {
    UOp i = k == 0 ? base : a.make(Ops::ADD, DType::weakint, {base, literal(a, k)});
    UOp ld = a.make(Ops::LOAD, dt, {index(buf, i)});
    acc = acc ? acc + ld : ld;
  }
  return sink({store(index(param(a, 1, dt, 1), literal(a, 0)), acc)});
}
int count_op(UOp r, Ops op) {
  int n = 0;
  for (UOp u : toposort(r)) n += u.op() == op;
  return n;
}
}  // namespace

TEST_CASE("memory coalescing: aligned runs widen, misaligned or unsupported ones do not") {
  Arena a;
  UOp g = special(a, 4, "gidx0");
  UOp base = g * literal(a, 4);
  UOp r = codegen::memory_coalescing(four_loads(a, DType::float32, base), Target::pocl());
  CHECK(count_op(r, Ops::SHRINK) == 1);
  Target off = Target::pocl();
  off.memory_coalescing = false;
  UOp k = four_loads(a, DType::float32, base);
  CHECK(codegen::memory_coalescing(k, off) == k);
  // base*4 + 1 is not provably 4- or 2-aligned: (1), then (2..3) as float2, then (4) alone
  Arena b;
  UOp base2 = special(b, 4, "gidx0") * literal(b, 4);
  UOp r2 = codegen::memory_coalescing(four_loads(b, DType::float32, base2, 1), Target::pocl());
  CHECK(count_op(r2, Ops::SHRINK) == 1);
  // char buffers are never widened
  Arena c;
  UOp base3 = special(c, 4, "gidx0") * literal(c, 4);
  UOp r3 = codegen::memory_coalescing(four_loads(c, DType::int8, base3), Target::pocl());
  CHECK(count_op(r3, Ops::SHRINK) == 0);
  // a target without float4 keeps scalar accesses
  Target nf = Target::pocl();
  nf.renderer.supports_float4 = false;
  Arena d;
  UOp base4 = special(d, 4, "gidx0") * literal(d, 4);
  CHECK(count_op(codegen::memory_coalescing(four_loads(d, DType::float32, base4), nf), Ops::SHRINK) == 0);
}

TEST_CASE("memory coalescing: a gated load is an error naming the node") {
  Arena a;
  UOp buf = param(a, 0, DType::float32, 4);
  UOp ld = load(index(buf, literal(a, 0)), literal(a, 0.0), literal(a, true));
  UOp k = sink({store(index(param(a, 1, DType::float32, 1), literal(a, 0)), ld)});
  CHECK_THROWS_WITH_AS(codegen::memory_coalescing(k, Target::pocl()), doctest::Contains("gated LOAD"), uopcg::error);
}

TEST_CASE("add images: a float -> half -> float round trip is kept (divergence P6)") {
  Arena a;
  UOp g = special(a, 16, "gidx0");
  UOp ld = load(index(param(a, 1, DType::float32, 16), g));
  UOp x = ld * const_like(ld, 3.0);
  auto kernel = [&](UOp value) { return sink(store(index(param(a, 0, DType::float32, 16), g), value)); };
  auto stored = [](UOp k) { return k.src(0).src(1); };
  // tinygrad's pm_simplify_add_image drops it in every kernel; the CAST to half rounds, on either target
  UOp trip = cast(cast(x, DType::float16), DType::float32);
  CHECK(stored(codegen::add_images(kernel(trip), Target::pocl())) == trip);
  CHECK(stored(codegen::add_images(kernel(trip), Target::opencl_fp16())) == trip);
}
