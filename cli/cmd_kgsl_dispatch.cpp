// `uopcg kgsl-dispatch`: the register writes of one KGSL dispatch of a synthetic program on an A630,
// so the private-memory and shader-preload encodings can be read off without a device:
//   reg NAME 0xADDRESS 0xVALUE   one line per register write, in the order the stream writes them
//   preload_units N              NUM_UNIT of the shader's CP_LOAD_STATE6 (the instruction-cache cap)
// The program has `--image-size` bytes of machine code and `--pvtmem` private bytes per work-item; its
// one work-group of 64 items and the GPU addresses are fixed, so only those two inputs vary the output.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "uopcg/core/error.hpp"
#include "uopcg/runtime/kgsl/chip.hpp"
#include "uopcg/runtime/kgsl/dispatch.hpp"
#include "uopcg/runtime/kgsl/pm4.hpp"

namespace {

namespace kg = uopcg::kgsl;

constexpr const char* usage_text =
    "usage: uopcg kgsl-dispatch --pvtmem BYTES --image-size BYTES [--encoding freedreno|tinygrad]\n"
    "Prints the register writes of one A630 dispatch of a synthetic program with BYTES of machine code\n"
    "(a multiple of 4) and --pvtmem private bytes per work-item:\n"
    "  reg NAME 0xADDRESS 0xVALUE\n"
    "  preload_units N\n"
    "--encoding: the register encoding (default freedreno; tinygrad writes its raw values).\n";

std::uint32_t parse_bytes(std::string_view opt, const char* v) {
  if (!v) uopcg::fail_runtime(std::string(opt) + " needs a value");
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*v == '\0' || *v == '-' || *end != '\0' || errno == ERANGE || n > 0xFFFFFFFFull)
    uopcg::fail_runtime(std::string(opt) + ": expected a byte count (0 .. 4294967295), got '" + v + "'");
  return static_cast<std::uint32_t>(n);
}

// Fixed GPU addresses of the synthetic launch (page-aligned, above 4 GiB so both halves show).
constexpr std::uint64_t kernargs_at = 0x100000000, shader_at = 0x100010000, stack_at = 0x101000000,
                        dummy_at = 0x100000F00;

}  // namespace

int uopcg_cmd_kgsl_dispatch(int argc, char** argv) {
  std::optional<std::uint32_t> pvtmem, image_size;
  kg::dispatch_options opts;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--help" || a == "-h") {
      std::fputs(usage_text, stdout);
      return 0;
    } else if (a == "--pvtmem") {
      pvtmem = parse_bytes(a, value);
      ++i;
    } else if (a == "--image-size") {
      image_size = parse_bytes(a, value);
      ++i;
    } else if (a == "--encoding") {
      const std::string_view e = value ? value : "";
      if (e == "freedreno") opts.encoding = kg::register_encoding::freedreno;
      else if (e == "tinygrad") opts.encoding = kg::register_encoding::tinygrad;
      else uopcg::fail_runtime("--encoding: expected freedreno or tinygrad, got '" + std::string(e) + "'");
      ++i;
    } else {
      std::fprintf(stderr, "uopcg kgsl-dispatch: unexpected argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  if (!pvtmem || !image_size) uopcg::fail_runtime("--pvtmem and --image-size are required (try --help)");
  if (*image_size == 0 || *image_size % 4 != 0)
    uopcg::fail_runtime("--image-size: " + std::to_string(*image_size) + " bytes of machine code is not a positive multiple of 4");

  kg::program_info p;
  p.name = "synthetic";
  p.image.assign(*image_size, std::byte{0});
  p.pvtmem = *pvtmem;
  p.fregs = 3;
  const kg::program_layout l = kg::layout_of(p, kg::chip_traits_of({0x06030001}));
  const kg::geometry_regs g = kg::geometry_of(p, l, {{64, 1, 1}, {64, 1, 1}});
  std::vector<std::uint32_t> dwords(kg::max_dispatch_dwords);
  kg::pm4::writer w(dwords);
  kg::emit_dispatch(w, p, l, {kernargs_at, shader_at, stack_at, 0}, g, dummy_at, opts);
  dwords.resize(w.size());

  std::optional<std::uint32_t> preload;
  for (const auto& pk : kg::pm4::packets(dwords)) {
    if (pk.kind == kg::pm4::packet::type4_regs) {
      for (std::uint32_t i = 0; i < pk.count; ++i) {
        const std::uint32_t r = pk.reg + i;
        const char* name = kg::pm4::reg::name(r);
        std::printf("reg %s 0x%04X 0x%08X\n", name ? name : "UNKNOWN", r, pk.payload[i]);
      }
    } else if (pk.kind == kg::pm4::packet::type7_op && pk.opcode == kg::pm4::CP_LOAD_STATE6_FRAG) {
      const auto f = kg::pm4::decode_load_state6(pk.payload[0]);
      if (f.type == static_cast<std::uint32_t>(kg::pm4::state_type::shader) && f.block == kg::pm4::SB6_CS_SHADER)
        preload = f.num_unit;
    }
  }
  if (!preload) uopcg::fail_runtime("the dispatch stream has no shader load");
  std::printf("preload_units %u\n", *preload);
  return std::fflush(stdout) == 0 ? 0 : 1;
}
