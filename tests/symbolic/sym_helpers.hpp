// Helpers of the ported symbolic tests: named variables with bounds and simplification to text.
#pragma once

#include <string>
#include <string_view>

#include <uopcg/core/builder.hpp>
#include <uopcg/symbolic/render.hpp>
#include <uopcg/symbolic/sets.hpp>

namespace symtest {
using namespace uopcg;

/// A weakint variable named `n` with values in [lo, hi] (tinygrad's Variable).
inline UOp var(Arena& a, std::string_view n, std::int64_t lo, std::int64_t hi, DType dt = DType::weakint) {
  static std::int64_t slot = 100;
  ParamArg p;
  p.slot = slot++;
  p.dtype = dt;
  p.addrspace = AddrSpace::ALU;
  p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{lo, hi};
  p.has_name = true;
  p.name = n;
  return a.make(Ops::PARAM, dt, {}, p.to_arg());
}
inline UOp simplify(UOp u) { return pat::graph_rewrite(u, uopcg::symbolic::sym); }
inline std::string simp(UOp u) { return uopcg::symbolic::render(simplify(u)); }
}  // namespace symtest
