// A rule = pattern + rewriter. rule() checks, at the rule's definition, everything that can be known
// from the types: the root names an op, capture names are consistent, source counts are possible,
// the rewriter only asks for bound captures and returns a valid result type.
//
// A rewriter receives the match (and, if it takes two parameters, the user context first) and
// returns
//   - UOp: the rule always rewrites (a "total" rule; an invalid UOp or the node itself is an error
//     caught at run time),
//   - std::optional<UOp>: nullopt (or the node itself) declines, and the next binding / rule is tried,
//   - gated{UOp}: like UOp, and in bottom-up mode the result's children are not visited.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "dsl.hpp"
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
template <class P>
constexpr bool bindings_consistent();

template <class P>
constexpr bool nested_consistent() {
  bool ok = true;
  if constexpr (requires { P::alternatives_consistent(); }) ok = P::alternatives_consistent();
  P::for_each_child_type([&]<class C>() { ok = ok && nested_consistent<C>(); });
  return ok;
}
template <class P>
constexpr bool bindings_consistent() {
  binding_list b;
  P::collect_bindings(b);
  return b.conflict().empty() && nested_consistent<P>();
}

// Calls the rewriter with (ctx, match) or (match).
template <class F, class Ctx, class M>
constexpr decltype(auto) invoke_rewriter(const F& f, Ctx& ctx, M& m) {
  if constexpr (std::is_invocable_v<const F&, Ctx&, M&>) return f(ctx, m);
  else return f(m);
}
template <class F, class M>
constexpr bool rewriter_is_total() {
  if constexpr (std::is_invocable_v<const F&, M&>) return std::is_same_v<std::invoke_result_t<const F&, M&>, UOp>;
  else return false;
}
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

template <class P, class F>
struct rule_t {
  using pattern_type = P;
  using rewriter_type = F;
  using match_type = match_for<P>;
  static constexpr bool total = detail::rewriter_is_total<F, match_for<P>>();

  P pattern;
  F rewriter;
  rule_info info;

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
  static_assert(is_pattern_v<P>, "rule(): the first argument must be a pattern");
  static_assert(!P::root_ops.empty(), "rule(): the root of a pattern must name at least one op (rules are dispatched on it)");
  static_assert(!names_of<P>::value.overflow, "rule(): a pattern may bind at most 16 distinct capture names");
  static_assert(!names_of<P>::structural.overflow, "rule(): the capture names of a pattern may have at most 160 characters in all");
  static_assert(detail::bindings_consistent<P>(), "rule(): a capture name is bound to patterns that no single node can satisfy");
  static_assert(P::src_counts_possible(), "rule(): a pattern lists a number of sources that its op can never have");
  if constexpr (std::is_invocable_v<const F&, match_for<P>&>) {
    using R = std::invoke_result_t<const F&, match_for<P>&>;
    static_assert(valid_result_v<R>, "rule(): a rewriter must return UOp, std::optional<UOp> or pat::gated");
  }
  return rule_t<P, F>{p, f, rule_info{{}, file, line}};
}
/// A named rule.
template <class P, class F>
constexpr auto rule(std::string_view name, P p, F f, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return rule(p, f, file, line).named(name);
}

// --- subsumption (for the shadowing check of rule sets) --------------------------------------------

namespace detail {
template <class A, class B>
constexpr bool subsumes();

template <class TA, class TB, std::size_t N>
constexpr bool children_subsume() {
  return []<class... PA, class... PB>(hana::basic_tuple<PA...>*, hana::basic_tuple<PB...>*) {
    if constexpr (sizeof...(PA) > sizeof...(PB)) {
      return false;
    } else {
      using ta = std::tuple<PA...>;
      using tb = std::tuple<PB...>;
      return []<std::size_t... I>(std::index_sequence<I...>) {
        return (subsumes<std::tuple_element_t<I, ta>, std::tuple_element_t<I, tb>>() && ...);
      }(std::make_index_sequence<N>{});
    }
  }(static_cast<TA*>(nullptr), static_cast<TB*>(nullptr));
}
template <class T>
constexpr std::size_t tuple_size_of() {
  return []<class... P>(hana::basic_tuple<P...>*) { return sizeof...(P); }(static_cast<T*>(nullptr));
}
template <class P, class TB>
constexpr bool all_children_subsumed_by() {
  return []<class... PB>(hana::basic_tuple<PB...>*) {
    return sizeof...(PB) > 0 && (subsumes<P, PB>() && ...);
  }(static_cast<TB*>(nullptr));
}

template <class A>
struct is_any_pat : std::false_type {};
template <class... P>
struct is_any_pat<any_pat<P...>> : std::true_type {};

template <class A, class B>
constexpr bool src_subsumes() {
  using SA = typename A::src_type;
  using SB = typename B::src_type;
  if constexpr (SA::kind == 0) {
    return true;
  } else if constexpr (SA::kind == 1 || SA::kind == 3) {
    if constexpr (SB::kind != SA::kind) return false;
    else {
      constexpr std::size_t na = tuple_size_of<typename SA::children>(), nb = tuple_size_of<typename SB::children>();
      if constexpr (na != nb) return false;
      else return children_subsume<typename SA::children, typename SB::children, na>();
    }
  } else if constexpr (SA::kind == 2) {
    if constexpr (SB::kind != 1 && SB::kind != 2) return false;
    else {
      constexpr std::size_t na = tuple_size_of<typename SA::children>(), nb = tuple_size_of<typename SB::children>();
      if constexpr (na > nb) return false;
      else return children_subsume<typename SA::children, typename SB::children, na>();
    }
  } else {
    if constexpr (SB::kind == 4) return subsumes<typename SA::child, typename SB::child>();
    else if constexpr (SB::kind == 1) return all_children_subsumed_by<typename SA::child, typename SB::children>();
    else return false;
  }
}

template <class ArgA, class ArgB>
constexpr bool arg_subsumes() {
  if constexpr (!ArgA::constrained) return true;
  else if constexpr (std::is_same_v<ArgA, ArgB> && requires { ArgA::value; }) return true;  // same const_<V>
  else return std::is_same_v<ArgA, arg_invalid> && std::is_same_v<ArgB, arg_invalid>;
}

/// Every node B matches, A matches too (A must not repeat capture names: checked by the caller).
template <class A, class B>
constexpr bool subsumes() {
  if constexpr (is_any_pat<A>::value) {
    return []<class... P>(hana::basic_tuple<P...>*) {
      return (subsumes<P, B>() || ...);
    }(static_cast<decltype(A::alts)*>(nullptr));
  } else if constexpr (is_any_pat<B>::value) {
    return []<class... P>(hana::basic_tuple<P...>*) {
      return (subsumes<A, P>() && ...);
    }(static_cast<decltype(B::alts)*>(nullptr));
  } else {
    bool ops_ok = A::root_ops.empty() || (!B::root_ops.empty() && B::root_ops.subset_of(A::root_ops));
    return ops_ok && B::root_dtypes.subset_of(A::root_dtypes) &&
           arg_subsumes<typename A::arg_type, typename B::arg_type>() &&
           arg_subsumes<typename A::tag_type, typename B::tag_type>() && !A::pred_type::present &&
           src_subsumes<A, B>();
  }
}

/// Whether a pattern binds each name once (no identity constraints between its parts).
template <class P>
constexpr bool names_unique() {
  binding_list b;
  P::collect_bindings(b);
  for (int i = 0; i < b.count; ++i)
    for (int j = i + 1; j < b.count; ++j)
      if (b.items[i].name == b.items[j].name) return false;
  // names hidden inside alternatives are not listed by collect_bindings: be conservative
  int distinct = 0;
  for (int i = 0; i < b.count; ++i) distinct += 1;
  return distinct == names_of<P>::value.count;
}

/// Rule RB can never fire because the earlier rule RA is total and matches everything RB matches.
template <class RA, class RB>
constexpr bool shadows() {
  using PA = typename RA::pattern_type;
  using PB = typename RB::pattern_type;
  if constexpr (!RA::total) return false;
  else return names_unique<PA>() && subsumes<PA, PB>();
}
}  // namespace detail

}  // namespace uopcg::pat
