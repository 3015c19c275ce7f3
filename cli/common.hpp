// Small pieces shared by the sub-commands: argument parsing, the target of a kernel file.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include <uopcg/codegen/target.hpp>
#include <uopcg/core/error.hpp>
#include <uopcg/io/json.hpp>

namespace uopcg_cli {

/// The target a kernel file was generated for (its renderer), or the one named by --target.
inline uopcg::Target target_for(const uopcg::io::Kernel& k, std::string_view override_name = {}) {
  std::string_view n = override_name.empty() ? std::string_view(k.renderer_kind) : override_name;
  uopcg::Target t;
  if (n == "fp16") t = uopcg::Target::opencl_fp16();
  else if (n == "adreno") t = uopcg::Target::adreno_a6xx();
  else if (n == "pocl" || n.empty()) t = uopcg::Target::pocl();
  else uopcg::fail_runtime("unknown target '" + std::string(n) + "' (pocl, fp16, adreno)");
  if (override_name.empty() && !k.renderer.arch.empty()) {
    t.renderer.arch = uopcg::text(std::string_view(k.renderer.arch));
    t.renderer.supports_fp16 = k.renderer.supports_fp16;
    t.renderer.supports_fp64 = k.renderer.supports_fp64;
    t.renderer.supports_float4 = k.renderer.supports_float4;
  }
  return t;
}

/// A non-negative integer option value, or a clear error naming the option.
inline long parse_count(std::string_view opt, const char* v) {
  char* end = nullptr;
  long n = v ? std::strtol(v, &end, 10) : -1;
  if (!v || *v == '\0' || *end != '\0' || n < 0) uopcg::fail_runtime(std::string(opt) + ": expected a non-negative integer");
  return n;
}

/// The kernel name a file stands for: its file name without ".json".
inline std::string kernel_name(const std::string& path) {
  std::string n = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) n.resize(n.size() - 5);
  return n;
}

}  // namespace uopcg_cli
