// The one matcher that runs a pattern's program against a node (program.hpp explains the design):
// the arg tests, the generic driver's tests, the shaped path's tests, and the odometer over choice
// points. Internals of the rule sets' dispatch (dispatch.hpp).
#pragma once

#include <bit>
#include <cstdint>

#include "../program.hpp"

namespace uopcg::pat::detail {

/// An arg (or tag) test of kind K, its values from t (the shaped drivers know K at compile time).
template <arg_test_kind K>
[[gnu::always_inline]] constexpr bool test_arg_k(const arg_test& t, const Arg& a, const arg_number* numbers) {
  if constexpr (K == arg_test_kind::int_eq) return a.py_equal(static_cast<std::int64_t>(t.value));
  else if constexpr (K == arg_test_kind::float_eq) return a.py_equal(std::bit_cast<double>(t.value));
  else if constexpr (K == arg_test_kind::kind_bits) return a.kind() == t.arg_kind && a.bits() == t.value;
  else if constexpr (K == arg_test_kind::invalid) return a.is_invalid();
  else if constexpr (K == arg_test_kind::number) return numbers[t.index].test(a);
  else return true;
}
// The other kinds, out of line: inlined, this switch would be copied into every node test of the
// matcher and of the shaped drivers, and dominate their compile time.
[[gnu::noinline]] constexpr bool test_arg_rare(const arg_test& t, const Arg& a, const arg_number* numbers) {
  switch (t.kind) {
    case arg_test_kind::none:
    case arg_test_kind::custom: return true;
    case arg_test_kind::int_eq: return test_arg_k<arg_test_kind::int_eq>(t, a, numbers);
    case arg_test_kind::float_eq: return test_arg_k<arg_test_kind::float_eq>(t, a, numbers);
    case arg_test_kind::kind_bits: return test_arg_k<arg_test_kind::kind_bits>(t, a, numbers);
    case arg_test_kind::invalid: return test_arg_k<arg_test_kind::invalid>(t, a, numbers);
    case arg_test_kind::number: return test_arg_k<arg_test_kind::number>(t, a, numbers);
  }
  return false;
}
/// An arg (or tag) test read from the program: an integer constant's inline (most of them).
[[gnu::always_inline]] constexpr bool test_arg(const arg_test& t, const Arg& a, const arg_number* numbers) {
  if (t.kind == arg_test_kind::int_eq && a.kind() == ArgKind::int_)
    return static_cast<std::int64_t>(a.bits()) == static_cast<std::int64_t>(t.value);
  return test_arg_rare(t, a, numbers);
}

/// A node's own tests (op, dtype, arg, tag; not its sources or capture).
[[gnu::always_inline]] constexpr bool node_ok(const pnode& p, node_id id, const Arena& a, const arg_number* numbers) {
  const uopcg::detail::Node& n = a.raw(id);
  if (!p.ops.empty() && !p.ops.contains(n.op)) return false;
  if (!p.any_dtype && !((p.dtypes >> static_cast<int>(n.dtype)) & 1)) return false;
  if (p.arg.kind != arg_test_kind::none && !test_arg(p.arg, a.arg_by_id(n.arg), numbers)) return false;
  if (p.tag.kind != arg_test_kind::none && !test_arg(p.tag, a.arg_by_id(a.tag_id(id)), numbers)) return false;
  return true;
}

// --- the generic driver's tests (dispatch.hpp, drive): everything read from the program ---------
// Used for rules without a shape (alternatives or a repeat at the root) and by apply_one; a rule
// set's other rules take the shaped drivers below, whose branches are the shape's own (this code is
// shared by every rule, so its branches mispredict from one rule to the next).

/// A necessary condition for a match of program p at root: the root's own tests and its source
/// count, and with `with_kids` (programs that are not shallow) its direct sources' own tests. Most
/// failing attempts end here.
[[gnu::always_inline]] constexpr bool prefilter(program_view p, const Arena& a, node_id root, const arg_number* numbers,
                                                bool with_kids) {
  const pnode& r = p.nodes[0];
  if (r.src == src_form::any) return true;
  if (!node_ok(r, root, a, numbers)) return false;
  const std::uint32_t nsrc = a.raw(root).nsrc;
  switch (r.src) {
    case src_form::none: return true;
    case src_form::repeat: return nsrc > 0;
    case src_form::prefix:
      if (nsrc < r.nkids) return false;
      break;
    default:
      if (nsrc != r.nkids) return false;
  }
  if (!with_kids || (r.src == src_form::perm && r.nkids != 2)) return true;
  auto kid_ok = [&](int i, node_id s) {
    const pnode& k = p.kid(r, i);
    return k.src == src_form::any || node_ok(k, s, a, numbers);
  };
  const node_id* srcs = a.src_ids(root);
  if (r.src == src_form::perm)
    return (kid_ok(0, srcs[0]) && kid_ok(1, srcs[1])) || (kid_ok(0, srcs[1]) && kid_ok(1, srcs[0]));
  for (int i = 0; i < r.nkids; ++i)
    if (!kid_ok(i, srcs[i])) return false;
  return true;
}

/// The bindings of a shallow program (see program::shallow_orders) in source order `order` (1: the
/// two sources swapped) into slots[0..nslots), or false. The root's own tests are the prefilter's;
/// predicates are the driver's.
[[gnu::always_inline]] constexpr bool shallow_bind(program_view p, int order, const Arena& a, node_id root,
                                                   const arg_number* numbers, node_id* slots, int nslots) {
  const pnode& r = p.nodes[0];
  for (int i = 0; i < nslots; ++i) slots[i] = no_node;
  if (r.name >= 0) slots[r.name] = root;
  const node_id* srcs = a.src_ids(root);
  for (int i = 0; i < r.nkids; ++i) {
    const pnode& k = p.kid(r, i);
    const node_id s = srcs[order ? 1 - i : i];
    if (!node_ok(k, s, a, numbers)) return false;
    if (k.name >= 0) {
      if (slots[k.name] != no_node && slots[k.name] != s) return false;
      slots[k.name] = s;
    }
  }
  return true;
}

// --- the shaped path: rules reached through a rule set's run-time table ---------------------------
// Which tests a pattern's root and direct sources have, without their values (the op, the dtypes,
// the constant), is the "shape" of a rule: `x + 0` and `y * 3` have one. The driver is a template
// on the shape, so each test a shape lacks costs nothing and the branches are the shape's own (a
// driver shared by every rule mispredicts), while rules of one shape share its code (a driver per
// rule would be compiled per rule). The values are read from the program.

/// Which of a node's own tests a pattern node has.
struct node_tests {
  std::uint8_t ops = 0;  // 0: any op, 1: one op (pnode::op1), 2: a set
  bool dtype = false;
  arg_test_kind arg = arg_test_kind::none, tag = arg_test_kind::none;
  std::int8_t name = -1;  // capture slot (shallow programs only)
  bool check = false;     // has a predicate (shallow programs only)
  friend constexpr bool operator==(const node_tests&, const node_tests&) = default;
};
inline constexpr int max_shaped_kids = 4;
/// The shape of a program whose root has none, a list, a prefix or a pair of sources (at most
/// max_shaped_kids): the root's tests and source form, its sources' tests, and the number of source
/// orders when the driver binds the captures itself (shallow programs; 0: the matcher binds them).
struct shape_key {
  src_form src = src_form::none;
  std::uint8_t nkids = 0;
  std::uint8_t orders = 0;
  node_tests root;
  node_tests kids[max_shaped_kids];
  friend constexpr bool operator==(const shape_key&, const shape_key&) = default;
};
/// Whether program p has a shape.
constexpr bool has_shape(program_view p) {
  const pnode& r = p.nodes[0];
  return r.nkids <= max_shaped_kids && (r.src == src_form::none || r.src == src_form::list || r.src == src_form::prefix ||
                                        (r.src == src_form::perm && r.nkids == 2));
}
constexpr node_tests tests_of(const pnode& n, bool binds) {
  node_tests t;
  if (n.src == src_form::any) return t;  // alternatives: the matcher's
  t.ops = n.ops.empty() ? 0 : n.ops.size() == 1 ? 1 : 2;
  t.dtype = !n.any_dtype;
  t.arg = n.arg.kind == arg_test_kind::custom ? arg_test_kind::none : n.arg.kind;  // custom: the predicate's
  t.tag = n.tag.kind == arg_test_kind::custom ? arg_test_kind::none : n.tag.kind;
  if (binds) {
    t.name = n.name;
    t.check = n.check >= 0;
  }
  return t;
}
/// The shape of program p (has_shape(p)); shallow_orders as program::shallow_orders.
constexpr shape_key shape_of_program(program_view p, int shallow_orders) {
  const pnode& r = p.nodes[0];
  shape_key k;
  k.src = r.src;
  k.nkids = r.nkids;
  k.orders = static_cast<std::uint8_t>(shallow_orders);
  k.root = tests_of(r, true);
  k.root.ops = 0;  // the dispatch table only offers nodes of the root's ops
  for (int i = 0; i < r.nkids; ++i) k.kids[i] = tests_of(p.kid(r, i), shallow_orders > 0);
  return k;
}

/// node_ok with the tests T has (their values from p).
template <node_tests T>
[[gnu::always_inline]] constexpr bool node_ok_t(const pnode& p, node_id id, const Arena& a, const arg_number* numbers) {
  if constexpr (T.ops != 0 || T.dtype || T.arg != arg_test_kind::none) {
    const uopcg::detail::Node& n = a.raw(id);
    if constexpr (T.ops == 1) {
      if (static_cast<std::uint8_t>(n.op) != p.op1) return false;
    } else if constexpr (T.ops == 2) {
      if (!p.ops.contains(n.op)) return false;
    }
    if constexpr (T.dtype)
      if (!((p.dtypes >> static_cast<int>(n.dtype)) & 1)) return false;
    if constexpr (T.arg != arg_test_kind::none)
      if (!test_arg_k<T.arg>(p.arg, a.arg_by_id(n.arg), numbers)) return false;
  }
  if constexpr (T.tag != arg_test_kind::none)
    if (!test_arg_k<T.tag>(p.tag, a.arg_by_id(a.tag_id(id)), numbers)) return false;
  return true;
}

inline constexpr int max_choice_points = 256;

/// Runs a program against a node, one binding per next(). Plain data: no allocation, no
/// per-rule code; usable in constant evaluation.
class matcher {
 public:
  struct pending_check {
    std::int8_t check;
    std::uint16_t before;  // choice points met before the node
    node_id node;
  };

  constexpr matcher(program_view p, const arg_number* numbers, UOp root)
      : p_(p), numbers_(numbers), a_(&root.arena()), root_(root.id()) {}

  /// The next structural match (captures in slots(), predicates still to test in pending_at()).
  /// Out of line: one copy for every rule (inlined into the drivers, the optimizer would compile it
  /// again for each).
  [[gnu::noinline]] constexpr bool next() {
    if (done_) return false;
    if (limit_ >= 0 && !advance(limit_)) return done_ = true, false;  // (the first call advances nothing)
    for (;;) {
      slots_ = no_slots;  // a fixed-size copy (a loop over the rule's slots compiles to a memset call per run)
      seen_ = 0;
      npending_ = 0;
      if (match(0, root_)) {
        limit_ = seen_;
        return true;
      }
      if (!advance(seen_)) return done_ = true, false;
    }
  }
  /// The driver found that predicate check j failed: the next binding changes an earlier choice.
  constexpr void reject(int j) { limit_ = pending_[j].before; }

  constexpr const node_id* slots() const { return slots_.v; }
  constexpr int pending() const { return npending_; }
  constexpr const pending_check& pending_at(int j) const { return pending_[j]; }

 private:
  // Advance the odometer among the first `lim` choice points; false when every option is spent.
  constexpr bool advance(int lim) {
    for (int i = lim; i-- > 0;)
      if (choice_[i] + 1 < options_[i]) {
        ++choice_[i];
        fixed_ = i + 1;
        return true;
      }
    return false;
  }
  constexpr int choose(int n) {
    if (seen_ < fixed_) return choice_[seen_++];
    if (seen_ == max_choice_points)
      fail("pattern matcher: more than 256 choice points (commutative sources and alternatives met) in one match: a repeat of alternatives over too many sources");
    choice_[seen_] = 0;
    options_[seen_] = static_cast<std::uint16_t>(n);
    fixed_ = ++seen_;
    return 0;
  }

  constexpr bool match(int pc, node_id id) {
    const pnode& p = p_.nodes[pc];
    if (p.src == src_form::any) {
      // alternatives whose own root tests fail are skipped, and with only one candidate left there
      // is no choice point (a repeat of alternatives over many sources would otherwise meet one per
      // source); a run that replays fixed choices decides the same way, so the indices line up
      int first = -1, candidates = 0;
      for (int k = 0; k < p.nkids; ++k) {
        const pnode& alt = p_.kid(p, k);
        if (alt.src == src_form::any || node_ok(alt, id, *a_, numbers_)) {
          if (first < 0) first = k;
          ++candidates;
        }
      }
      if (candidates == 0) return false;
      if (candidates == 1) return match(p_.kid_index(p, first), id);
      if (seen_ < fixed_) return match(p_.kid_index(p, choice_[seen_++]), id);
      choose(p.nkids);
      choice_[seen_ - 1] = static_cast<std::uint16_t>(first);
      return match(p_.kid_index(p, first), id);
    }
    const uopcg::detail::Node& n = a_->raw(id);
    if (!node_ok(p, id, *a_, numbers_)) return false;
    if (p.name >= 0) {
      node_id& slot = slots_.v[p.name];
      if (slot != no_node && slot != id) return false;
      slot = id;
    }
    if (p.check >= 0 && pc != 0) {  // the root's check is tested by the driver before the walk
      if (npending_ == max_captures * 4) fail("pattern matcher: too many predicate checks in one match");
      pending_[npending_++] = {p.check, static_cast<std::uint16_t>(seen_), id};
    }
    switch (p.src) {
      case src_form::none: return true;
      case src_form::list:
        if (n.nsrc != p.nkids) return false;
        return match_in_order(p, id);
      case src_form::prefix:
        if (n.nsrc < p.nkids) return false;
        return match_in_order(p, id);
      case src_form::perm: {
        if (n.nsrc != p.nkids) return false;
        if (p.one_order) return match_in_order(p, id);
        if (p.nkids == 2) {  // a commutative pair (most perms): its two orders, without decoding digits
          const node_id* s = a_->src_ids(id);
          // An order whose children fail their own tests cannot match: with one order left there is
          // no choice point (as with alternatives). `x*c` over MUL(y, 3) is one order, not two, so
          // a nested pattern's retries are not doubled at every such pair. Each run decides the
          // same way, so replayed choices line up.
          const pnode &k0 = p_.kid(p, 0), &k1 = p_.kid(p, 1);
          const bool o0 = kid_may_match(k0, s[0]) && kid_may_match(k1, s[1]);
          const bool o1 = kid_may_match(k0, s[1]) && kid_may_match(k1, s[0]);
          if (!o0 && !o1) return false;
          const int c = o0 && o1 ? choose(2) : (o0 ? 0 : 1);
          return match(p_.kid_index(p, 0), s[c]) && match(p_.kid_index(p, 1), s[1 - c]);
        }
        int total = 1;
        for (int k = 2; k <= p.nkids; ++k) total *= k;
        // the c-th permutation in lexicographic order (std::next_permutation's order): factorial digits
        int c = choose(total);
        std::uint8_t left[8] = {0, 1, 2, 3, 4, 5, 6, 7};
        int nleft = p.nkids;
        for (int i = 0; i < p.nkids; ++i) {
          int f = 1;
          for (int k = 2; k < nleft; ++k) f *= k;
          int d = c / f;
          c %= f;
          std::uint8_t s = left[d];
          for (int k = d; k + 1 < nleft; ++k) left[k] = left[k + 1];
          --nleft;
          if (!match(p_.kid_index(p, i), a_->src_ids(id)[s])) return false;
        }
        return true;
      }
      case src_form::repeat:
        if (n.nsrc == 0) return false;  // as tinygrad's early reject: a repeat never matches no source
        for (std::uint32_t i = 0; i < n.nsrc; ++i)
          if (!match(p_.kid_index(p, 0), a_->src_ids(id)[i])) return false;
        return true;
      case src_form::any: break;
    }
    return false;
  }
  // A necessary condition for match(k, id): the node's own tests (alternatives: not tested here).
  [[gnu::always_inline]] constexpr bool kid_may_match(const pnode& k, node_id id) const {
    return k.src == src_form::any || node_ok(k, id, *a_, numbers_);
  }
  constexpr bool match_in_order(const pnode& p, node_id id) {
    for (int i = 0; i < p.nkids; ++i)
      if (!match(p_.kid_index(p, i), a_->src_ids(id)[i])) return false;
    return true;
  }

  program_view p_;
  const arg_number* numbers_;
  const Arena* a_;
  node_id root_;
  int limit_ = -1;  // choice points the next advance may change; -1 before the first run
  int seen_ = 0;    // choice points met by the current run
  int fixed_ = 0;   // choice points whose option is set
  int npending_ = 0;
  bool done_ = false;
  // left uninitialized (zeroing them costs more than a small match): each entry is written before
  // it is read (slots at the start of a run, choices and checks as they are met)
  struct slot_array {
    node_id v[max_captures];
  };
  static constexpr slot_array no_slots = [] {
    slot_array s{};
    for (node_id& x : s.v) x = no_node;
    return s;
  }();
  slot_array slots_;
  std::uint16_t choice_[max_choice_points];
  std::uint16_t options_[max_choice_points];
  pending_check pending_[max_captures * 4];
};

}  // namespace uopcg::pat::detail
