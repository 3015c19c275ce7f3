// libFuzzer target for the JSON importer (io/json.hpp, io/json_stages.hpp): the input is parsed as
// JSON and imported as a graph, a linear program, a kernel file and a stage dump, with and without
// the derived-field checks. A uopcg::error is the expected outcome for malformed input; anything
// else (a crash, a sanitizer report, another exception type, a hang) is a finding. Whatever
// imports must export to JSON that imports again and exports identically (round-trip property).
//   scripts/fuzz.sh SECONDS        (or build by hand: clang++ -std=c++20 -g -O1
//   -fsanitize=fuzzer,address,undefined -Iinclude tests/fuzz/fuzz_json_import.cpp -lz)
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <uopcg/io/json.hpp>
#include <uopcg/io/json_stages.hpp>

#include "fuzz_common.hpp"

namespace {

using namespace uopcg_fuzz;
using uopcg::Arena;
namespace io = uopcg::io;

// export(import(x)) must import again and export to the same JSON.
void check_graph_round_trip(const io::Graph& g, const io::ImportOptions& opts) {
  auto e1 = io::export_graph(g);
  Arena b;
  io::Graph g2;
  try {
    g2 = io::import_graph(b, e1, opts);
  } catch (const uopcg::error& e) {
    finding("exported graph does not import", e.what());
  }
  auto e2 = io::export_graph(g2);
  if (e1 != e2 || e1.dump() != e2.dump()) finding("graph round trip differs", e1.dump().substr(0, 2000));
}

void check_linear_round_trip(const io::Program& p, const io::ImportOptions& opts) {
  auto e1 = io::export_linear(p);
  Arena b;
  io::Program p2;
  try {
    p2 = io::import_linear(b, e1, opts);
  } catch (const uopcg::error& e) {
    finding("exported program does not import", e.what());
  }
  auto e2 = io::export_linear(p2);
  if (e1 != e2 || e1.dump() != e2.dump()) finding("linear round trip differs", e1.dump().substr(0, 2000));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // the text parser: errors must come back as uopcg::error
  expect_result_or_error([&] { (void)io::parse_json(text, "fuzz"); });
  J doc = J::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;

  for (bool strict : {false, true}) {
    io::ImportOptions opts;
    opts.verify_derived = strict;
    opts.verify_order = strict;
    expect_result_or_error([&] {
      Arena a;
      io::Graph g = io::import_graph(a, doc, opts);
      check_graph_round_trip(g, opts);
    });
    expect_result_or_error([&] {
      Arena a;
      io::Program p = io::import_linear(a, doc, opts);
      check_linear_round_trip(p, opts);
    });
    expect_result_or_error([&] {
      Arena a;
      io::Kernel k = io::import_kernel(a, doc, opts, "fuzz");
      check_graph_round_trip(k.ast, opts);
      check_graph_round_trip(k.full_sink, opts);
      check_linear_round_trip(k.linear, opts);
    });
    expect_result_or_error([&] {
      Arena a;
      io::StageDump d = io::import_stages(a, doc, opts, "fuzz");
      auto e = io::export_stages(d);
      Arena b;
      io::StageDump d2;
      try {
        d2 = io::import_stages(b, e, opts);
      } catch (const uopcg::error& err) {
        finding("exported stage dump does not import", err.what());
      }
      if (io::export_stages(d2) != e) finding("stage dump round trip differs", e.dump().substr(0, 2000));
    });
    // a lone value
    expect_result_or_error([&] {
      uopcg::Arg v = io::decode_value(doc, "value", opts);
      auto e = io::encode_value(v);
      if (io::decode_value(e) != v) finding("value round trip differs", e.dump());
    });
  }
  return 0;
}
