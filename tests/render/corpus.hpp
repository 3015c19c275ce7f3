// Corpus access for the render and e2e tests: the directory (env UOPCG_CORPUS) and the kernel list.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <uopcg/io/json.hpp>

namespace uopcg_test {

inline std::filesystem::path corpus_dir() {
  if (const char* env = std::getenv("UOPCG_CORPUS"); env && *env) return env;
  for (std::filesystem::path p : {"../shared/corpus", "../../shared/corpus", "../../../shared/corpus"})
    if (std::filesystem::is_directory(p)) return p;
  return "../shared/corpus";
}

struct CorpusEntry {
  std::string name;
  bool executed_on_pocl = false;
};

/// Every kernel listed in index.json, in index order.
inline std::vector<CorpusEntry> corpus_kernels() {
  const auto index = uopcg::io::parse_json(uopcg::io::read_file(corpus_dir() / "index.json"), "index.json");
  std::vector<CorpusEntry> out;
  for (const auto& k : index.at("kernels"))
    out.push_back({k.at("name").get<std::string>(), k.at("executed_on_pocl").get<bool>()});
  return out;
}

}  // namespace uopcg_test
