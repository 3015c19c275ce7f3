// libFuzzer target for the front half: the input is a kernel's AST in the corpus' JSON form with the
// opts to apply, `{"ast": {"root": N, "nodes": [...]}, "opts": "LOCAL:0:4,UPCAST:1:4", "target":
// "pocl"}` ("opts" also "heuristic" or "none"; "target" also "fp16", "adreno", "long" for int64
// emulated, "nolocals", "fast" for magic-multiply division and polynomial transcendentals). Whatever
// imports goes through the front stages, apply_opts, every back stage, the barrier verifier and the
// emitter. A uopcg::error is an accepted outcome (a bad AST or an opt that
// does not apply, named); a crash, a sanitizer report, another exception type or a hang is a finding.
//
// The mutator edits the AST (fuzz_common.hpp) or the opts: it adds an opt, drops one, changes an
// opt's axis or amount, or switches between a list, the heuristics and none. Seeds are the corpus'
// kernel files with an ast, with their applied_opts (scripts/fuzz.sh ast SECONDS extracts them).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <uopcg/codegen/from_ast.hpp>
#include <uopcg/io/json.hpp>

#include "ast_input.hpp"
#include "fuzz_common.hpp"

namespace {

using namespace uopcg_fuzz;
namespace io = uopcg::io;
namespace opt = uopcg::codegen::opt;

constexpr std::size_t max_opts = 8;

// An opt list whose UPCAST/UNROLL amounts multiply past max_lanes expands into that many copies of
// the kernel: slow, not wrong. Amount 0 (the whole axis) counts as the largest amount allowed.
bool too_many_lanes(const std::vector<uopcg::Opt>& opts) {
  std::int64_t lanes = 1;
  for (const uopcg::Opt& o : opts) {
    if (o.op != uopcg::OptOps::UPCAST && o.op != uopcg::OptOps::UNROLL) continue;
    const std::int64_t amount = o.arg.is_int() ? o.arg.as_int() : 0;
    lanes *= amount <= 0 || amount > 32 ? 32 : amount;
    if (lanes > max_lanes) return true;
  }
  return false;
}

void compile(const J& doc) {
  const opt::OptsRequest request = ast_opts(string_field(doc, "opts"));
  if (request.opts.size() > max_opts || too_many_lanes(request.opts)) return;
  uopcg::Arena a;
  io::ImportOptions io_opts;
  io_opts.verify_derived = false;
  io_opts.verify_order = false;
  const io::Graph g = io::import_graph(a, doc["ast"], io_opts);
  const auto k = uopcg::codegen::compile_ast_opencl(g.root, ast_target(string_field(doc, "target", "pocl")), request);
  if (k.source.empty()) finding("empty source", doc.dump().substr(0, 2000));
}

// --- the opts' mutator -----------------------------------------------------------------------------

const char* const opt_ops[] = {"LOCAL", "UPCAST", "UNROLL", "GROUP", "GROUPTOP", "PADTO", "SWAP", "THREAD", "NOLOCALS"};
const std::int64_t opt_amounts[] = {0, 2, 3, 4, 8, 16, 32, -1};
const char* const targets[] = {"pocl", "fp16", "adreno", "long", "nolocals", "fast"};

std::string random_opt(std::mt19937& r) {
  const std::string op = pick(r, opt_ops);
  if (op == "NOLOCALS") return op;
  return op + ":" + std::to_string(static_cast<int>(r() % 5) - (r() % 16 == 0 ? 1 : 0)) + ":" +
         std::to_string(pick(r, opt_amounts));
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size() && !s.empty()) {
    const std::size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void mutate_opts(J& doc, std::mt19937& r) {
  std::string spec = string_field(doc, "opts");
  if (r() % 10 == 0) {
    const char* modes[] = {"heuristic", "none", ""};
    doc["opts"] = pick(r, modes);
    return;
  }
  if (spec == "heuristic" || spec == "none") spec.clear();
  std::vector<std::string> items = split(spec);
  switch (r() % 3) {
    case 0:  // add an opt somewhere
      if (items.size() < max_opts) items.insert(items.begin() + static_cast<std::ptrdiff_t>(r() % (items.size() + 1)), random_opt(r));
      break;
    case 1:  // drop one
      if (!items.empty()) items.erase(items.begin() + static_cast<std::ptrdiff_t>(r() % items.size()));
      break;
    default:  // replace one
      if (!items.empty()) items[r() % items.size()] = random_opt(r);
      else items.push_back(random_opt(r));
  }
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  doc["opts"] = out;
}

}  // namespace

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  J doc = J::parse(std::string(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("ast") || !doc["ast"].is_object() ||
      !doc["ast"].contains("nodes"))
    return LLVMFuzzerMutate(data, size, max_size);
  std::mt19937 r(seed);
  if (r() % 2 == 0) {
    mutate_opts(doc, r);
  } else {
    const int edits = 1 + static_cast<int>(r() % 2);
    for (int e = 0, tries = 0; e < edits && tries < 64; ++tries)
      if (mutate_once(doc["ast"], r)) ++e;
  }
  if (r() % 8 == 0) doc["target"] = pick(r, targets);
  const std::string out = doc.dump();
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const J doc = J::parse(std::string(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("ast") || !doc["ast"].is_object() ||
      (doc.contains("opts") && !doc["opts"].is_string()) || (doc.contains("target") && !doc["target"].is_string()) ||
      too_big(doc["ast"]))
    return 0;
  expect_result_or_error([&] { compile(doc); });
  return 0;
}
