// uopcg single header io/json_stages.hpp: stage dumps (.stages.json.gz); needs nlohmann_json and zlib.
// Generated from include/ by tools/amalgamate.py — do not edit; regenerate with
// `python3 tools/amalgamate.py`. Do not mix with include/'s headers in one translation unit;
// the single headers combine with each other (shared include guards).
// Includes single_include/uopcg/io/json.hpp.
// Inlined, in order: 1 headers from include/
//   uopcg/io/json_stages.hpp
#pragma once
#ifndef UOPCG_SINGLE_HEADER
#define UOPCG_SINGLE_HEADER 1
#endif

// ---- begin uopcg/io/json_stages.hpp ----
#ifndef UOPCG_SINGLE_IO_JSON_STAGES_HPP
#define UOPCG_SINGLE_IO_JSON_STAGES_HPP
// Stage dumps (spec §9): `stages/<kernel>.stages.json.gz`, the graph after every codegen stage.
// Needs zlib (link -lz / meson dependency('zlib')) on top of json.hpp's nlohmann_json.

#include <zlib.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "json.hpp"  // single_include/uopcg/io/json.hpp

namespace uopcg::io {

/// The graph after one stage.
struct Stage {
  std::string name;  // "expander", "postopt symbolic", ...
  Graph graph;
};

/// A whole stage dump: {"schema_version": 1, "name", "stages": [{"stage", "graph"}, ...]}.
struct StageDump {
  std::string name;
  std::vector<Stage> stages;

  /// The stage named `stage` (the last one of that name), or nullptr.
  const Stage* find(std::string_view stage) const {
    for (auto it = stages.rbegin(); it != stages.rend(); ++it)
      if (it->name == stage) return &*it;
    return nullptr;
  }
};

/// The decompressed bytes of a gzip file (a plain file is returned as is).
inline std::string read_gzip(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) fail_runtime("json: cannot open " + path.string());
  std::string out;
  std::vector<char> buf(1 << 16);
  int n;
  while ((n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()))) > 0) out.append(buf.data(), static_cast<std::size_t>(n));
  if (n < 0) {
    int err = 0;
    std::string msg = gzerror(f, &err);
    gzclose(f);
    fail_runtime("json: " + path.string() + ": gzip: " + msg);
  }
  gzclose(f);
  return out;
}

/// Imports a parsed stage dump; every stage's graph goes into `a` (hash-consing shares the nodes
/// the stages have in common).
template <class J>
  requires detail::is_json_v<J>
StageDump import_stages(Arena& a, const J& j, const ImportOptions& opts = {}, std::string_view what = "stages") {
  using namespace detail;
  ctx c{std::string(what), -1, {}};
  expect_object(j, c);
  check_keys(j, {"schema_version", "name", "stages"}, c);
  {
    field_guard g(c, "schema_version");
    std::int64_t v = get_i64(need(j, "schema_version", c), c);
    if (v != 1) c.raise("unsupported schema version " + std::to_string(v) + " (expected 1)");
  }
  StageDump d;
  {
    field_guard g(c, "name");
    d.name = get_str(need(j, "name", c), c);
  }
  field_guard g(c, "stages");
  const J& st = need(j, "stages", c);
  expect_array(st, c);
  const std::string prefix = what.empty() ? std::string() : std::string(what) + ": ";
  for (std::size_t i = 0; i < st.size(); ++i) {
    field_guard gi(c, i);
    const J& e = st[i];
    expect_object(e, c);
    check_keys(e, {"stage", "graph"}, c);
    Stage s;
    {
      field_guard gk(c, "stage");
      s.name = get_str(need(e, "stage", c), c);
    }
    const J* graph;
    {
      field_guard gk(c, "graph");
      graph = &need(e, "graph", c);
    }
    s.graph = import_graph(a, *graph, opts, prefix + "stage " + std::to_string(i) + " (" + s.name + ")");
    d.stages.push_back(std::move(s));
  }
  return d;
}

/// Reads and imports a `.stages.json.gz` file (or an uncompressed one).
inline StageDump load_stages(Arena& a, const std::filesystem::path& path, const ImportOptions& opts = {}) {
  const std::string what = path.filename().string();
  nlohmann::json j = parse_json(read_gzip(path), what);
  return import_stages(a, j, opts, what);
}

/// The stage dump as JSON (graphs without the derived fields, like the files).
inline nlohmann::ordered_json export_stages(const StageDump& d) {
  using J = nlohmann::ordered_json;
  J j = J::object();
  j["schema_version"] = 1;
  j["name"] = d.name;
  J st = J::array();
  for (const Stage& s : d.stages) {
    J e = J::object();
    e["stage"] = s.name;
    e["graph"] = export_graph(s.graph.root, ExportOptions{.derived = false});
    st.push_back(std::move(e));
  }
  j["stages"] = std::move(st);
  return j;
}

}  // namespace uopcg::io
#endif  // UOPCG_SINGLE_IO_JSON_STAGES_HPP
// ---- end uopcg/io/json_stages.hpp ----
