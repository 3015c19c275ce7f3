// The weak-float half of stage 12 "lower all index dtypes": every weakfloat node other than a literal
// becomes a concrete float (tinygrad's uop/weak.py, pm_commit_weak and pm_lower_weak: a weak float
// takes the dtype of the concrete float it meets, and dtypes.default_float, float32, otherwise).
//
// A float literal's dtype spreads to what is computed from it alone: a CAST to weakfloat (a uint8
// image divided by 255.0), a STACK of literals (Tensor.zeros(4) upcast), arithmetic on a float made
// from an arange (a sinusoidal embedding), and the REG/LOCAL buffers of a reduction over such values.
// The lowering follows the weakint convention of symbolic/index_dtype.hpp: a lowered value is
// wrapped as CAST(weakfloat, <concrete float>) so that its weak consumers still type-check, a weak
// consumer whose operands are all lowered is rebuilt in a concrete float and wrapped in turn, and a
// concrete consumer takes the wrapped value at the dtype it computes in. Buffers are memory, not
// values, so they are committed before the rewrite (commit_weak_float_memory) and their loads wrapped.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "../core/error.hpp"
#include "../core/graph.hpp"
#include "../symbolic/index_dtype.hpp"
#include "../symbolic/util.hpp"
#include "detail/helpers.hpp"
#include "detail/vars.hpp"

namespace uopcg::codegen {

namespace detail {

/// A STORE's destination has a concrete dtype (a weak value stored there takes its width).
inline constexpr pat::predicate concrete_destination{[](auto& m) {
  const DType d = m[idx].dtype();
  return !is_weak(d) && d != DType::void_;
}};
/// STORE `st` with `value` in place of its value.
constexpr UOp store_committed(UOp st, UOp value) {
  std::vector<UOp> srcs = st.srcs().to_vector();
  srcs[1] = value;
  return st.arena().make(Ops::STORE, st.dtype(), srcs, st.arg(), st.tag());
}

/// The float a weak float lives at when nothing concrete meets it, by default (tinygrad's
/// default_float; Target::default_float, DEFAULT_FLOAT, chooses another).
inline constexpr DType default_float = DType::float32;

constexpr bool is_weak_float_const(UOp s) { return s.op() == Ops::CONST && s.dtype() == DType::weakfloat; }
/// A lowered weak float: CAST(weakfloat, v) over a concrete float v.
constexpr bool is_lowered(UOp s) {
  return s.op() == Ops::CAST && s.dtype() == DType::weakfloat && s.nsrc() == 1 && is_float(s.src(0).dtype()) &&
         !is_weak(s.src(0).dtype());
}
/// A lowered weak int: CAST(weakint, v) over a concrete int or bool v (index_dtype.hpp).
constexpr bool is_lowered_int(UOp s) {
  return symbolic::detail::is_weak_cast(s) && symbolic::detail::strong_int(s.src(0));
}
/// The concrete value an operand stands for (inside a lowering wrapper), or the operand itself.
constexpr UOp inner(UOp s) { return is_lowered(s) || is_lowered_int(s) ? s.src(0) : s; }
/// Whether an operand is settled: concrete, lowered, a weak float literal (committed by its
/// consumer) or Invalid. A weak int literal is not: index lowering wraps it first.
constexpr bool settled(UOp s) {
  return symbolic::is_invalid(s) || is_weak_float_const(s) || !is_weak(inner(s).dtype());
}
/// The float a settled weak float operand is taken at by a consumer that states no width (a
/// BITCAST): a lowered value's own float, a literal's the default float.
constexpr DType default_float_for(UOp s, DType def) { return is_lowered(s) ? s.src(0).dtype() : def; }
/// An operand committed at dtype dt: a literal re-made (rounded) at dt, a value converted.
constexpr UOp commit(UOp s, DType dt) {
  if (symbolic::is_invalid(s)) return s;
  if (s.op() == Ops::CONST) return symbolic::as_dtype(s, dt);
  return symbolic::detail::to_dt(inner(s), dt);
}
constexpr UOp wrap(UOp v) { return v.arena().make(Ops::CAST, DType::weakfloat, {v}, Arg::dtype(DType::weakfloat)); }
/// The first value operand of u (WHERE's condition is not one).
constexpr std::size_t first_value(UOp u) { return u.op() == Ops::WHERE ? 1 : 0; }

/// CAST(weakfloat, x) of a concrete int or bool x (or a lowered weak int): x converted to the
/// default float, wrapped.
constexpr std::optional<UOp> lower_cast(UOp r, DType def) {
  const UOp x = r.src(0);
  if (is_weak_float_const(x)) return x;
  if (!settled(x) || is_lowered(r)) return std::nullopt;
  return wrap(symbolic::detail::to_dt(inner(x), def));
}

/// A weakfloat ALU op or STACK (or a lane of a lowered vector) whose operands are all settled:
/// rebuilt at the default float, or at a wider concrete float among its operands, and wrapped.
constexpr std::optional<UOp> lower_op(UOp r, DType def) {
  if (r.op() == Ops::INDEX) {  // a lane of a value: the lane number is no float operand
    if (!is_lowered(r.src(0))) return std::nullopt;
    std::vector<UOp> srcs = r.srcs().to_vector();
    srcs[0] = r.src(0).src(0);
    return wrap(with_srcs(r, srcs));
  }
  DType dt = def;
  for (std::size_t i = first_value(r); i < r.nsrc(); ++i) {
    const UOp s = r.src(i);
    if (!settled(s)) return std::nullopt;
    if (is_float(inner(s).dtype()) && !is_weak(inner(s).dtype())) dt = least_upper_dtype(dt, inner(s).dtype());
  }
  std::vector<UOp> srcs = r.srcs().to_vector();
  for (std::size_t i = first_value(r); i < srcs.size(); ++i) srcs[i] = commit(srcs[i], dt);
  return wrap(r.arena().make(r.op(), dt, srcs, r.arg(), r.tag()));
}

/// Whether a concrete consumer must commit weak operands itself: it has a lowered weak float
/// operand, or it is a comparison of a lowered weak int with a float (index lowering commits only
/// int comparisons).
constexpr bool takes_weak_floats(UOp r) {
  bool lowered = false, lowered_int = false, any_float = false;
  for (std::size_t i = first_value(r); i < r.nsrc(); ++i) {
    const UOp s = r.src(i);
    lowered = lowered || is_lowered(s);
    lowered_int = lowered_int || is_lowered_int(s);
    any_float = any_float || is_float(s.dtype());
  }
  return lowered || (GroupOp::Comparison.contains(r.op()) && lowered_int && any_float);
}

/// A concrete Broadcastable op (a comparison included) over lowered weak operands: every value
/// operand at the operands' join where that is concrete (a weak float beside a half computes in
/// half), else at the default float or the widest concrete float among them.
constexpr std::optional<UOp> commit_operands(UOp r, DType def) {
  using enum DType;
  if (is_weak(r.dtype()) || !takes_weak_floats(r)) return std::nullopt;
  DType meet = void_, widest = def;
  for (std::size_t i = first_value(r); i < r.nsrc(); ++i) {
    const UOp s = r.src(i);
    if (!settled(s)) return std::nullopt;
    if (symbolic::is_invalid(s)) continue;
    meet = meet == void_ ? s.dtype() : least_upper_dtype(meet, s.dtype());
    if (is_float(inner(s).dtype()) && !is_weak(inner(s).dtype())) widest = least_upper_dtype(widest, inner(s).dtype());
  }
  const DType dt = meet != void_ && !is_weak(meet) ? meet : widest;
  std::vector<UOp> srcs = r.srcs().to_vector();
  for (std::size_t i = first_value(r); i < srcs.size(); ++i) srcs[i] = commit(srcs[i], dt);
  return r.arena().make(r.op(), r.dtype(), srcs, r.arg(), r.tag());
}

/// The join of r's value operands' dtypes (Invalid skipped; void_ when there is none), and whether
/// one of them satisfies `trigger`.
template <class Trigger>
constexpr std::pair<DType, bool> operand_join(UOp r, Trigger trigger) {
  DType dt = DType::void_;
  bool any = false;
  for (std::size_t i = first_value(r); i < r.nsrc(); ++i) {
    const UOp s = r.src(i);
    if (symbolic::is_invalid(s)) continue;
    any = any || trigger(s);
    dt = dt == DType::void_ ? s.dtype() : least_upper_dtype(dt, s.dtype());
  }
  return {dt, any};
}
/// r with each value operand that satisfies `commits` converted to dt.
template <class Commits>
constexpr UOp with_operands_at(UOp r, DType dt, Commits commits) {
  std::vector<UOp> srcs = r.srcs().to_vector();
  for (std::size_t i = first_value(r); i < srcs.size(); ++i)
    if (commits(srcs[i])) srcs[i] = symbolic::as_dtype(srcs[i], dt);
  return r.arena().make(r.op(), r.dtype(), srcs, r.arg(), r.tag());
}

/// A Broadcastable op whose weak float literals meet a concrete float operand: they commit at the
/// operands' join.
constexpr std::optional<UOp> commit_literals(UOp r) {
  auto literal = [](UOp s) { return is_weak_float_const(s); };
  const auto [dt, any] = operand_join(r, literal);
  if (!any || !is_float(dt) || is_weak(dt)) return std::nullopt;
  return with_operands_at(r, dt, literal);
}

/// Whether s is a weak float value still to be committed (not a literal).
constexpr bool is_weak_float_value(UOp s) { return s.dtype() == DType::weakfloat && s.op() != Ops::CONST; }

/// A Broadcastable op whose operands meet at a concrete dtype: its weak float values commit at it
/// (CAST, which the cast rule pushes into the expression), its weak float literals too.
constexpr std::optional<UOp> commit_at_peer(UOp r) {
  const auto [meet, any] = operand_join(r, [](UOp s) { return is_weak_float_value(s); });
  if (!any || meet == DType::void_ || is_weak(meet)) return std::nullopt;
  return with_operands_at(r, meet, [](UOp s) { return s.dtype() == DType::weakfloat; });
}

/// CAST(cd, u) of a weak float expression u to a concrete float: u computes at cd, never below the
/// default float (a half result is computed in float and rounded once), its weak operands committed
/// there. A CAST of a CAST to weakfloat is one conversion.
constexpr std::optional<UOp> commit_at_cast(UOp c, DType def) {
  using enum Ops;
  using enum DType;
  const DType cd = c.dtype();
  const UOp u = c.src(0);
  if (is_weak(cd) || cd == void_ || !is_weak_float_value(u)) return std::nullopt;
  if (u.op() == CAST && u.nsrc() == 1) return symbolic::detail::to_dt(u.src(0), cd);
  if (!is_float(cd) || !(GroupOp::ALU.contains(u.op()) || u.op() == STACK)) return std::nullopt;
  const DType dt = least_upper_dtype(cd, def);
  std::vector<UOp> srcs = u.srcs().to_vector();
  for (std::size_t i = first_value(u); i < srcs.size(); ++i)
    if (!symbolic::is_invalid(srcs[i])) srcs[i] = symbolic::as_dtype(srcs[i], dt);
  return symbolic::detail::to_dt(c.arena().make(u.op(), dt, srcs, u.arg(), u.tag()), cd);
}

}  // namespace detail

/// The context of stage 12's weak float rules.
struct WeakFloatContext {
  DType default_float = detail::default_float;  // Target::default_float
};

/// First pass (tinygrad's pm_commit_weak): where a weak float expression meets a concrete dtype (a
/// peer operand, a CAST, a STORE's destination), that dtype is pushed into it, so `x + 0.1*i` with
/// a double x computes 0.1*i in double. What meets nothing concrete is lowered by the rules below.
inline constexpr auto pm_commit_weak_float = [] {
  using namespace detail;
  using enum Ops;
  using enum DType;
  return pat::rules(
      pat::rule("commit weak floats at a concrete peer", pat::in<GroupOp::Broadcastable>, [](auto& m) { return commit_at_peer(m.root()); }),
      pat::rewrite("a store states a weak float's width", pat::op<STORE>.any_len(idx, val.dtype<weakfloat>()),
                 [](auto& m) { return store_committed(m.root(), cast(m[val], m[idx].dtype())); },
                 concrete_destination && [](auto& m) { return m[val].op() != CONST; }),
      pat::rule("a concrete cast states a weak float's width", pat::op<CAST>(pat::var<"u">.dtype<weakfloat>()),
              [](WeakFloatContext& ctx, auto& m) { return commit_at_cast(m.root(), ctx.default_float); }));
}();

/// The rules: literals beside a concrete float commit at it; lowered weak floats spread up to
/// their concrete consumers (a CAST, a STORE, an op computing in a concrete dtype, a comparison).
inline constexpr auto pm_lower_weak_float = [] {
  using namespace detail;
  using enum Ops;
  using enum DType;
  return pat::rules(
      pat::rule("commit a weak float literal", pat::in<GroupOp::Broadcastable>, [](auto& m) { return commit_literals(m.root()); }),
      // lowered first, then stored
      pat::rewrite("commit a weak float stored value", pat::op<STORE>.any_len(idx, val.dtype<weakfloat>()),
                 [](auto& m) { return store_committed(m.root(), commit(m[val], m[idx].dtype())); },
                 concrete_destination && [](auto& m) { return settled(m[val]); }),
      pat::rule("lower a cast to a weak float", pat::op<CAST>.dtype<weakfloat>(),
                [](WeakFloatContext& ctx, auto& m) { return lower_cast(m.root(), ctx.default_float); }),
      pat::rule("lower a weak float op", pat::in<GroupOp::ALU | OpSet{STACK, INDEX}>.dtype<weakfloat>(),
              [](WeakFloatContext& ctx, auto& m) { return lower_op(m.root(), ctx.default_float); }),
      pat::rule("a concrete op takes lowered weak floats", pat::in<GroupOp::Broadcastable>,
              [](WeakFloatContext& ctx, auto& m) { return commit_operands(m.root(), ctx.default_float); }),
      // a weak float literal lane too: a lane's WHERE folded to its literal arm (the -inf of a padded
      // max beside loaded lanes) keeps the literal's weak dtype
      pat::rewrite("a concrete stack takes lowered weak floats", pat::op<STACK>, [](auto& m) {
        const UOp r = m.root();
        std::vector<UOp> srcs = r.srcs().to_vector();
        for (UOp& s : srcs) s = commit(s, r.dtype());
        return m.arena().make(STACK, r.dtype(), srcs, r.arg(), r.tag());
      }, [](auto& m) {
        const UOp r = m.root();
        return !is_weak(r.dtype()) && (takes_weak_floats(r) || any_src(r, is_weak_float_const));
      }),
      // tinygrad's lower_weak_srcs: a concrete consumer no rule above handles takes a weak float at
      // the default float (a sign-bit XOR's BITCAST(uint, 2.5) of a literal), a lowered one as its value
      pat::rewrite("a bitcast takes a weak float", pat::op<BITCAST>(x),
                   [](WeakFloatContext& ctx, auto& m) {
                     return bitcast(commit(m[x], default_float_for(m[x], ctx.default_float)), m.root().dtype());
                   },
                   [](auto& m) {
                     return !is_weak(m.root().dtype()) && (is_weak_float_const(m[x]) || is_lowered(m[x]));
                   }),
      pat::rewrite("a cast takes a lowered weak float", pat::op<CAST>(x), [](auto& m) {
        const UOp r = m.root(), v = m[x].src(0);
        // a float made an index (CAST to weakint) is a lowered weak int at the width of its range
        if (r.dtype() == weakint) return symbolic::detail::weak_cast(symbolic::detail::to_dt(v, symbolic::detail::index_dtype_for(r)));
        return symbolic::detail::to_dt(v, r.dtype());
      }, [](auto& m) { return is_lowered(m[x]) && m.root().dtype() != weakfloat; }));
}();

/// Commits the REG and LOCAL buffers of weak floats (a reduction of a weak float value) at the
/// default float: the accesses through them follow (INDEX, AFTER), and each load is wrapped as a
/// lowered weak float so its consumers keep their dtypes. Buffers are memory, not values: no rule
/// can retype one without its loads changing dtype under their consumers.
template <class = void>
constexpr UOp commit_weak_float_memory(UOp sink, DType def) {
  using enum Ops;
  using enum DType;
  const std::vector<UOp> nodes = toposort(sink);
  Arena& a = sink.arena();
  std::vector<UOp> now(a.size());  // by the id of a node of `nodes`: its committed form
  for (UOp u : nodes) {
    UOp n = map_srcs(u, [&](UOp s) { return now[s.id()]; });
    if (u.op() == BUFFER && u.dtype() == weakfloat) {
      ParamArg p = ParamArg::from(u.arg());
      p.dtype = def;
      n = a.make(BUFFER, p.dtype, n.srcs().to_vector(), p.to_arg(), u.tag());
    } else if (u.op() == LOAD && u.dtype() == weakfloat && !is_weak(n.dtype())) {
      n = detail::wrap(n);
    }
    now[u.id()] = n;
  }
  return now[sink.id()];
}

/// The passes that run before stage 12's rules, each only on a graph that needs it (most kernels
/// hold no weak float but literals): concrete widths pushed into weak float expressions, then
/// weak float buffers committed.
template <class = void>
constexpr UOp commit_weak_floats(UOp sink, WeakFloatContext& ctx) {
  bool values = false, memory = false;
  for (UOp u : toposort(sink)) {
    values = values || detail::is_weak_float_value(u);
    memory = memory || (u.op() == Ops::BUFFER && u.dtype() == DType::weakfloat);
  }
  if (values) {
    sink = pat::graph_rewrite(sink, pm_commit_weak_float, ctx, {.name = "lower all index dtypes (weak float widths)"});
  }
  return memory ? commit_weak_float_memory(sink, ctx.default_float) : sink;
}

/// Stage 12's promise: no weak dtype is left but in literals. A node that kept one (an op no rule
/// lowers, a weak kernel parameter) is reported here rather than mis-rendered later.
template <class = void>
constexpr void check_no_weak_dtypes(UOp sink) {
  for (UOp u : toposort(sink)) {
    if (!is_weak(u.dtype()) || u.op() == Ops::CONST) continue;
    fail("lower all index dtypes: ", u.arena().describe(u.id()), " keeps a weak dtype (no rule commits it to a concrete one)");
  }
}

}  // namespace uopcg::codegen
