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

TEST_CASE("io::target_of: the renderer's limits and the opt settings the heuristics read") {
  uopcg_test::StagedKernel k("ew_add_f32");
  CHECK(k.target.renderer.has_local);
  CHECK(k.target.renderer.has_shared);
  CHECK_FALSE(k.target.renderer.has_threads);
  CHECK(k.target.renderer.shared_max == 32768);
  CHECK(k.target.renderer.global_max[0] == 0x8FFFFFFF);
  CHECK_FALSE(k.target.noopt);
  CHECK(k.target.use_tc == 1);
  CHECK(k.target.tensor_cores.empty());

  io::Kernel with = k.kernel;
  with.codegen_context = {{"NOOPT", 1},   {"NOLOCALS", 1}, {"TC", 2},           {"TC_OPT", 1},
                          {"TC_SELECT", 0}, {"ALLOW_TF32", 1}, {"MV", 0},        {"MV_BLOCKSIZE", 2},
                          {"MV_THREADS_PER_ROW", 16}, {"MV_ROWS_PER_THREAD", 8}};
  with.renderer.raw["has_threads"] = true;
  with.renderer.has_threads = true;
  const Target t = io::target_of(with);
  CHECK(t.noopt);
  CHECK(t.nolocals);
  CHECK(t.use_locals);  // NOLOCALS acts through the heuristics only
  CHECK(t.use_tc == 2);
  CHECK(t.tc_opt == 1);
  CHECK(t.tc_select == 0);
  CHECK(t.allow_tf32);
  CHECK(t.mv == 0);
  CHECK(t.mv_blocksize == 2);
  CHECK(t.mv_threads_per_row == 16);
  CHECK(t.mv_rows_per_thread == 8);
  CHECK(t.renderer.has_threads);

  // NOOPT: no heuristics, the kernel still globalized and named; NOLOCALS: the heuristics say NOLOCALS
  const UOp in = k.after("simplify ranges");
  CHECK(function_name(KernelInfo::from(O::apply_opts(in, t).arg()).name.view()).view() == "E_4096");
  Target nolocals = k.target;
  nolocals.nolocals = true;
  const KernelInfo info = KernelInfo::from(O::apply_opts(in, nolocals).arg());
  CHECK(function_name(info.name.view()).view() == "E_1024_4");
  CHECK(info.dont_use_locals);
  REQUIRE(info.applied_opts.size() == 2);
  CHECK(info.applied_opts[1].op == OptOps::NOLOCALS);
}
