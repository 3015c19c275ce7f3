// Small pieces shared by the sub-commands: argument parsing, the target of a kernel file.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include <uopcg/codegen/target.hpp>
#include <uopcg/core/error.hpp>
#include <uopcg/io/json.hpp>
#include <uopcg/io/target.hpp>

namespace uopcg_cli {

/// The target a kernel file was generated for (its renderer and codegen settings), or the preset
/// named by --target with the file's codegen settings (TRANSCENDENTAL, DISABLE_FAST_IDIV, ...).
inline uopcg::Target target_for(const uopcg::io::Kernel& k, std::string_view override_name = {}) {
  if (override_name.empty()) return uopcg::io::target_of(k);
  uopcg::Target t;
  if (override_name == "fp16") t = uopcg::Target::opencl_fp16();
  else if (override_name == "adreno") t = uopcg::Target::adreno_a6xx();
  else if (override_name == "pocl") t = uopcg::Target::pocl();
  else uopcg::fail_runtime("unknown target '" + std::string(override_name) + "' (pocl, fp16, adreno)");
  uopcg::io::apply_codegen_settings(t, k);
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
