// expect: a pattern lists a number of sources that its op can never have
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
using uopcg::Ops;
constexpr auto x = P::var<"x">;
#ifdef CONTROL
[[maybe_unused]] constexpr auto r = P::rule(P::op<Ops::WHERE>(x, x, x), [](auto& m) { return m[x]; });
#else
[[maybe_unused]] constexpr auto r = P::rule(P::op<Ops::WHERE>(x, x), [](auto& m) { return m[x]; });
#endif
int main() { return 0; }
