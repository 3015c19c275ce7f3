// PM4 command-stream encoding for Adreno A5xx/A6xx (type-4 register writes, type-7 opcode packets),
// the A6xx compute registers and opcodes the launcher uses, a dword writer and a packet decoder.
// Pure computation: no system calls, usable in constant evaluation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>

namespace uopcg::kgsl::pm4 {

/// Odd parity over a field: 1 when the field has an even number of set bits, so that the field plus
/// this bit always has an odd number of ones (fold to a nibble, then look it up in ~0x6996).
constexpr std::uint32_t parity(std::uint32_t v) {
  v ^= v >> 16;
  v ^= v >> 8;
  v ^= v >> 4;
  v &= 0xF;
  return (~0x6996u >> v) & 1u;
}

inline constexpr std::uint32_t type4_max_count = 0x7F;
inline constexpr std::uint32_t type4_max_reg = 0x3FFFF;
inline constexpr std::uint32_t type7_max_count = 0x3FFF;
inline constexpr std::uint32_t type7_max_opcode = 0x7F;
inline constexpr std::uint32_t register_file_size = 0x40000;

/// Type-4 header: write `count` consecutive registers starting at dword offset `reg`.
constexpr std::uint32_t type4(std::uint32_t reg, std::uint32_t count) {
  return 0x40000000u | (count & 0x7F) | (parity(count) << 7) | ((reg & 0x3FFFF) << 8) | (parity(reg) << 27);
}
/// Type-7 header: opcode packet with `count` payload dwords.
constexpr std::uint32_t type7(std::uint32_t opcode, std::uint32_t count) {
  return 0x70000000u | (count & 0x3FFF) | (parity(count) << 15) | ((opcode & 0x7F) << 16) |
         (parity(opcode) << 23);
}

// Opcodes (adreno_pm4.xml).
enum opcode : std::uint32_t {
  CP_NOP = 0x10,
  CP_WAIT_MEM_WRITES = 0x12,
  CP_WAIT_FOR_IDLE = 0x26,
  CP_RUN_OPENCL = 0x31,
  CP_EXEC_CS = 0x33,
  CP_LOAD_STATE6_FRAG = 0x34,
  CP_WAIT_REG_MEM = 0x3C,
  CP_REG_TO_MEM = 0x3E,
  CP_EVENT_WRITE = 0x46,
  CP_SET_MARKER = 0x65,
};

// Events (CP_EVENT_WRITE dword 0, bits 0-7).
inline constexpr std::uint32_t CACHE_FLUSH_TS = 4;
inline constexpr std::uint32_t CACHE_INVALIDATE = 0x31;  // A6xx numbering
inline constexpr std::uint32_t RM6_COMPUTE = 8;          // CP_SET_MARKER mode

// CP_WAIT_REG_MEM dword 0: function WRITE_GE (5) on memory (POLL_MEMORY = 1 in bits 4-5).
inline constexpr std::uint32_t WAIT_REG_MEM_GE_MEMORY = 0x15;
inline constexpr std::uint32_t WAIT_REG_MEM_POLL_CYCLES = 32;
// CP_REG_TO_MEM dword 0 for the 64-bit always-on counter.
inline constexpr std::uint32_t CP_ALWAYS_ON_COUNTER = 0x0980;
inline constexpr std::uint32_t REG_TO_MEM_ALWAYS_ON_64 = 0x40080980;

// A6xx compute registers (new Mesa names; dword offsets).
namespace reg {
inline constexpr std::uint32_t SP_CS_CNTL_0 = 0xA9B0;
inline constexpr std::uint32_t SP_CS_CNTL_1 = 0xA9B1;
inline constexpr std::uint32_t SP_CS_BOOLEAN_CF_MASK = 0xA9B2;
inline constexpr std::uint32_t SP_CS_PROGRAM_COUNTER_OFFSET = 0xA9B3;
inline constexpr std::uint32_t SP_CS_BASE = 0xA9B4;
inline constexpr std::uint32_t SP_CS_PVT_MEM_PARAM = 0xA9B6;
inline constexpr std::uint32_t SP_CS_PVT_MEM_BASE = 0xA9B7;
inline constexpr std::uint32_t SP_CS_PVT_MEM_SIZE = 0xA9B9;
inline constexpr std::uint32_t SP_CS_TSIZE = 0xA9BA;
inline constexpr std::uint32_t SP_CS_CONFIG = 0xA9BB;
inline constexpr std::uint32_t SP_CS_INSTR_SIZE = 0xA9BC;
inline constexpr std::uint32_t SP_CS_PVT_MEM_STACK_OFFSET = 0xA9BD;
inline constexpr std::uint32_t SP_CS_SAMPLER_BASE = 0xA9E2;
inline constexpr std::uint32_t SP_CS_TEXMEMOBJ_BASE = 0xA9E6;
inline constexpr std::uint32_t SP_CS_UAV_BASE = 0xA9F2;
inline constexpr std::uint32_t SP_CS_USIZE = 0xAA00;
inline constexpr std::uint32_t SP_MODE_CNTL = 0xAB00;
inline constexpr std::uint32_t SP_PERFCTR_SHADER_MASK = 0xAE0F;
inline constexpr std::uint32_t TPL1_CS_BORDER_COLOR_BASE = 0xB180;
inline constexpr std::uint32_t TPL1_MODE_CNTL = 0xB309;
inline constexpr std::uint32_t TPL1_DBG_ECO_CNTL = 0xB600;
inline constexpr std::uint32_t SP_REG_PROG_ID_0 = 0xB983;
inline constexpr std::uint32_t SP_CS_CONST_CONFIG = 0xB987;
inline constexpr std::uint32_t SP_CS_NDRANGE_0 = 0xB990;
inline constexpr std::uint32_t SP_CS_NDRANGE_1 = 0xB991;  // GLOBALSIZE_X; 2..6 follow
inline constexpr std::uint32_t SP_CS_CONST_CONFIG_0 = 0xB997;
inline constexpr std::uint32_t SP_CS_WGE_CNTL = 0xB998;
inline constexpr std::uint32_t SP_CS_KERNEL_GROUP_X = 0xB999;
inline constexpr std::uint32_t SP_UPDATE_CNTL = 0xBB08;

/// The name of a register the launcher writes (freedreno's a6xx.xml names; the two dwords of a 64-bit
/// address are NAME_LO and NAME_HI), or nullptr. Used by tools that print a stream.
constexpr const char* name(std::uint32_t r) {
  switch (r) {
    case SP_CS_CNTL_0: return "SP_CS_CNTL_0";
    case SP_CS_CNTL_1: return "SP_CS_CNTL_1";
    case SP_CS_BOOLEAN_CF_MASK: return "SP_CS_BOOLEAN_CF_MASK";
    case SP_CS_PROGRAM_COUNTER_OFFSET: return "SP_CS_PROGRAM_COUNTER_OFFSET";
    case SP_CS_BASE: return "SP_CS_BASE_LO";
    case SP_CS_BASE + 1: return "SP_CS_BASE_HI";
    case SP_CS_PVT_MEM_PARAM: return "SP_CS_PVT_MEM_PARAM";
    case SP_CS_PVT_MEM_BASE: return "SP_CS_PVT_MEM_BASE_LO";
    case SP_CS_PVT_MEM_BASE + 1: return "SP_CS_PVT_MEM_BASE_HI";
    case SP_CS_PVT_MEM_SIZE: return "SP_CS_PVT_MEM_SIZE";
    case SP_CS_TSIZE: return "SP_CS_TSIZE";
    case SP_CS_CONFIG: return "SP_CS_CONFIG";
    case SP_CS_INSTR_SIZE: return "SP_CS_INSTR_SIZE";
    case SP_CS_PVT_MEM_STACK_OFFSET: return "SP_CS_PVT_MEM_STACK_OFFSET";
    case SP_CS_SAMPLER_BASE: return "SP_CS_SAMPLER_BASE_LO";
    case SP_CS_SAMPLER_BASE + 1: return "SP_CS_SAMPLER_BASE_HI";
    case SP_CS_TEXMEMOBJ_BASE: return "SP_CS_TEXMEMOBJ_BASE_LO";
    case SP_CS_TEXMEMOBJ_BASE + 1: return "SP_CS_TEXMEMOBJ_BASE_HI";
    case SP_CS_UAV_BASE: return "SP_CS_UAV_BASE_LO";
    case SP_CS_UAV_BASE + 1: return "SP_CS_UAV_BASE_HI";
    case SP_CS_USIZE: return "SP_CS_USIZE";
    case SP_MODE_CNTL: return "SP_MODE_CNTL";
    case SP_PERFCTR_SHADER_MASK: return "SP_PERFCTR_SHADER_MASK";
    case TPL1_CS_BORDER_COLOR_BASE: return "TPL1_CS_BORDER_COLOR_BASE_LO";
    case TPL1_CS_BORDER_COLOR_BASE + 1: return "TPL1_CS_BORDER_COLOR_BASE_HI";
    case TPL1_MODE_CNTL: return "TPL1_MODE_CNTL";
    case TPL1_DBG_ECO_CNTL: return "TPL1_DBG_ECO_CNTL";
    case SP_REG_PROG_ID_0: return "SP_REG_PROG_ID_0";
    case SP_REG_PROG_ID_0 + 1: return "SP_REG_PROG_ID_1";
    case SP_REG_PROG_ID_0 + 2: return "SP_REG_PROG_ID_2";
    case SP_REG_PROG_ID_0 + 3: return "SP_REG_PROG_ID_3";
    case SP_CS_CONST_CONFIG: return "SP_CS_CONST_CONFIG";
    case SP_CS_NDRANGE_0: return "SP_CS_NDRANGE_0";
    case SP_CS_NDRANGE_1: return "SP_CS_NDRANGE_1";
    case SP_CS_NDRANGE_1 + 1: return "SP_CS_NDRANGE_2";
    case SP_CS_NDRANGE_1 + 2: return "SP_CS_NDRANGE_3";
    case SP_CS_NDRANGE_1 + 3: return "SP_CS_NDRANGE_4";
    case SP_CS_NDRANGE_1 + 4: return "SP_CS_NDRANGE_5";
    case SP_CS_NDRANGE_1 + 5: return "SP_CS_NDRANGE_6";
    case SP_CS_CONST_CONFIG_0: return "SP_CS_CONST_CONFIG_0";
    case SP_CS_WGE_CNTL: return "SP_CS_WGE_CNTL";
    case SP_CS_KERNEL_GROUP_X: return "SP_CS_KERNEL_GROUP_X";
    case SP_CS_KERNEL_GROUP_X + 1: return "SP_CS_KERNEL_GROUP_Y";
    case SP_CS_KERNEL_GROUP_X + 2: return "SP_CS_KERNEL_GROUP_Z";
    case SP_UPDATE_CNTL: return "SP_UPDATE_CNTL";
    default: return nullptr;
  }
}
}  // namespace reg

// CP_LOAD_STATE6 control dword fields.
enum class state_type : std::uint32_t { shader = 0, constants = 1, uav = 3 };
enum class state_src : std::uint32_t { direct = 0, bindless = 1, indirect = 2, ubo = 3 };
inline constexpr std::uint32_t SB6_CS_TEX = 5;
inline constexpr std::uint32_t SB6_CS_SHADER = 13;

constexpr std::uint32_t load_state6_ctrl(state_type type, state_src src, std::uint32_t block,
                                         std::uint32_t num_unit, std::uint32_t dst_off = 0) {
  return (dst_off & 0x3FFF) | (static_cast<std::uint32_t>(type) << 14) | (static_cast<std::uint32_t>(src) << 16) |
         ((block & 0xF) << 18) | ((num_unit & 0x3FF) << 22);
}
struct load_state6_fields {
  std::uint32_t dst_off, type, src, block, num_unit;
};
constexpr load_state6_fields decode_load_state6(std::uint32_t ctrl) {
  return {ctrl & 0x3FFF, (ctrl >> 14) & 3, (ctrl >> 16) & 3, (ctrl >> 18) & 0xF, ctrl >> 22};
}
/// Bytes one NUM_UNIT covers for a (type, block) pair used by compute; 0 if not a compute load.
constexpr std::uint32_t load_state6_unit_bytes(std::uint32_t type, std::uint32_t block) {
  if (block == SB6_CS_SHADER) return type == 0 ? 128 : type == 1 ? 16 : type == 3 ? 64 : 0;
  if (block == SB6_CS_TEX) return type == 0 ? 16 : type == 1 ? 64 : 0;
  return 0;
}

constexpr std::uint32_t lo(std::uint64_t a) { return static_cast<std::uint32_t>(a); }
constexpr std::uint32_t hi(std::uint64_t a) { return static_cast<std::uint32_t>(a >> 32); }

/// Appends packets to caller-owned dword storage. Never allocates; overflow is a logic error the
/// caller prevents by sizing the storage (the launcher computes an upper bound per launch).
class writer {
 public:
  constexpr writer(std::uint32_t* data, std::size_t capacity) : data_(data), cap_(capacity) {}
  constexpr explicit writer(std::span<std::uint32_t> s) : writer(s.data(), s.size()) {}

  constexpr std::size_t size() const { return n_; }
  constexpr std::size_t capacity() const { return cap_; }
  constexpr std::uint32_t* data() const { return data_; }

  /// Type-4 burst; returns the index of the first payload dword (for patching in place).
  constexpr std::size_t reg(std::uint32_t r, std::initializer_list<std::uint32_t> values) {
    put(type4(r, static_cast<std::uint32_t>(values.size())));
    const std::size_t at = n_;
    for (std::uint32_t v : values) put(v);
    return at;
  }
  constexpr std::size_t reg64(std::uint32_t r, std::uint64_t addr) { return reg(r, {lo(addr), hi(addr)}); }
  /// Type-7 packet; returns the index of the first payload dword.
  constexpr std::size_t op(std::uint32_t opcode, std::initializer_list<std::uint32_t> payload = {}) {
    put(type7(opcode, static_cast<std::uint32_t>(payload.size())));
    const std::size_t at = n_;
    for (std::uint32_t v : payload) put(v);
    return at;
  }

 private:
  constexpr void put(std::uint32_t v) {
    // Overflow would corrupt memory; stop instead (a bounded-size bug, caught by tests).
    if (n_ >= cap_) __builtin_trap();
    data_[n_++] = v;
  }
  std::uint32_t* data_;
  std::size_t cap_;
  std::size_t n_ = 0;
};

/// One decoded packet of a stream.
struct packet {
  enum kind_t : std::uint8_t { type4_regs, type7_op, invalid } kind = invalid;
  std::uint32_t header = 0;
  std::uint32_t reg = 0;     // type 4: first register
  std::uint32_t opcode = 0;  // type 7
  std::uint32_t count = 0;   // payload dwords
  std::size_t offset = 0;    // index of the header in the stream
  std::span<const std::uint32_t> payload;
  const char* error = nullptr;  // set when kind == invalid
};

/// Decodes the packet at `at`. Validates the type nibble, both parity bits, the unused bits and
/// that the payload fits in the stream (no partial packet at the end).
constexpr packet decode_at(std::span<const std::uint32_t> s, std::size_t at) {
  packet p;
  p.offset = at;
  if (at >= s.size()) {
    p.error = "read past the end of the stream";
    return p;
  }
  const std::uint32_t h = s[at];
  p.header = h;
  const std::uint32_t t = h >> 28;
  if (t == 4) {
    p.count = h & 0x7F;
    p.reg = (h >> 8) & 0x3FFFF;
    if (((h >> 7) & 1) != parity(p.count)) p.error = "type-4 count parity bit wrong";
    else if (((h >> 27) & 1) != parity(p.reg)) p.error = "type-4 register parity bit wrong";
    else if (h & (1u << 26)) p.error = "type-4 reserved bit 26 set";
    else p.kind = packet::type4_regs;
  } else if (t == 7) {
    p.count = h & 0x3FFF;
    p.opcode = (h >> 16) & 0x7F;
    if (((h >> 15) & 1) != parity(p.count)) p.error = "type-7 count parity bit wrong";
    else if (((h >> 23) & 1) != parity(p.opcode)) p.error = "type-7 opcode parity bit wrong";
    else if (h & ((1u << 14) | (0xFu << 24))) p.error = "type-7 reserved bits set";
    else p.kind = packet::type7_op;
  } else {
    p.error = "packet type is neither 4 nor 7";
  }
  if (p.kind != packet::invalid && p.count > s.size() - at - 1) {
    p.kind = packet::invalid;
    p.error = "packet payload runs past the end of the stream";
  }
  if (p.kind != packet::invalid) p.payload = s.subspan(at + 1, p.count);
  return p;
}

/// Iterates the packets of a stream: `for (auto p : pm4::packets(dwords))`. Iteration stops after
/// the first invalid packet (which is yielded, with `error` set).
class packets {
 public:
  constexpr explicit packets(std::span<const std::uint32_t> s) : s_(s) {}
  class iterator {
   public:
    constexpr iterator(std::span<const std::uint32_t> s, std::size_t at) : s_(s), at_(at) {
      if (at_ < s_.size()) p_ = decode_at(s_, at_);
    }
    constexpr const packet& operator*() const { return p_; }
    constexpr const packet* operator->() const { return &p_; }
    constexpr iterator& operator++() {
      at_ = p_.kind == packet::invalid ? s_.size() : at_ + 1 + p_.count;
      if (at_ < s_.size()) p_ = decode_at(s_, at_);
      return *this;
    }
    constexpr bool operator==(const iterator& o) const { return at_ == o.at_; }

   private:
    std::span<const std::uint32_t> s_;
    std::size_t at_;
    packet p_{};
  };
  constexpr iterator begin() const { return {s_, 0}; }
  constexpr iterator end() const { return {s_, s_.size()}; }

 private:
  std::span<const std::uint32_t> s_;
};

}  // namespace uopcg::kgsl::pm4
