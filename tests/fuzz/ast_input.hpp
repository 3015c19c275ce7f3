// How an input of tests/fuzz/fuzz_from_ast.cpp names its target and its opts, shared with the test
// that replays the kept inputs (tests/codegen/pipeline/test_from_ast.cpp), so that both read an
// input the same way.
#pragma once

#include <string>

#include <uopcg/codegen/opt/apply_opts.hpp>
#include <uopcg/codegen/opt/parse.hpp>
#include <uopcg/codegen/target.hpp>

namespace uopcg_fuzz {

/// "pocl" (and anything unknown), "fp16" (native half), "adreno", "long" (int64 emulated),
/// "nolocals", "fast" (magic-multiply division and polynomial transcendentals).
inline uopcg::Target ast_target(const std::string& name) {
  uopcg::Target t = uopcg::Target::pocl();
  if (name == "fp16") t = uopcg::Target::opencl_fp16();
  else if (name == "adreno") t = uopcg::Target::adreno_a6xx();
  else if (name == "long") t.emulate_long = true;
  else if (name == "nolocals") t.nolocals = true;
  else if (name == "fast") {
    t.disable_fast_idiv = false;
    t.transcendental = 2;
  }
  return t;
}

/// "heuristic", "none", or an opt list as text (parse_opts; bad text is a uopcg::error).
inline uopcg::codegen::opt::OptsRequest ast_opts(const std::string& spec) {
  using uopcg::codegen::opt::OptsRequest;
  if (spec == "heuristic") return OptsRequest::heuristics();
  if (spec == "none") return OptsRequest::no_opts();
  return OptsRequest::of(uopcg::codegen::opt::parse_opts(spec));
}

}  // namespace uopcg_fuzz
