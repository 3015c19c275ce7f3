// Floor division and modulo folding on weakint index math (tinygrad's div_and_mod_symbolic).
// Every step is an identity of floor semantics, valid for operands of any sign:
//   floor((x + c*k)/c) = floor(x/c) + k,   (x + c*k) mod c = x mod c,
//   floor(floor(y)/d) = floor(y/d) (d > 0),   floor(g*s/(g*c)) = floor(s/c) (g > 0).
#pragma once

#include <optional>
#include <vector>

#include "util.hpp"

namespace uopcg::symbolic {

namespace detail {

struct linear_form {
  std::vector<UOp> terms;      // non-constant terms
  std::vector<i128> factors;   // their integer factors
  i128 constant = 0;
};
constexpr bool linear_of(UOp x, linear_form& out) {
  std::vector<UOp> parts;
  split_add(x, parts);
  for (UOp u : parts) {
    if (u.dtype() != DType::weakint) return false;
    factored f = factor_of(u);
    if (!f.term) out.constant += f.factor;
    else {
      out.terms.push_back(f.term);
      out.factors.push_back(f.factor);
    }
  }
  return true;
}
constexpr UOp build_linear(Arena& a, const std::vector<UOp>& terms, const std::vector<i128>& factors, i128 k) {
  std::vector<UOp> parts;
  for (std::size_t i = 0; i < terms.size(); ++i)
    if (factors[i] != 0) parts.push_back(scaled(terms[i], factors[i]));
  if (k != 0 || parts.empty()) parts.push_back(iconst(a, DType::weakint, k));
  return sum(a, DType::weakint, parts);
}
constexpr bool bounded(UOp u) { return u.vmin() != INT64_MIN && u.vmax() != INT64_MAX; }

/// x // c or x % c for a constant c != 0 (is_mod selects); nullopt when nothing simplifies.
constexpr std::optional<UOp> fold_divmod_const(UOp x, i128 c, bool is_mod) {
  Arena& a = x.arena();
  const DType W = DType::weakint;
  // the quotient is one value over x's range
  if (bounded(x) && x.vmin() <= x.vmax()) {
    i128 q0 = floor_div(x.vmin(), c), q1 = floor_div(x.vmax(), c);
    if (q0 == q1) return is_mod ? add(x, iconst(a, W, -q0 * c)) : iconst(a, W, q0);
  }
  // (y % (k*c)) // c -> (y // c) % k ; (y % (k*c)) % c -> y % c   (c, k > 0)
  if (c > 0 && x.op() == Ops::FLOORMOD) {
    i128 kc = 0;
    if (int_const(x.src(1), kc) && kc > 0 && kc % c == 0) {
      UOp y = x.src(0);
      if (is_mod) return fmod(y, iconst(a, W, c));
      if (kc != c) return fmod(fdiv(y, iconst(a, W, c)), iconst(a, W, kc / c));
    }
  }
  linear_form lf;
  if (!linear_of(x, lf)) return std::nullopt;
  // mod: inner mods whose divisor is a multiple of c drop out
  if (is_mod) {
    bool changed = false;
    for (std::size_t i = 0; i < lf.terms.size(); ++i) {
      UOp t = lf.terms[i];
      i128 m = 0;
      if (t.op() == Ops::FLOORMOD && int_const(t.src(1), m) && m != 0 && (m * lf.factors[i]) % c == 0) {
        lf.terms[i] = t.src(0);
        changed = true;
      }
    }
    if (changed) return fmod(build_linear(a, lf.terms, lf.factors, lf.constant), iconst(a, W, c));
  }
  if (lf.terms.empty()) return std::nullopt;
  // congruence: factors replaced by their smallest-magnitude residues; a constant quotient folds
  if (c > 0) {
    std::vector<i128> rems;
    bool differs = lf.constant != floor_mod(lf.constant, c);
    for (i128 f : lf.factors) {
      i128 r = floor_mod(f, c);
      if (c - r < r) r -= c;  // the residue of smaller magnitude; a tie keeps the positive one
      rems.push_back(r);
      differs |= r != f;
    }
    if (differs) {
      UOp rem = build_linear(a, lf.terms, rems, floor_mod(lf.constant, c));
      if (bounded(rem) && rem.vmin() <= rem.vmax() && floor_div(rem.vmin(), c) == floor_div(rem.vmax(), c)) {
        i128 q = floor_div(rem.vmin(), c);
        if (is_mod) return add(rem, iconst(a, W, -q * c));
        std::vector<i128> quo;
        for (std::size_t i = 0; i < rems.size(); ++i) quo.push_back((lf.factors[i] - rems[i]) / c);
        return build_linear(a, lf.terms, quo, floor_div(lf.constant, c) + q);
      }
    }
  }
  // common factor g of the terms and c: floor((g*s + k)/(g*c')) = floor((s + k//g)/c')
  if (c > 0) {
    i128 g = c;
    for (i128 f : lf.factors) g = gcd(g, f);
    if (g > 1) {
      std::vector<i128> fs;
      for (i128 f : lf.factors) fs.push_back(f / g);
      UOp s = build_linear(a, lf.terms, fs, floor_div(lf.constant, g));
      if (s.vmin() >= 0) {
        if (!is_mod) return fdiv(s, iconst(a, W, c / g));
        UOp r = mul(fmod(s, iconst(a, W, c / g)), iconst(a, W, g));
        i128 k = floor_mod(lf.constant, g);
        return k == 0 ? r : add(r, iconst(a, W, k));
      }
    }
  }
  // whole quotients of the factors and the constant come out
  if (c > 0) {
    std::vector<i128> quo, rems;
    bool any = lf.constant != floor_mod(lf.constant, c);
    for (i128 f : lf.factors) {
      quo.push_back(floor_div(f, c));
      rems.push_back(floor_mod(f, c));
      any |= floor_div(f, c) != 0;
    }
    if (any) {
      UOp rem = build_linear(a, lf.terms, rems, floor_mod(lf.constant, c));
      if (is_mod) return fmod(rem, iconst(a, W, c));
      std::vector<UOp> parts;
      for (std::size_t i = 0; i < lf.terms.size(); ++i)
        if (quo[i] != 0) parts.push_back(scaled(lf.terms[i], quo[i]));
      i128 kq = floor_div(lf.constant, c);
      bool rem_zero = true;
      for (i128 r : rems) rem_zero &= r == 0;
      if (!rem_zero) parts.push_back(fdiv(rem, iconst(a, W, c)));
      if (kq != 0 || parts.empty()) parts.push_back(iconst(a, W, kq));
      return sum(a, W, parts);
    }
  }
  return std::nullopt;
}
}  // namespace detail

inline constexpr auto div_and_mod_symbolic = [] {
  using namespace vars;
  return P::rules(
      P::rule("(x//c+a)//d", P::floordiv(P::floordiv(xw, c1) + c2, c3), [](auto& m) -> std::optional<UOp> {
        i128 c = cval(m[c1]), k = cval(m[c2]), d = cval(m[c3]);
        if (m.root().dtype() != DType::weakint || m.root().src(0).dtype() != DType::weakint) return std::nullopt;
        if (d <= 0 || c == 0 || !fits(DType::weakint, k * c) || !fits(DType::weakint, c * d)) return std::nullopt;
        return fdiv(add_c(m[x], k * c), iconst(m.arena(), DType::weakint, c * d));
      }),
      P::rule("(x*d+y)//d", (P::floordiv(xw * d + yw, d)).dtype<DType::weakint>(), [](auto& m) -> std::optional<UOp> {
        if (m[d].op() == Ops::CONST || m.root().src(0).dtype() != DType::weakint) return std::nullopt;  // constants: the general fold
        return add(m[x], fdiv(m[y], m[d]));
      }),
      P::rule("(x*d)//d", (P::floordiv(xw * d, d)).dtype<DType::weakint>(), [](auto& m) -> std::optional<UOp> {
        if (m[d].op() == Ops::CONST || m.root().src(0).dtype() != DType::weakint) return std::nullopt;
        return m[x];
      }),
      P::rule("(x*d+y)%d", ((xw * d + yw) % d).dtype<DType::weakint>(), [](auto& m) -> std::optional<UOp> {
        if (m[d].op() == Ops::CONST || m.root().src(0).dtype() != DType::weakint) return std::nullopt;
        return fmod(m[y], m[d]);
      }),
      P::rule("(x*d)%d", ((xw * d) % d).dtype<DType::weakint>(), [](auto& m) -> std::optional<UOp> {
        if (m[d].op() == Ops::CONST || m.root().src(0).dtype() != DType::weakint) return std::nullopt;
        return iconst(m.arena(), DType::weakint, 0);
      }),
      P::rule("quotient fixed by bounds", P::in<OpSet{Ops::FLOORDIV, Ops::FLOORMOD}>.dtype<DType::weakint>()(xw, yw),
              [](auto& m) -> std::optional<UOp> {
                UOp X = m[x], Y = m[y];
                if (Y.op() == Ops::CONST) return std::nullopt;
                if (!detail::bounded(X) || !detail::bounded(Y) || X.vmin() > X.vmax()) return std::nullopt;
                if (!(Y.vmin() > 0 || Y.vmax() < 0)) return std::nullopt;
                i128 q = floor_div(X.vmin(), Y.vmin());
                for (i128 xv : {static_cast<i128>(X.vmin()), static_cast<i128>(X.vmax())})
                  for (i128 yv : {static_cast<i128>(Y.vmin()), static_cast<i128>(Y.vmax())})
                    if (floor_div(xv, yv) != q) return std::nullopt;
                if (m.root().op() == Ops::FLOORDIV) return iconst(m.arena(), DType::weakint, q);
                return add(X, mul_c(Y, -q));
              }),
      P::rule("fold divmod by a constant", P::in<OpSet{Ops::FLOORDIV, Ops::FLOORMOD}>.dtype<DType::weakint>()(xw, c0),
              [](auto& m) -> std::optional<UOp> {
                i128 c = cval(m[c0]);
                if (!is_const(m[c0]) || c == 0 || m[c0].dtype() != DType::weakint) return std::nullopt;
                return detail::fold_divmod_const(m[x], c, m.root().op() == Ops::FLOORMOD);
              }));
}();

}  // namespace uopcg::symbolic
