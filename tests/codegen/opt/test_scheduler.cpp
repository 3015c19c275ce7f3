// The Scheduler: the axis list and its numbering, what each opt does to the graph and the kernel
// name, every validity check with tinygrad's message (the expected texts were printed by tinygrad
// 0.14.0 on the same kernels), and that an invalid opt leaves the Scheduler as it was.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <uopcg/codegen/opt/apply_opts.hpp>

#include "kernels.hpp"

using namespace uopcg;
namespace O = uopcg::codegen::opt;
using opt_test::bcast_add;
using opt_test::matmul;
using opt_test::rowsum;

namespace {

Opt opt(OptOps op, std::int64_t axis, std::int64_t arg) { return Opt{op, axis, Arg::integer(arg)}; }
Opt nolocals() { return Opt{OptOps::NOLOCALS, std::nullopt, Arg()}; }
Opt tc(std::int64_t axis, std::int64_t select, std::int64_t level, std::int64_t use) {
  return Opt{OptOps::TC, axis, Arg::tuple_of(select, level, use)};
}

O::Scheduler globalized(UOp ast, const Target& t) {
  O::Scheduler k(ast, t);
  k.convert_loop_to_global();
  return k;
}

std::vector<std::string> shape_str(const O::Scheduler& k) {
  std::vector<std::string> out;
  for (const text& s : k.shape_str()) out.push_back(s.str());
  return out;
}
std::vector<std::int64_t> ids(const O::Scheduler& k) {
  std::vector<std::int64_t> out;
  for (UOp r : k.rngs()) out.push_back(r.arg()[0].as_int());
  return out;
}
/// The kernel name without its colours.
std::string plain_name(const O::Scheduler& k) { return function_name(k.kernel_name().view()).str(); }

/// Applies `setup` (all must succeed), then `last`; returns its error message ("ok" on success),
/// checking that a failure left the Scheduler as it was.
std::string message(const O::Scheduler& k0, const std::vector<Opt>& setup, const Opt& last) {
  O::Scheduler k = k0.copy();
  for (const Opt& o : setup) REQUIRE(k.apply_opt(o).ok());
  const UOp ast = k.ast();
  const auto applied = k.applied_opts().size();
  const bool dul = k.dont_use_locals();
  auto r = k.apply_opt(last);
  if (r.ok()) return "ok";
  CHECK(k.ast() == ast);
  CHECK(k.applied_opts().size() == applied);
  CHECK(k.dont_use_locals() == dul);
  CHECK(r.error().opt.to_arg() == last.to_arg());
  return r.error().message.str();
}

}  // namespace

TEST_CASE("Scheduler: the axis list, its numbering and new ids (matmul_64's opts)") {
  Arena a;
  const Target t = Target::pocl();
  O::Scheduler k = globalized(matmul(a), t);
  CHECK(shape_str(k) == std::vector<std::string>{"g0", "g1", "R0"});
  CHECK(k.full_shape() == std::vector<std::int64_t>{64, 64, 64});
  struct step {
    Opt o;
    std::vector<std::string> shape;
    std::vector<std::int64_t> sizes, ids;
  };
  const std::vector<step> steps = {
      {opt(OptOps::LOCAL, 0, 4), {"g0", "g1", "l0", "R0"}, {16, 64, 4, 64}, {1, 2, 3, 0}},
      {opt(OptOps::LOCAL, 1, 4), {"g0", "g1", "l0", "l1", "R0"}, {16, 16, 4, 4, 64}, {1, 2, 3, 4, 0}},
      {opt(OptOps::UPCAST, 0, 2), {"g0", "g1", "l0", "l1", "u0", "R0"}, {8, 16, 4, 4, 2, 64}, {1, 2, 3, 4, 5, 0}},
      {opt(OptOps::UPCAST, 1, 4), {"g0", "g1", "l0", "l1", "u0", "u1", "R0"}, {8, 4, 4, 4, 2, 4, 64}, {1, 2, 3, 4, 5, 6, 0}},
      {opt(OptOps::UNROLL, 0, 4), {"g0", "g1", "l0", "l1", "u0", "u1", "R0", "r0"}, {8, 4, 4, 4, 2, 4, 16, 4}, {1, 2, 3, 4, 5, 6, 0, 7}},
      // GROUP_REDUCE shares LOCAL's position class: id 8 sorts after the LOCALs 3 and 4
      {opt(OptOps::GROUP, 0, 2), {"g0", "g1", "l0", "l1", "G0", "u0", "u1", "R0", "r0"}, {8, 4, 4, 4, 2, 2, 4, 8, 4},
       {1, 2, 3, 4, 8, 5, 6, 0, 7}},
  };
  for (const step& s : steps) {
    INFO(O::to_text(s.o).str());
    REQUIRE(k.apply_opt(s.o).ok());
    CHECK(shape_str(k) == s.shape);
    CHECK(k.full_shape() == s.sizes);
    CHECK(ids(k) == s.ids);
  }
  CHECK(k.kernel_name().view() ==
        "r\x1b[90m_\x1b[0m\x1b[34m8\x1b[0m\x1b[90m_\x1b[0m\x1b[34m4\x1b[0m\x1b[90m_\x1b[0m\x1b[36m4\x1b[0m\x1b[90m_\x1b[0m\x1b[36m4"
        "\x1b[0m\x1b[90m_\x1b[0m\x1b[91m2\x1b[0m\x1b[90m_\x1b[0m\x1b[33m2\x1b[0m\x1b[90m_\x1b[0m\x1b[33m4\x1b[0m\x1b[90m_\x1b[0m"
        "\x1b[31m8\x1b[0m\x1b[90m_\x1b[0m\x1b[35m4\x1b[0m");
  CHECK(plain_name(k) == "r_8_4_4_4_2_2_4_8_4");
  CHECK(k.upcast_size() == 2 * 4 * 4);
  CHECK(k.upcasted() == 3);
  CHECK(k.group_for_reduces() == 1);
  CHECK(k.output_shape() == std::vector<std::int64_t>{8, 4, 4, 4, 1, 2, 4, 1, 1});
  CHECK(k.upcastable_dims() == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(k.unrollable_dims() == std::vector<std::size_t>{4, 7});
  // a copy numbers new ranges after the largest id of its axes
  O::Scheduler c = k.copy();
  REQUIRE(c.apply_opt(opt(OptOps::UPCAST, 2, 2)).ok());
  CHECK(ids(c) == std::vector<std::int64_t>{1, 2, 3, 4, 8, 5, 6, 9, 0, 7});
}

TEST_CASE("Scheduler: splits, arg 0 and the post-opts graph") {
  Arena a;
  const Target t = Target::pocl();
  const UOp ast = rowsum(a);
  O::Scheduler k = globalized(ast, t);
  // the output axis became GLOBAL, the reduce axis stayed
  UOp g = k.rngs()[0], r = k.rngs()[1];
  CHECK(g.arg() == Arg::tuple_of(1, AxisType::GLOBAL));
  CHECK(r.arg() == Arg::tuple_of(0, AxisType::REDUCE));

  // GROUPTOP puts the new range in the high part: r -> G*16 + r'
  REQUIRE(k.apply_opt(opt(OptOps::GROUPTOP, 0, 16)).ok());
  const UOp grp = range(a, 16, 2, AxisType::GROUP_REDUCE);
  // UPCAST puts it in the low part: g -> g'*4 + u; UNROLL(0) counts GROUP_REDUCE and REDUCE axes
  REQUIRE(k.apply_opt(opt(OptOps::UPCAST, 0, 4)).ok());
  const UOp up = range(a, 4, 3, AxisType::UPCAST), glob = range(a, 16, 1, AxisType::GLOBAL);
  REQUIRE(k.apply_opt(opt(OptOps::UNROLL, 1, 0)).ok());  // the whole R axis: it stays as RANGE(1)
  const UOp unr = range(a, 16, 4, AxisType::UNROLL), red1 = range(a, 1, 0, AxisType::REDUCE);
  CHECK(shape_str(k) == std::vector<std::string>{"g0", "G0", "u0", "r0"});
  CHECK(plain_name(k) == "r_16_16_4_16");

  UOp out = param(a, 0, DType::float32, 64), in = param(a, 1, DType::float32, 64 * 256);
  UOp row = glob * 4 + up;
  UOp col = grp * 16 + (red1 * 16 + unr);
  UOp body = store(index(out, row), reduce(index(in, row * 256 + col), Ops::ADD, grp, red1, unr));
  KernelInfo info;
  info.name = k.kernel_name();
  info.applied_opts = {opt(OptOps::GROUPTOP, 0, 16), opt(OptOps::UPCAST, 0, 4), opt(OptOps::UNROLL, 1, 0)};
  const UOp want = a.make(Ops::SINK, DType::void_, {end(body, glob, up)}, info.to_arg(), Arg::integer(1));
  CHECK(k.get_optimized_ast() == want);
  // a name given by the kernel replaces the derived one
  CHECK(KernelInfo::from(k.get_optimized_ast("my_kernel").arg()).name.view() == "my_kernel");
}

TEST_CASE("Scheduler: every check, in tinygrad's order and words") {
  Arena a;
  const Target t = Target::pocl();
  const O::Scheduler k = globalized(rowsum(a), t);  // [g0=64, R0=256]
  // tinygrad's text says GLOBAL/LOCAL/LOOP where its check reads WEAK ("not AxisType.LOOP" refused a LOOP axis
  // the words allowed); uopcg names the types it checks
  CHECK(message(k, {}, opt(OptOps::UPCAST, 1, 4)) == "upcast is for GLOBAL/LOCAL/WEAK, not AxisType.REDUCE");
  CHECK(message(k, {}, opt(OptOps::UPCAST, 0, 32)) == "don't upcast more than 16");
  CHECK(message(k, {}, opt(OptOps::UPCAST, 0, 0)) == "don't upcast more than 16");  // 0: the whole 64
  CHECK(message(k, {}, opt(OptOps::UNROLL, 0, 64)) == "don't unroll more than 32");
  CHECK(message(k, {}, opt(OptOps::UNROLL, 0, 0)) == "don't unroll more than 32");
  CHECK(message(k, {}, opt(OptOps::LOCAL, 1, 4)) == "local is for globals");
  CHECK(message(k, {}, opt(OptOps::UPCAST, 0, 3)) ==
        "3 can't divide UOp(Ops.CONST, dtypes.weakint, arg=64, src=()) in (64 GLOBAL, 256 REDUCE)");
  CHECK(message(k, {}, opt(OptOps::LOCAL, 0, 3)) ==
        "3 can't divide UOp(Ops.CONST, dtypes.weakint, arg=64, src=()) in (64 GLOBAL, 256 REDUCE)");
  CHECK(message(k, {}, opt(OptOps::UPCAST, 5, 2)) == "invalid axis on axis=5 op=<OptOps.UPCAST: 2> self.shape_len=2");
  CHECK(message(k, {}, opt(OptOps::SWAP, 0, 1)) == "swap only for globals");
  CHECK(message(k, {}, opt(OptOps::THREAD, 0, 2)) == "target does not support threads");
  CHECK(message(k, {opt(OptOps::LOCAL, 0, 4)}, nolocals()) == "no locals can't have locals");
  CHECK(message(k, {nolocals()}, opt(OptOps::LOCAL, 0, 4)) == "can't use locals");
  CHECK(message(k, {nolocals()}, opt(OptOps::GROUP, 0, 4)) == "can't use locals");
  CHECK(message(k, {}, opt(OptOps::PADTO, 1, 1024)) == "pad adds more than quadruple the work");
  CHECK(message(k, {opt(OptOps::UPCAST, 0, 4)}, opt(OptOps::PADTO, 1, 8)) == "cannot pad upcasted");
  // axes counted in the unrollable / REDUCE axes: tinygrad raises an empty KernelOptError there
  CHECK(message(k, {}, opt(OptOps::UNROLL, 1, 2)) == "axis 1 out of range: the kernel has 1 unrollable axes");
  CHECK(message(k, {}, opt(OptOps::UNROLL, -2, 4)) == "axis -2 out of range: the kernel has 1 unrollable axes");
  CHECK(message(k, {}, opt(OptOps::GROUPTOP, 1, 4)) == "axis 1 out of range: the kernel has 1 REDUCE axes");
  // ... and a negative one counts from the end, as a Python index
  CHECK(message(k, {}, opt(OptOps::UNROLL, -1, 4)) == "ok");
  CHECK(message(k, {}, opt(OptOps::GROUP, -1, 4)) == "ok");
  // where tinygrad has no check (it would crash), a message of ours
  CHECK(message(k, {}, opt(OptOps::UPCAST, -1, 4)) == "axis -1 out of range: the kernel has 2 axes");
  CHECK(message(k, {}, Opt{OptOps::LOCAL, std::nullopt, Arg::integer(4)}) == "the opt needs an axis");
  CHECK(message(k, {}, Opt{OptOps::UPCAST, 0, Arg()}) == "the opt's arg is not an integer amount");
  CHECK(message(k, {}, opt(OptOps::UPCAST, 0, -4)) == "the amount must be positive");
  CHECK(message(k, {}, opt(OptOps::PADTO, 0, 0)) == "the pad multiple is not a positive integer");
  CHECK(message(k, {}, opt(OptOps::SWAP, 0, 5)) == "axis 5 out of range: the kernel has 2 axes");
  // amounts that fit
  CHECK(message(k, {opt(OptOps::GROUP, 0, 16), opt(OptOps::UPCAST, 0, 16)}, opt(OptOps::LOCAL, 0, 4)) == "ok");
  CHECK(message(k, {}, opt(OptOps::GROUP, 0, 256)) == "ok");
  CHECK(message(k, {}, opt(OptOps::PADTO, 0, 80)) == "ok");
}

TEST_CASE("Scheduler: real_axis resolves an opt's axis as apply_opt and BEAM's action filter do") {
  Arena a;
  const Target t = Target::pocl();
  const O::Scheduler k = globalized(rowsum(a), t);  // [g0=64, R0=256]
  auto axis = [&](const Opt& o) { return k.real_axis(o).value_or_fail(); };
  auto why = [&](const Opt& o) { return std::string(k.real_axis(o).error().message.view()); };
  CHECK(axis(opt(OptOps::UPCAST, 0, 4)) == 0);
  CHECK(axis(opt(OptOps::PADTO, 1, 8)) == 1);
  // UNROLL and GROUP count among the unrollable / REDUCE axes, a negative index from the end
  CHECK(axis(opt(OptOps::UNROLL, 0, 4)) == 1);
  CHECK(axis(opt(OptOps::UNROLL, -1, 4)) == 1);
  CHECK(axis(opt(OptOps::GROUPTOP, 0, 16)) == 1);
  CHECK(why(opt(OptOps::GROUP, 1, 4)) == "axis 1 out of range: the kernel has 1 REDUCE axes");
  CHECK(why(opt(OptOps::UPCAST, 2, 4)) == "invalid axis on axis=2 op=<OptOps.UPCAST: 2> self.shape_len=2");
  CHECK(why(opt(OptOps::LOCAL, -1, 4)) == "axis -1 out of range: the kernel has 2 axes");
  CHECK(why(Opt{OptOps::LOCAL, std::nullopt, Arg::integer(4)}) == "the opt needs an axis");
  // axis_index: where a RANGE sits in the list
  CHECK(k.axis_index(k.rngs()[1]) == std::optional<std::size_t>(1));
  CHECK_FALSE(k.axis_index(UOp()).has_value());
}

TEST_CASE("Scheduler: checks that depend on the target") {
  Arena a;
  const UOp ast = rowsum(a);
  SUBCASE("no local memory: nothing is globalized, LOCAL/GROUP need locals") {
    Target t = Target::pocl();
    t.renderer.has_local = false;
    const O::Scheduler k = globalized(ast, t);
    CHECK(shape_str(k) == std::vector<std::string>{"L0", "R0"});
    CHECK(message(k, {}, opt(OptOps::GROUP, 0, 4)) == "locals needed for opt");
    CHECK(message(k, {}, opt(OptOps::LOCAL, 0, 4)) == "locals needed for opt");
    CHECK(message(k, {}, opt(OptOps::UPCAST, 0, 4)) == "ok");
  }
  SUBCASE("shared memory: a group's buffer, and every split once grouped") {
    Target t = Target::pocl();
    t.renderer.shared_max = 100;
    const O::Scheduler k = globalized(ast, t);
    CHECK(message(k, {}, opt(OptOps::GROUP, 0, 32)) == "exceeds maximum shared memory size: needs 128, max 100");
    CHECK(message(k, {opt(OptOps::GROUP, 0, 16)}, opt(OptOps::UPCAST, 0, 2)) ==
          "exceeds maximum shared memory size: needs 128, max 100");
  }
  SUBCASE("threads (a CPU target: no locals, the output axis stays WEAK)") {
    Target t = Target::pocl();
    t.renderer.has_local = false;
    t.renderer.has_threads = true;
    t.renderer.global_max = {8, 8, 8};
    O::Scheduler k = globalized(ast, t);
    CHECK(message(k, {}, opt(OptOps::THREAD, 0, 16)) == "too many threads");
    CHECK(message(k, {opt(OptOps::THREAD, 0, 2)}, opt(OptOps::THREAD, 0, 2)) == "already threaded");
    CHECK(message(k, {}, opt(OptOps::THREAD, 1, 2)) == "can't apply range to this dim");
    // THREAD takes the high part; WEAK prints bright white, THREAD bright blue
    REQUIRE(k.apply_opt(opt(OptOps::THREAD, 0, 8)).ok());
    CHECK(shape_str(k) == std::vector<std::string>{"L0", "t0", "R0"});
    CHECK(k.kernel_name().view() == "r\x1b[90m_\x1b[0m\x1b[97m8\x1b[0m\x1b[90m_\x1b[0m\x1b[94m8\x1b[0m\x1b[90m_\x1b[0m\x1b[31m256\x1b[0m");
    CHECK(message(k, {}, opt(OptOps::PADTO, 1, 16)) == "cannot pad thread");
  }
}

TEST_CASE("Scheduler: a GROUP inside another reduce") {
  // sum_r0 ((sum_r1 x[r0*8 + r1]) * y[r0]): the inner REDUCE is inside r0
  Arena a;
  UOp out = param(a, 0, DType::float32, 1), x = param(a, 1, DType::float32, 512), y = param(a, 2, DType::float32, 64);
  UOp r0 = range(a, 64, 0, AxisType::REDUCE), r1 = range(a, 8, 1, AxisType::REDUCE);
  UOp inner = reduce(index(x, r0 * 8 + r1), Ops::ADD, r1);
  UOp ast = sink(store(index(out, literal(a, 0)), reduce(inner * index(y, r0), Ops::ADD, r0)));
  const Target t = Target::pocl();
  const O::Scheduler k = globalized(ast, t);
  CHECK(shape_str(k) == std::vector<std::string>{"R0", "R1"});
  CHECK(message(k, {}, opt(OptOps::GROUP, 1, 2)) == "cannot have a GROUP_REDUCE inside another reduce");
  CHECK(message(k, {}, opt(OptOps::GROUP, 0, 2)) == "ok");
  CHECK(message(k, {}, opt(OptOps::UNROLL, 1, 2)) == "ok");
}

TEST_CASE("Scheduler: PADTO gates every index that uses the axis") {
  Arena a;
  const Target t = Target::pocl();
  O::Scheduler k = globalized(rowsum(a, 60, 256), t);
  REQUIRE(k.apply_opt(opt(OptOps::PADTO, 0, 16)).ok());
  CHECK(k.full_shape() == std::vector<std::int64_t>{64, 256});
  UOp g = range(a, 64, 1, AxisType::GLOBAL), r = range(a, 256, 0, AxisType::REDUCE);
  UOp ok = g < 60;
  UOp gate = ok & literal(a, true);
  UOp out = param(a, 0, DType::float32, 60), in = param(a, 1, DType::float32, 60 * 256);
  // the store's address is gated; a read also becomes where(valid, load, Invalid)
  UOp read = where(ok, index(in, valid(g * 256 + r, gate)), invalid(a));
  UOp want = sink(end(store(index(out, valid(g, gate)), reduce(read, Ops::ADD, r)), g));
  CHECK(k.ast() == want);
  CHECK(plain_name(k) == "r_64_256");
  // a symbolic axis cannot be padded
  ParamArg p;
  p.slot = -1;
  p.dtype = DType::weakint;
  p.addrspace = AddrSpace::ALU;
  p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{1, 64};
  p.has_name = true;
  p.name = "n";
  UOp n = a.make(Ops::PARAM, DType::weakint, {}, p.to_arg());
  UOp rn = range(n, 0, AxisType::WEAK);
  UOp buf = param(a, 0, DType::float32, 64);
  const O::Scheduler ks = globalized(sink(end(store(index(buf, rn), literal(a, 1.0)), rn)), t);
  CHECK(message(ks, {}, opt(OptOps::PADTO, 0, 16)) == "only pad const axes");
}

TEST_CASE("Scheduler: an UPCAST gives each lane its own copy of a REG buffer its stores depend on") {
  // a hand-written REG accumulator: acc = 0; for t: acc = acc + in[g*5 + t]; out[g] = acc
  Arena a;
  const Target t = Target::pocl();
  auto kernel = [&](UOp g, UOp acc_buf, auto&& idx) {
    UOp l = range(a, 5, 1, AxisType::LOOP);
    UOp out = param(a, 0, DType::float32, 16), in = param(a, 1, DType::float32, 80);
    UOp acc = after(acc_buf, store(index(acc_buf, idx(0)), literal(a, 0.0)));
    UOp upd = store(index(after(acc, l), idx(0)), index(after(acc, l), idx(0)) + index(in, g * 5 + l));
    return sink(end(store(index(out, g), index(after(acc_buf, end(upd, l)), idx(0))), g));
  };
  UOp g = range(a, 16, 0, AxisType::WEAK);
  UOp acc1 = buffer(a, 0, DType::float32, 1, AddrSpace::REG);
  O::Scheduler k = globalized(kernel(g, acc1, [&](std::int64_t i) { return literal(a, i); }), t);
  CHECK(message(k, {}, opt(OptOps::UPCAST, 0, 5)) == "upcast is for GLOBAL/LOCAL/WEAK, not AxisType.LOOP");
  REQUIRE(k.apply_opt(opt(OptOps::UPCAST, 1, 4)).ok());  // axis 0 is the LOOP
  // lane u of the upcast axis addresses element u of a buffer four times the size
  UOp g2 = range(a, 4, 0, AxisType::GLOBAL), u = range(a, 4, 2, AxisType::UPCAST);
  UOp acc4 = buffer(a, 0, DType::float32, 4, AddrSpace::REG);
  CHECK(k.ast() == kernel(g2 * 4 + u, acc4, [&](std::int64_t i) { return literal(a, i) + u * 1; }));
  // LOCAL splits work-items, each with registers of its own: the buffer stays as it is
  O::Scheduler kl = globalized(kernel(g, acc1, [&](std::int64_t i) { return literal(a, i); }), t);
  REQUIRE(kl.apply_opt(opt(OptOps::LOCAL, 1, 4)).ok());
  bool untouched = false;
  for (UOp x : toposort(kl.ast())) untouched |= x == acc1;
  CHECK(untouched);
}

TEST_CASE("Scheduler: a LOCAL split of a work-group axis gives each part its own copy of a LOCAL buffer") {
  // a hand-written LOCAL tile per work-group g: tile[l] = 2*in[g*8 + l]; out[g] = sum_t tile[t]
  Arena a;
  const Target t = Target::pocl();
  UOp l = range(a, 8, 1, AxisType::LOCAL), r = range(a, 8, 2, AxisType::REDUCE);
  auto kernel = [&](UOp g, UOp tile, auto&& idx) {
    UOp out = param(a, 0, DType::float32, 10), in = param(a, 1, DType::float32, 80);
    UOp tl = after(tile, store(index(tile, idx(l)), index(in, g * 8 + l) * 2.0));
    return sink(end(store(index(out, g), reduce(index(tl, idx(r)), Ops::ADD, r)), g, l));
  };
  UOp g = range(a, 10, 0, AxisType::GLOBAL);
  UOp tile8 = buffer(a, 0, DType::float32, 8, AddrSpace::LOCAL);
  O::Scheduler k = globalized(kernel(g, tile8, [](UOp x) { return x; }), t);
  REQUIRE(k.apply_opt(opt(OptOps::LOCAL, 0, 2)).ok());
  // two former work-groups now share one: each half of the group addresses its own half of the tile
  UOp g2 = range(a, 5, 0, AxisType::GLOBAL), n = range(a, 2, 3, AxisType::LOCAL);
  UOp tile16 = buffer(a, 0, DType::float32, 16, AddrSpace::LOCAL);
  CHECK(k.ast() == kernel(g2 * 2 + n, tile16, [&](UOp x) { return x + n * 8; }));
}

TEST_CASE("Scheduler: no GROUP in a kernel with SPECIALs") {
  // explicit work-group ids: the kernel gets no GPU dims, so a GROUP_REDUCE axis would be a loop
  Arena a;
  const Target t = Target::pocl();
  UOp g = a.make(Ops::SPECIAL, DType::weakint, {literal(a, 24)}, Arg::string("gidx0"));
  UOp r = range(a, 96, 0, AxisType::REDUCE);
  UOp out = param(a, 0, DType::float32, 24), in = param(a, 1, DType::float32, 24 * 96);
  const O::Scheduler k = globalized(sink(store(index(out, g), reduce(index(in, g * 96 + r), Ops::ADD, r))), t);
  CHECK(message(k, {}, opt(OptOps::GROUPTOP, 0, 16)) == "no grouping in a kernel with SPECIALs (it gets no GPU dims)");
  CHECK(message(k, {}, opt(OptOps::GROUP, 0, 4)) == "no grouping in a kernel with SPECIALs (it gets no GPU dims)");
  CHECK(message(k, {}, opt(OptOps::UNROLL, 0, 4)) == "ok");
}

TEST_CASE("Scheduler: no GROUP or UNROLL of an axis that carries a value through memory") {
  // a hand-written accumulation over a REDUCE-typed axis (UOp.set in a loop, no REDUCE):
  // acc = 0; for r: acc = acc*0.5 + in[g*16 + r]; out[g] = acc. Its work-items or lanes would each
  // see only some iterations (tinygrad's heuristics pick GROUPTOP:0:16 and compute other values)
  Arena a;
  const Target t = Target::pocl();
  UOp g = range(a, 8, 0, AxisType::GLOBAL), r = range(a, 16, 1, AxisType::REDUCE);
  UOp out = param(a, 0, DType::float32, 8), in = param(a, 1, DType::float32, 128);
  UOp acc_buf = buffer(a, 0, DType::float32, 1, AddrSpace::REG);
  UOp acc = after(acc_buf, store(index(acc_buf, literal(a, 0)), literal(a, 0.0)));
  UOp upd = store(index(after(acc, r), literal(a, 0)), index(after(acc, r), literal(a, 0)) * 0.5 + index(in, g * 16 + r));
  const O::Scheduler k = globalized(sink(end(store(index(out, g), index(after(acc_buf, end(upd, r)), literal(a, 0))), g)), t);
  const char* why = "the axis carries a value through memory from one iteration to the next";
  CHECK(message(k, {}, opt(OptOps::GROUPTOP, 0, 16)) == why);
  CHECK(message(k, {}, opt(OptOps::GROUP, 0, 4)) == why);
  CHECK(message(k, {}, opt(OptOps::UNROLL, 0, 4)) == why);
  CHECK(message(k, {}, opt(OptOps::UPCAST, 0, 4)) == "ok");  // the GLOBAL axis: each lane its own copy (O4)
  // the heuristics go on to other opts
  const auto h = O::hand_coded_optimizations(k);
  REQUIRE(h.ok());
  for (const auto& o : h.value_or_fail().applied_opts()) CHECK((o.op != OptOps::GROUPTOP && o.op != OptOps::UNROLL));

  // iterations that write their own elements and read none of them pass nothing on
  UOp tmp = param(a, 2, DType::float32, 128);
  const O::Scheduler w = globalized(sink(end(store(index(tmp, g * 16 + r), index(in, g * 16 + r) * 2.0), g, r)), t);
  CHECK(message(w, {}, opt(OptOps::UNROLL, 0, 4)) == "ok");
  // one element written by every iteration keeps the last one's value
  const O::Scheduler l = globalized(sink(end(store(index(out, g), index(in, g * 16 + r)), g, r)), t);
  CHECK(message(l, {}, opt(OptOps::UNROLL, 0, 4)) == why);
}

TEST_CASE("Scheduler: SWAP exchanges the ids of two GLOBAL axes") {
  Arena a;
  const Target t = Target::pocl();
  O::Scheduler k = globalized(bcast_add(a, 32, 64), t);
  CHECK(plain_name(k) == "E_32_64");
  CHECK(message(k, {}, opt(OptOps::SWAP, 0, 1)) == "ok");
  REQUIRE(k.apply_opt(opt(OptOps::SWAP, 0, 1)).ok());
  CHECK(plain_name(k) == "E_64_32");
  CHECK(k.rngs()[0] == range(a, 64, 0, AxisType::GLOBAL));
  CHECK(k.rngs()[1] == range(a, 32, 1, AxisType::GLOBAL));
  for (UOp u : toposort(k.ast())) CHECK_FALSE(u.has_tag());  // the swap's temporary tags are gone
}

TEST_CASE("Scheduler: NOLOCALS, and the name's colours without locals") {
  Arena a;
  const Target t = Target::pocl();
  O::Scheduler k = globalized(matmul(a), t);
  REQUIRE(k.apply_opt(nolocals()).ok());
  CHECK(k.dont_use_locals());
  CHECK(k.kernel_name().view() == "r\x1b[90m_\x1b[0m\x1b[94m64\x1b[0m\x1b[90m_\x1b[0m\x1b[94m64\x1b[0m\x1b[90m_\x1b[0m\x1b[31m64\x1b[0m");
  CHECK(KernelInfo::from(k.get_optimized_ast().arg()).dont_use_locals);
}

TEST_CASE("Scheduler: TC's checks on a target without tensor cores") {
  Arena a;
  const Target t = Target::pocl();
  const O::Scheduler k = globalized(rowsum(a), t);
  CHECK(message(k, {}, tc(0, -1, 0, 1)) == "no tensor core available");
  CHECK(message(k, {}, tc(0, 0, 0, 1)) == "tensor core opts must have valid tc_select");
  CHECK(message(k, {opt(OptOps::UPCAST, 0, 4)}, tc(0, -1, 0, 1)) == "tensor core opts must be first");
  CHECK(message(k, {}, Opt{OptOps::TC, std::nullopt, Arg::tuple_of(-1, 0, 1)}) == "tensor core opts must have an axis");
  CHECK(message(k, {}, Opt{OptOps::TC, 0, Arg::tuple_of(-1, 0)}) == "tensor core opts must have valid arg");
  CHECK(message(k, {}, tc(0, -1, 3, 1)) == "tensor core opts must have valid tc_opt");
  CHECK(message(k, {}, tc(0, -1, 0, 0)) == "use_tensor_cores value is not valid");
  CHECK(message(k, {}, tc(0, -1, 0, 3)) == "use_tensor_cores value is not valid");
  const O::Scheduler e = globalized(bcast_add(a), t);
  CHECK(message(e, {}, tc(0, -1, 0, 1)) == "no reduce ops for TensorCore");
}

TEST_CASE("Scheduler: a failed TC that had tagged the reduce leaves no trace") {
  // Metal's 8x8x8 cores: a 36x36x36 half matmul needs padding, which TC_OPT 0 does not allow;
  // tinygrad keeps the REDUCE it tagged "TC", uopcg goes back to the graph before the opt
  Arena a;
  Target t = Target::pocl();
  t.tensor_cores = O::tensor_cores::metal();
  O::Scheduler k = globalized(matmul(a, 36, DType::float16, DType::float32), t);
  const UOp before = k.ast();
  auto r = k.apply_opt(tc(0, -1, 0, 1));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.view() == "no tensor core available");
  CHECK(k.ast() == before);
  CHECK(k.tensor_core() == nullptr);
  // with padding allowed it applies: a WARP axis of 32 work-items, N and M padded to 40
  REQUIRE(k.apply_opt(tc(0, -1, 2, 1)).ok());
  CHECK(shape_str(k) == std::vector<std::string>{"g0", "g1", "w0", "u0", "R0"});
  CHECK(k.full_shape() == std::vector<std::int64_t>{5, 5, 32, 2, 5});
  REQUIRE(k.tensor_core() != nullptr);
  CHECK(k.tensor_core()->dims == std::array<std::int64_t, 3>{8, 8, 8});
  CHECK(message(k, {}, opt(OptOps::GROUP, 0, 2)) == "no grouping with tensor cores");
}

TEST_CASE("Scheduler: a failed opt does not use up a range id") {
  Arena a;
  const Target t = Target::pocl();
  O::Scheduler k = globalized(rowsum(a), t);
  O::Scheduler fresh = k.copy();
  CHECK_FALSE(k.apply_opt(opt(OptOps::UPCAST, 0, 3)).ok());
  CHECK_FALSE(k.apply_opt(opt(OptOps::UNROLL, 0, 64)).ok());
  REQUIRE(k.apply_opt(opt(OptOps::UPCAST, 0, 4)).ok());
  REQUIRE(fresh.apply_opt(opt(OptOps::UPCAST, 0, 4)).ok());
  CHECK(k.ast() == fresh.ast());
  CHECK(k.applied_opts().size() == 1);
}

#if UOPCG_HAS_EXCEPTIONS
TEST_CASE("Scheduler::apply and value_or_fail: an invalid opt is an error naming it") {
  Arena a;
  const Target t = Target::pocl();
  O::Scheduler k = globalized(rowsum(a), t);
  CHECK_THROWS_WITH_AS(k.apply(opt(OptOps::UPCAST, 1, 4)),
                       "invalid Opt(op=OptOps.UPCAST, axis=1, arg=4): upcast is for GLOBAL/LOCAL/WEAK, not AxisType.REDUCE",
                       uopcg::error);
  CHECK(k.applied_opts().empty());
  CHECK(k.apply(opt(OptOps::UPCAST, 0, 4)).size() == 2);
  CHECK_THROWS_WITH_AS(O::apply_opts(rowsum(a), t, O::OptsRequest::of({opt(OptOps::LOCAL, 1, 4)})),
                       "invalid Opt(op=OptOps.LOCAL, axis=1, arg=4): local is for globals", uopcg::error);
  CHECK_THROWS_WITH_AS(O::apply_opts(index(param(a, 0, DType::float32, 4), literal(a, 0)), t),
                       "apply_opts: the kernel's root is not a SINK", uopcg::error);
}
#endif

TEST_CASE("apply_opts: what it applies") {
  Arena a;
  const Target t = Target::pocl();
  const UOp ast = rowsum(a);
  auto name_of = [](UOp sink) { return function_name(KernelInfo::from(sink.arg()).name.view()).str(); };
  auto opts_of = [](UOp sink) { return KernelInfo::from(sink.arg()).applied_opts.size(); };
  // nothing chosen: the heuristics (GROUPTOP for this small output)
  const UOp h = O::apply_opts(ast, t);
  CHECK(name_of(h) == "r_64_16_16");
  CHECK(h.tag() == Arg::integer(1));
  CHECK(O::apply_opts(ast, t, O::OptsRequest::heuristics()) == h);
  // NOOPT: none, but the axes are still globalized and the kernel named
  Target noopt = t;
  noopt.noopt = true;
  CHECK(name_of(O::apply_opts(ast, noopt)) == "r_64_256");
  CHECK(O::apply_opts(ast, noopt) == O::apply_opts(ast, t, O::OptsRequest::no_opts()));
  // a list
  const UOp l = O::apply_opts(ast, t, O::OptsRequest::of({opt(OptOps::UPCAST, 0, 4), opt(OptOps::UNROLL, 0, 4)}));
  CHECK(name_of(l) == "r_16_4_64_4");
  CHECK(opts_of(l) == 2);
  // the kernel's own opts_to_apply
  KernelInfo info;
  info.opts_to_apply = std::vector<Opt>{opt(OptOps::UPCAST, 0, 4), opt(OptOps::UNROLL, 0, 4)};
  const UOp own = a.make(Ops::SINK, DType::void_, ast.srcs().to_vector(), info.to_arg());
  CHECK(O::apply_opts(own, t) == l);
  // an optimized kernel (tag 1) is returned as it is
  CHECK(O::apply_opts(l, t) == l);
  // the failure as a value
  auto bad = O::try_apply_opts(ast, t, O::OptsRequest::of({opt(OptOps::UPCAST, 0, 4), opt(OptOps::UPCAST, 2, 4)}));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().describe().view() == "invalid Opt(op=OptOps.UPCAST, axis=2, arg=4): upcast is for GLOBAL/LOCAL/WEAK, not AxisType.REDUCE");
  // a search: called with the Scheduler after globalization and the width
  std::int64_t width = 0;
  O::OptSearch search = [&](const O::Scheduler& k, std::int64_t beam) -> O::OptResult<O::Scheduler> {
    width = beam;
    O::Scheduler s = k.copy();
    if (auto r = s.apply_opt(opt(OptOps::UPCAST, 0, 2)); !r.ok()) return r.error();
    return s;
  };
  CHECK(name_of(O::apply_opts(ast, t, O::OptsRequest::beam_search(4, search))) == "r_32_2_256");
  CHECK(width == 4);
  // a kernel that asks for BEAM itself gets the request's search
  KernelInfo beam_info;
  beam_info.beam = 2;
  const UOp beam_kernel = a.make(Ops::SINK, DType::void_, ast.srcs().to_vector(), beam_info.to_arg());
  O::OptsRequest with_search;
  with_search.search = search;
  CHECK(name_of(O::apply_opts(beam_kernel, t, with_search)) == "r_32_2_256");
  CHECK(width == 2);
#if UOPCG_HAS_EXCEPTIONS
  CHECK_THROWS_WITH_AS(O::apply_opts(beam_kernel, t), "apply_opts: the kernel asks for a BEAM search (beam 2) and none was given",
                       uopcg::error);
#endif
}

namespace {

// In a constant expression: an invalid opt and its message, two opts and the kernel name, and the
// heuristics' choice for the same kernel.
constexpr bool scheduler_constexpr() {
  Arena a;
  const Target t = Target::pocl();
  O::Scheduler k(rowsum(a), t);
  k.convert_loop_to_global();
  const UOp before = k.ast();
  auto bad = k.apply_opt(Opt{OptOps::UPCAST, 1, Arg::integer(4)});
  if (bad.ok() || k.ast() != before || bad.error().message.view() != "upcast is for GLOBAL/LOCAL/WEAK, not AxisType.REDUCE")
    return false;
  const O::Scheduler h = O::hand_coded_optimizations(k).value_or_fail();
  if (!k.apply_opt(Opt{OptOps::GROUPTOP, 0, Arg::integer(16)}).ok()) return false;
  if (!k.apply_opt(Opt{OptOps::UNROLL, 1, Arg::integer(4)}).ok()) return false;
  return function_name(KernelInfo::from(k.get_optimized_ast().arg()).name.view()).view() == "r_64_16_4_4" &&
         function_name(h.kernel_name().view()).view() == "r_64_16_16";
}

}  // namespace

TEST_CASE("constexpr: opts, their checks and the heuristics run in constant evaluation") {
  static_assert(scheduler_constexpr());
  CHECK(scheduler_constexpr());
}

TEST_CASE("Scheduler: a whole-axis opt on an axis sized by loaded data is an error, not an overflow") {
  // found by tests/fuzz/fuzz_from_ast.cpp: a REDUCE range sized by a long read from memory has no
  // bound below int64's, and GROUP:0:0 (the whole axis) computed vmax + 1 and the shared memory size in
  // overflowing int64 (UBSan)
  Arena a;
  const Target t = Target::pocl();
  UOp out = param(a, 0, DType::float32, 64), in = param(a, 1, DType::float32, 64 * 256), sizes = param(a, 2, DType::int64, 1);
  UOp r1 = range(a, 64, 1, AxisType::WEAK), r0 = range(index(sizes, literal(a, 0)), 0, AxisType::REDUCE);
  const O::Scheduler k = globalized(sink(end(store(index(out, r1), reduce(index(in, r1 * 256 + r0), Ops::ADD, r0)), r1)), t);
  CHECK(k.rngs()[1].vmax() == INT64_MAX);
  CHECK(message(k, {}, opt(OptOps::GROUP, 0, 0)) == "exceeds maximum shared memory size: needs over 2^63 bytes, max 32768");
  CHECK(message(k, {}, opt(OptOps::UNROLL, 0, 0)) == "axis 0 out of range: the kernel has 0 unrollable axes");  // not a constant size
  CHECK(message(k, {}, opt(OptOps::GROUP, 0, 4)).find("can't divide") != std::string::npos);
}
