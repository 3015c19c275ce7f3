// Stage 1, "postopt symbolic" (tinygrad/codegen/__init__.py, full_rewrite_to_sink): the full symbolic set `sym` plus three
// rule sets of this stage:
//   pm_move_where_on_load — where(cond, INDEX(buf, idx), 0) (also through a CAST, and the mirrored
//                           where(cond, 0, load)) moves the clauses of cond that only depend on the
//                           index's ranges into the index's validity gate (a gated load reads 0);
//   pm_flatten_range      — REDUCE/END list exactly the RANGE nodes their range sources contain;
//   pm_reduce_unparented  — a REDUCE drops the ranges its value does not depend on (ADD scales by
//                           the range's size, MUL raises to it, MAX ignores it).
#pragma once

#include <optional>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "../symbolic/mops.hpp"
#include "../symbolic/sets.hpp"
#include "detail/helpers.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {

/// ((first & x0) & x1) & ...
constexpr UOp and_all(UOp first, const std::vector<UOp>& xs) {
  UOp r = first;
  for (UOp x : xs) r = r.arena().make(Ops::AND, DType::bool_, {r, x});
  return r;
}

/// Moves the clauses of `cond` that may gate the load into the INDEX's validity (tinygrad's
/// where_on_load). `or_cast` is the INDEX itself or a CAST of it.
template <class = void>
constexpr std::optional<UOp> where_on_load(UOp cond, UOp buf, UOp idx, UOp or_cast) {
  using enum Ops;
  std::vector<UOp> where_clauses, in_load;
  symbolic::mops::split_and(cond, where_clauses);
  const UOp load_valid = get_valid(idx);
  symbolic::mops::split_and(load_valid, in_load);
  std::vector<UOp> idx_index;
  for (UOp u : backward_slice_with_self(idx))
    if (u.op() == INDEX) idx_index.push_back(u);
  const auto idx_ranges = ranges(idx);
  // a clause can move when its ranges are the index's and it reads no other (data-dependent) INDEX
  auto can_move = [&](UOp c) {
    for (UOp r : ranges(c))
      if (!contains(idx_ranges, r)) return false;
    for (UOp u : backward_slice_with_self(c))
      if (u.op() == INDEX && !contains(idx_index, u)) return false;
    return true;
  };
  std::vector<UOp> moved, keep;
  for (UOp c : where_clauses) {
    if (contains(in_load, c)) continue;
    (can_move(c) ? moved : keep).push_back(c);
  }
  if (keep.size() == where_clauses.size()) return std::nullopt;
  UOp gated = symbolic::mops::index(buf, std::vector<UOp>{valid(get_idx(idx), and_all(load_valid, moved))});
  UOp ret_idx = or_cast.op() == CAST ? cast(gated, or_cast.dtype()) : gated;
  return where(and_all(literal(cond.arena(), true), keep), ret_idx, const_like(ret_idx, 0));
}

/// The RANGEs inside a REDUCE/END's range sources, in toposort order; trailing non-RANGE bool/void
/// sources (loop back-edges) are kept at the end.
/// The RANGE nodes of `roots` in toposort order, not looking into a RANGE's size: the ranges that
/// size a triangular or data-dependent loop enclose it and are not closed with it (tinygrad lists
/// them too, and a REDUCE sized by a LOCAL range then reduced over it).
constexpr void listed_ranges(std::span<const UOp> roots, std::vector<UOp>& out) {
  if (roots.empty()) return;
  Arena& a = roots[0].arena();
  const std::uint32_t epoch = a.new_epoch();
  Arena::scratch_vector<uopcg::detail::walk_frame> stack_v(a);
  auto& stack = *stack_v;
  for (UOp r : roots) {
    if (!a.mark(r.id(), epoch)) continue;
    stack.push_back({r.id(), 0, 0});
    while (!stack.empty()) {
      uopcg::detail::walk_frame& f = stack.back();
      if (a.raw(f.n).op != Ops::RANGE && f.aux < a.raw(f.n).nsrc) {
        const node_id c = a.src_ids(f.n)[f.aux++];
        if (a.mark(c, epoch)) stack.push_back({c, 0, 0});
      } else {
        if (a.raw(f.n).op == Ops::RANGE) out.push_back(UOp(&a, f.n));
        stack.pop_back();
      }
    }
  }
}

constexpr std::optional<UOp> flatten_range(UOp r) {
  using enum Ops;
  using enum DType;
  if (r.nsrc() < 2) return std::nullopt;
  std::vector<UOp> rngs, tail;
  for (std::size_t i = 1; i < r.nsrc(); ++i) {
    UOp s = r.src(i);
    if (s.op() != RANGE && (s.dtype() == bool_ || s.dtype() == void_)) tail.push_back(s);
    else rngs.push_back(s);
  }
  std::vector<UOp> srcs{r.src(0)};
  if (!rngs.empty()) listed_ranges(std::span<const UOp>(rngs.data(), rngs.size()), srcs);
  if (r.op() == REDUCE) {
    // a work-item range that sizes another range of the REDUCE encloses it: tinygrad's own
    // flatten_range lists it (`r < lidx+1` gives REDUCE(x, r, lidx)) and its lowering reduces per
    // work-item; taken as a reduce across work-items (P15) it would sum every work-item's rows
    for (std::size_t i = 1; i < srcs.size();) {
      const auto t = range_axis(srcs[i]);
      bool sizes = false;
      if (t == AxisType::LOCAL || t == AxisType::WARP)
        for (std::size_t j = 1; j < srcs.size() && !sizes; ++j)
          sizes = j != i && srcs[j].nsrc() > 0 && srcs[j].src(0).op() != CONST && depends_on(srcs[j].src(0), srcs[i]);
      if (sizes) srcs.erase(srcs.begin() + static_cast<std::ptrdiff_t>(i));
      else ++i;
    }
  }
  srcs.insert(srcs.end(), tail.begin(), tail.end());
  UOp out = with_srcs(r, srcs);
  if (out == r) return std::nullopt;
  return out;
}

/// Drops the ranges a REDUCE's value does not depend on (tinygrad's reduce_unparented).
constexpr std::optional<UOp> reduce_unparented(UOp red) {
  using enum Ops;
  const Arg& arg = red.arg();
  if (!arg.is_tuple() || arg.size() < 2 || arg[0].kind() != ArgKind::op) return std::nullopt;
  const Ops op = arg[0].as_op();
  if (op != ADD && op != MAX && op != MUL) return std::nullopt;
  const auto value_ranges = ranges(red.src(0));
  std::vector<UOp> parented, unparented;
  for (std::size_t i = 1; i < red.nsrc(); ++i) {
    UOp r = red.src(i);
    if (r.op() != RANGE) return std::nullopt;  // not flattened yet
    (contains(value_ranges, r) ? parented : unparented).push_back(r);
  }
  if (unparented.empty()) return std::nullopt;
  const bool horizontal = arg[1].kind() == ArgKind::int_ && arg[1].as_int() != 0;
  UOp ret = red.src(0);
  if (!parented.empty() || red.dtype() != red.src(0).dtype() || horizontal) {
    std::vector<UOp> s{red.src(0)};
    s.insert(s.end(), parented.begin(), parented.end());
    ret = red.arena().make(REDUCE, red.dtype(), s, red.arg(), red.tag());
  }
  for (UOp r : unparented) {
    UOp n = r.src(0).dtype() == ret.dtype() ? r.src(0) : cast(r.src(0), ret.dtype());
    if (op == ADD) ret = ret * n;
    else if (op == MUL) ret = alu(POW, ret, n);
  }
  return ret;
}

}  // namespace detail

/// where(c, load, 0) / where(c, 0, load): movable clauses of c become the load's gate.
inline constexpr auto pm_move_where_on_load = [] {
  using enum Ops;
  constexpr auto load = pat::or_casted<"or_cast">(pat::op<INDEX>(pat::var<"buf">, pat::var<"idx">));
  return pat::rules(
      pat::rule("where on load", pat::where(pat::var<"cond">, load, pat::const_<0>), [](auto& m) {
        return detail::where_on_load(get<"cond">(m), get<"buf">(m), get<"idx">(m), get<"or_cast">(m));
      }),
      pat::rule("where on load (mirrored)", pat::where(pat::var<"cond">, pat::const_<0>, load), [](auto& m) {
        return detail::where_on_load(logical_not(get<"cond">(m)), get<"buf">(m), get<"idx">(m), get<"or_cast">(m));
      }));
}();

/// REDUCE/END list the RANGE nodes of their range sources.
inline constexpr auto pm_flatten_range =
    pat::rules(pat::rule("flatten range", pat::op<Ops::REDUCE, Ops::END>, [](auto& m) { return detail::flatten_range(m.root()); }));

/// A REDUCE drops the ranges its value does not depend on.
inline constexpr auto pm_reduce_unparented = pat::rules(
    pat::rule("reduce unparented", pat::op<Ops::REDUCE>, [](auto& m) { return detail::reduce_unparented(m.root()); }));

/// The matcher of stage 1.
inline constexpr auto pm_postopt_symbolic = symbolic::sym + pm_move_where_on_load + pm_flatten_range + pm_reduce_unparented;

/// Stage 1 entry point: "postopt symbolic".
template <class = void>
constexpr UOp postopt_symbolic(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, pm_postopt_symbolic, {.name = "postopt symbolic"});
}

}  // namespace uopcg::codegen
