// Runs an OpenCL C kernel on an Adreno A6xx GPU through KGSL ioctls.
//
// The vendor OpenCL library is used only as a compiler: it is loaded with dlopen at run time (never
// linked), builds the source, and hands back the Qualcomm program binary. uopcg then parses that
// binary, uploads it and launches it directly through /dev/kgsl-3d0 — once on its own, then as a
// batch that is patched and resubmitted.
//
// On a machine without KGSL it says so and exits 0.
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "uopcg/runtime/kgsl.hpp"

namespace kg = uopcg::kgsl;

namespace {

constexpr const char* kernel_name = "vadd";
constexpr const char* source = R"CL(
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
)CL";

// The handful of OpenCL 1.2 entry points we need, declared here so no CL headers are required.
using cl_int = std::int32_t;
using cl_uint = std::uint32_t;
using cl_ulong = std::uint64_t;
using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_program = struct _cl_program*;
constexpr cl_ulong CL_DEVICE_TYPE_GPU = 1 << 2;
constexpr cl_uint CL_PROGRAM_BINARY_SIZES = 0x1165;
constexpr cl_uint CL_PROGRAM_BINARIES = 0x1166;
constexpr cl_uint CL_PROGRAM_BUILD_LOG = 0x1183;

struct opencl {
  void* lib = nullptr;
  cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id*, cl_uint*) = nullptr;
  cl_int (*GetDeviceIDs)(cl_platform_id, cl_ulong, cl_uint, cl_device_id*, cl_uint*) = nullptr;
  cl_context (*CreateContext)(const std::intptr_t*, cl_uint, const cl_device_id*, void*, void*, cl_int*) = nullptr;
  cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char**, const std::size_t*, cl_int*) = nullptr;
  cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id*, const char*, void*, void*) = nullptr;
  cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_uint, std::size_t, void*, std::size_t*) = nullptr;
  cl_int (*GetProgramInfo)(cl_program, cl_uint, std::size_t, void*, std::size_t*) = nullptr;
  cl_int (*ReleaseProgram)(cl_program) = nullptr;
  cl_int (*ReleaseContext)(cl_context) = nullptr;

  opencl() {
    for (const char* name : {"libOpenCL.so", "libOpenCL.so.1", "/vendor/lib64/libOpenCL.so",
                             "/system/vendor/lib64/libOpenCL.so", "/usr/lib/aarch64-linux-gnu/libOpenCL.so.1"}) {
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    }
    if (!lib) return;
    bind(GetPlatformIDs, "clGetPlatformIDs");
    bind(GetDeviceIDs, "clGetDeviceIDs");
    bind(CreateContext, "clCreateContext");
    bind(CreateProgramWithSource, "clCreateProgramWithSource");
    bind(BuildProgram, "clBuildProgram");
    bind(GetProgramBuildInfo, "clGetProgramBuildInfo");
    bind(GetProgramInfo, "clGetProgramInfo");
    bind(ReleaseProgram, "clReleaseProgram");
    bind(ReleaseContext, "clReleaseContext");
  }
  ~opencl() {
    if (lib) dlclose(lib);
  }
  opencl(const opencl&) = delete;
  opencl& operator=(const opencl&) = delete;
  template <class F>
  void bind(F& f, const char* sym) {
    f = reinterpret_cast<F>(dlsym(lib, sym));
    if (!f) ok_ = false;
  }
  bool ok() const { return lib && ok_; }
  bool ok_ = true;
};

/// Compiles `src` with the vendor compiler and returns the program binary (empty + message on error).
std::vector<std::byte> compile(opencl& cl, const char* src, std::string& error) {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_uint n = 0;
  if (cl.GetPlatformIDs(1, &platform, &n) != 0 || n == 0) return error = "no OpenCL platform", std::vector<std::byte>{};
  if (cl.GetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device, &n) != 0 || n == 0)
    return error = "no OpenCL GPU device", std::vector<std::byte>{};
  cl_int err = 0;
  cl_context ctx = cl.CreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  if (!ctx || err) return error = "clCreateContext failed: " + std::to_string(err), std::vector<std::byte>{};
  std::vector<std::byte> binary;
  cl_program prog = cl.CreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  if (!prog || err) {
    error = "clCreateProgramWithSource failed: " + std::to_string(err);
  } else {
    if ((err = cl.BuildProgram(prog, 1, &device, "", nullptr, nullptr)) != 0) {
      std::size_t len = 0;
      cl.GetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &len);
      std::string log(len, '\0');
      cl.GetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, len, log.data(), nullptr);
      error = "clBuildProgram failed (" + std::to_string(err) + "):\n" + log;
    } else {
      std::size_t size = 0;
      cl.GetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
      binary.resize(size);
      unsigned char* ptr = reinterpret_cast<unsigned char*>(binary.data());
      if (size == 0 || cl.GetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != 0) {
        error = "clGetProgramInfo(CL_PROGRAM_BINARIES) failed";
        binary.clear();
      }
    }
    cl.ReleaseProgram(prog);
  }
  cl.ReleaseContext(ctx);
  return binary;
}

int run() {
  auto& sys = kg::real_sys::instance();
  if (!kg::device::available(sys)) {
    std::printf("no KGSL device (%s cannot be opened): this example needs an Adreno GPU; nothing to do\n",
                kg::default_device_path);
    return 0;
  }
  opencl cl;
  if (!cl.ok()) {
    std::fprintf(stderr, "%s is present, but the vendor libOpenCL.so (the compiler) could not be loaded: %s\n",
                 kg::default_device_path, cl.lib ? "missing entry points" : dlerror());
    return 1;
  }
  std::string error;
  const std::vector<std::byte> binary = compile(cl, source, error);
  if (binary.empty()) {
    std::fprintf(stderr, "compiling the kernel failed: %s\n", error.c_str());
    return 1;
  }

  kg::device dev;
  std::printf("device: Adreno %s, chip id 0x%08x, GMEM %llu KiB, page %llu\n", dev.chip().name().c_str(),
              dev.chip().raw, static_cast<unsigned long long>(dev.gmem_size() / 1024),
              static_cast<unsigned long long>(dev.page_size()));
  kg::queue q(dev);
  kg::kernel k = q.load(binary, kernel_name);
  std::printf("kernel '%s': %u bytes of code, %u full / %u half registers, %zu arguments, max %u threads\n",
              k.name().c_str(), k.info().image_size(), k.info().fregs, k.info().hregs, k.info().args.size(),
              k.layout().max_threads);

  constexpr int n = 1 << 20;
  auto a = dev.alloc(n * 4), b = dev.alloc(n * 4), c = dev.alloc(n * 4);
  auto* pa = static_cast<float*>(a.data());
  auto* pb = static_cast<float*>(b.data());
  for (int i = 0; i < n; ++i) {
    pa[i] = static_cast<float>(i);
    pb[i] = 0.5f * static_cast<float>(i);
  }
  const kg::launch_dims dims{{n, 1, 1}, {128, 1, 1}};
  q.wait(q.launch(k, {kg::buffer_arg(a), kg::buffer_arg(b), kg::buffer_arg(c), kg::scalar_arg<std::int32_t>(n)}, dims));
  const auto* pc = static_cast<const float*>(c.data());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += pc[i] != 1.5f * static_cast<float>(i);
  std::printf("single launch: %s (%d of %d wrong)\n", bad ? "FAILED" : "ok", bad, n);

  // Batch: 16 launches chained c = a + b, then a = c + b, ...; patched and resubmitted.
  kg::batch batch(q);
  for (int i = 0; i < 16; ++i) {
    const auto& in = i % 2 ? c : a;
    const auto& out = i % 2 ? a : c;
    batch.add(k, {kg::buffer_arg(in), kg::buffer_arg(b), kg::buffer_arg(out), kg::scalar_arg<std::int32_t>(n)}, dims);
  }
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int frames = 50;
  for (int f = 0; f < frames; ++f) batch.submit();
  q.synchronize();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("batch: %d submissions x 16 launches in %.2f ms (%.1f us per launch, GPU time included)\n", frames, ms,
              1000.0 * ms / (frames * 16));
  return bad ? 1 : 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const uopcg::error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
