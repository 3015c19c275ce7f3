// The pay-once program of docs/embedded.md: kernels.cpp compiles a kernel through the
// declarations-only header uopcg/compile.hpp, uopcg_impl.cpp is the one translation unit that
// compiles the pipeline. Prints the kernel's OpenCL C; fails if there is none.
#include <cstdio>
#include <string>

std::string scale_kernel();  // kernels.cpp

int main() {
  const std::string source = scale_kernel();
  std::fputs(source.c_str(), stdout);
  std::fputc('\n', stdout);
  return source.find("__kernel void") == std::string::npos ? 1 : 0;
}
