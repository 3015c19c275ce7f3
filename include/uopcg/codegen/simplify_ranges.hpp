// Front stage f, "simplify ranges" (tinygrad/codegen/simplify.py, pm_flatten_range +
// pm_simplify_ranges): the last rewrite before the opts.
//   merge adjacent — two ranges an END closes side by side (a REDUCE: any two of its ranges) of the
//                    same type, inside the same REDUCEs, become one range of the product size when
//                    that does not add FLOORDIV/FLOORMOD nodes (`r0*64 + r1` over 64x64 becomes one
//                    range of 4096; ties accept the merge);
//   shrink gated   — a range every INDEX uses only under a gate `r < c` shrinks to the largest such
//                    c (a use without that gate, or a REDUCE over it, pins the full size); applied
//                    at the SINK.
// The input must be in `sym`'s normal form (stage e): the merge test counts divisions.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "../symbolic/sets.hpp"
#include "detail/helpers.hpp"
#include "postopt.hpp"
#include "target.hpp"

namespace uopcg::codegen {

/// The context of "simplify ranges": each range's size to use at the SINK, in the order first set.
struct SimplifyRangesContext {
  std::vector<std::pair<UOp, UOp>> sizes;  // RANGE -> size (a CONST, or the range's own size)

  constexpr std::pair<UOp, UOp>* find(UOp r) {
    for (auto& e : sizes)
      if (e.first == r) return &e;
    return nullptr;
  }
  constexpr void set(UOp r, UOp size) {
    if (auto* e = find(r)) e->second = size;
    else sizes.emplace_back(r, size);
  }
};

namespace detail {

/// FLOORDIV and FLOORMOD nodes below u (u itself not counted).
constexpr std::size_t count_divmod(UOp u) {
  using enum Ops;
  std::size_t n = 0;
  for (node_id id : backward_slice_ids(u)) {
    const Ops op = u.arena().raw(id).op;
    n += op == FLOORDIV || op == FLOORMOD;
  }
  return n;
}

constexpr const Arg& axis_of(UOp r) { return r.arg()[r.arg().size() - 1]; }

/// tinygrad's simplify_merge_adjacent on an END or REDUCE `u`; nullopt when nothing merged.
template <class = void>
std::optional<UOp> merge_adjacent(UOp u) {
  using enum Ops;
  std::vector<UOp> ended;
  for (std::size_t i = 1; i < u.nsrc(); ++i) {
    if (u.src(i).op() != RANGE || !u.src(i).arg().is_tuple() || u.src(i).arg().size() < 2) return std::nullopt;
    ended.push_back(u.src(i));
  }
  std::vector<std::vector<UOp>> reduce_ranges;
  for (UOp x : backward_slice_with_self(u))
    if (x.op() == REDUCE) reduce_ranges.push_back(ranges(x));
  // the pairs come from the original node: an END merges neighbours, a REDUCE any ordered pair
  std::vector<std::pair<UOp, UOp>> pairs;
  for (std::size_t i = 0; i < ended.size(); ++i)
    for (std::size_t j = 0; j < ended.size(); ++j)
      if (u.op() == END ? j == i + 1 : i != j) pairs.emplace_back(ended[i], ended[j]);
  const UOp orig = u;
  for (const auto& [r0, r1] : pairs) {
    if (axis_of(r0) != axis_of(r1)) continue;
    bool same_reduces = true;
    for (const auto& rs : reduce_ranges)
      same_reduces &= detail::contains(rs, r0) == detail::contains(rs, r1);
    if (!same_reduces) continue;
    UOp s0 = r0.src(0), s1 = r1.src(0);
    // a loop sized by the other (a triangle) is no product of two sizes
    if (depends_on(s0, r1) || depends_on(s1, r0)) continue;
    UOp merged = r0.arena().make(RANGE, r0.dtype(), {s0 * s1}, r0.arg(), r0.tag());
    UOp candidate = substitute(u, {{r0, floordiv(merged, s1)}, {r1, floormod(merged, s1)}});
    static constexpr auto rules = symbolic::symbolic + pm_flatten_range;
    candidate = pat::graph_rewrite(candidate, rules, {.name = "simplify ranges: check merge"});
    if (count_divmod(candidate) <= count_divmod(u)) u = candidate;
  }
  if (u == orig) return std::nullopt;
  return u;
}

/// tinygrad's mark_gated: the ranges of an INDEX's address, with the guards `r < c` of its gate.
constexpr void mark_gated(SimplifyRangesContext& ctx, UOp idx) {
  using enum Ops;
  UOp x = idx;
  std::vector<std::pair<UOp, UOp>> guards;  // RANGE -> CONST bound; a later clause on r replaces it
  if (idx.nsrc() > 1 && idx.src(1).op() == WHERE) {
    x = detail::get_idx(idx.src(1));
    std::vector<UOp> clauses;
    symbolic::mops::split_and(detail::get_valid(idx.src(1)), clauses);
    for (UOp v : clauses) {
      if (v.op() != CMPLT || v.src(0).op() != RANGE || v.src(1).op() != CONST) continue;
      bool replaced = false;
      for (auto& g : guards)
        if (g.first == v.src(0)) g.second = v.src(1), replaced = true;
      if (!replaced) guards.emplace_back(v.src(0), v.src(1));
    }
  }
  for (const auto& [r, c] : guards) {
    auto* e = ctx.find(r);
    // the largest guard wins; a size that is not a constant is never replaced by a guard
    if (!e) ctx.set(r, c);
    else if (e->second.op() == CONST && symbolic::cval(e->second) < symbolic::cval(c)) e->second = c;
  }
  for (UOp r : ranges(x)) {
    bool guarded = false;
    for (const auto& g : guards) guarded |= g.first == r;
    if (!guarded) ctx.set(r, r.src(0));  // an ungated use pins the full size
  }
}

/// A REDUCE's ranges keep their full size.
constexpr void keep_reduce_sizes(SimplifyRangesContext& ctx, UOp red) {
  for (std::size_t i = 1; i < red.nsrc(); ++i)
    if (red.src(i).nsrc() > 0) ctx.set(red.src(i), red.src(i).src(0));
}

/// Every range of the context resized, then `symbolic`; nullopt when nothing changed.
template <class = void>
std::optional<UOp> resize_ranges(SimplifyRangesContext& ctx, UOp sink) {
  std::vector<std::pair<UOp, UOp>> sub;
  for (const auto& [r, size] : ctx.sizes) sub.emplace_back(r, with_srcs(r, {size}));
  ctx.sizes.clear();
  UOp out = substitute(sink, sub);
  if (out == sink) return std::nullopt;
  return pat::graph_rewrite(out, symbolic::symbolic, {.name = "simplify ranges: simplify"});
}

}  // namespace detail

/// Merge adjacent ranges; collect each range's size from the INDEX gates and REDUCEs; resize at
/// the SINK.
inline constexpr auto pm_simplify_ranges = [] {
  using namespace detail;
  using enum Ops;
  return pat::rules(
      pat::rule("merge adjacent ranges", pat::op<END, REDUCE>, [](auto& m) { return merge_adjacent(m.root()); }),
      pat::rule("mark gated ranges", pat::op<INDEX>, recorder<SimplifyRangesContext>(mark_gated)),
      pat::rule("reduce ranges keep their size", pat::op<REDUCE>, recorder<SimplifyRangesContext>(keep_reduce_sizes)),
      pat::rule("resize ranges", pat::op<SINK>, [](SimplifyRangesContext& ctx, auto& m) { return resize_ranges(ctx, m.root()); }));
}();

/// Stage f entry point: "simplify ranges".
template <class = void>
UOp simplify_ranges(UOp sink, const Target&) {
  SimplifyRangesContext ctx;
  static constexpr auto rules = pm_flatten_range + pm_simplify_ranges;
  return pat::graph_rewrite(sink, rules, ctx, {.name = "simplify ranges", .ordered = true});
}

}  // namespace uopcg::codegen
