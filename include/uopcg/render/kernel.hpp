// What the OpenCL emitter is configured with and what it returns: the device's capabilities
// (OpenCLRenderer, tinygrad's renderer fields) and the rendered kernel (source, name, parameters,
// launch sizes). Apart from the emitter (render/opencl.hpp) so that codegen::Target and the
// declarations-only <uopcg/compile.hpp> need not parse the emitter.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "../core/dtype.hpp"
#include "../core/text.hpp"

namespace uopcg::render {

// --- target -----------------------------------------------------------------------------------------

/// What the emitter may assume about the OpenCL device: the fields of tinygrad's renderer object
/// (docs/json.md). Native half needs `cl_khr_fp16` in `arch`, double needs `cl_khr_fp64`.
struct OpenCLRenderer {
  text device = "CL";
  text arch;  // comma-joined device extension list
  bool supports_fp16 = false;
  bool supports_fp64 = false;
  bool supports_bf16 = true;  // bf16 is stored as ushort; its arithmetic is decomposed in codegen
  bool has_local = true;
  bool has_shared = true;
  bool has_threads = false;
  bool supports_float4 = true;
  std::int64_t shared_max = 32768;  // bytes of __local memory per work-group
  std::array<std::int64_t, 3> global_max{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  std::array<std::int64_t, 3> local_max{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  std::optional<std::int64_t> global_prod_max;
  int tensor_cores = 0;

  /// Whether `ext` is one of the comma-separated entries of `arch`.
  constexpr bool has_extension(std::string_view ext) const {
    std::string_view a = arch.view();
    while (!a.empty()) {
      std::size_t comma = a.find(',');
      if (a.substr(0, comma) == ext) return true;
      if (comma == std::string_view::npos) break;
      a.remove_prefix(comma + 1);
    }
    return false;
  }
  /// A target for a device with the given extension list (fp16 / fp64 follow the extensions).
  static constexpr OpenCLRenderer for_arch(std::string_view arch) {
    OpenCLRenderer r;
    r.arch = arch;
    r.supports_fp16 = r.has_extension("cl_khr_fp16");
    r.supports_fp64 = r.has_extension("cl_khr_fp64");
    return r;
  }
  /// The target the corpus' `pocl` kernels were generated for (PoCL CPU device: no fp16).
  static constexpr OpenCLRenderer pocl() {
    return for_arch(
        "cl_khr_byte_addressable_store,cl_khr_global_int32_base_atomics,cl_khr_global_int32_extended_atomics,"
        "cl_khr_local_int32_base_atomics,cl_khr_local_int32_extended_atomics,cl_khr_3d_image_writes,"
        "cl_khr_command_buffer,cl_khr_spir,cl_khr_int64_base_atomics,cl_khr_int64_extended_atomics,cl_khr_fp64");
  }
  /// The corpus' `fp16` target: pocl() plus cl_khr_fp16 (native half).
  static constexpr OpenCLRenderer pocl_fp16() {
    OpenCLRenderer r = pocl();
    r.arch.append(",cl_khr_fp16");
    r.supports_fp16 = true;
    return r;
  }
};

// --- output -----------------------------------------------------------------------------------------

enum class ParamKind : std::uint8_t { buffer, var };

/// One kernel argument, in argument order (= order of the PARAMs in the program).
struct KernelParam {
  ParamKind kind = ParamKind::buffer;
  std::int64_t index = 0;  // OpenCL argument index
  std::int64_t slot = 0;   // ParamArg.slot
  text name;               // the C name: data<slot>_<dims>
  DType dtype = DType::float32;  // the kernel's element dtype (ushort for emulated half)
  std::optional<DType> logical_dtype;  // the PARAM's dtype tag (half for emulated half buffers)
  std::vector<std::int64_t> shape;     // buffer dims ([] for a var)
  std::int64_t size = 0;               // elements (1 for a var)
  std::int64_t itemsize = 0, nbytes = 0;
  AddrSpace addrspace = AddrSpace::GLOBAL;  // GLOBAL for buffers, ALU for vars
  bool is_volatile = false;
  bool written = false;  // some STORE addresses it
  bool read = false;     // some LOAD addresses it
  text var_name;         // a var's ParamArg.name (empty if none)
};

/// The emitter's result.
struct RenderedKernel {
  text function_name;
  text source;  // exactly tinygrad's text: no trailing newline
  std::vector<KernelParam> params;
  /// Work-group counts per dimension (tinygrad's global_size) and the work-group size (local_size;
  /// nullopt when the kernel uses get_global_id and leaves the choice to the runtime).
  std::array<std::int64_t, 3> global_size{1, 1, 1};
  std::optional<std::array<std::int64_t, 3>> local_size = std::array<std::int64_t, 3>{1, 1, 1};
  std::vector<std::int64_t> globals, outs, ins;  // buffer slots: all, written, read
  std::int64_t local_bytes = 0;  // bytes of __local memory the kernel declares (per work-group)

  /// OpenCL's global work size: global_size × local_size (docs/json.md).
  constexpr std::array<std::int64_t, 3> global_work_size() const {
    std::array<std::int64_t, 3> g = global_size;
    if (local_size)
      for (int d = 0; d < 3; ++d) g[d] *= (*local_size)[d];
    return g;
  }
  constexpr const KernelParam* param_for_slot(std::int64_t slot) const {
    for (const KernelParam& p : params)
      if (p.kind == ParamKind::buffer && p.slot == slot) return &p;
    return nullptr;
  }
};

}  // namespace uopcg::render
