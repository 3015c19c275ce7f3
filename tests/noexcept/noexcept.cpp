// The library in a translation unit built with -fno-exceptions -fno-rtti, the way an embedded build
// drops in single_include/uopcg/uopcg.hpp.
//
// Compiled twice by tests/noexcept/meson.build from this one file: against the single header alone
// (UOPCG_EXPECT_SINGLE_HEADER; only single_include/ on the include path) and against the umbrella
// include/uopcg/uopcg.hpp. It includes <uopcg/uopcg.hpp> and nothing else of uopcg, and no test
// framework (doctest needs neither, but a plain main() keeps the TU exactly what a user compiles).
//
// 1. The core and pattern API work: a kernel graph built with the builder, a rule set (composed,
//    inspected), graph_rewrite with a context, printing, and the same rewrite in a static_assert.
// 2. Errors reach the configured handler with their message and the process aborts. The death
//    cases run one per process (`--die CASE`), started by tests/noexcept/death_test.py, which
//    expects SIGABRT and the case's text on stderr (`--list` prints the cases and their texts).
//    A wrapper rather than fork(): under qemu-user (the aarch64 cross build) a forked child of a
//    guest process can hang, while the wrapper starts each case through meson's exe_wrapper.
//    Covered: a handler that aborts, a handler that returns (the library aborts after it), no
//    handler (the default prints "uopcg error: <message>" and aborts), and an error raised deep in
//    the rewrite engine (a non-terminating rule set).
//
// Usage: noexcept_test              the API checks; exit 0 if all pass
//        noexcept_test --list       the death cases: NAME<TAB>TEXT<TAB>TEXT2 per line
//        noexcept_test --die CASE   run one death case (it must abort)
#include <uopcg/uopcg.hpp>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#error "tests/noexcept must be compiled with -fno-exceptions"
#endif
#if defined(__cpp_rtti) || defined(__GXX_RTTI)
#error "tests/noexcept must be compiled with -fno-rtti"
#endif
static_assert(UOPCG_HAS_EXCEPTIONS == 0, "core/error.hpp must see that exceptions are off");

#ifdef UOPCG_EXPECT_SINGLE_HEADER
#ifndef UOPCG_SINGLE_HEADER
#error "expected single_include/uopcg/uopcg.hpp, found include/uopcg/uopcg.hpp"
#endif
#if __has_include(<uopcg/core/error.hpp>)
#error "include/ must not be on the include path of the single-header variant"
#endif
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <sys/resource.h>

using namespace uopcg;
namespace P = uopcg::pat;

namespace {

int failures = 0;

void check(bool ok, const char* what, int line) {
  if (!ok) {
    std::fprintf(stderr, "FAIL (line %d): %s\n", line, what);
    ++failures;
  }
}
#define CHECK(...) check(static_cast<bool>(__VA_ARGS__), #__VA_ARGS__, __LINE__)

// --- 1. the API without exceptions -------------------------------------------------------------

constexpr auto x = P::var<"x">;
constexpr auto c1 = P::cvar<"c1">.dtype<DType::weakint>();
constexpr auto c2 = P::cvar<"c2">.dtype<DType::weakint>();

constexpr auto identities = P::rules(
    P::rule("x+0", x + 0, [](auto& m) { return m[x]; }),
    P::rule("x*1", x * 1, [](auto& m) { return m[x]; }),
    P::rule("x*0", x * 0, [](auto& m) { return const_like(m[x], 0); }));
constexpr auto folding = P::rules(
    P::rule("fold add", c1 + c2, [](auto& m) { return literal(m.arena(), m[c1].arg().as_int() + m[c2].arg().as_int()); }),
    P::rule("fold mul", c1 * c2, [](auto& m) { return literal(m.arena(), m[c1].arg().as_int() * m[c2].arg().as_int()); }));
constexpr auto simplify = identities + folding;  // rule sets compose
static_assert(decltype(simplify)::size == 5);
static_assert(decltype(simplify)::count_for(Ops::ADD) == 2);
static_assert(decltype(simplify)::count_for(Ops::MUL) == 3);
static_assert(decltype(simplify)::count_for(Ops::LOAD) == 0);

// out[i] = a[i]*1 + b[i]*0 + (2*3 + 4) over a 16-wide loop
struct kernel {
  UOp sink, out, a, b, i;
};
constexpr kernel build(Arena& ar) {
  kernel k;
  k.out = param(ar, 0, DType::int32, 16);
  k.a = param(ar, 1, DType::int32, 16);
  k.b = param(ar, 2, DType::int32, 16);
  k.i = range(ar, 16, 0, AxisType::LOOP);
  UOp va = load(index(k.a, k.i)), vb = load(index(k.b, k.i));
  UOp val = va * 1 + vb * 0 + (literal(ar, 2) * literal(ar, 3) + literal(ar, 4));
  k.sink = sink(end(store(index(k.out, k.i), val), k.i));
  return k;
}

struct counting_ctx {
  int rewrites = 0;
};
constexpr auto counted = P::rules(P::rule("count x*1", x * 1, [](counting_ctx& c, auto& m) {
  ++c.rewrites;
  return m[x];
}));

// The whole thing in constant evaluation too (nothing of it needs exceptions or RTTI).
constexpr bool rewrites_at_compile_time() {
  Arena ar;
  kernel k = build(ar);
  UOp r = P::graph_rewrite(k.sink, simplify);
  auto before = toposort(k.sink).size(), after = toposort(r).size();
  return after < before && print_graph(r).view().find("STORE") != std::string_view::npos;
}
static_assert(rewrites_at_compile_time());

void api_checks() {
  Arena ar;
  kernel k = build(ar);
  CHECK(k.sink.op() == Ops::SINK);
  CHECK(build(ar).sink == k.sink);  // hash-consed: the same graph again is the same node

  UOp r = P::graph_rewrite(k.sink, simplify);
  CHECK(r != k.sink);
  // the stored value became LOAD(a[i]) + 10
  UOp st = r.src(0).src(0);
  CHECK(st.op() == Ops::STORE);
  UOp val = st.src(1);
  CHECK(val.op() == Ops::ADD);
  CHECK(val.src(0) == load(index(k.a, k.i)));
  CHECK(val.src(1).op() == Ops::CONST && val.src(1).arg().as_int() == 10);
  CHECK(toposort(r).size() < toposort(k.sink).size());

  // bottom-up gives the same result; a context is threaded through
  P::rewrite_options bu;
  bu.bottom_up = true;
  CHECK(P::graph_rewrite(k.sink, simplify, bu) == r);
  counting_ctx ctx;
  UOp r2 = P::graph_rewrite(ar, k.sink, counted, ctx);
  CHECK(ctx.rewrites == 1);
  CHECK(r2 != k.sink);

  // statistics
  P::rewrite_stats stats;
  P::rewrite_options so;
  so.stats = &stats;
  P::graph_rewrite(k.sink, simplify, so);
  CHECK(stats.rules.size() == 5);
  CHECK(stats.rules[3].name == "fold add");

  // printing (no iostream: the library prints into its own text buffer)
  std::string g = graph_to_string(r);
  CHECK(g.find("SINK") != std::string::npos);
  CHECK(g.find("STORE") != std::string::npos);
  CHECK(g.find("RANGE") != std::string::npos);
  CHECK(to_string(val).find("ADD") != std::string::npos);
  std::fputs(g.c_str(), stdout);
}

// --- 2. errors go to the handler and abort -----------------------------------------------------

[[noreturn]] void aborting_handler(const char* message) {
  std::fprintf(stderr, "noexcept-handler: %s\n", message);
  std::abort();
}
void returning_handler(const char* message) {  // breaks the contract: the library aborts after it
  std::fprintf(stderr, "returning-handler: %s\n", message);
}

struct death_case {
  const char* name;
  const char* expect;   // text stderr must contain
  const char* expect2;  // and this too
  void (*run)();
};

void empty_sink() {
  Arena ar;
  (void)sink(std::vector<UOp>{});
}
void wrong_arena() {
  Arena a1, a2;
  UOp r = range(a1, 4, 0, AxisType::LOOP) + 1;
  counting_ctx ctx;
  P::graph_rewrite(a2, r, simplify, ctx);
}
void nonterminating() {
  constexpr auto ping_pong = P::rules(P::rule("one to two", x + 1, [](auto& m) { return m[x] + 2; }),
                                      P::rule("two to one", x + 2, [](auto& m) { return m[x] + 1; }));
  Arena ar;
  P::rewrite_options o;
  o.max_rewrites = 64;
  o.name = "ping_pong";
  P::graph_rewrite(range(ar, 4, 0, AxisType::LOOP) + 1, ping_pong, o);
}

const death_case death_cases[] = {
    {"handler", "noexcept-handler: sink(): needs at least one side effect", "",
     [] {
       set_error_handler(&aborting_handler);
       empty_sink();
     }},
    {"returning-handler", "returning-handler: sink(): needs at least one side effect", "",
     [] {
       set_error_handler(&returning_handler);
       empty_sink();
     }},
    {"default", "uopcg error: graph_rewrite: the root belongs to another arena", "", [] { wrong_arena(); }},
    {"rewrite-engine", "noexcept-handler: ping_pong: ", "the rule set does not terminate",
     [] {
       set_error_handler(&aborting_handler);
       nonterminating();
     }},
};

const death_case* find_case(std::string_view name) {
  for (const auto& c : death_cases)
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]) == "--list") {
    for (const auto& c : death_cases) std::printf("%s\t%s\t%s\n", c.name, c.expect, c.expect2);
    return 0;
  }
  if (argc == 3 && std::string_view(argv[1]) == "--die") {
    const death_case* c = find_case(argv[2]);
    if (!c) {
      std::fprintf(stderr, "unknown death case %s\n", argv[2]);
      return 2;
    }
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // an expected abort leaves no core file behind
    c->run();
    std::fputs("the error returned to the caller\n", stderr);
    return 1;
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--list | --die CASE]\n", argv[0]);
    return 2;
  }
  api_checks();
  if (failures) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::puts("noexcept: API checks passed (-fno-exceptions -fno-rtti)");
  return 0;
}
