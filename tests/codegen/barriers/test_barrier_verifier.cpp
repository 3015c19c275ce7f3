// The barrier verifier's element-level analysis on programs built here (through the late stages:
// implicit barriers, control flow, linearize, or with explicit BARRIERs): correct kernels the
// per-buffer rule rejected, races with their witnesses, write-write races, gates and IFs, work-items
// that differ only in a local id no index reads, unknown indices, divergent barriers decided by the
// work-items' actual paths, the symbolic fallback, malformed programs, and one STORE writing the same
// value from several work-items (no race).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <uopcg/codegen/barrier_explain.hpp>
#include <uopcg/codegen/barrier_verifier.hpp>
#include <uopcg/codegen/barriers.hpp>
#include <uopcg/codegen/control_flow.hpp>
#include <uopcg/codegen/linearize.hpp>
#include <uopcg/core/builder.hpp>
#include <uopcg/core/print.hpp>

using namespace uopcg;
using codegen::BarrierAnalysis;
using codegen::BarrierViolationKind;

namespace {

const Target tgt = Target::pocl();

/// The program of a graph as the pipeline makes it: implicit barriers (unless `implicit` is false,
/// for graphs that place their own), control flow, numbered params, linearized, and the tentative
/// "war store" barriers the verifier proves redundant dropped again.
std::vector<UOp> lower(UOp sk, bool implicit = true) {
  UOp g = implicit ? codegen::add_implicit_barriers(sk, tgt) : sk;
  const std::vector<UOp> prog = codegen::linearize(codegen::number_params(codegen::add_control_flow(g, tgt), tgt), tgt);
  return implicit ? codegen::prune_war_store_barriers(prog) : prog;
}

UOp i32(Arena& a, std::int64_t v) { return cast(literal(a, v), DType::int32); }
UOp f32(Arena& a, double v) { return const_(a, DType::float32, Arg::floating(v)); }
UOp lid(Arena& a, std::int64_t n, std::string_view nm = "lidx0") { return special(i32(a, n), nm); }

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

/// Checks a program both ways: enumerated and by the symbolic check alone (as for a kernel too large
/// to enumerate). Race-free: both accept; else both refuse, the enumeration with a proven write-write
/// race. Returns the symbolic verdict.
codegen::BarrierReport check_both_ways(const std::vector<UOp>& prog, bool race) {
  INFO(print_program(prog).str());
  const auto exact = codegen::verify_barriers(prog);
  auto small = codegen::verify_barriers(prog, {.enumeration_budget = 1});
  INFO(exact.message());
  INFO(small.message());
  if (!race) {
    CHECK(exact.ok());
    CHECK(small.ok());
    CHECK(small.analysis == BarrierAnalysis::symbolic);
    return small;
  }
  REQUIRE_FALSE(exact.ok());
  CHECK(exact.violations[0].kind == BarrierViolationKind::write_after_write);
  CHECK(exact.violations[0].proven);
  CHECK_FALSE(small.ok());
  return small;
}

/// The in-place tree reduction of the issue: at step s, work-items l < 8 >> s add [l + (8 >> s)]
/// into [l]; the loop's tail barrier (a WAR barrier of the implicit rules) separates the steps.
struct TreeReduction {
  Arena a;
  std::vector<UOp> prog;
  explicit TreeReduction(bool interleaved = false) {
    UOp out = param(a, 0, DType::float32, 1), in = param(a, 1, DType::float32, 16);
    UOp buf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
    UOp l = lid(a, 16);
    UOp s = range(i32(a, 4), 0, AxisType::LOOP);
    UOp filled = after(buf, store(index(buf, l), load(index(in, l))));
    UOp cur = after(filled, s);
    UOp stride = interleaved ? alu(Ops::SHL, i32(a, 1), s) : alu(Ops::SHR, i32(a, 8), s);
    UOp active = interleaved ? eq(alu(Ops::AND, l, alu(Ops::SHL, i32(a, 2), s) - 1), i32(a, 0)) : l < stride;
    UOp other = load(index(cur, l + stride), f32(a, 0), active);
    UOp step = end(store(index(cur, l), load(index(cur, l)) + other, active), s);
    UOp result = load(index(after(buf, step), i32(a, 0)));
    prog = lower(sink(store(index(out, i32(a, 0)), result, eq(l, i32(a, 0)))));
  }
};

}  // namespace

TEST_CASE("tree reduction in place: accepted element by element; without its barriers, a witnessed race") {
  for (bool interleaved : {false, true}) {
    CAPTURE(interleaved);
    TreeReduction k(interleaved);
    INFO(print_program(k.prog).str());
    REQUIRE(codegen::count_barriers(k.prog) == 2);
    const auto r = codegen::verify_barriers(k.prog);
    INFO(r.message());
    CHECK(r.ok());
    CHECK(r.analysis == BarrierAnalysis::enumerated);
    CHECK(r.fallback.empty());
    for (std::size_t i = 0; i < 2; ++i) {
      const auto d = codegen::verify_barriers(codegen::drop_barrier(k.prog, i));
      INFO(d.message());
      REQUIRE_FALSE(d.ok());
      CHECK(d.violations[0].proven);
      CHECK(d.violations[0].store.op() == Ops::STORE);
      CHECK(has(d.message(), "lidx0="));
      CHECK(has(d.message(), "in one barrier interval"));
    }
    // the tail barrier: the next step reads what another work-item wrote in this one
    const auto tail = codegen::verify_barriers(codegen::drop_barrier(k.prog, 1));
    bool carried = false;
    for (const auto& v : tail.violations) carried = carried || v.loop_carried;
    CHECK(carried);
    CHECK(has(tail.message(), "across a loop's back edge"));
  }
}

TEST_CASE("every work-item storing one element: write after write, with the two work-items") {
  Arena a;
  UOp buf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp out = param(a, 0, DType::float32, 16);
  UOp l = lid(a, 16);
  UOp st = store(index(buf, i32(a, 0)), cast(l, DType::float32));
  const auto prog = lower(sink(store(index(out, l), load(index(after(buf, st), l)))));
  const auto r = codegen::verify_barriers(prog);
  INFO(r.message());
  REQUIRE_FALSE(r.ok());
  bool waw = false;
  for (const auto& v : r.violations)
    if (v.kind == BarrierViolationKind::write_after_write) {
      waw = true;
      CHECK(v.store == st);
      CHECK(v.proven);
      CHECK(has(v.message.str(), "is run by two work-items"));
      CHECK(has(v.message.str(), "stores element 0"));
    }
  CHECK(waw);
}

TEST_CASE("work-items that differ only in a local id no index reads touch the same elements") {
  Arena a;
  UOp buf = buffer(a, 0, DType::float32, 8, AddrSpace::LOCAL);
  UOp out = param(a, 0, DType::float32, 32);
  UOp l0 = lid(a, 8, "lidx0"), l1 = lid(a, 4, "lidx1");
  UOp st = store(index(buf, l0), cast(l1, DType::float32));  // the clones store different values
  const std::vector<UOp> prog = lower(sink(store(index(out, l0 + l1 * 8), load(index(after(buf, st), l0)))));
  const auto r = codegen::verify_barriers(prog);
  INFO(r.message());
  REQUIRE_FALSE(r.ok());
  CHECK(r.violations.back().kind == BarrierViolationKind::write_after_write);
  CHECK(has(r.message(), "lidx0=0 stores element 0, then another work-item with lidx0=0 (it differs only in a local id the indices do not read) stores element 0"));
  // with lidx1 of extent 1 there is one work-item per element
  Arena b;
  UOp buf2 = buffer(b, 0, DType::float32, 8, AddrSpace::LOCAL);
  UOp out2 = param(b, 0, DType::float32, 8);
  UOp m0 = lid(b, 8, "lidx0"), m1 = lid(b, 1, "lidx1");
  UOp st2 = store(index(buf2, m0), f32(b, 1));
  CHECK(codegen::verify_barriers(lower(sink(store(index(out2, m0 + m1), load(index(after(buf2, st2), m0)))))).ok());
}

TEST_CASE("one STORE writing the same value from several work-items is no race; another value or STORE is") {
  // a GROUP reduce's partial indexed by lidx0 only: the work-items of lidx1 store identical partials
  enum Variant { same_value, value_reads_lidx1, two_stores, value_reads_loop };
  for (Variant var : {same_value, value_reads_lidx1, two_stores, value_reads_loop}) {
    CAPTURE(var);
    Arena a;
    UOp buf = buffer(a, 0, DType::float32, 8, AddrSpace::LOCAL);
    UOp out = param(a, 0, DType::float32, 32), in = param(a, 1, DType::float32, 32);
    UOp l0 = lid(a, 8, "lidx0"), l1 = lid(a, 4, "lidx1");
    UOp r = range(i32(a, 3), 0, AxisType::LOOP);
    UOp partial = load(index(in, var == value_reads_lidx1 ? l0 + l1 * 8 : l0)) * f32(a, 2);
    UOp filled;
    if (var == two_stores) {  // a second STORE node of the same element and value, unordered
      UOp twice = f32(a, 2) * load(index(in, l0));
      filled = after(buf, store(index(buf, l0), partial), store(index(buf, l0), twice));
    } else if (var == value_reads_loop) {  // inside a loop without a barrier, each iteration another value
      filled = after(buf, end(store(index(buf, l0), partial + cast(r, DType::float32)), r));
    } else {
      filled = after(buf, store(index(buf, l0), partial));
    }
    const auto prog = lower(sink(store(index(out, l0 + l1 * 8), load(index(filled, 7 - l0)))));
    INFO(print_program(prog).str());
    REQUIRE(codegen::count_barriers(prog) == 1);
    const auto r1 = codegen::verify_barriers(prog);
    const auto small = codegen::verify_barriers(prog, {.enumeration_budget = 1});
    INFO(r1.message());
    INFO(small.message());
    if (var == same_value) {
      CHECK(r1.ok());
      CHECK(small.ok());
      continue;
    }
    REQUIRE_FALSE(r1.ok());
    CHECK(r1.analysis == BarrierAnalysis::enumerated);
    CHECK(r1.violations.size() == 1);
    CHECK(r1.violations[0].kind == BarrierViolationKind::write_after_write);
    CHECK(r1.violations[0].proven);
    CHECK(has(r1.message(), var == two_stores ? "are run by two work-items" : "is run by two work-items"));
    if (var == value_reads_loop) CHECK(r1.violations[0].loop_carried);
    // the symbolic fallback stays conservative
    REQUIRE_FALSE(small.ok());
    CHECK(small.analysis == BarrierAnalysis::symbolic);
    CHECK(small.violations[0].kind == BarrierViolationKind::write_after_write);
  }
}

TEST_CASE("work-items that agree on every part of the value reading local ids store the same value") {
  // buf[lidx0 >> 1] = in[lidx0 >> 1] * 2: lidx0 = 2k and 2k+1 store one element, the same value (a
  // kernel whose local axes were merged into one id: a GROUP reduce's items beside a LOCAL tile). A
  // value that also reads lidx0 itself, or lidx0 & 1, differs between them.
  enum Variant { halves, reads_id, reads_low_bit };
  for (Variant var : {halves, reads_id, reads_low_bit}) {
    CAPTURE(var);
    Arena a;
    UOp buf = buffer(a, 0, DType::float32, 4, AddrSpace::LOCAL);
    UOp out = param(a, 0, DType::float32, 8), in = param(a, 1, DType::float32, 8);
    UOp l0 = lid(a, 8, "lidx0");
    UOp half = alu(Ops::SHR, l0, i32(a, 1));
    UOp value = load(index(in, half)) * f32(a, 2);
    if (var == reads_id) value = value + cast(l0, DType::float32);
    if (var == reads_low_bit) value = value + cast(alu(Ops::AND, l0, i32(a, 1)), DType::float32);
    UOp filled = after(buf, store(index(buf, half), value));
    const auto prog = lower(sink(store(index(out, l0), load(index(filled, 3 - half)))));
    INFO(print_program(prog).str());
    const auto exact = codegen::verify_barriers(prog);
    INFO(exact.message());
    if (var == halves) {
      CHECK(exact.ok());
      continue;
    }
    REQUIRE_FALSE(exact.ok());
    CHECK(exact.analysis == BarrierAnalysis::enumerated);
    CHECK(exact.violations[0].kind == BarrierViolationKind::write_after_write);
    CHECK(exact.violations[0].proven);
  }
}

TEST_CASE("a buffer every work-item fills alike in a loop is no race, in any iteration the work-items are") {
  // for r: buf[k(r)] = f(r); barrier; out[lidx0] = buf[lidx0]. The work-items of a group run the loop
  // unsynchronised, so one may store element e while another does, in another iteration: the same value
  // wherever k tells the iteration apart (k = r, 4*r + 1 over a width of 1). A value that also reads
  // the local id, or an index that two iterations share (r & 3 over r < 8), is a race.
  enum Variant { by_element, strided, reads_lidx, shared_index };
  for (Variant var : {by_element, strided, reads_lidx, shared_index}) {
    CAPTURE(var);
    Arena a;
    UOp buf = buffer(a, 0, DType::float32, 32, AddrSpace::LOCAL);
    UOp out = param(a, 0, DType::float32, 8), in = param(a, 1, DType::float32, 8);
    UOp l0 = lid(a, 8, "lidx0");
    UOp r = range(i32(a, 8), 0, AxisType::LOOP);
    UOp k = var == strided ? r * 4 + 1 : var == shared_index ? alu(Ops::AND, r, i32(a, 3)) : r;
    UOp value = load(index(in, r)) * f32(a, 2) + cast(r, DType::float32);
    if (var == reads_lidx) value = value + cast(l0, DType::float32);
    UOp filled = after(buf, end(store(index(buf, k), value), r));
    const auto prog = lower(sink(store(index(out, l0), load(index(filled, var == strided ? l0 * 4 + 1 : l0)))));
    const auto small = check_both_ways(prog, var == reads_lidx || var == shared_index);
    if (var == shared_index)  // no local id is read: the message names no work-item's ids
      CHECK(has(small.message(), "could not be proven disjoint: two work-items that differ only in a local id the "
                                 "indices do not read (%"));
  }
}

TEST_CASE("a buffer every work-item fills alike per local slice, inside a loop a barrier separates the iterations of") {
  // for j: { for k: buf[l1*4 + j*8 + k] = f(l1, j, k); barrier; out[...] = buf[j*8 + l0] }: the work-items
  // that differ in l0 store one element the same value; those that differ in l1 store other elements,
  // since a barrier in j's body puts every two runs of the store that no barrier separates in one j.
  // An index term on a local id the value does not read (l0), or j's iterations not separated by a
  // barrier (the read after the loop) while the index leaves j out, is a race.
  enum Variant { slice, foreign_local, j_without_barrier };
  for (Variant var : {slice, foreign_local, j_without_barrier}) {
    CAPTURE(var);
    Arena a;
    UOp buf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
    UOp out = param(a, 0, DType::float32, 32), in = param(a, 1, DType::float32, 16);
    UOp l0 = lid(a, 8, "lidx0"), l1 = lid(a, 2, "lidx1");
    UOp j = range(i32(a, 2), 1, AxisType::LOOP), k = range(i32(a, 4), 0, AxisType::LOOP);
    UOp value = load(index(in, l1 * 4 + j * 8 + k)) * f32(a, 2);
    UOp idx = var == foreign_local ? alu(Ops::AND, l0, i32(a, 1)) + j * 8 + k : var == j_without_barrier ? l1 * 4 + k : l1 * 4 + j * 8 + k;
    UOp fill = end(store(index(buf, idx), value), k);
    UOp o = var == j_without_barrier
                ? store(index(out, l0 + l1 * 8), load(index(after(buf, end(fill, j)), l0)))
                : end(store(index(out, l0 + l1 * 8 + j * 16), load(index(after(buf, fill), j * 8 + l0))), j);
    check_both_ways(lower(sink(o)), var != slice);
  }
}

TEST_CASE("two accesses inside a loop a barrier separates the iterations of share its iteration, also across an inner loop") {
  // for j: { for k: { buf[i] = in[i]; out2[i] = buf[i] * 2 } (i = j*16 + l0*4 + k); barrier;
  // out[j*4 + l0] = buf[j*16 + ((l0+1)&3)*4] }: the store and the load of one work-item are joined around
  // k without a barrier, but every way around j passes the barrier, so two work-items running them in
  // one barrier interval are in one j and their elements l0*4 + k differ (the symbolic check let j
  // differ, and j*16 made l0 and l0+1 seem to meet). With l0*2 + k the elements of two work-items meet.
  for (bool overlap : {false, true}) {
    CAPTURE(overlap);
    Arena a;
    UOp buf = buffer(a, 0, DType::float32, 32, AddrSpace::LOCAL);
    UOp out = param(a, 0, DType::float32, 8), out2 = param(a, 1, DType::float32, 32), in = param(a, 2, DType::float32, 32);
    UOp l0 = lid(a, 4, "lidx0");
    UOp j = range(i32(a, 2), 1, AxisType::LOOP), k = range(i32(a, 4), 0, AxisType::LOOP);
    UOp i = j * 16 + l0 * (overlap ? 2 : 4) + k;
    UOp st = store(index(buf, i), load(index(in, i)) + cast(l0, DType::float32));
    UOp rd = end(store(index(out2, i), load(index(after(buf, st), i)) * f32(a, 2)), k);
    UOp y = load(index(after(buf, barrier(rd)), j * 16 + alu(Ops::AND, l0 + 1, i32(a, 3)) * 4));
    // the barriers placed by hand: after the k loop, and at the end of j's body before the next stores
    const auto prog = lower(sink(end(barrier(store(index(out, j * 4 + l0), y)), j)), false);
    INFO(print_program(prog).str());
    REQUIRE(codegen::count_barriers(prog) == 2);
    const auto exact = codegen::verify_barriers(prog);
    const auto small = codegen::verify_barriers(prog, {.enumeration_budget = 1});
    INFO(exact.message());
    INFO(small.message());
    CHECK(exact.ok() == !overlap);
    CHECK(small.ok() == !overlap);
    CHECK(small.analysis == BarrierAnalysis::symbolic);
  }
}

TEST_CASE("a value loaded from LOCAL memory at an index no local id reads is the same for every work-item") {
  // Y[lidx1] = in[lidx1]; barrier; X[lidx0] = Y[k] * 2 from every lidx1. With k = 0 every work-item
  // reads the one shared element, whoever stored it (the model harness's GROUPTOP argmin: tinygrad
  // renders it and Oclgrind finds no race); with k = lidx1 the values differ.
  for (bool uniform : {true, false}) {
    CAPTURE(uniform);
    Arena a;
    UOp x = buffer(a, 0, DType::float32, 8, AddrSpace::LOCAL), y = buffer(a, 1, DType::float32, 4, AddrSpace::LOCAL);
    UOp out = param(a, 0, DType::float32, 32), in = param(a, 1, DType::float32, 4);
    UOp l0 = lid(a, 8, "lidx0"), l1 = lid(a, 4, "lidx1");
    UOp y_filled = after(y, store(index(y, l1), load(index(in, l1))));
    UOp value = load(index(y_filled, uniform ? i32(a, 0) : l1)) * f32(a, 2);
    UOp x_filled = after(x, store(index(x, l0), value));
    const auto prog = lower(sink(store(index(out, l0 + l1 * 8), load(index(x_filled, 7 - l0)))));
    INFO(print_program(prog).str());
    REQUIRE(codegen::count_barriers(prog) == 2);
    const auto exact = codegen::verify_barriers(prog);
    const auto small = codegen::verify_barriers(prog, {.enumeration_budget = 1});
    INFO(exact.message());
    INFO(small.message());
    if (uniform) {
      CHECK(exact.ok());
      CHECK(small.ok());
      continue;
    }
    REQUIRE_FALSE(exact.ok());
    CHECK(exact.violations[0].kind == BarrierViolationKind::write_after_write);
    CHECK(exact.violations[0].proven);
    CHECK_FALSE(small.ok());
  }
}

TEST_CASE("disjoint parts of one buffer need no barrier; vector accesses cover their lanes") {
  Arena a;
  UOp buf = buffer(a, 0, DType::float32, 32, AddrSpace::LOCAL);
  UOp out = param(a, 0, DType::float32, 16);
  UOp l = lid(a, 8);
  // each work-item stores 4 lanes at 4*l, then reads lane 3 of its own group of four: no race
  UOp v = stack(f32(a, 1), f32(a, 2), f32(a, 3), f32(a, 4));
  UOp st = store(node(Ops::SHRINK, {buf, l * 4, i32(a, 4)}), v);
  const std::vector<UOp> own = lower(sink(store(index(out, l), load(index(after(buf, st), l * 4 + 3)))), false);
  const auto r = codegen::verify_barriers(own);
  INFO(print_program(own).str());
  INFO(r.message());
  CHECK(r.ok());
  // reading lane 0 of the next work-item's four races with its store
  const std::vector<UOp> next = lower(sink(store(index(out, l), load(index(after(buf, st), l * 4 + 4)))), false);
  const auto n = codegen::verify_barriers(next);
  INFO(n.message());
  REQUIRE_FALSE(n.ok());
  CHECK(n.violations[0].proven);
  // stores to the lower half, loads from the upper half: disjoint without a barrier
  UOp st_low = store(index(buf, l), f32(a, 1));
  const std::vector<UOp> halves = lower(sink(store(index(out, l), load(index(after(buf, st_low), l + 16)))), false);
  CHECK(codegen::verify_barriers(halves).ok());
}

TEST_CASE("gates and IFs: only the work-items that run an access take part") {
  Arena a;
  UOp buf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp out = param(a, 0, DType::float32, 16);
  UOp l = lid(a, 16);
  UOp first = eq(l, i32(a, 0));
  // work-item 0 stores [0], everyone reads [0] after a barrier: fine
  UOp st = store(index(buf, i32(a, 0)), f32(a, 2), first);
  UOp ok_prog = sink(store(index(out, l), load(index(after(buf, st), i32(a, 0)))));
  const auto prog = lower(ok_prog);
  REQUIRE(codegen::count_barriers(prog) == 1);
  CHECK(codegen::verify_barriers(prog).ok());
  const auto d = codegen::verify_barriers(codegen::drop_barrier(prog, 0));
  INFO(d.message());
  REQUIRE_FALSE(d.ok());
  CHECK(d.violations[0].kind == BarrierViolationKind::read_after_write);
  CHECK(has(d.message(), "lidx0=0 stores element 0"));
  // a gated load that only work-item 0 runs reads its own element: no race
  UOp st_own = store(index(buf, l), f32(a, 3));
  UOp own = sink(store(index(out, l), load(index(after(buf, st_own), i32(a, 0)), f32(a, 0), first)));
  CHECK(codegen::verify_barriers(lower(own, false)).ok());
}

TEST_CASE("an index read from memory cannot be proven disjoint, and the report says so") {
  Arena a;
  UOp buf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp out = param(a, 0, DType::float32, 16), idx = param(a, 1, DType::int32, 16);
  UOp l = lid(a, 16);
  UOp where_to = load(index(idx, l));
  UOp st = store(index(buf, where_to), f32(a, 1));
  const auto prog = lower(sink(store(index(out, l), load(index(after(buf, st), l)))), false);
  const auto r = codegen::verify_barriers(prog);
  INFO(r.message());
  REQUIRE_FALSE(r.ok());
  CHECK(r.analysis == BarrierAnalysis::enumerated);
  for (const auto& v : r.violations) CHECK_FALSE(v.proven);
  CHECK(has(r.message(), "could not be proven disjoint"));
  CHECK(has(r.message(), "a value read from memory"));
}

TEST_CASE("divergence is decided by the work-items' paths: a condition true for all of them is uniform") {
  Arena a;
  UOp buf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp out = param(a, 0, DType::float32, 16);
  UOp l = lid(a, 16);
  auto program = [&](std::int64_t bound) {
    UOp st = store(index(buf, l), f32(a, 1));
    UOp cond = l < i32(a, bound);
    UOp addr = index(out, l);
    UOp mif = a.make(Ops::IF, DType::void_, {cond, addr});
    UOp bar = barrier(st);
    UOp mend = a.make(Ops::ENDIF, DType::void_, {mif});
    UOp next = (l + 1) % 16;
    UOp aft = after(buf, bar), at = index(aft, next), ld = load(at);
    UOp st_out = store(addr, ld);
    // everything the IF does not order first, then IF, BARRIER, ENDIF and the read behind them
    std::vector<UOp> p, tail{mif, bar, mend, aft, at, ld, st_out};
    for (UOp u : toposort(sink(st_out)))
      if (u.op() != Ops::SINK && std::find(tail.begin(), tail.end(), u) == tail.end()) p.push_back(u);
    for (UOp u : tail) p.push_back(u);
    p.push_back(sink(st_out));
    return p;
  };
  // every work-item has l < 16: they all reach the barrier
  const auto all = codegen::verify_barriers(program(16));
  INFO(all.message());
  CHECK(all.ok());
  // only l < 8 reach it: divergent, with the work-items named
  const auto half = codegen::verify_barriers(program(8));
  INFO(half.message());
  REQUIRE_FALSE(half.ok());
  CHECK(half.violations[0].kind == BarrierViolationKind::divergent_barrier);
  CHECK(half.violations[0].control.op() == Ops::IF);
  CHECK(has(half.message(), "lidx0=8 has finished"));
  // the symbolic check, which cannot follow the paths, rejects both
  codegen::BarrierVerifierOptions none;
  none.enumeration_budget = 0;
  CHECK(codegen::verify_barriers(program(16), none).violations[0].kind == BarrierViolationKind::divergent_barrier);
}

TEST_CASE("beyond the enumeration budget: the symbolic check, which says why it was used") {
  // the tiled-matmul shape: affine indices, a RAW and a loop-tail WAR barrier
  Arena a;
  UOp c = param(a, 0, DType::float32, 64), A = param(a, 1, DType::float32, 256);
  UOp ta = buffer(a, 0, DType::float32, 64, AddrSpace::LOCAL);
  UOp acc = buffer(a, 1, DType::float32, 1, AddrSpace::REG);
  UOp ly = lid(a, 8, "lidx0"), lx = lid(a, 8, "lidx1");
  UOp kt = range(i32(a, 4), 0, AxisType::REDUCE), k = range(i32(a, 8), 1, AxisType::REDUCE);
  UOp zero = i32(a, 0);
  UOp init = store(index(acc, zero), f32(a, 0));
  UOp st = store(index(ta, ly * 8 + lx), load(index(A, kt * 64 + ly * 8 + lx)));
  UOp acc_i = index(after(acc, init, kt, k), zero);
  UOp inner = end(store(acc_i, load(acc_i) + load(index(after(ta, st), ly * 8 + k))), k);
  const std::vector<UOp> prog = lower(sink(store(index(c, ly * 8 + lx), load(index(after(acc, end(inner, kt)), zero)))));
  REQUIRE(codegen::count_barriers(prog) == 2);
  // the symbolic check proves it without enumerating
  const auto r = codegen::verify_barriers(prog);
  INFO(r.message());
  CHECK(r.ok());
  CHECK(r.analysis == BarrierAnalysis::symbolic);
  CHECK(r.fallback.empty());
  codegen::BarrierVerifierOptions small;
  small.enumeration_budget = 100;
  for (std::size_t i = 0; i < 2; ++i) {
    const std::vector<UOp> dropped = codegen::drop_barrier(prog, i);
    // within the budget: enumerated, a witness
    const auto e = codegen::verify_barriers(dropped);
    REQUIRE_FALSE(e.ok());
    CHECK(e.analysis == BarrierAnalysis::enumerated);
    CHECK(e.violations[0].proven);
    // beyond it: the symbolic findings, unproven, saying why
    const auto d = codegen::verify_barriers(dropped, small);
    INFO(d.message());
    REQUIRE_FALSE(d.ok());
    CHECK(d.analysis == BarrierAnalysis::symbolic);
    CHECK(has(d.fallback.str(), "too large to enumerate"));
    CHECK_FALSE(d.violations[0].proven);
    CHECK(has(d.message(), "could not be proven disjoint"));
    CHECK(has(d.message(), "not enumerated: too large to enumerate"));
  }
}

TEST_CASE("a loop bound the verifier cannot know: symbolic check, and the reason") {
  Arena a;
  UOp buf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp out = param(a, 0, DType::float32, 16);
  ParamArg var;
  var.slot = 1;
  var.dtype = DType::int32;
  var.addrspace = AddrSpace::ALU;
  var.vmin_vmax = std::pair<std::int64_t, std::int64_t>{1, 8};
  var.has_name = true;
  var.name = "n";
  UOp n = a.make(Ops::PARAM, DType::int32, {}, var.to_arg());
  UOp l = lid(a, 16);
  UOp r = range(n, 0, AxisType::LOOP);
  // an index the symbolic check cannot split into a local-id part and the rest
  UOp st = store(index(buf, (l + r) % 16), cast(l, DType::float32));
  const std::vector<UOp> prog = lower(sink(end(store(index(out, l), load(index(after(buf, st), l))), r)));
  const auto rep = codegen::verify_barriers(prog);
  INFO(print_program(prog).str());
  INFO(rep.message());
  CHECK(rep.analysis == BarrierAnalysis::symbolic);
  CHECK(has(rep.fallback.str(), "is not known before the kernel runs"));
  REQUIRE_FALSE(rep.ok());
  CHECK_FALSE(rep.violations[0].proven);
  CHECK(has(rep.message(), "reads the local id together with"));
  // with the bound known, the enumeration shows the program race-free
  Arena b;
  UOp buf2 = buffer(b, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp out2 = param(b, 0, DType::float32, 16);
  UOp l2 = lid(b, 16);
  UOp r2 = range(i32(b, 4), 0, AxisType::LOOP);
  UOp st2 = store(index(buf2, (l2 + r2) % 16), cast(r2, DType::float32));
  const auto known = codegen::verify_barriers(lower(sink(end(store(index(out2, l2), load(index(after(buf2, st2), l2))), r2))));
  INFO(known.message());
  CHECK(known.ok());
  CHECK(known.analysis == BarrierAnalysis::enumerated);
}

TEST_CASE("explaining barriers: what each orders, which are redundant; pruning keeps the others") {
  TreeReduction k;
  const auto roles = codegen::explain_barriers(k.prog);
  REQUIRE(roles.size() == 2);
  for (const auto& r : roles) {
    CHECK_FALSE(r.redundant());
    CHECK(k.prog.at(r.pos) == r.barrier);
    for (const auto& v : r.orders) {
      CHECK(v.store == k.prog.at(v.store_pos));
      CHECK(v.store.op() == Ops::STORE);
    }
  }
  const std::string text = codegen::explain_barriers_text(k.prog);
  INFO(text);
  CHECK(has(text, ": orders LOCAL buffer %"));
  CHECK(has(text, "(read after write"));
  CHECK(has(text, "across the loop's back edge"));
  CHECK(codegen::prune_barriers(k.prog) == k.prog);
  // work-item 0 writes [0] and only work-item 0 reads it: the implicit barrier orders nothing
  Arena a;
  UOp buf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp out = param(a, 0, DType::float32, 16);
  UOp l = lid(a, 16);
  UOp first = eq(l, i32(a, 0));
  UOp st = store(index(buf, i32(a, 0)), f32(a, 2), first);
  const auto prog = lower(sink(store(index(out, l), load(index(after(buf, st), i32(a, 0)), f32(a, 0), first))));
  REQUIRE(codegen::count_barriers(prog) == 1);
  CHECK(codegen::explain_barriers(prog).at(0).redundant());
  CHECK(has(codegen::explain_barriers_text(prog), ": redundant (removing it creates no race)"));
  const auto pruned = codegen::prune_barriers(prog);
  CHECK(codegen::count_barriers(pruned) == 0);
  CHECK(codegen::verify_barriers(pruned).ok());
}

TEST_CASE("malformed programs get a verdict naming the instruction, never a crash") {
  Arena a;
  UOp buf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp l = lid(a, 16);
  UOp addr = index(buf, l);
  UOp st = store(addr, f32(a, 1));
  UOp r1 = range(i32(a, 4), 0, AxisType::LOOP), r2 = range(i32(a, 4), 1, AxisType::LOOP);
  auto malformed = [](const std::vector<UOp>& p, std::string_view what) {
    const auto r = codegen::verify_barriers(p);
    INFO(r.message());
    REQUIRE(r.violations.size() == 1);
    CHECK(r.violations[0].kind == BarrierViolationKind::malformed);
    CHECK(has(r.message(), "malformed program"));
    CHECK(has(r.message(), what));
  };
  // a source after its user
  malformed({buf, addr, l, st, sink(st)}, "which is not before it");
  // an outer loop closed while the inner one is open
  UOp e1 = a.make(Ops::END, DType::void_, {st, r1});
  malformed({buf, l, addr, r1, r2, st, e1, sink(e1)}, "is still open");
  // the same node twice
  malformed({buf, l, addr, st, st, sink(st)}, "already at position");
  // an END that closes nothing
  UOp e0 = a.make(Ops::END, DType::void_, {st});
  malformed({buf, l, addr, st, e0, sink(e0)}, "closes no RANGE");
  // a RANGE never closed
  malformed({buf, l, r1, addr, st, sink(st)}, "a RANGE without its END");
  // nothing to check
  CHECK(codegen::verify_barriers(std::vector<UOp>{sink(st)}).ok());
  CHECK(codegen::verify_barriers(std::vector<UOp>{UOp()}).violations.at(0).kind == BarrierViolationKind::malformed);
}
