// What an embedded user compiles: one translation unit that includes the whole single header, builds
// a kernel with the builder API, defines its own rule set and rewrites the kernel with it, then
// prints the graph. scripts/compile-budget.sh measures the compile time and memory of this file
// (goal: <= 10 s and <= 1 GB on g++ -O2); docs/embedded.md has the table.
//
//   g++ -std=c++20 -O2 -I single_include examples/single_header_budget.cpp -o budget && ./budget
//
// It also builds with -fno-exceptions -fno-rtti (errors then go to the handler installed below).
#include <uopcg/uopcg.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace uopcg;
namespace P = uopcg::pat;

namespace {

// --- a rule set of the kind a user writes: algebraic identities and constant folding ----------

constexpr auto x = P::var<"x">;
constexpr auto y = P::var<"y">;
constexpr auto c1 = P::cvar<"c1">.dtype<DType::weakint>();
constexpr auto c2 = P::cvar<"c2">.dtype<DType::weakint>();

constexpr UOp int_const(Arena& a, std::int64_t v) { return literal(a, v); }
constexpr std::int64_t value(UOp c) { return c.arg().as_int(); }

constexpr auto identities = P::rules(
    P::rule("x+0", x + 0, [](auto& m) { return m[x]; }),
    P::rule("x*1", x * 1, [](auto& m) { return m[x]; }),
    P::rule("x*0", x * 0, [](auto& m) { return const_like(m[x], 0); }),
    P::rule("x//1", floordiv(x, 1), [](auto& m) { return m[x]; }),
    P::rule("x%1", x % 1, [](auto& m) { return const_like(m[x], 0); }),
    P::rule("max(x,x)", maximum(x, x), [](auto& m) { return m[x]; }),
    P::rule("where(true,x,y)", P::where(P::const_<true>, x, y), [](auto& m) { return m[x]; }),
    P::rule("where(false,x,y)", P::where(P::const_<false>, x, y), [](auto& m) { return m[y]; }));

constexpr auto folding = P::rules(
    P::rule("c1+c2", c1 + c2, [](auto& m) { return int_const(m.arena(), value(m[c1]) + value(m[c2])); }),
    P::rule("c1*c2", c1 * c2, [](auto& m) { return int_const(m.arena(), value(m[c1]) * value(m[c2])); }),
    P::rule("(x+c1)+c2", (x + c1) + c2,
            [](auto& m) { return m[x] + int_const(m.arena(), value(m[c1]) + value(m[c2])); }),
    P::rule("(x*c1)*c2", (x * c1) * c2,
            [](auto& m) { return m[x] * int_const(m.arena(), value(m[c1]) * value(m[c2])); }),
    P::rule("x*c1+x*c2", x * c1 + x * c2,
            [](auto& m) { return m[x] * int_const(m.arena(), value(m[c1]) + value(m[c2])); }),
    P::rule("x+x", x + x, [](auto& m) { return m[x] * 2; }));

constexpr auto simplify = identities + folding;
static_assert(decltype(simplify)::size == 14);

// A user pass with a context: tag every LOAD with its order of discovery.
struct load_numbering {
  std::int64_t next = 0;
};
constexpr auto number_loads = P::rules(P::rule(
    "number LOAD", P::op<Ops::LOAD>.as<"ld">.such_that([](UOp u) { return !u.has_tag(); }),
    [](load_numbering& ctx, auto& m) { return with_tag(m.root(), Arg(ctx.next++)); }));

// --- the kernel: out[g, l] = sum_r a[g*K + r] * b[r*N + l] + bias[l], with index math to simplify --

constexpr std::int64_t M = 32, N = 64, K = 128;

struct kernel {
  UOp sink;
  std::size_t nodes = 0;
};

constexpr kernel build(Arena& ar) {
  UOp out = param(ar, 0, DType::float32, M * N);
  UOp a = param(ar, 1, DType::float32, M * K);
  UOp b = param(ar, 2, DType::float32, K * N);
  UOp bias = param(ar, 3, DType::float32, N);
  UOp g = range(ar, M, 0, AxisType::GLOBAL);
  UOp l = range(ar, N, 1, AxisType::LOCAL);
  UOp r = range(ar, K, 2, AxisType::REDUCE);
  // index expressions as a front end emits them: full of +0, *1 and constant subexpressions
  UOp ia = (g * (K * 1) + 0) + (r * 1) * 1;
  UOp ib = (r * int_const(ar, 8) * int_const(ar, 8)) + (l + 0) % (N * 2);
  UOp prod = load(index(a, ia)) * load(index(b, ib));
  UOp acc = reduce(prod, Ops::ADD, r);
  UOp val = acc + load(index(bias, l / 1 + (int_const(ar, 3) + int_const(ar, -3))));
  UOp st = store(index(out, g * N + l), maximum(val, val));
  kernel k;
  k.sink = sink(end(st, g, l));
  k.nodes = toposort(k.sink).size();
  return k;
}

// The same rewrite at compile time: the rule set and the engine work in constant evaluation.
constexpr std::size_t simplified_size() {
  Arena ar;
  return toposort(P::graph_rewrite(build(ar).sink, simplify)).size();
}
static_assert(simplified_size() < 40);

[[noreturn]] void on_error(const char* message) {
  std::fprintf(stderr, "single_header_budget: %s\n", message);
  std::abort();
}

}  // namespace

int main() {
  set_error_handler(&on_error);
  Arena ar;
  kernel k = build(ar);

  P::rewrite_stats stats;
  P::rewrite_options opt;
  opt.name = "simplify";
  opt.stats = &stats;
  P::no_context none;
  UOp simplified = P::graph_rewrite(ar, k.sink, simplify, none, opt);

  P::rewrite_options bu;
  bu.bottom_up = true;
  if (P::graph_rewrite(k.sink, simplify, bu) != simplified) on_error("top-down and bottom-up rewrites disagree");

  load_numbering numbering;
  UOp numbered = P::graph_rewrite(simplified, number_loads, numbering);

  std::printf("kernel: %zu nodes, %zu after simplify (%zu at compile time), %lld loads numbered\n", k.nodes,
              toposort(simplified).size(), simplified_size(), static_cast<long long>(numbering.next));
  for (std::size_t i = 0; i < stats.rules.size(); ++i)
    if (stats.matches[i])
      std::printf("  %-18.*s %llu\n", static_cast<int>(stats.rules[i].name.size()), stats.rules[i].name.data(),
                  static_cast<unsigned long long>(stats.matches[i]));
  std::fputs(graph_to_string(numbered).c_str(), stdout);
  return numbering.next == 3 ? 0 : 1;
}
