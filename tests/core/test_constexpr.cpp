// Everything in the core works in constant evaluation: building ≥ 100-node graphs, interning,
// toposort, substitute, ranges and printing are checked by static_assert on both compilers.
#include <doctest/doctest.h>

#include <string_view>

#include <uopcg/uopcg.hpp>

using namespace uopcg;

namespace {

// A chain of `n` elementwise stages over a 2-level loop nest: roughly 4 nodes per stage.
constexpr UOp build_kernel(Arena& a, int stages) {
  UOp in = param(a, 1, DType::float32, 1024);
  UOp out = param(a, 0, DType::float32, 1024);
  UOp g = range(a, 256, 0, AxisType::GLOBAL);
  UOp u = range(a, 4, 1, AxisType::LOOP);
  UOp idx = g * 4 + u;
  UOp v = load(index(in, idx));
  for (int i = 0; i < stages; ++i) v = maximum(v * (1.0 + i), cast(idx + i, DType::float32));
  return sink(end(store(index(out, idx), v), g, u));
}

constexpr bool builds_and_walks() {
  Arena a;
  UOp k = build_kernel(a, 30);
  auto order = toposort(k);
  if (order.size() < 100) return false;
  if (order.back() != k) return false;
  // every node appears after its sources
  for (std::size_t i = 0; i < order.size(); ++i)
    for (UOp s : order[i].srcs()) {
      bool before = false;
      for (std::size_t j = 0; j < i; ++j) before |= order[j] == s;
      if (!before) return false;
    }
  // hash-consing: building it again adds no node
  std::size_t n = a.size();
  UOp again = build_kernel(a, 30);
  return again == k && a.size() == n;
}
static_assert(builds_and_walks());

constexpr bool substitutes() {
  Arena a;
  UOp k = build_kernel(a, 30);
  UOp old_in = param(a, 1, DType::float32, 1024);
  UOp new_in = param(a, 2, DType::float32, 1024);
  UOp k2 = substitute(k, {{old_in, new_in}});
  if (k2 == k) return false;
  bool found_new = false, found_old = false;
  for (UOp u : toposort(k2)) {
    found_new |= u == new_in;
    found_old |= u == old_in;
  }
  // and back again gives the original graph, node for node
  return found_new && !found_old && substitute(k2, {{new_in, old_in}}) == k;
}
static_assert(substitutes());

constexpr bool range_properties() {
  Arena a;
  UOp k = build_kernel(a, 30);
  UOp store_node = k.src(0).src(0);
  return ranges(store_node).size() == 2 && ranges(k.src(0)).empty() && ended_ranges(k.src(0)).size() == 2;
}
static_assert(range_properties());

// one line per node, the SINK last
constexpr bool prints_every_node() {
  Arena a;
  const UOp k = build_kernel(a, 4);
  const text printed = print_graph(k);
  const std::string_view s = printed.view();
  std::size_t lines = 0;
  for (char ch : s) lines += ch == '\n';
  const std::size_t last_line = s.rfind('\n', s.size() - 2) + 1;
  return lines == toposort(k).size() && s.substr(last_line).find("SINK") != std::string_view::npos;
}
static_assert(prints_every_node());

constexpr bool prints_exact_line() {
  Arena a;
  UOp r = range(a, 4, 0, AxisType::LOOP);
  return to_text(r + 1) == "%3 = ADD weakint (%1, %2)";
}
static_assert(prints_exact_line());

// a tinygrad Variable (an ALU PARAM with bounds and a name): its record holds a tuple and a string
constexpr bool builds_a_variable() {
  Arena a;
  ParamArg v;
  v.dtype = DType::weakint;
  v.vmin_vmax = std::pair<std::int64_t, std::int64_t>{1, 64};
  v.has_name = true;
  v.name = "n";
  v.addrspace = AddrSpace::ALU;
  const UOp n = a.make(Ops::PARAM, DType::weakint, {a.make(Ops::STACK, DType::void_, {})}, v.to_arg());
  const ParamArg back = ParamArg::from(n.arg());
  return back.name.view() == "n" && back.vmin_vmax->second == 64 && n.vmax() == 64;
}
static_assert(builds_a_variable());
// the builder's variable() is that node, and sizes a range at compile time too
constexpr bool builder_variable() {
  Arena a;
  const UOp n = variable(a, "n", 1, 64);
  const UOp r = range(n * 2, 0, AxisType::LOOP);
  return n.op() == Ops::PARAM && ParamArg::from(n.arg()).slot == -1 && r.vmax() == 127 && variable(a, "n", 1, 64) == n;
}
static_assert(builder_variable());

}  // namespace

TEST_CASE("compile-time and run-time evaluation agree") {
  CHECK(builds_and_walks());
  CHECK(substitutes());
  CHECK(range_properties());
  CHECK(prints_every_node());
  CHECK(prints_exact_line());
  CHECK(builds_a_variable());
  CHECK(builder_variable());
}
