// BEAM search over kernel opts (tinygrad/codegen/opt/search.py: the `actions` list,
// get_kernel_actions and beam_search). A round extends every kernel of the beam by each valid
// action, has the candidates timed and keeps the `width` fastest; the search ends when a round
// improves the best time by less than `min_progress_us`. Timing is the caller's: a device
// (runtime/beam_search.hpp) or a model in tests. Candidates reach the timer in a fixed order and
// ties keep that order, so the same times always give the same result.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "scheduler.hpp"

namespace uopcg::codegen::opt {

/// The search's knobs, named after tinygrad's environment variables.
struct BeamOptions {
  std::size_t width = 4;           // BEAM: kernels kept per round
  double min_progress_us = 0.01;   // BEAM_MIN_PROGRESS: a round must gain this much to go on
  std::int64_t upcast_max = 256;   // BEAM_UPCAST_MAX: product of the UPCAST and UNROLL sizes
  std::int64_t local_max = 1024;   // BEAM_LOCAL_MAX: product of the WARP, LOCAL and GROUP_REDUCE sizes
  bool padto = false;              // BEAM_PADTO: also try PADTO
  bool nolocals = false;           // NOLOCALS: also try NOLOCALS
  std::int64_t use_tc = 1;         // TC: the third field of the TC actions' arg
  std::int64_t tc_opt = 2;         // TC_OPT of the TC actions (the search's default is 2)
  std::size_t max_rounds = 0;      // 0: until the stopping rule
  std::uint64_t seed = 0;          // handed to the timer (its random inputs)
};

/// tinygrad's action list, in its order: each group amount by amount, axis by axis.
constexpr std::vector<Opt> beam_actions(const BeamOptions& o = {}) {
  using enum OptOps;
  std::vector<Opt> out;
  auto group = [&](OptOps op, std::initializer_list<std::int64_t> amounts, std::int64_t axes) {
    for (std::int64_t amt : amounts)
      for (std::int64_t axis = 0; axis < axes; ++axis) out.push_back(Opt{op, axis, Arg::integer(amt)});
  };
  group(UPCAST, {0, 2, 3, 4, 5, 7}, 8);
  group(UNROLL, {0, 4, 7}, 5);
  group(LOCAL, {2, 3, 4, 8, 13, 16, 29}, 6);
  group(GROUPTOP, {13, 16, 28, 29, 32, 49, 64, 256}, 3);
  group(GROUP, {0, 4, 8, 16}, 3);
  if (o.padto) group(PADTO, {32}, 7);
  out.push_back(Opt{LOCAL, 0, Arg::integer(32)});
  out.push_back(Opt{LOCAL, 6, Arg::integer(2)});
  out.push_back(Opt{TC, 0, Arg::tuple_of(-1, 0, o.use_tc)});
  for (std::int64_t axis = 0; axis < 9; ++axis) out.push_back(Opt{TC, axis, Arg::tuple_of(-1, o.tc_opt, o.use_tc)});
  for (std::int64_t a = 0; a < 5; ++a)
    for (std::int64_t b = a + 1; b < 5; ++b) out.push_back(Opt{SWAP, a, Arg::integer(b)});
  group(THREAD, {2, 3, 4, 5, 8, 12, 16, 24, 32, 64}, 3);
  if (o.nolocals) out.push_back(Opt{NOLOCALS, std::nullopt, Arg()});
  return out;
}

namespace detail {

constexpr bool same_opt(const Opt& a, const Opt& b) { return a.op == b.op && a.axis == b.axis && a.arg == b.arg; }

}  // namespace detail

/// One valid action and the kernel it gives.
struct BeamCandidate {
  std::size_t action;  // index into the action list
  Scheduler kernel;
};

/// tinygrad's get_kernel_actions (without the kernel itself): every action that applies to `s`,
/// in action order. Skipped: an axis the kernel lacks; an amount equal to the whole axis where the
/// list has the same opt with amount 0; an invalid opt; more upcast or local work than the limits.
constexpr std::vector<BeamCandidate> kernel_actions(const Scheduler& s, std::span<const Opt> actions,
                                                    const BeamOptions& o = {}) {
  std::vector<BeamCandidate> out;
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const Opt& a = actions[i];
    if (a.axis && a.op != OptOps::TC) {
      const auto real = s.real_axis(a);
      if (!real.ok()) continue;
      const std::size_t ax = real.value_or_fail();
      if (a.arg.is_int() && s.const_size(ax) && s.size(ax) == a.arg.as_int()) {
        const Opt whole{a.op, a.axis, Arg::integer(0)};
        bool listed = false;
        for (const Opt& b : actions) listed = listed || detail::same_opt(b, whole);
        if (listed) continue;
      }
    }
    Scheduler s2 = s.copy();
    if (!s2.apply_opt(a).ok()) continue;
    std::int64_t up = 1, lcl = 1;
    const std::vector<AxisType> types = s2.axis_types();
    for (std::size_t k = 0; k < types.size(); ++k) {
      const AxisType t = types[k];
      if (t == AxisType::UPCAST || t == AxisType::UNROLL) up *= s2.size(k);
      else if (t == AxisType::WARP || t == AxisType::LOCAL || t == AxisType::GROUP_REDUCE) lcl *= s2.size(k);
    }
    std::int64_t tc_up = 1;
    if (const TensorCore* tc = s2.tensor_core()) tc_up = tc->dims[0] * tc->dims[1] * tc->dims[2] / tc->threads;
    if (up / tc_up > o.upcast_max || lcl > o.local_max) continue;
    out.push_back(BeamCandidate{i, std::move(s2)});
  }
  return out;
}

/// What the timer is told about the round it times.
struct BeamRound {
  std::size_t round = 1;  // 1, 2, ...
  /// Three times the best time so far (infinity in the first round): a candidate slower than this
  /// may stop after its first run (tinygrad's early_stop).
  double early_stop_us = std::numeric_limits<double>::infinity();
  std::uint64_t seed = 0;
};

/// The timer's answer, one entry per candidate in order: its time in microseconds, or nullopt when
/// it is left out (it did not compile, its program was timed before, its outputs are wrong, it is
/// over a limit). `stop`: end the search after this round (a time budget ran out).
struct BeamTimes {
  std::vector<std::optional<double>> us;
  bool stop = false;
};

using BeamTimer = std::function<BeamTimes(std::span<const Scheduler> candidates, const BeamRound& round)>;

/// After each round: how many candidates it had and timed, and the beam's best so far.
struct BeamProgress {
  std::size_t round = 0, candidates = 0, timed = 0;
  double best_us = std::numeric_limits<double>::infinity();
  std::vector<Opt> best_opts;
};

struct BeamResult {
  Scheduler best;  // the starting kernel when no candidate was ever timed
  double best_us = std::numeric_limits<double>::infinity();
  std::size_t rounds = 0, candidates = 0, timed = 0;
  bool stopped = false;  // the timer ended the search (a budget): the result of a partial search
};

/// tinygrad's beam_search from `start` (a Scheduler after convert_loop_to_global), without its disk
/// cache (the caller's). The starting kernel itself is never a candidate, as in tinygrad.
inline BeamResult beam_search(const Scheduler& start, const BeamOptions& o, const BeamTimer& timer,
                              const std::function<void(const BeamProgress&)>& on_round = {}) {
  if (o.width < 1) fail("beam_search: the beam width must be at least 1");
  if (!timer) fail("beam_search: no timer given");
  const std::vector<Opt> actions = beam_actions(o);
  struct Entry {
    Scheduler kernel;
    double us;
  };
  std::vector<Entry> beam{{start, std::numeric_limits<double>::infinity()}};
  BeamResult r{start};
  for (bool exiting = false; !exiting;) {
    std::vector<Scheduler> candidates;
    for (const Entry& e : beam)
      for (BeamCandidate& c : kernel_actions(e.kernel, actions, o)) candidates.push_back(std::move(c.kernel));
    ++r.rounds;
    r.candidates += candidates.size();
    BeamRound round{r.rounds, beam[0].us * 3, o.seed};
    BeamTimes times = candidates.empty() ? BeamTimes{} : timer(candidates, round);
    if (times.us.size() > candidates.size()) fail("beam_search: the timer gave more times than candidates");
    std::vector<Entry> timed;
    for (std::size_t i = 0; i < times.us.size(); ++i)
      if (times.us[i] && !std::isnan(*times.us[i])) timed.push_back({std::move(candidates[i]), *times.us[i]});
    const std::size_t n_timed = timed.size();
    r.timed += n_timed;
    std::stable_sort(timed.begin(), timed.end(), [](const Entry& a, const Entry& b) { return a.us < b.us; });
    exiting = timed.empty() || timed[0].us < o.min_progress_us || beam[0].us - timed[0].us < o.min_progress_us;
    if (!exiting) {
      if (timed.size() > o.width) timed.erase(timed.begin() + static_cast<std::ptrdiff_t>(o.width), timed.end());
      beam = std::move(timed);
    } else if (!timed.empty() && timed[0].us < beam[0].us) {
      beam = {std::move(timed[0])};
    }
    if (on_round) on_round(BeamProgress{r.rounds, candidates.size(), n_timed, beam[0].us, beam[0].kernel.applied_opts()});
    if (times.stop || (o.max_rounds && r.rounds >= o.max_rounds)) {
      r.stopped = times.stop;
      exiting = true;
    }
  }
  r.best = std::move(beam[0].kernel);
  r.best_us = beam[0].us;
  return r;
}

}  // namespace uopcg::codegen::opt
