// What the libFuzzer targets share: how a finding is reported, which graphs are too big to be worth
// compiling, and the structured mutator that edits a graph in the corpus' JSON form
// (`{"root": N, "nodes": [...]}`) node by node. Random bytes rarely make a graph; these edits keep
// the JSON a graph and change one thing a stage has to handle: a constant's value, a node's dtype, an
// ALU op for another of its arity, a RANGE's axis type, a source for an earlier node, a CAST's target
// or a PARAM's element dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <random>
#include <string>

#include <nlohmann/json.hpp>
#include <uopcg/core/error.hpp>

namespace uopcg_fuzz {

using J = nlohmann::json;

[[noreturn]] inline void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "FINDING: %s: %s\n", what, detail.c_str());
  std::abort();
}

/// Runs `f`: a result or a uopcg::error (bad input, named) is the expected outcome; any other
/// exception is a finding.
template <class F>
void expect_result_or_error(F&& f) {
  try {
    f();
  } catch (const uopcg::error&) {
  } catch (const std::exception& e) {
    finding("exception other than uopcg::error", e.what());
  } catch (...) {
    finding("non-standard exception", "?");
  }
}

// Sizes past these make a correct pipeline slow (an UPCAST of a million lanes is a million nodes),
// not wrong: such inputs are skipped, not findings.
inline constexpr std::size_t max_nodes = 400;
inline constexpr std::int64_t max_const = 1 << 16;

/// The product of the UPCAST/UNROLL sizes.
inline constexpr std::int64_t max_lanes = 4096;

// A field of a JSON object, or `fallback` when it is missing or of another type: the mutators'
// edits (and libFuzzer's byte-level ones) make any field any type, where json::value throws.
inline std::string string_field(const J& n, const char* key, const char* fallback = "") {
  const auto it = n.find(key);
  return it != n.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
}
inline std::int64_t int_field(const J& n, const char* key, std::int64_t fallback) {
  const auto it = n.find(key);
  return it != n.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
}
inline bool bool_field(const J& n, const char* key, bool fallback) {
  const auto it = n.find(key);
  return it != n.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

inline bool too_big(const J& g) {
  if (!g.contains("nodes") || !g["nodes"].is_array() || g["nodes"].size() > max_nodes) return true;
  std::map<std::int64_t, std::int64_t> const_ints;  // node id -> value
  for (const J& n : g["nodes"])
    if (n.is_object() && string_field(n, "op") == "CONST" && n.contains("arg") && n["arg"].is_number_integer()) {
      const std::int64_t v = n["arg"].get<std::int64_t>();
      if (v > max_const || v < -max_const) return true;
      if (n.contains("id") && n["id"].is_number_integer()) const_ints[n["id"].get<std::int64_t>()] = v;
    }
  // every expanded lane is a copy of the kernel body: 255 x 255 unrolled lanes take minutes, correctly
  std::int64_t lanes = 1;
  for (const J& n : g["nodes"]) {
    if (!n.is_object() || string_field(n, "op") != "RANGE" || !n.contains("arg") || !n["arg"].is_array() || n["arg"].size() < 2 ||
        !n.contains("src") || !n["src"].is_array() || n["src"].empty() || !n["src"][0].is_number_integer())
      continue;
    const J& at = n["arg"][n["arg"].size() - 1];
    const std::string axis = at.is_object() ? string_field(at, "v") : "";
    if (axis != "UPCAST" && axis != "UNROLL") continue;
    auto it = const_ints.find(n["src"][0].get<std::int64_t>());
    if (it != const_ints.end() && it->second > 1) lanes *= it->second;
    if (lanes > max_lanes) return true;
  }
  return false;
}

inline const char* const binary_ops[] = {"ADD", "MUL", "MAX", "SUB", "CDIV", "CMOD", "CMPLT", "CMPNE", "CMPEQ", "AND",
                                  "OR", "XOR", "SHL", "SHR", "FDIV", "POW", "FLOORDIV", "FLOORMOD"};
inline const char* const unary_ops[] = {"NEG", "EXP2", "LOG2", "SIN", "SQRT", "RECIPROCAL", "TRUNC"};
inline const char* const dtypes[] = {"float", "half", "bfloat16", "double", "int", "uint", "long", "ulong", "short",
                              "ushort", "char", "uchar", "bool", "weakint", "fp8e4m3", "fp8e5m2"};
inline const char* const axis_types[] = {"GLOBAL", "LOCAL", "LOOP", "REDUCE", "GROUP_REDUCE", "UPCAST", "UNROLL", "WARP"};
inline const std::int64_t int_values[] = {0, 1, -1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64, 255, 256, 1000, -7, -128};
inline const double float_values[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e30, -1e30, 65504.0, 1e-40};

template <class T, std::size_t N>
const T& pick(std::mt19937& r, const T (&a)[N]) {
  return a[r() % N];
}

inline bool contains(const char* const* b, const char* const* e, const std::string& s) {
  for (; b != e; ++b)
    if (s == *b) return true;
  return false;
}

// One edit of one node; false when the chosen node offers none of the chosen kind.
inline bool mutate_once(J& g, std::mt19937& r) {
  J& nodes = g["nodes"];
  if (!nodes.is_array() || nodes.empty()) return false;
  const std::size_t i = r() % nodes.size();
  J& n = nodes[i];
  if (!n.is_object()) return false;
  const std::string op = string_field(n, "op");
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
      const J& from = nodes[r() % i];
      n["src"][k] = from.is_object() ? int_field(from, "id", 0) : 0;
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


}  // namespace uopcg_fuzz
