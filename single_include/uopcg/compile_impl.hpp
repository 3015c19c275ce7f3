// uopcg single header compile_impl.hpp: the definitions of compile.hpp's entry points (UOPCG_IMPLEMENTATION); includes uopcg.hpp.
// Generated from include/ by tools/amalgamate.py — do not edit; regenerate with
// `python3 tools/amalgamate.py`. Do not mix with include/'s headers in one translation unit;
// the single headers combine with each other (shared include guards).
// Includes single_include/uopcg/uopcg.hpp.
// Includes single_include/uopcg/compile.hpp.
// Inlined, in order: 1 headers from include/
//   uopcg/compile_impl.hpp
#pragma once
#ifndef UOPCG_SINGLE_HEADER
#define UOPCG_SINGLE_HEADER 1
#endif

// ---- begin uopcg/compile_impl.hpp ----
#ifndef UOPCG_SINGLE_COMPILE_IMPL_HPP
#define UOPCG_SINGLE_COMPILE_IMPL_HPP
// The definitions of compile.hpp's entry points: the whole pipeline, instantiated in the one
// translation unit of a program that defines UOPCG_IMPLEMENTATION before including compile.hpp (or
// includes this header). They are ordinary (not inline) functions, so a second such translation unit
// is a multiple-definition error at link time rather than a silent second copy.

// Included directly, it is the macro: compile.hpp then defines the run-time paths of graph building
// (core/detail/out_of_line.hpp) instead of declaring them extern.
#ifndef UOPCG_IMPLEMENTATION
#define UOPCG_IMPLEMENTATION 1
#endif

#include <span>
#include <vector>

#include "uopcg.hpp"  // single_include/uopcg/uopcg.hpp
#include "compile.hpp"  // single_include/uopcg/compile.hpp

namespace uopcg::linked {
inline namespace uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit {

render::RenderedKernel compile_opencl(UOp sink, const Target& target) {
  return codegen::compile_opencl(sink, target);
}

std::vector<UOp> to_program(UOp sink, const Target& target, const stage_trace& trace) {
  codegen::PipelineOptions options;
  options.trace = trace;
  return codegen::run_pipeline(sink, target, options).program;
}

render::RenderedKernel render_opencl(std::span<const UOp> program, const Target& target) {
  return render::render_opencl(program, target.renderer);
}

render::RenderedKernel compile_ast_opencl(UOp ast, const Target& target) {
  return codegen::compile_ast_opencl(ast, target);
}

render::RenderedKernel compile_ast_opencl(UOp ast, const Target& target, std::span<const Opt> opts) {
  return codegen::compile_ast_opencl(ast, target, codegen::opt::OptsRequest::of({opts.begin(), opts.end()}));
}

}  // namespace uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit
}  // namespace uopcg::linked
#endif  // UOPCG_SINGLE_COMPILE_IMPL_HPP
// ---- end uopcg/compile_impl.hpp ----
