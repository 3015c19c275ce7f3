// Stage 12 "lower all index dtypes" (tinygrad-codegen.md §3.13): every weakint node (index math,
// RANGE, SPECIAL, variables, literals) becomes int32, or int64 where its value range does not fit
// int32; afterwards no weak dtype is left except inside literals. The rules are
// symbolic::pm_lower_index_dtype (with symbolic_simple, as symbolic::lower_index) plus
// indexing_simplify, which simplifies a gated index under its gate (so a widening the gate rules
// out disappears).
#pragma once

#include <optional>
#include <vector>

#include "../symbolic/indexing.hpp"
#include "../symbolic/sets.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace P = uopcg::pat;

namespace lower_detail {
constexpr bool lowered_size(UOp s) {
  return s.op() == Ops::CAST && s.dtype() == DType::weakint && s.nsrc() == 1 && is_int(s.src(0).dtype()) &&
         !is_weak(s.src(0).dtype());
}
}  // namespace lower_detail

/// A buffer's size (the PARAM/BUFFER shape source) takes its lowered literal directly.
inline constexpr auto pm_lower_buffer_sizes = P::rules(P::rule(
    "buffer size absorbs the weak cast",
    // a weakint PARAM is a variable, lowered by pm_lower_index_dtype itself
    P::op<Ops::PARAM, Ops::BUFFER>.where([](UOp u) { return u.dtype() != DType::weakint; }),
    [](auto& m) -> std::optional<UOp> {
      UOp r = m.root();
      bool any = false;
      std::vector<UOp> srcs = r.srcs().to_vector();
      for (UOp& s : srcs)
        if (lower_detail::lowered_size(s)) s = s.src(0), any = true;
      if (!any) return std::nullopt;
      return m.arena().make(r.op(), r.dtype(), srcs, r.arg(), r.tag());
    }));

/// A float literal (weakfloat) operand of an op computing in a concrete float dtype, or stored into a
/// float buffer, commits at that dtype (rounded to it).
inline constexpr auto pm_commit_weak_float = P::rules(P::rule(
    "commit a weak float literal", P::in<GroupOp::Broadcastable>, [](auto& m) -> std::optional<UOp> {
      UOp r = m.root();
      DType dt = DType::void_;
      bool any = false;
      for (std::size_t i = r.op() == Ops::WHERE ? 1 : 0; i < r.nsrc(); ++i) {
        UOp s = r.src(i);
        if (symbolic::is_invalid(s)) continue;
        if (s.op() == Ops::CONST && s.dtype() == DType::weakfloat) any = true;
        dt = dt == DType::void_ ? s.dtype() : least_upper_dtype(dt, s.dtype());
      }
      if (!any || !is_float(dt) || is_weak(dt)) return std::nullopt;
      std::vector<UOp> srcs = r.srcs().to_vector();
      for (std::size_t i = r.op() == Ops::WHERE ? 1 : 0; i < srcs.size(); ++i)
        if (srcs[i].op() == Ops::CONST && srcs[i].dtype() == DType::weakfloat) srcs[i] = symbolic::as_dtype(srcs[i], dt);
      return m.arena().make(r.op(), r.dtype(), srcs, r.arg(), r.tag());
    }),
    P::rule("commit a weak float stored value", P::op<Ops::STORE>.any_len(P::var<"idx">, P::var<"val">.dtype<DType::weakfloat>()),
            [](auto& m) -> std::optional<UOp> {
              UOp st = m.root(), idx = m[P::var<"idx">];
              if (!is_float(idx.dtype()) || is_weak(idx.dtype())) return std::nullopt;
              std::vector<UOp> srcs = st.srcs().to_vector();
              srcs[1] = symbolic::as_dtype(srcs[1], idx.dtype());
              return m.arena().make(Ops::STORE, st.dtype(), srcs, st.arg(), st.tag());
            }));

/// The rules of stage 12.
inline constexpr auto pm_lower_all_index_dtypes =
    symbolic::pm_lower_index_dtype + pm_lower_buffer_sizes + pm_commit_weak_float + symbolic::indexing_simplify;

/// Stage 12 ("lower all index dtypes").
template <class = void>
UOp lower_index_dtypes(UOp sink, const Target& t) {
  (void)t;
  P::rewrite_options o;
  o.name = "lower all index dtypes";
  return P::graph_rewrite(sink, pm_lower_all_index_dtypes, o);
}

}  // namespace uopcg::codegen
