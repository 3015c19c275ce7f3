// expect: rule set: a rule can never fire
// `a + b + c` checks each `+` across its two sides only: a duplicate of a's rule in c is still caught.
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
constexpr auto x = P::var<"x">;
[[maybe_unused]] constexpr auto a = P::rules(P::rule(x + 0, [](auto& m) { return m[x]; }));
[[maybe_unused]] constexpr auto b = P::rules(P::rule(x * 1, [](auto& m) { return m[x]; }));
#ifdef CONTROL
// a different pattern: every rule reachable
[[maybe_unused]] constexpr auto c = P::rules(P::rule(x * 2, [](auto& m) { return m[x]; }));
#else
[[maybe_unused]] constexpr auto c = P::rules(P::rule(x + 0, [](auto& m) { return m[x]; }));
#endif
[[maybe_unused]] constexpr auto rs = a + b + c;
int main() { return 0; }
