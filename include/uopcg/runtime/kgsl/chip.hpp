// Which Adreno GPUs the launcher drives, and the per-chip numbers its dispatch stream depends on.
// Private-memory sizes scale with the fibers (hardware threads) of a shader processor and the shader
// preload with the instruction cache, so a chip missing from the table is refused instead of being
// given A630's numbers: on a chip with more fibers, the shader processors' private regions overlap.
#pragma once

#include <cstdint>
#include <string>

#include "../../core/error.hpp"
#include "abi.hpp"

namespace uopcg::kgsl {

/// Adreno chip id: core.major.minor.patch, one byte each (A630 = 0x06030001).
struct chip_id {
  std::uint32_t raw = 0;
  constexpr std::uint32_t core() const { return raw >> 24; }
  constexpr std::uint32_t major() const { return (raw >> 16) & 0xFF; }
  constexpr std::uint32_t minor() const { return (raw >> 8) & 0xFF; }
  constexpr std::uint32_t patch() const { return raw & 0xFF; }
  /// Whether the id is the classic decimal-digit form (later parts use a letter-like top byte).
  constexpr bool classic() const { return core() >= 1 && core() <= 9 && major() <= 9 && minor() <= 9; }
  /// 630 for 0x0603xxxx (core·100 + major·10 + minor, as turnip computes it); 0 if not classic.
  constexpr std::uint32_t gpu_id() const { return classic() ? core() * 100 + major() * 10 + minor() : 0; }
  /// "A630" for classic ids, otherwise "chip 0x43050A01".
  std::string name() const {
    // Appended, not `"A" + std::to_string(...)`: g++ 12 at -O3 warns falsely (-Wrestrict) on that
    // operator+ once inlined here, which -Werror builds turn into an error.
    if (classic()) return std::string("A").append(std::to_string(gpu_id()));
    std::string s = "chip ";
    abi::detail::append_hex32(s, raw);
    return s;
  }
};

/// What the dispatch stream needs to know about one chip.
struct chip_traits {
  std::uint32_t gpu_id;             // e.g. 630; matches every patch level
  std::uint32_t fibers_per_sp;      // private memory per shader processor = per-fiber bytes × this
  std::uint32_t instr_cache_units;  // instruction cache in 128-byte units: the most the shader preload may load
};

// Every number is freedreno's, from mesa src/freedreno/common/a6xx_gpu.py: fibers_per_sp of the
// chip's GPUConfig, instr_cache_size of its a6xx_gen1 template (freedreno_devices.py in older mesa).
// For A630 tinygrad agrees: the factors 128*2 and 128*16 in tinygrad/runtime/ops_qcom.py
// (QCOMProgram's totalpvtmemsize and hw_stack_offset) are 2048 fibers. Only a6xx_gen1 chips are
// listed: they share A630's register file (reg_size_vec4 96), which layout_of's work-group bound
// assumes; other A6xx sub-generations differ in fibers, register file and instruction cache.
inline constexpr chip_traits known_chips[] = {
    {615, 128 * 16, 64}, {616, 128 * 16, 64}, {618, 128 * 16, 64},
    {619, 128 * 16, 64}, {620, 128 * 16, 64}, {630, 128 * 16, 64},
};

/// The table entry of a chip, or nullptr when the launcher does not know it.
constexpr const chip_traits* find_chip_traits(chip_id c) {
  if (!c.classic()) return nullptr;
  for (const chip_traits& t : known_chips)
    if (t.gpu_id == c.gpu_id()) return &t;
  return nullptr;
}

/// The one place that decides which GPUs the launcher drives: "" when supported, else the reason,
/// naming the chip id. The stream is A6xx-only (A7xx moved the compute registers), and within A6xx
/// only chips whose fiber count and instruction cache are known.
inline std::string unsupported_chip_reason(chip_id c) {
  if (find_chip_traits(c)) return {};
  std::string s = "Adreno ";
  s.append(c.name()).append(" (chip id ");
  abi::detail::append_hex32(s, c.raw);
  if (c.core() != 6) return s + ") is not supported: the KGSL launcher emits A6xx compute state only";
  s += ") is not supported: its fibers per shader processor, which size private memory, are not in the "
       "KGSL launcher's chip table (known:";
  for (const chip_traits& t : known_chips) s += " A" + std::to_string(t.gpu_id);
  return s + ")";
}

/// The traits of a supported chip; a uopcg::error naming the chip otherwise.
inline const chip_traits& chip_traits_of(chip_id c) {
  if (const chip_traits* t = find_chip_traits(c)) return *t;
  fail_runtime(unsupported_chip_reason(c));
}

}  // namespace uopcg::kgsl
