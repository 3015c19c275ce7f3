// Stage 22, "add control flow" (CFGContext + pm_add_control_flow, bottom-up), and stage 23, "number
// params with -1" (pm_number_params, walk).
//
// Stage 22 gives the linearizer a total order of loops. For every END it finds the innermost END
// (or the SINK) whose loop encloses it: the first END, in toposort order, that depends on it and
// whose range it depends on. The ENDs sharing one enclosing parent are siblings; they are ordered
// so that a sibling comes after the siblings it depends on, and each sibling's RANGE gets one
// extra source: the first sibling's RANGE gets the parent's RANGE (it opens inside the parent's
// loop), every later sibling's RANGE gets the END of the sibling before it (it opens after that
// loop closed). Siblings directly under the SINK are only chained to each other.
//
// Stage 23 gives PARAMs created without a slot (slot -1) the slots after the numbered ones, in
// toposort order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../core/text.hpp"
#include "../pattern/pattern.hpp"
#include "target.hpp"

namespace uopcg::codegen {

/// The control-flow edges of a kernel graph: for each RANGE that must open after some other loop
/// node, that node (a RANGE it opens inside of, or the END of the loop it must follow).
class CFGContext {
 public:
  constexpr explicit CFGContext(UOp sink) {
    using enum Ops;
    Arena& a = sink.arena();
    arena_ = &a;
    Arena::scratch_vector<UOp> topo_v(a);
    toposort_into(std::span<const UOp>(&sink, 1), [](UOp) { return true; }, *topo_v);
    const std::vector<UOp>& topo = *topo_v;
    // deps of topo[i]: the RANGE and END nodes it depends on (itself included when it is one), in
    // first-seen order; all the lists in one vector, topo[i]'s at [dep_at[i], dep_at[i + 1])
    std::vector<std::uint32_t> pos(a.size(), no_pos);
    for (std::size_t i = 0; i < topo.size(); ++i) pos[topo[i].id()] = static_cast<std::uint32_t>(i);
    std::vector<node_id> dep_ids;
    std::vector<std::uint32_t> dep_at(topo.size() + 1, 0);
    auto deps_of = [&](std::size_t i) {
      return std::span<const node_id>(dep_ids.data() + dep_at[i], dep_at[i + 1] - dep_at[i]);
    };
    auto has = [](std::span<const node_id> v, node_id id) { return std::find(v.begin(), v.end(), id) != v.end(); };
    std::vector<std::pair<UOp, UOp>> nesting;  // (END, its innermost enclosing END or the SINK), in insertion order
    auto nested = [&](UOp x) {
      for (const auto& [k, v] : nesting)
        if (k == x) return true;
      return false;
    };
    for (std::size_t i = 0; i < topo.size(); ++i) {
      UOp u = topo[i];
      const std::size_t start = dep_ids.size();
      for (UOp s : u.srcs()) {
        const std::size_t p = pos[s.id()];
        for (std::size_t k = dep_at[p]; k < dep_at[p + 1]; ++k) {
          const node_id id = dep_ids[k];  // by value: push_back may reallocate dep_ids
          if (!has(std::span<const node_id>(dep_ids.data() + start, dep_ids.size() - start), id)) dep_ids.push_back(id);
        }
      }
      if (u.op() == END || u.op() == SINK) {
        for (std::size_t k = start; k < dep_ids.size(); ++k) {
          UOp x(&a, dep_ids[k]);
          if (x.op() != END || x.nsrc() < 2 || nested(x)) continue;
          if (u.op() == SINK || (u.nsrc() >= 2 && has(deps_of(pos[x.id()]), u.src(1).id()))) nesting.emplace_back(x, u);
        }
      }
      if (u.op() == RANGE || u.op() == END) dep_ids.push_back(u.id());
      dep_at[i + 1] = static_cast<std::uint32_t>(dep_ids.size());
    }
    // siblings: the ENDs of each parent, parents in first-seen order
    std::vector<std::pair<UOp, std::vector<UOp>>> siblings;
    for (const auto& kv : nesting) {
      const UOp parent = kv.second;
      auto it = std::find_if(siblings.begin(), siblings.end(), [&](const auto& s) { return s.first == parent; });
      if (it == siblings.end()) siblings.push_back({parent, {kv.first}});
      else it->second.push_back(kv.first);
    }
    edge_.assign(a.size(), no_node);
    for (auto& [parent, kids] : siblings) {
      // a sibling that depends on others is scheduled after them (stable: ties keep their order)
      std::vector<std::pair<std::size_t, UOp>> keyed;
      for (UOp x : kids) {
        std::size_t n = 0;
        for (UOp y : kids) n += has(deps_of(pos[x.id()]), y.id()) ? 1 : 0;
        keyed.push_back({n, x});
      }
      for (std::size_t i = 1; i < keyed.size(); ++i)  // stable insertion sort (sibling lists are short)
        for (std::size_t j = i; j > 0 && keyed[j].first < keyed[j - 1].first; --j) std::swap(keyed[j], keyed[j - 1]);
      std::vector<UOp> chain;
      if (parent.op() != SINK) chain.push_back(parent.src(1));
      for (const auto& kv : keyed) chain.push_back(kv.second);
      for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
        UOp x = chain[i], y = chain[i + 1];
        UOp yr = y.src(1);
        if (depends_on(x, yr)) {
          fail("add control flow: ordering ", a.describe(yr.id()), " after ", a.describe(x.id()),
               " would make a cycle (it already depends on that RANGE)");
        }
        edge_[yr.id()] = x.id();
      }
    }
  }

  /// The node the RANGE `r` must follow, if any.
  constexpr std::optional<UOp> edge(UOp r) const {
    if (r.id() >= edge_.size() || edge_[r.id()] == no_node) return std::nullopt;
    return UOp(arena_, edge_[r.id()]);
  }
  /// Number of RANGEs that get an edge.
  constexpr std::size_t size() const {
    std::size_t n = 0;
    for (node_id e : edge_) n += e != no_node ? 1 : 0;
    return n;
  }

 private:
  static constexpr std::uint32_t no_pos = 0xFFFFFFFFu;
  std::vector<node_id> edge_;
  Arena* arena_ = nullptr;
};

/// pm_add_control_flow: a bounded RANGE with an edge gets it as an extra source (unbounded loops,
/// void RANGEs, keep their sources so that they stay recognizable).
inline constexpr auto pm_add_control_flow = pat::rules(pat::rewrite(
    "add control flow edge", pat::op<Ops::RANGE>,
    [](CFGContext& ctx, auto& m) {
      const UOp r = m.root();
      std::vector<UOp> srcs = r.srcs().to_vector();
      srcs.push_back(*ctx.edge(r));
      return r.arena().make(Ops::RANGE, r.dtype(), srcs, r.arg(), r.tag());
    },
    [](CFGContext& ctx, auto& m) { return m.root().dtype() != DType::void_ && ctx.edge(m.root()).has_value(); }));

/// Stage 22: CFGContext of the sink, then pm_add_control_flow bottom-up.
template <class = void>
constexpr UOp add_control_flow(UOp sink, const Target&) {
  CFGContext ctx(sink);
  if (ctx.size() == 0) return sink;
  return pat::graph_rewrite(sink, pm_add_control_flow, ctx, {.bottom_up = true, .name = "add control flow"});
}

namespace detail {
constexpr std::optional<std::int64_t> param_slot(UOp p) {
  if (p.op() != Ops::PARAM || p.arg().kind() != ArgKind::param_arg || !p.arg()[0].is_int()) return std::nullopt;
  return p.arg()[0].as_int();
}
}  // namespace detail

/// pm_number_params: a PARAM with slot -1 takes the next free slot (the context counts them).
inline constexpr auto pm_number_params = pat::rules(pat::rewrite(
    "number param", pat::op<Ops::PARAM>,
    [](std::int64_t& next, auto& m) {
      std::vector<Arg> fields = m.root().arg().items();
      fields[0] = Arg::integer(next++);
      return with_arg(m.root(), Arg::record(ArgKind::param_arg, std::move(fields)));
    },
    [](auto& m) { return detail::param_slot(m.root()) == -1; }));

/// Stage 23: number the PARAMs with slot -1 after the numbered ones, in toposort order (walk).
template <class = void>
constexpr UOp number_params(UOp sink, const Target&) {
  std::int64_t numbered = 0;
  bool any_unnumbered = false;
  for (UOp u : toposort(sink)) {
    auto slot = detail::param_slot(u);
    if (!slot) continue;
    if (*slot != -1) ++numbered;
    else any_unnumbered = true;
  }
  if (!any_unnumbered) return sink;
  return pat::graph_rewrite(sink, pm_number_params, numbered, {.walk = true, .name = "number params with -1"});
}

}  // namespace uopcg::codegen
