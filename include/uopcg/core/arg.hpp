// The `arg` (and `tag`) of a UOp: a closed variant of the kinds the snapshot uses — None, bool,
// ints, floats (inf/nan included), strings, enum members, Invalid, tuples, and the records ParamArg,
// KernelInfo, BufferizeOpts, Opt and Estimates. Records are stored as positional fields so that
// hashing, equality, printing and the JSON interchange treat every kind uniformly; typed views
// (ParamArg, ...) give named access.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "ops.hpp"
#include "text.hpp"
#include "detail/out_of_line.hpp"

namespace uopcg {

enum class ArgKind : std::uint8_t {
  none,
  boolean,
  int_,     // int64 range
  uint_,    // integers in (INT64_MAX, UINT64_MAX]
  float_,
  string,
  bigint,   // integer outside both ranges, kept as its decimal text
  dtype,
  op,
  axis_type,
  addrspace,
  opt_ops,
  invalid,  // the Invalid sentinel (CONST arg)
  sym,      // a symbolic size, kept as text
  tuple,
  param_arg,
  kernel_info,
  bufferize_opts,
  opt,
  estimates,
};

constexpr std::string_view name(ArgKind k) {
  constexpr std::string_view names[] = {"None",     "bool",        "int",     "uint",      "float",
                                        "str",      "bigint",      "dtype",   "Ops",       "AxisType",
                                        "AddrSpace", "OptOps",     "Invalid", "sym",       "tuple",
                                        "ParamArg", "KernelInfo",  "BufferizeOpts", "Opt", "Estimates"};
  return names[static_cast<int>(k)];
}

/// Number of positional fields of each record kind.
constexpr int record_arity(ArgKind k) {
  switch (k) {
    case ArgKind::param_arg: return 9;
    case ArgKind::kernel_info: return 7;
    case ArgKind::bufferize_opts: return 3;
    case ArgKind::opt: return 3;
    case ArgKind::estimates: return 3;
    default: return -1;
  }
}

class Arg {
 public:
  constexpr Arg() = default;  // None

  // --- construction ------------------------------------------------------------------------------
  static constexpr Arg boolean(bool b) { return Arg(ArgKind::boolean, b ? 1 : 0); }
  static constexpr Arg integer(std::int64_t v) { return Arg(ArgKind::int_, static_cast<std::uint64_t>(v)); }
  static constexpr Arg uinteger(std::uint64_t v) {
    return v <= static_cast<std::uint64_t>(INT64_MAX) ? integer(static_cast<std::int64_t>(v))
                                                      : Arg(ArgKind::uint_, v);
  }
  static constexpr Arg floating(double v) {
    // NaN is unique (tinygrad's ConstFloat: nan == nan); -0.0 stays distinct from 0.0.
    if (v != v) return Arg(ArgKind::float_, 0x7FF8000000000000ull);
    return Arg(ArgKind::float_, std::bit_cast<std::uint64_t>(v));
  }
  static constexpr Arg string(std::string_view s) { return Arg(ArgKind::string, s); }
  static constexpr Arg bigint(std::string_view digits) { return Arg(ArgKind::bigint, digits); }
  static constexpr Arg sym(std::string_view s) { return Arg(ArgKind::sym, s); }
  static constexpr Arg dtype(DType d) { return Arg(ArgKind::dtype, static_cast<std::uint64_t>(d)); }
  static constexpr Arg op(Ops o) { return Arg(ArgKind::op, static_cast<std::uint64_t>(o)); }
  static constexpr Arg axis_type(AxisType a) { return Arg(ArgKind::axis_type, static_cast<std::uint64_t>(a)); }
  static constexpr Arg addrspace(AddrSpace a) { return Arg(ArgKind::addrspace, static_cast<std::uint64_t>(a)); }
  static constexpr Arg opt_ops(OptOps o) { return Arg(ArgKind::opt_ops, static_cast<std::uint64_t>(o)); }
  static constexpr Arg invalid() { return Arg(ArgKind::invalid, 0); }
  static constexpr Arg tuple(std::vector<Arg> items) {
    Arg a(ArgKind::tuple, 0);
    a.items_ = std::move(items);
    return a;
  }
  template <class... A>
  static constexpr Arg tuple_of(A&&... items) {
    std::vector<Arg> v;
    v.reserve(sizeof...(A));
    (v.push_back(Arg(std::forward<A>(items))), ...);
    return tuple(std::move(v));
  }
  /// A record of the given kind from its positional fields (see record_arity).
  static constexpr Arg record(ArgKind k, std::vector<Arg> fields) {
    if (record_arity(k) < 0 || static_cast<int>(fields.size()) != record_arity(k))
      fail("Arg::record: wrong kind or field count");
    Arg a(k, 0);
    a.items_ = std::move(fields);
    return a;
  }

  // Implicit conversions for the common scalar kinds (ints, floats, enums).
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  constexpr Arg(I v)  // NOLINT(google-explicit-constructor)
      : Arg(std::is_signed_v<I> ? integer(static_cast<std::int64_t>(v))
                                : uinteger(static_cast<std::uint64_t>(v))) {}
  constexpr Arg(double v) : Arg(floating(v)) {}             // NOLINT
  constexpr Arg(DType d) : Arg(dtype(d)) {}                 // NOLINT
  constexpr Arg(Ops o) : Arg(op(o)) {}                      // NOLINT
  constexpr Arg(AxisType a) : Arg(axis_type(a)) {}          // NOLINT
  constexpr Arg(AddrSpace a) : Arg(addrspace(a)) {}         // NOLINT
  constexpr Arg(OptOps o) : Arg(opt_ops(o)) {}              // NOLINT

  // --- inspection --------------------------------------------------------------------------------
  constexpr ArgKind kind() const { return kind_; }
  constexpr bool is_none() const { return kind_ == ArgKind::none; }
  constexpr bool is_int() const { return kind_ == ArgKind::int_ || kind_ == ArgKind::uint_; }
  constexpr bool is_float() const { return kind_ == ArgKind::float_; }
  constexpr bool is_bool() const { return kind_ == ArgKind::boolean; }
  constexpr bool is_invalid() const { return kind_ == ArgKind::invalid; }
  constexpr bool is_tuple() const { return kind_ == ArgKind::tuple; }
  constexpr bool is_record() const { return record_arity(kind_) >= 0; }
  /// A number (bool, int or float): what a CONST holds.
  constexpr bool is_number() const { return is_int() || is_float() || is_bool(); }

  constexpr bool as_bool() const { return expect(ArgKind::boolean), bits_ != 0; }
  constexpr std::int64_t as_int() const {
    if (kind_ == ArgKind::boolean) return static_cast<std::int64_t>(bits_);
    expect(ArgKind::int_);
    return static_cast<std::int64_t>(bits_);
  }
  constexpr std::uint64_t as_uint() const {
    if (kind_ == ArgKind::uint_) return bits_;
    return static_cast<std::uint64_t>(as_int());
  }
  constexpr double as_float() const {
    if (kind_ == ArgKind::int_) return static_cast<double>(static_cast<std::int64_t>(bits_));
    if (kind_ == ArgKind::uint_) return static_cast<double>(bits_);
    if (kind_ == ArgKind::boolean) return bits_ ? 1.0 : 0.0;
    expect(ArgKind::float_);
    return std::bit_cast<double>(bits_);
  }
  constexpr std::string_view as_string() const {
    if (kind_ != ArgKind::string && kind_ != ArgKind::bigint && kind_ != ArgKind::sym)
      expect(ArgKind::string);
    return {str_.data(), str_.size()};
  }
  constexpr DType as_dtype() const { return expect(ArgKind::dtype), static_cast<DType>(bits_); }
  constexpr Ops as_op() const { return expect(ArgKind::op), static_cast<Ops>(bits_); }
  constexpr AxisType as_axis_type() const { return expect(ArgKind::axis_type), static_cast<AxisType>(bits_); }
  constexpr AddrSpace as_addrspace() const { return expect(ArgKind::addrspace), static_cast<AddrSpace>(bits_); }
  constexpr OptOps as_opt_ops() const { return expect(ArgKind::opt_ops), static_cast<OptOps>(bits_); }
  /// Raw payload bits (bool/int value, float bits, enum value).
  constexpr std::uint64_t bits() const { return bits_; }

  /// Tuple items or record fields.
  constexpr const std::vector<Arg>& items() const { return items_; }
  constexpr std::size_t size() const { return items_.size(); }
  constexpr const Arg& operator[](std::size_t i) const {
    if (i >= items_.size()) fail("Arg: item index out of range");
    return items_[i];
  }

  /// Structural equality (the hash-consing key): kinds must agree; NaN equals NaN; -0.0 != 0.0.
  friend constexpr bool operator==(const Arg& a, const Arg& b) {
    return a.kind_ == b.kind_ && a.bits_ == b.bits_ && a.str_ == b.str_ && a.items_ == b.items_;
  }
  /// Python `==` as UPat(arg=...) uses it: numbers compare by value across bool/int/float
  /// (0 == 0.0 == -0.0 == False), tuples elementwise. The one home of that equality: the
  /// matcher's constant tests call the number forms.
  [[gnu::always_inline]] constexpr bool py_equal(std::int64_t i) const {
    if (kind_ == ArgKind::int_ || kind_ == ArgKind::boolean) return static_cast<std::int64_t>(bits_) == i;  // most CONSTs
    if (kind_ == ArgKind::float_) return as_float() == static_cast<double>(i);
    return kind_ == ArgKind::uint_ && i >= 0 && bits_ == static_cast<std::uint64_t>(i);
  }
  constexpr bool py_equal(double f) const { return is_number() && as_float() == f; }
  constexpr bool py_equal(const Arg& o) const {
    if (is_number() && o.is_number()) {
      if (o.is_float()) return py_equal(o.as_float());
      if (o.kind_ == ArgKind::uint_) return is_float() ? as_float() == o.as_float() : kind_ == o.kind_ && bits_ == o.bits_;
      return py_equal(o.as_int());
    }
    if (kind_ != o.kind_ || items_.size() != o.items_.size()) return false;
    if (!items_.empty()) {
      for (std::size_t i = 0; i < items_.size(); ++i)
        if (!items_[i].py_equal(o.items_[i])) return false;
      return bits_ == o.bits_;
    }
    return *this == o;
  }

  constexpr std::uint64_t hash() const {
    std::uint64_t h = mix(static_cast<std::uint64_t>(kind_) * 0x9E3779B97F4A7C15ull ^ bits_);
    for (char c : str_) h = mix(h ^ static_cast<unsigned char>(c));
    for (const Arg& a : items_) h = mix(h ^ a.hash());
    return h;
  }
  static constexpr std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
  }

  /// Python-like rendering: None, True, 3, 1.5, inf, 'gidx0', (0, AxisType.REDUCE), ParamArg(...).
  constexpr void print(text& out) const;

 private:
  constexpr Arg(ArgKind k, std::uint64_t bits) : kind_(k), bits_(bits) {}
  constexpr Arg(ArgKind k, std::string_view s) : kind_(k), bits_(0), str_(s.begin(), s.end()) {}
  // The check inline, the message out of line: as_int() and friends are read in every rewriter,
  // and with the message inlined GCC would call an outlined as_int instead.
  constexpr void expect(ArgKind k) const {
    if (kind_ != k) [[unlikely]]
      wrong_kind(k);
  }
  [[noreturn, gnu::noinline, gnu::cold]] constexpr void wrong_kind(ArgKind k) const {
    if (std::is_constant_evaluated()) fail("Arg: wrong kind");
    text t;
    t.append("Arg: expected ").append(name(k)).append(", found ").append(name(kind_));
    fail(t.view());
  }

  ArgKind kind_ = ArgKind::none;
  std::uint64_t bits_ = 0;
  std::vector<char> str_;
  std::vector<Arg> items_;
};

namespace detail {
inline constexpr std::string_view param_arg_fields[] = {"slot", "dtype", "vmin_vmax", "multiple_of", "name",
                                                        "addrspace", "axis", "device", "volatile"};
inline constexpr std::string_view kernel_info_fields[] = {"name", "axis_types", "dont_use_locals", "applied_opts",
                                                          "opts_to_apply", "estimates", "beam"};
inline constexpr std::string_view bufferize_opts_fields[] = {"device", "addrspace", "removable"};
inline constexpr std::string_view opt_fields[] = {"op", "axis", "arg"};
inline constexpr std::string_view estimates_fields[] = {"ops", "lds", "mem"};
}  // namespace detail

/// Field names of a record kind, in positional order (the JSON keys).
constexpr const std::string_view* record_fields(ArgKind k) {
  switch (k) {
    case ArgKind::param_arg: return detail::param_arg_fields;
    case ArgKind::kernel_info: return detail::kernel_info_fields;
    case ArgKind::bufferize_opts: return detail::bufferize_opts_fields;
    case ArgKind::opt: return detail::opt_fields;
    case ArgKind::estimates: return detail::estimates_fields;
    default: return nullptr;
  }
}

constexpr void Arg::print(text& out) const {
  switch (kind_) {
    case ArgKind::none: out.append("None"); return;
    case ArgKind::boolean: out.append(bits_ != 0); return;
    case ArgKind::int_: out.append(static_cast<std::int64_t>(bits_)); return;
    case ArgKind::uint_: out.append(bits_); return;
    case ArgKind::float_: out.append_float(std::bit_cast<double>(bits_)); return;
    case ArgKind::string:
      // Python-repr style: control characters (the ANSI colours of kernel names) are escaped
      out.append('\'');
      for (char c : as_string()) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f || c == '\\' || c == '\'') {
          constexpr char hex[] = "0123456789abcdef";
          if (c == '\\' || c == '\'') out.append('\\').append(c);
          else out.append("\\x").append(hex[u >> 4]).append(hex[u & 15]);
        } else {
          out.append(c);
        }
      }
      out.append('\'');
      return;
    case ArgKind::bigint: out.append(as_string()); return;
    case ArgKind::sym: out.append("sym(").append(as_string()).append(')'); return;
    case ArgKind::dtype: out.append("dtypes.").append(name(as_dtype())); return;
    case ArgKind::op: out.append("Ops.").append(name(as_op())); return;
    case ArgKind::axis_type: out.append("AxisType.").append(name(as_axis_type())); return;
    case ArgKind::addrspace: out.append("AddrSpace.").append(name(as_addrspace())); return;
    case ArgKind::opt_ops: out.append("OptOps.").append(name(as_opt_ops())); return;
    case ArgKind::invalid: out.append("Invalid"); return;
    case ArgKind::tuple:
      out.append('(');
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (i) out.append(", ");
        items_[i].print(out);
      }
      if (items_.size() == 1) out.append(',');
      out.append(')');
      return;
    default: {
      out.append(name(kind_)).append('(');
      // compact: fields left at None / False / () are not printed
      const std::string_view* fields = record_fields(kind_);
      bool first = true;
      for (std::size_t i = 0; i < items_.size(); ++i) {
        const Arg& f = items_[i];
        if (f.is_none() || (f.is_bool() && !f.as_bool()) || (f.is_tuple() && f.size() == 0)) continue;
        if (!first) out.append(", ");
        first = false;
        out.append(fields[i]).append('=');
        f.print(out);
      }
      out.append(')');
      return;
    }
  }
}

// --- typed record views ---------------------------------------------------------------------------

/// arg of PARAM and BUFFER.
struct ParamArg {
 private:
  // to_arg()'s body: a template declared extern, defined before its caller (see Arena::set_up)
  template <class Tag = detail::out_of_line_tag>
  constexpr Arg record() const {
    // optional fields assigned under an `if`, not chosen by `?:`: g++ 12's constant evaluation
    // rejects a conditional whose chosen Arg allocates (a tuple, a string) as a use after free
    std::vector<Arg> f(9);
    f[0] = Arg::integer(slot);
    f[1] = Arg::dtype(dtype);
    if (vmin_vmax) f[2] = Arg::tuple_of(vmin_vmax->first, vmin_vmax->second);
    if (multiple_of) f[3] = Arg::integer(*multiple_of);
    if (has_name) f[4] = Arg::string(name.view());
    if (addrspace) f[5] = Arg::addrspace(*addrspace);
    if (axis) f[6] = Arg::integer(*axis);
    f[7] = device;
    f[8] = Arg::boolean(is_volatile);
    return Arg::record(ArgKind::param_arg, std::move(f));
  }

 public:
  std::int64_t slot = -1;
  DType dtype = DType::float32;
  std::optional<std::pair<std::int64_t, std::int64_t>> vmin_vmax;
  std::optional<std::int64_t> multiple_of;
  bool has_name = false;  // a variable's name (ALU PARAMs)
  text name;
  std::optional<AddrSpace> addrspace = AddrSpace::GLOBAL;
  std::optional<std::int64_t> axis;
  Arg device;  // None, a string, or a tuple of strings
  bool is_volatile = false;

  constexpr Arg to_arg() const {
    if (std::is_constant_evaluated()) return record();
    return record_out_of_line();  // core/detail/out_of_line.hpp
  }
  static constexpr ParamArg from(const Arg& a) {
    if (a.kind() != ArgKind::param_arg) fail("ParamArg::from: arg is not a ParamArg");
    ParamArg p;
    p.slot = a[0].as_int();
    p.dtype = a[1].as_dtype();
    if (!a[2].is_none()) p.vmin_vmax = std::pair{a[2][0].as_int(), a[2][1].as_int()};
    if (!a[3].is_none()) p.multiple_of = a[3].as_int();
    if (!a[4].is_none()) {
      p.has_name = true;
      p.name = a[4].as_string();
    }
    p.addrspace = a[5].is_none() ? std::nullopt : std::optional<AddrSpace>(a[5].as_addrspace());
    if (!a[6].is_none()) p.axis = a[6].as_int();
    p.device = a[7];
    p.is_volatile = a[8].as_bool();
    return p;
  }

 private:
  template <class Tag = detail::out_of_line_tag>
  Arg record_out_of_line() const;
};

/// arg of STAGE.
struct BufferizeOpts {
  Arg device;  // None, a string, an int (LOCAL staging: axis id), or a tuple of strings
  AddrSpace addrspace = AddrSpace::GLOBAL;
  bool removable = true;

  constexpr Arg to_arg() const {
    std::vector<Arg> f;
    f.reserve(3);
    f.push_back(device);
    f.push_back(Arg::addrspace(addrspace));
    f.push_back(Arg::boolean(removable));
    return Arg::record(ArgKind::bufferize_opts, std::move(f));
  }
  static constexpr BufferizeOpts from(const Arg& a) {
    if (a.kind() != ArgKind::bufferize_opts) fail("BufferizeOpts::from: arg is not a BufferizeOpts");
    return BufferizeOpts{a[0], a[1].as_addrspace(), a[2].as_bool()};
  }
};

/// One optimization record.
struct Opt {
  OptOps op = OptOps::UPCAST;
  std::optional<std::int64_t> axis;
  Arg arg;  // None, an int, or a tuple

  constexpr Arg to_arg() const {
    std::vector<Arg> f;
    f.push_back(Arg::opt_ops(op));
    f.push_back(axis ? Arg::integer(*axis) : Arg());
    f.push_back(arg);
    return Arg::record(ArgKind::opt, std::move(f));
  }
  static constexpr Opt from(const Arg& a) {
    if (a.kind() != ArgKind::opt) fail("Opt::from: arg is not an Opt");
    Opt o;
    o.op = a[0].as_opt_ops();
    if (!a[1].is_none()) o.axis = a[1].as_int();
    o.arg = a[2];
    return o;
  }
};

/// arg of the kernel SINK.
struct KernelInfo {
 private:
  // to_arg()'s body: a template declared extern, defined before its caller (see Arena::set_up)
  template <class Tag = detail::out_of_line_tag>
  constexpr Arg record() const {
    std::vector<Arg> f;
    f.push_back(Arg::string(name.view()));
    std::vector<Arg> axes;
    for (AxisType t : axis_types) axes.push_back(Arg::axis_type(t));
    f.push_back(Arg::tuple(std::move(axes)));
    f.push_back(Arg::boolean(dont_use_locals));
    std::vector<Arg> applied;
    for (const Opt& o : applied_opts) applied.push_back(o.to_arg());
    f.push_back(Arg::tuple(std::move(applied)));
    if (opts_to_apply) {
      std::vector<Arg> todo;
      for (const Opt& o : *opts_to_apply) todo.push_back(o.to_arg());
      f.push_back(Arg::tuple(std::move(todo)));
    } else {
      f.push_back(Arg());
    }
    f.push_back(estimates);
    f.push_back(Arg::integer(beam));
    return Arg::record(ArgKind::kernel_info, std::move(f));
  }

 public:
  text name = "test";  // display name (may hold ANSI colour escapes)
  std::vector<AxisType> axis_types;
  bool dont_use_locals = false;
  std::vector<Opt> applied_opts;
  std::optional<std::vector<Opt>> opts_to_apply;
  Arg estimates;  // None or an Estimates record
  std::int64_t beam = 0;

  constexpr Arg to_arg() const {
    if (std::is_constant_evaluated()) return record();
    return record_out_of_line();  // core/detail/out_of_line.hpp
  }
  static constexpr KernelInfo from(const Arg& a) {
    if (a.kind() != ArgKind::kernel_info) fail("KernelInfo::from: arg is not a KernelInfo");
    KernelInfo k;
    k.name = a[0].as_string();
    for (const Arg& t : a[1].items()) k.axis_types.push_back(t.as_axis_type());
    k.dont_use_locals = a[2].as_bool();
    for (const Arg& o : a[3].items()) k.applied_opts.push_back(Opt::from(o));
    if (!a[4].is_none()) {
      k.opts_to_apply.emplace();
      for (const Arg& o : a[4].items()) k.opts_to_apply->push_back(Opt::from(o));
    }
    k.estimates = a[5];
    k.beam = a[6].as_int();
    return k;
  }

 private:
  template <class Tag = detail::out_of_line_tag>
  Arg record_out_of_line() const;
};

// Not inline: see core/detail/out_of_line.hpp.
template <class Tag>
Arg ParamArg::record_out_of_line() const {
  return record<Tag>();
}
template <class Tag>
Arg KernelInfo::record_out_of_line() const {
  return record<Tag>();
}

/// The C identifier of a kernel name: ANSI colour escapes stripped, every other character outside
/// [A-Za-z0-9_] hex-escaped (tinygrad's function_name).
constexpr text function_name(std::string_view display_name) {
  text out;
  for (std::size_t i = 0; i < display_name.size(); ++i) {
    char c = display_name[i];
    if (c == '\x1b') {  // ESC [ ... m
      while (i < display_name.size() && display_name[i] != 'm') ++i;
      continue;
    }
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (ok) {
      out.append(c);
    } else {
      constexpr char hex[] = "0123456789ABCDEF";
      auto u = static_cast<unsigned char>(c);
      out.append(hex[u >> 4]).append(hex[u & 15]);
    }
  }
  return out;
}

}  // namespace uopcg
