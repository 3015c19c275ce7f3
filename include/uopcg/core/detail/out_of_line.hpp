// The run-time paths of the core's heavy constexpr functions (Arena::make and the derivations it
// runs, the arena's set-up, the kernel args' records). A constexpr function is inline, so every
// translation unit that builds a graph would compile and optimize their bodies again. Instead, at run
// time each calls a non-inline member template instantiated for `out_of_line_tag`: header-only code
// instantiates it implicitly, as any template; uopcg/compile.hpp declares the instantiations
// `extern template`, so a program's users of compile.hpp compile a call and only its implementation
// translation unit compiles the bodies (compile.hpp defines them under UOPCG_IMPLEMENTATION or
// UOPCG_CORE_IMPLEMENTATION). Constant evaluation still runs the bodies inline.
#pragma once

namespace uopcg::detail {

/// The template argument of those out-of-line paths. Its name is the one a linker prints for a
/// program that includes compile.hpp and links no implementation translation unit.
struct uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit;
using out_of_line_tag = uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit;

}  // namespace uopcg::detail
