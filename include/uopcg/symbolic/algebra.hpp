// Algebra (the rules `symbolic` adds to symbolic_simple): like terms, negation, distribution of
// constants over weakint sums, WHERE canonicalization and closure, range-based folding, MAX,
// associative constant chains, comparisons, constants moved outward, intermediate casts.
#pragma once

#include <limits>
#include <optional>
#include <vector>

#include "invalid.hpp"
#include "rhs.hpp"
#include "simple.hpp"
#include "util.hpp"

namespace uopcg::symbolic {

namespace detail {
/// c0 op c1 evaluated at the dtype dt (wrapping); invalid UOp when it cannot be folded.
constexpr UOp fold_consts(Ops op, DType dt, UOp c0, UOp c1) {
  value in[2] = {from_arg(c0.arg(), dt), from_arg(c1.arg(), dt)};
  DType ds[2] = {dt, dt};
  value r = eval_alu(op, dt, in, ds);
  auto arg = to_arg(r, dt);
  if (!arg || r.kind != vkind::num) return UOp();
  return const_(c0.arena(), dt, *arg);
}
/// A float value's range as tinygrad bounds it: a constant's value, a CAST of a bounded int or
/// bool, else [-inf, inf] (a NaN constant's range compares false both ways: it decides nothing).
struct float_range {
  double lo, hi;
  bool not_nan;  // provably not NaN: a non-NaN constant or a converted int
};
constexpr float_range float_bounds(UOp u) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (u.op() == Ops::CONST && u.arg().is_number()) {
    const double v = u.arg().as_float();
    return {v, v, v == v};
  }
  if (u.op() == Ops::CAST && u.nsrc() == 1) {
    UOp s = u.src(0);
    if ((is_int(s.dtype()) || is_bool(s.dtype())) && s.vmin() != INT64_MIN && s.vmax() != INT64_MAX)
      return {static_cast<double>(s.vmin()), static_cast<double>(s.vmax()), true};
  }
  return {-inf, inf, false};
}
/// Whether interval arithmetic of x (+) c stays inside x's dtype (always true for weakint).
constexpr bool add_no_wrap(UOp x, i128 c) {
  if (x.dtype() == DType::weakint) return true;
  if (!is_int(x.dtype())) return false;
  if (x.vmin() == INT64_MIN || x.vmax() == INT64_MAX) return false;
  return fits(x.dtype(), static_cast<i128>(x.vmin()) + c) && fits(x.dtype(), static_cast<i128>(x.vmax()) + c);
}
/// (x op c1) op c2 -> x op (c1 op c2) for the same op and dtype throughout. Float ADD/MUL chains
/// round differently, except a MUL by -1, which only flips a sign ((x*-1)*c = x*-c exactly), and
/// MAX = (a<b)?b:a is not associative with NaN.
constexpr std::optional<UOp> fold_chain(UOp r, UOp inner, UOp x, UOp c1, UOp c2) {
  const bool exact = !is_float(r.dtype()) || (r.op() == Ops::MUL && (c1.arg().py_equal(-1.0) || c2.arg().py_equal(-1.0)));
  if (inner.op() != r.op() || inner.dtype() != r.dtype() || x.dtype() != r.dtype() || !exact) return std::nullopt;
  const UOp k = fold_consts(r.op(), r.dtype(), c1, c2);
  if (!k) return std::nullopt;
  return r.arena().make(r.op(), r.dtype(), {x, k});
}
/// Whether u's bounds meet at one finite value it can be replaced by (an int or bool scalar; a
/// PARAM of the ALU address space, a RANGE with a constant end).
constexpr bool bounds_meet(UOp u) {
  using enum Ops;
  return (is_int(u.dtype()) || is_bool(u.dtype())) && u.vmin() == u.vmax() && u.vmin() != INT64_MIN && u.vmax() != INT64_MAX &&
         (u.op() != PARAM || u.addrspace() == AddrSpace::ALU) && (u.op() != RANGE || (u.nsrc() > 0 && u.src(0).op() == CONST)) &&
         u.shape().size() == 0;
}
/// rewrite() predicates shared by the families.
inline constexpr auto not_bool = [](auto& m) { return !is_bool(m.root().dtype()); };
inline constexpr auto y_not_const = [](auto& m) { return m[vars::y].op() != Ops::CONST; };
}  // namespace detail

/// Like terms, negation of a sum, constant distribution.
inline constexpr auto algebra_terms = [] {
  using namespace vars;
  using enum DType;
  return pat::rules(
      pat::rewrite("x|!x", xb | pat::logical_not(xb), true),
      pat::rewrite("x*c0+x*c1", xi * c0 + xi * c1, x * fold(c0 + c1), pat::root_dtype(x)),
      pat::rewrite("x+x*c", xi + xi * c0, x * fold(c0 + 1), pat::root_dtype(x)),
      pat::rewrite("x+x", x + x, x * 2, pat::root_dtype(x) && detail::not_bool),
      pat::rewrite("(y+x*c0)+x*c1", (y + xi * c0) + xi * c1, y + x * fold(c0 + c1), pat::root_dtype(x, y)),
      pat::rewrite("(y+x)+x*c", (y + xi) + xi * c0, y + x * fold(c0 + 1), pat::root_dtype(x, y)),
      pat::rewrite("(y+x*c)+x", (y + xi * c0) + xi, y + x * fold(c0 + 1), pat::root_dtype(x, y)),
      pat::rewrite("(y+x)+x", (y + xi) + xi, y + x * 2, pat::root_dtype(x, y)),
      pat::rewrite("-(x+c)", (x + c0) * pat::const_<-1>, x * -1 + fold(c0 * -1), pat::root_dtype(x) && detail::not_bool),
      pat::rewrite("c*(x+c2)", ((xw + c2) * c1).dtype<weakint>(), x * keep_dtype(c1) + fold(c1 * c2)));
}();

namespace detail {
inline constexpr auto tt = pat::var<"tt">;
inline constexpr auto ff = pat::var<"ff">;
/// The arms of where(c, t op tt, f op ff) for `op` = pair's op over two selects with one condition:
/// one side must pair two constants (it folds); the other side is built unfolded. nullopt when no
/// side is constant, an arm is Invalid, or a folding fails.
constexpr std::optional<std::pair<UOp, UOp>> paired_arms(UOp pair, UOp t, UOp tt, UOp f, UOp ff) {
  for (UOp u : {t, tt, f, ff})
    if (is_invalid(u)) return std::nullopt;
  const bool tk = is_const(t) && is_const(tt), fk = is_const(f) && is_const(ff);
  if (!tk && !fk) return std::nullopt;
  // the arms as the selects' values (a weak literal arm is converted first)
  const DType d0 = pair.src(0).dtype(), d1 = pair.src(1).dtype();
  auto arm = [](UOp u, DType d) { return u.op() == Ops::CONST || u.dtype() == d ? as_dtype(u, d) : UOp(); };
  t = arm(t, d0), f = arm(f, d0), tt = arm(tt, d1), ff = arm(ff, d1);
  if (!t || !f || !tt || !ff) return std::nullopt;
  UOp nt = pair.arena().make(pair.op(), pair.dtype(), {t, tt});
  UOp nf = pair.arena().make(pair.op(), pair.dtype(), {f, ff});
  if (tk) {
    auto k = fold_node(nt);
    if (!k) return std::nullopt;
    nt = *k;
  }
  if (fk) {
    auto k = fold_node(nf);
    if (!k) return std::nullopt;
    nf = *k;
  }
  return std::pair<UOp, UOp>{nt, nf};
}
}  // namespace detail

/// WHERE: negated condition, closure, merging selects with a shared condition.
inline constexpr auto algebra_where = [] {
  using namespace vars;
  using enum Ops;
  using enum DType;
  using detail::tt;
  using detail::ff;
  return pat::rules(
      pat::rewrite("where(!c,t,f)", pat::where(pat::logical_not(c.dtype<bool_>()), t, f), [](auto& m) { return where_(m.root().dtype(), m[c], m[f], m[t]); },
                   [](auto& m) { return !is_invalid(m[f]); }),
      pat::rule("where closure", pat::where(c, t, f), [](auto& m) -> std::optional<UOp> {
        auto [cond, tv, fv] = m;
        if (cond.op() == CONST) return std::nullopt;
        bool in_t = tv != cond && occurs_in(tv, cond), in_f = fv != cond && occurs_in(fv, cond);
        constexpr OpSet memory{INDEX, LOAD, STORE};
        if ((!in_t && !in_f) || contains_op(tv, memory) || contains_op(fv, memory) || contains_op(cond, memory))
          return std::nullopt;
        UOp nt = in_t ? substitute(tv, {{cond, literal(m.arena(), true)}}) : tv;
        UOp nf = in_f ? substitute(fv, {{cond, literal(m.arena(), false)}}) : fv;
        if (nt == tv && nf == fv) return std::nullopt;
        return m.arena().make(WHERE, m.root().dtype(), {cond, nt, nf});
      }),
      pat::rule("op(where(c,t,f),where(c,tt,ff))", pat::in<GroupOp::Binary - OpSet{THREEFRY}>(pat::where(c, t, f), pat::where(c, tt, ff)),
              [](auto& m) -> std::optional<UOp> {
                auto arms = detail::paired_arms(m.root(), m[t], m[tt], m[f], m[ff]);
                if (!arms) return std::nullopt;
                return m.arena().make(WHERE, m.root().dtype(), {m[c], arms->first, arms->second});
              }),
      // integers only (yi): in floats (y+a)+b and y+(a+b) round differently
      pat::rewrite(
          "(y+where(c,t,f))+where(c,tt,ff)",
          pat::named<"s">(yi + pat::named<"w1">(pat::where(c, t, f))) + pat::named<"w2">(pat::where(c, tt, ff)),
          [](auto& m) -> std::optional<UOp> {
            const UOp r = m.root();
            const UOp pair = m.arena().make(ADD, r.dtype(), {get<"w1">(m), get<"w2">(m)});
            auto arms = detail::paired_arms(pair, m[t], m[tt], m[f], m[ff]);
            if (!arms) return std::nullopt;
            return add(m[y], m.arena().make(WHERE, r.dtype(), {m[c], arms->first, arms->second}));
          },
          pat::root_dtype(y, pat::var<"s">)),
      pat::rewrite("where(c,t,0)+where(c,0,f)", pat::where(c, t, pat::const_<0>) + pat::where(c, pat::const_<0>, f), pat::where(c, t, f),
                 pat::root_dtype(t, f) && detail::not_bool));
}();

/// Range-based constant folding, MAX, associative constant chains.
inline constexpr auto algebra_fold = [] {
  using namespace vars;
  using enum Ops;
  constexpr auto minus_inf = pat::const_<pat::fval(-std::numeric_limits<double>::infinity())>;
  // the ops whose node folds to a constant when its bounds meet (range-based constant folding):
  // tinygrad's sym set, no more (not CDIV, CMOD, CMPEQ, MAX, AND, OR): a REDUCE under a node folded
  // here goes before the opts, and the axis a kernel's given opts name with it
  constexpr OpSet bound_folded{CMPLT, CMPNE, FLOORDIV, FLOORMOD, SPECIAL, PARAM, RANGE};
  return pat::rules(
      pat::rewrite("bounds meet", pat::in<bound_folded>, [](auto& m) { return iconst_like(m.root(), m.root().vmin()); },
                   [](auto& m) { return detail::bounds_meet(m.root()); }),
      pat::rewrite("where(a<b,b,a) is max", pat::where(pat::lt(a, b), b, a), pat::maximum(a, b), pat::root_dtype(a, b)),
      pat::rewrite(
          "max decided by bounds", pat::maximum(xi, yi),
          [](auto& m) {
            auto [x, y] = m;
            return x.vmin() >= y.vmax() ? x : y;
          },
          pat::root_dtype(x, y) && [](auto& m) {
            auto [x, y] = m;
            return x.vmin() >= y.vmax() || y.vmin() >= x.vmax();
          }),
      // tinygrad's bounds rule also folds max(-inf, x) to x (-inf is MAX's identity: a padded max
      // pool's window). Under `a<b ? b : a` that differs only for a NaN x, which the result then
      // carries on instead of dropping: a NaN refinement the tester allows this rule by name.
      pat::rewrite("max(-inf, x) is x", pat::op<MAX>(minus_inf.named<"c">().dtypes<pat::floats>(), x), x, pat::root_dtype(x, pat::var<"c">)),
      // tinygrad decides float MAX by bounds too (so a padded max pool's window loses its -inf
      // operands), but MAX is `a<b ? b : a`, which returns a when either side is NaN: max(x, y) is
      // x whenever y <= x can be shown, and y only when neither side can be NaN (the sides read from
      // the root: the pattern matches either operand order)
      pat::rewrite(
          "float max decided by bounds", pat::maximum(pat::any.dtypes<pat::floats>(), pat::any.dtypes<pat::floats>()),
          [](auto& m) {
            const UOp a = m.root().src(0), b = m.root().src(1);
            return detail::float_bounds(a).lo >= detail::float_bounds(b).hi ? a : b;
          },
          [](auto& m) {
            const UOp r = m.root(), a = r.src(0), b = r.src(1);
            const detail::float_range fa = detail::float_bounds(a), fb = detail::float_bounds(b);
            return a.dtype() == r.dtype() && b.dtype() == r.dtype() && (fa.lo >= fb.hi || (fa.not_nan && fb.not_nan && fb.lo >= fa.hi));
          }),
      // the inner op in either operand order, as tinygrad's x.alu(op, c1) (commutative ops match both): a
      // strong int (1+x)+256 that index lowering leaves const-first folds to x+257 as tinygrad's does
      pat::rule("(x op c1) op c2", pat::in<GroupOp::Associative>(pat::in<GroupOp::Associative>.as<"inner">.commutative(x, c1), c2),
              [](auto& m) { return detail::fold_chain(m.root(), get<"inner">(m), m[x], m[c1], m[c2]); }),
      pat::rewrite("(x op c1) op c2 (const first)",
                   pat::in<GroupOp::Associative>(c1, pat::in<GroupOp::Associative>.as<"inner">.commutative(x, c2)),
                   [](auto& m) { return detail::fold_chain(m.root(), get<"inner">(m), m[x], m[c1], m[c2]); },
                   [](auto& m) { return m[x].op() != CONST; }),
      pat::rewrite("(x//c1)//c2", pat::floordiv(pat::floordiv(xi, c1), c2), pat::floordiv(x, fold(c1 * c2)), pat::root_dtype(x) && [](auto& m) {
        const DType dt = m.root().dtype();
        const i128 a1 = cval_as(m[c1], dt), a2 = cval_as(m[c2], dt);
        return a2 > 0 && a1 != 0 && fits(dt, a1 * a2);
      }),
      // a RANGE's value is only observed inside its loop, where 0 <= r < end
      pat::rewrite("range%end", pat::op<RANGE>.as<"r">(e) % e, pat::var<"r">, pat::root_dtype(pat::var<"r">)),
      pat::rewrite("range//end", pat::floordiv(pat::op<RANGE>.as<"r">(e), e), 0));
}();

/// Comparisons with constants.
inline constexpr auto algebra_compare = [] {
  using namespace vars;
  using enum Ops;
  using enum DType;
  return pat::rules(
      pat::rewrite("x+c0<c1", (xi + c0) < c1, x < fold(c1 - c0), [](auto& m) {
        auto [x, c0, c1] = m;
        const DType dt = x.dtype();
        return is_const(c0) && is_const(c1) && dt == m.root().src(0).dtype() && detail::add_no_wrap(x, cval_as(c0, dt)) &&
               fits(dt, cval_as(c1, dt) - cval_as(c0, dt));
      }),
      pat::rewrite(
          "x*c0<c1", (xw * c0).dtype<weakint>() < c1.dtype<weakint>(),
          [](auto& m) {
            auto [x, c0, c1] = m;
            const i128 k0 = cval(c0), k1 = cval(c1);
            const i128 bound = -floor_div(-k1, k0 < 0 ? -k0 : k0);  // ceil(k1 / |k0|)
            const UOp lhs = k0 > 0 ? x : mul_c(x, -1);
            return lt(lhs, iconst(m.arena(), weakint, bound));
          },
          [](auto& m) {
            auto [x, c0, c1] = m;
            const i128 k0 = cval(c0);
            return is_const(c0) && is_const(c1) && k0 != 0 && k0 != 1 && k0 != -1;
          }),
      // weakint only, as tinygrad: a strong int's quotient (an interpolation's clamped source
      // index, say) keeps its own comparison
      pat::rewrite(
          "x//d<c", pat::floordiv(xw, c0).dtype<weakint>() < c1,
          [](auto& m) {
            auto [x, c0, c1] = m;
            const i128 d = cval_as(c0, weakint);
            const UOp kd = iconst(m.arena(), weakint, cval_as(c1, weakint) * d);
            return d > 0 ? lt(x, kd) : lt(kd, x);
          },
          [](auto& m) {
            auto [x, c0, c1] = m;
            const i128 d = cval_as(c0, weakint);
            return is_const(c0) && is_const(c1) && d != 0 && fits(weakint, cval_as(c1, weakint) * d);
          }),
      pat::rewrite("-x<-y", pat::lt((xw * pat::const_<-1>).dtype<weakint>(), (yw * pat::const_<-1>).dtype<weakint>()), pat::lt(y, x)),
      // terms with factor 1 stay in [0, g): divide everything by g (a factor but 1 needs a MUL in x)
      pat::rewrite(
          "lt folding by gcd", pat::lt(xw, c0),
          [](auto& m) -> std::optional<UOp> {
            std::vector<UOp> terms;
            split_add(m[x], terms);
            std::vector<UOp> p, np;
            i128 g = cval(m[c0]);
            for (UOp u : terms) {
              factored f = factor_of(u);
              if (!f.term) return std::nullopt;  // a constant summand: other rules first
              if (f.factor == 1 || f.factor == -1) p.push_back(u);
              else {
                np.push_back(u);
                g = gcd(g, f.factor);
              }
            }
            if (np.empty() || g <= 1) return std::nullopt;
            i128 lo = 0, hi = 0;
            for (UOp u : p) {
              if (u.vmin() == INT64_MIN || u.vmax() == INT64_MAX) return std::nullopt;
              lo += u.vmin();
              hi += u.vmax();
            }
            if (!(lo >= 0 && hi < g)) return std::nullopt;
            std::vector<UOp> scaled_terms;
            for (UOp u : np) {
              factored f = factor_of(u);
              scaled_terms.push_back(scaled(f.term, f.factor / g));
            }
            return lt(sum(m.arena(), weakint, scaled_terms), iconst(m.arena(), weakint, floor_div(cval(m[c0]), g)));
          },
          [](auto& m) { return is_const(m[c0]) && m.arena().may_contain(m[x].id(), OpSet{MUL}); }),
      // !(a0*x0 + a1*x1 + ... < 1) with every xi >= 0 irreducible and every ai > 0: the sum is at
      // least 1 exactly when some xi is, whatever the positive weights -> !(x0 + x1 + ... < 1)
      pat::rule("canonicalize simplex", pat::ne(pat::lt(xw, pat::const_<1>), pat::const_<true>.dtype<bool_>()),
              [](auto& m) -> std::optional<UOp> {
                std::vector<UOp> terms;
                split_add(m[x], terms);
                bool changed = false;
                for (UOp& u : terms) {
                  i128 k = 0;
                  if (u.op() == MUL && u.nsrc() == 2 && int_const(u.src(1), k) && k > 0) {
                    u = u.src(0);
                    changed = true;
                  }
                  if (!GroupOp::Irreducible.contains(u.op()) || is_invalid(u) || u.vmin() < 0) return std::nullopt;
                }
                if (!changed) return std::nullopt;
                return not_(lt(sum(m.arena(), weakint, terms), iconst(m.arena(), weakint, 1)));
              }));
}();

namespace detail {
constexpr bool fits_int32(UOp u) { return u.vmin() >= INT32_MIN && u.vmax() <= INT32_MAX; }
/// Whether u = x op y on int64 operands can be computed in int32: the values and the result all fit
/// int32, shift counts stay below 32 (C takes them modulo the width) and INT32_MIN / -1 cannot occur.
/// Two constants are constant folding's.
constexpr bool long_math_fits_int(UOp u, UOp x, UOp y) {
  using enum Ops;
  if ((x.op() == CONST && y.op() == CONST) || is_invalid(x) || is_invalid(y) || u.shape().size() != 0) return false;
  if (!fits_int32(u) || !fits_int32(x) || !fits_int32(y)) return false;
  const Ops op = u.op();
  if ((op == SHL || op == SHR) && (y.vmin() < 0 || y.vmax() >= 32)) return false;
  constexpr OpSet divs{CDIV, CMOD, FLOORDIV, FLOORMOD};
  return !(divs.contains(op) && x.vmin() <= INT32_MIN && y.vmin() <= -1 && y.vmax() >= -1);
}
/// u = x op y computed in int32 and cast back (a constant operand becomes a weak literal).
constexpr UOp long_math_in_int(UOp u, UOp x, UOp y) {
  using enum Ops;
  using enum DType;
  const Ops op = u.op();
  auto narrow = [](UOp v) { return v.op() == CONST ? iconst(v.arena(), weakint, cval(v)) : cast(v, int32); };
  const DType dt = GroupOp::Comparison.contains(op) ? bool_ : int32;
  UOp r = u.arena().make(op, dt, {narrow(x), narrow(y)});
  return dt == u.dtype() ? r : cast(r, u.dtype());
}
}  // namespace detail

/// Constants moved outward through sums and products; casts.
inline constexpr auto algebra_reorder = [] {
  using namespace vars;
  using enum Ops;
  using enum DType;
  constexpr pat::DTypeSet strong_signed{int8, int16, int32, int64};
  return pat::rules(
      pat::rewrite("(x+c)+y", (xi + c0) + yi, (x + y) + keep_dtype(c0), pat::root_dtype(x, y) && detail::y_not_const),
      pat::rewrite("(x*c)*y", (xi * c0) * yi, (x * y) * keep_dtype(c0), pat::root_dtype(x, y) && detail::y_not_const),
      // an intermediate cast that loses nothing for x's dtype: one cast does the same
      pat::rewrite("cast(cast(x,a),b) lossless", pat::op<CAST>(pat::named<"a">(pat::op<CAST>(x))), keep_dtype(x),
                 [](auto& m) { return safe_cast(m[x].dtype(), get<"a">(m).dtype()) && !is_invalid(m[x]); }),
      // casting wraps like the strong ADD does: cast(x+c) == cast(x) + cast(c)
      pat::rewrite(
          "cast(x+c) to a signed int", pat::op<CAST>.dtypes<strong_signed>()((xw + c0).dtype<weakint>()),
          [](auto& m) {
            const DType dt = m.root().dtype();
            return add(cast(m[x], dt), iconst(m.arena(), dt, cval(m[c0])));
          },
          [](auto& m) { return is_const(m[c0]); }),
      pat::rewrite("long math in int", pat::in<GroupOp::Binary>(pat::var<"x">.dtype<int64>(), pat::var<"y">.dtype<int64>()),
                   [](auto& m) { return detail::long_math_in_int(m.root(), m[x], m[y]); },
                   [](auto& m) { return detail::long_math_fits_int(m.root(), m[x], m[y]); }));
}();

}  // namespace uopcg::symbolic
