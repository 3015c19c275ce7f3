// expect: rewrite(): the right-hand side uses a capture name that the left-hand side does not bind
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
constexpr auto x = P::var<"x">;
[[maybe_unused]] constexpr auto y = P::var<"y">;
#ifdef CONTROL
[[maybe_unused]] constexpr auto r = P::rewrite(x + 0, x);
#else
[[maybe_unused]] constexpr auto r = P::rewrite(x + 0, y * 2);
#endif
int main() { return 0; }
