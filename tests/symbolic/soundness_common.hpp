// Shared checks of the soundness TUs: every rule sound on >= 10^4 instances (or declared not to be a
// value rule), and no rule grows a term unless it is a listed exception of the term order.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <uopcg/symbolic/rule_tester.hpp>
#include <uopcg/symbolic/term_order.hpp>

// Rules over memory / statement ops: the value semantics of the tester does not apply.
// (statements.hpp: loads/stores, AFTER/END/SINK/GROUP cleanup, REDUCE factors, STACK lanes;
// mop_cleanup.hpp: movement ops.)
inline bool known_non_value_rule(std::string_view name) {
  constexpr std::string_view names[] = {"strong consumer absorbs the weak cast",
                                        "group of one",
                                        "flatten sink/group",
                                        "AFTER dependency pruning",
                                        "AFTER of one",
                                        "END of one",
                                        "store to an Invalid address",
                                        "load from an Invalid address",
                                        "store(i, load(i))",
                                        "store(i, where(g, a, load(i)))",
                                        "store of Invalid",
                                        "store(i, where(c, v, Invalid))",
                                        "reduce(x*c) -> reduce(x)*c",
                                        "reduce_mul_chain",
                                        "alu of single-lane stacks",
                                        "simplify a gated index",
                                        "narrow a gated long index",
                                        // mop_cleanup over RESHAPE / PERMUTE
                                        "merge RESHAPEs",
                                        "noop RESHAPE",
                                        "merge PERMUTEs",
                                        "noop PERMUTE"};
  for (auto n : names)
    if (n == name) return true;
  return false;
}

// Rules whose pattern is a bare op (tinygrad's UPat(Ops.ADD) with a function doing the search): the
// tester's random graphs of that shape almost never trigger them, so each is checked through shaped
// rule sets calling the same function (see the soundness TUs).
// And index lowering's comparison of a weak left operand with a strong right one, and its weak binary
// op beside a strong int operand (a weak shift of a ulong count): the tester gives a binary op's
// operands one dtype, so it never draws them; tests/codegen/lowering/test_units.cpp checks each by value.
inline bool checked_by_shape(std::string_view name) {
  return name == "div/mod recombine in a sum" || name == "lower a comparison (strong right)" ||
         name == "weak binary beside a strong int (left)" || name == "weak binary beside a strong int (right)";
}

// mop_cleanup rules over shaped values (STACK lanes of a shaped source, nested INDEX of shaped
// indices, a lane of a scalar): the tester's scalar graphs never have those shapes; tests/codegen/front/test_mops.cpp and
// test_simplify.cpp cover them. Likewise index lowering's weakint STACK of lowered lanes (an UPCAST
// store of a weak literal): tests/codegen/lowering/test_units.cpp checks it.
inline bool shape_rule(std::string_view name) {
  return name == "STACK of every lane" || name == "INDEX(INDEX)" || name == "INDEX(shaped INDEX)" ||
         name == "INDEX(scalar value, const)" || name == "lower weak stack";
}

/// The instances a check draws: `n`, or n / UOPCG_SOUNDNESS_DIVISOR (at least 100) where the
/// environment sets it. The sanitizer build does (meson.build, test_env): there the tester runs to find
/// memory and UB faults, which a tenth of the draws finds as well; the g++ and clang builds draw all.
inline std::uint64_t scaled(std::uint64_t n) {
  const char* d = std::getenv("UOPCG_SOUNDNESS_DIVISOR");
  if (d == nullptr) return n;
  const unsigned long k = std::strtoul(d, nullptr, 10);
  return k > 1 ? std::max<std::uint64_t>(n / k, 100) : n;
}

inline void check_set_report(const uopcg::symbolic::set_report& rep, std::uint64_t wanted) {
  INFO("set " << rep.name);
  CHECK(rep.failures() == 0);
  for (const auto& r : rep.rules) {
    INFO("rule " << r.name << ": " << r.counterexample);
    CHECK(r.failures == 0);
    CHECK(r.bound_failures == 0);
    if (r.evaluable && !known_non_value_rule(r.name) && !checked_by_shape(r.name) && !shape_rule(r.name))
      CHECK(r.instances >= wanted);
    else if (!r.evaluable) CHECK(known_non_value_rule(r.name));
    if (r.grows) {
      INFO("grows: " << r.growth_example);
      CHECK(uopcg::symbolic::growth_allowed(r.name));
    }
  }
}
