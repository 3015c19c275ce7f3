// What a codegen target supports: the renderer's configuration (render::OpenCLRenderer, which is
// also what the emitter reads) plus the knobs tinygrad reads from its environment at codegen time.
// Every stage function takes a `const Target&`.
#pragma once

#include <string_view>
#include <vector>

#include "../core/dtype.hpp"
#include "../core/ops.hpp"
#include "../render/kernel.hpp"
#include "opt/tensor_core.hpp"

namespace uopcg {

struct Target {
  render::OpenCLRenderer renderer = render::OpenCLRenderer::pocl();

  // --- codegen configuration (tinygrad's context variables; defaults = the corpus' codegen_config) ---
  int transcendental = 1;         // TRANSCENDENTAL: >= 2 forces the polynomial exp2/log2/sin/sqrt
  bool disable_fast_idiv = true;  // DISABLE_FAST_IDIV: no magic-multiply integer division
  bool memory_coalescing = true;  // !DMC: form float4/float2 accesses
  bool allow_half8 = false;       // ALLOW_HALF8
  bool use_locals = true;         // !NOLOCALS: GPU dims through get_group_id/get_local_id
  OpSet emulated_ops{};           // ops forced through their decomposition even if renderable
  bool emulate_long = false;      // EMULATED_DTYPES contains long/ulong: int64 as pairs of int32
  bool emulate_half = false;      // ... contains half (even where cl_khr_fp16 exists)
  bool emulate_bf16 = false;      // ... contains bfloat16 (bf16 is always stored as ushort anyway)
  bool half_builtins = true;      // emulated half <-> float through vload_half / vstore_half_rte (core
                                  // OpenCL C, IEEE-exact) instead of integer bit graphs (tinygrad's way)
  bool verify_barriers = true;    // run the barrier verifier on the linearized program
  bool prune_barriers = false;    // remove the BARRIERs the verifier proves redundant (barrier_explain.hpp)
  bool reduce_identity = true;    // pm_reduce_identity: Invalid REDUCE lanes -> the op's identity (seed; not in the snapshot)
  DType default_float = DType::float32;  // DEFAULT_FLOAT: the float a weak float is computed in when
                                          // no concrete float meets it (stage 12)

  // --- kernel opts (codegen/opt/: apply_opts and the hand-coded heuristics) --------------------------
  bool noopt = false;      // NOOPT: no heuristics (explicit opts still apply; the kernel is still named)
  bool nolocals = false;   // NOLOCALS: the heuristics apply NOLOCALS instead of local / group axes
  int use_tc = 1;          // TC: 0 no tensor cores, 1 WMMA, 2 the tensor core's axes without WMMA
  int tc_opt = 0;          // TC_OPT: 1 also several reduce axes or cast operands, 2 also pads to the core's dims
  int tc_select = -1;      // TC_SELECT: the one of tensor_cores to use (-1: the first that fits)
  bool allow_tf32 = false; // ALLOW_TF32: float tensor cores on CUDA/NV
  int mv = 1;              // MV: the matrix-vector heuristic, with its sizes:
  int mv_blocksize = 4, mv_threads_per_row = 8, mv_rows_per_thread = 4;  // MV_BLOCKSIZE, ...
  /// The tensor cores the renderer has (the TC opt's candidates); OpenCL has none.
  std::vector<codegen::opt::TensorCore> tensor_cores;

  /// Ops the OpenCL C emitter prints directly (tinygrad's `code_for_op` keys).
  static constexpr OpSet renderable_ops = [] {
    using enum Ops;
    return OpSet{SQRT, RECIPROCAL, NEG, EXP2, LOG2, SIN, TRUNC, AND, XOR, OR, ADD,
                 SUB, MUL, CMOD, CDIV, CMPNE, SHR, SHL, CMPLT, WHERE, CMPEQ};
  }();

  /// Whether the target renders `op` natively (decompositions are keyed on this).
  constexpr bool supports_op(Ops op) const { return renderable_ops.contains(op) && !emulated_ops.contains(op); }

  /// Whether values of `dt` exist natively (tinygrad's `supported_dtypes()` minus EMULATED_DTYPES).
  constexpr bool supports_dtype(DType dt) const {
    using enum DType;
    switch (dt) {
      case float16: return renderer.supports_fp16 && !emulate_half;
      case float64: return renderer.supports_fp64;
      case bfloat16: return renderer.supports_bf16 && !emulate_bf16;
      case int64: case uint64: return !emulate_long;
      case fp8e4m3: case fp8e5m2: case fp8e4m3fnuz: case fp8e5m2fnuz: return false;
      default: return true;
    }
  }

  // --- presets -------------------------------------------------------------------------------------
  /// PoCL on the CPU (the corpus' `pocl` renderer): no cl_khr_fp16, so half is emulated in ushort.
  static constexpr Target pocl() { return Target{}; }
  /// An OpenCL device with cl_khr_fp16 (the corpus' `fp16` renderer): native half.
  static constexpr Target opencl_fp16() {
    Target t;
    t.renderer = render::OpenCLRenderer::pocl_fp16();
    return t;
  }
  /// Qualcomm Adreno A6xx through its OpenCL driver: native half, no fp64, 1024-item work-groups.
  static constexpr Target adreno_a6xx() {
    Target t;
    t.renderer = render::OpenCLRenderer::for_arch(
        "cl_khr_3d_image_writes,cl_img_egl_image,cl_khr_byte_addressable_store,cl_khr_depth_images,"
        "cl_khr_egl_event,cl_khr_egl_image,cl_khr_fp16,cl_khr_gl_sharing,cl_khr_global_int32_base_atomics,"
        "cl_khr_global_int32_extended_atomics,cl_khr_local_int32_base_atomics,"
        "cl_khr_local_int32_extended_atomics,cl_khr_image2d_from_buffer,cl_khr_mipmap_image,"
        "cl_khr_srgb_image_writes,cl_khr_subgroups,cl_qcom_create_buffer_from_image,"
        "cl_qcom_ext_host_ptr,cl_qcom_ion_host_ptr,cl_qcom_perf_hint,cl_qcom_other_image,"
        "cl_qcom_subgroup_shuffle,cl_qcom_vector_image_ops,cl_qcom_extract_image_plane,"
        "cl_qcom_android_native_buffer_host_ptr,cl_qcom_protected_context,cl_qcom_priority_hint,"
        "cl_qcom_compressed_yuv_image_read,cl_qcom_compressed_image,cl_qcom_ext_host_ptr_iocoherent,"
        "cl_qcom_accelerated_image_ops,cl_qcom_ml_ops");
    t.renderer.device = "QCOM";
    t.renderer.local_max = {1024, 1024, 1024};
    return t;
  }
};

}  // namespace uopcg
