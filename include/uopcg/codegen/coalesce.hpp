// Stage 9, memory coalescing (tinygrad/codegen/late/coalesce.py), and stage 10, "add images".
//
// memory_coalescing: scalar LOADs/STOREs of one GLOBAL or LOCAL buffer whose indices are the same
// base expression plus consecutive constants, under the same validity, become one vector access:
// `SHRINK(buf, start, n)` (a contiguous `buf[start : start+n]`) loaded as an (n,) value and read
// lane by lane, or stored from a STACK of the n values. The width is the first of 4, 2 (8, 4, 2 for
// half with ALLOW_HALF8) that the run is long enough for and that provably divides the start offset
// (the alignment proof), else 1. Only float, half, int, uint and fp8 buffers are widened, only when the target
// supports float4; REG buffers are never touched. Target::memory_coalescing = false (tinygrad's DMC)
// disables the stage.
//
// add_images: remaining shaped elementwise ops are devectorized (bottom-up). tinygrad's
// pm_simplify_add_image (OpenCL image2d objects, IMAGE>0) is not implemented: none of our targets
// uses images. Nor is its one rule that fires without images, `(float)(half)x -> x` for a float x:
// a CAST to half rounds, and the graph asks for that rounding (docs/DIVERGENCES.md, P6).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../core/print.hpp"
#include "../pattern/pattern.hpp"
#include "add_loads.hpp"
#include "detail/helpers.hpp"
#include "devectorize.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {

/// Whether `u` is provably a multiple of v (tinygrad's `divides(v) is not None`).
constexpr bool is_multiple_of(UOp u, std::int64_t v) {
  using enum Ops;
  if (v == 1) return true;
  switch (u.op()) {
    case CONST:
      return u.arg().kind() == ArgKind::int_ && u.arg().as_int() % v == 0;
    case ADD:
      return u.nsrc() == 2 && is_multiple_of(u.src(0), v) && is_multiple_of(u.src(1), v);
    case MUL:
      return u.nsrc() == 2 && (is_multiple_of(u.src(0), v) || is_multiple_of(u.src(1), v));
    case PARAM: {
      const Arg& a = u.arg();
      return a.kind() == ArgKind::param_arg && a[3].kind() == ArgKind::int_ && a[3].as_int() % v == 0;
    }
    default:
      return false;
  }
}

/// The validity of a gated address (`where(c, i, Invalid)` -> c): an Invalid address is never valid.
constexpr UOp access_valid(UOp i) {
  if (i.op() == Ops::WHERE && i.nsrc() == 3 && symbolic::is_invalid(i.src(2))) return i.src(0);
  return literal(i.arena(), !symbolic::is_invalid(i));
}

enum class root_kind { node, invalid, constant };

struct group_key {
  Ops op;
  UOp buf;
  root_kind kind;
  UOp root;  // for root_kind::node
  UOp valid;
  friend constexpr bool operator==(const group_key& a, const group_key& b) {
    return a.op == b.op && a.buf == b.buf && a.kind == b.kind && a.root == b.root && a.valid == b.valid;
  }
};

struct group {
  group_key key;
  std::vector<std::pair<std::int64_t, std::vector<UOp>>> offsets;  // offset -> accesses, first-seen order
  constexpr std::vector<UOp>& at(std::int64_t off) {
    for (auto& [o, v] : offsets)
      if (o == off) return v;
    offsets.emplace_back(off, std::vector<UOp>{});
    return offsets.back().second;
  }
  constexpr const std::vector<UOp>& get(std::int64_t off) const {
    for (const auto& [o, v] : offsets)
      if (o == off) return v;
    fail("memory coalescing: offset lookup");
  }
};

constexpr bool is_vector_dtype(DType dt) {
  using enum DType;
  switch (dt) {
    case float32: case float16: case int32: case uint32:
    case fp8e4m3: case fp8e5m2: case fp8e4m3fnuz: case fp8e5m2fnuz:
      return true;
    default:
      return false;
  }
}

}  // namespace detail

/// Stage 9 entry point (a plain function and a substitute, not a rewrite).
template <class = void>
constexpr UOp memory_coalescing(UOp sink, const Target& t) {
  using enum Ops;
  using enum DType;
  using namespace detail;
  if (!t.memory_coalescing) return sink;
  Arena& a = sink.arena();
  std::vector<group> groups;
  for (UOp u : toposort(sink)) {
    if (u.op() != LOAD && u.op() != STORE) continue;
    if (u.nsrc() != (u.op() == STORE ? 2u : 1u))
      fail("memory coalescing: gated ", name(u.op()), " ", to_string(u), " (gates must still be in the index)");
    UOp addr = u.src(0);
    if (addr.op() != INDEX || addr.nsrc() != 2)
      fail("memory coalescing: ", to_string(u), " must access an INDEX with one index, not ", to_string(addr));
    UOp buf = addr.src(0), idx_u = addr.src(1);
    if (buf.addrspace() == AddrSpace::REG) continue;
    UOp idx = get_idx(idx_u), valid = access_valid(idx_u);
    group_key key{u.op(), buf, root_kind::node, idx, valid};
    std::int64_t off = 0;
    auto int_const = [](UOp c, std::int64_t& v) {
      if (c.op() != CONST || c.arg().kind() != ArgKind::int_) return false;
      v = c.arg().as_int();
      return true;
    };
    if (idx.op() == ADD && idx.nsrc() == 2 && int_const(idx.src(1), off)) key.root = idx.src(0);
    else if (idx.op() == ADD && idx.nsrc() == 2 && int_const(idx.src(0), off)) key.root = idx.src(1);
    else if (symbolic::is_invalid(idx)) key.kind = root_kind::invalid, key.root = UOp();
    else if (int_const(idx, off)) key.kind = root_kind::constant, key.root = UOp();
    else off = 0;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const group& g) { return g.key == key; });
    if (it == groups.end()) {
      groups.push_back(group{key, {}});
      it = groups.end() - 1;
    }
    it->at(off).push_back(u);
  }

  std::vector<std::pair<UOp, UOp>> replacements;
  for (const group& g : groups) {
    const UOp buf = g.key.buf;
    std::vector<std::int64_t> lengths;
    if (is_vector_dtype(buf.dtype()) && t.renderer.supports_float4) {
      if (buf.dtype() == float16 && t.allow_half8) lengths = {8, 4, 2};
      else lengths = {4, 2};
    }
    lengths.push_back(1);
    std::vector<std::int64_t> offs;
    for (const auto& [o, v] : g.offsets) offs.push_back(o);
    std::sort(offs.begin(), offs.end());
    // runs of consecutive offsets
    std::size_t i = 0;
    while (i < offs.size()) {
      std::size_t j = i + 1;
      while (j < offs.size() && offs[j] == offs[j - 1] + 1) ++j;
      std::size_t k = i;
      while (k < j) {
        const std::size_t left = j - k;
        UOp offset = g.key.kind == root_kind::node ? a.make(ADD, g.key.root.dtype(), {g.key.root, const_(a, g.key.root.dtype(), Arg::integer(offs[k]))})
                                                   : literal(a, offs[k]);
        std::int64_t len = 1;
        for (std::int64_t l : lengths)
          if (static_cast<std::size_t>(l) <= left && is_multiple_of(offset, l)) {
            len = l;
            break;
          }
        UOp gated = a.make(WHERE, offset.dtype(), {g.key.valid, offset, invalid(a)});
        UOp addr = len > 1 ? a.make(SHRINK, buf.dtype(), {buf, gated, literal(a, len)})
                           : a.make(INDEX, buf.dtype(), {buf, gated});
        if (g.key.op == STORE) {
          std::vector<UOp> datas;
          for (std::int64_t q = 0; q < len; ++q) {
            const auto& st = g.get(offs[k + static_cast<std::size_t>(q)]);
            if (st.size() != 1)
              fail("memory coalescing: ", st.size(), " stores to the same address ", to_string(st[0].src(0)));
            datas.push_back(st[0].src(1));
          }
          UOp value = datas.size() > 1 ? make_node(a, STACK, datas) : datas[0];
          UOp store = a.make(STORE, void_, {addr, value});
          for (std::int64_t q = 0; q < len; ++q) replacements.emplace_back(g.get(offs[k + static_cast<std::size_t>(q)])[0], store);
        } else {
          UOp ld = a.make(LOAD, addr.dtype(), {addr});
          for (std::int64_t q = 0; q < len; ++q)
            for (UOp old : g.get(offs[k + static_cast<std::size_t>(q)]))
              replacements.emplace_back(old, len > 1 ? a.make(INDEX, ld.dtype(), {ld, literal(a, q)}) : ld);
        }
        k += static_cast<std::size_t>(len);
      }
      i = j;
    }
  }
  return substitute(sink, replacements);
}

// The stage's rule set: a variable template, compiled only where the stage runs (stage.hpp).
template <class = void>
inline constexpr auto add_images_rules = simple_with_mops() + ew_devectorizer;

/// Stage 10 entry point: symbolic_simple + ew_devectorizer, bottom-up (no image support).
template <class = void>
constexpr UOp add_images(UOp sink, const Target&) {
  return pat::graph_rewrite(sink, add_images_rules<>, {.bottom_up = true, .name = "add images"});
}

}  // namespace uopcg::codegen
