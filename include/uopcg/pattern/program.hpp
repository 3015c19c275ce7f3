// The compiled form of a pattern (the one matcher that runs it is detail/matcher.hpp).
//
// A pattern type is turned, once, by constant evaluation, into a `program`: a flat array of nodes
// (ops, dtypes, arg/tag tests, capture slot, source form, child indices). One non-template matcher
// walks a program against a node. Per-rule code is then only what must be per rule: the rewriter
// and the predicates (`such_that`, `arg_such_that`); the drivers are shared (detail/dispatch.hpp).
// No matching code is generated per pattern node, so a rule set's compile time does not grow with
// its patterns' nodes.
//
// Choice points (commutative sources, alternatives) are enumerated like an odometer: a run of the
// matcher takes choice k_i at the i-th choice point it meets; the next binding comes from advancing
// the last choice point that has options left and running again from the root. That gives the
// order of nested backtracking (tinygrad calls the rewriter for each binding in that order) with
// no saved bindings: each run starts from empty captures.
//
// Predicates are per-rule code, so the matcher does not call them: it records each node a predicate
// must accept, with the number of choice points met before it. The driver tests them in
// order after a structural match; a rejection backtracks to the last choice point met before the
// rejected node, exactly where a failed test inside the walk would have.
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>
#include <utility>

#include "../core/arena.hpp"
#include "../core/error.hpp"

namespace uopcg::pat {

inline constexpr int max_captures = 16;

/// The distinct capture names of a pattern, in order of first appearance (depth first).
/// A constexpr array rather than a hana::set/map of names: Hana's maps grow super-linearly in
/// compile time (see docs/performance-notes.md).
struct name_list {
  std::string_view items[max_captures]{};
  int count = 0;
  bool overflow = false;
  constexpr int index_of(std::string_view n) const {
    for (int i = 0; i < count; ++i)
      if (items[i] == n) return i;
    return -1;
  }
  /// The slot of name n, added if new; -1 for the empty name or on overflow.
  constexpr int add(std::string_view n) {
    if (n.empty()) return -1;
    if (int i = index_of(n); i >= 0) return i;
    if (count == max_captures) {
      overflow = true;
      return -1;
    }
    items[count] = n;
    return count++;
  }
};

/// A number known when the pattern object is built (`x + 1`): compared with Python equality.
struct arg_number {
  static constexpr bool constrained = true;
  ArgKind kind = ArgKind::int_;
  std::int64_t i = 0;
  double f = 0;
  constexpr bool test(const Arg& a) const { return kind == ArgKind::float_ ? a.py_equal(f) : a.py_equal(i); }
};

namespace detail {

/// How a node's arg (or tag) is tested.
enum class arg_test_kind : std::uint8_t {
  none,
  int_eq,     // a number equal (Python ==) to i
  float_eq,   // a number equal to f
  kind_bits,  // same kind and payload bits (enums)
  invalid,    // the Invalid sentinel
  number,     // equal to the rule's number `index` (a value of the pattern object)
  custom,     // tested by the rule's code (the node's check)
};
struct arg_test {
  arg_test_kind kind = arg_test_kind::none;
  ArgKind arg_kind = ArgKind::none;  // kind_bits
  std::uint8_t index = 0;            // number
  std::uint64_t value = 0;           // int_eq: the int64's bits; float_eq: the double's; kind_bits: the payload
  friend constexpr bool operator==(const arg_test&, const arg_test&) = default;
};

/// How a node's sources are matched.
enum class src_form : std::uint8_t {
  none,     // not inspected
  list,     // exactly these, in order
  prefix,   // at least these, in order
  perm,     // exactly these, in any order
  repeat,   // one or more, each matching the single child
  any,      // not a node test: alternatives (the children), tried in order
};

struct pnode {
  OpSet ops;  // empty = any op
  std::uint32_t dtypes = 0;
  bool any_dtype = true;
  bool one_order = false;  // perm whose children are interchangeable: one order is enough
  src_form src = src_form::none;
  std::int8_t name = -1;   // capture slot
  std::int8_t check = -1;  // index of the rule's predicate check for this node
  std::uint8_t scope = 0;  // 0, or 1 + the index of the alternative this node is in (innermost)
  std::uint8_t nkids = 0;
  std::uint8_t first_kid = 0;
  std::uint8_t op1 = 0xff;  // the op, when ops holds exactly one
  arg_test arg, tag;
};

inline constexpr int max_program_nodes = 255;

/// Sizes of a pattern subtree's program, summed over the pattern's types (one constant per type).
struct subtree_counts {
  int nodes = 0, kids = 0, checks = 0, numbers = 0;
  constexpr subtree_counts operator+(subtree_counts o) const {
    return {nodes + o.nodes, kids + o.kids, checks + o.checks, numbers + o.numbers};
  }
};

/// A node's own part (a plain function: the protos of every pattern type share it).
constexpr pnode own_node(OpSet ops, std::uint32_t dtypes, bool any_dtype, bool one_order, src_form src, std::size_t nkids,
                         arg_test arg, arg_test tag) {
  pnode n;
  n.ops = ops;
  if (ops.size() == 1) n.op1 = static_cast<std::uint8_t>(ops.lo ? std::countr_zero(ops.lo) : 64 + std::countr_zero(ops.hi));
  n.dtypes = dtypes;
  n.any_dtype = any_dtype;
  n.one_order = one_order;
  n.src = src;
  n.nkids = static_cast<std::uint8_t>(nkids);
  n.arg = arg;
  n.tag = tag;
  return n;
}

/// One pattern type's own node as data (a static constant of the type), linked to its children's.
/// A program is built by one non-template walk over these, so no function is instantiated (and then
/// run by the constant evaluator) per pattern type.
struct proto_node {
  pnode node;  // own tests, source form and nkids; slots, check and number indices are set by the walk
  std::string_view name;
  bool check = false;   // the node has a predicate (the rule's code tests it)
  bool number = false;  // the arg is a run-time number (the index is its order in the program)
  const proto_node* const* kids = nullptr;
  // Computed from the above and the children's protos (finish_proto), not kept by each pattern class:
  OpSet root_ops{};          // ops the root can match (empty: any); alternatives: their union
  subtree_counts counts{};   // the subtree's program size, checks and run-time numbers
  OpSet early_reject{};      // child ops a matching node must have (the dispatch's early reject)
};

/// A proto's derived fields, computed once per compiled pattern type rather than in static members
/// of each pattern class (a class template's members are all instantiated with it, used or not).
constexpr proto_node finish_proto(proto_node p) {
  const bool alts = p.node.src == src_form::any;
  p.root_ops = alts ? OpSet{} : p.node.ops;
  p.counts = {1, p.node.nkids, p.check ? 1 : 0, p.number ? 1 : 0};
  bool any_op = false;
  OpSet both;  // alternatives: the child ops that every one requires
  for (int i = 0; i < p.node.nkids; ++i) {
    const proto_node& k = *p.kids[i];
    p.counts = p.counts + k.counts;
    if (alts) {
      any_op = any_op || k.root_ops.empty();
      p.root_ops = p.root_ops | k.root_ops;
      both = i == 0 ? k.early_reject : (both & k.early_reject);
    } else if (k.root_ops.size() == 1) {
      p.early_reject = p.early_reject | k.root_ops;
    }
  }
  if (alts) {
    if (any_op) p.root_ops = {};
    p.early_reject = both;
  }
  return p;
}
/// The proto of pattern type P (upat.hpp specializes it for each kind of pattern).
template <class P>
inline constexpr proto_node proto_of{};

/// Where a pattern writes its program: storage sized exactly from the type's counts.
struct program_builder {
  pnode* nodes;
  std::uint8_t* kids;
  name_list* names;
  int count = 0, nkids = 0, nchecks = 0, nnumbers = 0;
  std::uint8_t scope = 0;
  constexpr int add_node(const pnode& n) {
    nodes[count] = n;
    nodes[count].scope = scope;
    return count++;
  }
  /// Appends the subtree of p (pre-order); returns its root's index.
  constexpr int emit(const proto_node& p) {
    const pnode& n = p.node;
    const bool alts = n.src == src_form::any;
    const int self = add_node(n);
    if (!alts) {
      pnode& s = nodes[self];
      if (p.number) s.arg.index = static_cast<std::uint8_t>(nnumbers++);
      s.name = static_cast<std::int8_t>(names->add(p.name));
      if (p.check) s.check = static_cast<std::int8_t>(nchecks++);
    }
    if (n.src == src_form::none) return self;
    const int at = nkids;
    nkids += n.nkids;
    nodes[self].first_kid = static_cast<std::uint8_t>(at);
    const std::uint8_t outer = scope;
    for (int i = 0; i < n.nkids; ++i) {
      // each alternative is a scope of its own (named by its root's index + 1)
      if (alts) scope = static_cast<std::uint8_t>(count + 1);
      kids[at + i] = static_cast<std::uint8_t>(emit(*p.kids[i]));
    }
    scope = outer;
    return self;
  }
};

/// A pattern's program as views (what the matcher and the compile-time checks read).
struct program_view {
  const pnode* nodes = nullptr;
  const std::uint8_t* kids = nullptr;
  int count = 0;
  int nchecks = 0;
  int nnumbers = 0;
  constexpr const pnode& kid(const pnode& n, int i) const { return nodes[kids[n.first_kid + i]]; }
  constexpr int kid_index(const pnode& n, int i) const { return kids[n.first_kid + i]; }
};

// A pattern's program, hashed: patterns of one type hash equal. Rule sets compare these to find
// duplicate rules, not the programs' addresses: g++ does not fold a comparison of two objects'
// addresses in a constant expression under -fno-delete-null-pointer-checks (which -fsanitize=null
// implies), and every rule set then failed to compile there.
constexpr std::uint64_t program_hash(program_view v, const name_list& names) {
  std::uint64_t h = 0;
  auto mix = [&h](std::uint64_t x) { h = Arg::mix(h ^ x); };
  auto mix_test = [&mix](const arg_test& t) {
    mix(static_cast<std::uint64_t>(t.kind) | static_cast<std::uint64_t>(t.arg_kind) << 8 | std::uint64_t{t.index} << 16);
    mix(t.value);
  };
  mix(static_cast<std::uint64_t>(v.count));
  for (int i = 0; i < v.count; ++i) {
    const pnode& n = v.nodes[i];
    mix(n.ops.lo);
    mix(n.ops.hi);
    mix(n.dtypes);
    mix(static_cast<std::uint64_t>(n.any_dtype) | static_cast<std::uint64_t>(n.one_order) << 1 |
        static_cast<std::uint64_t>(n.src) << 8 | static_cast<std::uint64_t>(static_cast<std::uint8_t>(n.name)) << 16 |
        static_cast<std::uint64_t>(static_cast<std::uint8_t>(n.check)) << 24 | std::uint64_t{n.scope} << 32 |
        std::uint64_t{n.nkids} << 40);
    mix_test(n.arg);
    mix_test(n.tag);
    if (n.src != src_form::none)
      for (int k = 0; k < n.nkids; ++k) mix(v.kid_index(n, k));
  }
  for (int i = 0; i < names.count; ++i) {
    mix(names.items[i].size());
    for (char c : names.items[i]) mix(static_cast<unsigned char>(c));
  }
  return h;
}

template <int N, int K>
struct program {
  pnode nodes[N]{};
  std::uint8_t kids[K > 0 ? K : 1]{};
  int nchecks = 0, nnumbers = 0;
  name_list names;
  /// 0, or the number of source orders (1 or 2) when the pattern is a node whose sources are leaves
  /// (no sources of their own, no alternatives), in a list, a prefix or a 2-source commutative list:
  /// such patterns (most rules) are matched by the rule's driver directly (shallow_bind).
  int shallow_orders = 0;
  std::uint64_t hash = 0;  // program_hash
  constexpr program_view view() const { return {nodes, kids, N, nchecks, nnumbers}; }
};

/// 0, 1 or 2: program::shallow_orders of a program whose root is nodes[0].
constexpr int shallow_orders_of(const pnode* nodes, const std::uint8_t* kids) {
  const pnode& r = nodes[0];
  bool shallow = r.src == src_form::none || r.src == src_form::list || r.src == src_form::prefix ||
                 (r.src == src_form::perm && r.nkids <= 2);
  for (int i = 0; i < r.nkids && shallow; ++i) shallow = nodes[kids[r.first_kid + i]].src == src_form::none;
  return !shallow ? 0 : (r.src == src_form::perm && r.nkids == 2 && !r.one_order) ? 2 : 1;
}

// Built in place at its exact size (from the proto's counts): the constant evaluator is slow, and a
// transient builder copied to size would double its work per pattern type.
template <class P>
constexpr auto build_program() {
  constexpr subtree_counts c = proto_of<P>.counts;
  static_assert(c.nodes <= max_program_nodes && c.kids <= 255, "pattern: more than 255 nodes in one pattern");
  static_assert(c.checks <= 64, "pattern: more than 64 predicates in one pattern");
  program<c.nodes, c.kids> p;
  program_builder b{p.nodes, p.kids, &p.names};
  b.emit(proto_of<P>);
  p.nchecks = b.nchecks;
  p.nnumbers = b.nnumbers;
  p.shallow_orders = shallow_orders_of(p.nodes, p.kids);
  p.hash = program_hash(p.view(), p.names);
  return p;
}
}  // namespace detail

/// The compiled program of pattern type P (node 0 is the root).
template <class P>
inline constexpr auto program_of = detail::build_program<P>();

}  // namespace uopcg::pat
