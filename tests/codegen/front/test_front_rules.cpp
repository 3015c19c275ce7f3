// The front stages' rules on hand-built kernels: the public corpus never changes the graph in stages
// a-d, so these kernels do (an in-kernel UNSHARD, movement ops on buffers, one-hot gathers and masked
// sums, `r % c`, gated indices, reduce ranges that merge). Every expected graph is what tinygrad
// 0.14.0 gives for the same kernel built with its UOp API (full_rewrite_to_sink, each stage's
// graph_rewrite recorded), written here with the builder.
#include <doctest/doctest.h>

#include <string>
#include <uopcg/codegen/front_stages.hpp>
#include <uopcg/core/builder.hpp>
#include <uopcg/core/print.hpp>

using namespace uopcg;
namespace C = uopcg::codegen;

namespace {

constexpr DType f32 = DType::float32;
const Target target = Target::pocl();

/// The message of the uopcg::error `f` raises ("" when it raises none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const uopcg::error& e) {
    return e.what();
  }
  return "";
}

/// CHECK that two graphs are the same node, printing both when they are not.
void check_same(UOp got, UOp expected) {
  INFO("got:\n" << graph_to_string(got) << "expected:\n" << graph_to_string(expected));
  CHECK(got == expected);
}

UOp unshard(UOp x, std::int64_t axis, UOp rng) { return x.arena().make(Ops::UNSHARD, x.dtype(), {x, rng}, Arg::tuple_of(axis)); }
UOp shape_of(Arena& a, std::vector<std::int64_t> s) { return symbolic::mops::shape_node(a, s); }
UOp view(Ops op, UOp x, UOp shape) { return x.arena().make(op, x.dtype(), {x, shape}); }
UOp permuted(UOp x, std::int64_t p0, std::int64_t p1) { return x.arena().make(Ops::PERMUTE, x.dtype(), {x}, Arg::tuple_of(p0, p1)); }
UOp split_range(Arena& a, std::int64_t size, std::vector<Arg> arg) { return a.make(Ops::RANGE, DType::weakint, {literal(a, size)}, Arg::tuple(std::move(arg))); }

}  // namespace

// --- a: multi_pm ---------------------------------------------------------------------------------

namespace {
/// Thread l of 16 owns the part [l*4, l*4+4) of a 64-element tile kept in its REG fragment.
struct Fragment {
  Arena a;
  UOp out = param(a, 0, f32, 64), inp = param(a, 1, f32, 64);
  UOp l = range(a, 16, 0, AxisType::LOCAL), j = range(a, 4, 1, AxisType::LOOP);
  UOp frag = buffer(a, 0, f32, 4, AddrSpace::REG);
  UOp tile = unshard(frag, 0, l);
  /// out[l*4+j] = value, in the loops over j and l.
  UOp kernel(UOp value) { return sink(end(end(store(index(out, l * 4 + j), value), j), l)); }
};
}  // namespace

TEST_CASE("multi_pm: an INDEX of a tile reads the owner's fragment (contiguous and strided ownership)") {
  Fragment k;
  Arena& a = k.a;
  // the tile written in one loop and read back after it: AFTER moves to the fragment too
  UOp j2 = range(a, 4, 2, AxisType::LOOP);
  auto two_loops = [&](UOp dst, UOp w_idx, UOp r_idx) {
    UOp w = end(store(index(dst, w_idx), index(k.inp, k.l * 4 + k.j) * 2.0), k.j);
    return sink(end(end(store(index(k.out, k.l * 4 + j2), index(after(dst, w), r_idx) + 1.0), j2), k.l));
  };
  UOp ast = two_loops(k.tile, k.l * 4 + k.j, k.l * 4 + j2);
  // (the write to the fragment indexes it by j, the read by j2)
  UOp w = end(store(index(k.frag, k.j), index(k.inp, k.l * 4 + k.j) * 2.0), k.j);
  UOp expected = sink(end(end(store(index(k.out, k.l * 4 + j2), index(after(k.frag, w), j2) + 1.0), j2), k.l));
  check_same(C::multi_pm(ast, target), expected);

  // strided: thread l owns l, l+4, l+8, l+12 (tinygrad's index_multi: idx = rng + k*part)
  check_same(C::multi_pm(k.kernel(index(k.tile, k.l + k.j * 4) * 3.0), target), k.kernel(index(k.frag, k.j) * 3.0));
}

TEST_CASE("multi_pm: ALU, CAST and BITCAST of tiles, and a STORE into a tile, work on the fragments") {
  Fragment k;
  UOp other = buffer(k.a, 1, f32, 4, AddrSpace::REG);
  UOp tile_b = unshard(other, 0, k.l);
  UOp value = cast(cast(k.tile * tile_b + 2.0, DType::float16), f32);
  UOp part = cast(cast(k.frag * other + 2.0, DType::float16), f32);
  check_same(C::multi_pm(k.kernel(index(value, k.l * 4 + k.j)), target), k.kernel(index(part, k.j)));
  UOp ints = buffer(k.a, 2, DType::int32, 4, AddrSpace::REG);
  check_same(C::multi_pm(k.kernel(index(bitcast(unshard(ints, 0, k.l), f32), k.l * 4 + k.j)), target),
             k.kernel(index(bitcast(ints, f32), k.j)));
  // a scalar stored into the whole tile is stored into each fragment
  check_same(C::multi_pm(sink(end(store(k.tile, literal(k.a, 0.0)), k.l)), target), sink(end(store(k.frag, literal(k.a, 0.0)), k.l)));
}

TEST_CASE("multi_pm: movement ops of a tile apply to the fragment, and early movement ops fold them") {
  Arena a;
  UOp out = param(a, 0, f32, 128);
  UOp l = range(a, 16, 0, AxisType::LOCAL), i = range(a, 4, 1, AxisType::LOOP), j = range(a, 2, 2, AxisType::LOOP);
  UOp frag = buffer(a, 0, f32, 8, AddrSpace::REG);
  auto kernel = [&](UOp value) { return sink(end(end(store(index(out, l * 8 + i * 2 + j), value), i, j), l)); };
  const UOp frag42 = symbolic::mops::reshape(frag, std::vector<std::int64_t>{4, 2});

  // RESHAPE (128,) -> (64, 2): the sharded axis stays axis 0, the part becomes (4, 2)
  UOp reshaped = view(Ops::RESHAPE, unshard(frag, 0, l), shape_of(a, {64, 2}));
  check_same(C::multi_pm(kernel(index(reshaped, l * 4 + i, j)), target), kernel(index(frag42, i, j)));

  // PERMUTE of a (64, 2) tile sharded on axis 0: the part permuted, the sharded axis now 1
  UOp perm = permuted(unshard(frag42, 0, l), 1, 0);
  UOp ast = kernel(index(perm, j, l * 4 + i));
  check_same(C::multi_pm(ast, target), kernel(index(permuted(frag42, 1, 0), j, i)));
  // the whole front: the PERMUTE and RESHAPE fold into the fragment's index
  C::FrontOptions o;
  o.stop_after = "early movement ops";
  check_same(C::run_front(ast, target, o).sink, kernel(index(frag, i * 2 + j)));
}

TEST_CASE("multi_pm: a SHRINK to the owner's part resolves the tile; EXPAND keeps it sharded") {
  Fragment k;
  Arena& a = k.a;
  UOp own = a.make(Ops::SHRINK, f32, {k.tile, k.l * 4, literal(a, 4)});
  UOp shrunk_frag = a.make(Ops::SHRINK, f32, {k.frag, literal(a, 0), literal(a, 4)});
  check_same(C::multi_pm(k.kernel(index(own, k.j)), target), k.kernel(index(shrunk_frag, k.j)));
  // ... and early movement ops reads the fragment directly
  check_same(C::early_movement_ops(k.kernel(index(shrunk_frag, k.j)), target), k.kernel(index(k.frag, k.j)));

  UOp out = param(a, 0, f32, 192), rk = range(a, 3, 2, AxisType::LOOP);
  auto kernel3 = [&](UOp value) { return sink(end(end(store(index(out, rk * 64 + k.l * 4 + k.j), value), rk, k.j), k.l)); };
  UOp expanded = view(Ops::EXPAND, k.tile, literal(a, 3));  // (3, 64), sharded on axis 1
  check_same(C::multi_pm(kernel3(index(expanded, rk, k.l * 4 + k.j)), target),
             kernel3(index(view(Ops::EXPAND, k.frag, literal(a, 3)), rk, k.j)));

  // STACK of two tiles (2, 64): a STACK of the fragments, sharded one axis further
  UOp other = buffer(a, 1, f32, 4, AddrSpace::REG);
  UOp rc = range(a, 2, 2, AxisType::LOOP);
  auto kernel2 = [&](UOp value) { return sink(end(end(store(index(out, rc * 64 + k.l * 4 + k.j), value), rc, k.j), k.l)); };
  check_same(C::multi_pm(kernel2(index(stack(k.tile, unshard(other, 0, k.l)), rc, k.l * 4 + k.j)), target),
             kernel2(index(stack(k.frag, other), rc, k.j)));
}

TEST_CASE("multi_pm: a kernel without UNSHARD is unchanged; what needs devices is an error naming the node") {
  Fragment k;
  Arena& a = k.a;
  UOp plain = k.kernel(index(k.inp, k.l * 4 + k.j));
  CHECK(C::multi_pm(plain, target) == plain);

  auto fails_with = [&](UOp ast, std::string_view what) {
    const std::string msg = error_of([&] { (void)C::multi_pm(ast, target); });
    INFO(msg);
    CHECK(msg.rfind("multi_pm: node ", 0) == 0);
    CHECK(msg.find(what) != std::string::npos);
  };
  // an index the thread does not own (every thread reads j)
  fails_with(k.kernel(index(k.tile, k.j)), "(INDEX float): an index on a sharded axis that is neither");
  // two tiles sharded over different ranges
  UOp l2 = range(a, 16, 5, AxisType::LOCAL);
  fails_with(k.kernel(index(k.tile + unshard(buffer(a, 1, f32, 4, AddrSpace::REG), 0, l2), k.l * 4 + k.j)),
             "(ADD float): its sources are sharded differently");
  // a tile and a whole unsharded tile of the same shape
  fails_with(k.kernel(index(k.tile + k.inp, k.l * 4 + k.j)), "(ADD float): mixes a tile with an unsharded value");
  // a PAD of a tile; a tensor-level REDUCE of it; a PARAM sharded over devices
  UOp padded = a.make(Ops::PAD, f32, {k.tile, literal(a, 1), literal(a, 1)});
  fails_with(k.kernel(index(padded, k.l * 4 + k.j)), "(PAD float): a PAD of a tile");
  UOp reduced = a.make(Ops::REDUCE, f32, {k.tile}, Arg::tuple_of(Ops::ADD, 1));
  fails_with(k.kernel(reduced), "(REDUCE float): needs more than one device");
  ParamArg sharded = ParamArg::from(k.inp.arg());
  sharded.axis = 0;
  UOp p = a.make(Ops::PARAM, f32, {literal(a, 64)}, sharded.to_arg());
  fails_with(k.kernel(index(p, k.l * 4 + k.j)), "(PARAM float): a PARAM sharded over devices");
  // an UNSHARD no rule moves (into a CUSTOM op) is reported after the rewrite
  UOp custom = a.make(Ops::CUSTOM, f32, {k.tile}, Arg::string("f({0})"));
  fails_with(k.kernel(custom), "(UNSHARD float): an UNSHARD that no rule resolves");
}

// --- b: early movement ops -----------------------------------------------------------------------

TEST_CASE("early movement ops: INDEX through RESHAPE, PERMUTE, FLIP, SHRINK and EXPAND views of buffers") {
  Arena a;
  UOp r0 = range(a, 4, 0, AxisType::WEAK), r1 = range(a, 16, 1, AxisType::WEAK);
  UOp p0 = param(a, 0, f32, 64), p2 = param(a, 2, f32, 64);
  // out.reshape(4, 16)[r0, r1] = b.reshape(16, 4).permute(1, 0)[r0, r1] * 2
  UOp out_view = view(Ops::RESHAPE, p0, shape_of(a, {4, 16}));
  UOp b_view = permuted(view(Ops::RESHAPE, p2, shape_of(a, {16, 4})), 1, 0);
  UOp ast = sink(end(store(index(out_view, r0, r1), index(b_view, r0, r1) * 2.0), r0, r1));
  UOp expected = sink(end(store(index(p0, r0 * 16 + r1), index(p2, r1 * 4 + r0) * 2.0), r0, r1));
  check_same(C::early_movement_ops(ast, target), expected);

  // out[i] = x.flip(0)[i] + y.shrink((4, 12))[i]: 7 - i and i + 4
  UOp i = range(a, 8, 0, AxisType::WEAK);
  UOp o8 = param(a, 0, f32, 8), x8 = param(a, 1, f32, 8), y16 = param(a, 2, f32, 16);
  UOp flipped = a.make(Ops::FLIP, f32, {x8}, Arg::tuple_of(Arg::boolean(true)));
  UOp shrunk = a.make(Ops::SHRINK, f32, {y16, literal(a, 4), literal(a, 8)});
  check_same(C::early_movement_ops(sink(end(store(index(o8, i), index(flipped, i) + index(shrunk, i)), i)), target),
             sink(end(store(index(o8, i), index(x8, 7 - i) + index(y16, i + 4)), i)));

  // out.reshape(4, 8)[i, j] = x.reshape(1, 8).expand(4, 8)[i, j] (tinygrad's form: back to (8,), then
  // EXPAND prepends the axis of 4)
  UOp ri = range(a, 4, 0, AxisType::WEAK), rj = range(a, 8, 1, AxisType::WEAK);
  UOp o32 = param(a, 0, f32, 32);
  UOp bcast = view(Ops::EXPAND, view(Ops::RESHAPE, view(Ops::RESHAPE, x8, shape_of(a, {1, 8})), literal(a, 8)), literal(a, 4));
  UOp eo = view(Ops::RESHAPE, o32, shape_of(a, {4, 8}));
  check_same(C::early_movement_ops(sink(end(store(index(eo, ri, rj), index(bcast, ri, rj)), ri, rj)), target),
             sink(end(store(index(o32, ri * 8 + rj), index(x8, rj)), ri, rj)));
}

TEST_CASE("early movement ops then split ranges: a transposing RESHAPE becomes two ranges") {
  Arena a;
  UOp k = range(a, 64, 0, AxisType::WEAK);
  UOp o = param(a, 0, f32, 64), b = param(a, 2, f32, 64);
  // out[k] = b.reshape(16, 4).permute(1, 0).reshape(64)[k] + 1
  UOp b_view = view(Ops::RESHAPE, permuted(view(Ops::RESHAPE, b, shape_of(a, {16, 4})), 1, 0), literal(a, 64));
  UOp ast = sink(end(store(index(o, k), index(b_view, k) + 1.0), k));
  C::FrontOptions opt;
  opt.stop_after = "early movement ops";
  check_same(C::run_front(ast, target, opt).sink, sink(end(store(index(o, k), index(b, (k % 16) * 4 + k / 16) + 1.0), k)));
  // k % 16 splits k: hi (size 4) * 16 + lo (size 16); the FLOORDIV and FLOORMOD fold away
  UOp hi = split_range(a, 4, {Arg(0), Arg(0), Arg(AxisType::WEAK)}), lo = split_range(a, 16, {Arg(0), Arg(1), Arg(AxisType::WEAK)});
  check_same(C::run_front(ast, target).sink, sink(end(store(index(o, hi * 16 + lo), index(b, lo * 4 + hi) + 1.0), hi, lo)));
}

// --- c: load collapse ----------------------------------------------------------------------------

namespace {
/// out[i] = sum over r < 16 of body(i, r): idx, val and mask are per-i loads, tab[r] a table read.
struct Gather {
  Arena a;
  UOp out = param(a, 0, f32, 4), tab = param(a, 1, f32, 16), idx = param(a, 2, DType::int32, 4);
  UOp val = param(a, 3, f32, 4), mask = param(a, 4, DType::bool_, 4);
  UOp i = range(a, 4, 0, AxisType::WEAK), r = range(a, 16, 1, AxisType::REDUCE);
  UOp ix = index(idx, i), iw = cast(index(idx, i), DType::weakint), t = index(tab, r), v = index(val, i), m = index(mask, i);
  UOp zero = literal(a, 0.0);
  UOp kernel(UOp value) { return sink(end(store(index(out, i), value), i)); }
  UOp reduced(UOp body) { return kernel(reduce(body, Ops::ADD, r)); }
  /// tab[x] where 0 <= x < 16, else 0: what a one-hot gather of x collapses to (tinygrad's v.where)
  UOp gathered(UOp x, UOp lo_ok, UOp hi_ok, std::optional<UOp> scale = std::nullopt) {
    UOp ok = logical_not(lo_ok) & hi_ok;
    UOp g = index(tab, valid(x, ok));
    return where(ok, scale ? g * *scale : g, zero);
  }
  /// min(x, 16) as tinygrad builds it for integers, ~max(~x, ~16), folded
  UOp min16(UOp x) { return ~maximum(~x, literal(a, -17)); }
  UOp count_times_v(UOp count) { return cast(maximum(count, literal(a, 0)), f32) * v; }
};
}  // namespace

TEST_CASE("load collapse: a one-hot gather becomes a gated read of the table") {
  Gather g;
  // sum_r (idx != r ? 0 : tab[r]), the comparison on int (the scheduler's form) or on weakint
  UOp expected = g.kernel(g.gathered(g.iw, g.iw < 0, g.iw < 16));
  check_same(C::load_collapse(g.reduced(where(ne(g.ix, cast(g.r, DType::int32)), g.zero, g.t)), target), expected);
  check_same(C::load_collapse(g.reduced(where(ne(g.iw, g.r), g.zero, g.t * 2.0)), target),
             g.kernel(g.gathered(g.iw, g.iw < 0, g.iw < 16, literal(g.a, 2.0))));
  // the mask written as a multiplication by a casted bool
  check_same(C::load_collapse(g.reduced(g.t * cast(eq(g.iw, g.r), f32)), target), expected);
  // idx - 1 == r: the addition moves to the index (and the bounds shift by one)
  check_same(C::load_collapse(g.reduced(where(ne(g.r + 1, g.iw), g.zero, g.t)), target),
             g.kernel(g.gathered(g.iw - 1, g.iw < 1, g.iw < 17)));
  // the scheduler's gather: a negative index counts from the end
  UOp wrapped = where(g.ix < 0, g.ix + 16, g.ix);
  UOp ww = cast(wrapped, DType::weakint);
  check_same(C::load_collapse(g.reduced(where(ne(wrapped, cast(g.r, DType::int32)), g.zero, g.t)), target),
             g.kernel(g.gathered(ww, ww < 0, ww < 16)));
}

TEST_CASE("load collapse: masked sums over r become counts, gates and sums split") {
  Gather g;
  Arena& a = g.a;
  // sum_r (r < idx ? val : 0) = clamp(min(idx, 16), 0) * val
  check_same(C::load_collapse(g.reduced(where(g.r < g.iw, g.v, g.zero)), target), g.kernel(g.count_times_v(g.min16(g.iw))));
  // r >= idx: 16 - max(idx, 0); idx <= r < idx+5: min(idx+5, 16) - max(idx, 0)
  UOp from_lower = -maximum(g.iw, literal(a, 0));
  check_same(C::load_collapse(g.reduced(where(g.r < g.iw, g.zero, g.v)), target), g.kernel(g.count_times_v(from_lower + 16)));
  UOp between = logical_not(g.r < g.iw) & (g.r < g.iw + 5);
  check_same(C::load_collapse(g.reduced(where(between, g.v, g.zero)), target),
             g.kernel(g.count_times_v(from_lower + g.min16(g.iw + 5))));
  // r + 3 < idx and r * 2 < idx: the arithmetic moves to the bound
  check_same(C::load_collapse(g.reduced(where(g.r + 3 < g.iw, g.v, g.zero)), target), g.kernel(g.count_times_v(g.min16(g.iw - 3))));
  check_same(C::load_collapse(g.reduced(where(g.r * 2 < g.iw, g.v, g.zero)), target),
             g.kernel(g.count_times_v(g.min16((g.iw + 1) / 2))));
  // a loaded bool AND the range's bound: the bool leaves the sum as a WHERE
  check_same(C::load_collapse(g.reduced(where(g.m & (g.r < g.iw), g.v, g.zero)), target),
             g.kernel(where(g.m, g.count_times_v(g.min16(g.iw)), g.zero)));
  // a sum of a gather and a masked constant-bound sum: each collapses (3 folds to a float CONST)
  UOp three = a.make(Ops::MUL, f32, {const_(a, f32, Arg::floating(3.0)), g.v});
  check_same(C::load_collapse(g.reduced(where(ne(g.iw, g.r), g.zero, g.t) + where(g.r < 3, g.v, g.zero)), target),
             g.kernel(g.gathered(g.iw, g.iw < 0, g.iw < 16) + three));
  // a value gated by a loaded bool with Invalid: the gate moves outside the sum
  check_same(C::load_collapse(g.reduced(valid(where(ne(g.iw, g.r), g.zero, g.t), g.m)), target),
             g.kernel(valid(g.gathered(g.iw, g.iw < 0, g.iw < 16), g.m)));
}

TEST_CASE("load collapse: a bool input the collapse lifts keeps its known value") {
  // sum over r of tab[r] where !(0 < 1) & r < 15, else Invalid: the range-free `!(0 < 1)` becomes a
  // bool variable bounded [false, false], so the gate is false for every r and the sum collapses
  // (ast_fuzz seed 63, 013: tinygrad's load collapse drops this REDUCE; uopcg read only int bounds)
  Gather g;
  Arena& a = g.a;
  UOp never = logical_not(literal(a, 0) < literal(a, 1));
  UOp got = C::load_collapse(g.reduced(index(g.tab, valid(g.r, never & (g.r < 15)))), target);
  INFO(print_graph(got).view());
  for (UOp u : toposort(got)) CHECK(u.op() != Ops::REDUCE);
}

TEST_CASE("load collapse: a reduce that keeps depending on its range is left alone") {
  Gather g;
  // a dot product, and a gather under a gate that is not Invalid (no rule lifts where(m, ., 0))
  for (UOp ast : {g.reduced(g.t * g.v), g.reduced(where(g.m, where(ne(g.iw, g.r), g.zero, g.t), g.zero))}) {
    CHECK(C::load_collapse(ast, target) == ast);
  }
}

// --- d: split ranges -----------------------------------------------------------------------------

TEST_CASE("split ranges: r % c splits r into (id, 0) * c + (id, 1)") {
  Arena a;
  UOp out = param(a, 0, f32, 64), pa = param(a, 1, f32, 64), pb = param(a, 2, f32, 64);
  UOp r = range(a, 64, 0, AxisType::WEAK);
  auto R = [&](std::int64_t size, std::vector<Arg> arg) { return split_range(a, size, std::move(arg)); };
  const Arg W(AxisType::WEAK), RED(AxisType::REDUCE);
  // out[r] = a[r] + b[(r%4)*16 + r//4] (a transposing view)
  UOp ast = sink(end(store(index(out, r), index(pa, r) + index(pb, (r % 4) * 16 + r / 4)), r));
  UOp hi = R(16, {Arg(0), Arg(0), W}), lo = R(4, {Arg(0), Arg(1), W});
  check_same(C::split_ranges(ast, target),
             sink(end(store(index(out, hi * 4 + lo), index(pa, hi * 4 + lo) + index(pb, lo * 16 + hi)), hi, lo)));

  // r % 8 and r % 4: the first divisor seen splits r; (hi*8+lo) % 4 = lo % 4 splits lo again
  ast = sink(end(store(index(out, r), index(pa, r % 8) + index(pb, r % 4)), r));
  UOp h = R(8, {Arg(0), Arg(0), Arg(0), W}), m = R(2, {Arg(0), Arg(0), Arg(1), W}), l = R(4, {Arg(0), Arg(1), W});
  check_same(C::split_ranges(ast, target),
             sink(end(store(index(out, (h * 2 + m) * 4 + l), index(pa, m * 4 + l) + index(pb, l)), h, m, l)));

  // a reduce range: the REDUCE lists both parts
  UOp o1 = param(a, 0, f32, 1), rr = range(a, 64, 0, AxisType::REDUCE);
  ast = sink(store(index(o1, literal(a, 0)), reduce(index(pa, rr % 16) * index(pb, rr), Ops::ADD, rr)));
  UOp rh = R(4, {Arg(0), Arg(0), RED}), rl = R(16, {Arg(0), Arg(1), RED});
  check_same(C::split_ranges(ast, target),
             sink(store(index(o1, literal(a, 0)), reduce(index(pa, rl) * index(pb, rh * 16 + rl), Ops::ADD, rh, rl))));

  // a divisor that does not divide the size, and a range of a type that is never split
  UOp r60 = range(a, 60, 0, AxisType::WEAK);
  UOp nodiv = sink(end(store(index(out, r60), index(pa, r60 % 8)), r60));
  CHECK(C::split_ranges(nodiv, target) == nodiv);
  UOp warp = range(a, 64, 0, AxisType::WARP);
  UOp warped = sink(end(store(index(out, warp), index(pa, warp % 4)), warp));
  CHECK(C::split_ranges(warped, target) == warped);

  // a divisor of 1 splits nothing, and a `% 1` that no rule folds (a bool FLOORMOD, from
  // fuzz_from_ast) was split again at every visit until memory ran out
  UOp by_one = sink(end(store(index(out, r), index(pa, r % 1)), r));
  CHECK(C::split_ranges(by_one, target) == by_one);
  UOp bool_mod = a.make(Ops::FLOORMOD, DType::bool_, {r, literal(a, 1)});
  UOp unfolded = sink(end(store(index(out, r), where(bool_mod, index(pa, r), index(pb, r))), r));
  CHECK(C::split_ranges(unfolded, target) == unfolded);

  // r % 8 for r of size 8 splits r once into a size-1 part that folds away and a renamed copy, as
  // tinygrad does; a uchar `% 8` (fuzz_from_ast) does not fold, and the copy was split again at
  // every visit until memory ran out
  UOp r8 = range(a, 8, 0, AxisType::WEAK);
  UOp uchar_mod = a.make(Ops::FLOORMOD, DType::uint8, {r8, literal(a, 8)});
  UOp by_size = sink(end(store(index(out, r8), cast(uchar_mod, f32)), r8));
  std::vector<UOp> ranges;
  for (UOp u : toposort(C::split_ranges(by_size, target)))
    if (u.op() == Ops::RANGE) ranges.push_back(u);
  REQUIRE(ranges.size() == 1);
  CHECK(ranges[0] == R(8, {Arg(0), Arg(1), W}));
}

// --- e: initial symbolic -------------------------------------------------------------------------

TEST_CASE("initial symbolic: sym in front of the opts (a CAST moves into a WHERE's branches)") {
  Arena a;
  UOp out = param(a, 0, f32, 64), in = param(a, 1, f32, 64);
  UOp r = range(a, 64, 0, AxisType::WEAK);
  UOp c = index(in, r) < 0.5;
  UOp ast = sink(end(store(index(out, r), cast(where(c, literal(a, 1.0), literal(a, 0.0)), f32) + cast(r * 1 + 0, f32)), r));
  UOp branches = where(c, const_(a, f32, Arg::floating(1.0)), const_(a, f32, Arg::floating(0.0)));
  check_same(C::initial_symbolic(ast, target), sink(end(store(index(out, r), branches + cast(r, f32)), r)));
}

// --- f: simplify ranges --------------------------------------------------------------------------

TEST_CASE("simplify ranges: a range every INDEX gates by r < c shrinks to the largest c") {
  Arena a;
  UOp out = param(a, 0, f32, 64), in = param(a, 1, f32, 64);
  UOp r = range(a, 64, 0, AxisType::WEAK);
  UOp ast = sink(end(store(index(out, valid(r, r < 60)), index(in, valid(r, r < 50)) * 2.0), r));
  UOp r60 = range(a, 60, 0, AxisType::WEAK);  // r < 60 is then always true and disappears
  check_same(C::simplify_ranges(ast, target), sink(end(store(index(out, r60), index(in, valid(r60, r60 < 50)) * 2.0), r60)));
  // one ungated use pins the full size
  UOp pinned = sink(end(store(index(out, valid(r, r < 60)), index(in, r) * 2.0), r));
  CHECK(C::simplify_ranges(pinned, target) == pinned);
}

TEST_CASE("simplify ranges: reduce ranges merge in either order; ranges of different types do not") {
  Arena a;
  UOp o1 = param(a, 0, f32, 1), in = param(a, 1, f32, 64);
  UOp r0 = range(a, 8, 0, AxisType::REDUCE), r1 = range(a, 8, 1, AxisType::REDUCE);
  UOp zero = literal(a, 0);
  // sum over r0, r1 of in[r0*8 + r1]: one range of 64 with r0's id
  UOp merged0 = range(a, 64, 0, AxisType::REDUCE), merged1 = range(a, 64, 1, AxisType::REDUCE);
  check_same(C::simplify_ranges(sink(store(index(o1, zero), reduce(index(in, r0 * 8 + r1), Ops::ADD, r0, r1))), target),
             sink(store(index(o1, zero), reduce(index(in, merged0), Ops::ADD, merged0))));
  // in[r1*8 + r0]: the REDUCE tries every ordered pair, (r1, r0) merges and keeps r1's id
  check_same(C::simplify_ranges(sink(store(index(o1, zero), reduce(index(in, r1 * 8 + r0), Ops::ADD, r0, r1))), target),
             sink(store(index(o1, zero), reduce(index(in, merged1), Ops::ADD, merged1))));
  // an END over a WEAK and a LOOP range: no merge
  UOp out = param(a, 0, f32, 64), w = range(a, 8, 0, AxisType::WEAK), lp = range(a, 8, 1, AxisType::LOOP);
  UOp mixed = sink(end(store(index(out, w * 8 + lp), index(in, w * 8 + lp)), w, lp));
  CHECK(C::simplify_ranges(mixed, target) == mixed);
}
