// uopcg single header runtime/opencl.hpp: the OpenCL launcher; needs the OpenCL headers and library (or an ICD loader).
// Generated from include/ by tools/amalgamate.py — do not edit; regenerate with
// `python3 tools/amalgamate.py`. Do not mix with include/'s headers in one translation unit;
// the single headers combine with each other (shared include guards).
// Includes single_include/uopcg/compile.hpp.
// Includes single_include/uopcg/uopcg.hpp.
// Inlined, in order: 1 headers from include/
//   uopcg/runtime/opencl.hpp
#pragma once
#ifndef UOPCG_SINGLE_HEADER
#define UOPCG_SINGLE_HEADER 1
#endif

// ---- begin uopcg/runtime/opencl.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_OPENCL_HPP
#define UOPCG_SINGLE_RUNTIME_OPENCL_HPP
// uopcg's OpenCL launcher: a small RAII layer over the OpenCL C API that builds and runs kernels
// rendered by render/opencl.hpp.
//
//   Device          platform/device selection: the first device, or UOPCG_OPENCL_DEVICE=<p>:<d>
//   Context         context + in-order profiling command queue
//   Buffer          device memory (blocking read / write / fill)
//   Program         a built program; a failed build's error carries the build log
//   Kernel, Event   arguments, enqueue, profiling times
//   CompiledKernel  a RenderedKernel built for a context: binds buffers by slot from the kernel's
//                   parameter list and launches with its global/local sizes
//
// Every failure goes through uopcg::fail_runtime (a uopcg::error by default) with a message naming
// the OpenCL call and the error code's name, e.g. "clSetKernelArg: CL_INVALID_ARG_INDEX (-49)".
// Needs the OpenCL headers and library (CL_TARGET_OPENCL_VERSION defaults to 120).

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#if defined(__APPLE__)
#include <OpenCL/cl.h>
#else
#include <CL/cl.h>
#endif

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../compile.hpp"  // single_include/uopcg/compile.hpp
#include "../uopcg.hpp"  // single_include/uopcg/uopcg.hpp

namespace uopcg::opencl {

// --- errors ------------------------------------------------------------------------------------------

/// The name of an OpenCL error code ("CL_INVALID_VALUE"), or "unknown OpenCL error".
constexpr std::string_view error_name(cl_int code) {
  switch (code) {
    case 0: return "CL_SUCCESS";
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -2: return "CL_DEVICE_NOT_AVAILABLE";
    case -3: return "CL_COMPILER_NOT_AVAILABLE";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -7: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case -8: return "CL_MEM_COPY_OVERLAP";
    case -9: return "CL_IMAGE_FORMAT_MISMATCH";
    case -10: return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -12: return "CL_MAP_FAILURE";
    case -13: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case -14: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case -15: return "CL_COMPILE_PROGRAM_FAILURE";
    case -16: return "CL_LINKER_NOT_AVAILABLE";
    case -17: return "CL_LINK_PROGRAM_FAILURE";
    case -18: return "CL_DEVICE_PARTITION_FAILED";
    case -19: return "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
    case -30: return "CL_INVALID_VALUE";
    case -31: return "CL_INVALID_DEVICE_TYPE";
    case -32: return "CL_INVALID_PLATFORM";
    case -33: return "CL_INVALID_DEVICE";
    case -34: return "CL_INVALID_CONTEXT";
    case -35: return "CL_INVALID_QUEUE_PROPERTIES";
    case -36: return "CL_INVALID_COMMAND_QUEUE";
    case -37: return "CL_INVALID_HOST_PTR";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -39: return "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR";
    case -40: return "CL_INVALID_IMAGE_SIZE";
    case -41: return "CL_INVALID_SAMPLER";
    case -42: return "CL_INVALID_BINARY";
    case -43: return "CL_INVALID_BUILD_OPTIONS";
    case -44: return "CL_INVALID_PROGRAM";
    case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -47: return "CL_INVALID_KERNEL_DEFINITION";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -53: return "CL_INVALID_WORK_DIMENSION";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -56: return "CL_INVALID_GLOBAL_OFFSET";
    case -57: return "CL_INVALID_EVENT_WAIT_LIST";
    case -58: return "CL_INVALID_EVENT";
    case -59: return "CL_INVALID_OPERATION";
    case -60: return "CL_INVALID_GL_OBJECT";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -62: return "CL_INVALID_MIP_LEVEL";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -64: return "CL_INVALID_PROPERTY";
    case -65: return "CL_INVALID_IMAGE_DESCRIPTOR";
    case -66: return "CL_INVALID_COMPILER_OPTIONS";
    case -67: return "CL_INVALID_LINKER_OPTIONS";
    case -68: return "CL_INVALID_DEVICE_PARTITION_COUNT";
    case -69: return "CL_INVALID_PIPE_SIZE";
    case -70: return "CL_INVALID_DEVICE_QUEUE";
    case -71: return "CL_INVALID_SPEC_ID";
    case -72: return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL error";
  }
}

/// Reports a failed OpenCL call: "<call>: <CODE NAME> (<code>)[: detail]".
[[noreturn]] inline void raise(std::string_view call, cl_int code, std::string_view detail = {}) {
  std::string m = "opencl: ";
  m.append(call).append(": ").append(error_name(code)).append(" (").append(std::to_string(code)).append(")");
  if (!detail.empty()) m.append(": ").append(detail);
  fail_runtime(std::move(m));
}
inline void check(cl_int code, std::string_view call, std::string_view detail = {}) {
  if (code != CL_SUCCESS) raise(call, code, detail);
}

namespace detail {

/// Move-only owner of an OpenCL object released with `Release`.
template <class T, cl_int (*Release)(T)>
class cl_handle {
 public:
  cl_handle() = default;
  explicit cl_handle(T h) : h_(h) {}
  cl_handle(const cl_handle&) = delete;
  cl_handle& operator=(const cl_handle&) = delete;
  cl_handle(cl_handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  cl_handle& operator=(cl_handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  ~cl_handle() { reset(); }
  T get() const { return h_; }
  explicit operator bool() const { return h_ != nullptr; }
  void reset() {
    if (h_) Release(h_);
    h_ = nullptr;
  }

 private:
  T h_ = nullptr;
};

inline std::string platform_string(cl_platform_id p, cl_platform_info what, const char* call = "clGetPlatformInfo") {
  std::size_t n = 0;
  check(clGetPlatformInfo(p, what, 0, nullptr, &n), call);
  std::string s(n, '\0');
  check(clGetPlatformInfo(p, what, n, s.data(), nullptr), call);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}
inline std::string device_string(cl_device_id d, cl_device_info what) {
  std::size_t n = 0;
  check(clGetDeviceInfo(d, what, 0, nullptr, &n), "clGetDeviceInfo");
  std::string s(n, '\0');
  check(clGetDeviceInfo(d, what, n, s.data(), nullptr), "clGetDeviceInfo");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}
inline std::vector<cl_platform_id> platforms() {
  cl_uint n = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &n);
  if (err == -1001 || n == 0) return {};  // no ICD installed / no platform
  check(err, "clGetPlatformIDs");
  std::vector<cl_platform_id> ids(n);
  check(clGetPlatformIDs(n, ids.data(), nullptr), "clGetPlatformIDs");
  return ids;
}
inline std::vector<cl_device_id> devices(cl_platform_id p) {
  cl_uint n = 0;
  cl_int err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
  if (err == CL_DEVICE_NOT_FOUND) return {};
  check(err, "clGetDeviceIDs");
  std::vector<cl_device_id> ids(n);
  check(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr), "clGetDeviceIDs");
  return ids;
}

}  // namespace detail

// --- device --------------------------------------------------------------------------------------

/// An OpenCL device and its platform (devices are not reference counted in OpenCL 1.2: no RAII).
class Device {
 public:
  Device(cl_platform_id platform, cl_device_id device, int platform_index, int device_index)
      : platform_(platform), device_(device), platform_index_(platform_index), device_index_(device_index) {}

  /// Device `device_index` of platform `platform_index` (indices as `clinfo -l` lists them).
  static Device at(int platform_index, int device_index) {
    const auto ps = detail::platforms();
    if (ps.empty()) fail_runtime("opencl: no OpenCL platform found (is an ICD such as PoCL installed?)");
    if (platform_index < 0 || static_cast<std::size_t>(platform_index) >= ps.size())
      fail_runtime("opencl: platform " + std::to_string(platform_index) + " does not exist (" +
                   std::to_string(ps.size()) + " platform(s))");
    const auto ds = detail::devices(ps[static_cast<std::size_t>(platform_index)]);
    if (device_index < 0 || static_cast<std::size_t>(device_index) >= ds.size())
      fail_runtime("opencl: platform " + std::to_string(platform_index) + " has no device " +
                   std::to_string(device_index) + " (" + std::to_string(ds.size()) + " device(s))");
    return Device(ps[static_cast<std::size_t>(platform_index)], ds[static_cast<std::size_t>(device_index)],
                  platform_index, device_index);
  }
  /// The first device of the first platform that has one.
  static Device first() {
    const auto ps = detail::platforms();
    for (std::size_t p = 0; p < ps.size(); ++p) {
      const auto ds = detail::devices(ps[p]);
      if (!ds.empty()) return Device(ps[p], ds[0], static_cast<int>(p), 0);
    }
    fail_runtime("opencl: no OpenCL device found (is an ICD such as PoCL installed?)");
  }
  /// Parses "<platform>:<device>" (UOPCG_OPENCL_DEVICE's format).
  static std::pair<int, int> parse_selector(std::string_view s) {
    auto number = [&](std::string_view part) {
      if (part.empty() || part.size() > 6) return -1;
      int v = 0;
      for (char c : part) {
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (c - '0');
      }
      return v;
    };
    const std::size_t colon = s.find(':');
    const int p = colon == std::string_view::npos ? -1 : number(s.substr(0, colon));
    const int d = colon == std::string_view::npos ? -1 : number(s.substr(colon + 1));
    if (p < 0 || d < 0)
      fail_runtime("opencl: UOPCG_OPENCL_DEVICE='" + std::string(s) + "' is not <platform>:<device> (e.g. 0:0)");
    return {p, d};
  }
  /// The device UOPCG_OPENCL_DEVICE=<platform>:<device> names, else the first device.
  static Device select() {
    const char* env = std::getenv("UOPCG_OPENCL_DEVICE");
    if (env && *env) {
      const auto [p, d] = parse_selector(env);
      return at(p, d);
    }
    return first();
  }

  cl_platform_id platform() const { return platform_; }
  cl_device_id id() const { return device_; }
  int platform_index() const { return platform_index_; }
  int device_index() const { return device_index_; }
  std::string name() const { return detail::device_string(device_, CL_DEVICE_NAME); }
  std::string platform_name() const { return detail::platform_string(platform_, CL_PLATFORM_NAME); }
  std::string version() const { return detail::device_string(device_, CL_DEVICE_VERSION); }
  /// The device's extensions, comma-joined (tinygrad's `arch`).
  std::string extensions() const {
    std::string s = detail::device_string(device_, CL_DEVICE_EXTENSIONS), out;
    std::size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && s[i] == ' ') ++i;
      std::size_t j = i;
      while (j < s.size() && s[j] != ' ') ++j;
      if (j > i) {
        if (!out.empty()) out += ',';
        out.append(s, i, j - i);
      }
      i = j;
    }
    return out;
  }
  std::size_t max_work_group_size() const {
    std::size_t v = 0;
    check(clGetDeviceInfo(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof v, &v, nullptr), "clGetDeviceInfo");
    return v;
  }
  std::uint64_t local_mem_size() const {
    cl_ulong v = 0;
    check(clGetDeviceInfo(device_, CL_DEVICE_LOCAL_MEM_SIZE, sizeof v, &v, nullptr), "clGetDeviceInfo");
    return v;
  }
  /// The emitter's target for this device (fp16 / fp64 from its extensions).
  render::OpenCLRenderer renderer() const { return render::OpenCLRenderer::for_arch(extensions()); }

 private:
  cl_platform_id platform_;
  cl_device_id device_;
  int platform_index_, device_index_;
};

// --- context, buffers ----------------------------------------------------------------------------

/// A context on one device with an in-order command queue that records profiling times.
class Context {
 public:
  explicit Context(const Device& device = Device::select()) : device_(device) {
    cl_int err = CL_SUCCESS;
    cl_device_id id = device_.id();
    context_ = context_handle(clCreateContext(nullptr, 1, &id, nullptr, nullptr, &err));
    check(err, "clCreateContext");
    queue_ = queue_handle(clCreateCommandQueue(context_.get(), id, CL_QUEUE_PROFILING_ENABLE, &err));
    check(err, "clCreateCommandQueue");
  }
  const Device& device() const { return device_; }
  cl_context get() const { return context_.get(); }
  cl_command_queue queue() const { return queue_.get(); }
  void finish() const { check(clFinish(queue_.get()), "clFinish"); }

 private:
  using context_handle = detail::cl_handle<cl_context, clReleaseContext>;
  using queue_handle = detail::cl_handle<cl_command_queue, clReleaseCommandQueue>;
  Device device_;
  context_handle context_;
  queue_handle queue_;
};

/// Device memory; reads and writes are blocking.
class Buffer {
 public:
  Buffer(const Context& ctx, std::size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE)
      : ctx_(&ctx), bytes_(bytes) {
    cl_int err = CL_SUCCESS;
    mem_ = handle(clCreateBuffer(ctx.get(), flags, bytes, nullptr, &err));
    check(err, "clCreateBuffer", "size " + std::to_string(bytes) + " bytes");
  }
  std::size_t size() const { return bytes_; }
  cl_mem get() const { return mem_.get(); }

  void write(const void* src, std::size_t bytes, std::size_t offset = 0) {
    check(clEnqueueWriteBuffer(ctx_->queue(), mem_.get(), CL_TRUE, offset, bytes, src, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
  }
  void read(void* dst, std::size_t bytes, std::size_t offset = 0) const {
    check(clEnqueueReadBuffer(ctx_->queue(), mem_.get(), CL_TRUE, offset, bytes, dst, 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
  }
  template <class T>
  void write(std::span<const T> data, std::size_t offset = 0) {
    write(data.data(), data.size_bytes(), offset);
  }
  template <class T>
  void read(std::span<T> data, std::size_t offset = 0) const {
    read(data.data(), data.size_bytes(), offset);
  }
  std::vector<std::byte> read_all() const {
    std::vector<std::byte> out(bytes_);
    if (bytes_) read(out.data(), bytes_);
    return out;
  }
  /// Sets every byte to `value`.
  void fill(std::byte value) {
    const std::vector<std::byte> bytes(bytes_, value);
    if (bytes_) write(bytes.data(), bytes_);
  }

 private:
  using handle = detail::cl_handle<cl_mem, clReleaseMemObject>;
  const Context* ctx_;
  std::size_t bytes_;
  handle mem_;
};

// --- programs, kernels, events --------------------------------------------------------------------

/// A program built from OpenCL C source for the context's device.
class Program {
 public:
  Program(const Context& ctx, std::string_view source, std::string_view options = {}) : ctx_(&ctx) {
    const char* text = source.data();
    const std::size_t length = source.size();
    cl_int err = CL_SUCCESS;
    program_ = handle(clCreateProgramWithSource(ctx.get(), 1, &text, &length, &err));
    check(err, "clCreateProgramWithSource");
    const std::string opts(options);
    cl_device_id id = ctx.device().id();
    err = clBuildProgram(program_.get(), 1, &id, opts.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
      std::string log;
      try {
        log = build_log();
      } catch (const uopcg::error&) {
        log = "(the build log could not be read)";
      }
      raise("clBuildProgram", err, "build log:\n" + log);
    }
  }
  cl_program get() const { return program_.get(); }
  std::string build_log() const {
    cl_device_id id = ctx_->device().id();
    std::size_t n = 0;
    check(clGetProgramBuildInfo(program_.get(), id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n), "clGetProgramBuildInfo");
    std::string s(n, '\0');
    check(clGetProgramBuildInfo(program_.get(), id, CL_PROGRAM_BUILD_LOG, n, s.data(), nullptr),
          "clGetProgramBuildInfo");
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
  }
  const Context& context() const { return *ctx_; }

 private:
  using handle = detail::cl_handle<cl_program, clReleaseProgram>;
  const Context* ctx_;
  handle program_;
};

/// A finished-or-pending command with profiling times.
class Event {
 public:
  Event() = default;
  explicit Event(cl_event e) : event_(e) {}
  cl_event get() const { return event_.get(); }
  void wait() const {
    cl_event e = ev();
    check(clWaitForEvents(1, &e), "clWaitForEvents");
  }
  /// Device time between the command's start and end, in nanoseconds (waits for it).
  std::uint64_t duration_ns() const {
    wait();
    cl_ulong start = 0, end = 0;
    check(clGetEventProfilingInfo(ev(), CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
          "clGetEventProfilingInfo");
    check(clGetEventProfilingInfo(ev(), CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
          "clGetEventProfilingInfo");
    return end - start;
  }

 private:
  cl_event ev() const {
    if (!event_) fail_runtime("opencl: Event: no command recorded");
    return event_.get();
  }
  using handle = detail::cl_handle<cl_event, clReleaseEvent>;
  handle event_;
};

class Kernel {
 public:
  Kernel(const Program& program, std::string_view name) : ctx_(&program.context()) {
    cl_int err = CL_SUCCESS;
    const std::string n(name);
    kernel_ = handle(clCreateKernel(program.get(), n.c_str(), &err));
    check(err, "clCreateKernel", "kernel '" + n + "'");
  }
  cl_kernel get() const { return kernel_.get(); }
  void set_arg(cl_uint index, const Buffer& b) {
    cl_mem m = b.get();
    check(clSetKernelArg(kernel_.get(), index, sizeof m, &m), "clSetKernelArg", "argument " + std::to_string(index));
  }
  template <class T>
    requires std::is_arithmetic_v<T>
  void set_arg(cl_uint index, T value) {
    check(clSetKernelArg(kernel_.get(), index, sizeof value, &value), "clSetKernelArg",
          "argument " + std::to_string(index));
  }
  /// Enqueues an NDRange: `global` work-items per dimension, `local` work-group size (nullopt: the
  /// runtime chooses).
  Event enqueue(const std::array<std::size_t, 3>& global, const std::optional<std::array<std::size_t, 3>>& local) {
    cl_event e = nullptr;
    check(clEnqueueNDRangeKernel(ctx_->queue(), kernel_.get(), 3, nullptr, global.data(),
                                 local ? local->data() : nullptr, 0, nullptr, &e),
          "clEnqueueNDRangeKernel");
    return Event(e);
  }

 private:
  using handle = detail::cl_handle<cl_kernel, clReleaseKernel>;
  const Context* ctx_;
  handle kernel_;
};

// --- rendered kernels ------------------------------------------------------------------------------

/// A rendered kernel built for a context. Arguments are bound by the parameter list (buffers by
/// slot, sizes checked); launch() uses the kernel's global and local sizes.
class CompiledKernel {
 public:
  CompiledKernel(const Context& ctx, render::RenderedKernel rendered, std::string_view options = {})
      : info_(checked_local_memory(ctx, std::move(rendered))),
        program_(ctx, info_.source.view(), options),
        kernel_(program_, info_.function_name.view()),
        bound_(info_.params.size(), false) {}

  const render::RenderedKernel& info() const { return info_; }
  const Program& program() const { return program_; }
  Kernel& kernel() { return kernel_; }

  /// Binds `b` to the buffer parameter of slot `slot`; `b` must hold the parameter's bytes.
  void bind(std::int64_t slot, const Buffer& b) {
    const render::KernelParam* p = info_.param_for_slot(slot);
    if (!p) fail_runtime("opencl: kernel " + std::string(info_.function_name.view()) + " has no buffer slot " +
                         std::to_string(slot));
    if (b.size() < static_cast<std::size_t>(p->nbytes))
      fail_runtime("opencl: buffer for " + std::string(p->name.view()) + " has " + std::to_string(b.size()) +
                   " bytes, the kernel needs " + std::to_string(p->nbytes));
    kernel_.set_arg(static_cast<cl_uint>(p->index), b);
    bound_[static_cast<std::size_t>(p->index)] = true;
  }
  /// Sets the variable parameter of slot `slot` (an int). The value must lie in the variable's bounds
  /// (its buffers are sized for them); launch sizes that depend on it follow it.
  void set_var(std::int64_t slot, std::int32_t value) {
    for (const auto& p : info_.params)
      if (p.kind == render::ParamKind::var && p.slot == slot) {
        if (value < p.var_min || value > p.var_max)
          fail_runtime("opencl: kernel " + std::string(info_.function_name.view()) + ": variable " +
                       std::string(p.var_name.empty() ? p.name.view() : p.var_name.view()) + " = " + std::to_string(value) +
                       " is outside its bounds [" + std::to_string(p.var_min) + ", " + std::to_string(p.var_max) + "]");
        kernel_.set_arg(static_cast<cl_uint>(p.index), static_cast<cl_int>(value));
        bound_[static_cast<std::size_t>(p.index)] = true;
        for (render::VarValue& v : vars_)
          if (v.slot == slot) {
            v.value = value;
            return;
          }
        vars_.push_back({slot, value});
        return;
      }
    fail_runtime("opencl: kernel " + std::string(info_.function_name.view()) + " has no variable slot " +
                 std::to_string(slot));
  }
  /// Sets the variable named `name` (a builder `variable()`, whose slot the pipeline chooses).
  void set_var(std::string_view name, std::int32_t value) {
    const render::KernelParam* p = info_.var_named(name);
    if (!p) {
      std::string have;
      for (const auto& q : info_.params)
        if (q.kind == render::ParamKind::var) have += (have.empty() ? "" : ", ") + std::string(q.var_name.view());
      fail_runtime("opencl: kernel " + std::string(info_.function_name.view()) + " has no variable named " +
                   std::string(name) + " (its variables: " + (have.empty() ? "none" : have) + ")");
    }
    set_var(p->slot, value);
  }
  /// The launch sizes of the next launch(): the rendered sizes, computed from the variables' values
  /// where they depend on them.
  render::RenderedKernel::LaunchSizes launch_sizes() const { return info_.launch_sizes(vars_); }
  /// One buffer per buffer parameter, sized to it, in parameter order (not bound).
  std::vector<Buffer> make_buffers(const Context& ctx) const {
    std::vector<Buffer> out;
    for (const auto& p : info_.params)
      if (p.kind == render::ParamKind::buffer) out.emplace_back(ctx, static_cast<std::size_t>(p.nbytes));
    return out;
  }
  /// Enqueues the kernel: OpenCL global work size = global_size × local_size, local = local_size
  /// (launch_sizes(): a size that depends on a variable is computed from its value).
  Event launch() {
    for (std::size_t i = 0; i < bound_.size(); ++i)
      if (!bound_[i]) {
        const render::KernelParam& p = info_.params[i];
        const bool named_var = p.kind == render::ParamKind::var && !p.var_name.empty();
        fail_runtime("opencl: kernel " + std::string(info_.function_name.view()) + ": argument " + std::to_string(i) +
                     " (" + (named_var ? "variable " + std::string(p.var_name.view()) + ", " : std::string()) +
                     std::string(p.name.view()) + ") is not " + (p.kind == render::ParamKind::var ? "set" : "bound"));
      }
    const render::RenderedKernel::LaunchSizes sizes = launch_sizes();
    const auto g = sizes.global_work_size();
    std::array<std::size_t, 3> global{};
    for (int d = 0; d < 3; ++d) global[d] = static_cast<std::size_t>(g[d]);
    std::optional<std::array<std::size_t, 3>> local;
    if (sizes.local_size) {
      local.emplace();
      for (int d = 0; d < 3; ++d) (*local)[d] = static_cast<std::size_t>((*sizes.local_size)[d]);
    }
    return kernel_.enqueue(global, local);
  }

 private:
  // Before the build: a device without the kernel's __local memory fails the launch with a bare
  // CL_OUT_OF_RESOURCES; this names the kernel and both sizes.
  static render::RenderedKernel checked_local_memory(const Context& ctx, render::RenderedKernel rk) {
    if (rk.local_bytes == 0) return rk;
    const std::uint64_t have = ctx.device().local_mem_size();
    if (static_cast<std::uint64_t>(rk.local_bytes) > have)
      fail_runtime("opencl: kernel " + std::string(rk.function_name.view()) + " declares " +
                   std::to_string(rk.local_bytes) + " bytes of __local memory; the device has " + std::to_string(have));
    return rk;
  }

  render::RenderedKernel info_;
  Program program_;
  Kernel kernel_;
  std::vector<bool> bound_;
  std::vector<render::VarValue> vars_;  // the values set_var gave
};

}  // namespace uopcg::opencl
#endif  // UOPCG_SINGLE_RUNTIME_OPENCL_HPP
// ---- end uopcg/runtime/opencl.hpp ----
