// The launch stream of kgsl.md §9.1/§9.2, field values, encodings, kernarg filling (§11, §9.5).
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "kgsl/blob_builder.hpp"
#include "uopcg/runtime/kgsl/dispatch.hpp"

using namespace uopcg::kgsl;
using namespace uopcg::kgsl::testing;
namespace P = uopcg::kgsl::pm4;
using P::lo;
using P::hi;
using namespace uopcg::kgsl::pm4;

namespace {
struct item {
  bool t7;
  std::uint32_t code;  // opcode or register
  std::uint32_t count;
};
std::vector<item> shape(std::span<const std::uint32_t> s, std::size_t* end = nullptr) {
  std::vector<item> out;
  std::size_t at = 0;
  for (const auto& p : P::packets(s)) {
    REQUIRE(p.kind != P::packet::invalid);
    out.push_back({p.kind == P::packet::type7_op, p.kind == P::packet::type7_op ? p.opcode : p.reg, p.count});
    at = p.offset + 1 + p.count;
  }
  if (end) *end = at;
  return out;
}
const P::packet find(std::span<const std::uint32_t> s, bool t7, std::uint32_t code, int nth = 0) {
  for (const auto& p : P::packets(s))
    if ((p.kind == P::packet::type7_op) == t7 && (t7 ? p.opcode : p.reg) == code && nth-- == 0) return p;
  FAIL("packet not found");
  return {};
}
const chip_traits& a630() { return chip_traits_of({0x06030001}); }
constexpr std::uint64_t SIG = 0x7F0000001000, DUMMY = 0x7F0000001040, K = 0x7F0000100000, S = 0x7F0000200000,
                         STK = 0x7F0000300000, BORDER = 0x7F0000400000;

std::vector<std::uint32_t> launch_stream(const program_info& p, const launch_dims& d, dispatch_options o = {}) {
  const program_layout l = layout_of(p, a630());
  std::vector<std::uint32_t> buf(max_launch_dwords);
  P::writer w(buf);
  CHECK(emit_wait(w, SIG, 41) == 4);
  emit_barrier(w, DUMMY);
  emit_dispatch(w, p, l, {K, S, STK, BORDER}, geometry_of(p, l, d), DUMMY, o);
  emit_signal(w, SIG, DUMMY, 42);
  buf.resize(w.size());
  return buf;
}
}  // namespace

TEST_CASE("a launch is exactly the packet sequence of kgsl.md 9.1 + 9.2") {
  const program_info p = parse_program(build_blob(add_kernel_spec()));
  const auto s = launch_stream(p, {{1024, 1, 1}, {32, 1, 1}});
  std::size_t end = 0;
  const auto got = shape(s, &end);
  CHECK(end == s.size());  // no partial packet
  using namespace P;
  const std::vector<item> want = {
      {true, CP_WAIT_REG_MEM, 6},       {true, CP_EVENT_WRITE, 4},         {true, CP_EVENT_WRITE, 1},
      {true, CP_WAIT_MEM_WRITES, 0},    {true, CP_WAIT_FOR_IDLE, 0},       {true, CP_SET_MARKER, 1},
      {false, reg::SP_UPDATE_CNTL, 1},  {false, reg::SP_UPDATE_CNTL, 1},   {false, reg::SP_CS_TSIZE, 1},
      {false, reg::SP_CS_USIZE, 1},     {false, reg::SP_MODE_CNTL, 1},     {false, reg::SP_PERFCTR_SHADER_MASK, 1},
      {false, reg::TPL1_MODE_CNTL, 1},  {false, reg::TPL1_DBG_ECO_CNTL, 1}, {true, CP_WAIT_FOR_IDLE, 0},
      {false, reg::SP_CS_NDRANGE_0, 12}, {false, reg::SP_CS_CNTL_0, 10},   {true, CP_LOAD_STATE6_FRAG, 3},
      {true, CP_LOAD_STATE6_FRAG, 3},   {false, reg::SP_REG_PROG_ID_0, 5}, {false, reg::SP_CS_PVT_MEM_STACK_OFFSET, 1},
      {false, reg::SP_CS_INSTR_SIZE, 1}, {false, reg::SP_CS_CONFIG, 1},    {true, CP_RUN_OPENCL, 1},
      {true, CP_EVENT_WRITE, 4},        {true, CP_WAIT_FOR_IDLE, 0},       {true, CP_EVENT_WRITE, 4},
      {true, CP_EVENT_WRITE, 4},
  };
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].t7 == want[i].t7);
    CHECK(got[i].code == want[i].code);
    CHECK(got[i].count == want[i].count);
  }
  // Frame payloads.
  const auto wait = find(s, true, CP_WAIT_REG_MEM);
  CHECK(std::vector<std::uint32_t>(wait.payload.begin(), wait.payload.end()) ==
        std::vector<std::uint32_t>{0x15, lo(SIG), hi(SIG), 41, 0xFFFFFFFF, 32});
  const auto inval = find(s, true, CP_EVENT_WRITE, 1);
  CHECK(inval.payload[0] == CACHE_INVALIDATE);
  const auto sig = find(s, true, CP_EVENT_WRITE, 3);
  CHECK(std::vector<std::uint32_t>(sig.payload.begin(), sig.payload.end()) ==
        std::vector<std::uint32_t>{CACHE_FLUSH_TS, lo(SIG), hi(SIG), 42});
  CHECK(find(s, true, CP_SET_MARKER).payload[0] == RM6_COMPUTE);
  CHECK(find(s, false, reg::SP_UPDATE_CNTL, 0).payload[0] == 0x60u);
  CHECK(find(s, false, reg::SP_UPDATE_CNTL, 1).payload[0] == 0u);
  CHECK(find(s, false, reg::SP_CS_TSIZE).payload[0] == 0x80u);
  CHECK(find(s, false, reg::SP_CS_USIZE).payload[0] == 0x40u);
  CHECK(find(s, false, reg::SP_MODE_CNTL).payload[0] == 0x2u);
  CHECK(find(s, false, reg::SP_PERFCTR_SHADER_MASK).payload[0] == 0x20u);
  CHECK(find(s, false, reg::TPL1_MODE_CNTL).payload[0] == 0x1u);
  CHECK(find(s, true, CP_RUN_OPENCL).payload[0] == 0u);
  CHECK(s.size() <= max_launch_dwords);
}

TEST_CASE("field values: NDRANGE, global sizes, groups, CS_CNTL, loads, config") {
  blob_spec bs = add_kernel_spec();
  bs.code.assign(1000, 0);  // 1000 bytes -> 8 units
  bs.code.resize(1000);
  bs.fregs = 5;
  bs.hregs = 2;
  bs.entry = 0x20;
  const program_info p = parse_program(build_blob(bs));
  const auto s = launch_stream(p, {{100, 7, 3}, {32, 2, 1}});
  const auto nd = find(s, false, reg::SP_CS_NDRANGE_0);
  CHECK(nd.payload[0] == (3u | 31u << 2 | 1u << 12 | 0u << 22));
  CHECK(nd.payload[1] == 100u);  // GLOBALSIZE_X
  CHECK(nd.payload[2] == 0u);
  CHECK(nd.payload[3] == 7u);
  CHECK(nd.payload[5] == 3u);
  CHECK(nd.payload[7] == 0x00CCC0CFu);
  CHECK(nd.payload[8] == 0xFCu);  // THREADSIZE bit 9 clear, like CS_CNTL_0 bit 20
  CHECK(nd.payload[9] == 4u);     // ceil(100 / 32)
  CHECK(nd.payload[10] == 4u);    // ceil(7 / 2)
  CHECK(nd.payload[11] == 3u);
  const auto cs = find(s, false, reg::SP_CS_CNTL_0);
  CHECK(cs.payload[0] == ((2u << 1) | (5u << 7)));
  CHECK((cs.payload[0] >> 20 & 1) == (nd.payload[8] >> 9 & 1));
  CHECK(cs.payload[1] == 0x41u);
  CHECK(cs.payload[2] == 0u);
  CHECK(cs.payload[3] == 0x20u);
  CHECK(cs.payload[4] == lo(S));
  CHECK(cs.payload[5] == hi(S));
  CHECK(cs.payload[7] == lo(STK));
  CHECK(cs.payload[8] == hi(STK));
  const auto kc = find(s, true, CP_LOAD_STATE6_FRAG, 0);
  CHECK(kc.payload[0] == 0x40364000u);
  CHECK(kc.payload[1] == lo(K));
  const auto sh = find(s, true, CP_LOAD_STATE6_FRAG, 1);
  CHECK(sh.payload[0] == (0x00360000u | 8u << 22));
  CHECK(sh.payload[2] == hi(S));
  CHECK(find(s, false, reg::SP_CS_INSTR_SIZE).payload[0] == 8u);  // == ceil(1000 / 128) == NUM_UNIT
  CHECK(find(s, false, reg::SP_CS_CONFIG).payload[0] == 0x100u);
  const auto prog = find(s, false, reg::SP_REG_PROG_ID_0);
  CHECK(prog.payload[0] == 0xFCFCFCFCu);
  CHECK(prog.payload[3] == 0xFCu);
}

TEST_CASE("freedreno encoding by default; tinygrad's raw values on request") {
  blob_spec bs = add_kernel_spec();
  bs.pvtmem = 600;  // -> 1024 B per fiber: memsizeperitem 2, 2 MiB per SP (total 512), stack offset 2 MiB
  const program_info p = parse_program(build_blob(bs));
  const auto fd = launch_stream(p, {{64, 1, 1}, {64, 1, 1}});
  CHECK(find(fd, false, reg::SP_REG_PROG_ID_0).payload[4] == 0x140u);
  CHECK(find(fd, false, reg::SP_CS_PVT_MEM_STACK_OFFSET).payload[0] == (2097152u >> 11));
  CHECK(find(fd, false, reg::SP_CS_CNTL_0).payload[6] == 2u);
  CHECK(find(fd, false, reg::SP_CS_CNTL_0).payload[9] == 512u);  // not shifted by 12 a second time
  dispatch_options o;
  o.encoding = register_encoding::tinygrad;
  const auto tg = launch_stream(p, {{64, 1, 1}, {64, 1, 1}}, o);
  CHECK(find(tg, false, reg::SP_REG_PROG_ID_0).payload[4] == 0x100u);
  CHECK(find(tg, false, reg::SP_CS_PVT_MEM_STACK_OFFSET).payload[0] == 2097152u);
  CHECK(find(tg, false, reg::SP_CS_CNTL_0).payload[6] == 2u);
  CHECK(find(tg, false, reg::SP_CS_CNTL_0).payload[9] == 512u);
}

TEST_CASE("private memory: both encodings write freedreno's per-SP size (A630, 2048 fibers per SP)") {
  // pvtmem -> MEMSIZEPERITEM (per-fiber bytes >> 9), TOTALPVTMEMSIZE (per-SP bytes >> 12), worked out
  // by hand: per fiber round_up(pvtmem, 512), per SP 2048 times that (600 -> 512 is tinygrad's number too).
  struct row {
    std::uint32_t pvtmem, memsizeperitem, totalpvtmemsize;
  };
  const row rows[] = {{0, 0, 0}, {1, 1, 256}, {512, 1, 256}, {600, 2, 512}, {1100, 3, 768}, {130560, 255, 65280}};
  for (const row& r : rows) {
    CAPTURE(r.pvtmem);
    blob_spec bs = add_kernel_spec();
    bs.pvtmem = r.pvtmem;
    const program_info p = parse_program(build_blob(bs));
    for (auto enc : {register_encoding::freedreno, register_encoding::tinygrad}) {
      dispatch_options o;
      o.encoding = enc;
      const auto stream = launch_stream(p, {{64, 1, 1}, {64, 1, 1}}, o);  // the packet views into it
      const auto cs = find(stream, false, reg::SP_CS_CNTL_0);
      CHECK(cs.payload[6] == r.memsizeperitem);
      CHECK(cs.payload[9] == r.totalpvtmemsize);
    }
    // The private buffer holds every SP's region (A630 has two) with room to spare, as tinygrad sizes it.
    const program_layout l = layout_of(p, a630());
    CHECK(std::uint64_t{l.stack_bytes} >= 2ull * r.totalpvtmemsize * 4096);
  }
  blob_spec bs = add_kernel_spec();
  bs.pvtmem = 130561;
  const program_info p = parse_program(build_blob(bs));
  CHECK_THROWS_WITH_AS((void)layout_of(p, a630()), doctest::Contains("130561 bytes of private memory"), uopcg::error);
}

TEST_CASE("the shader preload stops at the instruction cache; SP_CS_INSTR_SIZE covers the whole shader") {
  struct row {
    std::uint32_t bytes, instr_units, preload_units;
  };
  // A630's cache holds 64 units of 128 bytes (8 KiB).
  const row rows[] = {{4, 1, 1}, {8188, 64, 64}, {8192, 64, 64}, {8196, 65, 64}, {9000, 71, 64}, {65536, 512, 64}};
  for (const row& r : rows) {
    CAPTURE(r.bytes);
    blob_spec bs = add_kernel_spec();
    bs.code.assign(r.bytes, 0xC3);
    const program_info p = parse_program(build_blob(bs));
    const program_layout l = layout_of(p, a630());
    CHECK(l.instr_units == r.instr_units);
    CHECK(l.preload_units == r.preload_units);
    const auto s = launch_stream(p, {{64, 1, 1}, {64, 1, 1}});
    CHECK(find(s, true, P::CP_LOAD_STATE6_FRAG, 1).payload[0] == (0x00360000u | r.preload_units << 22));
    CHECK(find(s, false, reg::SP_CS_INSTR_SIZE).payload[0] == r.instr_units);
    // Uncapped, as tinygrad sends it (for stream comparisons only).
    dispatch_options o;
    o.encoding = register_encoding::tinygrad;
    o.cap_preload = false;
    const auto t = launch_stream(p, {{64, 1, 1}, {64, 1, 1}}, o);
    CHECK(find(t, true, P::CP_LOAD_STATE6_FRAG, 1).payload[0] == (0x00360000u | r.instr_units << 22));
  }
}

TEST_CASE("CP_EXEC_CS kick carries the group counts and is patched with them") {
  const program_info p = parse_program(build_blob(add_kernel_spec()));
  const program_layout l = layout_of(p, a630());
  std::vector<std::uint32_t> buf(max_launch_dwords);
  P::writer w(buf);
  dispatch_options o;
  o.kick = kick_packet::exec_cs;
  const auto patch = emit_dispatch(w, p, l, {K, S, STK, BORDER}, geometry_of(p, l, {{256, 1, 1}, {64, 1, 1}}), DUMMY, o);
  buf.resize(w.size());
  auto ex = find(buf, true, P::CP_EXEC_CS);
  CHECK(std::vector<std::uint32_t>(ex.payload.begin(), ex.payload.end()) == std::vector<std::uint32_t>{0, 4, 1, 1});
  patch_geometry(buf.data(), patch, geometry_of(p, l, {{1000, 9, 2}, {10, 3, 1}}));
  ex = find(buf, true, P::CP_EXEC_CS);
  CHECK(std::vector<std::uint32_t>(ex.payload.begin(), ex.payload.end()) == std::vector<std::uint32_t>{0, 100, 3, 2});
  const auto nd = find(buf, false, P::reg::SP_CS_NDRANGE_0);
  CHECK(nd.payload[0] == (3u | 9u << 2 | 2u << 12));
  CHECK(nd.payload[1] == 1000u);
  CHECK(nd.payload[3] == 9u);
  CHECK(nd.payload[9] == 100u);
}

TEST_CASE("images and samplers: descriptor loads, bases, config, kernarg contents") {
  blob_spec bs = add_kernel_spec();
  bs.samplers = 1;
  bs.args = {{0x50, 2}, {0x54, 1}, {0x58, 0}, {0x5C, 0}};  // write image, read image, buffer, int
  bs.imms = {{0xABCD1234, 0x40, 1}, {0x3C00, 0x90, 0}};
  const program_info p = parse_program(build_blob(bs));
  const program_layout l = layout_of(p, a630());
  const auto s = launch_stream(p, {{64, 1, 1}, {64, 1, 1}});
  const auto samp = find(s, true, P::CP_LOAD_STATE6_FRAG, 2);
  CHECK(samp.payload[0] == (0x00160000u | 2u << 22));
  CHECK(P::reg::SP_CS_SAMPLER_BASE == find(s, false, P::reg::SP_CS_SAMPLER_BASE).reg);
  CHECK(find(s, false, P::reg::SP_CS_SAMPLER_BASE).payload[0] == lo(K + l.samp_off));
  CHECK(find(s, false, P::reg::TPL1_CS_BORDER_COLOR_BASE).payload[0] == lo(BORDER));
  const auto tex = find(s, true, P::CP_LOAD_STATE6_FRAG, 3);
  CHECK(tex.payload[0] == (0x00164000u | 1u << 22));
  CHECK(tex.payload[1] == lo(K + 2048 + 64));
  const auto ibo = find(s, true, P::CP_LOAD_STATE6_FRAG, 4);
  CHECK(ibo.payload[0] == (0x0036C000u | 1u << 22));
  CHECK(find(s, false, P::reg::SP_CS_UAV_BASE).payload[0] == lo(K + 2048));
  CHECK(find(s, false, P::reg::SP_CS_CONFIG).payload[0] == (0x100u | 1u << 9 | 2u << 17 | 1u << 22));
  CHECK(shape(s).size() == 28 + 7);

  std::vector<std::byte> block(l.kernarg_size, std::byte{0xEE});
  const auto slots = arg_slots(p, l);
  const image_view out{0x7000001000, 16, 4, image_format::rgba_f32};
  const image_view in{0x7000002000, 32, 2, image_format::rgba_f16};
  const kernel_arg args[] = {image_arg(out), image_arg(in), buffer_arg(0x7FAABBCCDD00ull), scalar_arg<std::int32_t>(-5)};
  fill_kernargs(block.data(), p, l, slots, args);
  auto u32 = [&](std::size_t off) {
    std::uint32_t v;
    std::memcpy(&v, block.data() + off, 4);
    return v;
  };
  CHECK(u32(0x160) == 0xBBCCDD00u);
  CHECK(u32(0x164) == 0x7FAAu);
  CHECK(u32(0x170) == static_cast<std::uint32_t>(-5));
  CHECK(u32(0x174) == 0u);  // zeroed, not 0xEE
  CHECK(u32(0x100) == 0xABCD1234u);
  CHECK(u32(0x120) == 0x3C00u);  // 2-byte immediate at 0x90 * 2
  // IBO descriptor at 2048 (write image, rgba f32, 16x4, pitch 256).
  CHECK(u32(2048) == 130u << 22);
  CHECK(u32(2048 + 4) == (16u | 4u << 15));
  CHECK(u32(2048 + 8) == ((1u << 29) | 256u << 7 | 2u));
  CHECK(u32(2048 + 16) == 0x00001000u);
  CHECK(u32(2048 + 20) == 0x70u);
  CHECK(u32(2048 + 24) == 0x40000000u);
  CHECK(u32(2048 + 28) == 13u);
  // Texture descriptor at 2048 + 64 (rgba f16, 32x2, pitch 256).
  CHECK(u32(2112) == (0x00006888u | 98u << 22));
  CHECK(u32(2112 + 8) == ((1u << 29) | 256u << 7 | 2u));
  // Sampler words.
  CHECK(u32(l.samp_off) == 0x1B60u);
  CHECK(u32(l.samp_off + 4) == 0x30u);
  CHECK(u32(l.samp_off + 16) == 0u);

  const kernel_arg wrong[] = {buffer_arg(1), image_arg(in), buffer_arg(2), scalar_arg(1)};
  CHECK_THROWS_WITH_AS(fill_kernargs(block.data(), p, l, slots, wrong), doctest::Contains("argument 0 is a buffer"),
                       uopcg::error);
  CHECK_THROWS_WITH_AS(fill_kernargs(block.data(), p, l, slots, std::span(args, 3)), doctest::Contains("takes 4 arguments"),
                       uopcg::error);
  const image_view bad{0x7000001000, 3, 1, image_format::rgba_f32};  // pitch 48
  CHECK_THROWS_WITH_AS((void)image_descriptor(bad, true), doctest::Contains("multiple of 64"), uopcg::error);
}

TEST_CASE("launch sizes the hardware cannot run are refused") {
  blob_spec bs = add_kernel_spec();
  bs.fregs = 40;  // 12288 / (40 * 128) = 2 -> 256 threads
  const program_info p = parse_program(build_blob(bs));
  const program_layout l = layout_of(p, a630());
  CHECK(l.max_threads == 256u);
  CHECK_NOTHROW((void)geometry_of(p, l, {{1024, 1, 1}, {256, 1, 1}}));
  CHECK_THROWS_WITH_AS((void)geometry_of(p, l, {{1024, 2, 1}, {256, 2, 1}}), doctest::Contains("too many resources"), uopcg::error);
  CHECK_THROWS_WITH_AS((void)geometry_of(p, l, {{1024, 1, 1}, {0, 1, 1}}), doctest::Contains("outside 1..1024"), uopcg::error);
  CHECK_THROWS_WITH_AS((void)geometry_of(p, l, {{0, 1, 1}, {1, 1, 1}}), doctest::Contains("global size is 0"), uopcg::error);
  const auto g = geometry_of(p, l, launch_dims::from_groups({5, 2, 1}, {16, 4, 2}));
  CHECK(g.global == std::array<std::uint32_t, 3>{80, 8, 2});
  CHECK(g.groups == std::array<std::uint32_t, 3>{5, 2, 1});
}

TEST_CASE("scalar arguments keep their width and bits") {
  CHECK(scalar_arg(1.5f).bits == 0x3FC00000u);
  CHECK(scalar_arg(1.5f).size == 4);
  CHECK(scalar_arg<std::int16_t>(-1).bits == 0xFFFFu);
  CHECK(scalar_arg<std::uint64_t>(1ull << 40).size == 8);
  CHECK(scalar_arg(2.0).bits == 0x4000000000000000ull);
}
