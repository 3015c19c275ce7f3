// The codegen target a kernel file was made for: its renderer (extensions, sizes) and the codegen
// settings it records. tinygrad reads those settings from its environment; a file states them in
// `codegen_config` (the values in force) and `codegen_context` (those that differ from tinygrad's
// defaults, spec §12). Compiling with them gives tinygrad's program; without them the program can
// differ (e.g. TRANSCENDENTAL=2 decomposes exp2/log2/sin into polynomials).
#pragma once

#include <charconv>
#include <string>
#include <system_error>
#include <string_view>

#include "../codegen/target.hpp"
#include "json.hpp"

namespace uopcg::io {

namespace detail {
[[noreturn]] inline void setting_error(std::string_view where, std::string_view key, const nlohmann::json& v,
                                       std::string_view why) {
  fail_runtime(std::string(where) + ": codegen setting " + std::string(key) + "=" + v.dump() + ": " + std::string(why));
}
// A setting's integer value: numbers, booleans and decimal strings ("2") are accepted.
inline long long setting_int(std::string_view where, std::string_view key, const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_number_integer()) return v.get<long long>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    long long n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return n;
  }
  setting_error(where, key, v, "expected an integer");
}
}  // namespace detail

/// Applies one codegen setting (a tinygrad context variable) to `t`. The kernel-opt settings (NOOPT,
/// NOLOCALS, TC, TC_OPT, TC_SELECT, ALLOW_TF32, MV*) are the knobs apply_opts and the heuristics
/// read (NOLOCALS acts only through them: they record it in the kernel's KernelInfo::dont_use_locals,
/// which is all GPU dims reads); settings that act before the kernel's graph (BEAM, SPLIT_REDUCEOP)
/// or do not change the program (SPEC, DEBUG, ...) are accepted and ignored; a value uopcg cannot
/// honour is an error naming it.
inline void apply_codegen_setting(Target& t, std::string_view key, const nlohmann::json& v,
                                  std::string_view where = "codegen settings") {
  auto as_int = [&] { return detail::setting_int(where, key, v); };
  if (key == "TRANSCENDENTAL") {
    t.transcendental = static_cast<int>(as_int());
  } else if (key == "DISABLE_FAST_IDIV") {
    t.disable_fast_idiv = as_int() != 0;
  } else if (key == "DMC") {  // disable memory coalescing
    t.memory_coalescing = as_int() == 0;
  } else if (key == "ALLOW_HALF8") {
    t.allow_half8 = as_int() != 0;
  } else if (key == "EMULATED_DTYPES") {
    if (!v.is_string()) detail::setting_error(where, key, v, "expected a comma-separated list of dtype names");
    t.emulate_half = t.emulate_bf16 = t.emulate_long = false;
    std::string_view rest = v.get_ref<const std::string&>();
    while (!rest.empty()) {
      std::size_t comma = rest.find(',');
      std::string_view name = rest.substr(0, comma);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
      DType d = DType::void_;
      const bool known = dtype_from_tinygrad_name(name, d);
      if (name.empty()) {
      } else if (known && d == DType::float16) {
        t.emulate_half = true;
      } else if (known && d == DType::bfloat16) {
        t.emulate_bf16 = true;
      } else if (known && (d == DType::int64 || d == DType::uint64)) {
        t.emulate_long = true;
      } else if (!(known && is_float(d) && itemsize(d) == 1)) {  // fp8 is emulated on every OpenCL target anyway
        detail::setting_error(where, key, v, "unknown dtype '" + std::string(name) + "'");
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  } else if (key == "DEFAULT_FLOAT" || key == "DEFAULT_INT") {
    // tinygrad's spellings (dtypes.<name>, any case); DEFAULT_INT changes no kernel (a weak int
    // commits by its range, int or long), so it is only checked
    if (!v.is_string()) detail::setting_error(where, key, v, "expected a dtype name");
    const std::string& name = v.get_ref<const std::string&>();
    DType d = DType::void_;
    if (!dtype_from_tinygrad_name(name, d)) detail::setting_error(where, key, v, "unknown dtype '" + name + "'");
    if (key == "DEFAULT_FLOAT") {
      if (!is_float(d) || is_weak(d)) detail::setting_error(where, key, v, "not a float dtype");
      t.default_float = d;
    } else if (!is_int(d) || is_weak(d)) {
      detail::setting_error(where, key, v, "not an int dtype");
    }
  } else if (key == "NOOPT") {
    t.noopt = as_int() != 0;
  } else if (key == "NOLOCALS") {
    t.nolocals = as_int() != 0;
  } else if (key == "TC") {
    t.use_tc = static_cast<int>(as_int());
  } else if (key == "TC_OPT") {
    t.tc_opt = static_cast<int>(as_int());
  } else if (key == "TC_SELECT") {
    t.tc_select = static_cast<int>(as_int());
  } else if (key == "ALLOW_TF32") {
    t.allow_tf32 = as_int() != 0;
  } else if (key == "MV") {
    t.mv = static_cast<int>(as_int());
  } else if (key == "MV_BLOCKSIZE") {
    t.mv_blocksize = static_cast<int>(as_int());
  } else if (key == "MV_THREADS_PER_ROW") {
    t.mv_threads_per_row = static_cast<int>(as_int());
  } else if (key == "MV_ROWS_PER_THREAD") {
    t.mv_rows_per_thread = static_cast<int>(as_int());
  } else if (key == "TUPLE_ORDER") {
    if (as_int() != 1) detail::setting_error(where, key, v, "uopcg's linearizer breaks ties in tuple order only (TUPLE_ORDER=1)");
  } else if (key == "IMAGE") {
    if (as_int() != 0) detail::setting_error(where, key, v, "OpenCL images are not implemented (docs/DIVERGENCES.md P6)");
  }
}

/// The settings of kernel file `k` applied to `t`: `codegen_config`, then `codegen_context`.
inline void apply_codegen_settings(Target& t, const Kernel& k) {
  const std::string where = k.name.empty() ? std::string("kernel") : k.name;
  for (const nlohmann::json* settings : {&k.codegen_config, &k.codegen_context})
    if (settings->is_object())
      for (auto it = settings->begin(); it != settings->end(); ++it) apply_codegen_setting(t, it.key(), it.value(), where);
}

/// The target kernel file `k` was generated for: the preset of its `renderer_kind` (fp16: an
/// OpenCL device with cl_khr_fp16, otherwise PoCL), the file's renderer (extensions, work-group
/// limits, __local size) and its codegen settings.
inline Target target_of(const Kernel& k) {
  Target t = k.renderer_kind == "fp16" ? Target::opencl_fp16() : Target::pocl();
  const RendererInfo& r = k.renderer;
  if (!r.arch.empty() || r.raw.contains("arch")) {
    t.renderer.arch = text(std::string_view(r.arch));
    t.renderer.supports_fp16 = r.supports_fp16;
    t.renderer.supports_fp64 = r.supports_fp64;
    if (r.raw.contains("supports_bf16")) t.renderer.supports_bf16 = r.supports_bf16;
    if (r.raw.contains("has_local")) t.renderer.has_local = r.has_local;
    if (r.raw.contains("has_shared")) t.renderer.has_shared = r.has_shared;
    if (r.raw.contains("has_threads")) t.renderer.has_threads = r.has_threads;
    if (r.raw.contains("supports_float4")) t.renderer.supports_float4 = r.supports_float4;
  }
  if (!r.device.empty()) t.renderer.device = text(std::string_view(r.device));
  const std::string where = (k.name.empty() ? std::string("kernel") : k.name) + ": renderer";
  auto int3 = [&](const char* key, std::array<std::int64_t, 3>& out) {
    auto it = r.raw.find(key);
    if (it == r.raw.end() || it->is_null()) return;
    if (!it->is_array() || it->size() != 3) fail_runtime(where + "." + key + ": expected 3 integers");
    for (std::size_t d = 0; d < 3; ++d) {
      if (!(*it)[d].is_number_integer()) fail_runtime(where + "." + key + ": expected 3 integers");
      out[d] = (*it)[d].get<std::int64_t>();
    }
  };
  if (r.raw.is_object()) {
    int3("global_max", t.renderer.global_max);
    int3("local_max", t.renderer.local_max);
    if (auto it = r.raw.find("shared_max"); it != r.raw.end() && it->is_number_integer()) t.renderer.shared_max = it->get<std::int64_t>();
    if (auto it = r.raw.find("global_prod_max"); it != r.raw.end() && it->is_number_integer())
      t.renderer.global_prod_max = it->get<std::int64_t>();
  }
  apply_codegen_settings(t, k);
  return t;
}

}  // namespace uopcg::io
