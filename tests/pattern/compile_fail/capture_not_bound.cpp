// expect: the rewriter asks for a capture name that the rule's pattern does not bind
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
constexpr auto x = P::var<"x">;
[[maybe_unused]] constexpr auto y = P::var<"y">;
#ifdef CONTROL
[[maybe_unused]] constexpr auto r = P::rule(x + 0, [](auto& m) { return m[x]; });
#else
[[maybe_unused]] constexpr auto r = P::rule(x + 0, [](auto& m) { return m[y]; });
#endif
int main() { return 0; }
