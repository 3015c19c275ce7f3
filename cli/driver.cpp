// The one translation unit of the tool that instantiates the whole pipeline.
#include "driver.hpp"

#include <uopcg/codegen/pipeline.hpp>

namespace uopcg_cli {

CompileResult compile_graph(uopcg::UOp post_opts, const uopcg::Target& target, std::string_view stop_after,
                            bool barriers, const trace_hook& trace) {
  uopcg::Target t = target;
  t.verify_barriers = false;  // the commands run the verifier themselves (after --drop-barrier)
  uopcg::codegen::PipelineOptions o;
  o.stop_after = stop_after;
  o.barriers = barriers;
  if (trace) o.trace = trace;
  uopcg::codegen::PipelineResult r = uopcg::codegen::run_pipeline(post_opts, t, o);
  CompileResult out;
  out.graph = r.sink;
  out.program = std::move(r.program);
  for (const auto& s : r.timings) out.timings.push_back({std::string(s.stage), s.us});
  out.total_us = r.total_us;
  return out;
}

std::vector<std::string_view> stage_names() {
  std::vector<std::string_view> out;
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

uopcg::render::RenderedKernel compile_to_source(uopcg::UOp post_opts, const uopcg::Target& target) {
  uopcg::Target t = target;
  t.verify_barriers = false;
  return uopcg::codegen::compile_opencl(post_opts, t);
}

}  // namespace uopcg_cli
