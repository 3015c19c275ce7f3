// A6xx compute dispatch: per-program derived values (tinygrad/runtime/ops_qcom.py, QCOMProgram), the kernel-argument block
// (§11, image descriptors §9.5) and the PM4 sequence of one launch (§9.1, §9.2). Pure functions over
// caller-provided memory: no syscalls, so tests check the exact dwords without a driver.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/error.hpp"
#include "chip.hpp"
#include "pm4.hpp"
#include "program.hpp"

namespace uopcg::kgsl {

struct dims3 {
  std::uint32_t x = 1, y = 1, z = 1;
  constexpr std::uint32_t operator[](int i) const { return i == 0 ? x : i == 1 ? y : z; }
  constexpr bool operator==(const dims3&) const = default;
};

/// A launch size: `global` counts work-items per dimension (OpenCL's global size), `local` the
/// work-group size. uopcg/tinygrad programs carry the number of work-groups; use from_groups().
struct launch_dims {
  dims3 global;
  dims3 local;
  static constexpr launch_dims from_groups(dims3 groups, dims3 local) {
    return {{groups.x * local.x, groups.y * local.y, groups.z * local.z}, local};
  }
};

/// How the dispatch is kicked off. CP_RUN_OPENCL is what Qualcomm's own CL driver emits for its
/// compiler's kernels (and what tinygrad runs on A630); CP_EXEC_CS is freedreno's compute kick,
/// which takes the group counts in the packet. Both read the same SP_CS_* state.
enum class kick_packet : std::uint8_t { run_opencl, exec_cs };

/// Encoding of the two register fields where tinygrad and freedreno disagree (docs/kgsl.md).
/// freedreno's register database (a6xx.xml) declares SP_CS_CONST_CONFIG.CONSTLEN as vec4 >> 2 and
/// SP_CS_PVT_MEM_STACK_OFFSET as bytes >> 11; tinygrad writes the raw numbers, which overflows
/// CONSTLEN (256 in an 8-bit field leaves only the ENABLED bit). The register database is the
/// documented hardware contract, so it is the default; `tinygrad` reproduces the dwords tinygrad
/// sends, for side-by-side debugging on a device. SP_CS_PVT_MEM_SIZE is the same in both: tinygrad's
/// memsizeperitem * 128 * 2 already is the per-SP bytes >> 12 that the database asks for.
enum class register_encoding : std::uint8_t { freedreno, tinygrad };

struct dispatch_options {
  kick_packet kick = kick_packet::run_opencl;
  register_encoding encoding = register_encoding::freedreno;
  /// Preload at most the instruction cache (program_layout::preload_units), as turnip does. false
  /// preloads the whole shader, as tinygrad does: only for comparing streams with tinygrad's, since
  /// a shader larger than the cache may then hang the GPU.
  bool cap_preload = true;
};

/// Values derived from a parsed program and the chip (§9.6) and the layout of its kernel-argument
/// block (§11).
struct program_layout {
  std::uint32_t instr_units = 0;      // ceil(image_size / 128): SP_CS_INSTR_SIZE
  std::uint32_t preload_units = 0;    // shader units the CP_LOAD_STATE6 preloads (the rest is fetched on demand)
  std::uint32_t memsizeperitem = 0;   // SP_CS_PVT_MEM_PARAM: private bytes per fiber >> 9
  std::uint32_t totalpvtmemsize = 0;  // SP_CS_PVT_MEM_SIZE: private bytes per shader processor >> 12
  std::uint32_t hw_stack_offset = 0;  // bytes
  std::uint32_t stack_bytes = 0;      // private stack buffer the launch needs (4 * hw_stack_offset)
  std::uint32_t shared_size = 0;      // SP_CS_CNTL_1.SHARED_SIZE
  std::uint32_t max_threads = 0;      // largest work-group the register footprint allows
  std::uint32_t ntex = 0, nibo = 0;
  std::uint32_t sampler_slots = 0;    // 2 when the kernel samples (the real one plus a zero sampler)
  std::uint32_t ibo_off = 2048, tex_off = 2048, samp_off = 2048;  // byte offsets in the block
  std::uint32_t kernarg_size = 0;     // bytes of the block (the constant load itself reads 4096)
  std::uint32_t cs_cntl_0 = 0, cs_cntl_1 = 0;
};

inline constexpr std::uint32_t constant_file_bytes = 4096;  // 256 vec4 loaded from the kernarg block
inline constexpr std::uint32_t max_shader_units = 0x3FF;    // larger shaders are refused: NUM_UNIT's range, never run beyond

constexpr std::uint32_t round_up(std::uint32_t v, std::uint32_t a) { return (v + a - 1) / a * a; }

// The largest private stack layout_of computes (four 128 KiB-per-fiber shares) fits its 32-bit sizes
// on every chip of the table.
static_assert([] {
  for (const chip_traits& c : known_chips)
    if (4ull * 0x20000 * c.fibers_per_sp > 0xFFFFFFFFull) return false;
  return true;
}());

/// The §9.6 values of program `p` on chip `c`. Private memory follows freedreno's layout: each fiber
/// gets round_up(pvtmem, 512) bytes and each shader processor all its fibers' shares, in 4 KiB units;
/// on A630 that is tinygrad's memsizeperitem * 128 * 2. The shader preload stops at the instruction
/// cache, as turnip's and freedreno's compute paths do (the hardware fetches the rest on demand).
inline program_layout layout_of(const program_info& p, const chip_traits& c) {
  program_layout l;
  if (p.image.empty()) fail_runtime("KGSL program '" + p.name + "' has no machine code");
  l.instr_units = (p.image_size() + 127) / 128;
  if (l.instr_units > max_shader_units)
    fail_runtime("KGSL program '" + p.name + "' has " + std::to_string(p.image_size()) +
                 " bytes of machine code; at most 130944 (1023 units of 128 bytes) are supported");
  l.preload_units = std::min(l.instr_units, c.instr_cache_units);
  if (p.pvtmem > 0x20000 || round_up(p.pvtmem, 512) >> 9 > 0xFF)
    fail_runtime("KGSL program '" + p.name + "' needs " + std::to_string(p.pvtmem) +
                 " bytes of private memory per item; the A6xx limit encodable here is 127.5 KiB");
  const std::uint32_t per_fiber = round_up(p.pvtmem, 512);
  l.memsizeperitem = per_fiber >> 9;
  l.totalpvtmemsize = round_up(per_fiber * c.fibers_per_sp, 4096) >> 12;
  // tinygrad's hw_stack_offset: a power-of-two share per fiber (1 byte when there is no private memory).
  const std::uint32_t pow2 = std::bit_ceil(std::max<std::uint32_t>(per_fiber, 1));
  l.hw_stack_offset = round_up(pow2 * c.fibers_per_sp, 4096);
  l.stack_bytes = 4 * l.hw_stack_offset;
  l.shared_size = p.shmem == 0 ? 1 : std::max<std::uint32_t>(1, (p.shmem - 1) / 1024);
  // 12288 = A630's register file (96 vec4, shared by all chips in chip.hpp's table) * 128.
  const std::uint32_t regs = std::max<std::uint32_t>(1, p.fregs + round_up(p.hregs, 2) / 2);
  l.max_threads = std::min<std::uint32_t>(1024, (12288 / (regs * 128)) * 128);
  l.ntex = p.ntex();
  l.nibo = p.nibo();
  if (l.ntex > 16) fail_runtime("KGSL program '" + p.name + "' reads " + std::to_string(l.ntex) + " images; at most 16 are supported");
  if (l.nibo > 32) fail_runtime("KGSL program '" + p.name + "' writes " + std::to_string(l.nibo) + " images; at most 32 are supported");
  l.sampler_slots = p.samplers ? 2 : 0;
  l.ibo_off = 2048;
  l.tex_off = 2048 + 64 * l.nibo;
  l.samp_off = 2048 + 64 * (l.nibo + l.ntex);
  l.kernarg_size = round_up(2048 + 64 * (l.ntex + l.nibo) + 4 * 4 * l.sampler_slots, 256);
  l.cs_cntl_0 = (p.hregs << 1) | (p.fregs << 7) | (p.branchstack << 14);  // THREAD64, no merged regs
  l.cs_cntl_1 = l.shared_size | (2u << 5);                                 // CONSTANTRAMMODE = 256 vec4
  return l;
}

// --- kernel arguments ----------------------------------------------------------------------------

enum class image_format : std::uint32_t { rgba_f32 = 130, rgba_f16 = 98 };  // FMT6_32_32_32_32_FLOAT, FMT6_16_16_16_16_FLOAT

/// A 2D RGBA image in GPU memory; pitch = width * 4 * element size, a multiple of 64 bytes.
struct image_view {
  std::uint64_t address = 0;
  std::uint32_t width = 0, height = 0;
  image_format format = image_format::rgba_f32;
};

/// One kernel argument, in the order of the program's parameters.
struct kernel_arg {
  enum class kind : std::uint8_t { buffer, scalar, image } k = kind::buffer;
  std::uint8_t size = 8;     // scalar width in bytes
  std::uint64_t bits = 0;    // buffer GPU address, or the scalar's bytes (little-endian)
  image_view img{};
};

constexpr kernel_arg buffer_arg(std::uint64_t gpu_address) { return {kernel_arg::kind::buffer, 8, gpu_address, {}}; }
template <class T>
  requires(std::is_arithmetic_v<T> && sizeof(T) <= 8)
constexpr kernel_arg scalar_arg(T v) {
  using U = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                               std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                                  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
  return {kernel_arg::kind::scalar, static_cast<std::uint8_t>(sizeof(T)), static_cast<std::uint64_t>(std::bit_cast<U>(v)), {}};
}
constexpr kernel_arg image_arg(image_view v) { return {kernel_arg::kind::image, 0, 0, v}; }

/// The 16-dword texture (read) or IBO (write) descriptor of an image (§9.5).
inline std::array<std::uint32_t, 16> image_descriptor(const image_view& v, bool writable) {
  const std::uint32_t elem = v.format == image_format::rgba_f32 ? 4 : 2;
  const std::uint64_t pitch = std::uint64_t{v.width} * 4 * elem;
  if (v.width == 0 || v.height == 0 || v.width > 0x7FFF || v.height > 0x7FFF)
    fail_runtime("KGSL image argument: size " + std::to_string(v.width) + "x" + std::to_string(v.height) +
                 " is outside 1..32767");
  if (pitch % 64 != 0)
    fail_runtime("KGSL image argument: row pitch " + std::to_string(pitch) + " bytes is not a multiple of 64");
  const auto fmt = static_cast<std::uint32_t>(v.format);
  std::array<std::uint32_t, 16> d{};
  d[0] = writable ? fmt << 22 : (0x00006888u | fmt << 22);  // swizzle xyzw for textures
  d[1] = v.width | v.height << 15;
  d[2] = (1u << 29) | static_cast<std::uint32_t>(pitch << 7) | static_cast<std::uint32_t>(std::countr_zero(pitch) - 6);
  d[4] = pm4::lo(v.address);
  d[5] = pm4::hi(v.address);
  d[6] = 0x40000000;
  d[7] = 13;
  return d;
}
/// Clamp-to-border, unnormalized coordinates, no seamless-cube filtering.
inline constexpr std::array<std::uint32_t, 4> sampler_words{0x1B60, 0x30, 0, 0};

/// Where argument i goes in the kernarg block, precomputed so a batch can patch one argument fast.
struct arg_slot {
  arg_kind kind;
  std::uint32_t offset;  // byte offset of the value or of the 64-byte descriptor
};

inline std::vector<arg_slot> arg_slots(const program_info& p, const program_layout& l) {
  std::vector<arg_slot> s;
  std::uint32_t ntex = 0, nibo = 0;
  for (const auto& a : p.args) {
    if (a.kind == arg_kind::value) s.push_back({a.kind, a.const_offset});
    else if (a.kind == arg_kind::texture) s.push_back({a.kind, l.tex_off + 64 * ntex++});
    else s.push_back({a.kind, l.ibo_off + 64 * nibo++});
  }
  return s;
}

namespace detail {
inline const char* kind_name(kernel_arg::kind k) {
  return k == kernel_arg::kind::buffer ? "buffer" : k == kernel_arg::kind::scalar ? "scalar" : "image";
}
inline const char* kind_name(arg_kind k) {
  return k == arg_kind::value ? "buffer/scalar" : k == arg_kind::texture ? "read-only image" : "writable image";
}
}  // namespace detail

/// Writes one argument into a kernarg block (checks that it fits the parameter's kind).
inline void write_arg(std::byte* block, const program_info& p, const arg_slot& slot, std::size_t index,
                      const kernel_arg& a) {
  const bool is_image = a.k == kernel_arg::kind::image;
  if (is_image != (slot.kind != arg_kind::value))
    fail_runtime("KGSL kernel '" + p.name + "': argument " + std::to_string(index) + " is a " +
                 detail::kind_name(a.k) + " but the parameter is a " + detail::kind_name(slot.kind));
  if (is_image) {
    const auto d = image_descriptor(a.img, slot.kind == arg_kind::image);
    std::memcpy(block + slot.offset, d.data(), sizeof d);
  } else {
    if (a.size != 1 && a.size != 2 && a.size != 4 && a.size != 8)
      fail_runtime("KGSL kernel '" + p.name + "': argument " + std::to_string(index) + " has width " +
                   std::to_string(a.size));
    // Little-endian store of the low `size` bytes (the constant file is little-endian, as is arm64).
    std::memcpy(block + slot.offset, &a.bits, a.size);
  }
}

/// Fills a whole kernarg block: zeroes, immediates, sampler words, then every argument (§11).
inline void fill_kernargs(std::byte* block, const program_info& p, const program_layout& l,
                          std::span<const arg_slot> slots, std::span<const kernel_arg> args) {
  if (args.size() != slots.size())
    fail_runtime("KGSL kernel '" + p.name + "' takes " + std::to_string(slots.size()) + " arguments, " +
                 std::to_string(args.size()) + " given");
  std::memset(block, 0, l.kernarg_size);
  for (const auto& im : p.immediates) {
    if (im.size == 4) std::memcpy(block + im.const_offset, &im.value, 4);
    else {
      const auto h = static_cast<std::uint16_t>(im.value);
      std::memcpy(block + im.const_offset, &h, 2);
    }
  }
  if (l.sampler_slots) std::memcpy(block + l.samp_off, sampler_words.data(), sizeof sampler_words);
  for (std::size_t i = 0; i < args.size(); ++i) write_arg(block, p, slots[i], i, args[i]);
}

// --- geometry ------------------------------------------------------------------------------------

struct geometry_regs {
  std::uint32_t ndrange0;
  std::array<std::uint32_t, 3> global;  // GLOBALSIZE_X/Y/Z
  std::array<std::uint32_t, 3> groups;  // SP_CS_KERNEL_GROUP_X/Y/Z
};

/// Checks a launch size against the program (refusals of §9.6) and computes the register values.
inline geometry_regs geometry_of(const program_info& p, const program_layout& l, const launch_dims& d) {
  geometry_regs g{};
  std::uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    const std::uint32_t loc = d.local[i], glob = d.global[i];
    if (loc == 0 || loc > 1024)
      fail_runtime("KGSL launch of '" + p.name + "': local size " + std::to_string(loc) + " in dimension " +
                   std::to_string(i) + " is outside 1..1024");
    if (glob == 0)
      fail_runtime("KGSL launch of '" + p.name + "': global size is 0 in dimension " + std::to_string(i));
    threads *= loc;
    g.global[static_cast<std::size_t>(i)] = glob;
    g.groups[static_cast<std::size_t>(i)] = glob / loc + (glob % loc != 0);
  }
  if (threads > l.max_threads)
    fail_runtime("KGSL launch of '" + p.name + "': too many resources: a work-group of " + std::to_string(threads) +
                 " threads exceeds the " + std::to_string(l.max_threads) + " this kernel's " +
                 std::to_string(p.fregs) + " full / " + std::to_string(p.hregs) + " half registers allow");
  g.ndrange0 = 3u | (d.local.x - 1) << 2 | (d.local.y - 1) << 12 | (d.local.z - 1) << 22;
  return g;
}

// --- the launch stream ---------------------------------------------------------------------------

/// GPU addresses one dispatch refers to.
struct dispatch_addrs {
  std::uint64_t kernargs = 0;      // K: the kernarg block (4096 bytes readable)
  std::uint64_t shader = 0;        // S: machine code
  std::uint64_t stack = 0;         // P: private stack
  std::uint64_t border_color = 0;  // only read when the program samples
};

/// Dword indices (into the stream) of the fields a batch patches in place.
struct dispatch_patch {
  std::size_t ndrange = 0;  // 12-dword burst at SP_CS_NDRANGE_0
  std::size_t cs_cntl = 0;  // 10-dword burst at SP_CS_CNTL_0 (private stack address at +7, +8)
  std::size_t exec_cs = 0;  // CP_EXEC_CS payload (0 when the kick is CP_RUN_OPENCL)
};

inline constexpr std::size_t wait_dwords = 7;
inline constexpr std::size_t barrier_dwords = 5 + 2 + 1 + 1;
inline constexpr std::size_t signal_dwords = 1 + 5 + 5;
/// Upper bound of one dispatch body (samplers, textures and IBOs all present, CP_EXEC_CS kick).
inline constexpr std::size_t max_dispatch_dwords =
    2 + 2 * 2 + 6 * 2 + 1 + 13 + 11 + 4 + 4 + 6 + 2 + 2 + (4 + 3 + 3) + (4 + 3) + (4 + 3) + 2 + 5 + 5;
/// Upper bound of a single-launch IB.
inline constexpr std::size_t max_launch_dwords = wait_dwords + barrier_dwords + max_dispatch_dwords + signal_dwords;

/// §9.1 step 1: wait until the timeline signal reached the previous launch's value. Returns the
/// index of the reference dword.
inline std::size_t emit_wait(pm4::writer& w, std::uint64_t signal, std::uint32_t previous) {
  return w.op(pm4::CP_WAIT_REG_MEM, {pm4::WAIT_REG_MEM_GE_MEMORY, pm4::lo(signal), pm4::hi(signal), previous,
                                     0xFFFFFFFFu, pm4::WAIT_REG_MEM_POLL_CYCLES}) + 3;
}

/// §9.1 step 2: make earlier writes visible and drop stale cache lines before the next dispatch.
inline void emit_barrier(pm4::writer& w, std::uint64_t dummy) {
  w.op(pm4::CP_EVENT_WRITE, {pm4::CACHE_FLUSH_TS, pm4::lo(dummy), pm4::hi(dummy), 0});
  w.op(pm4::CP_EVENT_WRITE, {pm4::CACHE_INVALIDATE});
  w.op(pm4::CP_WAIT_MEM_WRITES);
  w.op(pm4::CP_WAIT_FOR_IDLE);
}

/// §9.1 step 6: after the work is idle, flush and write `value` to the signal. Returns the index of
/// the value dword.
inline std::size_t emit_signal(pm4::writer& w, std::uint64_t signal, std::uint64_t dummy, std::uint32_t value) {
  w.op(pm4::CP_WAIT_FOR_IDLE);
  const std::size_t at = w.op(pm4::CP_EVENT_WRITE, {pm4::CACHE_FLUSH_TS, pm4::lo(signal), pm4::hi(signal), value}) + 3;
  w.op(pm4::CP_EVENT_WRITE, {pm4::CACHE_FLUSH_TS, pm4::lo(dummy), pm4::hi(dummy), 0});
  return at;
}

/// §9.2: the dispatch body, ending with the flush of the results.
inline dispatch_patch emit_dispatch(pm4::writer& w, const program_info& p, const program_layout& l,
                                    const dispatch_addrs& a, const geometry_regs& g, std::uint64_t dummy,
                                    const dispatch_options& o = {}) {
  using namespace pm4;
  const bool fd = o.encoding == register_encoding::freedreno;
  dispatch_patch patch;
  w.op(CP_SET_MARKER, {RM6_COMPUTE});
  w.reg(reg::SP_UPDATE_CNTL, {0x60});  // invalidate cached CS state and CS UAVs
  w.reg(reg::SP_UPDATE_CNTL, {0});
  w.reg(reg::SP_CS_TSIZE, {0x80});
  w.reg(reg::SP_CS_USIZE, {0x40});
  w.reg(reg::SP_MODE_CNTL, {0x2});       // ISAMMODE = CL
  w.reg(reg::SP_PERFCTR_SHADER_MASK, {0x20});
  w.reg(reg::TPL1_MODE_CNTL, {0x1});     // ISAMMODE = CL
  w.reg(reg::TPL1_DBG_ECO_CNTL, {0});
  w.op(CP_WAIT_FOR_IDLE);
  patch.ndrange = w.reg(reg::SP_CS_NDRANGE_0, {g.ndrange0, g.global[0], 0, g.global[1], 0, g.global[2], 0,
                                               0x00CCC0CF, 0xFC, g.groups[0], g.groups[1], g.groups[2]});
  patch.cs_cntl = w.reg(reg::SP_CS_CNTL_0, {l.cs_cntl_0, l.cs_cntl_1, 0, p.entry_offset, lo(a.shader), hi(a.shader),
                            l.memsizeperitem, lo(a.stack), hi(a.stack), l.totalpvtmemsize});
  w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::constants, state_src::indirect, SB6_CS_SHADER,
                                              constant_file_bytes / 16),
                             lo(a.kernargs), hi(a.kernargs)});
  w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::shader, state_src::indirect, SB6_CS_SHADER,
                                              o.cap_preload ? l.preload_units : l.instr_units),
                             lo(a.shader), hi(a.shader)});
  // SP_REG_PROG_ID_0..3 unused for compute; SP_CS_CONST_CONFIG = ENABLED | CONSTLEN(256 vec4).
  const std::uint32_t const_config = fd ? 0x100u | (256u >> 2) : 0x100u;
  w.reg(reg::SP_REG_PROG_ID_0, {0xFCFCFCFC, 0xFCFCFCFC, 0xFCFCFCFC, 0xFC, const_config});
  w.reg(reg::SP_CS_PVT_MEM_STACK_OFFSET, {fd ? l.hw_stack_offset >> 11 : l.hw_stack_offset});
  w.reg(reg::SP_CS_INSTR_SIZE, {l.instr_units});
  if (l.sampler_slots) {
    const std::uint64_t s = a.kernargs + l.samp_off;
    w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::shader, state_src::indirect, SB6_CS_TEX, l.sampler_slots),
                               lo(s), hi(s)});
    w.reg64(reg::SP_CS_SAMPLER_BASE, s);
    w.reg64(reg::TPL1_CS_BORDER_COLOR_BASE, a.border_color);
  }
  if (l.ntex) {
    const std::uint64_t t = a.kernargs + l.tex_off;
    w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::constants, state_src::indirect, SB6_CS_TEX, l.ntex),
                               lo(t), hi(t)});
    w.reg64(reg::SP_CS_TEXMEMOBJ_BASE, t);
  }
  if (l.nibo) {
    const std::uint64_t u = a.kernargs + l.ibo_off;
    w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::uav, state_src::indirect, SB6_CS_SHADER, l.nibo),
                               lo(u), hi(u)});
    w.reg64(reg::SP_CS_UAV_BASE, u);
  }
  w.reg(reg::SP_CS_CONFIG, {0x100u | l.ntex << 9 | l.sampler_slots << 17 | l.nibo << 22});
  if (o.kick == kick_packet::exec_cs)
    patch.exec_cs = w.op(CP_EXEC_CS, {0, g.groups[0], g.groups[1], g.groups[2]});
  else
    w.op(CP_RUN_OPENCL, {0});
  w.op(CP_EVENT_WRITE, {CACHE_FLUSH_TS, lo(dummy), hi(dummy), 0});
  return patch;
}

/// Rewrites the launch size of an already emitted dispatch in place.
inline void patch_geometry(std::uint32_t* ib, const dispatch_patch& at, const geometry_regs& g) {
  std::uint32_t* n = ib + at.ndrange;
  n[0] = g.ndrange0;
  n[1] = g.global[0];
  n[3] = g.global[1];
  n[5] = g.global[2];
  n[9] = g.groups[0];
  n[10] = g.groups[1];
  n[11] = g.groups[2];
  if (at.exec_cs) {
    ib[at.exec_cs + 1] = g.groups[0];
    ib[at.exec_cs + 2] = g.groups[1];
    ib[at.exec_cs + 3] = g.groups[2];
  }
}

}  // namespace uopcg::kgsl
