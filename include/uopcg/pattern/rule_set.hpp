// Rule sets: ordered lists of rules (a boost::hana::basic_tuple) that compose with `+` (the earlier
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
  /// Nodes offered to the rule set (one per node and per fixpoint round).
  std::uint64_t visits = 0;
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
template <std::size_t N>
struct pair_list {
  std::uint16_t a[N * (N > 0 ? N - 1 : 0) / 2 + 1]{};
  std::uint16_t b[N * (N > 0 ? N - 1 : 0) / 2 + 1]{};
  std::size_t count = 0;
};

// The first rule that an earlier total rule shadows, or -1. One constant evaluation over the rules'
// programs: no code per pair of rules (a template per pair cost most of a rule set's compile time).
// With Split > 0 only the pairs across it (i < Split <= j): `a + b` checks only a's rules against
// b's, since each side was checked when it was built.
template <std::size_t Split, class... R>
constexpr int first_shadowed_rule() {
  constexpr std::size_t n = sizeof...(R);
  if constexpr (n < 2) {
    return -1;
  } else {
    constexpr bool total[] = {R::total...};
    constexpr program_view progs[] = {program_of<typename R::pattern_type>.view()...};
    constexpr int names[] = {program_of<typename R::pattern_type>.names.count...};
    constexpr OpSet ops[] = {R::pattern_type::root_ops...};
    for (std::size_t i = 0; i < (Split > 0 ? Split : n); ++i) {
      if (!total[i]) continue;
      for (std::size_t j = (Split > i ? Split : i + 1); j < n; ++j)
        if (!(ops[i] & ops[j]).empty() && shadows(true, progs[i], names[i], progs[j])) return static_cast<int>(j);
    }
    return -1;
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
// failure is a compile error. Candidate pairs are found in one constexpr loop, so only real
// candidates instantiate any code (measured: a per-pair lambda cost 1.8 s of clang time for 50
// rules). Pairs (rule i of `a`, rule j of `b`): with Self, `a` and `b` are one set (rules()) and
// i < j; otherwise every i of `a` against every j of `b` (a + b: each side was checked when built).
template <bool Self, class... A, class... B>
constexpr void check_duplicates(const hana::basic_tuple<A...>& a, const hana::basic_tuple<B...>& b) {
  constexpr std::size_t na = sizeof...(A), nb = sizeof...(B);
  if constexpr (na > 0 && nb > (Self ? 1 : 0)) {
    // same pattern type <=> same program object: a comparison of addresses, no template per pair
    // (a row template per rule, each naming every rule of the set, cost ~4 ms per rule)
    constexpr const void* ta[] = {&program_of<typename A::pattern_type>...};
    constexpr const void* tb[] = {&program_of<typename B::pattern_type>...};
    constexpr bool total[] = {A::total...};
    constexpr auto pairs = [&] {
      pair_list<Self ? na : na + nb> p;
      for (std::size_t i = 0; i < na; ++i)
        for (std::size_t j = Self ? i + 1 : 0; j < nb; ++j)
          if (total[i] && ta[i] == tb[j]) {  // only a rule that always rewrites makes a later one dead
            p.a[p.count] = static_cast<std::uint16_t>(i);
            p.b[p.count] = static_cast<std::uint16_t>(j);
            ++p.count;
          }
      return p;
    }();
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((values_equal(hana::at_c<pairs.a[K]>(a).pattern, hana::at_c<pairs.b[K]>(b).pattern)
            ? fail("rule set: a rule can never fire: an earlier rule of the set has the same pattern and always rewrites")
            : void()),
       ...);
    }(std::make_index_sequence<pairs.count>{});
  }
}

[[noreturn, gnu::noinline]] constexpr void returned_no_node(const rule_info& info, UOp u) {
  text t;
  t.append("rule ").append(info.label()).append(" returned no node for ").append(u.arena().describe(u.id()))
      .append(" (a rule returning UOp must always rewrite; return std::optional<UOp> to decline)");
  fail(t.view());
}

// What a rewriter's result means for the node u (true: it rewrote, out is set). One plain function
// per result type, shared by every rule.
constexpr bool take_result(UOp result, const rule_info& info, UOp u, applied& out) {
  if (!result.valid()) returned_no_node(info, u);
  if (result == u) return false;
  out.result = result;
  return true;
}
constexpr bool take_result(gated result, const rule_info&, UOp, applied& out) {
  out.result = result.node;
  out.gate = true;
  return true;
}
constexpr bool take_result(const std::optional<UOp>& result, const rule_info&, UOp u, applied& out) {
  if (!result || *result == u) return false;
  out.result = *result;
  return true;
}
template <class T>
constexpr bool take_result(const T&, const rule_info&, UOp, applied&) {
  return false;  // not a valid result: offer's static_assert says so
}

// Offers one binding to the rewriter; true when it rewrote (out is set). Out of line: a commutative
// rule offers from two places, and the rewriter's code should exist once per rule.
template <class Rule, class Ctx>
[[gnu::noinline]] constexpr bool offer(const Rule& r, UOp u, Ctx& ctx, applied& out, const node_id* slots) {
  typename Rule::match_type m(&u.arena(), u.id());
  m.bind(slots);
  // the rewriter is called here, not through a helper template: one instantiation fewer per rule
  if constexpr (requires { r.rewriter(ctx, m); }) {
    static_assert(valid_result_v<std::decay_t<decltype(r.rewriter(ctx, m))>>, "rule(): a rewriter must return UOp, std::optional<UOp> or pat::gated");
    return take_result(r.rewriter(ctx, m), r.info, u, out);
  } else {
    static_assert(valid_result_v<std::decay_t<decltype(r.rewriter(m))>>, "rule(): a rewriter must return UOp, std::optional<UOp> or pat::gated");
    return take_result(r.rewriter(m), r.info, u, out);
  }
}
// The predicates of a shallow pattern's sources, bound in source order O (only for rules that have
// some: the only choice point is the root's, met before them, so a rejection ends this order).
template <int O, class Rule>
constexpr bool shallow_checks(const Rule& r, UOp u) {
  using P = typename Rule::pattern_type;
  constexpr const auto& prog = program_of<P>;
  constexpr const pnode& root = prog.nodes[0];
  const node_id* srcs = u.arena().src_ids(u.id());
  for (int i = 0; i < root.nkids; ++i) {
    const pnode& k = prog.nodes[prog.kids[root.first_kid + i]];
    if (k.check >= 0 && !r.pattern.run_check(k.check, UOp(&u.arena(), srcs[O ? 1 - i : i]))) return false;
  }
  return true;
}

// Offers u to one rule: the matcher (program.hpp) enumerates the structural matches, this per-rule
// driver tests the pattern's predicates and calls the rewriter, until one binding rewrites.
template <class Rule, class Ctx>
constexpr bool apply_one(const Rule& r, UOp u, Ctx& ctx, applied& out) {
  using P = typename Rule::pattern_type;
  using M = typename Rule::match_type;
  constexpr const auto& prog = program_of<P>;
  constexpr auto kids = std::make_integer_sequence<int, prog.nodes[0].src == src_form::any ? 0 : prog.nodes[0].nkids>{};
  const Arena& a = u.arena();
  if (!prefilter<P, prog.shallow_orders == 0>(a, u.id(), r.numbers.data(), kids)) return false;
  if constexpr (P::has_check) {  // the root's predicate first: most rules with one reject here
    if (!r.pattern.run_check(0, u)) return false;
  }
  if constexpr (prog.shallow_orders > 0) {
    // the root and its leaf sources: bound here, in one or two source orders, no matcher (most rules)
    node_id slots[M::size > 0 ? M::size : 1];
    if constexpr (P::checks_below > (P::has_check ? 1 : 0)) {  // predicates on the sources
      if (shallow_bind<P, 0, M::size>(a, u.id(), r.numbers.data(), slots, kids) && shallow_checks<0>(r, u) &&
          offer(r, u, ctx, out, slots))
        return true;
      if constexpr (prog.shallow_orders == 2)  // (if constexpr: no order-1 code for a one-order rule)
        return shallow_bind<P, 1, M::size>(a, u.id(), r.numbers.data(), slots, kids) && shallow_checks<1>(r, u) &&
               offer(r, u, ctx, out, slots);
      return false;
    } else {
      if (shallow_bind<P, 0, M::size>(a, u.id(), r.numbers.data(), slots, kids) && offer(r, u, ctx, out, slots))
        return true;
      if constexpr (prog.shallow_orders == 2)
        return shallow_bind<P, 1, M::size>(a, u.id(), r.numbers.data(), slots, kids) && offer(r, u, ctx, out, slots);
      return false;
    }
  } else {
    matcher mt(prog.view(), r.numbers.data(), u);
    while (mt.next()) {
      if constexpr (P::checks_below > (P::has_check ? 1 : 0)) {
        bool ok = true;
        for (int j = 0; j < mt.pending() && ok; ++j) {
          const auto& c = mt.pending_at(j);
          if (!r.pattern.run_check(c.check, UOp(&u.arena(), c.node))) {
            mt.reject(j);
            ok = false;
          }
        }
        if (!ok) continue;
      }
      if (offer(r, u, ctx, out, mt.slots())) return true;
    }
    return false;
  }
}
template <class Rule, class Ctx>
bool apply_thunk(const void* rule, UOp u, Ctx& ctx, applied& out) {
  return apply_one(*static_cast<const Rule*>(rule), u, ctx, out);
}
}  // namespace detail

template <class... R>
class rule_set {
 public:
  static constexpr std::size_t size = sizeof...(R);
  hana::basic_tuple<R...> rules;
  std::array<rule_info, size> infos;

  /// Ops the root of each rule can match.
  static constexpr std::array<OpSet, size> ops{R::pattern_type::root_ops...};
  /// Child ops each rule requires (early reject).
  static constexpr std::array<OpSet, size> required_child_ops{R::pattern_type::early_reject...};

  /// Name and location of rule i.
  constexpr rule_info info(std::size_t i) const {
    if (i >= size) fail("rule_set::info: rule index out of range");
    return infos[i];
  }
  /// Number of rules whose root can match `op`.
  static constexpr std::size_t count_for(Ops op) { return table.start[static_cast<int>(op) + 1] - table.start[static_cast<int>(op)]; }

  template <class... R2>
  constexpr auto operator+(const rule_set<R2...>& o) const {
    // each side was checked when it was built: only a's rules against b's
    static_assert(sizeof...(R) == 0 || detail::first_shadowed_rule<sizeof...(R), R..., R2...>() < 0,
                  "rule set: a rule can never fire: an earlier rule of the set always rewrites every node it matches");
    detail::check_duplicates<false>(rules, o.rules);
    rule_set<R..., R2...> out{hana::concat(rules, o.rules), concat_infos(o.infos)};
    return out;
  }

  template <std::size_t M>
  constexpr std::array<rule_info, size + M> concat_infos(const std::array<rule_info, M>& more) const {
    std::array<rule_info, size + M> out{};
    for (std::size_t i = 0; i < size; ++i) out[i] = infos[i];
    for (std::size_t i = 0; i < M; ++i) out[size + i] = more[i];
    return out;
  }

  /// Tries the rules that can match u, in order; returns which one rewrote.
  // The head (the op's candidates, the early reject on child ops) is inlined into the caller: most
  // nodes a rewrite visits have no candidate left after it, and skip the call and its register saves.
  template <class Ctx>
  [[gnu::always_inline]] constexpr applied apply(UOp u, Ctx& ctx, rewrite_stats* stats = nullptr) const {
    const auto& n = u.arena().raw(u.id());
    const int op = static_cast<int>(n.op);
    const std::uint32_t first = table.start[op], last = table.start[op + 1];
    if (first == last) return {};
    // child ops as a mask, for the early reject (only if a candidate needs it); folded to 64 bits
    // like the arena's summaries (op % 64): a shared bit only lets a rule through to its own
    // match, one word is tested per candidate
    std::uint64_t child = 0;
    if (table.any_required[op]) {
      const node_id* srcs = u.arena().src_ids(u.id());
      for (std::uint32_t k = 0; k < n.nsrc; ++k) child |= uopcg::detail::op_bit(u.arena().raw(srcs[k]).op);
    }
    std::uint32_t k = first;
    while (k < last && (table.entries[k].req & ~child)) k += table.entries[k].run;
    if (k == last) return {};
    // two copies of the loop: the counters' test stays out of the one without them
    return stats ? try_from<true>(k, last, child, u, ctx, stats) : try_from<false>(k, last, child, u, ctx, nullptr);
  }

 private:
  // Candidates k..last (k's required child ops are present).
  template <bool Counted, class Ctx>
  constexpr applied try_from(std::uint32_t k, std::uint32_t last, std::uint64_t child, UOp u, Ctx& ctx,
                             rewrite_stats* stats) const {
    applied res;
    // the thunks, looked up once per node (a function-local static: a guard test per lookup)
    const thunk_entry<Ctx>* thunks = nullptr;
    if (!std::is_constant_evaluated()) thunks = runtime_table<Ctx>().data();
    while (k < last) {
      const auto& e = table.entries[k];
      if (e.req & ~child) {
        k += e.run;  // the following candidates that require the same child ops fail alike
        continue;
      }
      if constexpr (Counted) ++stats->attempts[e.rule];
      if (dispatch(thunks, e.rule, u, ctx, res)) {
        if constexpr (Counted) ++stats->matches[e.rule];
        res.rule = e.rule;
        return res;
      }
      ++k;
    }
    return res;
  }

 private:
  static constexpr std::size_t table_entries = [] {
    std::size_t n = 0;
    for (OpSet s : ops) n += static_cast<std::size_t>(s.size());
    return n > 0 ? n : 1;
  }();
  struct table_entry {
    std::uint64_t req;  // required child ops (uopcg::detail::op_bits)
    std::uint16_t rule;
    std::uint16_t run;  // entries from this one on, for the same op, with the same required child ops
  };
  struct dispatch_table {
    std::uint32_t start[129]{};
    bool any_required[128]{};
    table_entry entries[table_entries]{};
  };
  // Counting sort of (op, rule) pairs over the set bits of each rule's ops: the constant evaluator
  // is slow, and a 128-op x n-rule scan cost clang ~2.5 ms per rule of a 200-rule set.
  static constexpr dispatch_table table = [] {
    dispatch_table t;
    std::uint32_t count[129]{};
    auto each_op = [](OpSet s, auto f) {
      for (int half = 0; half < 2; ++half)
        for (std::uint64_t bits = half ? s.hi : s.lo; bits != 0; bits &= bits - 1) f(half * 64 + std::countr_zero(bits));
    };
    for (std::size_t i = 0; i < size; ++i) each_op(ops[i], [&](int op) { ++count[op + 1]; });
    for (int op = 0; op < 128; ++op) t.start[op + 1] = t.start[op] + count[op + 1];
    std::uint32_t fill[128]{};
    for (std::size_t i = 0; i < size; ++i)
      each_op(ops[i], [&](int op) {
        t.entries[t.start[op] + fill[op]++] = {uopcg::detail::op_bits(required_child_ops[i]), static_cast<std::uint16_t>(i), 1};
        t.any_required[op] |= !required_child_ops[i].empty();
      });
    for (int op = 0; op < 128; ++op)
      for (std::uint32_t k = t.start[op + 1]; k-- > t.start[op] + 1;)
        if (t.entries[k - 1].req == t.entries[k].req)
          t.entries[k - 1].run = static_cast<std::uint16_t>(t.entries[k].run + 1);
    return t;
  }();

  template <class Ctx>
  struct thunk_entry {
    bool (*fn)(const void*, UOp, Ctx&, applied&);
    std::ptrdiff_t offset;  // of the rule inside the rule_set object (the same for every object)
  };
  // Offers u to rule i. At run time through a table of per-rule thunks (one indirect call); in
  // constant evaluation, where a rule cannot be reached through an untyped pointer, by walking the
  // unpacked rules in an array initializer (no fold expression: clang limits those to 256 operands).
  // The rules are reached through one hana::unpack, not hana::at_c per rule: at_c on a tuple of
  // every rule costs ~2 ms of compile time per call (measured with clang -ftime-trace, 200 rules).
  // Per-rule code is a free function, not a member of rule_set: rule_set's type names every rule,
  // and member names grew as n^2 (measured: it dominated g++ compile time).
  template <class Ctx>
  constexpr bool dispatch(const thunk_entry<Ctx>* t, std::size_t i, UOp u, Ctx& ctx, applied& out) const {
    if (!std::is_constant_evaluated())
      return t[i].fn(reinterpret_cast<const char*>(this) + t[i].offset, u, ctx, out);
    if constexpr (size == 0) return false;
    else return hana::unpack(rules, [&](const auto&... r) {
      std::size_t k = 0;
      bool hit = false;
      [[maybe_unused]] const bool walked[] = {(k++ == i ? (hit = detail::apply_one(r, u, ctx, out)) : false)...};
      return hit;
    });
  }
  template <class Ctx>
  const std::array<thunk_entry<Ctx>, size>& runtime_table() const {
    static const std::array<thunk_entry<Ctx>, size> table = hana::unpack(rules, [this](const auto&... r) {
      const char* base = reinterpret_cast<const char*>(this);
      return std::array<thunk_entry<Ctx>, size>{thunk_entry<Ctx>{
          &detail::apply_thunk<std::remove_cvref_t<decltype(r)>, Ctx>, reinterpret_cast<const char*>(&r) - base}...};
    });
    return table;
  }
};

/// A rule set from rules, in priority order.
template <class... R>
constexpr auto rules(R... r) {
  static_assert(detail::first_shadowed_rule<0, R...>() < 0,
                "rule set: a rule can never fire: an earlier rule of the set always rewrites every node it matches");
  rule_set<R...> out{hana::basic_tuple<R...>{r...}, {r.info...}};
  detail::check_duplicates<true>(out.rules, out.rules);
  return out;
}

}  // namespace uopcg::pat
