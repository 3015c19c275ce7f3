// PM4 encoding: the golden headers of kgsl.md §8.4, parity, limits, decoding.
#include <doctest/doctest.h>

#include <bit>
#include <random>
#include <vector>

#include "uopcg/runtime/kgsl/pm4.hpp"

using namespace uopcg::kgsl::pm4;

namespace {
bool odd(std::uint32_t v) { return v % 2 == 1; }
}  // namespace

TEST_CASE("golden type-7 headers (kgsl.md 8.4)") {
  CHECK(type7(CP_NOP, 0) == 0x70108000u);
  CHECK(type7(CP_WAIT_MEM_WRITES, 0) == 0x70928000u);
  CHECK(type7(CP_WAIT_FOR_IDLE, 0) == 0x70268000u);
  CHECK(type7(CP_RUN_OPENCL, 1) == 0x70310001u);
  CHECK(type7(CP_EXEC_CS, 4) == 0x70B30004u);
  CHECK(type7(CP_LOAD_STATE6_FRAG, 3) == 0x70348003u);
  CHECK(type7(CP_WAIT_REG_MEM, 6) == 0x70BC8006u);
  CHECK(type7(CP_REG_TO_MEM, 3) == 0x703E8003u);
  CHECK(type7(CP_EVENT_WRITE, 4) == 0x70460004u);
  CHECK(type7(CP_EVENT_WRITE, 1) == 0x70460001u);
  CHECK(type7(CP_SET_MARKER, 1) == 0x70E50001u);
  static_assert(type7(CP_EXEC_CS, 4) == 0x70B30004u);  // usable in constant evaluation
}

TEST_CASE("golden type-4 headers (kgsl.md 8.4)") {
  CHECK(type4(reg::SP_UPDATE_CNTL, 1) == 0x40BB0801u);
  CHECK(type4(reg::SP_CS_TSIZE, 1) == 0x40A9BA01u);
  CHECK(type4(reg::SP_CS_USIZE, 1) == 0x48AA0001u);
  CHECK(type4(reg::SP_MODE_CNTL, 1) == 0x40AB0001u);
  CHECK(type4(reg::SP_PERFCTR_SHADER_MASK, 1) == 0x40AE0F01u);
  CHECK(type4(reg::TPL1_MODE_CNTL, 1) == 0x40B30901u);
  CHECK(type4(reg::TPL1_DBG_ECO_CNTL, 1) == 0x40B60001u);
  CHECK(type4(reg::SP_CS_NDRANGE_0, 12) == 0x40B9908Cu);
  CHECK(type4(reg::SP_CS_CNTL_0, 10) == 0x40A9B08Au);
  CHECK(type4(reg::SP_REG_PROG_ID_0, 5) == 0x48B98385u);
  CHECK(type4(reg::SP_CS_PVT_MEM_STACK_OFFSET, 1) == 0x48A9BD01u);
  CHECK(type4(reg::SP_CS_INSTR_SIZE, 1) == 0x40A9BC01u);
  CHECK(type4(reg::SP_CS_SAMPLER_BASE, 2) == 0x48A9E202u);
  CHECK(type4(reg::TPL1_CS_BORDER_COLOR_BASE, 2) == 0x40B18002u);
  CHECK(type4(reg::SP_CS_TEXMEMOBJ_BASE, 2) == 0x40A9E602u);
  CHECK(type4(reg::SP_CS_UAV_BASE, 2) == 0x40A9F202u);
  CHECK(type4(reg::SP_CS_CONFIG, 1) == 0x48A9BB01u);
  CHECK(type4(reg::SP_CS_CONST_CONFIG_0, 2) == 0x48B99702u);
}

TEST_CASE("parity makes every field plus its bit odd; headers respect the field limits") {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const std::uint32_t reg = rng() & type4_max_reg, cnt = rng() % (type4_max_count + 1);
    const std::uint32_t op = rng() & type7_max_opcode, cnt7 = rng() & type7_max_count;
    CHECK(odd(std::popcount(reg) + parity(reg)));
    CHECK(odd(std::popcount(cnt) + parity(cnt)));
    const std::uint32_t h4 = type4(reg, cnt), h7 = type7(op, cnt7);
    CHECK((h4 >> 28) == 4u);
    CHECK((h4 & 0x7F) == cnt);
    CHECK(((h4 >> 8) & 0x3FFFF) == reg);
    CHECK(odd(std::popcount((h4 >> 8) & 0x3FFFF) + ((h4 >> 27) & 1)));
    CHECK(odd(std::popcount(h4 & 0x7F) + ((h4 >> 7) & 1)));
    CHECK((h7 >> 28) == 7u);
    CHECK((h7 & 0x3FFF) == cnt7);
    CHECK(((h7 >> 16) & 0x7F) == op);
    CHECK(odd(std::popcount(h7 & 0x3FFF) + ((h7 >> 15) & 1)));
    CHECK(odd(std::popcount((h7 >> 16) & 0x7F) + ((h7 >> 23) & 1)));
  }
  CHECK(parity(0) == 1u);
  CHECK(parity(1) == 0u);
  CHECK(parity(3) == 1u);
}

TEST_CASE("writer and decoder round-trip; the decoder rejects broken streams") {
  std::vector<std::uint32_t> buf(64);
  writer w(buf);
  const auto r = w.reg(reg::SP_CS_NDRANGE_0, {1, 2, 3});
  const auto o = w.op(CP_EXEC_CS, {0, 4, 5, 6});
  w.op(CP_WAIT_FOR_IDLE);
  CHECK(r == 1);
  CHECK(o == 5);
  CHECK(w.size() == 10);
  std::span<const std::uint32_t> s(buf.data(), w.size());
  std::vector<packet> ps;
  for (const auto& p : packets(s)) ps.push_back(p);
  REQUIRE(ps.size() == 3);
  CHECK(ps[0].kind == packet::type4_regs);
  CHECK(ps[0].reg == reg::SP_CS_NDRANGE_0);
  CHECK(ps[0].count == 3);
  CHECK(ps[1].opcode == CP_EXEC_CS);
  CHECK(ps[1].payload[3] == 6u);
  CHECK(ps[2].opcode == CP_WAIT_FOR_IDLE);
  CHECK(ps[2].offset == 9);

  // Truncated: the payload runs past the end.
  auto cut = decode_at(s.first(3), 0);
  CHECK(cut.kind == packet::invalid);
  // Wrong parity bit.
  std::vector<std::uint32_t> bad{type4(0xA9B0, 1) ^ (1u << 27), 0};
  CHECK(decode_at(bad, 0).kind == packet::invalid);
  bad[0] = type7(CP_NOP, 0) ^ (1u << 15);
  CHECK(decode_at(bad, 0).kind == packet::invalid);
  // Neither type 4 nor 7 (a type-3 header).
  bad[0] = 0xC0001000;
  CHECK(decode_at(bad, 0).kind == packet::invalid);
  // Iteration stops after an invalid packet.
  std::vector<std::uint32_t> mixed{type7(CP_NOP, 0), 0x12345678, type7(CP_NOP, 0)};
  int n = 0;
  for (const auto& p : packets(mixed)) {
    ++n;
    if (n == 2) CHECK(p.kind == packet::invalid);
  }
  CHECK(n == 2);
}

TEST_CASE("CP_LOAD_STATE6 control words of kgsl.md 9.4") {
  CHECK(load_state6_ctrl(state_type::constants, state_src::indirect, SB6_CS_SHADER, 256) == 0x40364000u);
  CHECK(load_state6_ctrl(state_type::shader, state_src::indirect, SB6_CS_SHADER, 3) == (0x00360000u | 3u << 22));
  CHECK(load_state6_ctrl(state_type::uav, state_src::indirect, SB6_CS_SHADER, 2) == (0x0036C000u | 2u << 22));
  CHECK(load_state6_ctrl(state_type::constants, state_src::indirect, SB6_CS_TEX, 4) == (0x00164000u | 4u << 22));
  CHECK(load_state6_ctrl(state_type::shader, state_src::indirect, SB6_CS_TEX, 2) == (0x00160000u | 2u << 22));
  const auto f = decode_load_state6(0x40364000u);
  CHECK(f.num_unit == 256u);
  CHECK(f.type == 1u);
  CHECK(f.src == 2u);
  CHECK(f.block == 13u);
  CHECK(load_state6_unit_bytes(0, SB6_CS_SHADER) == 128u);
  CHECK(load_state6_unit_bytes(1, SB6_CS_SHADER) == 16u);
  CHECK(load_state6_unit_bytes(1, SB6_CS_TEX) == 64u);
}
