// Soundness (>= 10^4 random instances per rule) and termination of symbolic_simple's families.
#include "soundness_common.hpp"

#include <uopcg/symbolic/simple.hpp>

using namespace uopcg::symbolic;

TEST_CASE("symbolic_simple families are sound and do not grow terms") {
  tester_options o;
  o.instances = 10000;
  check_set_report(check_rule_set("pm_data_invalid", pm_data_invalid, o), o.instances);
  check_set_report(check_rule_set("simple_identities", simple_identities, o), o.instances);
  check_set_report(check_rule_set("simple_zeros", simple_zeros, o), o.instances);
  check_set_report(check_rule_set("simple_const_fold", simple_const_fold, o), o.instances);
  check_set_report(check_rule_set("simple_bool_arith", simple_bool_arith, o), o.instances);
  check_set_report(check_rule_set("simple_casts", simple_casts, o), o.instances);
  check_set_report(check_rule_set("simple_where", simple_where, o), o.instances);
  check_set_report(check_rule_set("simple_recombine", simple_recombine, o), o.instances);
}

namespace {
namespace P = uopcg::pat;
constexpr auto x = P::var<"x">;
}  // namespace

TEST_CASE("the tester finds an unsound rule and reports a counterexample") {
  // x // 2 * 2 -> x is wrong for odd x
  auto bad = P::rules(P::rule("bad", P::floordiv(x.dtype<uopcg::DType::weakint>(), P::const_<2>) * P::const_<2>,
                              [](auto& m) { return m[x]; }));
  tester_options o;
  o.instances = 2000;
  auto rep = check_rule_set("bad", bad, o);
  REQUIRE(rep.rules.size() == 1);
  CHECK(rep.rules[0].failures > 0);
  CHECK(rep.rules[0].counterexample.find("//2)") != std::string::npos);
  CHECK(rep.failures() > 0);
}
