// How a rule set reaches its rules: per-rule thunks (the rewriter and predicates, the only per-rule
// code), the shared drivers over the matcher, and the dispatch table by op with the early reject on
// required child ops. Internals of rule_set.hpp.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../applied.hpp"
#include "../rule.hpp"
#include "matcher.hpp"

namespace uopcg::pat::detail {

// Raised where a rewrite is taken (rules_ref::checked, apply_one), where the rule's name is known: a thunk does
// not read it (a stateless rule's thunk reads nothing of its rule).
[[noreturn, gnu::noinline]] constexpr void returned_no_node(const rule_info& info, UOp u) {
  text t;
  t.append("rule ").append(info.label()).append(" returned no node for ").append(u.arena().describe(u.id()))
      .append(" (a rule returning UOp must always rewrite; return std::optional<UOp> to decline)");
  fail(t.view());
}

// What a rewriter's result means for the node it was offered (true: it rewrote, out is set; an
// invalid UOp also counts as rewriting, and the caller raises returned_no_node). One plain function
// per result type, shared by every rule.
constexpr bool take_result(UOp result, const match_state& s, applied& out) {
  if (result == UOp(s.arena_, s.root_)) return false;
  out.result = result;
  return true;
}
constexpr bool take_result(gated result, const match_state&, applied& out) {
  out.result = result.node;
  out.gate = true;
  return true;
}
constexpr bool take_result(const std::optional<UOp>& result, const match_state& s, applied& out) {
  if (!result || *result == UOp(s.arena_, s.root_)) return false;
  out.result = *result;
  return true;
}
template <class T>
constexpr bool take_result(const T&, const match_state&, applied&) {
  return false;  // not a valid result: a static_assert of rule() or offer_thunk says so
}

/// What the shared driver needs to know of a rule's pattern: constant data, one object per pattern
/// type (no code).
struct rule_shape {
  program_view prog;
  int shallow_orders = 0;  // program::shallow_orders
  int nslots = 0;          // capture slots
  bool root_check = false;  // a predicate on the root (check 0)
  bool kid_checks = false;  // predicates below the root
  const pnode* kid[max_shaped_kids]{};  // the root's first sources (run_shaped reads them directly)
};
constexpr rule_shape make_shape(program_view p, int shallow_orders, int nslots, bool root_check, bool kid_checks) {
  rule_shape s{p, shallow_orders, nslots, root_check, kid_checks};
  for (int i = 0; i < p.nodes[0].nkids && i < max_shaped_kids; ++i) s.kid[i] = &p.kid(p.nodes[0], i);
  return s;
}
template <class P>
inline constexpr rule_shape shape_of = make_shape(program_of<P>.view(), program_of<P>.shallow_orders, match_for<P>::size,
                                                  proto_of<P>.check, checks_in<P> > (proto_of<P>.check ? 1 : 0));

// The matcher's bindings (programs that are not shallow), as drive.
template <class Offer, class Check>
constexpr bool run_matcher(const rule_shape& s, const arg_number* numbers, UOp u, Offer&& offer, Check&& check) {
  matcher mt(s.prog, numbers, u);
  while (mt.next()) {
    if (s.kid_checks) {
      bool ok = true;
      for (int j = 0; j < mt.pending() && ok; ++j) {
        const auto& c = mt.pending_at(j);
        if (!check(c.check, UOp(&u.arena(), c.node))) {
          mt.reject(j);
          ok = false;
        }
      }
      if (!ok) continue;
    }
    if (offer(mt.slots())) return true;
  }
  return false;
}

// Offers u to one rule: enumerates the structural matches of the rule's program (shallow ones here,
// others through the matcher), tests the predicates with check(k, node) and calls offer(slots)
// until one binding rewrites. The same code for every rule: at run time it is instantiated once,
// with the rule reached through function pointers (rule_set::dispatch).
template <class Offer, class Check>
constexpr bool drive(const rule_shape& s, const arg_number* numbers, UOp u, Offer&& offer, Check&& check) {
  const Arena& a = u.arena();
  if (!prefilter(s.prog, a, u.id(), numbers, s.shallow_orders == 0)) return false;
  if (s.root_check && !check(0, u)) return false;  // the root's predicate first: most rules with one reject here
  if (s.shallow_orders > 0) {
    // the root and its leaf sources, bound in one or two source orders (most rules)
    // zeroed: shallow_bind sets the nslots the rewriter reads, but g++ -O2 cannot tell once the
    // rewriter's thunk is not inlined (-Wmaybe-uninitialized, apply_one in rule_tester.hpp)
    node_id slots[max_captures]{};
    const pnode& root = s.prog.nodes[0];
    for (int o = 0; o < s.shallow_orders; ++o) {
      if (!shallow_bind(s.prog, o, a, u.id(), numbers, slots, s.nslots)) continue;
      if (s.kid_checks) {
        const node_id* srcs = a.src_ids(u.id());
        bool ok = true;
        for (int i = 0; i < root.nkids && ok; ++i) {
          const pnode& k = s.prog.kid(root, i);
          ok = k.check < 0 || check(k.check, UOp(&u.arena(), srcs[o ? 1 - i : i]));
        }
        if (!ok) continue;
      }
      if (offer(slots)) return true;
    }
    return false;
  }
  return run_matcher(s, numbers, u, offer, check);
}

/// The context of a rewrite as the engine and the shared drivers pass it on: they never read it.
/// Only a rule's offer_thunk, which its rule set's table names for one context type, does, by a
/// downcast (valid in constant evaluation too); so the engine, the drivers and the dispatch loop are
/// instantiated once for all context types.
struct any_context {};
template <class Ctx>
struct context_of : any_context {
  constexpr explicit context_of(Ctx& c) : ctx(c) {}
  Ctx& ctx;
};

// Offers one binding (s: the node and the capture slots) to the rewriter of rule `rule` (a
// rewriter_of<F> whose pattern's match type is M); true when it rewrote (out is set). With the
// rewriter's own body, the only code a rule compiles to (its predicates aside): matching is shared
// (the drivers below). Two calls, the rewriter and take_result, and the match an aggregate of s
// built without one: every call a per-rule function makes is compiled once per rule.
// Templated on the rewriter and the match type rather than the rule: rules that share a rewriter and
// capture names share it, and its symbol does not spell the pattern. A stateless rewriter (a lambda
// that captures nothing) is default-constructed here, not read from the rule: `rule` is null then,
// unless the pattern has predicates (see needs_object).
// The context reaches it as any_context (see there) and is read as the rewriter's own type.
template <class F, class M, class Ctx>
constexpr bool offer_thunk([[maybe_unused]] const rule_base* rule, const match_state& s, any_context& box, applied& out) {
  [[maybe_unused]] Ctx& ctx = static_cast<context_of<Ctx>&>(box).ctx;
  [[maybe_unused]] const std::conditional_t<is_stateless<F>::value, F, no_context> own{};
  const F* f;
  if constexpr (is_stateless<F>::value) f = &own;
  else f = &static_cast<const rewriter_of<F>*>(rule)->rewriter;
  M m{s};
  if constexpr (requires { (*f)(ctx, m); }) {
    static_assert(valid_result_v<std::decay_t<decltype((*f)(ctx, m))>>, "rule(): a rewriter must return UOp, std::optional<UOp> or pat::gated");
    return take_result((*f)(ctx, m), s, out);
  } else if constexpr (requires { (*f)(m); }) {
    return take_result((*f)(m), s, out);  // rule() checked the result type
  } else {
    static_assert(std::is_same_v<Ctx, no_context>,
                  "graph_rewrite: a rule's rewriter takes a context (ctx, m) of another type than the one passed to graph_rewrite");
    static_assert(!std::is_same_v<Ctx, no_context>,
                  "graph_rewrite: a rule's rewriter takes a context (ctx, m); pass one: graph_rewrite(root, rules, ctx)");
    return false;
  }
}
/// Whether a rule set's rewrites need the rule object: for a rewriter with state, or for the
/// pattern's predicates (run by check_thunk). The others are reached without their address.
template <class Rule>
struct needs_object : std::bool_constant<!is_stateless<typename Rule::rewriter_type>::value || (checks_in<typename Rule::pattern_type> > 0)> {};
/// Offers u to rule r (typed: constant evaluation, and tools that hold one rule).
template <class Rule, class Ctx>
constexpr bool apply_one(const Rule& r, UOp u, Ctx& ctx, applied& out) {
  context_of<Ctx> box(ctx);
  const bool rewrote = drive(
      shape_of<typename Rule::pattern_type>, r.numbers, u,
      [&](const node_id* slots) {
        return offer_thunk<typename Rule::rewriter_type, typename Rule::match_type, Ctx>(&r, match_state{&u.arena(), u.id(), slots}, box,
                                                                                         out);
      },
      [&](int k, UOp v) { return run_check(r.pattern, k, v); });
  if (rewrote && !out.result.valid()) returned_no_node(r.info, u);
  return rewrote;
}

template <class Rule>
constexpr bool check_thunk(const rule_base* rule, int k, UOp v) {
  return run_check(static_cast<const Rule*>(rule)->pattern, k, v);
}
struct rules_ref;
/// One rule in a rule set's table of entry points (constant data: the rule object, when the rule
/// needs it, and its numbers are found through the rules_ref).
struct thunk_entry {
  // run_shaped or run_generic; six arguments, all in registers: it reads the rule object and its
  // numbers itself (as two more arguments, one would go on the stack and every attempt load both)
  bool (*run)(const rules_ref&, const thunk_entry&, UOp, any_context&, applied&);
  const rule_shape* shape;
  bool (*offer)(const rule_base*, const match_state&, any_context&, applied&);
  bool (*check)(const rule_base*, int, UOp);  // null when the pattern has no predicate
  std::uint32_t numbers_at = 0;  // the rule's numbers: rules_ref::numbers + numbers_at
  std::uint32_t object = 0;      // the rule object: rules_ref::rules[object] (0: null, not needed)
};
struct table_entry;

/// A rule set as the rewrite engine sees it: its dispatch table and its rules' entry points as
/// data, no types. The engine and the dispatch loop are instantiated once, not once per rule set: a
/// set's type names every rule, and every function templated on it carries that name in its symbol.
struct rules_ref {
  const std::uint32_t* start = nullptr;  // the op's entries are entries[start[op], start[op + 1])
  const bool* any_required = nullptr;    // per op: some entry requires child ops
  const table_entry* entries = nullptr;
  const rule_info* infos = nullptr;
  std::size_t size = 0;
  OpSet root_ops{};                           // the ops some rule's root can match
  const thunk_entry* thunks = nullptr;        // per rule
  const rule_base* const* rules = nullptr;    // null, then the rule objects that are needed (rule_addresses)
  const arg_number* numbers = nullptr;        // the rules' run-time numbers, back to back

  constexpr rule_info info(std::size_t i) const {
    if (i >= size) fail("rule_set::info: rule index out of range");
    return infos[i];
  }
  /// r, unless its rule returned an invalid UOp: an error naming the rule and u. Checked by the
  /// callers of apply_rules where they take a rewrite, not in try_rules' loop (there, it stops g++
  /// -O2 from inlining the loop into the engine's scan).
  constexpr const applied& checked(const applied& r, UOp u) const {
    if (r.rule >= 0 && !r.result.valid()) returned_no_node(info(static_cast<std::size_t>(r.rule)), u);
    return r;
  }
};

// A rule without a shape (alternatives or a repeat at the root, more than max_shaped_kids sources).
constexpr bool run_generic(const rules_ref& rs, const thunk_entry& e, UOp u, any_context& ctx, applied& out) {
  const rule_base* rule = rs.rules[e.object];
  const arg_number* numbers = rs.numbers + e.numbers_at;
  return drive(
      *e.shape, numbers, u,
      [&](const node_id* slots) { return e.offer(rule, match_state{&u.arena(), u.id(), slots}, ctx, out); },
      [&](int k, UOp v) { return e.check(rule, k, v); });
}

// Binds source I of the root, in source order O, into slots (a shallow shape): its tests, its
// capture (a name met before it in the shape must be bound to the same node: known here, at compile
// time) and its predicate.
template <shape_key K, int O, int I>
[[gnu::always_inline]] constexpr bool bind_kid([[maybe_unused]] const thunk_entry& e, [[maybe_unused]] const rule_base* rule,
                                            const rule_shape& p, Arena& a, const node_id* srcs,
                                            [[maybe_unused]] const arg_number* numbers, [[maybe_unused]] node_id* slots) {
  constexpr node_tests T = K.kids[I];
  const pnode& k = *p.kid[I];
  const node_id s = srcs[O ? 1 - I : I];
  if (!node_ok_t<T>(k, s, a, numbers)) return false;
  if constexpr (T.name >= 0) {
    constexpr bool seen = [] {
      if (K.root.name == T.name) return true;
      for (int j = 0; j < I; ++j)
        if (K.kids[j].name == T.name) return true;
      return false;
    }();
    if constexpr (seen) {
      if (slots[T.name] != s) return false;
    } else {
      slots[T.name] = s;
    }
  }
  if constexpr (T.check)
    if (!e.check(rule, k.check, UOp(&a, s))) return false;
  return true;
}
template <shape_key K, int O, int... I>
[[gnu::always_inline]] constexpr bool bind_all([[maybe_unused]] const thunk_entry& e, [[maybe_unused]] const rule_base* rule,
                                            [[maybe_unused]] const rule_shape& p, Arena& a,
                                            node_id root, [[maybe_unused]] const arg_number* numbers,
                                            [[maybe_unused]] node_id* slots, std::integer_sequence<int, I...>) {
  if constexpr (K.root.name >= 0) slots[K.root.name] = root;
  [[maybe_unused]] const node_id* srcs = a.src_ids(root);
  return (bind_kid<K, O, I>(e, rule, p, a, srcs, numbers, slots) && ...);
}

// The tests of shape K that call nothing: the root's own tests and source count, and its sources'
// own tests (a pair: in either order). Most attempts end here, in a function that saves no registers.
template <shape_key K>
[[gnu::always_inline]] constexpr bool shaped_filter(const rule_shape& s, const Arena& a, node_id root, const arg_number* numbers) {
  if (!node_ok_t<K.root>(s.prog.nodes[0], root, a, numbers)) return false;
  if constexpr (K.src == src_form::none) {
    return true;
  } else {
    const std::uint32_t nsrc = a.raw(root).nsrc;
    if constexpr (K.src == src_form::prefix) {
      if (nsrc < K.nkids) return false;
    } else {
      if (nsrc != K.nkids) return false;
    }
    [[maybe_unused]] const node_id* srcs = a.src_ids(root);
    return [&]<int... I>(std::integer_sequence<int, I...>) {
      if constexpr (K.src == src_form::perm)
        return (node_ok_t<K.kids[0]>(*s.kid[0], srcs[0], a, numbers) && node_ok_t<K.kids[1]>(*s.kid[1], srcs[1], a, numbers)) ||
               (node_ok_t<K.kids[0]>(*s.kid[0], srcs[1], a, numbers) && node_ok_t<K.kids[1]>(*s.kid[1], srcs[0], a, numbers));
      else
        return (node_ok_t<K.kids[I]>(*s.kid[I], srcs[I], a, numbers) && ...);
    }(std::make_integer_sequence<int, K.nkids>{});
  }
}

// After shaped_filter: the root's predicate, then the bindings (shallow shapes: bound here, in one
// or two source orders; others: the matcher's), their predicates and the rewriter.
template <shape_key K>
[[gnu::noinline]] constexpr bool shaped_match(const thunk_entry& e, const rule_base* rule, const arg_number* numbers,
                                              UOp u, any_context& ctx, applied& out) {
  const rule_shape& s = *e.shape;
  if constexpr (K.root.check)
    if (!e.check(rule, 0, u)) return false;
  if constexpr (K.orders == 0) {
    return run_matcher(
        s, numbers, u, [&](const node_id* slots) { return e.offer(rule, match_state{&u.arena(), u.id(), slots}, ctx, out); },
        [&](int k, UOp v) { return e.check(rule, k, v); });
  } else {
    Arena& a = u.arena();
    constexpr auto kids = std::make_integer_sequence<int, K.src == src_form::none ? 0 : K.nkids>{};
    // every capture of a shallow shape is bound by a match: the slots need no reset
    constexpr int nslots = [] {
      int n = K.root.name + 1;
      for (int i = 0; i < K.nkids; ++i) n = K.kids[i].name + 1 > n ? K.kids[i].name + 1 : n;
      return n;
    }();
    node_id slots[nslots > 0 ? nslots : 1];
    if constexpr (nslots == 0) slots[0] = no_node;
    const match_state m{&a, u.id(), slots};
    if (bind_all<K, 0>(e, rule, s, a, u.id(), numbers, slots, kids) && e.offer(rule, m, ctx, out)) return true;
    if constexpr (K.orders == 2)
      return bind_all<K, 1>(e, rule, s, a, u.id(), numbers, slots, kids) && e.offer(rule, m, ctx, out);
    return false;
  }
}

// A rule of shape K (see shape_key): what drive does, with the structure as constants.
template <shape_key K>
constexpr bool run_shaped(const rules_ref& rs, const thunk_entry& e, UOp u, any_context& ctx, applied& out) {
  const arg_number* numbers = rs.numbers + e.numbers_at;
  if (!shaped_filter<K>(*e.shape, u.arena(), u.id(), numbers)) return false;
  return shaped_match<K>(e, rs.rules[e.object], numbers, u, ctx, out);
}

// A rule's entry in a rule set's table, offsets aside: its shape's driver (or the generic one), its
// shape, its thunk and, only when the pattern has predicates, their thunk. consteval: nothing of it
// is emitted (a variable template would be, at g++ -O0: a pointer object per rule, its name spelling
// the rule's whole type).
template <class Rule, class Ctx>
consteval thunk_entry entry_of() {
  using P = typename Rule::pattern_type;
  thunk_entry e{&run_generic, &shape_of<P>, &offer_thunk<typename Rule::rewriter_type, typename Rule::match_type, Ctx>, nullptr};
  if constexpr (has_shape(program_of<P>.view()))
    e.run = &run_shaped<shape_of_program(program_of<P>.view(), program_of<P>.shallow_orders)>;
  if constexpr (checks_in<P> > 0) e.check = &check_thunk<Rule>;
  return e;
}

/// One (op, rule) pair of a rule set's dispatch table.
struct table_entry {
  std::uint64_t req;  // required child ops (uopcg::detail::op_bits)
  std::uint16_t rule;
  std::uint16_t run;  // entries from this one on, for the same op, with the same required child ops
};

/// The union of some op sets, and the sum of their sizes (a rule set's root ops and dispatch table
/// size, from an array rather than a fold expression: clang stops at 256 operands in a fold).
template <std::size_t N>
constexpr OpSet union_of(const OpSet (&sets)[N]) {
  OpSet u;
  for (const OpSet& s : sets) u = u | s;
  return u;
}
template <std::size_t N>
constexpr std::size_t total_size(const OpSet (&sets)[N]) {
  std::size_t n = 0;
  for (const OpSet& s : sets) n += static_cast<std::size_t>(s.size());
  return n;
}

/// A rule set's dispatch table: for each op, its entries (E - 1 of them, + 1: never empty).
template <std::size_t E>
struct dispatch_table {
  std::uint32_t start[129]{};  // the op's entries are entries[start[op], start[op + 1])
  bool any_required[128]{};
  OpSet root_ops{};
  table_entry entries[E]{};
};
/// The constant data of a rule set's rewrites with one context type: the dispatch table and the
/// rules' entry points.
template <class Table, std::size_t N>
struct set_tables {
  Table table;
  std::array<thunk_entry, N> entries;
};

/// Where the K rules of a set of N that need their object (needs_object) are, for one rewrite:
/// filled by rule_set::ref, on the caller's stack.
template <std::size_t N, std::size_t K>
struct rule_addresses {
  static constexpr std::size_t size = N;
  const rule_base* rules[K + 1]{};  // rules[0] is null: the object of the rules that need none
};

/// The number of true values, and their indices (a rule set's rules that need their object).
template <std::size_t N>
constexpr std::size_t count_true(const bool (&b)[N]) {
  std::size_t n = 0;
  for (bool x : b) n += x;
  return n;
}
template <std::size_t K, std::size_t N>
constexpr std::array<std::size_t, K> true_indices(const bool (&b)[N]) {
  std::array<std::size_t, K> out{};
  std::size_t k = 0;
  for (std::size_t i = 0; i < N; ++i)
    if (b[i]) out[k++] = i;
  return out;
}
/// a's elements, then b's (a template on sizes, not on what the arrays belong to).
template <class T, std::size_t N, std::size_t M>
constexpr std::array<T, N + M> concat_arrays(const std::array<T, N>& a, const std::array<T, M>& b) {
  std::array<T, N + M> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = a[i];
  for (std::size_t i = 0; i < M; ++i) out[N + i] = b[i];
  return out;
}
template <std::size_t N>
constexpr std::size_t sum_of(const std::size_t (&a)[N]) {
  std::size_t n = 0;
  for (std::size_t x : a) n += x;
  return n;
}
/// The type of element I of a pack of five or more (unevaluated: no function per element).
template <std::size_t I, class T>
std::type_identity<T> slot_type(const pack_slot<I, T>&);
template <std::size_t I, class Pk>
using slot_t = typename decltype(slot_type<I>(std::declval<const Pk&>()))::type;

// Offers u to rule i of rs: its shape's driver, or the generic one.
constexpr bool run_rule(const rules_ref& rs, std::size_t i, UOp u, any_context& ctx, applied& out) {
  const thunk_entry& t = rs.thunks[i];
  return t.run(rs, t, u, ctx, out);
}

// Candidates k..last of rs (k's required child ops are present), in order.
template <bool Counted>
constexpr applied try_rules(const rules_ref& rs, std::uint32_t k, std::uint32_t last, std::uint64_t child, UOp u, any_context& ctx,
                            rewrite_stats* stats) {
  applied res;
  while (k < last) {
    const table_entry& e = rs.entries[k];
    if (e.req & ~child) {
      k += e.run;  // the following candidates that require the same child ops fail alike
      continue;
    }
    if constexpr (Counted) ++stats->attempts[e.rule];
    if (run_rule(rs, e.rule, u, ctx, res)) {  // an invalid result: see rules_ref::checked
      if constexpr (Counted) ++stats->matches[e.rule];
      res.rule = e.rule;
      return res;
    }
    ++k;
  }
  return res;
}

/// Tries the rules of rs that can match u, in order; returns which one rewrote.
// The head (the op's candidates, the early reject on child ops) is inlined into the caller: most
// nodes a rewrite visits have no candidate left after it, and skip the call and its register saves.
[[gnu::always_inline]] constexpr applied apply_rules(const rules_ref& rs, UOp u, any_context& ctx, rewrite_stats* stats) {
  const auto& n = u.arena().raw(u.id());
  const int op = static_cast<int>(n.op);
  const std::uint32_t first = rs.start[op], last = rs.start[op + 1];
  if (first == last) return {};
  // child ops as a mask, for the early reject (only if a candidate needs it); folded to 64 bits
  // like the arena's summaries (op % 64): a shared bit only lets a rule through to its own
  // match, one word is tested per candidate
  std::uint64_t child = 0;
  if (rs.any_required[op]) {
    const node_id* srcs = u.arena().src_ids(u.id());
    for (std::uint32_t k = 0; k < n.nsrc; ++k) child |= uopcg::detail::op_bit(u.arena().op_of(srcs[k]));
  }
  std::uint32_t k = first;
  while (k < last && (rs.entries[k].req & ~child)) k += rs.entries[k].run;
  if (k == last) return {};
  // two copies of the loop: the counters' test stays out of the one without them
  return stats ? try_rules<true>(rs, k, last, child, u, ctx, stats) : try_rules<false>(rs, k, last, child, u, ctx, nullptr);
}

}  // namespace uopcg::pat::detail
