// The pattern DSL: variables, constants, op patterns and operator sugar with the snapshot's
// meaning (commutative ops match either operand order, `x - y` is ADD(x, MUL(y, -1)), a number
// becomes a CONST pattern compared with Python equality, a compound pattern takes the dtype
// constraint of its last operand and comparisons are bool).
//
//   using namespace uopcg::pat;
//   constexpr auto x = var<"x">;
//   constexpr auto add_zero = rule(x + 0, [](auto& m) { return m[x]; });
#pragma once

#include <cstdint>
#include <type_traits>

#include "upat.hpp"

namespace uopcg::pat {

template <OpSet O, DTypeSet D = any_dtype, fixed_string N = unnamed>
using basic_pat = upat<O, D, arg_any, arg_any, src_none, N, no_pred>;

/// A node whose op is one of O...: op<Ops::ADD>, op<Ops::LOAD, Ops::STORE>.
template <Ops... O>
inline constexpr basic_pat<OpSet{O...}> op{};
/// A node whose op is in the set S: in<GroupOp::ALU>.
template <OpSet S>
inline constexpr basic_pat<S> in{};
/// Any node, captured as N.
template <fixed_string N>
inline constexpr basic_pat<OpSet{}, any_dtype, N> var{};
/// Any node (no capture).
inline constexpr basic_pat<OpSet{}> any{};
/// A CONST, captured as N.
template <fixed_string N>
inline constexpr basic_pat<OpSet{Ops::CONST}, any_dtype, N> cvar{};
/// A CONST whose value equals V (Python equality: const_<0> also matches 0.0, -0.0 and False).
template <auto V>
inline constexpr upat<OpSet{Ops::CONST}, any_dtype, arg_const<V>, arg_any, src_none, unnamed, no_pred> const_{};
/// The Invalid CONST.
inline constexpr upat<OpSet{Ops::CONST}, any_dtype, arg_invalid, arg_any, src_none, unnamed, no_pred> invalid_const{};

/// `42_c`, `0x10_c`, `1.5_c`, `2.5e-3_c`: a const_<value> pattern from a literal (a float literal
/// becomes a float_value, so it works where the compiler takes no `double` template argument).
namespace literals {
namespace detail {
template <char... Cs>
constexpr bool is_float_literal() {
  constexpr char s[] = {Cs..., 0};  // the 0 keeps s[1] in bounds for one-digit literals
  if (sizeof...(Cs) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return false;  // 0x1e is an int
  return ((Cs == '.' || Cs == 'e' || Cs == 'E') || ...);
}
constexpr int digit_of(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
// Decimal, 0x, 0b and leading-0 octal, with ' separators; more than 63 bits does not compile.
template <char... Cs>
constexpr std::int64_t parse_int() {
  constexpr char s[] = {Cs..., 0};  // the 0 keeps s[1] in bounds for one-digit literals
  std::size_t i = 0;
  unsigned base = 10;
  if (sizeof...(Cs) > 1 && s[0] == '0') {
    if (s[1] == 'x' || s[1] == 'X') base = 16, i = 2;
    else if (s[1] == 'b' || s[1] == 'B') base = 2, i = 2;
    else base = 8, i = 1;
  }
  std::uint64_t v = 0;
  for (; i < sizeof...(Cs); ++i) {
    if (s[i] == '\'') continue;
    int d = digit_of(s[i]);
    if (d < 0 || static_cast<unsigned>(d) >= base) uopcg::fail("_c: not a digit of the literal's base");
    if (v > (static_cast<std::uint64_t>(INT64_MAX) - static_cast<unsigned>(d)) / base) uopcg::fail("_c: the literal does not fit int64");
    v = v * base + static_cast<unsigned>(d);
  }
  return static_cast<std::int64_t>(v);
}
// A decimal float literal: its digits as an integer, scaled once by an exact power of ten, so short
// literals (0.1, 2.5e-3) round like the compiler's own.
template <char... Cs>
constexpr double parse_float() {
  constexpr char s[] = {Cs..., 0};  // the 0 keeps s[1] in bounds for one-digit literals
  std::uint64_t mant = 0;
  int exp10 = 0, digits = 0;
  bool frac = false;
  std::size_t i = 0;
  for (; i < sizeof...(Cs) && s[i] != 'e' && s[i] != 'E'; ++i) {
    if (s[i] == '.') { frac = true; continue; }
    if (s[i] == '\'') continue;
    if (mant == 0 && s[i] == '0') { if (frac) --exp10; continue; }
    if (digits < 19) mant = mant * 10 + static_cast<unsigned>(s[i] - '0'), ++digits, exp10 -= frac;
    else exp10 += !frac;  // digits past 19 only scale
  }
  if (i < sizeof...(Cs)) {
    bool neg = s[++i] == '-';
    if (s[i] == '-' || s[i] == '+') ++i;
    int e = 0;
    for (; i < sizeof...(Cs); ++i) e = e * 10 + (s[i] - '0');
    exp10 += neg ? -e : e;
  }
  double v = static_cast<double>(mant), p = 1;
  for (int k = 0; k < (exp10 < 0 ? -exp10 : exp10); ++k) p *= 10;
  return exp10 < 0 ? v / p : v * p;
}
}  // namespace detail
template <char... Cs>
constexpr auto operator""_c() {
  if constexpr (detail::is_float_literal<Cs...>()) return const_<fval(detail::parse_float<Cs...>())>;
  else return const_<detail::parse_int<Cs...>()>;
}
}  // namespace literals

/// A CONST pattern for a number known when the pattern object is built (the operands of the
/// operator sugar: `x + 1`).
template <class T>
  requires std::is_arithmetic_v<T>
constexpr auto lit(T v) {
  arg_number a;
  if constexpr (std::is_floating_point_v<T>) {
    a.kind = ArgKind::float_;
    a.f = static_cast<double>(v);
  } else {
    a.kind = ArgKind::int_;
    a.i = static_cast<std::int64_t>(v);
  }
  return upat<OpSet{Ops::CONST}, any_dtype, arg_number, arg_any, src_none, unnamed, no_pred>{a, {}, {}, {}};
}

// Class traits, not `_v` variable templates (see uop_operand in core/builder.hpp).
template <class T>
concept pattern = is_pattern<std::remove_cvref_t<T>>::value;
template <class T>
concept pattern_operand = pattern<T> || std::is_arithmetic<std::remove_cvref_t<T>>::value || rhs_node<T>;

template <class T>
constexpr auto to_pattern(const T& v) {
  if constexpr (pattern<T> || rhs_node<T>) return v;
  else return lit(v);
}

/// Alternatives: any_of(p, q, ...) tries each in order (tinygrad's UPat.any).
template <pattern... P>
constexpr any_pat<P...> any_of(P... p) {
  return {detail::make_pack(p...)};
}
/// p, or CAST(p); the name, if given, captures whichever matched (tinygrad's or_casted).
template <fixed_string N = unnamed, pattern P>
constexpr auto or_casted(P p) {
  if constexpr (N.empty()) return any_of(p, op<Ops::CAST>(p));
  else return any_of(p.template named<N>(), op<Ops::CAST>.template named<N>()(p));
}
/// p, or AFTER(p, ...) (tinygrad's or_after).
template <fixed_string N = unnamed, pattern P>
constexpr auto or_after(P p) {
  if constexpr (N.empty()) return any_of(p, op<Ops::AFTER>.any_len(p));
  else return any_of(p.template named<N>(), op<Ops::AFTER>.template named<N>().any_len(p));
}
/// Capture the whole node matched by p under N.
template <fixed_string N, pattern P>
constexpr auto named(P p) {
  return p.template named<N>();
}

// --- operator sugar -----------------------------------------------------------------------------------

namespace detail {
constexpr bool is_comparison(Ops op) { return op == Ops::CMPLT || op == Ops::CMPNE || op == Ops::CMPEQ; }

/// An op pattern over operands a..., dtype constraint from the last operand (comparisons: bool).
template <Ops O, bool Commutative, class... P>
constexpr auto alu_pattern(P... p) {
  constexpr DTypeSet sets[] = {any_dtype, root_dtypes_v<std::remove_cvref_t<P>>...};
  constexpr DTypeSet last = sets[sizeof...(P)];
  constexpr DTypeSet d = is_comparison(O) ? DTypeSet{DType::bool_} : last;
  using base = basic_pat<OpSet{O}, d>;
  if constexpr (Commutative) return base{}.commutative(p...);
  else return base{}(p...);
}
}  // namespace detail

#define UOPCG_PATTERN_BINARY(SYM, OP, COMM)                                                  \
  template <pattern_operand A, pattern_operand B>                                            \
    requires(pattern<A> || pattern<B> || rhs_node<A> || rhs_node<B>)                                                       \
  constexpr auto operator SYM(const A& a, const B& b) {                                      \
    return detail::alu_pattern<OP, COMM>(to_pattern(a), to_pattern(b));                     \
  }
UOPCG_PATTERN_BINARY(+, Ops::ADD, true)
UOPCG_PATTERN_BINARY(*, Ops::MUL, true)
UOPCG_PATTERN_BINARY(&, Ops::AND, true)
UOPCG_PATTERN_BINARY(|, Ops::OR, true)
UOPCG_PATTERN_BINARY(^, Ops::XOR, true)
UOPCG_PATTERN_BINARY(<, Ops::CMPLT, false)
UOPCG_PATTERN_BINARY(%, Ops::FLOORMOD, false)
UOPCG_PATTERN_BINARY(<<, Ops::SHL, false)
UOPCG_PATTERN_BINARY(>>, Ops::SHR, false)
#undef UOPCG_PATTERN_BINARY

/// a > b is CMPLT(b, a).
template <pattern_operand A, pattern_operand B>
  requires(pattern<A> || pattern<B> || rhs_node<A> || rhs_node<B>)
constexpr auto operator>(const A& a, const B& b) {
  return detail::alu_pattern<Ops::CMPLT, false>(to_pattern(b), to_pattern(a));
}
/// -x is MUL(x, -1).
template <pattern P>
constexpr auto operator-(const P& x) {
  return detail::alu_pattern<Ops::MUL, true>(x, lit(-1));
}
/// x - y is ADD(x, MUL(y, -1)); x - 3 is ADD(x, -3).
template <pattern_operand A, pattern_operand B>
  requires(pattern<A> || pattern<B> || rhs_node<A> || rhs_node<B>)
constexpr auto operator-(const A& a, const B& b) {
  if constexpr (pattern<B>) return detail::alu_pattern<Ops::ADD, true>(to_pattern(a), -b);
  else if constexpr (rhs_node<B>) return detail::alu_pattern<Ops::ADD, true>(to_pattern(a), detail::alu_pattern<Ops::MUL, true>(b, lit(-1)));
  else return detail::alu_pattern<Ops::ADD, true>(to_pattern(a), lit(-b));
}
/// x / y is MUL(x, RECIPROCAL(y)).
template <pattern_operand A, pattern_operand B>
  requires(pattern<A> || pattern<B> || rhs_node<A> || rhs_node<B>)
constexpr auto operator/(const A& a, const B& b) {
  return detail::alu_pattern<Ops::MUL, true>(to_pattern(a), detail::alu_pattern<Ops::RECIPROCAL, false>(to_pattern(b)));
}
template <pattern_operand A, pattern_operand B>
constexpr auto floordiv(const A& a, const B& b) {
  return detail::alu_pattern<Ops::FLOORDIV, false>(to_pattern(a), to_pattern(b));
}
template <pattern_operand A, pattern_operand B>
constexpr auto maximum(const A& a, const B& b) {
  return detail::alu_pattern<Ops::MAX, true>(to_pattern(a), to_pattern(b));
}
template <pattern_operand A, pattern_operand B>
constexpr auto ne(const A& a, const B& b) {
  return detail::alu_pattern<Ops::CMPNE, true>(to_pattern(a), to_pattern(b));
}
template <pattern_operand A, pattern_operand B>
constexpr auto lt(const A& a, const B& b) {
  return detail::alu_pattern<Ops::CMPLT, false>(to_pattern(a), to_pattern(b));
}
template <pattern_operand C, pattern_operand A, pattern_operand B>
constexpr auto where(const C& c, const A& a, const B& b) {
  return detail::alu_pattern<Ops::WHERE, false>(to_pattern(c), to_pattern(a), to_pattern(b));
}
/// logical_not(x): CMPNE(x, True) when x is a bool pattern, else CMPNE(CAST(x), True).
template <pattern P>
constexpr auto logical_not(const P& x) {
  if constexpr (root_dtypes_v<P> == DTypeSet{DType::bool_}) return ne(x, lit(1));
  else return ne(op<Ops::CAST>.template dtype<DType::bool_>()(x), lit(1));
}
template <DType D, pattern P>
constexpr auto cast(const P& x) {
  return op<Ops::CAST>.template dtype<D>()(x);
}
template <DType D, pattern P>
constexpr auto bitcast(const P& x) {
  return op<Ops::BITCAST>.template dtype<D>()(x);
}
template <Ops O, pattern P>
constexpr auto unary(const P& x) {
  return detail::alu_pattern<O, false>(x);
}
template <pattern B, pattern... I>
constexpr auto index(const B& b, const I&... i) {
  return op<Ops::INDEX>(b, i...);
}
template <pattern A>
constexpr auto load(const A& a) {
  return op<Ops::LOAD>(a);
}
template <pattern A, pattern V>
constexpr auto store(const A& a, const V& v) {
  return op<Ops::STORE>(a, v);
}

}  // namespace uopcg::pat
