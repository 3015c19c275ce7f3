// The JSON interchange (io/json.hpp, io/json_stages.hpp): every graph of the corpus imports and
// exports back to the original JSON (derived shape/addrspace included), the values of spec §5
// round-trip, the kernel metadata and .bin data read back, and every class of malformed input
// gives a uopcg::error naming the node and the field.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <uopcg/core/verify.hpp>
#include <uopcg/io/json.hpp>
#include <uopcg/io/json_stages.hpp>

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using uopcg::Arena;
using uopcg::Arg;
using uopcg::ArgKind;
using uopcg::DType;
using uopcg::Ops;
using uopcg::UOp;
namespace io = uopcg::io;

namespace {

fs::path corpus_dir() {
  if (const char* env = std::getenv("UOPCG_CORPUS"); env && *env) return env;
  // default: ../shared/corpus next to the repository root (run from the root or a build dir)
  for (fs::path p : {fs::path("../shared/corpus"), fs::path("../../shared/corpus"), fs::path("../../../shared/corpus")})
    if (fs::is_directory(p)) return p;
  return "../shared/corpus";
}

std::vector<fs::path> kernel_files() {
  std::vector<fs::path> out;
  const fs::path dir = corpus_dir();
  REQUIRE_MESSAGE(fs::is_directory(dir), "corpus not found at " << dir << " (set UOPCG_CORPUS)");
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json" && e.path().filename() != "index.json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> stage_files() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(corpus_dir() / "stages"))
    if (e.path().string().ends_with(".stages.json.gz")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

ordered_json read_ordered(const fs::path& p) {
  const std::string text = p.extension() == ".gz" ? io::read_gzip(p) : io::read_file(p);
  return io::parse_json<ordered_json>(text, p.filename().string());
}

/// Describes the first difference between two node arrays (for failure messages).
std::string first_diff(const ordered_json& want, const ordered_json& got) {
  if (!want.is_array() || !got.is_array()) return "not arrays";
  for (std::size_t i = 0; i < want.size() && i < got.size(); ++i)
    if (want[i].dump() != got[i].dump()) return "node " + std::to_string(i) + ":\n  file:   " + want[i].dump() + "\n  export: " + got[i].dump();
  if (want.size() != got.size())
    return "node count " + std::to_string(want.size()) + " vs " + std::to_string(got.size());
  return "root differs";
}

/// Exact equality: JSON values and their text (key order, -0.0, 1.0 vs 1).
void check_same(const ordered_json& want, const ordered_json& got, const std::string& what) {
  const bool same = want == got && want.dump() == got.dump();
  CHECK_MESSAGE(same, what << ": " << first_diff(want.contains("nodes") ? want["nodes"] : want,
                                                  got.contains("nodes") ? got["nodes"] : got));
}

// --- a small valid graph to break -------------------------------------------------------------------
ordered_json param_arg_json(int slot) {
  return ordered_json::parse(R"({"t": "ParamArg", "slot": )" + std::to_string(slot) +
                             R"(, "dtype": "float", "vmin_vmax": null, "multiple_of": null, "name": null,
       "addrspace": "GLOBAL", "axis": null, "device": "CL", "volatile": false})");
}

ordered_json base_graph() {
  ordered_json g = ordered_json::parse(R"({"root": 7, "nodes": [
    {"id": 0, "op": "CONST", "dtype": "weakint", "src": [], "arg": 16, "tag": null, "shape": [], "addrspace": null},
    {"id": 1, "op": "PARAM", "dtype": "float", "src": [0], "arg": null, "tag": null, "shape": [16], "addrspace": "GLOBAL"},
    {"id": 2, "op": "RANGE", "dtype": "weakint", "src": [0], "arg": [0, {"t": "AxisType", "v": "LOOP"}], "tag": null, "shape": [], "addrspace": "ALU"},
    {"id": 3, "op": "INDEX", "dtype": "float", "src": [1, 2], "arg": null, "tag": null, "shape": [], "addrspace": "GLOBAL"},
    {"id": 4, "op": "CONST", "dtype": "float", "src": [], "arg": {"t": "float", "v": 1.5}, "tag": null, "shape": [], "addrspace": null},
    {"id": 5, "op": "STORE", "dtype": "void", "src": [3, 4], "arg": null, "tag": null, "shape": [], "addrspace": "GLOBAL"},
    {"id": 6, "op": "END", "dtype": "void", "src": [5, 2], "arg": null, "tag": null, "shape": [], "addrspace": "GLOBAL"},
    {"id": 7, "op": "SINK", "dtype": "void", "src": [6], "arg": null, "tag": null, "shape": null, "addrspace": null}
  ]})");
  g["nodes"][1]["arg"] = param_arg_json(0);
  return g;
}

std::string graph_error(const ordered_json& j, io::ImportOptions opts = {}) {
  Arena a;
  try {
    io::import_graph(a, j, opts, "g");
  } catch (const uopcg::error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string linear_error(const ordered_json& j, io::ImportOptions opts = {}) {
  Arena a;
  try {
    io::import_linear(a, j, opts, "linear");
  } catch (const uopcg::error& e) {
    return e.what();
  }
  return "(no error)";
}

#define CHECK_HAS(msg, part) CHECK_MESSAGE((msg).find(part) != std::string::npos, "message: " << (msg) << "\nexpected to contain: " << (part))

float half_to_float(std::uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = std::ldexp(static_cast<float>(man | 1024), exp - 25);
  return sign ? -v : v;
}

double element(const io::DataBuffer& b, std::size_t i) {
  const std::byte* p = b.bytes.data() + i * static_cast<std::size_t>(uopcg::itemsize(b.dtype));
  auto load = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (b.dtype) {
    case DType::float32: return load(float{});
    case DType::float64: return load(double{});
    case DType::float16: return half_to_float(load(std::uint16_t{}));
    case DType::int32: return load(std::int32_t{});
    case DType::uint32: return load(std::uint32_t{});
    case DType::uint16: return load(std::uint16_t{});
    case DType::bool_: return load(std::uint8_t{});
    default: FAIL("dtype not covered by the test: " << uopcg::name(b.dtype)); return 0;
  }
}

}  // namespace

// --- the corpus ------------------------------------------------------------------------------------

TEST_CASE("corpus: every kernel's ast / post_opts / full_sink / linear round-trips exactly") {
  const auto files = kernel_files();
  const ordered_json index = read_ordered(corpus_dir() / "index.json");
  CHECK(files.size() == index["kernels"].size());
  for (const auto& path : files) {
    CAPTURE(path.filename().string());
    Arena a;
    // derived fields (shape, addrspace, function_name) checked against the core on import
    io::Kernel k = io::load_kernel(a, path, {.verify_derived = true, .verify_order = true});
    const ordered_json orig = read_ordered(path);
    const std::string n = path.filename().string();
    check_same(orig["ast"], io::export_graph(k.ast), n + " ast");
    check_same(orig["post_opts"], io::export_graph(k.post_opts), n + " post_opts");
    check_same(orig["full_sink"], io::export_graph(k.full_sink), n + " full_sink");
    check_same(orig["linear"], io::export_linear(k.linear), n + " linear");
    // the file order is the toposort, and Graph.nodes keeps it
    CHECK(uopcg::toposort(k.ast.root) == k.ast.nodes);
    CHECK(k.ast.root == k.ast.nodes.back());
    CHECK(k.linear.sink().is(Ops::SINK));
    CHECK(k.linear.size() == orig["linear"]["nodes"].size());
    // without the derived fields, the same minus shape/addrspace
    ordered_json bare = io::export_graph(k.full_sink, {.derived = false});
    CHECK_FALSE(bare["nodes"][0].contains("shape"));
    CHECK(bare["nodes"].size() == orig["full_sink"]["nodes"].size());
  }
}

TEST_CASE("corpus: every stage of every stage dump round-trips exactly") {
  const auto files = stage_files();
  CHECK(files.size() == kernel_files().size());
  std::size_t graphs = 0;
  for (const auto& path : files) {
    CAPTURE(path.filename().string());
    Arena a;
    io::StageDump d = io::load_stages(a, path, {.verify_derived = true, .verify_order = true});
    const ordered_json orig = read_ordered(path);
    REQUIRE(d.stages.size() == orig["stages"].size());
    for (std::size_t i = 0; i < d.stages.size(); ++i) {
      CAPTURE(d.stages[i].name);
      check_same(orig["stages"][i]["graph"], io::export_graph(d.stages[i].graph, {.derived = false}),
                 path.filename().string() + " stage " + std::to_string(i));
      ++graphs;
    }
    check_same(orig, io::export_stages(d), path.filename().string());
  }
  CHECK(graphs > 0);
}

TEST_CASE("corpus: kernel metadata is consistent with the graphs and the stage dumps") {
  for (const auto& path : kernel_files()) {
    CAPTURE(path.filename().string());
    Arena a;
    io::Kernel k = io::load_kernel(a, path);
    const ordered_json orig = read_ordered(path);
    CHECK(k.name == orig["name"].get<std::string>());
    CHECK(k.function_name == orig["function_name"].get<std::string>());
    CHECK(k.source == orig["source"].get<std::string>());
    CHECK(k.renderer.cls == "OpenCLRenderer");
    CHECK(k.renderer.supports_fp16 == orig["renderer"]["supports_fp16"].get<bool>());
    CHECK(k.codegen_config.at("TUPLE_ORDER").dump() == orig["codegen_config"]["TUPLE_ORDER"].dump());
    CHECK(k.codegen_context.is_object());  // absent = {}
    // the SINK's KernelInfo names the function
    auto info = uopcg::KernelInfo::from(k.full_sink.root.arg());
    CHECK(uopcg::function_name(info.name.view()).view() == k.function_name);
    CHECK(k.applied_opts.size() == info.applied_opts.size());
    // kernel_args = the PARAMs of the program with a memory address space, in slot order (spec §7)
    std::vector<std::int64_t> slots;
    for (UOp u : k.linear.instructions)
      if (u.is(Ops::PARAM) && u.addrspace() && *u.addrspace() != uopcg::AddrSpace::ALU)
        slots.push_back(uopcg::ParamArg::from(u.arg()).slot);
    std::sort(slots.begin(), slots.end());
    REQUIRE(slots.size() == k.program.kernel_args.size());
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const io::KernelArg& ka = k.program.kernel_args[i];
      CHECK(ka.index == static_cast<std::int64_t>(i));
      CHECK(ka.slot == slots[i]);
      CHECK(ka.kind == "buffer");
      CHECK(ka.nbytes == ka.size * ka.itemsize);
      CHECK(ka.itemsize == uopcg::itemsize(ka.dtype));
    }
    for (int d = 0; d < 3; ++d) CHECK(k.program.global_size[static_cast<std::size_t>(d)] >= 1);
    // the stage dump: its stages are the summary's, postopt symbolic = post_opts, the last = full_sink
    io::StageDump dump = io::load_stages(a, path.parent_path() / k.stages_file);
    REQUIRE(dump.stages.size() == k.stages.size());
    for (std::size_t i = 0; i < dump.stages.size(); ++i) {
      CHECK(dump.stages[i].name == k.stages[i].stage);
      CHECK(static_cast<std::int64_t>(dump.stages[i].graph.nodes.size()) == k.stages[i].nodes);
    }
    REQUIRE(dump.find("postopt symbolic") != nullptr);
    CHECK(dump.find("postopt symbolic")->graph.root == k.post_opts.root);  // same arena: same node
    CHECK(dump.find("number params with -1")->graph.root == k.full_sink.root);
    CHECK(dump.find("no such stage") == nullptr);
  }
}

TEST_CASE("corpus: the .bin data reads back and matches the previews") {
  for (const auto& path : kernel_files()) {
    CAPTURE(path.filename().string());
    Arena a;
    io::Kernel k = io::load_kernel(a, path);
    io::KernelData data = io::load_data(k);
    const ordered_json orig = read_ordered(path);
    REQUIRE(data.inputs.size() == k.data.inputs.size());
    REQUIRE(data.outputs.size() == k.data.outputs.size());
    CHECK(k.data.rtol >= 0);
    for (const char* key : {"inputs", "outputs"}) {
      const auto& bufs = std::string(key) == "inputs" ? data.inputs : data.outputs;
      for (std::size_t i = 0; i < bufs.size(); ++i) {
        const auto& b = bufs[i];
        const auto& e = orig["data"][key][i];
        CHECK(b.slot == e["slot"].get<std::int64_t>());
        CHECK(b.bytes.size() == e["nbytes"].get<std::size_t>());
        const auto& preview = e["preview"];
        for (std::size_t j = 0; j < preview.size(); ++j) {
          const double want = preview[j].is_boolean() ? (preview[j].get<bool>() ? 1.0 : 0.0) : preview[j].get<double>();
          CHECK(element(b, j) == doctest::Approx(want).epsilon(1e-6));
        }
      }
    }
    for (const auto& e : k.data.outputs) CHECK(data.output(e.slot) != nullptr);
    CHECK(data.input(-12345) == nullptr);
  }
}

// --- values ---------------------------------------------------------------------------------------------

TEST_CASE("values: every kind encodes as spec §5 and decodes back") {
  auto round = [](const Arg& a, const char* text) {
    ordered_json e = io::encode_value(a);
    CHECK(e.dump() == text);
    Arg back = io::decode_value(ordered_json::parse(text));
    CHECK(back == a);
  };
  round(Arg(), "null");
  round(Arg::boolean(true), "true");
  round(Arg::integer(-5), "-5");
  round(Arg::integer(INT64_MIN), "-9223372036854775808");
  round(Arg::uinteger(UINT64_MAX), "18446744073709551615");
  round(Arg::string("gidx0"), "\"gidx0\"");
  round(Arg::floating(1.0), R"({"t":"float","v":1.0})");  // stays a float
  round(Arg::floating(1.4426950216293335), R"({"t":"float","v":1.4426950216293335})");
  round(Arg::floating(1e-05), R"({"t":"float","v":1e-05})");
  round(Arg::floating(INFINITY), R"({"t":"float","v":"inf"})");
  round(Arg::floating(-INFINITY), R"({"t":"float","v":"-inf"})");
  round(Arg::floating(NAN), R"({"t":"float","v":"nan"})");
  round(Arg::bigint("-123456789012345678901234567890"), R"({"t":"bigint","v":"-123456789012345678901234567890"})");
  round(Arg::invalid(), R"({"t":"Invalid"})");
  round(Arg::dtype(DType::float16), R"({"t":"dtype","v":"half"})");
  round(Arg::op(Ops::MAX), R"({"t":"Ops","v":"MAX"})");
  round(Arg::axis_type(uopcg::AxisType::GROUP_REDUCE), R"({"t":"AxisType","v":"GROUP_REDUCE"})");
  round(Arg::addrspace(uopcg::AddrSpace::REG), R"({"t":"AddrSpace","v":"REG"})");
  round(Arg::opt_ops(uopcg::OptOps::UNROLL), R"({"t":"OptOps","v":"UNROLL"})");
  round(Arg::sym("a*4"), R"({"t":"sym","v":"a*4"})");
  round(Arg::tuple_of(3, Arg::tuple_of(uopcg::AxisType::LOOP), Arg::tuple({})), R"([3,[{"t":"AxisType","v":"LOOP"}],[]])");

  uopcg::ParamArg p;
  p.slot = 2;
  p.dtype = DType::uint16;
  p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{0, 7};
  p.has_name = true;
  p.name = uopcg::text("buf");
  p.addrspace = uopcg::AddrSpace::LOCAL;
  p.device = Arg::tuple_of(Arg::string("CL:0"), Arg::string("CL:1"));
  p.is_volatile = true;
  round(p.to_arg(),
        R"({"t":"ParamArg","slot":2,"dtype":"ushort","vmin_vmax":[0,7],"multiple_of":null,"name":"buf","addrspace":"LOCAL","axis":null,"device":["CL:0","CL:1"],"volatile":true})");
  round(uopcg::BufferizeOpts{Arg::integer(3), uopcg::AddrSpace::LOCAL, false}.to_arg(),
        R"({"t":"BufferizeOpts","device":3,"addrspace":"LOCAL","removable":false})");
  uopcg::KernelInfo ki;
  ki.name = uopcg::text("r\x1b[90m_\x1b[0m4");
  ki.axis_types = {uopcg::AxisType::GLOBAL};
  ki.applied_opts = {uopcg::Opt{uopcg::OptOps::UPCAST, 0, Arg::integer(4)}};
  ki.opts_to_apply.emplace();
  ki.estimates = Arg::record(ArgKind::estimates, {Arg::integer(1), Arg::integer(2), Arg::sym("n")});
  round(ki.to_arg(),
        R"({"t":"KernelInfo","name":"r\u001b[90m_\u001b[0m4","function_name":"r_4","axis_types":[{"t":"AxisType","v":"GLOBAL"}],"dont_use_locals":false,"applied_opts":[{"t":"Opt","op":"UPCAST","axis":0,"arg":4}],"opts_to_apply":[],"estimates":{"t":"Estimates","ops":1,"lds":2,"mem":{"t":"sym","v":"n"}},"beam":0})");
  round(uopcg::Opt{uopcg::OptOps::TC, std::nullopt, Arg::tuple_of(0, 1)}.to_arg(),
        R"({"t":"Opt","op":"TC","axis":null,"arg":[0,1]})");
}

TEST_CASE("values: -0.0 stays distinct, integral floats stay floats, integer floats are accepted") {
  Arg neg = io::decode_value(ordered_json::parse(R"({"t":"float","v":-0.0})"));
  CHECK(std::signbit(neg.as_float()));
  CHECK(neg != Arg::floating(0.0));
  CHECK(io::encode_value(neg).dump() == R"({"t":"float","v":-0.0})");
  CHECK(io::encode_value(Arg::floating(2.0))["v"].is_number_float());
  CHECK(io::decode_value(ordered_json::parse(R"({"t":"float","v":3})")) == Arg::floating(3.0));
  CHECK(io::decode_value(ordered_json::parse("9223372036854775808")).kind() == ArgKind::uint_);
  // bare AxisType names in KernelInfo.axis_types are accepted (the tagged form is written)
  Arg ki = io::decode_value(ordered_json::parse(
      R"({"t":"KernelInfo","name":"x","axis_types":["LOCAL"],"dont_use_locals":true,"applied_opts":[],"opts_to_apply":null,"estimates":null,"beam":2})"));
  CHECK(uopcg::KernelInfo::from(ki).axis_types == std::vector{uopcg::AxisType::LOCAL});
  CHECK(uopcg::KernelInfo::from(ki).beam == 2);
}

TEST_CASE("values: malformed values name the field") {
  auto err = [](const char* text) {
    try {
      io::decode_value(ordered_json::parse(text), "v");
    } catch (const uopcg::error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK_HAS(err("1.5"), "untagged float");
  CHECK_HAS(err(R"([1, 2.5])"), R"(json: v: field "[1]": untagged float)");
  CHECK_HAS(err(R"({"t":"float","v":"infinity"})"), R"(field "v": bad float "infinity")");
  CHECK_HAS(err(R"({"t":"float","v":true})"), R"(field "v": expected a number, "inf", "-inf" or "nan", found a boolean)");
  CHECK_HAS(err(R"({"t":"float"})"), R"(field "v": missing)");
  CHECK_HAS(err(R"({"t":"float","v":1,"w":2})"), R"(field "w": unexpected key)");
  CHECK_HAS(err(R"({"v":1})"), R"(field "t": missing)");
  CHECK_HAS(err(R"({"t":"Quaternion"})"), R"(field "t": unknown value tag "Quaternion")");
  CHECK_HAS(err(R"({"t":"dtype","v":"float7"})"), R"(field "v": unknown dtype "float7")");
  CHECK_HAS(err(R"({"t":"Ops","v":"FROB"})"), R"(field "v": unknown op "FROB")");
  CHECK_HAS(err(R"({"t":"AxisType","v":3})"), R"(field "v": expected a string, found an integer)");
  CHECK_HAS(err(R"({"t":"bigint","v":"12a"})"), R"(field "v": bad bigint "12a")");
  CHECK_HAS(err(R"({"t":"Invalid","v":0})"), R"(field "v": unexpected key)");
  CHECK_HAS(err(R"({"t":"Opt","op":"UPCAST","axis":"0","arg":4})"), R"(field "axis": expected an integer, found a string)");
  CHECK_HAS(err(R"({"t":"Opt","op":"SIDEWAYS","axis":0,"arg":4})"), R"(field "op": unknown OptOps "SIDEWAYS")");
  CHECK_HAS(err(R"({"t":"Opt","op":"UPCAST","axis":0,"arg":"4"})"), R"(field "arg": expected null, an integer or an array, found a string)");
  CHECK_HAS(err(R"({"t":"Opt","op":"UPCAST","axis":0})"), R"(field "arg": missing)");
  CHECK_HAS(err(R"({"t":"BufferizeOpts","device":null,"addrspace":"SHARED","removable":true})"),
            R"(field "addrspace": unknown AddrSpace "SHARED")");
  CHECK_HAS(err(R"({"t":"KernelInfo","name":"x","axis_types":[],"dont_use_locals":false,"applied_opts":[5],"opts_to_apply":null,"estimates":null,"beam":0})"),
            R"(field "applied_opts[0]": expected an Opt object, found an integer)");
  CHECK_HAS(err(R"({"t":"KernelInfo","name":"x","axis_types":[{"t":"Ops","v":"ADD"}],"dont_use_locals":false,"applied_opts":[],"opts_to_apply":null,"estimates":null,"beam":0})"),
            R"(field "axis_types[0]": expected an AxisType, found Ops)");
  CHECK_HAS(err(R"({"t":"Estimates","ops":1,"lds":null,"mem":0})"), R"(field "lds": expected an integer or a sym, found None)");
  CHECK_HAS(err("18446744073709551615") , "(no error)");
  std::string deep(200, '[');
  deep += std::string(200, ']');
  CHECK_HAS(err(deep.c_str()), "nested too deeply");
  // function_name is derived: checked on request
  const char* bad_fn = R"({"t":"KernelInfo","name":"ab","function_name":"zz","axis_types":[],"dont_use_locals":false,"applied_opts":[],"opts_to_apply":null,"estimates":null,"beam":0})";
  CHECK_NOTHROW(io::decode_value(ordered_json::parse(bad_fn)));
  CHECK_THROWS_WITH_AS(io::decode_value(ordered_json::parse(bad_fn), "v", {.verify_derived = true}),
                       doctest::Contains(R"(field "function_name": is "zz" but the name gives "ab")"), uopcg::error);
}

// --- malformed graphs: one test per class, each message names the node and the field -------------

TEST_CASE("malformed: the base graph is valid") {
  CHECK(graph_error(base_graph(), {.verify_derived = true, .verify_order = true}) == "(no error)");
  Arena a;
  io::Graph g = io::import_graph(a, base_graph());
  check_same(base_graph(), io::export_graph(g), "base graph");
}

TEST_CASE("malformed: unknown op") {
  auto g = base_graph();
  g["nodes"][2]["op"] = "FROB";
  CHECK_HAS(graph_error(g), R"(json: g: node 2 field "op": unknown op "FROB")");
}

TEST_CASE("malformed: unknown dtype") {
  auto g = base_graph();
  g["nodes"][4]["dtype"] = "float7";
  CHECK_HAS(graph_error(g), R"(json: g: node 4 field "dtype": unknown dtype "float7")");
  g = base_graph();
  g["nodes"][1]["arg"]["dtype"] = "quad";
  CHECK_HAS(graph_error(g), R"(json: g: node 1 field "arg.dtype": unknown dtype "quad")");
}

TEST_CASE("malformed: bad src index") {
  auto g = base_graph();
  g["nodes"][3]["src"] = {1, 99};
  CHECK_HAS(graph_error(g), R"(json: g: node 3 field "src": source id 99 does not exist (8 nodes))");
  g["nodes"][3]["src"] = {-1, 2};
  CHECK_HAS(graph_error(g), R"(json: g: node 3 field "src": source id -1 does not exist)");
  g["nodes"][3]["src"] = {1, "2"};
  CHECK_HAS(graph_error(g), R"(json: g: node 3 field "src": source 1 is a string, not a node id)");
  g["nodes"][3]["src"] = {1, 18446744073709551615ull};
  CHECK_HAS(graph_error(g), R"(json: g: node 3 field "src": source id 18446744073709551615 does not exist)");
}

TEST_CASE("malformed: forward reference") {
  auto g = base_graph();
  g["nodes"][3]["src"] = {1, 5};
  CHECK_HAS(graph_error(g), R"(json: g: node 3 field "src": source id 5 is not an earlier node (forward reference))");
  g["nodes"][3]["src"] = {3, 2};
  CHECK_HAS(graph_error(g), R"(json: g: node 3 field "src": source id 3 is the node itself)");
}

TEST_CASE("malformed: duplicate node") {
  auto g = base_graph();
  // node 2 becomes a second copy of node 0
  g["nodes"][2] = g["nodes"][0];
  g["nodes"][2]["id"] = 2;
  CHECK_HAS(graph_error(g), R"(json: g: node 2 field "id": duplicates node 0)");
  ordered_json lin = ordered_json::parse(R"({"nodes": [
    {"id": 0, "op": "CONST", "dtype": "weakint", "src": [], "arg": 1, "tag": null},
    {"id": 1, "op": "CONST", "dtype": "weakint", "src": [], "arg": 1, "tag": null},
    {"id": 2, "op": "SINK", "dtype": "void", "src": [0, 1], "arg": null, "tag": null}]})");
  CHECK_HAS(linear_error(lin), R"(json: linear: node 1 field "id": duplicates node 0)");
  // a different tag makes a different node
  lin["nodes"][1]["tag"] = "x";
  CHECK(linear_error(lin) == "(no error)");
}

TEST_CASE("malformed: wrong arg kind for the op") {
  auto with_arg = [](std::size_t node, ordered_json arg) {
    auto g = base_graph();
    g["nodes"][node]["arg"] = std::move(arg);
    return graph_error(g);
  };
  CHECK_HAS(with_arg(2, "x"), R"(json: g: node 2 field "arg": RANGE takes [axis_id, ..., AxisType], found str)");
  CHECK_HAS(with_arg(2, ordered_json::parse(R"([0, {"t":"AxisType","v":"LOOP"}, 1])")), R"(node 2 field "arg": RANGE takes)");
  CHECK_HAS(with_arg(2, ordered_json::parse(R"(["0", {"t":"AxisType","v":"LOOP"}])")), R"(node 2 field "arg": RANGE takes)");
  CHECK_HAS(with_arg(1, 3), R"(json: g: node 1 field "arg": PARAM takes a ParamArg, found int)");
  CHECK_HAS(with_arg(0, "16"), R"(json: g: node 0 field "arg": CONST takes a number or Invalid, found str)");
  CHECK_HAS(with_arg(3, 1), R"(json: g: node 3 field "arg": INDEX takes null, found int)");
  CHECK_HAS(with_arg(7, ordered_json::parse(R"({"t":"Opt","op":"UPCAST","axis":0,"arg":4})")),
            R"(json: g: node 7 field "arg": SINK takes null or a KernelInfo, found Opt)");
  CHECK_HAS(with_arg(1, ordered_json::parse(R"({"t": "ParamArg", "slot": "0", "dtype": "float", "vmin_vmax": null,
      "multiple_of": null, "name": null, "addrspace": "GLOBAL", "axis": null, "device": "CL", "volatile": false})")),
            R"(json: g: node 1 field "arg.slot": expected an integer, found a string)");
  CHECK_HAS(with_arg(1, ordered_json::parse(R"({"t": "ParamArg", "slot": 0, "dtype": "float", "vmin_vmax": [1],
      "multiple_of": null, "name": null, "addrspace": "GLOBAL", "axis": null, "device": "CL", "volatile": false})")),
            R"(json: g: node 1 field "arg.vmin_vmax": expected null or [vmin, vmax], found an array of 1)");
  CHECK_HAS(with_arg(1, ordered_json::parse(R"({"t": "ParamArg", "slot": 0, "dtype": "float", "vmin_vmax": null,
      "multiple_of": null, "name": null, "addrspace": "GLOBAL", "axis": null, "device": 7, "volatile": false})")),
            R"(json: g: node 1 field "arg.device": expected null, a string or an array of strings, found an integer)");
  // CAST / REDUCE / SPECIAL / PERMUTE / STAGE in a linear list
  auto lin_arg = [](const char* op, ordered_json arg) {
    ordered_json lin = ordered_json::parse(R"({"nodes": [
      {"id": 0, "op": "CONST", "dtype": "weakint", "src": [], "arg": 4, "tag": null},
      {"id": 1, "op": "CAST", "dtype": "int", "src": [0], "arg": {"t": "dtype", "v": "int"}, "tag": null},
      {"id": 2, "op": "SINK", "dtype": "void", "src": [1], "arg": null, "tag": null}]})");
    lin["nodes"][1]["op"] = op;
    lin["nodes"][1]["arg"] = std::move(arg);
    return linear_error(lin);
  };
  CHECK(lin_arg("CAST", ordered_json::parse(R"({"t": "dtype", "v": "int"})")) == "(no error)");
  CHECK_HAS(lin_arg("CAST", nullptr), R"(json: linear: node 1 field "arg": CAST takes a dtype, found None)");
  CHECK_HAS(lin_arg("REDUCE", ordered_json::parse("[1, 2]")), R"(node 1 field "arg": REDUCE takes [Ops, n_horizontal], found a tuple of 2)");
  CHECK_HAS(lin_arg("SPECIAL", 0), R"(node 1 field "arg": SPECIAL takes a string, found int)");
  CHECK_HAS(lin_arg("PERMUTE", ordered_json::parse(R"([0, "1"])")), R"(node 1 field "arg": PERMUTE takes an array of integers)");
  CHECK_HAS(lin_arg("STAGE", nullptr), R"(node 1 field "arg": STAGE takes a BufferizeOpts, found None)");
  CHECK_HAS(lin_arg("ADD", 1), R"(node 1 field "arg": ADD takes null, found int)");
}

TEST_CASE("malformed: truncated file") {
  const std::string text = base_graph().dump();
  const std::string cut = text.substr(0, text.size() * 2 / 3);
  try {
    io::parse_json(cut, "cut.json");
    FAIL("no error");
  } catch (const uopcg::error& e) {
    const std::string m = e.what();
    CHECK_HAS(m, "json: cut.json: invalid JSON at byte ");
    CHECK_HAS(m, "(after node ");  // the last node id before the cut
  }
  // a truncated kernel file
  const fs::path src = kernel_files().front();
  const std::string full = io::read_file(src);
  const fs::path tmp = fs::temp_directory_path() / ("uopcg_io_truncated_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(tmp, std::ios::binary);
    out << full.substr(0, full.size() / 2);
  }
  Arena a;
  CHECK_THROWS_WITH_AS(io::load_kernel(a, tmp), doctest::Contains("invalid JSON at byte"), uopcg::error);
  fs::remove(tmp);
  // a node list cut short is still JSON: the root is then missing
  auto g = base_graph();
  g["nodes"].erase(g["nodes"].begin() + 6, g["nodes"].end());
  CHECK_HAS(graph_error(g), R"(json: g: field "root": root 7 is not the last node (5))");
  CHECK_HAS(graph_error(ordered_json::parse(R"({"root": 0, "nodes": []})")), R"(json: g: field "nodes": no nodes)");
  // a truncated gzip stage dump
  const fs::path gz = stage_files().front();
  const std::string zipped = [&] {
    std::ifstream in(gz, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }();
  const fs::path tmpgz = fs::temp_directory_path() / ("uopcg_io_truncated_" + std::to_string(::getpid()) + ".json.gz");
  {
    std::ofstream out(tmpgz, std::ios::binary);
    out << zipped.substr(0, zipped.size() / 2);
  }
  CHECK_THROWS_AS(io::load_stages(a, tmpgz), uopcg::error);
  fs::remove(tmpgz);
}

TEST_CASE("malformed: wrong JSON types") {
  auto g = base_graph();
  g["nodes"][1]["id"] = "1";
  CHECK_HAS(graph_error(g), R"(json: g: node 1 field "id": expected an integer, found a string)");
  g = base_graph();
  g["nodes"][1]["id"] = 2;
  CHECK_HAS(graph_error(g), R"(json: g: node 1 field "id": id 2 at position 1)");
  g = base_graph();
  g["nodes"][2]["op"] = 55;
  CHECK_HAS(graph_error(g), R"(json: g: node 2 field "op": expected a string, found an integer)");
  g = base_graph();
  g["nodes"][3]["src"] = ordered_json::object();
  CHECK_HAS(graph_error(g), R"(json: g: node 3 field "src": expected an array, found an object)");
  g = base_graph();
  g["nodes"][4] = ordered_json::array();
  CHECK_HAS(graph_error(g), R"(json: g: node 4: expected a node object, found an array)");
  g = base_graph();
  g["nodes"][4]["arg"] = 1.5;
  CHECK_HAS(graph_error(g), R"(json: g: node 4 field "arg": untagged float)");
  g = base_graph();
  g["nodes"][5]["tag"] = ordered_json::parse(R"({"t": "float", "v": [1]})");
  CHECK_HAS(graph_error(g), R"(json: g: node 5 field "tag.v": expected a number)");
  g = base_graph();
  g["nodes"][0]["shape"] = "[]";
  CHECK_HAS(graph_error(g), R"(json: g: node 0 field "shape": expected an array, found a string)");
  g = base_graph();
  g["nodes"][0]["addrspace"] = "HEAP";
  CHECK_HAS(graph_error(g), R"(json: g: node 0 field "addrspace": unknown AddrSpace "HEAP")");
  g = base_graph();
  g["nodes"][0]["color"] = "red";
  CHECK_HAS(graph_error(g), R"(json: g: node 0 field "color": unexpected key)");
  g = base_graph();
  g["nodes"] = 3;
  CHECK_HAS(graph_error(g), R"(json: g: field "nodes": expected an array, found an integer)");
  g = base_graph();
  g["root"] = "7";
  CHECK_HAS(graph_error(g), R"(json: g: field "root": expected an integer, found a string)");
  CHECK_HAS(graph_error(ordered_json::array()), R"(json: g: expected an object, found an array)");
  CHECK_HAS(linear_error(base_graph()), R"(json: linear: field "root": unexpected key)");
}

TEST_CASE("malformed: bad float string") {
  auto g = base_graph();
  g["nodes"][4]["arg"]["v"] = "1.5";
  CHECK_HAS(graph_error(g), R"(json: g: node 4 field "arg.v": bad float "1.5" (a number, "inf", "-inf" or "nan"))");
  g["nodes"][4]["arg"]["v"] = "NaN";
  CHECK_HAS(graph_error(g), R"(json: g: node 4 field "arg.v": bad float "NaN")");
}

TEST_CASE("malformed: missing fields") {
  for (const char* key : {"id", "op", "dtype", "src", "arg", "tag"}) {
    auto g = base_graph();
    g["nodes"][5].erase(key);
    CHECK_HAS(graph_error(g), std::string(R"(json: g: node 5 field ")") + key + R"(": missing)");
  }
  auto g = base_graph();
  g["nodes"][1]["arg"].erase("volatile");
  CHECK_HAS(graph_error(g), R"(json: g: node 1 field "arg.volatile": missing)");
  g = base_graph();
  g.erase("root");
  CHECK_HAS(graph_error(g), R"(json: g: field "root": missing)");
  // the derived fields are optional (stage dumps omit them)
  g = base_graph();
  for (auto& n : g["nodes"]) n.erase("shape"), n.erase("addrspace");
  CHECK(graph_error(g, {.verify_derived = true}) == "(no error)");
}

TEST_CASE("malformed: derived fields that disagree with the core (verify_derived)") {
  auto g = base_graph();
  g["nodes"][1]["shape"] = {17};
  CHECK(graph_error(g) == "(no error)");  // informational by default
  CHECK_HAS(graph_error(g, {.verify_derived = true}), R"(json: g: node 1 field "shape": file has [17], the core derives [16])");
  g = base_graph();
  g["nodes"][7]["shape"] = ordered_json::array();
  CHECK_HAS(graph_error(g, {.verify_derived = true}), R"(json: g: node 7 field "shape": file has [], the core derives null)");
  g = base_graph();
  g["nodes"][3]["addrspace"] = "LOCAL";
  CHECK_HAS(graph_error(g, {.verify_derived = true}), R"(json: g: node 3 field "addrspace": file has "LOCAL", the core derives GLOBAL)");
}

TEST_CASE("malformed: node order must be the root's toposort") {
  // RANGE listed before PARAM: topologically valid, but not tinygrad's DFS order
  ordered_json g = ordered_json::parse(R"({"root": 4, "nodes": [
    {"id": 0, "op": "CONST", "dtype": "weakint", "src": [], "arg": 16, "tag": null},
    {"id": 1, "op": "RANGE", "dtype": "weakint", "src": [0], "arg": [0, {"t": "AxisType", "v": "LOOP"}], "tag": null},
    {"id": 2, "op": "PARAM", "dtype": "float", "src": [0], "arg": null, "tag": null},
    {"id": 3, "op": "INDEX", "dtype": "float", "src": [2, 1], "arg": null, "tag": null},
    {"id": 4, "op": "SINK", "dtype": "void", "src": [3], "arg": null, "tag": null}]})");
  g["nodes"][2]["arg"] = param_arg_json(0);
  CHECK_HAS(graph_error(g), R"(json: g: node 1 field "id": out of toposort order: tinygrad's toposort has node 2 at this position)");
  CHECK(graph_error(g, {.verify_order = false}) == "(no error)");
  // an unreachable node
  auto u = base_graph();
  u["nodes"][7]["src"] = {5};  // the SINK skips END (node 6)
  CHECK_HAS(graph_error(u), R"(json: g: node 6 field "id": not reachable from the root)");
  // root not last
  auto r = base_graph();
  r["root"] = 6;
  CHECK_HAS(graph_error(r), R"(json: g: field "root": root 6 is not the last node (7))");
}

TEST_CASE("malformed: a linear program must end with its SINK") {
  ordered_json lin = ordered_json::parse(R"({"nodes": [
    {"id": 0, "op": "CONST", "dtype": "weakint", "src": [], "arg": 1, "tag": null}]})");
  CHECK_HAS(linear_error(lin), R"(json: linear: node 0 field "op": the last instruction is CONST, not SINK)");
  CHECK_HAS(linear_error(ordered_json::parse(R"({})")), R"(json: linear: field "nodes": missing)");
}

TEST_CASE("malformed: kernel files and stage dumps name the section") {
  const fs::path path = kernel_files().front();
  ordered_json k = read_ordered(path);
  auto kernel_error = [](const ordered_json& j) {
    Arena a;
    try {
      io::import_kernel(a, j, {}, "k.json");
    } catch (const uopcg::error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(kernel_error(k) == "(no error)");
  auto bad = k;
  bad["linear"]["nodes"][3]["op"] = "FROB";
  CHECK_HAS(kernel_error(bad), R"(json: k.json: linear: node 3 field "op": unknown op "FROB")");
  bad = k;
  bad["post_opts"]["nodes"][2]["src"] = {50000};
  CHECK_HAS(kernel_error(bad), R"(json: k.json: post_opts: node 2 field "src": source id 50000 does not exist)");
  bad = k;
  bad["program"]["global_size"] = {1, 2};
  CHECK_HAS(kernel_error(bad), R"(json: k.json: field "program.global_size": expected 3 sizes, found 2)");
  bad = k;
  bad["program"]["global_size"] = {1, true, 1};
  CHECK_HAS(kernel_error(bad), R"(json: k.json: field "program.global_size[1]": expected an integer, found a boolean)");
  bad = k;
  bad["program"]["global_size"][0] = {{"t", "int"}, {"v", 3}};
  CHECK_HAS(kernel_error(bad), R"(field "program.global_size[0].t": expected a size (an integer or a sym object))");
  bad = k;
  bad["program"]["kernel_args"][0]["dtype"] = 4;
  CHECK_HAS(kernel_error(bad), R"(json: k.json: field "program.kernel_args[0].dtype": expected a string, found an integer)");
  bad = k;
  bad["data"]["inputs"][0].erase("offset");
  CHECK_HAS(kernel_error(bad), R"(json: k.json: field "data.inputs[0].offset": missing)");
  bad = k;
  bad["schema_version"] = 2;
  CHECK_HAS(kernel_error(bad), R"(json: k.json: field "schema_version": unsupported schema version 2)");
  // the later graphs and the program are references: a file with only an AST (or only post_opts) loads
  bad = k;
  for (const char* key : {"post_opts", "full_sink", "linear"}) bad.erase(key);
  {
    Arena a;
    io::Kernel kk = io::import_kernel(a, bad);
    CHECK(kk.ast.root.valid());
    CHECK(!kk.post_opts.root.valid());
    CHECK(kk.linear.instructions.empty());
  }
  bad.erase("ast");
  CHECK_HAS(kernel_error(bad), R"(json: k.json: a kernel file needs an ast or a post_opts graph)");
  bad = k;
  bad["codegen_context"] = {{"TRANSCENDENTAL", 2}};
  bad["fixed_program"] = {{"linear", k["linear"]}};
  {
    Arena a;
    io::Kernel kk = io::import_kernel(a, bad);
    CHECK(kk.codegen_context.at("TRANSCENDENTAL") == 2);
    REQUIRE(kk.fixed_linear.has_value());
    CHECK(kk.fixed_linear->instructions == kk.linear.instructions);
    CHECK_THROWS_WITH_AS(io::load_data(kk), doctest::Contains("not loaded from a file"), uopcg::error);
  }
  // stage dumps
  ordered_json st = read_ordered(stage_files().front());
  st["stages"][1]["graph"]["nodes"][0]["dtype"] = "float7";
  Arena a;
  CHECK_THROWS_WITH_AS(io::import_stages(a, st, {}, "s.gz"),
                       doctest::Contains((R"(json: s.gz: stage 1 ()" + st["stages"][1]["stage"].get<std::string>() +
                                          R"(): node 0 field "dtype": unknown dtype "float7")").c_str()),
                       uopcg::error);
  CHECK_THROWS_WITH_AS(io::load_kernel(a, corpus_dir() / "no_such_kernel.json"), doctest::Contains("cannot open"), uopcg::error);
  CHECK_THROWS_WITH_AS(io::load_stages(a, corpus_dir() / "no_such.stages.json.gz"), doctest::Contains("cannot open"), uopcg::error);
}

TEST_CASE("program: a launch size that depends on a variable is read as its text") {
  ordered_json k = read_ordered(kernel_files().front());
  k["program"]["global_size"] = {"(n<<6)", 1, 1};
  k["program"]["local_size"] = {{{"t", "sym"}, {"v", "n"}}, 1, 1};
  k["program"]["vars"] = {"data2_"};
  Arena a;
  const io::Kernel kernel = io::import_kernel(a, k, {}, "k.json");
  CHECK(kernel.program.vars == std::vector<std::string>{"data2_"});
  CHECK(kernel.program.global_size == std::array<std::int64_t, 3>{0, 1, 1});
  CHECK(kernel.program.global_symbolic[0] == "(n<<6)");
  CHECK(kernel.program.global_symbolic[1].empty());
  REQUIRE(kernel.program.local_size.has_value());
  CHECK(kernel.program.local_symbolic[0] == "n");
}

TEST_CASE("data: sizes are checked against the .bin file") {
  const fs::path path = kernel_files().front();
  Arena a;
  io::Kernel k = io::load_kernel(a, path);
  const fs::path bin = path.parent_path() / k.data.file;
  io::DataInfo d = k.data;
  d.inputs[0].offset = 1 << 30;
  CHECK_THROWS_WITH_AS(io::load_data(d, bin), doctest::Contains("lie outside the file"), uopcg::error);
  d = k.data;
  d.inputs[0].nbytes += 1;
  CHECK_THROWS_WITH_AS(io::load_data(d, bin), doctest::Contains("!= count"), uopcg::error);
  d = k.data;
  d.inputs[0].dtype = DType::weakint;
  CHECK_THROWS_WITH_AS(io::load_data(d, bin), doctest::Contains("has no storage size"), uopcg::error);
}

TEST_CASE("export: the node list must be closed and ordered") {
  Arena a;
  UOp c = a.make(Ops::CONST, DType::weakint, {}, Arg::integer(4));
  UOp cast = a.make(Ops::CAST, DType::int32, {c}, Arg::dtype(DType::int32));
  UOp sink = a.make(Ops::SINK, DType::void_, {cast});
  std::vector<UOp> ok{c, cast, sink};
  CHECK(io::export_linear(ok)["nodes"].size() == 3);
  std::vector<UOp> missing{cast, sink};
  CHECK_THROWS_WITH_AS(io::export_linear(missing), doctest::Contains("element 0 (node 1 (CAST int)): source 0 (node 0 (CONST weakint)) is not an earlier element"),
                       uopcg::error);
  std::vector<UOp> twice{c, c, sink};
  CHECK_THROWS_WITH_AS(io::export_linear(twice), doctest::Contains("occurs twice"), uopcg::error);
  // export -> import gives back the same nodes (same arena: hash-consing)
  io::Program p = io::import_linear(a, io::export_linear(ok));
  CHECK(p.instructions == ok);
  io::Graph g = io::import_graph(a, io::export_graph(sink));
  CHECK(g.root == sink);
  CHECK(g.nodes == ok);
}

TEST_CASE("errors name a node read from a file as the file does (its graph and id there)") {
  Arena a;
  // the arena holds other nodes first: arena ids and file ids differ
  for (int v = 100; v < 110; ++v) a.make(Ops::CONST, DType::int32, {}, Arg::integer(v));
  // node 3: a GLOBAL range sized by a LOOP range (a launch dimension whose size varies inside the kernel)
  ordered_json j = ordered_json::parse(R"({"root": 8, "nodes": [
    {"id": 0, "op": "CONST", "dtype": "weakint", "src": [], "arg": 16, "tag": null},
    {"id": 1, "op": "PARAM", "dtype": "float", "src": [0], "arg": null, "tag": null},
    {"id": 2, "op": "RANGE", "dtype": "weakint", "src": [0], "arg": [0, {"t": "AxisType", "v": "LOOP"}], "tag": null},
    {"id": 3, "op": "RANGE", "dtype": "weakint", "src": [2], "arg": [1, {"t": "AxisType", "v": "GLOBAL"}], "tag": null},
    {"id": 4, "op": "INDEX", "dtype": "float", "src": [1, 3], "arg": null, "tag": null},
    {"id": 5, "op": "CONST", "dtype": "float", "src": [], "arg": {"t": "float", "v": 1.5}, "tag": null},
    {"id": 6, "op": "STORE", "dtype": "void", "src": [4, 5], "arg": null, "tag": null},
    {"id": 7, "op": "END", "dtype": "void", "src": [6, 3, 2], "arg": null, "tag": null},
    {"id": 8, "op": "SINK", "dtype": "void", "src": [7], "arg": null, "tag": null}
  ]})");
  j["nodes"][1]["arg"] = param_arg_json(0);
  io::Graph g = io::import_graph(a, j, {}, "k.json: post_opts");
  REQUIRE(g.nodes[3].id() != 3);
  CHECK(std::string(a.describe(g.nodes[3].id()).view()) ==
        "node " + std::to_string(g.nodes[3].id()) + " (RANGE weakint; k.json: post_opts node 3)");
  CHECK_THROWS_WITH_AS(uopcg::verify(g.root),
                       doctest::Contains("(RANGE weakint; k.json: post_opts node 3) is a launch-dimension RANGE"),
                       uopcg::error);
  // the same node read again from another graph: every place, in the order read
  io::Graph again = io::import_graph(a, j, {}, "k.json: full_sink");
  CHECK(again.nodes[3] == g.nodes[3]);
  CHECK(std::string(a.describe(g.nodes[3].id()).view()).find("; k.json: post_opts node 3, k.json: full_sink node 3)") !=
        std::string::npos);
  // and back to the first graph's name: each record keeps its own
  (void)io::import_graph(a, j, {}, "k.json: post_opts");
  const auto where = a.origins(g.nodes[3].id());
  REQUIRE(where.size() == 3);
  CHECK(where[0].scope == "k.json: post_opts");
  CHECK(where[1].scope == "k.json: full_sink");
  CHECK(where[2].scope == "k.json: post_opts");
  CHECK(where[1].index == 3);
  CHECK(a.origins(g.nodes[8].id()).back().index == 8);
  // a node made here has none; clear() forgets them
  UOp made = a.make(Ops::CONST, DType::int32, {}, Arg::integer(7));
  CHECK(a.origins(made.id()).empty());
  CHECK(std::string(a.describe(made.id()).view()) == "node " + std::to_string(made.id()) + " (CONST int)");
  a.clear();
  io::Graph fresh = io::import_graph(a, base_graph(), {}, "g");
  CHECK(a.origins(fresh.nodes[2].id()).size() == 1);
}
