// Shared checks of the soundness TUs: every rule sound on >= 10^4 instances (or declared not to be a
// value rule), and no rule grows a term unless it is a listed exception of the term order.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include <uopcg/symbolic/rule_tester.hpp>
#include <uopcg/symbolic/term_order.hpp>

// Rules over memory / statement ops: the value semantics of the tester does not apply.
inline bool known_non_value_rule(std::string_view name) { return name == "strong consumer absorbs the weak cast"; }

inline void check_set_report(const uopcg::symbolic::set_report& rep, std::uint64_t wanted) {
  INFO("set " << rep.name);
  CHECK(rep.failures() == 0);
  for (const auto& r : rep.rules) {
    INFO("rule " << r.name << ": " << r.counterexample);
    CHECK(r.failures == 0);
    CHECK(r.bound_failures == 0);
    if (r.evaluable) CHECK(r.instances >= wanted);
    else CHECK(known_non_value_rule(r.name));
    if (r.grows) {
      INFO("grows: " << r.growth_example);
      CHECK(uopcg::symbolic::growth_allowed(r.name));
    }
  }
}
