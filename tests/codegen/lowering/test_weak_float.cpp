// Stage 12 commits weak floats: a CAST to weakfloat, a STACK of literals, arithmetic on an arange, a
// comparison of weak floats and the REG buffer of a reduction over them all leave the stage with a
// concrete float dtype (float32 by default, a concrete peer's or CAST's dtype where one meets them),
// and the stage reports a weak dtype no rule commits, naming the node. Values are checked with the
// symbolic evaluator (OpenCL C semantics per dtype) against float32 / double arithmetic.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <uopcg/codegen/lower_index.hpp>
#include <uopcg/core/print.hpp>
#include <uopcg/symbolic/rule_tester.hpp>

using namespace uopcg;
namespace cg = uopcg::codegen;
namespace S = uopcg::symbolic;

namespace {

/// A scalar kernel variable of dtype dt (an ALU PARAM), with bounds for integers.
UOp variable(Arena& a, std::int64_t slot, DType dt, std::int64_t lo = 0, std::int64_t hi = -1) {
  ParamArg p;
  p.slot = slot;
  p.dtype = dt;
  p.addrspace = AddrSpace::ALU;
  if (lo <= hi) p.vmin_vmax = std::make_pair(lo, hi);
  return a.make(Ops::PARAM, dt, {}, p.to_arg());
}

UOp lower(UOp root) { return cg::lower_index_dtypes(sink(root), Target::pocl()); }

/// The nodes of `g` that keep a weak dtype (literals excepted).
std::vector<std::string> weak_nodes(UOp g) {
  std::vector<std::string> out;
  for (UOp u : toposort(g))
    if (is_weak(u.dtype()) && u.op() != Ops::CONST) out.push_back(to_string(u));
  return out;
}

/// The value stored by the first STORE into the kernel parameter `buf` in `g` (the stage rebuilds
/// the parameter: its size literal is lowered too).
UOp stored_into(UOp g, UOp buf) {
  const std::int64_t slot = ParamArg::from(buf.arg()).slot;
  for (UOp u : toposort(g))
    if (u.op() == Ops::STORE && u.src(0).op() == Ops::INDEX && u.src(0).src(0).op() == Ops::PARAM &&
        ParamArg::from(u.src(0).src(0).arg()).slot == slot)
      return u.src(1);
  FAIL("no store into the buffer");
  return UOp();
}

S::value eval(UOp root, const std::vector<std::pair<UOp, S::value>>& leaves) {
  S::tester::env e;
  for (const auto& [u, v] : leaves) e.leaves.push_back({u.id(), v});
  std::vector<S::value> memo;
  return S::tester::evaluate(root, e, memo).v;
}

}  // namespace

TEST_CASE("weak floats: a CAST to weakfloat (a uint8 image / 255.0) computes in float32") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 16);
  UOp x = variable(a, 1, DType::uint8, 0, 255);
  UOp r = range(a, 16, 0, AxisType::LOOP);
  UOp low = lower(end(store(index(out, r), cast(x, DType::weakfloat) * literal(a, 1.0 / 255.0)), r));
  CHECK(weak_nodes(low).empty());
  const UOp v = stored_into(low, out);
  CHECK(v.op() == Ops::MUL);
  CHECK(v.dtype() == DType::float32);
  CHECK(v.src(0) == cast(x, DType::float32));
  for (int k : {0, 1, 127, 200, 255})
    CHECK(eval(v, {{x, S::value::integer(k)}}).f == static_cast<double>(static_cast<float>(k) * static_cast<float>(1.0 / 255.0)));
}

TEST_CASE("weak floats: a STACK of literals (Tensor.zeros upcast) becomes a float32 STACK") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 16);
  UOp r = range(a, 4, 0, AxisType::LOOP);
  UOp zero = literal(a, 0.0);
  UOp window = a.make(Ops::SHRINK, DType::float32, {out, r * 4, literal(a, 4)});
  UOp low = lower(end(store(window, stack(zero, zero, zero, zero)), r));
  CHECK(weak_nodes(low).empty());
  bool found = false;
  for (UOp u : toposort(low))
    if (u.op() == Ops::STACK) {
      found = true;
      CHECK(u.dtype() == DType::float32);
      for (UOp s : u.srcs()) CHECK(s == const_(a, DType::float32, Arg::floating(0.0)));
    }
  CHECK(found);
}

// Found by the fuzz set (docs/model-differential.md): a cummax's padded MAX upcast by four lanes, whose
// first lane's WHERE folded to its literal arm, stores STACK(-inf, load, ...): the concrete STACK
// kept the weak literal lane and the renderer refused it.
TEST_CASE("weak floats: a weak literal lane of a concrete STACK commits at the STACK's dtype") {
  for (DType dt : {DType::float32, DType::float16}) {
    Arena a;
    UOp in = param(a, 0, dt, 16), out = param(a, 1, dt, 16);
    UOp r = range(a, 4, 0, AxisType::LOOP);
    UOp x = load(index(in, r * 4)), y = load(index(in, r * 4 + 1));
    UOp window = a.make(Ops::SHRINK, dt, {out, r * 4, literal(a, 4)});
    UOp lanes = a.make(Ops::STACK, dt, {literal(a, -INFINITY), x, y, literal(a, 0.5)});
    UOp low = lower(end(store(window, lanes), r));
    INFO(std::string(name(dt)));
    CHECK(weak_nodes(low).empty());
    int found = 0;
    for (UOp u : toposort(low)) {
      if (u.op() != Ops::STACK) continue;
      ++found;
      CHECK(u.dtype() == dt);
      for (UOp s : u.srcs()) CHECK(s.dtype() == dt);
      CHECK(u.src(0) == const_(a, dt, Arg::floating(-INFINITY)));
      CHECK(u.src(3) == const_(a, dt, Arg::floating(0.5)));
    }
    CHECK(found == 1);
  }
}

// ast-fuzz seed 10 kernel 29: tinygrad's post-opts graph holds BITCAST(uint, <weakfloat literal>)
// (a float negation as a sign-bit XOR); nothing committed the literal, and the renderer refused a
// BITCAST "between types of different sizes". A BITCAST, like any concrete consumer in tinygrad's
// lower_weak_srcs, takes a weak float at the default float (float32), a lowered one as its value.
TEST_CASE("weak floats: a BITCAST of a weak float literal or value takes it at float32") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 16), uout = param(a, 1, DType::uint32, 16);
  UOp r = range(a, 16, 0, AxisType::LOOP);
  UOp sign = const_(a, DType::uint32, Arg(std::int64_t{0x80000000}));
  UOp neg = bitcast(bitcast(literal(a, 2.5), DType::uint32) ^ sign, DType::float32);
  UOp bits = bitcast(cast(r, DType::weakfloat) * literal(a, 0.5), DType::uint32);
  UOp low = lower(end(group(store(index(out, r), neg), store(index(uout, r), bits)), r));
  INFO(graph_to_string(low));
  CHECK(weak_nodes(low).empty());
  int found = 0;
  UOp lr;
  for (UOp u : toposort(low)) {
    if (u.op() == Ops::RANGE) lr = u;
    if (u.op() != Ops::BITCAST || u.dtype() != DType::uint32) continue;
    ++found;
    CHECK(u.src(0).dtype() == DType::float32);
  }
  CHECK(found == 2);
  const UOp v = stored_into(low, out), b = stored_into(low, uout);
  CHECK(eval(v, {}).f == -2.5);
  for (int k : {0, 3, 15}) {
    const float f = static_cast<float>(k) * 0.5f;
    std::uint32_t want = 0;
    std::memcpy(&want, &f, sizeof want);
    CHECK(static_cast<std::uint32_t>(eval(b, {{lr, S::value::integer(k)}}).i) == want);
  }
}

TEST_CASE("weak floats: arithmetic on an arange, comparisons with ints and floats, a float made an int") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 16), iout = param(a, 1, DType::int32, 16), bout = param(a, 2, DType::bool_, 16);
  UOp n = variable(a, 3, DType::int32, -10, 10);
  UOp r = range(a, 16, 0, AxisType::LOOP);
  UOp f = sin(cast(r, DType::weakfloat) * literal(a, 0.5));
  UOp sel = where(f < literal(a, 0), f, literal(a, 2.0));  // a weak int literal beside a weak float
  UOp cmp = cast(r, DType::weakfloat) * literal(a, 0.25) < n;  // a weak float beside a concrete int
  UOp low = lower(end(group(store(index(out, r), sel), store(index(iout, r), cast(f * literal(a, 10.0), DType::int32)),
                            store(index(bout, r), cmp)),
                      r));
  INFO(graph_to_string(low));
  CHECK(weak_nodes(low).empty());
  const UOp v = stored_into(low, out), iv = stored_into(low, iout), bv = stored_into(low, bout);
  CHECK(v.dtype() == DType::float32);
  CHECK(iv.dtype() == DType::int32);
  REQUIRE(bv.op() == Ops::CMPLT);
  CHECK(bv.src(0).dtype() == DType::float32);  // both operands at the default float
  CHECK(bv.src(1) == cast(n, DType::float32));
  UOp lr;
  for (UOp u : toposort(low))
    if (u.op() == Ops::RANGE) lr = u;
  REQUIRE(lr.dtype() == DType::int32);
  for (int k = 0; k < 16; ++k) {
    const float fk = std::sin(static_cast<float>(k) * 0.5f);
    const S::value got = eval(v, {{lr, S::value::integer(k)}});
    CHECK(std::abs(got.f - static_cast<double>(fk < 0 ? fk : 2.0f)) < 1e-6);
    CHECK(eval(iv, {{lr, S::value::integer(k)}}).i == static_cast<std::int32_t>(fk * 10.0f));
    for (int m : {-3, 0, 2})
      CHECK(eval(bv, {{lr, S::value::integer(k)}, {n, S::value::integer(m)}}).i == (static_cast<float>(k) * 0.25f < static_cast<float>(m)));
  }
}

TEST_CASE("weak floats: a concrete peer or CAST states the width (double computes in double, half in float)") {
  Arena a;
  UOp dout = param(a, 0, DType::float64, 16), hout = param(a, 1, DType::float16, 16);
  UOp xd = variable(a, 2, DType::float64), xh = variable(a, 3, DType::float16);
  UOp r = range(a, 16, 0, AxisType::LOOP);
  UOp w = cast(r, DType::weakfloat) * literal(a, 0.1);
  UOp low = lower(end(group(store(index(dout, r), xd + w), store(index(hout, r), xh * w)), r));
  CHECK(weak_nodes(low).empty());
  const UOp d = stored_into(low, dout), h = stored_into(low, hout);
  REQUIRE(d.op() == Ops::ADD);
  CHECK(d.dtype() == DType::float64);
  CHECK(d.src(1).op() == Ops::MUL);
  CHECK(d.src(1).dtype() == DType::float64);  // 0.1*i in double, as the peer is
  CHECK(d.src(1).src(1) == const_(a, DType::float64, Arg::floating(0.1)));
  REQUIRE(h.op() == Ops::MUL);
  CHECK(h.dtype() == DType::float16);
  REQUIRE(h.src(1).op() == Ops::CAST);  // computed in float32, rounded to half once
  CHECK(h.src(1).src(0).dtype() == DType::float32);
}

// tinygrad lowers a weak float that meets nothing concrete at dtypes.default_float (DEFAULT_FLOAT);
// uopcg computed it in float32 whatever the kernel file's DEFAULT_FLOAT said
TEST_CASE("weak floats: DEFAULT_FLOAT (Target::default_float) is where a weak float lives when nothing concrete meets it") {
  for (DType def : {DType::float64, DType::float16}) {
    CAPTURE(name(def));
    Arena a;
    UOp bout = param(a, 0, DType::bool_, 16), acc_out = param(a, 1, DType::float32, 1);
    UOp r = range(a, 16, 0, AxisType::LOOP);
    UOp cmp = cast(r, DType::weakfloat) * literal(a, 0.1) < literal(a, 0.7);
    UOp acc = buffer(a, 0, DType::weakfloat, 1, AddrSpace::REG);
    UOp zero = literal(a, 0);
    UOp init = after(acc, store(index(acc, zero), literal(a, 0.0)));
    UOp r2 = range(a, 8, 1, AxisType::REDUCE);
    UOp acc_in = after(init, r2);
    UOp upd = store(index(acc_in, zero), load(index(acc_in, zero)) + cast(r2, DType::weakfloat) * literal(a, 0.5));
    UOp done = after(init, end(upd, r2));
    Target t = Target::pocl();
    t.default_float = def;
    UOp low = cg::lower_index_dtypes(
        sink(group(end(store(index(bout, r), cmp), r), store(index(acc_out, zero), cast(load(index(done, zero)), DType::float32)))), t);
    INFO(graph_to_string(low));
    CHECK(weak_nodes(low).empty());
    const UOp bv = stored_into(low, bout);
    REQUIRE(bv.op() == Ops::CMPLT);
    CHECK(bv.src(0).dtype() == def);
    CHECK(bv.src(1).dtype() == def);
    for (UOp u : toposort(low))
      if (u.op() == Ops::BUFFER) CHECK(u.dtype() == def);
  }
}

TEST_CASE("weak floats: the REG accumulator of a reduction over weak floats is committed at float32") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 1);
  UOp acc = buffer(a, 0, DType::weakfloat, 1, AddrSpace::REG);
  UOp zero = literal(a, 0);
  UOp init = after(acc, store(index(acc, zero), literal(a, 0.0)));
  UOp r = range(a, 16, 0, AxisType::REDUCE);
  UOp acc_in = after(init, r);
  UOp upd = store(index(acc_in, zero), load(index(acc_in, zero)) + sin(cast(r, DType::weakfloat) * literal(a, 0.01)));
  UOp done = after(init, end(upd, r));
  UOp low = lower(store(index(out, zero), cast(load(index(done, zero)), DType::float32)));
  INFO(graph_to_string(low));
  CHECK(weak_nodes(low).empty());
  int buffers = 0;
  for (UOp u : toposort(low))
    if (u.op() == Ops::BUFFER) {
      ++buffers;
      CHECK(u.dtype() == DType::float32);
      CHECK(ParamArg::from(u.arg()).dtype == DType::float32);
    }
  CHECK(buffers == 1);
  CHECK(stored_into(low, out).op() == Ops::LOAD);  // the CAST to float32 of a float32 load is gone
}

TEST_CASE("weak floats: a weak dtype no rule commits is reported by the stage, naming the node") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 16), in = param(a, 1, DType::weakfloat, 16);  // a weak kernel parameter
  UOp r = range(a, 16, 0, AxisType::LOOP);
  CHECK_THROWS_WITH_AS(lower(end(store(index(out, r), load(index(in, r)) * literal(a, 2.0)), r)),
                       doctest::Contains("(PARAM weakfloat) keeps a weak dtype"), uopcg::error);
}
