// Integer promotion in the emitter: C computes bool, 8- and 16-bit scalar operands in int, so an
// ALU result that can leave its dtype's range (ADD, SUB, MUL, SHL, NEG, signed CDIV) is converted
// back to its dtype wherever it is rendered inline, in every position: a comparison operand, a WHERE
// branch, a CAST operand, an index, a stored value, a chain of the same op. Declared results convert
// on assignment and keep tinygrad's text; ops whose promoted value stays in range are not converted.
// An op whose operand ranges allow a signed overflow (undefined in C, and exploited by compilers)
// computes in the unsigned type of its C width. bfloat16 arithmetic, which would compute on its
// ushort bits, is rejected.
#include <doctest/doctest.h>

#include <string>

#include <uopcg/render/opencl.hpp>

#include "program.hpp"

using namespace uopcg;
using render::render_opencl;
using uopcg_test::Program;

namespace {

std::string src(const Program& p) { return std::string(render_opencl(p.program()).source.view()); }

/// The body line of `source` that stores into data0 (the checked value), without indentation.
std::string store_line(const std::string& source) {
  const std::size_t at = source.find("*(data0_");
  REQUIRE(at != std::string::npos);
  return source.substr(at, source.find('\n', at) - at);
}

/// A kernel storing `f(a, b)` into data0 (of dtype out_dt) for loads a, b of dtype dt.
template <class F>
std::string rendered(DType dt, DType out_dt, F&& f) {
  Arena a;
  Program p{a};
  UOp out = p.global(0, out_dt, 16), in_a = p.global(1, dt, 16), in_b = p.global(2, dt, 16);
  UOp va = p.add(load(index(in_a, p.i32(0)))), vb = p.add(load(index(in_b, p.i32(0))));
  p.finish(p.add(store(index(out, p.i32(0)), f(p, va, vb))));
  return store_line(src(p));
}

UOp op2(Ops op, UOp x, UOp y) { return x.arena().make(op, x.dtype(), {x, y}); }
UOp lt(UOp x, UOp y) { return x.arena().make(Ops::CMPLT, DType::bool_, {x, y}); }

}  // namespace

TEST_CASE("a narrow integer result rendered inline is converted back to its dtype, in every position") {
  // comparison operand: (uchar)200 + (uchar)100 < (uchar)100 must compare 44, not 300
  CHECK(rendered(DType::uint8, DType::bool_, [](Program&, UOp x, UOp y) { return lt(op2(Ops::ADD, x, y), y); }) ==
        "*(data0_16+0) = (((uchar)(val0+val1))<val1);");
  // WHERE branch and condition (a WHERE is declared; its operands are inline)
  {
    Arena a;
    Program p{a};
    UOp out = p.global(0, DType::int8, 16), in = p.global(1, DType::int8, 16);
    UOp x = p.add(load(index(in, p.i32(0)))), y = p.add(load(index(in, p.i32(1))));
    p.finish(p.add(store(index(out, p.i32(0)), where(lt(op2(Ops::SUB, x, y), x), op2(Ops::MUL, x, y), y))));
    CHECK(src(p).find("char alu0 = ((((char)(val0-val1))<val0)?((char)(val0*val1)):val1);") != std::string::npos);
  }
  // CAST operand: widening must see the wrapped value
  CHECK(rendered(DType::uint16, DType::int32, [](Program&, UOp x, UOp y) { return cast(op2(Ops::ADD, x, y), DType::int32); }) ==
        "*(data0_16+0) = ((int)(((ushort)(val0+val1))));");
  // stored value (the store converts too; the text is the same in every position)
  CHECK(rendered(DType::int16, DType::int16, [](Program&, UOp x, UOp y) { return op2(Ops::ADD, x, y); }) ==
        "*(data0_16+0) = ((short)(val0+val1));");
  // NEG, signed division (INT8_MIN / -1), SHL
  CHECK(rendered(DType::uint8, DType::bool_, [](Program&, UOp x, UOp y) {
          return lt(x.arena().make(Ops::NEG, DType::uint8, {x}), y);
        }) == "*(data0_16+0) = (((uchar)(-val0))<val1);");
  CHECK(rendered(DType::int8, DType::bool_, [](Program&, UOp x, UOp y) { return lt(op2(Ops::CDIV, x, y), y); }) ==
        "*(data0_16+0) = (((char)(val0/val1))<val1);");
  CHECK(rendered(DType::uint8, DType::bool_, [](Program& p, UOp x, UOp y) { return lt(op2(Ops::SHL, x, p.ilit(DType::uint8, 3)), y); }) ==
        "*(data0_16+0) = (((uchar)(val0<<((uchar)(3u))))<val1);");
  // bool arithmetic: true + true is true, not 2
  CHECK(rendered(DType::bool_, DType::bool_, [](Program&, UOp x, UOp y) {
          return x.arena().make(Ops::CMPNE, DType::bool_, {op2(Ops::ADD, x, y), y});
        }) == "*(data0_16+0) = (((bool)(val0+val1))!=val1);");
}

TEST_CASE("a narrow integer index and a chain of the same op are converted at each step") {
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 16), table = p.global(1, DType::float32, 256), in = p.global(2, DType::uint8, 16);
  UOp x = p.add(load(index(in, p.i32(0)))), y = p.add(load(index(in, p.i32(1)))), z = p.add(load(index(in, p.i32(2))));
  UOp sum = op2(Ops::ADD, op2(Ops::ADD, x, y), z);  // ((x+y)+z): not flattened to (x+y+z) through the conversion
  p.finish(p.add(store(index(out, p.i32(0)), load(index(table, sum)))));
  const std::string s = src(p);
  CHECK(s.find("float val3 = (*(data1_256+((uchar)(((uchar)(val0+val1))+val2))));") != std::string::npos);
  // int ADD chains that cannot overflow still flatten
  Arena b;
  Program q{b};
  UOp o2 = q.global(0, DType::int32, 16);
  UOp u = q.var(1, "u", -100, 100), v = q.var(2, "v", 0, 1000), w = q.var(3, "w", -5, 5);
  q.finish(q.add(store(index(o2, q.i32(0)), op2(Ops::ADD, op2(Ops::ADD, u, v), w))));
  CHECK(store_line(src(q)) == "*(data0_16+0) = (data1_+data2_+data3_);");
}

TEST_CASE("narrow ops that can overflow the promoted int are computed in uint") {
  // 65535 * 65535 overflows the promoted int (undefined in C); in uint it wraps like ushort. So do
  // left shifts by counts up to the operand's range and of negative values
  CHECK(rendered(DType::uint16, DType::uint16, [](Program&, UOp x, UOp y) { return op2(Ops::MUL, x, y); }) ==
        "*(data0_16+0) = ((ushort)(((uint)(val0))*val1));");
  CHECK(rendered(DType::uint8, DType::uint8, [](Program&, UOp x, UOp y) { return op2(Ops::SHL, x, y); }) ==
        "*(data0_16+0) = ((uchar)(((uint)(val0))<<val1));");
  CHECK(rendered(DType::int16, DType::bool_, [](Program&, UOp x, UOp y) { return lt(op2(Ops::SHL, x, y), y); }) ==
        "*(data0_16+0) = (((short)(((uint)(val0))<<val1))<val1);");
  // a declared product: computed in uint, converted on assignment
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::uint16, 16), in = p.global(1, DType::uint16, 16);
  UOp x = p.add(load(index(in, p.i32(0)))), y = p.add(load(index(in, p.i32(1))));
  UOp m = op2(Ops::MUL, x, y);
  p.finish(p.add(store(index(out, p.i32(0)), op2(Ops::ADD, m, m))));
  const std::string s = src(p);
  CHECK(s.find("ushort alu0 = (((uint)(val0))*val1);") != std::string::npos);
  CHECK(store_line(s) == "*(data0_16+0) = ((ushort)(alu0+alu0));");
  // uint8 products fit int (255 * 255): tinygrad's text
  CHECK(rendered(DType::uint8, DType::uint8, [](Program&, UOp x2, UOp y2) { return op2(Ops::MUL, x2, y2); }) ==
        "*(data0_16+0) = ((uchar)(val0*val1));");
}

TEST_CASE("results that stay in range under promotion, wide dtypes, vectors and declared results keep tinygrad's text") {
  // AND, OR, XOR, SHR, CMOD and unsigned division of in-range operands stay in range
  for (Ops op : {Ops::AND, Ops::OR, Ops::XOR, Ops::SHR, Ops::CMOD}) {
    CAPTURE(name(op));
    const std::string line = rendered(DType::int8, DType::bool_, [&](Program&, UOp x, UOp y) { return lt(op2(op, x, y), y); });
    CHECK(line.find("((char)") == std::string::npos);
  }
  CHECK(rendered(DType::uint16, DType::bool_, [](Program&, UOp x, UOp y) { return lt(op2(Ops::CDIV, x, y), y); }) ==
        "*(data0_16+0) = ((val0/val1)<val1);");
  // 32- and 64-bit ints do not promote; unsigned ones wrap in C
  for (DType dt : {DType::uint32, DType::uint64}) {
    CAPTURE(name(dt));
    CHECK(rendered(dt, DType::bool_, [](Program&, UOp x, UOp y) { return lt(op2(Ops::ADD, x, y), y); }) ==
          "*(data0_16+0) = ((val0+val1)<val1);");
  }
  // a result used twice is declared in its own dtype: the assignment converts
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::bool_, 16), in = p.global(1, DType::uint8, 16);
  UOp x = p.add(load(index(in, p.i32(0)))), y = p.add(load(index(in, p.i32(1))));
  UOp s = op2(Ops::ADD, x, y);
  p.finish(p.add(store(index(out, p.i32(0)), lt(s, op2(Ops::AND, s, y)))));
  const std::string text = src(p);
  CHECK(text.find("uchar alu0 = (val0+val1);") != std::string::npos);
  CHECK(store_line(text) == "*(data0_16+0) = (alu0<(alu0&val1));");
  // vector operands do not promote in OpenCL C
  Arena b;
  Program q{b};
  UOp o4 = q.global(0, DType::uint8, 16), i4 = q.global(1, DType::uint8, 16);
  UOp l[8];  // loaded in order (argument evaluation order is unspecified)
  for (int k = 0; k < 8; ++k) l[k] = q.add(load(index(i4, q.i32(k))));
  UOp v4 = q.add(stack(l[0], l[1], l[2], l[3]));
  UOp w4 = q.add(stack(l[4], l[5], l[6], l[7]));
  UOp sum4 = q.add(b.make(Ops::ADD, DType::uint8, {v4, w4}));
  q.finish(q.add(store(q.shrink(o4, q.i32(0), 4), sum4)));
  CHECK(src(q).find("*((__global uchar4*)((data0_16+0))) = ((uchar4)(val0,val1,val2,val3)+(uchar4)(val4,val5,val6,val7));") !=
        std::string::npos);
}

TEST_CASE("signed ops whose operand ranges allow overflow compute through the unsigned type's bits") {
  // clang folds `(long)(x+100)` of an int x into `(long)x+100`: signed overflow is undefined in C
  CHECK(rendered(DType::int32, DType::int64, [](Program& p, UOp x, UOp) { return cast(op2(Ops::ADD, x, p.i32(100)), DType::int64); }) ==
        "*(data0_16+0) = ((long)(as_int(as_uint(val0)+as_uint(100))));");
  CHECK(rendered(DType::int64, DType::bool_, [](Program&, UOp x, UOp y) { return lt(op2(Ops::MUL, x, y), y); }) ==
        "*(data0_16+0) = (as_long(as_ulong(val0)*as_ulong(val1))<val1);");
  CHECK(rendered(DType::int32, DType::bool_, [](Program&, UOp x, UOp y) { return lt(op2(Ops::SUB, x, y), y); }) ==
        "*(data0_16+0) = (as_int(as_uint(val0)-as_uint(val1))<val1);");
  CHECK(rendered(DType::int32, DType::bool_, [](Program&, UOp x, UOp y) { return lt(op2(Ops::SHL, x, y), y); }) ==
        "*(data0_16+0) = (as_int(as_uint(val0)<<as_uint(val1))<val1);");
  CHECK(rendered(DType::int32, DType::bool_, [](Program&, UOp x, UOp y) {
          return lt(x.arena().make(Ops::NEG, DType::int32, {x}), y);
        }) == "*(data0_16+0) = (as_int(-as_uint(val0))<val1);");
  // INT_MIN / -1 (a trap on x86): x / -1 is -x wrapped, x % -1 is 0; a divisor that cannot be -1
  // keeps the plain division
  CHECK(rendered(DType::int32, DType::int32, [](Program&, UOp x, UOp y) { return op2(Ops::CDIV, x, y); }) ==
        "*(data0_16+0) = ((val1==-1)?as_int(-as_uint(val0)):(val0/val1));");
  CHECK(rendered(DType::int64, DType::int64, [](Program&, UOp x, UOp y) { return op2(Ops::CMOD, x, y); }) ==
        "*(data0_16+0) = ((val1==-1)?0:(val0%val1));");
  CHECK(rendered(DType::int32, DType::int32, [](Program& p, UOp x, UOp) { return op2(Ops::CDIV, x, p.i32(7)); }) ==
        "*(data0_16+0) = (val0/7);");
  // index math is bounded by its ranges: tinygrad's text
  Arena a;
  Program p{a};
  UOp out = p.global(0, DType::float32, 4096), in = p.global(1, DType::float32, 4096);
  UOp g = p.special("gidx0", 32), l = p.special("lidx0", 32);
  UOp idx = p.add(op2(Ops::ADD, op2(Ops::SHL, g, p.i32(7)), op2(Ops::SHL, l, p.i32(2))));
  p.finish(p.add(store(index(out, idx), load(index(in, idx)))));
  CHECK(src(p).find("int alu0 = ((gidx0<<7)+(lidx0<<2));") != std::string::npos);
  // a signed vector does not promote, but overflows
  Arena b;
  Program q{b};
  UOp o4 = q.global(0, DType::int8, 16), i4 = q.global(1, DType::int8, 16);
  UOp lanes[8];  // loaded in order (argument evaluation order is unspecified)
  for (int k = 0; k < 8; ++k) lanes[k] = q.add(load(index(i4, q.i32(k))));
  UOp v4 = q.add(stack(lanes[0], lanes[1], lanes[2], lanes[3])), w4 = q.add(stack(lanes[4], lanes[5], lanes[6], lanes[7]));
  q.finish(q.add(store(q.shrink(o4, q.i32(0), 4), b.make(Ops::ADD, DType::int8, {v4, w4}))));
  CHECK(src(q).find("= as_char4(as_uchar4((char4)(val0,val1,val2,val3))+as_uchar4((char4)(val4,val5,val6,val7)));") !=
        std::string::npos);
}

TEST_CASE("bfloat16 arithmetic and value conversions are rejected, naming the instruction and dtype") {
  auto bf16_program = [](auto&& f) {
    Arena a;
    Program p{a};
    UOp out = p.global(0, DType::bfloat16, 4), in = p.global(1, DType::bfloat16, 4), fin = p.global(2, DType::float32, 4);
    UOp x = p.add(load(index(in, p.i32(0)))), y = p.add(load(index(fin, p.i32(0))));
    p.finish(p.add(f(p, out, x, y)));
    return render_opencl(p.program());
  };
  CHECK_THROWS_WITH_AS(bf16_program([](Program& p, UOp out, UOp x, UOp) { return store(index(out, p.i32(0)), op2(Ops::ADD, x, x)); }),
                       doctest::Contains("(ADD bfloat16): bfloat16 arithmetic has no OpenCL rendering"), uopcg::error);
  CHECK_THROWS_WITH_AS(bf16_program([](Program& p, UOp out, UOp x, UOp) {
                         return store(index(out, p.i32(0)), where(lt(x, x), x, x));
                       }),
                       doctest::Contains("(CMPLT bool): bfloat16 arithmetic"), uopcg::error);
  CHECK_THROWS_WITH_AS(bf16_program([](Program& p, UOp out, UOp, UOp y) { return store(index(out, p.i32(0)), cast(y, DType::bfloat16)); }),
                       doctest::Contains("(CAST bfloat16): a CAST between bfloat16 and another dtype"), uopcg::error);
  // moving the bits renders: a WHERE of bf16 values, a BITCAST, a literal
  CHECK_NOTHROW(bf16_program([](Program& p, UOp out, UOp x, UOp y) {
    return store(index(out, p.i32(0)), where(lt(y, y), x, bitcast(p.ilit(DType::uint16, 16256), DType::bfloat16)));
  }));
}
