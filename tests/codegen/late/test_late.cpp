// The "late" stage group: add implicit barriers (21), add control flow (22), number params (23), the
// linearizer and the barrier verifier. Corpus checks (stage dumps and the linear programs) and
// graph-level probes (the seed's barrier probes, control-flow and numbering edge cases, verifier
// rejections and messages).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <vector>

#include <uopcg/codegen/barrier_verifier.hpp>
#include <uopcg/codegen/barriers.hpp>
#include <uopcg/codegen/control_flow.hpp>
#include <uopcg/codegen/linearize.hpp>
#include <uopcg/render/opencl.hpp>

#include "../stage_harness.hpp"

using namespace uopcg;

namespace {

using uopcg_test::check_corpus_stage;

std::string program_text(const std::vector<UOp>& p) { return print_program(p).str(); }

UOp fconst(Arena& a, double v) { return const_(a, DType::float32, Arg::floating(v)); }

std::size_t count_op(UOp root, Ops op) {
  std::size_t n = 0;
  for (UOp u : toposort(root)) n += u.op() == op ? 1 : 0;
  return n;
}

const Target tgt = Target::pocl();

}  // namespace

// --- corpus ---------------------------------------------------------------------------------------------

TEST_CASE("corpus: add implicit barriers") {
  check_corpus_stage("add implicit barriers", [](UOp u, const Target& t) { return codegen::add_implicit_barriers(u, t); });
}

TEST_CASE("corpus: add control flow") {
  check_corpus_stage("add control flow", [](UOp u, const Target& t) { return codegen::add_control_flow(u, t); });
}

TEST_CASE("corpus: number params with -1") {
  check_corpus_stage("number params with -1", [](UOp u, const Target& t) { return codegen::number_params(u, t); });
}

TEST_CASE("corpus: the linearizer reproduces every linear program") {
  int same = 0, total = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    const std::vector<UOp> got = codegen::linearize(k.after("number params with -1"), k.target);
    const std::vector<UOp>& expected = k.kernel.linear.instructions;
    ++total;
    const bool ok = got == expected;
    same += ok;
    const std::string what = e.name + "\n--- got\n" + (ok ? "" : program_text(got)) + "--- expected\n" +
                             (ok ? "" : program_text(expected));
    INFO(what);
    CHECK(ok);
  }
  MESSAGE("linearize: " << same << "/" << total << " kernels match");
}

namespace {

// Whether the n-th BARRIER of `prog` has another BARRIER next to it with no LOCAL access and no control
// flow in between: dropping it then leaves the program race-free (a barrier orders every access).
bool barrier_is_redundant(const std::vector<UOp>& prog, std::size_t n) {
  std::size_t at = prog.size(), k = 0;
  for (std::size_t i = 0; i < prog.size(); ++i)
    if (prog[i].op() == Ops::BARRIER && k++ == n) at = i;
  auto blocks = [&](UOp u) {
    constexpr OpSet control{Ops::RANGE, Ops::END, Ops::IF, Ops::ENDIF};
    if (control.contains(u.op())) return true;
    if (u.op() != Ops::LOAD && u.op() != Ops::STORE) return false;
    UOp x = u.src(0);
    while (x.nsrc() > 0 && x.op() != Ops::BUFFER && x.op() != Ops::PARAM) x = x.src(0);
    return x.addrspace() == AddrSpace::LOCAL;
  };
  for (int dir : {-1, 1})
    for (std::size_t i = at + dir; i < prog.size(); i += dir) {
      if (prog[i].op() == Ops::BARRIER) return true;
      if (blocks(prog[i])) break;
    }
  return false;
}

}  // namespace

TEST_CASE("corpus: the verifier accepts every linear program and rejects each one missing a barrier") {
  int kernels_with_barriers = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    // a kernel whose tinygrad program is known to be wrong carries a fixed one: that one must pass
    const std::vector<UOp>& prog = k.kernel.fixed_linear ? k.kernel.fixed_linear->instructions : k.kernel.linear.instructions;
    const auto report = codegen::verify_barriers(prog);
    {
      const std::string what = e.name + ": " + report.message();
      INFO(what);
      CHECK(report.ok());
    }
    const std::size_t nb = codegen::count_barriers(prog);
    bool has_local = false;
    for (UOp u : prog) has_local = has_local || (u.op() == Ops::BUFFER && u.addrspace() == AddrSpace::LOCAL);
    CHECK(has_local == (nb > 0));
    if (nb > 0) ++kernels_with_barriers;
    for (std::size_t i = 0; i < nb; ++i) {
      const std::vector<UOp> dropped = codegen::drop_barrier(prog, i);
      CHECK(dropped.size() == prog.size() - 1);
      CHECK(codegen::count_barriers(dropped) == nb - 1);
      const auto r = codegen::verify_barriers(dropped);
      const std::string what = e.name + " without barrier #" + std::to_string(i);
      INFO(what);
      if (r.ok()) {
        CHECK(barrier_is_redundant(prog, i));
        continue;
      }
      const auto& v = r.violations[0];
      CHECK((v.kind == codegen::BarrierViolationKind::read_after_write ||
             v.kind == codegen::BarrierViolationKind::write_after_read));
      CHECK(v.store.op() == Ops::STORE);
      CHECK(v.load.op() == Ops::LOAD);
      CHECK(v.buffer.addrspace() == AddrSpace::LOCAL);
      CHECK_THROWS_AS(codegen::check_barriers(dropped), uopcg::error);
    }
  }
  CHECK(kernels_with_barriers >= 1);
}

TEST_CASE("corpus: the late stages chained from casted consts give the linear program") {
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    UOp g = k.after("casted consts");
    g = codegen::add_implicit_barriers(g, k.target);
    g = codegen::add_control_flow(g, k.target);
    g = codegen::number_params(g, k.target);
    INFO(e.name);
    CHECK(codegen::linearize(g, k.target) == k.kernel.linear.instructions);
  }
}

// --- stage 21: the seed's probes ----------------------------------------------------------------------

namespace {

// A LOCAL tile stored at lidx0 inside a loop over `r`, read back at r, and a global output store.
struct WarKernel {
  Arena a;
  UOp out, lbuf, lid, r, st, aft, ld, body, e, sk;
  explicit WarKernel(AxisType type, std::int64_t trips = 4) {
    out = param(a, 0, DType::float32, 16);
    lbuf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
    lid = special(a, 16, "lidx0");
    r = range(a, trips, 0, type);
    st = store(index(lbuf, lid), cast(r, DType::float32));
    aft = after(lbuf, st);
    ld = load(index(aft, r));
    body = store(index(out, lid), ld);
    e = end(body, r);
    sk = sink(e);
  }
};

}  // namespace

TEST_CASE("barriers: an AFTER on LOCAL behind a LOCAL STORE gets a RAW barrier") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 1);
  UOp lbuf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp lid = special(a, 16, "lidx0");
  UOp st = store(index(lbuf, lid), fconst(a, 1.0));
  UOp ld = load(index(after(lbuf, st), literal(a, 3)));
  UOp sk = sink(store(index(out, literal(a, 0)), ld));
  UOp got = codegen::add_implicit_barriers(sk, tgt);
  UOp expected = sink(store(index(out, literal(a, 0)), load(index(after(lbuf, barrier(st)), literal(a, 3)))));
  CHECK(got == expected);
  // already behind a barrier: nothing more
  CHECK(codegen::add_implicit_barriers(got, tgt) == got);
  CHECK_FALSE(codegen::add_raw_barrier(after(lbuf, barrier(st))).has_value());
  // a LOCAL store behind a BARRIER does not count, one beside it does
  UOp st2 = store(index(lbuf, lid + 1), fconst(a, 2.0));
  UOp mixed = after(lbuf, barrier(st), st2);
  auto r = codegen::add_raw_barrier(mixed);
  REQUIRE(r.has_value());
  CHECK(*r == after(lbuf, barrier(barrier(st), st2)));
}

TEST_CASE("barriers: a RAW barrier needs a LOCAL AFTER and a LOCAL STORE among its deps") {
  Arena a;
  UOp lbuf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp rbuf = buffer(a, 1, DType::float32, 1, AddrSpace::REG);
  UOp gbuf = param(a, 1, DType::float32, 16);
  UOp lid = special(a, 16, "lidx0");
  UOp r = range(a, 4, 0, AxisType::REDUCE);
  // REG accumulator: no barrier
  UOp reg_st = store(index(rbuf, literal(a, 0)), fconst(a, 0.0));
  CHECK_FALSE(codegen::add_raw_barrier(after(rbuf, reg_st, r)).has_value());
  // LOCAL AFTER whose deps store only to GLOBAL / REG memory: no barrier
  UOp g_st = store(index(gbuf, lid), fconst(a, 0.0));
  CHECK_FALSE(codegen::add_raw_barrier(after(lbuf, g_st, reg_st)).has_value());
  // LOCAL AFTER on a range only: no barrier
  CHECK_FALSE(codegen::add_raw_barrier(after(lbuf, r)).has_value());
  // a LOCAL store of any LOCAL buffer counts (the rule does not look at which buffer)
  UOp other = buffer(a, 2, DType::float32, 16, AddrSpace::LOCAL);
  UOp o_st = store(index(other, lid), fconst(a, 0.0));
  CHECK(codegen::add_raw_barrier(after(lbuf, o_st)).has_value());
  // a store found deep in the dependencies (behind an END) counts
  UOp deep = end(store(index(lbuf, lid + r), fconst(a, 1.0)), r);
  auto d = codegen::add_raw_barrier(after(lbuf, deep));
  REQUIRE(d.has_value());
  CHECK(*d == after(lbuf, barrier(deep)));
  // an INDEX view of LOCAL memory is LOCAL too
  auto v = codegen::add_raw_barrier(after(index(lbuf, lid), o_st));
  REQUIRE(v.has_value());
  CHECK(*v == after(index(lbuf, lid), barrier(o_st)));
}

TEST_CASE("barriers: a multi-iteration REDUCE/LOOP/WEAK range storing and loading one LOCAL buffer gets WAR at its END") {
  for (AxisType type : {AxisType::REDUCE, AxisType::LOOP, AxisType::WEAK}) {
    WarKernel k(type);
    UOp got = codegen::add_implicit_barriers(k.sk, tgt);
    UOp raw = after(k.lbuf, barrier(k.st));
    UOp ld2 = load(index(raw, k.r));
    UOp body2 = store(index(k.out, k.lid), ld2);
    UOp expected = sink(end(barrier(body2, ld2), k.r));
    INFO(name(type));
    CHECK(got == expected);
    CHECK(count_op(got, Ops::BARRIER) == 2);
    // idempotent: the END already ends in a BARRIER
    CHECK(codegen::add_implicit_barriers(got, tgt) == got);
  }
}

TEST_CASE("barriers: no WAR for single-iteration ranges, parallel axes, or an END already on a BARRIER") {
  {
    WarKernel k(AxisType::REDUCE, 1);
    UOp got = codegen::add_implicit_barriers(k.sk, tgt);
    CHECK(count_op(got, Ops::BARRIER) == 1);  // the RAW barrier only
    CHECK_FALSE(codegen::add_war_barrier(k.e).has_value());
  }
  for (AxisType type : {AxisType::GLOBAL, AxisType::LOCAL, AxisType::UPCAST, AxisType::GROUP_REDUCE}) {
    WarKernel k(type);
    INFO(name(type));
    CHECK_FALSE(codegen::add_war_barrier(k.e).has_value());
  }
  {
    WarKernel k(AxisType::REDUCE);
    UOp already = end(barrier(k.body), k.r);
    CHECK_FALSE(codegen::add_war_barrier(already).has_value());
  }
}

TEST_CASE("barriers: no WAR without a LOCAL store in the loop, or when stores and loads use different buffers") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 16);
  UOp la = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp lb = buffer(a, 1, DType::float32, 16, AddrSpace::LOCAL);
  UOp lid = special(a, 16, "lidx0");
  UOp r = range(a, 4, 0, AxisType::REDUCE);
  // no LOCAL store at all: a REG buffer stored and loaded in the loop
  {
    UOp rb = buffer(a, 2, DType::float32, 1, AddrSpace::REG);
    UOp st = store(index(rb, literal(a, 0)), cast(r, DType::float32));
    UOp ld = load(index(after(rb, st), literal(a, 0)));
    UOp sk = sink(end(store(index(out, lid), ld), r));
    CHECK(codegen::add_implicit_barriers(sk, tgt) == sk);
  }
  // the loop stores into A and loads B (B was filled before the loop): RAW on B only, no WAR
  {
    UOp fill_b = store(index(lb, lid), fconst(a, 1.0));
    UOp st_a = store(index(la, lid), cast(r, DType::float32));
    UOp ld_b = load(index(after(lb, fill_b), r));
    UOp e = end(group(st_a, store(index(out, lid), ld_b)), r);
    CHECK_FALSE(codegen::add_war_barrier(e).has_value());
    UOp got = codegen::add_implicit_barriers(sink(e), tgt);
    CHECK(count_op(got, Ops::BARRIER) == 1);
  }
  // A stored in an earlier loop and read in this one (through the AFTER chain): not a store of this loop
  {
    UOp r1 = range(a, 4, 1, AxisType::REDUCE);
    UOp e0 = end(store(index(la, lid + r), fconst(a, 1.0)), r);
    UOp ld = load(index(after(la, e0), r1));
    UOp e1 = end(store(index(out, lid), ld), r1);
    CHECK_FALSE(codegen::add_war_barrier(e1).has_value());
  }
}

// --- stage 22 -----------------------------------------------------------------------------------------

TEST_CASE("control flow: a loop after a sibling loop gets its END, a nested loop gets the outer RANGE") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 4);
  UOp acc = buffer(a, 0, DType::float32, 1, AddrSpace::REG);
  UOp zero = literal(a, 0);
  UOp r0 = range(a, 4, 0, AxisType::REDUCE);
  UOp r1 = range(a, 8, 1, AxisType::REDUCE);
  // sequential: loop r1 reads what loop r0 wrote
  UOp e0 = end(store(index(after(acc, r0), zero), cast(r0, DType::float32)), r0);
  UOp e1 = end(store(index(after(acc, e0, r1), zero), cast(r1, DType::float32)), r1);
  UOp sk = sink(e1);
  codegen::CFGContext ctx(sk);
  CHECK(ctx.size() == 1);
  REQUIRE(ctx.edge(r1).has_value());
  CHECK(*ctx.edge(r1) == e0);
  CHECK_FALSE(ctx.edge(r0).has_value());
  UOp r1e = a.make(Ops::RANGE, r1.dtype(), {r1.src(0), e0}, r1.arg());
  CHECK(codegen::add_control_flow(sk, tgt) == substitute(sk, {{r1, r1e}}));

  // nested: r1 inside r0
  UOp inner = end(store(index(out, r0), cast(r1, DType::float32)), r1);
  UOp nest = sink(end(inner, r0));
  UOp r1n = a.make(Ops::RANGE, r1.dtype(), {r1.src(0), r0}, r1.arg());
  CHECK(codegen::add_control_flow(nest, tgt) == substitute(nest, {{r1, r1n}}));

  // independent loops directly under the SINK are chained in first-seen order
  UOp ea = end(store(index(out, r0), fconst(a, 1.0)), r0);
  UOp eb = end(store(index(out, r1), fconst(a, 2.0)), r1);
  UOp two = sink(ea, eb);
  UOp r1c = a.make(Ops::RANGE, r1.dtype(), {r1.src(0), ea}, r1.arg());
  CHECK(codegen::add_control_flow(two, tgt) == substitute(two, {{r1, r1c}}));

  // no loops, or one loop: unchanged
  CHECK(codegen::add_control_flow(sink(store(index(out, zero), fconst(a, 1.0))), tgt) ==
        sink(store(index(out, zero), fconst(a, 1.0))));
  CHECK(codegen::add_control_flow(sink(ea), tgt) == sink(ea));
}

TEST_CASE("control flow: an ordering that would make a cycle is an error naming the RANGE") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 64);
  UOp rc = range(a, 4, 1, AxisType::REDUCE);
  UOp outer = range(rc + 1, 0, AxisType::REDUCE);  // the outer loop's bound depends on the inner range
  UOp inner = end(store(index(out, outer + rc), fconst(a, 1.0)), rc);
  UOp sk = sink(end(inner, outer));
  try {
    codegen::add_control_flow(sk, tgt);
    FAIL("expected an error");
  } catch (const uopcg::error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("add control flow") != std::string::npos);
    CHECK(msg.find("RANGE") != std::string::npos);
    CHECK(msg.find("cycle") != std::string::npos);
  }
}

// --- stage 23 -----------------------------------------------------------------------------------------

TEST_CASE("number params: PARAMs with slot -1 get the slots after the numbered ones, in toposort order") {
  Arena a;
  auto var = [&](std::string_view nm) {
    ParamArg p;
    p.slot = -1;
    p.dtype = DType::int32;
    p.addrspace = AddrSpace::ALU;
    p.has_name = true;
    p.name = nm;
    p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{1, 64};
    return a.make(Ops::PARAM, DType::int32, std::initializer_list<UOp>{}, p.to_arg());
  };
  auto slot_of = [](UOp p) { return ParamArg::from(p.arg()).slot; };
  UOp g0 = param(a, 0, DType::float32, 64);
  UOp g1 = param(a, 1, DType::float32, 64);
  UOp n = var("n"), m = var("m");
  UOp sk = sink(store(index(g0, n), load(index(g1, m))));
  UOp got = codegen::number_params(sk, tgt);
  std::vector<std::int64_t> slots;
  std::vector<std::string> names;
  for (UOp u : toposort(got))
    if (u.op() == Ops::PARAM) {
      slots.push_back(slot_of(u));
      ParamArg p = ParamArg::from(u.arg());
      names.push_back(p.has_name ? std::string(p.name.view()) : "");
    }
  CHECK(slots == std::vector<std::int64_t>{0, 2, 1, 3});
  CHECK(names == std::vector<std::string>{"", "n", "", "m"});
  // nothing to number: the same graph
  CHECK(codegen::number_params(got, tgt) == got);
}

// --- linearize ------------------------------------------------------------------------------------------

TEST_CASE("linearize: a gated STORE becomes IF / STORE / ENDIF and later lines use the ungated store") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 16);
  UOp in = param(a, 1, DType::float32, 16);
  UOp lid = special(cast(literal(a, 16), DType::int32), "lidx0");
  UOp zero = cast(literal(a, 0), DType::int32);
  UOp gate = alu(Ops::CMPEQ, lid, zero);
  UOp addr = index(out, lid);
  UOp st = store(addr, load(index(in, lid)), gate);
  UOp sk = sink(st);
  const std::vector<UOp> prog = codegen::linearize(sk, tgt);
  const std::string text = program_text(prog);
  INFO(text);
  REQUIRE(prog.size() >= 4);
  const std::size_t n = prog.size();
  CHECK(prog[n - 4].op() == Ops::IF);
  CHECK(prog[n - 4] == a.make(Ops::IF, DType::void_, {gate, addr}));
  CHECK(prog[n - 3] == store(addr, load(index(in, lid))));
  CHECK(prog[n - 2] == a.make(Ops::ENDIF, DType::void_, {prog[n - 4]}));
  CHECK(prog[n - 1] == sink(prog[n - 3]));
  // PARAMs lead, in slot order
  CHECK(prog[0].op() == Ops::CONST);
  std::vector<std::int64_t> params;
  for (UOp u : prog)
    if (u.op() == Ops::PARAM) params.push_back(ParamArg::from(u.arg()).slot);
  CHECK(params == std::vector<std::int64_t>{0, 1});
  // IF in the graph is an error
  UOp bad = sink(a.make(Ops::IF, DType::void_, {gate, addr}));
  CHECK_THROWS_AS(codegen::linearize(bad, tgt), uopcg::error);
  CHECK_THROWS_AS(codegen::linearize(addr, tgt), uopcg::error);
}

TEST_CASE("linearize: a gated STORE whose ungated form the program already has stays a STORE of its own") {
  // `acc = v; if (g) acc = v;` (an upcast REG accumulator whose two lanes fold to one store): the
  // ungated copy under the IF would be the very node of the first store, a program holds each node once
  Arena a;
  UOp out = param(a, 0, DType::float32, 16);
  UOp in = param(a, 1, DType::float32, 16);
  UOp lid = special(cast(literal(a, 16), DType::int32), "lidx0");
  UOp gate = alu(Ops::CMPEQ, lid, cast(literal(a, 0), DType::int32));
  UOp addr = index(out, lid);
  UOp v = load(index(in, lid));
  UOp plain = store(addr, v);
  UOp gated = store(addr, v, gate);
  for (UOp sk : {sink(plain, gated), sink(gated, plain)}) {
    const std::vector<UOp> prog = codegen::linearize(sk, tgt);
    const std::string text = program_text(prog);
    INFO(text);
    std::vector<node_id> ids;
    for (UOp u : prog) ids.push_back(u.id());
    std::sort(ids.begin(), ids.end());
    CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
    std::size_t stores = 0, ifs = 0;
    for (std::size_t i = 0; i < prog.size(); ++i) {
      if (prog[i].op() == Ops::IF) {
        ++ifs;
        REQUIRE(i + 2 < prog.size());
        CHECK(prog[i + 1].op() == Ops::STORE);
        CHECK(prog[i + 1].nsrc() == 2);
        CHECK(prog[i + 1].src(0) == addr);
        CHECK(prog[i + 1].src(1) == v);
        CHECK(prog[i + 2].op() == Ops::ENDIF);
      }
      stores += prog[i].op() == Ops::STORE;
    }
    CHECK(ifs == 1);
    CHECK(stores == 2);
    CHECK(std::string(render::render_opencl(prog).source.view()).find("if ((lidx0==0)) {\n    *(data0_16+lidx0) = val0;\n  }") !=
          std::string::npos);
  }
}

TEST_CASE("linearize: two gated STOREs of one address under one gate get an IF each") {
  // `if (g) acc = v0; if (g) acc = v1;` (the upcast lanes of a REG accumulator under a PADTO gate):
  // both IFs would be the node IF(g, acc), a program holds each node once
  Arena a;
  UOp out = param(a, 0, DType::float32, 16);
  UOp in = param(a, 1, DType::float32, 32);
  UOp lid = special(cast(literal(a, 16), DType::int32), "lidx0");
  UOp gate = alu(Ops::CMPLT, lid, cast(literal(a, 15), DType::int32));
  UOp addr = index(out, lid);
  UOp v0 = load(index(in, lid));
  UOp v1 = load(index(in, alu(Ops::ADD, lid, cast(literal(a, 16), DType::int32))));
  const std::vector<UOp> prog = codegen::linearize(sink(store(addr, v0, gate), store(addr, v1, gate)), tgt);
  const std::string text = program_text(prog);
  INFO(text);
  std::vector<node_id> ids;
  for (UOp u : prog) ids.push_back(u.id());
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
  std::vector<UOp> stored;
  for (std::size_t i = 0; i < prog.size(); ++i) {
    if (prog[i].op() != Ops::IF) continue;
    CHECK(prog[i].src(0) == gate);
    CHECK(prog[i].src(1) == addr);
    REQUIRE(i + 2 < prog.size());
    CHECK(prog[i + 1].op() == Ops::STORE);
    CHECK(prog[i + 2] == a.make(Ops::ENDIF, DType::void_, {prog[i]}));
    stored.push_back(prog[i + 1].src(1));
  }
  REQUIRE(stored.size() == 2);
  CHECK(stored[0] != stored[1]);
  const std::string src(render::render_opencl(prog).source.view());
  INFO(src);
  CHECK(src.find("  if (alu0) {\n    *(data0_16+lidx0) = val0;\n  }\n  if (alu0) {\n    *(data0_16+lidx0) = val1;\n  }") !=
        std::string::npos);
}

TEST_CASE("linearize: every node comes after its sources, loads early, a loop's body between RANGE and END") {
  WarKernel k(AxisType::REDUCE);
  UOp g = codegen::add_control_flow(codegen::add_implicit_barriers(k.sk, tgt), tgt);
  const std::vector<UOp> prog = codegen::linearize(g, tgt);
  std::vector<std::size_t> pos(k.a.size(), 0);
  for (std::size_t i = 0; i < prog.size(); ++i) pos[prog[i].id()] = i;
  for (std::size_t i = 0; i < prog.size(); ++i)
    for (UOp s : prog[i].srcs()) CHECK(pos[s.id()] < i);
  CHECK(prog.back().op() == Ops::SINK);
  CHECK(prog.size() == toposort(g).size());
  CHECK(pos[k.lbuf.id()] < pos[k.lid.id()]);  // buffers first
  CHECK(pos[k.r.id()] < pos[k.st.id()]);      // the LOCAL store depends on r: inside the loop
}

TEST_CASE("linearize: structural ranks order nodes exactly as structural_cmp does") {
  // random expression DAGs with much shared structure, equal numbers of different kinds (0, 0.0,
  // false), nodes differing only in their tag, and long runs inserted at the front and at the back
  // of the ranks' list (which makes it relabel)
  std::mt19937 rng(20261201);
  for (int round = 0; round < 12; ++round) {
    Arena a;
    std::vector<UOp> pool;
    const int nconst = round % 3 == 0 ? 150 : 12;
    for (int k = 0; k < nconst; ++k) {
      // descending values: every new CONST orders first; ascending in other rounds: last
      const std::int64_t v = round % 2 == 0 ? nconst - k : k;
      pool.push_back(symbolic::iconst(a, DType::int32, v));
      if (k % 5 == 0) pool.push_back(const_(a, DType::float32, Arg::floating(static_cast<double>(v))));
    }
    pool.push_back(literal(a, false));
    pool.push_back(range(a, 8, 0, AxisType::LOOP));
    pool.push_back(range(a, 8, 1, AxisType::REDUCE));
    constexpr Ops ops[] = {Ops::ADD, Ops::MUL, Ops::MAX, Ops::CMPLT};
    for (int k = 0; k < 300; ++k) {
      UOp x = pool[rng() % pool.size()], y = pool[rng() % pool.size()];
      const Ops op = ops[rng() % 4];
      if (x.dtype() != y.dtype()) y = x;
      UOp u = a.make(op, op == Ops::CMPLT ? DType::bool_ : x.dtype(), {x, y});
      if (rng() % 7 == 0) u = a.make(op, u.dtype(), {x, y}, Arg(), Arg::integer(k));
      pool.push_back(u);
    }
    UOp root = a.make(Ops::SINK, DType::void_, pool);
    const std::vector<UOp> lst = toposort(root);
    std::vector<std::uint32_t> pos(a.size(), 0);
    for (std::size_t i = 0; i < lst.size(); ++i) pos[lst[i].id()] = static_cast<std::uint32_t>(i);
    const std::vector<std::uint32_t> rank = codegen::detail::structural_ranks(lst, pos);
    REQUIRE(rank.size() == lst.size());
    std::size_t mismatches = 0, ties = 0;
    for (std::size_t i = 0; i < lst.size(); ++i)
      for (std::size_t j = 0; j < lst.size(); ++j) {
        const int c = symbolic::structural_cmp(lst[i], lst[j]);
        const int r = rank[i] < rank[j] ? -1 : (rank[i] > rank[j] ? 1 : 0);
        mismatches += (c < 0 ? -1 : (c > 0 ? 1 : 0)) != r;
        ties += i != j && c == 0;
      }
    CHECK(mismatches == 0);
    CHECK(ties > 0);  // the graph does hold structurally equal, distinct nodes
  }
}

// --- the barrier verifier ----------------------------------------------------------------------------

namespace {

// The tiled-matmul shape: a loop over K tiles that stores two LOCAL tiles, reads them in an inner loop
// (RAW barrier) and needs a WAR barrier at its tail before the next tiles are stored.
struct TiledKernel {
  Arena a;
  UOp sk;
  std::vector<UOp> prog;
  TiledKernel() {
    UOp c = param(a, 0, DType::float32, 256), A = param(a, 1, DType::float32, 256), B = param(a, 2, DType::float32, 256);
    UOp ta = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL), tb = buffer(a, 1, DType::float32, 16, AddrSpace::LOCAL);
    UOp acc = buffer(a, 2, DType::float32, 1, AddrSpace::REG);
    UOp lid = special(a, 16, "lidx0");
    UOp kt = range(a, 4, 0, AxisType::REDUCE), k = range(a, 16, 1, AxisType::REDUCE);
    UOp zero = literal(a, 0);
    UOp init = store(index(acc, zero), fconst(a, 0.0));
    UOp st_a = store(index(ta, lid), load(index(A, kt * 16 + lid)));
    UOp st_b = store(index(tb, lid), load(index(B, kt * 16 + lid)));
    UOp acc_i = index(after(acc, init, kt, k), zero);
    UOp prod = load(index(after(ta, st_a, st_b), k)) * load(index(after(tb, st_a, st_b), k));
    // as after stage 19: one range per END, the inner loop's END inside the outer one
    UOp inner = end(store(acc_i, load(acc_i) + prod), k);
    UOp outer = end(inner, kt);
    sk = sink(store(index(c, lid), load(index(after(acc, outer), zero))));
    UOp g = codegen::number_params(codegen::add_control_flow(codegen::add_implicit_barriers(sk, tgt), tgt), tgt);
    prog = codegen::linearize(g, tgt);
  }
};

}  // namespace

TEST_CASE("verifier: a tiled loop has a RAW and a WAR barrier; without the WAR one the race is loop-carried") {
  TiledKernel k;
  const std::string text = program_text(k.prog);
  INFO(text);
  REQUIRE(codegen::count_barriers(k.prog) == 2);
  CHECK(codegen::verify_barriers(k.prog).ok());
  CHECK_NOTHROW(codegen::check_barriers(k.prog));
  // which barrier is the WAR one: the one an END ends on
  std::size_t war = 2, raw = 2, seen = 0;
  for (UOp u : k.prog)
    if (u.op() == Ops::BARRIER) {
      bool ends = false;
      for (UOp v : k.prog) ends = ends || (v.op() == Ops::END && v.src(0) == u);
      (ends ? war : raw) = seen++;
    }
  REQUIRE(war < 2);
  REQUIRE(raw < 2);
  {
    const auto r = codegen::verify_barriers(codegen::drop_barrier(k.prog, war));
    const std::string msg = r.message();
    INFO(msg);
    REQUIRE_FALSE(r.ok());
    bool loop_war = false;
    for (const auto& v : r.violations)
      loop_war = loop_war || (v.kind == codegen::BarrierViolationKind::write_after_read && v.loop_carried);
    CHECK(loop_war);
    CHECK(msg.find("write after read across a loop's back edge") != std::string::npos);
  }
  {
    const auto r = codegen::verify_barriers(codegen::drop_barrier(k.prog, raw));
    const std::string msg = r.message();
    INFO(msg);
    REQUIRE_FALSE(r.ok());
    CHECK(r.violations[0].kind == codegen::BarrierViolationKind::read_after_write);
    CHECK_FALSE(r.violations[0].loop_carried);
    // the message names the buffer, the store and the load with their program lines
    CHECK(msg.find("LOCAL buffer %") != std::string::npos);
    CHECK(msg.find("the STORE %") != std::string::npos);
    CHECK(msg.find("reaches the LOAD %") != std::string::npos);
    CHECK(msg.find("BUFFER float") != std::string::npos);
  }
}

TEST_CASE("verifier: straight-line write after read, and barrier-free REG traffic") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 16);
  UOp lb = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp lid = special(cast(literal(a, 16), DType::int32), "lidx0");
  UOp i0 = cast(literal(a, 0), DType::int32);
  UOp st1 = store(index(lb, lid), cast(literal(a, 1.0), DType::float32));
  UOp bar = barrier(st1);
  UOp ld = load(index(after(lb, bar), i0));
  UOp st_out = store(index(out, lid), ld);
  UOp st2 = store(index(lb, lid), cast(literal(a, 2.0), DType::float32));  // overwrites while others may read
  std::vector<UOp> prog;
  for (UOp u : toposort(sink(st_out, st2))) prog.push_back(u);
  // place the second store after the load
  std::vector<UOp> ordered;
  for (UOp u : prog)
    if (u != st2 && u.op() != Ops::SINK) ordered.push_back(u);
  ordered.push_back(st2);
  ordered.push_back(prog.back());
  const auto r = codegen::verify_barriers(ordered);
  INFO(r.message());
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].kind == codegen::BarrierViolationKind::write_after_read);
  CHECK_FALSE(r.violations[0].loop_carried);
  CHECK(r.violations[0].store == st2);
  CHECK(r.violations[0].load == ld);
  CHECK(r.violations[0].buffer == lb);
}

TEST_CASE("verifier: a BARRIER under local-id dependent control flow is rejected") {
  Arena a;
  UOp lb = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp lid = special(cast(literal(a, 16), DType::int32), "lidx0");
  UOp gid = special(cast(literal(a, 4), DType::int32), "gidx0");
  UOp i0 = cast(literal(a, 0), DType::int32);
  UOp addr = index(lb, lid);
  UOp st = store(addr, cast(literal(a, 1.0), DType::float32));
  UOp bar = barrier(st);
  auto program_under_if = [&](UOp cond) {
    UOp mif = a.make(Ops::IF, DType::void_, {cond, addr});
    UOp mend = a.make(Ops::ENDIF, DType::void_, {mif});
    return std::vector<UOp>{lb, lid, gid, i0, addr, cond, st, mif, bar, mend, sink(bar)};
  };
  {
    const auto r = codegen::verify_barriers(program_under_if(alu(Ops::CMPEQ, lid, i0)));
    INFO(r.message());
    REQUIRE(r.violations.size() == 1);
    CHECK(r.violations[0].kind == codegen::BarrierViolationKind::divergent_barrier);
    CHECK(r.violations[0].barrier == bar);
    CHECK(r.violations[0].control.op() == Ops::IF);
    CHECK(r.message().find("lidx0") != std::string::npos);
  }
  // a condition on the group id is uniform in the work-group: accepted
  CHECK(codegen::verify_barriers(program_under_if(alu(Ops::CMPEQ, gid, i0))).ok());
  // a loop whose bound depends on the local id, holding a barrier
  {
    UOp rng = a.make(Ops::RANGE, DType::int32, {lid}, Arg::tuple_of(std::int64_t{0}, AxisType::LOOP));
    UOp e = a.make(Ops::END, DType::void_, {bar, rng});
    const std::vector<UOp> prog{lb, lid, i0, addr, rng, st, bar, e, sink(e)};
    const auto r = codegen::verify_barriers(prog);
    INFO(r.message());
    REQUIRE(r.violations.size() == 1);
    CHECK(r.violations[0].kind == codegen::BarrierViolationKind::divergent_barrier);
    CHECK(r.violations[0].control == rng);
  }
}

TEST_CASE("verifier: a barrier inside an IF does not cover the path that skips it; malformed structure is reported") {
  Arena a;
  UOp lb = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp gid = special(cast(literal(a, 4), DType::int32), "gidx0");
  UOp lid = special(cast(literal(a, 16), DType::int32), "lidx0");
  UOp i0 = cast(literal(a, 0), DType::int32);
  UOp addr = index(lb, lid);
  UOp st = store(addr, cast(literal(a, 1.0), DType::float32));
  UOp cond = alu(Ops::CMPEQ, gid, i0);
  UOp mif = a.make(Ops::IF, DType::void_, {cond, addr});
  UOp bar = barrier(st);
  UOp mend = a.make(Ops::ENDIF, DType::void_, {mif});
  UOp ld = load(index(after(lb, bar), i0));
  const std::vector<UOp> prog{lb, gid, lid, i0, addr, st, cond, mif, bar, mend, ld, sink(ld)};
  const auto r = codegen::verify_barriers(prog);
  INFO(r.message());
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].kind == codegen::BarrierViolationKind::read_after_write);
  // an END before its RANGE
  UOp rng = range(cast(literal(a, 4), DType::int32), 0, AxisType::REDUCE);
  UOp e = a.make(Ops::END, DType::void_, {st, rng});
  const std::vector<UOp> bad{lb, lid, addr, e, rng, st, sink(e)};
  const auto m = codegen::verify_barriers(bad);
  REQUIRE_FALSE(m.ok());
  CHECK(m.violations[0].kind == codegen::BarrierViolationKind::malformed);
  CHECK(m.message().find("not opened before it") != std::string::npos);
  // an IF never closed
  const std::vector<UOp> open_if{lb, gid, lid, i0, addr, cond, mif, st, sink(st)};
  const auto o = codegen::verify_barriers(open_if);
  REQUIRE(o.violations.size() == 1);
  CHECK(o.violations[0].kind == codegen::BarrierViolationKind::malformed);
  CHECK(o.violations[0].control == mif);
  // drop_barrier: out of range
  CHECK_THROWS_AS(codegen::drop_barrier(prog, 1), uopcg::error);
  CHECK(codegen::verify_barriers(std::vector<UOp>{}).ok());
}

// --- constant evaluation --------------------------------------------------------------------------------

namespace {

// Stages 21-23 and the linearizer on a small kernel with a RAW and a WAR barrier, in a constant
// expression: (number of BARRIERs in the program, program length, position of the last BARRIER).
constexpr std::array<std::size_t, 3> late_stages_constexpr() {
  Arena a;
  const Target t = Target::pocl();
  UOp out = param(a, 0, DType::float32, 16);
  UOp lbuf = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp lid = special(a, 16, "lidx0");
  UOp r = range(a, 4, 0, AxisType::REDUCE);
  UOp st = store(index(lbuf, lid), cast(r, DType::float32));
  UOp e = end(store(index(out, lid), load(index(after(lbuf, st), r))), r);
  UOp g = codegen::number_params(codegen::add_control_flow(codegen::add_implicit_barriers(sink(e), t), t), t);
  std::vector<UOp> prog = codegen::linearize(g, t);
  std::size_t barriers = 0, last = 0;
  for (std::size_t i = 0; i < prog.size(); ++i)
    if (prog[i].op() == Ops::BARRIER) ++barriers, last = i;
  return {barriers, prog.size(), last};
}

}  // namespace

TEST_CASE("constexpr: the late stages and the linearizer run in constant evaluation") {
  constexpr auto r = late_stages_constexpr();
  static_assert(r[0] == 2, "a RAW and a WAR barrier");
  static_assert(r[2] + 3 == r[1], "the WAR barrier ends the loop body: BARRIER, END, SINK... ");
  CHECK(r == late_stages_constexpr());
}
