// Stage 4, "add local buffers": corpus stage checks and graph-level tests of add_local_buffer
// (placeholder shape, address space, slot numbering, the STORE/END/AFTER ordering) and its errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <uopcg/codegen/local_buffers.hpp>
#include <uopcg/core/print.hpp>

#include "../stage_harness.hpp"

using namespace uopcg;
namespace cg = uopcg::codegen;

namespace {
// the entry point through the pipeline's function-pointer type (T deduced as Target)
constexpr UOp (*run_add_local_buffers)(UOp, const Target&) = cg::add_local_buffers;

std::vector<UOp> nodes_of(UOp root, Ops op) {
  std::vector<UOp> out;
  for (UOp u : toposort(root))
    if (u.op() == op) out.push_back(u);
  return out;
}
UOp store_out(UOp value, UOp idx) {
  Arena& a = value.arena();
  UOp out = param(a, 0, DType::float32, 64);
  return sink(store(index(out, idx), value));
}
}  // namespace

TEST_CASE("add local buffers: every corpus kernel matches the stage dump") {
  for (const auto& e : uopcg_test::corpus_kernels()) {
    uopcg_test::StagedKernel k(e.name);
    auto r = uopcg_test::check_stage(k, "add local buffers", run_add_local_buffers);
    INFO(e.name);
    INFO(r.diff);
    CHECK(r.same);
  }
}

TEST_CASE("add_local_buffer: a STAGE over one range is a LOCAL buffer written in a loop and read after it") {
  Arena a;
  UOp in = param(a, 1, DType::float32, 16);
  UOp r = range(a, 16, 3, AxisType::LOCAL);
  UOp v = index(in, r) * 2.0;
  UOp st = stage(v, AddrSpace::LOCAL, r);
  UOp j = range(a, 16, 103, AxisType::REDUCE);
  UOp root = store_out(index(st, j), j);
  UOp got = cg::add_local_buffers(root, Target{});

  CHECK(nodes_of(got, Ops::STAGE).empty());
  auto bufs = nodes_of(got, Ops::BUFFER);
  REQUIRE(bufs.size() == 1);
  UOp b = bufs[0];
  const ParamArg p = ParamArg::from(b.arg());
  CHECK(p.slot == 0);
  CHECK(p.addrspace == AddrSpace::LOCAL);
  CHECK(p.dtype == DType::float32);
  CHECK(b.shape() == std::initializer_list<std::int64_t>{16});
  // the exact structure: AFTER(B, END(STORE(INDEX(B, r), v), r)), indexed by j
  UOp expected_after = after(b, end(store(index(b, r), v), r));
  UOp expected = store_out(index(expected_after, j), j);
  INFO(uopcg_test::graph_diff(got, expected));
  CHECK(got == expected);
}

TEST_CASE("add_local_buffer: slots count from 0 in rewrite order; REG staging keeps its address space") {
  Arena a;
  UOp in = param(a, 1, DType::float32, 64);
  UOp r0 = range(a, 8, 0, AxisType::LOCAL), r1 = range(a, 4, 1, AxisType::LOOP);
  UOp s0 = stage(index(in, r0), AddrSpace::LOCAL, r0);
  UOp s1 = stage(index(in, r1), AddrSpace::REG, r1);
  UOp k = range(a, 4, 2, AxisType::REDUCE);
  UOp root = sink(store(index(param(a, 0, DType::float32, 64), k), index(s0, k) + index(s1, k)));
  UOp got = cg::add_local_buffers(root, Target{});
  auto bufs = nodes_of(got, Ops::BUFFER);
  REQUIRE(bufs.size() == 2);
  const ParamArg p0 = ParamArg::from(bufs[0].arg()), p1 = ParamArg::from(bufs[1].arg());
  // s0 is the first source of the ADD: rewritten (and numbered) first
  CHECK(p0.slot == 0);
  CHECK(p0.addrspace == AddrSpace::LOCAL);
  CHECK(bufs[0].shape() == std::initializer_list<std::int64_t>{8});
  CHECK(p1.slot == 1);
  CHECK(p1.addrspace == AddrSpace::REG);
  CHECK(bufs[1].shape() == std::initializer_list<std::int64_t>{4});
}

TEST_CASE("add_local_buffer: a new buffer skips the slot of a hand-written buffer it would be") {
  // a LOCAL buffer of the hand-written one's slot, dtype and size would be that buffer
  Arena a;
  UOp in = param(a, 1, DType::float32, 16);
  UOp mine = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  UOp l = range(a, 16, 3, AxisType::LOCAL);
  UOp tile = after(mine, store(index(mine, l), index(in, l)));
  UOp st = stage(index(in, l) * 2.0, AddrSpace::LOCAL, l);
  UOp j = range(a, 16, 103, AxisType::REDUCE);
  UOp root = store_out(index(st, j) + index(tile, j), j);
  UOp got = cg::add_local_buffers(root, Target{});
  auto bufs = nodes_of(got, Ops::BUFFER);
  REQUIRE(bufs.size() == 2);
  CHECK(ParamArg::from(bufs[0].arg()).slot + ParamArg::from(bufs[1].arg()).slot == 1);  // slots 0 and 1
}

TEST_CASE("add_local_buffer: a multi-range STAGE is a flat buffer viewed through a RESHAPE") {
  Arena a;
  UOp in = param(a, 1, DType::float32, 64);
  UOp l = range(a, 4, 2, AxisType::LOCAL), g = range(a, 8, 3, AxisType::GROUP_REDUCE);
  UOp st = stage(index(in, l * 8 + g), AddrSpace::LOCAL, l, g);
  CHECK(st.shape() == std::initializer_list<std::int64_t>{4, 8});
  UOp j = range(a, 8, 103, AxisType::REDUCE);
  UOp root = store_out(index(st, l, j), l);
  UOp got = cg::add_local_buffers(root, Target{});
  auto bufs = nodes_of(got, Ops::BUFFER);
  REQUIRE(bufs.size() == 1);
  CHECK(bufs[0].shape() == std::initializer_list<std::int64_t>{32});
  CHECK(nodes_of(got, Ops::STAGE).empty());
  // the writer: STORE into the RESHAPEd buffer inside END over both ranges
  auto ends = nodes_of(got, Ops::END);
  REQUIRE(ends.size() == 1);
  CHECK(ends[0].nsrc() == 3);
  CHECK(ends[0].src(1) == l);
  CHECK(ends[0].src(2) == g);
  // the reader: pm_mops moved the RESHAPE outside the AFTER and folded the 2-D index into the flat one
  bool flat_read = false;
  for (UOp u : nodes_of(got, Ops::INDEX))
    if (u.src(0).op() == Ops::AFTER && u.src(0).src(0) == bufs[0] && u.nsrc() == 2) flat_read = true;
  CHECK(flat_read);
}

TEST_CASE("add_local_buffer: errors name the node") {
  Arena a;
  UOp r = range(a, 4, 0, AxisType::LOCAL);
  // a STAGE whose arg is not a BufferizeOpts
  UOp bad = a.make(Ops::STAGE, DType::float32, {const_(a, DType::float32, Arg::floating(1.0)), r});
  UOp root = store_out(index(bad, r), r);
  try {
    (void)cg::add_local_buffers(root, Target{});
    FAIL("expected an error");
  } catch (const uopcg::error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("add local buffers") != std::string::npos);
    CHECK(msg.find("STAGE") != std::string::npos);
  }
}
