// Stage 19 "final rewrite" and stage 20 "casted consts" (tinygrad/codegen/__init__.py, full_rewrite_to_sink; pm_casted_consts).
//
//   final_rewrite = pm_commit_weak + pm_cast_weak + pm_decomp + OpenCL extra matcher
//                   + pm_split_ends + pm_remove_invalid                     (children first, ctx Target)
//   casted_consts = pm_casted_consts                                         (walk)
//
// The OpenCL extra matcher computes bfloat16 in float: every bf16 ALU op runs on float operands and
// casts back, bf16 comparisons compare floats, casts to/from bf16 go through float, and the
// float<->bf16 casts themselves are bit manipulations (bf16 -> float: the bits shifted up by 16;
// float -> bf16: round to nearest even on the bit pattern, infinities kept, NaN made quiet; the same
// IEEE-exact graphs as decomp dtypes' f2f).
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "../symbolic/sets.hpp"
#include "decompositions.hpp"
#include "detail/helpers.hpp"
#include "detail/vars.hpp"
#include "dtype_decomps.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {

inline constexpr pat::DTypeSet bf16{DType::bfloat16};

/// bf16 -> float: the 16 bits moved to the top of a float's bits (a NaN made quiet).
constexpr UOp bf16_to_float(UOp x) {
  using enum DType;
  return f2f(bitcast(x, uint16), bfloat16, float32);
}

/// float -> bf16: round to nearest even on the bit pattern (denormals included; rounding past the
/// largest finite value gives infinity); a NaN keeps its sign and top payload bits and is made quiet.
constexpr UOp float_to_bf16(UOp x) {
  using enum DType;
  return bitcast(f2f(bitcast(x, uint32), float32, bfloat16), bfloat16);
}

constexpr UOp with_float_srcs(UOp x) {
  std::vector<UOp> s;
  for (UOp v : x.srcs()) s.push_back(cast(v, DType::float32));
  return make_node(x.arena(), x.op(), s, x.arg());
}

/// END(body, ranges...) -> one END per RANGE the listed sources are inside, the largest axis id
/// innermost; bool/void backedge sources go on a final END; an END left without ranges disappears.
constexpr std::optional<UOp> split_ends(UOp e) {
  using enum Ops;
  using enum DType;
  std::vector<UOp> backedge, closed;
  for (std::size_t i = 1; i < e.nsrc(); ++i) {
    UOp s = e.src(i);
    (s.dtype() == void_ || s.dtype() == bool_ ? backedge : closed).push_back(s);
  }
  std::vector<UOp> rngs;
  for (UOp s : closed) {
    // a closed RANGE is itself only: the ranges its size depends on (a triangular or data-dependent
    // loop's) enclose it and are closed by their own ENDs
    if (s.op() == RANGE) {
      if (std::find(rngs.begin(), rngs.end(), s) == rngs.end()) rngs.push_back(s);
      continue;
    }
    for (node_id rid : range_ids(s)) {
      const UOp r(&e.arena(), rid);
      if (std::find(rngs.begin(), rngs.end(), r) == rngs.end()) rngs.push_back(r);
    }
  }
  // a stable insertion sort (std::stable_sort is not constexpr); an END closes a few ranges
  for (std::size_t i = 1; i < rngs.size(); ++i)
    for (std::size_t j = i; j > 0 && symbolic::detail::cmp_arg(rngs[j].arg(), rngs[j - 1].arg()) > 0; --j)
      std::swap(rngs[j], rngs[j - 1]);
  Arena& a = e.arena();
  UOp ret = e.src(0);
  for (UOp r : rngs) ret = a.make(END, void_, {ret, r});
  if (!backedge.empty()) {
    std::vector<UOp> s{ret};
    s.insert(s.end(), backedge.begin(), backedge.end());
    ret = a.make(END, void_, s);
  }
  if (ret == e) return std::nullopt;
  return ret;
}

}  // namespace detail

/// The OpenCL renderer's extra matcher: bf16 arithmetic in float, manual float<->bf16 casts.
inline constexpr auto pm_opencl_bf16 = [] {
  using namespace detail;
  using enum Ops;
  using enum DType;
  constexpr auto xh = x.dtypes<bf16>();
  constexpr auto yh = y.dtypes<bf16>();
  return pat::rules(
      pat::rewrite("bf16 where in float", pat::op<WHERE>(b, xh, yh),
                 pat::cast<bfloat16>(pat::where(b, pat::cast<float32>(x), pat::cast<float32>(y)))),
      pat::rule("bf16 alu in float", pat::in<GroupOp::ALU>.dtypes<bf16>(),
              [](auto& m) { return cast(with_float_srcs(m.root()), m.root().dtype()); }),
      pat::rule("bf16 comparison in float", pat::in<GroupOp::ALU>.dtype<bool_>()(xh, yh),
              [](auto& m) { return with_float_srcs(m.root()); }),
      pat::rewrite("cast to bf16 through float", pat::op<CAST>.dtypes<bf16>()(x), pat::cast<bfloat16>(pat::cast<float32>(x)),
                 [](auto& m) { return m[x].dtype() != float32; }),
      pat::rewrite("cast from bf16 through float", pat::op<CAST>(yh), [](auto& m) { return cast(cast(m[y], float32), m.root().dtype()); },
                 [](auto& m) { return m.root().dtype() != float32; }),
      pat::rule("bf16 -> float", pat::op<CAST>.dtype<float32>()(xh), [](auto& m) { return bf16_to_float(m[x]); }),
      pat::rule("float -> bf16", pat::op<CAST>.dtypes<bf16>()(x.dtype<float32>()), [](auto& m) { return float_to_bf16(m[x]); }));
}();

/// pm_split_ends: nested single-range ENDs over actual RANGEs (SPECIALs and constants vanish).
inline constexpr auto pm_split_ends =
    pat::rules(pat::rule("split ends", pat::op<Ops::END>, [](auto& m) { return detail::split_ends(m.root()); }));

/// pm_remove_invalid: what is left of Invalid in values becomes 0.
inline constexpr auto pm_remove_invalid = [] {
  using namespace detail;
  using enum Ops;
  return pat::rules(
      pat::rule("where(c, x, Invalid) -> where(c, x, 0)", pat::op<WHERE>(pat::var<"c">, x, pat::invalid_const), [](auto& m) {
        const UOp w = m.root();
        return w.arena().make(WHERE, w.dtype(), {get<"c">(m), m[x], const_like(w, 0)}, w.arg(), w.tag());
      }),
      pat::rewrite("Invalid lanes -> 0", pat::op<STACK>, [](auto& m) {
        const UOp s = m.root();
        std::vector<UOp> lanes;
        for (UOp v : s.srcs()) lanes.push_back(symbolic::is_invalid(v) ? const_like(s, 0) : v);
        return s.arena().make(STACK, s.dtype(), lanes, s.arg(), s.tag());
      }, [](auto& m) { return any_src(m.root(), symbolic::is_invalid); }));
}();

inline constexpr auto pm_final_rewrite =
    pm_commit_weak + pm_cast_weak + pm_decomp + pm_opencl_bf16 + pm_split_ends + pm_remove_invalid;

/// Stage 19 "final rewrite".
template <class = void>
constexpr UOp final_rewrite(UOp sink, const Target& t) {
  return pat::graph_rewrite(sink, pm_final_rewrite, t, {.name = "final rewrite"});
}

/// pm_casted_consts: every concrete CONST becomes CAST(dt, CONST(value, weak)) — the literal's value
/// in a weak (or bool) CONST, its width in the CAST. Run in walk mode (the inner CONST is not
/// rewritten again).
namespace detail {
/// A concrete CONST's value as a literal: a weak CONST (bool for bool).
constexpr UOp literal_of(UOp c) {
  using enum DType;
  const DType dt = c.dtype();
  const Arg& v = c.arg();
  Arena& a = c.arena();
  if (is_bool(dt)) return const_(a, bool_, v.is_bool() ? v : Arg::boolean(v.as_float() != 0));
  if (is_float(dt)) return const_(a, weakfloat, v.is_float() ? v : const_at(c, float64).arg());
  if (v.is_float()) return const_(a, weakint, Arg(static_cast<std::int64_t>(v.as_float())));
  return const_(a, weakint, v.is_bool() ? Arg(std::int64_t(v.as_bool())) : v);
}
}  // namespace detail

inline constexpr auto pm_casted_consts = pat::rules(pat::rewrite(
    "casted const", pat::op<Ops::CONST>,
    [](auto& m) { return m.arena().make(Ops::CAST, m.root().dtype(), {detail::literal_of(m.root())}, Arg::dtype(m.root().dtype())); },
    [](auto& m) {
      const UOp c = m.root();
      return !is_weak(c.dtype()) && c.dtype() != DType::void_ && !c.arg().is_invalid() && c.arg().is_number();
    }));

/// Stage 20 "casted consts".
template <class = void>
constexpr UOp casted_consts(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, pm_casted_consts, {.walk = true, .name = "casted consts"});
}

}  // namespace uopcg::codegen
