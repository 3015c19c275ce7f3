// Building kernel graphs in C++: leaves (constants, params, buffers, ranges), memory and control
// ops (index, load, store, reduce, after, end, group, sink, barrier) and ALU ops through operators,
// all with the snapshot's meaning: literals are weak constants, `x - y` is ADD(x, MUL(y, -1)),
// `a > b` is CMPLT(b, a), integer `/` and `%` are FLOORDIV/FLOORMOD (floor semantics, like
// Python's `//` and `%` on index math), float `/` is MUL(x, RECIPROCAL(y)).
//
// `==` and `!=` on UOp compare identity; use eq()/ne() to build comparisons.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "arena.hpp"
#include "graph.hpp"

namespace uopcg {

// --- leaves -----------------------------------------------------------------------------------------

/// CONST of an explicit dtype.
constexpr UOp const_(Arena& a, DType dt, const Arg& value) { return a.make(Ops::CONST, dt, {}, value); }
/// A literal: weakint for integers, weakfloat for floating point, bool for bool.
template <class T>
  requires std::is_arithmetic_v<T>
constexpr UOp literal(Arena& a, T v) {
  if constexpr (std::is_same_v<T, bool>) return const_(a, DType::bool_, Arg::boolean(v));
  else if constexpr (std::is_floating_point_v<T>) return const_(a, DType::weakfloat, Arg::floating(static_cast<double>(v)));
  else return const_(a, DType::weakint, Arg(v));
}
/// A constant with the dtype of `like` (what tinygrad's const_like gives).
template <class T>
  requires std::is_arithmetic_v<T>
constexpr UOp const_like(UOp like, T v) {
  DType dt = like.dtype();
  if constexpr (std::is_same_v<T, bool>) return const_(like.arena(), dt, Arg::boolean(v));
  else if (is_float(dt)) return const_(like.arena(), dt, Arg::floating(static_cast<double>(v)));
  else if (is_bool(dt)) return const_(like.arena(), dt, Arg::boolean(v != 0));
  else return const_(like.arena(), dt, Arg(static_cast<std::int64_t>(v)));
}
/// The Invalid sentinel (a bool CONST that matches any dtype).
constexpr UOp invalid(Arena& a) { return const_(a, DType::bool_, Arg::invalid()); }

/// A kernel buffer argument: PARAM(size) with a ParamArg.
constexpr UOp param(Arena& a, std::int64_t slot, DType dt, std::int64_t size, AddrSpace space = AddrSpace::GLOBAL) {
  ParamArg p;
  p.slot = slot;
  p.dtype = dt;
  p.addrspace = space;
  return a.make(Ops::PARAM, dt, {literal(a, size)}, p.to_arg());
}
/// A symbolic integer whose value is given at launch (tinygrad's `UOp.variable`, in its kernel form):
/// an ALU PARAM named `name` with values in [lo, hi]. Its slot is -1, so the pipeline numbers it
/// after the buffers; launchers set it by name. Equal variables are one node, as in tinygrad.
constexpr UOp variable(Arena& a, std::string_view name, std::int64_t lo, std::int64_t hi, DType dt = DType::weakint) {
  if (name.empty()) fail("variable(): a variable needs a name");
  if (lo > hi) fail("variable(): empty bounds for variable " + std::string(name));
  if (!is_int(dt)) fail("variable(): variable " + std::string(name) + " must have an integer dtype");
  ParamArg p;
  p.slot = -1;
  p.dtype = dt;
  p.addrspace = AddrSpace::ALU;
  p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{lo, hi};
  p.has_name = true;
  p.name = name;
  return a.make(Ops::PARAM, dt, {a.make(Ops::STACK, DType::void_, {})}, p.to_arg());
}
/// Kernel-internal storage (LOCAL tile or REG accumulator).
constexpr UOp buffer(Arena& a, std::int64_t slot, DType dt, std::int64_t size, AddrSpace space) {
  ParamArg p;
  p.slot = slot;
  p.dtype = dt;
  p.addrspace = space;
  return a.make(Ops::BUFFER, dt, {literal(a, size)}, p.to_arg());
}
/// A loop / iteration axis over [0, bound).
constexpr UOp range(UOp bound, std::int64_t axis_id, AxisType type) {
  return bound.arena().make(Ops::RANGE, bound.dtype(), {bound}, Arg::tuple_of(axis_id, type));
}
constexpr UOp range(Arena& a, std::int64_t size, std::int64_t axis_id, AxisType type) {
  return range(literal(a, size), axis_id, type);
}
/// A RANGE's axis type, the last field of its arg (axis id, ..., AxisType); nullopt for another op
/// or a malformed arg.
constexpr std::optional<AxisType> range_axis(UOp r) {
  if (r.op() != Ops::RANGE) return std::nullopt;
  const Arg& a = r.arg();
  if (!a.is_tuple() || a.size() < 2 || a[a.size() - 1].kind() != ArgKind::axis_type) return std::nullopt;
  return a[a.size() - 1].as_axis_type();
}
/// A GPU index: "gidx<d>", "lidx<d>" or "idx<d>".
constexpr UOp special(UOp bound, std::string_view name) {
  return bound.arena().make(Ops::SPECIAL, bound.dtype(), {bound}, Arg::string(name));
}
constexpr UOp special(Arena& a, std::int64_t size, std::string_view name) { return special(literal(a, size), name); }

// --- structure ------------------------------------------------------------------------------------

namespace detail {
template <class... U>
constexpr std::vector<UOp> pack(UOp first, U... rest) {
  return std::vector<UOp>{first, rest...};
}
}  // namespace detail

constexpr UOp node(Ops op, std::initializer_list<UOp> srcs, const Arg& arg = Arg()) {
  if (srcs.size() == 0) fail("node(): needs at least one source (use Arena::make for leaves)");
  return make_node(srcs.begin()->arena(), op, std::span<const UOp>(srcs.begin(), srcs.size()), arg);
}
constexpr UOp node(Ops op, const std::vector<UOp>& srcs, const Arg& arg = Arg()) {
  if (srcs.empty()) fail("node(): needs at least one source (use Arena::make for leaves)");
  return make_node(srcs.front().arena(), op, srcs, arg);
}

template <class... I>
constexpr UOp index(UOp buf, I... idx) { return node(Ops::INDEX, {buf, idx...}); }
constexpr UOp load(UOp addr) { return node(Ops::LOAD, {addr}); }
/// Gated load: `alt` where `gate` is false.
constexpr UOp load(UOp addr, UOp alt, UOp gate) { return node(Ops::LOAD, {addr, alt, gate}); }
constexpr UOp store(UOp addr, UOp value) { return node(Ops::STORE, {addr, value}); }
constexpr UOp store(UOp addr, UOp value, UOp gate) { return node(Ops::STORE, {addr, value, gate}); }
template <class... R>
constexpr UOp reduce(UOp value, Ops op, R... ranges) {
  return node(Ops::REDUCE, {value, ranges...}, Arg::tuple_of(op, 0));
}
constexpr UOp reduce(UOp value, Ops op, const std::vector<UOp>& ranges) {
  std::vector<UOp> s{value};
  s.insert(s.end(), ranges.begin(), ranges.end());
  return node(Ops::REDUCE, s, Arg::tuple_of(op, 0));
}
template <class... D>
constexpr UOp after(UOp x, D... deps) { return node(Ops::AFTER, {x, deps...}); }
template <class... R>
constexpr UOp end(UOp body, R... ranges) { return node(Ops::END, {body, ranges...}); }
constexpr UOp end(UOp body, const std::vector<UOp>& ranges) {
  std::vector<UOp> s{body};
  s.insert(s.end(), ranges.begin(), ranges.end());
  return node(Ops::END, s);
}
template <class... S>
constexpr UOp group(UOp first, S... rest) { return node(Ops::GROUP, {first, rest...}); }
template <class... S>
constexpr UOp barrier(UOp first, S... rest) { return node(Ops::BARRIER, {first, rest...}); }
template <class... S>
constexpr UOp stack(UOp first, S... rest) { return node(Ops::STACK, {first, rest...}); }
/// STAGE: materialize `value` for every combination of `ranges` into a buffer of `space`.
template <class... R>
constexpr UOp stage(UOp value, AddrSpace space, R... ranges) {
  BufferizeOpts o;
  o.addrspace = space;
  return node(Ops::STAGE, {value, ranges...}, o.to_arg());
}
/// The kernel root.
constexpr UOp sink(const std::vector<UOp>& effects, const KernelInfo& info = KernelInfo{}) {
  if (effects.empty()) fail("sink(): needs at least one side effect");
  return effects.front().arena().make(Ops::SINK, DType::void_, effects, info.to_arg());
}
template <class... S>
constexpr UOp sink(UOp first, S... rest) { return sink(std::vector<UOp>{first, rest...}); }

// --- ALU --------------------------------------------------------------------------------------------

constexpr UOp cast(UOp x, DType dt) { return x.arena().make(Ops::CAST, dt, {x}, Arg::dtype(dt)); }
constexpr UOp bitcast(UOp x, DType dt) { return x.arena().make(Ops::BITCAST, dt, {x}, Arg::dtype(dt)); }
constexpr UOp alu(Ops op, UOp a) { return node(op, {a}); }
constexpr UOp alu(Ops op, UOp a, UOp b) { return node(op, {a, b}); }
constexpr UOp where(UOp c, UOp t, UOp f) { return node(Ops::WHERE, {c, t, f}); }
constexpr UOp exp2(UOp x) { return alu(Ops::EXP2, x); }
constexpr UOp log2(UOp x) { return alu(Ops::LOG2, x); }
constexpr UOp sin(UOp x) { return alu(Ops::SIN, x); }
constexpr UOp sqrt(UOp x) { return alu(Ops::SQRT, x); }
constexpr UOp reciprocal(UOp x) { return alu(Ops::RECIPROCAL, x); }
constexpr UOp trunc(UOp x) { return alu(Ops::TRUNC, x); }
constexpr UOp maximum(UOp a, UOp b) { return alu(Ops::MAX, a, b); }
constexpr UOp floordiv(UOp a, UOp b) { return alu(Ops::FLOORDIV, a, b); }
constexpr UOp floormod(UOp a, UOp b) { return alu(Ops::FLOORMOD, a, b); }
constexpr UOp cdiv(UOp a, UOp b) { return alu(Ops::CDIV, a, b); }
constexpr UOp cmod(UOp a, UOp b) { return alu(Ops::CMOD, a, b); }
constexpr UOp ne(UOp a, UOp b) { return alu(Ops::CMPNE, a, b); }
/// Logical not of a bool: CMPNE(x, True); other dtypes are cast to bool first.
constexpr UOp logical_not(UOp x) {
  UOp b = x.dtype() == DType::bool_ ? x : cast(x, DType::bool_);
  return ne(b, literal(x.arena(), true));
}
constexpr UOp eq(UOp a, UOp b) { return logical_not(ne(a, b)); }
/// x.valid(cond) = WHERE(cond, x, Invalid): x, meaningful only where cond holds.
constexpr UOp valid(UOp x, UOp cond) { return where(cond, x, invalid(x.arena())); }

// Operands of the operators: a UOp, or a C++ number that becomes a weak literal. Class traits, not
// `_v` variable templates: g++ mangles every variable it instantiates, and overload resolution of
// `a + b` on two rule sets asks this of types whose names spell every rule.
template <class T>
concept uop_operand = std::is_same<std::remove_cvref_t<T>, UOp>::value || std::is_arithmetic<std::remove_cvref_t<T>>::value;

namespace detail {
template <class T>
constexpr UOp as_uop(Arena& a, const T& v) {
  if constexpr (std::is_same_v<T, UOp>) return v;
  else return literal(a, v);
}
template <class A, class B>
constexpr Arena& arena_of(const A& a, const B& b) {
  if constexpr (std::is_same_v<A, UOp>) return a.arena();
  else return b.arena();
}
}  // namespace detail

#define UOPCG_BINARY_OPERATOR(OP, BUILD)                                                        \
  template <uop_operand A, uop_operand B>                                                       \
    requires(std::same_as<A, UOp> || std::same_as<B, UOp>)                                      \
  constexpr UOp operator OP(const A& a_, const B& b_) {                                         \
    Arena& ar = detail::arena_of(a_, b_);                                                       \
    UOp a = detail::as_uop(ar, a_), b = detail::as_uop(ar, b_);                                  \
    return BUILD;                                                                               \
  }
UOPCG_BINARY_OPERATOR(+, alu(Ops::ADD, a, b))
UOPCG_BINARY_OPERATOR(*, alu(Ops::MUL, a, b))
UOPCG_BINARY_OPERATOR(/, is_float(least_upper_dtype(a.dtype(), b.dtype())) ? alu(Ops::MUL, a, reciprocal(b))
                                                                           : floordiv(a, b))
UOPCG_BINARY_OPERATOR(%, floormod(a, b))
UOPCG_BINARY_OPERATOR(&, alu(Ops::AND, a, b))
UOPCG_BINARY_OPERATOR(|, alu(Ops::OR, a, b))
UOPCG_BINARY_OPERATOR(^, alu(Ops::XOR, a, b))
UOPCG_BINARY_OPERATOR(<<, alu(Ops::SHL, a, b))
UOPCG_BINARY_OPERATOR(>>, alu(Ops::SHR, a, b))
UOPCG_BINARY_OPERATOR(<, alu(Ops::CMPLT, a, b))
UOPCG_BINARY_OPERATOR(>, alu(Ops::CMPLT, b, a))
UOPCG_BINARY_OPERATOR(<=, logical_not(alu(Ops::CMPLT, b, a)))
UOPCG_BINARY_OPERATOR(>=, logical_not(alu(Ops::CMPLT, a, b)))
#undef UOPCG_BINARY_OPERATOR

constexpr UOp operator-(UOp x) { return alu(Ops::MUL, x, literal(x.arena(), -1)); }
/// x - y is ADD(x, MUL(y, -1)); subtracting a number adds its negation.
constexpr UOp operator-(UOp a, UOp b) { return alu(Ops::ADD, a, -b); }
template <class T>
  requires std::is_arithmetic_v<T>
constexpr UOp operator-(UOp a, T b) { return alu(Ops::ADD, a, literal(a.arena(), -b)); }
template <class T>
  requires std::is_arithmetic_v<T>
constexpr UOp operator-(T a, UOp b) { return alu(Ops::ADD, literal(b.arena(), a), -b); }
constexpr UOp operator~(UOp x) { return alu(Ops::XOR, x, literal(x.arena(), -1)); }
/// min(a, b) built from MAX: floats -max(-a, -b), ints ~max(~a, ~b).
constexpr UOp minimum(UOp a, UOp b) {
  if (is_float(least_upper_dtype(a.dtype(), b.dtype()))) return -maximum(-a, -b);
  return ~maximum(~a, ~b);
}

}  // namespace uopcg
