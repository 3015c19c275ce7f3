// A rule = pattern + rewriter. rule() checks, at the rule's definition, everything that can be known
// from the types: the root names an op, capture names are consistent, source counts are possible,
// the rewriter only asks for bound captures and returns a valid result type.
//
// A rewriter receives the match (and, if it takes two parameters, the user context first) and
// returns
//   - UOp: the rule always rewrites (a "total" rule, which the shadowing check relies on; the node
//     itself declines),
//   - std::optional<UOp>: nullopt (or the node itself) declines, and the next binding / rule is tried,
//   - gated{UOp}: like UOp, and in bottom-up mode the result's children are not visited.
// An invalid UOp, in any of them, is an error at run time that names the rule and the node.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "dsl.hpp"
#include "detail/program_facts.hpp"
#include "upat.hpp"

namespace uopcg::pat {

/// A rewriter result that also stops bottom-up descent (tinygrad's BottomUpGate).
struct gated {
  UOp node;
};

/// Placeholder context for rule sets used without one.
struct no_context {};

template <class R>
inline constexpr bool valid_result_v =
    std::is_same_v<R, UOp> || std::is_same_v<R, std::optional<UOp>> || std::is_same_v<R, gated>;

namespace detail {
// Whether a rewriter always rewrites (returns UOp): a class deriving from std::bool_constant, whose
// `value` is shared by all rules. requires/decltype rather than std::is_invocable/invoke_result, whose
// class templates are instantiated per rule; neither a function nor a variable template, which g++
// -O0 emits per rule under a name that spells the rule's type.
template <class F, class M>
struct rewriter_is_total : std::false_type {};
template <class F, class M>
  requires requires(const F& f, M& m) { f(m); }
struct rewriter_is_total<F, M> : std::bool_constant<std::is_same_v<decltype(std::declval<const F&>()(std::declval<M&>())), UOp>> {};
}  // namespace detail

/// Where a rule comes from and what it is called (its source location unless named).
struct rule_info {
  std::string_view name;
  std::string_view file;
  int line = 0;
  /// "name" if given, else "file:line".
  constexpr text label() const {
    text t;
    if (!name.empty()) return t.append(name);
    std::string_view f = file;
    for (std::size_t i = f.size(); i > 0; --i)
      if (f[i - 1] == '/') {
        f = f.substr(i);
        break;
      }
    return t.append(f).append(':').append(line);
  }
};

/// What every rule is: a rule set's drivers reach a rule through a pointer to this base, which
/// constant evaluation can cast back to the rule (it cannot do that with a void pointer).
struct rule_base {};

namespace detail {
/// A rewriter without state (a lambda that captures nothing): its thunk calls a default-constructed
/// one, and a rule set's rewrites need the rule object only for its predicates. The compilers'
/// builtins, which both have, rather than std::is_empty_v and
/// std::is_trivially_default_constructible_v, which instantiate class templates (with libstdc++'s
/// completeness checks) per rule. A class read as ::value, not a variable template, for the same
/// reason as rewriter_is_total.
template <class F>
struct is_stateless : std::bool_constant<__is_empty(F) && __is_trivially_constructible(F)> {};
}  // namespace detail

/// A rule's rewriter and where the rule comes from: what the rule's thunk reads (templated on the
/// rewriter and the match type, not on the rule: rules that share both share the thunk, and its
/// name spells no pattern).
template <class F>
struct rewriter_of : rule_base {
  F rewriter;
  rule_info info;
};

template <class P, class F>
struct rule_t : rewriter_of<F> {
  using pattern_type = P;
  using rewriter_type = F;
  using match_type = match_for<P>;
  /// The rewriter always rewrites (returns UOp). A type, read as total_type::value by the rule-set
  /// checks: a static member read there is emitted per rule by g++ -O0, its name the rule's type.
  using total_type = detail::rewriter_is_total<F, match_for<P>>;
  static constexpr bool total = total_type::value;

  P pattern;
  /// The pattern's run-time numbers (`x + 1`) in the program's order, read by the matcher (at
  /// least one element: a plain array, whose address a rule set's rewrite takes per rule without
  /// a call to std::array::data).
  arg_number numbers[detail::numbers_in<P> > 0 ? detail::numbers_in<P> : 1]{};

  /// The same rule with an explicit name (shown in statistics, traces and errors).
  constexpr rule_t named(std::string_view n) const {
    rule_t r = *this;
    r.info.name = n;
    return r;
  }
};

/// Builds a rule; every compile-time check fails here, at the rule's definition.
template <class P, class F>
constexpr auto rule(P p, F f, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  static_assert(is_pattern<P>::value, "rule(): the first argument must be a pattern");
  static_assert(!root_ops_v<P>.empty(), "rule(): the root of a pattern must name at least one op (rules are dispatched on it)");
  static_assert(!names_of<P>::value.overflow, "rule(): a pattern may bind at most 16 distinct capture names");
  static_assert(!names_of<P>::structural.overflow, "rule(): the capture names of a pattern may have at most 160 characters in all");
  static_assert(detail::bindings_consistent(program_of<P>.view()), "rule(): a capture name is bound to patterns that no single node can satisfy");
  static_assert(detail::src_counts_possible(program_of<P>.view()), "rule(): a pattern lists a number of sources that its op can never have");
  if constexpr (requires(const F& f, match_for<P>& m) { f(m); }) {
    using R = decltype(std::declval<const F&>()(std::declval<match_for<P>&>()));
    static_assert(valid_result_v<R>, "rule(): a rewriter must return UOp, std::optional<UOp> or pat::gated");
  }
  rule_t<P, F> r{{{}, f, rule_info{{}, file, line}}, p};
  if constexpr (detail::numbers_in<P> > 0) {
    int k = 0;
    detail::copy_numbers(p, r.numbers, k);
  }
  return r;
}
/// A named rule.
template <class P, class F>
constexpr auto rule(std::string_view name, P p, F f, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return rule(p, f, file, line).named(name);
}

// --- shadowing (the rule-set check): computed on the patterns' programs (program.hpp) ------------

namespace detail {
/// Rule b can never fire after rule a: a always rewrites (total), binds each name once, and matches
/// every node b matches.
constexpr bool shadows(bool a_total, program_view a, int a_names, program_view b) {
  return a_total && names_unique(a, a_names) && subsumes(a, 0, b, 0);
}
}  // namespace detail

}  // namespace uopcg::pat
