// The classic LOCAL-memory patterns and the builder tests' LOCAL kernels (local_patterns.hpp)
// through the whole pipeline: each correct form is accepted by the barrier verifier (by its symbolic
// proof, or by enumeration where that cannot decide) and gives the reference output
// on the OpenCL device; with any one of its barriers dropped the verifier rejects it, showing a race
// between two work-items (or accepts it, for the barriers a pattern lists as redundant). Oclgrind's view of the same faults is scripts/race-oracle.sh.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <uopcg/codegen/barrier_explain.hpp>
#include <uopcg/codegen/barrier_verifier.hpp>

#include "local_patterns.hpp"

using namespace uopcg;
using uopcg_test::LocalPattern;

namespace {

opencl::Context& context() {
  static opencl::Context ctx;
  return ctx;
}

bool is_race(codegen::BarrierViolationKind k) {
  return k == codegen::BarrierViolationKind::read_after_write || k == codegen::BarrierViolationKind::write_after_read ||
         k == codegen::BarrierViolationKind::write_after_write;
}

void check_pattern(const LocalPattern& p) {
  CAPTURE(p.name);
  Arena a;
  const std::vector<UOp> prog = uopcg_test::pattern_program(a, p);
  const std::string text = print_program(prog).str();
  INFO(text);
  REQUIRE(codegen::count_barriers(prog) == p.barriers);
  const codegen::BarrierReport r = codegen::verify_barriers(prog);
  {
    INFO(r.message());
    CHECK(r.ok());
    CHECK(r.analysis != codegen::BarrierAnalysis::none);
    CHECK(r.fallback.empty());
  }
  const uopcg_test::PatternRun run = uopcg_test::run_pattern(context(), p, prog);
  {
    INFO(run.source);
    INFO(run.first);
    CHECK(run.mismatches == 0);
  }
  for (std::size_t i = 0; i < p.barriers; ++i) {
    CAPTURE(i);
    const codegen::BarrierReport d = codegen::verify_barriers(codegen::drop_barrier(prog, i));
    if (std::find(p.redundant.begin(), p.redundant.end(), i) != p.redundant.end()) {
      INFO(d.message());
      CHECK(d.ok());
      continue;
    }
    REQUIRE_FALSE(d.ok());
    INFO(d.message());
    CHECK(d.analysis == codegen::BarrierAnalysis::enumerated);
    CHECK(is_race(d.violations[0].kind));
    CHECK(d.violations[0].proven);  // a witness: two work-items, one element
    CHECK(d.violations[0].buffer.addrspace() == AddrSpace::LOCAL);
  }
}

}  // namespace

TEST_CASE("local pattern: in-place tree reduction, sequential addressing") { check_pattern(uopcg_test::patterns::tree_reduction(false)); }
TEST_CASE("local pattern: in-place tree reduction, interleaved addressing") { check_pattern(uopcg_test::patterns::tree_reduction(true)); }
TEST_CASE("local pattern: Hillis-Steele scan, double-buffered") { check_pattern(uopcg_test::patterns::hillis_steele_scan()); }
TEST_CASE("local pattern: Blelloch scan") { check_pattern(uopcg_test::patterns::blelloch_scan()); }
TEST_CASE("local pattern: Blelloch scan whose first work-item clears (a redundant barrier)") {
  check_pattern(uopcg_test::patterns::blelloch_scan(true));
}
TEST_CASE("local pattern: tiled matmul with a loop-tail write-after-read barrier") { check_pattern(uopcg_test::patterns::tiled_matmul()); }
TEST_CASE("local pattern: transpose through a padded LOCAL tile") { check_pattern(uopcg_test::patterns::transpose()); }
TEST_CASE("local pattern: 1-D stencil with a halo") { check_pattern(uopcg_test::patterns::stencil_halo()); }
TEST_CASE("local pattern: GROUP_REDUCE partials stored with the same value by a LOCAL axis the sum does not read") {
  check_pattern(uopcg_test::patterns::group_sum_unread_local());
}
TEST_CASE("local pattern: two-pass group reduction reusing one buffer") { check_pattern(uopcg_test::patterns::two_pass_reduction()); }

TEST_CASE("the LOCAL kernels of the builder tests: accepted, exact, each barrier dropped rejected") {
  for (const LocalPattern& p : uopcg_test::builder_local_kernels()) check_pattern(p);
}

TEST_CASE("local pattern: the two-pass reduction without its explicit barrier gets one from the implicit rules") {
  // tinygrad's implicit barriers order the second pass's stores after the first pass's stores, not
  // after its reads: a write-after-read race. add_war_store_barrier places the barrier the graph's
  // explicit one would (DIVERGENCES P16); without it the verifier found the race, proven, not loop-carried
  const LocalPattern p = uopcg_test::patterns::two_pass_reduction(false);
  Arena a;
  const std::vector<UOp> prog = uopcg_test::pattern_program(a, p);
  CHECK(codegen::count_barriers(prog) == p.barriers + 1);
  const codegen::BarrierReport r = codegen::verify_barriers(prog);
  INFO(r.message());
  CHECK(r.ok());
  const uopcg_test::PatternRun run = uopcg_test::run_pattern(context(), p, prog);
  INFO(run.first);
  CHECK(run.mismatches == 0);
}

TEST_CASE("Target::prune_barriers removes the barriers the verifier proves redundant, and only those") {
  for (const LocalPattern& p : {uopcg_test::patterns::blelloch_scan(true), uopcg_test::patterns::dmm_stage(),
                                uopcg_test::patterns::blelloch_scan(), uopcg_test::patterns::tiled_matmul()}) {
    CAPTURE(p.name);
    Arena a;
    Target t = Target::pocl();
    t.prune_barriers = true;
    const std::vector<UOp> pruned = uopcg_test::pattern_program(a, p, t);
    CHECK(codegen::count_barriers(pruned) == p.barriers - p.redundant.size());
    CHECK(codegen::verify_barriers(pruned).ok());
    const uopcg_test::PatternRun run = uopcg_test::run_pattern(context(), p, pruned);
    INFO(run.source);
    CHECK(run.mismatches == 0);
    // --explain-barriers' account: the redundant ones, and what the others order
    Arena b;
    const std::vector<UOp> prog = uopcg_test::pattern_program(b, p);
    const std::vector<codegen::BarrierRole> roles = codegen::explain_barriers(prog);
    REQUIRE(roles.size() == p.barriers);
    for (std::size_t i = 0; i < roles.size(); ++i) {
      CAPTURE(i);
      const bool redundant = std::find(p.redundant.begin(), p.redundant.end(), i) != p.redundant.end();
      CHECK(roles[i].redundant() == redundant);
      for (const auto& v : roles[i].orders) CHECK(prog.at(v.store_pos).op() == Ops::STORE);
    }
  }
}
