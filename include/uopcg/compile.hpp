// The codegen pipeline compiled once per program. Including codegen/pipeline.hpp instantiates every
// stage's rule sets in each translation unit that includes it; this header only declares the
// pipeline's entry points (uopcg::linked, non-template signatures) beside the cheap headers a caller
// needs (core: building and printing graphs; codegen/target.hpp; render/opencl.hpp's
// RenderedKernel). Exactly one translation unit of the program compiles their definitions, the way
// stb and doctest do it:
//
//   #define UOPCG_IMPLEMENTATION
//   #include <uopcg/compile.hpp>
//
// Defined before any uopcg header of that file (a later #include of this header is skipped). A
// program that never does fails to link with an undefined reference naming the entry point and
// uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit; defining it in two translation units
// gives a multiple definition of the same names. Header-only use needs none of this: include
// <uopcg/uopcg.hpp> (or codegen/pipeline.hpp) and call uopcg::codegen's functions.
//
// An entry point is one declaration here and one definition in compile_impl.hpp that forwards to the
// header-only function; its parameter types must come from headers as cheap as these.
#pragma once

#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "codegen/target.hpp"
#include "core/arena.hpp"
#include "core/arg.hpp"
#include "core/builder.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/graph.hpp"
#include "core/ops.hpp"
#include "core/print.hpp"
#include "core/text.hpp"
#include "core/verify.hpp"
#include "render/kernel.hpp"

namespace uopcg::linked {

/// Called after every stage with its name (as in codegen::pipeline_stages, then "linearize"), the
/// graph it produced and its time in microseconds (codegen::PipelineOptions::trace).
using stage_trace = std::function<void(std::string_view stage, UOp graph, double us)>;

// The inline namespace is part of every entry point's linker name, so that the linker's complaint
// about a program without the implementation names the macro to define.
inline namespace uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit {

/// The post-opts graph `sink` as OpenCL C: codegen::compile_opencl (the pipeline, then the emitter).
render::RenderedKernel compile_opencl(UOp sink, const Target& target);

/// The linearized program of the post-opts graph `sink`: codegen::run_pipeline's program, with
/// `trace` (when set) called after every stage.
std::vector<UOp> to_program(UOp sink, const Target& target, const stage_trace& trace = {});

/// A linearized program (what to_program returns) as OpenCL C for `target`'s device: the emitter,
/// render::render_opencl, compiled with the pipeline rather than in every translation unit.
render::RenderedKernel render_opencl(std::span<const UOp> program, const Target& target);

/// A kernel's AST as OpenCL C (codegen::compile_ast_opencl: front stages, kernel opts, pipeline,
/// emitter), with tinygrad's choice of opts (the AST's opts_to_apply, else the heuristics).
render::RenderedKernel compile_ast_opencl(UOp ast, const Target& target);

/// The same with exactly `opts`, in order (an invalid one is an error naming it).
render::RenderedKernel compile_ast_opencl(UOp ast, const Target& target, std::span<const Opt> opts);

}  // namespace uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit
}  // namespace uopcg::linked

// The run-time paths of the core's graph building (core/detail/out_of_line.hpp) are compiled by the
// implementation translation unit too, not by every user of this header. A program that includes
// this header (or a single header of io/) and calls no entry point still needs them once: one of its
// translation units defines UOPCG_CORE_IMPLEMENTATION (those paths alone) or UOPCG_IMPLEMENTATION.
namespace uopcg {
// One list for both: defined where the macro asks for them, declared extern everywhere else.
#if defined(UOPCG_IMPLEMENTATION) || defined(UOPCG_CORE_IMPLEMENTATION)
#define UOPCG_DETAIL_INSTANCE template
#else
#define UOPCG_DETAIL_INSTANCE extern template
#endif
UOPCG_DETAIL_INSTANCE void Arena::set_up_out_of_line<detail::out_of_line_tag>();
UOPCG_DETAIL_INSTANCE UOp Arena::make_out_of_line<detail::out_of_line_tag>(Ops, DType, std::span<const UOp>, const Arg&,
                                                                           const Arg&);
UOPCG_DETAIL_INSTANCE Arg ParamArg::record_out_of_line<detail::out_of_line_tag>() const;
UOPCG_DETAIL_INSTANCE Arg KernelInfo::record_out_of_line<detail::out_of_line_tag>() const;
UOPCG_DETAIL_INSTANCE void Arena::set_up<detail::out_of_line_tag>();
UOPCG_DETAIL_INSTANCE UOp Arena::make_node<detail::out_of_line_tag>(Ops, DType, std::span<const UOp>, const Arg&, const Arg&);
UOPCG_DETAIL_INSTANCE Arg ParamArg::record<detail::out_of_line_tag>() const;
UOPCG_DETAIL_INSTANCE Arg KernelInfo::record<detail::out_of_line_tag>() const;
#undef UOPCG_DETAIL_INSTANCE
}  // namespace uopcg

#if defined(UOPCG_IMPLEMENTATION)
#include "compile_impl.hpp"
#endif
