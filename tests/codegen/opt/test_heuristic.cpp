// The heuristics and tensor cores against tinygrad beyond the corpus: opt_cases.json (written by
// tools/gen_opt_fixtures.py with tinygrad 0.14.0) holds kernels with the target settings tinygrad
// ran them with, what was asked (the heuristics or an opt list) and its result: the applied opts
// and the post-opts graph, or the KernelOptError message. Both graphs are imported into one arena,
// so "the same graph" is handle equality.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <uopcg/codegen/opt/apply_opts.hpp>
#include <uopcg/core/print.hpp>
#include <uopcg/io/json.hpp>

using namespace uopcg;
namespace O = uopcg::codegen::opt;

#ifndef UOPCG_OPT_CASES
#define UOPCG_OPT_CASES "opt_cases.json"
#endif

namespace {

/// The target of a case: PoCL's renderer with the case's overrides and tinygrad context variables.
Target target_of(const nlohmann::json& c) {
  Target t = Target::pocl();
  const auto& r = c.at("target");
  if (r.contains("has_local")) t.renderer.has_local = r.at("has_local").get<bool>();
  if (r.contains("has_shared")) t.renderer.has_shared = r.at("has_shared").get<bool>();
  if (r.contains("has_threads")) t.renderer.has_threads = r.at("has_threads").get<bool>();
  if (r.contains("shared_max")) t.renderer.shared_max = r.at("shared_max").get<std::int64_t>();
  if (r.contains("global_max"))
    for (std::size_t i = 0; i < 3; ++i) t.renderer.global_max[i] = r.at("global_max").at(i).get<std::int64_t>();
  if (r.contains("device")) t.renderer.device = text(r.at("device").get<std::string>());
  if (r.contains("tensor_cores")) {
    const std::string name = r.at("tensor_cores").get<std::string>();
    if (name == "metal") t.tensor_cores = O::tensor_cores::metal();
    else if (name == "cuda_sm80") t.tensor_cores = O::tensor_cores::cuda_sm80();
    else FAIL("unknown tensor core table " << name);
  }
  for (const auto& [key, v] : c.at("context").items()) {
    const int value = v.get<int>();
    if (key == "NOLOCALS") t.nolocals = value != 0;
    else if (key == "TC") t.use_tc = value;
    else if (key == "TC_OPT") t.tc_opt = value;
    else if (key == "TC_SELECT") t.tc_select = value;
    else if (key == "ALLOW_TF32") t.allow_tf32 = value != 0;
    else FAIL("unknown context variable " << key);
  }
  return t;
}

std::vector<Opt> opts_of(const nlohmann::json& list) {
  std::vector<Opt> out;
  for (const auto& o : list) out.push_back(Opt::from(io::decode_value(o, "opt")));
  return out;
}

std::string opts_text(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts) s += O::to_text(o).str() + " ";
  return s;
}

}  // namespace

TEST_CASE("heuristics and tensor cores: tinygrad's choices and graphs on kernels beyond the corpus") {
  const auto cases = io::parse_json(io::read_file(UOPCG_OPT_CASES), "opt_cases.json").at("cases");
  REQUIRE(cases.size() >= 20);
  int heuristic = 0, tensor_core = 0, wmma = 0;
  for (const auto& c : cases) {
    const std::string name = c.at("name").get<std::string>();
    INFO(name);
    Arena a;
    const Target t = target_of(c);
    const UOp in = io::import_graph(a, c.at("input"), {}, "input").root;
    const bool heur = c.at("request").is_string();
    heuristic += heur;
    tensor_core += !t.tensor_cores.empty();
    O::Scheduler k(in, t);
    k.convert_loop_to_global();
    const O::OptResult<O::Scheduler> got = [&]() -> O::OptResult<O::Scheduler> {
      if (heur) return O::hand_coded_optimizations(k);
      O::Scheduler s = k.copy();
      for (const Opt& o : opts_of(c.at("request")))
        if (auto r = s.apply_opt(o); !r.ok()) return r.error();
      return s;
    }();
    if (c.contains("error")) {
      REQUIRE_FALSE(got.ok());
      CHECK(got.error().message.str() == c.at("error").get<std::string>());
      continue;
    }
    REQUIRE(got.ok());
    const O::Scheduler& s = got.value_or_fail();
    const std::vector<Opt> want = opts_of(c.at("applied_opts"));
    INFO("got " << opts_text(s.applied_opts()) << "\nwant " << opts_text(want));
    REQUIRE(s.applied_opts().size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(s.applied_opts()[i].to_arg() == want[i].to_arg());
    const UOp expected = io::import_graph(a, c.at("expected"), {}, "expected").root;
    const UOp out = s.get_optimized_ast();
    INFO("got:\n" << graph_to_string(out) << "expected:\n" << graph_to_string(expected));
    CHECK(out == expected);
    for (UOp u : toposort(out)) wmma += u.op() == Ops::WMMA;
    // apply_opts gives the same through its request
    const O::OptsRequest req = heur ? O::OptsRequest::heuristics() : O::OptsRequest::of(opts_of(c.at("request")));
    CHECK(O::apply_opts(in, t, req) == expected);
  }
  CHECK(heuristic >= 15);
  CHECK(tensor_core >= 10);
  CHECK(wmma >= 6);  // the cases that build a WMMA (the others keep the REDUCE)
}

TEST_CASE("TensorCore: the tables are consistent and describe their shape strings") {
  for (const auto& table : {O::tensor_cores::metal(), O::tensor_cores::cuda_sm75(), O::tensor_cores::cuda_sm80(),
                            O::tensor_cores::cuda_sm89(), O::tensor_cores::amd_rdna3(), O::tensor_cores::amd_rdna4(),
                            O::tensor_cores::amd_cdna3(), O::tensor_cores::amd_cdna4()}) {
    REQUIRE_FALSE(table.empty());
    for (const O::TensorCore& tc : table) {
      tc.check();
      const auto base = tc.base_shape_str();
      CHECK(base.size() == tc.opts.size() + tc.reduce_count());
      const auto perms = tc.permutes_for_shape_str(base);
      REQUIRE(perms.has_value());
      for (const auto& p : *perms) {  // each a permutation of the base shape string
        std::vector<bool> seen(base.size(), false);
        for (std::size_t i : p) {
          REQUIRE(i < base.size());
          CHECK_FALSE(seen[i]);
          seen[i] = true;
        }
      }
    }
  }
  // Metal: opts u0 l0 l1 l1 l0 l1 -> u0 l0 l1 l2 l3 l4, then r0 r1 r2; upcast axes u0, r2, r1, r0
  const O::TensorCore m = O::tensor_cores::metal()[0];
  std::vector<std::string> names;
  for (const auto& x : m.base_shape_str()) names.push_back(x.str().str());
  CHECK(names == std::vector<std::string>{"u0", "l0", "l1", "l2", "l3", "l4", "r0", "r1", "r2"});
  names.clear();
  for (const auto& x : m.base_upcast_axes()) names.push_back(x.str().str());
  CHECK(names == std::vector<std::string>{"u0", "r2", "r1", "r0"});
  CHECK(O::tensor_cores::cuda_sm80().size() == 6);
  CHECK(O::tensor_cores::amd_cdna3().size() == 4);
}
