// The front stages a-f on the corpus (each stage from the graph tinygrad had before it, equal node for
// node to the graph after it; run_front from the AST to "simplify ranges"), the driver's options, and
// the input check's errors.
#include <doctest/doctest.h>

#include <string>
#include <uopcg/codegen/front_stages.hpp>
#include <uopcg/core/builder.hpp>

#include "../stage_harness.hpp"

using namespace uopcg;
namespace C = uopcg::codegen;

namespace {

/// The message of the uopcg::error `f` raises ("" when it raises none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const uopcg::error& e) {
    return e.what();
  }
  return "";
}

void check_front_stage(const char* stage) {
  const C::StageInfo* s = C::find_front_stage(stage);
  REQUIRE(s != nullptr);
  uopcg_test::check_corpus_stage(stage, [s](UOp u, const Target& t) { return s->run(u, t); });
}

}  // namespace

TEST_CASE("front stages: each stage on every corpus kernel") {
  REQUIRE(uopcg_test::corpus_kernels().size() == 16);
  for (const C::StageInfo& s : C::front_stages) {
    INFO(s.name);
    check_front_stage(std::string(s.name).c_str());
  }
}

TEST_CASE("front stages: the table is tinygrad's order, named as the corpus dumps name them") {
  uopcg_test::StagedKernel k("ew_add_f32");
  REQUIRE(k.dump.stages.size() > std::size(C::front_stages));
  for (std::size_t i = 0; i < std::size(C::front_stages); ++i) CHECK(k.dump.stages[i].name == C::front_stages[i].name);
  CHECK(k.dump.stages[std::size(C::front_stages)].name == "apply_opts");
  CHECK(C::front_stages[C::first_optimizing_front_stage].name == "load collapse");
}

TEST_CASE("run_front: AST to the \"simplify ranges\" graph on every corpus kernel, with a trace of each stage") {
  int same = 0;
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    std::vector<std::string> traced;
    std::vector<double> traced_us;
    bool every_stage_matches = true;
    C::FrontOptions o;
    o.trace = [&](std::string_view stage, UOp g, double us) {
      traced.emplace_back(stage);
      traced_us.push_back(us);
      every_stage_matches &= g == k.after(stage);
    };
    const C::FrontResult r = C::run_front(k.kernel.ast.root, k.target, o);
    INFO(e.name);
    CHECK(r.optimized);
    CHECK(traced.size() == std::size(C::front_stages));
    REQUIRE(r.timings.size() == traced.size());
    for (std::size_t i = 0; i < traced.size(); ++i) {  // the trace saw the times the result records
      CHECK(r.timings[i].stage == traced[i]);
      CHECK(r.timings[i].us == traced_us[i]);
    }
    CHECK(every_stage_matches);
    const bool ok = r.sink == k.after("simplify ranges");
    CHECK(ok);
    same += ok;
  }
  MESSAGE("run_front: " << same << "/16 corpus kernels match");
}

TEST_CASE("run_front: stop_after, and a tagged SINK skips the optimising stages") {
  uopcg_test::StagedKernel k("ew_add_f32");
  C::FrontOptions o;
  o.stop_after = "split ranges";
  C::FrontResult r = C::run_front(k.kernel.ast.root, k.target, o);
  CHECK(r.sink == k.after("split ranges"));
  CHECK(r.timings.size() == 4);

  // an AST tagged as already optimised runs multi_pm and early movement ops only: the ew_* merge of
  // the two output ranges (stage f) does not happen
  UOp tagged = with_tag(k.kernel.ast.root, Arg(1));
  r = C::run_front(tagged, k.target);
  CHECK_FALSE(r.optimized);
  CHECK(r.timings.size() == C::first_optimizing_front_stage);
  CHECK(r.sink == tagged);

  const std::string msg = error_of([&] {
    C::FrontOptions bad;
    bad.stop_after = "apply_opts";
    (void)C::run_front(k.kernel.ast.root, k.target, bad);
  });
  CHECK(msg.find("unknown stage 'apply_opts'") != std::string::npos);
}

TEST_CASE("run_front: an AST that is not a kernel is one error line naming the node") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 64), in = param(a, 1, DType::float32, 64);
  UOp r = range(a, 64, 0, AxisType::LOOP);
  UOp st = store(index(out, r), index(in, r) * 2.0);
  auto fails_with = [&](UOp ast, std::string_view what) {
    const std::string msg = error_of([&] { (void)C::run_front(ast, Target::pocl()); });
    INFO(msg);
    CHECK(msg.find("front stages: the AST is not a kernel") != std::string::npos);
    CHECK(msg.find(what) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  };
  // not a SINK; a SINK of something that is no store
  fails_with(end(st, r), "(END void) is not a SINK");
  fails_with(sink(index(in, r)), "(INDEX float) is a source of the kernel SINK");
  // a serial loop sized by loaded data or by an enclosing loop (ragged and triangular loops) is a
  // kernel; "simplify ranges" does not merge a triangle's two loops into one
  UOp sizes = param(a, 2, DType::int32, 1);
  UOp loaded = range(cast(index(sizes, literal(a, 0)), DType::weakint), 1, AxisType::LOOP);
  CHECK_NOTHROW((void)C::run_front(sink(end(store(index(out, loaded), literal(a, 1.0)), loaded)), Target::pocl()));
  UOp nested = range(r + 1, 1, AxisType::LOOP);
  const UOp tri = C::run_front(sink(end(store(index(out, nested), literal(a, 1.0)), nested, r)), Target::pocl()).sink;
  int loops = 0;
  for (UOp u : toposort(tri)) loops += u.op() == Ops::RANGE;
  CHECK(loops == 2);
  UOp float_sized = a.make(Ops::RANGE, DType::weakint, {literal(a, 2.5)}, Arg::tuple_of(1, AxisType::LOOP));
  fails_with(sink(end(store(index(out, float_sized), literal(a, 1.0)), float_sized)), "(RANGE weakint) is a RANGE whose size is not an integer");
  // found by tests/fuzz/fuzz_from_ast.cpp: a double CONST holding the integer 8 passed as a size, and
  // apply_opts overflowed on the range's unbounded vmax
  UOp double_sized = a.make(Ops::RANGE, DType::weakint, {const_(a, DType::float64, Arg::integer(8))}, Arg::tuple_of(1, AxisType::REDUCE));
  fails_with(sink(end(store(index(out, double_sized), literal(a, 1.0)), double_sized)), "(RANGE weakint) is a RANGE whose size is not an integer");
  UOp float_range = a.make(Ops::RANGE, DType::float32, {literal(a, 8)}, Arg::tuple_of(1, AxisType::LOOP));
  fails_with(sink(end(store(index(out, float_range), literal(a, 1.0)), float_range)), "(RANGE float) is a RANGE whose dtype is not an integer");
  // a buffer where a value belongs (fuzz_from_ast: a RANGE sized by the PARAM itself, not a read of it)
  UOp buffer_sized = a.make(Ops::RANGE, DType::weakint, {sizes}, Arg::tuple_of(1, AxisType::LOOP));
  fails_with(sink(end(store(index(out, buffer_sized), literal(a, 1.0)), buffer_sized)),
             "(RANGE weakint) takes the buffer node");
  fails_with(sink(end(store(index(out, buffer_sized), literal(a, 1.0)), buffer_sized)),
             "(PARAM int) as source 0, where a value belongs");
  fails_with(sink(end(store(index(out, r), in + literal(a, 1.0)), r)), "(ADD float) takes the buffer");
  UOp no_type = a.make(Ops::RANGE, DType::weakint, {literal(a, 8)}, Arg::tuple_of(3));
  fails_with(sink(end(store(index(out, no_type), literal(a, 1.0)), no_type)), "is a RANGE whose arg is not");
  // tinygrad's UOp.set ends a kernel in its buffer AFTER the stores: accepted; an AFTER of no store is not
  CHECK_NOTHROW((void)C::run_front(sink(after(out, end(st, r))), Target::pocl()));
  fails_with(sink(after(out, index(in, r))), "(AFTER float) is a source of the kernel SINK");
  // an op no kernel holds (a scheduler-level COPY)
  UOp copied = a.make(Ops::COPY, DType::float32, {index(in, r)}, Arg::string("CL"));
  fails_with(sink(end(store(index(out, r), copied), r)), "(COPY float) has an op that a kernel cannot hold");

  // a symbolic size is fine: an ALU variable, or arithmetic on it
  UOp n = variable(a, "n", 1, 64);
  UOp rv = range(n * 2, 2, AxisType::LOOP);
  CHECK_NOTHROW((void)C::run_front(sink(end(store(index(out, rv), literal(a, 1.0)), rv)), Target::pocl()));
}
