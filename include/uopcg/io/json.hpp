// tinygrad's JSON kernel interchange (docs/json.md): import and export of
// graphs ({"root", "nodes"}), linear programs ({"nodes"}), every arg/tag value kind, and whole
// kernel files (<kernel>.json + the .bin data). Stage dumps (.stages.json.gz) are in
// json_stages.hpp (they need zlib).
//
// Optional header: it needs nlohmann_json (the core does not). Every malformed input ends in
// uopcg::fail with a message naming the graph, the node id and the field, e.g.
//   json: ast: node 12 field "src": source id 40 is not an earlier node (forward reference)
// This header assumes exceptions are enabled (nlohmann_json throws its own on parse errors, which
// are converted here).
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/arena.hpp"
#include "../core/arg.hpp"
#include "../core/dtype.hpp"
#include "../core/error.hpp"
#include "../core/graph.hpp"
#include "../core/ops.hpp"

namespace uopcg::io {

// --- public types ---------------------------------------------------------------------------------

/// A graph object ({"root", "nodes"}): the root and the nodes in file order (tinygrad's toposort).
struct Graph {
  UOp root;
  std::vector<UOp> nodes;
};

/// A linear object ({"nodes"}): the program's instructions in order (the last is the SINK).
struct Program {
  std::vector<UOp> instructions;
  std::size_t size() const { return instructions.size(); }
  UOp sink() const { return instructions.empty() ? UOp() : instructions.back(); }
};

struct ImportOptions {
  /// Also check what the core derives against the file: each node's `shape` and `addrspace`
  /// (when present) and KernelInfo's `function_name` (and a kernel file's `function_name`).
  bool verify_derived = false;
  /// Check that a graph's `nodes` are exactly tinygrad's toposort of its root (spec §3: every node
  /// reachable, in DFS post-order). The root must be the last node either way.
  bool verify_order = true;
};

struct ExportOptions {
  /// Write the derived `shape` and `addrspace` fields (kernel files have them, stage dumps do not).
  bool derived = true;
};

namespace detail {
template <class J>
inline constexpr bool is_json_v = nlohmann::detail::is_basic_json<J>::value;

constexpr int max_value_depth = 64;  // nesting limit of arg/tag values (tuples in tuples ...)

/// Where a problem was found: the graph ("ast", "linear", ...), the node id and the field path
/// ("arg.vmin_vmax[1]"); every message starts with this.
struct ctx {
  std::string scope;
  std::int64_t node = -1;
  std::string field;

  [[noreturn]] void raise(std::string_view msg) const {
    std::string m = "json: ";
    if (!scope.empty()) m.append(scope).append(": ");
    if (node >= 0) m.append("node ").append(std::to_string(node));
    if (!field.empty()) m.append(node >= 0 ? " " : "").append("field \"").append(field).append("\"");
    if (node >= 0 || !field.empty()) m.append(": ");
    m.append(msg);
    fail_runtime(std::move(m));
  }
};

/// Appends `.key` or `[i]` to the field path for the lifetime of the guard.
class field_guard {
 public:
  field_guard(ctx& c, std::string_view key) : c_(c), len_(c.field.size()) {
    if (!c.field.empty()) c.field.push_back('.');
    c.field.append(key);
  }
  field_guard(ctx& c, std::size_t index) : c_(c), len_(c.field.size()) {
    c.field.append("[").append(std::to_string(index)).append("]");
  }
  field_guard(const field_guard&) = delete;
  field_guard& operator=(const field_guard&) = delete;
  ~field_guard() { c_.field.resize(len_); }

 private:
  ctx& c_;
  std::size_t len_;
};

template <class J>
std::string type_of(const J& v) {
  switch (v.type()) {
    case nlohmann::detail::value_t::null: return "null";
    case nlohmann::detail::value_t::boolean: return "a boolean";
    case nlohmann::detail::value_t::number_integer:
    case nlohmann::detail::value_t::number_unsigned: return "an integer";
    case nlohmann::detail::value_t::number_float: return "a float";
    case nlohmann::detail::value_t::string: return "a string";
    case nlohmann::detail::value_t::array: return "an array";
    case nlohmann::detail::value_t::object: return "an object";
    default: return "binary data";
  }
}

inline std::string quote_text(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') out.push_back('\\');
    if (u < 0x20) {
      constexpr char hex[] = "0123456789abcdef";
      out.append("\\x").push_back(hex[u >> 4]);
      out.push_back(hex[u & 15]);
    } else {
      out.push_back(ch);
    }
    if (out.size() > 80) {
      out.append("...");
      break;
    }
  }
  out.push_back('"');
  return out;
}

template <class J>
const J* find(const J& obj, std::string_view key) {
  auto it = obj.find(typename J::object_t::key_type(key));
  return it == obj.end() ? nullptr : &*it;
}

/// obj[key] (obj must be an object); "missing" if absent. The caller has pushed `key` on the path.
template <class J>
const J& need(const J& obj, std::string_view key, ctx& c) {
  const J* v = find(obj, key);
  if (!v) c.raise("missing");
  return *v;
}

template <class J>
void expect_object(const J& v, ctx& c) {
  if (!v.is_object()) c.raise("expected an object, found " + type_of(v));
}
template <class J>
void expect_array(const J& v, ctx& c) {
  if (!v.is_array()) c.raise("expected an array, found " + type_of(v));
}

/// Rejects keys outside `allowed` (typos, fields of another format).
template <class J>
void check_keys(const J& obj, std::initializer_list<std::string_view> allowed, ctx& c) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (std::string_view k : allowed) ok |= it.key() == k;
    if (!ok) {
      field_guard g(c, it.key());
      c.raise("unexpected key");
    }
  }
}
template <class J>
void check_keys(const J& obj, const std::string_view* allowed, std::size_t n, std::string_view extra1,
                std::string_view extra2, ctx& c) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = it.key() == extra1 || it.key() == extra2;
    for (std::size_t i = 0; i < n; ++i) ok |= it.key() == allowed[i];
    if (!ok) {
      field_guard g(c, it.key());
      c.raise("unexpected key");
    }
  }
}

template <class J>
std::int64_t get_i64(const J& v, ctx& c) {
  if (v.is_number_unsigned()) {
    auto u = v.template get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      c.raise("integer " + std::to_string(u) + " out of range (int64)");
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.template get<std::int64_t>();
  c.raise("expected an integer, found " + type_of(v));
}
template <class J>
const std::string& get_str(const J& v, ctx& c) {
  if (!v.is_string()) c.raise("expected a string, found " + type_of(v));
  return v.template get_ref<const std::string&>();
}
template <class J>
bool get_bool(const J& v, ctx& c) {
  if (!v.is_boolean()) c.raise("expected a boolean, found " + type_of(v));
  return v.template get<bool>();
}
template <class J>
double get_number(const J& v, ctx& c) {
  if (v.is_number_float()) return v.template get<double>();
  if (v.is_number_unsigned()) return static_cast<double>(v.template get<std::uint64_t>());
  if (v.is_number_integer()) return static_cast<double>(v.template get<std::int64_t>());
  c.raise("expected a number, found " + type_of(v));
}

inline DType dtype_named(std::string_view s, ctx& c) {
  DType d{};
  if (!dtype_from_name(s, d)) c.raise("unknown dtype " + quote_text(s));
  return d;
}
inline AddrSpace addrspace_named(std::string_view s, ctx& c) {
  AddrSpace a{};
  if (!addrspace_from_name(s, a)) c.raise("unknown AddrSpace " + quote_text(s));
  return a;
}
inline Ops op_named(std::string_view s, ctx& c) {
  Ops o{};
  if (!op_from_name(s, o)) c.raise("unknown op " + quote_text(s));
  return o;
}
inline AxisType axis_type_named(std::string_view s, ctx& c) {
  AxisType a{};
  if (!axis_type_from_name(s, a)) c.raise("unknown AxisType " + quote_text(s));
  return a;
}
inline OptOps opt_ops_named(std::string_view s, ctx& c) {
  OptOps o{};
  if (!opt_ops_from_name(s, o)) c.raise("unknown OptOps " + quote_text(s));
  return o;
}

// How each record field is written (spec §5): enum fields of records are bare names, everything
// else is a generic value.
enum class field_kind : std::uint8_t {
  int_,              // int
  opt_int,           // null | int
  str,               // string
  opt_str,           // null | string
  bool_,             // bool
  dtype_name,        // "float"
  addrspace_name,    // "LOCAL"
  opt_addrspace_name,
  opt_ops_name,      // "UPCAST"
  vmin_vmax,         // null | [int, int]
  param_device,      // null | string | [string]
  bufferize_device,  // null | string | int | [string]
  axis_types,        // [AxisType]
  opts,              // [Opt]
  opt_opts,          // null | [Opt]
  opt_estimates,     // null | Estimates
  opt_arg,           // null | int | array
  sint,              // int | sym (Estimates)
};

inline std::span<const field_kind> record_layout(ArgKind k) {
  using F = field_kind;
  static constexpr F param_arg[] = {F::int_, F::dtype_name, F::vmin_vmax, F::opt_int, F::opt_str,
                                    F::opt_addrspace_name, F::opt_int, F::param_device, F::bool_};
  static constexpr F kernel_info[] = {F::str, F::axis_types, F::bool_, F::opts, F::opt_opts,
                                      F::opt_estimates, F::int_};
  static constexpr F bufferize_opts[] = {F::bufferize_device, F::addrspace_name, F::bool_};
  static constexpr F opt[] = {F::opt_ops_name, F::opt_int, F::opt_arg};
  static constexpr F estimates[] = {F::sint, F::sint, F::sint};
  switch (k) {
    case ArgKind::param_arg: return param_arg;
    case ArgKind::kernel_info: return kernel_info;
    case ArgKind::bufferize_opts: return bufferize_opts;
    case ArgKind::opt: return opt;
    case ArgKind::estimates: return estimates;
    default: return {};
  }
}

inline bool record_tag(std::string_view t, ArgKind& out) {
  for (ArgKind k : {ArgKind::param_arg, ArgKind::kernel_info, ArgKind::bufferize_opts, ArgKind::opt,
                    ArgKind::estimates})
    if (name(k) == t) {
      out = k;
      return true;
    }
  return false;
}

struct value_decoder {
  ctx& c;
  const ImportOptions& opts;

  template <class J>
  Arg value(const J& v, int depth) {
    if (depth > max_value_depth) c.raise("value nested too deeply");
    switch (v.type()) {
      case nlohmann::detail::value_t::null: return Arg();
      case nlohmann::detail::value_t::boolean: return Arg::boolean(v.template get<bool>());
      case nlohmann::detail::value_t::number_unsigned: return Arg::uinteger(v.template get<std::uint64_t>());
      case nlohmann::detail::value_t::number_integer: return Arg::integer(v.template get<std::int64_t>());
      case nlohmann::detail::value_t::number_float:
        c.raise("untagged float (floats are written {\"t\": \"float\", \"v\": x})");
      case nlohmann::detail::value_t::string: return Arg::string(v.template get_ref<const std::string&>());
      case nlohmann::detail::value_t::array: {
        std::vector<Arg> items;
        items.reserve(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
          field_guard g(c, i);
          items.push_back(value(v[i], depth + 1));
        }
        return Arg::tuple(std::move(items));
      }
      case nlohmann::detail::value_t::object: return tagged(v, depth);
      default: c.raise("unexpected " + type_of(v));
    }
  }

  template <class J>
  Arg tagged(const J& v, int depth) {
    const std::string* t = nullptr;
    {
      field_guard g(c, "t");
      const J* tv = find(v, "t");
      if (!tv) c.raise("missing (an object value needs its tag \"t\")");
      t = &get_str(*tv, c);
    }
    auto name_v = [&]() -> const std::string& {
      check_keys(v, {"t", "v"}, c);
      field_guard g(c, "v");
      return get_str(need(v, "v", c), c);
    };
    if (*t == "float") {
      check_keys(v, {"t", "v"}, c);
      field_guard g(c, "v");
      const J& x = need(v, "v", c);
      if (x.is_number()) return Arg::floating(get_number(x, c));
      if (x.is_string()) {
        const auto& s = x.template get_ref<const std::string&>();
        if (s == "inf") return Arg::floating(std::numeric_limits<double>::infinity());
        if (s == "-inf") return Arg::floating(-std::numeric_limits<double>::infinity());
        if (s == "nan") return Arg::floating(std::numeric_limits<double>::quiet_NaN());
        c.raise("bad float " + quote_text(s) + " (a number, \"inf\", \"-inf\" or \"nan\")");
      }
      c.raise("expected a number, \"inf\", \"-inf\" or \"nan\", found " + type_of(x));
    }
    if (*t == "bigint") {
      const std::string& s = name_v();
      std::size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
      bool ok = s.size() > i;
      for (std::size_t k = i; k < s.size(); ++k) ok &= s[k] >= '0' && s[k] <= '9';
      if (!ok) {
        field_guard g(c, "v");
        c.raise("bad bigint " + quote_text(s) + " (decimal digits)");
      }
      return Arg::bigint(s);
    }
    if (*t == "Invalid") {
      check_keys(v, {"t"}, c);
      return Arg::invalid();
    }
    if (*t == "sym") return Arg::sym(name_v());
    if (*t == "dtype") {
      const std::string& s = name_v();
      field_guard g(c, "v");
      return Arg::dtype(dtype_named(s, c));
    }
    if (*t == "Ops") {
      const std::string& s = name_v();
      field_guard g(c, "v");
      return Arg::op(op_named(s, c));
    }
    if (*t == "AxisType") {
      const std::string& s = name_v();
      field_guard g(c, "v");
      return Arg::axis_type(axis_type_named(s, c));
    }
    if (*t == "AddrSpace") {
      const std::string& s = name_v();
      field_guard g(c, "v");
      return Arg::addrspace(addrspace_named(s, c));
    }
    if (*t == "OptOps") {
      const std::string& s = name_v();
      field_guard g(c, "v");
      return Arg::opt_ops(opt_ops_named(s, c));
    }
    ArgKind k{};
    if (record_tag(*t, k)) return record(k, v, depth);
    field_guard g(c, "t");
    c.raise("unknown value tag " + quote_text(*t));
  }

  template <class J>
  Arg record(ArgKind k, const J& v, int depth) {
    const std::string_view* names = record_fields(k);
    auto layout = record_layout(k);
    const bool ki = k == ArgKind::kernel_info;
    check_keys(v, names, layout.size(), "t", ki ? "function_name" : "t", c);
    std::vector<Arg> fields;
    fields.reserve(layout.size());
    for (std::size_t i = 0; i < layout.size(); ++i) {
      field_guard g(c, names[i]);
      fields.push_back(field(layout[i], need(v, names[i], c), depth + 1));
    }
    if (ki) {
      field_guard g(c, "function_name");
      if (const J* fn = find(v, "function_name")) {
        const std::string& s = get_str(*fn, c);
        if (opts.verify_derived) {
          text derived = function_name(fields[0].as_string());
          if (derived.view() != s)
            c.raise("is " + quote_text(s) + " but the name gives " + quote_text(derived.view()));
        }
      }
    }
    return Arg::record(k, std::move(fields));
  }

  template <class J>
  std::int64_t int_(const J& v) { return get_i64(v, c); }

  template <class J>
  Arg opt_list(const J& v, int depth) {
    expect_array(v, c);
    std::vector<Arg> items;
    for (std::size_t i = 0; i < v.size(); ++i) {
      field_guard g(c, i);
      if (!v[i].is_object()) c.raise("expected an Opt object, found " + type_of(v[i]));
      Arg a = value(v[i], depth + 1);
      if (a.kind() != ArgKind::opt) c.raise("expected an Opt, found " + std::string(name(a.kind())));
      items.push_back(std::move(a));
    }
    return Arg::tuple(std::move(items));
  }

  template <class J>
  Arg string_list(const J& v) {
    std::vector<Arg> items;
    for (std::size_t i = 0; i < v.size(); ++i) {
      field_guard g(c, i);
      items.push_back(Arg::string(get_str(v[i], c)));
    }
    return Arg::tuple(std::move(items));
  }

  template <class J>
  Arg field(field_kind f, const J& v, int depth) {
    using F = field_kind;
    switch (f) {
      case F::int_: return Arg::integer(int_(v));
      case F::opt_int: return v.is_null() ? Arg() : Arg::integer(int_(v));
      case F::str: return Arg::string(get_str(v, c));
      case F::opt_str: return v.is_null() ? Arg() : Arg::string(get_str(v, c));
      case F::bool_: return Arg::boolean(get_bool(v, c));
      case F::dtype_name: return Arg::dtype(dtype_named(get_str(v, c), c));
      case F::addrspace_name: return Arg::addrspace(addrspace_named(get_str(v, c), c));
      case F::opt_addrspace_name: return v.is_null() ? Arg() : Arg::addrspace(addrspace_named(get_str(v, c), c));
      case F::opt_ops_name: return Arg::opt_ops(opt_ops_named(get_str(v, c), c));
      case F::vmin_vmax: {
        if (v.is_null()) return Arg();
        if (!v.is_array() || v.size() != 2)
          c.raise("expected null or [vmin, vmax], found " + (v.is_array() ? "an array of " + std::to_string(v.size()) : type_of(v)));
        std::int64_t lo, hi;
        {
          field_guard g(c, std::size_t{0});
          lo = int_(v[0]);
        }
        {
          field_guard g(c, std::size_t{1});
          hi = int_(v[1]);
        }
        return Arg::tuple_of(lo, hi);
      }
      case F::param_device:
        if (v.is_null()) return Arg();
        if (v.is_string()) return Arg::string(v.template get_ref<const std::string&>());
        if (v.is_array()) return string_list(v);
        c.raise("expected null, a string or an array of strings, found " + type_of(v));
      case F::bufferize_device:
        if (v.is_null()) return Arg();
        if (v.is_string()) return Arg::string(v.template get_ref<const std::string&>());
        if (v.is_number_integer()) return Arg::integer(int_(v));
        if (v.is_array()) return string_list(v);
        c.raise("expected null, a string, an integer or an array of strings, found " + type_of(v));
      case F::axis_types: {
        expect_array(v, c);
        std::vector<Arg> items;
        for (std::size_t i = 0; i < v.size(); ++i) {
          field_guard g(c, i);
          // {"t": "AxisType", "v": name} (spec §5); a bare name is accepted too
          if (v[i].is_string()) {
            items.push_back(Arg::axis_type(axis_type_named(v[i].template get_ref<const std::string&>(), c)));
            continue;
          }
          Arg a = value(v[i], depth + 1);
          if (a.kind() != ArgKind::axis_type) c.raise("expected an AxisType, found " + std::string(name(a.kind())));
          items.push_back(std::move(a));
        }
        return Arg::tuple(std::move(items));
      }
      case F::opts: return opt_list(v, depth);
      case F::opt_opts: return v.is_null() ? Arg() : opt_list(v, depth);
      case F::opt_estimates: {
        if (v.is_null()) return Arg();
        if (!v.is_object()) c.raise("expected null or an Estimates object, found " + type_of(v));
        Arg a = value(v, depth + 1);
        if (a.kind() != ArgKind::estimates) c.raise("expected an Estimates, found " + std::string(name(a.kind())));
        return a;
      }
      case F::opt_arg: {
        if (!v.is_null() && !v.is_number_integer() && !v.is_array())
          c.raise("expected null, an integer or an array, found " + type_of(v));
        return value(v, depth + 1);
      }
      case F::sint: {
        Arg a = value(v, depth + 1);
        if (!a.is_int() && a.kind() != ArgKind::bigint && a.kind() != ArgKind::sym)
          c.raise("expected an integer or a sym, found " + std::string(name(a.kind())));
        return a;
      }
    }
    c.raise("internal: unknown field kind");
  }
};

inline std::string kind_text(const Arg& a) {
  if (a.is_tuple()) return "a tuple of " + std::to_string(a.size());
  return std::string(name(a.kind()));
}

inline bool all_ints(const Arg& a, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i)
    if (a[i].kind() != ArgKind::int_) return false;
  return true;
}

/// The arg kinds the snapshot uses per op (spec §6); ops not listed take any value.
inline void check_arg(Ops op, const Arg& a, ctx& c) {
  field_guard g(c, "arg");
  auto bad = [&](std::string_view want) {
    c.raise(std::string(name(op)) + " takes " + std::string(want) + ", found " + kind_text(a));
  };
  switch (op) {
    case Ops::CONST:
      if (!a.is_number() && a.kind() != ArgKind::bigint && !a.is_invalid()) bad("a number or Invalid");
      return;
    case Ops::PARAM: case Ops::BUFFER:
      if (a.kind() != ArgKind::param_arg) bad("a ParamArg");
      return;
    case Ops::SINK:
      if (!a.is_none() && a.kind() != ArgKind::kernel_info) bad("null or a KernelInfo");
      return;
    case Ops::RANGE:
      if (!a.is_tuple() || a.size() < 2 || a[a.size() - 1].kind() != ArgKind::axis_type || !all_ints(a, 0, a.size() - 1))
        bad("[axis_id, ..., AxisType]");
      return;
    case Ops::REDUCE:
      if (!a.is_tuple() || a.size() != 2 || a[0].kind() != ArgKind::op || a[1].kind() != ArgKind::int_)
        bad("[Ops, n_horizontal]");
      return;
    case Ops::STAGE:
      if (a.kind() != ArgKind::bufferize_opts) bad("a BufferizeOpts");
      return;
    case Ops::CAST: case Ops::BITCAST:
      if (a.kind() != ArgKind::dtype) bad("a dtype");
      return;
    case Ops::SPECIAL:
      if (a.kind() != ArgKind::string) bad("a string");
      return;
    case Ops::PERMUTE:
      if (!a.is_tuple() || !all_ints(a, 0, a.size())) bad("an array of integers");
      return;
    case Ops::END: case Ops::STORE: case Ops::INDEX: case Ops::AFTER: case Ops::SHRINK: case Ops::LOAD:
    case Ops::STACK: case Ops::GROUP: case Ops::BARRIER: case Ops::IF: case Ops::ENDIF: case Ops::RESHAPE:
    case Ops::EXPAND:
      if (!a.is_none()) bad("null");
      return;
    default:
      if (GroupOp::ALU.contains(op) && !a.is_none()) bad("null");
      return;
  }
}

/// Reads the node array of a graph or linear object into `a`; `graph_root` < 0 for linear.
template <class J>
std::vector<UOp> import_nodes(Arena& a, const J& nodes, ctx& c, const ImportOptions& opts) {
  c.node = -1;
  std::vector<UOp> out;
  {
    field_guard g(c, "nodes");
    expect_array(nodes, c);
    if (nodes.empty()) c.raise("no nodes");
  }
  const std::size_t n = nodes.size();
  out.reserve(n);
  // file index + 1 of each arena node created by this import (0 = not ours), to find duplicates
  std::vector<std::uint32_t> ours;
  value_decoder dec{c, opts};
  std::vector<UOp> srcs;
  for (std::size_t i = 0; i < n; ++i) {
    c.node = static_cast<std::int64_t>(i);
    c.field.clear();
    const J& nj = nodes[i];
    if (!nj.is_object()) c.raise("expected a node object, found " + type_of(nj));
    check_keys(nj, {"id", "op", "dtype", "src", "arg", "tag", "shape", "addrspace"}, c);
    {
      field_guard g(c, "id");
      std::int64_t id = get_i64(need(nj, "id", c), c);
      if (id != static_cast<std::int64_t>(i))
        c.raise("id " + std::to_string(id) + " at position " + std::to_string(i) + " (ids are the positions 0, 1, 2, ...)");
    }
    Ops op;
    {
      field_guard g(c, "op");
      op = op_named(get_str(need(nj, "op", c), c), c);
    }
    DType dtype;
    {
      field_guard g(c, "dtype");
      dtype = dtype_named(get_str(need(nj, "dtype", c), c), c);
    }
    srcs.clear();
    {
      field_guard g(c, "src");
      const J& sj = need(nj, "src", c);
      expect_array(sj, c);
      for (std::size_t k = 0; k < sj.size(); ++k) {
        if (!sj[k].is_number_integer())
          c.raise("source " + std::to_string(k) + " is " + type_of(sj[k]) + ", not a node id");
        const bool missing = sj[k].is_number_unsigned()
                                 ? sj[k].template get<std::uint64_t>() >= n
                                 : sj[k].template get<std::int64_t>() < 0 ||
                                       static_cast<std::uint64_t>(sj[k].template get<std::int64_t>()) >= n;
        if (missing)
          c.raise("source id " + sj[k].dump() + " does not exist (" + std::to_string(n) + " nodes)");
        const auto s = sj[k].template get<std::int64_t>();
        if (static_cast<std::size_t>(s) >= i)
          c.raise("source id " + std::to_string(s) + (static_cast<std::size_t>(s) == i ? " is the node itself" : " is not an earlier node (forward reference)"));
        srcs.push_back(out[static_cast<std::size_t>(s)]);
      }
    }
    Arg arg, tag;
    {
      field_guard g(c, "arg");
      arg = dec.value(need(nj, "arg", c), 0);
    }
    check_arg(op, arg, c);
    {
      field_guard g(c, "tag");
      tag = dec.value(need(nj, "tag", c), 0);
    }
    // derived fields: checked for type always, for value on request (after the node exists)
    const J* shape_j = find(nj, "shape");
    const J* as_j = find(nj, "addrspace");
    if (shape_j && !shape_j->is_null()) {
      field_guard g(c, "shape");
      expect_array(*shape_j, c);
      for (std::size_t k = 0; k < shape_j->size(); ++k) {
        field_guard gk(c, k);
        get_i64((*shape_j)[k], c);
      }
    }
    std::optional<AddrSpace> file_as;
    if (as_j && !as_j->is_null()) {
      field_guard g(c, "addrspace");
      file_as = addrspace_named(get_str(*as_j, c), c);
    }
    UOp u;
    try {
      u = a.make(op, dtype, std::span<const UOp>(srcs), arg, tag);
    } catch (const uopcg::error& e) {
      c.raise(std::string("rejected by the core: ") + e.what());
    }
    if (ours.size() < a.size()) ours.resize(a.size(), 0);
    if (ours[u.id()] != 0) {
      field_guard g(c, "id");
      c.raise("duplicates node " + std::to_string(ours[u.id()] - 1) +
              " (equal op, dtype, src, arg and tag: graphs are hash-consed)");
    }
    ours[u.id()] = static_cast<std::uint32_t>(i + 1);
    a.note_origin(u.id(), c.scope, static_cast<std::uint32_t>(i));
    if (opts.verify_derived) {
      if (shape_j) {
        field_guard g(c, "shape");
        auto sh = u.shape();
        bool same = shape_j->is_null() ? !sh.has_value() : sh.has_value() && sh.size() == shape_j->size();
        for (std::size_t k = 0; same && k < sh.size(); ++k) same = sh[k] == (*shape_j)[k].template get<std::int64_t>();
        if (!same) {
          std::string d = sh.has_value() ? "[" : "null";
          for (std::size_t k = 0; k < sh.size(); ++k) d.append(k ? ", " : "").append(std::to_string(sh[k]));
          if (sh.has_value()) d.append("]");
          if (sh.ill_formed()) d = "ill-formed";
          c.raise("file has " + shape_j->dump() + ", the core derives " + d);
        }
      }
      if (as_j) {
        field_guard g(c, "addrspace");
        if (u.addrspace() != file_as)
          c.raise("file has " + as_j->dump() + ", the core derives " +
                  (u.addrspace() ? std::string(name(*u.addrspace())) : std::string("null")));
      }
    }
    out.push_back(u);
  }
  c.node = -1;
  c.field.clear();
  return out;
}

template <class J>
nlohmann::ordered_json encode_record_field(field_kind f, const Arg& a);

template <class J = nlohmann::ordered_json>
J encode(const Arg& a) {
  switch (a.kind()) {
    case ArgKind::none: return J(nullptr);
    case ArgKind::boolean: return J(a.as_bool());
    case ArgKind::int_: return J(a.as_int());
    case ArgKind::uint_: return J(a.as_uint());
    case ArgKind::float_: {
      double d = a.as_float();
      J o = J::object();
      o["t"] = "float";
      if (std::isnan(d)) o["v"] = "nan";
      else if (std::isinf(d)) o["v"] = d > 0 ? "inf" : "-inf";
      else o["v"] = d;
      return o;
    }
    case ArgKind::string: return J(std::string(a.as_string()));
    case ArgKind::invalid: {
      J o = J::object();
      o["t"] = "Invalid";
      return o;
    }
    case ArgKind::tuple: {
      J arr = J::array();
      for (const Arg& x : a.items()) arr.push_back(encode<J>(x));
      return arr;
    }
    case ArgKind::bigint: case ArgKind::sym: case ArgKind::dtype: case ArgKind::op: case ArgKind::axis_type:
    case ArgKind::addrspace: case ArgKind::opt_ops: {
      J o = J::object();
      o["t"] = std::string(name(a.kind()));
      switch (a.kind()) {
        case ArgKind::dtype: o["v"] = std::string(name(a.as_dtype())); break;
        case ArgKind::op: o["v"] = std::string(name(a.as_op())); break;
        case ArgKind::axis_type: o["v"] = std::string(name(a.as_axis_type())); break;
        case ArgKind::addrspace: o["v"] = std::string(name(a.as_addrspace())); break;
        case ArgKind::opt_ops: o["v"] = std::string(name(a.as_opt_ops())); break;
        default: o["v"] = std::string(a.as_string()); break;
      }
      return o;
    }
    default: {  // records
      J o = J::object();
      o["t"] = std::string(name(a.kind()));
      const std::string_view* names = record_fields(a.kind());
      auto layout = record_layout(a.kind());
      if (a.size() != layout.size()) fail("json export: record with a wrong field count");
      for (std::size_t i = 0; i < layout.size(); ++i) {
        const Arg& f = a[i];
        J v;
        // enum fields of records are bare names (when the value has the expected kind)
        if (layout[i] == field_kind::dtype_name && f.kind() == ArgKind::dtype) v = std::string(name(f.as_dtype()));
        else if ((layout[i] == field_kind::addrspace_name || layout[i] == field_kind::opt_addrspace_name) &&
                 f.kind() == ArgKind::addrspace)
          v = std::string(name(f.as_addrspace()));
        else if (layout[i] == field_kind::opt_ops_name && f.kind() == ArgKind::opt_ops) v = std::string(name(f.as_opt_ops()));
        else v = encode<J>(f);
        o[std::string(names[i])] = std::move(v);
        if (a.kind() == ArgKind::kernel_info && i == 0 && f.kind() == ArgKind::string)
          o["function_name"] = function_name(f.as_string()).str();
      }
      return o;
    }
  }
}

/// Heuristic context for a parse error: the last `"id": N` before the error offset.
inline std::string near_node(std::string_view text, std::size_t byte) {
  if (byte > text.size()) byte = text.size();
  std::size_t p = text.rfind("\"id\":", byte);
  if (p == std::string_view::npos) return {};
  std::size_t q = p + 5;
  while (q < text.size() && text[q] == ' ') ++q;
  std::size_t e = q;
  while (e < text.size() && e - q < 12 && text[e] >= '0' && text[e] <= '9') ++e;
  if (e == q) return {};
  return " (after node " + std::string(text.substr(q, e - q)) + ")";
}

}  // namespace detail

// --- values ----------------------------------------------------------------------------------------

/// Decodes one arg/tag value (spec §5). `where` prefixes error messages.
template <class J>
  requires detail::is_json_v<J>
Arg decode_value(const J& v, std::string_view where = "value", const ImportOptions& opts = {}) {
  detail::ctx c{std::string(where), -1, {}};
  detail::value_decoder dec{c, opts};
  return dec.value(v, 0);
}

/// Encodes one arg/tag value (spec §5): tuples as arrays, floats tagged, records with their keys
/// in the files' order (KernelInfo gets its derived function_name).
template <class J = nlohmann::ordered_json>
  requires detail::is_json_v<J>
J encode_value(const Arg& a) {
  return detail::encode<J>(a);
}

// --- parsing -----------------------------------------------------------------------------------------

/// Parses JSON text; a syntax error (a truncated file, ...) becomes a uopcg::error naming `what`, the
/// byte offset and the last node id before it.
template <class J = nlohmann::json>
  requires detail::is_json_v<J>
J parse_json(std::string_view text, std::string_view what = "input") {
  try {
    return J::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    fail_runtime("json: " + std::string(what) + ": invalid JSON at byte " + std::to_string(e.byte) +
                 detail::near_node(text, e.byte) + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    fail_runtime("json: " + std::string(what) + ": " + e.what());
  }
}

/// The bytes of a file; an error naming the path when it cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_runtime("json: cannot open " + path.string());
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail_runtime("json: cannot read " + path.string());
  return data;
}

// --- graphs and programs ---------------------------------------------------------------------------

/// Imports a graph object {"root", "nodes"} into `a`. `scope` names the graph in error messages.
template <class J>
  requires detail::is_json_v<J>
Graph import_graph(Arena& a, const J& j, const ImportOptions& opts = {}, std::string_view scope = "graph") {
  detail::ctx c{std::string(scope), -1, {}};
  detail::expect_object(j, c);
  detail::check_keys(j, {"root", "nodes"}, c);
  const J* nodes_j;
  std::int64_t root;
  {
    detail::field_guard g(c, "root");
    root = detail::get_i64(detail::need(j, "root", c), c);
  }
  {
    detail::field_guard g(c, "nodes");
    nodes_j = &detail::need(j, "nodes", c);
  }
  Graph g;
  g.nodes = detail::import_nodes(a, *nodes_j, c, opts);
  const auto n = static_cast<std::int64_t>(g.nodes.size());
  {
    detail::field_guard fg(c, "root");
    if (root != n - 1)
      c.raise("root " + std::to_string(root) + " is not the last node (" + std::to_string(n - 1) + ")");
  }
  g.root = g.nodes.back();
  if (opts.verify_order) {
    // the toposort's nodes are file nodes (sources are file nodes), each once
    std::vector<UOp> topo = toposort(g.root);
    const std::uint32_t epoch = a.new_epoch();
    for (UOp t : topo) a.mark(t.id(), epoch);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      if (a.marked(g.nodes[i].id(), epoch)) continue;
      c.node = static_cast<std::int64_t>(i);
      detail::field_guard fg(c, "id");
      c.raise("not reachable from the root (nodes must be the root's toposort)");
    }
    for (std::size_t i = 0; i < g.nodes.size() && i < topo.size(); ++i) {
      if (topo[i] == g.nodes[i]) continue;
      std::size_t at = 0;
      while (at < g.nodes.size() && !(g.nodes[at] == topo[i])) ++at;
      c.node = static_cast<std::int64_t>(i);
      detail::field_guard fg(c, "id");
      c.raise("out of toposort order: tinygrad's toposort has node " + std::to_string(at) + " at this position");
    }
  }
  return g;
}

/// Imports a linear object {"nodes"}: sources refer to earlier instructions, the last is the SINK.
template <class J>
  requires detail::is_json_v<J>
Program import_linear(Arena& a, const J& j, const ImportOptions& opts = {}, std::string_view scope = "linear") {
  detail::ctx c{std::string(scope), -1, {}};
  detail::expect_object(j, c);
  detail::check_keys(j, {"nodes"}, c);
  const J* nodes_j;
  {
    detail::field_guard g(c, "nodes");
    nodes_j = &detail::need(j, "nodes", c);
  }
  Program p;
  p.instructions = detail::import_nodes(a, *nodes_j, c, opts);
  if (!p.instructions.back().is(Ops::SINK)) {
    c.node = static_cast<std::int64_t>(p.instructions.size() - 1);
    detail::field_guard g(c, "op");
    c.raise("the last instruction is " + std::string(name(p.instructions.back().op())) + ", not SINK");
  }
  return p;
}

/// Exports a list of nodes as a node array: ids are positions, and every source must be an earlier
/// element (a linear program, or a toposort).
inline nlohmann::ordered_json export_nodes(std::span<const UOp> nodes, const ExportOptions& opts = {}) {
  using J = nlohmann::ordered_json;
  J arr = J::array();
  if (nodes.empty()) return arr;
  Arena& a = nodes[0].arena();
  std::vector<std::uint32_t> pos(a.size(), 0xFFFFFFFFu);  // arena id -> position
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    UOp u = nodes[i];
    if (!u.valid() || &u.arena() != &a) fail_runtime("json export: element " + std::to_string(i) + " is invalid or in another arena");
    auto describe = [&] { return "json export: element " + std::to_string(i) + " (" + a.describe(u.id()).str() + ")"; };
    if (pos[u.id()] != 0xFFFFFFFFu) fail_runtime(describe() + " occurs twice (also element " + std::to_string(pos[u.id()]) + ")");
    J node = J::object();
    node["id"] = i;
    node["op"] = std::string(name(u.op()));
    node["dtype"] = std::string(name(u.dtype()));
    J src = J::array();
    for (std::size_t k = 0; k < u.nsrc(); ++k) {
      node_id s = u.src(k).id();
      if (pos[s] == 0xFFFFFFFFu)
        fail_runtime(describe() + ": source " + std::to_string(k) + " (" + a.describe(s).str() + ") is not an earlier element");
      src.push_back(pos[s]);
    }
    node["src"] = std::move(src);
    node["arg"] = detail::encode<J>(u.arg());
    node["tag"] = detail::encode<J>(u.tag());
    if (opts.derived) {
      auto sh = u.shape();
      if (sh.has_value()) {
        J d = J::array();
        for (std::size_t k = 0; k < sh.size(); ++k) d.push_back(sh[k]);
        node["shape"] = std::move(d);
      } else {
        node["shape"] = nullptr;  // shapeless (or ill-formed)
      }
      if (auto as = u.addrspace()) node["addrspace"] = std::string(name(*as));
      else node["addrspace"] = nullptr;
    }
    pos[u.id()] = static_cast<std::uint32_t>(i);
    arr.push_back(std::move(node));
  }
  return arr;
}

/// {"root", "nodes"} for the graph of `root`, nodes in tinygrad's toposort order.
inline nlohmann::ordered_json export_graph(UOp root, const ExportOptions& opts = {}) {
  std::vector<UOp> topo = toposort(root);
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["root"] = topo.size() - 1;
  j["nodes"] = export_nodes(topo, opts);
  return j;
}
inline nlohmann::ordered_json export_graph(const Graph& g, const ExportOptions& opts = {}) {
  return export_graph(g.root, opts);
}

/// {"nodes"} for a program (instruction i = node i).
inline nlohmann::ordered_json export_linear(std::span<const UOp> instructions, const ExportOptions& opts = {}) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["nodes"] = export_nodes(instructions, opts);
  return j;
}
inline nlohmann::ordered_json export_linear(const Program& p, const ExportOptions& opts = {}) {
  return export_linear(std::span<const UOp>(p.instructions), opts);
}

// --- kernel files --------------------------------------------------------------------------------

/// program.kernel_args[i] (spec §7).
struct KernelArg {
  std::int64_t index = 0;
  std::string kind;  // "buffer" (or "var")
  std::int64_t slot = 0;
  DType dtype = DType::void_;  // the kernel's view (ushort for emulated half)
  std::int64_t size = 0;       // elements
  std::int64_t itemsize = 0;
  std::int64_t nbytes = 0;
  std::optional<AddrSpace> addrspace;
};

/// `program`: launch sizes and arguments.
struct LaunchInfo {
  std::array<std::int64_t, 3> global_size{1, 1, 1};
  std::optional<std::array<std::int64_t, 3>> local_size;  // nullopt: the runtime chooses
  /// A size that depends on a variable, as the file writes it (its entry above is 0); empty otherwise.
  std::array<std::string, 3> global_symbolic, local_symbolic;
  std::vector<std::int64_t> globals, outs, ins;
  std::vector<std::string> vars;  // the names of the variable arguments (tinygrad writes [] in its own files)
  std::vector<KernelArg> kernel_args;
};

/// One buffer of `data.inputs` / `data.outputs`.
struct DataEntry {
  std::int64_t slot = 0;
  DType dtype = DType::void_;  // tinygrad's logical dtype (half even when the kernel sees ushort)
  std::int64_t count = 0;
  std::int64_t offset = 0;  // in the .bin file
  std::int64_t nbytes = 0;
};

struct DataInfo {
  std::string file;  // relative to the kernel file's directory
  std::vector<DataEntry> inputs, outputs;
  double rtol = 0, atol = 0;  // output_tolerance (0/0 = exact)
};

/// `renderer` (spec §8): the fields a renderer needs typed, everything in `raw`.
struct RendererInfo {
  std::string cls, target, device, arch;
  bool supports_fp16 = false, supports_fp64 = false, supports_bf16 = false, has_local = false,
       has_shared = false, has_threads = false, supports_float4 = false;
  nlohmann::json raw;
};

struct StageSummary {
  std::string stage;
  bool changed = false;
  std::int64_t nodes = 0;
};

/// One kernel file (spec §2) with its graphs imported into an arena.
struct Kernel {
  std::filesystem::path path;  // the file it was loaded from (empty when imported from memory)
  std::string name, spec, description, function_name, renderer_kind, source, stages_file;
  std::int64_t kernel_index = 0, num_kernels = 1;
  RendererInfo renderer;
  nlohmann::json codegen_config = nlohmann::json::object();
  nlohmann::json codegen_context = nlohmann::json::object();  // absent = {}
  nlohmann::json schedule_context = nlohmann::json::object();
  std::optional<std::vector<Arg>> opts_requested;  // Opt records; nullopt = heuristics chose
  std::vector<Arg> applied_opts;                    // Opt records
  bool has_applied_opts = false;                    // the file records applied_opts
  LaunchInfo program;
  DataInfo data;
  std::vector<StageSummary> stages;
  Graph ast, post_opts, full_sink;
  Program linear;
  nlohmann::json fixed_program;        // null when absent (spec §12)
  std::optional<Program> fixed_linear;  // fixed_program.linear, when present
};

namespace detail {

template <class J>
std::vector<std::int64_t> int_list(const J& v, ctx& c) {
  expect_array(v, c);
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    field_guard g(c, i);
    out.push_back(get_i64(v[i], c));
  }
  return out;
}

/// Three launch sizes: integers, or a size that depends on a variable, written as its expression
/// (a string, or `{"t": "sym", "v": text}`): its entry is 0 and its text goes to `symbolic`.
template <class J>
std::array<std::int64_t, 3> size3(const J& v, ctx& c, std::array<std::string, 3>& symbolic) {
  expect_array(v, c);
  if (v.size() != 3) c.raise("expected 3 sizes, found " + std::to_string(v.size()));
  std::array<std::int64_t, 3> out{};
  for (std::size_t i = 0; i < 3; ++i) {
    field_guard g(c, i);
    const J& e = v[i];
    if (e.is_string()) symbolic[i] = get_str(e, c);
    else if (e.is_object()) {
      field_guard gt(c, "t");
      if (get_str(need(e, "t", c), c) != "sym") c.raise("expected a size (an integer or a sym object)");
      field_guard gv(c, "v");
      symbolic[i] = get_str(need(e, "v", c), c);
    } else out[i] = get_i64(e, c);
  }
  return out;
}

template <class J>
std::string opt_string(const J& obj, std::string_view key, ctx& c) {
  field_guard g(c, key);
  const J* v = find(obj, key);
  return v && !v->is_null() ? get_str(*v, c) : std::string();
}
template <class J>
std::int64_t opt_i64(const J& obj, std::string_view key, std::int64_t dflt, ctx& c) {
  field_guard g(c, key);
  const J* v = find(obj, key);
  return v ? get_i64(*v, c) : dflt;
}
template <class J>
bool opt_bool(const J& obj, std::string_view key, ctx& c) {
  field_guard g(c, key);
  const J* v = find(obj, key);
  return v && !v->is_null() ? get_bool(*v, c) : false;
}
template <class J>
nlohmann::json opt_object(const J& obj, std::string_view key, ctx& c) {
  field_guard g(c, key);
  const J* v = find(obj, key);
  if (!v || v->is_null()) return nlohmann::json::object();
  expect_object(*v, c);
  return nlohmann::json(*v);
}

template <class J>
std::vector<Arg> opts_of(const J& v, ctx& c, const ImportOptions& opts) {
  value_decoder dec{c, opts};
  Arg t = dec.opt_list(v, 0);
  return t.items();
}

template <class J>
LaunchInfo launch_info(const J& p, ctx& c) {
  expect_object(p, c);
  LaunchInfo l;
  {
    field_guard g(c, "global_size");
    l.global_size = size3(need(p, "global_size", c), c, l.global_symbolic);
  }
  {
    field_guard g(c, "local_size");
    const J* ls = find(p, "local_size");
    if (ls && !ls->is_null()) l.local_size = size3(*ls, c, l.local_symbolic);
  }
  auto list = [&](std::string_view key, std::vector<std::int64_t>& out) {
    field_guard g(c, key);
    if (const J* v = find(p, key)) out = int_list(*v, c);
  };
  list("globals", l.globals);
  list("outs", l.outs);
  list("ins", l.ins);
  if (const J* v = find(p, "vars"); v && !v->is_null()) {
    field_guard g(c, "vars");
    expect_array(*v, c);
    for (std::size_t i = 0; i < v->size(); ++i) {
      field_guard gi(c, i);
      l.vars.push_back(get_str((*v)[i], c));
    }
  }
  field_guard g(c, "kernel_args");
  const J& ka = need(p, "kernel_args", c);
  expect_array(ka, c);
  for (std::size_t i = 0; i < ka.size(); ++i) {
    field_guard gi(c, i);
    const J& e = ka[i];
    expect_object(e, c);
    KernelArg k;
    k.kind = opt_string(e, "kind", c);
    const bool buffer = k.kind == "buffer";
    if (k.kind.empty()) {
      field_guard gk(c, "kind");
      c.raise("missing");
    }
    auto num = [&](std::string_view key) {
      field_guard gk(c, key);
      const J* v = find(e, key);
      if (!v) {
        if (buffer) c.raise("missing");
        return std::int64_t{0};
      }
      return get_i64(*v, c);
    };
    k.index = num("index");
    k.slot = num("slot");
    k.size = num("size");
    k.itemsize = num("itemsize");
    k.nbytes = num("nbytes");
    {
      field_guard gk(c, "dtype");
      const J* d = find(e, "dtype");
      if (d) k.dtype = dtype_named(get_str(*d, c), c);
      else if (buffer) c.raise("missing");
    }
    {
      field_guard gk(c, "addrspace");
      const J* d = find(e, "addrspace");
      if (d && !d->is_null()) k.addrspace = addrspace_named(get_str(*d, c), c);
    }
    l.kernel_args.push_back(std::move(k));
  }
  return l;
}

template <class J>
DataInfo data_info(const J& d, ctx& c) {
  expect_object(d, c);
  DataInfo out;
  {
    field_guard g(c, "file");
    out.file = get_str(need(d, "file", c), c);
  }
  {
    field_guard g(c, "byte_order");
    if (const J* bo = find(d, "byte_order"))
      if (get_str(*bo, c) != "little") c.raise("unsupported byte order " + quote_text(bo->template get_ref<const std::string&>()));
  }
  auto entries = [&](std::string_view key, std::vector<DataEntry>& list) {
    field_guard g(c, key);
    const J& arr = need(d, key, c);
    expect_array(arr, c);
    for (std::size_t i = 0; i < arr.size(); ++i) {
      field_guard gi(c, i);
      const J& e = arr[i];
      expect_object(e, c);
      DataEntry de;
      auto num = [&](std::string_view k) {
        field_guard gk(c, k);
        return get_i64(need(e, k, c), c);
      };
      de.slot = num("slot");
      de.count = num("count");
      de.offset = num("offset");
      de.nbytes = num("nbytes");
      {
        field_guard gk(c, "dtype");
        de.dtype = dtype_named(get_str(need(e, "dtype", c), c), c);
      }
      list.push_back(de);
    }
  };
  entries("inputs", out.inputs);
  entries("outputs", out.outputs);
  if (const J* tol = find(d, "output_tolerance")) {
    field_guard g(c, "output_tolerance");
    if (!tol->is_null()) {
      expect_object(*tol, c);
      {
        field_guard gk(c, "rtol");
        out.rtol = get_number(need(*tol, "rtol", c), c);
      }
      {
        field_guard gk(c, "atol");
        out.atol = get_number(need(*tol, "atol", c), c);
      }
    }
  }
  return out;
}

template <class J>
RendererInfo renderer_info(const J& r, ctx& c) {
  expect_object(r, c);
  RendererInfo out;
  out.cls = opt_string(r, "class", c);
  out.target = opt_string(r, "target", c);
  out.device = opt_string(r, "device", c);
  out.arch = opt_string(r, "arch", c);
  out.supports_fp16 = opt_bool(r, "supports_fp16", c);
  out.supports_fp64 = opt_bool(r, "supports_fp64", c);
  out.supports_bf16 = opt_bool(r, "supports_bf16", c);
  out.has_local = opt_bool(r, "has_local", c);
  out.has_shared = opt_bool(r, "has_shared", c);
  out.has_threads = opt_bool(r, "has_threads", c);
  out.supports_float4 = opt_bool(r, "supports_float4", c);
  out.raw = nlohmann::json(r);
  return out;
}

}  // namespace detail

/// Imports a parsed kernel file. `what` (the file name) prefixes error messages.
template <class J>
  requires detail::is_json_v<J>
Kernel import_kernel(Arena& a, const J& j, const ImportOptions& opts = {}, std::string_view what = "kernel") {
  using namespace detail;
  ctx c{std::string(what), -1, {}};
  expect_object(j, c);
  Kernel k;
  {
    field_guard g(c, "schema_version");
    std::int64_t v = get_i64(need(j, "schema_version", c), c);
    if (v != 1) c.raise("unsupported schema version " + std::to_string(v) + " (expected 1)");
  }
  {
    field_guard g(c, "name");
    k.name = get_str(need(j, "name", c), c);
  }
  k.spec = opt_string(j, "spec", c);
  k.description = opt_string(j, "description", c);
  k.kernel_index = opt_i64(j, "kernel_index", 0, c);
  k.num_kernels = opt_i64(j, "num_kernels", 1, c);
  {
    field_guard g(c, "function_name");
    k.function_name = get_str(need(j, "function_name", c), c);
  }
  k.renderer_kind = opt_string(j, "renderer_kind", c);
  {
    field_guard g(c, "renderer");
    k.renderer = renderer_info(need(j, "renderer", c), c);
  }
  k.codegen_config = opt_object(j, "codegen_config", c);
  k.codegen_context = opt_object(j, "codegen_context", c);
  k.schedule_context = opt_object(j, "schedule_context", c);
  {
    field_guard g(c, "opts_requested");
    const J* v = find(j, "opts_requested");
    if (v && !v->is_null()) k.opts_requested = opts_of(*v, c, opts);
  }
  {
    field_guard g(c, "applied_opts");
    if (const J* v = find(j, "applied_opts"); v && !v->is_null()) {
      k.applied_opts = opts_of(*v, c, opts);
      k.has_applied_opts = true;
    }
  }
  {
    field_guard g(c, "program");
    k.program = launch_info(need(j, "program", c), c);
  }
  {
    field_guard g(c, "source");
    k.source = get_str(need(j, "source", c), c);
  }
  {
    field_guard g(c, "data");
    k.data = data_info(need(j, "data", c), c);
  }
  {
    field_guard g(c, "stages");
    if (const J* st = find(j, "stages")) {
      expect_array(*st, c);
      for (std::size_t i = 0; i < st->size(); ++i) {
        field_guard gi(c, i);
        const J& e = (*st)[i];
        expect_object(e, c);
        StageSummary s;
        {
          field_guard gk(c, "stage");
          s.stage = get_str(need(e, "stage", c), c);
        }
        s.changed = opt_bool(e, "changed", c);
        s.nodes = opt_i64(e, "nodes", 0, c);
        k.stages.push_back(std::move(s));
      }
    }
  }
  k.stages_file = opt_string(j, "stages_file", c);
  auto section = [&](std::string_view key) -> const J& {
    field_guard g(c, key);
    return need(j, key, c);
  };
  const std::string prefix = what.empty() ? std::string() : std::string(what) + ": ";
  // a kernel needs a graph to start from: its AST (compiled through the front stages) or its
  // post-opts graph; the later stages and the program are references, present in exported files
  const J* ast = find(j, "ast");
  const J* post = find(j, "post_opts");
  if ((!ast || ast->is_null()) && (!post || post->is_null())) {
    c.raise("a kernel file needs an ast or a post_opts graph");
  }
  auto optional_graph = [&](std::string_view key, Graph& out) {
    if (const J* v = find(j, key); v && !v->is_null()) out = import_graph(a, section(key), opts, prefix + std::string(key));
  };
  optional_graph("ast", k.ast);
  optional_graph("post_opts", k.post_opts);
  optional_graph("full_sink", k.full_sink);
  if (const J* v = find(j, "linear"); v && !v->is_null()) k.linear = import_linear(a, section("linear"), opts, prefix + "linear");
  if (const J* fp = find(j, "fixed_program"); fp && !fp->is_null()) {
    field_guard g(c, "fixed_program");
    expect_object(*fp, c);
    k.fixed_program = nlohmann::json(*fp);
    if (const J* fl = find(*fp, "linear")) k.fixed_linear = import_linear(a, *fl, opts, prefix + "fixed_program.linear");
  }
  if (opts.verify_derived) {
    const Arg& info = k.full_sink.root.arg();  // the AST's name is set when opts are applied
    if (info.kind() == ArgKind::kernel_info) {
      text fn = function_name(info[0].as_string());
      field_guard g(c, "function_name");
      if (fn.view() != k.function_name)
        c.raise("is " + quote_text(k.function_name) + " but full_sink's KernelInfo name gives " + quote_text(fn.view()));
    }
  }
  return k;
}

/// Reads and imports `<kernel>.json`.
inline Kernel load_kernel(Arena& a, const std::filesystem::path& path, const ImportOptions& opts = {}) {
  const std::string what = path.filename().string();
  nlohmann::json j = parse_json(read_file(path), what);
  Kernel k = import_kernel(a, j, opts, what);
  k.path = path;
  return k;
}

// --- kernel data (.bin) ------------------------------------------------------------------------

/// One buffer's recorded contents (little-endian bytes, `count` elements of `dtype`).
struct DataBuffer {
  std::int64_t slot = 0;
  DType dtype = DType::void_;
  std::int64_t count = 0;
  std::vector<std::byte> bytes;
};

struct KernelData {
  std::vector<DataBuffer> inputs;   // contents before the kernel ran
  std::vector<DataBuffer> outputs;  // contents after tinygrad's kernel ran
  const DataBuffer* input(std::int64_t slot) const {
    for (const auto& b : inputs)
      if (b.slot == slot) return &b;
    return nullptr;
  }
  const DataBuffer* output(std::int64_t slot) const {
    for (const auto& b : outputs)
      if (b.slot == slot) return &b;
    return nullptr;
  }
};

/// Reads the buffers `d` describes from the .bin file `bin`; checks sizes against the file.
inline KernelData load_data(const DataInfo& d, const std::filesystem::path& bin) {
  if (d.inputs.empty() && d.outputs.empty()) return {};  // a file that records no buffers needs no .bin
  const std::string bytes = read_file(bin);
  const std::string what = "json: " + bin.filename().string() + ": ";
  auto read = [&](const std::vector<DataEntry>& list, std::string_view key) {
    std::vector<DataBuffer> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const DataEntry& e = list[i];
      const std::string where = what + "data." + std::string(key) + "[" + std::to_string(i) + "] (slot " +
                                std::to_string(e.slot) + "): ";
      const int isz = itemsize(e.dtype);
      if (isz <= 0 || is_weak(e.dtype)) fail_runtime(where + "dtype " + std::string(name(e.dtype)) + " has no storage size");
      if (e.count < 0 || e.offset < 0 || e.nbytes < 0) fail_runtime(where + "negative count, offset or nbytes");
      if (e.count > e.nbytes || e.nbytes / isz != e.count || e.nbytes % isz != 0)
        fail_runtime(where + "nbytes " + std::to_string(e.nbytes) + " != count " + std::to_string(e.count) +
                     " * itemsize " + std::to_string(isz));
      if (static_cast<std::uint64_t>(e.offset) > bytes.size() ||
          static_cast<std::uint64_t>(e.nbytes) > bytes.size() - static_cast<std::uint64_t>(e.offset))
        fail_runtime(where + "bytes [" + std::to_string(e.offset) + ", +" + std::to_string(e.nbytes) +
                     ") lie outside the file (" + std::to_string(bytes.size()) + " bytes)");
      DataBuffer b{e.slot, e.dtype, e.count, {}};
      const auto* first = reinterpret_cast<const std::byte*>(bytes.data()) + e.offset;
      b.bytes.assign(first, first + e.nbytes);
      out.push_back(std::move(b));
    }
    return out;
  };
  KernelData kd;
  kd.inputs = read(d.inputs, "inputs");
  kd.outputs = read(d.outputs, "outputs");
  return kd;
}

/// The kernel's recorded buffers: `data.file` next to the kernel file it was loaded from.
inline KernelData load_data(const Kernel& k) {
  if (k.path.empty()) fail_runtime("json: kernel " + k.name + " was not loaded from a file: pass the .bin path");
  return load_data(k.data, k.path.parent_path() / k.data.file);
}

}  // namespace uopcg::io
