// Soundness (>= 10^4 random instances per rule) and termination of the families `symbolic`, `sym`
// and the index lowering add to symbolic_simple.
#include "soundness_common.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <uopcg/symbolic/sets.hpp>

using namespace uopcg::symbolic;

TEST_CASE("symbolic / sym / lowering families are sound and do not grow terms") {
  tester_options o;
  o.instances = scaled(10000);
  check_set_report(check_rule_set("commutative", commutative, o), o.instances);
  check_set_report(check_rule_set("algebra_terms", algebra_terms, o), o.instances);
  check_set_report(check_rule_set("algebra_where", algebra_where, o), o.instances);
  check_set_report(check_rule_set("algebra_fold", algebra_fold, o), o.instances);
  check_set_report(check_rule_set("algebra_compare", algebra_compare, o), o.instances);
  check_set_report(check_rule_set("algebra_reorder", algebra_reorder, o), o.instances);
  check_set_report(check_rule_set("div_and_mod_symbolic", div_and_mod_symbolic, o), o.instances);
  check_set_report(check_rule_set("pm_simplify_valid", pm_simplify_valid, o), o.instances);
  check_set_report(check_rule_set("sym_extras", sym_extras, o), o.instances);
  check_set_report(check_rule_set("pm_lower_index_dtype", pm_lower_index_dtype, o), o.instances);
}

TEST_CASE("statement and memory families are reported as not value rules") {
  tester_options o;
  o.instances = scaled(1000);
  check_set_report(check_rule_set("pm_clean_up_group_sink", pm_clean_up_group_sink, o), o.instances);
  check_set_report(check_rule_set("pm_after_cleanup", pm_after_cleanup, o), o.instances);
  check_set_report(check_rule_set("pm_invalid_memory", pm_invalid_memory, o), o.instances);
  check_set_report(check_rule_set("sym_memory", sym_memory, o), o.instances);
  check_set_report(check_rule_set("sym_reduce", sym_reduce, o), o.instances);
  check_set_report(check_rule_set("sym_stack_reorder", sym_stack_reorder, o), o.instances);
}

TEST_CASE("the reciprocal rewrites are sound up to rounding (fast math)") {
  tester_options o;
  o.instances = scaled(10000);
  o.float_tolerance = 8e-3;  // half: a few ulps
  check_set_report(check_rule_set("sym_reciprocal", sym_reciprocal, o), o.instances);
}

TEST_CASE("x*(1/(1+x)) rewrites keep the dtype and agree away from cancellation") {
  // exempt from the exact check (cancellation in 1-1/(1+x)); the tester still runs them: every
  // rewrite keeps the dtype, and the first form agrees within rounding of the result's magnitude
  tester_options o;
  o.instances = scaled(2000);
  o.float_tolerance = 1e-2;
  auto rep = check_rule_set("sym_reciprocal_sums", sym_reciprocal_sums, o);
  REQUIRE(rep.rules.size() == 3);
  for (const auto& r : rep.rules) {
    INFO(r.name << ": " << r.counterexample);
    CHECK(r.evaluable);
    CHECK(r.graphs > 0);
    CHECK(r.counterexample.find("dtype") == std::string::npos);
  }
  INFO(rep.rules[0].counterexample);
  CHECK(rep.rules[0].failures == 0);
}

namespace {
namespace P = uopcg::pat;
constexpr auto pa = P::var<"a">;
constexpr auto pb = P::var<"b">;
// integer exponents every float dtype of the tester (half included) holds exactly
inline constexpr uopcg::pat::DTypeSet small_ints{uopcg::DType::int8, uopcg::DType::int16, uopcg::DType::uint8,
                                                 uopcg::DType::bool_};
}  // namespace

TEST_CASE("pow -> xpow: sound up to rounding where the exponent is a small integer") {
  // xpow reads the exponent through a float -> int32 cast (the snapshot's form, kept for parity): an
  // exponent of magnitude >= 2^31 (or inf) makes that cast undefined. The same rewrite, restricted to
  // exponents that are casts of small integers, has no failure.
  auto restricted = P::rules(P::rule("pow -> xpow",  // (int32 exponents only)
                                     P::op<uopcg::Ops::POW>(pa, P::op<uopcg::Ops::CAST>(pb.dtypes<small_ints>())),
                                     [](auto& m) -> std::optional<uopcg::UOp> {
                                       uopcg::UOp r = m.root();
                                       if (!uopcg::is_float(r.dtype()) || uopcg::is_weak(r.dtype()) ||
                                           m[pa].dtype() != r.dtype() || r.src(1).dtype() != r.dtype())
                                         return std::nullopt;
                                       if (holds_nonfinite_literal(m[pa]) || holds_nonfinite_literal(r.src(1)))
                                         return std::nullopt;
                                       return xpow(m[pa], r.src(1));
                                     }));
  tester_options o;
  o.instances = scaled(10000);
  o.float_tolerance = 3e-2;
  check_set_report(check_rule_set("xpow, int32 exponents", restricted, o), o.instances);
  // the rule of `sym` itself, on any exponent: xpow casts only exponents below 2^(mantissa + 1)
  // (the snapshot's int32 cast of any exponent was undefined from 2^31 on, e.g. pow(-5e29, -5e29))
  check_set_report(check_rule_set("sym_pow", sym_pow, o), o.instances);
}

TEST_CASE("every listed growth exception names a rule of the sets") {
  auto names_of = [](const auto& rs) {
    std::vector<std::string> v;
    for (std::size_t i = 0; i < std::decay_t<decltype(rs)>::size; ++i) v.push_back(rs.info(i).label().str());
    return v;
  };
  auto all = names_of(sym);
  for (auto n : names_of(pm_lower_index_dtype)) all.push_back(n);
  for (const auto& e : growth_exceptions) {
    INFO(e.rule);
    CHECK(std::find(all.begin(), all.end(), std::string(e.rule)) != all.end());
  }
}

namespace {
using uopcg::symbolic::detail::divmod_step;
// hits per step of the div/mod fold, counted by the shaped rules below
inline std::uint64_t divmod_hits[16] = {};
template <bool Symbolic>
std::optional<uopcg::UOp> fold_counted(uopcg::UOp root) {
  if (root.dtype() != uopcg::DType::weakint || root.src(0).dtype() != uopcg::DType::weakint) return std::nullopt;
  const bool is_mod = root.op() == uopcg::Ops::FLOORMOD;
  divmod_step st = divmod_step::none;
  std::optional<uopcg::UOp> r;
  if constexpr (Symbolic) {
    if (root.src(1).op() == uopcg::Ops::CONST) return std::nullopt;
    r = detail::fold_divmod_symbolic(root.src(0), root.src(1), is_mod, &st);
  } else {
    i128 c = 0;
    if (!int_const(root.src(1), c) || c == 0 || root.src(1).dtype() != uopcg::DType::weakint) return std::nullopt;
    r = detail::fold_divmod_const(root.src(0), c, is_mod, &st);
  }
  if (r) ++divmod_hits[static_cast<int>(st)];
  return r;
}
constexpr auto wx = P::var<"x">.dtype<uopcg::DType::weakint>();
constexpr auto wy = P::var<"y">.dtype<uopcg::DType::weakint>();
constexpr auto wz = P::var<"z">.dtype<uopcg::DType::weakint>();
constexpr auto wd = P::var<"d">.dtype<uopcg::DType::weakint>();
constexpr auto kc = P::cvar<"c">;
constexpr auto kf = P::cvar<"f">;
constexpr auto kg = P::cvar<"g">;
constexpr auto kk = P::cvar<"k">;
constexpr uopcg::OpSet divmod_ops{uopcg::Ops::FLOORDIV, uopcg::Ops::FLOORMOD};
}  // namespace

TEST_CASE("div/mod fold: every step is sound on the shapes it folds, and reached") {
  // the fold's steps are tried in order inside two rules; these shapes put each step's inputs in
  // front of the tester (two scaled terms and a constant, a term and a small remainder, products
  // sharing a factor with a symbolic divisor) and count which step produced each result
  auto by_const = [](auto& m) { return fold_counted<false>(m.root()); };
  auto by_expr = [](auto& m) { return fold_counted<true>(m.root()); };
  auto shaped = P::rules(
      P::rule("two scaled terms and a constant", P::in<divmod_ops>(wx * kf + wy * kg + kk, kc), by_const),
      P::rule("a scaled term and a remainder", P::in<divmod_ops>(wx * kf + wy, kc), by_const),
      P::rule("a variable and a remainder", P::in<divmod_ops>(wx + wy, kc), by_const),
      P::rule("products sharing a factor", P::in<divmod_ops>(wx * wy + wz * wy, wd * wy), by_expr),
      P::rule("scaled products sharing a factor", P::in<divmod_ops>(wx * wy * kf + wy * kg, wy * kc), by_expr),
      P::rule("a multiple of the divisor and a remainder", P::in<divmod_ops>(wx * wd + wz + wy * wd, wd), by_expr));
  tester_options o;
  o.instances = 10000;  // not scaled: every divmod step must be hit
  auto rep = check_rule_set("div/mod fold shapes", shaped, o);
  for (const auto& r : rep.rules) {
    INFO(r.name << ": " << r.counterexample);
    CHECK(r.failures == 0);
    CHECK(r.bound_failures == 0);
    CHECK(r.graphs > 0);
  }
  for (divmod_step s : {divmod_step::bounds, divmod_step::inner_mod, divmod_step::multiple, divmod_step::congruence,
                        divmod_step::gcd, divmod_step::nest_by_factor, divmod_step::quotients, divmod_step::symbolic_gcd,
                        divmod_step::symbolic_quotients}) {
    INFO("step " << static_cast<int>(s));
    CHECK(divmod_hits[static_cast<int>(s)] > 0);
  }
}
