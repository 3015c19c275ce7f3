// Movement ops (RESHAPE, PERMUTE, EXPAND, SHRINK, PAD, FLIP) and INDEX: the second rule set of
// tinygrad/schedule/rangeify.py's pm_mops (mop_cleanup, the first, is in mop_cleanup.hpp, part of symbolic_simple).
//   pm_mops     — an INDEX over a movement-op view becomes an INDEX of the view's source with the
//                 index arithmetic of the movement op; movement ops (and INDEX) move outside AFTER,
//                 and an END of a movement op ends its source.
// pm_mops needs symbolic simplification for RESHAPE index math; to keep the include graph acyclic
// (sets.hpp does not include this header) it composes that rule set here from the family headers
// (the same families as `symbolic`).
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
#include "mop_cleanup.hpp"
#include "simple.hpp"
#include "util.hpp"
#include "valid.hpp"

namespace uopcg::symbolic {


// --- pm_mops ---------------------------------------------------------------------------------------

namespace detail {

/// where(cond, x, Invalid): the AND clauses of cond that share no range with x are dropped
/// (tinygrad's pm_drop_and_clauses; used by the RESHAPE index math).
inline constexpr auto mops_drop_and_clauses = [] {
  using namespace vars;
  return pat::rules(pat::rule("drop clauses without x's ranges", pat::where(c, x, inv), [](auto& m) -> std::optional<UOp> {
    std::vector<UOp> clauses, keep;
    mops::split_and(m[c], clauses);
    const auto xr = range_ids(m[x]);
    bool dropped = false;
    for (UOp cl : clauses) {
      bool shares = false;
      for (node_id r : range_ids(cl))
        for (node_id q : xr) shares |= r == q;
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
  using enum Ops;
  using enum DType;
  return pat::rules(pat::rewrite(
      "simplify under a valid", pat::where(c, xw, inv).dtype<weakint>(),
      [](auto& m) -> std::optional<UOp> {
        const UOp nx = uop_given_valid(m[c], m[x], mops_symbolic, /*try_simplex=*/false);
        if (nx == m[x]) return std::nullopt;
        return where_(m[c], nx, invalid(m.arena()));
      },
      [](auto& m) {
        constexpr OpSet memory{INDEX, LOAD, STORE};
        return !contains_op(m[x], memory) && !contains_op(m[c], memory);
      }));
}();

// the combined sets, built once (not on every call); templates, so only the translation units
// that instantiate apply_movement_op compile them
template <class D = void>
inline constexpr auto mops_pad_rules = mops_symbolic + mops_simplify_valid;
template <class D = void>
inline constexpr auto mops_reshape_rules = mops_symbolic + mops_simplify_valid + mops_drop_and_clauses;

/// RESHAPE index math for in-range weakint CONST indices: `idx(k)` for k < out.size() are the
/// view's indices, `out` its shape, `in` its source's; writes the source's indices as CONSTs to
/// res[0, in.size()) (the row-major position re-split by in's dimensions, exactly what the
/// symbolic rewrite folds such indices to). False when an index is not such a constant or a size
/// is out of int64's reach: the symbolic path handles it. Shapes are vectors or shape views.
template <class In, class Out, class Idx>
constexpr bool resplit_const_indices(Arena& ar, const In& in, const Out& out, Idx idx, UOp* res) {
  __int128 pos = 0;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const UOp c = idx(k);
    if (c.op() != Ops::CONST || c.dtype() != DType::weakint || c.arg().kind() != ArgKind::int_) return false;
    const std::int64_t v = c.arg().as_int();
    if (v < 0 || v >= out[k]) return false;
    pos = pos * out[k] + v;
    if (pos > INT64_MAX) return false;
  }
  for (std::size_t k = 0; k < in.size(); ++k)
    if (in[k] < 1) return false;
  for (std::size_t k = in.size(); k-- > 0;) {
    res[k] = iconst(ar, DType::weakint, pos % in[k]);
    if (!res[k].valid()) return false;
    pos /= in[k];
  }
  return true;
}
}  // namespace detail

namespace mops {

/// tinygrad's row-major sum 0 + c_n*i_n + ... + c_0*i_0 of a view's indices (idxs: the sources of
/// `sink`; c_k: the strides of `shape`), which the RESHAPE index math then simplifies.
constexpr UOp linear_index_unfolded(Arena& ar, UOp sink, const std::vector<std::int64_t>& shape) {
  std::vector<UOp> terms;
  __int128 acc = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (i >= sink.nsrc()) continue;
    UOp s = sink.src(i);
    terms.push_back(ar.make(Ops::MUL, s.dtype(), {iconst_like(s, acc), s}));
    acc *= shape[i];
    if (acc > INT64_MAX || acc < INT64_MIN) fail("pm_mops: a RESHAPE view with more elements than an int64 index counts");
  }
  UOp combined = literal(ar, 0);
  for (UOp t : terms) combined = ar.make(Ops::ADD, least_upper_dtype(combined.dtype(), t.dtype()), {combined, t});
  return combined;
}
/// The same sum with what the simplifying rewrite would do first already done, when every index is
/// weakint: constant indices summed into one trailing constant, a stride of 1 left out, each stride
/// after its index. The rewrite then reaches the normal form with a fraction of the steps (a lane of
/// a devectorized LOCAL tile spent ~70k instructions there, half of that now). It reaches the same
/// normal form as from tinygrad's sum on every graph we have: the corpus stage dumps
/// (tests/codegen/pipeline: matmul_64 and dmm_stage_local take this path) and the 620 oracle
/// kernels (tools/tinygrad_oracle.py) are byte-identical either way.
constexpr UOp linear_index(Arena& ar, UOp sink, const std::vector<std::int64_t>& shape) {
  using enum Ops;
  using enum DType;
  for (UOp s : sink.srcs())
    if (s.dtype() != weakint) return linear_index_unfolded(ar, sink, shape);
  __int128 acc = 1, folded = 0;
  std::vector<UOp> terms;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (i >= sink.nsrc()) continue;
    UOp s = sink.src(i);
    if (s.op() == CONST && s.arg().kind() == ArgKind::int_) folded += acc * s.arg().as_int();
    else terms.push_back(acc == 1 ? s : ar.make(MUL, weakint, {s, iconst(ar, weakint, acc)}));
    acc *= shape[i];
    if (acc > INT64_MAX || acc < INT64_MIN || folded > INT64_MAX || folded < INT64_MIN)
      return linear_index_unfolded(ar, sink, shape);  // hostile sizes: left to the rewrite
  }
  UOp combined;
  for (UOp t : terms) combined = combined ? ar.make(ADD, weakint, {combined, t}) : t;
  if (!combined) return iconst(ar, weakint, folded);
  if (folded != 0) combined = ar.make(ADD, weakint, {combined, iconst(ar, weakint, folded)});
  return combined;
}

/// The source's index expressions of a RESHAPE view for its indices `idxs`, by symbolic rewrite
/// (apply_movement_op's RESHAPE case, after its fast path for constant indices).
template <class Dummy = void>
constexpr std::vector<UOp> reshape_indices(Arena& ar, const std::vector<std::int64_t>& in_shape,
                                           const std::vector<UOp>& idxs, const std::vector<std::int64_t>& out_shape) {
  using enum Ops;
  using enum DType;
  // simplify the indices first, then name their ranges by position (PLACEHOLDER ranges), so the
  // canonical order of the index math does not depend on the ranges' ids
  UOp sink = ar.make(SINK, void_, idxs);
  sink = pat::graph_rewrite(sink, detail::mops_symbolic, pat::rewrite_options{.name = "reshape indices"});
  std::vector<std::pair<UOp, UOp>> sub, back;
  std::int64_t n = 0;
  for (UOp r : ranges(sink)) {
    UOp ph = ar.make(RANGE, r.dtype(), {r.src(0)}, Arg::tuple_of(n++, AxisType::PLACEHOLDER));
    sub.emplace_back(r, ph);
    back.emplace_back(ph, r);
  }
  UOp urngs = substitute(sink, sub);
  // row-major linearization of the view's indices, re-split by the source's dimensions
  UOp combined = linear_index(ar, urngs, out_shape);
  std::vector<UOp> axes_out;
  for (std::size_t k = in_shape.size(); k-- > 0;) {
    UOp d = iconst_like(combined, in_shape[k]);
    axes_out.push_back(ar.make(FLOORMOD, combined.dtype(), {combined, d}));
    combined = ar.make(FLOORDIV, combined.dtype(), {combined, d});
  }
  std::vector<UOp> ordered(axes_out.rbegin(), axes_out.rend());
  UOp res = ar.make(SINK, void_, ordered);
  res = pat::graph_rewrite(res, detail::mops_reshape_rules<Dummy>, pat::rewrite_options{.name = "reshape"});
  res = substitute(res, back);
  if (res.op() != SINK || res.nsrc() != in_shape.size()) fail("pm_mops: RESHAPE index math lost an index");
  return res.srcs().to_vector();
}

/// The index expressions of a view's source for indices `idxs` of the view (tinygrad's
/// apply_movement_op). RESHAPE index math is simplified symbolically.
template <class Dummy = void>
constexpr std::vector<UOp> apply_movement_op(Ops op, UOp view, const std::vector<std::int64_t>& in_shape,
                                             const std::vector<UOp>& idxs,
                                             const std::vector<std::int64_t>& out_shape) {
  using enum Ops;
  Arena& ar = view.arena();
  std::vector<UOp> out;
  out.reserve(in_shape.size());
  switch (op) {
    case SHRINK: {
      auto starts = const_list(view.src(1));
      if (!starts || starts->size() != idxs.size()) fail("pm_mops: SHRINK with non-constant or mismatched starts");
      for (std::size_t k = 0; k < idxs.size(); ++k) out.push_back((*starts)[k] == 0 ? idxs[k] : idxs[k] + (*starts)[k]);
      return out;
    }
    case PERMUTE: {
      auto p = perm_of(view);
      if (!p || p->size() != idxs.size()) fail("pm_mops: PERMUTE with a malformed permutation");
      for (auto k : argsort(*p)) out.push_back(idxs[static_cast<std::size_t>(k)]);
      return out;
    }
    case FLIP: {
      const Arg& f = view.arg();
      if (!f.is_tuple() || f.size() != idxs.size()) fail("pm_mops: FLIP with a malformed arg");
      for (std::size_t k = 0; k < idxs.size(); ++k) {
        bool flip = f[k].is_bool() ? f[k].as_bool() : (f[k].is_int() && f[k].as_int() != 0);
        out.push_back(flip ? (in_shape[k] - 1) - idxs[k] : idxs[k]);
      }
      return out;
    }
    case EXPAND: {
      // EXPAND prepends axes: their indices are dropped
      std::size_t n_new = out_shape.size() - in_shape.size();
      for (std::size_t k = n_new; k < idxs.size(); ++k) out.push_back(idxs[k]);
      return out;
    }
    case PAD: {
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
    case RESHAPE: {
      // fast path: in-range constant indices (the lanes of a devectorized value) need no symbolic
      // rewrite
      out.resize(in_shape.size());
      if (idxs.size() == out_shape.size() &&
          detail::resplit_const_indices(ar, in_shape, out_shape, [&](std::size_t k) { return idxs[k]; }, out.data()))
        return out;
      return reshape_indices<Dummy>(ar, in_shape, idxs, out_shape);
    }
    default:
      fail("pm_mops: not a movement op");
  }
}

/// INDEX(RESHAPE(x), c...) with in-range weakint constants (a devectorized lane): INDEX(x, c'...),
/// the constants re-split by x's dimensions; apply_movement_op's fast path, without the shape and
/// index vectors (this runs once per lane of every shaped load and store).
/// nullopt when an index is not such a constant.
constexpr std::optional<UOp> const_reshape_index(UOp r, UOp idx) {
  const auto out = r.shape(), in = r.src(0).shape();
  if (idx.nsrc() - 1 != out.size()) return std::nullopt;
  Arena& ar = r.arena();
  Arena::scratch_vector<UOp> s(ar);
  s->resize(in.size());
  if (!detail::resplit_const_indices(ar, in, out, [&](std::size_t k) { return idx.src(k + 1); }, s->data()))
    return std::nullopt;
  return mops::index(r.src(0), std::span<const UOp>(s->data(), s->size()), idx.dtype(), idx.arg());
}

/// INDEX(view, idxs...) pushed through the movement op `r` (tinygrad's _mop_index).
template <class Dummy = void>
constexpr std::optional<UOp> mop_index(UOp r, UOp idx) {
  using enum Ops;
  if (!r.shape().has_value() || r.nsrc() == 0 || !r.src(0).shape().has_value()) return std::nullopt;
  if (r.op() == RESHAPE)
    if (auto u = const_reshape_index(r, idx)) return u;
  auto idxs = detail::srcs_from(idx, 1);
  const auto rshape = dims(r), sshape = dims(r.src(0));
  if (idxs.size() == rshape.size()) {  // (a RESHAPE's constant indices were tried above)
    // not a conditional expression of two vector prvalues: g++ 12 destroys its temporary twice in
    // constant evaluation ("deallocation of already deallocated storage")
    std::vector<UOp> moved;
    if (r.op() == RESHAPE) moved = reshape_indices<Dummy>(r.arena(), sshape, idxs, rshape);
    else moved = apply_movement_op(r.op(), r, sshape, idxs, rshape);
    return mops::index(r.src(0), moved, idx.dtype(), idx.arg());
  }
  if (r.op() == RESHAPE && idxs.size() < rshape.size()) {
    // a partial INDEX through a RESHAPE that keeps the trailing dimensions
    const std::size_t tail = rshape.size() - idxs.size();
    if (sshape.size() < tail) return std::nullopt;
    const std::size_t prefix = sshape.size() - tail;
    for (std::size_t k = 0; k < tail; ++k)
      if (sshape[prefix + k] != rshape[idxs.size() + k]) return std::nullopt;
    if (prefix == 0) return r.src(0).dtype() == idx.dtype() ? std::optional<UOp>(r.src(0)) : std::nullopt;
    std::vector<std::int64_t> in(sshape.begin(), sshape.begin() + static_cast<std::ptrdiff_t>(prefix));
    std::vector<std::int64_t> outs(rshape.begin(), rshape.begin() + static_cast<std::ptrdiff_t>(idxs.size()));
    UOp ret = mops::index(r.src(0), apply_movement_op(RESHAPE, r, in, idxs, outs), idx.dtype(), idx.arg());
    if (dims(ret) != dims(idx)) return std::nullopt;
    return ret;
  }
  return std::nullopt;
}

}  // namespace mops

/// INDEX through movement-op views, movement ops / INDEX moved outside AFTER, END of a movement op.
inline constexpr auto pm_mops = [] {
  using enum Ops;
  return pat::rules(
      pat::rule("INDEX through a movement op", pat::op<INDEX>.any_len(pat::in<GroupOp::Movement>.as<"r">),
              [](auto& m) { return mops::mop_index(get<"r">(m), m.root()); }),
      // AFTER(MOVE(x), deps...) -> MOVE(AFTER(x, deps...))
      pat::rule("movement op outside AFTER",
              pat::op<AFTER>.any_len(pat::in<GroupOp::Movement | OpSet{INDEX}>.as<"r">), [](auto& m) {
                UOp a = m.root(), r = get<"r">(m);
                std::vector<UOp> as{r.src(0)};
                for (UOp d : detail::srcs_from(a, 1)) as.push_back(d);
                std::vector<UOp> rs{with_srcs(a, as)};
                for (UOp s : detail::srcs_from(r, 1)) rs.push_back(s);
                return make_node(a.arena(), r.op(), rs, r.arg());
              }),
      // END(MOVE(x), ranges...) -> END(x, ranges...)
      pat::rule("END of a movement op", pat::op<END>.any_len(pat::in<GroupOp::Movement>.as<"r">), [](auto& m) {
        UOp e = m.root();
        std::vector<UOp> s{get<"r">(m).src(0)};
        for (UOp d : detail::srcs_from(e, 1)) s.push_back(d);
        return with_srcs(e, s);
      }));
}();

}  // namespace uopcg::symbolic
