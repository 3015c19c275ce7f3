// What the barrier verifier reports (codegen/barrier_verifier.hpp): one violation per problem, with
// the program positions and nodes it involves, and how the verdict was reached.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../core/arena.hpp"
#include "../core/text.hpp"

namespace uopcg::codegen {

enum class BarrierViolationKind : std::uint8_t {
  read_after_write,   // a STORE and a later LOAD of another work-item touch one LOCAL element, no BARRIER between
  write_after_read,   // a LOAD and a later STORE of another work-item touch one LOCAL element, no BARRIER between
  divergent_barrier,  // the work-items of a group do not all reach a BARRIER together
  malformed,          // the program's structure cannot be read
  write_after_write,  // two work-items STORE to one LOCAL element with no BARRIER between
};

constexpr std::string_view name(BarrierViolationKind k) {
  switch (k) {
    case BarrierViolationKind::read_after_write: return "read after write";
    case BarrierViolationKind::write_after_read: return "write after read";
    case BarrierViolationKind::divergent_barrier: return "divergent barrier";
    case BarrierViolationKind::malformed: return "malformed program";
    case BarrierViolationKind::write_after_write: return "write after write";
  }
  return "?";
}

/// How the verifier decided about the races of a program.
enum class BarrierAnalysis : std::uint8_t {
  none,        // no LOCAL access (or the program is malformed)
  enumerated,  // every work-item of a group run through the program's index arithmetic: exact
  symbolic,    // index bounds and divisibility, per pair: a proof when it accepts; beyond the
               // enumeration budget, also what could not be proven (`fallback` says why)
};

constexpr std::string_view name(BarrierAnalysis a) {
  switch (a) {
    case BarrierAnalysis::none: return "none";
    case BarrierAnalysis::enumerated: return "enumerated";
    case BarrierAnalysis::symbolic: return "symbolic";
  }
  return "?";
}

/// One problem found in a program. Positions index the program; npos where not applicable.
struct BarrierViolation {
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  BarrierViolationKind kind{};
  /// Races: the STORE and the LOAD (for write after write, `load_pos`/`load` is the other STORE).
  std::size_t store_pos = npos, load_pos = npos;
  std::size_t barrier_pos = npos, control_pos = npos;  // divergent: the BARRIER and the IF/RANGE above it
  bool loop_carried = false;  // the two accesses are in different iterations of a loop
  /// true: two work-items were shown to touch one element (a witness is in the message); false: the
  /// accesses could not be proven disjoint (the message says why).
  bool proven = true;
  UOp store, load, buffer, barrier, control;
  text message;  // text, not std::string: the verifier also runs in constant evaluation
};

struct BarrierReport {
  std::vector<BarrierViolation> violations;
  BarrierAnalysis analysis = BarrierAnalysis::none;
  /// Why the exact enumeration was not used (empty when it was, or when there is nothing to check).
  text fallback;
  constexpr bool ok() const { return violations.empty(); }
  /// Every violation's message, one per line.
  constexpr text message_text() const {
    text s;
    for (const auto& v : violations) s.append(v.message).append('\n');
    return s;
  }
  std::string message() const { return message_text().str(); }
};

namespace detail::verifier {
/// The verifier's messages, put together from their parts as `text <<` prints them.
template <class... T>
constexpr text cat(const T&... parts) {
  text t;
  (t << ... << parts);
  return t;
}

/// std::stable_sort of violations by `less`, usable in constant evaluation (std::stable_sort is not
/// constexpr in C++20): std::sort with the original position breaking ties.
template <class Less>
constexpr void stable_sort_violations(std::vector<BarrierViolation>& v, Less less) {
  std::vector<std::size_t> order(v.size(), 0);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (less(v[a], v[b])) return true;
    return !less(v[b], v[a]) && a < b;
  });
  std::vector<BarrierViolation> sorted;
  sorted.reserve(v.size());
  for (std::size_t i : order) sorted.push_back(std::move(v[i]));
  v = std::move(sorted);
}
}  // namespace detail::verifier

}  // namespace uopcg::codegen
