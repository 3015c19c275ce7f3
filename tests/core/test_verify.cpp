// The IR verifier: each broken rule is rejected with an error naming the node.
#include <doctest/doctest.h>

#include <uopcg/core/builder.hpp>
#include <uopcg/core/verify.hpp>

#include <string>

using namespace uopcg;

namespace {
std::string why(UOp u) { return check_node(u).str(); }
}  // namespace

TEST_CASE("well-formed kernels pass") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 16), in = param(a, 1, DType::float32, 64);
  UOp g = range(a, 16, 0, AxisType::GLOBAL), r = range(a, 4, 1, AxisType::REDUCE);
  UOp acc = reduce(load(index(in, g * 4 + r)) * 2.0, Ops::ADD, r);
  UOp k = sink(end(store(index(out, g), acc), g));
  CHECK_NOTHROW(verify(k));
  static_assert([] {
    Arena b;
    UOp x = param(b, 0, DType::int32, 4);
    UOp i = range(b, 4, 0, AxisType::LOOP);
    verify(sink(end(store(index(x, i), cast(i, DType::int32)), i)));
    return true;
  }());
}

TEST_CASE("each typing rule names the node at fault") {
  Arena a;
  UOp buf = param(a, 0, DType::float32, 16);
  UOp i = range(a, 16, 0, AxisType::LOOP);
  UOp f = const_(a, DType::float32, Arg(1.0));
  // a LOAD from something that is not memory
  UOp bad_load = a.make(Ops::LOAD, DType::float32, {f});
  CHECK(why(bad_load) == "loads from something that is not memory (a buffer or an address into one)");
  const std::string expected = "verify: node " + std::to_string(bad_load.id()) + " (LOAD float) loads from something that is not memory";
  CHECK_THROWS_WITH_AS(verify(sink(store(index(buf, i), bad_load))), doctest::Contains(expected.c_str()), uopcg::error);
  // a RANGE with a non-integer bound
  CHECK(why(a.make(Ops::RANGE, DType::weakint, {f}, Arg::tuple_of(0, AxisType::LOOP))) ==
        "is a RANGE whose bound is not an integer");
  CHECK(why(a.make(Ops::RANGE, DType::weakint, {literal(a, 4)}, Arg(3))) == "is a RANGE whose arg is not (axis id..., AxisType)");
  // found by mutating corpus ASTs: a REDUCE over RANGE(0) declared its accumulator inside the loop
  CHECK(why(a.make(Ops::RANGE, DType::weakint, {literal(a, 0)}, Arg::tuple_of(0, AxisType::REDUCE))).rfind("is an empty RANGE", 0) == 0);
  CHECK(why(a.make(Ops::RANGE, DType::weakint, {literal(a, -3)}, Arg::tuple_of(0, AxisType::LOOP))).rfind("is an empty RANGE", 0) == 0);
  CHECK(why(a.make(Ops::RANGE, DType::weakint, {literal(a, 1)}, Arg::tuple_of(0, AxisType::LOOP))).empty());
  CHECK(why(a.make(Ops::RANGE, DType::float32, {literal(a, 4)}, Arg::tuple_of(0, AxisType::LOOP))) ==
        "is a RANGE whose dtype is not an integer");
  CHECK(why(a.make(Ops::SPECIAL, DType::float16, {literal(a, 4)}, Arg::string("gidx0"))) == "is a SPECIAL whose dtype is not an integer");
  // wrong dtype for an op
  CHECK(why(a.make(Ops::CMPLT, DType::int32, {i, i})) == "is a comparison but its dtype is not bool");
  CHECK(why(a.make(Ops::ADD, DType::float32, {const_(a, DType::int32, Arg(1)), f})) ==
        "has a source whose dtype is incompatible with its own");
  CHECK(why(a.make(Ops::AND, DType::float32, {f, f})) == "is a bit operation on a float");
  CHECK(why(a.make(Ops::WHERE, DType::float32, {i, f, f})) == "is a WHERE whose condition is not bool");
  CHECK(why(a.make(Ops::CAST, DType::int32, {f}, Arg::dtype(DType::int64))) == "has an arg that is not its own dtype");
  CHECK(why(a.make(Ops::STORE, DType::float32, {index(buf, i), f})) == "is a STORE whose dtype is not void");
  CHECK(why(a.make(Ops::ADD, DType::float32, {f})) == "has 1 sources, which ADD never has");
  CHECK(why(a.make(Ops::REDUCE, DType::float32, {f, i}, Arg::tuple_of(Ops::SUB, 0))) ==
        "is a REDUCE whose arg is not (ADD|MUL|MAX, n_horizontal)");
  // found by mutating corpus ASTs: the dtype was dropped silently, the reduction compiled as float
  CHECK(why(a.make(Ops::REDUCE, DType::int64, {f, i}, Arg::tuple_of(Ops::ADD, 0))) ==
        "is a REDUCE whose value's dtype differs from its own");
  CHECK(why(a.make(Ops::REDUCE, DType::weakint, {i, i}, Arg::tuple_of(Ops::ADD, 0))).empty());
  // a float4 store into an int buffer rendered as a store through a float4 pointer: the bits, not the value
  CHECK(why(a.make(Ops::STORE, DType::void_, {index(buf, i), const_(a, DType::int32, Arg(1))})) ==
        "stores a value whose dtype differs from the memory's");
  CHECK(why(a.make(Ops::STORE, DType::void_, {index(buf, i), literal(a, 1.0)})).empty());
  CHECK(why(a.make(Ops::LOAD, DType::int32, {index(buf, i)})) == "loads a dtype that differs from the memory's");
  CHECK(why(a.make(Ops::INDEX, DType::float32, {buf, f})) == "has an index that is not an integer");
  // found by tests/fuzz/fuzz_pipeline.cpp: both reached the decompositions, which cannot lower them
  CHECK(why(a.make(Ops::INDEX, DType::int32, {buf, i})) == "indexes a buffer whose element dtype differs from its own");
  CHECK(why(a.make(Ops::MUL, DType::weakint, {i, const_(a, DType::fp8e4m3, Arg(2.0))})) ==
        "has a source whose dtype is incompatible with its own");
  CHECK(why(a.make(Ops::MUL, DType::weakint, {i, const_(a, DType::int32, Arg(2))})).empty());
  CHECK(why(a.make(Ops::INDEX, DType::float32, {buf, param(a, 1, DType::int32, 16)})) ==
        "has an index that is a buffer, not a value");
  CHECK(why(a.make(Ops::INDEX, DType::float32, {buf, index(param(a, 1, DType::int32, 16), i)})).empty());  // a gather
  CHECK(why(a.make(Ops::PARAM, DType::float32, {literal(a, -7)}, [] {
          ParamArg p;
          p.slot = 3;
          p.dtype = DType::float32;
          return p.to_arg();
        }())) == "has a negative size");
  for (Ops op : {Ops::FLOORDIV, Ops::FLOORMOD, Ops::CDIV, Ops::CMOD})
    CHECK(why(a.make(op, DType::float32, {f, f})) == "is an integer division or modulo whose dtype is not an integer");
  CHECK(why(a.make(Ops::FLOORMOD, DType::int32, {const_(a, DType::int32, Arg(7)), literal(a, 3)})).empty());
  CHECK(why(a.make(Ops::ADD, DType::float32, {stack(f, f), stack(f, f, f)})).find("ill-formed shape") != std::string::npos);
  // launch dimensions are one size for the whole kernel: a LOCAL range sized by a GLOBAL one
  // rendered as `int lidx0 = get_local_id(0); /* gidx0 */`; so are UPCAST/UNROLL lanes. A serial
  // loop may vary (a triangular or ragged loop)
  UOp g = range(a, 16, 0, AxisType::GLOBAL);
  for (AxisType t : {AxisType::LOCAL, AxisType::GLOBAL, AxisType::GROUP_REDUCE, AxisType::WARP, AxisType::THREAD})
    CHECK(why(a.make(Ops::RANGE, DType::weakint, {g + 1}, Arg::tuple_of(1, t))) ==
          "is a launch-dimension RANGE (GLOBAL, LOCAL, WARP, THREAD or GROUP_REDUCE) whose size varies inside the kernel (it depends on a RANGE or SPECIAL)");
  ParamArg var;  // a Variable: a PARAM with bounds
  var.slot = 7;
  var.dtype = DType::weakint;
  var.addrspace = AddrSpace::ALU;
  var.vmin_vmax = std::pair<std::int64_t, std::int64_t>{1, 64};
  var.has_name = true;
  var.name = "n";
  UOp n = a.make(Ops::PARAM, DType::weakint, {}, var.to_arg());
  CHECK(why(a.make(Ops::RANGE, DType::weakint, {n * 2}, Arg::tuple_of(1, AxisType::GLOBAL))).empty());  // a variable's size
  // tinygrad's Variable carries the shape of a scalar, an empty STACK (void): found by a LLaMA decode step whose
  // start_pos is a Variable (tools/model_differential.py), whose kernels the verifier refused as input
  CHECK(why(a.make(Ops::PARAM, DType::weakint, {a.make(Ops::STACK, DType::void_, {})}, var.to_arg())).empty());
  for (AxisType t : {AxisType::LOOP, AxisType::REDUCE, AxisType::WEAK})
    CHECK(why(a.make(Ops::RANGE, DType::weakint, {g + 1}, Arg::tuple_of(1, t))).empty());
  for (AxisType t : {AxisType::UPCAST, AxisType::UNROLL})
    CHECK(why(a.make(Ops::RANGE, DType::weakint, {g + 1}, Arg::tuple_of(1, t))) ==
          "is an UPCAST/UNROLL RANGE whose size varies inside the kernel (it depends on a RANGE or SPECIAL): its lanes need one size");
  CHECK(why(a.make(Ops::SPECIAL, DType::weakint, {a.make(Ops::SPECIAL, DType::weakint, {literal(a, 4)}, Arg::string("gidx0"))},
                   Arg::string("lidx0"))) == "is a SPECIAL whose size varies inside the kernel (it depends on a RANGE or SPECIAL)");
  // weak literals and Invalid are compatible with strong dtypes
  CHECK(why(a.make(Ops::ADD, DType::float32, {f, literal(a, 1.0)})).empty());
  CHECK(why(valid(i, i < 4)).empty());
}

TEST_CASE("linear programs report the instruction index") {
  Arena a;
  UOp f = const_(a, DType::float32, Arg(1.0));
  std::vector<UOp> prog{f, a.make(Ops::LOAD, DType::float32, {f})};
  CHECK_THROWS_WITH_AS(verify(std::span<const UOp>(prog), "linear"),
                       doctest::Contains("linear: instruction 1, node 1 (LOAD float)"), uopcg::error);
}

TEST_CASE("a kernel's ranges are in scope: closed by the END, REDUCE or STAGE around their uses") {
  Arena a;
  UOp out = param(a, 0, DType::float32, 64), in = param(a, 1, DType::float32, 64);
  UOp i = range(a, 8, 0, AxisType::WEAK), k = range(a, 8, 1, AxisType::REDUCE);
  UOp sum = reduce(index(in, i * 8 + k), Ops::ADD, k);
  // well-formed: k lives inside the REDUCE, i under the END
  CHECK(check_scopes(sink(end(store(index(out, i), sum), i))).str().empty());
  CHECK_NOTHROW(verify_kernel(sink(end(store(index(out, i), sum), i))));
  // the REDUCE's range reused in the index of the store of its result: named, with the store
  UOp bad_store = store(index(out, i * 8 + k), sum);
  const std::string why_k = check_scopes(sink(end(bad_store, i))).str();
  CHECK(why_k.find(a.describe(k.id()).str() + " is used outside the END, REDUCE or STAGE that closes it") == 0);
  CHECK(why_k.find("by " + a.describe(bad_store.id()).str()) != std::string::npos);
  const std::string expected = "pipeline input: " + a.describe(k.id()).str();
  CHECK_THROWS_WITH_AS(verify_kernel(sink(end(bad_store, i)), "pipeline input"), doctest::Contains(expected.c_str()), uopcg::error);
  // an output range the END does not list
  UOp j = range(a, 8, 2, AxisType::WEAK);
  UOp st = store(index(out, i * 8 + j), index(in, i * 8 + j));
  CHECK(check_scopes(sink(end(st, i))).str().find(a.describe(j.id()).str()) == 0);
  CHECK(check_scopes(sink(end(st, i, j))).str().empty());
  // a range closed by an END of an index expression that holds it (what split ends build)
  CHECK(check_scopes(sink(end(st, i * 8 + j))).str().empty());
  // plain verify() checks nodes only: graphs after reduce lowering keep accumulators outside loops
  CHECK_NOTHROW(verify(sink(end(bad_store, i))));
}

TEST_CASE("a kernel's ranges are in scope: an AFTER ends what its dependencies end") {
  // tinygrad's `set` without `end`: a REG store in loop t that only another store's END(t) encloses
  // (a stack written at the stack pointer's old value), read after that END. The read's AFTER ends
  // t as tinygrad's ended_ranges does; without the dependency on the END, t stays open
  Arena a;
  UOp out = param(a, 0, DType::float32, 4), in = param(a, 1, DType::float32, 32);
  UOp stk = buffer(a, 0, DType::float32, 8, AddrSpace::REG), sp = buffer(a, 1, DType::int32, 1, AddrSpace::REG);
  UOp g = range(a, 4, 0, AxisType::GLOBAL), t = range(a, 8, 1, AxisType::LOOP);
  UOp sp_in = after(sp, t), top = cast(index(sp_in, literal(a, 0)), DType::weakint);
  UOp st_k = store(index(stk, top), index(in, g * 8 + t));
  UOp stk_w = after(stk, st_k);
  UOp st_p = store(index(sp, literal(a, 0)), index(after(sp, t, stk_w), literal(a, 0)) + 1);
  UOp loop = end(st_p, t);
  UOp read_ok = index(after(stk_w, after(sp, loop)), literal(a, 0));
  CHECK(check_scopes(sink(end(store(index(out, g), read_ok), g))).str().empty());
  UOp read_bad = index(stk_w, literal(a, 0));
  CHECK(check_scopes(sink(end(group(store(index(out, g), read_bad), loop), g))).str().find(a.describe(t.id()).str()) == 0);
}
