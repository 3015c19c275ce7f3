// Graph operations on UOps: dtype derivation, toposort in the snapshot's order, backward slices,
// rebuilding a node with new sources, substitute, and the range properties (ranges, ended ranges,
// buf_uop). All iterative (no recursion), so they work on deep graphs and in constant evaluation.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "arena.hpp"

namespace uopcg {

/// The dtype a node gets when built without one (tinygrad's derivation from op, sources and arg).
constexpr DType derive_dtype(Ops op, std::span<const UOp> srcs, const Arg& arg) {
  auto s = [&](std::size_t i) { return i < srcs.size() ? srcs[i].dtype() : DType::void_; };
  auto promoted = [&](std::size_t from) {
    DType d = DType::void_;
    for (std::size_t i = from; i < srcs.size(); ++i) {
      // Invalid (a bool CONST) matches any dtype: it takes no part in promotion
      if (srcs[i].op() == Ops::CONST && srcs[i].arg().is_invalid()) continue;
      d = d == DType::void_ ? srcs[i].dtype() : least_upper_dtype(d, srcs[i].dtype());
    }
    return d;
  };
  switch (op) {
    case Ops::CONST:
      if (arg.is_bool() || arg.is_invalid()) return DType::bool_;
      if (arg.is_int() || arg.kind() == ArgKind::bigint) return DType::weakint;
      if (arg.is_float()) return DType::weakfloat;
      return DType::void_;
    case Ops::PARAM: case Ops::BUFFER:
      return arg.kind() == ArgKind::param_arg ? arg[1].as_dtype() : DType::void_;
    case Ops::CAST: case Ops::BITCAST:
      return arg.kind() == ArgKind::dtype ? arg.as_dtype() : DType::void_;
    case Ops::RANGE: case Ops::SPECIAL: case Ops::AFTER: case Ops::INDEX: case Ops::SHRINK:
    case Ops::LOAD: case Ops::REDUCE: case Ops::STAGE: case Ops::NEG: case Ops::TRUNC:
    case Ops::SHL: case Ops::SHR: case Ops::RESHAPE: case Ops::EXPAND: case Ops::PERMUTE:
    case Ops::PAD: case Ops::FLIP:
      return s(0);
    case Ops::WMMA:
      return s(2);
    case Ops::EXP2: case Ops::LOG2: case Ops::SIN: case Ops::SQRT: case Ops::RECIPROCAL:
      return is_float(s(0)) ? s(0) : least_upper_dtype(s(0), DType::float32);
    case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ:
      return DType::bool_;
    case Ops::WHERE:
      return promoted(1);
    case Ops::STACK:
      return promoted(0);
    default:
      if (GroupOp::Binary.contains(op) || op == Ops::MULACC) return promoted(0);
      return DType::void_;
  }
}

/// Builds a node with a derived dtype.
constexpr UOp make_node(Arena& a, Ops op, std::span<const UOp> srcs, const Arg& arg = Arg(),
                        const Arg& tag = Arg()) {
  return a.make(op, derive_dtype(op, srcs, arg), srcs, arg, tag);
}

/// `u` with new sources (same op, arg and tag). The dtype is re-derived only when some source's
/// dtype changed, as tinygrad does when it rebuilds a node during rewriting.
constexpr UOp with_srcs(UOp u, std::span<const UOp> new_srcs) {
  const auto& n = u.arena().raw(u.id());
  DType dt = n.dtype;
  bool dtype_changed = new_srcs.size() != n.nsrc;
  for (std::size_t i = 0; i < new_srcs.size() && !dtype_changed; ++i)
    dtype_changed = new_srcs[i].dtype() != u.src(i).dtype();
  if (dtype_changed) {
    DType d = derive_dtype(n.op, new_srcs, u.arg());
    if (d != DType::void_ || dt == DType::void_) dt = d;
  }
  return u.arena().make_raw(n.op, dt, new_srcs, n.arg, u.arena().tag_id(u.id()));
}
constexpr UOp with_srcs(UOp u, const std::vector<UOp>& s) { return with_srcs(u, std::span<const UOp>(s)); }
constexpr UOp with_srcs(UOp u, std::initializer_list<UOp> s) {
  return with_srcs(u, std::span<const UOp>(s.begin(), s.size()));
}
/// `u` with each source s replaced by f(s) (through with_srcs), or `u` itself when f changed none.
/// Up to 8 sources are mapped on the stack: rules that rewrite a node's sources and usually find
/// nothing to change (a load to add, a cast to move) allocate nothing then, nor does graph_rewrite
/// when it rebuilds a node whose sources were rewritten (a larger buffer costs more to initialize
/// than the allocations it would save).
template <class F>
constexpr UOp map_srcs(UOp u, F&& f) {
  const std::size_t n = u.nsrc();
  std::size_t i = 0;
  UOp first_changed;
  for (; i < n; ++i) {
    first_changed = f(u.src(i));
    if (first_changed != u.src(i)) break;
  }
  if (i == n) return u;
  auto fill = [&](UOp* out) {
    for (std::size_t k = 0; k < i; ++k) out[k] = u.src(k);
    out[i] = first_changed;
    for (std::size_t k = i + 1; k < n; ++k) out[k] = f(u.src(k));
    return with_srcs(u, std::span<const UOp>(out, n));
  };
  if (n <= 8) {
    UOp buf[8];
    return fill(buf);
  }
  std::vector<UOp> v(n);
  return fill(v.data());
}
constexpr UOp with_arg(UOp u, const Arg& arg) {
  auto v = u.srcs().to_vector();
  return u.arena().make(u.op(), u.dtype(), v, arg, u.tag());
}
constexpr UOp with_tag(UOp u, const Arg& tag) {
  auto v = u.srcs().to_vector();
  return u.arena().make(u.op(), u.dtype(), v, u.arg(), tag);
}
constexpr UOp with_dtype(UOp u, DType dt) {
  const auto& n = u.arena().raw(u.id());
  auto v = u.srcs().to_vector();
  return u.arena().make_raw(n.op, dt, v, n.arg, u.arena().tag_id(u.id()));
}
constexpr UOp with_op(UOp u, Ops op) {
  const auto& n = u.arena().raw(u.id());
  auto v = u.srcs().to_vector();
  return u.arena().make_raw(op, n.dtype, v, n.arg, u.arena().tag_id(u.id()));
}

/// tinygrad's toposort: iterative DFS post-order visiting sources in order, each node once.
/// `gate(u)` returning false stops the descent at u and leaves u itself out. Appends to `out`
/// (callers that only iterate pass an Arena::scratch_vector and allocate nothing).
template <class Gate>
constexpr void toposort_into(std::span<const UOp> roots, Gate&& gate, std::vector<UOp>& out) {
  if (roots.empty()) return;
  Arena& a = roots[0].arena();
  const std::uint32_t epoch = a.new_epoch();
  Arena::scratch_vector<detail::walk_frame> stack_v(a);  // aux: the next source to visit
  auto& stack = *stack_v;
  for (UOp r : roots) {
    if (a.marked(r.id(), epoch) || !gate(r)) continue;
    a.mark(r.id(), epoch);
    stack.push_back({r.id(), 0, 0});
    while (!stack.empty()) {
      detail::walk_frame& f = stack.back();
      if (f.aux < a.raw(f.n).nsrc) {
        UOp c(&a, a.src_ids(f.n)[f.aux++]);
        if (a.marked(c.id(), epoch)) continue;
        a.mark(c.id(), epoch);
        if (!gate(c)) continue;
        stack.push_back({c.id(), 0, 0});
      } else {
        out.push_back(UOp(&a, f.n));
        stack.pop_back();
      }
    }
  }
}
template <class Gate>
constexpr std::vector<UOp> toposort(std::span<const UOp> roots, Gate&& gate) {
  std::vector<UOp> out;
  out.reserve(64);  // grown from empty, a kernel graph's order took ~8 reallocations
  toposort_into(roots, gate, out);
  return out;
}
constexpr std::vector<UOp> toposort(UOp root) {
  return toposort(std::span<const UOp>(&root, 1), [](UOp) { return true; });
}
template <class Gate>
constexpr std::vector<UOp> toposort(UOp root, Gate&& gate) {
  return toposort(std::span<const UOp>(&root, 1), gate);
}

/// Every node `u` depends on, in toposort order, without `u` itself. Cached per node; the list
/// stays valid while the arena grows.
constexpr std::span<const node_id> backward_slice_ids(UOp u) {
  Arena& a = u.arena();
  if (!a.backward_slice_cache.has(u.id())) {
    Arena::scratch_vector<UOp> order(a);
    toposort_into(std::span<const UOp>(&u, 1), [](UOp) { return true; }, *order);
    Arena::scratch_vector<node_id> ids(a);
    for (UOp n : *order)
      if (n != u) ids->push_back(n.id());
    a.backward_slice_cache.put(u.id(), *ids);
  }
  return a.backward_slice_cache.get(u.id());
}
constexpr std::vector<UOp> backward_slice(UOp u) {
  std::vector<UOp> out;
  const std::span<const node_id> ids = backward_slice_ids(u);
  out.reserve(ids.size() + 1);  // + 1: backward_slice_with_self
  for (node_id id : ids) out.push_back(UOp(&u.arena(), id));
  return out;
}
constexpr std::vector<UOp> backward_slice_with_self(UOp u) {
  auto v = backward_slice(u);
  v.push_back(u);
  return v;
}
/// Whether `x` is `u` or something `u` depends on.
constexpr bool depends_on(UOp u, UOp x) {
  if (u == x) return true;
  for (node_id id : backward_slice_ids(u))
    if (id == x.id()) return true;
  return false;
}

// --- ranges -------------------------------------------------------------------------------------

namespace detail {
constexpr void ordered_add(std::vector<node_id>& set, node_id id) {
  for (node_id x : set)
    if (x == id) return;
  set.push_back(id);
}
constexpr void ordered_remove(std::vector<node_id>& set, node_id id) {
  for (std::size_t i = 0; i < set.size(); ++i)
    if (set[i] == id) {
      set.erase(set.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}
constexpr std::size_t first_closed_src(Ops op) { return op == Ops::WMMA ? 3 : 1; }

// Computes ranges / ended ranges of u, assuming every source is already cached (`ended` and `rs`:
// the caller's buffers, cleared here).
constexpr void compute_range_props(Arena& a, UOp u, std::vector<node_id>& ended, std::vector<node_id>& rs) {
  ended.clear();
  rs.clear();
  if (GroupOp::RangeClosing.contains(u.op())) {
    for (std::size_t i = first_closed_src(u.op()); i < u.nsrc(); ++i) {
      UOp s = u.src(i);
      if (s.op() == Ops::RANGE) ordered_add(ended, s.id());
      else
        for (node_id r : a.ranges_cache.get(s.id())) ordered_add(ended, r);
    }
  } else if (u.op() == Ops::AFTER) {
    for (std::size_t i = 1; i < u.nsrc(); ++i)
      for (node_id r : a.ended_ranges_cache.get(u.src(i).id())) ordered_add(ended, r);
  }
  if (u.op() == Ops::RANGE) rs.push_back(u.id());
  for (UOp s : u.srcs())
    for (node_id r : a.ranges_cache.get(s.id())) ordered_add(rs, r);
  for (node_id e : ended) ordered_remove(rs, e);
  if (u.op() == Ops::RANGE) ordered_add(rs, u.id());  // a RANGE is inside itself even if a dep ended it
  a.ranges_cache.put(u.id(), rs);
  a.ended_ranges_cache.put(u.id(), ended);
}

constexpr void ensure_range_props(UOp u) {
  Arena& a = u.arena();
  if (a.ranges_cache.has(u.id())) return;
  // visit only the part of the graph not cached yet
  Arena::scratch_vector<UOp> order(a);
  toposort_into(std::span<const UOp>(&u, 1), [&a](UOp x) { return !a.ranges_cache.has(x.id()); }, *order);
  Arena::scratch_vector<node_id> ended(a), rs(a);
  for (UOp n : *order) compute_range_props(a, n, *ended, *rs);
}
}  // namespace detail

/// The ids of the RANGEs `u` is inside, as ranges() lists them, without building a vector (the
/// list stays valid while the arena grows).
constexpr std::span<const node_id> range_ids(UOp u) {
  detail::ensure_range_props(u);
  return u.arena().ranges_cache.get(u.id());
}
/// The RANGEs `u` is inside (insertion ordered, following source order).
constexpr std::vector<UOp> ranges(UOp u) {
  detail::ensure_range_props(u);
  std::vector<UOp> out;
  out.reserve(u.arena().ranges_cache.get(u.id()).size());
  for (node_id id : u.arena().ranges_cache.get(u.id())) out.push_back(UOp(&u.arena(), id));
  return out;
}
/// The RANGEs `u` closes (END/REDUCE/STAGE: src[1:], WMMA: src[3:], AFTER: what its deps close).
constexpr std::vector<UOp> ended_ranges(UOp u) {
  detail::ensure_range_props(u);
  std::vector<UOp> out;
  out.reserve(u.arena().ended_ranges_cache.get(u.id()).size());
  for (node_id id : u.arena().ended_ranges_cache.get(u.id())) out.push_back(UOp(&u.arena(), id));
  return out;
}
constexpr bool in_range(UOp u, UOp range) {
  for (node_id id : range_ids(u))
    if (id == range.id()) return true;
  return false;
}

/// The buffer a memory node addresses (PARAM/BUFFER/STAGE found by following src[0]), or an invalid
/// handle when it addresses none (a value, a constant).
constexpr UOp buffer_of(UOp u) {
  UOp x = u;
  while (x.op() != Ops::PARAM && x.op() != Ops::BUFFER && x.op() != Ops::STAGE) {
    if (x.nsrc() == 0) return UOp();
    x = x.src(0);
  }
  return x;
}

/// buffer_of, failing when `u` addresses no buffer.
constexpr UOp buf_uop(UOp u) {
  const UOp x = buffer_of(u);
  if (!x.valid()) {
    text t;
    t.append("buf_uop: ").append(u.arena().describe(u.id())).append(" does not address a buffer");
    fail(t.view());
  }
  return x;
}

// --- substitute ----------------------------------------------------------------------------------

/// Replaces nodes by others throughout the graph of `root` (tinygrad's substitute): the map is
/// consulted before a node's children (so the largest matching subgraph is replaced), replacements
/// are traversed afterwards (keys inside a replacement are replaced too), and tags of rebuilt
/// ancestors are kept. A replacement chain that loops is an error.
constexpr UOp substitute(UOp root, std::span<const std::pair<UOp, UOp>> mapping) {
  Arena& a = root.arena();
  // node-indexed scratch maps lent by the arena: O(graph) per call, not O(arena)
  bool any = false;
  for (const auto& [from, to] : mapping) any |= from != to;
  if (!any) return root;
  const std::size_t limit = a.size();  // a replacement chain longer than this loops
  // a subgraph holding no node of a key's op holds no key: it is its own result, not walked
  OpSet key_ops;
  for (const auto& [from, to] : mapping)
    if (from != to) key_ops = key_ops.with(from.op());
  if (!a.may_contain(root.id(), key_ops)) return root;
  Arena::scratch_map map(a);
  for (const auto& [from, to] : mapping)
    if (from != to) map.set(from.id(), to.id());
  Arena::scratch_map memo(a);  // result for each visited node id
  auto memo_get = [&](node_id id) { return memo.get(id); };
  auto memo_set = [&](node_id id, node_id v) { memo.set(id, v); };
  auto resolve = [&](node_id id) {
    std::size_t steps = 0;
    while (map.get(id) != no_node) {
      id = map.get(id);
      if (++steps > limit) {
        text t;
        t.append("substitute: the replacement of ").append(a.describe(id)).append(" leads back to itself");
        fail(t.view());
      }
    }
    return id;
  };
  struct frame {
    node_id orig;
    node_id cur;  // after applying the map
    std::size_t next;
  };
  Arena::scratch_map open(a);  // nodes whose frame is on the stack: 1
  auto is_open = [&](node_id id) { return open.get(id) == 1; };
  auto push = [&](std::vector<frame>& st, node_id orig) {
    node_id cur = resolve(orig);
    if (is_open(orig) || is_open(cur)) {
      text t;
      t.append("substitute: ").append(a.describe(orig)).append(" occurs inside its own replacement");
      fail(t.view());
    }
    open.set(orig, 1);
    open.set(cur, 1);
    st.push_back({orig, cur, 0});
  };
  std::vector<frame> stack;
  stack.reserve(32);
  push(stack, root.id());
  Arena::scratch_vector<UOp> new_srcs_v(a);
  std::vector<UOp>& new_srcs = *new_srcs_v;
  while (!stack.empty()) {
    frame& f = stack.back();
    UOp cur(&a, f.cur);
    if (f.next < cur.nsrc()) {
      node_id c = cur.src(f.next).id();
      if (memo_get(c) == no_node) {
        if (a.may_contain(c, key_ops)) {
          push(stack, c);
          continue;
        }
        memo_set(c, c);
      }
      ++f.next;
      continue;
    }
    new_srcs.clear();
    bool changed = false;
    for (UOp s : cur.srcs()) {
      node_id r = memo_get(s.id());
      changed |= r != s.id();
      new_srcs.push_back(UOp(&a, r));
    }
    node_id result = f.cur;
    if (changed) {
      UOp rebuilt = with_srcs(cur, new_srcs);
      // the rebuilt node may itself be a key of the map: go through the same procedure again
      node_id again = resolve(rebuilt.id());
      if (again != rebuilt.id() && memo_get(again) == no_node) {
        if (f.cur != f.orig) open.set(f.cur, 0);
        open.set(again, 1);
        f.cur = again;
        f.next = 0;
        continue;
      }
      result = again != rebuilt.id() ? memo_get(again) : rebuilt.id();
    }
    memo_set(f.orig, result);
    if (f.cur != f.orig) memo_set(f.cur, result);
    open.set(f.orig, 0);
    open.set(f.cur, 0);
    stack.pop_back();
  }
  return UOp(&a, memo_get(root.id()));
}
constexpr UOp substitute(UOp root, std::initializer_list<std::pair<UOp, UOp>> mapping) {
  return substitute(root, std::span<const std::pair<UOp, UOp>>(mapping.begin(), mapping.size()));
}
constexpr UOp substitute(UOp root, const std::vector<std::pair<UOp, UOp>>& mapping) {
  return substitute(root, std::span<const std::pair<UOp, UOp>>(mapping));
}

/// The graph of `root` rebuilt in the arena `dst` (same ops, dtypes, args and tags): to run a pass on
/// a fresh arena, or to move a graph between arenas.
constexpr UOp copy_graph(UOp root, Arena& dst) {
  if (&root.arena() == &dst) return root;
  const std::vector<UOp> nodes = toposort(root);
  std::vector<UOp> mapped(root.arena().size());
  std::vector<UOp> srcs;
  for (UOp u : nodes) {
    srcs.clear();
    for (std::size_t i = 0; i < u.nsrc(); ++i) srcs.push_back(mapped[u.src(i).id()]);
    mapped[u.id()] = dst.make(u.op(), u.dtype(), srcs, u.arg(), u.tag());
  }
  return mapped[root.id()];
}

}  // namespace uopcg
