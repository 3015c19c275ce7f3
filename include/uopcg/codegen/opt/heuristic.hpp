// tinygrad's hand-coded heuristics (tinygrad/codegen/opt/heuristic.py, hand_coded_optimizations):
// the opts a kernel gets when nobody chose them, driven by the Target (local memory, shared memory
// size, threads, tensor cores, and the NOLOCALS / TC / MV knobs). In order: tensor cores (and
// nothing else when one applies), matrix-vector, grouping of small-output reductions (and nothing
// else when one applies), upcasts of small masked axes, upcasts of broadcast axes, unrolling the
// last reduce axis, a default upcast by 4, local axes, CPU threads. IMAGE upcasts are not here:
// uopcg has no image buffers (a target with IMAGE set is rejected where settings are read).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "scheduler.hpp"

namespace uopcg::codegen::opt {

namespace detail {

/// The ADD-terms of x (tinygrad's split_uop(Ops.ADD)).
constexpr void add_terms(UOp x, std::vector<UOp>& out) {
  if (x.op() == Ops::ADD) {
    for (UOp s : x.srcs()) add_terms(s, out);
    return;
  }
  out.push_back(x);
}
constexpr std::vector<UOp> add_terms(UOp x) {
  std::vector<UOp> out;
  add_terms(x, out);
  return out;
}

/// The address of an INDEX without its validity gate.
constexpr UOp index_expr(UOp index) { return codegen::detail::get_idx(index.src(1)); }

constexpr Opt make_opt(OptOps op, std::int64_t axis, std::int64_t arg) { return Opt{op, axis, Arg::integer(arg)}; }

/// The axis of range `r` in `k`'s list; when it is not an axis, an error naming the opt `op` was
/// to be (where tinygrad's list.index raises).
constexpr OptResult<std::size_t> index_of(const Scheduler& k, UOp r, OptOps op) {
  if (const auto i = k.axis_index(r)) return *i;
  text t;
  t.append(range_repr(r)).append(" is not in list");
  return KernelOptError{Opt{op, std::nullopt, Arg()}, std::move(t)};
}

/// Step 1: TC on axis 0, 1 or 2; the first that applies gets M and N upcast and N made local.
constexpr std::optional<OptResult<Scheduler>> try_tensor_cores(const Scheduler& k) {
  using enum OptOps;
  const Target& t = k.target();
  if (!(t.use_tc > 0 && (k.axes_of({AxisType::GROUP_REDUCE, AxisType::REDUCE}).size() == 1 || t.tc_opt >= 1))) return std::nullopt;
  for (std::int64_t axis = 0; axis < 3; ++axis) {
    Scheduler tk = k.copy();
    auto r = tk.apply_opt(Opt{TC, axis, Arg::tuple_of(std::int64_t(t.tc_select), std::int64_t(t.tc_opt), std::int64_t(t.use_tc))});
    if (!r.ok()) continue;
    std::vector<UOp> rngs = r.value_or_fail();
    for (std::size_t tc_dim : {std::size_t(1), std::size_t(0)}) {
      for (std::int64_t sz : {5, 4, 3, 2}) {
        if (!divides(rngs[tc_dim].src(0), sz)) continue;
        auto i = index_of(tk, rngs[tc_dim], UPCAST);
        if (!i.ok()) return OptResult<Scheduler>(i.error());
        auto u = tk.apply_opt(make_opt(UPCAST, static_cast<std::int64_t>(i.value_or_fail()), sz));
        if (!u.ok()) return OptResult<Scheduler>(u.error());
        rngs[tc_dim] = u.value_or_fail()[0];
        break;
      }
    }
    for (std::int64_t sz : {4, 2}) {
      if (!divides(rngs[0].src(0), sz)) continue;
      auto i = index_of(tk, rngs[0], LOCAL);
      if (!i.ok()) return OptResult<Scheduler>(i.error());
      auto l = tk.apply_opt(make_opt(LOCAL, static_cast<std::int64_t>(i.value_or_fail()), sz));
      if (!l.ok()) return OptResult<Scheduler>(l.error());
      break;
    }
    return OptResult<Scheduler>(std::move(tk));
  }
  return std::nullopt;
}

/// Whether `red` sums a product of two loads whose first is indexed by the range `first` directly
/// and uses no range the second lacks (the matrix-vector shape step 4 looks for).
constexpr bool is_matvec(UOp red, UOp first) {
  using enum Ops;
  const UOp mul = red.src(0);
  if (red.arg()[0].as_op() != ADD || mul.op() != MUL || mul.src(0).op() != INDEX || mul.src(1).op() != INDEX) return false;
  const UOp idx0 = index_expr(mul.src(0));
  if (!contains(add_terms(idx0), first)) return false;
  const std::vector<UOp> r0 = ranges(idx0), r1 = ranges(index_expr(mul.src(1)));
  return std::all_of(r0.begin(), r0.end(), [&](UOp r) { return contains(r1, r); });
}

/// Step 4: on a matrix-vector product (is_matvec on the first REDUCE axis), GROUP that axis by
/// MV_THREADS_PER_ROW, and the first fitting GLOBAL axis LOCAL by MV_BLOCKSIZE and UPCAST by
/// MV_ROWS_PER_THREAD. nullopt when the step does not apply.
constexpr std::optional<OptResult<Scheduler>> try_matvec(Scheduler& k) {
  using enum OptOps;
  const Target& t = k.target();
  const std::int64_t bs = t.mv_blocksize, tpr = t.mv_threads_per_row, rpt = t.mv_rows_per_thread;
  const std::optional<UOp> red = k.reduceop();
  const std::vector<UOp> reduce_rngs = k.ranges_of({AxisType::REDUCE});
  if (!(t.renderer.has_local && t.renderer.has_shared && t.mv != 0 && (bs > 1 || tpr > 1 || rpt > 1) && k.shape_len() >= 2 &&
        red && !reduce_rngs.empty() && is_matvec(*red, reduce_rngs[0])))
    return std::nullopt;
  const UOp first = reduce_rngs[0];
  for (std::size_t g : k.axes_of({AxisType::GLOBAL})) {
    if (!divides(first.src(0), tpr) || !k.const_size(g) || k.size(g) % (bs * rpt) != 0) continue;
    if (tpr > 1) (void)k.apply_opt(make_opt(GROUP, 0, tpr));  // a failed GROUP is fine
    if (bs > 1)
      if (auto r = k.apply_opt(make_opt(LOCAL, static_cast<std::int64_t>(g), bs)); !r.ok()) return OptResult<Scheduler>(r.error());
    if (rpt > 1)
      if (auto r = k.apply_opt(make_opt(UPCAST, static_cast<std::int64_t>(g), rpt)); !r.ok()) return OptResult<Scheduler>(r.error());
    return OptResult<Scheduler>(std::move(k));
  }
  return std::nullopt;
}

/// The product of the output sizes of the upcastable axes.
constexpr std::int64_t upcastable_output(const Scheduler& k) {
  const std::vector<std::int64_t> out = k.output_shape();
  std::int64_t p = 1;
  for (std::size_t i : k.upcastable_dims()) p *= out[i];
  return p;
}

/// Step 7's choice: among upcastable axes (and amounts 3 and 4) some buffer broadcasts along
/// (its index misses the axis but has every upcast range), the one fewest buffers use, then with
/// the smallest strides; nullopt when there is none.
constexpr std::optional<std::pair<std::size_t, std::int64_t>> broadcast_upcast(const Scheduler& k,
                                                                               const std::vector<std::size_t>& done) {
  using enum Ops;
  const bool dsp = k.target().renderer.device.view() == "DSP";
  std::vector<std::int64_t> amounts;
  if (dsp) {
    if (done.empty()) amounts.push_back(128);
  } else {
    amounts = {3, 4};
  }
  const std::vector<UOp> bufs = k.bufs();
  const std::vector<UOp> upcast_rngs = k.ranges_of({AxisType::UPCAST, AxisType::UNROLL});
  std::optional<std::tuple<std::int64_t, std::int64_t, std::size_t, std::int64_t>> best;
  for (std::size_t axis : k.heuristic_upcast_dims())
    for (std::int64_t amount : amounts) {
      if (contains(done, axis) || k.size(axis) % amount != 0) continue;
      const UOp rng = k.rngs()[axis];
      bool broadcast = false;
      for (UOp b : bufs) {
        const UOp idx = index_expr(b);
        if (in_backward_slice(idx, rng)) continue;
        bool all_up = true;
        for (UOp r2 : upcast_rngs) all_up = all_up && in_backward_slice(idx, r2);
        if (all_up) broadcast = true;
      }
      if (!broadcast) continue;
      std::int64_t num_strides = 0, sum_strides = 0;
      for (UOp b : bufs) {
        const UOp idx = index_expr(b);
        if (in_backward_slice(idx, rng)) ++num_strides;
        for (UOp c : add_terms(idx)) {
          if (c == rng) ++sum_strides;
          if (c.op() == MUL && c.src(0) == rng && c.src(1).op() == CONST) sum_strides += c.src(1).arg().as_int();
          if (c.op() == MUL && c.src(1) == rng && c.src(0).op() == CONST) sum_strides += c.src(0).arg().as_int();
        }
      }
      const auto key = std::tuple{num_strides, sum_strides, axis, amount};
      if (!best || key < *best) best = key;
    }
  if (!best) return std::nullopt;
  return std::pair{std::get<2>(*best), std::get<3>(*best)};
}

}  // namespace detail

/// The heuristics' opts on a copy of `k0` (a Scheduler after convert_loop_to_global). An opt the
/// heuristics do not expect to fail and that fails is the result's error, as in tinygrad, where
/// that KernelOptError aborts the compile.
constexpr OptResult<Scheduler> hand_coded_optimizations(const Scheduler& k0) {
  using enum OptOps;
  using namespace detail;
  if (auto tc = try_tensor_cores(k0)) return std::move(*tc);
  Scheduler k = k0.copy();
  const Target& t = k.target();
  auto apply = [&](const Opt& o) -> std::optional<KernelOptError> {
    auto r = k.apply_opt(o);
    if (r.ok()) return std::nullopt;
    return r.error();
  };

  if (auto mv = try_matvec(k)) return std::move(*mv);

  // grouping: a reduce with a small output splits its reduce axis over a work-group
  if (upcastable_output(k) <= (t.nolocals ? 240 : 2048))
    for (std::int64_t axis = 0; axis < 3; ++axis)
      if (k.apply_opt(make_opt(GROUPTOP, axis, 16)).ok()) break;
  if (k.group_for_reduces() > 0) return k;

  // small axes some WHERE's condition depends on are upcast whole (leading ones first)
  std::vector<UOp> gate_rngs;
  for (UOp u : toposort(k.ast()))
    if (u.op() == Ops::WHERE)
      for (UOp r : ranges(u.src(0))) add_unique(gate_rngs, r);
  std::vector<std::size_t> to_upcast;
  for (std::size_t axis : k.heuristic_upcast_dims()) {
    std::int64_t p = k.size(axis);
    for (std::size_t j : to_upcast) p *= k.size(j);
    if (k.size(axis) <= 7 && contains(gate_rngs, k.rngs()[axis]) && p <= 7 * 7) to_upcast.push_back(axis);
  }
  for (std::size_t i = to_upcast.size(); i-- > 0;)
    if (auto e = apply(make_opt(UPCAST, static_cast<std::int64_t>(to_upcast[i]), 0))) return *e;

  // upcasts of axes some buffer broadcasts along, while the output is large
  std::vector<std::size_t> upcasted_axis;
  while (upcastable_output(k) >= 1024 && k.upcast_size() < 32) {
    const auto choice = broadcast_upcast(k, upcasted_axis);
    if (!choice) break;
    if (auto e = apply(make_opt(UPCAST, static_cast<std::int64_t>(choice->first), choice->second))) return *e;
    upcasted_axis.push_back(choice->first);
  }

  // unroll the last reduce axis when it is small (a second small one too), else by 4; a failure
  // here only ends the step
  [&] {
    const std::vector<std::size_t> ud = k.unrollable_dims();
    if (ud.empty() || !(k.upcast_size() <= 4 || k.axes_of({AxisType::UNROLL}).empty()) || !(k.upcast_size() < 64)) return;
    const std::int64_t s = k.size(ud.back());
    const auto last = static_cast<std::int64_t>(ud.size()) - 1;
    if (s <= 32) {
      if (!k.apply_opt(make_opt(UNROLL, last, 0)).ok()) return;
      const std::vector<std::size_t> ud2 = k.unrollable_dims();
      if (!ud2.empty() && s <= 3 && k.size(ud2.back()) <= 3)
        (void)k.apply_opt(make_opt(UNROLL, static_cast<std::int64_t>(ud2.size()) - 1, 0));
    } else if (s % 4 == 0) {
      (void)k.apply_opt(make_opt(UNROLL, last, 4));
    }
  }();

  // nothing upcast yet: the last upcastable axis by 4
  if (const std::vector<std::size_t> up = k.heuristic_upcast_dims(); k.upcasted() == 0 && !up.empty() && k.size(up.back()) % 4 == 0)
    if (auto e = apply(make_opt(UPCAST, static_cast<std::int64_t>(up.back()), 4))) return *e;

  // local axes: broadcast axes first, then the later ones; up to three, 128 work-items at most
  if (t.renderer.has_local) {
    if (t.nolocals) {
      if (auto e = apply(Opt{NOLOCALS, std::nullopt, Arg()})) return *e;
    } else {
      std::vector<std::pair<bool, std::size_t>> ranking;
      const std::vector<UOp> bufs = k.bufs();
      for (std::size_t axis : k.axes_of({AxisType::GLOBAL, AxisType::WEAK})) {
        if (k.rngs()[axis].src(0).op() != Ops::CONST) continue;
        bool expand = false;
        for (UOp b : bufs) expand = expand || !in_backward_slice(index_expr(b), k.rngs()[axis]);
        ranking.emplace_back(expand, axis);
      }
      stable_sort(ranking, [](const auto& a, const auto& b) {
        return std::pair{!a.first, -static_cast<std::int64_t>(a.second)} < std::pair{!b.first, -static_cast<std::int64_t>(b.second)};
      });
      std::vector<std::pair<std::size_t, std::int64_t>> to_local;
      for (const auto& [expand, axis] : ranking) {
        std::int64_t local_size = 1;
        for (const auto& [a, sz] : to_local) local_size *= sz;
        std::vector<std::int64_t> sizes;
        if (axis == 0) sizes.push_back(32);
        sizes.insert(sizes.end(), {16, 8, 4, 3, 2});
        for (std::int64_t x : sizes)
          if (k.size(axis) % x == 0 && local_size * x <= 128) {
            to_local.emplace_back(axis, x);
            break;
          }
      }
      if (to_local.size() > 3) to_local.resize(3);
      stable_sort(to_local, [](const auto& a, const auto& b) { return a < b; });
      std::size_t deleted = 0;
      for (const auto& [axis0, sz] : to_local) {
        const std::size_t axis = axis0 - deleted;
        const bool will_delete = sz == k.size(axis);
        if (auto e = apply(make_opt(LOCAL, static_cast<std::int64_t>(axis), sz))) return *e;
        if (will_delete) ++deleted;
      }
    }
  }

  // CPU threads: about 128K ops per thread, on the first WEAK axis the count divides
  if (t.renderer.has_threads) {
    std::int64_t total = 1;
    for (std::int64_t s : k.full_shape()) total *= s;
    for (std::int64_t threads : {32, 16, 12, 8, 6, 5, 4, 3, 2}) {
      if (threads > t.renderer.global_max[0] || total / (std::int64_t(128) << 10) < threads) continue;
      for (std::size_t axis : k.axes_of({AxisType::WEAK}))
        if (k.size(axis) % threads == 0) {
          (void)k.apply_opt(make_opt(THREAD, static_cast<std::int64_t>(axis), threads));
          break;
        }
      if (!k.applied_opts().empty() && k.applied_opts().back().op == THREAD) break;
    }
  }
  return k;
}

}  // namespace uopcg::codegen::opt
