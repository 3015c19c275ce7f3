// apply_opts on the corpus: from each kernel's "simplify ranges" graph, its applied_opts give exactly
// the "apply_opts" stage graph (node for node: both dumps live in one arena, so equal graphs are
// the same handle) and the kernel's function_name; on the kernels tinygrad optimized by heuristics
// (opts_requested null) the heuristics choose the same opts.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <uopcg/codegen/opt/apply_opts.hpp>

#include "../stage_harness.hpp"

using namespace uopcg;
namespace O = uopcg::codegen::opt;

namespace {

std::vector<Opt> opts_of(const std::vector<Arg>& records) {
  std::vector<Opt> out;
  for (const Arg& a : records) out.push_back(Opt::from(a));
  return out;
}

std::string opts_text(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts) s += O::to_text(o).str() + " ";
  return s;
}

}  // namespace

TEST_CASE("apply_opts: a kernel's applied_opts on its simplify-ranges graph give its apply_opts graph") {
  int same = 0, total = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    const UOp in = k.after("simplify ranges"), expected = k.after("apply_opts");
    const std::vector<Opt> applied = opts_of(k.kernel.applied_opts);
    const UOp got = O::apply_opts(in, k.target, O::OptsRequest::of(applied));
    ++total;
    INFO(e.name << ": " << opts_text(applied) << "\n" << uopcg_test::graph_diff(got, expected));
    CHECK(got == expected);
    same += got == expected;
    // the name, as the kernel's C identifier
    const KernelInfo info = KernelInfo::from(got.arg());
    CHECK(function_name(info.name.view()).view() == k.kernel.function_name);
    // the kernel's own choice (opts_to_apply, or the heuristics) gives the same graph
    CHECK(O::apply_opts(in, k.target) == expected);
  }
  std::printf("apply_opts: %d/%d corpus kernels match\n", same, total);
  CHECK(total == 16);
}

TEST_CASE("hand_coded_optimizations: the heuristics choose tinygrad's opts on every heuristic corpus kernel") {
  int checked = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    if (k.kernel.opts_requested) continue;
    ++checked;
    O::Scheduler s(k.after("simplify ranges"), k.target);
    s.convert_loop_to_global();
    const O::Scheduler h = O::hand_coded_optimizations(s).value_or_fail();
    const std::vector<Opt> want = opts_of(k.kernel.applied_opts);
    INFO(e.name << ": got " << opts_text(h.applied_opts()) << "want " << opts_text(want));
    REQUIRE(h.applied_opts().size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(h.applied_opts()[i].to_arg() == want[i].to_arg());
    CHECK(h.get_optimized_ast() == k.after("apply_opts"));
  }
  std::printf("heuristics: %d corpus kernels chose by heuristics\n", checked);
  CHECK(checked == 11);
}
