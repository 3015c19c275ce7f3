// Stage 18 "move gates from index" (tinygrad/codegen/late/gater.py): until here a masked access keeps
// its mask in the address, `INDEX(buf, where(gate, idx, Invalid))`; afterwards the gate lives on the
// memory op itself: a gated LOAD `LOAD(addr, alt, gate)` yields `alt` where the gate is false, a
// gated STORE `STORE(addr, value, gate)` does nothing there. A select that picks between a gated
// load and something else under the same gate becomes the load's alternative value.
// (The image forms of tinygrad, two gated coordinates, are not needed for plain OpenCL buffers.)
#pragma once

#include <optional>
#include <vector>

#include "../symbolic/util.hpp"
#include "detail/vars.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {
inline constexpr auto gate = pat::var<"gate">;
inline constexpr auto gate_b = pat::var<"gate">.dtype<DType::bool_>();
inline constexpr auto data = pat::var<"data">;
inline constexpr auto alt = pat::var<"a">;
/// INDEX or SHRINK whose first index is gated: `mop(buf, where(gate, idx, Invalid), ...)`.
inline constexpr auto gated_addr =
    pat::op<Ops::INDEX, Ops::SHRINK>.named<"mop">().any_len(pat::any, pat::where(gate, idx, pat::invalid_const));

/// The address with its gate removed (other indices kept).
constexpr UOp ungated(UOp mop, UOp index) {
  std::vector<UOp> srcs = mop.srcs().to_vector();
  srcs[1] = index;
  return mop.arena().make(mop.op(), mop.dtype(), srcs, mop.arg(), mop.tag());
}
/// A zero of the load's dtype and shape: a CONST for a scalar, a STACK of zeros for a vector.
constexpr UOp zeros_like(UOp l) {
  UOp z = const_like(l, 0);
  const auto shp = l.shape();
  if (!shp.has_value() || shp.size() == 0) return z;
  const std::vector<std::int64_t> dims = shp.to_vector();
  for (std::size_t k = dims.size(); k-- > 0;) {
    std::vector<UOp> lanes(static_cast<std::size_t>(dims[k]), z);
    z = l.arena().make(Ops::STACK, l.dtype(), lanes);
  }
  return z;
}
/// where(gate, LOAD(addr, alt, gate), a) -> LOAD(addr, a, gate) (a cast to the load's dtype), cast
/// to the select's dtype.
constexpr UOp move_where_load(UOp l, UOp a, UOp w) {
  using enum Ops;
  UOp na;
  if (symbolic::is_invalid(a)) na = zeros_like(l);
  else if (a.op() == CAST && a.src(0).dtype() == l.dtype()) na = a.src(0);
  else na = a.dtype() == l.dtype() ? a : cast(a, l.dtype());
  UOp nl = l.arena().make(LOAD, l.dtype(), {l.src(0), na, l.src(2)}, l.arg(), l.tag());
  return nl.dtype() == w.dtype() ? nl : cast(nl, w.dtype());
}
}  // namespace detail

inline constexpr auto pm_move_gates_from_index = [] {
  using namespace detail;
  using enum Ops;
  constexpr auto gated_load = pat::op<LOAD>.named<"l">()(pat::any, pat::any, gate_b);
  constexpr auto gated_load_not = pat::op<LOAD>.named<"l">()(pat::any, pat::any, pat::logical_not(gate_b));
  return pat::rules(
      pat::rule("gated load", pat::op<LOAD>(gated_addr), [](auto& m) {
        UOp l = m.root();
        return m.arena().make(LOAD, l.dtype(), {ungated(get<"mop">(m), m[idx]), zeros_like(l), m[gate]}, l.arg(), l.tag());
      }),
      pat::rule("gated store", pat::op<STORE>(gated_addr, data), [](auto& m) {
        UOp s = m.root();
        return m.arena().make(STORE, s.dtype(), {ungated(get<"mop">(m), m[idx]), m[data], m[gate]}, s.arg(), s.tag());
      }),
      pat::rule("where over a gated load", pat::where(gate, pat::any_of(gated_load, pat::op<CAST>(gated_load)), alt).named<"w">(),
              [](auto& m) { return move_where_load(get<"l">(m), m[alt], get<"w">(m)); }),
      pat::rule("where over a gated load (negated)",
              pat::where(gate, alt, pat::any_of(gated_load_not, pat::op<CAST>(gated_load_not))).named<"w">(),
              [](auto& m) { return move_where_load(get<"l">(m), m[alt], get<"w">(m)); }));
}();

/// Stage 18 ("move gates from index").
template <class = void>
constexpr UOp move_gates_from_index(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, pm_move_gates_from_index, {.name = "move gates from index"});
}

}  // namespace uopcg::codegen
