// BEAM search without a device: tinygrad's action list, the candidates of a kernel (the expected
// action indices were printed by tinygrad 0.14.0's get_kernel_actions on the same kernels and
// targets), and the search driven by model timers: the beam keeps the fastest, the stopping rule,
// early stop, the budget stop, and the same seed giving the same result.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <uopcg/codegen/opt/beam.hpp>
#include <uopcg/codegen/opt/parse.hpp>

#include "kernels.hpp"

using namespace uopcg;
namespace O = uopcg::codegen::opt;
using opt_test::bcast_add;
using opt_test::matmul;
using opt_test::rowsum;

namespace {

Opt opt(OptOps op, std::int64_t axis, std::int64_t arg) { return Opt{op, axis, Arg::integer(arg)}; }

O::Scheduler start(UOp ast, const Target& t, const std::vector<Opt>& opts = {}) {
  O::Scheduler k(ast, t);
  k.convert_loop_to_global();
  for (const Opt& o : opts) REQUIRE(k.apply_opt(o).ok());
  return k;
}

std::vector<std::size_t> action_indices(const O::Scheduler& k, const O::BeamOptions& o = {}) {
  const std::vector<Opt> actions = O::beam_actions(o);
  std::vector<std::size_t> out;
  for (const O::BeamCandidate& c : O::kernel_actions(k, actions, o)) out.push_back(c.action);
  return out;
}

std::string text_of(const std::vector<Opt>& opts) { return O::opts_text(opts).str(); }

/// A deterministic model time for a kernel: the k-th opt of its list scales the time by a factor in
/// [0.55, 1.25) drawn from (seed, the opts so far) and by 1 + k/4, so that the search stops by its
/// rule after a few rounds.
double model_us(const std::vector<Opt>& opts, std::uint64_t seed) {
  double t = 100;
  std::uint64_t h = 1469598103934665603ull ^ seed;
  for (std::size_t k = 0; k < opts.size(); ++k) {
    for (char c : O::opts_text(std::vector<Opt>{opts[k]}).view()) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    h ^= h >> 29;
    t *= (0.55 + 0.7 * static_cast<double>(h % 10007) / 10007.0) * (1 + static_cast<double>(k) / 4);
  }
  return t;
}

struct Recorded {
  std::vector<std::vector<std::string>> rounds;  // per round, each candidate's opts
  std::vector<double> early_stop;
};

O::BeamTimer model_timer(Recorded& rec) {
  return [&rec](std::span<const O::Scheduler> cands, const O::BeamRound& r) {
    O::BeamTimes out;
    rec.rounds.emplace_back();
    rec.early_stop.push_back(r.early_stop_us);
    for (const O::Scheduler& k : cands) {
      rec.rounds.back().push_back(text_of(k.applied_opts()));
      out.us.push_back(model_us(k.applied_opts(), r.seed));
    }
    return out;
  };
}

}  // namespace

TEST_CASE("beam_actions: tinygrad's list, in its order") {
  const std::vector<Opt> a = O::beam_actions();
  REQUIRE(a.size() == 193);
  CHECK(text_of({a[0], a[1], a[8], a[48], a[63], a[105], a[129], a[141]}) ==
        "UPCAST:0:0,UPCAST:1:0,UPCAST:0:2,UNROLL:0:0,LOCAL:0:2,GROUPTOP:0:13,GROUP:0:0,LOCAL:0:32");
  CHECK(text_of({a[142], a[143], a[144], a[152], a[153], a[162], a[163], a[192]}) ==
        "LOCAL:6:2,TC:0:(-1,0,1),TC:0:(-1,2,1),TC:8:(-1,2,1),SWAP:0:1,SWAP:3:4,THREAD:0:2,THREAD:2:64");
  O::BeamOptions o;
  o.padto = true;
  o.nolocals = true;
  o.use_tc = 2;
  o.tc_opt = 1;
  const std::vector<Opt> b = O::beam_actions(o);
  REQUIRE(b.size() == 193 + 7 + 1);
  CHECK(text_of({b[141], b[147], b[148], b[150], b[151], b[200]}) ==
        "PADTO:0:32,PADTO:6:32,LOCAL:0:32,TC:0:(-1,0,2),TC:0:(-1,1,2),NOLOCALS");
}

TEST_CASE("kernel_actions: the candidates tinygrad's get_kernel_actions gives") {
  Arena a;
  const Target pocl = Target::pocl();
  const std::vector<Opt> mm_opts{opt(OptOps::LOCAL, 0, 4), opt(OptOps::LOCAL, 1, 4), opt(OptOps::UPCAST, 0, 2),
                                 opt(OptOps::UPCAST, 1, 4), opt(OptOps::UNROLL, 0, 4)};
  using V = std::vector<std::size_t>;
  CHECK(action_indices(start(rowsum(a), pocl)) == V{8, 24, 53, 63, 75, 81, 93, 108, 117, 123, 126, 129, 132, 135, 138, 141});
  CHECK(action_indices(start(matmul(a), pocl)) ==
        V{8, 9, 24, 25, 53, 63, 64, 75, 76, 81, 82, 93, 94, 108, 117, 123, 129, 132, 135, 138, 141, 153});
  CHECK(action_indices(start(bcast_add(a), pocl)) == V{8, 9, 24, 25, 63, 64, 75, 76, 81, 82, 93, 94, 141, 153});
  CHECK(action_indices(start(bcast_add(a), pocl, {opt(OptOps::UPCAST, 0, 2)})) ==
        V{0, 8, 9, 24, 25, 63, 64, 75, 76, 81, 82, 93, 94, 153});
  CHECK(action_indices(start(matmul(a), pocl, mm_opts)) ==
        V{0, 1, 2, 3, 8, 9, 10, 11, 24, 53, 63, 64, 75, 76, 81, 108, 129, 132, 135, 153});
  CHECK(action_indices(start(rowsum(a), pocl, {opt(OptOps::GROUPTOP, 0, 16)})) ==
        V{8, 24, 48, 49, 53, 54, 63, 75, 81, 93, 108, 129, 132, 135, 141});
  SUBCASE("the upcast limit") {
    O::BeamOptions o;
    o.upcast_max = 32;
    CHECK(action_indices(start(matmul(a), pocl, {opt(OptOps::UPCAST, 0, 4), opt(OptOps::UPCAST, 1, 4)}), o) ==
          V{8, 9, 63, 64, 75, 76, 81, 82, 93, 94, 108, 117, 123, 129, 132, 135, 138, 153});
  }
  SUBCASE("targets without locals, with threads") {
    Target t = pocl;
    t.renderer.has_local = false;
    CHECK(action_indices(start(rowsum(a), t)) == V{8, 24, 53});
    t.renderer.has_threads = true;
    t.renderer.global_max = {8, 1, 1};
    CHECK(action_indices(start(rowsum(a), t)) == V{8, 24, 53, 163, 169, 175});
  }
  SUBCASE("each candidate is the kernel with one more valid opt") {
    const O::Scheduler k = start(matmul(a), pocl, {opt(OptOps::LOCAL, 0, 4)});
    const std::vector<Opt> actions = O::beam_actions();
    for (const O::BeamCandidate& c : O::kernel_actions(k, actions)) {
      REQUIRE(c.kernel.applied_opts().size() == 2);
      CHECK(text_of({c.kernel.applied_opts()[1]}) == text_of({actions[c.action]}));
      O::Scheduler again = k.copy();
      CHECK(again.apply_opt(actions[c.action]).ok());
      CHECK(again.ast() == c.kernel.ast());
    }
    // the kernel itself is unchanged
    CHECK(k.applied_opts().size() == 1);
  }
}

TEST_CASE("beam_search: the beam keeps the fastest, and each round extends every kernel in it") {
  Arena a;
  const Target t = Target::pocl();
  const O::Scheduler k = start(matmul(a), t);
  for (std::size_t width : {1u, 3u}) {
    INFO("width " << width);
    Recorded rec;
    O::BeamOptions o;
    o.width = width;
    o.seed = 7;
    std::vector<O::BeamProgress> progress;
    const O::BeamResult r = O::beam_search(k, o, model_timer(rec), [&](const O::BeamProgress& p) { progress.push_back(p); });
    REQUIRE(rec.rounds.size() == r.rounds);
    REQUIRE(r.rounds >= 2);
    CHECK(!r.stopped);
    // round n+1's candidates are the extensions of exactly round n's `width` fastest
    std::vector<std::string> beam{""};
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t n = 0; n < rec.rounds.size(); ++n) {
      std::vector<std::string> parents;
      for (const std::string& c : rec.rounds[n]) {
        const std::string parent = c.find(',') == std::string::npos ? "" : c.substr(0, c.rfind(','));
        if (parents.empty() || parents.back() != parent) parents.push_back(parent);
      }
      CHECK(parents == beam);
      std::multimap<double, std::string> by_time;
      for (const std::string& c : rec.rounds[n]) by_time.emplace(model_us(O::parse_opts(c), o.seed), c);
      beam.clear();
      for (const auto& [us, c] : by_time)
        if (beam.size() < width) beam.push_back(c);
      CHECK(rec.early_stop[n] == best * 3);
      CHECK(progress[n].candidates == rec.rounds[n].size());
      CHECK(progress[n].timed == rec.rounds[n].size());
      const double round_best = by_time.begin()->first;
      if (n + 1 < rec.rounds.size()) {
        CHECK(round_best < best - o.min_progress_us);  // it improved, so the search went on
        best = round_best;
        CHECK(progress[n].best_us == best);
      } else {
        CHECK(!(round_best < best - o.min_progress_us));  // the stopping rule
        if (round_best < best) best = round_best;
      }
    }
    CHECK(r.best_us == best);
    CHECK(model_us(r.best.applied_opts(), o.seed) == best);
    CHECK(r.candidates == [&] {
      std::size_t n = 0;
      for (const auto& round : rec.rounds) n += round.size();
      return n;
    }());
  }
}

TEST_CASE("beam_search: the same seed gives the same result") {
  Arena a;
  const Target t = Target::pocl();
  const O::Scheduler k = start(rowsum(a), t);
  O::BeamOptions o;
  o.width = 2;
  auto run = [&](std::uint64_t seed) {
    Recorded rec;
    o.seed = seed;
    const O::BeamResult r = O::beam_search(k, o, model_timer(rec));
    return std::pair{text_of(r.best.applied_opts()), rec.rounds};
  };
  std::map<std::string, int> results;
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    const auto first = run(seed), second = run(seed);
    CHECK(first == second);
    ++results[first.first];
  }
  CHECK(results.size() > 1);  // the seed reaches the timer
}

TEST_CASE("beam_search: the stopping rule and what is left out") {
  Arena a;
  const Target t = Target::pocl();
  const O::Scheduler k = start(rowsum(a), t);
  O::BeamOptions o;
  o.width = 2;
  // round 1: the first candidate 50 us, the others 60; round 2: `second` for the first candidate
  auto timer_for = [](double second, std::size_t* rounds) -> O::BeamTimer {
    return [second, rounds](std::span<const O::Scheduler> cands, const O::BeamRound& r) {
      ++*rounds;
      O::BeamTimes out;
      for (std::size_t i = 0; i < cands.size(); ++i) out.us.push_back(r.round == 1 ? (i == 0 ? 50.0 : 60.0) : (i == 0 ? second : 70.0));
      return out;
    };
  };
  SUBCASE("a gain under min_progress ends the search, and the better kernel is kept") {
    std::size_t rounds = 0;
    const O::BeamResult r = O::beam_search(k, o, timer_for(49.995, &rounds));
    CHECK(rounds == 2);
    CHECK(r.rounds == 2);
    CHECK(r.best_us == 49.995);
    CHECK(r.best.applied_opts().size() == 2);
  }
  SUBCASE("no gain: the first round's best") {
    std::size_t rounds = 0;
    const O::BeamResult r = O::beam_search(k, o, timer_for(55, &rounds));
    CHECK(r.rounds == 2);
    CHECK(r.best_us == 50);
    CHECK(text_of(r.best.applied_opts()) == "UPCAST:0:2");  // action 8, rowsum's first candidate
  }
  SUBCASE("a gain of min_progress or more goes on") {
    std::size_t rounds = 0;
    o.max_rounds = 2;
    const O::BeamResult r = O::beam_search(k, o, timer_for(49.98, &rounds));
    CHECK(r.rounds == 2);
    CHECK(!r.stopped);
    CHECK(r.best_us == 49.98);
  }
  SUBCASE("nothing timed: the starting kernel, after one round") {
    std::size_t calls = 0;
    const O::BeamResult r = O::beam_search(k, o, [&](std::span<const O::Scheduler> c, const O::BeamRound&) {
      ++calls;
      return O::BeamTimes{std::vector<std::optional<double>>(c.size()), false};
    });
    CHECK(calls == 1);
    CHECK(r.rounds == 1);
    CHECK(r.timed == 0);
    CHECK(r.best_us == std::numeric_limits<double>::infinity());
    CHECK(r.best.applied_opts().empty());
    CHECK(r.best.ast() == k.ast());
  }
  SUBCASE("candidates left out are never in the beam") {
    // every candidate but the slowest is left out (not compiled, a duplicate, wrong outputs, ...)
    const O::BeamResult r = O::beam_search(k, o, [&](std::span<const O::Scheduler> c, const O::BeamRound& round) {
      O::BeamTimes out;
      for (std::size_t i = 0; i < c.size(); ++i)
        out.us.push_back(i + 1 == c.size() ? std::optional<double>(100.0 / static_cast<double>(round.round)) : std::nullopt);
      return out;
    });
    CHECK(r.timed + 1 == r.rounds);  // it improved every round, until no action applied
    CHECK(text_of({r.best.applied_opts()[0]}) == "LOCAL:0:32");  // rowsum's last candidate
  }
  SUBCASE("the timer's stop ends the search after its round") {
    std::size_t rounds = 0;
    O::BeamTimer base = timer_for(40, &rounds);
    const O::BeamResult r = O::beam_search(k, o, [&](std::span<const O::Scheduler> c, const O::BeamRound& round) {
      O::BeamTimes out = base(c, round);
      out.stop = true;
      out.us.resize(3);  // the budget ran out after three candidates
      return out;
    });
    CHECK(r.rounds == 1);
    CHECK(r.stopped);
    CHECK(r.timed == 3);
    CHECK(r.best_us == 50);
  }
}

TEST_CASE("beam_search: bad requests are errors") {
  Arena a;
  const Target t = Target::pocl();
  const O::Scheduler k = start(rowsum(a), t);
  O::BeamOptions o;
  o.width = 0;
  CHECK_THROWS_WITH(O::beam_search(k, o, [](std::span<const O::Scheduler>, const O::BeamRound&) { return O::BeamTimes{}; }),
                    doctest::Contains("width"));
  o.width = 2;
  CHECK_THROWS_WITH(O::beam_search(k, o, O::BeamTimer{}), doctest::Contains("no timer"));
  CHECK_THROWS_WITH(O::beam_search(k, o, [](std::span<const O::Scheduler> c, const O::BeamRound&) {
                      return O::BeamTimes{std::vector<std::optional<double>>(c.size() + 1, 1.0), false};
                    }),
                    doctest::Contains("more times"));
}

TEST_CASE("opts_text: the text parse_opts reads") {
  const std::vector<Opt> opts{opt(OptOps::LOCAL, 0, 4), opt(OptOps::UPCAST, 1, 0), Opt{OptOps::NOLOCALS, std::nullopt, Arg()},
                              Opt{OptOps::TC, 0, Arg::tuple_of(-1, 2, 1)}, Opt{OptOps::SWAP, 0, Arg::integer(1)}};
  const std::string s = O::opts_text(opts).str();
  CHECK(s == "LOCAL:0:4,UPCAST:1:0,NOLOCALS,TC:0:(-1,2,1),SWAP:0:1");
  CHECK(text_of(O::parse_opts(s)) == s);
  CHECK(O::opts_text(std::vector<Opt>{}).str().empty());
  CHECK_THROWS_WITH(O::opts_text(std::vector<Opt>{Opt{OptOps::NOLOCALS, std::nullopt, Arg::integer(1)}}),
                    doctest::Contains("NOLOCALS"));
}

TEST_CASE("beam_actions and kernel_actions run in constant evaluation") {
  static_assert(O::beam_actions().size() == 193);
  static_assert([] {
    Arena a;
    const Target t = Target::pocl();
    O::Scheduler k(rowsum(a), t);
    k.convert_loop_to_global();
    // the first 25 actions (UPCAST on every axis by 0, 2, 3 and on axis 0 by 4): clang's default
    // constexpr step limit does not reach the whole list
    const std::vector<Opt> actions = O::beam_actions();
    std::vector<std::size_t> out;
    for (const O::BeamCandidate& c : O::kernel_actions(k, std::span<const Opt>(actions).first(25))) out.push_back(c.action);
    return out == std::vector<std::size_t>{8, 24};
  }());
}
