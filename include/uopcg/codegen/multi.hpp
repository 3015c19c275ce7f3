// Front stage a, "multi_pm" (tinygrad/schedule/multi.py, multi_pm), for the UNSHARDs a kernel can
// hold: UNSHARD(x, r...) is the whole tile of which x is the part owned by the value of each
// sharding range r (a LOCAL thread range and its per-thread REG fragment, say). The stage pushes
// the UNSHARD outwards until an INDEX resolves it to the owner's part:
//   INDEX   — an index `r*n + i` (contiguous ownership) or `r + k*n` (strided) on a sharded axis of
//             part size n becomes the index i / k into the part;
//   ALU, STACK, CAST, BITCAST, AFTER, STORE into a tile — applied to the parts when every UNSHARD
//             source has the same sharding (the other sources of an ALU or STORE must be scalars);
//   RESHAPE, EXPAND, PERMUTE, FLIP — applied to the part, the sharded axes renumbered; a SHRINK
//             to the owner's own part (or keeping a sharded axis whole) resolves or keeps it.
// What needs more than one device (a sharded PARAM, COPY, ALLREDUCE, a REDUCE or PAD of a tile,
// resharding, a per-part view of an unsharded tile) is an error naming the node, and so is an
// UNSHARD still left when the stage ends. A kernel without UNSHARD is returned unchanged.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "../symbolic/mops.hpp"
#include "../symbolic/sets.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {

/// One sharded axis of an UNSHARD: the axis and the range whose value owns a part of it.
struct shard {
  std::int64_t axis;
  UOp rng;
  friend constexpr bool operator==(const shard&, const shard&) = default;
};

template <class = void>
[[noreturn]] constexpr void unsupported(UOp u, std::string_view why) {
  fail("multi_pm: ", u.arena().describe(u.id()), ": ", why);
}

/// The sharded axes of an UNSHARD (empty for any other node).
constexpr std::vector<shard> sharding(UOp u) {
  std::vector<shard> out;
  if (u.op() != Ops::UNSHARD) return out;
  const Arg& a = u.arg();
  if (!a.is_tuple() || a.size() + 1 != u.nsrc()) unsupported(u, "an UNSHARD needs one sharding range per sharded axis");
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_int()) unsupported(u, "an UNSHARD's axes must be integers");
    out.push_back({a[i].as_int(), u.src(i + 1)});
  }
  return out;
}
/// How many parts a sharding range makes.
constexpr std::int64_t parts(UOp rng) { return rng.vmax() + 1; }
/// The shape of u, an UNSHARD counting as the whole tile (its part's dims times the parts).
constexpr std::vector<std::int64_t> full_shape(UOp u) {
  if (!u.shape().has_value()) unsupported(u, "has no shape");
  std::vector<std::int64_t> s = u.shape().to_vector();
  for (const shard& sh : sharding(u)) {
    if (sh.axis < 0 || static_cast<std::size_t>(sh.axis) >= s.size()) unsupported(u, "shards an axis its value does not have");
    s[static_cast<std::size_t>(sh.axis)] *= parts(sh.rng);
  }
  return s;
}
/// UNSHARD(x, ranges...) over the given shards, sorted by axis (tinygrad's UOp.unshard).
constexpr UOp unshard(UOp x, std::vector<shard> shards) {
  if (shards.empty()) return x;
  std::sort(shards.begin(), shards.end(), [](const shard& a, const shard& b) { return a.axis < b.axis; });
  std::vector<UOp> srcs{x};
  std::vector<Arg> axes;
  for (const shard& s : shards) {
    srcs.push_back(s.rng);
    axes.push_back(Arg(s.axis));
  }
  return x.arena().make(Ops::UNSHARD, x.dtype(), srcs, Arg::tuple(std::move(axes)));
}
constexpr UOp unshard_like(UOp x, UOp multi) { return unshard(x, sharding(multi)); }

constexpr UOp simplify(UOp u) {
  return pat::graph_rewrite(u, symbolic::symbolic, {.name = "multi_pm: simplify"});
}
/// The items of a movement op's shape operand: a STACK's sources, or the one node.
constexpr std::vector<UOp> shape_items(UOp s) {
  if (s.op() == Ops::STACK) return s.srcs().to_vector();
  return {s};
}
/// A shape operand of the given items, simplified as tinygrad's _mop does.
constexpr UOp shape_operand(Arena& a, const std::vector<UOp>& items) {
  if (items.size() == 1) return simplify(items[0]);
  return simplify(a.make(Ops::STACK, DType::weakint, items));
}
constexpr bool is_const_value(UOp u, std::int64_t v) {
  return u.op() == Ops::CONST && u.arg().is_int() && u.arg().as_int() == v;
}

/// tinygrad's index_multi: an INDEX of a tile becomes an INDEX of the owner's part.
template <class = void>
UOp index_multi(UOp root, UOp multi) {
  using enum Ops;
  std::vector<UOp> idxs;
  for (std::size_t i = 1; i < root.nsrc(); ++i) idxs.push_back(root.src(i));
  const auto part_shape = multi.src(0).shape().to_vector();
  for (const shard& sh : sharding(multi)) {
    const auto ax = static_cast<std::size_t>(sh.axis);
    if (ax >= idxs.size() || ax >= part_shape.size()) unsupported(root, "indexes a tile without an index on its sharded axis");
    const std::int64_t n = part_shape[ax];
    UOp local = simplify(idxs[ax] - sh.rng * n);  // contiguous: the owner's part starts at rng*n
    if (local.vmin() >= 0 && local.vmax() < n) {
      idxs[ax] = local;
      continue;
    }
    UOp diff = simplify(idxs[ax] - sh.rng);  // strided: the owner holds rng, rng+n, rng+2n, ...
    if (is_const_value(simplify(floormod(diff, literal(root.arena(), n))), 0)) {
      local = simplify(floordiv(diff, literal(root.arena(), n)));
      if (local.vmin() >= 0 && local.vmax() < n) {
        idxs[ax] = local;
        continue;
      }
    }
    unsupported(root, "an index on a sharded axis that is neither the owner's contiguous block nor its stride");
  }
  UOp part = multi.src(0);
  // (UOp.index: a STACK indexed by one constant is that element)
  if (idxs.size() == 1 && idxs[0].op() == CONST && part.op() == STACK && idxs[0].arg().is_int() &&
      idxs[0].arg().as_int() >= 0 && static_cast<std::size_t>(idxs[0].arg().as_int()) < part.nsrc())
    return part.src(static_cast<std::size_t>(idxs[0].arg().as_int()));
  std::vector<UOp> s{part};
  s.insert(s.end(), idxs.begin(), idxs.end());
  return make_node(root.arena(), INDEX, s);
}

/// tinygrad's alu_multi and stack_multi: the op applied to the parts, when every UNSHARD source
/// has the same sharding and every other source is a scalar (STACK: any other source).
constexpr std::optional<UOp> per_part(UOp root) {
  using enum Ops;
  UOp target;
  for (UOp s : root.srcs())
    if (s.op() == UNSHARD) {
      target = s;
      break;
    }
  if (!target) return std::nullopt;
  const auto shards = sharding(target);
  std::vector<UOp> srcs;
  for (UOp m : root.srcs()) {
    if (m.op() == UNSHARD) {
      if (sharding(m) != shards) unsupported(root, "its sources are sharded differently (resharding needs devices)");
      srcs.push_back(m.src(0));
    } else if (root.op() == STACK || (m.shape().has_value() && m.shape().size() == 0)) {
      srcs.push_back(m);
    } else {
      unsupported(root, "mixes a tile with an unsharded value (a per-part view of it is not supported)");
    }
  }
  if (root.op() != STACK) return unshard(make_node(root.arena(), root.op(), srcs, root.arg()), shards);
  // STACK adds a leading axis: the parts are sharded one axis further
  std::vector<shard> moved = shards;
  for (shard& s : moved) ++s.axis;
  return unshard(make_node(root.arena(), STACK, srcs), moved);
}

/// CAST, BITCAST, AFTER of a tile: the op on the part, UNSHARDs of the other sources peeled.
constexpr UOp passthrough(UOp root, UOp multi) {
  std::vector<UOp> srcs{multi.src(0)};
  for (std::size_t i = 1; i < root.nsrc(); ++i)
    srcs.push_back(root.src(i).op() == Ops::UNSHARD ? root.src(i).src(0) : root.src(i));
  return unshard_like(root.arena().make(root.op(), root.dtype(), srcs, root.arg()), multi);
}

/// STORE into a tile: every part stores into its own part (scalar values as they are).
constexpr UOp store_dest(UOp root, UOp multi) {
  const auto full = full_shape(multi);
  std::vector<UOp> srcs{multi.src(0)};
  for (std::size_t i = 1; i < root.nsrc(); ++i) {
    UOp x = root.src(i);
    if (x.op() == Ops::UNSHARD) srcs.push_back(x.src(0));
    else if (x.shape().has_value() && x.shape().to_vector() == full) unsupported(root, "stores an unsharded tile into a sharded one");
    else srcs.push_back(x);
  }
  return root.arena().make(root.op(), root.dtype(), srcs, root.arg());
}

/// tinygrad's reshape_multi: each sharded axis must survive the reshape as the start of an axis
/// that the parts divide.
template <class = void>
UOp reshape_multi(UOp root, UOp multi) {
  auto new_shape = symbolic::mops::const_list(root.src(1));
  if (!new_shape) unsupported(root, "a RESHAPE of a tile to a shape that is not constant");
  const auto full = full_shape(multi);
  std::int64_t total = 1, new_total = 1;
  for (auto d : full) total *= d;
  for (auto d : *new_shape) new_total *= d;
  if (total != new_total) unsupported(root, "a RESHAPE must keep the number of elements");
  std::vector<std::int64_t> acc{1};
  for (auto d : *new_shape) acc.push_back(acc.back() * d);
  std::vector<shard> moved;
  std::int64_t count = 1;
  for (const shard& sh : sharding(multi)) {
    count = parts(sh.rng);
    std::int64_t before = 1;
    for (std::int64_t k = 0; k < sh.axis; ++k) before *= full[static_cast<std::size_t>(k)];
    auto it = std::find(acc.rbegin(), acc.rend(), before);
    if (it == acc.rend()) unsupported(root, "the RESHAPE moves elements between parts");
    const auto new_ax = static_cast<std::int64_t>(acc.rend() - it) - 1;
    if (static_cast<std::size_t>(new_ax) >= new_shape->size() || (*new_shape)[static_cast<std::size_t>(new_ax)] % count != 0)
      unsupported(root, "the RESHAPE moves elements between parts");
    moved.push_back({new_ax, sh.rng});
  }
  // (as tinygrad does, every sharded axis is divided by the last shard's part count)
  std::vector<std::int64_t> part_shape = *new_shape;
  for (const shard& s : moved) part_shape[static_cast<std::size_t>(s.axis)] /= count;
  return unshard(symbolic::mops::reshape(multi.src(0), part_shape), moved);
}

/// tinygrad's shrink_multi: a SHRINK to exactly the owner's part resolves that axis, a SHRINK that
/// keeps a sharded axis whole keeps it sharded.
template <class = void>
UOp shrink_multi(UOp root, UOp multi) {
  std::vector<UOp> starts = shape_items(root.src(1)), sizes = shape_items(root.src(2));
  const auto part_shape = multi.src(0).shape().to_vector();
  const auto full = full_shape(multi);
  if (starts.size() != full.size() || sizes.size() != full.size()) unsupported(root, "a SHRINK of the wrong rank");
  std::vector<shard> remaining;
  for (const shard& sh : sharding(multi)) {
    const auto ax = static_cast<std::size_t>(sh.axis);
    const std::int64_t n = part_shape[ax];
    const bool own_part = is_const_value(simplify(sizes[ax]), n) && is_const_value(simplify(starts[ax] - sh.rng * n), 0);
    if (!own_part) {
      if (!is_const_value(simplify(starts[ax]), 0) || !is_const_value(simplify(sizes[ax]), full[ax]))
        unsupported(root, "a SHRINK of a sharded axis to other than the owner's part (one part for every device)");
      remaining.push_back(sh);
    }
    starts[ax] = literal(root.arena(), 0);
    sizes[ax] = literal(root.arena(), n);
  }
  Arena& a = root.arena();
  UOp part = a.make(Ops::SHRINK, multi.src(0).dtype(), {multi.src(0), shape_operand(a, starts), shape_operand(a, sizes)});
  return unshard(part, remaining);
}

/// tinygrad's expand_multi: EXPAND prepends axes, so the sharded axes move by that many.
constexpr UOp expand_multi(UOp root, UOp multi) {
  auto lead = symbolic::mops::const_list(root.src(1));
  if (!lead) unsupported(root, "an EXPAND of a tile to a shape that is not constant");
  if (lead->empty()) return multi;
  UOp part = root.arena().make(Ops::EXPAND, multi.src(0).dtype(), {multi.src(0), symbolic::mops::shape_node(root.arena(), *lead)});
  std::vector<shard> moved = sharding(multi);
  for (shard& s : moved) s.axis += static_cast<std::int64_t>(lead->size());
  return unshard(part, moved);
}

/// tinygrad's permute_multi: the part permuted, each sharded axis renumbered.
constexpr UOp permute_multi(UOp root, UOp multi) {
  auto perm = symbolic::mops::perm_of(root);
  if (!perm) unsupported(root, "a PERMUTE with a malformed permutation");
  std::vector<shard> moved = sharding(multi);
  for (shard& s : moved) {
    auto it = std::find(perm->begin(), perm->end(), s.axis);
    if (it == perm->end()) unsupported(root, "a PERMUTE that drops a sharded axis");
    s.axis = static_cast<std::int64_t>(it - perm->begin());
  }
  return unshard(symbolic::mops::permute(multi.src(0), *perm), moved);
}

/// tinygrad's flip_multi: a sharded axis must not be flipped.
constexpr UOp flip_multi(UOp root, UOp multi) {
  const Arg& f = root.arg();
  bool any = false;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const bool flipped = f[i].is_bool() ? f[i].as_bool() : f[i].is_int() && f[i].as_int() != 0;
    for (const shard& s : sharding(multi))
      if (flipped && static_cast<std::size_t>(s.axis) == i) unsupported(root, "a FLIP of a sharded axis");
    any |= flipped;
  }
  if (!any) return multi;
  return unshard_like(with_srcs(root, {multi.src(0)}), multi);
}

inline constexpr auto multi = pat::op<Ops::UNSHARD>.named<"multi">();

}  // namespace detail

/// The in-kernel part of tinygrad's multi_pm, in its rule order.
inline constexpr auto pm_multi = [] {
  using namespace detail;
  using enum Ops;
  // the rewriter of a node a kernel cannot hold: it fails, naming the node and why
  constexpr auto reject = [](std::string_view why) { return [why](auto& m) -> std::optional<UOp> { unsupported(m.root(), why); }; };
  constexpr auto device_only = reject("needs more than one device, which a kernel cannot");
  return pat::rules(
      pat::rewrite("sharded PARAM", pat::op<PARAM>, reject("a PARAM sharded over devices cannot be a kernel argument"), [](auto& m) {
        const Arg& a = m.root().arg();
        return a.kind() == ArgKind::param_arg && !a[6].is_none();
      }),
      pat::rule("ALU of tiles", pat::in<GroupOp::ALU>, [](auto& m) { return per_part(m.root()); }),
      pat::rule("REDUCE of a tile", pat::op<REDUCE>(multi), device_only),
      pat::rule("RESHAPE of a tile", pat::op<RESHAPE>(multi, pat::any), [](auto& m) { return reshape_multi(m.root(), m[multi]); }),
      pat::rule("EXPAND of a tile", pat::op<EXPAND>(multi, pat::any), [](auto& m) { return expand_multi(m.root(), m[multi]); }),
      pat::rule("PAD of a tile", pat::op<PAD>(multi, pat::any, pat::any), reject("a PAD of a tile is not supported inside a kernel")),
      pat::rule("SHRINK of a tile", pat::op<SHRINK>(multi, pat::any, pat::any), [](auto& m) { return shrink_multi(m.root(), m[multi]); }),
      pat::rule("PERMUTE of a tile", pat::op<PERMUTE>(multi), [](auto& m) { return permute_multi(m.root(), m[multi]); }),
      pat::rule("FLIP of a tile", pat::op<FLIP>(multi), [](auto& m) { return flip_multi(m.root(), m[multi]); }),
      pat::rule("STACK of tiles", pat::op<STACK>, [](auto& m) { return per_part(m.root()); }),
      pat::rule("INDEX of a tile", pat::op<INDEX>.any_len(multi), [](auto& m) { return index_multi(m.root(), m[multi]); }),
      pat::rule("COPY or ALLREDUCE of a tile", pat::op<COPY, ALLREDUCE>(multi), device_only),
      pat::rule("AFTER of a tile", pat::op<AFTER>.any_len(multi), [](auto& m) { return passthrough(m.root(), m[multi]); }),
      pat::rule("CAST of a tile", pat::op<CAST, BITCAST>(multi), [](auto& m) { return passthrough(m.root(), m[multi]); }),
      pat::rule("STORE of a tile", pat::op<STORE>(pat::any, multi),
                reject("stores a sharded tile into an unsharded one (a per-part view is not supported)")),
      pat::rule("STORE into a tile", pat::op<STORE>.any_len(multi), [](auto& m) { return store_dest(m.root(), m[multi]); }));
}();

/// Stage a entry point: "multi_pm". Fails on an UNSHARD the rules above leave.
template <class = void>
UOp multi_pm(UOp sink, const Target&) {
  using enum Ops;
  UOp out = pat::graph_rewrite(sink, pm_multi, {.name = "multi_pm"});
  if (out.arena().may_contain(out.id(), OpSet{UNSHARD}))
    for (UOp u : toposort(out))
      if (u.op() == UNSHARD) detail::unsupported(u, "an UNSHARD that no rule resolves inside the kernel");
  return out;
}

}  // namespace uopcg::codegen
