// A node's value bounds, derived once when the arena creates it (the Arena member derive_bounds:
// core/arena.hpp declares it and includes this header).
#pragma once

#include <cstdint>

#include "../arena.hpp"

namespace uopcg {

/// Value bounds (vmin/vmax) of integer and bool nodes, computed once when the node is created; the
/// analysis of the symbolic module (docs/symbolic.md "Value bounds"). Sound under the evaluation
/// semantics of symbolic/fold.hpp: a concrete-width result whose interval leaves the dtype's range
/// (it may wrap) gets the dtype's full range; weakint saturates at the int64 limits, which then mean
/// "unbounded". Floats are not tracked (INT64_MIN/INT64_MAX). An empty RANGE has vmin 0, vmax -1.
constexpr void Arena::derive_bounds(node_id id) {
  using i128 = __int128;
  const detail::Node& n = nodes_[id];
  detail::NodeCold& out = cold_[id];
  const DType dt = n.dtype;
  if (!(is_int(dt) || is_bool(dt))) {
    out.vmin = INT64_MIN;
    out.vmax = INT64_MAX;
    return;
  }
  const i128 dmin = int_min(dt);
  const i128 dmax = int_max_u(dt) > static_cast<std::uint64_t>(INT64_MAX) ? static_cast<i128>(INT64_MAX)
                                                                          : static_cast<i128>(int_max_u(dt));
  const bool weak = dt == DType::weakint;
  i128 lo = dmin, hi = dmax;
  // a source as the rules below read it (its record and its bounds)
  struct src_view {
    Ops op;
    DType dtype;
    std::uint32_t arg;
    std::int64_t vmin, vmax;
  };
  auto s = [&](std::uint32_t i) -> src_view {
    const node_id k = srcs_[n.src_off + i];
    return {nodes_[k].op, nodes_[k].dtype, nodes_[k].arg, cold_[k].vmin, cold_[k].vmax};
  };
  auto is_invalid_const = [&](const src_view& x) { return x.op == Ops::CONST && args_[x.arg].is_invalid(); };
  auto unbounded = [](const src_view& x) { return x.vmin == INT64_MIN || x.vmax == INT64_MAX; };
  // the interval [l, h]; outside the dtype's range: full range (wraps), or saturated for weakint
  auto set = [&](i128 l, i128 h) {
    if (l > h) { i128 t = l; l = h; h = t; }
    if (weak) {
      lo = l < dmin ? dmin : l;
      hi = h > dmax ? dmax : h;
    } else if (l >= dmin && h <= dmax) {
      lo = l;
      hi = h;
    }
  };
  auto min4 = [](i128 a, i128 b, i128 c, i128 d) {
    i128 m = a < b ? a : b;
    m = m < c ? m : c;
    return m < d ? m : d;
  };
  auto max4 = [](i128 a, i128 b, i128 c, i128 d) {
    i128 m = a > b ? a : b;
    m = m > c ? m : c;
    return m > d ? m : d;
  };
  auto floordiv = [](i128 a, i128 b) {
    i128 q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  };
  auto floormod = [&](i128 a, i128 b) { return a - floordiv(a, b) * b; };
  const bool binary = n.nsrc == 2;
  // an operand whose range leaves the dtype it is computed in is converted (wraps): nothing is known
  auto src_fits = [&](const src_view& x, DType d) {
    if (is_invalid_const(x) || d == DType::weakint) return true;
    const i128 l = int_min(d);
    const i128 h = int_max_u(d) > static_cast<std::uint64_t>(INT64_MAX) ? static_cast<i128>(INT64_MAX) : static_cast<i128>(int_max_u(d));
    return x.vmin >= l && x.vmax <= h;
  };
  if (GroupOp::ALU.contains(n.op)) {
    if (GroupOp::Comparison.contains(n.op)) {
      if (binary) {
        const DType cd = least_upper_dtype(s(0).dtype, s(1).dtype);
        if ((is_int(cd) || is_bool(cd)) && (!src_fits(s(0), cd) || !src_fits(s(1), cd))) {
          out.vmin = 0;
          out.vmax = 1;
          return;
        }
      }
    } else {
      for (std::uint32_t i = 0; i < n.nsrc; ++i) {
        if ((n.op == Ops::WHERE && i == 0) || ((n.op == Ops::SHL || n.op == Ops::SHR) && i == 1)) continue;
        if (!src_fits(s(i), dt)) {
          out.vmin = static_cast<std::int64_t>(lo);
          out.vmax = static_cast<std::int64_t>(hi);
          return;
        }
      }
    }
  }
  switch (n.op) {
    case Ops::CONST: {
      const Arg& a = args_[n.arg];
      if (a.kind() == ArgKind::int_ || a.is_bool()) {
        i128 v = a.as_int();
        if (is_bool(dt)) v = v != 0;
        if (v >= dmin && v <= dmax) lo = hi = v;
      } else if (a.kind() == ArgKind::uint_ && !weak) {
        lo = dmin;  // beyond INT64_MAX: not representable here
      }
      break;
    }
    case Ops::RANGE: case Ops::SPECIAL:
      // [0, bound - 1]; an empty range keeps vmax = -1 < vmin
      if (n.nsrc > 0) {
        lo = 0;
        hi = s(0).vmax == INT64_MAX ? dmax : static_cast<i128>(s(0).vmax) - 1;
        if (hi > dmax) hi = dmax;
        if (hi < dmin) hi = dmin;
      }
      break;
    case Ops::PARAM: case Ops::BUFFER: {
      // a variable's bounds: ints, or bools (load collapse's stand-in for a bool input it lifts)
      const Arg& p = args_[n.arg];
      auto bound = [](const Arg& b) { return b.kind() == ArgKind::int_ || b.kind() == ArgKind::boolean; };
      if (p.kind() == ArgKind::param_arg && p[2].is_tuple() && p[2].size() == 2 && bound(p[2][0]) && bound(p[2][1]))
        set(p[2][0].as_int(), p[2][1].as_int());
      break;
    }
    case Ops::ADD: case Ops::SUB: case Ops::MUL: case Ops::MAX:
      if (!binary) break;
      if (is_bool(dt)) {  // bool ADD / MAX are OR, MUL is AND
        if (n.op == Ops::MUL) set(s(0).vmin & s(1).vmin, s(0).vmax & s(1).vmax);
        else if (n.op != Ops::SUB) set(s(0).vmin | s(1).vmin, s(0).vmax | s(1).vmax);
        break;
      }
      if (!weak && (unbounded(s(0)) || unbounded(s(1)))) break;
      {
        i128 a0 = s(0).vmin, a1 = s(0).vmax, b0 = s(1).vmin, b1 = s(1).vmax;
        if (n.op == Ops::ADD) set(a0 + b0, a1 + b1);
        else if (n.op == Ops::SUB) set(a0 - b1, a1 - b0);
        else if (n.op == Ops::MAX) set(a0 > b0 ? a0 : b0, a1 > b1 ? a1 : b1);
        else set(min4(a0 * b0, a0 * b1, a1 * b0, a1 * b1), max4(a0 * b0, a0 * b1, a1 * b0, a1 * b1));
      }
      break;
    case Ops::MULACC:
      if (n.nsrc == 3 && !is_bool(dt) && (weak || !(unbounded(s(0)) || unbounded(s(1)) || unbounded(s(2))))) {
        i128 a0 = s(0).vmin, a1 = s(0).vmax, b0 = s(1).vmin, b1 = s(1).vmax;
        set(min4(a0 * b0, a0 * b1, a1 * b0, a1 * b1) + s(2).vmin, max4(a0 * b0, a0 * b1, a1 * b0, a1 * b1) + s(2).vmax);
      }
      break;
    case Ops::NEG:
      if (n.nsrc == 1 && !is_bool(dt)) set(-static_cast<i128>(s(0).vmax), -static_cast<i128>(s(0).vmin));
      break;
    case Ops::TRUNC:
      if (n.nsrc == 1) set(s(0).vmin, s(0).vmax);
      break;
    case Ops::FLOORDIV: case Ops::CDIV: {
      if (!binary) break;
      const i128 x0 = s(0).vmin, x1 = s(0).vmax, d0 = s(1).vmin, d1 = s(1).vmax;
      if (x0 > x1) { set(0, 0); break; }  // empty numerator range (RANGE(0))
      if (d0 > d1 || !(d0 > 0 || d1 < 0)) break;  // an empty divisor range, or its sign is not fixed
      if (!weak && (unbounded(s(0)) || unbounded(s(1)))) break;
      auto q = [&](i128 a, i128 b) { return n.op == Ops::FLOORDIV ? floordiv(a, b) : a / b; };
      set(min4(q(x0, d0), q(x0, d1), q(x1, d0), q(x1, d1)), max4(q(x0, d0), q(x0, d1), q(x1, d0), q(x1, d1)));
      break;
    }
    case Ops::FLOORMOD: {
      if (!binary) break;
      const i128 x0 = s(0).vmin, x1 = s(0).vmax, d0 = s(1).vmin, d1 = s(1).vmax;
      if (x0 > x1) { set(0, 0); break; }
      if (d0 > d1) break;  // an empty divisor range (a RANGE(0)): no value to bound by
      if (d0 == d1 && d0 != 0) {
        const i128 c = d0;
        const i128 span = c > 0 ? c : -c;
        // one period: the ends map in order
        if (!unbounded(s(0)) && x1 - x0 < span && floordiv(x0, c) == floordiv(x1, c)) set(floormod(x0, c), floormod(x1, c));
        else if (c > 0) set(0, c - 1);
        else set(c + 1, 0);
      } else if (d0 > 0) {
        set(0, d1 - 1);
      } else if (d1 < 0) {
        set(d0 + 1, 0);
      }
      break;
    }
    case Ops::CMOD: {
      // tinygrad's _min_max term for term. Tighter bounds (a remainder bounded by the numerator's
      // upper end under a divisor that varies, or by one period under a constant one) folded more
      // before the opts than tinygrad does, so the axes its opts name could be gone
      if (!binary) break;
      const i128 x0 = s(0).vmin, x1 = s(0).vmax, d0 = s(1).vmin, d1 = s(1).vmax;
      if (d0 > d1) break;  // an empty divisor range
      if (d0 == d1 && d0 > 0) {
        const i128 c = d0;
        set(x0 > 0 ? 0 : x0 > -c ? x0 : -(c - 1), x1 < 0 ? 0 : x1 < c ? x1 : c - 1);
      } else if (d0 > 0 || d1 < 0) {
        const i128 m = (d0 > 0 ? d1 : -d0) - 1;  // the largest |remainder|
        if (x0 >= 0) set(0, m);
        else if (x1 <= 0) set(-m, 0);
        else set(-m, m);
      }
      break;
    }
    case Ops::SHL: case Ops::SHR: {
      if (!binary || s(1).vmin != s(1).vmax) break;
      const i128 k = s(1).vmin;
      if (k < 0 || k >= 63 || (!weak && k >= bitsize(dt))) break;
      if (!weak && unbounded(s(0))) break;
      if (n.op == Ops::SHR) set(static_cast<i128>(s(0).vmin) >> k, static_cast<i128>(s(0).vmax) >> k);
      else set(static_cast<i128>(s(0).vmin) * (static_cast<i128>(1) << k), static_cast<i128>(s(0).vmax) * (static_cast<i128>(1) << k));
      break;
    }
    case Ops::AND: case Ops::OR: case Ops::XOR: {
      if (!binary) break;
      const auto& a = s(0);
      const auto& b = s(1);
      if (is_bool(dt)) {
        if (n.op == Ops::AND) set(a.vmin & b.vmin, a.vmax & b.vmax);
        else if (n.op == Ops::OR) set(a.vmin | b.vmin, a.vmax | b.vmax);
        else if (a.vmin == a.vmax && b.vmin == b.vmax) set(a.vmin ^ b.vmin, a.vmin ^ b.vmin);
        else set(0, 1);
        break;
      }
      auto is_c = [](const src_view& x) { return x.vmin == x.vmax; };
      // Integer bit operations are bounded only where tinygrad's _min_max bounds them (NOT as XOR with
      // a -1 on the right, AND with a non-negative constant mask on the right). Tighter bounds (OR and
      // XOR of non-negative values, a constant on the left) fold more before the opts than tinygrad
      // does (range-based folding, load collapse), so the axes its opts name could be gone
      if (n.op == Ops::XOR && is_c(b) && b.vmin == -1 && !unbounded(a)) {
        set(~static_cast<i128>(a.vmax), ~static_cast<i128>(a.vmin));
        break;
      }
      if (n.op == Ops::AND && is_c(b) && b.vmin >= 0) set(0, a.vmin >= 0 && a.vmax < b.vmin ? a.vmax : b.vmin);
      break;
    }
    case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ: {
      if (!binary) break;
      const auto& a = s(0);
      const auto& b = s(1);
      // float operands are not tracked; an Invalid operand decides nothing
      if (!(is_int(a.dtype) || is_bool(a.dtype)) || !(is_int(b.dtype) || is_bool(b.dtype))) { set(0, 1); break; }
      if (is_invalid_const(a) || is_invalid_const(b)) { set(0, 1); break; }
      bool is_true = false, is_false = false;
      const bool disjoint = a.vmax < b.vmin || a.vmin > b.vmax;
      const bool same_const = a.vmin == a.vmax && b.vmin == b.vmax && a.vmin == b.vmin;
      if (n.op == Ops::CMPLT) {
        is_true = a.vmax < b.vmin;
        is_false = a.vmin >= b.vmax;
      } else if (n.op == Ops::CMPNE) {
        is_true = disjoint;
        is_false = same_const;
      } else {
        is_true = same_const;
        is_false = disjoint;
      }
      if (is_true) set(1, 1);
      else if (is_false) set(0, 0);
      else set(0, 1);
      break;
    }
    case Ops::WHERE: {
      if (n.nsrc != 3) break;
      const auto& c = s(0);
      const auto& t = s(1);
      const auto& f = s(2);
      // an Invalid arm is "don't care": the other arm's bounds
      const bool ti = is_invalid_const(t), fi = is_invalid_const(f);
      const bool c_known = !is_invalid_const(c) && c.vmin == c.vmax;
      if ((c_known && c.vmin != 0) || fi) { if (!ti) set(t.vmin, t.vmax); }
      else if ((c_known && c.vmin == 0) || ti) set(f.vmin, f.vmax);
      else set(t.vmin < f.vmin ? t.vmin : f.vmin, t.vmax > f.vmax ? t.vmax : f.vmax);
      break;
    }
    case Ops::CAST: {
      if (n.nsrc != 1) break;
      const auto& x = s(0);
      // int / bool sources keep their bounds when they fit the destination (else it wraps)
      if ((is_int(x.dtype) || is_bool(x.dtype)) && !is_invalid_const(x)) {
        if (is_bool(dt)) {
          if (x.vmin > 0 || x.vmax < 0) set(1, 1);
          else if (x.vmin == 0 && x.vmax == 0) set(0, 0);
          else set(0, 1);
        } else if (!(x.dtype != DType::weakint && unbounded(x) && is_unsigned(x.dtype))) {
          set(x.vmin, x.vmax);
        }
      }
      break;
    }
    case Ops::BITCAST:
      break;
    case Ops::AFTER: case Ops::INDEX:
      if (n.nsrc > 0) set(s(0).vmin, s(0).vmax);
      break;
    case Ops::STACK: {
      bool any = false;
      i128 l = 0, h = 0;
      for (std::uint32_t i = 0; i < n.nsrc; ++i) {
        if (is_invalid_const(s(i))) continue;  // Invalid lanes are don't-care
        if (!any || s(i).vmin < l) l = s(i).vmin;
        if (!any || s(i).vmax > h) h = s(i).vmax;
        any = true;
      }
      if (any) set(l, h);
      break;
    }
    default:
      break;
  }
  out.vmin = static_cast<std::int64_t>(lo);
  out.vmax = static_cast<std::int64_t>(hi);
}

}  // namespace uopcg
