// Scalar dtypes and address spaces of the tinygrad snapshot (there are no vector or pointer dtypes:
// vector width lives in a node's shape, pointer-ness in its address space).
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace uopcg {

/// Every scalar dtype of the snapshot, in tinygrad's promotion-priority order.
enum class DType : std::uint8_t {
  void_,
  bool_,
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  uint128,  // internal (_uint128)
  uint256,  // internal (_uint256)
  weakint,  // the weak index / Python-int type; lowered to int32/int64 late
  weakfloat,
  fp8e4m3,
  fp8e5m2,
  fp8e4m3fnuz,
  fp8e5m2fnuz,
  float16,
  bfloat16,
  float32,
  float64,
};
inline constexpr int dtype_count = 22;

enum class DTypeKind : std::uint8_t { void_, boolean, sint, uint, floating, weakint, weakfloat, other };

struct DTypeInfo {
  std::string_view name;    // tinygrad's DType.name (the interchange spelling): "int", "half", ...
  std::string_view c_name;  // tinygrad's base C spelling ("signed char" for int8)
  int itemsize;
  int bitsize;
  int priority;
  DTypeKind kind;
  char fmt;  // struct-module format char, 0 if none
};

namespace detail {
inline constexpr DTypeInfo dtype_table[dtype_count] = {
    {"void", "void", 0, 0, -1, DTypeKind::void_, 0},
    {"bool", "bool", 1, 1, 0, DTypeKind::boolean, '?'},
    {"char", "signed char", 1, 8, 1, DTypeKind::sint, 'b'},
    {"uchar", "unsigned char", 1, 8, 2, DTypeKind::uint, 'B'},
    {"short", "short", 2, 16, 3, DTypeKind::sint, 'h'},
    {"ushort", "unsigned short", 2, 16, 4, DTypeKind::uint, 'H'},
    {"int", "int", 4, 32, 5, DTypeKind::sint, 'i'},
    {"uint", "unsigned int", 4, 32, 6, DTypeKind::uint, 'I'},
    {"long", "long", 8, 64, 7, DTypeKind::sint, 'q'},
    {"ulong", "unsigned long", 8, 64, 8, DTypeKind::uint, 'Q'},
    {"_uint128", "uint128", 16, 128, 8, DTypeKind::other, 0},
    {"_uint256", "uint256", 32, 256, 8, DTypeKind::other, 0},
    {"weakint", "weakint", 100, 800, 0, DTypeKind::weakint, 0},
    {"weakfloat", "weakfloat", 100, 800, 9, DTypeKind::weakfloat, 0},
    {"fp8e4m3", "float8_e4m3", 1, 8, 10, DTypeKind::floating, 0},
    {"fp8e5m2", "float8_e5m2", 1, 8, 11, DTypeKind::floating, 0},
    {"fp8e4m3fnuz", "float8_e4m3fnuz", 1, 8, 10, DTypeKind::floating, 0},
    {"fp8e5m2fnuz", "float8_e5m2fnuz", 1, 8, 11, DTypeKind::floating, 0},
    {"half", "half", 2, 16, 12, DTypeKind::floating, 'e'},
    {"bfloat16", "__bf16", 2, 16, 13, DTypeKind::floating, 0},
    {"float", "float", 4, 32, 14, DTypeKind::floating, 'f'},
    {"double", "double", 8, 64, 15, DTypeKind::floating, 'd'},
};
}  // namespace detail

constexpr const DTypeInfo& info(DType d) { return detail::dtype_table[static_cast<int>(d)]; }
constexpr std::string_view name(DType d) { return info(d).name; }
constexpr int itemsize(DType d) { return info(d).itemsize; }
constexpr int bitsize(DType d) { return info(d).bitsize; }
constexpr int priority(DType d) { return info(d).priority; }

constexpr bool is_weak(DType d) { return d == DType::weakint || d == DType::weakfloat; }
constexpr bool is_bool(DType d) { return d == DType::bool_; }
constexpr bool is_float(DType d) {
  return info(d).kind == DTypeKind::floating || d == DType::weakfloat;
}
/// Integers, including the weak index type (not bool).
constexpr bool is_int(DType d) {
  auto k = info(d).kind;
  return k == DTypeKind::sint || k == DTypeKind::uint || k == DTypeKind::weakint ||
         d == DType::uint128 || d == DType::uint256;
}
constexpr bool is_unsigned(DType d) {
  return info(d).kind == DTypeKind::uint || d == DType::uint128 || d == DType::uint256;
}
constexpr bool is_signed_int(DType d) { return is_int(d) && !is_unsigned(d); }

/// Looks a dtype up by its interchange name ("float", "half", "weakint", ...).
constexpr bool dtype_from_name(std::string_view s, DType& out) {
  for (int i = 0; i < dtype_count; ++i)
    if (detail::dtype_table[i].name == s) {
      out = static_cast<DType>(i);
      return true;
    }
  return false;
}

/// Looks a dtype up by a tinygrad `dtypes.` attribute name, in any case (its DEFAULT_FLOAT and
/// EMULATED_DTYPES settings): the interchange names ("half", "long", "bfloat16", ...) and the sized
/// ones ("float16", "int64", ...).
constexpr bool dtype_from_tinygrad_name(std::string_view s, DType& out) {
  struct named {
    std::string_view name;
    DType dt;
  };
  constexpr named sized[] = {{"int8", DType::int8},       {"uint8", DType::uint8},     {"int16", DType::int16},
                             {"uint16", DType::uint16},   {"int32", DType::int32},     {"uint32", DType::uint32},
                             {"int64", DType::int64},     {"uint64", DType::uint64},   {"float16", DType::float16},
                             {"float32", DType::float32}, {"float64", DType::float64}};
  char lower[16]{};
  if (s.size() > sizeof lower) return false;
  for (std::size_t i = 0; i < s.size(); ++i) lower[i] = s[i] >= 'A' && s[i] <= 'Z' ? static_cast<char>(s[i] - 'A' + 'a') : s[i];
  const std::string_view l(lower, s.size());
  for (const named& e : sized)
    if (e.name == l) {
      out = e.dt;
      return true;
    }
  return dtype_from_name(l, out);
}

/// The tinygrad `dtypes.` spellings, for readers coming from Python.
namespace dtypes {
inline constexpr DType void_ = DType::void_, bool_ = DType::bool_, int8 = DType::int8,
                       uint8 = DType::uint8, int16 = DType::int16, uint16 = DType::uint16,
                       int32 = DType::int32, uint32 = DType::uint32, int64 = DType::int64,
                       uint64 = DType::uint64, half = DType::float16, float16 = DType::float16,
                       bfloat16 = DType::bfloat16, float32 = DType::float32,
                       float64 = DType::float64, weakint = DType::weakint,
                       weakfloat = DType::weakfloat, index = DType::weakint;
}

/// Smallest / largest value of an integer or bool dtype (weakint behaves like a huge signed int).
constexpr std::int64_t int_min(DType d) {
  switch (d) {
    case DType::bool_: return 0;
    case DType::int8: return -128;
    case DType::int16: return -32768;
    case DType::int32: return std::numeric_limits<std::int32_t>::min();
    case DType::int64:
    case DType::weakint: return std::numeric_limits<std::int64_t>::min();
    default: return 0;  // unsigned
  }
}
constexpr std::uint64_t int_max_u(DType d) {
  switch (d) {
    case DType::bool_: return 1;
    case DType::int8: return 127;
    case DType::uint8: return 255;
    case DType::int16: return 32767;
    case DType::uint16: return 65535;
    case DType::int32: return 2147483647u;
    case DType::uint32: return 4294967295u;
    case DType::int64:
    case DType::weakint: return static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    default: return std::numeric_limits<std::uint64_t>::max();
  }
}

/// Promotion lattice (tinygrad's promo_lattice): bool < weakint < {int8, uint8} < ... < {int64,
/// uint64} < weakfloat < fp8 < {half, bfloat16} < float < double. Returns the least upper bound.
namespace detail {
constexpr std::uint32_t bit(DType d) { return 1u << static_cast<int>(d); }
constexpr std::uint32_t promo_parents(DType d) {
  switch (d) {
    case DType::bool_: return bit(DType::weakint);
    case DType::weakint: return bit(DType::int8) | bit(DType::uint8);
    case DType::int8: return bit(DType::int16);
    case DType::uint8: return bit(DType::int16) | bit(DType::uint16);
    case DType::int16: return bit(DType::int32);
    case DType::uint16: return bit(DType::int32) | bit(DType::uint32);
    case DType::int32: return bit(DType::int64);
    case DType::uint32: return bit(DType::int64) | bit(DType::uint64);
    case DType::int64:
    case DType::uint64: return bit(DType::weakfloat);
    case DType::weakfloat:
      return bit(DType::fp8e4m3) | bit(DType::fp8e5m2) | bit(DType::fp8e4m3fnuz) |
             bit(DType::fp8e5m2fnuz);
    case DType::fp8e4m3:
    case DType::fp8e5m2:
    case DType::fp8e4m3fnuz:
    case DType::fp8e5m2fnuz: return bit(DType::float16) | bit(DType::bfloat16);
    case DType::float16:
    case DType::bfloat16: return bit(DType::float32);
    case DType::float32: return bit(DType::float64);
    default: return 0;
  }
}
/// d and everything it promotes to.
constexpr std::uint32_t promo_upset(DType d) {
  std::uint32_t set = bit(d), frontier = bit(d);
  while (frontier) {
    std::uint32_t next = 0;
    for (int i = 0; i < dtype_count; ++i)
      if (frontier & (1u << i)) next |= promo_parents(static_cast<DType>(i));
    frontier = next & ~set;
    set |= next;
  }
  return set;
}
}  // namespace detail

namespace detail {
// The upsets, computed once: least_upper_dtype runs for every node built without a dtype.
struct promo_table {
  std::uint32_t upset[dtype_count];
};
inline constexpr promo_table promo_upsets = [] {
  promo_table t{};
  for (int i = 0; i < dtype_count; ++i) t.upset[i] = promo_upset(static_cast<DType>(i));
  return t;
}();
}  // namespace detail

constexpr DType least_upper_dtype(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::void_) return b;
  if (b == DType::void_) return a;
  const auto& up = detail::promo_upsets.upset;
  std::uint32_t common = up[static_cast<int>(a)] & up[static_cast<int>(b)];
  for (int i = 0; i < dtype_count; ++i) {
    if (!(common & (1u << i))) continue;
    // the least element: every other common bound lies above it
    if ((up[i] & common) == common) return static_cast<DType>(i);
  }
  return DType::float64;  // outside the lattice (uint128/256): widest float, as tinygrad falls back
}

/// Where a node lives: memory in one of three spaces, or a value (ALU).
enum class AddrSpace : std::uint8_t { GLOBAL = 1, LOCAL = 2, REG = 3, ALU = 4 };

constexpr std::string_view name(AddrSpace a) {
  switch (a) {
    case AddrSpace::GLOBAL: return "GLOBAL";
    case AddrSpace::LOCAL: return "LOCAL";
    case AddrSpace::REG: return "REG";
    case AddrSpace::ALU: return "ALU";
  }
  return "?";
}
constexpr bool addrspace_from_name(std::string_view s, AddrSpace& out) {
  for (int i = 1; i <= 4; ++i)
    if (name(static_cast<AddrSpace>(i)) == s) {
      out = static_cast<AddrSpace>(i);
      return true;
    }
  return false;
}

}  // namespace uopcg
