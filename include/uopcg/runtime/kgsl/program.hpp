// Parser of Qualcomm "program library" blobs (what clGetProgramInfo(CL_PROGRAM_BINARIES) or
// libllvm-qcom return), following the fixed offsets tinygrad/runtime/ops_qcom.py reads: machine code, register
// footprint, private/shared memory, branch stack, argument slots in the constant file and the
// immediate constants the driver must pre-load. Every offset is bounds-checked; a malformed blob is
// a uopcg::error naming the field and offset, never an out-of-bounds read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../../core/error.hpp"

namespace uopcg::kgsl {

/// What a kernel parameter is, as recorded in the blob (argument record `type`).
enum class arg_kind : std::uint32_t {
  value = 0,    // buffer pointer or scalar, stored in the constant file
  texture = 1,  // read-only image: a texture descriptor
  image = 2,    // writable image: an IBO/UAV descriptor
};

struct program_arg {
  arg_kind kind;
  std::uint32_t const_offset;  // byte offset in the constant file (value kinds)
};

/// A constant the compiler expects the driver to store before every launch.
struct program_immediate {
  std::uint32_t value;
  std::uint32_t const_offset;  // byte offset in the constant file
  std::uint32_t size;          // 2 or 4 bytes
};

struct program_info {
  std::string name;
  std::vector<std::byte> image;  // machine code, copied verbatim into GPU memory
  std::uint32_t image_offset = 0;
  std::uint32_t fregs = 0;        // full-precision register footprint
  std::uint32_t hregs = 0;        // half-precision register footprint
  std::uint32_t entry_offset = 0; // -> SP_CS_PROGRAM_COUNTER_OFFSET
  std::uint32_t pvtmem = 0;       // private bytes per work-item
  std::uint32_t shmem = 0;        // local (shared) bytes per work-group
  std::uint32_t samplers = 0;     // 0 or 1
  std::uint32_t branchstack = 0;
  std::vector<program_arg> args;  // in kernel-parameter order
  std::vector<program_immediate> immediates;

  std::uint32_t image_size() const { return static_cast<std::uint32_t>(image.size()); }
  std::uint32_t count(arg_kind k) const {
    std::uint32_t n = 0;
    for (const auto& a : args) n += a.kind == k;
    return n;
  }
  std::uint32_t ntex() const { return count(arg_kind::texture); }
  std::uint32_t nibo() const { return count(arg_kind::image); }
};

/// Where the parser reads (absolute file offsets of u32 little-endian values; tinygrad/runtime/ops_qcom.py, QCOMProgram).
namespace blob_layout {
inline constexpr std::uint32_t section_count = 0x18;
inline constexpr std::uint32_t section_table = 0x30;
inline constexpr std::uint32_t section_record = 20;
inline constexpr std::uint32_t min_sections = 12;         // slot 11 (IMAGE_DESC) is used
inline constexpr std::uint32_t program_offset = 0x34;     // slot 0 offset
inline constexpr std::uint32_t consts_offset = 0xAC;      // slot 6 offset
inline constexpr std::uint32_t consts_size = 0xB0;        // slot 6 size
inline constexpr std::uint32_t image_offset = 0xC0;       // slot 7 offset
inline constexpr std::uint32_t image_size = 0x100;        // slot 10 size
inline constexpr std::uint32_t desc_offset = 0x110;       // slot 11 offset
inline constexpr std::uint32_t prog_fregs = 0x14, prog_hregs = 0x18;
inline constexpr std::uint32_t desc_entry = 0xC4, desc_pvtmem = 0xC8, desc_shmem = 0xD8, desc_samplers = 0xDC;
inline constexpr std::uint32_t desc_branchstack = 0x108, desc_name = 0x158;
inline constexpr std::uint32_t arg_record_min = 32;
inline constexpr std::uint32_t imm_record = 40;
inline constexpr std::uint32_t descriptor_tables = 2048;  // constant-file bytes below this hold arguments
}  // namespace blob_layout

namespace detail {

class blob_reader {
 public:
  explicit blob_reader(std::span<const std::byte> b) : b_(b) {}
  std::size_t size() const { return b_.size(); }
  bool fits(std::uint64_t off, std::uint64_t len) const { return off <= b_.size() && len <= b_.size() - off; }
  std::uint32_t u32(std::uint64_t off, const char* what) const {
    if (!fits(off, 4)) bad(what, off, "reads past the end");
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint32_t>(b_[off + static_cast<std::size_t>(i)]);
    return v;
  }
  [[noreturn]] void bad(const char* what, std::uint64_t off, const char* problem) const {
    fail_runtime("malformed Qualcomm program binary (" + std::to_string(b_.size()) + " bytes): " + what +
                 " at offset " + hex(off) + " " + problem);
  }
  static std::string hex(std::uint64_t v) {
    static constexpr char d[] = "0123456789abcdef";
    std::string s;
    do s.insert(s.begin(), d[v & 0xF]); while (v >>= 4);
    return "0x" + s;
  }
  std::span<const std::byte> bytes() const { return b_; }

 private:
  std::span<const std::byte> b_;
};

}  // namespace detail

/// Parses a Qualcomm program blob. Throws uopcg::error on malformed or unsupported input.
///
/// `kernel_name` should be the kernel's function name when the caller knows it (uopcg programs do):
/// the argument records start at the name's end rounded up to 4 bytes, so a name whose length is a
/// multiple of 4 has no terminator in the blob (tinygrad likewise uses the known name's length).
/// Without it the name is recovered by scanning; see below.
inline program_info parse_program(std::span<const std::byte> blob, std::string_view kernel_name = {}) {
  namespace L = blob_layout;
  const detail::blob_reader r(blob);
  program_info p;

  const std::uint32_t nsect = r.u32(L::section_count, "section count");
  if (nsect < L::min_sections) r.bad("section count", L::section_count, ("is " + std::to_string(nsect) + ", need at least 12").c_str());
  if (!r.fits(L::section_table, std::uint64_t{nsect} * L::section_record))
    r.bad("section table", L::section_table, ("with " + std::to_string(nsect) + " records runs past the end").c_str());

  const std::uint32_t prog = r.u32(L::program_offset, "program record offset (section 0)");
  p.fregs = r.u32(std::uint64_t{prog} + L::prog_fregs, "program.fregs");
  p.hregs = r.u32(std::uint64_t{prog} + L::prog_hregs, "program.hregs");

  p.image_offset = r.u32(L::image_offset, "machine code offset (section 7)");
  const std::uint32_t image_size = r.u32(L::image_size, "machine code size (section 10)");
  if (image_size == 0) r.bad("machine code size (section 10)", L::image_size, "is zero");
  if (image_size % 4 != 0) r.bad("machine code size (section 10)", L::image_size, "is not a multiple of 4");
  if (!r.fits(p.image_offset, image_size))
    r.bad("machine code", p.image_offset, ("of " + std::to_string(image_size) + " bytes runs past the end").c_str());
  p.image.assign(blob.begin() + p.image_offset, blob.begin() + p.image_offset + image_size);

  const std::uint32_t desc = r.u32(L::desc_offset, "kernel descriptor offset (section 11)");
  p.entry_offset = r.u32(std::uint64_t{desc} + L::desc_entry, "descriptor.entry_offset");
  p.pvtmem = r.u32(std::uint64_t{desc} + L::desc_pvtmem, "descriptor.pvtmem");
  p.shmem = r.u32(std::uint64_t{desc} + L::desc_shmem, "descriptor.shmem");
  p.samplers = r.u32(std::uint64_t{desc} + L::desc_samplers, "descriptor.sampler_count");
  p.branchstack = r.u32(std::uint64_t{desc} + L::desc_branchstack, "descriptor.branch_stack") / 2;

  // Register fields are 6 bits wide in SP_CS_CNTL_0; larger values cannot be encoded.
  if (p.fregs > 63) r.bad("program.fregs", std::uint64_t{prog} + L::prog_fregs, ("is " + std::to_string(p.fregs) + " (> 63)").c_str());
  if (p.hregs > 63) r.bad("program.hregs", std::uint64_t{prog} + L::prog_hregs, ("is " + std::to_string(p.hregs) + " (> 63)").c_str());
  if (p.branchstack > 63)
    r.bad("descriptor.branch_stack", std::uint64_t{desc} + L::desc_branchstack, "is larger than 126");
  if (p.samplers > 1)
    r.bad("descriptor.sampler_count", std::uint64_t{desc} + L::desc_samplers,
          ("is " + std::to_string(p.samplers) + "; kernels with more than one sampler are not supported").c_str());
  if (p.shmem > 0x8000) r.bad("descriptor.shmem", std::uint64_t{desc} + L::desc_shmem, "exceeds 32 KiB of local memory");

  // Kernel name, padded with NULs to 4 bytes (no terminator when its length is a multiple of 4).
  const std::uint64_t name_at = std::uint64_t{desc} + L::desc_name;
  if (!r.fits(name_at, 1)) r.bad("kernel name", name_at, "is past the end");
  if (!kernel_name.empty()) {
    if (!r.fits(name_at, kernel_name.size()) ||
        std::memcmp(blob.data() + name_at, kernel_name.data(), kernel_name.size()) != 0)
      r.bad("kernel name", name_at, ("does not match the expected name '" + std::string(kernel_name) + "'").c_str());
    p.name = kernel_name;
  } else {
    std::uint64_t end = name_at;
    while (end < blob.size() && blob[end] != std::byte{0}) ++end;
    if (end == blob.size()) r.bad("kernel name", name_at, "is not NUL-terminated");
    p.name.assign(reinterpret_cast<const char*>(blob.data()) + name_at, end - name_at);
    // An unterminated 4k-byte name runs into the low byte of the first record's length; that byte
    // (a length >= 32) is not an identifier character unless the length happens to be one.
    auto ident = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    };
    if (p.name.size() % 4 == 1 && !ident(p.name.back())) p.name.pop_back();
  }

  // Argument records, in parameter order, after the (4-aligned) name and the sampler words.
  std::uint64_t off = ((name_at + p.name.size() + 3) & ~std::uint64_t{3}) + 8ull * p.samplers;
  while (r.fits(off, L::arg_record_min)) {
    const std::uint32_t length = r.u32(off, "argument record length");
    if (length == 0) break;
    if (length < L::arg_record_min)
      r.bad("argument record", off, ("has length " + std::to_string(length) + " (< 32)").c_str());
    const std::uint32_t offset_words = r.u32(off + 12, "argument record offset");
    const std::uint32_t type = r.u32(off + 28, "argument record type");
    if (type > 2) r.bad("argument record type", off + 28, ("is " + std::to_string(type) + " (not 0, 1 or 2)").c_str());
    program_arg a{static_cast<arg_kind>(type), offset_words * 4};
    // A value argument holds up to 8 bytes and must stay below the descriptor tables.
    if (a.kind == arg_kind::value && (offset_words > L::descriptor_tables / 4 || a.const_offset + 8 > L::descriptor_tables))
      r.bad("argument record offset", off + 12,
            ("places argument " + std::to_string(p.args.size()) + " at constant byte " +
             std::to_string(std::uint64_t{offset_words} * 4) + ", beyond the 2048-byte argument area")
                .c_str());
    p.args.push_back(a);
    off += length;
  }

  // Immediate constants, 40-byte records between the CONSTS section and the machine code.
  if (r.u32(L::consts_size, "immediate constants size (section 6)") != 0) {
    std::uint64_t rec = r.u32(L::consts_offset, "immediate constants offset (section 6)");
    while (rec + L::imm_record <= p.image_offset) {
      const std::uint32_t value = r.u32(rec, "immediate value");
      const std::uint32_t units = r.u32(rec + 16, "immediate offset");
      const std::uint32_t size = r.u32(rec + 24, "immediate width") == 0 ? 2 : 4;
      const std::uint64_t at = std::uint64_t{units} * size;
      if (at + size > L::descriptor_tables)
        r.bad("immediate offset", rec + 16, ("places a constant at byte " + std::to_string(at) + ", beyond 2048").c_str());
      p.immediates.push_back({value, static_cast<std::uint32_t>(at), size});
      rec += L::imm_record;
    }
  }
  return p;
}

inline program_info parse_program(std::span<const std::uint8_t> blob, std::string_view kernel_name = {}) {
  return parse_program(std::as_bytes(blob), kernel_name);
}

}  // namespace uopcg::kgsl
