// The integer arithmetic of a program's indices, gates and loop bounds, evaluated for one work-item
// (symbolic/fold.hpp's eval_alu, so every dtype wraps as the kernel computes it). Values the
// arithmetic cannot know (a LOAD, a kernel variable, a float) are unknown; an Invalid index is the
// gated-off access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "../core/arena.hpp"
#include "../symbolic/fold.hpp"

namespace uopcg::codegen::detail::verifier {

struct ival {
  enum kind_t : std::uint8_t { unknown, known, invalid };
  std::int64_t v = 0;
  kind_t kind = unknown;
  static constexpr ival of(std::int64_t x) { return {x, known}; }
};

constexpr ival from_value(const symbolic::value& x) {
  if (x.kind == symbolic::vkind::invalid) return {0, ival::invalid};
  if (x.kind != symbolic::vkind::num || x.is_float || x.i > INT64_MAX || x.i < INT64_MIN) return {};
  return ival::of(static_cast<std::int64_t>(x.i));
}

constexpr bool integer_like(DType dt) { return is_int(dt) || is_bool(dt) || dt == DType::weakint; }

namespace detail {

// The common integer ops on 32- and 64-bit operands, without the general evaluator's conversions.
constexpr std::optional<ival> fast_alu(Ops op, DType dt, const ival* in, std::size_t n) {
  const bool i32 = dt == DType::int32, i64 = dt == DType::int64;
  if (!(i32 || i64 || dt == DType::bool_) || n < 2) return std::nullopt;
  for (std::size_t k = 0; k < n; ++k)
    if (in[k].kind != ival::known) return std::nullopt;
  const std::int64_t a = in[0].v, b = in[1].v;
  auto wrap = [&](std::uint64_t x) {
    return ival::of(i32 ? static_cast<std::int64_t>(static_cast<std::int32_t>(static_cast<std::uint32_t>(x)))
                        : static_cast<std::int64_t>(x));
  };
  const std::uint64_t ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
  switch (op) {
    case Ops::CMPLT: return ival::of(a < b);
    case Ops::CMPNE: return ival::of(a != b);
    case Ops::CMPEQ: return ival::of(a == b);
    case Ops::WHERE: return n == 3 ? std::optional<ival>(a != 0 ? in[1] : in[2]) : std::nullopt;
    default: break;
  }
  if (dt == DType::bool_) return std::nullopt;
  switch (op) {
    case Ops::ADD: return wrap(ua + ub);
    case Ops::SUB: return wrap(ua - ub);
    case Ops::MUL: return wrap(ua * ub);
    case Ops::AND: return wrap(ua & ub);
    case Ops::OR: return wrap(ua | ub);
    case Ops::XOR: return wrap(ua ^ ub);
    case Ops::MAX: return ival::of(a < b ? b : a);
    case Ops::SHL: case Ops::SHR: {
      if (b < 0 || b >= (i32 ? 32 : 64)) return std::nullopt;
      return op == Ops::SHL ? wrap(ua << b) : ival::of(a >> b);
    }
    default: return std::nullopt;
  }
}

}  // namespace detail

/// Whether u's sources have the dtypes detail::fast_alu assumes (no promotion between them).
constexpr bool fast_alu_applies(UOp u) {
  if (u.nsrc() < 2) return false;
  if (GroupOp::Comparison.contains(u.op())) return u.src(0).dtype() == u.src(1).dtype();
  if (u.op() == Ops::WHERE) return u.nsrc() == 3 && u.src(1).dtype() == u.dtype() && u.src(2).dtype() == u.dtype();
  return u.src(0).dtype() == u.dtype() && (u.op() == Ops::SHL || u.op() == Ops::SHR || u.src(1).dtype() == u.dtype());
}

/// The value of node `u` from the values `in` of its sources: a CONST, CAST or ALU op is computed,
/// anything else is unknown.
constexpr ival compute_from(UOp u, const ival* in) {
  switch (u.op()) {
    case Ops::CONST:
      if (u.arg().is_invalid()) return {0, ival::invalid};
      if (!integer_like(u.dtype())) return {};
      return from_value(symbolic::from_arg(u.arg(), u.dtype()));
    case Ops::CAST: {
      if (u.nsrc() != 1) return {};
      const ival x = in[0];
      if (x.kind == ival::invalid) return x;
      if (x.kind != ival::known || !integer_like(u.dtype()) || !integer_like(u.src(0).dtype())) return {};
      if (u.dtype() == DType::int64 || (u.dtype() == DType::int32 && x.v >= INT32_MIN && x.v <= INT32_MAX)) return x;
      return from_value(symbolic::convert(symbolic::value::integer(x.v), u.dtype()));
    }
    default: break;
  }
  if (!GroupOp::ALU.contains(u.op()) || u.nsrc() == 0 || u.nsrc() > 3 || !integer_like(u.dtype())) return {};
  const std::size_t n = u.nsrc();
  if (fast_alu_applies(u))
    if (std::optional<ival> f = detail::fast_alu(u.op(), u.dtype(), in, n)) return *f;
  symbolic::value vals[3];
  DType dts[3];
  for (std::size_t k = 0; k < n; ++k) {
    vals[k] = in[k].kind == ival::known     ? symbolic::value::integer(in[k].v)
              : in[k].kind == ival::invalid ? symbolic::value::invalid()
                                            : symbolic::value::unknown();
    dts[k] = u.src(k).dtype();
  }
  return from_value(symbolic::eval_alu(u.op(), u.dtype(), std::span<const symbolic::value>(vals, n), std::span<const DType>(dts, n)));
}

/// The value of node `u` computed from its sources, each read through `value_of(src)`.
template <class ValueOf>
constexpr ival compute_node(UOp u, ValueOf&& value_of) {
  ival in[3];
  const std::size_t n = u.nsrc() < 3 ? u.nsrc() : 3;
  if (u.op() != Ops::CONST)
    for (std::size_t k = 0; k < n; ++k) in[k] = value_of(u.src(k));
  return compute_from(u, in);
}

/// The value of the graph of `u`: `leaf(x)` gives a node's value when it knows it (a local id, a
/// loop's iteration, an instruction already run), otherwise the node is computed from its sources.
template <class Leaf>
constexpr ival evaluate(UOp u, Leaf&& leaf, int depth = 0) {
  if (std::optional<ival> x = leaf(u)) return *x;
  if (depth > 512) return {};
  return compute_node(u, [&](UOp s) { return evaluate(s, leaf, depth + 1); });
}

}  // namespace uopcg::codegen::detail::verifier
