// Stage 6, "*** expand broadcast / add loads" (tinygrad/codegen/__init__.py, pm_add_loads): every implicit numpy
// broadcast becomes explicit movement ops (RESHAPE, EXPAND, PERMUTE), a WMMA whose operands have
// different batch shapes becomes one WMMA per batch coordinate, and every memory operand of a value
// op (an address, a view of memory) gets an explicit LOAD.
//
// A BITCAST that changes the shape (a reinterpretation with another element size) is not a value
// consumer: its memory source is left as it is, so the BITCAST stays a view of memory and the LOAD
// is placed on the BITCAST by its own consumer (a wider or narrower load of the same bytes).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../core/print.hpp"
#include "../pattern/pattern.hpp"
#include "../symbolic/mops.hpp"
#include "../symbolic/sets.hpp"
#include "target.hpp"
#include "detail/broadcast.hpp"
#include "detail/helpers.hpp"
#include "detail/vars.hpp"
#include "reduce.hpp"

namespace uopcg::codegen {

// --- shapes and movement ops (tinygrad's movement mixin, as the stages use it) -----------------------

// (the movement helpers themselves, reshape / permute / shape_node, are symbolic::mops's; expand_to and
// broadcast_shape are detail/broadcast.hpp's, which the expander shares)

/// x.index(i...): lane/element selection (a STACK indexed by one constant is that element).
constexpr UOp index_of(UOp x, const std::vector<UOp>& idx) {
  using enum Ops;
  if (x.op() == STACK && idx.size() == 1 && idx[0].op() == CONST && idx[0].arg().kind() == ArgKind::int_) {
    const std::int64_t k = idx[0].arg().as_int();
    if (k >= 0 && static_cast<std::size_t>(k) < x.nsrc()) return x.src(static_cast<std::size_t>(k));
  }
  if (idx.size() < 8) {  // the usual case: the sources on the stack, no allocation
    UOp s[8];
    s[0] = x;
    for (std::size_t k = 0; k < idx.size(); ++k) s[k + 1] = idx[k];
    return x.arena().make(INDEX, x.dtype(), std::span<const UOp>(s, idx.size() + 1));
  }
  std::vector<UOp> s;
  s.reserve(idx.size() + 1);
  s.push_back(x);
  s.insert(s.end(), idx.begin(), idx.end());
  return x.arena().make(INDEX, x.dtype(), s);
}

/// Calls f(multi-index) for every multi-index of `shape` in row-major order.
template <class F>
constexpr void for_each_index(const std::vector<std::int64_t>& shape, F&& f) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<std::int64_t> idx(shape.size(), 0);
  for (std::int64_t k = 0; k < n; ++k) {
    f(idx);
    for (std::size_t a = shape.size(); a-- > 0;) {
      if (++idx[a] < shape[a]) break;
      idx[a] = 0;
    }
  }
}

/// One STACK of the scalars in row-major order, reshaped to `shape`.
constexpr UOp stack_reshaped(Arena& a, const std::vector<UOp>& elems, const std::vector<std::int64_t>& shape) {
  UOp st = make_node(a, Ops::STACK, elems);
  return symbolic::mops::reshape(st, shape);
}

/// symbolic_simple, which includes mop_cleanup as tinygrad's does (the name the stages use).
template <class D = void>
constexpr auto simple_with_mops() {
  return symbolic::symbolic_simple;
}

// --- the stage's functions -------------------------------------------------------------------------

/// Binary / ternary ops and STOREs whose sources have different shapes: every source broadcast
/// explicitly to the common shape.
constexpr std::optional<UOp> expand_broadcast(UOp x) {
  // the common case, read in place: every source has the first one's shape (tried on every ALU
  // node of a kernel; copying the shapes first was ~70 allocations per pipeline run)
  if (x.nsrc() == 0) return std::nullopt;
  const UOp::shape_view first = x.src(0).shape();
  bool same = true;
  for (UOp s : x.srcs()) {
    const UOp::shape_view sh = s.shape();
    if (!sh.has_value()) return std::nullopt;
    same = same && sh.size() == first.size();
    for (std::size_t i = 0; i < sh.size() && same; ++i) same = sh[i] == first[i];
  }
  if (same) return std::nullopt;
  std::vector<std::vector<std::int64_t>> shapes;
  for (UOp s : x.srcs()) shapes.push_back(symbolic::mops::dims(s));
  auto shape = broadcast_shape(shapes);
  if (!shape) fail("expand broadcast: the sources of ", to_string(x), " have incompatible shapes");
  std::vector<UOp> srcs;
  for (UOp s : x.srcs()) srcs.push_back(expand_to(s, *shape));
  return with_srcs(x, srcs);
}

/// A WMMA whose operands' batch shapes (all but the last axis) differ: the operands are broadcast,
/// one WMMA is built per batch coordinate, and the results are stacked back into the batch shape.
constexpr std::optional<UOp> broadcast_and_devec_wmma(UOp b) {
  std::vector<std::vector<std::int64_t>> batch;
  for (UOp s : b.srcs()) {
    auto sh = symbolic::mops::dims(s);
    if (sh.empty()) fail("expand broadcast: WMMA operand ", to_string(s), " has no matrix axis");
    sh.pop_back();
    batch.push_back(sh);
  }
  bool same = true;
  for (const auto& s : batch) same = same && s == batch[0];
  if (same) return std::nullopt;
  auto shape = broadcast_shape(batch);
  if (!shape) fail("expand broadcast: the operands of ", to_string(b), " have incompatible batch shapes");
  Arena& a = b.arena();
  std::vector<UOp> expanded;
  for (UOp s : b.srcs()) {
    auto full = *shape;
    full.push_back(symbolic::mops::dims(s).back());
    expanded.push_back(expand_to(s, full));
  }
  std::vector<UOp> per;
  auto out_shape = symbolic::mops::dims(b);
  std::vector<std::int64_t> bshape(out_shape.begin(), out_shape.end() - 1);
  std::vector<UOp> ic, srcs;  // reused for every element
  for_each_index(bshape, [&](const std::vector<std::int64_t>& idx) {
    ic.clear();
    for (auto i : idx) ic.push_back(literal(a, i));
    srcs.clear();
    for (UOp e : expanded) srcs.push_back(index_of(e, ic));
    per.push_back(with_srcs(b, srcs));
  });
  return stack_reshaped(a, per, out_shape);
}

namespace detail {
inline constexpr auto bcast_v = pat::in<GroupOp::Binary | GroupOp::Ternary | OpSet{Ops::STORE}>.named<"x">();
inline constexpr auto value_op_v = pat::in<GroupOp::Elementwise | OpSet{Ops::REDUCE, Ops::WMMA, Ops::STACK}>.named<"x">();
inline constexpr auto store_v = pat::op<Ops::STORE>.named<"x">();

constexpr bool in_memory(UOp u) {
  auto a = u.addrspace();
  return a && (*a == AddrSpace::GLOBAL || *a == AddrSpace::LOCAL || *a == AddrSpace::REG);
}
constexpr UOp maybe_load(UOp u) { return in_memory(u) ? u.arena().make(Ops::LOAD, u.dtype(), {u}) : u; }
/// A shape-changing BITCAST reinterprets memory: it stays a view, its consumer loads it.
constexpr bool reinterprets_memory(UOp x) {
  return x.op() == Ops::BITCAST && x.nsrc() == 1 && symbolic::mops::dims(x) != symbolic::mops::dims(x.src(0));
}
}  // namespace detail

/// Broadcasts made explicit (tinygrad's pm_expand_broadcast = pm_wmma_add from reduce.hpp + these).
inline constexpr auto pm_expand_broadcast_rules = pat::rules(
    pat::rule("expand broadcast", detail::bcast_v,
            [](auto& m) { return expand_broadcast(m[detail::bcast_v]); }),
    pat::rule("broadcast and devectorize WMMA", detail::wmma,
            [](auto& m) { return broadcast_and_devec_wmma(m[detail::wmma]); }));

/// Explicit LOADs of memory operands.
inline constexpr auto pm_add_loads = [] {
  using namespace detail;
  return pat::rules(
      pat::rewrite("load memory operands", value_op_v, [](auto& m) { return map_srcs(m.root(), maybe_load); },
                   [](auto& m) { return !reinterprets_memory(m.root()) && any_src(m.root(), in_memory); }),
      pat::rewrite("load the stored value", store_v,
                   [](auto& m) {
                     std::vector<UOp> s = m.root().srcs().to_vector();
                     s[1] = maybe_load(s[1]);
                     return with_srcs(m.root(), s);
                   },
                   [](auto& m) { return m.root().nsrc() >= 2 && in_memory(m.root().src(1)); }));
}();

inline constexpr auto pm_expand_broadcast = pm_wmma_add + pm_expand_broadcast_rules;

// The stage's rule set: a variable template, compiled only where the stage runs (stage.hpp).
template <class = void>
inline constexpr auto expand_broadcast_add_loads_rules = simple_with_mops() + pm_expand_broadcast + pm_add_loads;

/// Stage 6 entry point: symbolic_simple + pm_expand_broadcast + pm_add_loads.
template <class = void>
constexpr UOp expand_broadcast_add_loads(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, expand_broadcast_add_loads_rules<>, {.name = "*** expand broadcast / add loads"});
}

}  // namespace uopcg::codegen
