// The uopcg demo: build a kernel graph in C++, simplify it with a compile-time rule set, print it,
// then import a tinygrad kernel from the corpus, print its post-opts graph and round-trip every
// graph of the file through the JSON interchange.
//
// usage: demo [KERNEL.json]   (default: $UOPCG_CORPUS/red_sum_4096_group.json)
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <uopcg/io/json.hpp>
#include <uopcg/uopcg.hpp>

using namespace uopcg;
namespace P = uopcg::pat;

namespace {
constexpr auto x = P::var<"x">;
constexpr auto c1 = P::cvar<"c1">.dtype<DType::weakint>();
constexpr auto c2 = P::cvar<"c2">.dtype<DType::weakint>();

// A few of the algebraic identities the symbolic module applies, as rules checked at compile time.
constexpr auto cleanup = P::rules(
    P::rule("x+0", x + 0, [](auto& m) { return m[x]; }),
    P::rule("x*1", x * 1, [](auto& m) { return m[x]; }),
    P::rule("fold c1*c2", c1 * c2, [](auto& m) { return literal(m.arena(), m[c1].arg().as_int() * m[c2].arg().as_int()); }),
    P::rule("(x*c1)*c2", (x * c1) * c2, [](auto& m) {
      return m[x] * literal(m.arena(), m[c1].arg().as_int() * m[c2].arg().as_int());
    }));

// out[g] = sum_r in[g*4 + r] * 2, written with some redundancy for the rules to remove
UOp build_row_sum(Arena& a) {
  UOp out = param(a, 0, DType::float32, 16);
  UOp in = param(a, 1, DType::float32, 64);
  UOp g = range(a, 16, 0, AxisType::GLOBAL);
  UOp r = range(a, 4, 1, AxisType::REDUCE);
  UOp idx = ((g * 2) * 2 + r) * 1 + 0;
  UOp acc = reduce(load(index(in, idx)) * 2.0, Ops::ADD, r);
  return sink(end(store(index(out, g), acc), g));
}

std::filesystem::path default_kernel() {
  const char* env = std::getenv("UOPCG_CORPUS");
  std::filesystem::path dir = env ? env : "../shared/corpus";
  return dir / "red_sum_4096_group.json";
}
}  // namespace

int main(int argc, char** argv) {
  try {
    Arena arena;
    std::puts("== a kernel built in C++ ==");
    UOp kernel = build_row_sum(arena);
    std::fputs(graph_to_string(kernel).c_str(), stdout);

    P::rewrite_stats stats;
    P::rewrite_options opts;
    opts.name = "cleanup";
    opts.stats = &stats;
    UOp simplified = P::graph_rewrite(kernel, cleanup, opts);
    std::printf("\n== after the cleanup rules (%zu -> %zu nodes) ==\n", toposort(kernel).size(),
                toposort(simplified).size());
    std::fputs(graph_to_string(simplified).c_str(), stdout);
    for (std::size_t i = 0; i < stats.rules.size(); ++i)
      std::printf("  rule %-12s attempts %3llu  rewrites %3llu\n", stats.rules[i].label().str().c_str(),
                  static_cast<unsigned long long>(stats.attempts[i]), static_cast<unsigned long long>(stats.matches[i]));

    std::filesystem::path file = argc > 1 ? std::filesystem::path(argv[1]) : default_kernel();
    std::printf("\n== %s ==\n", file.string().c_str());
    io::Kernel k = io::load_kernel(arena, file);
    std::printf("kernel %s (%s): %s\n", k.name.c_str(), k.function_name.c_str(), k.description.c_str());
    std::puts("post-opts graph (the expander's input):");
    std::fputs(graph_to_string(k.post_opts.root).c_str(), stdout);

    // round trip: import -> export must give back the file's JSON, for each graph of the kernel
    nlohmann::json doc = nlohmann::json::parse(io::read_file(file));
    bool all_equal = true;
    for (const char* section : {"ast", "post_opts", "full_sink"}) {
      Arena fresh;
      io::Graph g = io::import_graph(fresh, doc[section]);
      bool equal = nlohmann::json(io::export_graph(g)) == doc[section];
      all_equal &= equal;
      std::printf("round trip %-10s %3zu nodes: %s\n", section, g.nodes.size(), equal ? "identical" : "DIFFERENT");
    }
    {
      Arena fresh;
      io::Program p = io::import_linear(fresh, doc["linear"]);
      bool equal = nlohmann::json(io::export_linear(p)) == doc["linear"];
      all_equal &= equal;
      std::printf("round trip %-10s %3zu nodes: %s\n", "linear", p.size(), equal ? "identical" : "DIFFERENT");
    }
    return all_equal ? 0 : 1;
  } catch (const uopcg::error& e) {
    std::fprintf(stderr, "demo: %s\n", e.what());
    return 1;
  }
}
