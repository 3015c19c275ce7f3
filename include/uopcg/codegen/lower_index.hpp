// Stage 12 "lower all index dtypes" (tinygrad/uop/weak.py and tinygrad/codegen/__init__.py, pm_lower_index_dtype): every weakint node (index math,
// RANGE, SPECIAL, variables, literals) becomes int32, or int64 where its value range does not fit
// int32, and every weakfloat node a concrete float (lower_weak_float.hpp); afterwards no weak dtype
// is left except inside literals, which the stage checks. The rules are symbolic::pm_lower_index_dtype
// (with symbolic_simple, as symbolic::lower_index) plus pm_lower_weak_float and indexing_simplify,
// which simplifies a gated index under its gate (so a widening the gate rules out disappears).
#pragma once

#include <optional>
#include <vector>

#include "../symbolic/indexing.hpp"
#include "../symbolic/sets.hpp"
#include "detail/helpers.hpp"
#include "lower_weak_float.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {
constexpr bool lowered_size(UOp s) {
  return s.op() == Ops::CAST && s.dtype() == DType::weakint && s.nsrc() == 1 && is_int(s.src(0).dtype()) &&
         !is_weak(s.src(0).dtype());
}
}  // namespace detail

/// A buffer's size (the PARAM/BUFFER shape source) takes its lowered literal directly.
inline constexpr auto pm_lower_buffer_sizes = [] {
  using namespace detail;
  using enum Ops;
  return pat::rules(pat::rewrite(
      "buffer size absorbs the weak cast",
      // a weakint PARAM is a variable, lowered by pm_lower_index_dtype itself
      pat::op<PARAM, BUFFER>.such_that([](UOp u) { return u.dtype() != DType::weakint; }),
      [](auto& m) {
        const UOp r = m.root();
        std::vector<UOp> srcs = r.srcs().to_vector();
        for (UOp& s : srcs)
          if (lowered_size(s)) s = s.src(0);
        return m.arena().make(r.op(), r.dtype(), srcs, r.arg(), r.tag());
      },
      [](auto& m) { return any_src(m.root(), lowered_size); }));
}();

/// The rules of stage 12.
inline constexpr auto pm_lower_all_index_dtypes =
    symbolic::pm_lower_index_dtype + pm_lower_buffer_sizes + pm_lower_weak_float + symbolic::indexing_simplify;

/// Stage 12 ("lower all index dtypes").
template <class = void>
constexpr UOp lower_index_dtypes(UOp sink, const Target& t) {
  pat::rewrite_options o;
  o.name = "lower all index dtypes";
  WeakFloatContext ctx{t.default_float};
  const UOp r = pat::graph_rewrite(commit_weak_floats(sink, ctx), pm_lower_all_index_dtypes, ctx, o);
  check_no_weak_dtypes(r);
  return r;
}

}  // namespace uopcg::codegen
