// Rule sets: ordered lists of rules (a Hana sequence, detail::pack) that compose with `+` (the earlier
// rule wins), can be inspected, and dispatch by op through a table computed at compile time: a node
// is offered only the rules whose root can match its op, after an early reject on the child ops the
// rule requires. No virtual calls, no allocation per match.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "applied.hpp"
#include "detail/dispatch.hpp"
#include "detail/set_checks.hpp"
#include "rule.hpp"

namespace uopcg::pat {

/// What every rule set is: the rewrite engine reaches a set through a pointer to this base, which
/// constant evaluation can cast back to the set.
struct rule_set_base {};

template <class... R>
class rule_set : public rule_set_base {
 public:
  /// The number of rules: an enumerator, since g++ mangles the name of every static data member a
  /// class instantiates, used or not, and this class's name spells every rule (see ref).
  enum : std::size_t { size = sizeof...(R) };
  /// The rules, a Hana sequence (detail::pack: hana::at_c, hana::unpack, hana::size).
  detail::pack<R...> rules;
  std::array<rule_info, sizeof...(R)> infos;
  /// The rules' run-time numbers (`x + 1`), back to back in rule order: what the rewrites read, so
  /// that a rewrite stores the addresses of only the rules of needs_object, not two per rule (the
  /// optimizer's time on a run of stores grows faster than its length).
  std::array<arg_number, detail::sum_of({std::size_t{1}, std::size_t{detail::numbers_in<typename R::pattern_type>}...})> numbers;

  /// Ops the root of rule i can match (functions, not static arrays: see size).
  static constexpr OpSet ops(std::size_t i) {
    constexpr OpSet o[] = {OpSet{}, detail::proto_of<typename R::pattern_type>.root_ops...};  // rule i is at i + 1
    if (i >= sizeof...(R)) fail("rule_set::ops: rule index out of range");
    return o[i + 1];
  }
  /// Child ops rule i requires (early reject).
  static constexpr OpSet required_child_ops(std::size_t i) {
    constexpr OpSet o[] = {OpSet{}, detail::proto_of<typename R::pattern_type>.early_reject...};
    if (i >= sizeof...(R)) fail("rule_set::required_child_ops: rule index out of range");
    return o[i + 1];
  }
  /// Ops the root of some rule can match.
  static constexpr OpSet root_ops() { return detail::union_of({OpSet{}, detail::proto_of<typename R::pattern_type>.root_ops...}); }

  /// Name and location of rule i.
  constexpr rule_info info(std::size_t i) const {
    if (i >= sizeof...(R)) fail("rule_set::info: rule index out of range");
    return infos[i];
  }
  /// Number of rules whose root can match `op` (the table is a constant: a run-time call builds nothing).
  static constexpr std::size_t count_for(Ops op) {
    constexpr dispatch_table t = make_table();
    return t.start[static_cast<int>(op) + 1] - t.start[static_cast<int>(op)];
  }

  // No lambda and no member function template: each would be one more name spelling both sets.
  template <class... R2>
  constexpr rule_set<R..., R2...> operator+(const rule_set<R2...>& o) const {
    // each side was checked when it was built: only a's rules against b's
    if constexpr (sizeof...(R) > 0) static_assert(detail::no_rule_shadowed<detail::first_shadowed_rule<sizeof...(R), R..., R2...>()>());
    detail::check_duplicates<false>(rules, o.rules);
    rule_set<R..., R2...> out{{}, detail::join(rules, o.rules, std::index_sequence_for<R...>{}, std::index_sequence_for<R2...>{}),
                              detail::concat_arrays(infos, o.infos), {}};
    // both sides hold one unused slot (never empty): a's numbers, then b's
    std::size_t k = 0;
    for (std::size_t i = 0; i + 1 < numbers.size(); ++i) out.numbers[k++] = numbers[i];
    for (std::size_t i = 0; i + 1 < o.numbers.size(); ++i) out.numbers[k++] = o.numbers[i];
    return out;
  }

  /// Where ref writes the addresses of this object's rules that need them (on the caller's stack).
  using addresses = detail::rule_addresses<sizeof...(R), detail::count_true({false, detail::needs_object<R>::value...})>;

  /// Tries the rules that can match u, in order; returns which one rewrote.
  template <class Ctx>
  constexpr applied apply(UOp u, Ctx& ctx, rewrite_stats* stats = nullptr) const {
    addresses at;
    const detail::rules_ref rs = ref<Ctx>(at);
    detail::context_of<Ctx> box(ctx);
    return rs.checked(detail::apply_rules(rs, u, box, stats), u);
  }

  /// This set as the rewrite engine sees it, valid while the set and `at` live; `at` receives
  /// where this object's rules are.
  // Everything templated on a rule set's type costs g++ the mangling of a name that spells every
  // rule, quadratic in the set's size: a set's rewrite has four, this function, locate_all, the
  // tables and graph_rewrite.
  template <class Ctx>
  constexpr detail::rules_ref ref(addresses& at) const {
    constexpr std::size_t k = detail::count_true({false, detail::needs_object<R>::value...});
    if constexpr (k > 0) at = locate_all(std::make_index_sequence<k>{});
    const auto& d = tables<Ctx>;
    return {d.table.start, d.table.any_required, d.table.entries, infos.data(), sizeof...(R), d.table.root_ops, d.entries.data(),
            at.rules, numbers.data()};
  }

 private:
  // Static members read at run time are emitted, each a name to mangle (see ref): a rewrite reads
  // only `tables`, and the other members are computed here from the rules' types, not read.
  using dispatch_table = detail::dispatch_table<detail::total_size({OpSet{}, detail::proto_of<typename R::pattern_type>.root_ops...}) + 1>;
  // Counting sort of (op, rule) pairs over the set bits of each rule's ops: the constant evaluator
  // is slow, so the work follows the pairs, not every op times every rule.
  static constexpr dispatch_table make_table() {
    dispatch_table t;
    t.root_ops = detail::union_of({OpSet{}, detail::proto_of<typename R::pattern_type>.root_ops...});
    constexpr OpSet root[] = {OpSet{}, detail::proto_of<typename R::pattern_type>.root_ops...};  // rule i is at i + 1
    constexpr OpSet required[] = {OpSet{}, detail::proto_of<typename R::pattern_type>.early_reject...};
    // plain loops over each rule's op bits: a lambda here would be a name spelling the set (see ref)
    std::uint32_t count[129]{};
    for (std::size_t i = 0; i < sizeof...(R); ++i)
      for (int half = 0; half < 2; ++half)
        for (std::uint64_t bits = half ? root[i + 1].hi : root[i + 1].lo; bits != 0; bits &= bits - 1)
          ++count[half * 64 + std::countr_zero(bits) + 1];
    for (int op = 0; op < 128; ++op) t.start[op + 1] = t.start[op] + count[op + 1];
    std::uint32_t fill[128]{};
    for (std::size_t i = 0; i < sizeof...(R); ++i)
      for (int half = 0; half < 2; ++half)
        for (std::uint64_t bits = half ? root[i + 1].hi : root[i + 1].lo; bits != 0; bits &= bits - 1) {
          const int op = half * 64 + std::countr_zero(bits);
          t.entries[t.start[op] + fill[op]++] = {uopcg::detail::op_bits(required[i + 1]), static_cast<std::uint16_t>(i), 1};
          t.any_required[op] |= !required[i + 1].empty();
        }
    for (int op = 0; op < 128; ++op)
      for (std::uint32_t k = t.start[op + 1]; k-- > t.start[op] + 1;)
        if (t.entries[k - 1].req == t.entries[k].req)
          t.entries[k - 1].run = static_cast<std::uint16_t>(t.entries[k].run + 1);
    return t;
  }

  // The addresses of the rules that need them (J-th: rule at[J]), in one expansion: no function
  // per rule and no lambda (a generic lambda over every rule is instantiated per rule), and no fold
  // expression (clang nests those, and stops at 256 operands).
  template <std::size_t... J>
  constexpr addresses locate_all(std::index_sequence<J...>) const {
    constexpr bool needs[] = {false, detail::needs_object<R>::value...};  // rule i is at i + 1
    constexpr auto at = detail::true_indices<sizeof...(J)>(needs);
    if constexpr (sizeof...(R) <= 4)  // pack's aggregate forms
      return {{nullptr, &rules.template get<at[J] - 1>()...}};
    else
      return {{nullptr, &static_cast<const detail::pack_slot<at[J] - 1, detail::slot_t<at[J] - 1, detail::pack<R...>>>&>(rules).v...}};
  }
  // The rules' entry points: where each finds its numbers and, if it needs it, its object.
  template <class Ctx>
  static constexpr std::array<detail::thunk_entry, sizeof...(R)> make_entries() {
    std::array<detail::thunk_entry, sizeof...(R)> e{detail::entry_of<R, Ctx>()...};
    constexpr std::size_t counts[] = {0, std::size_t{detail::numbers_in<typename R::pattern_type>}...};  // rule i is at i + 1
    constexpr bool needs[] = {false, detail::needs_object<R>::value...};
    std::uint32_t at = 0, object = 0;
    for (std::size_t i = 0; i < sizeof...(R); ++i) {
      e[i].numbers_at = at;
      at += static_cast<std::uint32_t>(counts[i + 1]);
      e[i].object = needs[i + 1] ? ++object : 0;
    }
    return e;
  }
  // The dispatch table and the rules' entry points, the only data of a set that its rewrites emit:
  // one variable, one name to mangle (see ref). Per-rule code is a free function, not a member of
  // rule_set: rule_set's type names every rule, so a member's name per rule would grow the symbols
  // as n^2.
  template <class Ctx>
  static constexpr detail::set_tables<dispatch_table, sizeof...(R)> tables{make_table(), make_entries<Ctx>()};
};

/// A rule set from rules, in priority order.
template <class... R>
constexpr auto rules(R... r) {
  static_assert(detail::no_rule_shadowed<detail::first_shadowed_rule<0, R...>()>());
  rule_set<R...> out{{}, detail::make_pack(r...), {r.info...}, {}};
  detail::check_duplicates<true>(out.rules, out.rules);
  if constexpr (std::tuple_size_v<decltype(out.numbers)> > 1) {
    const arg_number* from[] = {r.numbers...};
    constexpr std::size_t counts[] = {std::size_t{detail::numbers_in<typename R::pattern_type>}...};
    std::size_t k = 0;
    for (std::size_t i = 0; i < sizeof...(R); ++i)
      for (std::size_t j = 0; j < counts[i]; ++j) out.numbers[k++] = from[i][j];
  }
  return out;
}

}  // namespace uopcg::pat
