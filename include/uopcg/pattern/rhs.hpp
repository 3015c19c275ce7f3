// The short rule form, Halide's rewrite(lhs, rhs, pred): the result is an expression over the
// left-hand side's captures, written in the same DSL, instead of a function.
//
//   rewrite(x * 1, x)
//   rewrite((x + c0) + c1, x + fold(c0 + c1))          // fold(): symbolic/rhs.hpp
//   rewrite(floordiv(x, c0), x >> 1, [](auto& m) { auto [x, c0] = m; return cval(c0) == 2; })
//   rewrite(x * c0, [](auto& m) { return shl(m[x], log2(m[c0])); }, pow2)   // a computed result
//
// A predicate takes the match, or the rewrite's context and the match (a Target, say), and
// composes with `&&`; a computed result is for what no expression of the DSL builds, and may
// decline (std::optional<UOp>).
//
// The right-hand side is built, not matched:
//   - a named node stands for the node its capture bound (it takes no sources or constraints);
//   - a number is a CONST of the dtype its operation computes in: a non-constant sibling's, else the
//     parent's; at the top, the rewritten node's (tinygrad's const_like); an integer is wrapped to
//     that dtype's width (-1 in a uint32 op is 4294967295);
//   - Invalid (invalid_const) is the bool Invalid CONST, which no dtype derivation counts;
//   - an op node is made from its built sources, with the dtype its pattern names when it names
//     exactly one (cast<DType::int32>(x)), else the dtype the op derives from its sources.
// Other right-hand-side nodes (fold, ...) are types with `build(m, hint)` and a member type
// rhs_node_tag; one with `is_number = true` stands where a number does (its hint is the number's
// dtype), one with `declines = true` may build an invalid UOp, and the rule then declines.
#pragma once

#include <bit>
#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>

#include "../core/builder.hpp"
#include "dsl.hpp"
#include "rule.hpp"

namespace uopcg::pat {

namespace detail {
template <class E>
inline constexpr bool is_upat_v = false;
template <OpSet O, DTypeSet D, class A, class T, class S, fixed_string N, class Pr>
inline constexpr bool is_upat_v<upat<O, D, A, T, S, N, Pr>> = true;

/// The one dtype a set names, or void_ when it names none or several.
constexpr DType only_dtype(DTypeSet d) {
  return std::popcount(d.bits) == 1 ? static_cast<DType>(std::countr_zero(d.bits)) : DType::void_;
}

/// The op of a one-op set.
constexpr Ops only_op(OpSet s) {
  Ops r{};
  s.for_each([&](Ops o) { r = o; });
  return r;
}

/// A right-hand-side node whose dtype comes from where it stands: an unnamed number, or a node
/// that computes one (fold()).
template <class E>
inline constexpr bool rhs_literal_v = false;
template <OpSet O, DTypeSet D, class A, class T, fixed_string N, class Pr>
inline constexpr bool rhs_literal_v<upat<O, D, A, T, src_none, N, Pr>> =
    N.empty() && O == OpSet{Ops::CONST} && only_dtype(D) == DType::void_ && !std::is_same_v<A, arg_invalid>;
template <class E>
  requires requires { E::is_number; }
inline constexpr bool rhs_literal_v<E> = E::is_number;

/// An integer as an arg of integer dtype dt, wrapped to its width.
constexpr Arg wrapped_int(DType dt, std::int64_t v) {
  const int bits = bitsize(dt);
  if (!is_int(dt) || is_weak(dt) || bits > 64) return Arg::integer(v);
  auto u = static_cast<std::uint64_t>(v);
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  u &= mask;
  if (is_unsigned(dt)) return Arg::uinteger(u);
  if (u >> (bits - 1) & 1) u |= ~mask;  // sign-extended
  return Arg::integer(static_cast<std::int64_t>(u));
}

/// A number as a CONST of dtype dt: float, bool, or an integer wrapped to dt's width.
template <class V>
constexpr UOp number_const(Arena& a, DType dt, V v) {
  if (is_float(dt)) return uopcg::const_(a, dt, Arg::floating(static_cast<double>(v)));
  if (is_bool(dt)) return uopcg::const_(a, dt, Arg::boolean(v != 0));
  if constexpr (std::is_floating_point_v<V>) {
    if (static_cast<double>(static_cast<std::int64_t>(v)) != static_cast<double>(v))
      fail("rewrite(): a non-integral number on the right-hand side of an integer operation");
  }
  return uopcg::const_(a, dt, wrapped_int(dt, static_cast<std::int64_t>(v)));
}

template <class E>
constexpr bool may_decline();
template <class... S>
constexpr bool may_decline_any(const pack<S...>*) {
  return (may_decline<S>() || ...);
}
/// Whether building right-hand side E may give an invalid UOp (a node with `declines` inside).
template <class E>
constexpr bool may_decline() {
  if constexpr (requires { E::declines; }) {
    return E::declines;
  } else if constexpr (requires { typename E::inner_type; }) {
    return may_decline<typename E::inner_type>();
  } else if constexpr (requires { typename E::src_type::children; }) {
    return may_decline_any(static_cast<const typename E::src_type::children*>(nullptr));
  } else {
    return false;
  }
}

template <class A>
constexpr Arg rhs_arg(const A& spec, Ops op, DType dt) {
  if constexpr (std::is_same_v<A, arg_any>) {
    return op == Ops::CAST || op == Ops::BITCAST ? Arg::dtype(dt) : Arg();
  } else if constexpr (requires { A::as_arg(); }) {
    return A::as_arg();
  } else if constexpr (std::is_same_v<A, arg_number>) {
    return spec.kind == ArgKind::float_ ? Arg::floating(spec.f) : Arg::integer(spec.i);
  } else {
    static_assert(!sizeof(A), "rewrite(): an arg predicate cannot be built; give the arg's value (.arg<V>())");
    return Arg();
  }
}
}  // namespace detail

/// Builds right-hand side `e` for match `m`; `hint` is the dtype a number there takes.
template <class E, class M>
constexpr UOp build_rhs(const E& e, const M& m, DType hint) {
  if constexpr (rhs_node<E>) {
    return e.build(m, hint);
  } else if constexpr (std::is_arithmetic_v<E>) {
    return detail::number_const(m.arena(), hint, e);
  } else {
    constexpr auto name = name_v<E>;
    if constexpr (!name.empty()) {
      return m.template get<name>();
    } else {
      constexpr OpSet ops = root_ops_v<E>;
      constexpr Ops op = detail::only_op(ops);
      constexpr DType fixed = detail::only_dtype(root_dtypes_v<E>);
      Arena& a = m.arena();
      if constexpr (E::src_type::kind == 0) {
        const DType dt = fixed != DType::void_ ? fixed : hint;
        if constexpr (std::is_same_v<typename E::arg_type, arg_invalid>) {
          return uopcg::invalid(a);
        } else if constexpr (std::is_same_v<typename E::arg_type, arg_number>) {
          const arg_number& n = e.arg_spec;
          return n.kind == ArgKind::float_ ? detail::number_const(a, dt, n.f) : detail::number_const(a, dt, n.i);
        } else if constexpr (requires { E::arg_type::value; }) {
          return detail::number_const(a, dt, E::arg_type::value);
        } else {
          return uopcg::const_(a, dt, detail::rhs_arg(e.arg_spec, op, dt));
        }
      } else {
        return e.src_spec.c.apply([&](const auto&... s) {
          constexpr std::size_t n = sizeof...(s);
          constexpr bool literal[] = {detail::rhs_literal_v<std::remove_cvref_t<decltype(s)>>...};
          UOp srcs[n];
          // sources that are not numbers first: a number takes the dtype of the first of them (a
          // WHERE's condition excluded), else the parent's
          std::size_t k = 0;
          ((srcs[k] = literal[k] ? UOp() : build_rhs(s, m, op == Ops::WHERE && k == 0 ? DType::bool_ : hint), ++k), ...);
          if constexpr (detail::may_decline<E>())
            for (std::size_t i = 0; i < n; ++i)
              if (!literal[i] && !srcs[i]) return UOp();
          DType sibling = fixed != DType::void_ && op != Ops::WHERE && !GroupOp::Comparison.contains(op) ? fixed : hint;
          for (std::size_t i = n; i-- > 0;)
            if (!literal[i] && !(op == Ops::WHERE && i == 0)) sibling = srcs[i].dtype();
          k = 0;
          ((literal[k] ? void(srcs[k] = build_rhs(s, m, sibling)) : void(), ++k), ...);
          if constexpr (detail::may_decline<E>())
            for (std::size_t i = 0; i < n; ++i)
              if (literal[i] && !srcs[i]) return UOp();
          const Arg arg = detail::rhs_arg(e.arg_spec, op, fixed);
          if constexpr (fixed != DType::void_) return a.make(op, fixed, std::span<const UOp>(srcs, n), arg);
          else return make_node(a, op, std::span<const UOp>(srcs, n), arg);
        });
      }
    }
  }
}

namespace detail {
/// What is wrong with a right-hand side, found at the rule's definition (build_rhs is instantiated
/// only when a rule set runs).
enum class rhs_error { none, alternatives, predicate, unbound, named_with_sources, not_one_op, no_sources, loose_sources };

template <class E, class M>
constexpr rhs_error rhs_check();
template <class M, class... S>
constexpr rhs_error rhs_check_all(const pack<S...>*) {
  rhs_error r = rhs_error::none;
  ((r = r == rhs_error::none ? rhs_check<S, M>() : r), ...);
  return r;
}
template <class E, class M>
constexpr rhs_error rhs_check() {
  if constexpr (rhs_node<E>) {
    if constexpr (requires { typename E::inner_type; }) return rhs_check<typename E::inner_type, M>();
    else return rhs_error::none;
  } else if constexpr (std::is_arithmetic_v<E>) {
    return rhs_error::none;
  } else if constexpr (!is_upat_v<E>) {
    return rhs_error::alternatives;
  } else if constexpr (E::pred_type::present) {
    return rhs_error::predicate;
  } else if constexpr (!name_v<E>.empty()) {
    if constexpr (E::src_type::kind != 0) return rhs_error::named_with_sources;
    else return M::index_of(name_v<E>.view()) >= 0 ? rhs_error::none : rhs_error::unbound;
  } else if constexpr (root_ops_v<E>.size() != 1) {
    return rhs_error::not_one_op;
  } else if constexpr (E::src_type::kind == 0) {
    return only_op(root_ops_v<E>) == Ops::CONST ? rhs_error::none : rhs_error::no_sources;
  } else if constexpr (E::src_type::kind != 1 && E::src_type::kind != 3) {
    return rhs_error::loose_sources;
  } else {
    return rhs_check_all<M>(static_cast<const typename E::src_type::children*>(nullptr));
  }
}

/// Every right-hand-side check, each with its sentence (the first line a reader meets).
template <class R, class M>
constexpr bool rhs_checked() {
  constexpr rhs_error e = rhs_check<R, M>();
  static_assert(e != rhs_error::alternatives, "rewrite(): alternatives (any_of) have no meaning on the right-hand side");
  static_assert(e != rhs_error::predicate, "rewrite(): a predicate has no meaning on the right-hand side (pass it as rewrite's third argument)");
  static_assert(e != rhs_error::unbound, "rewrite(): the right-hand side uses a capture name that the left-hand side does not bind");
  static_assert(e != rhs_error::named_with_sources, "rewrite(): a named node on the right-hand side stands for its capture and takes no sources");
  static_assert(e != rhs_error::not_one_op, "rewrite(): an unnamed node on the right-hand side must name exactly one op");
  static_assert(e != rhs_error::no_sources, "rewrite(): a right-hand-side op node other than a CONST needs its sources");
  static_assert(e != rhs_error::loose_sources, "rewrite(): a right-hand-side node lists its sources exactly (no any_len or repeat)");
  return e == rhs_error::none;
}

/// Whether f(a...) is a call, and whether its result converts to bool: requires-expressions rather
/// than std::is_invocable(_r), whose class templates would be instantiated per rule (as in rule.hpp).
template <class F, class... A>
concept callable_with = requires(const F& f, A&... a) { f(a...); };
/// A string argument where rewrite() has a name or a file name, not a predicate.
template <class T>
concept is_text = requires(void (*to_text)(const char*), T t) { to_text(t); };
template <class F, class... A>
concept predicate_on = requires(void (*to_bool)(bool), const F& f, A&... a) { to_bool(f(a...)); };

/// f(ctx, m) when f reads the context, else f(m).
template <class F, class C, class M>
constexpr bool call_with_context(const F& f, C& ctx, M& m) {
  if constexpr (callable_with<F, C, M>) return f(ctx, m);
  else return f(m);
}
/// A right-hand side computed by a function of the match (or of the context and the match), for a
/// result no expression of the DSL builds; it returns UOp, or std::optional<UOp> to decline.
template <class R>
concept computed = std::is_class_v<R> && !pattern_operand<R>;

/// The built expression; nullopt where a right-hand-side node declines (the rule is then not total).
template <class R, class M, class... C>
constexpr auto build_checked(const R& rhs, M& m, C&... ctx) {
  if constexpr (computed<R>) {
    if constexpr (callable_with<R, C..., M>) return std::optional<UOp>(rhs(ctx..., m));
    else return std::optional<UOp>(rhs(m));
  } else if constexpr (may_decline<R>()) {
    const UOp u = build_rhs(rhs, m, m.root().dtype());
    return u ? std::optional<UOp>(u) : std::nullopt;
  } else {
    return build_rhs(rhs, m, m.root().dtype());
  }
}
/// The rewriter of rewrite(lhs, rhs): the built expression, always (a total rule).
template <class R>
struct build_result {
  R rhs;
  template <class M>
  constexpr auto operator()(M& m) const {
    return build_checked(rhs, m);
  }
};
/// The rewriter of rewrite(lhs, rhs, pred): the built expression where pred(m), or pred(ctx, m)
/// for a predicate that reads the rewrite's context, holds.
template <class R, class Pred>
struct build_result_if {
  R rhs;
  Pred pred;
  template <class M>
    requires predicate_on<Pred, M> && (!computed<R> || callable_with<R, M>)
  constexpr std::optional<UOp> operator()(M& m) const {
    if (!pred(m)) return std::nullopt;
    return build_checked(rhs, m);
  }
  template <class C, class M>
    requires predicate_on<Pred, C, M> || (computed<R> && callable_with<R, C, M>)
  constexpr std::optional<UOp> operator()(C& ctx, M& m) const {
    if (!call_with_context(pred, ctx, m)) return std::nullopt;
    return build_checked(rhs, m, ctx);
  }
};

/// Both predicates hold; it takes the context when either of them does.
template <class F, class G>
struct both {
  F f;
  G g;
  template <class M>
    requires callable_with<F, M> && callable_with<G, M>
  constexpr bool operator()(M& m) const {
    return f(m) && g(m);
  }
  template <class C, class M>
    requires(callable_with<F, C, M> || callable_with<G, C, M>) && (callable_with<F, C, M> || callable_with<F, M>) &&
            (callable_with<G, C, M> || callable_with<G, M>)
  constexpr bool operator()(C& ctx, M& m) const {
    return call_with_context(f, ctx, m) && call_with_context(g, ctx, m);
  }
};
}  // namespace detail

/// A rewrite() predicate that composes with `&&` (with another predicate or any callable on the
/// match, or on the context and the match).
template <class F>
struct predicate {
  F f;
  template <class... A>
    requires detail::predicate_on<F, A...>
  constexpr bool operator()(A&... a) const {
    return f(a...);
  }
};
template <class F>
predicate(F) -> predicate<F>;  // clang 14 deduces no aggregate's template arguments by itself
template <class F, class G>
constexpr auto operator&&(predicate<F> a, G b) {
  return predicate<detail::both<F, G>>{{a.f, b}};
}
/// Every one of these captures has the rewritten node's dtype: root_dtype(x, y).
template <pattern... V>
constexpr auto root_dtype(V...) {
  static_assert(((!name_v<V>.empty()) && ...), "root_dtype(): name captures (var<\"x\">), not unnamed patterns");
  return predicate{[](auto& m) { return ((m.template get<name_v<V>>().dtype() == m.root().dtype()) && ...); }};
}

/// The rule lhs -> rhs.
template <pattern L, class R>
  requires pattern_operand<R>
constexpr auto rewrite(L lhs, R rhs, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  static_assert(detail::rhs_checked<decltype(to_pattern(rhs)), match_for<L>>());
  return rule(lhs, detail::build_result<decltype(to_pattern(rhs))>{to_pattern(rhs)}, file, line);
}
/// The rule lhs -> rhs where pred(match) holds; rhs may be computed: rewrite(lhs, f, pred).
template <pattern L, class R, class Pred>
  requires(pattern_operand<R> || detail::computed<R>) && (!detail::is_text<Pred>)
constexpr auto rewrite(L lhs, R rhs, Pred pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  static_assert(detail::predicate_on<Pred, match_for<L>> || !detail::callable_with<Pred, match_for<L>>,
                "rewrite(): the predicate must take the match (auto& m), or the context and the match, and return bool");
  if constexpr (detail::computed<R>) {
    return rule(lhs, detail::build_result_if<R, Pred>{rhs, pred}, file, line);
  } else {
    static_assert(detail::rhs_checked<decltype(to_pattern(rhs)), match_for<L>>());
    return rule(lhs, detail::build_result_if<decltype(to_pattern(rhs)), Pred>{to_pattern(rhs), pred}, file, line);
  }
}
/// Named forms (the name is shown in statistics, traces and errors).
template <pattern L, class R>
  requires pattern_operand<R>
constexpr auto rewrite(std::string_view name, L lhs, R rhs, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return rewrite(lhs, rhs, file, line).named(name);
}
template <pattern L, class R, class Pred>
  requires(pattern_operand<R> || detail::computed<R>) && (!detail::is_text<Pred>)
constexpr auto rewrite(std::string_view name, L lhs, R rhs, Pred pred, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE()) {
  return rewrite(lhs, rhs, pred, file, line).named(name);
}

}  // namespace uopcg::pat
