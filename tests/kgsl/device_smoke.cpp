// On-device smoke check of the KGSL launcher (run by scripts/kgsl-smoke.sh on a real Adreno A630;
// built, never run, by the test suite). It compiles OpenCL C with the vendor libOpenCL.so
// (dlopen'ed), runs each kernel through the vendor OpenCL runtime for the reference, then through
// uopcg's KGSL launcher, and compares the outputs:
//   private    a kernel with a dynamically indexed private array (it must get private memory),
//              in both register encodings
//   big        a kernel whose machine code is over 8 KiB (the shader preload is capped at the
//              64-unit instruction cache, the rest is fetched on demand)
//   replay     a captured sequence of 24 launches replayed 3 times with a rebound input buffer and
//              a changed scalar variable
//   sandbox    in a forked child: the same replay after entering the seccomp sandbox, and
//              socket(AF_CAN) refused
// Prints one "PASS name ..." or "FAIL name ..." line per check and exits 0 only if all passed; 2
// when there is no KGSL device or no vendor OpenCL library (nothing was checked).
#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "uopcg/runtime/kgsl.hpp"

namespace kg = uopcg::kgsl;

namespace {

// --- the vendor OpenCL runtime, declared here so no CL headers are needed -----------------------
using cl_int = std::int32_t;
using cl_uint = std::uint32_t;
using cl_ulong = std::uint64_t;
using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_mem = struct _cl_mem*;
constexpr cl_ulong CL_DEVICE_TYPE_GPU = 1 << 2;
constexpr cl_uint CL_PROGRAM_BINARY_SIZES = 0x1165, CL_PROGRAM_BINARIES = 0x1166, CL_PROGRAM_BUILD_LOG = 0x1183;
constexpr cl_ulong CL_MEM_READ_WRITE = 1, CL_MEM_COPY_HOST_PTR = 1 << 5;

struct opencl {
  void* lib = nullptr;
  bool ok = true;
#define UOPCG_CL_FN(ret, name, ...) ret (*name)(__VA_ARGS__) = nullptr;
  UOPCG_CL_FN(cl_int, GetPlatformIDs, cl_uint, cl_platform_id*, cl_uint*)
  UOPCG_CL_FN(cl_int, GetDeviceIDs, cl_platform_id, cl_ulong, cl_uint, cl_device_id*, cl_uint*)
  UOPCG_CL_FN(cl_context, CreateContext, const std::intptr_t*, cl_uint, const cl_device_id*, void*, void*, cl_int*)
  UOPCG_CL_FN(cl_command_queue, CreateCommandQueue, cl_context, cl_device_id, cl_ulong, cl_int*)
  UOPCG_CL_FN(cl_program, CreateProgramWithSource, cl_context, cl_uint, const char**, const std::size_t*, cl_int*)
  UOPCG_CL_FN(cl_int, BuildProgram, cl_program, cl_uint, const cl_device_id*, const char*, void*, void*)
  UOPCG_CL_FN(cl_int, GetProgramBuildInfo, cl_program, cl_device_id, cl_uint, std::size_t, void*, std::size_t*)
  UOPCG_CL_FN(cl_int, GetProgramInfo, cl_program, cl_uint, std::size_t, void*, std::size_t*)
  UOPCG_CL_FN(cl_kernel, CreateKernel, cl_program, const char*, cl_int*)
  UOPCG_CL_FN(cl_int, SetKernelArg, cl_kernel, cl_uint, std::size_t, const void*)
  UOPCG_CL_FN(cl_mem, CreateBuffer, cl_context, cl_ulong, std::size_t, void*, cl_int*)
  UOPCG_CL_FN(cl_int, EnqueueReadBuffer, cl_command_queue, cl_mem, cl_uint, std::size_t, std::size_t, void*, cl_uint, const void*, void*)
  UOPCG_CL_FN(cl_int, EnqueueNDRangeKernel, cl_command_queue, cl_kernel, cl_uint, const std::size_t*, const std::size_t*,
              const std::size_t*, cl_uint, const void*, void*)
  UOPCG_CL_FN(cl_int, Finish, cl_command_queue)
  UOPCG_CL_FN(cl_int, ReleaseMemObject, cl_mem)
  UOPCG_CL_FN(cl_int, ReleaseKernel, cl_kernel)
  UOPCG_CL_FN(cl_int, ReleaseProgram, cl_program)
  UOPCG_CL_FN(cl_int, ReleaseCommandQueue, cl_command_queue)
  UOPCG_CL_FN(cl_int, ReleaseContext, cl_context)
#undef UOPCG_CL_FN
  cl_device_id device = nullptr;
  cl_context ctx = nullptr;
  cl_command_queue queue = nullptr;

  opencl() {
    for (const char* name : {"libOpenCL.so", "libOpenCL.so.1", "/vendor/lib64/libOpenCL.so", "/system/vendor/lib64/libOpenCL.so",
                             "/usr/lib/aarch64-linux-gnu/libOpenCL.so.1"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      ok = false;
      return;
    }
    bind(GetPlatformIDs, "clGetPlatformIDs");
    bind(GetDeviceIDs, "clGetDeviceIDs");
    bind(CreateContext, "clCreateContext");
    bind(CreateCommandQueue, "clCreateCommandQueue");
    bind(CreateProgramWithSource, "clCreateProgramWithSource");
    bind(BuildProgram, "clBuildProgram");
    bind(GetProgramBuildInfo, "clGetProgramBuildInfo");
    bind(GetProgramInfo, "clGetProgramInfo");
    bind(CreateKernel, "clCreateKernel");
    bind(SetKernelArg, "clSetKernelArg");
    bind(CreateBuffer, "clCreateBuffer");
    bind(EnqueueReadBuffer, "clEnqueueReadBuffer");
    bind(EnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
    bind(Finish, "clFinish");
    bind(ReleaseMemObject, "clReleaseMemObject");
    bind(ReleaseKernel, "clReleaseKernel");
    bind(ReleaseProgram, "clReleaseProgram");
    bind(ReleaseCommandQueue, "clReleaseCommandQueue");
    bind(ReleaseContext, "clReleaseContext");
    if (!ok) return;
    cl_platform_id platform = nullptr;
    cl_uint n = 0;
    cl_int err = 0;
    if (GetPlatformIDs(1, &platform, &n) != 0 || n == 0 || GetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device, &n) != 0 || n == 0 ||
        !(ctx = CreateContext(nullptr, 1, &device, nullptr, nullptr, &err)) || err ||
        !(queue = CreateCommandQueue(ctx, device, 0, &err)) || err)
      ok = false;
  }
  ~opencl() {
    if (queue) ReleaseCommandQueue(queue);
    if (ctx) ReleaseContext(ctx);
  }
  opencl(const opencl&) = delete;
  opencl& operator=(const opencl&) = delete;
  template <class F>
  void bind(F& f, const char* sym) {
    f = reinterpret_cast<F>(dlsym(lib, sym));
    if (!f) ok = false;
  }
  static void check(cl_int e, const char* what) {
    if (e != 0) uopcg::fail_runtime(std::string("OpenCL ") + what + " failed: " + std::to_string(e));
  }

  /// Builds `src`; returns the program and its binary (what uopcg launches).
  cl_program build(const std::string& src, std::vector<std::byte>& binary) {
    const char* s = src.c_str();
    cl_int err = 0;
    cl_program p = CreateProgramWithSource(ctx, 1, &s, nullptr, &err);
    check(err, "clCreateProgramWithSource");
    if ((err = BuildProgram(p, 1, &device, "", nullptr, nullptr)) != 0) {
      std::size_t len = 0;
      GetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &len);
      std::string log(len, '\0');
      GetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, len, log.data(), nullptr);
      uopcg::fail_runtime("clBuildProgram failed (" + std::to_string(err) + "):\n" + log);
    }
    std::size_t size = 0;
    check(GetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr), "clGetProgramInfo(BINARY_SIZES)");
    binary.resize(size);
    auto* ptr = reinterpret_cast<unsigned char*>(binary.data());
    check(GetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr), "clGetProgramInfo(BINARIES)");
    return p;
  }
  cl_mem buffer(const std::vector<float>& init) {
    cl_int err = 0;
    cl_mem m = CreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, init.size() * 4, const_cast<float*>(init.data()), &err);
    check(err, "clCreateBuffer");
    return m;
  }
  std::vector<float> read(cl_mem m, std::size_t n) {
    std::vector<float> v(n);
    check(EnqueueReadBuffer(queue, m, 1, 0, n * 4, v.data(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
    return v;
  }
};

/// One argument for both paths: an index into the buffers, or a 4-byte scalar.
struct arg {
  int buffer = -1;
  std::uint32_t bits = 0;
};
void cl_run(opencl& cl, cl_program p, const char* name, const std::vector<cl_mem>& bufs, const std::vector<arg>& args, std::size_t global) {
  cl_int err = 0;
  cl_kernel k = cl.CreateKernel(p, name, &err);
  opencl::check(err, "clCreateKernel");
  for (cl_uint i = 0; i < args.size(); ++i) {
    if (args[i].buffer >= 0) opencl::check(cl.SetKernelArg(k, i, sizeof(cl_mem), &bufs[static_cast<std::size_t>(args[i].buffer)]), "clSetKernelArg");
    else opencl::check(cl.SetKernelArg(k, i, 4, &args[i].bits), "clSetKernelArg");
  }
  const std::size_t local = 64;
  opencl::check(cl.EnqueueNDRangeKernel(cl.queue, k, 1, nullptr, &global, &local, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
  opencl::check(cl.Finish(cl.queue), "clFinish");
  cl.ReleaseKernel(k);
}

/// "" when equal within float rounding of the same binary, else a description.
std::string compare(const std::vector<float>& want, const float* got, std::size_t n) {
  std::size_t bad = 0, first = n;
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = std::fabs(double(want[i]) - double(got[i]));
    const bool same = (std::isnan(want[i]) && std::isnan(got[i])) || d <= 1e-5 * std::fabs(double(want[i])) + 1e-6;
    if (!same) {
      if (first == n) first = i;
      ++bad;
      worst = std::max(worst, d);
    }
  }
  if (!bad) return "";
  char s[200];
  std::snprintf(s, sizeof s, "%zu of %zu values differ (first at %zu: OpenCL %g, KGSL %g; worst difference %g)", bad, n, first,
                double(want[first]), double(got[first]), worst);
  return s;
}

int failures = 0;
void report(bool ok, const std::string& name, const std::string& what) {
  std::printf("%s %s %s\n", ok ? "PASS" : "FAIL", name.c_str(), what.c_str());
  std::fflush(stdout);
  failures += !ok;
}

constexpr std::size_t n = 1 << 16;

const char* private_src = R"CL(
__kernel void pvt(__global const float* a, __global float* out, int n, int k) {
  int i = get_global_id(0);
  if (i >= n) return;
  float t[160];
  for (int j = 0; j < 160; j++) t[j] = a[(i + j) % n] + (float)j;
  float s = 0.0f;
  for (int j = 0; j < 160; j++) s += t[(j * k + i) % 160] * (float)(j & 7);
  out[i] = s;
}
)CL";

const char* axpb_src = R"CL(
__kernel void axpb(__global const float* x, __global const float* b, __global float* y, int n, float s) {
  int i = get_global_id(0);
  if (i < n) y[i] = x[i] * s + b[i];
}
)CL";

// A straight-line kernel of `steps` dependent steps with distinct constants: no folding, so its
// machine code grows with `steps`.
std::string big_src(int steps) {
  std::string s = "__kernel void big(__global const float* a, __global float* out, int n) {\n"
                  "  int i = get_global_id(0);\n  if (i >= n) return;\n  float x = a[i], y = x * 0.5f;\n";
  char line[200];
  for (int j = 0; j < steps; ++j) {
    std::snprintf(line, sizeof line, "  x = fma(x, %.6ff, %.6ff); y = fma(y, x, %.6ff); if (y > %.3ff) y *= 0.25f;\n",
                  1.0 + (j % 13) * 1e-4, 0.01 * (j % 17) + 0.003, 0.02 * (j % 11) - 0.05, 2.0 + (j % 5));
    s += line;
  }
  return s + "  out[i] = x + y;\n}\n";
}

std::vector<float> input(int seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(float(i) * 0.001f + float(seed)) * 2.0f;
  return v;
}

// --- the checks ----------------------------------------------------------------------------------

void check_private(opencl& cl) {
  std::vector<std::byte> bin;
  cl_program p = cl.build(private_src, bin);
  const kg::program_info info = kg::parse_program(bin, "pvt");
  if (info.pvtmem == 0) {
    report(false, "private", "the compiler kept the private array in registers (pvtmem 0): the check does not test private memory");
    cl.ReleaseProgram(p);
    return;
  }
  const auto a = input(1);
  std::vector<cl_mem> cb{cl.buffer(a), cl.buffer(std::vector<float>(n))};
  cl_run(cl, p, "pvt", cb, {{0}, {1}, {-1, std::uint32_t(n)}, {-1, 37}}, n);
  const auto want = cl.read(cb[1], n);
  for (cl_mem m : cb) cl.ReleaseMemObject(m);
  cl.ReleaseProgram(p);
  for (kg::register_encoding enc : {kg::register_encoding::freedreno, kg::register_encoding::tinygrad}) {
    const char* ename = enc == kg::register_encoding::freedreno ? "freedreno" : "tinygrad";
    kg::device dev;
    kg::queue_options o;
    o.dispatch.encoding = enc;
    kg::queue q(dev, o);
    kg::kernel k = q.load(bin, "pvt");
    auto ga = dev.alloc(n * 4), gout = dev.alloc(n * 4);
    std::memcpy(ga.data(), a.data(), n * 4);
    q.wait(q.launch(k, {kg::buffer_arg(ga), kg::buffer_arg(gout), kg::scalar_arg<std::int32_t>(n), kg::scalar_arg<std::int32_t>(37)},
                    {{n, 1, 1}, {64, 1, 1}}));
    gout.invalidate_for_cpu();
    const std::string d = compare(want, static_cast<const float*>(gout.data()), n);
    report(d.empty(), std::string("private/") + ename,
           (d.empty() ? "" : d + "; ") + std::to_string(info.pvtmem) + " private bytes per item, SP_CS_PVT_MEM_SIZE " +
               std::to_string(k.layout().totalpvtmemsize));
  }
}

void check_big(opencl& cl) {
  std::vector<std::byte> bin;
  cl_program p = nullptr;
  kg::program_info info;
  for (int steps = 300; steps <= 40000; steps *= 2) {
    if (p) cl.ReleaseProgram(p);
    p = cl.build(big_src(steps), bin);
    info = kg::parse_program(bin, "big");
    if (info.image_size() > 8192) break;
  }
  if (info.image_size() <= 8192) {
    report(false, "big", "could not make the compiler emit more than 8 KiB (" + std::to_string(info.image_size()) + " bytes)");
    cl.ReleaseProgram(p);
    return;
  }
  const auto a = input(2);
  std::vector<cl_mem> cb{cl.buffer(a), cl.buffer(std::vector<float>(n))};
  cl_run(cl, p, "big", cb, {{0}, {1}, {-1, std::uint32_t(n)}}, n);
  const auto want = cl.read(cb[1], n);
  for (cl_mem m : cb) cl.ReleaseMemObject(m);
  cl.ReleaseProgram(p);
  kg::device dev;
  kg::queue q(dev);
  kg::kernel k = q.load(bin, "big");
  auto ga = dev.alloc(n * 4), gout = dev.alloc(n * 4);
  std::memcpy(ga.data(), a.data(), n * 4);
  q.wait(q.launch(k, {kg::buffer_arg(ga), kg::buffer_arg(gout), kg::scalar_arg<std::int32_t>(n)}, {{n, 1, 1}, {64, 1, 1}}));
  gout.invalidate_for_cpu();
  const std::string d = compare(want, static_cast<const float*>(gout.data()), n);
  report(d.empty(), "big", (d.empty() ? "" : d + "; ") + std::to_string(info.image_size()) + " bytes of code, " +
                               std::to_string(k.layout().preload_units) + " of " + std::to_string(k.layout().instr_units) +
                               " units preloaded");
}

// The replayed sequence: 24 launches of y = x * s + b ping-ponging between two buffers, with the
// private-memory kernel every 6th step; the input and s change per replay.
struct sequence {
  std::vector<std::byte> axpb, pvt;
  static constexpr int launches = 24, rounds = 3;
  static float s_of(int round) { return 0.5f + 0.125f * float(round); }

  std::vector<std::vector<float>> reference(opencl& cl) const {
    std::vector<std::byte> b1, b2;
    cl_program pa = cl.build(axpb_src, b1), pp = cl.build(private_src, b2);
    std::vector<std::vector<float>> outs;
    for (int round = 0; round < rounds; ++round) {
      // buffers: 0 input, 1 b, 2 ping, 3 pong
      std::vector<cl_mem> cb{cl.buffer(input(10 + round)), cl.buffer(input(99)), cl.buffer(std::vector<float>(n)), cl.buffer(std::vector<float>(n))};
      for (int j = 0; j < launches; ++j) {
        const int src = j == 0 ? 0 : 2 + (j + 1) % 2, dst = 2 + j % 2;
        if (j % 6 == 5) cl_run(cl, pp, "pvt", cb, {{src}, {dst}, {-1, std::uint32_t(n)}, {-1, 11}}, n);
        else cl_run(cl, pa, "axpb", cb, {{src}, {1}, {dst}, {-1, std::uint32_t(n)}, {-1, std::bit_cast<std::uint32_t>(s_of(round))}}, n);
      }
      outs.push_back(cl.read(cb[2 + (launches - 1) % 2], n));
      for (cl_mem m : cb) cl.ReleaseMemObject(m);
    }
    cl.ReleaseProgram(pa);
    cl.ReleaseProgram(pp);
    return outs;
  }

  /// Runs the replays through KGSL; `before_replays(device)` runs once the graph is built (the sandbox).
  template <class F>
  std::vector<std::string> run(const std::vector<std::vector<float>>& want, F&& before_replays) const {
    kg::device dev;
    kg::queue q(dev);
    kg::kernel ka = q.load(axpb, "axpb"), kp = q.load(pvt, "pvt");
    std::vector<kg::buffer> in;
    for (int round = 0; round < rounds; ++round) {
      in.push_back(dev.alloc(n * 4));
      std::memcpy(in.back().data(), input(10 + round).data(), n * 4);
    }
    auto b = dev.alloc(n * 4), ping = dev.alloc(n * 4), pong = dev.alloc(n * 4);
    std::memcpy(b.data(), input(99).data(), n * 4);
    kg::graph g(q);
    const kg::launch_dims dims{{n, 1, 1}, {64, 1, 1}};
    for (int j = 0; j < launches; ++j) {
      const kg::buffer& src = j == 0 ? in[0] : (j + 1) % 2 ? pong : ping;
      const kg::buffer& dst = j % 2 ? pong : ping;
      if (j % 6 == 5) g.launch(kp, {kg::graph_buffer(src), kg::graph_buffer(dst), kg::graph_scalar<std::int32_t>(n), kg::graph_scalar<std::int32_t>(11)}, dims);
      else g.launch(ka, {kg::graph_buffer(src), kg::graph_buffer(b), kg::graph_buffer(dst), kg::graph_scalar<std::int32_t>(n), kg::graph_var(0)}, dims);
    }
    const std::size_t input_index = g.buffer_index(in[0]);
    std::vector<std::string> results;
    for (int round = 0; round < rounds; ++round) {
      std::memset(ping.data(), 0, n * 4);
      std::memset(pong.data(), 0, n * 4);
      g.bind(input_index, in[static_cast<std::size_t>(round)]);
      if (round == 0) {
        g.replay({std::bit_cast<std::uint32_t>(s_of(round))});  // builds the command buffer
        q.synchronize();
        before_replays(dev);
        std::memset(ping.data(), 0, n * 4);
        std::memset(pong.data(), 0, n * 4);
      }
      q.wait(g.replay({std::bit_cast<std::uint32_t>(s_of(round))}));
      kg::buffer& last = (launches - 1) % 2 ? pong : ping;
      last.invalidate_for_cpu();
      results.push_back(compare(want[static_cast<std::size_t>(round)], static_cast<const float*>(last.data()), n));
    }
    return results;
  }
};

void check_replay(const sequence& seq, const std::vector<std::vector<float>>& want) {
  const auto r = seq.run(want, [](const kg::device&) {});
  for (std::size_t i = 0; i < r.size(); ++i) report(r[i].empty(), "replay/" + std::to_string(i), r[i]);
}

// In a child process: the replay once the seccomp sandbox is entered (real ioctls through the
// filter), and a CAN socket refused.
void check_sandbox(const sequence& seq, const std::vector<std::vector<float>>& want) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 0;
    try {
      std::string can;
      const auto r = seq.run(want, [&](const kg::device& dev) {
        kg::sandbox_options o;
        o.write_fds = {STDOUT_FILENO, STDERR_FILENO};
        kg::enter_sandbox(dev, o);
        can = socket(AF_CAN, SOCK_RAW, 1) < 0 && errno == EPERM ? "" : "socket(AF_CAN) was not refused";
      });
      for (std::size_t i = 0; i < r.size(); ++i) {
        std::printf("%s sandbox/replay/%zu %s\n", r[i].empty() ? "PASS" : "FAIL", i, r[i].c_str());
        code |= !r[i].empty();
      }
      std::printf("%s sandbox/can %s\n", can.empty() ? "PASS" : "FAIL", can.c_str());
      code |= !can.empty();
    } catch (const uopcg::error& e) {
      std::printf("FAIL sandbox %s\n", e.what());
      code = 1;
    }
    std::fflush(stdout);
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ++failures;
    if (!WIFEXITED(status)) std::printf("FAIL sandbox the child ended with signal %d\n", WTERMSIG(status));
  }
}

}  // namespace

int main() {
  try {
    if (!kg::device::available(kg::real_sys::instance())) {
      std::fprintf(stderr, "kgsl_smoke: %s cannot be opened: no Adreno GPU with the KGSL driver here (or no permission)\n",
                   kg::default_device_path);
      return 2;
    }
    {
      kg::device_options o;
      o.check_chip = false;
      kg::device probe(o);
      std::printf("device: Adreno %s, chip id 0x%08x\n", probe.chip().name().c_str(), probe.chip().raw);
      if (const std::string why = kg::unsupported_chip_reason(probe.chip()); !why.empty()) {
        std::fprintf(stderr, "kgsl_smoke: %s\n", why.c_str());
        return 2;
      }
    }
    opencl cl;
    if (!cl.ok) {
      std::fprintf(stderr, "kgsl_smoke: the vendor libOpenCL.so (compiler and reference) could not be loaded or has no GPU: %s\n",
                   cl.lib ? "see above" : dlerror());
      return 2;
    }
    check_private(cl);
    check_big(cl);
    sequence seq;
    cl_program p1 = cl.build(axpb_src, seq.axpb), p2 = cl.build(private_src, seq.pvt);
    cl.ReleaseProgram(p1);
    cl.ReleaseProgram(p2);
    const auto want = seq.reference(cl);
    check_replay(seq, want);
    check_sandbox(seq, want);
  } catch (const uopcg::error& e) {
    std::printf("FAIL error %s\n", e.what());
    ++failures;
  }
  std::printf("%s: %d check(s) failed\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
