// `uopcg check-rules [--instances N] [--seed S] [--set NAME] [--verbose]`: runs the rule soundness tester on every
// built-in rule family (each rule of the composed sets symbolic_simple / symbolic / sym and of the
// index lowering exactly once; statement/memory rules are listed as not value rules, the reciprocal
// rewrites are checked up to rounding, and the three `x*(1/(1+x))` rewrites are exempt), prints a line per family and ends with
// `rules <R> instances <I> failures <F>`. Exits 1 on any failure.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <uopcg/symbolic/rule_tester.hpp>
#include <uopcg/symbolic/sets.hpp>

namespace {
struct totals {
  std::uint64_t rules = 0, instances = 0, failures = 0, undertested = 0;
  std::string only;  // --set: run only the families whose name starts with this
  int families = 0;  // families run
};

template <class RS>
void run_set(const char* name, const RS& rs, const uopcg::symbolic::tester_options& o, bool verbose, totals& t) {
  if (!t.only.empty() && std::string_view(name).substr(0, t.only.size()) != t.only) return;
  ++t.families;
  auto rep = uopcg::symbolic::check_rule_set(name, rs, o);
  uopcg::symbolic::print_report(stdout, rep, verbose);
  for (const auto& r : rep.rules) {
    if (r.evaluable && r.instances < o.instances) {
      ++t.undertested;
      std::printf("  note: rule %s checked on %llu instances only\n", r.name.c_str(),
                  static_cast<unsigned long long>(r.instances));
    }
    if (!r.evaluable) std::printf("  note: rule %s is not a value rule (memory/statement ops): not checked\n", r.name.c_str());
  }
  t.rules += rep.rules.size();
  t.instances += rep.instances();
  t.failures += rep.failures();
  std::fflush(stdout);
}

void usage() {
  std::fputs("usage: uopcg check-rules [--instances N] [--seed S] [--set NAME] [--verbose]\n"
             "  checks every built-in symbolic rule for soundness on N random instances (default 10000)\n"
             "  --set NAME  only the rule families whose name starts with NAME (e.g. simple_pow)\n",
             stderr);
}
}  // namespace

int uopcg_cmd_check_rules(int argc, char** argv) {
  using namespace uopcg::symbolic;
  tester_options o;
  bool verbose = false;
  totals t;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--instances" || a == "--seed") && i + 1 < argc) {
      char* end = nullptr;
      unsigned long long v = std::strtoull(argv[++i], &end, 10);
      if (!end || *end != '\0' || (a == "--instances" && v == 0)) {
        std::fprintf(stderr, "uopcg check-rules: bad value for %s: '%s'\n", a.c_str(), argv[i]);
        return 2;
      }
      (a == "--instances" ? o.instances : o.seed) = v;
    } else if (a == "--set" && i + 1 < argc) {
      t.only = argv[++i];
    } else if (a == "--verbose" || a == "-v") {
      verbose = true;
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else {
      std::fprintf(stderr, "uopcg check-rules: unknown argument '%s'\n", a.c_str());
      usage();
      return 2;
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  run_set("pm_data_invalid", pm_data_invalid, o, verbose, t);
  run_set("simple_identities", simple_identities, o, verbose, t);
  run_set("simple_zeros", simple_zeros, o, verbose, t);
  run_set("simple_const_fold", simple_const_fold, o, verbose, t);
  run_set("simple_bool_arith", simple_bool_arith, o, verbose, t);
  run_set("simple_casts", simple_casts, o, verbose, t);
  run_set("simple_where", simple_where, o, verbose, t);
  run_set("simple_recombine", simple_recombine, o, verbose, t);
  run_set("mop_cleanup", mop_cleanup, o, verbose, t);  // movement-op rules: reported as not value rules
  run_set("commutative", commutative, o, verbose, t);
  run_set("algebra_terms", algebra_terms, o, verbose, t);
  run_set("algebra_where", algebra_where, o, verbose, t);
  run_set("algebra_fold", algebra_fold, o, verbose, t);
  run_set("algebra_compare", algebra_compare, o, verbose, t);
  run_set("algebra_reorder", algebra_reorder, o, verbose, t);
  run_set("div_and_mod_symbolic", div_and_mod_symbolic, o, verbose, t);
  run_set("pm_simplify_valid", pm_simplify_valid, o, verbose, t);
  run_set("sym_extras", sym_extras, o, verbose, t);
  // statement / memory families: reported as not value rules (the corpus stage checks cover them)
  run_set("pm_invalid_memory", pm_invalid_memory, o, verbose, t);
  run_set("pm_after_cleanup", pm_after_cleanup, o, verbose, t);
  run_set("pm_clean_up_group_sink", pm_clean_up_group_sink, o, verbose, t);
  run_set("sym_memory", sym_memory, o, verbose, t);
  run_set("sym_reduce", sym_reduce, o, verbose, t);
  run_set("sym_stack_reorder", sym_stack_reorder, o, verbose, t);
  {
    // float fast math: equal up to rounding (and where no intermediate of the RHS overflows)
    tester_options fo = o;
    fo.float_tolerance = 8e-3;
    run_set("sym_reciprocal (fast math, tolerance 8e-3)", sym_reciprocal, fo, verbose, t);
    // POW as products, square roots and exp2 of a product: the rounding of log2 scales with the exponent
    fo.float_tolerance = 3e-2;
    run_set("simple_pow (fast math, tolerance 3e-2)", simple_pow, fo, verbose, t);
    run_set("sym_pow (fast math, tolerance 3e-2)", sym_pow, fo, verbose, t);
  }
  std::printf("  note: sym_reciprocal_sums (x*(1/(1+x)) -> 1-1/(1+x), 3 rules) is not checked: it cancels "
              "digits by design (tinygrad's fast math)\n");
  run_set("pm_lower_index_dtype", pm_lower_index_dtype, o, verbose, t);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("seconds %.1f\n", secs);
  std::printf("rules %llu instances %llu failures %llu\n", static_cast<unsigned long long>(t.rules),
              static_cast<unsigned long long>(t.instances), static_cast<unsigned long long>(t.failures));
  if (t.families == 0) {
    std::fprintf(stderr, "uopcg check-rules: --set %s matches no rule family\n", t.only.c_str());
    return 2;
  }
  return t.failures == 0 ? 0 : 1;
}
