// Running a rendered kernel on an OpenCL device with a kernel file's recorded inputs, and comparing
// its outputs with the recorded outputs (within the file's tolerance; half compared as half values).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <uopcg/io/json.hpp>
#include <uopcg/runtime/opencl.hpp>

namespace uopcg_cli {

inline double half_to_double(std::uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
  double v;
  if (exp == 0) v = std::ldexp(mant, -24);
  else if (exp == 31) v = mant ? std::nan("") : INFINITY;
  else v = std::ldexp(mant + 1024, exp - 25);
  return sign ? -v : v;
}

inline double bf16_to_double(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

/// Element i of a little-endian buffer of float dtype `dt`, as a double.
inline double float_at(const std::vector<std::byte>& b, uopcg::DType dt, std::size_t i) {
  switch (dt) {
    case uopcg::DType::float32: { float f; std::memcpy(&f, b.data() + 4 * i, 4); return f; }
    case uopcg::DType::float64: { double d; std::memcpy(&d, b.data() + 8 * i, 8); return d; }
    case uopcg::DType::float16: { std::uint16_t h; std::memcpy(&h, b.data() + 2 * i, 2); return half_to_double(h); }
    case uopcg::DType::bfloat16: { std::uint16_t h; std::memcpy(&h, b.data() + 2 * i, 2); return bf16_to_double(h); }
    default: uopcg::fail_runtime("float_at: not a float dtype");
  }
}

/// Element i of a little-endian buffer of dtype `dt`, as text: integers exactly (signed or unsigned
/// as the dtype is), floats with enough digits to tell two values apart.
inline std::string value_text(const std::vector<std::byte>& b, uopcg::DType dt, std::size_t i) {
  char buf[64];
  if (uopcg::is_float(dt)) {
    std::snprintf(buf, sizeof buf, "%.9g", float_at(b, dt, i));
    return buf;
  }
  const std::size_t isz = static_cast<std::size_t>(uopcg::itemsize(dt));
  std::uint64_t u = 0;
  std::memcpy(&u, b.data() + isz * i, isz);
  if (uopcg::is_unsigned(dt) || uopcg::is_bool(dt)) {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(u));
  } else {
    if (isz < 8 && (u >> (8 * isz - 1)) & 1) u |= ~std::uint64_t{0} << (8 * isz);  // sign-extend
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(u));
  }
  return buf;
}

struct Comparison {
  std::size_t mismatches = 0, count = 0;
  std::string first;                // the first mismatching element, described
  std::vector<std::string> listed;  // the first `show` mismatching elements: "i: got G, expected W"
};

/// Compares `got` with the expected buffer; bit-exact for integers and for a 0/0 tolerance.
inline Comparison compare_output(const std::vector<std::byte>& got, const uopcg::io::DataBuffer& want, double rtol,
                                 double atol, std::size_t show = 0) {
  Comparison c;
  c.count = static_cast<std::size_t>(want.count);
  const std::size_t isz = static_cast<std::size_t>(uopcg::itemsize(want.dtype));
  const bool exact = (rtol == 0 && atol == 0) || !uopcg::is_float(want.dtype);
  if (got.size() < c.count * isz) {
    c.mismatches = c.count;
    c.first = "the device buffer is too small";
    return c;
  }
  for (std::size_t i = 0; i < c.count; ++i) {
    bool ok;
    std::string detail;
    if (exact) {
      ok = std::memcmp(got.data() + i * isz, want.bytes.data() + i * isz, isz) == 0;
    } else {
      const double g = float_at(got, want.dtype, i), w = float_at(want.bytes, want.dtype, i);
      ok = (std::isnan(g) && std::isnan(w)) || g == w || std::abs(g - w) <= atol + rtol * std::abs(w);
      detail = ": got " + std::to_string(g) + ", expected " + std::to_string(w);
    }
    if (!ok && c.mismatches < show)
      c.listed.push_back(std::to_string(i) + ": got " + value_text(got, want.dtype, i) + ", expected " +
                         value_text(want.bytes, want.dtype, i));
    if (!ok && c.mismatches++ == 0) c.first = "element " + std::to_string(i) + detail;
  }
  return c;
}

/// A kernel bound to fresh buffers holding the file's inputs (outputs pre-filled with 0xFF).
struct Bound {
  uopcg::opencl::CompiledKernel kernel;
  std::vector<std::pair<std::int64_t, uopcg::opencl::Buffer>> buffers;

  Bound(const uopcg::opencl::Context& ctx, uopcg::render::RenderedKernel rk, const uopcg::io::KernelData& data)
      : kernel(ctx, std::move(rk)) {
    for (const auto& p : kernel.info().params) {
      if (p.kind != uopcg::render::ParamKind::buffer)
        uopcg::fail_runtime("run: kernel variable parameters are not supported by kernel files (" +
                            std::string(p.name.view()) + ")");
      uopcg::opencl::Buffer b(ctx, static_cast<std::size_t>(p.nbytes));
      if (const uopcg::io::DataBuffer* in = data.input(p.slot)) {
        if (in->bytes.size() != static_cast<std::size_t>(p.nbytes))
          uopcg::fail_runtime("run: input slot " + std::to_string(p.slot) + " has " + std::to_string(in->bytes.size()) +
                              " bytes, the kernel's parameter " + std::string(p.name.view()) + " needs " +
                              std::to_string(p.nbytes));
        b.write(in->bytes.data(), in->bytes.size());
      } else {
        b.fill(std::byte{0xFF});
      }
      kernel.bind(p.slot, b);
      buffers.emplace_back(p.slot, std::move(b));
    }
  }
  const uopcg::opencl::Buffer* buffer(std::int64_t slot) const {
    for (const auto& [s, b] : buffers)
      if (s == slot) return &b;
    return nullptr;
  }
  /// Device time of one launch, in microseconds.
  double run_us() { return static_cast<double>(kernel.launch().duration_ns()) / 1000.0; }
  /// Median device time of `runs` launches, in microseconds.
  double median_us(int runs) {
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) t.push_back(run_us());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

}  // namespace uopcg_cli
