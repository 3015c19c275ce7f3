// libFuzzer target for the codegen pipeline: the input is a post-opts graph in the corpus' JSON form
// (`{"root": N, "nodes": [...]}`, optionally `"fp16": true` for the cl_khr_fp16 target). Whatever
// imports and passes the IR verifier goes through every stage, the barrier verifier and the OpenCL
// emitter. A uopcg::error is an accepted outcome (bad input, named); a crash, a sanitizer report,
// another exception type or a hang is a finding.
//
// Random bytes rarely make a graph, so a custom mutator edits the graph instead: a constant's value,
// a node's dtype, an ALU op for another of its arity, a RANGE's size or axis type, a source for an
// earlier node. Seeds are the post_opts graphs of the corpus (scripts/fuzz.sh pipeline SECONDS
// extracts them).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>

#include <uopcg/codegen/pipeline.hpp>
#include <uopcg/io/json.hpp>

namespace {

using J = nlohmann::json;
namespace io = uopcg::io;

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "FINDING: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Sizes past these make a correct pipeline slow (an UPCAST of a million lanes is a million nodes),
// not wrong: such inputs are skipped, not findings.
constexpr std::size_t max_nodes = 400;
constexpr std::int64_t max_const = 1 << 16;

constexpr std::int64_t max_lanes = 4096;  // the product of the UPCAST/UNROLL sizes

bool too_big(const J& g) {
  if (!g.contains("nodes") || !g["nodes"].is_array() || g["nodes"].size() > max_nodes) return true;
  std::map<std::int64_t, std::int64_t> const_ints;  // node id -> value
  for (const J& n : g["nodes"])
    if (n.is_object() && n.value("op", "") == "CONST" && n.contains("arg") && n["arg"].is_number_integer()) {
      const std::int64_t v = n["arg"].get<std::int64_t>();
      if (v > max_const || v < -max_const) return true;
      if (n.contains("id") && n["id"].is_number_integer()) const_ints[n["id"].get<std::int64_t>()] = v;
    }
  // every expanded lane is a copy of the kernel body: 255 x 255 unrolled lanes take minutes, correctly
  std::int64_t lanes = 1;
  for (const J& n : g["nodes"]) {
    if (!n.is_object() || n.value("op", "") != "RANGE" || !n.contains("arg") || !n["arg"].is_array() || n["arg"].size() < 2 ||
        !n.contains("src") || !n["src"].is_array() || n["src"].empty() || !n["src"][0].is_number_integer())
      continue;
    const J& at = n["arg"][n["arg"].size() - 1];
    const std::string axis = at.is_object() ? at.value("v", "") : "";
    if (axis != "UPCAST" && axis != "UNROLL") continue;
    auto it = const_ints.find(n["src"][0].get<std::int64_t>());
    if (it != const_ints.end() && it->second > 1) lanes *= it->second;
    if (lanes > max_lanes) return true;
  }
  return false;
}

void compile(const J& doc) {
  uopcg::Arena a;
  io::ImportOptions opts;
  opts.verify_derived = false;
  opts.verify_order = false;
  io::Graph g = io::import_graph(a, doc, opts);
  uopcg::Target t = doc.value("fp16", false) ? uopcg::Target::opencl_fp16() : uopcg::Target::pocl();
  t.verify_barriers = true;
  const auto k = uopcg::codegen::compile_opencl(g.root, t);
  if (k.source.empty()) finding("empty source", doc.dump().substr(0, 2000));
}

// --- the structured mutator -----------------------------------------------------------------------

const char* const binary_ops[] = {"ADD", "MUL", "MAX", "SUB", "CDIV", "CMOD", "CMPLT", "CMPNE", "CMPEQ", "AND",
                                  "OR", "XOR", "SHL", "SHR", "FDIV", "POW", "FLOORDIV", "FLOORMOD"};
const char* const unary_ops[] = {"NEG", "EXP2", "LOG2", "SIN", "SQRT", "RECIPROCAL", "TRUNC"};
const char* const dtypes[] = {"float", "half", "bfloat16", "double", "int", "uint", "long", "ulong", "short",
                              "ushort", "char", "uchar", "bool", "weakint", "fp8e4m3", "fp8e5m2"};
const char* const axis_types[] = {"GLOBAL", "LOCAL", "LOOP", "REDUCE", "GROUP_REDUCE", "UPCAST", "UNROLL", "WARP"};
const std::int64_t int_values[] = {0, 1, -1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64, 255, 256, 1000, -7, -128};
const double float_values[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e30, -1e30, 65504.0, 1e-40};

template <class T, std::size_t N>
const T& pick(std::mt19937& r, const T (&a)[N]) {
  return a[r() % N];
}

bool contains(const char* const* b, const char* const* e, const std::string& s) {
  for (; b != e; ++b)
    if (s == *b) return true;
  return false;
}

// One edit of one node; false when the chosen node offers none of the chosen kind.
bool mutate_once(J& g, std::mt19937& r) {
  J& nodes = g["nodes"];
  if (!nodes.is_array() || nodes.empty()) return false;
  const std::size_t i = r() % nodes.size();
  J& n = nodes[i];
  if (!n.is_object()) return false;
  const std::string op = n.value("op", "");
  switch (r() % 6) {
    case 0:  // a constant's value
      if (op != "CONST" || !n.contains("arg")) return false;
      if (n["arg"].is_number_integer()) n["arg"] = pick(r, int_values);
      else if (n["arg"].is_number_float()) n["arg"] = pick(r, float_values);
      else return false;
      return true;
    case 1:  // a dtype
      if (op == "SINK" || op == "STORE" || op == "END") return false;
      n["dtype"] = pick(r, dtypes);
      return true;
    case 2:  // an ALU op for another of the same arity
      if (contains(std::begin(binary_ops), std::end(binary_ops), op)) n["op"] = pick(r, binary_ops);
      else if (contains(std::begin(unary_ops), std::end(unary_ops), op)) n["op"] = pick(r, unary_ops);
      else return false;
      return true;
    case 3:  // a RANGE's axis type
      if (op != "RANGE" || !n["arg"].is_array() || n["arg"].size() < 2) return false;
      n["arg"][1] = J{{"t", "AxisType"}, {"v", pick(r, axis_types)}};
      return true;
    case 4: {  // a source for an earlier node (sources come first in the corpus' order)
      if (!n.contains("src") || !n["src"].is_array() || n["src"].empty() || i == 0) return false;
      const std::size_t k = r() % n["src"].size();
      n["src"][k] = nodes[r() % i].value("id", 0);
      return true;
    }
    default: {  // a CAST's target, or a PARAM's element dtype
      if (op == "CAST" && n.contains("arg")) {
        n["arg"] = pick(r, dtypes);
        return true;
      }
      if (op == "PARAM" && n["arg"].is_object()) {
        const char* d = pick(r, dtypes);
        n["arg"]["dtype"] = d;
        n["dtype"] = d;
        return true;
      }
      return false;
    }
  }
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
  if (r() % 8 == 0) g["fp16"] = !g.value("fp16", false);
  const std::string out = g.dump();
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  J doc = J::parse(std::string(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || too_big(doc)) return 0;
  try {
    compile(doc);
  } catch (const uopcg::error&) {
    // rejected with a message: the expected outcome for a bad graph
  } catch (const std::exception& e) {
    finding("exception other than uopcg::error", e.what());
  } catch (...) {
    finding("non-standard exception", "?");
  }
  return 0;
}
