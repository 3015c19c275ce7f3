// Front stage d, "split ranges" (tinygrad/codegen/simplify.py, pm_split_ranges + pm_flatten_range):
// a range that the kernel uses as `r % c` is split into a high part of size S/c and a low part of
// size c (`r = hi*c + lo`), so that the opts see two independent axes and the `%`, `//` fold away.
//   mark range mod — an integer FLOORMOD(RANGE r, CONST c) marks r with c when c > 1 divides r's
//                    constant size and r is not a WARP/DEVICE axis; the first divisor seen wins;
//   split marked   — at the SINK, which a children-first rewrite reaches after every node below it,
//                    every marked range is substituted and the graph simplified with `symbolic`.
// The parts keep the range's id and type and add a part number before the type: (id, 0, T) is the
// high part, (id, 1, T) the low one.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "../symbolic/sets.hpp"
#include "detail/helpers.hpp"
#include "detail/vars.hpp"
#include "postopt.hpp"
#include "target.hpp"

namespace uopcg::codegen {

/// The context of "split ranges": the marked ranges with their divisor, in the order marked.
struct SplitRangesContext {
  std::vector<std::pair<UOp, UOp>> marks;  // RANGE -> CONST divisor

  constexpr bool marked(UOp r) const {
    for (const auto& [k, c] : marks)
      if (k == r) return true;
    return false;
  }
};

namespace detail {

/// r's arg with `part` inserted before the axis type: (id, T) -> (id, part, T).
constexpr Arg part_arg(UOp r, std::int64_t part) {
  std::vector<Arg> items(r.arg().items().begin(), r.arg().items().end() - 1);
  items.push_back(Arg(part));
  items.push_back(r.arg()[r.arg().size() - 1]);
  return Arg::tuple(std::move(items));
}

/// tinygrad's mark_range_mod on `r % c`.
constexpr void mark_range_mod(SplitRangesContext& ctx, UOp mod) {
  const UOp r = mod.src(0), c = mod.src(1);
  const auto t = range_axis(r);
  if (!t || *t == AxisType::WARP || *t == AxisType::DEVICE || ctx.marked(r) || !is_int(mod.dtype())) return;
  UOp size = r.src(0);
  if (size.op() != Ops::CONST || !size.arg().is_int() || !c.arg().is_int()) return;
  const std::int64_t s = size.arg().as_int(), d = c.arg().as_int();
  // a divisor of 1 or below splits nothing (tinygrad splits off a size-1 part that folds away)
  if (d <= 1 || s % d != 0) return;
  // `r % S` for r's own size S splits r into a size-1 part and a renamed copy (tinygrad does, and a
  // hand-written AST may hold it); a copy still under a `% S` that no rule folds (a uchar FLOORMOD)
  // would be split again at every visit until memory runs out, so a low part is not split by S
  const Arg& a = r.arg();
  if (d == s && a.size() >= 3 && a[a.size() - 2].is_int() && a[a.size() - 2].as_int() == 1) return;
  ctx.marks.emplace_back(r, c);
}

/// r -> hi*c + lo for every marked range, then `symbolic`; nullopt when nothing changed.
template <class = void>
std::optional<UOp> split_marked(SplitRangesContext& ctx, UOp sink) {
  using enum Ops;
  if (ctx.marks.empty()) return std::nullopt;
  Arena& a = sink.arena();
  std::vector<std::pair<UOp, UOp>> sub;
  for (const auto& [r, c] : ctx.marks) {
    UOp hi_size = a.make(FLOORDIV, r.src(0).dtype(), {r.src(0), c});
    UOp hi = a.make(RANGE, r.dtype(), {hi_size}, part_arg(r, 0), r.tag());
    UOp lo = a.make(RANGE, r.dtype(), {c}, part_arg(r, 1), r.tag());
    sub.emplace_back(r, hi * c + lo);
  }
  ctx.marks.clear();
  UOp out = substitute(sink, sub);
  if (out == sink) return std::nullopt;
  return pat::graph_rewrite(out, symbolic::symbolic, {.name = "split ranges: simplify"});
}

}  // namespace detail

/// Marks `r % c`, splits the marked ranges at the SINK.
inline constexpr auto pm_split_ranges = [] {
  using namespace detail;
  using enum Ops;
  return pat::rules(
      pat::rule("mark range mod", pat::op<RANGE> % c, recorder<SplitRangesContext>(mark_range_mod)),
      pat::rule("split marked ranges", pat::op<SINK>, [](SplitRangesContext& ctx, auto& m) { return split_marked(ctx, m.root()); }));
}();

/// Stage d entry point: "split ranges".
template <class = void>
UOp split_ranges(UOp sink, const Target&) {
  SplitRangesContext ctx;
  static constexpr auto rules = pm_split_ranges + pm_flatten_range;
  // "the first divisor seen wins": tinygrad's visiting order decides
  return pat::graph_rewrite(sink, rules, ctx, {.name = "split ranges", .ordered = true});
}

}  // namespace uopcg::codegen
