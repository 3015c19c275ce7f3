// The OpenCL launcher (runtime/opencl.hpp) on the default device: device selection, buffers,
// argument binding and launch sizes, profiling, and the error paths (a failed build carries the
// build log; a bad call names the OpenCL function and the error code).
#include <doctest/doctest.h>

#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include <uopcg/runtime/opencl.hpp>

#include "../render/program.hpp"

using namespace uopcg;
using uopcg_test::Program;

namespace {

opencl::Context& context() {
  static opencl::Context ctx;
  return ctx;
}

/// out[gidx0*4 + lidx0] = in[...] * 2 + n, on a (3, 4) grid: global_size 3, local_size 4.
render::RenderedKernel scale_kernel() {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 12);
  UOp in = p.global(1, DType::int32, 12);
  UOp n = p.var(2, "n", 0, 100);
  UOp g = p.special("gidx0", 3), l = p.special("lidx0", 4);
  UOp i = p.add(alu(Ops::SHL, g, p.i32(2)) + l);
  UOp v = p.add(load(index(in, i)));
  p.finish(p.add(store(index(out, i), cast(v * p.i32(2) + n, DType::float32))));
  return render::render_opencl(p.program());
}

/// out[gidx0] = in[gidx0] + 1 for gidx0 < n*2, n a variable in [1, 8]: a launch size that follows
/// the variable, over buffers sized for its largest value.
render::RenderedKernel variable_launch_kernel() {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::int32, 16), in = p.global(1, DType::int32, 16);
  UOp n = p.var(2, "n", 1, 8);
  UOp g = p.add(special(p.add(alu(Ops::SHL, n, p.i32(1))), "gidx0"));
  UOp v = p.add(load(index(in, g)));
  p.finish(p.add(store(index(out, g), v + p.i32(1))), "grow");
  return render::render_opencl(p.program());
}

/// out[l] = in[15 - l] through a __local buffer of `stride`*16 floats (lbuf[l*stride] = in[l], a
/// barrier, then lbuf[(15-l)*stride]): one work-group of 16.
render::RenderedKernel reverse_through_local(std::int64_t stride) {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 16), in = p.global(1, DType::float32, 16);
  UOp lbuf = p.buffer(0, DType::float32, 16 * stride, AddrSpace::LOCAL);
  UOp l = p.special("lidx0", 16);
  UOp st = p.add(store(index(lbuf, alu(Ops::MUL, l, p.i32(stride))), load(index(in, l))));
  UOp b = p.add(barrier(st));
  UOp v = p.add(load(index(after(lbuf, b), alu(Ops::MUL, alu(Ops::SUB, p.i32(15), l), p.i32(stride)))));
  p.finish(p.add(store(index(out, l), v)));
  return render::render_opencl(p.program());
}

}  // namespace

TEST_CASE("launcher: device selection (first device, UOPCG_OPENCL_DEVICE)") {
  const char* saved = std::getenv("UOPCG_OPENCL_DEVICE");
  const std::string keep = saved ? saved : "";
  ::unsetenv("UOPCG_OPENCL_DEVICE");
  const opencl::Device first = opencl::Device::select();
  CHECK(first.platform_index() == 0);
  CHECK(first.device_index() == 0);
  CHECK_FALSE(first.name().empty());
  CHECK_FALSE(first.platform_name().empty());
  CHECK(first.version().rfind("OpenCL ", 0) == 0);
  ::setenv("UOPCG_OPENCL_DEVICE", "0:0", 1);
  CHECK(opencl::Device::select().id() == first.id());
  ::setenv("UOPCG_OPENCL_DEVICE", "0:99", 1);
  CHECK_THROWS_WITH_AS(opencl::Device::select(), doctest::Contains("platform 0 has no device 99"), uopcg::error);
  ::setenv("UOPCG_OPENCL_DEVICE", "99:0", 1);
  CHECK_THROWS_WITH_AS(opencl::Device::select(), doctest::Contains("platform 99 does not exist"), uopcg::error);
  ::setenv("UOPCG_OPENCL_DEVICE", "gpu", 1);
  CHECK_THROWS_WITH_AS(opencl::Device::select(), doctest::Contains("is not <platform>:<device>"), uopcg::error);
  if (saved) ::setenv("UOPCG_OPENCL_DEVICE", keep.c_str(), 1);
  else ::unsetenv("UOPCG_OPENCL_DEVICE");

  // the emitter's target for this device follows its extensions
  const render::OpenCLRenderer t = first.renderer();
  const std::string ext = first.extensions();
  CHECK(t.arch.view() == ext);
  CHECK(t.supports_fp16 == (("," + ext + ",").find(",cl_khr_fp16,") != std::string::npos));
  CHECK(t.supports_fp64 == (("," + ext + ",").find(",cl_khr_fp64,") != std::string::npos));
}

TEST_CASE("launcher: bind by slot, scalar variables, launch sizes, profiling") {
  opencl::Context& ctx = context();
  opencl::CompiledKernel ck(ctx, scale_kernel());
  CHECK(ck.info().global_work_size() == std::array<std::int64_t, 3>{12, 1, 1});
  opencl::Buffer out(ctx, 12 * 4), in(ctx, 12 * 4);
  std::vector<std::int32_t> src(12);
  for (int i = 0; i < 12; ++i) src[i] = i - 5;
  in.write(std::span<const std::int32_t>(src));
  out.fill(std::byte{0xFF});
  ck.bind(0, out);
  // launching with an unbound argument is an error naming it
  CHECK_THROWS_WITH_AS(ck.launch(), doctest::Contains("argument 1 (data1_12) is not bound"), uopcg::error);
  ck.bind(1, in);
  ck.set_var(2, 7);
  const opencl::Event ev = ck.launch();
  CHECK(ev.duration_ns() > 0);
  std::vector<float> got(12);
  out.read(std::span<float>(got));
  for (int i = 0; i < 12; ++i) CHECK(got[i] == static_cast<float>((i - 5) * 2 + 7));

  // buffers sized from the parameter list
  const auto bufs = ck.make_buffers(ctx);
  REQUIRE(bufs.size() == 2);
  CHECK(bufs[0].size() == 48);
  CHECK(bufs[1].size() == 48);
  // a buffer too small for its parameter, an unknown slot
  opencl::Buffer small(ctx, 8);
  CHECK_THROWS_WITH_AS(ck.bind(1, small), doctest::Contains("buffer for data1_12 has 8 bytes, the kernel needs 48"),
                       uopcg::error);
  CHECK_THROWS_WITH_AS(ck.bind(5, small), doctest::Contains("has no buffer slot 5"), uopcg::error);
  CHECK_THROWS_WITH_AS(ck.set_var(0, 1), doctest::Contains("has no variable slot 0"), uopcg::error);
}

TEST_CASE("launcher: a launch size that depends on a variable follows its value") {
  const render::RenderedKernel rk = variable_launch_kernel();
  // the emitter: the largest size, the expression per launch, tinygrad's text in the comment
  CHECK(rk.global_size == std::array<std::int64_t, 3>{16, 1, 1});
  REQUIRE(rk.global_symbolic[0].has_value());
  CHECK_FALSE(rk.global_symbolic[1].has_value());
  CHECK(rk.symbolic_launch());
  CHECK(rk.global_symbolic[0]->rendered.view() == "(n<<1)");
  CHECK(rk.source.view().find("get_group_id(0); /* (n<<1) */") != std::string_view::npos);
  CHECK(rk.launch_sizes({{2, 3}}).global_size == std::array<std::int64_t, 3>{6, 1, 1});
  CHECK(rk.launch_sizes({{2, 8}}).global_work_size() == std::array<std::int64_t, 3>{16, 1, 1});
  CHECK_THROWS_WITH_AS(rk.launch_sizes(), doctest::Contains("kernel grow: the global size of dimension 0, (n<<1), needs the value of a variable it reads"),
                       uopcg::error);

  opencl::Context& ctx = context();
  opencl::CompiledKernel ck(ctx, rk);
  opencl::Buffer out(ctx, 16 * 4), in(ctx, 16 * 4);
  std::vector<std::int32_t> src(16);
  for (int i = 0; i < 16; ++i) src[i] = 10 * i;
  in.write(std::span<const std::int32_t>(src));
  out.fill(std::byte{0xFF});
  ck.bind(0, out);
  ck.bind(1, in);
  // a value outside the variable's bounds, which size its buffers, is refused
  CHECK_THROWS_WITH_AS(ck.set_var(2, 9), doctest::Contains("variable n = 9 is outside its bounds [1, 8]"), uopcg::error);
  // an unset variable is named at the launch; so is a name the kernel does not have
  CHECK_THROWS_WITH_AS(ck.launch(), doctest::Contains("argument 2 (variable n, data2_) is not set"), uopcg::error);
  CHECK_THROWS_WITH_AS(ck.set_var("m", 3), doctest::Contains("kernel grow has no variable named m (its variables: n)"),
                       uopcg::error);
  CHECK_THROWS_WITH_AS(ck.set_var("n", 0), doctest::Contains("variable n = 0 is outside its bounds [1, 8]"), uopcg::error);
  ck.set_var("n", 3);  // by name: the same parameter as slot 2
  CHECK(ck.launch_sizes().global_size[0] == 6);
  ck.launch();
  std::vector<std::int32_t> got(16);
  out.read(std::span<std::int32_t>(got));
  // the kernel does not guard gidx0 < n*2: the largest launch would have written all 16
  for (int i = 0; i < 16; ++i) CHECK(got[i] == (i < 6 ? 10 * i + 1 : -1));
  ck.set_var(2, 5);
  ck.launch();
  out.read(std::span<std::int32_t>(got));
  for (int i = 0; i < 16; ++i) CHECK(got[i] == (i < 10 ? 10 * i + 1 : -1));
}

TEST_CASE("launcher: __local memory beyond the emitter target's shared_max runs where the device has it") {
  opencl::Context& ctx = context();
  const std::uint64_t have = ctx.device().local_mem_size();
  // 48 KiB, over OpenCLRenderer's 32 KiB: the size a PADTO after a GROUP can reach.
  const render::RenderedKernel rk = reverse_through_local(768);
  REQUIRE(rk.local_bytes == 49152);
  if (have >= 49152) {
    opencl::CompiledKernel ck(ctx, rk);
    opencl::Buffer out(ctx, 64), in(ctx, 64);
    std::vector<float> src(16);
    for (int i = 0; i < 16; ++i) src[i] = static_cast<float>(i) * 1.5f;
    in.write(std::span<const float>(src));
    ck.bind(0, out);
    ck.bind(1, in);
    ck.launch();
    std::vector<float> got(16);
    out.read(std::span<float>(got));
    for (int i = 0; i < 16; ++i) CHECK(got[i] == src[15 - i]);
  }
  // more than the device has: refused before the build, naming the kernel and both sizes
  const std::int64_t stride = static_cast<std::int64_t>(have / (16 * 4)) + 1;
  const render::RenderedKernel too_big = reverse_through_local(stride);
  const std::string why = "kernel test declares " + std::to_string(too_big.local_bytes) +
                          " bytes of __local memory; the device has " + std::to_string(have);
  CHECK_THROWS_WITH_AS(opencl::CompiledKernel(ctx, too_big), doctest::Contains(why.c_str()), uopcg::error);
}

TEST_CASE("launcher errors: a failed build carries the build log") {
  opencl::Context& ctx = context();
  const std::string bad = "__kernel void broken(__global float* out) {\n  out[0] = undeclared_symbol_xyz;\n}";
  try {
    opencl::Program prg(ctx, bad);
    FAIL("the build should fail");
  } catch (const uopcg::error& e) {
    const std::string m = e.what();
    CHECK(m.find("clBuildProgram: CL_BUILD_PROGRAM_FAILURE (-11)") != std::string::npos);
    CHECK(m.find("build log:") != std::string::npos);
    CHECK(m.find("undeclared_symbol_xyz") != std::string::npos);  // the compiler's diagnostic
  }
  // invalid build options are reported too
  CHECK_THROWS_WITH_AS(opencl::Program(ctx, "__kernel void k() {}", "-this-is-not-an-option"),
                       doctest::Contains("clBuildProgram: CL_INVALID_"), uopcg::error);
}

TEST_CASE("launcher errors: invalid arguments name the call and the error code") {
  opencl::Context& ctx = context();
  CHECK_THROWS_WITH_AS(opencl::Buffer(ctx, 0), doctest::Contains("clCreateBuffer: CL_INVALID_BUFFER_SIZE (-61)"),
                       uopcg::error);
  opencl::Program prg(ctx, "__kernel void k(__global int* p) { p[get_global_id(0)] = 1; }");
  CHECK_THROWS_WITH_AS(opencl::Kernel(prg, "no_such_kernel"),
                       doctest::Contains("clCreateKernel: CL_INVALID_KERNEL_NAME (-46): kernel 'no_such_kernel'"),
                       uopcg::error);
  opencl::Kernel k(prg, "k");
  opencl::Buffer b(ctx, 64);
  CHECK_THROWS_WITH_AS(k.set_arg(3, b), doctest::Contains("clSetKernelArg: CL_INVALID_ARG_INDEX (-49): argument 3"),
                       uopcg::error);
  k.set_arg(0, b);
  // a work-group larger than the device allows
  const std::size_t huge = ctx.device().max_work_group_size() * 2;
  CHECK_THROWS_WITH_AS(k.enqueue({huge, 1, 1}, std::array<std::size_t, 3>{huge, 1, 1}),
                       doctest::Contains("clEnqueueNDRangeKernel: CL_INVALID_WORK_"),
                       uopcg::error);
  CHECK_THROWS_WITH_AS(b.write("x", 1, 1000), doctest::Contains("clEnqueueWriteBuffer: CL_INVALID_VALUE (-30)"),
                       uopcg::error);
  CHECK(opencl::error_name(-5) == "CL_OUT_OF_RESOURCES");
  CHECK(opencl::error_name(12345) == "unknown OpenCL error");
}
