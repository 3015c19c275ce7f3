// A kernel's OpenCL C as a compile-time value: the codegen pipeline (codegen::compile_opencl, the
// same code that runs at run time) and the emitter evaluated by the compiler. The result holds no
// heap memory: the source as a NUL-terminated character array of its exact length, the launch
// dimensions and the argument table, all constexpr. A build that ships only this value carries no
// code generation at run time.
//
//   struct saxpy { constexpr UOp operator()(Arena& a) const { ... return sink(...); } };
//   constexpr auto k = uopcg::compile_opencl_constexpr<saxpy>();
//   static_assert(k.source().starts_with("__kernel"));
//
// The barrier verifier does not run in constant evaluation yet (its reports hold std::string, which
// clang 14 with libstdc++ 12 cannot build there), so the default compile-time target is Target::pocl()
// with verify_barriers off; a target that turns it on fails to compile at the verifier's call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "../core/arena.hpp"
#include "pipeline.hpp"

namespace uopcg {

/// The default target of compile_opencl_constexpr: PoCL's, without the barrier verifier (see above).
struct constexpr_pocl_target {
  constexpr Target operator()() const {
    Target t = Target::pocl();
    t.verify_barriers = false;
    return t;
  }
};

/// A fixed-capacity copy of a short string (a kernel or argument name).
template <std::size_t Cap>
struct fixed_name {
  std::array<char, Cap> chars{};
  std::size_t length = 0;
  constexpr std::string_view view() const { return {chars.data(), length}; }
};

/// One kernel argument (render::KernelParam without its heap members).
struct constexpr_param {
  render::ParamKind kind = render::ParamKind::buffer;
  std::int64_t index = 0;  // OpenCL argument index
  std::int64_t slot = 0;   // ParamArg.slot
  fixed_name<64> name;     // the C name: data<slot>_<dims>
  DType dtype = DType::float32;
  std::int64_t size = 0, itemsize = 0, nbytes = 0;
  AddrSpace addrspace = AddrSpace::GLOBAL;
  bool written = false, read = false;
};

/// A compiled kernel as a constant: `N` characters of source, `P` arguments.
template <std::size_t N, std::size_t P>
struct constexpr_kernel {
  std::array<char, N + 1> source_chars{};  // NUL-terminated, for clCreateProgramWithSource
  fixed_name<64> function_name;
  std::array<constexpr_param, P> params{};
  std::array<std::int64_t, 3> global_size{1, 1, 1};
  std::array<std::int64_t, 3> local_size{1, 1, 1};
  bool has_local_size = true;  // false: get_global_id, the runtime picks the work-group size

  constexpr std::string_view source() const { return {source_chars.data(), N}; }
  constexpr const char* c_str() const { return source_chars.data(); }
  /// OpenCL's global work size: global_size × local_size.
  constexpr std::array<std::int64_t, 3> global_work_size() const {
    std::array<std::int64_t, 3> g = global_size;
    if (has_local_size)
      for (int d = 0; d < 3; ++d) g[d] *= local_size[d];
    return g;
  }
};

namespace detail {

template <std::size_t Cap>
constexpr fixed_name<Cap> copy_name(std::string_view s, std::string_view what) {
  if (s.size() > Cap) fail("compile_opencl_constexpr: the ", what, " '", s, "' is longer than ", Cap, " characters");
  fixed_name<Cap> n;
  for (std::size_t i = 0; i < s.size(); ++i) n.chars[i] = s[i];
  n.length = s.size();
  return n;
}

/// The kernel through the pipeline and the emitter, in a kernel of capacity `Cap` / `PCap`; the
/// oversized first copy is what lets the exact sizes become template arguments in one evaluation.
template <class KernelFn, class TargetFn, std::size_t Cap, std::size_t PCap>
constexpr auto compile_capped() {
  Arena a;
  const Target target = TargetFn{}();
  const render::RenderedKernel k = codegen::compile_opencl(KernelFn{}(a), target);
  const std::string_view src = k.source.view();
  if (src.size() > Cap)
    fail("compile_opencl_constexpr: the source has ", src.size(), " characters, more than the capacity ", Cap,
         "; raise the SourceCapacity argument");
  if (k.params.size() > PCap)
    fail("compile_opencl_constexpr: the kernel has ", k.params.size(), " arguments, more than ", PCap);
  struct capped {
    constexpr_kernel<Cap, PCap> kernel;
    std::size_t length = 0, nparams = 0;
  } r;
  for (std::size_t i = 0; i < src.size(); ++i) r.kernel.source_chars[i] = src[i];
  r.length = src.size();
  r.nparams = k.params.size();
  r.kernel.function_name = copy_name<64>(k.function_name.view(), "kernel name");
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const render::KernelParam& p = k.params[i];
    constexpr_param& q = r.kernel.params[i];
    q.kind = p.kind;
    q.index = p.index;
    q.slot = p.slot;
    q.name = copy_name<64>(p.name.view(), "argument name");
    q.dtype = p.dtype;
    q.size = p.size;
    q.itemsize = p.itemsize;
    q.nbytes = p.nbytes;
    q.addrspace = p.addrspace;
    q.written = p.written;
    q.read = p.read;
  }
  r.kernel.global_size = k.global_size;
  r.kernel.has_local_size = k.local_size.has_value();
  if (k.local_size) r.kernel.local_size = *k.local_size;
  return r;
}

template <class KernelFn, class TargetFn, std::size_t Cap>
inline constexpr auto capped_kernel = compile_capped<KernelFn, TargetFn, Cap, 32>();

template <std::size_t N, std::size_t P, class Capped>
constexpr constexpr_kernel<N, P> trim(const Capped& c) {
  constexpr_kernel<N, P> k;
  for (std::size_t i = 0; i < N; ++i) k.source_chars[i] = c.kernel.source_chars[i];
  for (std::size_t i = 0; i < P; ++i) k.params[i] = c.kernel.params[i];
  k.function_name = c.kernel.function_name;
  k.global_size = c.kernel.global_size;
  k.local_size = c.kernel.local_size;
  k.has_local_size = c.kernel.has_local_size;
  return k;
}

}  // namespace detail

/// The OpenCL C of the kernel `KernelFn{}(arena)` builds (a post-opts graph, as codegen::compile_opencl
/// takes it) for the target `TargetFn{}()`, compiled by the compiler. `SourceCapacity` bounds the
/// source length during compilation only; the result has the exact length.
template <class KernelFn, class TargetFn = constexpr_pocl_target, std::size_t SourceCapacity = 8192>
inline constexpr auto opencl_kernel = [] {
  constexpr const auto& c = detail::capped_kernel<KernelFn, TargetFn, SourceCapacity>;
  return detail::trim<c.length, c.nparams>(c);
}();

/// Function spelling of opencl_kernel.
template <class KernelFn, class TargetFn = constexpr_pocl_target, std::size_t SourceCapacity = 8192>
consteval auto compile_opencl_constexpr() {
  return opencl_kernel<KernelFn, TargetFn, SourceCapacity>;
}

}  // namespace uopcg
