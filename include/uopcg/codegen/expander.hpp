// Stage 2, "expander" (tinygrad/codegen/__init__.py, expander2): UPCAST/UNROLL ranges become compile-time lane
// tensors. The range map numbers those ranges (by axis id, in toposort order of the stage's input)
// and fixes the rank K of every lane tensor:
//   RANGE → RESHAPE(STACK(0..s-1), shape)   s at the range's dimension, 1 elsewhere (rank K);
//   expand_reduce — a REDUCE over unrolled lanes reduces them horizontally: its value is permuted
//                   so the unrolled axes lead, REDUCE(arg=(op, #axes)), reshaped back;
//   expand_wmma   — a WMMA whose arg carries upcast-axis metadata gets its operands' lanes packed
//                   into the last axis (contract_axis) and its output unpacked (unroll_axis);
// plus pm_flatten_range (the replaced ranges leave REDUCE/END) and mop_cleanup.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "detail/broadcast.hpp"
#include "detail/helpers.hpp"
#include "postopt.hpp"

namespace uopcg::codegen {

/// Dimension number of every UPCAST/UNROLL range, keyed by axis id (tinygrad's dict: a repeated id
/// is renumbered with the current size of the map).
struct RangeMap {
  std::vector<std::pair<Arg, std::int64_t>> dims;
  constexpr std::size_t size() const { return dims.size(); }
  constexpr const std::int64_t* find(const Arg& id) const {
    for (const auto& [k, v] : dims)
      if (k == id) return &v;
    return nullptr;
  }
  constexpr void set(const Arg& id, std::int64_t v) {
    for (auto& [k, old] : dims)
      if (k == id) {
        old = v;
        return;
      }
    dims.emplace_back(id, v);
  }
  /// The dimension of axis id `id`; an error when it is not an expanded range.
  constexpr std::int64_t at(const Arg& id, std::string_view who) const {
    if (const std::int64_t* d = find(id)) return *d;
    text t;
    t.append("expander: ").append(who).append(" names axis ");
    if (id.is_int()) t.append(id.as_int());
    else t.append("?");
    t.append(", which is not an UPCAST/UNROLL range of the kernel");
    fail(t.view());
  }
};

namespace detail {
constexpr std::int64_t prod(const std::vector<std::int64_t>& v, std::size_t from = 0) {
  std::int64_t n = 1;
  for (std::size_t i = from; i < v.size(); ++i) n *= v[i];
  return n;
}
}  // namespace detail

/// Numbers the UPCAST/UNROLL ranges of `sink` in toposort order.
constexpr RangeMap build_range_map(UOp sink) {
  RangeMap m;
  for (UOp x : toposort(sink)) {
    const auto at = range_axis(x);
    if (at == AxisType::UNROLL || at == AxisType::UPCAST) m.set(x.arg()[0], static_cast<std::int64_t>(m.size()));
  }
  return m;
}

/// The most lanes one UPCAST/UNROLL range may expand to (a vector of a million lanes is a mistake in
/// the opts, not a kernel).
inline constexpr std::int64_t max_expanded_lanes = 1 << 16;

/// An expanded range as a constant lane tensor of rank ctx.size().
constexpr std::optional<UOp> range_to_lanes(const RangeMap& ctx, UOp r) {
  using enum Ops;
  if (!range_axis(r)) return std::nullopt;
  const std::int64_t* dim = ctx.find(r.arg()[0]);
  if (!dim) return std::nullopt;
  Arena& a = r.arena();
  // a lane per iteration: the size must be a constant, and small enough to be a vector
  const bool const_size = r.nsrc() >= 1 && r.src(0).op() == CONST && r.src(0).arg().is_number() &&
                          !r.src(0).arg().is_float();
  const std::int64_t hi = r.vmax();
  if (!const_size || hi < 0 || hi >= max_expanded_lanes) {
    text t;
    t.append("expander: ").append(a.describe(r.id()));
    if (!const_size) t.append(" is an UPCAST/UNROLL range without a constant size");
    else t.append(" is an UPCAST/UNROLL range of ").append(hi + 1).append(" lanes (1 to ").append(max_expanded_lanes).append(" allowed)");
    fail(t.view());
  }
  const std::int64_t s = hi + 1;
  std::vector<UOp> lanes;
  for (std::int64_t i = 0; i < s; ++i) lanes.push_back(const_(a, r.dtype(), Arg(i)));
  std::vector<std::int64_t> shape(ctx.size(), 1);
  if (*dim < 0 || static_cast<std::size_t>(*dim) >= shape.size()) {
    fail("expander: axis ", *dim, " of ", a.describe(r.id()), " is outside the range map (two expanded ranges share an axis id)");
  }
  shape[static_cast<std::size_t>(*dim)] = s;
  return symbolic::mops::reshape(a.make(STACK, r.dtype(), lanes), shape);
}

/// A REDUCE over lane tensors (replaced UNROLL ranges) becomes a horizontal REDUCE over the leading
/// axes of its permuted value, reshaped back to the value's shape with those axes set to 1.
constexpr std::optional<UOp> expand_reduce(UOp r) {
  using enum Ops;
  std::vector<UOp> range_srcs;
  std::vector<std::int64_t> lane_axes;
  std::size_t lane_rank = 0;
  for (std::size_t i = 1; i < r.nsrc(); ++i) {
    UOp u = r.src(i);
    if (u.op() == RANGE) {
      range_srcs.push_back(u);
      continue;
    }
    auto d = symbolic::mops::dims(u);
    lane_rank = std::max(lane_rank, d.size());
    for (std::size_t k = 0; k < d.size(); ++k)
      if (d[k] > 1) lane_axes.push_back(static_cast<std::int64_t>(k));
  }
  if (lane_axes.empty()) return std::nullopt;
  Arena& a = r.arena();
  const Arg& arg = r.arg();
  if (!arg.is_tuple() || arg.size() < 2 || !arg[1].is_int() || arg[1].as_int() != 0) {
    fail("expander: ", a.describe(r.id()), " already reduces horizontal axes");
  }
  UOp value = r.src(0);
  const auto vshape = symbolic::mops::dims(value);
  if (vshape.size() < lane_rank) fail("expander: the value of ", a.describe(r.id()), " has fewer axes than its unrolled ranges");
  // Lane tensors broadcast from the right: a value with axes of its own (a hand-written vector, a
  // STACK of lane tensors) holds the lanes in its last lane_rank axes, after those.
  const auto own = static_cast<std::int64_t>(vshape.size() - lane_rank);
  std::vector<std::int64_t> new_axes;
  for (auto ax : lane_axes) new_axes.push_back(own + ax);
  std::vector<std::int64_t> perm = new_axes, out_shape;
  for (std::size_t k = 0; k < vshape.size(); ++k) {
    if (!detail::contains(new_axes, static_cast<std::int64_t>(k))) perm.push_back(static_cast<std::int64_t>(k));
    out_shape.push_back(detail::contains(new_axes, static_cast<std::int64_t>(k)) ? 1 : vshape[k]);
  }
  std::vector<UOp> srcs{symbolic::mops::permute(value, perm)};
  srcs.insert(srcs.end(), range_srcs.begin(), range_srcs.end());
  UOp red = a.make(REDUCE, value.dtype(), srcs, Arg::tuple_of(arg[0], static_cast<std::int64_t>(new_axes.size())));
  return symbolic::mops::reshape(red, out_shape);
}

/// A STACK whose elements have different shapes after the expansion (a hand-written vector of an
/// expanded value and a scalar): every element broadcast to their common shape, as an ALU's sources are.
constexpr std::optional<UOp> broadcast_stack(UOp st) {
  if (st.nsrc() < 2) return std::nullopt;
  std::vector<std::vector<std::int64_t>> shapes;
  bool same = true;
  for (UOp e : st.srcs()) {
    shapes.push_back(symbolic::mops::dims(e));
    same = same && shapes.back() == shapes.front();
  }
  if (same) return std::nullopt;
  const auto shape = broadcast_shape(shapes);
  if (!shape) fail("expander: the elements of ", st.arena().describe(st.id()), " have incompatible shapes");
  std::vector<UOp> elems;
  for (UOp e : st.srcs()) elems.push_back(expand_to(e, *shape));
  return with_srcs(st, elems);
}

/// The axis list ((range id, size), ...) of a WMMA's upcast metadata as (dimension, size) pairs.
constexpr std::vector<std::pair<std::int64_t, std::int64_t>> wmma_axes(const RangeMap& ctx, const Arg& axes) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  if (!axes.is_tuple()) fail("expander: WMMA upcast axes are not a tuple of (axis, size) pairs");
  for (const Arg& p : axes.items()) {
    if (!p.is_tuple() || p.size() != 2 || !p[1].is_int()) fail("expander: WMMA upcast axes are not (axis, size) pairs");
    out.emplace_back(ctx.at(p[0], "a WMMA"), p[1].as_int());
  }
  return out;
}

/// u with the dimensions of `axes` moved to the end and flattened into one last axis.
constexpr UOp contract_axis(const RangeMap& ctx, UOp u, const Arg& axes) {
  std::vector<std::int64_t> tail, head;
  for (auto [d, n] : wmma_axes(ctx, axes)) tail.push_back(d);
  const auto shp = symbolic::mops::dims(u);
  for (std::size_t i = 0; i < shp.size(); ++i)
    if (!detail::contains(tail, static_cast<std::int64_t>(i))) head.push_back(static_cast<std::int64_t>(i));
  std::vector<std::int64_t> perm = head;
  perm.insert(perm.end(), tail.begin(), tail.end());
  UOp out = symbolic::mops::permute(u, perm);
  auto os = symbolic::mops::dims(out);
  std::vector<std::int64_t> ns(os.begin(), os.begin() + static_cast<std::ptrdiff_t>(head.size()));
  ns.push_back(detail::prod(os, head.size()));
  return symbolic::mops::reshape(out, ns);
}

/// u's last axis split into the sizes of `axes`, which are permuted back to their dimensions.
constexpr UOp unroll_axis(const RangeMap& ctx, UOp u, const Arg& axes) {
  std::vector<std::int64_t> tail;
  auto shp = symbolic::mops::dims(u);
  if (shp.empty()) fail("expander: unroll_axis of a scalar");
  shp.pop_back();
  for (auto [d, n] : wmma_axes(ctx, axes)) {
    tail.push_back(d);
    shp.push_back(n);
  }
  UOp out = symbolic::mops::reshape(u, shp);
  std::vector<std::int64_t> order;
  for (std::size_t i = 0; i < shp.size(); ++i)
    if (!detail::contains(tail, static_cast<std::int64_t>(i))) order.push_back(static_cast<std::int64_t>(i));
  order.insert(order.end(), tail.begin(), tail.end());
  return symbolic::mops::permute(out, symbolic::mops::argsort(order));
}

/// A WMMA with upcast-axis metadata (arg[4] = (a axes, b axes, out axes)): operands contracted,
/// the metadata cleared, the output unrolled.
constexpr std::optional<UOp> expand_wmma(const RangeMap& ctx, UOp u) {
  const Arg& arg = u.arg();
  if (!arg.is_tuple() || arg.size() < 5 || arg[4].is_none()) return std::nullopt;
  const Arg& up = arg[4];
  if (!up.is_tuple() || up.size() != 3 || u.nsrc() < 3) {
    fail("expander: ", u.arena().describe(u.id()), " has malformed upcast axes (want (a, b, out))");
  }
  std::vector<Arg> items(arg.items().begin(), arg.items().end());
  items[4] = Arg();
  UOp w = u.arena().make(Ops::WMMA, u.dtype(), {contract_axis(ctx, u.src(0), up[0]), contract_axis(ctx, u.src(1), up[1]), u.src(2)},
                         Arg::tuple(std::move(items)), u.tag());
  return unroll_axis(ctx, w, up[2]);
}

namespace detail {
/// The element of a movement op's source (indices of its axes) that element `c` of the op reads;
/// nullopt for an element a PAD adds. Shapes are the op's and its source's own, without lanes.
constexpr std::optional<std::vector<std::int64_t>> moved_element(UOp m, const std::vector<std::int64_t>& in,
                                                                 const std::vector<std::int64_t>& out,
                                                                 const std::vector<std::int64_t>& c) {
  using enum Ops;
  std::vector<std::int64_t> r(in.size(), 0);
  const auto malformed = [&]() -> std::optional<std::vector<std::int64_t>> {
    fail("expander: ", m.arena().describe(m.id()), " has a malformed movement argument");
  };
  switch (m.op()) {
    case RESHAPE: {
      std::int64_t flat = 0;
      for (std::size_t k = 0; k < out.size(); ++k) flat = flat * out[k] + c[k];
      for (std::size_t k = in.size(); k-- > 0;) {
        r[k] = flat % in[k];
        flat /= in[k];
      }
      return r;
    }
    case SHRINK: {
      const auto starts = symbolic::mops::const_list(m.src(1));
      if (!starts || starts->size() != in.size()) return malformed();
      for (std::size_t k = 0; k < in.size(); ++k) r[k] = c[k] + (*starts)[k];
      return r;
    }
    case PERMUTE: {
      const auto perm = symbolic::mops::perm_of(m);
      if (!perm || perm->size() != in.size()) return malformed();
      for (std::size_t k = 0; k < in.size(); ++k) r[static_cast<std::size_t>((*perm)[k])] = c[k];
      return r;
    }
    case FLIP: {
      const Arg& f = m.arg();
      if (!f.is_tuple() || f.size() != in.size()) return malformed();
      for (std::size_t k = 0; k < in.size(); ++k) {
        const bool flip = f[k].is_bool() ? f[k].as_bool() : (f[k].is_int() && f[k].as_int() != 0);
        r[k] = flip ? in[k] - 1 - c[k] : c[k];
      }
      return r;
    }
    case EXPAND: {  // new axes are prepended (derive_shape): the source's indices are the last ones
      const std::size_t added = out.size() - in.size();
      for (std::size_t k = 0; k < in.size(); ++k) r[k] = c[added + k];
      return r;
    }
    case PAD: {
      const auto lo = symbolic::mops::const_list(m.src(1));
      if (!lo || lo->size() != in.size()) return malformed();
      for (std::size_t k = 0; k < in.size(); ++k) {
        r[k] = c[k] - (*lo)[k];
        if (r[k] < 0 || r[k] >= in[k]) return std::nullopt;
      }
      return r;
    }
    default:
      return malformed();
  }
}

/// The movement op m over the (rebuilt) source `src` as element selections: nested STACKs of
/// INDEX(src, element) in m's shape, a padded element 0. INDEX selects a value's leading axes, so
/// the result is right whatever lanes src gains in the expansion.
constexpr UOp select_elements(UOp m, UOp src, const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out,
                              std::vector<std::int64_t>& c, std::size_t axis) {
  Arena& a = m.arena();
  if (axis == out.size()) {
    const auto e = moved_element(m, in, out, c);
    if (!e) return const_like(src, 0);
    if (e->empty()) return src;
    std::vector<UOp> idx;
    for (std::int64_t k : *e) idx.push_back(literal(a, k));
    return symbolic::mops::index(src, idx);
  }
  std::vector<UOp> elems;
  for (std::int64_t i = 0; i < out[axis]; ++i) {
    c[axis] = i;
    elems.push_back(select_elements(m, src, in, out, c, axis + 1));
  }
  return make_node(a, Ops::STACK, elems);
}
}  // namespace detail

/// Expanded values hold their lanes in their last K axes (K = the range map's size), after any axes of
/// their own (a hand-written vector: a STACK, or a movement op on one). So, before the expansion:
/// - a value with axes of its own that no expanded range reaches, where an ALU or STACK combines it
///   with one that is reached, is given K trailing axes of size 1: broadcasting then lines its axes up
///   with the other's own axes, not with the lanes;
/// - a movement op (RESHAPE, SHRINK, ...) on a value an expanded range reaches becomes the element
///   selections it denotes (its shapes do not count the lanes).
/// The kernels tinygrad's scheduler makes have no such vectors and are returned unchanged.
constexpr UOp align_own_axes(UOp sink, const RangeMap& ctx) {
  using enum Ops;
  if (ctx.size() == 0) return sink;
  const std::vector<UOp> topo = toposort(sink);
  Arena& a = sink.arena();
  const std::size_t n = a.size();
  std::vector<unsigned char> lanes(n, 0);  // bytes, not std::vector<bool>: constant evaluation
  const auto own_axes_only = [&](UOp s) { return !lanes[s.id()] && s.shape().has_value() && s.shape().size() > 0; };
  const auto combines = [&](UOp x) { return lanes[x.id()] && (GroupOp::Elementwise.contains(x.op()) || x.op() == STACK); };
  const auto moves = [&](UOp x) {
    return lanes[x.id()] && GroupOp::Movement.contains(x.op()) && x.nsrc() > 0 && lanes[x.src(0).id()] &&
           x.shape().has_value() && x.src(0).shape().has_value();
  };
  bool any = false;
  for (UOp x : topo) {
    bool dep = (range_axis(x) == AxisType::UNROLL || range_axis(x) == AxisType::UPCAST) && ctx.find(x.arg()[0]);
    for (UOp s : x.srcs()) dep = dep || lanes[s.id()];
    lanes[x.id()] = dep;
    if (moves(x)) any = true;
    if (combines(x))
      for (UOp s : x.srcs()) any = any || own_axes_only(s);
  }
  if (!any) return sink;
  const std::vector<std::int64_t> ones(ctx.size(), 1);
  std::vector<UOp> now(n);
  bool changed = false;
  for (UOp x : topo) {
    if (moves(x)) {
      const auto in = symbolic::mops::dims(x.src(0)), out = symbolic::mops::dims(x);
      std::vector<std::int64_t> c(out.size(), 0);
      now[x.id()] = detail::select_elements(x, now[x.src(0).id()], in, out, c, 0);
      changed = true;
      continue;
    }
    std::vector<UOp> srcs;
    bool moved = false;
    const bool mixes = combines(x);
    for (UOp s : x.srcs()) {
      UOp t = now[s.id()];
      if (mixes && own_axes_only(s)) {
        auto shp = symbolic::mops::dims(s);
        shp.insert(shp.end(), ones.begin(), ones.end());
        t = symbolic::mops::reshape(t, shp);
      }
      moved = moved || t != s;
      srcs.push_back(t);
    }
    now[x.id()] = moved ? with_srcs(x, srcs) : x;
    changed = changed || moved;
  }
  return changed ? now[sink.id()] : sink;
}

/// The rules of stage 2 (the range map is the context).
inline constexpr auto pm_expander = [] {
  using enum Ops;
  return pat::rules(
      pat::rule("expand reduce", pat::op<REDUCE>, [](const RangeMap&, auto& m) { return expand_reduce(m.root()); }),
      pat::rule("broadcast stack", pat::op<STACK>, [](const RangeMap&, auto& m) { return broadcast_stack(m.root()); }),
      pat::rule("range to lanes", pat::op<RANGE>, [](const RangeMap& ctx, auto& m) { return range_to_lanes(ctx, m.root()); }),
      pat::rule("expand wmma", pat::op<WMMA>, [](const RangeMap& ctx, auto& m) { return expand_wmma(ctx, m.root()); }));
}() + pm_flatten_range + symbolic::mop_cleanup;

/// Stage 2 entry point: "expander".
template <class = void>
constexpr UOp expander(UOp sink, const Target& t) {
  (void)t;
  RangeMap ctx = build_range_map(sink);
  return pat::graph_rewrite(align_own_axes(sink, ctx), pm_expander, ctx, {.name = "expander"});
}

}  // namespace uopcg::codegen
