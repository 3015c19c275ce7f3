// Builds synthetic Qualcomm program blobs with the layout kgsl.md §10.2 describes (header, section
// table, program record, kernel descriptor with name, argument records, immediate-constant records,
// machine code), so the parser and the launcher can be tested without the vendor compiler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace uopcg::kgsl::testing {

struct blob_spec {
  struct arg {
    std::uint32_t offset_words;  // constant-file position in dwords
    std::uint32_t type = 0;      // 0 value, 1 texture, 2 writable image
  };
  struct imm {
    std::uint32_t value, offset_units, is32;
  };
  std::string name = "kernel";
  std::vector<std::uint8_t> code = std::vector<std::uint8_t>(256, 0xC3);
  std::uint32_t fregs = 3, hregs = 0, entry = 0, pvtmem = 0, shmem = 0, samplers = 0, branchstack_x2 = 0;
  std::vector<arg> args;
  std::vector<imm> imms;
  std::uint32_t sections = 12;
  std::uint32_t arg_record_length = 32;  // to build malformed blobs
};

inline void put32(std::vector<std::byte>& b, std::size_t at, std::uint32_t v) {
  if (b.size() < at + 4) b.resize(at + 4);
  for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = std::byte(static_cast<std::uint8_t>(v >> (8 * i)));
}

inline std::vector<std::byte> build_blob(const blob_spec& s) {
  std::vector<std::byte> b(0x200);
  const std::uint32_t prog = 0x200, desc = 0x300;
  put32(b, 0x18, s.sections);
  auto section = [&](std::uint32_t slot, std::uint32_t off, std::uint32_t size) {
    const std::size_t r = 0x30 + 20 * std::size_t{slot};
    put32(b, r + 0, slot);
    put32(b, r + 4, off);
    put32(b, r + 8, size);
    put32(b, r + 12, 1);
    put32(b, r + 16, 0);
  };
  put32(b, prog + 0x14, s.fregs);
  put32(b, prog + 0x18, s.hregs);
  put32(b, prog + 0x3C, 0);
  put32(b, desc + 0xC4, s.entry);
  put32(b, desc + 0xC8, s.pvtmem);
  put32(b, desc + 0xD8, s.shmem);
  put32(b, desc + 0xDC, s.samplers);
  put32(b, desc + 0x108, s.branchstack_x2);
  std::size_t at = desc + 0x158;
  for (char c : s.name) b.resize(std::max(b.size(), at + 1)), b[at++] = std::byte(static_cast<unsigned char>(c));
  b.resize(std::max(b.size(), at + 1));
  b[at] = std::byte{0};
  at = (desc + 0x158 + s.name.size() + 3) / 4 * 4 + 8 * std::size_t{s.samplers};
  b.resize(std::max(b.size(), at));
  for (const auto& a : s.args) {
    put32(b, at + 0, s.arg_record_length);
    put32(b, at + 4, 0);
    put32(b, at + 8, 0);
    put32(b, at + 12, a.offset_words);
    put32(b, at + 16, 0);
    put32(b, at + 20, 0);
    put32(b, at + 24, 0);
    put32(b, at + 28, a.type);
    at += s.arg_record_length;
  }
  for (int i = 0; i < 8; ++i) put32(b, at + 4 * static_cast<std::size_t>(i), 0);  // terminator: length 0
  at += 32;
  const std::uint32_t consts = static_cast<std::uint32_t>(at);
  for (const auto& im : s.imms) {
    for (int i = 0; i < 10; ++i) put32(b, at + 4 * static_cast<std::size_t>(i), 0);
    put32(b, at + 0, im.value);
    put32(b, at + 16, im.offset_units);
    put32(b, at + 24, im.is32);
    at += 40;
  }
  const std::uint32_t image = static_cast<std::uint32_t>(at);
  b.resize(at + s.code.size());
  for (std::size_t i = 0; i < s.code.size(); ++i) b[at + i] = std::byte(s.code[i]);
  for (std::uint32_t slot = 0; slot < 12; ++slot) section(slot, 0, 0);
  section(0, prog, 0x40);
  section(6, consts, static_cast<std::uint32_t>(40 * s.imms.size()));
  section(7, image, static_cast<std::uint32_t>(s.code.size()));
  section(10, image, static_cast<std::uint32_t>(s.code.size()));
  section(11, desc, 0x158);
  return b;
}

/// A vector-add style kernel: three buffers at c20, c21, c22 (bytes 0x140, 0x150, 0x160) and an int
/// scalar at c23, like Qualcomm's compiler lays them out.
inline blob_spec add_kernel_spec(std::uint8_t code_tag = 0xA1) {
  blob_spec s;
  s.name = "E_add";
  s.code.assign(384, code_tag);
  s.args = {{0x50, 0}, {0x54, 0}, {0x58, 0}, {0x5C, 0}};
  return s;
}

}  // namespace uopcg::kgsl::testing
