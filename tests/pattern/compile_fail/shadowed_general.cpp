// expect: the rule at position `never_firing_rule` (from 0, in the set's order) matches only nodes that the earlier rule at position `earlier_rule` always rewrites
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
using uopcg::Ops;
constexpr auto x = P::var<"x">;
[[maybe_unused]] constexpr auto general = P::rules(P::rule(P::op<Ops::ADD>(x, P::cvar<"c">), [](auto& m) { return m[x]; }));
[[maybe_unused]] constexpr auto specific = P::rules(P::rule(P::op<Ops::ADD>(x, P::const_<0>), [](auto& m) { return m[x]; }));
#ifdef CONTROL
[[maybe_unused]] constexpr auto rs = specific + general;  // specific first: both reachable
#else
[[maybe_unused]] constexpr auto rs = general + specific;  // ADD(x, CONST) always rewrites before ADD(x, 0) is tried
#endif
int main() { return 0; }
