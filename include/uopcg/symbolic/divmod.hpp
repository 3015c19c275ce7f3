// Floor division and modulo folding on weakint index math (tinygrad's div_and_mod_symbolic).
// Every step is an identity of floor semantics, valid for operands of any sign:
//   floor((x + c*k)/c) = floor(x/c) + k,   (x + c*k) mod c = x mod c,
//   floor(floor(y)/d) = floor(y/d) (d > 0),   floor(g*s/(g*c)) = floor(s/c) (g != 0),
//   floor(x/c) = floor(floor(x/f)/(c/f)) and x mod c = (floor(x/f) mod (c/f))*f + x mod f (f | c, f > 0),
//   (g*x) mod (g*y) = g*(x mod y) (g != 0).
// A step that needs a divisor's sign or an operand's range says so; none needs it for soundness
// except where noted (the gcd step and nest by factor keep the snapshot's non-negativity for parity).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "rhs.hpp"
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
  using enum DType;
  std::vector<UOp> parts;
  for (std::size_t i = 0; i < terms.size(); ++i)
    if (factors[i] != 0) parts.push_back(scaled(terms[i], factors[i]));
  if (k != 0 || parts.empty()) parts.push_back(iconst(a, weakint, k));
  return sum(a, weakint, parts);
}
constexpr bool bounded(UOp u) { return u.vmin() != INT64_MIN && u.vmax() != INT64_MAX; }

/// Which step of the fold produced a result (tests use it to see every step reached).
enum class divmod_step : unsigned char {
  none, bounds, nested_mod, inner_mod, multiple, congruence, gcd, nest_by_factor, quotients, symbolic_gcd,
  symbolic_quotients
};
constexpr std::optional<UOp> found(divmod_step* out, divmod_step s, UOp r) {
  if (out) *out = s;
  return r;
}

/// A known divisor of a variable: PARAM's `multiple_of` (1 when none is recorded).
constexpr i128 param_multiple(UOp u) {
  if (u.op() != Ops::PARAM || u.arg().kind() != ArgKind::param_arg || u.arg().size() < 4) return 1;
  const Arg& m = u.arg()[3];
  if (!m.is_int() || m.as_int() == 0) return 1;
  return m.as_int() < 0 ? -static_cast<i128>(m.as_int()) : m.as_int();
}

/// Number of distinct nodes of u's graph (the size nest-by-factor minimises).
constexpr std::size_t graph_size(UOp u) { return backward_slice_ids(u).size() + 1; }

/// x // c or x % c for a constant c != 0 (is_mod selects); nullopt when nothing simplifies.
constexpr std::optional<UOp> fold_divmod_const(UOp x, i128 c, bool is_mod, divmod_step* step = nullptr) {
  using enum Ops;
  using enum DType;
  Arena& a = x.arena();
  const DType W = weakint;
  // the quotient is one value over x's range
  if (bounded(x) && x.vmin() <= x.vmax()) {
    i128 q0 = floor_div(x.vmin(), c), q1 = floor_div(x.vmax(), c);
    if (q0 == q1) return found(step, divmod_step::bounds, is_mod ? add(x, iconst(a, W, -q0 * c)) : iconst(a, W, q0));
  }
  // (y % (k*c)) // c -> (y // c) % k ; (y % (k*c)) % c -> y % c   (c, k > 0)
  if (c > 0 && x.op() == FLOORMOD) {
    i128 kc = 0;
    if (int_const(x.src(1), kc) && kc > 0 && kc % c == 0) {
      UOp y = x.src(0);
      if (is_mod) return found(step, divmod_step::nested_mod, fmod(y, iconst(a, W, c)));
      if (kc != c) return found(step, divmod_step::nested_mod, fmod(fdiv(y, iconst(a, W, c)), iconst(a, W, kc / c)));
    }
  }
  linear_form lf;
  if (!linear_of(x, lf)) return std::nullopt;
  // mod: inner mods whose divisor is a multiple of c drop out, and so do terms that are multiples of
  // c (a variable's multiple_of times its factor): (y + c*k) mod c = y mod c. An inner mod only as a
  // term of its own, as tinygrad's remove_nested_mod: dropping it from (x%7)*3 too is sound, but the
  // range merge counts divisions, and one fewer merges ranges tinygrad keeps (its opts then name
  // other axes)
  if (is_mod) {
    bool inner = false, multiple = false;
    std::vector<UOp> kept_terms;
    std::vector<i128> kept_factors;
    for (std::size_t i = 0; i < lf.terms.size(); ++i) {
      UOp t = lf.terms[i];
      i128 m = 0;
      if (const i128 pm = param_multiple(t); pm > 1 && (pm * lf.factors[i]) % c == 0) {
        multiple = true;
        continue;
      }
      if (t.op() == FLOORMOD && int_const(t.src(1), m) && m != 0 && lf.factors[i] == 1 && m % c == 0) {
        t = t.src(0);
        inner = true;
      }
      kept_terms.push_back(t);
      kept_factors.push_back(lf.factors[i]);
    }
    if (inner || multiple) {
      UOp r = fmod(build_linear(a, kept_terms, kept_factors, lf.constant), iconst(a, W, c));
      return found(step, inner ? divmod_step::inner_mod : divmod_step::multiple, r);
    }
  }
  if (lf.terms.empty()) return std::nullopt;
  // congruence: factors replaced by residues (f%c or f%c - c); when the residue expression has a
  // constant quotient, it folds. The residue of smaller magnitude is tried first; the other one as
  // well for a lone term and for ties (f%c == c/2), as the snapshot does. Any choice is sound:
  // sum(f*t) + k = sum(r*t) + k%c + c*(sum((f-r)/c*t) + k//c) whenever each r = f (mod c).
  if (c > 0) {
    std::vector<i128> base;
    std::vector<std::size_t> both;  // terms whose other residue is tried too
    for (std::size_t i = 0; i < lf.factors.size(); ++i) {
      const i128 r = floor_mod(lf.factors[i], c);
      base.push_back(c - r < r ? r - c : r);  // a tie keeps the positive one first
      if (r != 0 && (lf.factors.size() == 1 || c - r == r)) both.push_back(i);
    }
    if (both.size() > 4) both.resize(4);  // at most 16 candidates
    for (std::size_t mask = 0; mask < (std::size_t{1} << both.size()); ++mask) {
      std::vector<i128> rems = base;
      for (std::size_t b = 0; b < both.size(); ++b)
        if (mask >> b & 1) {
          i128& r = rems[both[b]];
          r = r > 0 ? r - c : r + c;
        }
      bool differs = lf.constant != floor_mod(lf.constant, c);
      for (std::size_t i = 0; i < rems.size(); ++i) differs |= rems[i] != lf.factors[i];
      if (!differs) continue;
      UOp rem = build_linear(a, lf.terms, rems, floor_mod(lf.constant, c));
      if (bounded(rem) && rem.vmin() <= rem.vmax() && floor_div(rem.vmin(), c) == floor_div(rem.vmax(), c)) {
        i128 q = floor_div(rem.vmin(), c);
        if (is_mod) return found(step, divmod_step::congruence, add(rem, iconst(a, W, -q * c)));
        std::vector<i128> quo;
        for (std::size_t i = 0; i < rems.size(); ++i) quo.push_back((lf.factors[i] - rems[i]) / c);
        return found(step, divmod_step::congruence, build_linear(a, lf.terms, quo, floor_div(lf.constant, c) + q));
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
        if (!is_mod) return found(step, divmod_step::gcd, fdiv(s, iconst(a, W, c / g)));
        UOp r = mul(fmod(s, iconst(a, W, c / g)), iconst(a, W, g));
        i128 k = floor_mod(lf.constant, g);
        return found(step, divmod_step::gcd, k == 0 ? r : add(r, iconst(a, W, k)));
      }
    }
  }
  // nest by factor: for a factor f of the terms that divides c, fold x // f first; when that
  // simplifies, x // c = (x // f) // (c/f) and x % c = ((x // f) % (c/f)) * f + x % f, where x % f is
  // the terms' residues mod f when those stay in [0, f). The smallest graph of the candidates wins.
  // (The snapshot's non-negativity conditions are kept: they decide which kernels change.)
  if (c > 0 && x.vmin() >= 0 && bounded(x)) {
    std::optional<UOp> best;
    std::size_t best_size = 0;
    std::vector<i128> tried;
    for (std::size_t i = 0; i < lf.terms.size(); ++i) {
      const i128 f = lf.factors[i] < 0 ? -lf.factors[i] : lf.factors[i];
      if (f <= 1 || f >= c || c % f != 0) continue;
      bool seen = false;
      for (i128 t : tried) seen |= t == f;
      if (seen) continue;
      tried.push_back(f);
      std::optional<UOp> inner = fold_divmod_const(x, f, /*is_mod=*/false);
      if (!inner || inner->vmin() < 0) continue;
      UOp cand;
      if (!is_mod) {
        cand = fdiv(*inner, iconst(a, W, c / f));
      } else {
        std::vector<i128> low;
        for (i128 g : lf.factors) low.push_back(floor_mod(g, f));
        UOp b = build_linear(a, lf.terms, low, floor_mod(lf.constant, f));
        if (b.vmin() < 0 || b.vmax() >= f) continue;
        UOp hi = mul(fmod(*inner, iconst(a, W, c / f)), iconst(a, W, f));
        cand = (b.op() == CONST && cval(b) == 0) ? hi : add(hi, b);
      }
      const std::size_t sz = graph_size(cand);
      if (!best || sz < best_size) best = cand, best_size = sz;
    }
    if (best) return found(step, divmod_step::nest_by_factor, *best);
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
      if (is_mod) return found(step, divmod_step::quotients, fmod(rem, iconst(a, W, c)));
      std::vector<UOp> parts;
      for (std::size_t i = 0; i < lf.terms.size(); ++i)
        if (quo[i] != 0) parts.push_back(scaled(lf.terms[i], quo[i]));
      i128 kq = floor_div(lf.constant, c);
      bool rem_zero = true;
      for (i128 r : rems) rem_zero &= r == 0;
      if (!rem_zero) parts.push_back(fdiv(rem, iconst(a, W, c)));
      if (kq != 0 || parts.empty()) parts.push_back(iconst(a, W, kq));
      return found(step, divmod_step::quotients, sum(a, W, parts));
    }
  }
  return std::nullopt;
}

// --- symbolic divisors ---------------------------------------------------------------------------

/// A product as its integer factor and its other factors (a MUL tree flattened; CONSTs multiplied).
struct product_form {
  i128 k = 1;
  std::vector<UOp> fs;
};
constexpr product_form product_of(UOp u) {
  using enum Ops;
  using enum DType;
  product_form p;
  std::vector<UOp> st{u};
  while (!st.empty()) {
    UOp v = st.back();
    st.pop_back();
    i128 cv = 0;
    if (v.op() == MUL && v.nsrc() == 2 && v.dtype() == weakint) {
      st.push_back(v.src(1));
      st.push_back(v.src(0));
    } else if (int_const(v, cv)) {
      // constants beyond weakint's range are left as factors (no overflow of k)
      if (fits(weakint, p.k * cv) && fits(weakint, cv)) p.k *= cv;
      else p.fs.push_back(v);
    } else {
      p.fs.push_back(v);
    }
  }
  return p;
}
/// The common part of two products: gcd of the integers, multiset intersection of the factors.
constexpr product_form common_part(const product_form& a, const product_form& b) {
  product_form g;
  g.k = gcd(a.k, b.k);
  std::vector<std::uint8_t> used(b.fs.size(), 0);  // not vector<bool>: see linearize_cleanups
  for (UOp f : a.fs)
    for (std::size_t j = 0; j < b.fs.size(); ++j)
      if (!used[j] && b.fs[j] == f) {
        used[j] = 1;
        g.fs.push_back(f);
        break;
      }
  return g;
}
/// u / d exactly when d's factors occur in u and d's integer divides u's; nullopt otherwise.
constexpr std::optional<product_form> divide_form(const product_form& u, const product_form& d) {
  if (d.k == 0 || u.k % d.k != 0) return std::nullopt;
  product_form q;
  q.k = u.k / d.k;
  std::vector<std::uint8_t> used(u.fs.size(), 0);
  for (UOp f : d.fs) {
    bool hit = false;
    for (std::size_t j = 0; j < u.fs.size() && !hit; ++j)
      if (!used[j] && u.fs[j] == f) {
        used[j] = 1;
        hit = true;
      }
    if (!hit) return std::nullopt;
  }
  for (std::size_t j = 0; j < u.fs.size(); ++j)
    if (!used[j]) q.fs.push_back(u.fs[j]);
  return q;
}
/// The product as a node; an invalid UOp when its integer leaves weakint's range.
constexpr UOp build_product(Arena& a, const product_form& p) {
  using enum DType;
  if (!fits(weakint, p.k)) return UOp();
  if (p.fs.empty()) return iconst(a, weakint, p.k);
  UOp r = p.fs[0];
  for (std::size_t i = 1; i < p.fs.size(); ++i) r = mul(r, p.fs[i]);
  return scaled(r, p.k);
}

/// Whether x // y is one value over x's and y's ranges (y of one sign).
constexpr bool quotient_fixed(UOp x, UOp y) {
  if (!bounded(x) || !bounded(y) || x.vmin() > x.vmax() || !(y.vmin() > 0 || y.vmax() < 0)) return false;
  const i128 q = floor_div(x.vmin(), y.vmin());
  for (i128 xv : {static_cast<i128>(x.vmin()), static_cast<i128>(x.vmax())})
    for (i128 yv : {static_cast<i128>(y.vmin()), static_cast<i128>(y.vmax())})
      if (floor_div(xv, yv) != q) return false;
  return true;
}

/// x // y or x % y for a non-constant weakint divisor y: the symbolic gcd of the numerator's terms
/// and y divided out ((g*X) // (g*Y) = X // Y, (g*X) % (g*Y) = g * (X % Y)); else the terms that
/// are exact multiples of y taken out ((q*y + r) // y = q + r // y, (q*y + r) % y = r % y).
/// Both are identities for any signs (y = 0 leaves the LHS undefined).
constexpr std::optional<UOp> fold_divmod_symbolic(UOp x, UOp y, bool is_mod, divmod_step* step = nullptr) {
  Arena& a = x.arena();
  const DType W = DType::weakint;
  std::vector<UOp> parts;
  split_add(x, parts);
  std::vector<product_form> forms;
  for (UOp u : parts) {
    if (u.dtype() != W) return std::nullopt;
    forms.push_back(product_of(u));
  }
  const product_form yf = product_of(y);
  if (yf.k == 0) return std::nullopt;
  product_form g = yf;
  for (const auto& f : forms) g = common_part(g, f);
  if (g.k < 0) g.k = -g.k;
  if (g.k > 1 || !g.fs.empty()) {
    std::vector<UOp> qs;
    for (const auto& f : forms) {
      auto q = divide_form(f, g);
      if (!q) return std::nullopt;
      qs.push_back(build_product(a, *q));
      if (!qs.back().valid()) return std::nullopt;
    }
    auto yq = divide_form(yf, g);
    if (!yq) return std::nullopt;
    UOp nx = sum(a, W, qs), ny = build_product(a, *yq), ng = build_product(a, g);
    if (!ny.valid() || !ng.valid()) return std::nullopt;
    if (!is_mod) return found(step, divmod_step::symbolic_gcd, fdiv(nx, ny));
    return found(step, divmod_step::symbolic_gcd, mul(fmod(nx, ny), ng));
  }
  std::vector<UOp> quo, rem;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto q = yf.fs.empty() ? std::nullopt : divide_form(forms[i], yf);
    UOp qn = q ? build_product(a, *q) : UOp();
    if (qn.valid()) quo.push_back(qn);
    else rem.push_back(parts[i]);
  }
  if (quo.empty()) return std::nullopt;
  if (is_mod) return found(step, divmod_step::symbolic_quotients, rem.empty() ? iconst(a, W, 0) : fmod(sum(a, W, rem), y));
  if (!rem.empty()) quo.push_back(fdiv(sum(a, W, rem), y));
  return found(step, divmod_step::symbolic_quotients, sum(a, W, quo));
}
}  // namespace detail

inline constexpr auto div_and_mod_symbolic = [] {
  using namespace vars;
  using enum Ops;
  using enum DType;
  // constant divisors: the general fold
  constexpr auto d_not_const = [](auto& m) { return m[d].op() != CONST; };
  constexpr pat::predicate y_not_const{[](auto& m) { return m[y].op() != CONST; }};
  constexpr auto divmod = pat::in<OpSet{FLOORDIV, FLOORMOD}>.dtype<weakint>();
  return pat::rules(
      pat::rewrite("(x//c+a)//d", pat::floordiv((pat::floordiv(xw, c1) + c2).dtype<weakint>(), c3).dtype<weakint>(),
                 pat::floordiv(x + fold(c1 * c2), fold(c1 * c3)), [](auto& m) { return cval(m[c3]) > 0 && cval(m[c1]) != 0; }),
      // The multiple of d is split out of the constant alone, so x keeps its shape (the general
      // fold below rebuilds the whole sum from its terms).
      pat::rewrite(
          "(x+c)//d, (x+c)%d", divmod((xw + c1.dtype<weakint>()).dtype<weakint>(), c2),
          [](auto& m) {
            const UOp r = m.root();
            const i128 c = cval(m[c1]), d = cval(m[c2]);
            const UOp inner = bin(r.op(), r.dtype(), add_c(m[x], floor_mod(c, d)), r.src(1));
            return r.op() == FLOORMOD ? inner : add_c(inner, floor_div(c, d));
          },
          [](auto& m) {
            const i128 c = cval(m[c1]), d = cval(m[c2]);
            return is_const(m[c1]) && is_const(m[c2]) && d != 0 && floor_mod(c, d) != c;
          }),
      pat::rewrite("(x*d+y)//d", pat::floordiv(xw * d + yw, d).dtype<weakint>(), x + pat::floordiv(y, d), d_not_const),
      pat::rewrite("(x*d)//d", pat::floordiv((xw * d).dtype<weakint>(), d).dtype<weakint>(), x, d_not_const),
      pat::rewrite("(x*d+y)%d", ((xw * d + yw) % d).dtype<weakint>(), y % d, d_not_const),
      pat::rewrite("(x*d)%d", ((xw * d).dtype<weakint>() % d).dtype<weakint>(), 0, d_not_const),
      pat::rewrite(
          "quotient fixed by bounds", divmod(xw, yw),
          [](auto& m) {
            auto [X, Y] = m;
            const i128 q = floor_div(X.vmin(), Y.vmin());
            return m.root().op() == FLOORDIV ? iconst(m.arena(), weakint, q) : add(X, mul_c(Y, -q));
          },
          y_not_const && [](auto& m) { return detail::quotient_fixed(m[x], m[y]); }),
      pat::rewrite("fold divmod by an expression", divmod(xw, yw),
                   [](auto& m) { return detail::fold_divmod_symbolic(m[x], m[y], m.root().op() == FLOORMOD); }, y_not_const),
      pat::rewrite("fold divmod by a constant", divmod(xw, c0.dtype<weakint>()),
                   [](auto& m) { return detail::fold_divmod_const(m[x], cval(m[c0]), m.root().op() == FLOORMOD); },
                   [](auto& m) { return is_const(m[c0]) && cval(m[c0]) != 0; }));
}();

}  // namespace uopcg::symbolic
