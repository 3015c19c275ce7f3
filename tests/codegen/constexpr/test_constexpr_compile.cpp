// A kernel's OpenCL C as a compile-time value (codegen/constexpr_compile.hpp): builder kernels shaped
// like public corpus kernels, compiled by the compiler (barrier verifier included) and checked with
// static_asserts, then compared byte for byte with the run-time pipeline's result.
#include <doctest/doctest.h>

#include <cstddef>
#include <string_view>
#include <vector>

#include <uopcg/codegen/barrier_explain.hpp>
#include <uopcg/codegen/barrier_verifier.hpp>
#include <uopcg/codegen/constexpr_compile.hpp>
#include <uopcg/core/builder.hpp>

#include "../../kernels/tiled_matmul.hpp"

using namespace uopcg;

namespace {

constexpr UOp ksink(UOp effect, std::string_view name) {
  KernelInfo k;
  k.name = name;
  return sink(std::vector<UOp>{effect}, k);
}

/// ew_add_f32's shape: out[i] = a[i] + b[i] over one GLOBAL axis.
struct ew_add {
  constexpr UOp operator()(Arena& a) const {
    UOp out = param(a, 0, DType::float32, 64), x = param(a, 1, DType::float32, 64), y = param(a, 2, DType::float32, 64);
    UOp i = range(a, 64, 0, AxisType::GLOBAL);
    return ksink(end(store(index(out, i), index(x, i) + index(y, i)), i), "ew_add");
  }
};

/// ew_where_cmp_f32, the public corpus kernel's post-opts graph node for node (UPCAST 4, LOCAL 32):
/// the largest corpus kernel that fits g++'s default -fconstexpr-ops-limit (docs/embedded.md).
struct ew_where_cmp_f32 {
  constexpr UOp operator()(Arena& a) const {
    UOp o = param(a, 0, DType::float32, 4096), xp = param(a, 1, DType::float32, 4096), yp = param(a, 2, DType::float32, 4096),
        zp = param(a, 3, DType::float32, 4096);
    UOp g = range(a, 32, 0, AxisType::GLOBAL), l = range(a, 32, 2, AxisType::LOCAL), u = range(a, 4, 1, AxisType::UPCAST);
    UOp i = g * 128 + l * 4 + u;
    UOp x = index(xp, i), y = index(yp, i), z = index(zp, i);
    UOp m = maximum(z, literal(a, 0.5));
    UOp one = const_(a, DType::float32, Arg::floating(1.0)), zero = const_(a, DType::float32, Arg::floating(0.0));
    UOp v = where(alu(Ops::CMPLT, x, y), x * literal(a, 2.0), y) + where(ne(x, m), one, zero) + maximum(x, m);
    return ksink(end(store(index(o, i), v), g, l, u), "E_32_32_4");
  }
};

/// red_sum_4096_group's shape: a full sum whose GROUPTOP axis goes through LOCAL memory.
struct group_sum {
  constexpr UOp operator()(Arena& a) const {
    UOp out = param(a, 0, DType::float32, 1), in = param(a, 1, DType::float32, 1024);
    UOp g = range(a, 16, 1, AxisType::GROUP_REDUCE), r = range(a, 64, 0, AxisType::REDUCE);
    return ksink(store(index(out, literal(a, 0)), reduce(index(in, g * 64 + r), Ops::ADD, g, r)), "group_sum");
  }
};

/// matmul_64's tiled form: c = a @ b through two LOCAL tiles, no barrier written by hand (the
/// pipeline adds a RAW and a WAR barrier).
struct tiled_matmul {
  constexpr UOp operator()(Arena& a) const { return uopcg_test::tiled_matmul_kernel(a, 16, 8, "tiled_gemm"); }
};

/// dmm_stage_local's shape: C = (A @ B) @ D row by row, the row of A @ B staged in LOCAL memory (a
/// STAGE closing its range), then reduced against D; the pipeline puts a barrier between the phases.
struct dmm_stage_local {
  constexpr UOp operator()(Arena& a) const {
    constexpr int n = 16;
    UOp C = param(a, 0, DType::float32, n * n), A = param(a, 1, DType::float32, n * n),
        B = param(a, 2, DType::float32, n * n), D = param(a, 3, DType::float32, n * n);
    UOp i = range(a, n, 3, AxisType::GLOBAL), l = range(a, n, 4, AxisType::WEAK);
    UOp kk = range(a, n, 0, AxisType::REDUCE), j = range(a, n, 1, AxisType::WEAK), j2 = range(a, n, 2, AxisType::REDUCE);
    UOp inner = reduce(index(A, i * n + kk) * index(B, kk * n + j), Ops::ADD, kk);
    UOp st = stage(inner, AddrSpace::LOCAL, j);
    UOp outer = reduce(index(st, j2) * index(D, j2 * n + l), Ops::ADD, j2);
    return ksink(end(store(index(C, i * n + l), outer), i, l), "dmm");
  }
};

constexpr std::size_t count(std::string_view s, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string_view::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

/// The barrier verifier in constant evaluation, on the program of `KernelFn` and (`drop`) on that
/// program without each of its BARRIERs in turn: accepted, each barrier needed, and the report of the
/// program without it naming the LOCAL buffer.
struct barrier_facts {
  bool accepted = false;
  codegen::BarrierAnalysis analysis = codegen::BarrierAnalysis::none;
  std::size_t barriers = 0, needed = 0, named = 0;
};
template <class KernelFn, bool drop>
constexpr barrier_facts verify_constexpr() {
  Arena a;
  Target t = Target::pocl();
  t.verify_barriers = false;
  const std::vector<UOp> prog = codegen::to_program(KernelFn{}(a), t);
  const codegen::BarrierReport r = codegen::verify_barriers(prog);
  barrier_facts f{r.ok(), r.analysis, codegen::count_barriers(prog), 0, 0};
  for (std::size_t i = 0; drop && i < f.barriers; ++i) {
    // the symbolic check alone: enumerating a racy program is exact but costs more constexpr steps
    const codegen::BarrierReport without =
        codegen::verify_barriers(codegen::drop_barrier(prog, i), codegen::BarrierVerifierOptions{.enumeration_budget = 0});
    f.needed += without.ok() ? 0 : 1;
    f.named += without.message_text().view().find("on LOCAL buffer %") != std::string_view::npos ? 1 : 0;
  }
  return f;
}

/// The run-time pipeline on the same kernel and target, compared field by field.
template <class KernelFn, class K>
void check_same_as_run_time(const K& k) {
  Arena a;
  const render::RenderedKernel r = codegen::compile_opencl(KernelFn{}(a), constexpr_pocl_target{}());
  INFO(r.source.view());
  CHECK(r.source.view() == k.source());
  CHECK(k.c_str()[k.source().size()] == '\0');
  CHECK(r.function_name.view() == k.function_name.view());
  CHECK(r.global_size == k.global_size);
  CHECK(r.local_size.has_value() == k.has_local_size);
  if (r.local_size) CHECK(*r.local_size == k.local_size);
  REQUIRE(r.params.size() == k.params.size());
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const render::KernelParam& p = r.params[i];
    const constexpr_param& q = k.params[i];
    CHECK(p.kind == q.kind);
    CHECK(p.index == q.index);
    CHECK(p.slot == q.slot);
    CHECK(p.name.view() == q.name.view());
    CHECK(p.dtype == q.dtype);
    CHECK(p.size == q.size);
    CHECK(p.nbytes == q.nbytes);
    CHECK(p.written == q.written);
    CHECK(p.read == q.read);
  }
  // the run-time verifier accepts the program, as the compile-time one did
  Arena b;
  const codegen::BarrierReport rep = codegen::verify_barriers(codegen::to_program(KernelFn{}(b), constexpr_pocl_target{}()));
  CHECK(rep.ok());
  CHECK(k.barriers_verified);
  CHECK(rep.analysis == k.barrier_analysis);
}

}  // namespace

TEST_CASE("constexpr: an elementwise kernel") {
  constexpr auto k = compile_opencl_constexpr<ew_add>();
  static_assert(k.source().starts_with("__kernel void ew_add("));
  static_assert(k.params.size() == 3 && k.params[0].written && !k.params[0].read && k.params[1].read);
  static_assert(k.params[1].name.view() == "data1_64");
  static_assert(count(k.source(), "barrier(") == 0);
  static_assert(k.global_work_size()[0] * k.global_work_size()[1] * k.global_work_size()[2] == 64);
  static_assert(k.barriers_verified && k.barrier_analysis == codegen::BarrierAnalysis::none);  // no LOCAL memory
  check_same_as_run_time<ew_add>(k);
}

TEST_CASE("constexpr: the corpus kernel ew_where_cmp_f32, upcast by 4 in work-groups of 32") {
  constexpr auto k = compile_opencl_constexpr<ew_where_cmp_f32>();
  static_assert(k.source().starts_with("__kernel void E_32_32_4(__global float* data0_4096,"));
  static_assert(count(k.source(), "float4") > 0 && count(k.source(), "barrier(") == 0);
  static_assert(k.has_local_size && k.local_size[0] == 32 && k.global_size[0] == 32);
  static_assert(k.params.size() == 4 && k.params[0].written && k.params[3].read);
  static_assert(k.barriers_verified && k.barrier_analysis == codegen::BarrierAnalysis::none);
  check_same_as_run_time<ew_where_cmp_f32>(k);
}

TEST_CASE("constexpr: a GROUPTOP reduction goes through LOCAL memory and one barrier") {
  constexpr auto k = compile_opencl_constexpr<group_sum>();
  static_assert(count(k.source(), "__local") == 1);
  static_assert(count(k.source(), "barrier(CLK_LOCAL_MEM_FENCE)") == 1);
  static_assert(k.has_local_size && k.local_size[0] == 16);
  static_assert(k.params.size() == 2);
  static_assert(k.barriers_verified && k.barrier_analysis != codegen::BarrierAnalysis::none);
  // the verifier itself, in constant evaluation: the barrier is needed, and its absence reported on the buffer
  constexpr barrier_facts f = verify_constexpr<group_sum, true>();
  static_assert(f.accepted && f.barriers == 1 && f.needed == 1 && f.named == 1);
  check_same_as_run_time<group_sum>(k);
}

TEST_CASE("constexpr: a tiled matmul through LOCAL tiles gets its RAW and WAR barriers") {
  constexpr auto k = compile_opencl_constexpr<tiled_matmul>();
  static_assert(count(k.source(), "barrier(CLK_LOCAL_MEM_FENCE)") == 2);
  static_assert(count(k.source(), "__local float") == 2);
  static_assert(k.has_local_size && k.local_size[0] * k.local_size[1] == 64);
  static_assert(k.barriers_verified && k.barrier_analysis != codegen::BarrierAnalysis::none);
  // the verifier itself, in constant evaluation (its checks of the program without each barrier go
  // past g++'s default -fconstexpr-ops-limit for this kernel: they are run for the smaller ones)
  constexpr barrier_facts f = verify_constexpr<tiled_matmul, false>();
  static_assert(f.accepted && f.barriers == 2 && f.analysis == k.barrier_analysis);
  check_same_as_run_time<tiled_matmul>(k);
}

TEST_CASE("constexpr: a row staged through LOCAL memory is stored, then a barrier, then read") {
  static constexpr auto k = compile_opencl_constexpr<dmm_stage_local>();  // static: src points into it
  constexpr std::string_view src = k.source();
  static_assert(count(src, "__local float") == 1);
  static_assert(count(src, "barrier(CLK_LOCAL_MEM_FENCE)") == 1);
  static_assert(src.find("*(buf2+") < src.find("barrier(") && src.find("barrier(") < src.find("(*(buf2+"));
  static_assert(k.params.size() == 4 && k.params[0].written && k.params[3].read);
  static_assert(k.barriers_verified && k.barrier_analysis != codegen::BarrierAnalysis::none);
  constexpr barrier_facts f = verify_constexpr<dmm_stage_local, false>();
  static_assert(f.accepted && f.barriers == 1 && f.analysis == k.barrier_analysis);
  check_same_as_run_time<dmm_stage_local>(k);
}
