// Linearize: the kernel graph (after stage 23) -> the program, a list of nodes in execution order,
// then the line rewrite pm_linearize_cleanups (a gated STORE becomes IF / STORE / ENDIF).
//
// The order is a topological order as close as possible to an "ideal" order. Each node gets a key
//   (run count, class, extra) then tinygrad's structural order (tuplize), then first-seen order,
// where the run count is the product of the trip counts of the ranges the node is inside, the
// class puts PARAMs (-20, extra = slot), then non-LOCAL BUFFERs (-18), LOCAL BUFFERs (-17), LOADs
// (-1) early and STOREs (1), RANGEs (5) late, ENDs (-5) early, everything else 0. The list is then
// scheduled from the SINK backwards: of the nodes whose users are all scheduled, the one latest in
// the ideal order goes last.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "../core/graph.hpp"
#include "../core/text.hpp"
#include "../symbolic/util.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {

struct line_key {
  std::uint64_t run_count = 1;  // saturating; UINT64_MAX = unbounded
  int cls = 0;
  std::int64_t extra = 0;  // PARAM slot (only PARAMs have class -20)
};

constexpr line_key linearize_key(UOp u) {
  using enum Ops;
  using enum DType;
  line_key k;
  constexpr std::uint64_t inf = ~std::uint64_t(0);
  for (node_id rid : range_ids(u)) {
    const UOp r(&u.arena(), rid);
    if (k.run_count == 0) break;
    const std::int64_t vmax = r.vmax();
    if (r.dtype() == void_ || vmax == INT64_MAX) {
      k.run_count = inf;
      continue;
    }
    const std::uint64_t trips = vmax < 0 ? 0 : static_cast<std::uint64_t>(vmax) + 1;
    if (trips == 0) k.run_count = 0;
    else if (k.run_count != inf) k.run_count = k.run_count > inf / trips ? inf : k.run_count * trips;
  }
  switch (u.op()) {
    case PARAM:
      k.cls = -20;
      k.extra = u.arg().kind() == ArgKind::param_arg && u.arg()[0].is_int() ? u.arg()[0].as_int() : 0;
      break;
    case BUFFER: k.cls = u.addrspace() == AddrSpace::LOCAL ? -17 : -18; break;
    case LOAD: k.cls = -1; break;
    case STORE: k.cls = 1; break;
    case RANGE: k.cls = 5; break;
    case END: k.cls = -5; break;
    default: k.cls = 0;
  }
  return k;
}

/// The nodes of `lst` (sources before users; `pos` maps a node id to its index) numbered by
/// structural order (symbolic::structural_cmp, tinygrad's tuplize): rank[i] < rank[j] iff lst[i]
/// orders before lst[j], equal iff they compare equal. Each node is inserted, sources first, into a
/// sorted list of classes; its sources are already there, so comparing two nodes compares the
/// labels of their sources' classes instead of recursing down both graphs (that recursion was most
/// of linearize's time). Labels keep the list's order with gaps; a full gap relabels the list.
constexpr std::vector<std::uint32_t> structural_ranks(std::span<const UOp> lst, const std::vector<std::uint32_t>& pos) {
  const std::size_t n = lst.size();
  std::vector<std::uint32_t> rank(n, 0);
  if (n == 0) return rank;
  Arena& a = lst[0].arena();
  std::vector<std::uint32_t> cls(n, 0);  // node index -> class
  std::vector<std::uint32_t> rep;        // class -> its first node's index
  std::vector<std::uint64_t> label;      // class -> order label
  std::vector<std::uint32_t> sorted;     // classes in structural order
  rep.reserve(n);
  label.reserve(n);
  sorted.reserve(n);
  auto src_label = [&](node_id s) { return label[cls[pos[s]]]; };
  auto cmp = [&](std::uint32_t i, std::uint32_t j) -> int {
    if (int r = symbolic::detail::cmp_own(lst[i], lst[j])) return r;
    const node_id ia = lst[i].id(), ib = lst[j].id();
    const auto &x = a.raw(ia), &y = a.raw(ib);
    const std::uint32_t m = x.nsrc < y.nsrc ? x.nsrc : y.nsrc;
    const node_id *sa = a.src_ids(ia), *sb = a.src_ids(ib);
    for (std::uint32_t k = 0; k < m; ++k)
      if (sa[k] != sb[k]) {
        const std::uint64_t la = src_label(sa[k]), lb = src_label(sb[k]);
        if (la != lb) return la < lb ? -1 : 1;
      }
    if (x.nsrc != y.nsrc) return x.nsrc < y.nsrc ? -1 : 1;
    return 0;
  };
  constexpr std::uint64_t top = ~std::uint64_t(0);
  for (std::uint32_t i = 0; i < n; ++i) {
    std::size_t lo = 0, hi = sorted.size();
    bool found = false;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      const int r = cmp(i, rep[sorted[mid]]);
      if (r == 0) {
        cls[i] = sorted[mid];
        found = true;
        break;
      }
      if (r < 0) hi = mid;
      else lo = mid + 1;
    }
    if (found) continue;
    const auto c = static_cast<std::uint32_t>(rep.size());
    cls[i] = c;
    rep.push_back(i);
    sorted.insert(sorted.begin() + static_cast<std::ptrdiff_t>(lo), c);
    auto gap = [&](std::size_t p, std::uint64_t& l, std::uint64_t& h) {
      l = p > 0 ? label[sorted[p - 1]] : 0;
      h = p + 1 < sorted.size() ? label[sorted[p + 1]] : top;
      return h - l >= 2;
    };
    std::uint64_t l = 0, h = 0;
    label.push_back(0);
    if (!gap(lo, l, h)) {
      const std::uint64_t step = top / (sorted.size() + 1);
      for (std::size_t k = 0; k < sorted.size(); ++k) label[sorted[k]] = (k + 1) * step;
      gap(lo, l, h);
    }
    // appending (the common case for a toposort) leaves a fixed step, not half of what is left
    label[c] = h == top && top - l > (std::uint64_t(1) << 40) ? l + (std::uint64_t(1) << 32) : l + (h - l) / 2;
  }
  std::vector<std::uint32_t> order(rep.size(), 0);
  for (std::size_t k = 0; k < sorted.size(); ++k) order[sorted[k]] = static_cast<std::uint32_t>(k);
  for (std::size_t i = 0; i < n; ++i) rank[i] = order[cls[i]];
  return rank;
}

}  // namespace detail

/// tinygrad's linearize(): the priority toposort of the graph of `sink` (the SINK last).
constexpr std::vector<UOp> linearize_order(UOp sink) {
  const std::vector<UOp> lst = toposort(sink);
  const std::size_t n = lst.size();
  Arena& a = sink.arena();
  std::vector<std::uint32_t> pos(a.size(), 0);
  for (std::size_t i = 0; i < n; ++i) pos[lst[i].id()] = static_cast<std::uint32_t>(i);
  std::vector<std::uint32_t> out_degree(n, 0);
  std::vector<detail::line_key> keys(n, detail::line_key{});
  for (std::size_t i = 0; i < n; ++i) {
    for (UOp s : lst[i].srcs()) ++out_degree[pos[s.id()]];
    keys[i] = detail::linearize_key(lst[i]);
  }
  const std::vector<std::uint32_t> srank = detail::structural_ranks(lst, pos);
  // the ideal order; first-seen order breaks the remaining ties (nodes differing only in their tag)
  std::vector<std::uint32_t> ideal(n, 0);
  for (std::size_t i = 0; i < n; ++i) ideal[i] = static_cast<std::uint32_t>(i);
  std::sort(ideal.begin(), ideal.end(), [&](std::uint32_t x, std::uint32_t y) {
    const detail::line_key &kx = keys[x], &ky = keys[y];
    if (kx.run_count != ky.run_count) return kx.run_count < ky.run_count;
    if (kx.cls != ky.cls) return kx.cls < ky.cls;
    if (kx.extra != ky.extra) return kx.extra < ky.extra;
    if (srank[x] != srank[y]) return srank[x] < srank[y];
    return x < y;
  });
  std::vector<std::uint32_t> nkey(n, 0);
  for (std::size_t i = 0; i < n; ++i) nkey[ideal[i]] = static_cast<std::uint32_t>(i);
  // schedule backwards from the sink: always the ready node with the largest key
  std::vector<std::uint32_t> heap;
  heap.reserve(n);  // (grown push by push, it reallocated ~10 times per kernel)
  heap.push_back(nkey[pos[sink.id()]]);
  std::vector<UOp> out;
  out.reserve(n);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const UOp u = lst[ideal[heap.back()]];
    heap.pop_back();
    out.push_back(u);
    for (UOp s : u.srcs()) {
      const std::uint32_t p = pos[s.id()];
      if (--out_degree[p] == 0) {
        heap.push_back(nkey[p]);
        std::push_heap(heap.begin(), heap.end());
      }
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

/// Whether `u` is a gated STORE whose address is an INDEX or SHRINK (possibly behind a CAST).
constexpr bool is_gated_store(UOp u) {
  using enum Ops;
  using enum DType;
  if (u.op() != STORE || u.nsrc() != 3 || u.src(2).dtype() != bool_) return false;
  UOp addr = u.src(0);
  if (addr.op() == CAST && addr.nsrc() == 1) addr = addr.src(0);
  return addr.op() == INDEX || addr.op() == SHRINK;
}

/// pm_linearize_cleanups as a line rewrite: each line is rebuilt on the already rewritten lines; a
/// gated STORE becomes IF(gate, address), the ungated STORE, ENDIF(IF) (one IF per store), and
/// later lines use the ungated STORE. IF/ENDIF in the input are an error.
///
/// A program holds each node once, but the ungated form of a gated STORE can be a node the program
/// already has: the same address and value stored without the gate elsewhere (an upcast REG
/// accumulator whose lanes fold to one store, `if (g) acc = v;` beside `acc = v;`). tinygrad's list
/// then holds that UOp twice and renders it twice; here the copy under the IF gets a tag of its own,
/// so it is a distinct node with the same rendering. So does the IF of a second gated store to the
/// same address under the same gate.
constexpr std::vector<UOp> linearize_cleanups(std::span<const UOp> lines) {
  using enum Ops;
  using enum DType;
  std::vector<UOp> out;
  if (lines.empty()) return out;
  out.reserve(lines.size() + lines.size() / 8);  // a line each, three for a gated store
  Arena& a = lines[0].arena();
  // bytes, not std::vector<bool>: clang 14 cannot evaluate libstdc++'s bit vector in a constant expression
  std::vector<std::uint8_t> in_program(a.size(), 0);
  for (UOp u : lines) in_program[u.id()] = 1;
  auto taken = [&](UOp u) { return u.id() < in_program.size() && in_program[u.id()] != 0; };
  std::vector<node_id> replaced;
  auto get = [&](UOp s) {
    return s.id() < replaced.size() && replaced[s.id()] != no_node ? UOp(&a, replaced[s.id()]) : s;
  };
  auto set = [&](UOp from, UOp to) {
    if (replaced.size() <= from.id()) replaced.resize(from.id() + 1, no_node);
    replaced[from.id()] = to.id();
  };
  std::vector<UOp> srcs;
  for (UOp u : lines) {
    if (u.op() == IF || u.op() == ENDIF) {
      fail("linearize: ", a.describe(u.id()), ": IF/ENDIF are not allowed in the graph");
    }
    srcs.clear();
    bool changed = false;
    for (UOp s : u.srcs()) {
      srcs.push_back(get(s));
      changed = changed || srcs.back() != s;
    }
    const UOp nu = changed ? a.make_raw(u.op(), u.dtype(), srcs, a.raw(u.id()).arg, a.tag_id(u.id())) : u;
    if (is_gated_store(nu)) {
      const UOp addr = nu.src(0), gate = nu.src(2);
      const std::span<const UOp> ungated(srcs.data(), 2);
      UOp st = a.make_raw(STORE, nu.dtype(), ungated, a.raw(nu.id()).arg, a.tag_id(nu.id()));
      for (std::int64_t k = 0; taken(st); ++k)
        st = a.make(STORE, nu.dtype(), ungated, nu.arg(), Arg::tuple_of(Arg::string("gated copy"), k));
      if (in_program.size() <= st.id()) in_program.resize(st.id() + 1, 0);
      in_program[st.id()] = 1;
      // two gated stores of one address under one gate (upcast lanes of a REG accumulator) make the
      // same IF node; each keeps an IF of its own, as a program holds each node once
      UOp mif = a.make(IF, void_, {gate, addr});
      for (std::int64_t k = 0; taken(mif); ++k)
        mif = a.make(IF, void_, {gate, addr}, Arg(), Arg::tuple_of(Arg::string("gated copy"), k));
      if (in_program.size() <= mif.id()) in_program.resize(mif.id() + 1, 0);
      in_program[mif.id()] = 1;
      out.push_back(mif);
      out.push_back(st);
      out.push_back(a.make(ENDIF, void_, {mif}));
      set(u, st);
    } else {
      out.push_back(nu);
      if (nu != u) set(u, nu);
    }
  }
  return out;
}

/// Linearize a kernel graph (after stage 23) into its program: linearize_order + linearize_cleanups.
constexpr std::vector<UOp> linearize(UOp sink, const Target& /*t*/) {
  if (sink.op() != Ops::SINK) {
    fail("linearize: the root must be a SINK, got ", sink.arena().describe(sink.id()));
  }
  const std::vector<UOp> order = linearize_order(sink);
  return linearize_cleanups(order);
}

}  // namespace uopcg::codegen
