// mop_cleanup (tinygrad/uop/movement.py): the movement-op clean-ups every symbolic matcher carries
// (sets.hpp composes them into symbolic_simple): merge RESHAPE∘RESHAPE and PERMUTE∘PERMUTE, drop
// identity RESHAPE/PERMUTE, a STACK that re-assembles every lane of one value is that value, a
// constant INDEX into a STACK is the element, nested INDEXes merge. Also the shape helpers pm_mops
// (mops.hpp) builds on. Depends only on util.hpp, so every TU of sets.hpp does not pay for pm_mops.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "util.hpp"

namespace uopcg::symbolic {

namespace mops {

/// A node's shape as a vector (empty for scalars and statements).
constexpr std::vector<std::int64_t> dims(UOp u) { return u.shape().to_vector(); }
constexpr std::size_t rank(UOp u) { return u.shape().size(); }

/// The integer values of a shape operand: CONST n, or a STACK of CONSTs (CASTs looked through).
constexpr std::optional<std::vector<std::int64_t>> const_list(UOp s) {
  using enum Ops;
  auto strip = [](UOp x) {
    while (x.op() == CAST && x.nsrc() == 1) x = x.src(0);
    return x;
  };
  s = strip(s);
  std::vector<std::int64_t> out;
  auto one = [&](UOp c) {
    c = strip(c);
    if (c.op() != CONST || !(c.arg().kind() == ArgKind::int_ || c.arg().is_bool())) return false;
    out.push_back(c.arg().as_int());
    return true;
  };
  if (s.op() == CONST) {
    if (!one(s)) return std::nullopt;
    return out;
  }
  if (s.op() != STACK) return std::nullopt;
  for (UOp c : s.srcs())
    if (!one(c)) return std::nullopt;
  return out;
}

/// The shape operand of RESHAPE/EXPAND as tinygrad builds it: a weakint CONST for one dimension,
/// a STACK of weakint CONSTs otherwise (empty for a scalar).
constexpr UOp shape_node(Arena& a, std::span<const std::int64_t> shp) {
  if (shp.size() == 1) return literal(a, shp[0]);
  std::vector<UOp> s;
  for (auto d : shp) s.push_back(literal(a, d));
  return a.make(Ops::STACK, DType::weakint, s);
}

/// x.reshape(shp); x itself when the shape already is shp.
constexpr UOp reshape(UOp x, std::span<const std::int64_t> shp) {
  auto cur = dims(x);
  if (x.shape().has_value() && cur.size() == shp.size() && std::equal(cur.begin(), cur.end(), shp.begin())) return x;
  std::int64_t n = 1;
  for (auto d : shp) n *= d;
  if (!x.shape().has_value() || n != x.shape().numel()) {
    fail("reshape: ", x.arena().describe(x.id()), " cannot be reshaped (element counts differ)");
  }
  return x.arena().make(Ops::RESHAPE, x.dtype(), {x, shape_node(x.arena(), shp)});
}
constexpr UOp reshape(UOp x, const std::vector<std::int64_t>& shp) {
  return reshape(x, std::span<const std::int64_t>(shp.data(), shp.size()));
}

/// x.permute(perm); x itself for the identity permutation.
constexpr UOp permute(UOp x, const std::vector<std::int64_t>& perm) {
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<std::int64_t>(i);
  if (identity && perm.size() == rank(x)) return x;
  if (perm.size() != rank(x)) {
    fail("permute: the permutation does not match the rank of ", x.arena().describe(x.id()));
  }
  std::vector<Arg> items;
  for (auto p : perm) items.push_back(Arg(p));
  return x.arena().make(Ops::PERMUTE, x.dtype(), {x}, Arg::tuple(std::move(items)));
}

/// The permutation as integers, or nullopt when the arg is not a tuple of ints.
constexpr std::optional<std::vector<std::int64_t>> perm_of(UOp p) {
  const Arg& a = p.arg();
  if (!a.is_tuple()) return std::nullopt;
  std::vector<std::int64_t> out;
  out.reserve(a.size());
  for (const Arg& x : a.items()) {
    if (x.kind() != ArgKind::int_) return std::nullopt;
    out.push_back(x.as_int());
  }
  return out;
}

/// argsort of a permutation (its inverse).
constexpr std::vector<std::int64_t> argsort(const std::vector<std::int64_t>& p) {
  std::vector<std::int64_t> out(p.size(), 0);
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] >= 0 && static_cast<std::size_t>(p[i]) < p.size()) out[static_cast<std::size_t>(p[i])] = static_cast<std::int64_t>(i);
  return out;
}

/// base.index(idxs...) as tinygrad's UOp.index builds it: one constant index into a STACK is the
/// element itself; otherwise an INDEX node (dtype: dt if given, else the base's).
constexpr UOp index(UOp base, std::span<const UOp> idxs, std::optional<DType> dt = std::nullopt,
                    const Arg& arg = Arg()) {
  if (base.op() == Ops::STACK && idxs.size() == 1 && is_const(idxs[0]) && idxs[0].arg().kind() == ArgKind::int_) {
    auto k = idxs[0].arg().as_int();
    if (k >= 0 && static_cast<std::size_t>(k) < base.nsrc()) return base.src(static_cast<std::size_t>(k));
  }
  Arena::scratch_vector<UOp> s(base.arena());  // pooled: no allocation per INDEX
  s->push_back(base);
  s->insert(s->end(), idxs.begin(), idxs.end());
  return base.arena().make(Ops::INDEX, dt ? *dt : base.dtype(), *s, arg);
}
constexpr UOp index(UOp base, const std::vector<UOp>& idxs, std::optional<DType> dt = std::nullopt,
                    const Arg& arg = Arg()) {
  return mops::index(base, std::span<const UOp>(idxs.data(), idxs.size()), dt, arg);
}

/// The AND clauses of a bool expression.
constexpr void split_and(UOp u, std::vector<UOp>& out) { split_tree(Ops::AND, u, out); }

}  // namespace mops

namespace detail {
/// `u.src[from:]` as a vector.
constexpr std::vector<UOp> srcs_from(UOp u, std::size_t from) {
  std::vector<UOp> v;
  v.reserve(u.nsrc() > from ? u.nsrc() - from : 0);
  for (std::size_t i = from; i < u.nsrc(); ++i) v.push_back(u.src(i));
  return v;
}
/// Whether every index of an INDEX (its sources after the first) is a scalar.
constexpr bool scalar_indices(UOp idx) {
  for (std::size_t i = 1; i < idx.nsrc(); ++i)
    if (!idx.src(i).shape().has_value() || mops::rank(idx.src(i)) != 0) return false;
  return true;
}
}  // namespace detail

/// The movement-op clean-ups (§1.9), part of every symbolic matcher.
inline constexpr auto mop_cleanup = [] {
  using enum Ops;
  return pat::rules(
      // RESHAPE(RESHAPE(y, s1), s2) -> RESHAPE(y, s2)
      pat::rule("merge RESHAPEs", pat::op<RESHAPE>(pat::op<RESHAPE>.as<"x2">, pat::any), [](auto& m) {
        UOp r = m.root();
        return with_srcs(r, {get<"x2">(m).src(0), r.src(1)});
      }),
      pat::rewrite("noop RESHAPE", pat::op<RESHAPE>(pat::var<"x2">, pat::any), pat::var<"x2">, [](auto& m) {
        const UOp s = get<"x2">(m);
        return s.shape().has_value() && mops::dims(s) == mops::dims(m.root());
      }),
      // PERMUTE(PERMUTE(y, p2), p) -> PERMUTE(y, p2[p[i]])
      pat::rule("merge PERMUTEs", pat::op<PERMUTE>(pat::op<PERMUTE>.as<"x2">), [](auto& m) -> std::optional<UOp> {
        UOp outer = m.root(), inner = get<"x2">(m);
        auto p = mops::perm_of(outer), p2 = mops::perm_of(inner);
        if (!p || !p2) return std::nullopt;
        std::vector<Arg> items;
        for (auto k : *p) {
          if (k < 0 || static_cast<std::size_t>(k) >= p2->size()) return std::nullopt;
          items.push_back(Arg((*p2)[static_cast<std::size_t>(k)]));
        }
        return with_arg(inner, Arg::tuple(std::move(items)));
      }),
      pat::rewrite("noop PERMUTE", pat::op<PERMUTE>(pat::var<"x">), pat::var<"x">, [](auto& m) {
        const auto p = mops::perm_of(m.root());
        if (!p) return false;
        for (std::size_t k = 0; k < p->size(); ++k)
          if ((*p)[k] != static_cast<std::int64_t>(k)) return false;
        return true;
      }),
      // STACK(INDEX(s, 0), INDEX(s, 1), ..., INDEX(s, n-1)) with n the length of s -> s
      pat::rewrite("STACK of every lane", pat::op<STACK>.repeat(pat::op<INDEX>(pat::var<"src">, pat::op<CONST>)), pat::var<"src">,
                   [](auto& m) {
                     const UOp stk = m.root(), s = get<"src">(m);
                     if (!s.shape().has_value() || mops::dims(stk) != mops::dims(s)) return false;
                     for (std::size_t k = 0; k < stk.nsrc(); ++k) {
                       const Arg& a = stk.src(k).src(1).arg();
                       if (a.kind() != ArgKind::int_ || a.as_int() != static_cast<std::int64_t>(k)) return false;
                     }
                     return true;
                   }),
      // INDEX(STACK(e0..en), k, rest...) -> ek.index(rest...)
      pat::rewrite(
          "INDEX(STACK, const)", pat::op<INDEX>.any_len(pat::op<STACK>.as<"a">, pat::cvar<"i">),
          [](auto& m) {
            const UOp idx = m.root(), e = get<"a">(m).src(static_cast<std::size_t>(get<"i">(m).arg().as_int()));
            return idx.nsrc() <= 2 ? e : mops::index(e, detail::srcs_from(idx, 2));
          },
          [](auto& m) {
            const Arg& k = get<"i">(m).arg();
            return k.kind() == ArgKind::int_ && k.as_int() >= 0 && static_cast<std::size_t>(k.as_int()) < get<"a">(m).nsrc();
          }),
      // a lane of a scalar value is the value: a scalar stands for every lane of a vector it meets,
      // so a rule that folds a vector to a scalar (where(c, x, x) -> x under a vector c) keeps it
      pat::rewrite("INDEX(scalar value, const)", pat::op<INDEX>(pat::var<"x">, pat::op<CONST>), pat::var<"x">, [](auto& m) {
        const UOp x = get<"x">(m);
        const auto space = x.addrspace();
        return (!space || *space == AddrSpace::ALU) && x.shape().has_value() && x.shape().size() == 0;
      }),
      // INDEX(INDEX(x, i...), j...) -> INDEX(x, i..., j...) when every index is a scalar
      pat::rewrite(
          "INDEX(INDEX)", pat::op<INDEX>.any_len(pat::op<INDEX>.as<"idx1">),
          [](auto& m) {
            const UOp idx1 = get<"idx1">(m);
            std::vector<UOp> all = detail::srcs_from(idx1, 1);
            for (UOp j : detail::srcs_from(m.root(), 1)) all.push_back(j);
            return mops::index(idx1.src(0), all);
          },
          [](auto& m) { return detail::scalar_indices(get<"idx1">(m)) && detail::scalar_indices(m.root()); }),
      // INDEX(INDEX(buf, shaped), j...) -> INDEX(buf, INDEX(shaped, j...)) when j covers shaped's rank
      pat::rewrite(
          "INDEX(shaped INDEX)", pat::op<INDEX>.any_len(pat::op<INDEX>(pat::var<"buf">, pat::var<"idx1_arg">)),
          [](auto& m) {
            const UOp inner = mops::index(get<"idx1_arg">(m), detail::srcs_from(m.root(), 1));
            return mops::index(get<"buf">(m), std::vector<UOp>{inner});
          },
          [](auto& m) {
            const UOp ia = get<"idx1_arg">(m);
            return ia.shape().has_value() && mops::rank(ia) == m.root().nsrc() - 1;
          }));
}();

}  // namespace uopcg::symbolic
