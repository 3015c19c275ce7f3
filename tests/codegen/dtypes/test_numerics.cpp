// Numerics of the dtype emulation: the conversion graphs built by decomp dtypes (half, bf16, fp8
// through float or half) and by the OpenCL extra matcher (float <-> bf16) are evaluated by a small
// interpreter, as emitted (after commit, late decompositions and the final rewrite), and compared
// bit for bit with IEEE / OCP FP8 reference conversions written in numerics_ref.hpp: every 8- and
// 16-bit pattern, and >= 540k float patterns plus every rounding tie of the narrow format. Plus
// graph-level checks of the stage rules.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <uopcg/codegen/final_rewrite.hpp>
#include <uopcg/core/print.hpp>

#include "numerics_ref.hpp"

using namespace uopcg;
using namespace dtypes_test;
namespace P = uopcg::pat;

namespace {

/// The emitted form of a value graph: weak consts committed, late decompositions, final rewrite.
UOp emitted(UOp v, const Target& t) {
  UOp g = P::graph_rewrite(v, codegen::pm_commit_weak);
  g = P::graph_rewrite(g, codegen::pm_decomp, t);
  g = codegen::final_rewrite(g, t);
  return g;
}

/// A leaf standing for a runtime value of dtype dt (an ALU variable).
UOp leaf(Arena& a, DType dt, std::int64_t slot = 0) {
  ParamArg p;
  p.slot = slot;
  p.dtype = dt;
  p.addrspace = AddrSpace::ALU;
  return a.make(Ops::PARAM, dt, {literal(a, 1)}, p.to_arg());
}

bool contains_weak(UOp root) {
  for (UOp u : toposort(root))
    if (is_weak(u.dtype()) && !(u.op() == Ops::CONST)) return true;
  return false;
}

Fmt fmt_of(DType d) {
  switch (d) {
    case DType::float32: return F32;
    case DType::float16: return HALF;
    case DType::bfloat16: return BF16;
    case DType::fp8e4m3: return E4M3;
    case DType::fp8e5m2: return E5M2;
    case DType::fp8e4m3fnuz: return E4M3FNUZ;
    case DType::fp8e5m2fnuz: return E5M2FNUZ;
    default: FAIL("no format"); return F32;
  }
}

/// A value graph over one leaf, evaluated on bit patterns.
struct Graph {
  Arena arena;
  UOp in, out;
  std::optional<Evaluator> ev;
  std::uint64_t run_bits(std::uint64_t bits) {
    if (!ev) ev.emplace(out, std::vector<UOp>{in});
    ev->set(in, from_bits(in.dtype(), bits));
    return ev->run().u;
  }
};

/// f2f as decomp dtypes builds it, in emitted form, over a leaf of the source's bits dtype.
struct Conversion : Graph {
  Conversion(DType fr, DType to, const Target& t, bool sat = true) {
    in = leaf(arena, codegen::bits_dtype(fr));
    out = emitted(codegen::detail::f2f(in, fr, to, sat), t);
  }
};

/// Runs `g` on every pattern in `inputs` and compares with convert(fr -> to); reports the first few.
template <class Inputs>
int count_mismatches(Graph& g, const Inputs& inputs, Fmt fr, Fmt to, bool sat = true) {
  int bad = 0;
  for (auto b : inputs) {
    const std::uint64_t got = g.run_bits(b), want = convert(b, fr, to, sat);
    if (got != want && ++bad <= 5) {
      INFO("input bits " << std::uint64_t(b) << " got " << got << " want " << want);
      CHECK(got == want);
    }
  }
  return bad;
}
std::vector<std::uint32_t> all_patterns(int bits) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t b = 0; b < (1u << bits); ++b) v.push_back(b);
  return v;
}

/// The graph's node count (what is emitted per converted element).
std::size_t nodes(UOp g) { return toposort(g).size(); }

}  // namespace

TEST_CASE("the references: known values") {
  CHECK(convert(0x0001, HALF, F32) == std::bit_cast<std::uint32_t>(std::ldexp(1.0f, -24)));  // smallest subnormal
  CHECK(convert(0x8001, HALF, F32) == (0x80000000u | std::bit_cast<std::uint32_t>(std::ldexp(1.0f, -24))));
  CHECK(convert(std::bit_cast<std::uint32_t>(65519.0f), F32, HALF) == 0x7bff);
  CHECK(convert(std::bit_cast<std::uint32_t>(65520.0f), F32, HALF) == 0x7c00);
  CHECK(convert(0x7f800001u, F32, HALF) == 0x7e00);
  CHECK(convert(0x7f800001u, F32, BF16) == 0x7fc0);
  CHECK(convert(0x33000000u, F32, HALF) == 0x0000);  // 2^-25: a tie between 0 and 2^-24 -> even (0)
  CHECK(convert(0x33000001u, F32, HALF) == 0x0001);
  CHECK(convert(0x33c00000u, F32, HALF) == 0x0002);  // 3 * 2^-25: tie -> even (2 * 2^-24)
  CHECK(convert(std::bit_cast<std::uint32_t>(464.0f), F32, E4M3) == 0x7e);        // tie at the top -> 448
  CHECK(convert(std::bit_cast<std::uint32_t>(1e6f), F32, E4M3) == 0x7e);          // saturates
  CHECK(convert(std::bit_cast<std::uint32_t>(1e6f), F32, E4M3, false) == 0x7f);   // non-saturating: NaN
  CHECK(convert(0xff800000u, F32, E5M2, false) == 0xfc);
  CHECK(convert(0xff800000u, F32, E5M2) == 0xfb);
  CHECK(convert(0x80000000u, F32, E4M3FNUZ) == 0x00);  // no negative zero
  CHECK(decode(0x80, E4M3FNUZ).nan);
  CHECK(max_finite(E4M3) == 448.0);
  CHECK(max_finite(E5M2) == 57344.0);
  CHECK(max_finite(E4M3FNUZ) == 240.0);
}

TEST_CASE("half -> float emulation is bit-exact over all 65536 half patterns") {
  Target t = Target::pocl();
  Conversion c(DType::float16, DType::float32, t);
  CHECK_FALSE(contains_weak(c.out));
  CHECK(count_mismatches(c, all_patterns(16), HALF, F32) == 0);
  CHECK(c.run_bits(0x3c00) == std::bit_cast<std::uint32_t>(1.0f));
  CHECK(c.run_bits(0xc000) == std::bit_cast<std::uint32_t>(-2.0f));
  CHECK(c.run_bits(0x7bff) == std::bit_cast<std::uint32_t>(65504.0f));
  CHECK(c.run_bits(0x7c00) == 0x7f800000u);
  CHECK(c.run_bits(0xfc00) == 0xff800000u);
  CHECK(c.run_bits(0x7c01) == 0x7fc02000u);                                          // signalling NaN -> quiet
  CHECK(c.run_bits(0x0001) == std::bit_cast<std::uint32_t>(5.9604644775390625e-08f)); // denormals keep their value
  CHECK(c.run_bits(0x83ff) == std::bit_cast<std::uint32_t>(-6.09755516052246094e-05f));
  CHECK(c.run_bits(0x8000) == 0x80000000u);
  MESSAGE("half -> float graph: " << nodes(c.out) << " nodes");
}

TEST_CASE("float -> half emulation is IEEE round-to-nearest-even, subnormals and overflow included") {
  Target t = Target::pocl();
  Conversion c(DType::float32, DType::float16, t);
  CHECK_FALSE(contains_weak(c.out));
  const auto samples = float_samples(HALF);
  CHECK(samples.size() >= 500000);
  CHECK(count_mismatches(c, samples, F32, HALF) == 0);
  auto h = [&](float x) { return c.run_bits(std::bit_cast<std::uint32_t>(x)); };
  CHECK(h(1.0f) == 0x3c00);
  CHECK(h(65504.0f) == 0x7bff);
  CHECK(h(65519.996f) == 0x7bff);                     // [65504, 65520) rounds to 65504
  CHECK(h(65520.0f) == 0x7c00);                       // the tie rounds to even: infinity
  CHECK(h(-1e6f) == 0xfc00);
  CHECK(c.run_bits(0x3f801000u) == 0x3c00);           // 1 + 2^-11: tie -> even
  CHECK(c.run_bits(0x3f803000u) == 0x3c02);           // 1 + 3*2^-11: tie -> even (up)
  CHECK(c.run_bits(0x7fc00000u) == 0x7e00);
  CHECK(c.run_bits(0x7f800001u) == 0x7e00);           // payload only in the dropped bits: still a (quiet) NaN
  CHECK(c.run_bits(0xff802001u) == 0xfe01);           // sign and top payload bits kept
  CHECK(h(std::ldexp(1.0f, -24)) == 0x0001);          // smallest subnormal
  CHECK(h(std::ldexp(1.0f, -25)) == 0x0000);          // tie -> even (zero)
  CHECK(h(-std::ldexp(1.5f, -25)) == 0x8001);
  CHECK(h(std::ldexp(1023.5f, -24)) == 0x0400);       // rounds up into the smallest normal
  CHECK(h(1e-30f) == 0);
  CHECK(h(-1e-30f) == 0x8000);
  MESSAGE("float -> half graph: " << nodes(c.out) << " nodes");
}

TEST_CASE("half round trip: half -> float -> half is the identity on every half but NaNs (quieted)") {
  Target t = Target::pocl();
  Conversion widen(DType::float16, DType::float32, t);
  Conversion narrow(DType::float32, DType::float16, t);
  int bad = 0;
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const bool nan = ((h >> 10) & 31) == 31 && (h & 1023) != 0;
    if (narrow.run_bits(widen.run_bits(h)) != (nan ? h | 0x200 : h)) ++bad;
  }
  CHECK(bad == 0);
}

TEST_CASE("bf16 emulated through bits (emulate_bf16) is bit-exact both ways") {
  Target t = Target::pocl();
  Conversion widen(DType::bfloat16, DType::float32, t);
  CHECK(count_mismatches(widen, all_patterns(16), BF16, F32) == 0);
  CHECK(widen.run_bits(0x0001) == 0x00010000u);  // a bf16 subnormal is a float subnormal
  CHECK(widen.run_bits(0xff81) == 0xffc10000u);  // signalling NaN -> quiet
  Conversion narrow(DType::float32, DType::bfloat16, t);
  CHECK(count_mismatches(narrow, float_samples(BF16), F32, BF16) == 0);
  CHECK(narrow.run_bits(0x7f800001u) == 0x7fc0);
  CHECK(narrow.run_bits(0x00008000u) == 0x0000);  // tie -> even
  CHECK(narrow.run_bits(0x00018000u) == 0x0002);
  CHECK(narrow.run_bits(0x7f7fffffu) == 0x7f80);  // rounds past the largest finite: infinity
}

TEST_CASE("fp8 <-> float is bit-exact, OCP FP8 saturating and non-saturating") {
  Target t = Target::pocl();
  for (DType dt : {DType::fp8e4m3, DType::fp8e5m2, DType::fp8e4m3fnuz, DType::fp8e5m2fnuz}) {
    INFO("fp8 dtype " << name(dt));
    const Fmt f = fmt_of(dt);
    Conversion widen(dt, DType::float32, t);
    CHECK(count_mismatches(widen, all_patterns(8), f, F32) == 0);
    const auto samples = float_samples(f);
    for (bool sat : {true, false}) {
      INFO("saturating " << sat);
      Conversion narrow(DType::float32, dt, t, sat);
      CHECK(count_mismatches(narrow, samples, F32, f, sat) == 0);
    }
  }
}

TEST_CASE("fp8 <-> half (half native) is bit-exact over every pattern") {
  Target t = Target::opencl_fp16();
  for (DType dt : {DType::fp8e4m3, DType::fp8e5m2, DType::fp8e4m3fnuz}) {
    INFO("fp8 dtype " << name(dt));
    const Fmt f = fmt_of(dt);
    Conversion widen(dt, DType::float16, t);
    CHECK(count_mismatches(widen, all_patterns(8), f, HALF) == 0);
    for (bool sat : {true, false}) {
      INFO("saturating " << sat);
      Conversion narrow(DType::float16, dt, t, sat);
      CHECK(count_mismatches(narrow, all_patterns(16), HALF, f, sat) == 0);
    }
  }
  // fp8e5m2fnuz has values below half's normals: it is not converted through half
  CHECK_FALSE(codegen::detail::can_emulate(DType::fp8e5m2fnuz, DType::float16));
  Arena a;
  CHECK_THROWS_AS(codegen::detail::f2f(leaf(a, DType::uint8), DType::fp8e5m2fnuz, DType::float16), uopcg::error);
}

TEST_CASE("a CAST to an emulated float rounds to a value of it") {
  Target t = Target::pocl();
  t.half_builtins = false;  // the interpreter runs the bit graphs; the built-ins run on PoCL (tests/e2e)
  Graph g;
  g.in = leaf(g.arena, DType::uint32);
  g.out = emitted(codegen::detail::round_to(bitcast(g.in, DType::float32), DType::float16, DType::float32), t);
  int bad = 0;
  for (std::uint32_t b : float_samples(HALF)) {
    const std::uint64_t got = g.run_bits(b), want = convert(convert(b, F32, HALF), HALF, F32);
    if (got != want) ++bad;
  }
  CHECK(bad == 0);
  // and the stage uses it: store(half buf, cast(half, float load))
  Arena a;
  UOp out = param(a, 0, DType::float16, 4), in = param(a, 1, DType::float32, 4);
  UOp i0 = const_(a, DType::int32, Arg(0));
  UOp ld = load(index(in, i0));
  UOp sink = uopcg::sink(store(index(out, i0), cast(ld, DType::float16)));
  UOp r = emitted(codegen::decomp_dtypes(sink, t), t);
  UOp st;
  for (UOp u : toposort(r))
    if (u.op() == Ops::STORE) st = u;
  REQUIRE(st.op() == Ops::STORE);
  UOp fld;
  for (UOp u : toposort(st.src(1)))
    if (u.op() == Ops::LOAD) fld = u;
  REQUIRE(fld.op() == Ops::LOAD);
  Evaluator e(st.src(1), {fld});
  bad = 0;
  for (std::uint32_t b : float_samples(HALF)) {
    e.set(fld, from_bits(DType::float32, b));
    if (e.run().u != convert(b, F32, HALF)) ++bad;
  }
  CHECK(bad == 0);
}

TEST_CASE("the OpenCL bf16 casts (final rewrite) are bit-exact") {
  Target t = Target::pocl();
  {
    Graph g;
    g.in = leaf(g.arena, DType::bfloat16);
    g.out = codegen::final_rewrite(cast(g.in, DType::float32), t);
    CHECK_FALSE(contains_weak(g.out));
    CHECK(count_mismatches(g, all_patterns(16), BF16, F32) == 0);
  }
  {
    Graph g;
    g.in = leaf(g.arena, DType::float32);
    g.out = codegen::final_rewrite(cast(g.in, DType::bfloat16), t);
    CHECK_FALSE(contains_weak(g.out));
    CHECK(count_mismatches(g, float_samples(BF16), F32, BF16) == 0);
    CHECK(g.run_bits(0x7f800001u) == 0x7fc0);
  }
}

TEST_CASE("bf16 arithmetic is computed in float by the OpenCL extra matcher") {
  Target t = Target::pocl();
  Arena a;
  UOp x = leaf(a, DType::bfloat16, 0), y = leaf(a, DType::bfloat16, 1);
  UOp sum = codegen::final_rewrite(x + y, t);
  CHECK(sum.dtype() == DType::bfloat16);
  int float_adds = 0;
  for (UOp u : toposort(sum)) {
    CHECK_FALSE((u.op() == Ops::ADD && u.dtype() == DType::bfloat16));
    float_adds += u.op() == Ops::ADD && u.dtype() == DType::float32;
  }
  CHECK(float_adds == 1);
  UOp cmp = codegen::final_rewrite(x < y, t);
  REQUIRE(cmp.op() == Ops::CMPLT);
  CHECK(cmp.src(0).dtype() == DType::float32);
  // evaluate 1.5 + 2.25 in bf16
  Evaluator e(sum);
  e.set(x, Val{DType::bfloat16, std::bit_cast<std::uint32_t>(1.5f) >> 16, 0});
  e.set(y, Val{DType::bfloat16, std::bit_cast<std::uint32_t>(2.25f) >> 16, 0});
  CHECK(e.run().u == (std::bit_cast<std::uint32_t>(3.75f) >> 16));
}

TEST_CASE("decomp dtypes rewrites a half kernel into ushort memory and float math") {
  Arena a;
  Target t = Target::pocl();
  UOp out = param(a, 0, DType::float16, 16), in = param(a, 1, DType::float16, 16);
  UOp r = range(const_(a, DType::int32, Arg(16)), 0, AxisType::LOOP);
  UOp ri = r;
  UOp v = load(index(in, ri));
  UOp st = store(index(out, ri), v * v);
  UOp sink = uopcg::sink(end(st, r));
  UOp g = codegen::decomp_dtypes(sink, t);
  for (UOp u : toposort(g)) {
    CHECK(u.dtype() != DType::float16);
    if (u.op() == Ops::PARAM) {
      CHECK(u.dtype() == DType::uint16);
      CHECK(ParamArg::from(u.arg()).dtype == DType::uint16);
      CHECK(u.tag().as_dtype() == DType::float16);
    }
    if (u.op() == Ops::MUL && is_float(u.dtype())) CHECK(u.dtype() == DType::float32);
  }
  // what stays weak after stage 16 (tinygrad's `x - c` spelling) folds in the late decompositions
  CHECK_FALSE(contains_weak(emitted(g, t)));
  // native half: unchanged
  CHECK(codegen::decomp_dtypes(sink, Target::opencl_fp16()) == sink);
  // forcing emulation of half on a fp16 device
  Target forced = Target::opencl_fp16();
  forced.emulate_half = true;
  CHECK(codegen::decomp_dtypes(sink, forced) != sink);
}

namespace {
/// A reduction as "remove reduces" + "add loads" leave it, over an accumulator BUFFER of dtype dt in
/// `space` (REG: tinygrad's reduce_ranges_to_acc; LOCAL: the GROUP_REDUCE phase buffer):
///   STORE(INDEX(acc, 0), identity); cur = AFTER(acc, init, r); STORE(INDEX(cur, 0), LOAD(INDEX(cur, 0)) op in[r]);
///   out[0] = LOAD(INDEX(AFTER(acc, END(update, r)), 0))
UOp acc_kernel(Arena& a, DType dt, Ops op, AddrSpace space) {
  UOp out = param(a, 0, dt, 1), in = param(a, 1, dt, 16);
  UOp acc = buffer(a, 0, dt, 1, space);
  UOp r = range(const_(a, DType::int32, Arg(16)), 0, AxisType::REDUCE);  // indices as "lower all index dtypes" leaves them
  UOp i0 = const_(a, DType::int32, Arg(0));
  const double ident = op == Ops::ADD ? 0.0 : op == Ops::MUL ? 1.0 : -INFINITY;
  UOp init = store(index(acc, i0), const_(a, dt, Arg::floating(ident)));
  UOp cur = after(acc, init, r);
  UOp upd = store(index(cur, i0), alu(op, load(index(cur, i0)), load(index(in, r))));
  UOp fin = load(index(after(acc, end(upd, r)), i0));
  return uopcg::sink(store(index(out, i0), fin));
}
}  // namespace

TEST_CASE("decomp dtypes: an accumulator (REG or LOCAL BUFFER) of an emulated float holds bits, read through AFTER") {
  struct Case {
    DType dt;
    Target t;
  };
  Target bf = Target::pocl();
  bf.emulate_bf16 = true;
  const Case cases[] = {{DType::float16, Target::pocl()}, {DType::bfloat16, bf}, {DType::fp8e4m3, Target::pocl()},
                        {DType::fp8e5m2, Target::opencl_fp16()}};
  for (const Case& c : cases) {
    for (Ops op : {Ops::ADD, Ops::MUL, Ops::MAX}) {
      for (AddrSpace space : {AddrSpace::REG, AddrSpace::LOCAL}) {
        CAPTURE(name(c.dt));
        CAPTURE(name(op));
        CAPTURE(name(space));
        Arena a;
        UOp sink = acc_kernel(a, c.dt, op, space);
        UOp g = codegen::decomp_dtypes(sink, c.t);
        const DType bits = codegen::bits_dtype(c.dt);
        int afters = 0, loads = 0, stores = 0, math = 0;
        for (UOp u : toposort(g)) {
          CHECK(u.dtype() != c.dt);
          const bool memory = u.addrspace().has_value() && *u.addrspace() != AddrSpace::ALU &&
                              (u.op() == Ops::BUFFER || u.op() == Ops::PARAM || u.op() == Ops::AFTER || u.op() == Ops::INDEX);
          if (memory) {
            // every buffer, address and AFTER over one holds the bits, tagged with the emulated dtype
            CHECK(u.dtype() == bits);
            CHECK(u.tag().kind() == ArgKind::dtype);
            if (u.tag().kind() == ArgKind::dtype) CHECK(u.tag().as_dtype() == c.dt);
            afters += u.op() == Ops::AFTER;
          }
          // no memory node is ever converted as a value
          if (u.op() == Ops::CAST) CHECK_FALSE((u.src(0).addrspace().has_value() && *u.src(0).addrspace() != AddrSpace::ALU));
          if (u.op() == Ops::LOAD) {
            ++loads;
            CHECK(u.dtype() == bits);
          }
          if (u.op() == Ops::STORE) {
            ++stores;
            CHECK(u.src(1).dtype() == bits);
          }
          math += u.op() == op && is_float(u.dtype());
        }
        CHECK(afters == 2);
        CHECK(loads == 3);
        CHECK(stores == 3);
        CHECK(math >= 1);  // the reduction itself, in float (or half for fp8 on a half device)
        CHECK_FALSE(contains_weak(emitted(g, c.t)));
      }
    }
  }
}

TEST_CASE("fp8 is computed in half where half is native, in float otherwise") {
  Arena a;
  UOp out = param(a, 0, DType::fp8e4m3, 4), in = param(a, 1, DType::fp8e4m3, 4);
  UOp i0 = const_(a, DType::int32, Arg(0));
  UOp sink = uopcg::sink(store(index(out, i0), load(index(in, i0)) + load(index(in, i0))));
  auto math_dtype = [](UOp g) {
    for (UOp u : toposort(g))
      if (u.op() == Ops::ADD && is_float(u.dtype())) return u.dtype();
    return DType::void_;
  };
  CHECK(math_dtype(codegen::decomp_dtypes(sink, Target::opencl_fp16())) == DType::float16);
  CHECK(math_dtype(codegen::decomp_dtypes(sink, Target::pocl())) == DType::float32);
}

TEST_CASE("pm_commit_weak and pm_cast_weak") {
  Arena a;
  UOp x = leaf(a, DType::uint32);
  // a bare weak const next to a concrete operand takes its dtype
  UOp g = P::graph_rewrite(x + 5, codegen::pm_commit_weak);
  CHECK(g == alu(Ops::ADD, x, const_(a, DType::uint32, Arg(5))));
  // a weak expression gets a CAST
  UOp w = alu(Ops::MUL, literal(a, 3), literal(a, -1));
  CHECK(P::graph_rewrite(alu(Ops::ADD, x, w), codegen::pm_commit_weak) == alu(Ops::ADD, x, cast(w, DType::uint32)));
  // a stored weak value commits at the destination's dtype
  UOp buf = param(a, 0, DType::int32, 4);
  UOp idx = index(buf, const_(a, DType::int32, Arg(0)));
  CHECK(P::graph_rewrite(store(idx, literal(a, 7)), codegen::pm_commit_weak) == store(idx, cast(literal(a, 7), DType::int32)));
  // CAST(dt, weak const) -> CONST dt; CAST(dt, weak alu) commits the alu's sources
  CHECK(P::graph_rewrite(cast(literal(a, 7), DType::int16), codegen::pm_cast_weak) == const_(a, DType::int16, Arg(7)));
  UOp c = P::graph_rewrite(cast(w, DType::int32), codegen::pm_cast_weak);
  REQUIRE(c.op() == Ops::CAST);
  CHECK(c.src(0).dtype() == DType::int32);
  // nothing weak next to concrete operands: unchanged
  CHECK(P::graph_rewrite(x + x, codegen::pm_commit_weak) == x + x);
}

TEST_CASE("pm_split_ends nests by axis id, drops SPECIALs, keeps backedges last") {
  Arena a;
  Target t = Target::pocl();
  UOp buf = param(a, 0, DType::float32, 64);
  UOp r0 = range(a, 4, 0, AxisType::LOOP), r3 = range(a, 4, 3, AxisType::REDUCE);
  UOp g = special(a, 4, "gidx0");
  UOp body = store(index(buf, cast(r0, DType::int32)), const_(a, DType::float32, Arg::floating(1.0)));
  UOp e = end(body, r0, g, r3);
  UOp got = P::graph_rewrite(e, codegen::pm_split_ends);
  CHECK(got == end(end(body, r3), r0));
  // only SPECIALs: the END disappears
  CHECK(P::graph_rewrite(end(body, g), codegen::pm_split_ends) == body);
  // a bool backedge goes last
  UOp cond = const_(a, DType::bool_, Arg::boolean(true));
  CHECK(P::graph_rewrite(end(body, cond, r3, r0), codegen::pm_split_ends) == end(end(end(body, r3), r0), cond));
  // an END tagged mergeable loses the tag
  UOp tagged = a.make(Ops::END, DType::void_, {body, r0}, Arg(), Arg::string("mergeable"));
  CHECK(codegen::final_rewrite(uopcg::sink(tagged), t) == uopcg::sink(end(body, r0)));
}

TEST_CASE("pm_remove_invalid turns leftover Invalid into zeros") {
  Arena a;
  UOp x = leaf(a, DType::float32), c = leaf(a, DType::bool_, 1);
  UOp w = where(c, x, invalid(a));
  CHECK(P::graph_rewrite(w, codegen::pm_remove_invalid) == where(c, x, const_(a, DType::float32, Arg::floating(0.0))));
  UOp s = a.make(Ops::STACK, DType::int32, {const_(a, DType::int32, Arg(4)), invalid(a)});
  CHECK(P::graph_rewrite(s, codegen::pm_remove_invalid) ==
        a.make(Ops::STACK, DType::int32, {const_(a, DType::int32, Arg(4)), const_(a, DType::int32, Arg(0))}));
}

TEST_CASE("casted consts: every concrete literal becomes CAST(dt, weak CONST), once") {
  Arena a;
  Target t = Target::pocl();
  UOp x = leaf(a, DType::float32);
  UOp b = leaf(a, DType::bool_, 1);
  UOp e = where(alu(Ops::CMPNE, b, const_(a, DType::bool_, Arg::boolean(true))), x + const_(a, DType::float32, Arg::floating(2.5)),
                const_(a, DType::float32, Arg::floating(0.0)));
  UOp got = codegen::casted_consts(e, t);
  int casts = 0;
  for (UOp u : toposort(got)) {
    if (u.op() != Ops::CONST) continue;
    if (u.arg().kind() == ArgKind::int_ && u.dtype() == DType::weakint) continue;  // shape of the leaves
    CHECK((is_weak(u.dtype()) || u.dtype() == DType::bool_));
  }
  for (UOp u : toposort(got))
    if (u.op() == Ops::CAST && u.src(0).op() == Ops::CONST) ++casts;
  CHECK(casts == 3);
  CHECK(codegen::casted_consts(e, t) == got);  // deterministic
  // applying it again wraps nothing twice: the inner consts are weak (or bool, which becomes CAST(bool, CONST bool))
  UOp u = codegen::casted_consts(const_(a, DType::uint16, Arg(7)), t);
  CHECK(u == cast(literal(a, 7), DType::uint16));
}
