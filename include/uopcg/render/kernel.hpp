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
#include "../core/error.hpp"
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

/// The value of one variable argument at a launch: the var parameter's slot and its value.
struct VarValue {
  std::int64_t slot = 0;
  std::int64_t value = 0;
};

/// A launch size that depends on the kernel's variables (a SPECIAL's extent such as `n*64`), kept
/// as a postfix program over the var parameters' slots so that each launch computes its own size,
/// as tinygrad's sym_infer does: launching the largest size instead runs work-items past the
/// variable's extent, which the kernel does not guard.
struct SymbolicSize {
  enum class Code : std::uint8_t { constant, var, add, sub, mul, cdiv, cmod, floordiv, floormod, shl, shr,
                                   max, and_, or_, xor_, cmplt, cmpne, neg, where };
  struct Step {
    Code code = Code::constant;
    std::int64_t value = 0;  // constant: the value; var: the var parameter's slot
  };
  std::vector<Step> steps;  // postfix: operands before their operation
  text rendered;            // as the kernel's comment shows it (tinygrad's syntax: `(n<<6)`)

  /// The size for `vars`, or nullopt when a variable it reads is not among them. Integer arithmetic
  /// as the kernel's (C's truncating division for cdiv/cmod, floor for floordiv/floormod); a
  /// division by zero gives nullopt.
  constexpr std::optional<std::int64_t> eval(const std::vector<VarValue>& vars) const {
    std::vector<std::int64_t> st;
    auto pop = [&st] {
      const std::int64_t v = st.back();
      st.pop_back();
      return v;
    };
    for (const Step& s : steps) {
      if (s.code == Code::constant) {
        st.push_back(s.value);
        continue;
      }
      if (s.code == Code::var) {
        const VarValue* found = nullptr;
        for (const VarValue& v : vars)
          if (v.slot == s.value) found = &v;
        if (!found) return std::nullopt;
        st.push_back(found->value);
        continue;
      }
      if (s.code == Code::neg) {
        if (st.empty()) return std::nullopt;
        st.back() = -st.back();
        continue;
      }
      if (s.code == Code::where) {
        if (st.size() < 3) return std::nullopt;
        const std::int64_t f = pop(), t = pop(), c = pop();
        st.push_back(c ? t : f);
        continue;
      }
      if (st.size() < 2) return std::nullopt;
      const std::int64_t b = pop(), a = pop();
      std::int64_t r = 0;
      switch (s.code) {
        case Code::add: r = a + b; break;
        case Code::sub: r = a - b; break;
        case Code::mul: r = a * b; break;
        case Code::cdiv: case Code::cmod: case Code::floordiv: case Code::floormod: {
          if (b == 0) return std::nullopt;
          const std::int64_t q = a / b, m = a % b;
          const bool floor_fix = m != 0 && ((m < 0) != (b < 0));
          r = s.code == Code::cdiv ? q : s.code == Code::cmod ? m : s.code == Code::floordiv ? q - floor_fix : m + (floor_fix ? b : 0);
          break;
        }
        case Code::shl: r = b < 0 || b > 62 ? 0 : a * (std::int64_t{1} << b); break;
        case Code::shr: r = b < 0 || b > 62 ? 0 : a >> b; break;
        case Code::max: r = a < b ? b : a; break;
        case Code::and_: r = a & b; break;
        case Code::or_: r = a | b; break;
        case Code::xor_: r = a ^ b; break;
        case Code::cmplt: r = a < b; break;
        case Code::cmpne: r = a != b; break;
        default: return std::nullopt;
      }
      st.push_back(r);
    }
    if (st.size() != 1) return std::nullopt;
    return st.back();
  }
};

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
  std::int64_t var_min = 0, var_max = 0;  // a var's bounds (ParamArg.vmin_vmax), which size its buffers
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
  /// Per dimension, the extent that depends on variables, if any; global_size / local_size then hold
  /// its largest value. launch_sizes() gives the sizes of one launch.
  std::array<std::optional<SymbolicSize>, 3> global_symbolic, local_symbolic;

  constexpr bool symbolic_launch() const {
    for (int d = 0; d < 3; ++d)
      if (global_symbolic[d] || local_symbolic[d]) return true;
    return false;
  }

  /// global_size and local_size for one launch with these variable values. A launch size that
  /// reads a variable missing from `vars`, or that is not positive, is an error naming the kernel
  /// and the size.
  struct LaunchSizes {
    std::array<std::int64_t, 3> global_size{1, 1, 1};
    std::optional<std::array<std::int64_t, 3>> local_size;
    /// global_size × local_size, what clEnqueueNDRangeKernel takes.
    constexpr std::array<std::int64_t, 3> global_work_size() const {
      std::array<std::int64_t, 3> g = global_size;
      if (local_size)
        for (int d = 0; d < 3; ++d) g[d] *= (*local_size)[d];
      return g;
    }
  };
  constexpr LaunchSizes launch_sizes(const std::vector<VarValue>& vars = {}) const {
    LaunchSizes out{global_size, local_size};
    auto resolve = [&](const std::optional<SymbolicSize>& s, std::int64_t& size, std::string_view kind, int d) {
      if (!s) return;
      const std::optional<std::int64_t> v = s->eval(vars);
      if (!v || *v < 1) {
        text msg;
        msg.append("kernel ").append(function_name).append(": the ").append(kind).append(" size of dimension ")
            .append(d).append(", ").append(s->rendered);
        if (!v) msg.append(", needs the value of a variable it reads");
        else msg.append(", is ").append(*v).append(" for these variable values");
        fail(msg.view());
      }
      size = *v;
    };
    for (int d = 0; d < 3; ++d) resolve(global_symbolic[d], out.global_size[d], "global", d);
    if (out.local_size)
      for (int d = 0; d < 3; ++d) resolve(local_symbolic[d], (*out.local_size)[d], "local", d);
    return out;
  }

  /// OpenCL's global work size: global_size × local_size (docs/json.md).
  constexpr std::array<std::int64_t, 3> global_work_size() const {
    return LaunchSizes{global_size, local_size}.global_work_size();
  }
  constexpr const KernelParam* param_for_slot(std::int64_t slot) const {
    for (const KernelParam& p : params)
      if (p.kind == ParamKind::buffer && p.slot == slot) return &p;
    return nullptr;
  }
  /// The variable parameter named `name` (its ParamArg.name), or nullptr.
  constexpr const KernelParam* var_named(std::string_view name) const {
    for (const KernelParam& p : params)
      if (p.kind == ParamKind::var && p.var_name.view() == name) return &p;
    return nullptr;
  }
};

}  // namespace uopcg::render
