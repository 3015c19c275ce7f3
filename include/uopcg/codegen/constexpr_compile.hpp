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
// The barrier verifier runs too (Target::verify_barriers, on by default): a kernel whose barriers
// it rejects does not compile, and the diagnostic shows the verifier's report, buffer and
// instructions included, and so does a graph the pipeline refuses as input (not a SINK, a typing
// or scope rule broken: the node at fault). A failure inside a stage stops the compiler at its
// fail() call, whose literal text the diagnostic shows (docs/embedded.md, "Kernels compiled by the compiler"). A kernel
// past the compiler's constexpr budget stops there: g++ names -fconstexpr-ops-limit; clang only says
// "maximum step limit", and its option is -fconstexpr-steps.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/arena.hpp"
#include "../render/opencl.hpp"
#include "barrier_verifier.hpp"
#include "pipeline.hpp"

namespace uopcg {

/// The default target of compile_opencl_constexpr: PoCL's, barrier verifier included.
struct constexpr_pocl_target {
  constexpr Target operator()() const { return Target::pocl(); }
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
  bool barriers_verified = false;  // the barrier verifier accepted the program (the target asked for it)
  codegen::BarrierAnalysis barrier_analysis = codegen::BarrierAnalysis::none;  // how it decided

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

/// A message computed in constant evaluation as a value that can be a template argument: an
/// instantiation that fails on it prints it, where a failing call prints only its literal text.
struct compile_time_message {
  static constexpr std::size_t capacity = 2048;
  char chars[capacity]{};
  std::size_t length = 0;
  constexpr compile_time_message() = default;
  constexpr explicit compile_time_message(std::string_view s) {
    constexpr std::string_view cut = " [...]";
    const bool fits = s.size() < capacity;
    const std::size_t keep = fits ? s.size() : capacity - 1 - cut.size();
    for (std::size_t i = 0; i < keep; ++i) chars[i] = s[i];
    for (std::size_t i = 0; !fits && i < cut.size(); ++i) chars[keep + i] = cut[i];
    length = fits ? keep : keep + cut.size();
  }
};

/// Why a compile-time kernel was refused before any source was written.
enum class rejection { none, input, barriers };

// Never defined: clang prints a class-type template argument's characters as numbers (and only the
// first ten), but a pack of characters as characters.
template <char... Message>
struct pipeline_rejects_the_input;
template <char... Report>
struct barrier_verifier_rejects_the_kernel;
template <compile_time_message Message>
inline constexpr bool pipeline_accepts_the_input = false;
template <compile_time_message Report>
inline constexpr bool barrier_verifier_accepts = false;

/// Stops compilation with the message (the pipeline's, or the verifier's report) in the diagnostic.
template <rejection Why, compile_time_message Message>
constexpr void reject() {
#if defined(__clang__)
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    if constexpr (Why == rejection::input) (void)sizeof(pipeline_rejects_the_input<Message.chars[I]...>);
    else (void)sizeof(barrier_verifier_rejects_the_kernel<Message.chars[I]...>);
  }(std::make_index_sequence<Message.length>{});
#else
  if constexpr (Why == rejection::input)
    static_assert(pipeline_accepts_the_input<Message>,
                  "compile_opencl_constexpr: the pipeline rejects the kernel's graph (its message is the template argument)");
  else
    static_assert(barrier_verifier_accepts<Message>,
                  "compile_opencl_constexpr: the barrier verifier rejects the kernel (its report is the template argument)");
#endif
}

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
  struct capped {
    constexpr_kernel<Cap, PCap> kernel;
    std::size_t length = 0, nparams = 0;
    rejection rejected = rejection::none;  // and why, in `report`
    compile_time_message report;
  } r;
  Arena a;
  Target target = TargetFn{}();
  // codegen::compile_opencl, with the pipeline's own input and barrier checks done here instead: a
  // rejection returns its message (to be shown by reject) where the pipeline's would stop at fail(),
  // whose diagnostic shows only the call's literal text.
  const UOp sink = KernelFn{}(a);
  if (const text problem = codegen::pipeline_input_problem(sink); !problem.empty()) {
    r.rejected = rejection::input;
    r.report = compile_time_message(problem.view());
    return r;
  }
  const bool verify = target.verify_barriers;
  target.verify_barriers = false;
  const std::vector<UOp> program = codegen::to_program(sink, target);
  if (verify) {
    const codegen::BarrierReport report = codegen::verify_barriers(program);
    if (!report.ok()) {
      r.rejected = rejection::barriers;
      const text m = report.message_text();
      r.report = compile_time_message(m.view().substr(0, m.size() - 1));  // without the last newline
      return r;
    }
    r.kernel.barriers_verified = true;
    r.kernel.barrier_analysis = report.analysis;
  }
  const render::RenderedKernel k = render::render_opencl(program, target.renderer);
  const std::string_view src = k.source.view();
  if (src.size() > Cap)
    fail("compile_opencl_constexpr: the source has ", src.size(), " characters, more than the capacity ", Cap,
         "; raise the SourceCapacity argument");
  if (k.symbolic_launch())
    fail("compile_opencl_constexpr: a launch size of the kernel depends on a variable; its sizes are computed "
         "per launch (render::RenderedKernel::launch_sizes), which the constant kernel does not carry");
  if (k.params.size() > PCap)
    fail("compile_opencl_constexpr: the kernel has ", k.params.size(), " arguments, more than ", PCap);
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
  k.barriers_verified = c.kernel.barriers_verified;
  k.barrier_analysis = c.kernel.barrier_analysis;
  return k;
}

}  // namespace detail

/// The OpenCL C of the kernel `KernelFn{}(arena)` builds (a post-opts graph, as codegen::compile_opencl
/// takes it) for the target `TargetFn{}()`, compiled by the compiler. `SourceCapacity` bounds the
/// source length during compilation only; the result has the exact length.
template <class KernelFn, class TargetFn = constexpr_pocl_target, std::size_t SourceCapacity = 8192>
inline constexpr auto opencl_kernel = [] {
  constexpr const auto& c = detail::capped_kernel<KernelFn, TargetFn, SourceCapacity>;
  if constexpr (c.rejected != detail::rejection::none) detail::reject<c.rejected, c.report>();
  return detail::trim<c.length, c.nparams>(c);
}();

/// Function spelling of opencl_kernel.
template <class KernelFn, class TargetFn = constexpr_pocl_target, std::size_t SourceCapacity = 8192>
consteval auto compile_opencl_constexpr() {
  return opencl_kernel<KernelFn, TargetFn, SourceCapacity>;
}

}  // namespace uopcg
