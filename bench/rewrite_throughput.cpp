// Matcher throughput: graph_rewrite of a synthetic graph of >= 100k nodes with a 56-rule set.
// Prints node visits/s and rule attempts/s (one core, wall time, median of several runs); the last
// two lines are `node_visits_per_s <N>` and `rule_attempts_per_s <N>`.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

#include <uopcg/core/builder.hpp>
#include <uopcg/pattern/pattern.hpp>

using namespace uopcg;
namespace P = uopcg::pat;

namespace {
constexpr auto x = P::var<"x">;
constexpr auto c1 = P::cvar<"c1">.dtype<DType::weakint>();
constexpr auto c2 = P::cvar<"c2">.dtype<DType::weakint>();

// x OP K: rewrites only the identities (x+0, x*1, x|0, ...) and otherwise declines, so most
// attempts run the full match and the rewriter.
template <Ops O, int K>
constexpr auto identity_rule() {
  constexpr bool comm = GroupOp::Commutative.contains(O);
  constexpr auto base = P::basic_pat<OpSet{O}>{};
  if constexpr (comm) {
    return P::rule(base.commutative(x, P::const_<K>), [](auto& m) -> std::optional<UOp> {
      if constexpr ((O == Ops::ADD || O == Ops::OR || O == Ops::XOR) && K == 0) return m[x];
      else if constexpr (O == Ops::MUL && K == 1) return m[x];
      else if constexpr ((O == Ops::MUL || O == Ops::AND) && K == 0) return const_like(m[x], 0);
      else if constexpr (O == Ops::MAX && K == 0) return m[x].vmin() >= 0 ? std::optional<UOp>(m[x]) : std::nullopt;
      else return std::nullopt;
    });
  } else {
    return P::rule(base(x, P::const_<K>), [](auto& m) -> std::optional<UOp> {
      if constexpr ((O == Ops::SHL || O == Ops::SHR) && K == 0) return m[x];
      else if constexpr (O == Ops::FLOORDIV && K == 1) return m[x];
      else if constexpr (O == Ops::FLOORMOD && K == 1) return const_like(m[x], 0);
      else return std::nullopt;
    });
  }
}
template <Ops O>
constexpr auto fold_rule() {
  constexpr auto base = P::basic_pat<OpSet{O}>{};
  return P::rule(base(c1, c2), [](auto& m) -> std::optional<UOp> {
    std::int64_t a = m[c1].arg().as_int(), b = m[c2].arg().as_int();
    std::int64_t r = 0;
    if constexpr (O == Ops::ADD) r = a + b;
    else if constexpr (O == Ops::MUL) r = a * b;
    else if constexpr (O == Ops::MAX) r = a > b ? a : b;
    else if constexpr (O == Ops::AND) r = a & b;
    else if constexpr (O == Ops::OR) r = a | b;
    else if constexpr (O == Ops::XOR) r = a ^ b;
    else if constexpr (O == Ops::FLOORDIV) {
      if (b == 0) return std::nullopt;
      r = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
    } else {
      if (b == 0) return std::nullopt;
      r = ((a % b) + b) % b;
    }
    return literal(m.arena(), r);
  });
}

#define UOPCG_FOUR(O) identity_rule<O, 0>(), identity_rule<O, 1>(), identity_rule<O, 2>(), identity_rule<O, 3>()
const auto rule_set = P::rules(
    fold_rule<Ops::ADD>(), fold_rule<Ops::MUL>(), fold_rule<Ops::MAX>(), fold_rule<Ops::AND>(),
    fold_rule<Ops::OR>(), fold_rule<Ops::XOR>(), fold_rule<Ops::FLOORDIV>(), fold_rule<Ops::FLOORMOD>(),
    UOPCG_FOUR(Ops::ADD), UOPCG_FOUR(Ops::MUL), UOPCG_FOUR(Ops::MAX), UOPCG_FOUR(Ops::AND), UOPCG_FOUR(Ops::OR),
    UOPCG_FOUR(Ops::XOR), UOPCG_FOUR(Ops::SHL), UOPCG_FOUR(Ops::SHR), UOPCG_FOUR(Ops::FLOORDIV),
    UOPCG_FOUR(Ops::FLOORMOD), UOPCG_FOUR(Ops::CMPLT), UOPCG_FOUR(Ops::CMPNE));
#undef UOPCG_FOUR

struct lcg {
  std::uint64_t s = 0x9E3779B97F4A7C15ull;
  std::uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(s >> 33);
  }
};

// A random DAG of index math: leaves are ranges and small constants, inner nodes random binary
// ops over earlier nodes (biased to recent ones, so the graph is deep as well as wide).
UOp build_graph(Arena& a, std::size_t target) {
  lcg rng;
  std::vector<UOp> pool;
  for (int i = 0; i < 16; ++i) pool.push_back(range(a, 64 + i, i, AxisType::LOOP));
  for (int i = 0; i < 8; ++i) pool.push_back(literal(a, i % 4));
  constexpr Ops ops[] = {Ops::ADD, Ops::MUL, Ops::MAX, Ops::AND, Ops::OR, Ops::XOR, Ops::SHL, Ops::SHR,
                         Ops::FLOORDIV, Ops::FLOORMOD, Ops::CMPLT, Ops::CMPNE};
  std::vector<UOp> tips;
  while (a.size() < target) {
    Ops op = ops[rng.next() % 12];
    auto pick = [&] {
      std::size_t n = pool.size();
      std::size_t back = rng.next() % (n < 64 ? n : 64);
      return rng.next() % 4 == 0 ? pool[rng.next() % n] : pool[n - 1 - back];
    };
    UOp l = pick(), r = rng.next() % 3 == 0 ? literal(a, static_cast<int>(rng.next() % 5)) : pick();
    if (op == Ops::CMPLT || op == Ops::CMPNE) {
      UOp cmp = a.make(op, DType::bool_, {l, r});
      pool.push_back(a.make(Ops::WHERE, DType::weakint, {cmp, l, r}));
    } else {
      pool.push_back(a.make(op, DType::weakint, {l, r}));
    }
    if (rng.next() % 64 == 0) tips.push_back(pool.back());
  }
  tips.push_back(pool.back());
  return a.make(Ops::SINK, DType::void_, tips);
}
}  // namespace

int main() {
  constexpr std::size_t nodes = 120000;
  // counts (deterministic) from one run with statistics on
  P::rewrite_stats stats;
  std::size_t graph_nodes = 0;
  {
    Arena a;
    UOp root = build_graph(a, nodes);
    graph_nodes = a.size();
    P::rewrite_options o;
    o.stats = &stats;
    P::graph_rewrite(root, rule_set, o);
  }
  std::uint64_t attempts = 0, matches = 0;
  for (std::size_t i = 0; i < stats.attempts.size(); ++i) attempts += stats.attempts[i], matches += stats.matches[i];
  // timing without statistics, fresh arena each run (graph building not timed)
  std::vector<double> secs;
  for (int run = 0; run < 7; ++run) {
    Arena a;
    UOp root = build_graph(a, nodes);
    auto t0 = std::chrono::steady_clock::now();
    UOp out = P::graph_rewrite(root, rule_set);
    auto t1 = std::chrono::steady_clock::now();
    if (!out.valid()) return 1;
    secs.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  double med = secs[secs.size() / 2];
  std::printf("graph nodes          %zu\n", graph_nodes);
  std::printf("rules                %zu\n", decltype(rule_set)::size);
  std::printf("node visits          %llu\n", static_cast<unsigned long long>(stats.visits));
  std::printf("rule attempts        %llu\n", static_cast<unsigned long long>(attempts));
  std::printf("rewrites             %llu\n", static_cast<unsigned long long>(matches));
  std::printf("median time          %.3f ms (of %zu runs, min %.3f ms)\n", med * 1e3, secs.size(), secs.front() * 1e3);
  std::printf("node_visits_per_s %.0f\n", static_cast<double>(stats.visits) / med);
  std::printf("rule_attempts_per_s %.0f\n", static_cast<double>(attempts) / med);
  return 0;
}
