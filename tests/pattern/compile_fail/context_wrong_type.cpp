// expect: graph_rewrite: a rule's rewriter takes a context (ctx, m) of another type than the one passed to graph_rewrite
#include <uopcg/core/builder.hpp>
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
constexpr auto x = P::var<"x">;
struct counter {
  int n = 0;
};
constexpr auto rs = P::rules(P::rule(x + 0, [](counter& c, auto& m) {
  ++c.n;
  return m[x];
}));
int main() {
  uopcg::Arena a;
  const uopcg::UOp v = uopcg::literal(a, 1) + 0;
#ifdef CONTROL
  counter c;
#else
  int c = 0;
#endif
  return P::graph_rewrite(v, rs, c).valid() ? 0 : 1;
}
