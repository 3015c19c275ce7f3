// The Scheduler (tinygrad/codegen/opt/postrange.py, Scheduler): the kernel graph between "simplify
// ranges" and "postopt symbolic", with the kernel opts that reshape its axes. Everything is derived
// from the graph itself: the axis list is every RANGE of size > 1 (not DEVICE), ordered by position
// class (axes.hpp), then id and split part; an opt's `axis` counts in that list (UNROLL in the
// unrollable, GROUP/GROUPTOP in the REDUCE axes), `arg` 0 means the whole axis. A splitting opt
// replaces a range r by `r' * n + new` (`new * (S/n) + r'` for GROUPTOP and THREAD): r' keeps r's id
// and type, the new range takes the next id. An invalid opt is a result naming it and tinygrad's
// reason, and leaves the Scheduler as it was, so a search can go on with the next one.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "../../core/builder.hpp"
#include "../../core/graph.hpp"
#include "../../pattern/pattern.hpp"
#include "../../render/size_text.hpp"
#include "../../symbolic/render.hpp"
#include "../detail/helpers.hpp"
#include "../postopt.hpp"
#include "../target.hpp"
#include "axes.hpp"
#include "error.hpp"
#include "tensor_core.hpp"

namespace uopcg::codegen::opt {

namespace detail {

using codegen::detail::contains;
constexpr void add_unique(std::vector<UOp>& v, UOp x) {
  if (!contains(v, x)) v.push_back(x);
}

/// u's sources from `from` on (the ranges of END/REDUCE/STAGE).
constexpr std::vector<UOp> srcs_from(UOp u, std::size_t from) {
  std::vector<UOp> out;
  for (std::size_t i = from; i < u.nsrc(); ++i) out.push_back(u.src(i));
  return out;
}

/// The AxisType of a RANGE (the last entry of its arg).
constexpr AxisType range_type(UOp r) {
  const Arg& a = r.arg();
  if (r.op() != Ops::RANGE || !a.is_tuple() || a.size() < 2 || a[a.size() - 1].kind() != ArgKind::axis_type) {
    text t;
    t.append("kernel opts: ").append(r.arena().describe(r.id())).append(" is not a RANGE with an (id, ..., AxisType) arg");
    fail(t.view());
  }
  return a[a.size() - 1].as_axis_type();
}
/// The id of a RANGE (arg[0]).
constexpr std::int64_t range_id(UOp r) {
  (void)range_type(r);
  return r.arg()[0].as_int();
}
/// The sort key of an axis after its position class: the arg's numbers (id, split part).
constexpr std::vector<std::int64_t> range_key(UOp r) {
  std::vector<std::int64_t> k{axis_position(range_type(r))};
  const Arg& a = r.arg();
  for (std::size_t i = 0; i + 1 < a.size(); ++i) k.push_back(a[i].as_int());
  return k;
}
/// The constant value of a size, or nullopt for a symbolic one.
constexpr std::optional<std::int64_t> const_value(UOp s) {
  if (s.op() == Ops::CONST && s.arg().kind() == ArgKind::int_) return s.arg().as_int();
  return std::nullopt;
}

/// `u / v` when `u` is provably a multiple of v, else nullopt (tinygrad's UOp.divides).
constexpr std::optional<UOp> divides(UOp u, std::int64_t v) {
  using enum Ops;
  if (v == 1) return u;
  if (v == 0) return std::nullopt;
  switch (u.op()) {
    case CONST:
      if (u.arg().kind() == ArgKind::int_ && u.arg().as_int() % v == 0) return const_like(u, u.arg().as_int() / v);
      break;
    case STACK: {
      std::vector<UOp> srcs;
      for (UOp s : u.srcs()) {
        auto d = divides(s, v);
        if (!d) return std::nullopt;
        srcs.push_back(*d);
      }
      return node(STACK, srcs);
    }
    case ADD:
      if (auto d0 = divides(u.src(0), v))
        if (auto d1 = divides(u.src(1), v)) return *d0 + *d1;
      break;
    case MUL: {
      // a factor divided down to 1 goes (tinygrad's name shows the size simplified: `n`, not `n*1`)
      auto one = [](UOp x) { return x.op() == CONST && x.arg().kind() == ArgKind::int_ && x.arg().as_int() == 1; };
      if (auto d0 = divides(u.src(0), v)) return one(*d0) ? u.src(1) : *d0 * u.src(1);
      if (auto d1 = divides(u.src(1), v)) return one(*d1) ? u.src(0) : u.src(0) * *d1;
      break;
    }
    case PARAM: case BUFFER: {
      const Arg& a = u.arg();
      if (a.kind() == ArgKind::param_arg && a[3].kind() == ArgKind::int_ && a[3].as_int() % v == 0)
        return floordiv(u, literal(u.arena(), v));
      break;
    }
    default: break;
  }
  return std::nullopt;
}

/// Python's list[i]: a negative index counts from the end; nullopt when out of range.
constexpr std::optional<std::size_t> py_index(std::int64_t i, std::size_t n) {
  const std::int64_t k = i < 0 ? i + static_cast<std::int64_t>(n) : i;
  if (k < 0 || k >= static_cast<std::int64_t>(n)) return std::nullopt;
  return static_cast<std::size_t>(k);
}

/// The ranges of several nodes, in order, each once (tinygrad's UOp.sink(*xs).ranges).
constexpr std::vector<UOp> ranges_of_all(std::span<const UOp> xs) {
  std::vector<UOp> out;
  for (UOp x : xs)
    for (UOp r : ranges(x)) add_unique(out, r);
  return out;
}

/// Every node of `root`'s graph, without `root` (tinygrad's backward_slice: a range used as an
/// index by itself is not in that index's backward slice, a quirk the heuristics inherit).
constexpr bool in_backward_slice(UOp root, UOp x) { return root != x && depends_on(root, x); }

/// The graph with every tag removed (tinygrad's remove_all_tags).
constexpr UOp remove_all_tags(UOp root) {
  Arena& a = root.arena();
  const std::vector<UOp> order = toposort(root);
  std::vector<UOp> mapped(a.size());  // the nodes of `order` predate every node made here
  for (UOp u : order) {
    std::vector<UOp> srcs;
    bool changed = u.has_tag();
    for (UOp s : u.srcs()) {
      srcs.push_back(mapped[s.id()]);
      changed |= srcs.back() != s;
    }
    mapped[u.id()] = changed ? a.make(u.op(), u.dtype(), srcs, u.arg()) : u;
  }
  return mapped[root.id()];
}

/// A size as tinygrad's error messages print it: UOp(Ops.CONST, dtypes.weakint, arg=64, src=())
/// for a constant, the expression otherwise.
constexpr text size_repr(UOp s) {
  text t;
  if (s.op() == Ops::CONST) {
    t.append("UOp(Ops.CONST, dtypes.").append(name(s.dtype())).append(", arg=");
    s.arg().print(t);
    t.append(", src=())");
    return t;
  }
  return symbolic::render_text(s);
}

/// A stable sort usable in constant evaluation (std::stable_sort is not constexpr); the lists are
/// a kernel's few axes.
template <class T, class Less>
constexpr void stable_sort(std::vector<T>& v, Less less) {
  for (std::size_t i = 1; i < v.size(); ++i)
    for (std::size_t j = i; j > 0 && less(v[j], v[j - 1]); --j) std::swap(v[j], v[j - 1]);
}

/// argsort of a permutation.
constexpr std::vector<std::size_t> argsort(const std::vector<std::size_t>& p) {
  std::vector<std::size_t> idx(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) idx[i] = i;
  stable_sort(idx, [&](std::size_t x, std::size_t y) { return p[x] < p[y]; });
  return idx;
}

/// A RANGE as tinygrad's "... is not in list" errors name it.
constexpr text range_repr(UOp r) {
  text t;
  t.append("UOp(Ops.RANGE, dtypes.").append(name(r.dtype())).append(", arg=");
  r.arg().print(t);
  t.append(", src=(").append(size_repr(r.src(0))).append(",))");
  return t;
}

}  // namespace detail

class Scheduler {
 public:
  /// The kernel `ast` (a SINK) for `target`; the Scheduler keeps a reference to `target`, which
  /// must outlive it. dont_use_locals and applied_opts start as the SINK's KernelInfo has them.
  constexpr Scheduler(UOp ast, const Target& target) : target_(&target) {
    if (!ast.valid() || ast.op() != Ops::SINK) fail("Scheduler: the kernel is not a SINK");
    if (ast.arg().kind() == ArgKind::kernel_info) {
      const KernelInfo info = KernelInfo::from(ast.arg());
      dont_use_locals_ = info.dont_use_locals;
      applied_ = info.applied_opts;
    }
    set_ast(ast);
    std::int64_t max_id = 0;
    for (UOp r : axes_) max_id = std::max(max_id, detail::range_id(r));
    next_id_ = max_id + 1;
  }

  /// A Scheduler on the same graph (tinygrad's copy): new ids restart after the current axes' largest.
  constexpr Scheduler copy() const {
    Scheduler s(ast_, *target_);
    s.dont_use_locals_ = dont_use_locals_;
    s.applied_ = applied_;
    s.tensor_core_ = tensor_core_;
    return s;
  }

  constexpr UOp ast() const { return ast_; }
  constexpr const Target& target() const { return *target_; }
  constexpr const std::vector<Opt>& applied_opts() const { return applied_; }
  constexpr bool dont_use_locals() const { return dont_use_locals_; }
  /// The tensor core a TC opt used, or nullptr.
  constexpr const TensorCore* tensor_core() const {
    return tensor_core_ ? &target_->tensor_cores[*tensor_core_] : nullptr;
  }

  // --- the axis list ------------------------------------------------------------------------------
  /// The axes' RANGEs, in axis order.
  constexpr const std::vector<UOp>& rngs() const { return axes_; }
  constexpr std::size_t shape_len() const { return axes_.size(); }
  /// The axis of RANGE `r`, or nullopt when `r` is not one of the axes.
  constexpr std::optional<std::size_t> axis_index(UOp r) const {
    for (std::size_t i = 0; i < axes_.size(); ++i)
      if (axes_[i] == r) return i;
    return std::nullopt;
  }
  /// The axis an opt names (tinygrad's Scheduler.real_axis): UNROLL counts among the unrollable
  /// axes, GROUP and GROUPTOP among the REDUCE axes (negative indices from the end, as in Python),
  /// every other opt in the whole list. An error naming the opt where tinygrad raises.
  constexpr OptResult<std::size_t> real_axis(const Opt& o) const {
    using enum OptOps;
    if (!o.axis) return error(o, "the opt needs an axis");
    if (o.op == UNROLL || o.op == GROUP || o.op == GROUPTOP) {
      std::vector<std::size_t> in;  // (no `?:` of vectors: see get_optimized_ast)
      if (o.op == UNROLL) in = unrollable_dims();
      else in = axes_of({AxisType::REDUCE});
      const auto k = detail::py_index(*o.axis, in.size());
      if (k) return in[*k];
      text t;
      t.append("axis ").append(*o.axis).append(" out of range: the kernel has ").append(in.size())
          .append(o.op == UNROLL ? " unrollable axes" : " REDUCE axes");
      return KernelOptError{o, std::move(t)};
    }
    if (*o.axis >= static_cast<std::int64_t>(shape_len())) {
      text t;
      t.append("invalid axis on axis=").append(*o.axis).append(" op=<OptOps.").append(name(o.op)).append(": ")
          .append(static_cast<int>(o.op)).append("> self.shape_len=").append(shape_len());
      return KernelOptError{o, std::move(t)};
    }
    if (*o.axis < 0) {  // tinygrad takes a negative axis for "no axis" here, and fails later
      text t;
      t.append("axis ").append(*o.axis).append(" out of range: the kernel has ").append(shape_len()).append(" axes");
      return KernelOptError{o, std::move(t)};
    }
    return static_cast<std::size_t>(*o.axis);
  }
  constexpr std::vector<AxisType> axis_types() const {
    std::vector<AxisType> out;
    for (UOp r : axes_) out.push_back(detail::range_type(r));
    return out;
  }
  /// The RANGE of axis i.
  constexpr UOp axis(std::size_t i) const {
    if (i >= axes_.size()) {
      text t;
      t.append("Scheduler: axis ").append(i).append(" out of range (the kernel has ").append(axes_.size()).append(" axes)");
      fail(t.view());
    }
    return axes_[i];
  }
  /// The size of axis i: its constant, or the largest value a symbolic size takes.
  constexpr std::int64_t size(std::size_t i) const {
    const UOp s = axis(i).src(0);
    if (auto c = detail::const_value(s)) return *c;
    return s.vmax();
  }
  constexpr bool const_size(std::size_t i) const { return detail::const_value(axis(i).src(0)).has_value(); }
  constexpr std::vector<std::int64_t> full_shape() const {
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < axes_.size(); ++i) out.push_back(size(i));
    return out;
  }
  /// full_shape with the REDUCE, UNROLL and GROUP_REDUCE sizes as 1.
  constexpr std::vector<std::int64_t> output_shape() const {
    std::vector<std::int64_t> out = full_shape();
    for (std::size_t i = 0; i < out.size(); ++i) {
      const AxisType t = detail::range_type(axes_[i]);
      if (t == AxisType::REDUCE || t == AxisType::UNROLL || t == AxisType::GROUP_REDUCE) out[i] = 1;
    }
    return out;
  }
  /// "g0", "l1", "R0", ...: the axis letter and its number among axes of that type.
  constexpr std::vector<text> shape_str() const {
    std::vector<text> out;
    std::vector<AxisType> seen;
    std::vector<int> count;
    for (AxisType t : axis_types()) {
      std::size_t k = 0;
      while (k < seen.size() && seen[k] != t) ++k;
      if (k == seen.size()) seen.push_back(t), count.push_back(0);
      else ++count[k];
      text s;
      s.append(axis_shape_letter(t)).append(count[k]);
      out.push_back(std::move(s));
    }
    return out;
  }
  /// Positions of the axes whose type is one of `types`.
  constexpr std::vector<std::size_t> axes_of(std::initializer_list<AxisType> types) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < axes_.size(); ++i)
      if (std::find(types.begin(), types.end(), detail::range_type(axes_[i])) != types.end()) out.push_back(i);
    return out;
  }
  constexpr std::vector<UOp> ranges_of(std::initializer_list<AxisType> types) const {
    std::vector<UOp> out;
    for (std::size_t i : axes_of(types)) out.push_back(axes_[i]);
    return out;
  }
  /// GLOBAL, LOCAL and WEAK axes of constant size > 1 (UPCAST may split them).
  constexpr std::vector<std::size_t> upcastable_dims() const {
    return const_sized(axes_of({AxisType::GLOBAL, AxisType::LOCAL, AxisType::WEAK}));
  }
  /// The upcastable axes the heuristics may upcast: not one that sizes a loop inside it (its lanes
  /// would make the loop's bound a vector; an UPCAST of it is refused).
  constexpr std::vector<std::size_t> heuristic_upcast_dims() const {
    std::vector<std::size_t> out;
    for (std::size_t i : upcastable_dims())
      if (!sizes_a_range(axes_[i])) out.push_back(i);
    return out;
  }
  /// GROUP_REDUCE and REDUCE axes of constant size > 1 (UNROLL's axis numbers count these).
  constexpr std::vector<std::size_t> unrollable_dims() const {
    return const_sized(axes_of({AxisType::GROUP_REDUCE, AxisType::REDUCE}));
  }
  /// The product of the UPCAST and UNROLL sizes.
  constexpr std::int64_t upcast_size() const {
    std::int64_t p = 1;
    for (std::size_t i : axes_of({AxisType::UPCAST, AxisType::UNROLL})) p *= size(i);
    return p;
  }
  constexpr std::size_t upcasted() const { return axes_of({AxisType::UPCAST, AxisType::UNROLL}).size(); }
  constexpr std::size_t group_for_reduces() const { return axes_of({AxisType::GROUP_REDUCE}).size(); }

  /// Every REDUCE of the graph, in toposort order.
  constexpr std::vector<UOp> reduceops() const {
    std::vector<UOp> out;
    for (UOp u : order_)
      if (u.op() == Ops::REDUCE) out.push_back(u);
    return out;
  }
  /// The first REDUCE, or nullopt.
  constexpr std::optional<UOp> reduceop() const {
    for (UOp u : order_)
      if (u.op() == Ops::REDUCE) return u;
    return std::nullopt;
  }
  /// Every INDEX, in reverse toposort order.
  constexpr std::vector<UOp> bufs() const {
    std::vector<UOp> out;
    for (UOp u : order_)
      if (u.op() == Ops::INDEX) out.push_back(u);
    std::reverse(out.begin(), out.end());
    return out;
  }

  /// The output ranges: those (not REDUCE) of the ENDs the SINK ends.
  constexpr std::vector<UOp> output_rngs() const {
    std::vector<UOp> out;
    for (UOp e : ast_.srcs()) {
      if (e.op() != Ops::END) continue;
      const std::vector<UOp> ended = detail::srcs_from(e, 1);
      for (UOp r : detail::ranges_of_all(ended))
        if (detail::range_type(r) != AxisType::REDUCE) out.push_back(r);
    }
    return out;
  }
  /// The WEAK output ranges every STAGE of the kernel is inside: these may become GLOBAL.
  constexpr std::vector<UOp> globalizable_rngs() const {
    std::vector<UOp> out;
    for (UOp r : output_rngs())
      if (detail::range_type(r) == AxisType::WEAK) out.push_back(r);
    for (UOp x : order_) {
      if (x.op() != Ops::STAGE) continue;
      const std::vector<UOp> in = ranges(x);
      std::erase_if(out, [&](UOp r) { return !detail::contains(in, r); });
    }
    return out;
  }

  /// With local memory, the globalizable axes become GLOBAL.
  constexpr void convert_loop_to_global() {
    if (!target_->renderer.has_local) return;
    const std::vector<UOp> g = globalizable_rngs();
    std::vector<std::pair<UOp, UOp>> map;
    for (UOp r : axes_)
      if (detail::contains(g, r)) map.emplace_back(r, with_type(r, AxisType::GLOBAL));
    set_ast(substitute(ast_, map));
  }

  // --- opts ---------------------------------------------------------------------------------------
  /// Applies `opt` (recorded in applied_opts when `append_opt`). On success: the ranges it made (a
  /// splitting opt: the shrunk and the new range; TC: the tensor core's N, M and K ranges).
  constexpr OptResult<std::vector<UOp>> apply_opt(const Opt& o, bool append_opt = true) {
    const Saved saved{ast_, next_id_, applied_.size(), dont_use_locals_, tensor_core_};
    OptResult<std::vector<UOp>> r = apply_opt_unchecked(o);
    if (!r.ok()) {
      // TC changes the graph before its last checks: every failure goes back to the state before it
      set_ast(saved.ast);
      next_id_ = saved.next_id;
      applied_.resize(saved.applied);
      dont_use_locals_ = saved.dont_use_locals;
      tensor_core_ = saved.tensor_core;
      return r;
    }
    if (append_opt) applied_.push_back(o);
    return r;
  }
  /// apply_opt for callers that cannot go on without it: an invalid opt is an error naming it.
  constexpr std::vector<UOp> apply(const Opt& o) { return apply_opt(o).value_or_fail(); }

  // --- output -------------------------------------------------------------------------------------
  /// The kernel's name: "r" (with a REDUCE) or "E", then the axis sizes joined by grey underscores,
  /// each in its axis colour (tinygrad's get_optimized_ast; function_name() strips the colours).
  constexpr text kernel_name() const {
    const text sep = colored("_", {Color::black, true});
    text name;
    name.append(reduceop() ? 'r' : 'E');
    std::vector<UOp> specials;
    for (UOp u : order_)
      if (u.op() == Ops::SPECIAL) specials.push_back(u);
    detail::stable_sort(specials, [](UOp a, UOp b) { return a.arg().as_string() < b.arg().as_string(); });
    for (UOp s : specials) {
      text n;
      n.append(s.vmax() + 1);
      name.append(sep).append(colored(n.view(), {s.arg().as_string().starts_with('g') ? Color::blue : Color::cyan, false}));
    }
    const std::vector<Color> cols = colors();
    for (std::size_t i = 0; i < axes_.size(); ++i) name.append(sep).append(colored(size_text(i).view(), cols[i]));
    return name;
  }
  /// The graph after the opts: END/REDUCE list their ranges again (pm_flatten_range), the SINK's
  /// KernelInfo holds the name (`name_override` when given), applied_opts and dont_use_locals, and
  /// the SINK is tagged 1 (optimized).
  constexpr UOp get_optimized_ast(std::optional<std::string_view> name_override = std::nullopt) const {
    KernelInfo info;
    // not `?:`: in constant evaluation g++ 12 frees the storage of a conditional's class prvalue
    // before the assignment reads it
    if (name_override) info.name = *name_override;
    else info.name = kernel_name();
    info.applied_opts = applied_;
    info.dont_use_locals = dont_use_locals_;
    pat::rewrite_options o;
    o.name = "flatten range";
    const UOp flat = pat::graph_rewrite(ast_, pm_flatten_range, o);
    return ast_.arena().make(Ops::SINK, flat.dtype(), flat.srcs().to_vector(), info.to_arg(), Arg::integer(1));
  }

  /// The axis sizes with their axis types, for errors: `(64 GLOBAL, 256 REDUCE)`. tinygrad's
  /// colored_shape says the type by an ANSI colour, which an exception's text must not carry.
  constexpr text shape_text() const {
    text out;
    out.append('(');
    const std::vector<AxisType> types = axis_types();
    for (std::size_t i = 0; i < axes_.size(); ++i) {
      if (i) out.append(", ");
      out.append(size_text(i)).append(' ').append(name(types[i]));
    }
    out.append(')');
    return out;
  }

 private:
  struct Saved {
    UOp ast;
    std::int64_t next_id;
    std::size_t applied;
    bool dont_use_locals;
    std::optional<std::size_t> tensor_core;
  };

  constexpr void set_ast(UOp ast) {
    ast_ = ast;
    order_ = toposort(ast_);
    std::vector<std::pair<std::vector<std::int64_t>, UOp>> keyed;
    for (UOp u : order_) {
      if (u.op() != Ops::RANGE || u.dtype() == DType::void_ || u.vmax() <= 0) continue;
      if (detail::range_type(u) == AxisType::DEVICE) continue;
      keyed.emplace_back(detail::range_key(u), u);
    }
    detail::stable_sort(keyed, [](const auto& a, const auto& b) { return a.first < b.first; });
    axes_.clear();
    for (const auto& [key, u] : keyed) axes_.push_back(u);
  }

  constexpr std::vector<std::size_t> const_sized(std::vector<std::size_t> axes) const {
    std::erase_if(axes, [&](std::size_t i) { return !const_size(i) || size(i) <= 1; });
    return axes;
  }
  /// An axis size as the name prints it.
  constexpr text size_text(std::size_t i) const {
    const UOp s = axes_[i].src(0);
    if (auto c = detail::const_value(s)) {
      text t;
      t.append(*c);
      return t;
    }
    if (auto t = uopcg::render::size_text(s)) return std::move(*t);
    return symbolic::render_text(s);
  }
  /// The colour of each axis in the name: GLOBAL bright blue without locals, a WEAK axis that is no
  /// output range bright black, one that may not become GLOBAL white, else the type's colour.
  constexpr std::vector<Color> colors() const {
    const std::vector<UOp> out_r = output_rngs(), glob = globalizable_rngs();
    std::vector<Color> out;
    for (UOp r : axes_) {
      const AxisType t = detail::range_type(r);
      if (dont_use_locals_ && t == AxisType::GLOBAL) out.push_back({Color::blue, true});
      else if (t == AxisType::WEAK && !detail::contains(out_r, r)) out.push_back({Color::black, true});
      else if (t == AxisType::WEAK && !detail::contains(glob, r)) out.push_back({Color::white, false});
      else out.push_back(axis_color(t));
    }
    return out;
  }

  static constexpr UOp with_type(UOp r, AxisType t) {
    std::vector<Arg> items = r.arg().items();
    items.back() = Arg::axis_type(t);
    return with_arg(r, Arg::tuple(std::move(items)));
  }
  constexpr KernelOptError error(const Opt& o, std::string_view message) const { return KernelOptError{o, text(message)}; }

  /// Splits `rng` by `amount`: rng -> rng' * amount + new (top: new * (size/amount) + rng').
  constexpr OptResult<std::vector<UOp>> shift_to(const Opt& o, UOp rng, std::int64_t amount, AxisType new_type,
                                                 bool top = false, std::optional<UOp> input_new_rng = std::nullopt) {
    const std::optional<UOp> old_sz = detail::divides(rng.src(0), amount);
    if (!old_sz) {
      text t;
      t.append(amount).append(" can't divide ").append(detail::size_repr(rng.src(0))).append(" in ").append(shape_text());
      return KernelOptError{o, std::move(t)};
    }
    const UOp new_rng = input_new_rng ? *input_new_rng
                                      : range(const_like(rng, amount), next_id_++, new_type);
    const UOp replaced = with_srcs(rng, {*old_sz});
    const UOp sub = top ? new_rng * *old_sz + replaced : replaced * const_like(rng, amount) + new_rng;
    // a REG buffer of a hand-written kernel is one per work-item, a LOCAL buffer one per work-group:
    // the lanes of an upcast axis a REG buffer's stores depend on, and the lanes or work-items split
    // off a work-group axis a LOCAL buffer's stores depend on, each get a copy (tinygrad lets them
    // share one, and they overwrite each other's values)
    std::vector<UOp> regs;
    if (new_type == AxisType::UPCAST) regs = buffers_stored_under(rng, AddrSpace::REG);
    if ((new_type == AxisType::UPCAST || new_type == AxisType::LOCAL) &&
        (detail::range_type(rng) == AxisType::GLOBAL || detail::range_type(rng) == AxisType::WEAK))
      for (UOp b : buffers_stored_under(rng, AddrSpace::LOCAL)) regs.push_back(b);
    for (UOp b : regs) {
      if (b.src(0).op() != Ops::CONST || !b.src(0).arg().is_int()) return error(o, "a split of a REG or LOCAL buffer whose size is not a constant");
      for (UOp u : order_)
        if (u.op() == Ops::INDEX && buffer_of(u) == b && u.nsrc() != 2)
          return error(o, "a split of a REG or LOCAL buffer indexed by more than one index");
    }
    set_ast(substitute(ast_, {{rng, sub}}));
    if (!regs.empty()) {
      std::vector<std::pair<UOp, UOp>> map;
      for (UOp b : regs) {
        const std::int64_t n = b.src(0).arg().as_int();
        for (UOp u : order_) {
          if (u.op() != Ops::INDEX || buffer_of(u) != b) continue;
          const UOp i = u.src(1), off = new_rng * const_like(new_rng, n);
          const UOp gate = codegen::detail::get_valid(i);
          const UOp ni = gate.op() == Ops::CONST ? codegen::detail::get_idx(i) + off : valid(codegen::detail::get_idx(i) + off, gate);
          map.emplace_back(u, u.arena().make(Ops::INDEX, u.dtype(), {u.src(0), ni}, u.arg(), u.tag()));
        }
        map.emplace_back(b, with_srcs(b, {const_like(b.src(0), n * amount)}));
      }
      set_ast(substitute(ast_, map));
    }
    return std::vector<UOp>{replaced, new_rng};
  }

  /// The buffers of `space` (a hand-written kernel's REG or LOCAL buffers) with a STORE that depends on `rng`.
  constexpr std::vector<UOp> buffers_stored_under(UOp rng, AddrSpace space) const {
    std::vector<UOp> out;
    for (UOp u : order_) {
      if (u.op() != Ops::STORE || u.nsrc() == 0) continue;
      const UOp b = buffer_of(u.src(0));
      if (!b.valid() || b.op() != Ops::BUFFER || b.addrspace() != space || detail::contains(out, b)) continue;
      if (depends_on(u, rng)) out.push_back(b);
    }
    return out;
  }

  /// Whether `rng`'s iterations pass a value through memory (a hand-written accumulation, `UOp.set`
  /// in a loop): a STORE inside `rng` writes an address that does not depend on it, or a buffer that
  /// a load inside `rng` reads. Splitting such an axis over work-items or lanes (GROUP, GROUPTOP,
  /// UNROLL) changes the kernel's values; a REDUCE closes its ranges, so its accumulation is no such chain.
  constexpr bool carries_through_memory(UOp rng) const {
    std::vector<UOp> loaded;  // INDEX nodes inside `rng` read as values
    for (UOp u : order_)
      for (std::size_t k = 0; k < u.nsrc(); ++k)
        if (u.src(k).op() == Ops::INDEX && !(u.op() == Ops::STORE && k == 0) && in_range(u.src(k), rng))
          loaded.push_back(u.src(k));
    for (UOp s : order_) {
      if (s.op() != Ops::STORE || s.nsrc() < 2 || !in_range(s, rng)) continue;
      const UOp target = s.src(0);
      if (target.op() != Ops::INDEX || target.nsrc() < 2 || !in_range(codegen::detail::get_idx(target.src(1)), rng)) return true;
      const UOp b = buffer_of(target);
      for (UOp l : loaded)
        if (buffer_of(l) == b) return true;
    }
    return false;
  }

  /// Whether another RANGE's size depends on `rng` (a triangular loop inside it): lanes of `rng`
  /// would make that loop's bound a vector.
  constexpr bool sizes_a_range(UOp rng) const {
    for (UOp u : order_)
      if (u.op() == Ops::RANGE && u != rng && u.nsrc() > 0 && u.src(0).op() != Ops::CONST && depends_on(u.src(0), rng)) return true;
    return false;
  }

  /// Whether `rng` indexes where a STAGE is written (the STAGE's own index). Lanes of it would write
  /// the buffer with a vector index, which the local buffers' lowering does not build (tinygrad 0.14
  /// fails on such a kernel too).
  constexpr bool indexes_stage(UOp rng) const {
    for (UOp u : order_)
      if (u.op() == Ops::STAGE)
        for (UOp s : detail::srcs_from(u, 1))
          if (depends_on(s, rng)) return true;
    return false;
  }

  /// The reads of STAGEs (INDEX(STAGE, ...)) whose index depends on `rng`.
  constexpr std::vector<UOp> stage_reads_indexed_by(UOp rng) const {
    std::vector<UOp> out;
    for (UOp u : order_)
      if (u.op() == Ops::INDEX && u.nsrc() > 1 && u.src(0).op() == Ops::STAGE)
        for (UOp s : detail::srcs_from(u, 1))
          if (depends_on(s, rng)) {
            out.push_back(u);
            break;
          }
    return out;
  }

  /// Whether lanes of `rng` would meet other lanes in a read of a STAGE: the read is indexed by lanes
  /// of one axis while the kernel has lanes of another (an UPCAST of an output, an UNROLL of another
  /// reduce). Lanes of one axis alone read the staged buffer with a vector index; mixed, the read's
  /// lanes and the others' do not line up (tinygrad 0.14 fails on these too: "too many values to
  /// unpack", "invalid permutation").
  constexpr bool mixes_lanes_in_stage_read(UOp rng) const {
    const std::vector<UOp> reads = stage_reads_indexed_by(rng);
    for (std::size_t i : axes_of({AxisType::UPCAST, AxisType::UNROLL})) {
      const std::vector<UOp> other = stage_reads_indexed_by(axes_[i]);
      if (reads.empty() != other.empty()) return true;
      for (UOp r : reads)
        if (!detail::contains(other, r)) return true;
    }
    return false;
  }

  constexpr OptResult<std::vector<UOp>> apply_opt_unchecked(const Opt& o) {
    using enum OptOps;
    const std::vector<AxisType> types = axis_types();
    if (o.op == NOLOCALS) {
      for (AxisType t : types)
        if (t == AxisType::WARP || t == AxisType::LOCAL || t == AxisType::GROUP_REDUCE)
          return error(o, "no locals can't have locals");
      dont_use_locals_ = true;
      return std::vector<UOp>{};
    }
    if ((o.op == LOCAL || o.op == GROUP || o.op == GROUPTOP) && !target_->renderer.has_local)
      return error(o, "locals needed for opt");
    if (o.op == TC) return apply_tc(o);

    const OptResult<std::size_t> real = real_axis(o);
    if (!real.ok()) return real.error();
    const std::size_t ax = real.value_or_fail();
    const UOp rng = axes_[ax];
    const AxisType rtype = types[ax];

    if (o.op == PADTO) return padto(o, rng, rtype);
    if (o.op == SWAP) return swap(o, rng, rtype);

    AxisType new_type = AxisType::UPCAST;
    switch (o.op) {
      case LOCAL: new_type = AxisType::LOCAL; break;
      case UPCAST: new_type = AxisType::UPCAST; break;
      case UNROLL: new_type = AxisType::UNROLL; break;
      case GROUP: case GROUPTOP: new_type = AxisType::GROUP_REDUCE; break;
      case THREAD: new_type = AxisType::THREAD; break;
      default: {
        text t;
        t.append("unsupported opt OptOps.").append(name(o.op));
        return KernelOptError{o, std::move(t)};
      }
    }
    if (!o.arg.is_int()) return error(o, "the opt's arg is not an integer amount");
    // 0: the whole axis; an axis sized by loaded data may be unbounded (vmax saturated at int64's)
    const std::int64_t amt = o.arg.as_int() != 0 ? o.arg.as_int() : rng.vmax() == INT64_MAX ? INT64_MAX : rng.vmax() + 1;
    const bool grouping = o.op == GROUP || o.op == GROUPTOP;
    // a kernel with SPECIALs gets no GPU dims, so a GROUP_REDUCE axis would stay a loop of one
    // work-item, and the second stage would reset its accumulator in every iteration (tinygrad's too)
    if (grouping)
      for (UOp u : order_)
        if (u.op() == Ops::SPECIAL) return error(o, "no grouping in a kernel with SPECIALs (it gets no GPU dims)");
    const std::optional<UOp> red = reduceop();

    // shared memory of a grouped reduce (once grouped, every split counts against it)
    if (red && (grouping || group_for_reduces() > 0)) {
      std::int64_t smem = amt;
      bool over = __builtin_mul_overflow(smem, itemsize(red->dtype()), &smem);
      for (std::size_t i : axes_of({AxisType::UPCAST, AxisType::WARP, AxisType::LOCAL, AxisType::GROUP_REDUCE}))
        over = over || __builtin_mul_overflow(smem, size(i), &smem);
      if (over || smem > target_->renderer.shared_max) {
        text t;
        t.append("exceeds maximum shared memory size: needs ");
        if (over) t.append("over 2^63 bytes");
        else t.append(smem);
        t.append(", max ").append(target_->renderer.shared_max);
        return KernelOptError{o, std::move(t)};
      }
    }
    if (red && grouping) {
      // the first REDUCE whose range sources contain the axis may not sit inside another reduce (a
      // RANGE source is itself: a reduce over r2 < r1+1 does not reduce over r1)
      std::optional<UOp> owner;
      for (UOp u : order_) {
        if (u.op() != Ops::REDUCE) continue;
        bool reduces = false;
        for (UOp s : detail::srcs_from(u, 1)) reduces = reduces || (s.op() == Ops::RANGE ? s == rng : detail::contains(ranges(s), rng));
        if (reduces) {
          owner = u;
          break;
        }
      }
      if (!owner) return error(o, "no REDUCE reduces the axis");
      for (UOp r : ranges(*owner)) {
        const AxisType t = detail::range_type(r);
        if (t == AxisType::REDUCE || t == AxisType::UNROLL || t == AxisType::GROUP_REDUCE)
          return error(o, "cannot have a GROUP_REDUCE inside another reduce");
      }
    }
    switch (o.op) {
      case UNROLL:
        if (amt > 32) return error(o, "don't unroll more than 32");
        if (rtype != AxisType::GROUP_REDUCE && rtype != AxisType::REDUCE) return error(o, "unroll is for GROUP_REDUCE/REDUCE");
        if (carries_through_memory(rng)) return error(o, "the axis carries a value through memory from one iteration to the next");
        break;
      case UPCAST:
        if (target_->renderer.device.view() != "DSP" && amt > 16) return error(o, "don't upcast more than 16");
        if (rtype != AxisType::GLOBAL && rtype != AxisType::LOCAL && rtype != AxisType::WEAK) {
          text t;
          t.append("upcast is for GLOBAL/LOCAL/WEAK, not AxisType.").append(name(rtype));
          return KernelOptError{o, std::move(t)};
        }
        break;
      case LOCAL:
        if (dont_use_locals_) return error(o, "can't use locals");
        if (rtype != AxisType::GLOBAL && rtype != AxisType::WEAK) return error(o, "local is for globals");
        break;
      case THREAD: {
        if (!target_->renderer.has_threads) return error(o, "target does not support threads");
        if (amt > target_->renderer.global_max[0]) return error(o, "too many threads");
        for (AxisType t : types)
          if (t == AxisType::THREAD) return error(o, "already threaded");
        if (!detail::contains(globalizable_rngs(), rng)) return error(o, "can't apply range to this dim");
        break;
      }
      default:  // GROUP, GROUPTOP
        for (const Opt& a : applied_)
          if (a.op == TC) return error(o, "no grouping with tensor cores");
        if (dont_use_locals_) return error(o, "can't use locals");
        if (rtype != AxisType::REDUCE) return error(o, "group is for reduce");
        if (carries_through_memory(rng)) return error(o, "the axis carries a value through memory from one iteration to the next");
        break;
    }
    if (o.op == UPCAST || o.op == UNROLL) {  // lanes of the axis
      if (sizes_a_range(rng)) return error(o, "the axis sizes a loop inside it (a loop bound cannot be a vector)");
      if (indexes_stage(rng)) return error(o, "the axis indexes a staged buffer (a STAGE): its lanes would need a vector index into it");
      if (mixes_lanes_in_stage_read(rng))
        return error(o, "the axis's lanes would meet other lanes in a read of a staged buffer (a STAGE)");
    }
    if (amt < 1) return error(o, "the amount must be positive");
    return shift_to(o, rng, amt, new_type, o.op == GROUPTOP || o.op == THREAD);
  }

  /// PADTO(axis, m): the axis grows to a multiple of m; every INDEX that uses it is gated on the
  /// old size (a STORE's address directly, a read through where(valid, load, Invalid)). A value
  /// computed from such a read is Invalid in a padded step (pm_data_invalid), so a REDUCE adds its
  /// identity there and a STORE of it is skipped; unlike tinygrad, a REDUCE source or a stored value
  /// that is not (the other arm of a WHERE, a load the axis does not index, a value the axis does
  /// not change under an ADD or MUL) is gated too.
  constexpr OptResult<std::vector<UOp>> padto(const Opt& o, UOp rng, AxisType rtype) {
    using enum Ops;
    if (rng.src(0).op() != CONST) return error(o, "only pad const axes");
    if (rtype == AxisType::UPCAST || rtype == AxisType::UNROLL) return error(o, "cannot pad upcasted");
    if (rtype == AxisType::THREAD) return error(o, "cannot pad thread");
    if (!o.arg.is_int() || o.arg.as_int() < 1) return error(o, "the pad multiple is not a positive integer");
    const std::int64_t size = rng.vmax() + 1, m = o.arg.as_int();
    const std::int64_t new_sz = (size + m - 1) / m * m;
    if (!(size > new_sz / 4)) return error(o, "pad adds more than quadruple the work");
    Arena& a = rng.arena();
    const UOp replaced = a.make(RANGE, rng.dtype(), {const_like(rng, new_sz)}, rng.arg());
    std::vector<std::pair<UOp, UOp>> map{{rng, replaced}};
    const UOp valid_c = replaced < literal(a, size);
    auto gated = [&](UOp b) {
      const UOp i = codegen::detail::get_idx(b.src(1));
      return a.make(INDEX, b.dtype(), {b.src(0), valid(i, valid_c & codegen::detail::get_valid(b.src(1)))}, b.arg(), b.tag());
    };
    std::vector<UOp> store_targets;
    for (UOp s : order_)
      if (s.op() == STORE) store_targets.push_back(s.src(0));
    std::vector<bool> invalid_there(a.size());  // Invalid in a padded step, by node id
    for (UOp b : bufs()) {
      if (!depends_on(codegen::detail::get_idx(b.src(1)), rng)) continue;
      const bool target = detail::contains(store_targets, b);
      map.emplace_back(b, target ? gated(b) : where(valid_c, gated(b), invalid(a)));
      invalid_there[b.id()] = !target;
    }
    // keys inside a replacement are replaced too, so these are built from the original sources
    for (UOp u : order_) {
      if (u.op() == CONST)
        invalid_there[u.id()] = u.arg().is_invalid();
      else if (u.op() == WHERE)
        invalid_there[u.id()] = invalid_there[u.src(0).id()] || (invalid_there[u.src(1).id()] && invalid_there[u.src(2).id()]);
      else if (u.in(GroupOp::Unary | GroupOp::Binary | OpSet{CAST, BITCAST}))
        for (UOp x : u.srcs()) invalid_there[u.id()] = invalid_there[u.id()] || invalid_there[x.id()];
      bool reduce = false;  // a range source may be an expression of ranges (an opt's split)
      for (std::size_t k = 1; u.op() == REDUCE && k < u.nsrc(); ++k)
        reduce |= u.src(k).op() == RANGE ? u.src(k) == rng : depends_on(u.src(k), rng);
      const bool store = u.op() == STORE && u.src(0).op() == INDEX &&
                         !depends_on(codegen::detail::get_idx(u.src(0).src(1)), rng) && in_range(u.src(1), rng);
      if ((!reduce && !store) || invalid_there[u.src(reduce ? 0 : 1).id()]) continue;
      // a MAX over steps that all see the same value is that value, padded or not
      if (reduce && symbolic::detail::reduce_op(u) == MAX && !depends_on(u.src(0), rng)) continue;
      std::vector<UOp> srcs = u.srcs().to_vector();
      srcs[0] = reduce ? where(valid_c, srcs[0], invalid(a)) : gated(srcs[0]);
      map.emplace_back(u, a.make(u.op(), u.dtype(), srcs, u.arg(), u.tag()));
    }
    set_ast(substitute(ast_, map));
    return std::vector<UOp>{};
  }

  /// SWAP(a, b): two GLOBAL axes exchange their ids (so their order, and the launch dims).
  constexpr OptResult<std::vector<UOp>> swap(const Opt& o, UOp rng, AxisType rtype) {
    if (!o.arg.is_int()) return error(o, "the opt's arg is not an axis");
    const auto k = detail::py_index(o.arg.as_int(), shape_len());
    if (!k) {
      text t;
      t.append("axis ").append(o.arg.as_int()).append(" out of range: the kernel has ").append(shape_len()).append(" axes");
      return KernelOptError{o, std::move(t)};
    }
    const UOp alt = axes_[*k];
    if (rtype != AxisType::GLOBAL || detail::range_type(alt) != AxisType::GLOBAL) return error(o, "swap only for globals");
    // each takes the other's arg but keeps its type; tagged so that neither replacement is the other's key
    auto renamed = [](UOp r, UOp other) {
      std::vector<Arg> items = other.arg().items();
      items.back() = r.arg()[r.arg().size() - 1];
      return r.arena().make(Ops::RANGE, r.dtype(), r.srcs().to_vector(), Arg::tuple(std::move(items)), Arg::integer(1));
    };
    const UOp swapped = substitute(ast_, {{rng, renamed(rng, alt)}, {alt, renamed(alt, rng)}});
    set_ast(detail::remove_all_tags(swapped));
    return std::vector<UOp>{};
  }

  // --- tensor cores -------------------------------------------------------------------------------

  constexpr OptResult<std::vector<UOp>> apply_tc(const Opt& o) {
    if (!applied_.empty()) return error(o, "tensor core opts must be first");
    if (!o.axis) return error(o, "tensor core opts must have an axis");
    const Arg& a = o.arg;
    if (!a.is_tuple() || a.size() != 3 || !a[0].is_int() || !a[1].is_int() || !a[2].is_int())
      return error(o, "tensor core opts must have valid arg");
    const std::int64_t tc_select = a[0].as_int(), tc_opt = a[1].as_int(), use_tc = a[2].as_int();
    if (!(-1 <= tc_select && tc_select < static_cast<std::int64_t>(target_->tensor_cores.size())))
      return error(o, "tensor core opts must have valid tc_select");
    if (!(0 <= tc_opt && tc_opt <= 2)) return error(o, "tensor core opts must have valid tc_opt");
    if (!(0 < use_tc && use_tc <= 2)) return error(o, "use_tensor_cores value is not valid");
    auto r = tc_axes(o, use_tc, *o.axis, tc_select, tc_opt);
    if (!r.ok()) return r;
    if (r.value_or_fail().empty()) return error(o, "no tensor core available");
    return r;
  }

  /// tinygrad's _apply_tc_opt: the first tensor core whose dtypes fit and whose `axis`-th choice of
  /// (N, M, K) ranges works; an empty list when none does.
  constexpr OptResult<std::vector<UOp>> tc_axes(const Opt& o, std::int64_t use_tc, std::int64_t axis, std::int64_t tc_select,
                                                std::int64_t tc_opt) {
    using enum Ops;
    const std::vector<UOp> reds = reduceops();
    if (reds.empty()) return error(o, "no reduce ops for TensorCore");
    const UOp red = reds[0];
    if (red.arg()[0].as_op() != ADD) return std::vector<UOp>{};
    const UOp mul = red.src(0).op() == CAST ? red.src(0).src(0) : red.src(0);
    if (mul.op() != MUL) return std::vector<UOp>{};
    const UOp in0 = mul.src(0), in1 = mul.src(1);
    std::vector<std::size_t> candidates;
    if (tc_select == -1)
      for (std::size_t i = 0; i < target_->tensor_cores.size(); ++i) candidates.push_back(i);
    else
      candidates.push_back(static_cast<std::size_t>(tc_select));
    const std::string_view device = target_->renderer.device.view();
    for (std::size_t ci : candidates) {
      const TensorCore& tc = target_->tensor_cores[ci];
      tc.check();
      if ((device == "CUDA" || device == "NV") && tc.dtype_in == DType::float32 && !target_->allow_tf32) continue;
      if (!(tc.dtype_in == in0.dtype() && tc.dtype_in == in1.dtype() && tc.dtype_out == red.dtype())) continue;
      // the ranges only one operand uses (X and Y) and the reduced ones (K), by id, largest first
      auto by_id_desc = [](std::vector<UOp> v) {
        detail::stable_sort(v, [](UOp x, UOp y) { return detail::range_id(x) > detail::range_id(y); });
        return v;
      };
      const std::vector<UOp> r0 = ranges(in0), r1 = ranges(in1);
      std::vector<UOp> in0_r, in1_r;
      for (UOp u : r0)
        if (!detail::contains(r1, u)) in0_r.push_back(u);
      for (UOp u : r1)
        if (!detail::contains(r0, u)) in1_r.push_back(u);
      in0_r = by_id_desc(in0_r);
      in1_r = by_id_desc(in1_r);
      const std::vector<UOp> red_r = by_id_desc(detail::srcs_from(red, 1));
      if (in0_r.empty() || in1_r.empty() || red_r.empty()) continue;
      // the choices are the product in1 x in0 x red, in that nesting
      const std::size_t n_choices = in1_r.size() * in0_r.size() * red_r.size();
      if (axis < 0 || static_cast<std::size_t>(axis) >= n_choices) continue;
      const std::size_t c = static_cast<std::size_t>(axis);
      std::vector<UOp> axes{in1_r[c / (in0_r.size() * red_r.size())], in0_r[(c / red_r.size()) % in0_r.size()],
                            red_r[c % red_r.size()]};
      if (detail::range_type(axes[0]) == AxisType::REDUCE || detail::range_type(axes[1]) == AxisType::REDUCE)
        return error(o, "tensor core X/Y axes can't be REDUCE");

      // tag the REDUCE, then pad the axes the core's dims do not divide (TC_OPT 2)
      const UOp first_red = reduceops()[0];
      set_ast(substitute(ast_, {{first_red, with_tag(first_red, Arg::string("TC"))}}));
      bool next_tc = false;
      for (std::size_t i = 0; i < 3 && !next_tc; ++i) {
        const auto idx = axis_index(axes[i]);
        if (!idx) {
          text t;
          t.append(detail::range_repr(axes[i])).append(" is not in list");
          return KernelOptError{o, std::move(t)};
        }
        if ((axes[i].vmax() + 1) % tc.dims[i] == 0) continue;
        if (tc_opt < 2 || !apply_opt(Opt{OptOps::PADTO, static_cast<std::int64_t>(*idx), Arg::integer(tc.dims[i])}, false).ok()) {
          next_tc = true;
          break;
        }
        axes[i] = axes_[*idx];
      }
      if (next_tc) continue;

      // the local bits of the core all come from one WARP range of `threads` work-items
      Arena& ar = ast_.arena();
      UOp warp = range(ar, tc.threads, -1, AxisType::WARP);
      std::vector<UOp> ne;
      for (TcAxis op : tc.opts) {
        const auto d = static_cast<std::size_t>(op.index);
        const bool local = op.kind == 'l';
        OptResult<std::vector<UOp>> s = shift_to(o, axes[d], 2, local ? AxisType::LOCAL : AxisType::UPCAST, false,
                                                 local ? std::optional<UOp>(warp % 2) : std::nullopt);
        if (!s.ok()) return s;
        if (op.kind == 'l') warp = warp / 2;
        axes[d] = s.value_or_fail()[0];
        ne.push_back(s.value_or_fail()[1]);
      }
      for (std::size_t i = 0; i < tc.reduce_count(); ++i) {
        OptResult<std::vector<UOp>> s = shift_to(o, axes[2], 2, AxisType::UNROLL);
        if (!s.ok()) return s;
        axes[2] = s.value_or_fail()[0];
        ne.push_back(s.value_or_fail()[1]);
      }
      if (use_tc != 2) {
        auto w = build_wmma(o, tc, ne);
        if (!w.ok()) return w;
      }
      tensor_core_ = ci;
      return axes;
    }
    return std::vector<UOp>{};
  }

  /// Replaces the TC-tagged REDUCE by a WMMA of its MUL's operands, their lanes permuted by the
  /// core's swizzle (a REDUCE over the other ranges stays around it).
  constexpr OptResult<std::vector<UOp>> build_wmma(const Opt& o, const TensorCore& tc, const std::vector<UOp>& ne) {
    using enum Ops;
    Arena& a = ast_.arena();
    std::optional<UOp> red;
    for (UOp u : order_)
      if (u.op() == REDUCE && u.tag() == Arg::string("TC")) {
        if (red) return error(o, "more than one REDUCE is tagged for the tensor core");
        red = u;
      }
    if (!red) return error(o, "the tensor core's REDUCE is gone");
    std::vector<std::pair<UOp, UOp>> tag_map;
    std::vector<UOp> tne;
    for (UOp x : ne) {
      tne.push_back(with_tag(x, Arg::integer(1)));
      tag_map.emplace_back(x, tne.back());
    }
    const UOp tagged = substitute(*red, tag_map);
    const UOp mul = tagged.src(0).op() == CAST ? tagged.src(0).src(0) : tagged.src(0);
    text missing;
    const auto perms = tc.permutes_for_shape_str(tc.base_shape_str(), &missing);
    if (!perms) {
      text t;
      t.append('\'').append(missing).append("' is not in list");
      return KernelOptError{o, std::move(t)};
    }
    std::vector<UOp> srcs;
    for (std::size_t k = 0; k < 2; ++k) {
      const std::vector<std::size_t> order = detail::argsort((*perms)[k]);
      std::vector<std::pair<UOp, UOp>> m;
      for (std::size_t j = 0; j < tne.size() && j < order.size(); ++j) m.emplace_back(tne[j], ne[order[j]]);
      srcs.push_back(substitute(mul.src(k), m));
    }
    // the WMMA's reduce and upcast axes, by name in the current shape string
    const std::vector<text> names = shape_str();
    auto find = [&](const TcAxis& n) -> std::optional<std::size_t> {
      const text s = n.str();
      for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i].view() == s.view()) return i;
      return std::nullopt;
    };
    std::vector<std::int64_t> reduce_ids;
    for (std::size_t i = 0; i < tc.reduce_count(); ++i) {
      const auto k = find({'r', static_cast<int>(i)});
      if (!k) {
        text t;
        t.append("'r").append(i).append("' is not in list");
        return KernelOptError{o, std::move(t)};
      }
      reduce_ids.push_back(detail::range_id(axes_[*k]));
    }
    std::vector<std::int64_t> upcast_ids;
    for (const TcAxis& n : tc.base_upcast_axes()) {
      const auto k = find(n);
      if (!k) {
        text t;
        t.append('\'').append(n.str()).append("' is not in list");
        return KernelOptError{o, std::move(t)};
      }
      upcast_ids.push_back(detail::range_id(axes_[*k]));
    }
    std::array<std::vector<std::int64_t>, 3> per_operand;
    for (std::size_t i = 0; i < 3; ++i) {
      const auto n = static_cast<std::size_t>(detail::log2_exact(tc.elements_per_thread[i]));
      per_operand[i].assign(upcast_ids.begin(), upcast_ids.begin() + static_cast<std::ptrdiff_t>(std::min(n, upcast_ids.size())));
    }
    std::vector<Arg> upcast_args;
    for (std::size_t i = 0; i < 3; ++i) {
      std::vector<Arg> pairs;
      std::vector<std::int64_t> present;
      for (std::int64_t id : per_operand[i]) pairs.push_back(Arg::tuple_of(id, 2)), present.push_back(id);
      for (std::size_t k = 0; k < 2; ++k)  // the axes of A and B each operand lacks, with size 1
        for (std::int64_t id : per_operand[k])
          if (std::find(present.begin(), present.end(), id) == present.end()) pairs.push_back(Arg::tuple_of(id, 1)), present.push_back(id);
      upcast_args.push_back(Arg::tuple(std::move(pairs)));
    }
    std::vector<UOp> zeros;
    Arg zero = Arg::integer(0);
    if (is_float(tc.dtype_out)) zero = Arg::floating(0.0);
    else if (is_bool(tc.dtype_out)) zero = Arg::boolean(false);
    for (std::int64_t i = 0; i < tc.elements_per_thread[2]; ++i) zeros.push_back(const_(a, tc.dtype_out, zero));
    const Arg dims = Arg::tuple_of(tc.dims[0], tc.dims[1], tc.dims[2]);
    const Arg warg = Arg::tuple_of(dims, Arg::dtype(srcs[0].dtype()), Arg::string(target_->renderer.device.view()), tc.threads,
                                   Arg::tuple(std::move(upcast_args)));
    UOp wmma = make_node(a, WMMA, std::vector<UOp>{srcs[0], srcs[1], node(STACK, zeros)}, warg);
    std::vector<UOp> keep{wmma};
    const std::vector<UOp> red_srcs = detail::srcs_from(*red, 1);
    for (UOp x : toposort(std::span<const UOp>(red_srcs), [](UOp) { return true; }))
      if (x.op() == RANGE && std::find(reduce_ids.begin(), reduce_ids.end(), detail::range_id(x)) == reduce_ids.end())
        keep.push_back(x);
    if (keep.size() > 1) wmma = make_node(a, REDUCE, keep, Arg::tuple_of(ADD, 0));
    set_ast(substitute(ast_, {{*red, wmma}}));
    return std::vector<UOp>{};
  }

  UOp ast_;
  const Target* target_;
  bool dont_use_locals_ = false;
  std::vector<Opt> applied_;
  std::int64_t next_id_ = 1;                // the id of the next new range
  std::optional<std::size_t> tensor_core_;  // into target_->tensor_cores
  std::vector<UOp> order_;                  // ast_'s nodes in toposort order
  std::vector<UOp> axes_;                   // the axis list of ast_
};

}  // namespace uopcg::codegen::opt
