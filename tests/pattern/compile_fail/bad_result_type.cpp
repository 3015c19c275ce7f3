// expect: a rewriter must return UOp, std::optional<UOp> or pat::gated
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
constexpr auto x = P::var<"x">;
#ifdef CONTROL
[[maybe_unused]] constexpr auto r = P::rule(x + 0, [](auto& m) { return m[x]; });
#else
[[maybe_unused]] constexpr auto r = P::rule(x + 0, [](auto&) { return 0; });
#endif
int main() { return 0; }
