// Qualcomm program binary parser (kgsl.md §10.2) and derived values (§9.6).
#include <doctest/doctest.h>

#include <string>

#include "kgsl/blob_builder.hpp"
#include "uopcg/runtime/kgsl/dispatch.hpp"
#include "uopcg/runtime/kgsl/program.hpp"

using namespace uopcg::kgsl;
using namespace uopcg::kgsl::testing;

namespace {
std::string parse_error(const blob_spec& s) {
  try {
    (void)parse_program(build_blob(s));
  } catch (const uopcg::error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("parses the fields, arguments and immediates of a synthetic blob") {
  blob_spec s;
  s.name = "r_64_16";
  s.code.assign(300, 0x5A);
  s.fregs = 7;
  s.hregs = 3;
  s.entry = 64;
  s.pvtmem = 100;
  s.shmem = 4096;
  s.samplers = 1;
  s.branchstack_x2 = 6;
  s.args = {{0x50, 0}, {0x54, 2}, {0x58, 1}, {0x5C, 0}};
  s.imms = {{0x3F800000, 0x30, 1}, {0x1234, 0x101, 0}};
  const auto blob = build_blob(s);
  const program_info p = parse_program(blob);
  CHECK(p.name == "r_64_16");
  CHECK(p.image_size() == 300u);
  CHECK(p.image[0] == std::byte{0x5A});
  CHECK(p.fregs == 7u);
  CHECK(p.hregs == 3u);
  CHECK(p.entry_offset == 64u);
  CHECK(p.pvtmem == 100u);
  CHECK(p.shmem == 4096u);
  CHECK(p.samplers == 1u);
  CHECK(p.branchstack == 3u);
  REQUIRE(p.args.size() == 4);
  CHECK(p.args[0].kind == arg_kind::value);
  CHECK(p.args[0].const_offset == 0x140u);
  CHECK(p.args[1].kind == arg_kind::image);
  CHECK(p.args[2].kind == arg_kind::texture);
  CHECK(p.args[3].const_offset == 0x170u);
  CHECK(p.ntex() == 1u);
  CHECK(p.nibo() == 1u);
  REQUIRE(p.immediates.size() == 2);
  CHECK(p.immediates[0].value == 0x3F800000u);
  CHECK(p.immediates[0].size == 4u);
  CHECK(p.immediates[0].const_offset == 0xC0u);
  CHECK(p.immediates[1].size == 2u);
  CHECK(p.immediates[1].const_offset == 0x202u);
  // The uint8_t overload reads the same.
  std::vector<std::uint8_t> u8(blob.size());
  std::memcpy(u8.data(), blob.data(), blob.size());
  CHECK(parse_program(std::span<const std::uint8_t>(u8)).name == "r_64_16");
}

TEST_CASE("names of every length keep the argument records aligned") {
  for (std::string name : {"k", "ab", "abc", "abcd", "abcde", "r_16_16_4"}) {
    CAPTURE(name);
    blob_spec s = add_kernel_spec();
    s.name = name;
    const auto blob = build_blob(s);
    for (const std::string_view given : {std::string_view{}, std::string_view{name}}) {
      const program_info p = parse_program(blob, given);
      CHECK(p.name == name);
      REQUIRE(p.args.size() == 4);
      CHECK(p.args[2].const_offset == 0x160u);
    }
  }
  CHECK_THROWS_WITH_AS((void)parse_program(build_blob(add_kernel_spec()), "E_mul"), doctest::Contains("expected name 'E_mul'"),
                       uopcg::error);
}

TEST_CASE("malformed or unsupported blobs are refused with a clear error") {
  CHECK(parse_error(add_kernel_spec()).empty());
  {
    blob_spec s = add_kernel_spec();
    s.samplers = 2;
    CHECK(parse_error(s).find("more than one sampler") != std::string::npos);
  }
  {
    blob_spec s = add_kernel_spec();
    s.sections = 5;
    CHECK(parse_error(s).find("section count") != std::string::npos);
  }
  {
    blob_spec s = add_kernel_spec();
    s.arg_record_length = 16;
    CHECK(parse_error(s).find("has length 16") != std::string::npos);
  }
  {
    blob_spec s = add_kernel_spec();
    s.args[1].type = 7;
    CHECK(parse_error(s).find("argument record type") != std::string::npos);
  }
  {
    blob_spec s = add_kernel_spec();
    s.args[0].offset_words = 600;  // byte 2400: inside the descriptor tables
    CHECK(parse_error(s).find("beyond the 2048-byte argument area") != std::string::npos);
  }
  {
    blob_spec s = add_kernel_spec();
    s.fregs = 64;
    CHECK(parse_error(s).find("program.fregs") != std::string::npos);
  }
  {
    blob_spec s = add_kernel_spec();
    s.code.clear();
    CHECK(parse_error(s).find("is zero") != std::string::npos);
  }
  {
    blob_spec s = add_kernel_spec();
    s.imms = {{1, 1000, 1}};  // 4000 bytes
    CHECK(parse_error(s).find("immediate offset") != std::string::npos);
  }
  auto blob = build_blob(add_kernel_spec());
  // Truncations at every length never read out of bounds; all are refused.
  for (std::size_t n : {std::size_t{0}, std::size_t{0x10}, std::size_t{0x100}, std::size_t{0x300}, std::size_t{0x470},
                        blob.size() - 1}) {
    CAPTURE(n);
    std::string msg;
    try {
      (void)parse_program(std::span<const std::byte>(blob.data(), n));
    } catch (const uopcg::error& e) {
      msg = e.what();
    }
    CHECK(msg.find("malformed Qualcomm program binary") != std::string::npos);
  }
  // Machine code pointing past the end.
  auto b2 = blob;
  put32(b2, 0x100, 0x100000);
  CHECK_THROWS_WITH_AS(parse_program(b2), doctest::Contains("machine code"), uopcg::error);
  // Unterminated name.
  std::vector<std::byte> b3(blob.begin(), blob.begin() + 0x300 + 0x158 + 3);
  put32(b3, 0xC0, 0x200);  // keep the machine code inside the truncated blob
  put32(b3, 0x100, 0x40);
  CHECK_THROWS_WITH_AS(parse_program(b3), doctest::Contains("not NUL-terminated"), uopcg::error);
}

TEST_CASE("derived values of kgsl.md 9.6") {
  blob_spec s = add_kernel_spec();
  program_info p = parse_program(build_blob(s));
  const chip_traits& a630 = chip_traits_of({0x06030001});
  program_layout l = layout_of(p, a630);
  CHECK(l.instr_units == 3u);  // 384 bytes
  CHECK(l.preload_units == 3u);
  CHECK(l.memsizeperitem == 0u);
  CHECK(l.totalpvtmemsize == 0u);
  CHECK(l.hw_stack_offset == 4096u);
  CHECK(l.stack_bytes == 16384u);
  CHECK(l.shared_size == 1u);
  CHECK(l.max_threads == 1024u);
  CHECK(l.kernarg_size == 2048u);
  CHECK(l.cs_cntl_0 == 0x180u);  // fregs 3 (kgsl.md example)
  CHECK(l.cs_cntl_1 == 0x41u);

  s.pvtmem = 700;
  s.shmem = 4097;
  s.fregs = 20;
  s.hregs = 3;
  s.branchstack_x2 = 4;
  s.samplers = 1;
  s.args = {{0x50, 0}, {0x54, 1}, {0x58, 2}};
  s.code.assign(129, 0);
  s.code.resize(132);
  p = parse_program(build_blob(s));
  l = layout_of(p, a630);
  CHECK(l.instr_units == 2u);
  CHECK(l.memsizeperitem == 2u);
  CHECK(l.totalpvtmemsize == 512u);  // 1024 B per fiber * 2048 fibers, in 4 KiB units
  CHECK(l.hw_stack_offset == 1024u * 128 * 16);
  CHECK(l.shared_size == 4u);
  CHECK(l.max_threads == 512u);  // 12288 / (22 * 128) = 4 -> 512
  CHECK(l.sampler_slots == 2u);
  CHECK(l.ibo_off == 2048u);
  CHECK(l.tex_off == 2112u);
  CHECK(l.samp_off == 2176u);
  CHECK(l.kernarg_size == 2304u);  // round_up(2048 + 128 + 32, 256)
  CHECK(l.cs_cntl_0 == ((3u << 1) | (20u << 7) | (2u << 14)));
}
