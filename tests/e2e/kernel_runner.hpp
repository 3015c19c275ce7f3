// Host-side harness for kernels built with the builder API: compile a post-opts graph with the
// pipeline, run it on the default OpenCL device with given input bytes, read every buffer back.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include <uopcg/codegen/pipeline.hpp>
#include <uopcg/runtime/opencl.hpp>

namespace uopcg_test {

inline uopcg::opencl::Context& device_context() {
  static uopcg::opencl::Context ctx;
  return ctx;
}

using Bytes = std::vector<std::byte>;

template <class T>
Bytes to_bytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
template <class T>
std::vector<T> from_bytes(const Bytes& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

struct RunResult {
  std::map<std::int64_t, Bytes> buffers;  // every buffer parameter after the launch, by slot
  std::string source;
  std::vector<uopcg::UOp> program;
};

/// Compiles `sink` (a post-opts graph) for `target`, runs it once with `inputs` (by slot; other
/// buffers start as 0xFF bytes) and returns every buffer's bytes.
inline RunResult run_kernel(uopcg::UOp sink, const std::map<std::int64_t, Bytes>& inputs,
                            const uopcg::Target& target = uopcg::Target::pocl(), bool barriers = true) {
  uopcg::Target t = target;
  t.verify_barriers = barriers;
  uopcg::codegen::PipelineOptions o;
  o.barriers = barriers;
  RunResult r;
  r.program = uopcg::codegen::run_pipeline(sink, t, o).program;
  uopcg::render::RenderedKernel rk = uopcg::render::render_opencl(r.program, t.renderer);
  r.source = std::string(rk.source.view());
  auto& ctx = device_context();
  uopcg::opencl::CompiledKernel ck(ctx, std::move(rk));
  std::vector<std::pair<std::int64_t, uopcg::opencl::Buffer>> bufs;
  for (const auto& p : ck.info().params) {
    if (p.kind != uopcg::render::ParamKind::buffer) uopcg::fail_runtime("run_kernel: variable parameters unsupported");
    uopcg::opencl::Buffer b(ctx, static_cast<std::size_t>(p.nbytes));
    if (auto it = inputs.find(p.slot); it != inputs.end()) {
      if (it->second.size() != static_cast<std::size_t>(p.nbytes))
        uopcg::fail_runtime("run_kernel: input for slot " + std::to_string(p.slot) + " has the wrong size");
      b.write(it->second.data(), it->second.size());
    } else {
      b.fill(std::byte{0xFF});
    }
    ck.bind(p.slot, b);
    bufs.emplace_back(p.slot, std::move(b));
  }
  ck.launch().wait();
  for (auto& [slot, b] : bufs) r.buffers[slot] = b.read_all();
  return r;
}

// --- reference conversions (IEEE round-to-nearest-even) ---------------------------------------------
inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);  // NaN
  if (ax >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // overflow (incl. rounding) / inf
  if (ax < 0x38800000u) {  // subnormal half or zero
    const float m = std::bit_cast<float>(ax) * 16777216.0f;  // scale by 2^24: the subnormal mantissa
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(m)));
  }
  std::uint32_t r = ax - 0x38000000u;  // rebias exponent 127 -> 15 (in place)
  r = r + 0xFFFu + ((r >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (r >> 13));
}
inline float half_to_float(std::uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) v = mant ? std::nanf("") : INFINITY;
  else v = std::ldexp(static_cast<float>(mant + 1024), exp - 25);
  return sign ? -v : v;
}
inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}
inline float bf16_to_float(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

}  // namespace uopcg_test
