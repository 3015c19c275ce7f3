// expect: a capture name is bound to patterns that no single node can satisfy
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
using uopcg::Ops;
#ifdef CONTROL
[[maybe_unused]] constexpr auto pat = P::op<Ops::ADD>(P::cvar<"x">, P::op<Ops::CONST, Ops::RANGE>.as<"x">);
#else
[[maybe_unused]] constexpr auto pat = P::op<Ops::ADD>(P::cvar<"x">, P::op<Ops::RANGE>.as<"x">);
#endif
[[maybe_unused]] constexpr auto r = P::rule(pat, [](auto& m) { return m.root(); });
int main() { return 0; }
