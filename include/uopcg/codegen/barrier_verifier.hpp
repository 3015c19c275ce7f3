// The barrier verifier: a static check of a linearized program's work-group barriers on LOCAL memory.
// PoCL cannot show every missing barrier (docs/reference/pocl-races.md: loop-tail write-after-read
// barriers, readers that run after all writers, races that do not change values); this check can.
//
// Model: every work-item of a work-group runs the same program, and a BARRIER is reached by all of
// them together. Control flow is read from the program order: RANGE ... END is a loop (a back edge
// from the END to the start of the body when the range can have two iterations, a skip edge past
// the END when it can have none), IF ... ENDIF a branch that may be skipped. Two accesses of one
// LOCAL buffer conflict when one is a STORE and the other a LOAD (the check is per buffer, not per
// element, like the barrier rules). A program is accepted when
//   - read after write: no path leads from a STORE to a LOAD of the same LOCAL buffer without
//     passing a BARRIER (including paths around a loop's back edge);
//   - write after read: no path leads from such a LOAD to a STORE of the same buffer without passing
//     a BARRIER (in straight-line code, or across a back edge: the store of a later iteration
//     overwrites what another work-item may still be reading in an earlier one);
//   - no BARRIER sits under control flow that depends on the local id (an IF whose condition, or a
//     loop whose bound, depends on a local SPECIAL): work-items would not all reach it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../core/error.hpp"
#include "../core/graph.hpp"
#include "../core/print.hpp"
#include "../core/text.hpp"

namespace uopcg::codegen {

enum class BarrierViolationKind : std::uint8_t {
  read_after_write,   // a STORE reaches a LOAD of the same LOCAL buffer without a BARRIER
  write_after_read,   // a LOAD reaches a STORE of the same LOCAL buffer without a BARRIER
  divergent_barrier,  // a BARRIER under control flow that depends on the local id
  malformed,          // the program's loop or branch structure cannot be read
};

constexpr std::string_view name(BarrierViolationKind k) {
  switch (k) {
    case BarrierViolationKind::read_after_write: return "read after write";
    case BarrierViolationKind::write_after_read: return "write after read";
    case BarrierViolationKind::divergent_barrier: return "divergent barrier";
    case BarrierViolationKind::malformed: return "malformed program";
  }
  return "?";
}

/// One problem found in a program. Positions index the program; npos where not applicable.
struct BarrierViolation {
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  BarrierViolationKind kind{};
  std::size_t store_pos = npos, load_pos = npos;
  std::size_t barrier_pos = npos, control_pos = npos;  // divergent: the BARRIER and the IF/RANGE above it
  bool loop_carried = false;  // the path goes around a loop's back edge
  UOp store, load, buffer, barrier, control;
  std::string message;
};

struct BarrierReport {
  std::vector<BarrierViolation> violations;
  bool ok() const { return violations.empty(); }
  /// Every violation's message, one per line.
  std::string message() const {
    std::string s;
    for (const auto& v : violations) s += v.message + "\n";
    return s;
  }
};

namespace detail {

// The LOCAL buffer a STORE / LOAD address reaches, or an invalid handle.
constexpr UOp local_buffer_of(UOp addr) {
  UOp x = addr;
  while (x.op() != Ops::PARAM && x.op() != Ops::BUFFER) {
    if (x.nsrc() == 0) return UOp();
    x = x.src(0);
  }
  return x.addrspace() == AddrSpace::LOCAL ? x : UOp();
}

// Whether the value u depends on a local work-item id (a SPECIAL named lidx<d>, or idx<d> when the
// global and local ids are not separated).
constexpr std::optional<UOp> local_id_in(UOp u) {
  auto is_local_id = [](UOp s) {
    if (s.op() != Ops::SPECIAL || s.arg().kind() != ArgKind::string) return false;
    std::string_view n = s.arg().as_string();
    return n.starts_with("lidx") || n.starts_with("idx");
  };
  if (is_local_id(u)) return u;
  for (node_id id : backward_slice_ids(u)) {
    UOp s = u.arena().node(id);
    if (is_local_id(s)) return s;
  }
  return std::nullopt;
}

// The program around the checks: positions, loop and branch structure, successor edges.
struct program_cfg {
  std::span<const UOp> prog;
  std::vector<std::vector<std::uint32_t>> succ;
  std::vector<std::uint8_t> back_edge_from;  // END positions whose edges include a back edge
  std::vector<std::pair<std::size_t, std::size_t>> loops;     // (RANGE pos, END pos)
  std::vector<std::pair<std::size_t, std::size_t>> branches;  // (IF pos, ENDIF pos)
};

// "%<i> <OP> <dtype> (%a, %b) <arg>", sources numbered by program position (`local`, by node id)
inline std::string line_of(std::span<const UOp> prog, const std::vector<std::uint32_t>& local, std::size_t i) {
  text t;
  t.append('%').append(i).append(' ');
  uopcg::detail::print_line(t, prog[i], [&](UOp s) -> std::int64_t {
    return s.id() < local.size() && local[s.id()] != 0xFFFFFFFFu ? static_cast<std::int64_t>(local[s.id()]) : -1;
  });
  return t.str();
}

}  // namespace detail

/// Checks the barrier placement of a linearized program (see the top of this header).
inline BarrierReport verify_barriers(std::span<const UOp> program) {
  BarrierReport report;
  const std::size_t n = program.size();
  if (n == 0) return report;
  Arena& a = program[0].arena();
  std::vector<std::uint32_t> pos(a.size(), 0xFFFFFFFFu);
  for (std::size_t i = 0; i < n; ++i) pos[program[i].id()] = static_cast<std::uint32_t>(i);
  auto position = [&](UOp u) -> std::optional<std::size_t> {
    if (u.id() >= pos.size() || pos[u.id()] == 0xFFFFFFFFu) return std::nullopt;
    return pos[u.id()];
  };
  auto line = [&](std::size_t i) { return detail::line_of(program, pos, i); };
  auto malformed = [&](std::size_t i, std::string why) {
    BarrierViolation v;
    v.kind = BarrierViolationKind::malformed;
    v.control_pos = i;
    v.control = program[i];
    v.message = "barrier verifier: " + line(i) + ": " + why;
    report.violations.push_back(std::move(v));
  };

  detail::program_cfg cfg;
  cfg.prog = program;
  cfg.succ.assign(n, {});
  cfg.back_edge_from.assign(n, 0);
  for (std::size_t i = 0; i + 1 < n; ++i) cfg.succ[i].push_back(static_cast<std::uint32_t>(i + 1));
  for (std::size_t i = 0; i < n; ++i) {
    UOp u = program[i];
    if (u.op() == Ops::END) {
      for (std::size_t k = 1; k < u.nsrc(); ++k) {
        UOp r = u.src(k);
        if (r.op() != Ops::RANGE) continue;
        auto rp = position(r);
        if (!rp || *rp >= i) {
          malformed(i, "closes a RANGE that is not opened before it");
          continue;
        }
        cfg.loops.push_back({*rp, i});
        // the loop may run twice: back edge to the first instruction of the body
        if (r.vmax() >= 1 && *rp + 1 < n) {
          cfg.succ[i].push_back(static_cast<std::uint32_t>(*rp + 1));
          cfg.back_edge_from[i] = 1;
        }
        // the loop may not run at all: from the RANGE past the END
        if (r.nsrc() > 0 && r.src(0).vmin() <= 0 && i + 1 < n) cfg.succ[*rp].push_back(static_cast<std::uint32_t>(i + 1));
      }
    } else if (u.op() == Ops::ENDIF) {
      auto ip = u.nsrc() == 1 && u.src(0).op() == Ops::IF ? position(u.src(0)) : std::nullopt;
      if (!ip || *ip >= i) {
        malformed(i, "closes an IF that is not opened before it");
        continue;
      }
      cfg.branches.push_back({*ip, i});
      cfg.succ[*ip].push_back(static_cast<std::uint32_t>(i));  // the branch not taken
    }
  }

  for (std::size_t i = 0; i < n; ++i)
    if (program[i].op() == Ops::IF &&
        std::none_of(cfg.branches.begin(), cfg.branches.end(), [&](const auto& b) { return b.first == i; }))
      malformed(i, "an IF without its ENDIF");

  // --- divergent barriers ---------------------------------------------------------------------------
  for (std::size_t b = 0; b < n; ++b) {
    if (program[b].op() != Ops::BARRIER) continue;
    auto report_divergent = [&](std::size_t c, UOp lid, std::string_view what) {
      BarrierViolation v;
      v.kind = BarrierViolationKind::divergent_barrier;
      v.barrier_pos = b;
      v.barrier = program[b];
      v.control_pos = c;
      v.control = program[c];
      v.message = "barrier verifier: divergent barrier: " + line(b) + " sits under " + line(c) + ", whose " +
                  std::string(what) + " depends on the local id " + std::string(lid.arg().as_string()) +
                  ": the work-items of a group do not all reach it";
      report.violations.push_back(std::move(v));
    };
    for (const auto& [i, j] : cfg.branches)
      if (i < b && b < j && program[i].nsrc() > 0)
        if (auto lid = detail::local_id_in(program[i].src(0))) report_divergent(i, *lid, "condition");
    for (const auto& [r, e] : cfg.loops)
      if (r < b && b < e && program[r].nsrc() > 0)
        if (auto lid = detail::local_id_in(program[r].src(0))) report_divergent(r, *lid, "bound");
  }

  // --- races on LOCAL buffers --------------------------------------------------------------------
  struct access {
    std::size_t pos;
    UOp buffer;
    bool is_store;
  };
  std::vector<access> accesses;
  for (std::size_t i = 0; i < n; ++i) {
    UOp u = program[i];
    if ((u.op() == Ops::STORE || u.op() == Ops::LOAD) && u.nsrc() > 0)
      if (UOp b = detail::local_buffer_of(u.src(0)); b.valid()) accesses.push_back({i, b, u.op() == Ops::STORE});
  }
  // from each access, the accesses of the other kind on the same buffer reachable without a BARRIER
  std::vector<std::uint8_t> seen(n, 0), via_back(n, 0);
  std::vector<std::uint32_t> stack;
  for (const access& from : accesses) {
    bool has_target = false;
    for (const access& to : accesses) has_target = has_target || (to.buffer == from.buffer && to.is_store != from.is_store);
    if (!has_target) continue;
    std::fill(seen.begin(), seen.end(), 0);
    std::fill(via_back.begin(), via_back.end(), 0);
    stack.clear();
    // nodes are visited first without a back edge where possible (straight-line paths reported as such)
    auto push = [&](std::uint32_t s, bool back) {
      if (seen[s] && (!via_back[s] || back)) return;
      seen[s] = 1;
      via_back[s] = back ? 1 : 0;
      if (program[s].op() == Ops::BARRIER) return;  // the barrier orders everything behind it
      stack.push_back(s);
    };
    for (std::uint32_t s : cfg.succ[from.pos]) push(s, cfg.back_edge_from[from.pos] && s <= from.pos);
    while (!stack.empty()) {
      const std::uint32_t i = stack.back();
      stack.pop_back();
      for (std::uint32_t s : cfg.succ[i]) push(s, via_back[i] || (cfg.back_edge_from[i] && s <= i));
    }
    for (const access& to : accesses) {
      if (to.buffer != from.buffer || to.is_store == from.is_store || !seen[to.pos]) continue;
      BarrierViolation v;
      v.kind = from.is_store ? BarrierViolationKind::read_after_write : BarrierViolationKind::write_after_read;
      v.store_pos = from.is_store ? from.pos : to.pos;
      v.load_pos = from.is_store ? to.pos : from.pos;
      v.store = program[v.store_pos];
      v.load = program[v.load_pos];
      v.buffer = from.buffer;
      v.loop_carried = via_back[to.pos] != 0;
      auto bp = position(from.buffer);
      const std::string buf = bp ? line(*bp) : to_string(from.buffer);
      std::string m = "barrier verifier: ";
      m += name(v.kind);
      m += v.loop_carried ? " across a loop's back edge" : "";
      m += " on LOCAL buffer " + buf + ": ";
      if (from.is_store)
        m += "the STORE " + line(v.store_pos) + " reaches the LOAD " + line(v.load_pos);
      else
        m += "the LOAD " + line(v.load_pos) + " reaches the STORE " + line(v.store_pos);
      m += " without a BARRIER in between";
      v.message = std::move(m);
      report.violations.push_back(std::move(v));
    }
  }
  return report;
}

/// verify_barriers, failing (uopcg::error) with every violation's message when there is any.
inline void check_barriers(std::span<const UOp> program) {
  BarrierReport r = verify_barriers(program);
  if (!r.ok()) fail_runtime(r.message());
}

/// Number of BARRIERs in a program.
inline std::size_t count_barriers(std::span<const UOp> program) {
  std::size_t k = 0;
  for (UOp u : program) k += u.op() == Ops::BARRIER ? 1 : 0;
  return k;
}

/// Fault injection: the program without its `n`-th BARRIER (0-based, in program order). Its users are
/// re-pointed: an END whose body was the BARRIER ends its first source (the body) again; any other
/// user (an AFTER) takes the BARRIER's sources as its own. Later lines are rebuilt on the new nodes.
inline std::vector<UOp> drop_barrier(std::span<const UOp> program, std::size_t n) {
  std::vector<UOp> out;
  if (program.empty()) fail_runtime("drop_barrier: empty program");
  Arena& a = program[0].arena();
  std::size_t k = 0;
  UOp dropped;
  for (UOp u : program)
    if (u.op() == Ops::BARRIER && k++ == n) {
      dropped = u;
      break;
    }
  if (!dropped.valid())
    fail_runtime("drop_barrier: the program has " + std::to_string(k) + " BARRIERs, no BARRIER #" + std::to_string(n));
  std::vector<node_id> replaced;
  auto get = [&](UOp s) {
    return s.id() < replaced.size() && replaced[s.id()] != no_node ? UOp(&a, replaced[s.id()]) : s;
  };
  std::vector<UOp> srcs;
  for (UOp u : program) {
    if (u == dropped) continue;
    srcs.clear();
    bool changed = false;
    for (std::size_t i = 0; i < u.nsrc(); ++i) {
      UOp s = u.src(i);
      if (s == dropped) {
        changed = true;
        if (u.op() == Ops::END && i == 0) srcs.push_back(get(dropped.src(0)));
        else
          for (UOp d : dropped.srcs()) srcs.push_back(get(d));
        continue;
      }
      srcs.push_back(get(s));
      changed = changed || srcs.back() != s;
    }
    UOp nu = changed ? a.make_raw(u.op(), u.dtype(), srcs, a.raw(u.id()).arg, a.tag_id(u.id())) : u;
    if (nu != u) {
      if (replaced.size() <= u.id()) replaced.resize(u.id() + 1, no_node);
      replaced[u.id()] = nu.id();
    }
    out.push_back(nu);
  }
  return out;
}

}  // namespace uopcg::codegen
