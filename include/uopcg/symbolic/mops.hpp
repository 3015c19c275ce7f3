// Movement ops (RESHAPE, PERMUTE, EXPAND, SHRINK, PAD, FLIP) and INDEX: the two rule sets of
// tinygrad-codegen.md §1.9.
//   mop_cleanup — local clean-ups that every symbolic matcher carries: merge RESHAPE∘RESHAPE and
//                 PERMUTE∘PERMUTE, drop identity RESHAPE/PERMUTE, a STACK that re-assembles every
//                 lane of one value is that value, a constant INDEX into a STACK is the element,
//                 nested INDEXes merge.
//   pm_mops     — an INDEX over a movement-op view becomes an INDEX of the view's source with the
//                 index arithmetic of the movement op; movement ops (and INDEX) move outside AFTER,
//                 and an END of a movement op ends its source.
// mop_cleanup depends only on util.hpp (sets.hpp composes it into symbolic_simple). pm_mops needs
// symbolic simplification for RESHAPE index math; to keep the include graph acyclic it composes
// that rule set here from the family headers (the same families as `symbolic`).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "algebra.hpp"
#include "commutative.hpp"
#include "divmod.hpp"
#include "invalid.hpp"
#include "simple.hpp"
#include "util.hpp"
#include "valid.hpp"

namespace uopcg::symbolic {

namespace mops {

/// A node's shape as a vector (empty for scalars and statements).
constexpr std::vector<std::int64_t> dims(UOp u) { return u.shape().to_vector(); }
constexpr std::size_t rank(UOp u) { return u.shape().size(); }

/// The integer values of a shape operand: CONST n, or a STACK of CONSTs (CASTs looked through).
constexpr std::optional<std::vector<std::int64_t>> const_list(UOp s) {
  auto strip = [](UOp x) {
    while (x.op() == Ops::CAST && x.nsrc() == 1) x = x.src(0);
    return x;
  };
  s = strip(s);
  std::vector<std::int64_t> out;
  auto one = [&](UOp c) {
    c = strip(c);
    if (c.op() != Ops::CONST || !(c.arg().kind() == ArgKind::int_ || c.arg().is_bool())) return false;
    out.push_back(c.arg().as_int());
    return true;
  };
  if (s.op() == Ops::CONST) {
    if (!one(s)) return std::nullopt;
    return out;
  }
  if (s.op() != Ops::STACK) return std::nullopt;
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
    text t;
    t.append("reshape: ").append(x.arena().describe(x.id())).append(" cannot be reshaped (element counts differ)");
    fail(t.view());
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
    text t;
    t.append("permute: the permutation does not match the rank of ").append(x.arena().describe(x.id()));
    fail(t.view());
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
  std::vector<UOp> s{base};
  s.insert(s.end(), idxs.begin(), idxs.end());
  return base.arena().make(Ops::INDEX, dt ? *dt : base.dtype(), s, arg);
}
constexpr UOp index(UOp base, const std::vector<UOp>& idxs, std::optional<DType> dt = std::nullopt,
                    const Arg& arg = Arg()) {
  return mops::index(base, std::span<const UOp>(idxs.data(), idxs.size()), dt, arg);
}

/// The AND clauses of a bool expression.
constexpr void split_and(UOp u, std::vector<UOp>& out) {
  std::vector<UOp> st{u};
  while (!st.empty()) {
    UOp v = st.back();
    st.pop_back();
    if (v.op() == Ops::AND && v.nsrc() == 2) {
      st.push_back(v.src(1));
      st.push_back(v.src(0));
    } else {
      out.push_back(v);
    }
  }
}

}  // namespace mops

namespace detail {
/// `u.src[from:]` as a vector.
constexpr std::vector<UOp> srcs_from(UOp u, std::size_t from) {
  std::vector<UOp> v;
  for (std::size_t i = from; i < u.nsrc(); ++i) v.push_back(u.src(i));
  return v;
}
}  // namespace detail

/// The movement-op clean-ups (§1.9), part of every symbolic matcher.
inline constexpr auto mop_cleanup = [] {
  return P::rules(
      // RESHAPE(RESHAPE(y, s1), s2) -> RESHAPE(y, s2)
      P::rule("merge RESHAPEs", P::op<Ops::RESHAPE>(P::op<Ops::RESHAPE>.as<"x2">, P::any), [](auto& m) {
        UOp r = m.root();
        return with_srcs(r, {get<"x2">(m).src(0), r.src(1)});
      }),
      P::rule("noop RESHAPE", P::op<Ops::RESHAPE>(P::var<"x2">, P::any), [](auto& m) -> std::optional<UOp> {
        UOp r = m.root(), s = get<"x2">(m);
        if (!s.shape().has_value() || mops::dims(s) != mops::dims(r)) return std::nullopt;
        return s;
      }),
      // PERMUTE(PERMUTE(y, p2), p) -> PERMUTE(y, p2[p[i]])
      P::rule("merge PERMUTEs", P::op<Ops::PERMUTE>(P::op<Ops::PERMUTE>.as<"x2">), [](auto& m) -> std::optional<UOp> {
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
      P::rule("noop PERMUTE", P::op<Ops::PERMUTE>, [](auto& m) -> std::optional<UOp> {
        UOp r = m.root();
        auto p = mops::perm_of(r);
        if (!p || r.nsrc() != 1) return std::nullopt;
        for (std::size_t k = 0; k < p->size(); ++k)
          if ((*p)[k] != static_cast<std::int64_t>(k)) return std::nullopt;
        return r.src(0);
      }),
      // STACK(INDEX(s, 0), INDEX(s, 1), ..., INDEX(s, n-1)) with n the length of s -> s
      P::rule("STACK of every lane", P::op<Ops::STACK>.repeat(P::op<Ops::INDEX>(P::var<"src">, P::op<Ops::CONST>)),
              [](auto& m) -> std::optional<UOp> {
                UOp stk = m.root(), s = get<"src">(m);
                if (!s.shape().has_value() || mops::dims(stk) != mops::dims(s)) return std::nullopt;
                for (std::size_t k = 0; k < stk.nsrc(); ++k) {
                  const Arg& a = stk.src(k).src(1).arg();
                  if (a.kind() != ArgKind::int_ || a.as_int() != static_cast<std::int64_t>(k)) return std::nullopt;
                }
                return s;
              }),
      // INDEX(STACK(e0..en), k, rest...) -> ek.index(rest...)
      P::rule("INDEX(STACK, const)", P::op<Ops::INDEX>.any_len(P::op<Ops::STACK>.as<"a">, P::cvar<"i">),
              [](auto& m) -> std::optional<UOp> {
                UOp a = get<"a">(m), idx = m.root();
                const Arg& k = get<"i">(m).arg();
                if (k.kind() != ArgKind::int_ || k.as_int() < 0 || static_cast<std::size_t>(k.as_int()) >= a.nsrc())
                  return std::nullopt;
                UOp e = a.src(static_cast<std::size_t>(k.as_int()));
                if (idx.nsrc() <= 2) return e;
                return mops::index(e, detail::srcs_from(idx, 2));
              }),
      // INDEX(INDEX(x, i...), j...) -> INDEX(x, i..., j...) when every index is a scalar
      P::rule("INDEX(INDEX)", P::op<Ops::INDEX>.any_len(P::op<Ops::INDEX>.as<"idx1">), [](auto& m) -> std::optional<UOp> {
        UOp idx1 = get<"idx1">(m), idx2 = m.root();
        std::vector<UOp> all = detail::srcs_from(idx1, 1);
        for (UOp j : detail::srcs_from(idx2, 1)) all.push_back(j);
        for (UOp j : all)
          if (!j.shape().has_value() || mops::rank(j) != 0) return std::nullopt;
        return mops::index(idx1.src(0), all);
      }),
      // INDEX(INDEX(buf, shaped), j...) -> INDEX(buf, INDEX(shaped, j...)) when j covers shaped's rank
      P::rule("INDEX(shaped INDEX)", P::op<Ops::INDEX>.any_len(P::op<Ops::INDEX>(P::var<"buf">, P::var<"idx1_arg">)),
              [](auto& m) -> std::optional<UOp> {
                UOp idx2 = m.root(), ia = get<"idx1_arg">(m);
                auto js = detail::srcs_from(idx2, 1);
                if (!ia.shape().has_value() || mops::rank(ia) != js.size()) return std::nullopt;
                return mops::index(get<"buf">(m), std::vector<UOp>{mops::index(ia, js)});
              }));
}();

// --- pm_mops ---------------------------------------------------------------------------------------

namespace detail {

/// where(cond, x, Invalid): the AND clauses of cond that share no range with x are dropped
/// (tinygrad's pm_drop_and_clauses; used by the RESHAPE index math).
inline constexpr auto mops_drop_and_clauses = [] {
  using namespace vars;
  return P::rules(P::rule("drop clauses without x's ranges", P::where(c, x, inv), [](auto& m) -> std::optional<UOp> {
    std::vector<UOp> clauses, keep;
    mops::split_and(m[c], clauses);
    auto xr = ranges(m[x]);
    bool dropped = false;
    for (UOp cl : clauses) {
      bool shares = false;
      for (UOp r : ranges(cl))
        for (UOp q : xr) shares |= r == q;
      if (shares) keep.push_back(cl);
      else dropped = true;
    }
    if (!dropped) return std::nullopt;
    UOp cond = literal(m.arena(), true);
    for (UOp k : keep) cond = detail::bool_and(cond, k);
    return where_(cond, m[x], invalid(m.arena()));
  }));
}();

/// The rule set the RESHAPE index math is simplified with: tinygrad's `symbolic` (composed from the
/// same families as sets.hpp, plus mop_cleanup), `pm_simplify_valid` and the clause dropping above.
inline constexpr auto mops_symbolic = pm_data_invalid + simple_identities + simple_zeros + simple_const_fold +
                                      simple_bool_arith + simple_casts + simple_where + simple_recombine + mop_cleanup +
                                      commutative + algebra_terms + algebra_where + algebra_fold + algebra_compare +
                                      algebra_reorder + div_and_mod_symbolic;
inline constexpr auto mops_simplify_valid = [] {
  using namespace vars;
  return P::rules(P::rule("simplify under a valid", P::where(c, xw, inv), [](auto& m) -> std::optional<UOp> {
    constexpr OpSet memory{Ops::INDEX, Ops::LOAD, Ops::STORE};
    if (m.root().dtype() != DType::weakint) return std::nullopt;
    if (contains_op(m[x], memory) || contains_op(m[c], memory)) return std::nullopt;
    UOp nx = uop_given_valid(m[c], m[x], mops_symbolic, /*try_simplex=*/false);
    if (nx == m[x]) return std::nullopt;
    return where_(m[c], nx, invalid(m.arena()));
  }));
}();

// the combined sets, built once (not on every call); templates, so only the translation units
// that instantiate apply_movement_op compile them
template <class D = void>
inline constexpr auto mops_pad_rules = mops_symbolic + mops_simplify_valid;
template <class D = void>
inline constexpr auto mops_reshape_rules = mops_symbolic + mops_simplify_valid + mops_drop_and_clauses;

}  // namespace detail

namespace mops {

/// RESHAPE index math for weakint CONST indices within the view's shape: the source's indices as
/// CONSTs; nullopt when an index is not such a constant (the symbolic path handles it).
constexpr std::optional<std::vector<UOp>> const_reshape_indices(Arena& ar, const std::vector<std::int64_t>& in_shape,
                                                                const std::vector<UOp>& idxs,
                                                                const std::vector<std::int64_t>& out_shape) {
  if (idxs.size() != out_shape.size()) return std::nullopt;
  __int128 pos = 0;
  for (std::size_t k = 0; k < idxs.size(); ++k) {
    const UOp c = idxs[k];
    if (c.op() != Ops::CONST || c.dtype() != DType::weakint || c.arg().kind() != ArgKind::int_) return std::nullopt;
    const std::int64_t v = c.arg().as_int();
    if (v < 0 || v >= out_shape[k]) return std::nullopt;
    pos = pos * out_shape[k] + v;
    if (pos > INT64_MAX) return std::nullopt;
  }
  for (auto d : in_shape)
    if (d < 1) return std::nullopt;
  std::vector<UOp> out(in_shape.size());
  for (std::size_t k = in_shape.size(); k-- > 0;) {
    out[k] = iconst(ar, DType::weakint, pos % in_shape[k]);
    if (!out[k].valid()) return std::nullopt;
    pos /= in_shape[k];
  }
  return out;
}

/// The index expressions of a view's source for indices `idxs` of the view (tinygrad's
/// apply_movement_op). RESHAPE index math is simplified symbolically.
template <class Dummy = void>
constexpr std::vector<UOp> apply_movement_op(Ops op, UOp view, const std::vector<std::int64_t>& in_shape,
                                             const std::vector<UOp>& idxs,
                                             const std::vector<std::int64_t>& out_shape) {
  Arena& ar = view.arena();
  std::vector<UOp> out;
  switch (op) {
    case Ops::SHRINK: {
      auto starts = const_list(view.src(1));
      if (!starts || starts->size() != idxs.size()) fail("pm_mops: SHRINK with non-constant or mismatched starts");
      for (std::size_t k = 0; k < idxs.size(); ++k) out.push_back((*starts)[k] == 0 ? idxs[k] : idxs[k] + (*starts)[k]);
      return out;
    }
    case Ops::PERMUTE: {
      auto p = perm_of(view);
      if (!p || p->size() != idxs.size()) fail("pm_mops: PERMUTE with a malformed permutation");
      for (auto k : argsort(*p)) out.push_back(idxs[static_cast<std::size_t>(k)]);
      return out;
    }
    case Ops::FLIP: {
      const Arg& f = view.arg();
      if (!f.is_tuple() || f.size() != idxs.size()) fail("pm_mops: FLIP with a malformed arg");
      for (std::size_t k = 0; k < idxs.size(); ++k) {
        bool flip = f[k].is_bool() ? f[k].as_bool() : (f[k].is_int() && f[k].as_int() != 0);
        out.push_back(flip ? (in_shape[k] - 1) - idxs[k] : idxs[k]);
      }
      return out;
    }
    case Ops::EXPAND: {
      // EXPAND prepends axes: their indices are dropped
      std::size_t n_new = out_shape.size() - in_shape.size();
      for (std::size_t k = n_new; k < idxs.size(); ++k) out.push_back(idxs[k]);
      return out;
    }
    case Ops::PAD: {
      auto lo = const_list(view.src(1)), hi = const_list(view.src(2));
      if (!lo || !hi || lo->size() != idxs.size() || hi->size() != idxs.size()) fail("pm_mops: PAD with non-constant padding");
      for (std::size_t k = 0; k < idxs.size(); ++k) {
        UOp r = idxs[k];
        std::int64_t off = (*lo)[k];
        if (off == 0 && (*hi)[k] == 0) {
          out.push_back(r);
          continue;
        }
        UOp cond = (r >= off) & (r < (in_shape[k] + off));
        cond = pat::graph_rewrite(cond, detail::mops_pad_rules<Dummy>,
                                  pat::rewrite_options{.name = "pad"});
        out.push_back(valid(r - off, cond));
      }
      return out;
    }
    case Ops::RESHAPE: {
      // fast path: in-range constant indices (the lanes of a devectorized value) need no symbolic
      // rewrite: the row-major position re-split by the source's dimensions is plain arithmetic,
      // exactly what the rewrite below folds the index math to
      if (auto c = const_reshape_indices(ar, in_shape, idxs, out_shape)) return *c;
      // simplify the indices first, then name their ranges by position (PLACEHOLDER ranges), so the
      // canonical order of the index math does not depend on the ranges' ids
      UOp sink = ar.make(Ops::SINK, DType::void_, idxs);
      sink = pat::graph_rewrite(sink, detail::mops_symbolic, pat::rewrite_options{.name = "reshape indices"});
      std::vector<std::pair<UOp, UOp>> sub, back;
      std::int64_t n = 0;
      for (UOp r : ranges(sink)) {
        UOp ph = ar.make(Ops::RANGE, r.dtype(), {r.src(0)}, Arg::tuple_of(n++, AxisType::PLACEHOLDER));
        sub.emplace_back(r, ph);
        back.emplace_back(ph, r);
      }
      UOp urngs = substitute(sink, sub);
      // row-major linearization of the view's indices, re-split by the source's dimensions
      std::vector<UOp> axes_in;
      std::int64_t acc = 1;
      for (std::size_t k = out_shape.size(); k-- > 0;) {
        if (k >= urngs.nsrc()) continue;
        UOp s = urngs.src(k);
        axes_in.push_back(ar.make(Ops::MUL, s.dtype(), {iconst_like(s, acc), s}));
        acc *= out_shape[k];
      }
      UOp combined = literal(ar, 0);
      for (UOp t : axes_in) combined = ar.make(Ops::ADD, least_upper_dtype(combined.dtype(), t.dtype()), {combined, t});
      std::vector<UOp> axes_out;
      for (std::size_t k = in_shape.size(); k-- > 0;) {
        UOp d = iconst_like(combined, in_shape[k]);
        axes_out.push_back(ar.make(Ops::FLOORMOD, combined.dtype(), {combined, d}));
        combined = ar.make(Ops::FLOORDIV, combined.dtype(), {combined, d});
      }
      std::vector<UOp> ordered(axes_out.rbegin(), axes_out.rend());
      UOp res = ar.make(Ops::SINK, DType::void_, ordered);
      res = pat::graph_rewrite(res, detail::mops_reshape_rules<Dummy>,
                               pat::rewrite_options{.name = "reshape"});
      res = substitute(res, back);
      if (res.op() != Ops::SINK || res.nsrc() != in_shape.size()) fail("pm_mops: RESHAPE index math lost an index");
      return res.srcs().to_vector();
    }
    default:
      fail("pm_mops: not a movement op");
  }
}

/// INDEX(view, idxs...) pushed through the movement op `r` (tinygrad's _mop_index).
template <class Dummy = void>
constexpr std::optional<UOp> mop_index(UOp r, UOp idx) {
  auto idxs = detail::srcs_from(idx, 1);
  if (!r.shape().has_value() || r.nsrc() == 0 || !r.src(0).shape().has_value()) return std::nullopt;
  const auto rshape = dims(r), sshape = dims(r.src(0));
  if (idxs.size() == rshape.size())
    return mops::index(r.src(0), apply_movement_op(r.op(), r, sshape, idxs, rshape), idx.dtype(), idx.arg());
  if (r.op() == Ops::RESHAPE && idxs.size() < rshape.size()) {
    // a partial INDEX through a RESHAPE that keeps the trailing dimensions
    const std::size_t tail = rshape.size() - idxs.size();
    if (sshape.size() < tail) return std::nullopt;
    const std::size_t prefix = sshape.size() - tail;
    for (std::size_t k = 0; k < tail; ++k)
      if (sshape[prefix + k] != rshape[idxs.size() + k]) return std::nullopt;
    if (prefix == 0) return r.src(0).dtype() == idx.dtype() ? std::optional<UOp>(r.src(0)) : std::nullopt;
    std::vector<std::int64_t> in(sshape.begin(), sshape.begin() + static_cast<std::ptrdiff_t>(prefix));
    std::vector<std::int64_t> outs(rshape.begin(), rshape.begin() + static_cast<std::ptrdiff_t>(idxs.size()));
    UOp ret = mops::index(r.src(0), apply_movement_op(Ops::RESHAPE, r, in, idxs, outs), idx.dtype(), idx.arg());
    if (dims(ret) != dims(idx)) return std::nullopt;
    return ret;
  }
  return std::nullopt;
}

}  // namespace mops

/// INDEX through movement-op views, movement ops / INDEX moved outside AFTER, END of a movement op.
inline constexpr auto pm_mops = [] {
  return P::rules(
      P::rule("INDEX through a movement op", P::op<Ops::INDEX>.any_len(P::in<GroupOp::Movement>.as<"r">),
              [](auto& m) -> std::optional<UOp> { return mops::mop_index(get<"r">(m), m.root()); }),
      // AFTER(MOVE(x), deps...) -> MOVE(AFTER(x, deps...))
      P::rule("movement op outside AFTER",
              P::op<Ops::AFTER>.any_len(P::in<GroupOp::Movement | OpSet{Ops::INDEX}>.as<"r">), [](auto& m) {
                UOp a = m.root(), r = get<"r">(m);
                std::vector<UOp> as{r.src(0)};
                for (UOp d : detail::srcs_from(a, 1)) as.push_back(d);
                std::vector<UOp> rs{with_srcs(a, as)};
                for (UOp s : detail::srcs_from(r, 1)) rs.push_back(s);
                return make_node(a.arena(), r.op(), rs, r.arg());
              }),
      // END(MOVE(x), ranges...) -> END(x, ranges...)
      P::rule("END of a movement op", P::op<Ops::END>.any_len(P::in<GroupOp::Movement>.as<"r">), [](auto& m) {
        UOp e = m.root();
        std::vector<UOp> s{get<"r">(m).src(0)};
        for (UOp d : detail::srcs_from(e, 1)) s.push_back(d);
        return with_srcs(e, s);
      }));
}();

}  // namespace uopcg::symbolic
