// The root of a test kernel: its side effect under a SINK whose KernelInfo names it. Every suite
// that builds kernels by hand needs it; constexpr, so the compile-time pipeline's tests can too.
#pragma once

#include <string_view>
#include <vector>

#include <uopcg/core/builder.hpp>

namespace uopcg_test {

/// The kernel root: one side effect (a STORE, an END over stores, ...) and the kernel's name.
constexpr uopcg::UOp kernel_sink(uopcg::UOp effect, std::string_view name) {
  uopcg::KernelInfo k;
  k.name = name;
  return uopcg::sink(std::vector<uopcg::UOp>{effect}, k);
}

}  // namespace uopcg_test
