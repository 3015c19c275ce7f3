// Stage-by-stage differential checks against the corpus stage dumps: take the graph tinygrad had
// *before* a stage, run uopcg's stage on it, and compare with the graph tinygrad had *after* it.
// Both dumps are imported into one arena, so "structurally equal" is handle equality (hash-consing).
// Set UOPCG_STAGE_DUMP_DIR to get <kernel>.<stage>.{got,expected}.txt written for a failing stage.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <uopcg/codegen/target.hpp>
#include <uopcg/core/print.hpp>
#include <uopcg/io/json_stages.hpp>
#include <uopcg/io/target.hpp>

#include "../render/corpus.hpp"

namespace uopcg_test {

/// The target a corpus kernel was generated for (its renderer and codegen settings).
inline uopcg::Target target_for(const uopcg::io::Kernel& k) { return uopcg::io::target_of(k); }

/// A corpus kernel with its stage dump, all in one arena.
struct StagedKernel {
  uopcg::Arena arena;
  uopcg::io::Kernel kernel;
  uopcg::io::StageDump dump;
  uopcg::Target target;

  explicit StagedKernel(const std::string& name) {
    kernel = uopcg::io::load_kernel(arena, corpus_dir() / (name + ".json"));
    dump = uopcg::io::load_stages(arena, corpus_dir() / kernel.stages_file);
    target = target_for(kernel);
  }
  /// The graph after the stage named `stage`, and the graph before it (after the previous stage).
  uopcg::UOp after(std::string_view stage) const {
    const auto* s = dump.find(stage);
    if (!s) uopcg::fail_runtime("no stage '" + std::string(stage) + "' in " + dump.name);
    return s->graph.root;
  }
  uopcg::UOp before(std::string_view stage) const {
    // the first stage of a dump (multi_pm) starts from the kernel's AST
    if (!dump.stages.empty() && dump.stages[0].name == stage) return kernel.ast.root;
    for (std::size_t i = 1; i < dump.stages.size(); ++i)
      if (dump.stages[i].name == stage) return dump.stages[i - 1].graph.root;
    uopcg::fail_runtime("no stage '" + std::string(stage) + "' (or nothing before it) in " + dump.name);
  }
};

/// A line diff of two graph dumps, short enough for a test log: the first differing region.
inline std::string graph_diff(uopcg::UOp got, uopcg::UOp expected, std::size_t context = 6) {
  auto lines = [](const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  };
  const auto g = lines(uopcg::graph_to_string(got)), e = lines(uopcg::graph_to_string(expected));
  std::size_t first = 0;
  while (first < g.size() && first < e.size() && g[first] == e[first]) ++first;
  std::ostringstream o;
  o << "got " << g.size() << " lines, expected " << e.size() << "; first difference at line " << first << "\n";
  const std::size_t from = first > context ? first - context : 0;
  o << "--- got\n";
  for (std::size_t i = from; i < std::min(g.size(), first + context); ++i) o << (i >= first ? "! " : "  ") << g[i] << "\n";
  o << "--- expected\n";
  for (std::size_t i = from; i < std::min(e.size(), first + context); ++i) o << (i >= first ? "! " : "  ") << e[i] << "\n";
  return o.str();
}

/// Result of one stage check: empty `diff` when the stage reproduced tinygrad's graph exactly.
struct StageCheck {
  bool same = false;
  std::string diff;
};

/// Runs `stage_fn(input, target)` on the graph before `stage` and compares with the graph after it.
template <class Fn>
StageCheck check_stage(StagedKernel& k, std::string_view stage, Fn&& stage_fn) {
  const uopcg::UOp in = k.before(stage), expected = k.after(stage);
  const uopcg::UOp got = stage_fn(in, k.target);
  StageCheck r;
  r.same = got == expected;
  if (!r.same) {
    r.diff = graph_diff(got, expected);
    if (const char* dir = std::getenv("UOPCG_STAGE_DUMP_DIR"); dir && *dir) {
      std::string base = std::string(dir) + "/" + k.kernel.name + "." + std::string(stage);
      std::replace(base.begin() + static_cast<std::ptrdiff_t>(std::string(dir).size()) + 1, base.end(), ' ', '_');
      std::ofstream(base + ".got.txt") << uopcg::graph_to_string(got);
      std::ofstream(base + ".expected.txt") << uopcg::graph_to_string(expected);
      std::ofstream(base + ".input.txt") << uopcg::graph_to_string(in);
    }
  }
  return r;
}

/// check_stage on every corpus kernel: one CHECK per kernel (logged with its diff), and a MESSAGE
/// with the count that matched.
template <class Fn>
void check_corpus_stage(const char* stage, Fn fn) {
  int same = 0, total = 0;
  for (const auto& e : corpus_kernels()) {
    StagedKernel k(e.name);
    auto r = check_stage(k, stage, fn);
    ++total;
    same += r.same;
    const std::string what = e.name + " @ " + stage + "\n" + r.diff;
    INFO(what);
    CHECK(r.same);
  }
  MESSAGE(std::string(stage) << ": " << same << "/" << total << " kernels match");
}

/// A fuzzer input kept in tests/fuzz/regressions (NAME.json), parsed. meson sets
/// UOPCG_FUZZ_REGRESSIONS; by hand, the directory is found from this file's path (relative to the
/// build directory) or from the repository root.
inline nlohmann::json fuzz_regression(const std::string& name) {
  const char* env = std::getenv("UOPCG_FUZZ_REGRESSIONS");
  std::filesystem::path dir = env && *env ? std::filesystem::path(env)
                                          : std::filesystem::path(__FILE__).parent_path() / ".." / "fuzz" / "regressions";
  if (!std::filesystem::is_directory(dir)) dir = std::filesystem::path("tests") / "fuzz" / "regressions";
  INFO("regression inputs in " << dir.string());
  std::ifstream f(dir / (name + ".json"));
  REQUIRE(f.good());
  std::stringstream text;
  text << f.rdbuf();
  return nlohmann::json::parse(text.str());
}

/// A fuzzer's graph in the corpus' JSON form, imported as the fuzzers import it (no derived-field
/// or order checks: the verifier is what meets it).
inline uopcg::UOp import_fuzz_graph(uopcg::Arena& a, const nlohmann::json& graph) {
  uopcg::io::ImportOptions opts;
  opts.verify_derived = false;
  opts.verify_order = false;
  return uopcg::io::import_graph(a, graph, opts).root;
}

/// For each (name, message): `compile(arena, input)` on the regression input ends in a result (an
/// empty message) or in a uopcg::error whose text contains the message.
template <class F>
void check_fuzz_regressions(const std::vector<std::pair<std::string, std::string>>& expected, F&& compile) {
  for (const auto& entry : expected) {
    const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture one (INFO)
    const std::string& message = entry.second;
    INFO(name);
    const nlohmann::json doc = fuzz_regression(name);
    uopcg::Arena a;
    std::string got;
    try {
      compile(a, doc);
    } catch (const uopcg::error& e) {
      got = e.what();
    }
    INFO(got);
    if (message.empty()) CHECK(got.empty());
    else CHECK(got.find(message) != std::string::npos);
  }
}

}  // namespace uopcg_test
