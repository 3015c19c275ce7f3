// From a corpus kernel's AST to its post-opts graph: the front stages (codegen/front_stages.hpp),
// apply_opts with the kernel's applied_opts, then "postopt symbolic" give exactly the file's
// `post_opts`, node for node, and its function_name; the kernel's own choice (opts_to_apply or the
// heuristics) gives the same.
#include <doctest/doctest.h>

#include <cstdio>
#include <vector>

#include <uopcg/codegen/front_stages.hpp>
#include <uopcg/codegen/opt/apply_opts.hpp>
#include <uopcg/codegen/postopt.hpp>

#include "../stage_harness.hpp"

using namespace uopcg;
namespace O = uopcg::codegen::opt;

TEST_CASE("AST -> front stages -> apply_opts -> postopt symbolic is the corpus's post_opts") {
  int same = 0, total = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    const UOp front = codegen::run_front(k.kernel.ast.root, k.target).sink;
    std::vector<Opt> applied;
    for (const Arg& a : k.kernel.applied_opts) applied.push_back(Opt::from(a));
    const UOp opted = O::apply_opts(front, k.target, O::OptsRequest::of(applied));
    const UOp post = codegen::postopt_symbolic(opted, k.target);
    const UOp want = k.kernel.post_opts.root;
    INFO(e.name << "\n" << uopcg_test::graph_diff(post, want));
    CHECK(post == want);
    CHECK(function_name(KernelInfo::from(post.arg()).name.view()).view() == k.kernel.function_name);
    CHECK(codegen::postopt_symbolic(O::apply_opts(front, k.target), k.target) == want);
    ++total;
    same += post == want;
  }
  std::printf("AST to post_opts: %d/%d corpus kernels match\n", same, total);
  CHECK(total == 16);
}
