// The barrier verifier: a static check of a linearized program's work-group barriers on LOCAL memory.
// PoCL cannot show every missing barrier (docs/reference/pocl-races.md: loop-tail write-after-read
// barriers, readers that run after all writers, races that do not change values); this check can.
//
// Model: every work-item of a work-group runs the same program, and a BARRIER is reached by all of
// them together, splitting the run into barrier intervals. A race is two different work-items of one
// group touching the same element of a LOCAL buffer in one interval, at least one of them storing
// (read after write, write after read, write after write; "across a loop's back edge" when the two
// accesses are in different iterations of a loop). Two runs of one STORE that provably write the
// same value are no race (barrier_program.hpp, store_value_dependencies), as for Oclgrind. A BARRIER
// that the work-items of a group do not all reach together (under an IF or in a loop whose condition
// or bound depends on the local id) is divergent. A program is accepted when it has neither.
//
// How (barrier_program.hpp reads the program; a malformed one gets a "malformed" verdict naming the
// instruction):
//   1. symbolic (barrier_symbolic.hpp), cheap: per pair of accesses a barrier-free path joins, the
//      local-id part of the indices per work-item and the rest by value bounds and divisibility, and
//      no BARRIER under control flow that reads a local id. When that proves every pair disjoint the
//      program is accepted;
//   2. otherwise exact, by enumeration (barrier_enumerate.hpp): every work-item of a group is run
//      through the index arithmetic, gates, IF conditions and loop bounds, from one BARRIER to the
//      next, when groups x work-items x steps stay within `BarrierVerifierOptions::enumeration_budget`.
//      Its verdict stands: races with a witness, or none (a correct kernel step 1 could not prove);
//   3. beyond the budget (or with a loop bound unknown before the kernel runs), step 1's findings
//      stand, each saying why the accesses could not be proven disjoint, and the report's `fallback`
//      why the program was not enumerated.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "../core/error.hpp"
#include "../core/graph.hpp"
#include "../core/text.hpp"
#include "barrier_enumerate.hpp"
#include "barrier_program.hpp"
#include "barrier_report.hpp"
#include "barrier_symbolic.hpp"

namespace uopcg::codegen {

struct BarrierVerifierOptions {
  /// Most steps (groups x work-items x instructions run) the exact enumeration may take; beyond, the
  /// symbolic check decides.
  std::uint64_t enumeration_budget = std::uint64_t{1} << 22;
};

/// Checks the barrier placement of a linearized program (see the top of this header).
constexpr BarrierReport verify_barriers(std::span<const UOp> program, const BarrierVerifierOptions& options = {}) {
  BarrierReport report;
  if (program.empty()) return report;
  const detail::verifier::program_view v = detail::verifier::read_program(program);
  if (!v.malformed.empty()) {
    report.violations = v.malformed;
    return report;
  }
  if (v.accesses.empty() && v.barriers.empty()) return report;
  std::vector<BarrierViolation> symbolic = detail::verifier::syntactic_divergence(v);
  for (BarrierViolation& x : detail::verifier::symbolic_races(v)) symbolic.push_back(std::move(x));
  if (symbolic.empty()) {
    report.analysis = BarrierAnalysis::symbolic;
    return report;
  }
  detail::verifier::enumeration_outcome e = detail::verifier::enumerate_races(v, options.enumeration_budget);
  if (e.done) {
    report.analysis = BarrierAnalysis::enumerated;
    report.violations = std::move(e.violations);
    return report;
  }
  report.analysis = BarrierAnalysis::symbolic;
  report.fallback = std::move(e.why_not);
  for (BarrierViolation& x : symbolic) {
    if (x.kind != BarrierViolationKind::divergent_barrier) x.message << " (not enumerated: " << report.fallback << ")";
    report.violations.push_back(std::move(x));
  }
  return report;
}

/// verify_barriers, failing (uopcg::error) with every violation's message when there is any.
constexpr void check_barriers(std::span<const UOp> program) {
  BarrierReport r = verify_barriers(program);
  if (!r.ok()) fail(r.message_text().view());
}

/// Number of BARRIERs in a program.
constexpr std::size_t count_barriers(std::span<const UOp> program) {
  std::size_t k = 0;
  for (UOp u : program) k += u.op() == Ops::BARRIER ? 1 : 0;
  return k;
}

/// Fault injection: the program without its `n`-th BARRIER (0-based, in program order). Its users are
/// re-pointed: an END whose body was the BARRIER ends its first source (the body) again; any other
/// user (an AFTER) takes the BARRIER's sources as its own. Later lines are rebuilt on the new nodes.
constexpr std::vector<UOp> drop_barrier(std::span<const UOp> program, std::size_t n) {
  std::vector<UOp> out;
  if (program.empty()) fail("drop_barrier: empty program");
  Arena& a = program[0].arena();
  std::size_t k = 0;
  UOp dropped;
  for (UOp u : program)
    if (u.op() == Ops::BARRIER && k++ == n) {
      dropped = u;
      break;
    }
  if (!dropped.valid())
    fail("drop_barrier: the program has ", k, " BARRIERs, no BARRIER #", n);
  std::vector<node_id> replaced;
  auto get = [&](UOp s) {
    return s.id() < replaced.size() && replaced[s.id()] != no_node ? UOp(&a, replaced[s.id()]) : s;
  };
  std::vector<UOp> srcs;
  for (UOp u : program) {
    if (u == dropped) continue;
    srcs.clear();
    bool changed = false;
    for (std::size_t i = 0; i < u.nsrc(); ++i) {
      UOp s = u.src(i);
      if (s == dropped) {
        changed = true;
        if (u.op() == Ops::END && i == 0) srcs.push_back(get(dropped.src(0)));
        else
          for (UOp d : dropped.srcs()) srcs.push_back(get(d));
        continue;
      }
      srcs.push_back(get(s));
      changed = changed || srcs.back() != s;
    }
    UOp nu = changed ? a.make_raw(u.op(), u.dtype(), srcs, a.raw(u.id()).arg, a.tag_id(u.id())) : u;
    if (nu != u) {
      if (replaced.size() <= u.id()) replaced.resize(u.id() + 1, no_node);
      replaced[u.id()] = nu.id();
    }
    out.push_back(nu);
  }
  return out;
}

}  // namespace uopcg::codegen
