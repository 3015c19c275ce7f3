// uopcg: tinygrad's late code generation as a header-only C++20 library.
// This umbrella header is the whole portable library, all of it needing only the standard library
// and Boost.Hana:
//   core/      the UOp arena, dtypes, ops, args, the builder, graph algorithms, printing, typing rules
//   pattern/   the pattern DSL, rules and rule sets, graph_rewrite
//   symbolic/  value bounds, constant folding, the symbolic rule sets, the soundness tester, term order
//   codegen/   the front stages (kernel AST -> input of the kernel opts, front_stages.hpp), the
//              kernel opts (opt/: apply_opts, BEAM search, opts as text), the pipeline (post-opts
//              graph -> linearized program, pipeline.hpp) with every stage header, from_ast.hpp
//              (AST -> program in one call) and constexpr_compile.hpp (a kernel compiled in
//              constant evaluation)
//   render/    the OpenCL C emitter
// Not included: the headers under runtime/ (device launchers: OpenCL, KGSL on Linux) and io/ (JSON
// interchange with nlohmann_json, stage dumps also with zlib, DOT output), which have dependencies
// or platforms of their own; and compile.hpp, the declarations-only way to compile the pipeline
// once per program (docs/embedded.md).
#pragma once

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
#include "pattern/pattern.hpp"
#include "symbolic/symbolic.hpp"
#include "codegen/front_stages.hpp"
#include "codegen/opt/apply_opts.hpp"
#include "codegen/opt/beam.hpp"
#include "codegen/opt/parse.hpp"
#include "codegen/pipeline.hpp"
#include "codegen/constexpr_compile.hpp"
#include "codegen/from_ast.hpp"
#include "render/float_text.hpp"
#include "render/kernel.hpp"
#include "render/opencl.hpp"
#include "render/size_text.hpp"
