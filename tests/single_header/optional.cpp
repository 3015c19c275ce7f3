// The optional single headers at work, against single_include/ alone: the declarations-only
// compile.hpp (graph building, printing) with io/json.hpp (a graph exported to tinygrad's JSON and
// imported again) and io/dot.hpp; io/target.hpp is included beside them. None of them includes
// uopcg.hpp, so this file does not instantiate the pipeline. It calls no entry point of compile.hpp,
// so it compiles only the run-time paths of graph building that compile.hpp's users leave to one
// translation unit (UOPCG_CORE_IMPLEMENTATION).
#define UOPCG_CORE_IMPLEMENTATION
#include <uopcg/compile.hpp>
#include <uopcg/io/dot.hpp>
#include <uopcg/io/json.hpp>
#include <uopcg/io/target.hpp>

#ifndef UOPCG_SINGLE_HEADER
#error "expected single_include/"
#endif
#if __has_include(<uopcg/core/error.hpp>)
#error "include/ must not be on the include path of the single-header test"
#endif

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

uopcg::UOp build(uopcg::Arena& a) {
  using namespace uopcg;
  UOp out = param(a, 0, DType::float32, 64), x = param(a, 1, DType::float32, 64);
  UOp i = range(a, 64, 0, AxisType::GLOBAL);
  return sink(end(store(index(out, i), index(x, i) * 3.0 + 1.0), i));
}

}  // namespace

TEST_CASE("single headers: io/json.hpp exports a graph that imports back to the same graph") {
  uopcg::Arena a;
  const uopcg::UOp k = build(a);
  const std::string text = uopcg::io::export_graph(k).dump();
  uopcg::Arena b;
  const uopcg::io::Graph g = uopcg::io::import_graph(b, uopcg::io::parse_json(text));
  CHECK(g.nodes.size() == uopcg::toposort(k).size());
  CHECK(uopcg::graph_to_string(g.root) == uopcg::graph_to_string(k));
}

TEST_CASE("single headers: io/dot.hpp draws the graph") {
  uopcg::Arena a;
  const std::string dot = uopcg::io::to_dot(build(a), "k");
  CHECK(dot.find("digraph") != std::string::npos);
  CHECK(dot.find("STORE") != std::string::npos);
}
