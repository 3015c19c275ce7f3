// The OpenCL emitter's rules one by one, on hand-built linear programs: signature and parameters,
// work-item functions and launch sizes, loops and indentation, naming and inlining, parentheses,
// vectors, casts, literals, half / double / bf16, gated loads, IF/ENDIF, barriers, local memory,
// CUSTOM, and the rejections (each names the instruction).
#include <doctest/doctest.h>

#include <string>

#include <uopcg/render/opencl.hpp>

#include "program.hpp"

using namespace uopcg;
using render::OpenCLRenderer;
using render::ParamKind;
using render::render_opencl;
using uopcg_test::Program;

namespace {

std::string src(const Program& p, const OpenCLRenderer& t = OpenCLRenderer::pocl()) {
  return std::string(render_opencl(p.program(), t).source.view());
}
std::string lit(DType dt, const Arg& v) { return std::string(render::opencl_literal(dt, v).view()); }

}  // namespace

TEST_CASE("signature: buffers, multi-dim names, volatile, variables, bool buffers; parameter list") {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 16);
  ParamArg pa;
  pa.slot = 1;
  pa.dtype = DType::int32;
  pa.addrspace = AddrSpace::GLOBAL;
  pa.is_volatile = true;
  UOp in = p.add(a.make(Ops::PARAM, DType::int32, {p.i32(16)}, pa.to_arg()));
  UOp n = p.var(2, "n", 1, 16);
  UOp flags = p.global(3, DType::bool_, 8);
  ParamArg pm;  // a 2-d buffer (unused): its name lists the dims
  pm.slot = 4;
  pm.dtype = DType::float32;
  pm.addrspace = AddrSpace::GLOBAL;
  p.add(a.make(Ops::PARAM, DType::float32, {stack(p.i32(4), p.i32(8))}, pm.to_arg()));
  UOp f = p.add(load(index(flags, p.i32(0))));
  UOp r = p.add(range(n, 0, AxisType::LOOP));
  UOp v = p.add(load(index(in, r)));
  UOp st = p.add(store(index(out, r), where(f, cast(v, DType::float32), p.f32(0.0))));
  p.finish(p.add(end(st, r)), "kern");
  const auto rk = render_opencl(p.program());
  CHECK(std::string(rk.source.view()) ==
        "__kernel void kern(__global float* data0_16, volatile __global int* data1_16, const int data2_, "
        "__global bool* data3_8, __global float* data4_4_8) {\n"
        "  bool val0 = (*(data3_8+0));\n"
        "  for (int Lidx0 = 0; Lidx0 < data2_; Lidx0++) {\n"
        "    int val1 = (*(data1_16+Lidx0));\n"
        "    float alu0 = (val0?((float)(val1)):0.0f);\n"
        "    *(data0_16+Lidx0) = alu0;\n"
        "  }\n"
        "}");
  CHECK(rk.function_name.view() == "kern");
  REQUIRE(rk.params.size() == 5);
  CHECK(rk.params[0].kind == ParamKind::buffer);
  CHECK(rk.params[0].written);
  CHECK_FALSE(rk.params[0].read);
  CHECK(rk.params[0].nbytes == 64);
  CHECK(rk.params[4].shape == std::vector<std::int64_t>{4, 8});
  CHECK(rk.params[4].size == 32);
  CHECK(rk.params[4].name.view() == "data4_4_8");
  CHECK_FALSE(rk.params[4].read);
  CHECK_FALSE(rk.params[4].written);
  CHECK(rk.params[1].is_volatile);
  CHECK(rk.params[1].read);
  CHECK_FALSE(rk.params[1].written);
  CHECK(rk.params[2].kind == ParamKind::var);
  CHECK(rk.params[2].addrspace == AddrSpace::ALU);
  CHECK(rk.params[2].var_name.view() == "n");
  CHECK(rk.params[2].name.view() == "data2_");
  CHECK(rk.params[3].dtype == DType::bool_);
  CHECK(rk.params[3].nbytes == 8);
  for (std::size_t i = 0; i < 5; ++i) CHECK(rk.params[i].index == static_cast<std::int64_t>(i));
  CHECK(rk.globals == std::vector<std::int64_t>{0, 1, 3, 4});
  CHECK(rk.outs == std::vector<std::int64_t>{0});
  CHECK(rk.ins == std::vector<std::int64_t>{1, 3});
}

TEST_CASE("work-item functions: get_group_id / get_local_id / get_global_id and launch sizes") {
  {
    Arena a;
    Program p{a};
    UOp out = p.global(0, DType::int32, 256);
    UOp g0 = p.special("gidx0", 4), g1 = p.special("gidx1", 2);
    UOp l0 = p.special("lidx0", 8), l1 = p.special("lidx1", 3);
    p.finish(p.add(store(index(out, p.add(g0 + g1 + l0 + l1)), p.i32(7))));
    const auto rk = render_opencl(p.program());
    CHECK(std::string(rk.source.view()) ==
          "__kernel void test(__global int* data0_256) {\n"
          "  int gidx0 = get_group_id(0); /* 4 */\n"
          "  int gidx1 = get_group_id(1); /* 2 */\n"
          "  int lidx0 = get_local_id(0); /* 8 */\n"
          "  int lidx1 = get_local_id(1); /* 3 */\n"
          "  *(data0_256+(gidx0+gidx1+lidx0+lidx1)) = 7;\n"
          "}");
    CHECK(rk.global_size == std::array<std::int64_t, 3>{4, 2, 1});
    REQUIRE(rk.local_size.has_value());
    CHECK(*rk.local_size == std::array<std::int64_t, 3>{8, 3, 1});
    CHECK(rk.global_work_size() == std::array<std::int64_t, 3>{32, 6, 1});
  }
  {
    Arena a;
    Program p{a};
    UOp out = p.global(0, DType::int32, 64);
    UOp n = p.var(1, "n", 1, 64);
    UOp i0 = p.add(special(n, "idx0"));
    p.finish(p.add(store(index(out, i0), i0)));
    const auto rk = render_opencl(p.program());
    CHECK(std::string(rk.source.view()) ==
          "__kernel void test(__global int* data0_64, const int data1_) {\n"
          "  int idx0 = get_global_id(0); /* n */\n"
          "  *(data0_64+idx0) = idx0;\n"
          "}");
    CHECK_FALSE(rk.local_size.has_value());  // the runtime chooses
    CHECK(rk.global_size == std::array<std::int64_t, 3>{64, 1, 1});
    CHECK(rk.global_work_size() == std::array<std::int64_t, 3>{64, 1, 1});
    REQUIRE(rk.global_symbolic[0].has_value());
    CHECK(rk.launch_sizes({{1, 9}}).global_work_size() == std::array<std::int64_t, 3>{9, 1, 1});
    CHECK(rk.launch_sizes({{1, 9}}).local_size == std::nullopt);
  }
  {
    // sizes with variables: named as tinygrad renders them (Python's operators, a binary operand's
    // parentheses dropped where precedence allows), and computed per launch with the kernel's
    // integer arithmetic
    Arena a;
    Program p{a};
    UOp out = p.global(0, DType::int32, 4096);
    UOp n = p.var(1, "n", 1, 16), m = p.var(2, "m", 2, 8);
    UOp g0 = p.add(special(p.add(alu(Ops::MUL, p.add(n + p.i32(5)), p.i32(2))), "gidx0"));
    UOp g1 = p.add(special(p.add(alu(Ops::MUL, n, p.i32(3)) + m), "gidx1"));
    UOp g2 = p.add(special(p.add(alu(Ops::CDIV, m, p.i32(2))), "gidx2"));
    UOp l0 = p.add(special(m, "lidx0"));
    p.finish(p.add(store(index(out, p.add(g0 + g1 + g2 + l0)), p.i32(1))));
    const auto rk = render_opencl(p.program());
    const std::string src(rk.source.view());
    CHECK(src.find("get_group_id(0); /* ((n+5)*2) */") != std::string::npos);
    CHECK(src.find("get_group_id(1); /* (n*3+m) */") != std::string::npos);
    CHECK(src.find("get_group_id(2); /* cdiv(m, 2) */") != std::string::npos);
    CHECK(src.find("get_local_id(0); /* m */") != std::string::npos);
    CHECK(rk.global_size == std::array<std::int64_t, 3>{42, 56, 4});
    REQUIRE(rk.local_size.has_value());
    CHECK(*rk.local_size == std::array<std::int64_t, 3>{8, 1, 1});
    const auto sizes = rk.launch_sizes({{1, 2}, {2, 7}});
    CHECK(sizes.global_size == std::array<std::int64_t, 3>{14, 13, 3});
    CHECK(*sizes.local_size == std::array<std::int64_t, 3>{7, 1, 1});
    CHECK(sizes.global_work_size() == std::array<std::int64_t, 3>{98, 13, 3});
    CHECK(rk.launch_sizes({{1, 1}, {2, 8}}).global_size == std::array<std::int64_t, 3>{12, 11, 4});
    CHECK_THROWS_WITH_AS(rk.launch_sizes({{1, 2}}),
                         doctest::Contains("kernel test: the global size of dimension 1, (n*3+m), needs the value of a variable it reads"),
                         uopcg::error);
  }
}

TEST_CASE("loops: RANGE names by axis letter and ids, nesting and indentation, REG accumulators") {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 4);
  UOp in = p.global(1, DType::float32, 16);
  UOp acc = p.buffer(0, DType::float32, 1, AddrSpace::REG);
  UOp r0 = p.loop(4, 0, AxisType::LOOP);
  UOp st0 = p.add(store(index(acc, p.i32(0)), p.f32(0.0)));
  UOp r1 = p.add(a.make(Ops::RANGE, DType::int32, {p.i32(4), r0}, Arg::tuple_of(3, 5, AxisType::REDUCE)));
  UOp ld = p.add(load(index(in, alu(Ops::SHL, r0, p.i32(2)) + r1)));
  UOp ai = p.add(index(after(acc, st0, r1), p.i32(0)));
  UOp e1 = p.add(end(store(ai, load(ai) + ld), r1));
  UOp fin = p.add(load(index(after(acc, e1), p.i32(0))));
  p.finish(p.add(end(store(index(out, r0), fin), r0)));
  CHECK(src(p) ==
        "__kernel void test(__global float* data0_4, __global float* data1_16) {\n"
        "  float buf0[1];\n"
        "  for (int Lidx0 = 0; Lidx0 < 4; Lidx0++) {\n"
        "    *(buf0+0) = 0.0f;\n"
        "    for (int Ridx3_5 = 0; Ridx3_5 < 4; Ridx3_5++) {\n"
        "      float val0 = (*(data1_16+((Lidx0<<2)+Ridx3_5)));\n"
        "      *(buf0+0) = ((*(buf0+0))+val0);\n"
        "    }\n"
        "    *(data0_4+Lidx0) = (*(buf0+0));\n"
        "  }\n"
        "}");
  // without the outer END (and the SINK) the loop is never closed
  std::vector<UOp> unclosed(p.list.begin(), p.list.end() - 2);
  CHECK(unclosed.back().is(Ops::STORE));
  CHECK_THROWS_WITH_AS(render_opencl(unclosed), doctest::Contains("never closed"), uopcg::error);
}

TEST_CASE("inlining and naming: single-use ALU inlined, WHERE and global loads declared, dense counters") {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 16);
  UOp in = p.global(1, DType::float32, 16);
  UOp acc = p.buffer(0, DType::float32, 2, AddrSpace::REG);
  UOp g = p.special("gidx0", 16);
  UOp x = p.add(load(index(in, g)));
  UOp m = p.add(x * x);                                    // used twice -> declared
  UOp w = p.add(where(m < p.f32(1.0), m, p.f32(2.0)));     // WHERE: always declared
  UOp c = p.add(cast(w, DType::int32));                    // single use -> inlined
  UOp c2 = p.add(cast(c, DType::float32));                 // used twice -> declared "cast"
  UOp st = p.add(store(index(acc, p.i32(0)), c2 + c2));    // a STORE line advances the "alu" counter
  UOp r1 = p.add(load(index(after(acc, st), p.i32(0))));   // REG load used twice -> declared
  UOp r2 = p.add(load(index(after(acc, st), p.i32(1))));   // REG load used once -> inlined
  p.finish(p.add(store(index(out, g), r1 * r1 + r2)));
  CHECK(src(p) ==
        "__kernel void test(__global float* data0_16, __global float* data1_16) {\n"
        "  float buf0[2];\n"
        "  int gidx0 = get_group_id(0); /* 16 */\n"
        "  float val0 = (*(data1_16+gidx0));\n"
        "  float alu0 = (val0*val0);\n"
        "  float alu1 = ((alu0<1.0f)?alu0:2.0f);\n"
        "  float cast0 = ((float)(((int)(alu1))));\n"
        "  *(buf0+0) = (cast0+cast0);\n"
        "  float val1 = (*(buf0+0));\n"
        "  *(data0_16+gidx0) = ((val1*val1)+(*(buf0+1)));\n"
        "}");
}

TEST_CASE("parentheses: same-op chains flatten where C's grouping computes the same, SUB and mixed ops keep theirs") {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 8);
  // unsigned: a signed op whose operands may overflow is computed through unsigned bits (render.md)
  UOp iout = p.global(1, DType::uint32, 8);
  UOp in = p.global(2, DType::float32, 4);
  UOp iin = p.global(3, DType::uint32, 4);
  UOp v[4], w[4];
  for (int i = 0; i < 4; ++i) v[i] = p.add(load(index(in, p.i32(i))));
  for (int i = 0; i < 4; ++i) w[i] = p.add(load(index(iin, p.i32(i))));
  auto put = [&](UOp buf, int k, UOp val) { return p.add(store(index(buf, p.i32(k)), val)); };
  put(out, 0, (v[0] + v[1]) + (v[2] + v[3]));
  put(out, 1, alu(Ops::SUB, alu(Ops::SUB, v[0], v[1]), v[2]));
  put(out, 2, (v[1] + v[2]) * v[3]);
  put(out, 3, (v[0] * v[1]) * (v[2] * v[3]));
  UOp shared = p.add(v[3] + v[1]);  // used twice: a variable, nothing to strip
  put(out, 4, shared + v[2]);
  put(out, 5, shared + v[3]);
  put(iout, 0, (w[0] & w[1]) & w[2]);
  put(iout, 1, (w[0] | w[1]) | (w[2] ^ w[3]));
  put(iout, 2, (w[0] ^ w[1]) ^ w[2]);
  put(iout, 3, alu(Ops::CDIV, w[0], w[1]) + alu(Ops::CMOD, w[2], w[3]));
  UOp last = put(iout, 4, alu(Ops::SHR, alu(Ops::SHL, w[0], w[1]), w[2]));
  p.finish(last);
  const std::string s = src(p);
  // a float sum or product keeps its right operand's parentheses: C groups `a+b+c` as `(a+b)+c`
  CHECK(s.find("  *(data0_8+0) = (val0+val1+(val2+val3));\n") != std::string::npos);
  CHECK(s.find("  *(data0_8+1) = ((val0-val1)-val2);\n") != std::string::npos);
  CHECK(s.find("  *(data0_8+2) = ((val1+val2)*val3);\n") != std::string::npos);
  CHECK(s.find("  *(data0_8+3) = (val0*val1*(val2*val3));\n") != std::string::npos);
  CHECK(s.find("  float alu4 = (val3+val1);\n  *(data0_8+4) = (alu4+val2);\n  *(data0_8+5) = (alu4+val3);\n") !=
        std::string::npos);
  CHECK(s.find("  *(data1_8+0) = (val4&val5&val6);\n") != std::string::npos);
  CHECK(s.find("  *(data1_8+1) = (val4|val5|(val6^val7));\n") != std::string::npos);
  CHECK(s.find("  *(data1_8+2) = (val4^val5^val6);\n") != std::string::npos);
  CHECK(s.find("  *(data1_8+3) = ((val4/val5)+(val6%val7));\n") != std::string::npos);
  CHECK(s.find("  *(data1_8+4) = ((val4<<val5)>>val6);\n") != std::string::npos);
}

TEST_CASE("parentheses: a right operand of the same op flattens only where regrouping computes the same") {
  // tinygrad's strip_parens writes x+(y+z) as x+y+z, which C computes as (x+y)+z: for floats another
  // rounding, or another value where the sum cancels (1e20+(-1e20+1) is 0, 1e20-1e20+1 is 1)
  Arena a;
  Program p{a};
  UOp fout = p.global(0, DType::float32, 4);
  UOp uout = p.global(1, DType::uint32, 2);
  UOp iout = p.global(2, DType::int32, 2);
  UOp fin = p.global(3, DType::float32, 3), uin = p.global(4, DType::uint32, 3), iin = p.global(5, DType::int32, 3);
  UOp cin = p.global(6, DType::int8, 3);
  UOp f[3], u[3], i[3], c[3];
  for (int k = 0; k < 3; ++k) f[k] = p.add(load(index(fin, p.i32(k))));
  for (int k = 0; k < 3; ++k) u[k] = p.add(load(index(uin, p.i32(k))));
  for (int k = 0; k < 3; ++k) i[k] = p.add(load(index(iin, p.i32(k))));
  for (int k = 0; k < 3; ++k) c[k] = p.add(load(index(cin, p.i32(k))));
  auto put = [&](UOp buf, int k, UOp val) { return p.add(store(index(buf, p.i32(k)), val)); };
  put(fout, 0, f[0] + (f[1] + f[2]));
  put(fout, 1, f[0] * (f[1] * f[2]));
  put(fout, 2, (f[0] + f[1]) + f[2]);  // left-nested: C's own grouping
  put(uout, 0, u[0] + (u[1] + u[2]));  // wraps the same either way
  put(uout, 1, u[0] * (u[1] * u[2]));
  // int of int8 values: no grouping overflows; of full-range ints x+y may overflow where y+z does not
  put(iout, 0, cast(c[0], DType::int32) + (cast(c[1], DType::int32) + cast(c[2], DType::int32)));
  UOp last = put(iout, 1, (i[0] & i[1]) & (i[1] ^ i[2]));
  p.finish(last);
  const std::string s = src(p);
  CHECK(s.find("  *(data0_4+0) = (val0+(val1+val2));\n") != std::string::npos);
  CHECK(s.find("  *(data0_4+1) = (val0*(val1*val2));\n") != std::string::npos);
  CHECK(s.find("  *(data0_4+2) = (val0+val1+val2);\n") != std::string::npos);
  CHECK(s.find("  *(data1_2+0) = (val3+val4+val5);\n") != std::string::npos);
  CHECK(s.find("  *(data1_2+1) = (val3*val4*val5);\n") != std::string::npos);
  CHECK(s.find("  *(data2_2+0) = (((int)(val9))+((int)(val10))+((int)(val11)));\n") != std::string::npos);
  CHECK(s.find("  *(data2_2+1) = (val6&val7&(val7^val8));\n") != std::string::npos);
}

TEST_CASE("parentheses: an accumulator's update flattens its float sum, a reduction in any order (tinygrad's text)") {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 1);
  UOp in = p.global(1, DType::float32, 16);
  UOp acc = p.buffer(0, DType::float32, 1, AddrSpace::REG);
  UOp st0 = p.add(store(index(acc, p.i32(0)), p.f32(0.0)));
  UOp r = p.loop(4, 0, AxisType::REDUCE);
  UOp base = alu(Ops::SHL, r, p.i32(2));
  UOp v[4];
  for (int k = 0; k < 4; ++k) v[k] = p.add(load(index(in, base + p.i32(k))));
  UOp ai = p.add(index(after(acc, st0, r), p.i32(0)));
  UOp e = p.add(end(store(ai, load(ai) + (((v[0] + v[1]) + v[2]) + v[3])), r));
  p.finish(p.add(store(index(out, p.i32(0)), load(index(after(acc, e), p.i32(0))))));
  CHECK(src(p).find("*(buf0+0) = ((*(buf0+0))+val0+val1+val2+val3);") != std::string::npos);
}

TEST_CASE("a '-' before an operand that starts with '-' parenthesises it: C reads `--` as a decrement") {
  // the fuzz set's `-min(...)` chains reached the emitter as NEG(NEG(x)) and SUB(x, NEG(y)) from the
  // AST: `--(val0*val1)` and `a--b` did not compile
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 8);
  UOp in = p.global(1, DType::float32, 4);
  UOp iout = p.global(2, DType::int32, 2);
  UOp v[2];
  for (int i = 0; i < 2; ++i) v[i] = p.add(load(index(in, p.i32(i))));
  auto put = [&](UOp buf, int k, UOp val) { return p.add(store(index(buf, p.i32(k)), val)); };
  put(out, 0, alu(Ops::NEG, alu(Ops::NEG, v[0] * v[1])));
  put(out, 1, alu(Ops::SUB, v[0], alu(Ops::NEG, v[1])));
  put(out, 2, alu(Ops::SUB, v[0], p.f32(-1.5)));
  put(out, 3, alu(Ops::NEG, p.f32(-2.0)));
  put(out, 4, alu(Ops::SUB, v[0], v[1]));  // no '-' operand: tinygrad's text
  put(out, 5, alu(Ops::NEG, v[0]));
  UOp last = put(iout, 0, alu(Ops::SUB, p.i32(3), p.i32(-4)));
  p.finish(last);
  const std::string s = src(p);
  CHECK(s.find("--") == std::string::npos);
  CHECK(s.find("  *(data0_8+0) = -(-(val0*val1));\n") != std::string::npos);
  CHECK(s.find("  *(data0_8+1) = (val0-(-val1));\n") != std::string::npos);
  CHECK(s.find("  *(data0_8+2) = (val0-(-1.5f));\n") != std::string::npos);
  CHECK(s.find("  *(data0_8+3) = -(-2.0f);\n") != std::string::npos);
  CHECK(s.find("  *(data0_8+4) = (val0-val1);\n") != std::string::npos);
  CHECK(s.find("  *(data0_8+5) = -val0;\n") != std::string::npos);
  CHECK(s.find("  *(data2_2+0) = (3-(-4));\n") != std::string::npos);
}

TEST_CASE("strip_parens follows tinygrad's check") {
  using render::strip_parens;
  CHECK(strip_parens("(a+b)").view() == "a+b");
  CHECK(strip_parens("((a+b)+c)").view() == "(a+b)+c");
  CHECK(strip_parens("(a)+(b)").view() == "(a)+(b)");
  CHECK(strip_parens("alu0").view() == "alu0");
  CHECK(strip_parens("()").view() == "");
}

TEST_CASE("vectors: vector loads/stores through pointer casts, STACK, lanes (.xyzw, [k], (v)[i])") {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 32);
  UOp in = p.global(1, DType::float32, 32);
  UOp lbuf = p.buffer(0, DType::float32, 8, AddrSpace::LOCAL);
  UOp g = p.special("gidx0", 4);
  UOp base = p.add(alu(Ops::SHL, g, p.i32(3)));
  UOp v4 = p.add(load(p.shrink(in, base, 4)));
  UOp v8 = p.add(load(p.shrink(in, base, 8)));
  UOp rev = p.add(stack(index(v4, p.i32(3)), index(v4, p.i32(2)), index(v4, p.i32(1)), index(v4, p.i32(0))));
  UOp st = p.add(store(p.shrink(out, base, 4), rev));
  UOp st2 = p.add(store(p.shrink(lbuf, p.i32(0), 2), stack(index(v8, p.i32(5)), index(v4, g))));
  UOp l2 = p.add(load(p.shrink(after(lbuf, st2), p.i32(0), 2)));
  p.finish(p.add(group(st, p.add(store(index(out, base), index(l2, p.i32(1)))))));
  CHECK(src(p) ==
        "__kernel void test(__global float* data0_32, __global float* data1_32) {\n"
        "  __attribute__ ((aligned (16))) __local float buf0[8];\n"
        "  int gidx0 = get_group_id(0); /* 4 */\n"
        "  int alu0 = (gidx0<<3);\n"
        "  float4 val0 = (*((__global float4*)((data1_32+alu0))));\n"
        "  float8 val1 = (*((__global float8*)((data1_32+alu0))));\n"
        "  *((__global float4*)((data0_32+alu0))) = (float4)(val0.w,val0.z,val0.y,val0.x);\n"
        "  *((__local float2*)((buf0+0))) = (float2)(val1[5],(val0)[gidx0]);\n"
        "  float2 val2 = (*((__local float2*)((buf0+0))));\n"
        "  *(data0_32+alu0) = val2.y;\n"
        "}");
}

TEST_CASE("casts: value casts, bitcasts as as_<type>, pointer casts of memory") {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::uint32, 16);
  UOp in = p.global(1, DType::float32, 16);
  UOp g = p.special("gidx0", 16);
  UOp x = p.add(load(index(in, g)));
  UOp bits = p.add(load(p.add(cast(index(in, g), DType::uint32))));  // reinterpreting load
  UOp y = p.add(bitcast(x, DType::uint32) + cast(x, DType::uint32) + bits);
  p.finish(p.add(store(index(out, g), y)));
  CHECK(src(p) ==
        "__kernel void test(__global uint* data0_16, __global float* data1_16) {\n"
        "  int gidx0 = get_group_id(0); /* 16 */\n"
        "  float val0 = (*(data1_16+gidx0));\n"
        "  uint val1 = (*((__global uint*)((data1_16+gidx0))));\n"
        "  *(data0_16+gidx0) = (as_uint((float)(val0))+((uint)(val0))+val1);\n"
        "}");
}

TEST_CASE("casts: a vector CAST is convert_<type>n (OpenCL C casts no vector); to or from bool it is rejected") {
  // a weak float STACK stored to half is committed as float lanes cast to half (tinygrad/uop/weak.py);
  // tinygrad writes `((half4)((float4)(...)))`, which OpenCL C does not allow
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float16, 8);
  UOp in = p.global(1, DType::int32, 8);
  UOp g = p.special("gidx0", 2);
  UOp base = p.add(alu(Ops::SHL, g, p.i32(2)));
  UOp q = p.lit(DType::float32, 0.25);
  UOp v = p.add(cast(p.add(stack(q, q, q, q)), DType::float16));
  UOp st = p.add(store(p.shrink(out, base, 4), v));
  UOp iv = p.add(load(p.shrink(in, base, 4)));
  UOp st2 = p.add(store(p.shrink(out, base + p.i32(4), 4), p.add(cast(iv, DType::float16))));
  p.finish(p.add(group(st, st2)));
  CHECK(src(p, OpenCLRenderer::pocl_fp16()) ==
        "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
        "__kernel void test(__global half* data0_8, __global int* data1_8) {\n"
        "  int gidx0 = get_group_id(0); /* 2 */\n"
        "  int alu0 = (gidx0<<2);\n"
        "  half4 cast0 = convert_half4((float4)(0.25f,0.25f,0.25f,0.25f));\n"
        "  *((__global half4*)((data0_8+alu0))) = cast0;\n"
        "  int4 val0 = (*((__global int4*)((data1_8+alu0))));\n"
        "  half4 cast1 = convert_half4(val0);\n"
        "  *((__global half4*)((data0_8+(alu0+4)))) = cast1;\n"
        "}");
  Arena b;
  Program r{b};
  UOp bo = r.global(0, DType::bool_, 4);
  UOp fi = r.global(1, DType::float32, 4);
  UOp fv = r.add(load(r.shrink(fi, r.i32(0), 4)));
  r.finish(r.add(store(r.shrink(bo, r.i32(0), 4), r.add(cast(fv, DType::bool_)))));
  CHECK_THROWS_WITH_AS(src(r), doctest::Contains("(CAST bool): a vector CAST to or from bool has no OpenCL C form"), uopcg::error);
}

TEST_CASE("literals: Python float text with f, non-finite values, integer suffixes and widths") {
  CHECK(lit(DType::float32, 0.0) == "0.0f");
  CHECK(lit(DType::float32, -0.0) == "-0.0f");
  CHECK(lit(DType::float32, 1e-05) == "1e-05f");
  CHECK(lit(DType::float32, 0x1.7154760000000p+0) == "1.4426950216293335f");
  CHECK(lit(DType::float32, 100000.0) == "100000.0f");
  CHECK(lit(DType::float32, 3.4028234663852886e+38) == "3.4028234663852886e+38f");
  CHECK(lit(DType::float32, Arg::floating(__builtin_inf())) == "((float)(INFINITY))");
  CHECK(lit(DType::float32, Arg::floating(-__builtin_inf())) == "((float)(-INFINITY))");
  CHECK(lit(DType::float32, Arg::floating(__builtin_nan(""))) == "((float)(NAN))");
  CHECK(lit(DType::float32, Arg::integer(3)) == "3.0f");
  CHECK(lit(DType::float16, 2.0) == "((half)(2.0f))");
  CHECK(lit(DType::float16, Arg::floating(-__builtin_inf())) == "((half)(-INFINITY))");
  CHECK(lit(DType::float64, 2.0) == "2.0");
  CHECK(lit(DType::float64, 1e-05) == "1e-05");
  CHECK(lit(DType::float64, Arg::floating(__builtin_nan(""))) == "((double)(NAN))");
  CHECK(lit(DType::bfloat16, 1.0) == "16256u");
  CHECK(lit(DType::bfloat16, -2.0) == "49152u");
  CHECK(lit(DType::int32, Arg::integer(5)) == "5");
  CHECK(lit(DType::int32, Arg::integer(-7)) == "-7");
  CHECK(lit(DType::int32, Arg::integer(3000000000)) == "-1294967296");
  CHECK(lit(DType::int32, 2.0) == "2");
  CHECK(lit(DType::int64, Arg::integer(5)) == "5l");
  CHECK(lit(DType::uint32, Arg::integer(5)) == "5u");
  CHECK(lit(DType::uint32, Arg::integer(-114688)) == "4294852608u");
  CHECK(lit(DType::uint64, Arg::integer(-1)) == "18446744073709551615ul");
  CHECK(lit(DType::uint64, Arg::uinteger(18446744073709551615ull)) == "18446744073709551615ul");
  CHECK(lit(DType::uint8, Arg::integer(300)) == "((uchar)(44u))");
  CHECK(lit(DType::uint16, Arg::integer(32767)) == "((ushort)(32767u))");
  CHECK(lit(DType::int8, Arg::integer(-3)) == "((char)(-3))");
  CHECK(lit(DType::int16, Arg::integer(40000)) == "((short)(-25536))");
  CHECK(lit(DType::bool_, Arg::boolean(true)) == "1");
  CHECK(lit(DType::bool_, Arg::integer(0)) == "0");
  std::string_view why;
  CHECK(render::opencl_literal(DType::fp8e4m3, 1.0, &why).empty());
  CHECK(why.find("fp8") != std::string_view::npos);
  CHECK(render::opencl_literal(DType::int32, Arg::floating(__builtin_inf()), &why).empty());
}

TEST_CASE("literals: an integer beyond 64 bits (tinygrad's Python int) renders as its value mod 2^64 in the dtype") {
  // tinygrad folds `x - (2**64-3)` on ulong into `x + -(2**64-3)`; the post-opts graph keeps that Python int
  CHECK(lit(DType::uint64, Arg::bigint("-18446744073709551613")) == "3ul");
  CHECK(lit(DType::uint64, Arg::bigint("36893488147419103232")) == "0ul");  // 2**65
  CHECK(lit(DType::int64, Arg::bigint("-18446744073709551617")) == "-1l");
  CHECK(lit(DType::uint32, Arg::bigint("18446744073709551621")) == "5u");
  CHECK(lit(DType::int8, Arg::bigint("-18446744073709551488")) == "((char)(-128))");
  std::string_view why;
  CHECK(render::opencl_literal(DType::float32, Arg::bigint("18446744073709551621"), &why).empty());
  CHECK(why == "the constant is not a number");
  CHECK(render::opencl_literal(DType::bool_, Arg::bigint("18446744073709551621"), &why).empty());
}

TEST_CASE("half: native with cl_khr_fp16 (pragma), rejected without; double needs cl_khr_fp64") {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float16, 16);
  UOp in = p.global(1, DType::float16, 16);
  UOp g = p.special("gidx0", 16);
  p.finish(p.add(store(index(out, g), load(index(in, g)) * p.lit(DType::float16, 2.0))));
  CHECK(src(p, OpenCLRenderer::pocl_fp16()) ==
        "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
        "__kernel void test(__global half* data0_16, __global half* data1_16) {\n"
        "  int gidx0 = get_group_id(0); /* 16 */\n"
        "  half val0 = (*(data1_16+gidx0));\n"
        "  *(data0_16+gidx0) = (val0*((half)(2.0f)));\n"
        "}");
  CHECK_THROWS_WITH_AS(src(p, OpenCLRenderer::pocl()), doctest::Contains("instruction 2 (PARAM half): half needs cl_khr_fp16"),
                       uopcg::error);

  Arena b;
  Program q{b};
  UOp d = q.global(0, DType::float64, 4);
  q.finish(q.add(store(index(d, q.i32(0)), q.lit(DType::float64, 0.5))));
  CHECK(src(q) ==
        "__kernel void test(__global double* data0_4) {\n"
        "  *(data0_4+0) = 0.5;\n"
        "}");
  CHECK_THROWS_WITH_AS(src(q, OpenCLRenderer::for_arch("cl_khr_fp16")), doctest::Contains("cl_khr_fp64"), uopcg::error);

  // bf16 is ushort storage; its literals are bit patterns
  Arena c;
  Program r{c};
  UOp bf = r.global(0, DType::bfloat16, 4);
  r.finish(r.add(store(index(bf, r.i32(1)), r.lit(DType::bfloat16, 1.0))));
  CHECK(src(r) ==
        "__kernel void test(__global ushort* data0_4) {\n"
        "  *(data0_4+1) = 16256u;\n"
        "}");
}

TEST_CASE("local memory, barrier, gated load, IF/ENDIF") {
  // a plain CMPEQ gate, as pm_linearize_cleanups leaves it
  Arena a2;
  Program q{a2};
  UOp out = q.global(0, DType::float32, 16);
  UOp in = q.global(1, DType::float32, 16);
  UOp lbuf = q.buffer(0, DType::float32, 16, AddrSpace::LOCAL);
  UOp l = q.special("lidx0", 16);
  UOp st_l = q.add(store(index(lbuf, l), load(index(in, l), q.f32(0.0), l < q.i32(8))));
  UOp b = q.add(barrier(st_l));
  UOp v = q.add(load(index(after(lbuf, b), q.i32(0))));
  UOp oi = q.add(index(out, l));
  UOp gate = q.add(alu(Ops::CMPEQ, l, q.i32(0)));
  UOp if_ = q.make(Ops::IF, DType::void_, {gate, oi});
  UOp st = q.add(store(oi, v));
  q.make(Ops::ENDIF, DType::void_, {if_});
  q.finish(st);
  const auto rk = render_opencl(q.program());
  CHECK(std::string(rk.source.view()) ==
        "__kernel void test(__global float* data0_16, __global float* data1_16) {\n"
        "  __attribute__ ((aligned (16))) __local float buf0[16];\n"
        "  int lidx0 = get_local_id(0); /* 16 */\n"
        "  float val0 = ((lidx0<8)?*(data1_16+lidx0):0.0f);\n"
        "  *(buf0+lidx0) = val0;\n"
        "  barrier(CLK_LOCAL_MEM_FENCE);\n"
        "  float val1 = (*(buf0+0));\n"
        "  if ((lidx0==0)) {\n"
        "    *(data0_16+lidx0) = val1;\n"
        "  }\n"
        "}");
  CHECK(rk.global_size == std::array<std::int64_t, 3>{1, 1, 1});
  CHECK(*rk.local_size == std::array<std::int64_t, 3>{16, 1, 1});

  // a gated STORE must have been lowered to IF/ENDIF
  Arena a3;
  Program s{a3};
  UOp o3 = s.global(0, DType::float32, 16);
  UOp g3 = s.special("gidx0", 16);
  s.finish(s.add(store(index(o3, g3), s.f32(1.0), g3 < s.i32(4))));
  CHECK_THROWS_WITH_AS(render_opencl(s.program()), doctest::Contains("(STORE void): a gated STORE must be lowered"),
                       uopcg::error);
}

TEST_CASE("local memory beyond shared_max renders; the kernel says how much it declares") {
  // shared_max bounds the opts' GROUP buffers; a PADTO after a GROUP may grow one past it (tinygrad
  // renders it), so the device's limit is the launcher's check, not the emitter's.
  Arena a;
  Program p{a};
  UOp o = p.global(0, DType::float32, 4);
  UOp big = p.buffer(0, DType::float32, 12288, AddrSpace::LOCAL);
  UOp small = p.buffer(1, DType::int32, 8, AddrSpace::LOCAL);
  UOp v = load(index(big, p.i32(0))) + cast(load(index(small, p.i32(1))), DType::float32);
  p.finish(p.add(store(index(o, p.i32(0)), v)));
  const auto rk = render_opencl(p.program());
  CHECK(std::string(rk.source.view()).find("__local float buf0[12288];") != std::string::npos);
  CHECK(rk.local_bytes == 12288 * 4 + 8 * 4);

  Arena a2;
  Program q{a2};
  UOp o2 = q.global(0, DType::float32, 4);
  q.finish(q.add(store(index(o2, q.i32(0)), q.f32(1.0))));
  CHECK(render_opencl(q.program()).local_bytes == 0);
}

TEST_CASE("CUSTOM / CUSTOMI: format strings over the rendered sources") {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 16);
  UOp g = p.special("gidx0", 16);
  UOp m = p.make(Ops::CUSTOMI, DType::float32, {p.f32(1.0), p.f32(2.5)}, Arg::string("fmax({}, {1})"));
  UOp c = p.make(Ops::CUSTOM, DType::void_, {g}, Arg::string("/* {{id}} {0} */"));
  p.finish(p.add(group(c, p.add(store(index(out, g), m)))));
  CHECK(src(p) ==
        "__kernel void test(__global float* data0_16) {\n"
        "  int gidx0 = get_group_id(0); /* 16 */\n"
        "  /* {id} gidx0 */\n"
        "  *(data0_16+gidx0) = fmax(1.0f, 2.5f);\n"
        "}");
}

TEST_CASE("helper functions: defined once before the kernel when a CUSTOM format calls them") {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::uint16, 16), in = p.global(1, DType::uint16, 16);
  UOp g = p.special("gidx0", 16);
  UOp h = p.add(load(index(in, g)));
  UOp f = p.make(Ops::CUSTOM, DType::float32, {h}, Arg::string("uopcg_half_to_float({0})"));
  UOp f2 = p.make(Ops::CUSTOM, DType::float32, {h, f}, Arg::string("(uopcg_half_to_float({0})+{1})"));
  UOp n = p.make(Ops::CUSTOM, DType::uint16, {f2}, Arg::string("uopcg_float_to_half({0})"));
  p.finish(p.add(store(index(out, g), n)));
  CHECK(src(p) ==
        "float uopcg_half_to_float(ushort h) { return vload_half(0, (const __private half*)&h); }\n"
        "ushort uopcg_float_to_half(float f) { ushort h; vstore_half_rte(f, 0, (__private half*)&h); uint b = as_uint(f); "
        "return isnan(f) ? (ushort)(((b >> 16) & 0x8000u) | 0x7e00u | ((b >> 13) & 0x3ffu)) : h; }\n"
        "__kernel void test(__global ushort* data0_16, __global ushort* data1_16) {\n"
        "  int gidx0 = get_group_id(0); /* 16 */\n"
        "  ushort val0 = (*(data1_16+gidx0));\n"
        "  float alu0 = uopcg_half_to_float(val0);\n"
        "  float alu1 = (uopcg_half_to_float(val0)+alu0);\n"
        "  ushort alu2 = uopcg_float_to_half(alu1);\n"
        "  *(data0_16+gidx0) = alu2;\n"
        "}");
  // a name that only ends in a helper's name is not a call of it
  Arena b;
  Program q{b};
  UOp o2 = q.global(0, DType::float32, 1);
  UOp c = q.make(Ops::CUSTOMI, DType::float32, {q.f32(1.0)}, Arg::string("my_uopcg_half_to_float({0})"));
  q.finish(q.add(store(index(o2, q.i32(0)), c)));
  CHECK(src(q).find("vload_half") == std::string::npos);
  // the helpers take and return scalars: one called on a vector (what emulated half once made of a
  // half fill upcast by 4, `ushort4 alu1 = uopcg_float_to_half((float4)(...))`) is rejected by name
  Arena c4;
  Program v{c4};
  UOp o4 = v.global(0, DType::uint16, 4);
  UOp q4 = v.lit(DType::float32, 0.25);
  UOp n4 = v.make(Ops::CUSTOM, DType::uint16, {v.add(stack(q4, q4, q4, q4))}, Arg::string("uopcg_float_to_half({0})"));
  v.finish(v.add(store(v.shrink(o4, v.i32(0), 4), n4)));
  CHECK_THROWS_WITH_AS(src(v), doctest::Contains("(CUSTOM ushort): uopcg_float_to_half takes and returns a scalar"), uopcg::error);
  Arena c1;
  Program w{c1};
  UOp o1 = w.global(0, DType::float32, 4), i1 = w.global(1, DType::uint16, 4);
  UOp h4 = w.add(load(w.shrink(i1, w.i32(0), 4)));
  UOp lane = w.make(Ops::CUSTOM, DType::float32, {h4}, Arg::string("uopcg_half_to_float({0}.x)"));
  w.finish(w.add(store(index(o1, w.i32(0)), lane)));
  CHECK_THROWS_WITH_AS(src(w), doctest::Contains("uopcg_half_to_float takes and returns a scalar"), uopcg::error);
}

TEST_CASE("rejections name the instruction, its op and dtype") {
  auto expect_reject = [](auto build, const char* what) {
    Arena a;
    Program p{a};
    build(p);
    CHECK_THROWS_WITH_AS(render_opencl(p.program()), doctest::Contains(what), uopcg::error);
  };
  expect_reject([](Program& p) {
    UOp o = p.global(0, DType::float32, 4);
    p.finish(p.add(store(index(o, p.i32(0)), maximum(p.f32(1.0), p.f32(2.0)))));
  }, "(MAX float): no OpenCL rendering: the op must be decomposed");
  expect_reject([](Program& p) {
    UOp o = p.global(0, DType::int32, 4);
    p.finish(p.add(store(index(o, p.i32(0)), cast(literal(p.a, 1) + literal(p.a, 2), DType::int32))));
  }, "(ADD weakint): a weak dtype reached the renderer");
  expect_reject([](Program& p) {
    UOp o = p.global(0, DType::int32, 4);
    p.finish(p.add(store(index(o, p.i32(0)), p.i32(1) + p.add(literal(p.a, 2)))));
  }, "operand 1 (instruction");
  expect_reject([](Program& p) {
    UOp o = p.global(0, DType::float32, 4);
    UOp acc = p.a.make(Ops::WMMA, DType::float32, {p.f32(1.0), p.f32(1.0), p.f32(1.0)});
    p.finish(p.add(store(index(o, p.i32(0)), acc)));
  }, "(WMMA float): the OpenCL target has no tensor cores");
  expect_reject([](Program& p) {
    UOp o = p.global(0, DType::fp8e4m3, 4);
    p.finish(p.add(store(index(o, p.i32(0)), p.lit(DType::fp8e4m3, 1.0))));
  }, "(PARAM fp8e4m3): the dtype has no OpenCL type");
  expect_reject([](Program& p) {
    UOp o = p.global(0, DType::float32, 4);
    UOp r = p.loop(4, 0, AxisType::LOOP);
    UOp st = p.add(store(index(o, r), p.f32(1.0)));
    p.finish(p.add(p.a.make(Ops::END, DType::void_, {st})));
  }, "(END void): END must close exactly one RANGE");
  expect_reject([](Program& p) {
    UOp o = p.global(0, DType::float32, 4);
    UOp f = p.a.make(Ops::FLOORDIV, DType::int32, {p.i32(7), p.i32(2)});
    p.finish(p.add(store(index(o, f), p.f32(1.0))));
  }, "(FLOORDIV int)");

  // a source outside the program
  Arena a;
  Program p{a};
  UOp o = p.global(0, DType::float32, 4);
  p.finish(p.add(store(index(o, p.i32(0)), p.f32(1.0))));
  std::vector<UOp> missing;
  for (UOp u : p.list)
    if (!u.is(Ops::INDEX)) missing.push_back(u);
  CHECK_THROWS_WITH_AS(render_opencl(missing), doctest::Contains("is not an earlier instruction"), uopcg::error);
  CHECK_THROWS_WITH_AS(render_opencl(std::vector<UOp>{}), doctest::Contains("empty program"), uopcg::error);
  // no local memory on the target
  Arena b;
  Program q{b};
  UOp o2 = q.global(0, DType::int32, 4);
  q.finish(q.add(store(index(o2, q.special("lidx0", 4)), q.i32(1))));
  OpenCLRenderer no_local = OpenCLRenderer::pocl();
  no_local.has_local = false;
  CHECK_THROWS_WITH_AS(render_opencl(q.program(), no_local), doctest::Contains("(SPECIAL int): the target has no local"),
                       uopcg::error);
}
