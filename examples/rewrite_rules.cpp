// The README's first example: two rewrite rules as types, applied to a small kernel graph, and the
// result printed. tools/check_doc_examples.py keeps the region below equal to the README's block.
// doc: readme rules
#include <cstdio>
#include <uopcg/core/builder.hpp>
#include <uopcg/core/print.hpp>
#include <uopcg/pattern/pattern.hpp>

namespace P = uopcg::pat;
constexpr auto x = P::var<"x">;
// rules are types: the compiler checks captures, source counts and shadowing;
// root_dtype(x): only where the result has x's dtype (a weak x in a strong sum keeps the sum)
constexpr auto cleanup = P::rules(P::rewrite("x*1", x * 1, x, P::root_dtype(x)),
                                  P::rewrite("x+0", x + 0, x, P::root_dtype(x)));

int main() {
  using namespace uopcg;
  Arena a;
  // out[i] = x[i] * 1 + 0, for i in [0, 16)
  UOp in  = param(a, 0, DType::float32, 16);
  UOp out = param(a, 1, DType::float32, 16);
  UOp i   = range(a, 16, 0, AxisType::LOOP);
  UOp k   = sink(end(store(index(out, i), load(index(in, i)) * 1 + 0), i));
  UOp simplified = P::graph_rewrite(k, cleanup);   // also works inside a constant expression
  std::fputs(graph_to_string(simplified).c_str(), stdout);
}
// end doc
