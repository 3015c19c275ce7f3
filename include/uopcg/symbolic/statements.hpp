// The statement and memory rules of the symbolic sets (tinygrad/uop/symbolic.py, symbolic_simple and sym): SINK/GROUP
// cleanup, AFTER dependency pruning, loads and stores folded by their address or value, constants and
// loop-invariant factors moved out of a REDUCE, the single-lane STACK reorder, and the reciprocal
// rewrites. None of them but the reciprocal family computes a value: the rule tester reports them as
// "not a value rule" (docs/symbolic.md), the corpus stage checks and tests/symbolic/test_statements.cpp
// cover them.
#pragma once

#include <optional>
#include <vector>

#include "fold.hpp"
#include "util.hpp"

namespace uopcg::symbolic {

namespace svars {
inline constexpr auto index = pat::op<Ops::INDEX>.named<"index">();
inline constexpr auto gate = pat::var<"gate">;
inline constexpr auto alt = pat::var<"alt">;
inline constexpr auto val = pat::var<"val">;
inline constexpr auto cond = pat::var<"cond">;
inline constexpr auto r = pat::var<"r">;
}  // namespace svars

namespace detail {
/// Ops whose sources are spliced into a SINK/GROUP parent.
inline constexpr OpSet sink_like{Ops::NOOP, Ops::STACK, Ops::SINK, Ops::GROUP};
/// AFTER dependencies that are side effects (kept); any other dependency is replaced by its sources.
inline constexpr OpSet after_effects{Ops::RANGE, Ops::STORE,  Ops::CALL,   Ops::FUNCTION,
                                     Ops::BARRIER, Ops::END, Ops::LINEAR, Ops::STAGE};

/// x.valid(c): x meaningful where c holds (x itself under a constant True).
constexpr UOp gated(UOp x, UOp c) {
  if (c.op() == Ops::CONST && c.arg().is_bool() && c.arg().as_bool()) return x;
  return c.arena().make(Ops::WHERE, x.dtype(), {c, x, invalid(c.arena())});
}
/// INDEX(buf, idx.valid(c)) for an INDEX(buf, idx, ...): the address gated by c.
constexpr UOp gated_index(UOp index, UOp c) {
  return index.arena().make(Ops::INDEX, index.dtype(), {index.src(0), gated(index.src(1), c)}, index.arg());
}
/// The reduce op of a REDUCE (NOOP when the arg is not a reduce arg).
constexpr Ops reduce_op(UOp r) {
  if (!r.arg().is_tuple() || r.arg().size() < 1 || r.arg()[0].kind() != ArgKind::op) return Ops::NOOP;
  return r.arg()[0].as_op();
}
constexpr UOp noop(Arena& a) { return a.make(Ops::NOOP, DType::void_, {}); }
/// What a deleted STORE leaves: the side effects its address is ordered after (an accumulator's
/// initial store, through `INDEX(AFTER(buf, init, r), i)`), so that a later read of the buffer
/// still follows them; NOOP when there are none.
constexpr UOp dropped_store(UOp st) {
  std::vector<UOp> effects;
  for (UOp x = st.src(0); x.nsrc() > 0 && x.in(OpSet{Ops::INDEX, Ops::AFTER, Ops::CAST}); x = x.src(0))
    for (std::size_t i = 1; x.op() == Ops::AFTER && i < x.nsrc(); ++i)
      if (x.src(i).op() != Ops::RANGE && after_effects.contains(x.src(i).op())) effects.push_back(x.src(i));
  if (effects.empty()) return noop(st.arena());
  return effects.size() == 1 ? effects[0] : st.arena().make(Ops::GROUP, DType::void_, effects);
}
constexpr UOp store_(UOp addr, UOp value) { return addr.arena().make(Ops::STORE, DType::void_, {addr, value}); }

/// The factors of a MUL tree, left to right.
constexpr void split_mul(UOp u, std::vector<UOp>& out) { split_tree(Ops::MUL, u, out); }
/// Product of factors, left-associated, at dtype dt.
constexpr UOp product(const std::vector<UOp>& fs, DType dt) {
  UOp r = fs[0];
  for (std::size_t i = 1; i < fs.size(); ++i) r = bin(Ops::MUL, dt, r, fs[i]);
  return r;
}
/// A CONST of u's dtype holding the integer or float v.
constexpr UOp num_like(UOp u, double f) {
  if (is_float(u.dtype())) return const_(u.arena(), u.dtype(), Arg::floating(f));
  return iconst_like(u, static_cast<i128>(f));
}

/// Whether every dependency of an AFTER is an effect and none repeats (the common case, looked at
/// before building anything); otherwise pruning changes the node.
constexpr bool deps_pruned(UOp u) {
  for (std::size_t i = 1; i < u.nsrc(); ++i) {
    if (!after_effects.contains(u.src(i).op())) return false;
    for (std::size_t j = 1; j < i; ++j)
      if (u.src(j) == u.src(i)) return false;
  }
  return true;
}

/// A MUL factor that MAX may move: integer bounds >= 0, or a finite float constant > 0 (float bounds
/// are not tracked). Rounding is monotonic, so max(x*c) == max(x)*c; c = 0 or inf is kept inside,
/// since 0*inf is NaN.
constexpr bool max_movable_factor(UOp m) {
  if (is_float(m.dtype())) return is_const(m) && !is_nan_or_inf(m) && m.arg().as_float() > 0;
  return m.vmin() >= 0;
}

/// reduce_mul_chain: factors of an ADD/MAX reduce's MUL input that depend on none of the reduce's
/// ranges are applied after the reduce (MAX only moves non-negative factors).
constexpr std::optional<UOp> reduce_mul_chain(UOp r) {
  using enum Ops;
  const Ops rop = reduce_op(r);
  if (rop != ADD && rop != MAX) return std::nullopt;
  if (r.dtype() != r.src(0).dtype()) return std::nullopt;
  std::vector<UOp> factors, inside, outside;
  split_mul(r.src(0), factors);
  for (UOp m : factors) {
    bool dependent = false;
    for (std::size_t i = 1; i < r.nsrc() && !dependent; ++i) dependent = m == r.src(i) || depends_on(m, r.src(i));
    if (!dependent && (rop != MAX || max_movable_factor(m))) outside.push_back(m);
    else inside.push_back(m);
  }
  if (outside.empty()) return std::nullopt;
  std::vector<UOp> srcs = r.srcs().to_vector();
  srcs[0] = inside.empty() ? num_like(r.src(0), 1.0) : product(inside, r.dtype());
  UOp nr = r.arena().make(REDUCE, r.dtype(), srcs, r.arg(), r.tag());
  return bin(MUL, r.dtype(), nr, product(outside, r.dtype()));
}
}  // namespace detail

/// GROUP of one source → that source; NOOP/STACK/SINK/GROUP sources of a SINK or GROUP are spliced in.
inline constexpr auto pm_clean_up_group_sink = [] {
  using namespace vars;
  using enum Ops;
  return pat::rules(
      pat::rewrite("group of one", pat::op<GROUP>(x), x),
      pat::rewrite(
          "flatten sink/group", pat::op<SINK, GROUP>,
          [](auto& m) {
            const UOp root = m.root();
            std::vector<UOp> out;
            for (UOp s : root.srcs()) {
              if (detail::sink_like.contains(s.op()))
                for (UOp t : s.srcs()) out.push_back(t);
              else
                out.push_back(s);
            }
            // rebuilt like tinygrad's UOp(root.op, src=..., arg=root.arg): void, the tag dropped
            return root.arena().make(root.op(), DType::void_, out, root.arg());
          },
          [](auto& m) {
            for (UOp s : m.root().srcs())
              if (detail::sink_like.contains(s.op())) return true;
            return false;
          }));
}();

/// AFTER keeps only side-effect dependencies (others are replaced by their sources, repeatedly);
/// AFTER or END with no dependency left is its first source.
inline constexpr auto pm_after_cleanup = [] {
  using namespace vars;
  using enum Ops;
  return pat::rules(
      pat::rewrite(
          "AFTER dependency pruning", pat::op<AFTER>,
          [](auto& m) {
            const UOp u = m.root();
            std::vector<UOp> srcs{u.src(0)};
            auto push = [&](UOp d) {
              for (std::size_t i = 1; i < srcs.size(); ++i)
                if (srcs[i] == d) return;
              srcs.push_back(d);
            };
            for (std::size_t i = 1; i < u.nsrc(); ++i) {
              const UOp d = u.src(i);
              if (detail::after_effects.contains(d.op())) {
                push(d);
              } else {
                for (UOp s : d.srcs()) push(s);
              }
            }
            return u.arena().make(AFTER, u.dtype(), srcs, u.arg(), u.tag());
          },
          [](auto& m) { return !detail::deps_pruned(m.root()); }),
      pat::rewrite("AFTER of one", pat::op<AFTER>(x), x),
      pat::rewrite("END of one", pat::op<END>(x), x));
}();

/// Loads and stores whose address is Invalid (part of pm_data_invalid in tinygrad).
inline constexpr auto pm_invalid_memory = [] {
  using namespace vars;
  using enum Ops;
  constexpr auto inv_index = pat::or_casted(pat::op<INDEX>.any_len(pat::any, inv));
  return pat::rules(
      pat::rule("store to an Invalid address", pat::op<STORE>(inv_index, pat::any), [](auto& m) { return detail::dropped_store(m.root()); }),
      pat::rule("load from an Invalid address", pat::op<LOAD>.any_len(inv_index), [](auto& m) {
        const UOp ld = m.root();
        return ld.nsrc() > 1 ? ld.src(1) : detail::num_like(ld, 0.0);
      }));
}();

/// Store folding: a store of what the address already holds, stores of Invalid, and gated stores.
inline constexpr auto sym_memory = [] {
  using namespace vars;
  using namespace svars;
  using enum Ops;
  return pat::rules(
      pat::rule("store(i, load(i))", pat::op<STORE>(index, pat::op<LOAD>(index)), [](auto& m) { return detail::dropped_store(m.root()); }),
      pat::rule("store(i, where(g, a, load(i)))", pat::op<STORE>(index, pat::where(gate, alt, pat::op<LOAD>(index))),
              [](auto& m) { return detail::store_(detail::gated_index(pat::get<"index">(m), m[gate]), m[alt]); }),
      pat::rule("store of Invalid", pat::op<STORE>(pat::any, inv), [](auto& m) { return detail::dropped_store(m.root()); }),
      pat::rule("store(i, where(c, v, Invalid))", pat::op<STORE>(index, pat::where(cond, val, inv)),
              [](auto& m) { return detail::store_(detail::gated_index(pat::get<"index">(m), m[cond]), m[val]); }));
}();

/// Constant factors and loop-invariant factors moved out of a REDUCE.
inline constexpr auto sym_reduce = [] {
  using namespace vars;
  using enum Ops;
  return pat::rules(
      pat::rewrite(
          "reduce(x*c) -> reduce(x)*c", pat::op<REDUCE>.any_len(x * c0),
          [](auto& m) {
            const UOp r = m.root();
            std::vector<UOp> srcs = r.srcs().to_vector();
            srcs[0] = m[x];
            const UOp nr = r.arena().make(REDUCE, r.dtype(), srcs, r.arg(), r.tag());
            return bin(MUL, r.dtype(), nr, as_dtype(m[c0], r.dtype()));
          },
          [](auto& m) { return detail::reduce_op(m.root()) == ADD; }),
      pat::rule("reduce_mul_chain", pat::op<REDUCE>.any_len(pat::op<MUL>), [](auto& m) { return detail::reduce_mul_chain(m.root()); }));
}();

/// `op(STACK(x), STACK(y))` of single-lane stacks → `STACK(op(x, y))`.
inline constexpr auto sym_stack_reorder = [] {
  using namespace vars;
  using enum Ops;
  return pat::rules(pat::rule("alu of single-lane stacks", pat::in<GroupOp::Binary>(pat::op<STACK>(x), pat::op<STACK>(y)), [](auto& m) {
    const UOp r = m.root();
    const UOp inner = make_node(r.arena(), r.op(), std::vector<UOp>{m[x], m[y]}, r.arg());
    return make_node(r.arena(), STACK, std::vector<UOp>{inner});
  }));
}();

namespace detail {
constexpr UOp recip(UOp u) { return u.arena().make(Ops::RECIPROCAL, u.dtype(), {u}); }
/// 1/c at dtype dt, when it is a finite number.
constexpr bool finite_reciprocal(UOp c, DType dt) {
  const value in[1] = {convert(from_arg(c.arg(), c.dtype()), dt)};
  const DType in_dt[1] = {dt};
  value v = eval_alu(Ops::RECIPROCAL, dt, in, in_dt);
  return v.is_num() && v.is_float && v.f == v.f && v.f - v.f == 0;
}
/// x holds no literal inf/NaN (the finite-math assumption covers it).
inline constexpr pat::predicate finite_x{[](auto& m) { return !holds_nonfinite_literal(m[vars::x]); }};
}  // namespace detail

/// The reciprocal of a product distributed over its factors (sym; float fast math: the results
/// differ from the original by rounding only, checked with a tolerance, docs/symbolic.md).
inline constexpr auto sym_reciprocal = [] {
  using namespace vars;
  using enum Ops;
  using detail::recip;
  constexpr auto rx = pat::unary<RECIPROCAL>(x);
  return pat::rules(
      pat::rewrite("1/(x*x)", pat::unary<RECIPROCAL>(x * x), rx * rx, detail::finite_x),
      pat::rewrite("1/(x*x*x)", pat::unary<RECIPROCAL>(x * x * x), rx * rx * rx, detail::finite_x),
      pat::rewrite(
          "1/(x*c)", pat::unary<RECIPROCAL>(x * c0),
          [](auto& m) {
            auto [x, c0] = m;
            const DType dt = m.root().dtype();
            return bin(MUL, dt, recip(x), recip(as_dtype(c0, dt)));
          },
          detail::finite_x && [](auto& m) {
            auto [x, c0] = m;
            const DType dt = m.root().dtype();
            return !is_nan_or_inf(c0) && detail::finite_reciprocal(c0, dt) && (!is_const(x) || detail::finite_reciprocal(x, dt));
          }));
}();

/// `x*(1/(1+x))` → `1 - 1/(1+x)` and its variants (sym; float fast math with cancellation: not
/// value-preserving under rounding, so exempt from the soundness tester, docs/symbolic.md).
inline constexpr auto sym_reciprocal_sums = [] {
  using namespace vars;
  using enum Ops;
  constexpr auto d = pat::unary<RECIPROCAL>(1 + x).named<"d">();
  constexpr auto one_minus_d = 1 + pat::var<"d"> * -1;
  return pat::rules(
      pat::rewrite("x*(1/(1+x))", x * d, one_minus_d, detail::finite_x),
      pat::rewrite("x*(1/(1+x)*y)", x * (d * y), y * one_minus_d, detail::finite_x),
      pat::rewrite("x*(1/(1+x)+y)", x * (d + y), one_minus_d + x * y, detail::finite_x));
}();

}  // namespace uopcg::symbolic
