// The compile-time checks of rules(): no rule shadowed by an earlier one of the set (named in the
// error as rule_never_fires<earlier, later>), no exact duplicates.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "../rule.hpp"

namespace uopcg::pat::detail {

/// M pairs of rule indices, sized by a counting pass first (check_duplicates): an array sized for
/// every pair grows with the square of the set, and the constant evaluator zeroes and copies it all.
template <std::size_t M>
struct pair_list {
  std::uint16_t a[M + 1]{};
  std::uint16_t b[M + 1]{};
  std::size_t count = 0;
};

// The first pair in which an earlier total rule shadows a later one, as earlier * 65536 + later, or
// -1. One constant evaluation over the rules' programs: no code per pair of rules (a template per
// pair grows with the square of the set).
// With Split > 0 only the pairs across it (i < Split <= j): `a + b` checks only a's rules against
// b's, since each side was checked when it was built.
template <std::size_t Split, class... R>
constexpr int first_shadowed_rule() {
  constexpr std::size_t n = sizeof...(R);
  if constexpr (n < 2) {
    return -1;
  } else {
    constexpr bool total[] = {R::total_type::value...};
    constexpr program_view progs[] = {program_of<typename R::pattern_type>.view()...};
    constexpr int names[] = {program_of<typename R::pattern_type>.names.count...};
    constexpr OpSet ops[] = {detail::proto_of<typename R::pattern_type>.root_ops...};
    for (std::size_t i = 0; i < (Split > 0 ? Split : n); ++i) {
      if (!total[i]) continue;
      for (std::size_t j = (Split > i ? Split : i + 1); j < n; ++j)
        if (!(ops[i] & ops[j]).empty() && shadows(true, progs[i], names[i], progs[j])) return static_cast<int>(i * 65536 + j);
    }
    return -1;
  }
}

/// The diagnostic of a rule that can never fire: the compiler shows the two rules' positions in
/// the set as this template's arguments, next to the sentence.
template <int earlier_rule, int never_firing_rule>
struct rule_never_fires {
  static_assert(earlier_rule < 0,
                "rule set: a rule can never fire: the rule at position `never_firing_rule` (from 0, in the set's order) "
                "matches only nodes that the earlier rule at position `earlier_rule` always rewrites");
  static constexpr bool ok = true;
};
template <int Pair>
constexpr bool no_rule_shadowed() {
  if constexpr (Pair < 0) return true;
  else return rule_never_fires<Pair / 65536, Pair % 65536>::ok;
}

// Patterns of the same type that also hold equal values (numbers of `x + 0`): exact duplicates.
template <class P>
constexpr bool values_equal(const P& a, const P& b);
template <class T>
constexpr bool spec_equal(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, arg_number>) return a.kind == b.kind && a.i == b.i && a.f == b.f;
  else if constexpr (std::is_empty_v<T>) return true;
  else return false;  // predicates cannot be compared
}
template <class P>
constexpr bool values_equal(const P& a, const P& b) {
  if constexpr (requires { a.alts; }) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return (values_equal(a.alts.template get<I>(), b.alts.template get<I>()) && ...);
    }(std::make_index_sequence<decltype(a.alts)::size>{});
  } else {
    if (!spec_equal(a.arg_spec, b.arg_spec) || !spec_equal(a.tag_spec, b.tag_spec) || !spec_equal(a.pred, b.pred))
      return false;
    using S = typename P::src_type;
    if constexpr (S::kind == 0) {
      return true;
    } else if constexpr (S::kind == 4) {
      return values_equal(a.src_spec.p, b.src_spec.p);
    } else {
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return (values_equal(a.src_spec.c.template get<I>(), b.src_spec.c.template get<I>()) && ...);
      }(std::make_index_sequence<decltype(a.src_spec.c)::size>{});
    }
  }
}

// Patterns of different types never hold equal values.
template <class P, class Q>
constexpr bool values_equal(const P&, const Q&) {
  return false;
}

// The candidate pairs of check_duplicates (rule i of `a`, rule j of `b`): programs that hash equal
// (every pair of one pattern type among them) where the earlier rule always rewrites. With Self, `a`
// and `b` are one set and i < j. Templated on sizes only: g++ mangles the name of every function a
// constant evaluation instantiates, and a function (or lambda) templated on the rules has a name that
// spells them all.
template <bool Self, std::size_t NA, std::size_t NB>
constexpr std::size_t duplicate_candidates(const std::array<std::uint64_t, NA>& ta, const std::array<std::uint64_t, NB>& tb,
                                           const std::array<bool, NA>& total, std::uint16_t* ai = nullptr,
                                           std::uint16_t* bj = nullptr) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < NA; ++i)
    if (total[i])
      for (std::size_t j = Self ? i + 1 : 0; j < NB; ++j)
        if (ta[i] == tb[j]) {
          if (ai != nullptr) {
            ai[c] = static_cast<std::uint16_t>(i);
            bj[c] = static_cast<std::uint16_t>(j);
          }
          ++c;
        }
  return c;
}
template <bool Self, std::size_t M, std::size_t NA, std::size_t NB>
constexpr pair_list<M> duplicate_pairs(const std::array<std::uint64_t, NA>& ta, const std::array<std::uint64_t, NB>& tb,
                                       const std::array<bool, NA>& total) {
  pair_list<M> p;
  p.count = duplicate_candidates<Self>(ta, tb, total, p.a, p.b);
  return p;
}

// A later rule whose pattern is an exact duplicate (same type, same values) of an earlier total
// rule's. Values are only known when the set is built, so this runs then: in a constexpr set the
// failure is a compile error. Candidate pairs are found by comparing program hashes (no template per pair,
// nor a row template per rule), so only real candidates instantiate any code. With Self, `a` and `b`
// are one set (rules()); otherwise every rule of `a` against every rule of `b` (a + b: each side was
// checked when built).
template <bool Self, class... A, class... B>
constexpr void check_duplicates(const pack<A...>& a, const pack<B...>& b) {
  constexpr std::size_t na = sizeof...(A), nb = sizeof...(B);
  if constexpr (na > 0 && nb > (Self ? 1 : 0)) {
    constexpr std::array<std::uint64_t, na> ta{program_of<typename A::pattern_type>.hash...};
    constexpr std::array<std::uint64_t, nb> tb{program_of<typename B::pattern_type>.hash...};
    constexpr std::array<bool, na> total{A::total_type::value...};
    constexpr std::size_t count = duplicate_candidates<Self>(ta, tb, total);
    if constexpr (count > 0) {
      constexpr auto pairs = duplicate_pairs<Self, count>(ta, tb, total);
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((values_equal(a.template get<pairs.a[K]>().pattern, b.template get<pairs.b[K]>().pattern)
              ? fail("rule set: a rule can never fire: an earlier rule of the set has the same pattern and always rewrites")
              : void()),
         ...);
      }(std::make_index_sequence<count>{});
    }
  }
}

}  // namespace uopcg::pat::detail
