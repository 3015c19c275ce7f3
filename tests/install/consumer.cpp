// Built by scripts/test.sh (step "install") against an installed uopcg only: through pkg-config
// (uopcg: include/'s headers; uopcg-single: the single headers), through CMake's find_package(uopcg)
// (uopcg::uopcg, uopcg::single), and as a meson subproject. The declarations-only header is enough
// to build and print a kernel (this one-file program compiles graph building's run-time paths itself,
// UOPCG_CORE_IMPLEMENTATION); UOPCG_CONSUMER_SINGLE (0 or 1) says which headers must have been found.
#define UOPCG_CORE_IMPLEMENTATION
#include <uopcg/compile.hpp>

#include <cstdio>
#include <string>

#if defined(UOPCG_CONSUMER_SINGLE) && UOPCG_CONSUMER_SINGLE != defined(UOPCG_SINGLE_HEADER)
#error "the consumer found the other kind of uopcg headers than the one it was built for"
#endif

int main() {
  using namespace uopcg;
  Arena a;
  UOp x = param(a, 0, DType::float32, 4), out = param(a, 1, DType::float32, 4);
  UOp i = range(a, 4, 0, AxisType::LOOP);
  const std::string g = graph_to_string(sink(end(store(index(out, i), index(x, i) + 1.0), i)));
  if (g.find("STORE") == std::string::npos) return 1;
#ifdef UOPCG_SINGLE_HEADER
  std::printf("consumer: installed uopcg usable (single headers), %zu bytes of graph text\n", g.size());
#else
  std::printf("consumer: installed uopcg usable (include/), %zu bytes of graph text\n", g.size());
#endif
  return 0;
}
