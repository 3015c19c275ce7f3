// What each BARRIER of a program orders, from the barrier verifier: the races its removal would
// create (buffer, store -> load or load -> store), or none, when it is redundant; and the program
// without its redundant barriers (Target::prune_barriers).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "barrier_verifier.hpp"
#include "barriers.hpp"

namespace uopcg::codegen {

/// One BARRIER and what removing it would break.
struct BarrierRole {
  std::size_t pos = BarrierViolation::npos;  // program position
  UOp barrier;
  /// The races the program without this barrier has and the program has not (empty: redundant),
  /// with positions and nodes of the program given (not of the one without the barrier).
  std::vector<BarrierViolation> orders;
  constexpr bool redundant() const { return orders.empty(); }
};

namespace detail::verifier {
constexpr bool same_finding(const BarrierViolation& a, const BarrierViolation& b) {
  return a.kind == b.kind && a.store_pos == b.store_pos && a.load_pos == b.load_pos;
}
}  // namespace detail::verifier

/// Every BARRIER of `program` with the races its removal would create (each barrier dropped alone,
/// the rest kept).
constexpr std::vector<BarrierRole> explain_barriers(std::span<const UOp> program, const BarrierVerifierOptions& options = {}) {
  std::vector<BarrierRole> out;
  const BarrierReport base = verify_barriers(program, options);
  std::size_t k = 0;
  for (std::size_t i = 0; i < program.size(); ++i) {
    if (program[i].op() != Ops::BARRIER) continue;
    BarrierRole role;
    role.pos = i;
    role.barrier = program[i];
    for (BarrierViolation& v : verify_barriers(drop_barrier(program, k++), options).violations) {
      // back to the positions and nodes of `program`: the lines after the barrier moved up by one
      // (and were rebuilt without it)
      for (std::size_t* p : {&v.store_pos, &v.load_pos, &v.barrier_pos, &v.control_pos})
        if (*p != BarrierViolation::npos && *p >= i) ++*p;
      auto node_at = [&](std::size_t p) { return p < program.size() ? program[p] : UOp(); };
      v.store = node_at(v.store_pos);
      v.load = node_at(v.load_pos);
      v.barrier = node_at(v.barrier_pos);
      v.control = node_at(v.control_pos);
      bool known = false;
      for (const BarrierViolation& b : base.violations) known = known || detail::verifier::same_finding(v, b);
      if (!known) role.orders.push_back(std::move(v));
    }
    out.push_back(std::move(role));
  }
  return out;
}

/// One line per barrier: "%56 BARRIER ...: orders LOCAL buffer %10: STORE %54 -> LOAD %61 (read after
/// write); ..." or ": redundant (removing it creates no race)".
inline std::string explain_barriers_text(std::span<const UOp> program, const BarrierVerifierOptions& options = {}) {
  const std::vector<BarrierRole> roles = explain_barriers(program, options);
  if (roles.empty()) return {};
  const detail::verifier::program_view v = detail::verifier::read_program(program);
  std::string s;
  for (const BarrierRole& r : roles) {
    s += v.line(r.pos).view();
    if (r.redundant()) {
      s += ": redundant (removing it creates no race)\n";
      continue;
    }
    s += ": orders";
    std::vector<std::string> seen;
    for (const BarrierViolation& x : r.orders) {
      if (x.kind == BarrierViolationKind::divergent_barrier || x.kind == BarrierViolationKind::malformed) {
        s += " " + std::string(name(x.kind));
        continue;
      }
      auto bp = v.position(x.buffer);
      const std::string st = std::to_string(x.store_pos), ld = std::to_string(x.load_pos);
      std::string item = " LOCAL buffer %" + (bp ? std::to_string(*bp) : std::string("?")) + ": ";
      if (x.kind == BarrierViolationKind::write_after_read) item += "LOAD %" + ld + " -> STORE %" + st;
      else if (x.kind == BarrierViolationKind::write_after_write) item += "STORE %" + st + " -> STORE %" + ld;
      else item += "STORE %" + st + " -> LOAD %" + ld;
      item += " (" + std::string(name(x.kind)) + (x.loop_carried ? ", across the loop's back edge" : "") + ")";
      if (std::find(seen.begin(), seen.end(), item) != seen.end()) continue;
      s += (seen.empty() ? "" : ";") + item;
      seen.push_back(std::move(item));
    }
    s += "\n";
  }
  return s;
}

namespace detail {
/// `program` without those BARRIERs `candidate` selects that the verifier proves redundant: each is
/// removed only if the program without it (and without those removed before) is still accepted. A
/// program the verifier rejects is returned as it is.
template <class Candidate>
constexpr std::vector<UOp> prune_barriers_if(std::span<const UOp> program, Candidate&& candidate,
                                             const BarrierVerifierOptions& options) {
  std::vector<UOp> cur(program.begin(), program.end());
  if (!verify_barriers(cur, options).ok()) return cur;
  for (std::size_t k = 0, i = 0; i < cur.size(); ++i) {  // k: the barrier's ordinal, as drop_barrier counts
    if (cur[i].op() != Ops::BARRIER) continue;
    if (candidate(cur[i])) {
      std::vector<UOp> without = drop_barrier(cur, k);
      if (verify_barriers(without, options).ok()) {
        cur = std::move(without);
        --i;  // line i now holds the instruction after the dropped barrier
        continue;
      }
    }
    ++k;
  }
  return cur;
}
}  // namespace detail

/// `program` without the BARRIERs the verifier proves redundant (Target::prune_barriers).
constexpr std::vector<UOp> prune_barriers(std::span<const UOp> program, const BarrierVerifierOptions& options = {}) {
  return detail::prune_barriers_if(program, [](UOp) { return true; }, options);
}

/// A BARRIER add_war_store_barrier placed (arg `war_store_barrier_tag`). That rule orders every load
/// of another element before a LOCAL store, racy or not (a tree reduction whose gated halves never
/// overlap needs none); the pipeline keeps only those a race needs.
constexpr bool is_war_store_barrier(UOp u) {
  return u.op() == Ops::BARRIER && u.arg().kind() == ArgKind::string && u.arg().as_string() == war_store_barrier_tag;
}
constexpr bool has_war_store_barrier(std::span<const UOp> program) {
  return std::any_of(program.begin(), program.end(), is_war_store_barrier);
}
/// `program` without the "war store" barriers the verifier proves redundant.
constexpr std::vector<UOp> prune_war_store_barriers(std::span<const UOp> program, const BarrierVerifierOptions& options = {}) {
  if (!has_war_store_barrier(program)) return std::vector<UOp>(program.begin(), program.end());
  return detail::prune_barriers_if(program, is_war_store_barrier, options);
}

}  // namespace uopcg::codegen
