// The emitter in constant evaluation: tinygrad's GROUPTOP sum (corpus kernel red_sum_4096_group,
// its linear program transcribed with the builder) and a kernel full of float literals render at
// compile time; static_asserts check the text, and the tests check that the run-time rendering of
// the same programs is byte-identical to the compile-time text.
#include <doctest/doctest.h>

#include <array>
#include <string_view>

#include <uopcg/render/opencl.hpp>

#include "program.hpp"

using namespace uopcg;
using uopcg_test::Program;

namespace {

/// red_sum_4096_group's `linear`, instruction by instruction (constants come with their users).
constexpr render::RenderedKernel grouptop_sum(Arena& a) {
  Program p{a};
  UOp d0 = p.global(0, DType::float32, 1);
  UOp d1 = p.global(1, DType::float32, 4096);
  UOp acc0 = p.buffer(0, DType::float32, 1, AddrSpace::REG);
  UOp acc1 = p.buffer(1, DType::float32, 1, AddrSpace::REG);
  UOp tile = p.buffer(0, DType::float32, 16, AddrSpace::LOCAL);
  UOp l = p.special("lidx0", 16);
  UOp i0 = p.add(index(acc0, p.i32(0)));
  UOp sh = p.add(alu(Ops::SHL, l, p.i32(8)));
  UOp init0 = p.add(store(i0, p.f32(0.0)));
  UOp r0 = p.loop(64, 0, AxisType::REDUCE);
  UOp a0 = p.add(index(after(acc0, init0, r0), p.i32(0)));
  UOp cur = p.add(load(a0));
  UOp v = p.add(load(p.shrink(d1, sh + alu(Ops::SHL, r0, p.i32(2)), 4)));
  UOp sum4 = p.add(index(v, p.i32(0)) + index(v, p.i32(1)) + index(v, p.i32(2)) + index(v, p.i32(3)));
  UOp e0 = p.add(end(store(a0, cur + sum4), r0));
  UOp part = p.add(load(index(after(acc0, e0), p.i32(0))));
  UOp bar = p.add(barrier(store(index(tile, l), part)));
  UOp tile2 = p.add(after(tile, bar));
  UOp i1 = p.add(index(acc1, p.i32(0)));
  UOp init1 = p.add(store(i1, p.f32(0.0)));
  UOp r1 = p.add(a.make(Ops::RANGE, DType::int32, {p.i32(16), e0}, Arg::tuple_of(101, AxisType::REDUCE)));
  UOp x = p.add(load(index(tile2, r1)));
  UOp a1 = p.add(index(after(acc1, init1, r1), p.i32(0)));
  UOp e1 = p.add(end(store(a1, load(a1) + x), r1));
  UOp total = p.add(load(index(after(acc1, e1), p.i32(0))));
  UOp out = p.add(index(d0, p.i32(0)));
  UOp gate = p.add(alu(Ops::CMPEQ, l, p.i32(0)));
  UOp if_ = p.make(Ops::IF, DType::void_, {gate, out});
  UOp st = p.add(store(out, total));
  p.make(Ops::ENDIF, DType::void_, {if_});
  p.finish(st, "r_16_64_4");
  return render::render_opencl(p.program());
}

/// Literals whose text needs the exact shortest-digits algorithm.
constexpr render::RenderedKernel literals(Arena& a) {
  Program p{a};
  UOp out = p.global(0, DType::float32, 64);
  UOp in = p.global(1, DType::float32, 64);
  UOp g = p.special("gidx0", 64);
  UOp x = p.add(load(index(in, g)));
  UOp y = exp2(x * p.f32(0x1.7154760000000p+0)) + log2(x) * p.f32(0x1.62e4300000000p-1) + p.f32(1e-05);
  UOp z = where(x < p.f32(-65504.0), p.add(cast(literal(a, -__builtin_inf()), DType::float32)), y);
  UOp w = z * p.f32(0x1.99999a0000000p-4) + p.f32(0x1.fffffe0000000p+127) * p.f32(0x1.0000000000000p-126);
  p.finish(p.add(store(index(out, g), w)), "E_64");
  return render::render_opencl(p.program());
}

template <auto Render>
constexpr std::size_t text_size() {
  Arena a;
  return Render(a).source.size();
}
template <auto Render, std::size_t N>
constexpr std::array<char, N> text_of() {
  Arena a;
  const auto rk = Render(a);
  std::array<char, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = rk.source[i];
  return out;
}

constexpr std::size_t sum_size = text_size<grouptop_sum>();
constexpr auto sum_text = text_of<grouptop_sum, sum_size>();
constexpr std::string_view sum_view(sum_text.data(), sum_size);

constexpr std::size_t lit_size = text_size<literals>();
constexpr auto lit_text = text_of<literals, lit_size>();
constexpr std::string_view lit_view(lit_text.data(), lit_size);

// the corpus `source` of red_sum_4096_group
static_assert(sum_view ==
              "__kernel void r_16_64_4(__global float* data0_1, __global float* data1_4096) {\n"
              "  float buf0[1];\n"
              "  float buf1[1];\n"
              "  __attribute__ ((aligned (16))) __local float buf2[16];\n"
              "  int lidx0 = get_local_id(0); /* 16 */\n"
              "  *(buf0+0) = 0.0f;\n"
              "  for (int Ridx0 = 0; Ridx0 < 64; Ridx0++) {\n"
              "    float4 val0 = (*((__global float4*)((data1_4096+((lidx0<<8)+(Ridx0<<2))))));\n"
              "    *(buf0+0) = ((*(buf0+0))+val0.x+val0.y+val0.z+val0.w);\n"
              "  }\n"
              "  *(buf2+lidx0) = (*(buf0+0));\n"
              "  barrier(CLK_LOCAL_MEM_FENCE);\n"
              "  *(buf1+0) = 0.0f;\n"
              "  for (int Ridx101 = 0; Ridx101 < 16; Ridx101++) {\n"
              "    float val1 = (*(buf2+Ridx101));\n"
              "    *(buf1+0) = ((*(buf1+0))+val1);\n"
              "  }\n"
              "  if ((lidx0==0)) {\n"
              "    *(data0_1+0) = (*(buf1+0));\n"
              "  }\n"
              "}");

static_assert(lit_view ==
              "__kernel void E_64(__global float* data0_64, __global float* data1_64) {\n"
              "  int gidx0 = get_group_id(0); /* 64 */\n"
              "  float val0 = (*(data1_64+gidx0));\n"
              "  float alu0 = ((val0<-65504.0f)?((float)(-INFINITY)):(exp2((val0*1.4426950216293335f))+"
              "(log2(val0)*0.6931471824645996f)+1e-05f));\n"
              "  *(data0_64+gidx0) = ((alu0*0.10000000149011612f)+(3.4028234663852886e+38f*1.1754943508222875e-38f));\n"
              "}");

// launch sizes and the parameter list are available at compile time too
static_assert([] {
  Arena a;
  const auto rk = grouptop_sum(a);
  return rk.global_size == std::array<std::int64_t, 3>{1, 1, 1} && rk.local_size &&
         *rk.local_size == std::array<std::int64_t, 3>{16, 1, 1} && rk.params.size() == 2 &&
         rk.params[0].written && rk.params[1].read && rk.params[1].size == 4096 && rk.function_name == "r_16_64_4";
}());

}  // namespace

TEST_CASE("constexpr: the compile-time text equals the run-time text") {
  Arena a;
  CHECK(grouptop_sum(a).source.view() == sum_view);
  Arena b;
  CHECK(literals(b).source.view() == lit_view);
}
