// Stage 7, "devectorize2" (tinygrad/codegen/__init__.py, devectorizer2): every shaped value is split into scalars.
// An elementwise op, LOAD or STORE of shape S becomes one scalar node per element of S (row-major),
// each over `src.index(c...)` of its sources; values are re-assembled as RESHAPE(STACK(...), S),
// stores as a GROUP. Together with mop_cleanup (INDEX(STACK, c) is the element) and pm_mops (an
// INDEX through a RESHAPE/PERMUTE/EXPAND view becomes index arithmetic), the shaped graph collapses
// to scalar loads, stores and ALU ops over scalar weakint index expressions.
//
// do_devectorize refuses a node whose sources do not all have its shape (a broadcast that stage 6
// did not unpack); Invalid, which matches any shape, is passed through as the scalar constant.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "../symbolic/indexing.hpp"
#include "../symbolic/mops.hpp"
#include "../symbolic/sets.hpp"
#include "add_loads.hpp"
#include "detail/vars.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {
/// tinygrad's UOp.base: through movement ops to the viewed node.
constexpr UOp base_of(UOp x) {
  while (GroupOp::Movement.contains(x.op()) && x.nsrc() > 0) x = x.src(0);
  return x;
}
constexpr bool is_invalid_base(UOp x) {
  UOp b = base_of(x);
  return b.op() == Ops::CONST && b.arg().is_invalid();
}
}  // namespace detail

/// One scalar node per element of b's shape; nullopt for scalars and for nodes with a source of
/// another shape (an unpacked broadcast) that is not Invalid.
constexpr std::optional<UOp> do_devectorize(UOp b) {
  using enum Ops;
  using enum DType;
  if (!b.shape().has_value() || b.shape().size() == 0) return std::nullopt;
  const std::vector<std::int64_t> shape = symbolic::mops::dims(b);
  auto same_shape = [&](UOp x) {  // x's shape is `shape` (compared in place)
    const auto s = x.shape();
    if (!s.has_value() || s.size() != shape.size()) return false;
    for (std::size_t k = 0; k < shape.size(); ++k)
      if (s[k] != shape[k]) return false;
    return true;
  };
  for (UOp x : b.srcs())
    if (!same_shape(x) && !detail::is_invalid_base(x)) return std::nullopt;
  Arena& a = b.arena();
  // the index constants, each looked up once (not once per element and axis), at its first use so
  // that nodes are created in the same order as before
  std::int64_t widest = 0;
  for (auto d : shape) widest = d > widest ? d : widest;
  Arena::scratch_vector<UOp> lits_v(a), srcs_v(a), ic_v(a);  // pooled: reused for every element
  std::vector<UOp>&lits = *lits_v, &srcs = *srcs_v, &ic = *ic_v;
  lits.assign(static_cast<std::size_t>(widest), UOp());
  std::vector<UOp> elems;
  const std::uint32_t arg = a.raw(b.id()).arg, tag = a.tag_id(b.id());
  for_each_index(shape, [&](const std::vector<std::int64_t>& idx) {
    ic.clear();
    for (auto i : idx) {
      UOp& l = lits[static_cast<std::size_t>(i)];
      if (!l.valid()) l = literal(a, i);
      ic.push_back(l);
    }
    srcs.clear();
    for (UOp x : b.srcs()) srcs.push_back(detail::is_invalid_base(x) ? detail::base_of(x) : index_of(x, ic));
    elems.push_back(a.make_raw(b.op(), derive_dtype(b.op(), srcs, b.arg()), srcs, arg, tag));
  });
  if (b.op() == STORE) return elems.size() == 1 ? elems[0] : a.make(GROUP, void_, elems);
  return stack_reshaped(a, elems, shape);
}

/// A WMMA whose operands are not all STACKs (or WMMAs): each other operand becomes the 1-D STACK
/// of its elements.
constexpr std::optional<UOp> do_stack_wmma(UOp u) {
  using enum Ops;
  bool all = true;
  for (UOp x : u.srcs()) all = all && (x.op() == STACK || x.op() == WMMA);
  if (all) return std::nullopt;
  if (u.shape().size() != 1) fail("devectorize2: WMMA ", to_string(u), " is not one-dimensional");
  Arena& a = u.arena();
  std::vector<UOp> srcs;
  for (UOp b : u.srcs()) {
    if (b.op() == STACK) {
      srcs.push_back(b);
      continue;
    }
    std::int64_t n = b.shape().has_value() ? b.shape().numel() : 1;
    std::vector<UOp> lanes;
    for (std::int64_t i = 0; i < n; ++i) lanes.push_back(index_of(b, {literal(a, i)}));
    srcs.push_back(make_node(a, STACK, lanes));
  }
  return with_srcs(u, srcs);
}

namespace detail {
inline constexpr auto ew_v = pat::in<GroupOp::Elementwise>.named<"b">();
inline constexpr auto ew_mem_v = pat::in<GroupOp::Elementwise | OpSet{Ops::LOAD, Ops::STORE}>.named<"b">();
inline constexpr auto buffer_v = pat::op<Ops::PARAM, Ops::BUFFER>.named<"buf">();
inline constexpr auto stack_v = pat::op<Ops::STACK>.named<"s">();
inline constexpr auto reshape_v = pat::op<Ops::RESHAPE>.named<"s">();
constexpr bool is_scalar(UOp x) { return x.shape().has_value() && x.shape().size() == 0; }
}  // namespace detail

/// The lane rules of devectorizer2 (tinygrad's devectorizer2 without mop_cleanup and pm_mops).
inline constexpr auto devectorizer2_rules = [] {
  using namespace detail;
  using enum Ops;
  return pat::rules(
      pat::rule("devectorize", ew_mem_v, [](auto& m) { return do_devectorize(m.root()); }),
      pat::rewrite("INDEX without index", pat::op<INDEX>(x), x),
      pat::rule("unpack WMMA", wmma, [](auto& m) { return do_stack_wmma(m.root()); }),
      pat::rule("stacked INDEX is many INDEX", pat::op<INDEX>(buffer_v, stack_v), [](auto& m) {
        std::vector<UOp> lanes;
        for (UOp u : m[stack_v].srcs()) lanes.push_back(index_of(m[buffer_v], {u}));
        return make_node(m.arena(), STACK, lanes);
      }),
      pat::rule("INDEX into RESHAPE moves the RESHAPE", pat::op<INDEX>(buffer_v, reshape_v), [](auto& m) {
        return symbolic::mops::reshape(index_of(m[buffer_v], {m[reshape_v].src(0)}), symbolic::mops::dims(m[reshape_v]));
      }),
      pat::rule("RESHAPE of a statement", pat::op<RESHAPE>.dtype<DType::void_>(), [](auto& m) { return m.root().src(0); }),
      pat::rewrite("RESHAPE of one element to a scalar", pat::op<RESHAPE>,
                   [](auto& m) { return index_of(m.root().src(0), {literal(m.arena(), 0)}); },
                   [](auto& m) { return is_scalar(m.root()) && m.root().src(0).shape() == std::initializer_list<std::int64_t>{1}; }),
      pat::rewrite("EXPAND of a scalar is a STACK", pat::op<EXPAND>(x, pat::any),
                   [](auto& m) {
                     return make_node(m.arena(), STACK, std::vector<UOp>(static_cast<std::size_t>(m.root().shape()[0]), m[x]));
                   },
                   [](auto& m) { return is_scalar(m[x]) && m.root().shape().size() == 1 && m.root().shape()[0] >= 1; }));
}();

/// Remaining shaped elementwise ops made scalar (used by "add images").
inline constexpr auto ew_devectorizer =
    pat::rules(pat::rule("devectorize elementwise", detail::ew_v, [](auto& m) { return do_devectorize(m.root()); }));

// The stage's rule set: a variable template, compiled only where the stage runs (stage.hpp).
template <class = void>
inline constexpr auto devectorize2_rules = simple_with_mops() + symbolic::pm_mops + devectorizer2_rules + symbolic::indexing_simplify;

/// Stage 7 entry point: symbolic_simple + devectorizer2 (mop_cleanup + pm_mops + the lane rules) +
/// indexing_simplify.
template <class = void>
constexpr UOp devectorize2(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, devectorize2_rules<>, {.name = "devectorize2"});
}

}  // namespace uopcg::codegen
