// Every graph of the corpus — ast, post_opts, full_sink, linear and the graph after every stage —
// satisfies the IR verifier's typing rules.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <uopcg/core/verify.hpp>
#include <uopcg/io/json.hpp>
#include <uopcg/io/json_stages.hpp>

using namespace uopcg;

TEST_CASE("the corpus passes the verifier") {
  const char* env = std::getenv("UOPCG_CORPUS");
  std::filesystem::path dir = env ? env : "../shared/corpus";
  REQUIRE(std::filesystem::is_directory(dir));
  int kernels = 0, graphs = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const auto& p = e.path();
    if (p.extension() != ".json" || p.filename() == "index.json") continue;
    ++kernels;
    Arena a;
    io::Kernel k = io::load_kernel(a, p);
    std::string file = p.filename().string();
    const std::pair<const char*, const io::Graph*> sections[] = {{"ast", &k.ast}, {"post_opts", &k.post_opts}, {"full_sink", &k.full_sink}};
    for (const auto& section : sections) {
      INFO(file << " " << section.first);
      CHECK_NOTHROW(verify(section.second->root));
      ++graphs;
    }
    INFO(file << " linear");
    CHECK_NOTHROW(verify(std::span<const UOp>(k.linear.instructions)));
    ++graphs;
    io::StageDump dump = io::load_stages(a, p.parent_path() / k.stages_file);
    for (const auto& s : dump.stages) {
      INFO(file << " stage " << s.name);
      CHECK_NOTHROW(verify(s.graph.root));
      ++graphs;
    }
  }
  CHECK(kernels == 16);
  CHECK(graphs > 500);
}
