// expect: a capture name is bound to patterns that no single node can satisfy
#include <uopcg/pattern/pattern.hpp>
namespace P = uopcg::pat;
using uopcg::DType;
using uopcg::Ops;
#ifdef CONTROL
[[maybe_unused]] constexpr auto pat = P::op<Ops::ADD>(P::var<"x">.dtype<DType::float32>(), P::var<"x">.dtype<DType::float32, DType::int32>());
#else
[[maybe_unused]] constexpr auto pat = P::op<Ops::ADD>(P::var<"x">.dtype<DType::float32>(), P::var<"x">.dtype<DType::int32>());
#endif
[[maybe_unused]] constexpr auto r = P::rule(pat, [](auto& m) { return m.root(); });
int main() { return 0; }
