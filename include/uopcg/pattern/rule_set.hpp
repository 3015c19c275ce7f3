// Rule sets: ordered lists of rules (a boost::hana::basic_tuple) that compose with `+` (the earlier
// rule wins), can be inspected, and dispatch by op through a table computed at compile time: a node
// is offered only the rules whose root can match its op, after an early reject on the child ops the
// rule requires. No virtual calls, no allocation per match.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/hana/at.hpp>
#include <boost/hana/basic_tuple.hpp>
#include <boost/hana/concat.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/size.hpp>
#include <boost/hana/unpack.hpp>

#include "rule.hpp"

namespace uopcg::pat {

/// Counters of one graph_rewrite (opt-in): attempts and matches per rule of the set.
struct rewrite_stats {
  std::vector<std::uint64_t> attempts, matches;
  std::vector<rule_info> rules;
  constexpr void ensure(std::size_t n) {
    if (attempts.size() < n) {
      attempts.resize(n, 0);
      matches.resize(n, 0);
    }
  }
};

/// What applying a rule set to one node did.
struct applied {
  int rule = -1;  // index of the rule that rewrote, -1 if none
  bool gate = false;
  UOp result;
};

namespace detail {
// (i, j) pairs to test for shadowing: i < j, rule i total, root ops overlapping.
template <std::size_t N>
struct pair_list {
  std::uint16_t a[N * (N > 0 ? N - 1 : 0) / 2 + 1]{};
  std::uint16_t b[N * (N > 0 ? N - 1 : 0) / 2 + 1]{};
  std::size_t count = 0;
};

template <class... R>
constexpr int first_shadowed_rule() {
  constexpr std::size_t n = sizeof...(R);
  if constexpr (n < 2) {
    return -1;
  } else {
    constexpr OpSet ops[] = {R::pattern_type::root_ops...};
    constexpr bool total[] = {R::total...};
    constexpr auto pairs = [&] {
      pair_list<n> p;
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j)
          if (total[i] && !(ops[i] & ops[j]).empty()) {
            p.a[p.count] = static_cast<std::uint16_t>(i);
            p.b[p.count] = static_cast<std::uint16_t>(j);
            ++p.count;
          }
      return p;
    }();
    using rules = std::tuple<R...>;
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      int found = -1;
      ((found < 0 && shadows<std::tuple_element_t<pairs.a[K], rules>, std::tuple_element_t<pairs.b[K], rules>>()
            ? (void)(found = pairs.b[K])
            : (void)0),
       ...);
      return found;
    }(std::make_index_sequence<pairs.count>{});
  }
}
}  // namespace detail

namespace detail {
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
      return (values_equal(hana::at_c<I>(a.alts), hana::at_c<I>(b.alts)) && ...);
    }(std::make_index_sequence<decltype(hana::size(a.alts))::value>{});
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
        return (values_equal(hana::at_c<I>(a.src_spec.c), hana::at_c<I>(b.src_spec.c)) && ...);
      }(std::make_index_sequence<decltype(hana::size(a.src_spec.c))::value>{});
    }
  }
}

// A later rule whose pattern is an exact duplicate (same type, same values) of an earlier total
// rule's. Values are only known when the set is built, so this runs then: in a constexpr set the
// failure is a compile error.
template <class... R>
constexpr void check_duplicates(const hana::basic_tuple<R...>& rules) {
  using all = std::tuple<R...>;
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    (
        [&]<std::size_t Jv>(std::integral_constant<std::size_t, Jv>) {
          [&]<std::size_t... I>(std::index_sequence<I...>) {
            (
                [&]<std::size_t Iv>(std::integral_constant<std::size_t, Iv>) {
                  using RI = std::tuple_element_t<Iv, all>;
                  using RJ = std::tuple_element_t<Jv, all>;
                  if constexpr (RI::total && std::is_same_v<typename RI::pattern_type, typename RJ::pattern_type>) {
                    if (values_equal(hana::at_c<Iv>(rules).pattern, hana::at_c<Jv>(rules).pattern))
                      fail("rule set: a rule can never fire: an earlier rule of the set has the same pattern and always rewrites");
                  }
                }(std::integral_constant<std::size_t, I>{}),
                ...);
          }(std::make_index_sequence<Jv>{});
        }(std::integral_constant<std::size_t, J>{}),
        ...);
  }(std::index_sequence_for<R...>{});
}
}  // namespace detail

template <class... R>
class rule_set {
 public:
  static constexpr std::size_t size = sizeof...(R);
  hana::basic_tuple<R...> rules;

  /// Ops the root of each rule can match.
  static constexpr std::array<OpSet, size> ops{R::pattern_type::root_ops...};
  /// Child ops each rule requires (early reject).
  static constexpr std::array<OpSet, size> required_child_ops{R::pattern_type::early_reject...};

  /// Name and location of rule i.
  constexpr rule_info info(std::size_t i) const {
    rule_info out{};
    std::size_t k = 0;
    hana::for_each(rules, [&](const auto& r) {
      if (k++ == i) out = r.info;
    });
    return out;
  }
  /// Number of rules whose root can match `op`.
  static constexpr std::size_t count_for(Ops op) { return table.start[static_cast<int>(op) + 1] - table.start[static_cast<int>(op)]; }

  template <class... R2>
  constexpr auto operator+(const rule_set<R2...>& o) const {
    static_assert(detail::first_shadowed_rule<R..., R2...>() < 0,
                  "rule set: a rule can never fire: an earlier rule of the set always rewrites every node it matches");
    rule_set<R..., R2...> out{hana::concat(rules, o.rules)};
    detail::check_duplicates(out.rules);
    return out;
  }

  /// Tries the rules that can match u, in order; returns which one rewrote.
  template <class Ctx>
  constexpr applied apply(UOp u, Ctx& ctx, rewrite_stats* stats = nullptr) const {
    const int op = static_cast<int>(u.op());
    applied res;
    OpSet child_ops;
    bool have_child_ops = false;
    for (std::uint32_t k = table.start[op]; k < table.start[op + 1]; ++k) {
      const std::uint16_t i = table.index[k];
      if (!required_child_ops[i].empty()) {
        if (!have_child_ops) {
          for (UOp s : u.srcs()) child_ops = child_ops.with(s.op());
          have_child_ops = true;
        }
        if (!required_child_ops[i].subset_of(child_ops)) continue;
      }
      if (stats) ++stats->attempts[i];
      if (appliers<Ctx>[i](*this, u, ctx, res)) {
        if (stats) ++stats->matches[i];
        res.rule = i;
        return res;
      }
    }
    return res;
  }

 private:
  static constexpr std::size_t table_entries = [] {
    std::size_t n = 0;
    for (OpSet s : ops) n += static_cast<std::size_t>(s.size());
    return n > 0 ? n : 1;
  }();
  struct dispatch_table {
    std::uint32_t start[129]{};
    std::uint16_t index[table_entries]{};
  };
  static constexpr dispatch_table table = [] {
    dispatch_table t;
    std::uint32_t pos = 0;
    for (int op = 0; op < 128; ++op) {
      t.start[op] = pos;
      for (std::size_t i = 0; i < size; ++i)
        if (ops[i].contains(static_cast<Ops>(op))) t.index[pos++] = static_cast<std::uint16_t>(i);
    }
    t.start[128] = pos;
    return t;
  }();

  template <std::size_t I, class Ctx>
  static constexpr bool apply_rule(const rule_set& self, UOp u, Ctx& ctx, applied& out) {
    const auto& r = hana::at_c<I>(self.rules);
    using rule_type = std::remove_cvref_t<decltype(r)>;
    typename rule_type::match_type m(&u.arena(), u.id());
    return r.pattern.match(u, m, [&]() -> bool {
      auto result = detail::invoke_rewriter(r.rewriter, ctx, m);
      using Res = decltype(result);
      static_assert(valid_result_v<Res>, "rule(): a rewriter must return UOp, std::optional<UOp> or pat::gated");
      if constexpr (std::is_same_v<Res, UOp>) {
        if (!result.valid()) {
          text t;
          t.append("rule ").append(r.info.label()).append(" returned no node for ")
              .append(u.arena().describe(u.id())).append(" (a rule returning UOp must always rewrite; return std::optional<UOp> to decline)");
          fail(t.view());
        }
        if (result == u) return false;
        out.result = result;
        return true;
      } else if constexpr (std::is_same_v<Res, gated>) {
        out.result = result.node;
        out.gate = true;
        return true;
      } else {
        if (!result || *result == u) return false;
        out.result = *result;
        return true;
      }
    });
  }
  template <class Ctx>
  using applier = bool (*)(const rule_set&, UOp, Ctx&, applied&);
  template <class Ctx>
  static constexpr std::array<applier<Ctx>, size> appliers = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<applier<Ctx>, size>{&apply_rule<I, Ctx>...};
  }(std::make_index_sequence<size>{});
};

/// A rule set from rules, in priority order.
template <class... R>
constexpr auto rules(R... r) {
  static_assert(detail::first_shadowed_rule<R...>() < 0,
                "rule set: a rule can never fire: an earlier rule of the set always rewrites every node it matches");
  rule_set<R...> out{hana::make_basic_tuple(r...)};
  detail::check_duplicates(out.rules);
  return out;
}

}  // namespace uopcg::pat
