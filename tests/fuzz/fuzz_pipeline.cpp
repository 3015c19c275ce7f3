// libFuzzer target for the codegen pipeline: the input is a post-opts graph in the corpus' JSON form
// (`{"root": N, "nodes": [...]}`, optionally `"fp16": true` for the cl_khr_fp16 target). Whatever
// imports and passes the IR verifier goes through every stage, the barrier verifier and the OpenCL
// emitter. A uopcg::error is an accepted outcome (bad input, named); a crash, a sanitizer report,
// another exception type or a hang is a finding.
//
// A custom mutator edits the graph (fuzz_common.hpp). Seeds are the post_opts graphs of the
// corpus (scripts/fuzz.sh pipeline SECONDS extracts them).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include <uopcg/codegen/pipeline.hpp>
#include <uopcg/io/json.hpp>

#include "fuzz_common.hpp"

namespace {

using namespace uopcg_fuzz;
namespace io = uopcg::io;

void compile(const J& doc) {
  uopcg::Arena a;
  io::ImportOptions opts;
  opts.verify_derived = false;
  opts.verify_order = false;
  io::Graph g = io::import_graph(a, doc, opts);
  uopcg::Target t = bool_field(doc, "fp16", false) ? uopcg::Target::opencl_fp16() : uopcg::Target::pocl();
  t.verify_barriers = true;
  const auto k = uopcg::codegen::compile_opencl(g.root, t);
  if (k.source.empty()) finding("empty source", doc.dump().substr(0, 2000));
}

}  // namespace

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  J g = J::parse(std::string(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (g.is_discarded() || !g.is_object() || !g.contains("nodes")) return LLVMFuzzerMutate(data, size, max_size);
  std::mt19937 r(seed);
  const int edits = 1 + static_cast<int>(r() % 3);
  for (int e = 0, tries = 0; e < edits && tries < 64; ++tries)
    if (mutate_once(g, r)) ++e;
  if (r() % 8 == 0) g["fp16"] = !bool_field(g, "fp16", false);
  const std::string out = g.dump();
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  J doc = J::parse(std::string(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || too_big(doc)) return 0;
  expect_result_or_error([&] { compile(doc); });
  return 0;
}
