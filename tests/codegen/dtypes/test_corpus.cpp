// Stages 16, 19 and 20 on every corpus kernel against tinygrad's stage dumps. Where a kernel
// emulates a narrow float (half without cl_khr_fp16: ew_add_f16), stage 16 deliberately differs from
// tinygrad's dump (IEEE-exact conversions, docs/DIVERGENCES.md "Emulated narrow floats"): there the
// test asserts what the difference is and that it is nothing else.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include <uopcg/codegen/final_rewrite.hpp>

#include "../stage_harness.hpp"
#include "numerics_ref.hpp"

using namespace uopcg;
using namespace dtypes_test;
namespace P = uopcg::pat;

namespace {
template <class Fn, class Skip>
void check_all(const char* stage, Fn fn, Skip skip) {
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    if (skip(k)) continue;
    auto r = uopcg_test::check_stage(k, stage, fn);
    INFO(e.name << " / " << stage << "\n" << r.diff);
    CHECK(r.same);
  }
}
template <class Fn>
void check_all(const char* stage, Fn fn) {
  check_all(stage, fn, [](const uopcg_test::StagedKernel&) { return false; });
}

/// The float dtype stage 16 emulates in this kernel (void_ if none).
DType emulated_float(const uopcg_test::StagedKernel& k) {
  for (DType d : codegen::emulated_dtypes(k.before("decomp dtypes"), k.target))
    if (is_float(d)) return d;
  return DType::void_;
}

Fmt fmt_of(DType d) {
  switch (d) {
    case DType::float16: return HALF;
    case DType::bfloat16: return BF16;
    case DType::fp8e4m3: return E4M3;
    case DType::fp8e5m2: return E5M2;
    case DType::fp8e4m3fnuz: return E4M3FNUZ;
    case DType::fp8e5m2fnuz: return E5M2FNUZ;
    default: FAIL("no format for " << name(d)); return HALF;
  }
}

/// What the rest of the pipeline makes of a stage-16 graph's values: weak consts committed, late
/// decompositions, final rewrite (so that the evaluator sees concrete dtypes only).
UOp emitted(UOp g, const Target& t) {
  g = P::graph_rewrite(g, codegen::pm_commit_weak);
  g = P::graph_rewrite(g, codegen::pm_decomp, t);
  return codegen::final_rewrite(g, t);
}

std::vector<UOp> of_op(UOp g, Ops op) {
  std::vector<UOp> v;
  for (UOp u : toposort(g))
    if (u.op() == op) v.push_back(u);
  std::sort(v.begin(), v.end(), [](UOp a, UOp b) { return a.id() < b.id(); });
  return v;
}
}  // namespace

TEST_CASE("decomp dtypes matches tinygrad on every corpus kernel without an emulated float") {
  int skipped = 0;
  check_all("decomp dtypes", [](UOp u, const Target& t) { return codegen::decomp_dtypes(u, t); },
            [&](const uopcg_test::StagedKernel& k) { return emulated_float(k) != DType::void_ && ++skipped; });
  CHECK(skipped >= 1);  // ew_add_f16: checked by the next test
}

TEST_CASE("decomp dtypes on an emulated float: same memory and loads as tinygrad, IEEE conversions") {
  int kernels = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    const DType fr = emulated_float(k);
    if (fr == DType::void_) continue;
    ++kernels;
    INFO(e.name << " emulates " << name(fr));
    // the interpreter below runs the bit graphs (the vload_half / vstore_half_rte helpers, the
    // default on OpenCL, run on PoCL in tests/e2e)
    Target t = k.target;
    t.half_builtins = false;
    const Fmt f = fmt_of(fr);
    UOp ours = codegen::decomp_dtypes(k.before("decomp dtypes"), t), theirs = k.after("decomp dtypes");
    CHECK(ours != theirs);  // the conversion subgraphs differ (tinygrad's are not IEEE)
    for (UOp u : toposort(ours)) CHECK(u.dtype() != fr);
    ours = emitted(ours, t);
    theirs = emitted(theirs, t);
    // the same buffers, the same loads (of the bits) and the same store addresses: only the values
    // computed between loads and stores differ
    CHECK(of_op(ours, Ops::PARAM) == of_op(theirs, Ops::PARAM));
    const std::vector<UOp> loads = of_op(ours, Ops::LOAD);
    REQUIRE(loads == of_op(theirs, Ops::LOAD));
    std::map<std::uint32_t, UOp> ours_st, theirs_st;
    for (UOp s : of_op(ours, Ops::STORE)) ours_st[s.src(0).id()] = s.src(1);
    for (UOp s : of_op(theirs, Ops::STORE)) theirs_st[s.src(0).id()] = s.src(1);
    REQUIRE(ours_st.size() == theirs_st.size());
    for (const auto& entry : ours_st) REQUIRE(theirs_st.count(entry.first) == 1);
    // the stored values agree, except exactly where tinygrad's conversions are not IEEE: our result
    // is subnormal or the smallest normal (tinygrad flushes to zero), or the largest finite value
    // where tinygrad overflows to infinity. Inputs: normal values, zeros and infinities of fr.
    const std::uint64_t sign = std::uint64_t(1) << (f.bits - 1), minnorm = std::uint64_t(1) << f.m;
    const std::uint64_t maxfin = encode(false, max_finite(f), f, false);
    std::vector<std::uint64_t> pool{0, minnorm, minnorm + 1, 2 * minnorm, maxfin, maxfin - 1, maxfin / 2};
    for (double v : {1.0, 0.5, 8.0, 0.00390625, 0.0078125, 1.5, 16.0, 256.0})
      if (v <= max_finite(f)) pool.push_back(encode(false, v, f, false));
    if (f.kind == Kind::ieee) pool.push_back(((std::uint64_t(1) << f.e) - 1) << f.m);  // infinity
    std::mt19937_64 rng(1234);
    int differing = 0, bad = 0, samples = 0;
    for (const auto& entry : ours_st) {
      const std::uint32_t addr = entry.first;  // (no structured binding: doctest's INFO captures it)
      Evaluator eo(entry.second, loads), et(theirs_st[addr], loads);
      for (int n = 0; n < 20000; ++n, ++samples) {
        for (UOp ld : loads) {
          std::uint64_t b;
          if (rng() % 2) b = pool[rng() % pool.size()];
          else b = minnorm + rng() % (maxfin - minnorm + 1);  // a random normal
          b |= (rng() % 2) ? sign : 0;
          eo.set(ld, from_bits(ld.dtype(), b));
          et.set(ld, from_bits(ld.dtype(), b));
        }
        const std::uint64_t o = eo.run().u, th = et.run().u, om = o & (sign - 1), tm = th & (sign - 1);
        if (o == th) continue;
        ++differing;
        const bool flush = om <= minnorm && tm == 0 && (o & sign) == (th & sign);
        const bool overflow = om == maxfin && tm == ((std::uint64_t(1) << f.e) - 1) << f.m && (o & sign) == (th & sign);
        if (!flush && !overflow && ++bad <= 5) FAIL_CHECK("store at node " << addr << ": ours " << o << " tinygrad's " << th);
      }
    }
    CHECK(bad == 0);
    CHECK(differing > 0);          // the divergence is real on these inputs
    CHECK(differing < samples / 4);  // and confined to the edges of the range
    MESSAGE(e.name << ": " << differing << " of " << samples << " stored values differ from tinygrad's (all IEEE edge cases)");
  }
  CHECK(kernels >= 1);
}

TEST_CASE("final rewrite matches tinygrad on every corpus kernel") {
  check_all("final rewrite", [](UOp u, const Target& t) { return codegen::final_rewrite(u, t); });
}

TEST_CASE("casted consts matches tinygrad on every corpus kernel") {
  check_all("casted consts", [](UOp u, const Target& t) { return codegen::casted_consts(u, t); });
}

TEST_CASE("ew_add_f16 is emulated in ushort, ew_add_f16_native is left alone") {
  uopcg_test::StagedKernel emu("ew_add_f16"), native("ew_add_f16_native");
  CHECK(codegen::emulated_dtypes(emu.before("decomp dtypes"), emu.target) == std::vector<DType>{DType::float16});
  CHECK(codegen::emulated_dtypes(native.before("decomp dtypes"), native.target).empty());
}
