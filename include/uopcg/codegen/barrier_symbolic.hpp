// The barrier verifier's check for programs too large (or not closed enough) to enumerate: for every
// pair of LOCAL accesses of one buffer, at least one a STORE, that a barrier-free path joins
// (barrier_program.hpp), try to prove that two different work-items never touch one element.
//
// Each index is split into a part that reads only local ids (computed for every work-item of the
// group) and a rest that does not read them (loop indices, group ids, kernel variables: bounded by
// their value bounds, and known modulo the gcd of their constant factors). When no barrier-free
// path goes around a loop between the two accesses they run in the same iteration of every loop,
// so terms they share (same node, same factor) cancel. Gates and IF conditions that read only
// local ids filter the work-items. A STORE run by two work-items that agree on what its value reads
// writes one value: no race (same_value_per_iteration), also in different iterations when the index
// tells the iteration apart (same_value_per_element). A pair that cannot be proven disjoint is
// reported, saying why: that is the per-buffer rule, for what cannot be analysed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "../symbolic/util.hpp"
#include "barrier_eval.hpp"
#include "barrier_program.hpp"

namespace uopcg::codegen::detail::verifier {

namespace symbolic_check {

using i128 = __int128;
inline constexpr i128 big = static_cast<i128>(1) << 62;

// index = local part (terms reading a local id) + constant + sum of factor * term
struct split_index {
  std::vector<UOp> local_terms;
  std::vector<std::pair<UOp, i128>> terms;
  i128 constant = 0;
  text why_not;  // set when the index cannot be split
};

// Whether the value of u reads only local ids, constants and their arithmetic (else the offender).
constexpr bool local_only(UOp u, UOp& offender) {
  return walk_value(u, [&](UOp x) {
    const bool ok = x.op() == Ops::SPECIAL ? is_local_id(x)
                    : x.op() == Ops::CONST ? integer_like(x.dtype())
                                           : (x.op() == Ops::CAST || GroupOp::ALU.contains(x.op())) && integer_like(x.dtype());
    if (!ok) offender = x;
    return ok;
  });
}
// Whether the value of u is the same for every work-item of a group in one iteration of its loops.
constexpr bool uniform_pure(UOp u) {
  return walk_value(u, [](UOp x) {
    if (x.op() == Ops::SPECIAL) return !is_local_id(x);
    return x.op() == Ops::CONST || x.op() == Ops::RANGE || is_variable(x) ||
           x.op() == Ops::CAST || GroupOp::ALU.contains(x.op());
  });
}
// An integer constant, looking through CASTs (constants are CAST(CONST) after index lowering).
constexpr bool const_value(UOp u, i128& out) {
  while (u.op() == Ops::CAST && u.nsrc() == 1 && integer_like(u.src(0).dtype())) u = u.src(0);
  return symbolic::int_const(u, out);
}
// A term as factor * rest: MUL by a constant and SHL by a constant fold into the factor.
constexpr std::pair<UOp, i128> factored(UOp t) {
  i128 f = 1, c = 0;
  for (;;) {
    while (t.op() == Ops::CAST && t.nsrc() == 1 && integer_like(t.src(0).dtype())) t = t.src(0);
    if (t.op() == Ops::MUL && t.nsrc() == 2 && const_value(t.src(1), c)) f *= c, t = t.src(0);
    else if (t.op() == Ops::MUL && t.nsrc() == 2 && const_value(t.src(0), c)) f *= c, t = t.src(1);
    else if (t.op() == Ops::SHL && t.nsrc() == 2 && const_value(t.src(1), c) && c >= 0 && c < 32) f <<= static_cast<int>(c), t = t.src(0);
    else return {t, f};
    if (f > big || f < -big) return {t, f};
  }
}

constexpr split_index split(const program_view& v, UOp index) {
  split_index s;
  std::vector<UOp> terms;
  symbolic::split_add(index, terms);
  for (UOp t : terms) {
    i128 c = 0;
    if (const_value(t, c)) {
      s.constant += c;
      continue;
    }
    if (local_id_in(t)) {
      UOp offender;
      if (!local_only(t, offender)) {
        s.why_not = cat("its index term ", v.describe(t), " reads the local id together with ", v.describe(offender));
        return s;
      }
      s.local_terms.push_back(t);
      continue;
    }
    s.terms.push_back(factored(t));
  }
  return s;
}

// The bounds of factor * term.
constexpr std::pair<i128, i128> term_bounds(UOp t, i128 f) {
  const i128 lo = t.vmin() == INT64_MIN ? -big : t.vmin(), hi = t.vmax() == INT64_MAX ? big : t.vmax();
  return f >= 0 ? std::pair{lo * f, hi * f} : std::pair{hi * f, lo * f};
}

struct proof {
  bool disjoint = false;
  text why;
};

class prover {
 public:
  constexpr prover(const program_view& v) : v_(v) {
    for (UOp u : v.prog)
      if (is_local_id(u)) add_dim(u);
  }

  // Whether two different work-items can touch one element through accesses a and b; `same_iteration`:
  // the two run in the same iteration of every loop (shared terms cancel). `same_value_ids`: a and b
  // are one STORE whose value reads only these local ids, so work-items agreeing on them write the
  // same value and may share an element.
  // `shared_loops`: positions of loops (enclosing both) whose iteration the two share even when
  // `same_iteration` is false: terms reading only those loops cancel too.
  constexpr proof disjoint(const local_access& a, const local_access& b, bool same_iteration,
                 const std::vector<UOp>* same_value_ids, const std::vector<std::size_t>& shared_loops) {
    proof p;
    for (const local_access* x : {&a, &b})
      if (!x->index.valid()) {
        p.why = cat(v_.line(x->pos), ": ", x->unreadable);
        return p;
      }
    const std::int64_t unit = unit_bytes(v_, a.buffer);
    const std::int64_t upe = std::max<std::int64_t>(1, itemsize(a.buffer.dtype()) / unit);
    const std::int64_t na = std::max<std::int64_t>(1, (a.bytes + unit - 1) / unit), nb = std::max<std::int64_t>(1, (b.bytes + unit - 1) / unit);
    // 1. the value bounds of the two indices alone
    {
      const i128 alo = static_cast<i128>(a.index.vmin()) * upe, ahi = static_cast<i128>(a.index.vmax()) * upe + na - 1;
      const i128 blo = static_cast<i128>(b.index.vmin()) * upe, bhi = static_cast<i128>(b.index.vmax()) * upe + nb - 1;
      if (a.index.vmin() != INT64_MIN && b.index.vmin() != INT64_MIN && a.index.vmax() != INT64_MAX &&
          b.index.vmax() != INT64_MAX && (ahi < blo || bhi < alo)) {
        p.disjoint = true;
        return p;
      }
    }
    // 2. local part per work-item, rest by bounds and divisibility
    split_index sa = split(v_, a.index), sb = split(v_, b.index);
    for (const split_index* s : {&sa, &sb})
      if (!s->why_not.empty()) {
        p.why = cat(v_.line(s == &sa ? a.pos : b.pos), ": ", s->why_not);
        return p;
      }
    auto in_shared_loops = [&](UOp t) {
      return same_iteration || walk_value(t, [&](UOp x) {
               if (x.op() != Ops::RANGE) return true;
               const auto p = v_.position(x);
               return p && std::find(shared_loops.begin(), shared_loops.end(), *p) != shared_loops.end();
             });
    };
    for (auto it = sa.terms.begin(); it != sa.terms.end();) {
      auto jt = std::find(sb.terms.begin(), sb.terms.end(), *it);
      if (jt != sb.terms.end() && uniform_pure(it->first) && in_shared_loops(it->first)) {
        sb.terms.erase(jt);
        it = sa.terms.erase(it);
      } else {
        ++it;
      }
    }
    // D = rest(b) - rest(a): c + (a multiple of g) within [dlo, dhi]
    const i128 c = sb.constant - sa.constant;
    i128 dlo = c, dhi = c, g = 0;
    // (bounds saturate far beyond any buffer: every term is at most 2^124 in size)
    auto clamp = [](i128 x) { return std::clamp<i128>(x, -big * big, big * big); };
    for (const auto& [t, f] : sb.terms) {
      auto [lo, hi] = term_bounds(t, f);
      dlo = clamp(dlo + lo), dhi = clamp(dhi + hi), g = symbolic::gcd(g, f);
    }
    for (const auto& [t, f] : sa.terms) {
      auto [lo, hi] = term_bounds(t, f);
      dlo = clamp(dlo - hi), dhi = clamp(dhi - lo), g = symbolic::gcd(g, f);
    }
    // the work-items each access, and the local part of its index for each
    std::vector<UOp> read;
    for (const split_index* s : {&sa, &sb})
      for (UOp t : s->local_terms) read.push_back(t);
    std::vector<UOp> ga = local_conditions(a), gb = local_conditions(b);
    for (UOp x : ga) read.push_back(x);
    for (UOp x : gb) read.push_back(x);
    if (same_value_ids)
      for (UOp x : *same_value_ids) read.push_back(x);
    std::vector<std::size_t> dims = dims_read(read);
    std::vector<std::size_t> value_dims;  // positions in `dims`
    if (same_value_ids)
      for (std::size_t k = 0; k < dims.size(); ++k)
        for (UOp x : *same_value_ids)
          if (dims_[dims[k]].name == x.arg().as_string()) value_dims.push_back(k);
    auto same_value = [&](std::uint32_t w1, std::uint32_t w2) {
      return same_value_ids && std::all_of(value_dims.begin(), value_dims.end(),
                                           [&](std::size_t k) { return coord(w1, dims, k) == coord(w2, dims, k); });
    };
    std::uint64_t items = 1;
    for (std::size_t d : dims) items *= static_cast<std::uint64_t>(dims_[d].extent);
    bool clones = false;
    for (std::size_t d = 0; d < dims_.size(); ++d)
      clones = clones || (dims_[d].extent > 1 && std::find(dims.begin(), dims.end(), d) == dims.end());
    if (items > 4096) {
      p.why = cat("the work-group (", items, " work-items) is too large for the symbolic check");
      return p;
    }
    std::vector<std::pair<i128, std::uint32_t>> fa, fb;
    for (std::uint32_t w = 0; w < items; ++w) {
      auto leaf = [&](UOp x) -> std::optional<ival> {
        if (x.op() != Ops::SPECIAL) return std::nullopt;
        for (std::size_t k = 0; k < dims.size(); ++k)
          if (dims_[dims[k]].name == x.arg().as_string()) return ival::of(coord(w, dims, k));
        return ival::of(0);  // a local id no term reads
      };
      auto part = [&](const split_index& s, const std::vector<UOp>& conds, std::vector<std::pair<i128, std::uint32_t>>& out) {
        for (UOp cnd : conds) {
          const ival x = evaluate(cnd, leaf);
          if (x.kind == ival::known && x.v == 0) return;
        }
        i128 f = 0;
        for (UOp t : s.local_terms) {
          const ival x = evaluate(t, leaf);
          if (x.kind == ival::invalid) return;
          if (x.kind != ival::known) {
            f = big;
            break;
          }
          f += x.v;
        }
        if (f != big) out.push_back({f, w});
      };
      part(sa, ga, fa);
      part(sb, gb, fb);
    }
    std::sort(fb.begin(), fb.end());
    // overlap: (F_a - F_b - D) * upe in (-na, nb), i.e. F_a - F_b - D = k for k in [kmin, kmax]
    const i128 kmin = floor_div(-na, upe) + 1, kmax = floor_div(nb - 1, upe);
    auto hits = [&](i128 delta) {
      i128 lo = std::max<i128>(delta - kmax, dlo), hi = std::min<i128>(delta - kmin, dhi);
      if (lo > hi) return false;
      if (g == 0) return lo <= c && c <= hi;
      const i128 first = lo + symbolic::floor_mod(c - lo, g);
      return first <= hi;
    };
    std::uint64_t work = 0;
    for (const auto& [va, wa] : fa) {
      const i128 from = va - dhi - kmax, to = va - dlo - kmin;
      auto it = std::lower_bound(fb.begin(), fb.end(), std::pair<i128, std::uint32_t>{from, 0});
      for (; it != fb.end() && it->first <= to; ++it) {
        if (++work > (1u << 22)) {
          p.why = "the symbolic check gave up (too many candidate pairs of work-items)";
          return p;
        }
        if ((it->second == wa && !clones) || same_value(wa, it->second) || !hits(va - it->first)) continue;
        if (dims.empty()) {  // no local id is read: every work-item is one of these
          p.why = cat("two work-items that differ only in a local id the indices do not read (", v_.line(a.pos));
          if (b.pos != a.pos) p.why << "; " << v_.line(b.pos);
          p.why << ")";
        } else {
          p.why = cat("the work-items ", name(wa, dims), " (", v_.line(a.pos), ") and ");
          // (no ?: between two texts: g++ 12 destroys such a temporary twice in constant evaluation)
          if (it->second == wa) p.why << "another that differs only in a local id the indices do not read";
          else p.why << name(it->second, dims);
          p.why << " (" << v_.line(b.pos) << ")";
        }
        p.why << " may touch one element for values of the other index terms within their bounds";
        return p;
      }
    }
    p.disjoint = true;
    return p;
  }

 private:
  struct dim {
    text name;
    std::int64_t extent;
  };
  const program_view& v_;
  std::vector<dim> dims_;

  constexpr void add_dim(UOp s) {
    const std::string_view nm = s.arg().as_string();
    for (const dim& d : dims_)
      if (d.name == nm) return;
    dims_.push_back({text(nm), std::max<std::int64_t>(extent_of(s), 1)});
  }
  constexpr std::vector<std::size_t> dims_read(const std::vector<UOp>& roots) {
    std::vector<std::size_t> out;
    auto see = [&](UOp x) {
      if (!is_local_id(x)) return;
      add_dim(x);
      for (std::size_t d = 0; d < dims_.size(); ++d)
        if (dims_[d].name == x.arg().as_string() && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    };
    for (UOp r : roots)
      walk_value(r, [&](UOp x) {
        see(x);
        return true;
      });
    return out;
  }
  constexpr std::int64_t coord(std::uint32_t w, const std::vector<std::size_t>& dims, std::size_t k) const {
    std::uint64_t x = w;
    for (std::size_t j = 0; j < k; ++j) x /= static_cast<std::uint64_t>(dims_[dims[j]].extent);
    return static_cast<std::int64_t>(x % static_cast<std::uint64_t>(dims_[dims[k]].extent));
  }
  constexpr text name(std::uint32_t w, const std::vector<std::size_t>& dims) const {
    text s;
    for (std::size_t k = 0; k < dims.size(); ++k) s << (k ? ", " : "") << dims_[dims[k]].name << "=" << coord(w, dims, k);
    if (s.empty()) s << "two work-items";
    return s;
  }
  // The conjuncts of the access's gates and enclosing IF conditions that read only local ids.
  constexpr std::vector<UOp> local_conditions(const local_access& a) const {
    std::vector<UOp> conds, out;
    for (UOp g : a.gates) conds.push_back(g);
    for (std::size_t c : v_.enclosing(a.pos))
      if (v_.prog[c].op() == Ops::IF) conds.push_back(v_.prog[c].src(0));
    std::vector<UOp> parts;
    for (UOp c : conds) {
      parts.clear();
      symbolic::split_tree(Ops::AND, c, parts);
      for (UOp p : parts) {
        UOp offender;
        if (local_id_in(p) && local_only(p, offender)) out.push_back(p);
      }
    }
    return out;
  }
  static constexpr i128 floor_div(i128 x, i128 y) { return symbolic::floor_div(x, y); }
};

}  // namespace symbolic_check

/// Whether two work-items running the STORE `a` in one barrier interval write the same value when they
/// agree on the local ids it reads (`deps`): the value is traced, and reads no enclosing loop unless no
/// barrier-free path goes around a loop from the store back to itself (then the work-items of one
/// interval are in one iteration). Two work-items writing one element the same value is no race.
constexpr bool same_value_per_iteration(const program_view& v, const local_access& a, const value_dependencies& deps,
                                     bool carried) {
  if (deps.untraced) return false;
  if (!carried) return true;
  const std::vector<std::size_t> around = v.enclosing(a.pos);
  return std::none_of(deps.ranges.begin(), deps.ranges.end(),
                      [&](std::size_t r) { return std::find(around.begin(), around.end(), r) != around.end(); });
}

/// Whether two work-items running the STORE `a` write the same value wherever they write one element,
/// in whatever iterations they are (`deps` as for same_value_per_iteration). The two may be in
/// different iterations only of the loops a barrier-free path around the store crosses; the index is
/// a constant, terms `c * r` over those loops far enough apart that two iterations never touch one
/// element (each stride at least the span of the smaller ones and the access's width), and terms both
/// work-items evaluate alike (on the local ids the value reads, the other enclosing loops and
/// constants); every loop of the first kind the value reads is one of its terms. A buffer every
/// work-item fills alike in a loop (`for r: buf[r] = f(r)`, the stages of a kernel computed
/// redundantly per work-item, also per local slice `buf[lidx1 * n + r]`) is no race.
constexpr bool same_value_per_element(const program_view& v, const local_access& a, const value_dependencies& deps,
                                      const std::vector<std::size_t>& shared_loops) {
  using symbolic_check::i128;
  if (deps.untraced || !a.index.valid()) return false;
  struct term {
    std::size_t range;
    i128 stride, extent;
  };
  std::vector<term> terms;
  std::vector<UOp> parts;
  symbolic::split_tree(Ops::ADD, a.index, parts);
  const std::vector<std::size_t> around = v.enclosing(a.pos);
  std::vector<std::size_t> varying;  // the loops around the store whose iteration two runs of it may not share
  for (std::size_t c : around)
    if (v.prog[c].op() == Ops::RANGE && std::find(shared_loops.begin(), shared_loops.end(), c) == shared_loops.end())
      varying.push_back(c);
  auto is_varying = [&](std::size_t p) { return std::find(varying.begin(), varying.end(), p) != varying.end(); };
  // a part both work-items evaluate alike: integer arithmetic on constants, the local ids the value
  // reads and enclosing loops no barrier-free path goes around
  auto shared = [&](UOp t) {
    return walk_value(t, [&](UOp x) {
      if (x.op() == Ops::SPECIAL)
        return is_local_id(x) && (extent_of(x) <= 1 || std::find(deps.local_ids.begin(), deps.local_ids.end(), x) !=
                                                           deps.local_ids.end());
      if (x.op() == Ops::RANGE) {
        const auto p = v.position(x);
        return p && std::find(around.begin(), around.end(), *p) != around.end() && !is_varying(*p);
      }
      return is_variable(x) ||
             ((x.op() == Ops::CONST || x.op() == Ops::CAST || GroupOp::ALU.contains(x.op())) && integer_like(x.dtype()));
    });
  };
  for (UOp t : parts) {
    if (t.op() == Ops::CONST || shared(t)) continue;
    UOp r = t;
    i128 c = 1;
    if ((t.op() == Ops::MUL || t.op() == Ops::SHL) && t.src(1).op() == Ops::CONST && t.src(1).arg().is_int()) {
      const std::int64_t k = t.src(1).arg().as_int();
      if (t.op() == Ops::SHL && (k < 0 || k > 62)) return false;
      r = t.src(0), c = t.op() == Ops::SHL ? i128{1} << k : i128{k};
    }
    const std::optional<std::size_t> p = r.op() == Ops::RANGE ? v.position(r) : std::nullopt;
    if (!p || c <= 0 || !is_varying(*p) || extent_of(r) == INT64_MAX) return false;
    if (std::any_of(terms.begin(), terms.end(), [&](const term& x) { return x.range == *p; })) return false;
    terms.push_back({*p, c, extent_of(r)});
  }
  for (std::size_t r : deps.ranges)
    if (is_varying(r) && std::none_of(terms.begin(), terms.end(), [&](const term& x) { return x.range == r; }))
      return false;
  std::sort(terms.begin(), terms.end(), [](const term& x, const term& y) { return x.stride < y.stride; });
  const std::int64_t item = std::max<std::int64_t>(1, itemsize(a.buffer.dtype()));
  i128 span = std::max<i128>(1, (a.bytes + item - 1) / item);  // elements one iteration's access covers
  for (const term& t : terms) {
    if (t.stride < span) return false;
    span += t.stride * (t.extent - 1);
  }
  return true;
}

/// The symbolic check of every pair of accesses a barrier-free path joins.
constexpr std::vector<BarrierViolation> symbolic_races(const program_view& v) {
  std::vector<BarrierViolation> out;
  if (v.accesses.empty()) return out;
  const access_paths paths = barrier_free_paths(v);
  barrier_free_reach reach(v);
  symbolic_check::prover prover(v);
  const std::size_t m = v.accesses.size();
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = i; j < m; ++j) {
      const local_access& A = v.accesses[i];
      const local_access& B = v.accesses[j];
      if (A.buffer != B.buffer || (!A.is_store && !B.is_store)) continue;
      const std::uint8_t ij = paths.at(i, j), ji = paths.at(j, i);
      if (i != j && ij == 0 && ji == 0) continue;
      if (i == j && !A.is_store) continue;
      // the same STORE run by two work-items is always in one barrier interval
      const bool carried = ((ij | ji) & access_paths::around) != 0;
      std::optional<value_dependencies> deps;
      // the loops of which the two accesses run one iteration when no barrier separates them
      // (no ?: between two vectors: g++ 12 destroys such a temporary twice in constant evaluation)
      std::vector<std::size_t> shared_loops;
      if (carried) shared_loops = reach.shared_loops(A.pos, B.pos);
      if (i == j && A.is_store) {
        deps = store_value_dependencies(v, A.pos);
        if (!same_value_per_iteration(v, A, *deps, carried) && !same_value_per_element(v, A, *deps, shared_loops))
          deps.reset();
      }
      const symbolic_check::proof p =
          prover.disjoint(A, B, !carried, deps ? &deps->local_ids : nullptr, shared_loops);
      if (p.disjoint) continue;
      auto violation = [&](const local_access& from, const local_access& to, std::uint8_t how) {
        BarrierViolation x;
        const bool waw = from.is_store && to.is_store;
        x.kind = waw ? BarrierViolationKind::write_after_write
                     : from.is_store ? BarrierViolationKind::read_after_write : BarrierViolationKind::write_after_read;
        x.loop_carried = how == access_paths::around;
        x.proven = false;
        const local_access& S = from.is_store ? from : to;
        const local_access& L = from.is_store ? to : from;
        x.store_pos = S.pos;
        x.load_pos = L.pos;
        x.store = v.prog[S.pos];
        x.load = v.prog[L.pos];
        x.buffer = A.buffer;
        text msg = cat("barrier verifier: ", name(x.kind), x.loop_carried ? " across a loop's back edge" : "",
                       " on LOCAL buffer ", v.describe(A.buffer), ": ");
        if (waw && &from == &to) msg << "the STORE " << v.line(S.pos) << " is run by two work-items";
        else if (waw) msg << "the STORE " << v.line(from.pos) << " reaches the STORE " << v.line(to.pos);
        else if (from.is_store) msg << "the STORE " << v.line(S.pos) << " reaches the LOAD " << v.line(L.pos);
        else msg << "the LOAD " << v.line(L.pos) << " reaches the STORE " << v.line(S.pos);
        msg << " without a BARRIER in between, and the accesses could not be proven disjoint: " << p.why;
        x.message = std::move(msg);
        out.push_back(std::move(x));
      };
      if (i == j) {
        violation(A, A, access_paths::straight);
        continue;
      }
      auto how = [](std::uint8_t r) { return (r & access_paths::straight) ? access_paths::straight : access_paths::around; };
      if (A.is_store && B.is_store) {
        violation(A, B, how(ij | ji));
        continue;
      }
      if (ij) violation(A, B, how(ij));
      if (ji) violation(B, A, how(ji));
    }
  stable_sort_violations(out, [](const BarrierViolation& p, const BarrierViolation& q) {
    return (p.kind == BarrierViolationKind::write_after_write) < (q.kind == BarrierViolationKind::write_after_write);
  });
  return out;
}

}  // namespace uopcg::codegen::detail::verifier
