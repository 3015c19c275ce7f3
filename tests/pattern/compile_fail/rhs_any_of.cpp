// expect: rewrite(): alternatives (any_of) have no meaning on the right-hand side
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
constexpr auto x = P::var<"x">;
#ifdef CONTROL
[[maybe_unused]] constexpr auto r = P::rewrite(x * 1, x);
#else
[[maybe_unused]] constexpr auto r = P::rewrite(x * 1, P::any_of(x, x + 1));
#endif
int main() { return 0; }
