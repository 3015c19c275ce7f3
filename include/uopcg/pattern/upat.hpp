// Patterns as types: one node of a pattern is `upat<Ops, DTypes, Arg, Tag, Src, Name, Pred>`; what
// can be decided at compile time (op set, dtype set, source form, capture name) lives in the type,
// values that cannot (a number given at run time, a predicate's state) live in the object. Child
// patterns are held in a detail::pack (pack.hpp: a Hana sequence stored as an aggregate). A pattern type is not matched by code of its own:
// its `proto` constants compile it to a program (program.hpp) that one matcher runs; only the predicates
// (`such_that`, `arg_such_that`) and run-time numbers are reached through the typed object.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/arena.hpp"
#include "fixed_string.hpp"
#include "pack.hpp"
#include "program.hpp"

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

// --- pattern traits, capture names and the match that rewriters receive ---------------------------

/// The ops (empty: any), dtypes and capture name of pattern P's root; specialized for the pattern
/// types below.
template <class P>
inline constexpr OpSet root_ops_v{};
template <class P>
inline constexpr DTypeSet root_dtypes_v{};
template <class P>
inline constexpr auto name_v = unnamed;

/// The capture names of a pattern as a structural value: the template argument of `match`. Keyed by
/// names rather than by the pattern type, so the functions templated on the match type do not spell
/// the pattern in their symbols, and patterns that bind the same names share one match type.
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
  static constexpr const name_list& value = program_of<P>.names;
  static constexpr capture_names structural{value};
};

namespace detail {
/// What a match is: the node the rule was tried on and the driver's capture slots (valid while the
/// rewriter runs). A public base, so that a match is an aggregate: a rule's thunk builds its match
/// without a call, and every call a per-rule function makes is compiled once per rule.
struct match_state {
  Arena* arena_;
  node_id root_;
  const node_id* ids_;
};
}  // namespace detail

/// The bindings of one match, one node per capture name. Valid during the rewriter's call (it
/// reads the matcher's slots): keep the UOps it returns, not the match.
template <capture_names CN>
class match : public detail::match_state {
 public:
  static constexpr const capture_names& names = CN;
  static_assert(!names.overflow, "a pattern may bind at most 16 distinct capture names, of at most 160 characters in all");
  static constexpr int size = names.count;

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
    requires(!name_v<Q>.empty())
  constexpr UOp operator[](const Q&) const {
    return get<name_v<Q>>();
  }
  /// The node bound to the I-th capture, in the pattern's order: `auto [x, c] = m;`.
  template <std::size_t I>
  constexpr UOp get() const {
    static_assert(I < static_cast<std::size_t>(size), "a structured binding of a match names more captures than the pattern binds");
    return UOp(arena_, ids_[I]);
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
};

}  // namespace uopcg::pat

// A match is tuple-like: one element per capture name, in the pattern's order.
template <uopcg::pat::capture_names CN>
struct std::tuple_size<uopcg::pat::match<CN>> : std::integral_constant<std::size_t, static_cast<std::size_t>(CN.count)> {};
template <std::size_t I, uopcg::pat::capture_names CN>
struct std::tuple_element<I, uopcg::pat::match<CN>> {
  using type = uopcg::UOp;
};

namespace uopcg::pat {

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
/// A floating-point value as a template argument, held as its bits: clang 14 takes no `double`
/// there. `const_<fval(-INFINITY)>` works on every compiler; `1.5_c` builds one.
struct float_value {
  std::uint64_t bits;
  constexpr double get() const { return std::bit_cast<double>(bits); }
};
constexpr float_value fval(double v) { return {std::bit_cast<std::uint64_t>(v)}; }

namespace detail {
// The value a compile-time constant stands for (a float_value is its double).
template <class T>
constexpr auto plain_const(T v) {
  if constexpr (std::is_same_v<T, float_value>) return v.get();
  else return v;
}
}  // namespace detail

/// Equal (Python ==) to a value given at compile time: const_<0>, const_<fval(0.5)>,
/// arg<AxisType::REDUCE>, ...
template <auto V0>
struct arg_const {
  static constexpr bool constrained = true;
  static constexpr auto value = detail::plain_const(V0);
  static constexpr Arg as_arg() {
    using T = std::remove_cv_t<decltype(value)>;
    if constexpr (std::is_same_v<T, bool>) return Arg::boolean(value);
    else if constexpr (requires { value.view(); }) return Arg::string(value.view());
    else return Arg(value);
  }
  constexpr bool test(const Arg& a) const {
    // numbers and enums compare without building an Arg (this runs on every attempt)
    using T = std::remove_cv_t<decltype(value)>;
    if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
      if (value > static_cast<T>(INT64_MAX)) return a.kind() == ArgKind::uint_ && a.as_uint() == value;
      return a.py_equal(static_cast<std::int64_t>(value));
    } else if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T>) {
      return a.py_equal(static_cast<std::int64_t>(value));
    } else if constexpr (std::is_floating_point_v<T>) {
      return a.py_equal(static_cast<double>(value));
    } else if constexpr (std::is_enum_v<T>) {
      Arg ref = as_arg();
      return a.kind() == ref.kind() && a.bits() == ref.bits();
    } else {
      return a.py_equal(as_arg());
    }
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

namespace detail {
// Children that are one stateless pattern type (any order of them binds the same).
template <class... P>
inline constexpr bool all_same_empty_v = true;
template <class First, class... P>
inline constexpr bool all_same_empty_v<First, P...> = (std::is_same_v<First, P> && ...) && std::is_empty_v<First>;
}  // namespace detail

// --- source forms -------------------------------------------------------------------------------------

// The source forms hold the child patterns and say how they are matched; what a program needs of
// them (sizes, required child ops) is computed from the protos, not kept as members here: every
// member of a class template is instantiated with each pattern class, used or not.

/// Children are not inspected.
struct src_none {
  static constexpr int kind = 0;
};
/// Exactly these children, in order.
template <class... P>
struct src_list {
  static constexpr int kind = 1;
  using children = detail::pack<P...>;
  children c;
};
/// At least these children, in order; extra children are ignored (allow_any_len).
template <class... P>
struct src_prefix {
  static constexpr int kind = 2;
  using children = detail::pack<P...>;
  children c;
};
/// Exactly these children in any order (commutative ops).
template <class... P>
struct src_perm {
  static constexpr int kind = 3;
  static constexpr int arity = static_cast<int>(sizeof...(P));
  /// Stateless identical children: one order gives every binding.
  static constexpr bool interchangeable = sizeof...(P) < 2 || detail::all_same_empty_v<P...>;
  static_assert(sizeof...(P) <= 8, "pattern: a commutative source list has at most 8 entries");
  using children = detail::pack<P...>;
  children c;
};
/// Any number of children, every one matching P.
template <class P>
struct src_repeat {
  static constexpr int kind = 4;
  using child = P;
  P p;
};

/// Whether T is a pattern type (upat or any_pat).
template <class T>
struct is_pattern : std::false_type {};
template <class T>
inline constexpr bool is_pattern_v = is_pattern<T>::value;
/// A node that only a rule's right-hand side can hold (rhs.hpp: built, never matched), such as fold().
template <class T>
concept rhs_node = requires { typename std::remove_cvref_t<T>::rhs_node_tag; };

namespace detail {

// How the program tests an arg (or tag) constraint A: as data when it can, else by the rule's code.
// Variable templates rather than static members: clang instantiates a class's static constexpr
// members with the class, and most pattern classes are never compiled to a program.
template <class A>
inline constexpr bool arg_custom = A::constrained;  // arg_if: a predicate
template <>
inline constexpr bool arg_custom<arg_invalid> = false;
template <>
inline constexpr bool arg_custom<arg_number> = false;
template <auto V>
inline constexpr bool arg_custom<arg_const<V>> =
    !(std::is_integral_v<decltype(detail::plain_const(V))> || std::is_floating_point_v<decltype(detail::plain_const(V))> ||
      std::is_enum_v<decltype(detail::plain_const(V))>);

// The test of a constant; one function per value type (not per value).
template <class T>
constexpr arg_test const_arg_test(T v) {
  arg_test t;
  if constexpr (std::is_integral_v<T>) {  // bool included: Python's True == 1
    t.kind = arg_test_kind::int_eq;
    t.value = static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    t.kind = arg_test_kind::float_eq;
    t.value = std::bit_cast<std::uint64_t>(static_cast<double>(v));
  } else if constexpr (std::is_enum_v<T>) {
    Arg ref(v);
    t.kind = arg_test_kind::kind_bits;
    t.arg_kind = ref.kind();
    t.value = ref.bits();
  } else {
    t.kind = arg_test_kind::custom;
  }
  return t;
}
template <class A>
inline constexpr arg_test arg_test_of{arg_custom<A> ? arg_test_kind::custom : arg_test_kind::none};
template <>
inline constexpr arg_test arg_test_of<arg_invalid>{arg_test_kind::invalid};
template <>
inline constexpr arg_test arg_test_of<arg_number>{arg_test_kind::number};  // index: set by the walk
template <auto V>
inline constexpr arg_test arg_test_of<arg_const<V>> = const_arg_test(detail::plain_const(V));

// The children's protos of a source form (program.hpp's proto_node::kids).
template <class... P>
inline constexpr const proto_node* protos_of[sizeof...(P) > 0 ? sizeof...(P) : 1] = {&proto_of<P>...};
template <class S>
inline constexpr const proto_node* const* kid_protos = nullptr;  // src_none
template <class... P>
inline constexpr const proto_node* const* kid_protos<src_list<P...>> = protos_of<P...>;
template <class... P>
inline constexpr const proto_node* const* kid_protos<src_prefix<P...>> = protos_of<P...>;
template <class... P>
inline constexpr const proto_node* const* kid_protos<src_perm<P...>> = protos_of<P...>;
template <class P>
inline constexpr const proto_node* const* kid_protos<src_repeat<P>> = protos_of<P>;
inline constexpr src_form src_forms[] = {src_form::none, src_form::list, src_form::prefix, src_form::perm, src_form::repeat};
template <class S>
inline constexpr std::uint8_t src_nkids = 0;
template <template <class...> class F, class... P>
inline constexpr std::uint8_t src_nkids<F<P...>> = sizeof...(P);
template <class S>
inline constexpr bool src_one_order = false;
template <class... P>
inline constexpr bool src_one_order<src_perm<P...>> = src_perm<P...>::interchangeable;
}  // namespace detail

// --- the pattern node -----------------------------------------------------------------------------------

template <OpSet O, DTypeSet D, class A, class T, class S, fixed_string N, class Pr>
struct upat {
  using arg_type = A;
  using tag_type = T;
  using src_type = S;
  using pred_type = Pr;

  [[no_unique_address]] A arg_spec{};
  [[no_unique_address]] T tag_spec{};
  [[no_unique_address]] S src_spec{};
  [[no_unique_address]] Pr pred{};

  // --- DSL: refine this pattern ---------------------------------------------------------------------
  // Deduced return types: a written one is substituted into the member's declaration whenever a
  // pattern class is instantiated, used or not.
  /// The same pattern capturing the matched node under `N2`.
  template <fixed_string N2>
  constexpr auto named() const {
    return upat<O, D, A, T, S, N2, Pr>{arg_spec, tag_spec, src_spec, pred};
  }
  /// The same pattern, stateless form: `op<Ops::AFTER>.as<"after">`.
  template <fixed_string N2>
    requires std::is_empty_v<A> && std::is_empty_v<T> && std::is_empty_v<S> && std::is_empty_v<Pr>
  static constexpr upat<O, D, A, T, S, N2, Pr> as{};
  /// Restrict the dtype.
  template <DType... Ds>
  constexpr auto dtype() const {
    return upat<O, DTypeSet{Ds...}, A, T, S, N, Pr>{arg_spec, tag_spec, src_spec, pred};
  }
  template <DTypeSet Ds>
  constexpr auto dtypes() const {
    return upat<O, Ds, A, T, S, N, Pr>{arg_spec, tag_spec, src_spec, pred};
  }
  /// Require arg == V (Python equality).
  template <auto V>
  constexpr auto arg() const {
    return upat<O, D, arg_const<V>, T, S, N, Pr>{{}, tag_spec, src_spec, pred};
  }
  /// Require pred(arg).
  template <class F>
  constexpr auto arg_such_that(F f) const {
    return upat<O, D, arg_if<F>, T, S, N, Pr>{{f}, tag_spec, src_spec, pred};
  }
  /// Require tag == V.
  template <auto V>
  constexpr auto tag() const {
    return upat<O, D, A, arg_const<V>, S, N, Pr>{arg_spec, {}, src_spec, pred};
  }
  /// Require pred(node) (named apart from the WHERE op's where(c, t, f)).
  template <class F>
  constexpr auto such_that(F f) const {
    return upat<O, D, A, T, S, N, node_pred<F>>{arg_spec, tag_spec, src_spec, {f}};
  }
  /// Exactly these sources, in order.
  template <class... P>
    requires((is_pattern<P>::value || rhs_node<P>) && ...)
  constexpr auto operator()(P... p) const {
    return upat<O, D, A, T, src_list<P...>, N, Pr>{arg_spec, tag_spec, {detail::make_pack(p...)}, pred};
  }
  /// At least these sources, in order (tinygrad's allow_any_len).
  template <class... P>
  constexpr auto any_len(P... p) const {
    return upat<O, D, A, T, src_prefix<P...>, N, Pr>{arg_spec, tag_spec, {detail::make_pack(p...)}, pred};
  }
  /// Exactly these sources in any order (tinygrad's list form).
  template <class... P>
  constexpr auto commutative(P... p) const {
    return upat<O, D, A, T, src_perm<P...>, N, Pr>{arg_spec, tag_spec, {detail::make_pack(p...)}, pred};
  }
  /// Any number of sources, each matching p.
  template <class P>
  constexpr auto repeat(P p) const {
    return upat<O, D, A, T, src_repeat<P>, N, Pr>{arg_spec, tag_spec, {p}, pred};
  }
};

/// Alternatives (tinygrad's UPat.any): every alternative is tried, in order.
template <class... P>
struct any_pat {
  detail::pack<P...> alts;
};

template <OpSet O, DTypeSet D, class A, class T, class S, fixed_string N, class Pr>
struct is_pattern<upat<O, D, A, T, S, N, Pr>> : std::true_type {};
template <class... P>
struct is_pattern<any_pat<P...>> : std::true_type {};
// What a pattern's root asks for: traits, not members (see the source forms' comment).
/// The ops pattern P's root can match (empty: any op); alternatives: the union of theirs.
template <OpSet O, DTypeSet D, class A, class T, class S, fixed_string N, class Pr>
inline constexpr OpSet root_ops_v<upat<O, D, A, T, S, N, Pr>> = O;
template <class... P>
inline constexpr OpSet root_ops_v<any_pat<P...>> = ((root_ops_v<P>.empty()) || ...) ? OpSet{} : (root_ops_v<P> | ...);
/// The dtypes pattern P's root can have.
template <OpSet O, DTypeSet D, class A, class T, class S, fixed_string N, class Pr>
inline constexpr DTypeSet root_dtypes_v<upat<O, D, A, T, S, N, Pr>> = D;
template <class... P>
inline constexpr DTypeSet root_dtypes_v<any_pat<P...>>{(root_dtypes_v<P>.bits | ...)};
/// The name pattern P's root is captured under ("": none).
template <OpSet O, DTypeSet D, class A, class T, class S, fixed_string N, class Pr>
inline constexpr auto name_v<upat<O, D, A, T, S, N, Pr>> = N;

namespace detail {
// A pattern type's node as data, linked to its children's (program.hpp compiles a pattern from
// these). Instantiated only for the patterns that are compiled, and shared by every pattern that
// holds the same subpattern type.
template <OpSet O, DTypeSet D, class A, class T, class S, fixed_string N, class Pr>
inline constexpr proto_node proto_of<upat<O, D, A, T, S, N, Pr>>{
    finish_proto({own_node(O, D.bits, D.all(), src_one_order<S>, src_forms[S::kind], src_nkids<S>, arg_test_of<A>, arg_test_of<T>),
                  N.view(), arg_custom<A> || arg_custom<T> || Pr::present, std::is_same_v<A, arg_number>, kid_protos<S>})};
// Alternatives: the children are the alternatives.
template <class... P>
inline constexpr proto_node proto_of<any_pat<P...>>{
    finish_proto({own_node({}, 0, true, false, src_form::any, sizeof...(P), {}, {}), {}, false, false, protos_of<P...>})};

/// Predicates and run-time numbers in pattern P's subtree (the program numbers both in pre-order).
template <class P>
inline constexpr int checks_in = proto_of<P>.counts.checks;
template <class P>
inline constexpr int numbers_in = proto_of<P>.counts.numbers;

/// f(children...): a pattern's child patterns (the alternatives of an any_pat).
template <class P, class F>
constexpr decltype(auto) apply_children(const P& p, F&& f) {
  if constexpr (requires { p.alts; }) return p.alts.apply(f);
  else if constexpr (P::src_type::kind == 0) return f();
  else if constexpr (P::src_type::kind == 4) return f(p.src_spec.p);
  else return p.src_spec.c.apply(f);
}

/// Copies the run-time numbers of p's subtree to out[k...], in pre-order.
template <class P>
constexpr void copy_numbers(const P& p, arg_number* out, int& k) {
  if constexpr (proto_of<P>.number) out[k++] = p.arg_spec;
  auto one = [&](const auto& c) {
    if constexpr (numbers_in<std::remove_cvref_t<decltype(c)>> > 0) copy_numbers(c, out, k);
  };
  apply_children(p, [&](const auto&... c) { (one(c), ...); });
}

template <class P>
constexpr bool run_check(const P& p, int k, UOp u);
// Runs check k, numbered in pre-order over the subtrees sub..., in the subtree that holds it.
template <class... Sub>
constexpr bool run_check_in(int k, UOp u, const Sub&... sub) {
  bool result = true, found = false;
  auto one = [&](const auto& t) {
    constexpr int n = checks_in<std::remove_cvref_t<decltype(t)>>;
    if constexpr (n > 0) {
      if (found) return;
      if (k < n) {
        found = true;
        result = run_check(t, k, u);
      } else {
        k -= n;
      }
    }
  };
  (one(sub), ...);
  return result;
}
/// Runs check k of p's subtree (pre-order) on node u: an arg or tag predicate, or a node predicate.
template <class P>
constexpr bool run_check(const P& p, int k, UOp u) {
  if constexpr (requires { p.alts; }) {
    return p.alts.apply([&](const auto&... a) { return run_check_in(k, u, a...); });
  } else {
    constexpr bool own = proto_of<P>.check;
    if constexpr (own) {
      if (k == 0) {
        if constexpr (arg_custom<typename P::arg_type>)
          if (!p.arg_spec.test(u.arg())) return false;
        if constexpr (arg_custom<typename P::tag_type>)
          if (!p.tag_spec.test(u.tag())) return false;
        if constexpr (P::pred_type::present)
          if (!p.pred.f(u)) return false;
        return true;
      }
      --k;
    }
    if constexpr (checks_in<P> == (own ? 1 : 0)) return true;
    else return apply_children(p, [&](const auto&... c) { return run_check_in(k, u, c...); });
  }
}
}  // namespace detail

}  // namespace uopcg::pat
