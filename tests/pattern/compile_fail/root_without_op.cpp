// expect: the root of a pattern must name at least one op
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
constexpr auto x = P::var<"x">;
#ifdef CONTROL
[[maybe_unused]] constexpr auto r = P::rule(P::op<uopcg::Ops::CAST>(x), [](auto& m) { return m[x]; });
#else
[[maybe_unused]] constexpr auto r = P::rule(x, [](auto& m) { return m[x]; });
#endif
int main() { return 0; }
