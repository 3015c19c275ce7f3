// The two kernels of the linked-program test, built with the builder only, so that the users of
// compile.hpp and the header-only reference build exactly the same graphs. Included after the uopcg
// header of the file (compile.hpp or uopcg.hpp, from include/ or single_include/), which brings the
// builder: single_include/ has no core/builder.hpp to include here.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace linked_test {

using namespace uopcg;

/// out[i] = x[i] * 0.5 + (float)y[i] over a GLOBAL axis.
inline UOp build_elementwise(Arena& a) {
  constexpr int N = 256;
  UOp out = param(a, 0, DType::float32, N), x = param(a, 1, DType::float32, N), y = param(a, 2, DType::int32, N);
  UOp i = range(a, N, 0, AxisType::GLOBAL);
  UOp v = index(x, i) * 0.5 + cast(index(y, i), DType::float32);
  KernelInfo info;
  info.name = "linked_elementwise";
  return sink(std::vector<UOp>{end(store(index(out, i), v), i)}, info);
}

/// The L2 norms of the rows of a 32x256 matrix, each row reduced by a work-group of 16 items
/// (GROUP_REDUCE, as in the demo: per-item partial sums, a LOCAL buffer, a barrier, a second pass).
inline UOp build_rownorm(Arena& a) {
  constexpr int ROWS = 32, COLS = 256, GROUP = 16;
  UOp out = param(a, 0, DType::float32, ROWS), x = param(a, 1, DType::float32, ROWS * COLS);
  UOp row = range(a, ROWS, 0, AxisType::GLOBAL);
  UOp g = range(a, GROUP, 1, AxisType::GROUP_REDUCE), r = range(a, COLS / GROUP, 2, AxisType::REDUCE);
  UOp v = index(x, row * COLS + g * (COLS / GROUP) + r);
  KernelInfo info;
  info.name = "linked_rownorm";
  return sink(std::vector<UOp>{end(store(index(out, row), sqrt(reduce(v * v, Ops::ADD, g, r))), row)}, info);
}

/// A kernel AST (LOOP and REDUCE ranges, no GPU axes), for the AST entry points: the sums of the
/// rows of a 32x64 matrix.
inline UOp build_rowsum_ast(Arena& a) {
  UOp out = param(a, 0, DType::float32, 32), x = param(a, 1, DType::float32, 32 * 64);
  UOp i = range(a, 32, 0, AxisType::LOOP), r = range(a, 64, 1, AxisType::REDUCE);
  KernelInfo info;
  info.name = "linked_rowsum";
  return sink(std::vector<UOp>{end(store(index(out, i), reduce(index(x, i * 64 + r), Ops::ADD, r)), i)}, info);
}

/// The opts the AST is compiled with explicitly: its reduce axis unrolled by 4.
inline std::vector<Opt> rowsum_opts() { return {Opt{OptOps::UNROLL, 0, Arg::integer(4)}}; }

/// One compiled kernel, as the program prints it.
struct Section {
  std::string title;
  std::string source;
};

/// What every variant of the program prints: the kernels' OpenCL C and the stages the row norm's
/// compile went through. The test compares these outputs between the variants.
inline int report(const std::vector<Section>& kernels, const std::vector<std::string>& stages) {
  bool ok = kernels.size() == 4 && !stages.empty() && stages.back() == "linearize";
  for (const Section& k : kernels) {
    std::printf("==== %s ====\n%s\n", k.title.c_str(), k.source.c_str());
    ok = ok && k.source.find("__kernel void linked_") != std::string::npos;
  }
  std::printf("==== %zu stages ====\n", stages.size());
  for (const std::string& s : stages) std::printf("%s\n", s.c_str());
  return ok ? 0 : 1;
}

}  // namespace linked_test
