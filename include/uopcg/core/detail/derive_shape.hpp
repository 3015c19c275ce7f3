// A node's shape and address space, derived once when the arena creates it (the Arena members
// derive_shape and derive_addrspace: core/arena.hpp declares them and includes this header).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "../arena.hpp"

namespace uopcg {

/// The shape a size operand denotes: CONST n -> (n,), STACK of consts -> their values; CASTs are
/// looked through (sizes are CAST(int, CONST) after index lowering).
constexpr bool Arena::as_shape(node_id id, std::vector<std::int64_t>& out) const {
  // derivations never throw (a node is published before it is derived): every arg is checked
  auto strip_casts = [&](node_id x) {
    while (nodes_[x].op == Ops::CAST && nodes_[x].nsrc == 1) x = srcs_[nodes_[x].src_off];
    return x;
  };
  auto const_int = [&](node_id x, std::int64_t& v) {
    const Arg& a = args_[nodes_[x].arg];
    if (nodes_[x].op != Ops::CONST || (a.kind() != ArgKind::int_ && !a.is_bool())) return false;
    v = a.as_int();
    return true;
  };
  const node_id x = strip_casts(id);
  const auto& n = nodes_[x];
  std::int64_t v = 0;
  if (n.op == Ops::CONST) {
    if (!const_int(x, v)) return false;
    out.push_back(v);
    return true;
  }
  if (n.op == Ops::STACK) {
    for (std::uint32_t i = 0; i < n.nsrc; ++i) {
      if (!const_int(strip_casts(srcs_[n.src_off + i]), v)) return false;
      out.push_back(v);
    }
    return true;
  }
  return false;
}

constexpr void Arena::derive(node_id id) {
  derive_shape(id);
  derive_addrspace(id);
  derive_bounds(id);
}

namespace detail {
// Ops whose shape rule is not "broadcast of the sources" / "like src[0]".
inline constexpr OpSet shape_special_ops{
    Ops::SINK, Ops::GROUP, Ops::BARRIER, Ops::IF, Ops::ENDIF, Ops::LINEAR, Ops::PROGRAM, Ops::SOURCE,
    Ops::BINARY, Ops::NOOP, Ops::PARAM, Ops::BUFFER, Ops::STACK, Ops::INDEX, Ops::RESHAPE, Ops::EXPAND,
    Ops::PERMUTE, Ops::SHRINK, Ops::PAD, Ops::REDUCE, Ops::STAGE, Ops::BITCAST, Ops::WMMA};
}  // namespace detail

constexpr void Arena::derive_shape(node_id id) {
  detail::Node& n = nodes_[id];
  if (!detail::shape_special_ops.contains(n.op)) {
    // fast path, no allocation: scalar sources (or none) give a scalar
    bool scalar = true;
    for (std::uint32_t i = 0; i < n.nsrc && scalar; ++i) scalar = nodes_[srcs_[n.src_off + i]].rank == 0;
    if (scalar) {
      n.rank = 0;
      return;
    }
  }
  std::vector<std::int64_t>& out = shape_tmp_;  // reused: a derivation creates no node
  out.clear();
  bool ok = true, none = false;
  auto src = [&](std::uint32_t i) -> const detail::Node& { return nodes_[srcs_[n.src_off + i]]; };
  auto src_dims_off = [&](std::uint32_t i) { return cold_[srcs_[n.src_off + i]].dims_off; };
  auto src_dims = [&](std::uint32_t i, std::vector<std::int64_t>& v) {
    const auto& s = src(i);
    if (s.rank < 0) return false;
    for (int k = 0; k < s.rank; ++k) v.push_back(dims_[src_dims_off(i) + k]);
    return true;
  };
  auto like_src0 = [&] {
    if (n.nsrc == 0) return;  // scalar
    const auto& s = src(0);
    if (s.rank == -1) none = true;
    else if (s.rank == -2) ok = false;
    else src_dims(0, out);
  };
  switch (n.op) {
    case Ops::SINK: case Ops::GROUP: case Ops::BARRIER: case Ops::IF: case Ops::ENDIF:
    case Ops::LINEAR: case Ops::PROGRAM: case Ops::SOURCE: case Ops::BINARY: case Ops::NOOP:
      none = true;
      break;
    case Ops::CONST: case Ops::RANGE: case Ops::SPECIAL: case Ops::GETADDR:
      break;
    case Ops::PARAM: case Ops::BUFFER:
      if (n.nsrc > 0) {
        if (src(0).op == Ops::NOOP) ok = false;
        else ok = as_shape(srcs_[n.src_off], out);
      }
      break;
    case Ops::STACK:
      if (n.nsrc > 0) {
        out.push_back(n.nsrc);
        const auto& first = src(0);
        if (first.rank < 0) { ok = false; break; }
        for (std::uint32_t i = 1; i < n.nsrc && ok; ++i) {
          const auto& other = src(i);
          if (other.rank != first.rank) ok = false;
          for (int k = 0; k < first.rank && ok; ++k)
            if (dims_[src_dims_off(i) + k] != dims_[src_dims_off(0) + k]) ok = false;
        }
        src_dims(0, out);
      }
      break;
    case Ops::INDEX: {
      if (n.nsrc == 0) { ok = false; break; }
      const auto& b = src(0);
      if (b.rank < 0) { ok = false; break; }
      for (std::uint32_t i = 1; i < n.nsrc && ok; ++i)
        if (!src_dims(i, out)) ok = false;
      std::uint32_t m = n.nsrc - 1;
      if (m > static_cast<std::uint32_t>(b.rank)) { ok = false; break; }
      for (int k = static_cast<int>(m); k < b.rank; ++k) out.push_back(dims_[src_dims_off(0) + k]);
      break;
    }
    case Ops::RESHAPE:
      ok = n.nsrc >= 2 && as_shape(srcs_[n.src_off + 1], out);
      break;
    case Ops::EXPAND:
      ok = n.nsrc >= 2 && as_shape(srcs_[n.src_off + 1], out) && src_dims(0, out);
      break;
    case Ops::PERMUTE: {
      const Arg& perm = args_[n.arg];
      if (n.nsrc < 1 || src(0).rank < 0 || !perm.is_tuple() || perm.size() != static_cast<std::size_t>(src(0).rank)) {
        ok = false;
        break;
      }
      const std::size_t rank = static_cast<std::size_t>(src(0).rank);
      for (const Arg& p : perm.items()) {
        if (p.kind() != ArgKind::int_) {
          ok = false;
          break;
        }
        auto k = p.as_int();
        if (k < 0 || static_cast<std::size_t>(k) >= rank) { ok = false; break; }
        out.push_back(dims_[src_dims_off(0) + static_cast<std::size_t>(k)]);
      }
      break;
    }
    case Ops::SHRINK:  // (x, starts, sizes): the sizes; program form (buf, offset, CONST n) -> (n,)
      ok = n.nsrc == 3 && as_shape(srcs_[n.src_off + 2], out);
      break;
    case Ops::PAD: {
      std::vector<std::int64_t> x, lo, hi;
      ok = n.nsrc == 3 && src_dims(0, x) && as_shape(srcs_[n.src_off + 1], lo) &&
           as_shape(srcs_[n.src_off + 2], hi) && lo.size() == x.size() && hi.size() == x.size();
      if (ok)
        for (std::size_t k = 0; k < x.size() && ok; ++k) {
        __int128 d = static_cast<__int128>(x[k]) + lo[k] + hi[k];
        ok = d >= 0 && d <= INT64_MAX;
        out.push_back(static_cast<std::int64_t>(d));
      }
      break;
    }
    case Ops::REDUCE: {
      const Arg& a = args_[n.arg];
      std::int64_t nh = (a.is_tuple() && a.size() >= 2 && a[1].kind() == ArgKind::int_) ? a[1].as_int() : 0;
      if (n.nsrc < 1 || src(0).rank < 0 || nh < 0 || nh > src(0).rank) { ok = false; break; }
      // the source's dims past the first nh, read in place
      for (int k = static_cast<int>(nh); k < src(0).rank; ++k) out.push_back(dims_[src_dims_off(0) + k]);
      break;
    }
    case Ops::STAGE: {
      for (std::uint32_t i = 1; i < n.nsrc; ++i) out.push_back(detail::sat(static_cast<__int128>(cold_[srcs_[n.src_off + i]].vmax) + 1));
      ok = n.nsrc >= 1 && src_dims(0, out);
      break;
    }
    case Ops::BITCAST: {
      like_src0();
      if (ok && !none && !out.empty() && n.nsrc == 1) {
        int from = itemsize(src(0).dtype), to = itemsize(n.dtype);
        if (to > 0 && from > 0) {
          __int128 d = static_cast<__int128>(out.back()) * from / to;
          ok = d <= INT64_MAX;
          out.back() = static_cast<std::int64_t>(ok ? d : 0);
        }
      }
      break;
    }
    case Ops::WMMA: {
      // broadcast of the sources' shapes without their last axis, plus acc's last axis
      std::vector<std::int64_t> acc;
      if (n.nsrc < 3 || !src_dims(2, acc) || acc.empty()) { ok = false; break; }
      std::vector<std::int64_t> b;
      for (std::uint32_t i = 0; i < 3 && ok; ++i) {
        std::vector<std::int64_t> s;
        if (!src_dims(i, s) || s.empty()) { ok = false; break; }
        s.pop_back();
        if (s.size() > b.size()) b.insert(b.begin(), s.size() - b.size(), 1);
        for (std::size_t k = 0; k < s.size(); ++k) {
          std::size_t bk = b.size() - s.size() + k;
          if (b[bk] == 1) b[bk] = s[k];
          else if (s[k] != 1 && s[k] != b[bk]) ok = false;
        }
      }
      out = b;
      out.push_back(acc.back());
      break;
    }
    default: {
      if (detail::broadcasts(n.op) && n.nsrc >= 2) {
        // numpy broadcasting: right-aligned, size-1 axes stretch
        // (the sources' dims are read in place: dims_ does not change during a derivation)
        for (std::uint32_t i = 0; i < n.nsrc && ok; ++i) {
          const detail::Node& sn = src(i);
          if (sn.rank < 0) {
            ok = false;
            break;
          }
          const std::size_t rank = static_cast<std::size_t>(sn.rank);
          const std::int64_t* s = dims_.data() + src_dims_off(i);
          if (rank > out.size()) out.insert(out.begin(), rank - out.size(), 1);
          for (std::size_t k = 0; k < rank; ++k) {
            std::size_t ok_k = out.size() - rank + k;
            if (out[ok_k] == 1) out[ok_k] = s[k];
            else if (s[k] != 1 && s[k] != out[ok_k]) ok = false;
          }
        }
      } else {
        like_src0();  // unary ops, CAST, LOAD, STORE, AFTER, END, ...
      }
    }
  }
  if (none) {
    n.rank = -1;
  } else if (!ok || out.size() > 127) {
    n.rank = -2;
  } else {
    n.rank = static_cast<std::int8_t>(out.size());
    // most shaped nodes have their first source's shape: share its dims
    if (n.nsrc > 0 && out.size() == static_cast<std::size_t>(src(0).rank > 0 ? src(0).rank : 0) && !out.empty()) {
      const std::int64_t* s0 = dims_.data() + src_dims_off(0);
      bool same = true;
      for (std::size_t k = 0; k < out.size() && same; ++k) same = s0[k] == out[k];
      if (same) {
        cold_[id].dims_off = src_dims_off(0);
        return;
      }
    }
    cold_[id].dims_off = static_cast<std::uint32_t>(dims_.size());
    dims_.insert(dims_.end(), out.begin(), out.end());
  }
}

constexpr void Arena::derive_addrspace(node_id id) {
  detail::Node& n = nodes_[id];
  auto src_as = [&](std::uint32_t i) { return nodes_[srcs_[n.src_off + i]].addrspace; };
  std::uint8_t a = 0;
  switch (n.op) {
    case Ops::PARAM: case Ops::BUFFER: {
      const Arg& p = args_[n.arg];
      if (p.kind() == ArgKind::param_arg && p[5].kind() == ArgKind::addrspace)
        a = static_cast<std::uint8_t>(p[5].as_addrspace());
      break;
    }
    case Ops::SPECIAL: case Ops::RANGE: case Ops::LOAD:
      a = static_cast<std::uint8_t>(AddrSpace::ALU);
      break;
    case Ops::INDEX: case Ops::AFTER: case Ops::REDUCE: case Ops::STORE: case Ops::END:
    case Ops::MSTACK: case Ops::MSELECT: case Ops::UNSHARD:
    case Ops::RESHAPE: case Ops::EXPAND: case Ops::PERMUTE: case Ops::PAD: case Ops::SHRINK: case Ops::FLIP:
      if (n.nsrc > 0) a = src_as(0);
      break;
    default:
      if (GroupOp::Elementwise.contains(n.op) || n.op == Ops::STACK || n.op == Ops::WMMA ||
          n.op == Ops::GROUP || n.op == Ops::STAGE) {
        // the common address space of the sources that have one; none if they disagree
        for (std::uint32_t i = 0; i < n.nsrc; ++i) {
          std::uint8_t s = src_as(i);
          if (s == 0) continue;
          if (a == 0) a = s;
          else if (a != s) {
            a = 0;
            break;
          }
        }
      }
  }
  n.addrspace = a;
}

}  // namespace uopcg
