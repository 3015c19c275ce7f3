// The rule tester of docs/symbolic.md on a rule set of one's own: random graphs of each rule's shape,
// evaluated before and after the rewrite. Exits non-zero when a rule is unsound.
// doc: rule tester
#include <cstdio>
#include <uopcg/symbolic/rule_tester.hpp>

namespace P = uopcg::pat;
constexpr auto x = P::var<"x">;
// x+0 -> x only where the sum has x's dtype: without the predicate the tester reports
// "(0+0) -> 0: dtype int became weakint"
constexpr auto my_rule_set = P::rules(P::rewrite("x*1", x * 1, x), P::rewrite("x+0", x + 0, x, P::root_dtype(x)));

int main() {
  uopcg::symbolic::tester_options o;       // instances = 10000 per rule, seed, envs_per_graph = 8
  auto rep = uopcg::symbolic::check_rule_set("my rules", my_rule_set, o);
  uopcg::symbolic::print_report(stdout, rep, /*verbose=*/true);
  return rep.failures() == 0 ? 0 : 1;      // rep.rules[i]: instances, failures, counterexample, grows
}
// end doc
