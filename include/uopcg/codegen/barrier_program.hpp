// How the barrier verifier reads a linearized program: its loop and branch structure (RANGE ... END,
// IF ... ENDIF, properly nested), its BARRIERs, its LOAD/STORE accesses of LOCAL memory decoded into
// (buffer, element index, width, gate), and the barrier-free paths between those accesses.
//
// Paths follow the program order: an END has a back edge to the first instruction of its loop's
// body when the loop can run twice and the RANGE a skip edge past the loop when it can run zero
// times; an IF has an edge to its ENDIF (the branch not taken). A path stops at a BARRIER.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "../core/arena.hpp"
#include "../core/graph.hpp"
#include "../core/print.hpp"
#include "../core/text.hpp"
#include "barrier_report.hpp"

namespace uopcg::codegen::detail::verifier {

inline constexpr std::size_t npos = BarrierViolation::npos;
inline constexpr std::uint32_t no_pos = 0xFFFFFFFFu;

/// A work-item id: lidx<d> (or idx<d>, a global id that is also the local one when the kernel has
/// no separate local dimensions).
constexpr bool is_local_id(UOp s) {
  if (s.op() != Ops::SPECIAL || s.arg().kind() != ArgKind::string) return false;
  const std::string_view n = s.arg().as_string();
  return n.starts_with("lidx") || n.starts_with("idx");
}
/// The number of values of a SPECIAL (its vmax + 1, saturating).
constexpr std::int64_t extent_of(UOp s) { return s.vmax() >= INT64_MAX - 1 ? INT64_MAX : s.vmax() + 1; }
/// A work-group id: gidx<d>.
constexpr bool is_group_id(UOp s) {
  return s.op() == Ops::SPECIAL && s.arg().kind() == ArgKind::string && s.arg().as_string().starts_with("gidx");
}

/// A kernel variable: a PARAM that is a value, not memory.
constexpr bool is_variable(UOp s) {
  return s.op() == Ops::PARAM && (!s.addrspace() || *s.addrspace() == AddrSpace::ALU);
}

/// The sources the value of u is computed from. Unlike the graph's sources these leave out ordering
/// edges: a RANGE's value depends on its bound only, a LOAD's on its index and gate (not on the
/// stores its buffer's AFTER waits for).
template <class F>
constexpr void for_each_value_source(UOp u, F&& f) {
  switch (u.op()) {
    case Ops::RANGE:
      if (u.nsrc() > 0) f(u.src(0));
      return;
    case Ops::LOAD: {
      if (u.nsrc() == 0) return;
      UOp addr = u.src(0);
      while ((addr.op() == Ops::CAST || addr.op() == Ops::BITCAST) && addr.nsrc() == 1) addr = addr.src(0);
      if (addr.op() == Ops::INDEX || addr.op() == Ops::SHRINK)
        for (std::size_t k = 1; k < addr.nsrc(); ++k) f(addr.src(k));
      for (std::size_t k = 1; k < u.nsrc(); ++k) f(u.src(k));
      return;
    }
    case Ops::SPECIAL: case Ops::CONST: case Ops::PARAM: case Ops::BUFFER: case Ops::AFTER: return;
    default:
      for (UOp s : u.srcs()) f(s);
  }
}

/// Every node the value of u is computed from (u included), each once, until `visit` returns false.
template <class Visit>
constexpr bool walk_value(UOp u, Visit&& visit) {
  std::vector<UOp> work{u};
  std::vector<node_id> seen;
  while (!work.empty()) {
    UOp x = work.back();
    work.pop_back();
    if (std::find(seen.begin(), seen.end(), x.id()) != seen.end()) continue;
    seen.push_back(x.id());
    if (!visit(x)) return false;
    for_each_value_source(x, [&](UOp s) { work.push_back(s); });
  }
  return true;
}

/// The first local id the value u depends on, if any.
constexpr std::optional<UOp> local_id_in(UOp u) {
  std::optional<UOp> found;
  walk_value(u, [&](UOp x) {
    if (is_local_id(x)) found = x;
    return !found;
  });
  return found;
}

/// One LOAD or STORE of LOCAL memory.
struct local_access {
  std::size_t pos = npos;
  UOp buffer;          // the LOCAL BUFFER
  bool is_store = false;
  UOp index;           // the first element, in units of the buffer's dtype (invalid: the address is unreadable)
  std::vector<UOp> gates;  // the access happens only where all of these are true
  std::int64_t bytes = 0;  // bytes the access touches from its first element on
  std::string_view unreadable;  // why the address cannot be read, when it cannot
};

/// A linearized program as the verifier reads it.
struct program_view {
  std::span<const UOp> prog;
  std::vector<std::uint32_t> pos;                  // node id -> position (no_pos: not in the program)
  std::vector<std::size_t> match;                  // RANGE -> its END, IF -> its ENDIF, ENDIF -> its IF
  std::vector<std::vector<std::size_t>> closes;    // END -> the RANGEs it closes, innermost first
  std::vector<std::size_t> parent;                 // innermost enclosing RANGE or IF (npos: top level)
  std::vector<std::size_t> barriers;               // BARRIER positions
  std::vector<local_access> accesses;              // in program order
  std::vector<BarrierViolation> malformed;

  constexpr std::optional<std::size_t> position(UOp u) const {
    if (u.id() >= pos.size() || pos[u.id()] == no_pos) return std::nullopt;
    return pos[u.id()];
  }
  /// "%<i> <OP> <dtype> (%a, %b) <arg>", sources numbered by position (%-1: not in the program).
  constexpr text line(std::size_t i) const {
    text t;
    t.append('%').append(i).append(' ');
    uopcg::detail::print_line(t, prog[i], [&](UOp s) -> std::int64_t {
      auto p = position(s);
      return p ? static_cast<std::int64_t>(*p) : -1;
    });
    return t;
  }
  /// A node by its program line, or by its arena form when it is not in the program.
  constexpr text describe(UOp u) const {
    if (auto p = position(u)) return line(*p);
    return to_text(u);
  }
  /// The enclosing RANGE/IF positions of position i, innermost first.
  constexpr std::vector<std::size_t> enclosing(std::size_t i) const {
    std::vector<std::size_t> out;
    for (std::size_t p = parent[i]; p != npos; p = parent[p]) out.push_back(p);
    return out;
  }
};

namespace detail {

// The bytes a LOAD yields or a STORE writes: its value's element size times its lanes.
constexpr std::int64_t access_bytes(UOp value) {
  const auto s = value.shape();
  const std::int64_t lanes = s.has_value() ? s.numel() : 1;
  return lanes * itemsize(value.dtype());
}

constexpr bool is_invalid_const(UOp u) { return u.op() == Ops::CONST && u.arg().is_invalid(); }

// Decodes the address of a LOCAL access: [CAST/BITCAST of] INDEX(base, idx) or SHRINK(base, start, w),
// base an AFTER chain over the BUFFER; an index `where(gate, idx, Invalid)` is a gate.
constexpr void decode_address(local_access& a, UOp addr) {
  UOp x = addr;
  while ((x.op() == Ops::CAST || x.op() == Ops::BITCAST) && x.nsrc() == 1 && x.src(0).addrspace()) x = x.src(0);
  if ((x.op() != Ops::INDEX || x.nsrc() != 2) && (x.op() != Ops::SHRINK || x.nsrc() != 3)) {
    a.unreadable = "its address is not an INDEX or SHRINK of the buffer";
    return;
  }
  UOp base = x.src(0);
  while (base.op() == Ops::AFTER && base.nsrc() > 0) base = base.src(0);
  if (base != a.buffer) {
    a.unreadable = "its address indexes a view of the buffer, not the buffer itself";
    return;
  }
  UOp idx = x.src(1);
  if (idx.op() == Ops::WHERE && idx.nsrc() == 3 && is_invalid_const(idx.src(2))) {
    a.gates.push_back(idx.src(0));
    idx = idx.src(1);
  }
  if (!is_int(idx.dtype()) && idx.dtype() != DType::weakint) {
    a.unreadable = "its index is not an integer";
    return;
  }
  a.index = idx;
}

}  // namespace detail

/// The LOCAL buffer a memory address reaches, or an invalid handle.
constexpr UOp local_buffer_of(UOp addr) {
  UOp x = addr;
  while (x.op() != Ops::PARAM && x.op() != Ops::BUFFER) {
    if (x.nsrc() == 0) return UOp();
    x = x.src(0);
  }
  return x.addrspace() == AddrSpace::LOCAL ? x : UOp();
}

/// Reads `program`: structure, barriers, LOCAL accesses; problems go to `malformed`.
constexpr program_view read_program(std::span<const UOp> program) {
  program_view v;
  v.prog = program;
  const std::size_t n = program.size();
  v.match.assign(n, npos);
  v.closes.assign(n, {});
  v.parent.assign(n, npos);
  if (n == 0) return v;
  auto malformed = [&](std::size_t i, const auto&... why) {
    BarrierViolation m;
    m.kind = BarrierViolationKind::malformed;
    m.control_pos = i;
    m.control = program[i];
    m.message = cat("barrier verifier: malformed program: ", v.line(i), ": ", why...);
    v.malformed.push_back(std::move(m));
  };
  for (std::size_t i = 0; i < n; ++i)
    if (!program[i].valid() || &program[i].arena() != &program[0].arena()) {
      BarrierViolation m;
      m.kind = BarrierViolationKind::malformed;
      m.control_pos = i;
      m.message = cat("barrier verifier: malformed program: instruction ", i,
                      program[i].valid() ? " is a node of another arena" : " is not a node");
      v.malformed.push_back(std::move(m));
      return v;
    }
  Arena& a = program[0].arena();
  v.pos.assign(a.size(), no_pos);
  for (std::size_t i = 0; i < n; ++i) {
    if (v.pos[program[i].id()] != no_pos) {
      malformed(i, "the node is already at position ", v.pos[program[i].id()]);
      return v;
    }
    v.pos[program[i].id()] = static_cast<std::uint32_t>(i);
  }
  std::vector<std::size_t> open;  // RANGE/IF positions, innermost last
  for (std::size_t i = 0; i < n; ++i) {
    UOp u = program[i];
    v.parent[i] = open.empty() ? npos : open.back();
    for (UOp s : u.srcs())
      if (auto p = v.position(s); p && *p >= i) malformed(i, "uses %", *p, ", which is not before it");
    switch (u.op()) {
      case Ops::RANGE:
        if (u.nsrc() == 0) malformed(i, "a RANGE without a bound");
        open.push_back(i);
        break;
      case Ops::IF:
        if (u.nsrc() == 0) malformed(i, "an IF without a condition");
        open.push_back(i);
        break;
      case Ops::END: {
        std::vector<std::size_t> closed;
        for (std::size_t k = 1; k < u.nsrc(); ++k) {
          if (u.src(k).op() != Ops::RANGE) continue;
          auto rp = v.position(u.src(k));
          if (!rp || *rp >= i) {
            malformed(i, "closes a RANGE that is not opened before it");
            return v;
          }
          closed.push_back(*rp);
        }
        if (closed.empty()) {
          malformed(i, "an END that closes no RANGE");
          return v;
        }
        // the ranges it closes must be the innermost open ones
        for (std::size_t k = 0; k < closed.size(); ++k) {
          if (open.size() <= k) {
            malformed(i, "closes a RANGE that is not open here");
            return v;
          }
          const std::size_t top = open[open.size() - 1 - k];
          if (std::find(closed.begin(), closed.end(), top) == closed.end()) {
            malformed(i, "closes a RANGE while ", v.line(top), " inside it is still open");
            return v;
          }
        }
        for (std::size_t k = 0; k < closed.size(); ++k) {
          v.closes[i].push_back(open.back());
          v.match[open.back()] = i;
          open.pop_back();
        }
        break;
      }
      case Ops::ENDIF: {
        auto ip = u.nsrc() == 1 && u.src(0).op() == Ops::IF ? v.position(u.src(0)) : std::nullopt;
        if (!ip || *ip >= i) {
          malformed(i, "closes an IF that is not opened before it");
          return v;
        }
        if (open.empty() || open.back() != *ip) {
          if (open.empty()) malformed(i, "closes an IF while nothing is open");
          else malformed(i, "closes an IF while ", v.line(open.back()), " is open");
          return v;
        }
        v.match[*ip] = i;
        v.match[i] = *ip;
        open.pop_back();
        break;
      }
      case Ops::BARRIER: v.barriers.push_back(i); break;
      case Ops::LOAD: case Ops::STORE: {
        if (u.nsrc() == 0) {
          malformed(i, "a memory access without an address");
          return v;
        }
        if (u.op() == Ops::STORE && u.nsrc() < 2) {
          malformed(i, "a STORE without a value");
          return v;
        }
        UOp b = local_buffer_of(u.src(0));
        if (!b.valid()) break;
        local_access acc;
        acc.pos = i;
        acc.buffer = b;
        acc.is_store = u.op() == Ops::STORE;
        acc.bytes = detail::access_bytes(acc.is_store ? u.src(1) : u);
        if (u.nsrc() == 3 && u.src(2).dtype() == DType::bool_) acc.gates.push_back(u.src(2));
        detail::decode_address(acc, u.src(0));
        v.accesses.push_back(std::move(acc));
        break;
      }
      default: break;
    }
  }
  if (!open.empty()) {
    malformed(open.back(), program[open.back()].op() == Ops::IF ? "an IF without its ENDIF" : "a RANGE without its END");
  }
  return v;
}

/// The memory (a PARAM or BUFFER) an address reaches, or an invalid handle.
constexpr UOp memory_of(UOp addr) {
  UOp x = addr;
  while (x.op() != Ops::PARAM && x.op() != Ops::BUFFER) {
    if (x.nsrc() == 0) return UOp();
    x = x.src(0);
  }
  return x;
}

/// What the value a STORE writes may differ by between two work-items of a group: the local ids and
/// the RANGEs it is computed from. A LOAD from REG (or GLOBAL) memory also depends on every STORE
/// into it (their addresses, values, gates and the control flow around them), followed to a
/// fixpoint: a REG accumulator carries what its work-item stored. A LOAD from LOCAL memory depends
/// only on its address and on the loops around the STOREs into it: the work-items of a group share
/// that memory, so two that read one element in one barrier interval read the same value, whoever
/// stored it (a store and a load of one element by two work-items in one interval is a race the
/// verifier reports on its own). Loop order is ignored, which only adds dependencies.
struct value_dependencies {
  bool untraced = false;             // reads memory whose address the verifier cannot follow
  std::vector<UOp> local_ids;        // SPECIAL lidx/idx nodes of extent > 1
  std::vector<std::size_t> ranges;   // positions of RANGEs
  // the largest parts of the value that are integer arithmetic on local ids and constants alone
  // (`lidx0 >> 2` where lidx0 merges two local axes): every local id the value reads is read through
  // one, so two work-items on which each of them evaluates alike agree on everything the value reads
  std::vector<UOp> local_terms;
};

/// Whether x is integer arithmetic (CONST, CAST, ALU) on local ids and constants alone, reading one;
/// then the local ids of extent > 1 it reads are added to `ids` (once each).
constexpr bool local_term(UOp x, std::vector<UOp>& ids) {
  std::vector<UOp> work{x}, read;
  while (!work.empty()) {
    const UOp u = work.back();
    work.pop_back();
    if (is_local_id(u)) {
      read.push_back(u);
      continue;
    }
    if (u.op() == Ops::CONST) {
      if (u.arg().is_invalid()) return false;
      continue;
    }
    const DType dt = u.dtype();
    if (!(is_int(dt) || is_bool(dt) || dt == DType::weakint) || !(u.op() == Ops::CAST || GroupOp::ALU.contains(u.op())))
      return false;
    for (UOp src : u.srcs()) work.push_back(src);
  }
  for (UOp u : read)
    if (extent_of(u) > 1 && std::find(ids.begin(), ids.end(), u) == ids.end()) ids.push_back(u);
  return !read.empty();
}

constexpr value_dependencies store_value_dependencies(const program_view& v, std::size_t store_pos) {
  value_dependencies out;
  std::vector<UOp> work{v.prog[store_pos].src(1)}, memories;
  std::vector<std::uint8_t> seen(v.prog[0].arena().size(), 0);
  while (!work.empty()) {
    UOp x = work.back();
    work.pop_back();
    if (x.id() >= seen.size()) seen.resize(x.arena().size(), 0);
    if (seen[x.id()]) continue;
    seen[x.id()] = 1;
    // a term's local ids count in local_ids; its nodes are not marked seen (a local id read here may
    // also be read directly elsewhere, as a term of its own)
    if (x.op() != Ops::CONST && local_term(x, out.local_ids)) {
      out.local_terms.push_back(x);
      continue;
    }
    if (x.op() == Ops::RANGE)
      if (auto p = v.position(x)) out.ranges.push_back(*p);
    for_each_value_source(x, [&](UOp s) { work.push_back(s); });
    if (x.op() != Ops::LOAD || x.nsrc() == 0) continue;
    const UOp mem = memory_of(x.src(0));
    if (!mem.valid()) {
      out.untraced = true;
      return out;
    }
    if (std::find(memories.begin(), memories.end(), mem) != memories.end()) continue;
    memories.push_back(mem);
    const bool shared = mem.addrspace() == AddrSpace::LOCAL;
    for (std::size_t i = 0; i < v.prog.size(); ++i) {
      UOp st = v.prog[i];
      if (st.op() != Ops::STORE || st.nsrc() < 2 || memory_of(st.src(0)) != mem) continue;
      if (shared) {  // which iteration stored it, not who or where
        for (std::size_t c : v.enclosing(i))
          if (v.prog[c].op() == Ops::RANGE) work.push_back(v.prog[c]);
        continue;
      }
      for (UOp s : st.srcs()) work.push_back(s);  // address (through its INDEX), value, gate
      for (std::size_t c : v.enclosing(i)) work.push_back(v.prog[c].op() == Ops::IF ? v.prog[c].src(0) : v.prog[c]);
    }
  }
  return out;
}

/// Barrier-free paths between the LOCAL accesses of a program.
struct access_paths {
  static constexpr std::uint8_t straight = 1, around = 2;  // within one iteration / across a back edge
  std::size_t count = 0;
  std::vector<std::uint8_t> reach;  // reach[a * count + b]: how access b is reached from access a
  constexpr std::uint8_t at(std::size_t a, std::size_t b) const { return reach[a * count + b]; }
};

/// The successor edges of every position (see the top of this header).
constexpr std::vector<std::vector<std::uint32_t>> control_edges(const program_view& v,
                                                             std::vector<std::uint8_t>& back_edge_from) {
  const std::size_t n = v.prog.size();
  std::vector<std::vector<std::uint32_t>> succ(n);
  back_edge_from.assign(n, 0);
  for (std::size_t i = 0; i + 1 < n; ++i) succ[i].push_back(static_cast<std::uint32_t>(i + 1));
  for (std::size_t i = 0; i < n; ++i) {
    if (v.prog[i].op() == Ops::END) {
      for (std::size_t r : v.closes[i]) {
        UOp rng = v.prog[r];
        if (rng.vmax() >= 1 && r + 1 < n) {
          succ[i].push_back(static_cast<std::uint32_t>(r + 1));
          back_edge_from[i] = 1;
        }
        // a loop that may not run: past its END (to the END itself when it closes outer loops too)
        if (rng.src(0).vmin() <= 0) {
          const std::size_t to = v.closes[i].size() > 1 ? i : i + 1;
          if (to < n) succ[r].push_back(static_cast<std::uint32_t>(to));
        }
      }
    } else if (v.prog[i].op() == Ops::IF && v.match[i] != npos) {
      succ[i].push_back(static_cast<std::uint32_t>(v.match[i]));
    }
  }
  return succ;
}

/// For every pair of accesses, whether a barrier-free path leads from one to the other.
constexpr access_paths barrier_free_paths(const program_view& v) {
  access_paths out;
  const std::size_t n = v.prog.size(), m = v.accesses.size();
  out.count = m;
  out.reach.assign(m * m, 0);
  std::vector<std::uint8_t> back_edge_from;
  const auto succ = control_edges(v, back_edge_from);
  std::vector<std::uint32_t> access_at(n, no_pos);
  for (std::size_t k = 0; k < m; ++k) access_at[v.accesses[k].pos] = static_cast<std::uint32_t>(k);
  std::vector<std::uint8_t> seen(n, 0);  // (n, 0): clang 14 rejects value-initializing libstdc++ vectors of scalars
  std::vector<std::pair<std::uint32_t, std::uint8_t>> stack;
  for (std::size_t from = 0; from < m; ++from) {
    std::fill(seen.begin(), seen.end(), 0);
    stack.clear();
    auto follow = [&](std::uint32_t i, std::uint8_t how) {
      for (std::uint32_t s : succ[i]) {
        const std::uint8_t h = (back_edge_from[i] && s <= i) ? access_paths::around : how;
        if (seen[s] & h) continue;
        seen[s] |= h;
        if (access_at[s] != no_pos) out.reach[from * m + access_at[s]] |= h;
        if (v.prog[s].op() != Ops::BARRIER) stack.push_back({s, h});  // a barrier orders everything behind it
      }
    };
    follow(static_cast<std::uint32_t>(v.accesses[from].pos), access_paths::straight);
    while (!stack.empty()) {
      auto [i, h] = stack.back();
      stack.pop_back();
      follow(i, h);
    }
  }
  return out;
}

/// Barrier-free reachability between positions, computed on demand and kept per start.
class barrier_free_reach {
 public:
  constexpr explicit barrier_free_reach(const program_view& v) : v_(v) { succ_ = control_edges(v, back_edge_from_); }

  /// Whether a path from `from` (after it) reaches `to` without passing a BARRIER (`to` may be one).
  constexpr bool reaches(std::size_t from, std::size_t to) { return from_(from)[to] != 0; }

  /// The loops enclosing both `a` and `b` of which two work-items running `a` and `b` in one barrier
  /// interval run one iteration: no barrier-free path from one to the other crosses the loop's back
  /// edge (a path that leaves the loop and enters it again passes the same parts of its body, so it
  /// needs no check of its own). `a == b`: one statement run twice.
  constexpr std::vector<std::size_t> shared_loops(std::size_t a, std::size_t b) {
    std::vector<std::size_t> out;
    const std::vector<std::size_t> around_b = v_.enclosing(b);
    for (std::size_t r : v_.enclosing(a)) {
      if (v_.prog[r].op() != Ops::RANGE || std::find(around_b.begin(), around_b.end(), r) == around_b.end()) continue;
      if (!(v_.prog[r].vmax() >= 1 && v_.match[r] != npos && r + 1 < v_.prog.size()) ||
          (!crosses(a, b, r) && !crosses(b, a, r)))
        out.push_back(r);
    }
    return out;
  }

 private:
  const program_view& v_;
  std::vector<std::vector<std::uint32_t>> succ_;
  std::vector<std::uint8_t> back_edge_from_;
  std::vector<std::pair<std::size_t, std::vector<std::uint8_t>>> cache_;

  // a path from `x` to `y` through the back edge of loop `r` (END -> the RANGE's next position)
  constexpr bool crosses(std::size_t x, std::size_t y, std::size_t r) {
    return reaches(x, v_.match[r]) && (r + 1 == y || reaches(r + 1, y));
  }
  constexpr const std::vector<std::uint8_t>& from_(std::size_t from) {
    for (const auto& [f, seen] : cache_)
      if (f == from) return seen;
    std::vector<std::uint8_t> seen(v_.prog.size(), 0);
    std::vector<std::uint32_t> stack{static_cast<std::uint32_t>(from)};
    while (!stack.empty()) {
      const std::uint32_t i = stack.back();
      stack.pop_back();
      for (std::uint32_t s : succ_[i])
        if (!seen[s]) {
          seen[s] = 1;
          if (v_.prog[s].op() != Ops::BARRIER) stack.push_back(s);
        }
    }
    cache_.emplace_back(from, std::move(seen));
    return cache_.back().second;
  }
};

/// Barriers under control flow that depends on the local id (the IF/RANGE above them), as violations.
constexpr std::vector<BarrierViolation> syntactic_divergence(const program_view& v) {
  std::vector<BarrierViolation> out;
  for (std::size_t b : v.barriers)
    for (std::size_t c : v.enclosing(b)) {
      UOp ctl = v.prog[c];
      if (ctl.nsrc() == 0) continue;
      auto lid = local_id_in(ctl.src(0));
      if (!lid) continue;
      BarrierViolation d;
      d.kind = BarrierViolationKind::divergent_barrier;
      d.barrier_pos = b;
      d.barrier = v.prog[b];
      d.control_pos = c;
      d.control = ctl;
      d.proven = false;
      d.message = cat("barrier verifier: divergent barrier: ", v.line(b), " sits under ", v.line(c), ", whose ",
                      ctl.op() == Ops::IF ? "condition" : "bound", " depends on the local id ", lid->arg().as_string(),
                      ": the work-items of a group may not all reach it");
      out.push_back(std::move(d));
    }
  return out;
}

/// The element size, in bytes, in which the accesses of `buffer` are tracked: the gcd of the
/// buffer's and the accesses' element sizes.
constexpr std::int64_t unit_bytes(const program_view& v, UOp buffer) {
  std::int64_t g = itemsize(buffer.dtype());
  for (const local_access& a : v.accesses)
    if (a.buffer == buffer) {
      const UOp value = a.is_store ? v.prog[a.pos].src(1) : v.prog[a.pos];
      g = std::gcd(g, static_cast<std::int64_t>(itemsize(value.dtype())));
    }
  return g > 0 ? g : 1;
}

}  // namespace uopcg::codegen::detail::verifier
