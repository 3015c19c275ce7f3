// The integer arithmetic of a program's indices, gates and loop bounds, evaluated for one work-item
// (symbolic/fold.hpp's eval_alu, so every dtype wraps as the kernel computes it). Values the
// arithmetic cannot know (a LOAD, a kernel variable, a float) are unknown; an Invalid index is the
// gated-off access.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "../core/arena.hpp"
#include "../symbolic/fold.hpp"

namespace uopcg::codegen::barrier_detail {

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

/// The value of node `u` computed from its sources, each read through `value_of(src)`; a CONST,
/// CAST or ALU op is computed, anything else is unknown.
template <class ValueOf>
constexpr ival compute_node(UOp u, ValueOf&& value_of) {
  switch (u.op()) {
    case Ops::CONST:
      if (u.arg().is_invalid()) return {0, ival::invalid};
      if (!integer_like(u.dtype())) return {};
      return from_value(symbolic::from_arg(u.arg(), u.dtype()));
    case Ops::CAST: {
      if (u.nsrc() != 1) return {};
      const ival x = value_of(u.src(0));
      if (x.kind == ival::invalid) return x;
      if (x.kind != ival::known || !integer_like(u.dtype()) || !integer_like(u.src(0).dtype())) return {};
      return from_value(symbolic::convert(symbolic::value::integer(x.v), u.dtype()));
    }
    default: break;
  }
  if (!GroupOp::ALU.contains(u.op()) || u.nsrc() == 0 || u.nsrc() > 3 || !integer_like(u.dtype())) return {};
  symbolic::value in[3];
  DType dts[3];
  for (std::size_t k = 0; k < u.nsrc(); ++k) {
    const ival x = value_of(u.src(k));
    in[k] = x.kind == ival::known     ? symbolic::value::integer(x.v)
            : x.kind == ival::invalid ? symbolic::value::invalid()
                                      : symbolic::value::unknown();
    dts[k] = u.src(k).dtype();
  }
  return from_value(symbolic::eval_alu(u.op(), u.dtype(), std::span<const symbolic::value>(in, u.nsrc()),
                                       std::span<const DType>(dts, u.nsrc())));
}

/// The value of the graph of `u`: `leaf(x)` gives a node's value when it knows it (a local id, a
/// loop's iteration, an instruction already run), otherwise the node is computed from its sources.
template <class Leaf>
constexpr ival evaluate(UOp u, Leaf&& leaf, int depth = 0) {
  if (std::optional<ival> x = leaf(u)) return *x;
  if (depth > 512) return {};
  return compute_node(u, [&](UOp s) { return evaluate(s, leaf, depth + 1); });
}

}  // namespace uopcg::codegen::barrier_detail
