// The definitions of compile.hpp's entry points: the whole pipeline, instantiated in the one
// translation unit of a program that defines UOPCG_IMPLEMENTATION before including compile.hpp (or
// includes this header). They are ordinary (not inline) functions, so a second such translation unit
// is a multiple-definition error at link time rather than a silent second copy.
#pragma once

// Included directly, it is the macro: compile.hpp then defines the run-time paths of graph building
// (core/detail/out_of_line.hpp) instead of declaring them extern.
#ifndef UOPCG_IMPLEMENTATION
#define UOPCG_IMPLEMENTATION 1
#endif

#include <span>
#include <vector>

#include "codegen/from_ast.hpp"
#include "codegen/pipeline.hpp"
#include "compile.hpp"
#include "render/opencl.hpp"

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
