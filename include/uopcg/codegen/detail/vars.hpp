// The pattern variables several stage rule files name alike: one definition each, since the stage
// headers share one namespace (uopcg::codegen::detail).
#pragma once

#include "../../pattern/pattern.hpp"

namespace uopcg::codegen::detail {

inline constexpr auto x = pat::var<"x">;
inline constexpr auto y = pat::var<"y">;
inline constexpr auto b = pat::var<"b">;
inline constexpr auto c = pat::cvar<"c">;
inline constexpr auto idx = pat::var<"idx">;
inline constexpr auto val = pat::var<"val">;
inline constexpr auto wmma = pat::op<Ops::WMMA>.named<"wmma">();

}  // namespace uopcg::codegen::detail
