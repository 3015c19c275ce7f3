// Compiled with -fno-delete-null-pointer-checks (which g++'s -fsanitize=null implies): under it g++
// does not fold a comparison of two objects' addresses in a constant expression, and every rule set
// failed to compile while its duplicate check compared the rules' program addresses.
#include <doctest/doctest.h>

#include <optional>

#include <uopcg/core/builder.hpp>
#include <uopcg/pattern/pattern.hpp>
#include <uopcg/symbolic/render.hpp>
#include <uopcg/symbolic/sets.hpp>

using namespace uopcg;

namespace P = uopcg::pat;
namespace {
constexpr auto x = P::var<"x">;
}  // namespace

TEST_CASE("rule sets compile and rewrite under -fno-delete-null-pointer-checks") {
  constexpr auto a = P::rules(P::rule(x + 0, [](auto& m) { return m[x]; }), P::rule(x * 1, [](auto& m) { return m[x]; }));
  // x + 1 has the type of x + 0 (one program hash): a duplicate candidate whose values differ
  constexpr auto b = P::rules(P::rule(x + 1, [](auto& m) { return m[x] + 1; }));
  constexpr auto both = a + b;
  static_assert(decltype(both)::size == 3);
  Arena ar;
  UOp v = range(ar, 8, 0, AxisType::LOOP);
  CHECK(P::graph_rewrite((v + 0) * 1, both) == v);
  // the built-in sets too
  CHECK(symbolic::render(P::graph_rewrite((v * 2 + 4) / 2, symbolic::sym)) == "(r0+2)");
}
