// The one translation unit of the tool that instantiates the whole pipeline.
#include "driver.hpp"

#include <uopcg/codegen/from_ast.hpp>
#include <uopcg/codegen/opt/parse.hpp>
#if UOPCG_CLI_HAS_OPENCL
#include <memory>

#include <uopcg/runtime/beam_search.hpp>
#endif

#include "common.hpp"

namespace uopcg_cli {

std::vector<uopcg::UOp> beam_candidate_program(uopcg::UOp post_opts, const uopcg::Target& target) {
  CompileResult r = compile_graph(Input{post_opts, false, {}}, target);
  if (const std::string report = barrier_report(r.program); !report.empty())
    uopcg::fail_runtime("the barrier verifier rejects the program: " + report);
  return std::move(r.program);
}

namespace {
/// --opts beam=N: one search on the default OpenCL device for the whole process (opened on first use).
uopcg::codegen::opt::OptSearch beam_search_hook() {
#if UOPCG_CLI_HAS_OPENCL
  static std::unique_ptr<uopcg::opencl::Context> ctx;
  static std::unique_ptr<uopcg::opencl::BeamSearch> search;
  if (!search) {
    ctx = std::make_unique<uopcg::opencl::Context>();
    search = std::make_unique<uopcg::opencl::BeamSearch>(*ctx, beam_candidate_program);
  }
  return search->opt_search();
#else
  uopcg::fail_runtime("--opts beam=N: this build of uopcg has no OpenCL launcher");
#endif
}

uopcg::codegen::opt::OptsRequest request_of(const OptsChoice& c) {
  using uopcg::codegen::opt::OptsRequest;
  switch (c.kind) {
    case OptsChoice::Kind::none: return OptsRequest::no_opts();
    case OptsChoice::Kind::list: return OptsRequest::of(c.opts);
    case OptsChoice::Kind::heuristic: return OptsRequest::heuristics();
    case OptsChoice::Kind::beam: return OptsRequest::beam_search(c.beam, beam_search_hook());
    case OptsChoice::Kind::kernel: break;
  }
  return OptsRequest::from_kernel();
}
}  // namespace

Input input_of(const uopcg::io::Kernel& k, bool from_ast, const std::string* opts_spec) {
  if (opts_spec && !from_ast) uopcg::fail_runtime("--opts applies to --from-ast (the post-opts graph has its opts already)");
  if (!from_ast) {
    if (!k.post_opts.root.valid()) uopcg::fail_runtime("the kernel file has no post_opts graph: compile its ast with --from-ast");
    return Input{k.post_opts.root, false, {}};
  }
  if (!k.ast.root.valid()) uopcg::fail_runtime("--from-ast: the kernel file has no ast");
  Input in{k.ast.root, true, {}};
  const std::string spec = opts_spec ? *opts_spec : (k.has_applied_opts ? "applied" : "");
  if (spec.empty()) return in;
  if (spec == "applied") {
    if (!k.has_applied_opts) uopcg::fail_runtime("--opts applied: the kernel file records no applied_opts");
    in.opts.kind = OptsChoice::Kind::list;
    // a hand-written AST may record opts already applied to it (its ranges show them: a GROUP_REDUCE);
    // the file's list starts with those, and only the rest is applied again
    std::size_t done = 0;
    if (const uopcg::UOp root = k.ast.root; root.arg().kind() == uopcg::ArgKind::kernel_info) {
      const auto own = uopcg::KernelInfo::from(root.arg()).applied_opts;
      while (done < own.size() && done < k.applied_opts.size() && k.applied_opts[done] == own[done].to_arg()) ++done;
      if (done != own.size()) done = 0;
    }
    for (std::size_t i = done; i < k.applied_opts.size(); ++i) in.opts.opts.push_back(uopcg::Opt::from(k.applied_opts[i]));
  } else if (spec == "heuristic") {
    in.opts.kind = OptsChoice::Kind::heuristic;
  } else if (spec == "none") {
    in.opts.kind = OptsChoice::Kind::none;
  } else if (spec.rfind("beam=", 0) == 0) {
    in.opts.kind = OptsChoice::Kind::beam;
    in.opts.beam = parse_count("--opts beam=N", spec.c_str() + 5);
    if (in.opts.beam < 1) uopcg::fail_runtime("--opts beam=N: the width must be at least 1");
  } else {
    in.opts.kind = OptsChoice::Kind::list;
    in.opts.opts = uopcg::codegen::opt::parse_opts(spec);
  }
  return in;
}

CompileResult compile_graph(const Input& input, const uopcg::Target& target, std::string_view stop_after,
                            bool barriers, const trace_hook& trace) {
  uopcg::Target t = target;
  t.verify_barriers = false;  // the commands run the verifier themselves (after --drop-barrier)
  uopcg::codegen::PipelineResult r;
  if (input.from_ast) {
    uopcg::codegen::AstOptions o;
    o.opts = request_of(input.opts);
    o.stop_after = stop_after;
    o.barriers = barriers;
    if (trace) o.trace = trace;
    r = uopcg::codegen::run_from_ast(input.graph, t, o).back;
  } else {
    uopcg::codegen::PipelineOptions o;
    o.stop_after = stop_after;
    o.barriers = barriers;
    if (trace) o.trace = trace;
    r = uopcg::codegen::run_pipeline(input.graph, t, o);
  }
  CompileResult out;
  out.graph = r.sink;
  out.program = std::move(r.program);
  for (const auto& s : r.timings) out.timings.push_back({std::string(s.stage), s.us});
  out.total_us = r.total_us;
  return out;
}

std::vector<std::string_view> stage_names(bool from_ast) {
  std::vector<std::string_view> out;
  if (from_ast) {
    for (const auto& s : uopcg::codegen::front_stages) out.push_back(s.name);
    out.push_back(uopcg::codegen::apply_opts_stage_name);
  }
  for (const auto& s : uopcg::codegen::pipeline_stages) out.push_back(s.name);
  out.push_back(uopcg::codegen::linearize_stage_name);
  return out;
}

std::vector<uopcg::UOp> drop_barrier(std::span<const uopcg::UOp> program, std::size_t n) {
  return uopcg::codegen::drop_barrier(program, n);
}

std::string barrier_report(std::span<const uopcg::UOp> program) {
  return uopcg::codegen::barrier_report(program);
}

std::string explain_barriers(std::span<const uopcg::UOp> program) {
  return uopcg::codegen::explain_barriers_text(program);
}

uopcg::render::RenderedKernel compile_to_source(const Input& input, const uopcg::Target& target) {
  uopcg::Target t = target;
  t.verify_barriers = false;
  if (input.from_ast) return uopcg::codegen::compile_ast_opencl(input.graph, t, request_of(input.opts));
  return uopcg::codegen::compile_opencl(input.graph, t);
}

}  // namespace uopcg_cli
