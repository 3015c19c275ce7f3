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
// The timed call, out of line so that a profiler can be limited to it:
//   valgrind --tool=callgrind --toggle-collect='*timed_rewrite*' build/bench/rewrite_throughput
// (instructions per visit = collected Ir / (31 * visits)).
[[gnu::noinline]] UOp timed_rewrite(UOp root) { return P::graph_rewrite(root, rule_set); }
double median_ms(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2] * 1e3;
}

// The matcher's figure on a graph at the rule set's fixpoint: the counts (one run with statistics,
// deterministic), then 31 timed runs without them.
struct fixpoint_timing {
  std::size_t nodes = 0;
  std::uint64_t visits = 0, attempts = 0;
  double median_ms = 0, best_ms = 0;
  double visits_per_s(double ms) const { return static_cast<double>(visits) / ms * 1e3; }
};
std::optional<fixpoint_timing> time_fixpoint(UOp fixed) {
  P::rewrite_stats stats;
  P::rewrite_options so;
  so.stats = &stats;
  if (P::graph_rewrite(fixed, rule_set, so) != fixed) return std::nullopt;
  fixpoint_timing t;
  t.nodes = toposort(fixed).size();
  t.visits = stats.visits;
  for (auto n : stats.attempts) t.attempts += n;
  std::vector<double> secs;
  for (int run = 0; run < 31; ++run) {
    auto s0 = std::chrono::steady_clock::now();
    UOp out = timed_rewrite(fixed);
    auto s1 = std::chrono::steady_clock::now();
    if (out != fixed) return std::nullopt;
    secs.push_back(std::chrono::duration<double>(s1 - s0).count());
  }
  t.median_ms = median_ms(secs);
  t.best_ms = *std::min_element(secs.begin(), secs.end()) * 1e3;
  return t;
}

// A small graph over old nodes of a large arena: its ids span the arena, so the engine's id-ordered
// scan would cross mostly empty bitmap words; it falls back to the depth-first loop instead. The
// microseconds per rewrite of a 16-node graph whose leaf is the arena's first node.
double sparse_rewrite_us() {
  Arena a;
  UOp leaf = range(a, 8, 0, AxisType::LOOP);
  for (int i = 0; i < 400000; ++i) literal(a, 1000 + i);
  UOp g = leaf;
  for (int i = 0; i < 5; ++i) g = a.make(Ops::MUL, DType::weakint, {a.make(Ops::ADD, DType::weakint, {g, literal(a, i)}), literal(a, 2)});
  constexpr int reps = 2000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i)
    if (P::graph_rewrite(g, rule_set) == leaf) return -1;
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count() * 1e6 / reps;
}
}  // namespace

// Two figures. The matcher's: a graph already at the rule set's fixpoint, so every node is offered
// to its rules and every rule attempt runs, but nothing is rebuilt (that is the arena's cost, not
// the matcher's). And, for context, the first rewrite of the random graph, where a rewrite near the
// leaves forces most ancestors to be rebuilt (hash-consing new nodes), and the matcher's figure on a
// small graph whose nodes and memo stay in the L2 cache (the large graph's figure is bound by memory
// as much as by instructions), and the cost of a small rewrite in a large arena (sparse_rewrite_us).
// The last two lines are the matcher's figures on the large graph.
int main() {
  constexpr std::size_t build_nodes = 200000, small_nodes = 12000;
  const double sparse_us = sparse_rewrite_us();
  std::optional<fixpoint_timing> small;
  {
    Arena sa;
    small = time_fixpoint(P::graph_rewrite(build_graph(sa, small_nodes), rule_set));
  }
  Arena a;
  UOp random_root = build_graph(a, build_nodes);
  std::size_t random_nodes = toposort(random_root).size();

  // first rewrite of the random graph (not repeated: it creates the nodes the next runs would find)
  P::rewrite_stats first;
  P::rewrite_options fo;
  fo.stats = &first;
  auto t0 = std::chrono::steady_clock::now();
  UOp fixed = P::graph_rewrite(random_root, rule_set, fo);
  auto t1 = std::chrono::steady_clock::now();
  double first_ms = std::chrono::duration<double>(t1 - t0).count() * 1e3;
  const std::optional<fixpoint_timing> big = time_fixpoint(fixed);
  if (!small || !big) return 1;
  std::uint64_t first_attempts = 0, first_rewrites = 0;
  for (std::size_t i = 0; i < first.attempts.size(); ++i) first_attempts += first.attempts[i], first_rewrites += first.matches[i];

  std::printf("rules                            %zu\n", decltype(rule_set)::size);
  std::printf("random graph                     %zu nodes\n", random_nodes);
  std::printf("  first rewrite                  %.2f ms: %llu visits, %llu attempts, %llu rewrites (%.2f M visits/s)\n",
              first_ms, static_cast<unsigned long long>(first.visits), static_cast<unsigned long long>(first_attempts),
              static_cast<unsigned long long>(first_rewrites), static_cast<double>(first.visits) / first_ms / 1e3);
  std::printf("small fixpoint graph             %zu nodes: %.2f M visits/s (median of 31), %.2f M (fastest)\n",
              small->nodes, small->visits_per_s(small->median_ms) / 1e6, small->visits_per_s(small->best_ms) / 1e6);
  std::printf("sparse graph                     %.2f us per rewrite of 16 nodes over a 400k-node arena\n", sparse_us);
  std::printf("fixpoint graph                   %zu nodes\n", big->nodes);
  std::printf("  graph_rewrite (median of 31)   %.2f ms (fastest %.2f ms): %llu visits, %llu attempts\n", big->median_ms,
              big->best_ms, static_cast<unsigned long long>(big->visits), static_cast<unsigned long long>(big->attempts));
  std::printf("  fastest run                    %.2f M visits/s\n", big->visits_per_s(big->best_ms) / 1e6);
  std::printf("node_visits_per_s %.0f\n", big->visits_per_s(big->median_ms));
  std::printf("rule_attempts_per_s %.0f\n", static_cast<double>(big->attempts) / big->median_ms * 1e3);
  return 0;
}
