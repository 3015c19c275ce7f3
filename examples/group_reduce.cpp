// The README's whole-kernel example: a GROUP_REDUCE sum compiled to OpenCL C by the pipeline (the
// barriers come from the pipeline, and its verifier checks them). Printed, not launched.
// doc: readme pipeline
#include <cstdio>
#include <uopcg/codegen/pipeline.hpp>

int main() {
  using namespace uopcg;
  Arena a;
  // out[0] = sum(in[0..4096)): 16 work-items each sum 256 elements, then combine through LOCAL memory
  UOp out = param(a, 0, DType::float32, 1), in = param(a, 1, DType::float32, 4096);
  UOp g = range(a, 16, 1, AxisType::GROUP_REDUCE), r = range(a, 256, 0, AxisType::REDUCE);
  UOp k = sink(store(index(out, literal(a, 0)), reduce(index(in, g * 256 + r), Ops::ADD, g, r)));
  render::RenderedKernel cl = codegen::compile_opencl(k, Target::pocl());   // barriers inserted and verified
  std::fputs(std::string(cl.source.view()).c_str(), stdout);
}
// end doc
