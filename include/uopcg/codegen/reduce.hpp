// Stage 3, "remove reduces" (tinygrad/codegen/__init__.py, pm_reduce_local): every REDUCE becomes explicit accumulation.
//  - pm_reduce_identity (seed feature, absent from the snapshot, §3.26): the Invalid lanes of a
//    REDUCE source, `where(c, x, Invalid)`, become the reduce op's identity, so masked lanes add
//    nothing without a gated accumulator store. Target::reduce_identity switches it off.
//  - pm_wmma_add: an ADD after a WMMA is folded into its accumulator operand.
//  - fix_group_for_reduce: a GROUP_REDUCE (or LOCAL) reduce range goes through LOCAL memory in two
//    phases (partials staged per thread, then re-read and reduced in a serial loop with axis id + 100).
//  - reduce_ranges_to_acc: a REDUCE over ranges becomes a REG accumulator: initialised with the
//    identity outside the loops, updated inside them, read after them.
//  - expand_horizontal_reduce: a REDUCE over leading lanes only is a left fold of those lanes.
//  - merge_reduce_ends: accumulator loops over the same RANGE in the same context share one END.
// The stage runs mop_cleanup + pm_reduce_identity + pm_reduce_local (+ pm_clean_up_group_sink).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "../symbolic/mops.hpp"
#include "../symbolic/statements.hpp"
#include "detail/helpers.hpp"
#include "detail/vars.hpp"
#include "target.hpp"

namespace uopcg::codegen {

/// The context of "remove reduces": the next accumulator slot.
struct ReduceContext {
  std::int64_t acc_num = 0;
  /// The kernel's REG and LOCAL buffers before the stage, whose slots an accumulator skips.
  std::vector<UOp> taken{};
  /// Whether pm_reduce_identity applies (Target::reduce_identity).
  bool reduce_identity = true;
  /// The kernel's LOCAL ranges: every work-item of a group stages its own partial.
  std::vector<UOp> locals{};
};

namespace detail {

inline constexpr auto addend = pat::var<"addend">;
inline constexpr auto cond = pat::var<"cond">;

constexpr std::int64_t axis_id_of(UOp r) { return r.arg()[0].as_int(); }

/// (op, n_horizontal) of a REDUCE, checked.
constexpr std::pair<Ops, std::int64_t> reduce_arg(UOp r) {
  const Arg& a = r.arg();
  if (!a.is_tuple() || a.size() != 2 || a[0].kind() != ArgKind::op || a[1].kind() != ArgKind::int_) {
    fail("remove reduces: ", r.arena().describe(r.id()), " has no (op, axes) arg");
  }
  const Ops op = a[0].as_op();
  if (!GroupOp::Reduce.contains(op)) {
    fail("remove reduces: ", r.arena().describe(r.id()), " reduces with ", name(op), " (only ADD, MUL, MAX have an identity)");
  }
  return {op, a[1].as_int()};
}

/// A PERMUTE's permutation (a malformed arg is an error).
constexpr std::vector<std::int64_t> permutation(UOp permute_node) {
  auto p = symbolic::mops::perm_of(permute_node);
  if (!p) fail("remove reduces: ", permute_node.arena().describe(permute_node.id()), " has no permutation of ints");
  return *p;
}

/// tinygrad's UOp.placeholder: a 1-D BUFFER of prod(shape) elements, RESHAPEd when rank > 1.
constexpr UOp placeholder(Arena& a, const std::vector<std::int64_t>& dims, DType dt, std::int64_t slot, AddrSpace space) {
  std::int64_t n = 1;
  for (auto d : dims)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) {
      text t;
      t.append("placeholder: a ").append(name(space)).append(" buffer of shape (");
      for (std::size_t i = 0; i < dims.size(); ++i) t.append(i ? ", " : "").append(dims[i]);
      t.append(") has no element count (a size is negative or the product overflows int64: a range without a constant size?)");
      fail(t.view());
    }
  UOp buf = buffer(a, slot, dt, n, space);
  return dims.size() > 1 ? symbolic::mops::reshape(buf, dims) : buf;
}

/// placeholder() at the next free slot of `next` (advanced past it): one that would be a buffer of
/// `taken` (the same node) is skipped, so a new buffer never shares a kernel's storage.
constexpr UOp fresh_placeholder(Arena& a, const std::vector<std::int64_t>& dims, DType dt, std::int64_t& next, AddrSpace space,
                                const std::vector<UOp>& taken) {
  UOp buf;
  do buf = placeholder(a, dims, dt, next++, space);
  while (contains(taken, buffer_of(buf)));
  return buf;
}

/// The identity element of a reduce op as the literal tinygrad stores into an accumulator: a weak
/// constant (weakfloat for float dtypes, weakint for ints, bool for bool). ADD -> 0, MUL -> 1,
/// MAX -> the dtype's minimum (-inf for floats).
constexpr UOp identity_literal(Arena& a, Ops op, DType dt) {
  using enum Ops;
  using enum DType;
  if (is_bool(dt)) return literal(a, op == MUL);
  if (is_float(dt) || dt == weakfloat) {
    if (op == MAX) return literal(a, -std::numeric_limits<double>::infinity());
    return literal(a, op == MUL ? 1.0 : 0.0);
  }
  if (op == MAX) return literal(a, int_min(dt));
  return literal(a, std::int64_t{op == MUL ? 1 : 0});
}
/// The same identity as a constant of dtype dt (tinygrad's const_like).
constexpr UOp identity_const(Arena& a, Ops op, DType dt) {
  using enum Ops;
  using enum DType;
  if (is_bool(dt)) return const_(a, dt, Arg::boolean(op == MUL));
  if (is_float(dt) || dt == weakfloat)
    return const_(a, dt, Arg::floating(op == MAX ? -std::numeric_limits<double>::infinity() : op == MUL ? 1.0 : 0.0));
  if (op == MAX) return const_(a, dt, Arg::integer(int_min(dt)));
  return const_(a, dt, Arg::integer(op == MUL ? 1 : 0));
}

/// AFTER(x, deps...), or x itself without deps.
constexpr UOp after_(UOp x, const std::vector<UOp>& deps) {
  if (deps.empty()) return x;
  std::vector<UOp> s{x};
  s.insert(s.end(), deps.begin(), deps.end());
  return x.arena().make(Ops::AFTER, x.dtype(), s);
}
constexpr UOp end_(UOp body, const std::vector<UOp>& ranges, const Arg& tag = Arg()) {
  std::vector<UOp> s{body};
  s.insert(s.end(), ranges.begin(), ranges.end());
  return body.arena().make(Ops::END, DType::void_, s, Arg(), tag);
}

/// Axis types that remain serial loops after gpudims (the loops the WAR-barrier rule also knows).
constexpr bool is_loop_axis(AxisType t) { return t == AxisType::REDUCE || t == AxisType::WEAK || t == AxisType::LOOP; }

}  // namespace detail

namespace detail {
/// The masked source of a REDUCE seen through the lane moves the expander leaves on it (an UPCAST
/// beside an UNROLL gives `PERMUTE(where(c, x, Invalid))`): the same moves over `where(c, x,
/// identity)`. A move only reorders lanes, so each Invalid lane stays one lane and its identity
/// drops just that lane; left Invalid, the accumulator's store is gated by all lanes' masks at once.
constexpr std::optional<UOp> reduce_identity_through_moves(UOp red) {
  using enum Ops;
  std::vector<UOp> moves;
  UOp s = red.src(0);
  while ((s.op() == PERMUTE || s.op() == RESHAPE) && s.nsrc() >= 1) {
    moves.push_back(s);
    s = s.src(0);
  }
  if (moves.empty() || s.op() != WHERE || s.nsrc() != 3 || s.src(2).op() != CONST || !s.src(2).arg().is_invalid())
    return std::nullopt;
  const UOp x = s.src(1);
  UOp v = red.arena().make(WHERE, x.dtype(), {s.src(0), x, identity_const(red.arena(), reduce_arg(red).first, x.dtype())});
  for (auto it = moves.rbegin(); it != moves.rend(); ++it) {
    std::vector<UOp> ms = it->srcs().to_vector();
    ms[0] = v;
    v = with_srcs(*it, ms);
  }
  std::vector<UOp> srcs = red.srcs().to_vector();
  srcs[0] = v;
  return with_srcs(red, srcs);
}
}  // namespace detail

/// `where(c, x, Invalid)` as a REDUCE source → `where(c, x, identity)` (§3.26; seed feature), also
/// under PERMUTE / RESHAPE lane moves. A fold of lanes under one scalar gate is `where(c, REDUCE(x),
/// Invalid)` instead, as tinygrad's lanes are (its lane fold is ALU ops, through which Invalid
/// passes): a padded ADD over an unrolled MAX must drop its padded elements, not add the MAX's -inf.
/// A REDUCE over ranges keeps the identity, what tinygrad's gated accumulator holds when no element
/// is valid.
inline constexpr auto pm_reduce_identity = [] {
  using namespace detail;
  using enum Ops;
  // a REDUCE with no range source folds lanes only (the expander's fold of an unrolled axis)
  return pat::rules(pat::rewrite("fold of lanes under one scalar gate", pat::op<REDUCE>(pat::where(cond, x, pat::invalid_const)),
                                 [](auto& m) {
                                   const UOp red = m.root();
                                   const UOp folded = m.arena().make(REDUCE, red.dtype(), {m[x]}, red.arg(), red.tag());
                                   return m.arena().make(WHERE, red.dtype(), {m[cond], folded, invalid(m.arena())});
                                 },
                                 [](ReduceContext& ctx, auto& m) {
                                   return ctx.reduce_identity && reduce_arg(m.root()).second != 0 && m[cond].shape().has_value() &&
                                          m[cond].shape().size() == 0;
                                 }),
                    pat::rewrite("reduce identity for Invalid lanes", pat::op<REDUCE>.any_len(pat::where(cond, x, pat::invalid_const)),
                                 [](auto& m) {
                                   const UOp red = m.root();
                                   const UOp id = identity_const(m.arena(), reduce_arg(red).first, m[x].dtype());
                                   std::vector<UOp> srcs = red.srcs().to_vector();
                                   srcs[0] = m.arena().make(WHERE, m[x].dtype(), {m[cond], m[x], id});
                                   return m.arena().make(REDUCE, red.dtype(), srcs, red.arg(), red.tag());
                                 },
                                 [](ReduceContext& ctx, auto&) { return ctx.reduce_identity; }),
                    pat::rule("reduce identity for Invalid lanes under lane moves", pat::op<REDUCE>,
                              [](ReduceContext& ctx, auto& m) -> std::optional<UOp> {
                                if (!ctx.reduce_identity) return std::nullopt;
                                return reduce_identity_through_moves(m.root());
                              }));
}();

/// WMMA(a, b, c) + x → WMMA(a, b, c + x); a PERMUTE (or PERMUTE of RESHAPE) of a WMMA is moved to
/// the other side of the ADD so the fold applies.
inline constexpr auto pm_wmma_add = [] {
  using namespace detail;
  using enum Ops;
  return pat::rules(
      pat::rule("wmma + x", wmma + addend, [](auto& m) {
        UOp w = m[wmma];
        UOp acc = w.src(2) + m[addend];
        return m.arena().make(WMMA, acc.dtype(), {w.src(0), w.src(1), acc}, w.arg());
      }),
      pat::rule("permute(wmma) + x", pat::op<PERMUTE>.named<"permute">()(wmma) + addend, [](auto& m) {
        using namespace symbolic::mops;
        const auto perm = permutation(get<"permute">(m));
        return permute(m[wmma] + permute(m[addend], argsort(perm)), perm);
      }),
      pat::rule("permute(reshape(wmma)) + x",
              pat::op<PERMUTE>.named<"permute">()(pat::op<RESHAPE>.named<"reshape">()(wmma, pat::any)) + addend,
              [](auto& m) {
                using namespace symbolic::mops;
                const auto perm = permutation(get<"permute">(m));
                const UOp w = m[wmma];
                const UOp moved = reshape(permute(m[addend], argsort(perm)), dims(w));
                return permute(reshape(w + moved, dims(get<"reshape">(m))), perm);
              }));
}();

/// GROUP_REDUCE in two phases through LOCAL memory (the seed's fix_group_for_reduce): the reduce
/// over the other ranges runs per thread, its result is staged into a LOCAL buffer indexed by the
/// upstream LOCAL (and enclosing GROUP_REDUCE) ranges and the group ranges, and the staged partials
/// are reduced again in a new serial loop per group range (axis id + 100). Horizontal lanes stay in
/// the first phase. The kernel's other LOCAL ranges (`kernel_locals`) index the buffer too, after
/// those: work-items that differ only there compute the same partial, and tinygrad's program has
/// them all store it to one element, a race (write after write) between work-items.
constexpr std::optional<UOp> fix_group_for_reduce(UOp x, const std::vector<UOp>& kernel_locals = {}) {
  using enum Ops;
  using namespace detail;
  std::vector<UOp> group, rest;
  for (std::size_t i = 1; i < x.nsrc(); ++i) {
    UOp s = x.src(i);
    // a reduce over a LOCAL range sums across work-items, which only LOCAL memory can do: it takes
    // the GROUP_REDUCE path (tinygrad 0.14 reduces each work-item's own element; docs/DIVERGENCES.md)
    const auto t = range_axis(s);
    (t == AxisType::GROUP_REDUCE || t == AxisType::LOCAL ? group : rest).push_back(s);
  }
  if (group.empty()) return std::nullopt;
  const Ops op = reduce_arg(x).first;
  Arena& a = x.arena();
  // LOCAL ranges anywhere upstream are part of the staged buffer's index, and so are GROUP_REDUCE
  // ranges of an enclosing reduce that the value depends on (work-items that differ there compute
  // different partials; tinygrad's program stores them to one element, a race), but not the ranges
  // an inner STAGE was grouped over (its read loops over them instead). A reduction inside the value
  // that already reduces over (or staged through LOCAL memory) one of this reduce's group ranges is
  // an error: one range cannot carry both phases of two reductions. A LOCAL range in an inner STAGE
  // is only its index (an inner GROUP reduce under an outer reduce over that LOCAL range).
  const std::vector<UOp> topo = toposort(x);
  std::vector<UOp> staged_groups;  // ranges an inner STAGE was grouped over
  for (UOp u : topo) {
    if (u.op() != STAGE) continue;
    std::vector<UOp> read_at;  // what its reads index it by
    for (UOp r : topo)
      for (std::size_t j = 1; r.op() == INDEX && r.src(0) == u && j < r.nsrc(); ++j) read_at.push_back(r.src(j));
    for (std::size_t i = 1; i < u.nsrc(); ++i)
      if (!contains(read_at, u.src(i))) staged_groups.push_back(u.src(i));
  }
  std::vector<UOp> locals;
  for (UOp u : topo) {
    const auto t = range_axis(u);
    if ((t == AxisType::LOCAL || (t == AxisType::GROUP_REDUCE && !contains(staged_groups, u))) && !contains(group, u))
      locals.push_back(u);
    if (u == x || (u.op() != REDUCE && u.op() != STAGE)) continue;
    for (std::size_t i = 1; i < u.nsrc(); ++i)
      if (contains(group, u.src(i)) &&
          (u.op() == REDUCE || (range_axis(u.src(i)) == AxisType::GROUP_REDUCE && contains(staged_groups, u.src(i))))) {
        fail("remove reduces: ", a.describe(x.id()), " reduces over GROUP_REDUCE range ", a.describe(u.src(i).id()),
             ", which a reduction inside its value (", a.describe(u.id()),
             ") also reduces over: give each reduction its own GROUP_REDUCE range");
      }
  }
  for (UOp l : kernel_locals)
    if (!contains(locals, l) && !contains(group, l)) locals.push_back(l);
  std::vector<UOp> first_srcs{x.src(0)};
  first_srcs.insert(first_srcs.end(), rest.begin(), rest.end());
  UOp first = a.make(REDUCE, x.dtype(), first_srcs, x.arg(), x.tag());
  std::vector<UOp> loops;
  for (UOp g : group) {
    std::vector<Arg> arg{Arg::integer(axis_id_of(g) + 100), Arg::axis_type(AxisType::REDUCE)};
    loops.push_back(a.make(RANGE, g.dtype(), g.srcs().to_vector(), Arg::tuple(std::move(arg))));
  }
  BufferizeOpts opts;
  opts.device = Arg::integer(axis_id_of(group[0]));
  opts.addrspace = AddrSpace::LOCAL;
  std::vector<UOp> stage_srcs{first};
  stage_srcs.insert(stage_srcs.end(), locals.begin(), locals.end());
  stage_srcs.insert(stage_srcs.end(), group.begin(), group.end());
  UOp staged = a.make(STAGE, x.dtype(), stage_srcs, opts.to_arg());
  std::vector<UOp> idx_srcs{staged};
  idx_srcs.insert(idx_srcs.end(), locals.begin(), locals.end());
  idx_srcs.insert(idx_srcs.end(), loops.begin(), loops.end());
  UOp partial = a.make(INDEX, x.dtype(), idx_srcs);
  std::vector<UOp> red_srcs{partial};
  red_srcs.insert(red_srcs.end(), loops.begin(), loops.end());
  return a.make(REDUCE, x.dtype(), red_srcs, Arg::tuple_of(op, 0));
}

/// The RANGEs an accumulator initialisation must stay inside: the ranges the reduce value uses,
/// minus the reduce's own ranges and the ranges already closed inside the value. Closed means
/// closed by an END (as in the snapshot) or, a uopcg fix (docs/DIVERGENCES.md), a serial-loop range
/// (REDUCE/WEAK/LOOP) closed by a STAGE: the snapshot keeps those, so the accumulator of a reduce
/// that reads a staged buffer is re-initialised inside the staging loop. Ranges that become GPU
/// indices (LOCAL, GROUP_REDUCE, ...) are no loops; they are kept, as the snapshot does.
constexpr std::vector<UOp> acc_input_ranges(UOp r) {
  using enum Ops;
  using namespace detail;
  const auto topo = toposort(r.src(0));
  std::vector<UOp> ended;
  for (UOp u : topo) {
    if (u.op() == END) {
      for (std::size_t i = 1; i < u.nsrc(); ++i) ended.push_back(u.src(i));
    } else if (u.op() == STAGE) {
      for (UOp e : ended_ranges(u))
        if (const auto t = range_axis(e); t && is_loop_axis(*t)) ended.push_back(e);
    }
  }
  std::vector<UOp> own = r.srcs().to_vector();
  std::vector<UOp> out;
  for (UOp u : topo)
    if (u.op() == RANGE && !contains(own, u) && !contains(ended, u)) out.push_back(u);
  return out;
}

/// A REDUCE over ranges → a REG accumulator (the seed's reduce_ranges_to_acc).
constexpr UOp reduce_ranges_to_acc(ReduceContext& ctx, UOp r) {
  using namespace detail;
  const auto [op, horizontal] = reduce_arg(r);
  Arena& a = r.arena();
  auto shp = r.shape();
  if (!shp.has_value()) {
    fail("remove reduces: ", a.describe(r.id()), " has no shape");
  }
  UOp acc = fresh_placeholder(a, shp.to_vector(), r.dtype(), ctx.acc_num, AddrSpace::REG, ctx.taken);
  std::vector<UOp> own;
  for (std::size_t i = 1; i < r.nsrc(); ++i) own.push_back(r.src(i));
  UOp init = store(after_(acc, acc_input_ranges(r)), identity_literal(a, op, r.dtype()));
  std::vector<UOp> deps{init};
  deps.insert(deps.end(), own.begin(), own.end());
  UOp cur = after_(acc, deps);
  UOp inp = horizontal != 0 ? a.make(Ops::REDUCE, r.dtype(), {r.src(0)}, r.arg()) : r.src(0);
  UOp upd = store(cur, alu(op, cur, inp));
  return after_(acc, {end_(upd, own, Arg::string("mergeable"))});
}

/// A REDUCE with no range: the left fold `((v[0] op v[1]) op v[2]) ...` of the lanes of its first
/// arg[1] axes (the value itself when there are none).
constexpr UOp expand_horizontal_reduce(UOp r) {
  using namespace detail;
  const auto [op, horizontal] = reduce_arg(r);
  UOp inp = r.src(0);
  if (horizontal == 0) return inp;
  auto shp = inp.shape();
  if (!shp.has_value() || static_cast<std::size_t>(horizontal) > shp.size()) {
    fail("remove reduces: ", r.arena().describe(r.id()), " reduces more lanes than its value has axes");
  }
  Arena& a = r.arena();
  const auto n = static_cast<std::size_t>(horizontal);
  std::int64_t total = 1;
  for (std::size_t k = 0; k < n; ++k) total *= shp[k];
  if (total <= 0) {
    fail("remove reduces: ", a.describe(r.id()), " reduces an empty lane axis");
  }
  std::optional<UOp> acc;
  std::vector<UOp> s(n + 1, inp);
  for (std::int64_t flat = 0; flat < total; ++flat) {
    std::int64_t rem = flat;  // row-major lane index
    for (std::size_t k = n; k-- > 0;) {
      s[k + 1] = literal(a, rem % shp[k]);
      rem /= shp[k];
    }
    UOp v = a.make(Ops::INDEX, inp.dtype(), s);
    acc = acc ? alu(op, *acc, v) : v;
  }
  return *acc;
}

/// `e` with the ranges of `clone` replaced, except inside the other ENDs below it that close one
/// of them: those loops are their own (an accumulator whose value reads another's result).
constexpr UOp clone_outside_ends(UOp e, const std::vector<std::pair<UOp, UOp>>& clone) {
  Arena& a = e.arena();
  std::vector<std::pair<UOp, UOp>> hold, release;
  for (UOp u : toposort(e)) {
    if (u == e || u.op() != Ops::END) continue;
    bool closes = false;
    for (std::size_t k = 1; k < u.nsrc(); ++k)
      for (const auto& [from, to] : clone) closes |= u.src(k) == from;
    if (!closes) continue;
    // a node no graph holds stands in for the END while the ranges are replaced
    const UOp held = a.make(Ops::NOOP, DType::void_, {}, Arg::tuple_of(Arg::string("held END"), static_cast<std::int64_t>(u.id())));
    hold.emplace_back(u, held);
    release.emplace_back(held, u);
  }
  std::vector<std::pair<UOp, UOp>> mapping = hold;
  mapping.insert(mapping.end(), clone.begin(), clone.end());
  return substitute(substitute(e, mapping), release);
}

/// Accumulator ENDs ("mergeable") over the identical ranges in the identical loop context become one
/// END of a GROUP; every further context gets cloned ranges with fresh axis ids, so each RANGE is
/// ended once. So do ENDs over other range lists that share a range with an earlier one (two GROUP
/// reductions over one GROUP_REDUCE range, one of which lost another range it did not use): the
/// snapshot merges by identical lists only and ends the shared range twice, a program no loop
/// nesting can hold (docs/DIVERGENCES.md).
constexpr std::optional<UOp> merge_reduce_ends(UOp sink) {
  using enum Ops;
  using enum DType;
  using namespace detail;
  Arena& a = sink.arena();
  const Arg mergeable = Arg::string("mergeable");
  const auto slice = backward_slice(sink);
  std::vector<std::pair<std::vector<UOp>, std::vector<UOp>>> by_ranges;  // ranges -> ENDs, insertion order
  std::int64_t next_axis = 0;
  for (UOp u : slice) {
    if (u.op() == RANGE) next_axis = std::max(next_axis, axis_id_of(u) + 1);
    if (u.op() != END || !(u.tag() == mergeable)) continue;
    std::vector<UOp> key;
    for (std::size_t i = 1; i < u.nsrc(); ++i) key.push_back(u.src(i));
    auto it = std::find_if(by_ranges.begin(), by_ranges.end(), [&](const auto& e) { return e.first == key; });
    if (it == by_ranges.end()) by_ranges.push_back({key, {u}});
    else it->second.push_back(u);
  }
  std::vector<std::pair<UOp, UOp>> subs;
  std::vector<UOp> claimed;  // ranges an earlier END (group) already ends
  for (const auto& [rngs, ends] : by_ranges) {
    // sub-group by the set of ranges the END sits in
    std::vector<std::pair<std::vector<node_id>, std::vector<UOp>>> by_ctx;
    for (UOp e : ends) {
      std::vector<node_id> ctx;
      for (UOp x : ranges(e)) ctx.push_back(x.id());
      std::sort(ctx.begin(), ctx.end());
      auto it = std::find_if(by_ctx.begin(), by_ctx.end(), [&](const auto& c) { return c.first == ctx; });
      if (it == by_ctx.end()) by_ctx.push_back({ctx, {e}});
      else it->second.push_back(e);
    }
    for (std::size_t i = 0; i < by_ctx.size(); ++i) {
      const auto& group = by_ctx[i].second;
      std::vector<UOp> tr = rngs;
      std::vector<std::pair<UOp, UOp>> clone;
      for (std::size_t j = 0; j < rngs.size(); ++j) {
        UOp rr = rngs[j];
        const auto t = range_axis(rr);
        const bool loop = t && is_loop_axis(*t);
        // a later context clones every range (the snapshot's rule); the first one only the loops an
        // earlier END already closes
        if (i == 0 && !(loop && contains(claimed, rr))) continue;
        std::vector<Arg> arg = rr.arg().items();
        arg[0] = Arg::integer(next_axis++);
        tr[j] = a.make(RANGE, rr.dtype(), rr.srcs().to_vector(), Arg::tuple(std::move(arg)), rr.tag());
        clone.emplace_back(rr, tr[j]);
      }
      for (UOp rr : rngs)
        if (const auto t = range_axis(rr); t && is_loop_axis(*t) && !contains(claimed, rr)) claimed.push_back(rr);
      if (clone.empty() && group.size() == 1) continue;
      std::vector<UOp> mapped;
      for (UOp e : group) mapped.push_back(clone.empty() ? e : i > 0 ? substitute(e, clone) : clone_outside_ends(e, clone));
      UOp merged = mapped[0];
      if (mapped.size() > 1) {
        std::vector<UOp> bodies;
        for (UOp e : mapped) bodies.push_back(e.src(0));
        merged = end_(a.make(GROUP, void_, bodies), tr);
      }
      for (UOp e : group) subs.emplace_back(e, merged);
    }
  }
  if (subs.empty()) return std::nullopt;
  return substitute(sink, subs);
}

/// pm_reduce_local: pm_wmma_add, then the reduce lowering rules, then pm_clean_up_group_sink.
inline constexpr auto pm_reduce_local = pm_wmma_add + [] {
  using enum Ops;
  return pat::rules(
      pat::rule("fix_group_for_reduce", pat::op<REDUCE>,
                [](ReduceContext& ctx, auto& m) { return fix_group_for_reduce(m.root(), ctx.locals); }),
      pat::rule("reduce_ranges_to_acc", pat::op<REDUCE>.any_len(pat::any, pat::any),
                [](ReduceContext& ctx, auto& m) { return reduce_ranges_to_acc(ctx, m.root()); }),
      pat::rule("expand_horizontal_reduce", pat::op<REDUCE>(pat::any), [](auto& m) { return expand_horizontal_reduce(m.root()); }),
      pat::rule("merge_reduce_ends", pat::op<SINK>, [](auto& m) { return merge_reduce_ends(m.root()); }));
}() + symbolic::pm_clean_up_group_sink;

// The stage's rule set: a variable template, compiled only where the stage runs (stage.hpp).
template <class = void>
inline constexpr auto remove_reduces_rules = symbolic::mop_cleanup + pm_reduce_identity + pm_reduce_local;

namespace detail {
/// A reduce's result becomes its accumulator, of shape (1,): a STAGE of it is (n, 1), and a read of
/// that with a vector index (the lanes of an UPCAST or UNROLL axis, k of them) is (k, 1), which an
/// ALU with a (k,) operand broadcasts to (k, k) (tinygrad 0.14 fails on such a kernel: "bad
/// reshape"). The value of a STAGE with such a read is wrapped in a RESHAPE to its own (scalar)
/// shape, which keeps it scalar once the reduces in it are accumulators. Other STAGEs keep their graph.
constexpr UOp keep_vector_read_stages_scalar(UOp sink) {
  using enum Ops;
  if (!sink.arena().may_contain(sink.id(), OpSet{STAGE})) return sink;
  std::vector<UOp> read_by_lanes;  // the STAGEs some INDEX reads with a vector index
  for (UOp n : toposort(sink))
    if (n.op() == INDEX && n.nsrc() > 1 && n.src(0).op() == STAGE && !contains(read_by_lanes, n.src(0)))
      for (std::size_t i = 1; i < n.nsrc(); ++i)
        if (const auto is = n.src(i).shape(); is.has_value() && is.numel() > 1) {
          read_by_lanes.push_back(n.src(0));
          break;
        }
  std::vector<std::pair<UOp, UOp>> mapping;
  for (UOp u : read_by_lanes) {
    if (u.nsrc() < 1 || u.src(0).op() == RESHAPE) continue;
    const auto vs = u.src(0).shape();
    if (!vs.has_value() || vs.size() != 0) continue;
    Arena& a = u.arena();
    std::vector<UOp> srcs = u.srcs().to_vector();
    srcs[0] = a.make(RESHAPE, u.src(0).dtype(), {u.src(0), a.make(STACK, DType::weakint, {})});
    mapping.emplace_back(u, a.make(STAGE, u.dtype(), srcs, u.arg(), u.tag()));
  }
  return mapping.empty() ? sink : substitute(sink, mapping);
}
}  // namespace detail

/// Stage 3: mop_cleanup + pm_reduce_identity + pm_reduce_local, with an accumulator counter.
template <class = void>
constexpr UOp remove_reduces(UOp sink, const Target& t) {
  sink = detail::keep_vector_read_stages_scalar(sink);
  const std::vector<UOp> nodes = toposort(sink);
  ReduceContext ctx{.taken = detail::buffers_in(nodes), .reduce_identity = t.reduce_identity};
  for (UOp u : nodes)
    if (range_axis(u) == AxisType::LOCAL) ctx.locals.push_back(u);
  // the context numbers what the rules create, in tinygrad's visiting order
  return pat::graph_rewrite(sink, remove_reduces_rules<>, ctx, {.name = "remove reduces", .ordered = true});
}

}  // namespace uopcg::codegen
