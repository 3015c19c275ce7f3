// Patterns as types: one node of a pattern is `upat<Ops, DTypes, Arg, Tag, Src, Name, Pred>`; what
// can be decided at compile time (op set, dtype set, source form, capture name) lives in the type,
// values that cannot (a constant's value, a predicate's state) live in the object. Child patterns
// are held in a boost::hana::basic_tuple. Matching is generated code in continuation-passing style:
// `match(node, state, k)` calls `k()` for every way the node matches (commutative source lists and
// alternatives backtrack), which gives tinygrad's semantics of calling the rewriter for each
// binding in order until one rewrites.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/hana/at.hpp>
#include <boost/hana/basic_tuple.hpp>
#include <boost/hana/size.hpp>

#include "../core/arena.hpp"
#include "fixed_string.hpp"

namespace uopcg::pat {

namespace hana = boost::hana;

/// A set of dtypes as a bit mask (structural: usable as a template argument).
struct DTypeSet {
  std::uint32_t bits = all_bits;
  static constexpr std::uint32_t all_bits = (1u << dtype_count) - 1;
  constexpr DTypeSet() = default;
  constexpr explicit DTypeSet(std::uint32_t b) : bits(b) {}
  constexpr DTypeSet(std::initializer_list<DType> ds) : bits(0) {
    for (DType d : ds) bits |= 1u << static_cast<int>(d);
  }
  constexpr bool contains(DType d) const { return (bits >> static_cast<int>(d)) & 1; }
  constexpr bool all() const { return bits == all_bits; }
  constexpr bool subset_of(DTypeSet o) const { return (bits & ~o.bits) == 0; }
  constexpr DTypeSet operator&(DTypeSet o) const { return DTypeSet(bits & o.bits); }
  constexpr DTypeSet operator|(DTypeSet o) const { return DTypeSet(bits | o.bits); }
  friend constexpr bool operator==(DTypeSet, DTypeSet) = default;
};
inline constexpr DTypeSet any_dtype{};
inline constexpr DTypeSet ints{DType::int8, DType::uint8, DType::int16, DType::uint16, DType::int32,
                               DType::uint32, DType::int64, DType::uint64, DType::weakint};
inline constexpr DTypeSet floats{DType::float16, DType::bfloat16, DType::float32, DType::float64,
                                 DType::weakfloat, DType::fp8e4m3, DType::fp8e5m2, DType::fp8e4m3fnuz,
                                 DType::fp8e5m2fnuz};

// --- capture names ------------------------------------------------------------------------------------

inline constexpr int max_captures = 16;

/// The distinct capture names of a pattern, in order of first appearance (depth first).
/// A constexpr array rather than a hana::set/map of names: Hana's maps grow super-linearly in
/// compile time (6.8 s for 256 keys on g++ 12, style-anchors.md §3.2), while this list is computed
/// once per pattern type by a short constant evaluation.
struct name_list {
  std::string_view items[max_captures]{};
  int count = 0;
  bool overflow = false;
  constexpr int index_of(std::string_view n) const {
    for (int i = 0; i < count; ++i)
      if (items[i] == n) return i;
    return -1;
  }
  constexpr void add(std::string_view n) {
    if (n.empty() || index_of(n) >= 0) return;
    if (count == max_captures) {
      overflow = true;
      return;
    }
    items[count++] = n;
  }
};

/// (name, ops, dtypes) of every named node outside alternatives: a name bound twice must be able to
/// bind one node that satisfies both.
struct binding_list {
  struct entry {
    std::string_view name;
    OpSet ops;  // empty = any op
    DTypeSet dtypes;
  };
  entry items[64]{};
  int count = 0;
  constexpr void add(std::string_view n, OpSet o, DTypeSet d) {
    if (!n.empty() && count < 64) items[count++] = {n, o, d};
  }
  /// First name bound to patterns that no single node can satisfy, or "" if none.
  constexpr std::string_view conflict() const {
    for (int i = 0; i < count; ++i)
      for (int j = i + 1; j < count; ++j) {
        if (items[i].name != items[j].name) continue;
        bool ops_ok = items[i].ops.empty() || items[j].ops.empty() || !(items[i].ops & items[j].ops).empty();
        bool dt_ok = (items[i].dtypes & items[j].dtypes).bits != 0;
        if (!ops_ok || !dt_ok) return items[i].name;
      }
    return {};
  }
};

// --- the match state, which rewriters receive -----------------------------------------------------

/// The capture names of a pattern as a structural value: the template argument of `match`. Keyed by
/// names rather than by the pattern type, the matching functions (templated on the match type) no
/// longer spell the whole pattern a second time in their names, and patterns that bind the same
/// names share one match type (bench/rule_compile_cost.sh: 35% fewer symbols in a 200-rule file).
struct capture_names {
  static constexpr int max_chars = 160;
  char chars[max_chars]{};  // the names back to back, each ended by '\0'
  int count = 0;
  bool overflow = false;
  constexpr capture_names() = default;
  constexpr explicit capture_names(const name_list& l) : count(l.count), overflow(l.overflow) {
    int at = 0;
    for (int i = 0; i < l.count; ++i) {
      if (at + static_cast<int>(l.items[i].size()) + 1 > max_chars) {
        overflow = true;
        count = i;
        break;
      }
      for (char c : l.items[i]) chars[at++] = c;
      chars[at++] = '\0';
    }
  }
  constexpr int index_of(std::string_view n) const {
    int at = 0;
    for (int i = 0; i < count; ++i) {
      int len = 0;
      while (chars[at + len] != '\0') ++len;
      if (std::string_view(chars + at, static_cast<std::size_t>(len)) == n) return i;
      at += len + 1;
    }
    return -1;
  }
};

template <class P>
struct names_of {
  static constexpr name_list value = [] {
    name_list l;
    P::collect_names(l);
    return l;
  }();
  static constexpr capture_names structural{value};
};

/// The bindings of one match: a fixed-size array of node ids, one per capture name.
template <capture_names CN>
class match {
 public:
  static constexpr const capture_names& names = CN;
  static_assert(!names.overflow, "a pattern may bind at most 16 distinct capture names, of at most 160 characters in all");
  static constexpr int size = names.count;

  constexpr match(Arena* a, node_id root) : arena_(a), root_(root) {
    for (auto& id : ids_) id = no_node;
  }

  static constexpr int index_of(std::string_view n) { return names.index_of(n); }

  /// The node bound to capture `N`.
  template <fixed_string N>
  constexpr UOp get() const {
    constexpr int i = names.index_of(N.view());
    static_assert(i >= 0, "the rewriter asks for a capture name that the rule's pattern does not bind");
    return UOp(arena_, ids_[i]);
  }
  /// The node bound to the capture of pattern variable `v` (m[x] for `constexpr auto x = var<"x">`).
  template <class Q>
    requires(!Q::name_value.empty())
  constexpr UOp operator[](const Q&) const {
    return get<Q::name_value>();
  }
  /// Whether capture `N` was bound (names inside an alternative may stay unbound).
  template <fixed_string N>
  constexpr bool has() const {
    constexpr int i = names.index_of(N.view());
    static_assert(i >= 0, "the rewriter asks for a capture name that the rule's pattern does not bind");
    return ids_[i] != no_node;
  }
  /// The node the rule was tried on.
  constexpr UOp root() const { return UOp(arena_, root_); }
  constexpr Arena& arena() const { return *arena_; }

  // used by the generated matching code
  constexpr node_id& slot(int i) { return ids_[i]; }
  struct saved_state {
    node_id ids[size > 0 ? size : 1];
  };
  constexpr saved_state save() const {
    saved_state st{};
    for (int i = 0; i < (size > 0 ? size : 1); ++i) st.ids[i] = ids_[i];
    return st;
  }
  constexpr void restore(const saved_state& st) {
    for (int i = 0; i < (size > 0 ? size : 1); ++i) ids_[i] = st.ids[i];
  }

 private:
  Arena* arena_;
  node_id root_;
  node_id ids_[size > 0 ? size : 1];
};

/// The match type of pattern P.
template <class P>
using match_for = match<names_of<P>::structural>;

/// get<"x">(m): the capture named x (no `template` keyword needed inside generic rewriters).
template <fixed_string N, class M>
constexpr UOp get(const M& m) {
  return m.template get<N>();
}

// --- arg and tag constraints ------------------------------------------------------------------------

/// No constraint.
struct arg_any {
  static constexpr bool constrained = false;
  constexpr bool test(const Arg&) const { return true; }
};
/// Equal (Python ==) to a value given at compile time: const_<0>, arg<AxisType::REDUCE>, ...
template <auto V>
struct arg_const {
  static constexpr bool constrained = true;
  static constexpr auto value = V;
  static constexpr Arg as_arg() {
    if constexpr (std::is_same_v<decltype(V), bool>) return Arg::boolean(V);
    else if constexpr (requires { V.view(); }) return Arg::string(V.view());
    else return Arg(V);
  }
  constexpr bool test(const Arg& a) const {
    // numbers and enums compare without building an Arg (this runs on every attempt)
    using T = decltype(V);
    if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T>) {
      if (!a.is_number()) return false;
      if (a.is_float()) return a.as_float() == static_cast<double>(V);
      if (a.kind() == ArgKind::uint_) return V >= 0 && a.as_uint() == static_cast<std::uint64_t>(V);
      return a.as_int() == static_cast<std::int64_t>(V);
    } else if constexpr (std::is_floating_point_v<T>) {
      return a.is_number() && a.as_float() == static_cast<double>(V);
    } else if constexpr (std::is_enum_v<T>) {
      Arg ref = as_arg();
      return a.kind() == ref.kind() && a.bits() == ref.bits();
    } else {
      return a.py_equal(as_arg());
    }
  }
};
/// Equal (Python ==) to a number known only when the pattern object is built (`x + 1`).
struct arg_number {
  static constexpr bool constrained = true;
  ArgKind kind = ArgKind::int_;
  std::int64_t i = 0;
  double f = 0;
  constexpr bool test(const Arg& a) const {
    if (!a.is_number()) return false;
    if (kind == ArgKind::float_ || a.is_float()) return a.as_float() == (kind == ArgKind::float_ ? f : static_cast<double>(i));
    if (a.kind() == ArgKind::uint_) return false;
    return a.as_int() == i;
  }
};
/// The Invalid sentinel.
struct arg_invalid {
  static constexpr bool constrained = true;
  constexpr bool test(const Arg& a) const { return a.is_invalid(); }
};
/// A predicate on the arg.
template <class F>
struct arg_if {
  static constexpr bool constrained = true;
  F f;
  constexpr bool test(const Arg& a) const { return f(a); }
};

/// No node predicate.
struct no_pred {
  static constexpr bool present = false;
};
template <class F>
struct node_pred {
  static constexpr bool present = true;
  F f;
};

// --- source forms -------------------------------------------------------------------------------------

/// Children are not inspected.
struct src_none {
  static constexpr int kind = 0;
};
/// Exactly these children, in order.
template <class... P>
struct src_list {
  static constexpr int kind = 1;
  using children = hana::basic_tuple<P...>;
  hana::basic_tuple<P...> c;
};
/// At least these children, in order; extra children are ignored (allow_any_len).
template <class... P>
struct src_prefix {
  static constexpr int kind = 2;
  using children = hana::basic_tuple<P...>;
  hana::basic_tuple<P...> c;
};
/// Exactly these children in any order (commutative ops).
template <class... P>
struct src_perm {
  static constexpr int kind = 3;
  using children = hana::basic_tuple<P...>;
  hana::basic_tuple<P...> c;
};
/// Any number of children, every one matching P.
template <class P>
struct src_repeat {
  static constexpr int kind = 4;
  using child = P;
  P p;
};

template <class T>
inline constexpr bool is_pattern_v = requires { T::is_pattern; };

namespace detail {
template <class T>
struct src_children;
template <>
struct src_children<src_none> {
  using types = void;
};

// Source i of u without the range check of UOp::src: the matchers check the source count first.
constexpr UOp src_at(UOp u, std::size_t i) { return UOp(&u.arena(), u.arena().src_ids(u.id())[i]); }

// Chain the children of a positional form: child I matches source order[I].
template <std::size_t I, class Tuple, class S, class K>
constexpr bool chain(const Tuple& c, UOp u, const std::size_t* order, S& s, K& k) {
  constexpr std::size_t n = decltype(hana::size(std::declval<Tuple>()))::value;
  if constexpr (I == n) {
    return k();
  } else {
    UOp child = src_at(u, order ? order[I] : I);
    return hana::at_c<I>(c).match(child, s, [&]() { return chain<I + 1>(c, u, order, s, k); });
  }
}

template <class P, class S, class K>
constexpr bool match_repeat(const P& p, UOp u, std::size_t i, S& s, K& k) {
  if (i == u.nsrc()) return k();
  return p.match(src_at(u, i), s, [&]() { return match_repeat(p, u, i + 1, s, k); });
}

template <class... P>
constexpr bool all_same_empty() {
  if constexpr (sizeof...(P) < 2) return true;
  else {
    using first = std::tuple_element_t<0, std::tuple<P...>>;
    return (std::is_same_v<first, P> && ...) && std::is_empty_v<first>;
  }
}

template <class Src>
constexpr OpSet early_reject_of() {
  if constexpr (Src::kind == 1 || Src::kind == 2 || Src::kind == 3) {
    OpSet req;
    [&]<class... P>(hana::basic_tuple<P...>*) {
      ((P::root_ops.size() == 1 ? (void)(req = req | P::root_ops) : (void)0), ...);
    }(static_cast<typename Src::children*>(nullptr));
    return req;
  } else if constexpr (Src::kind == 4) {
    using P = typename Src::child;
    return P::root_ops.size() == 1 ? P::root_ops : OpSet{};
  } else {
    return OpSet{};
  }
}
}  // namespace detail

// --- the pattern node -----------------------------------------------------------------------------------

template <OpSet O, DTypeSet D, class A, class T, class S, fixed_string N, class Pr>
struct upat {
  static constexpr bool is_pattern = true;
  static constexpr OpSet root_ops = O;  // empty = any op
  static constexpr DTypeSet root_dtypes = D;
  static constexpr auto name_value = N;
  using arg_type = A;
  using tag_type = T;
  using src_type = S;
  using pred_type = Pr;
  static constexpr OpSet early_reject = detail::early_reject_of<S>();

  [[no_unique_address]] A arg_spec{};
  [[no_unique_address]] T tag_spec{};
  [[no_unique_address]] S src_spec{};
  [[no_unique_address]] Pr pred{};

  // --- DSL: refine this pattern ---------------------------------------------------------------------
  /// The same pattern capturing the matched node under `N2`.
  template <fixed_string N2>
  constexpr upat<O, D, A, T, S, N2, Pr> named() const {
    return {arg_spec, tag_spec, src_spec, pred};
  }
  /// The same pattern, stateless form: `op<Ops::AFTER>.as<"after">`.
  template <fixed_string N2>
    requires std::is_empty_v<A> && std::is_empty_v<T> && std::is_empty_v<S> && std::is_empty_v<Pr>
  static constexpr upat<O, D, A, T, S, N2, Pr> as{};
  /// Restrict the dtype.
  template <DType... Ds>
  constexpr upat<O, DTypeSet{Ds...}, A, T, S, N, Pr> dtype() const {
    return {arg_spec, tag_spec, src_spec, pred};
  }
  template <DTypeSet Ds>
  constexpr upat<O, Ds, A, T, S, N, Pr> dtypes() const {
    return {arg_spec, tag_spec, src_spec, pred};
  }
  /// Require arg == V (Python equality).
  template <auto V>
  constexpr upat<O, D, arg_const<V>, T, S, N, Pr> arg() const {
    return {{}, tag_spec, src_spec, pred};
  }
  /// Require pred(arg).
  template <class F>
  constexpr upat<O, D, arg_if<F>, T, S, N, Pr> arg_where(F f) const {
    return {{f}, tag_spec, src_spec, pred};
  }
  /// Require tag == V.
  template <auto V>
  constexpr upat<O, D, A, arg_const<V>, S, N, Pr> tag() const {
    return {arg_spec, {}, src_spec, pred};
  }
  /// Require pred(node).
  template <class F>
  constexpr upat<O, D, A, T, S, N, node_pred<F>> where(F f) const {
    return {arg_spec, tag_spec, src_spec, {f}};
  }
  /// Exactly these sources, in order.
  template <class... P>
    requires(is_pattern_v<P> && ...)
  constexpr upat<O, D, A, T, src_list<P...>, N, Pr> operator()(P... p) const {
    return {arg_spec, tag_spec, {hana::make_basic_tuple(p...)}, pred};
  }
  /// At least these sources, in order (tinygrad's allow_any_len).
  template <class... P>
  constexpr upat<O, D, A, T, src_prefix<P...>, N, Pr> any_len(P... p) const {
    return {arg_spec, tag_spec, {hana::make_basic_tuple(p...)}, pred};
  }
  /// Exactly these sources in any order (tinygrad's list form).
  template <class... P>
  constexpr upat<O, D, A, T, src_perm<P...>, N, Pr> commutative(P... p) const {
    return {arg_spec, tag_spec, {hana::make_basic_tuple(p...)}, pred};
  }
  /// Any number of sources, each matching p.
  template <class P>
  constexpr upat<O, D, A, T, src_repeat<P>, N, Pr> repeat(P p) const {
    return {arg_spec, tag_spec, {p}, pred};
  }

  // --- matching ----------------------------------------------------------------------------------------
  // A subtree without choice points (commutative sources, alternatives) matches at most one way:
  // it is matched by plain code (match_det) and the continuation is called once. Only choice
  // points use continuations, so the generated code stays small (compile time is per rule).
  static constexpr bool deterministic = [] {
    if constexpr (S::kind == 0) return true;
    else if constexpr (S::kind == 3) return false;
    else if constexpr (S::kind == 4) return S::child::deterministic;
    else return []<class... P>(hana::basic_tuple<P...>*) { return (P::deterministic && ...); }(static_cast<typename S::children*>(nullptr));
  }();

  template <class St>
  constexpr bool match_node(UOp u, St& s) const {
    if constexpr (!O.empty())
      if (!O.contains(u.op())) return false;
    if constexpr (!D.all())
      if (!D.contains(u.dtype())) return false;
    if constexpr (A::constrained)
      if (!arg_spec.test(u.arg())) return false;
    if constexpr (T::constrained)
      if (!tag_spec.test(u.tag())) return false;
    if constexpr (Pr::present)
      if (!pred.f(u)) return false;
    if constexpr (!N.empty()) {
      constexpr int i = St::index_of(N.view());
      node_id& slot = s.slot(i);
      if (slot != no_node) return slot == u.id();
      slot = u.id();
    }
    return true;
  }

  /// Deterministic subtrees: matches or not; bindings are left behind on failure (the caller
  /// restores its saved state).
  template <class St>
  constexpr bool match_det(UOp u, St& s) const {
    if (!match_node(u, s)) return false;
    if constexpr (S::kind == 0) {
      return true;
    } else if constexpr (S::kind == 4) {
      if (u.nsrc() == 0) return false;  // tinygrad's early reject never lets a repeat match no source
      for (UOp c : u.srcs())
        if (!src_spec.p.match_det(c, s)) return false;
      return true;
    } else {
      constexpr std::size_t n = decltype(hana::size(std::declval<typename S::children>()))::value;
      if constexpr (S::kind == 1) {
        if (u.nsrc() != n) return false;
      } else {
        if (u.nsrc() < n) return false;
      }
      return children_det(u, nullptr, s, std::make_index_sequence<n>{});
    }
  }

  template <class St, std::size_t... I>
  constexpr bool children_det(UOp u, const std::size_t* order, St& s, std::index_sequence<I...>) const {
    return (hana::at_c<I>(src_spec.c).match_det(detail::src_at(u, order ? order[I] : I), s) && ...);
  }

  template <class St, class K>
  constexpr bool match(UOp u, St& s, K&& k) const {
    auto saved = s.save();
    if constexpr (deterministic) {
      if (match_det(u, s) && k()) return true;
    } else {
      if (match_node(u, s) && match_src(u, s, k)) return true;
    }
    s.restore(saved);
    return false;
  }

  // Sources of a node with choice points below it.
  template <class St, class K>
  constexpr bool match_src(UOp u, St& s, K& k) const {
    if constexpr (S::kind == 1 || S::kind == 2) {
      constexpr std::size_t n = decltype(hana::size(std::declval<typename S::children>()))::value;
      if constexpr (S::kind == 1) {
        if (u.nsrc() != n) return false;
      } else {
        if (u.nsrc() < n) return false;
      }
      return detail::chain<0>(src_spec.c, u, nullptr, s, k);
    } else if constexpr (S::kind == 3) {
      constexpr std::size_t n = decltype(hana::size(std::declval<typename S::children>()))::value;
      if (u.nsrc() != n) return false;
      std::size_t order[n > 0 ? n : 1]{};
      for (std::size_t i = 0; i < n; ++i) order[i] = i;
      constexpr bool one = []<class... P>(hana::basic_tuple<P...>*) {
        return detail::all_same_empty<P...>();
      }(static_cast<typename S::children*>(nullptr));
      constexpr bool det_children = []<class... P>(hana::basic_tuple<P...>*) {
        return (P::deterministic && ...);
      }(static_cast<typename S::children*>(nullptr));
      do {
        if constexpr (det_children) {
          auto saved = s.save();
          if (children_det(u, order, s, std::make_index_sequence<n>{}) && k()) return true;
          s.restore(saved);
        } else {
          if (detail::chain<0>(src_spec.c, u, order, s, k)) return true;
        }
        if constexpr (one) break;
      } while (std::next_permutation(order, order + n));
      return false;
    } else {
      // a repeat whose child has choice points: each source picks its first match
      if (u.nsrc() == 0) return false;
      return detail::match_repeat(src_spec.p, u, 0, s, k);
    }
  }

  // --- compile-time facts used by the rule checks ------------------------------------------------
  static constexpr void collect_names(name_list& l) {
    l.add(N.view());
    for_each_child_type([&]<class C>() { C::collect_names(l); });
  }
  static constexpr void collect_bindings(binding_list& l) {
    l.add(N.view(), O, D);
    for_each_child_type([&]<class C>() { C::collect_bindings(l); });
  }
  /// False when some node of the pattern lists a source count none of its ops can have.
  static constexpr bool src_counts_possible() {
    bool ok = true;
    if constexpr (S::kind == 1 || S::kind == 2 || S::kind == 3) {
      constexpr int n = static_cast<int>(decltype(hana::size(std::declval<typename S::children>()))::value);
      if constexpr (!O.empty()) {
        bool any = false;
        O.for_each([&](Ops op) {
          SrcCount sc = src_count(op);
          any |= S::kind == 2 ? sc.allows_at_least(n) : sc.allows(n);
        });
        ok = any;
      }
    }
    for_each_child_type([&]<class C>() { ok = ok && C::src_counts_possible(); });
    return ok;
  }
  /// Calls f.template operator()<Child>() for each child pattern type.
  template <class F>
  static constexpr void for_each_child_type(F&& f) {
    if constexpr (S::kind == 1 || S::kind == 2 || S::kind == 3) {
      [&]<class... P>(hana::basic_tuple<P...>*) {
        (f.template operator()<P>(), ...);
      }(static_cast<typename S::children*>(nullptr));
    } else if constexpr (S::kind == 4) {
      f.template operator()<typename S::child>();
    }
  }
};

/// Alternatives (tinygrad's UPat.any): every alternative is tried, in order.
template <class... P>
struct any_pat {
  static constexpr bool is_pattern = true;
  static constexpr OpSet root_ops = [] {
    bool any = ((P::root_ops.empty()) || ...);
    return any ? OpSet{} : (P::root_ops | ...);
  }();
  static constexpr DTypeSet root_dtypes{(P::root_dtypes.bits | ...)};
  static constexpr auto name_value = unnamed;
  static constexpr OpSet early_reject = (P::early_reject & ...);
  static constexpr bool deterministic = false;
  hana::basic_tuple<P...> alts;

  template <class St, class K>
  constexpr bool match(UOp u, St& s, K&& k) const {
    return try_alt<0>(u, s, k);
  }
  template <std::size_t I, class St, class K>
  constexpr bool try_alt(UOp u, St& s, K& k) const {
    if constexpr (I == sizeof...(P)) return false;
    else return hana::at_c<I>(alts).match(u, s, k) || try_alt<I + 1>(u, s, k);
  }
  static constexpr void collect_names(name_list& l) { (P::collect_names(l), ...); }
  // Alternatives exclude each other: each is checked on its own, not against its siblings.
  static constexpr void collect_bindings(binding_list&) {}
  static constexpr bool alternatives_consistent() {
    return ([] {
      binding_list b;
      P::collect_bindings(b);
      return b.conflict().empty();
    }() && ...);
  }
  static constexpr bool src_counts_possible() { return (P::src_counts_possible() && ...); }
  template <class F>
  static constexpr void for_each_child_type(F&& f) {
    (f.template operator()<P>(), ...);
  }
};

}  // namespace uopcg::pat
