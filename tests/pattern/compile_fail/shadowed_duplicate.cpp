// expect: rule set: a rule can never fire
#include <optional>
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
constexpr auto x = P::var<"x">;
#ifdef CONTROL
// the earlier rule may decline (std::optional), so the later one is reachable
[[maybe_unused]] constexpr auto rs = P::rules(P::rule(x + 0, [](auto& m) -> std::optional<uopcg::UOp> { return m[x]; }),
                             P::rule(x + 0, [](auto& m) { return m[x]; }));
#else
[[maybe_unused]] constexpr auto rs = P::rules(P::rule(x + 0, [](auto& m) { return m[x]; }), P::rule(x + 0, [](auto& m) { return m[x]; }));
#endif
int main() { return 0; }
