// uopcg single header compile.hpp: the declarations-only header: graph building, Target, rendering and the pipeline's entry
// points (uopcg::linked); `#define UOPCG_IMPLEMENTATION` in one translation unit for the definitions.
// Generated from include/ by tools/amalgamate.py — do not edit; regenerate with
// `python3 tools/amalgamate.py`. Do not mix with include/'s headers in one translation unit;
// the single headers combine with each other (shared include guards).
// Includes single_include/uopcg/compile_impl.hpp.
// Inlined, in order: 18 headers from include/
//   uopcg/compile.hpp
//   uopcg/codegen/target.hpp
//   uopcg/core/dtype.hpp
//   uopcg/core/ops.hpp
//   uopcg/render/kernel.hpp
//   uopcg/core/error.hpp
//   uopcg/core/text.hpp
//   uopcg/codegen/opt/tensor_core.hpp
//   uopcg/core/arena.hpp
//   uopcg/core/arg.hpp
//   uopcg/core/detail/out_of_line.hpp
//   uopcg/core/detail/node.hpp
//   uopcg/core/detail/derive_bounds.hpp
//   uopcg/core/detail/derive_shape.hpp
//   uopcg/core/builder.hpp
//   uopcg/core/graph.hpp
//   uopcg/core/print.hpp
//   uopcg/core/verify.hpp
#pragma once
#ifndef UOPCG_SINGLE_HEADER
#define UOPCG_SINGLE_HEADER 1
#endif

// ---- begin uopcg/compile.hpp ----
#ifndef UOPCG_SINGLE_COMPILE_HPP
#define UOPCG_SINGLE_COMPILE_HPP
// The codegen pipeline compiled once per program. Including codegen/pipeline.hpp instantiates every
// stage's rule sets in each translation unit that includes it; this header only declares the
// pipeline's entry points (uopcg::linked, non-template signatures) beside the cheap headers a caller
// needs (core: building and printing graphs; codegen/target.hpp; render/opencl.hpp's
// RenderedKernel). Exactly one translation unit of the program compiles their definitions, the way
// stb and doctest do it:
//
//   #define UOPCG_IMPLEMENTATION
//   #include <uopcg/compile.hpp>
//
// Defined before any uopcg header of that file (a later #include of this header is skipped). A
// program that never does fails to link with an undefined reference naming the entry point and
// uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit; defining it in two translation units
// gives a multiple definition of the same names. Header-only use needs none of this: include
// <uopcg/uopcg.hpp> (or codegen/pipeline.hpp) and call uopcg::codegen's functions.
//
// An entry point is one declaration here and one definition in compile_impl.hpp that forwards to the
// header-only function; its parameter types must come from headers as cheap as these.

#include <functional>
#include <span>
#include <string_view>
#include <vector>

// ---- begin uopcg/codegen/target.hpp ----
#ifndef UOPCG_SINGLE_CODEGEN_TARGET_HPP
#define UOPCG_SINGLE_CODEGEN_TARGET_HPP
// What a codegen target supports: the renderer's configuration (render::OpenCLRenderer, which is
// also what the emitter reads) plus the knobs tinygrad reads from its environment at codegen time.
// Every stage function takes a `const Target&`.


// ---- begin uopcg/core/dtype.hpp ----
#ifndef UOPCG_SINGLE_CORE_DTYPE_HPP
#define UOPCG_SINGLE_CORE_DTYPE_HPP
// Scalar dtypes and address spaces of the tinygrad snapshot (there are no vector or pointer dtypes:
// vector width lives in a node's shape, pointer-ness in its address space).

#include <cstdint>
#include <limits>

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
#endif  // UOPCG_SINGLE_CORE_DTYPE_HPP
// ---- end uopcg/core/dtype.hpp ----
// ---- begin uopcg/core/ops.hpp ----
#ifndef UOPCG_SINGLE_CORE_OPS_HPP
#define UOPCG_SINGLE_CORE_OPS_HPP
// Ops of the tinygrad snapshot (with its enum values, which order nodes structurally) and the op
// groups as constexpr sets.

#include <initializer_list>

namespace uopcg {

enum class Ops : std::uint8_t {
  SPECIAL = 1,
  BUFFER = 2,
  NOOP = 3,
  REWRITE_ERROR = 4,
  PARAM = 5,
  FUNCTION = 6,
  CALL = 7,
  PROGRAM = 8,
  LINEAR = 9,
  SOURCE = 10,
  BINARY = 11,
  SINK = 12,
  AFTER = 13,
  GROUP = 14,
  STACK = 15,
  TUPLE = 16,
  GETTUPLE = 17,
  GETADDR = 18,
  INDEX = 19,
  SHRINK = 20,
  LOAD = 21,
  STORE = 22,
  WMMA = 23,
  CAST = 24,
  BITCAST = 25,
  EXP2 = 26,
  LOG2 = 27,
  SIN = 28,
  SQRT = 29,
  RECIPROCAL = 30,
  NEG = 31,
  TRUNC = 32,
  ADD = 33,
  MUL = 34,
  SHL = 35,
  SHR = 36,
  CDIV = 37,
  MAX = 38,
  CMOD = 39,
  CMPLT = 40,
  CMPNE = 41,
  CMPEQ = 42,
  XOR = 43,
  OR = 44,
  AND = 45,
  THREEFRY = 46,
  SUB = 47,
  FDIV = 48,
  POW = 49,
  FLOORDIV = 50,
  FLOORMOD = 51,
  WHERE = 52,
  MULACC = 53,
  BARRIER = 54,
  RANGE = 55,
  IF = 56,
  END = 57,
  ENDIF = 58,
  WAIT = 59,
  CONST = 60,
  CUSTOM = 61,
  CUSTOMI = 62,
  INS = 63,
  CONTIGUOUS = 64,
  CONTIGUOUS_BACKWARD = 65,
  DETACH = 66,
  STAGE = 67,
  COPY = 68,
  MSELECT = 69,
  MSTACK = 70,
  CUSTOM_FUNCTION = 71,
  RESHAPE = 72,
  PERMUTE = 73,
  EXPAND = 74,
  PAD = 75,
  FLIP = 76,
  UNSHARD = 77,
  REDUCE = 78,
  ALLREDUCE = 79,
  PYLITERAL = 80,
};
inline constexpr int ops_max_value = 80;

namespace detail {
struct OpName {
  Ops op;
  std::string_view name;
};
inline constexpr OpName op_names[] = {
    {Ops::SPECIAL, "SPECIAL"},
    {Ops::BUFFER, "BUFFER"},
    {Ops::NOOP, "NOOP"},
    {Ops::REWRITE_ERROR, "REWRITE_ERROR"},
    {Ops::PARAM, "PARAM"},
    {Ops::FUNCTION, "FUNCTION"},
    {Ops::CALL, "CALL"},
    {Ops::PROGRAM, "PROGRAM"},
    {Ops::LINEAR, "LINEAR"},
    {Ops::SOURCE, "SOURCE"},
    {Ops::BINARY, "BINARY"},
    {Ops::SINK, "SINK"},
    {Ops::AFTER, "AFTER"},
    {Ops::GROUP, "GROUP"},
    {Ops::STACK, "STACK"},
    {Ops::TUPLE, "TUPLE"},
    {Ops::GETTUPLE, "GETTUPLE"},
    {Ops::GETADDR, "GETADDR"},
    {Ops::INDEX, "INDEX"},
    {Ops::SHRINK, "SHRINK"},
    {Ops::LOAD, "LOAD"},
    {Ops::STORE, "STORE"},
    {Ops::WMMA, "WMMA"},
    {Ops::CAST, "CAST"},
    {Ops::BITCAST, "BITCAST"},
    {Ops::EXP2, "EXP2"},
    {Ops::LOG2, "LOG2"},
    {Ops::SIN, "SIN"},
    {Ops::SQRT, "SQRT"},
    {Ops::RECIPROCAL, "RECIPROCAL"},
    {Ops::NEG, "NEG"},
    {Ops::TRUNC, "TRUNC"},
    {Ops::ADD, "ADD"},
    {Ops::MUL, "MUL"},
    {Ops::SHL, "SHL"},
    {Ops::SHR, "SHR"},
    {Ops::CDIV, "CDIV"},
    {Ops::MAX, "MAX"},
    {Ops::CMOD, "CMOD"},
    {Ops::CMPLT, "CMPLT"},
    {Ops::CMPNE, "CMPNE"},
    {Ops::CMPEQ, "CMPEQ"},
    {Ops::XOR, "XOR"},
    {Ops::OR, "OR"},
    {Ops::AND, "AND"},
    {Ops::THREEFRY, "THREEFRY"},
    {Ops::SUB, "SUB"},
    {Ops::FDIV, "FDIV"},
    {Ops::POW, "POW"},
    {Ops::FLOORDIV, "FLOORDIV"},
    {Ops::FLOORMOD, "FLOORMOD"},
    {Ops::WHERE, "WHERE"},
    {Ops::MULACC, "MULACC"},
    {Ops::BARRIER, "BARRIER"},
    {Ops::RANGE, "RANGE"},
    {Ops::IF, "IF"},
    {Ops::END, "END"},
    {Ops::ENDIF, "ENDIF"},
    {Ops::WAIT, "WAIT"},
    {Ops::CONST, "CONST"},
    {Ops::CUSTOM, "CUSTOM"},
    {Ops::CUSTOMI, "CUSTOMI"},
    {Ops::INS, "INS"},
    {Ops::CONTIGUOUS, "CONTIGUOUS"},
    {Ops::CONTIGUOUS_BACKWARD, "CONTIGUOUS_BACKWARD"},
    {Ops::DETACH, "DETACH"},
    {Ops::STAGE, "STAGE"},
    {Ops::COPY, "COPY"},
    {Ops::MSELECT, "MSELECT"},
    {Ops::MSTACK, "MSTACK"},
    {Ops::CUSTOM_FUNCTION, "CUSTOM_FUNCTION"},
    {Ops::RESHAPE, "RESHAPE"},
    {Ops::PERMUTE, "PERMUTE"},
    {Ops::EXPAND, "EXPAND"},
    {Ops::PAD, "PAD"},
    {Ops::FLIP, "FLIP"},
    {Ops::UNSHARD, "UNSHARD"},
    {Ops::REDUCE, "REDUCE"},
    {Ops::ALLREDUCE, "ALLREDUCE"},
    {Ops::PYLITERAL, "PYLITERAL"},
};
inline constexpr int op_name_count = sizeof(op_names) / sizeof(op_names[0]);
}  // namespace detail

constexpr std::string_view name(Ops op) {
  for (const auto& e : detail::op_names)
    if (e.op == op) return e.name;
  return "?";
}
constexpr bool op_from_name(std::string_view s, Ops& out) {
  for (const auto& e : detail::op_names)
    if (e.name == s) {
      out = e.op;
      return true;
    }
  return false;
}
constexpr bool is_valid_op(int v) {
  for (const auto& e : detail::op_names)
    if (static_cast<int>(e.op) == v) return true;
  return false;
}

/// A set of ops as a 128-bit mask: constexpr, usable as a template argument.
struct OpSet {
  std::uint64_t lo = 0, hi = 0;
  constexpr OpSet() = default;
  constexpr OpSet(std::initializer_list<Ops> ops) {
    for (Ops o : ops) *this = with(o);
  }
  constexpr OpSet with(Ops o) const {
    OpSet r = *this;
    int v = static_cast<int>(o);
    if (v < 64) r.lo |= std::uint64_t(1) << v;
    else r.hi |= std::uint64_t(1) << (v - 64);
    return r;
  }
  constexpr bool contains(Ops o) const {
    const unsigned v = static_cast<unsigned>(o);
    return ((v < 64 ? lo : hi) >> (v & 63u)) & 1;
  }
  constexpr bool empty() const { return lo == 0 && hi == 0; }
  constexpr int size() const { return __builtin_popcountll(lo) + __builtin_popcountll(hi); }
  constexpr OpSet operator|(OpSet o) const {
    OpSet r;
    r.lo = lo | o.lo;
    r.hi = hi | o.hi;
    return r;
  }
  constexpr OpSet operator&(OpSet o) const {
    OpSet r;
    r.lo = lo & o.lo;
    r.hi = hi & o.hi;
    return r;
  }
  constexpr OpSet operator-(OpSet o) const {
    OpSet r;
    r.lo = lo & ~o.lo;
    r.hi = hi & ~o.hi;
    return r;
  }
  constexpr bool subset_of(OpSet o) const { return (*this - o).empty(); }
  friend constexpr bool operator==(OpSet, OpSet) = default;
  /// Calls f(Ops) for each member, in enum order.
  template <class F>
  constexpr void for_each(F&& f) const {
    for (int v = 0; v < 128; ++v) {
      bool in = v < 64 ? (lo >> v) & 1 : (hi >> (v - 64)) & 1;
      if (in) f(static_cast<Ops>(v));
    }
  }
};

/// tinygrad's GroupOp sets.
namespace GroupOp {
inline constexpr OpSet Unary{Ops::EXP2, Ops::LOG2, Ops::NEG, Ops::RECIPROCAL, Ops::SIN, Ops::SQRT, Ops::TRUNC};
inline constexpr OpSet Binary{Ops::ADD, Ops::AND, Ops::CDIV, Ops::CMOD, Ops::CMPEQ, Ops::CMPLT, Ops::CMPNE, Ops::FDIV, Ops::FLOORDIV, Ops::FLOORMOD, Ops::MAX, Ops::MUL, Ops::OR, Ops::POW, Ops::SHL, Ops::SHR, Ops::SUB, Ops::THREEFRY, Ops::XOR};
inline constexpr OpSet Ternary{Ops::MULACC, Ops::WHERE};
inline constexpr OpSet ALU{Ops::ADD, Ops::AND, Ops::CDIV, Ops::CMOD, Ops::CMPEQ, Ops::CMPLT, Ops::CMPNE, Ops::EXP2, Ops::FDIV, Ops::FLOORDIV, Ops::FLOORMOD, Ops::LOG2, Ops::MAX, Ops::MUL, Ops::MULACC, Ops::NEG, Ops::OR, Ops::POW, Ops::RECIPROCAL, Ops::SHL, Ops::SHR, Ops::SIN, Ops::SQRT, Ops::SUB, Ops::THREEFRY, Ops::TRUNC, Ops::WHERE, Ops::XOR};
inline constexpr OpSet Broadcastable{Ops::ADD, Ops::AND, Ops::CDIV, Ops::CMOD, Ops::CMPEQ, Ops::CMPLT, Ops::CMPNE, Ops::FDIV, Ops::FLOORDIV, Ops::FLOORMOD, Ops::MAX, Ops::MUL, Ops::MULACC, Ops::OR, Ops::POW, Ops::SHL, Ops::SHR, Ops::SUB, Ops::THREEFRY, Ops::WHERE, Ops::XOR};
inline constexpr OpSet Elementwise{Ops::ADD, Ops::AND, Ops::BITCAST, Ops::CAST, Ops::CDIV, Ops::CMOD, Ops::CMPEQ, Ops::CMPLT, Ops::CMPNE, Ops::EXP2, Ops::FDIV, Ops::FLOORDIV, Ops::FLOORMOD, Ops::LOG2, Ops::MAX, Ops::MUL, Ops::MULACC, Ops::NEG, Ops::OR, Ops::POW, Ops::RECIPROCAL, Ops::SHL, Ops::SHR, Ops::SIN, Ops::SQRT, Ops::SUB, Ops::THREEFRY, Ops::TRUNC, Ops::WHERE, Ops::XOR};
inline constexpr OpSet Defines{Ops::BUFFER, Ops::PARAM};
inline constexpr OpSet Irreducible{Ops::CONST, Ops::GETADDR, Ops::PARAM, Ops::RANGE, Ops::SPECIAL};
inline constexpr OpSet Movement{Ops::EXPAND, Ops::FLIP, Ops::PAD, Ops::PERMUTE, Ops::RESHAPE, Ops::SHRINK};
inline constexpr OpSet Commutative{Ops::ADD, Ops::AND, Ops::CMPEQ, Ops::CMPNE, Ops::MAX, Ops::MUL, Ops::OR, Ops::XOR};
inline constexpr OpSet Associative{Ops::ADD, Ops::AND, Ops::MAX, Ops::MUL, Ops::OR};
inline constexpr OpSet Idempotent{Ops::AND, Ops::MAX, Ops::OR};
inline constexpr OpSet Reduce{Ops::ADD, Ops::MAX, Ops::MUL};
inline constexpr OpSet Comparison{Ops::CMPEQ, Ops::CMPLT, Ops::CMPNE};
inline constexpr OpSet All = [] {
  OpSet s;
  for (const auto& e : detail::op_names) s = s.with(e.op);
  return s;
}();
/// Ops that close the ranges listed in their sources (END, REDUCE, STAGE: src[1:]; WMMA: src[3:]).
inline constexpr OpSet RangeClosing{Ops::END, Ops::REDUCE, Ops::STAGE, Ops::WMMA};
}  // namespace GroupOp

/// How many sources a node of each op may have: [min, max] (max = -1: unbounded). Patterns and the
/// IR verifier check against it.
struct SrcCount {
  int min, max;
  constexpr bool allows(int n) const { return n >= min && (max < 0 || n <= max); }
  /// Whether some count >= n is allowed (for patterns that allow extra sources).
  constexpr bool allows_at_least(int n) const { return max < 0 || n <= max; }
};
constexpr SrcCount src_count(Ops op) {
  if (GroupOp::Unary.contains(op)) return {1, 1};
  if (GroupOp::Binary.contains(op)) return {2, 2};
  if (GroupOp::Ternary.contains(op)) return {3, 3};
  switch (op) {
    case Ops::CONST: return {0, 0};
    case Ops::CAST: case Ops::BITCAST: case Ops::PERMUTE: case Ops::FLIP: case Ops::ENDIF:
    case Ops::SPECIAL: return {1, 1};
    case Ops::PARAM: case Ops::BUFFER: return {0, 1};
    case Ops::RESHAPE: case Ops::EXPAND: return {2, 2};
    case Ops::SHRINK: case Ops::PAD: return {3, 3};
    case Ops::LOAD: return {1, 3};
    case Ops::STORE: return {2, 3};
    case Ops::IF: return {1, 2};
    case Ops::WMMA: return {3, -1};
    case Ops::RANGE: case Ops::INDEX: case Ops::REDUCE: case Ops::STAGE: case Ops::END:
    case Ops::AFTER: return {1, -1};
    default: return {0, -1};
  }
}

/// Axis kinds of a RANGE (its arg's last element).
enum class AxisType : std::uint8_t {
  DEVICE = 1, GLOBAL = 2, WARP = 3, LOCAL = 4, WEAK = 5, GROUP_REDUCE = 6, REDUCE = 7,
  UPCAST = 8, UNROLL = 9, THREAD = 10, PLACEHOLDER = 11, LOOP = 12
};
inline constexpr std::string_view axis_type_names[] = {
    "", "DEVICE", "GLOBAL", "WARP", "LOCAL", "WEAK", "GROUP_REDUCE", "REDUCE", "UPCAST", "UNROLL",
    "THREAD", "PLACEHOLDER", "LOOP"};
constexpr std::string_view name(AxisType a) { return axis_type_names[static_cast<int>(a)]; }
constexpr bool axis_type_from_name(std::string_view s, AxisType& out) {
  for (int i = 1; i <= 12; ++i)
    if (axis_type_names[i] == s) {
      out = static_cast<AxisType>(i);
      return true;
    }
  return false;
}
/// The letter a range variable is named with in rendered code (Ridx0, gidx1, ...).
constexpr char axis_letter(AxisType a) {
  switch (a) {
    case AxisType::DEVICE: return 'd';
    case AxisType::GLOBAL: return 'g';
    case AxisType::WARP: return 'w';
    case AxisType::LOCAL: return 'l';
    case AxisType::WEAK:
    case AxisType::LOOP: return 'L';
    case AxisType::GROUP_REDUCE: return 'G';
    case AxisType::REDUCE: return 'R';
    case AxisType::UPCAST: return 'u';
    case AxisType::UNROLL: return 'r';
    case AxisType::THREAD: return 't';
    case AxisType::PLACEHOLDER: return 'p';
  }
  return '?';
}

/// Kernel optimizations (recorded in KernelInfo; uopcg does not search them).
enum class OptOps : std::uint8_t {
  TC = 1, UPCAST = 2, UNROLL = 3, LOCAL = 4, THREAD = 5, GROUP = 6, GROUPTOP = 7, NOLOCALS = 8,
  PADTO = 9, SWAP = 10
};
inline constexpr std::string_view opt_ops_names[] = {
    "", "TC", "UPCAST", "UNROLL", "LOCAL", "THREAD", "GROUP", "GROUPTOP", "NOLOCALS", "PADTO", "SWAP"};
constexpr std::string_view name(OptOps o) { return opt_ops_names[static_cast<int>(o)]; }
constexpr bool opt_ops_from_name(std::string_view s, OptOps& out) {
  for (int i = 1; i <= 10; ++i)
    if (opt_ops_names[i] == s) {
      out = static_cast<OptOps>(i);
      return true;
    }
  return false;
}

}  // namespace uopcg
#endif  // UOPCG_SINGLE_CORE_OPS_HPP
// ---- end uopcg/core/ops.hpp ----
// ---- begin uopcg/render/kernel.hpp ----
#ifndef UOPCG_SINGLE_RENDER_KERNEL_HPP
#define UOPCG_SINGLE_RENDER_KERNEL_HPP
// What the OpenCL emitter is configured with and what it returns: the device's capabilities
// (OpenCLRenderer, tinygrad's renderer fields) and the rendered kernel (source, name, parameters,
// launch sizes). Apart from the emitter (render/opencl.hpp) so that codegen::Target and the
// declarations-only <uopcg/compile.hpp> need not parse the emitter.

#include <array>
#include <optional>

// ---- begin uopcg/core/error.hpp ----
#ifndef UOPCG_SINGLE_CORE_ERROR_HPP
#define UOPCG_SINGLE_CORE_ERROR_HPP
// One error mechanism for the whole library.
//
// Every failure (ill-typed graph, malformed JSON, failing syscall, ...) ends in uopcg::fail(), which
// - in constant evaluation, stops compilation (the diagnostic points at the failing call);
// - with exceptions, throws uopcg::error carrying the message;
// - with -fno-exceptions, passes the message to the configurable handler, which must not return
//   (the default prints to stderr and aborts).

#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <exception>
#define UOPCG_HAS_EXCEPTIONS 1
#else
#define UOPCG_HAS_EXCEPTIONS 0
#endif

namespace uopcg {

/// The exception every uopcg function throws; what() names the node, rule or call at fault.
class error : public std::exception {
 public:
  explicit error(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const noexcept { return message_; }

 private:
  std::string message_;
};

/// Receives the message when exceptions are off (or when set explicitly); must not return.
using error_handler = void (*)(const char* message);

namespace detail {
[[noreturn]] inline void default_error_handler(const char* message) {
  std::fputs("uopcg error: ", stderr);
  std::fputs(message, stderr);
  std::fputc('\n', stderr);
  std::abort();
}
inline error_handler& error_handler_slot() noexcept {
  static error_handler handler = nullptr;
  return handler;
}
// Deliberately not constexpr: reaching it during constant evaluation makes the expression
// non-constant, and compilers name this function in the diagnostic.
[[noreturn]] inline void uopcg_error_during_constant_evaluation(const char* message) {
  default_error_handler(message);
}
}  // namespace detail

/// Installs a handler that receives every error message. With exceptions enabled and no handler
/// set, errors are thrown as uopcg::error. A handler that returns is followed by std::abort().
inline error_handler set_error_handler(error_handler h) noexcept {
  error_handler old = detail::error_handler_slot();
  detail::error_handler_slot() = h;
  return old;
}

/// Reports an error. Never returns.
[[noreturn]] inline void fail_runtime(std::string message) {
  if (error_handler h = detail::error_handler_slot()) {
    h(message.c_str());
    std::abort();
  }
#if UOPCG_HAS_EXCEPTIONS
  throw error(std::move(message));
#else
  detail::default_error_handler(message.c_str());
#endif
}

/// Reports an error from code that may run in constant evaluation; there it stops compilation
/// and the diagnostic shows the message. (A template so that compilers do not reject a constexpr
/// function that can never be a constant expression.)
template <class = void>
[[noreturn]] constexpr void fail(std::string_view message) {
  if (std::is_constant_evaluated()) detail::uopcg_error_during_constant_evaluation(message.data());
  fail_runtime(std::string(message));
}

}  // namespace uopcg
#endif  // UOPCG_SINGLE_CORE_ERROR_HPP
// ---- end uopcg/core/error.hpp ----
// ---- begin uopcg/core/text.hpp ----
#ifndef UOPCG_SINGLE_CORE_TEXT_HPP
#define UOPCG_SINGLE_CORE_TEXT_HPP
// A growable character buffer usable in constant evaluation (constexpr std::string is not available
// on clang 14 with libstdc++ 12; constexpr std::vector is). Printing, error messages and the OpenCL
// emitter build their text here.

#include <algorithm>
#include <charconv>


namespace uopcg {

class text {
 public:
  constexpr text() = default;
  constexpr text(std::string_view s) { append(s); }  // NOLINT: text is a string
  constexpr text(const char* s) { append(s); }         // NOLINT

  constexpr text& append(std::string_view s) {
    if (!heap_ && len_ + s.size() <= inline_size) {
      std::copy(s.begin(), s.end(), small_ + len_);  // s may be a view of this: it ends at len_
      len_ += s.size();
      return *this;
    }
    room(s.size());
    buf_.insert(buf_.end(), s.begin(), s.end());
    return *this;
  }
  constexpr text& append(char c) {
    push(c);
    return *this;
  }
  constexpr text& append(const char* s) { return append(std::string_view(s)); }
  constexpr text& append(const text& t) {
    if (&t != this) return append(t.view());
    const std::size_t n = size();  // t.append(t): the view would dangle once room() reallocates
    room(n);
    for (std::size_t i = 0; i < n; ++i) buf_.push_back(buf_[i]);
    return *this;
  }
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool> &&
                                          !std::is_same_v<I, char>, int> = 0>
  constexpr text& append(I v) {
    if constexpr (std::is_signed_v<I>) {
      if (v < 0) {
        push('-');
        // negate in unsigned arithmetic so INT64_MIN works
        return append_unsigned(static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(v));
      }
    }
    return append_unsigned(static_cast<std::uint64_t>(v));
  }
  constexpr text& append(bool b) { return append(b ? std::string_view("True") : "False"); }
  /// Shortest text that reads back as the same double (Python repr style: "1.0", "inf", "nan",
  /// "1e-05"). In constant evaluation up to 17 significant digits are printed instead.
  constexpr text& append_float(double v);

  constexpr text& pad_to(std::size_t column, char fill = ' ') {
    const std::string_view v = view();
    std::size_t line_start = 0;
    for (std::size_t i = v.size(); i > 0; --i)
      if (v[i - 1] == '\n') {
        line_start = i;
        break;
      }
    while (size() - line_start < column) push(fill);
    return *this;
  }

  template <class T>
  constexpr text& operator<<(const T& v) {
    if constexpr (std::is_floating_point_v<T>) return append_float(static_cast<double>(v));
    else return append(v);
  }

  constexpr std::size_t size() const { return heap_ ? buf_.size() : len_; }
  constexpr bool empty() const { return size() == 0; }
  constexpr char operator[](std::size_t i) const { return view()[i]; }
  constexpr void clear() {
    buf_.clear();
    len_ = 0;
  }
  constexpr void pop_back() {
    if (heap_) buf_.pop_back();
    else --len_;
  }
  constexpr std::string_view view() const {
    return heap_ ? std::string_view(buf_.data(), buf_.size()) : std::string_view(small_, len_);
  }
  constexpr bool operator==(std::string_view s) const { return view() == s; }
  std::string str() const { return std::string(view()); }
  /// NUL-terminated pointer (valid until the next append).
  const char* c_str() {
    if (!heap_ && len_ < inline_size) {
      small_[len_] = '\0';
      return small_;
    }
    room(1);
    buf_.push_back('\0');
    buf_.pop_back();
    return buf_.data();
  }

 private:
  constexpr void push(char c) {
    if (!heap_ && len_ < inline_size) {
      small_[len_++] = c;
      return;
    }
    room(1);
    buf_.push_back(c);
  }
  constexpr text& append_unsigned(std::uint64_t v) {
    char digits[20];  // filled from the end: the most significant digit lands first
    std::size_t at = sizeof digits;
    do {
      digits[--at] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    return append(std::string_view(digits + at, sizeof digits - at));
  }
  /// Makes room for n more characters in the heap buffer, moving the inline characters there first:
  /// at least 64 to begin with, then doubling (a vector grown one character at a time from empty
  /// reallocates at 1, 2, 4, 8, ... characters).
  constexpr void room(std::size_t n) {
    if (!heap_) {
      buf_.reserve(2 * (len_ + n) < 64 ? 64 : 2 * (len_ + n));
      buf_.assign(small_, small_ + len_);
      heap_ = true;
      return;
    }
    const std::size_t need = buf_.size() + n;
    if (need <= buf_.capacity()) return;
    std::size_t cap = buf_.capacity() * 2;
    if (cap < 64) cap = 64;
    buf_.reserve(cap < need ? need : cap);
  }
  // Short texts (most of the emitter's expressions and names) live inline, without an allocation;
  // once a text outgrows it, it stays in buf_ (clear() keeps the capacity).
  static constexpr std::size_t inline_size = 48;
  char small_[inline_size]{};
  std::size_t len_ = 0;  // inline characters (heap_ false)
  bool heap_ = false;
  std::vector<char> buf_;
};

namespace detail {
constexpr bool is_nan(double v) { return v != v; }
constexpr bool is_inf(double v) { return v > 1.7976931348623157e308 || v < -1.7976931348623157e308; }
}  // namespace detail

constexpr text& text::append_float(double v) {
  if (detail::is_nan(v)) return append("nan");
  if (detail::is_inf(v)) return append(v > 0 ? "inf" : "-inf");
  if (!std::is_constant_evaluated()) {
    char tmp[64];
    auto res = std::to_chars(tmp, tmp + sizeof tmp, v);
    std::string_view s(tmp, static_cast<std::size_t>(res.ptr - tmp));
    // to_chars gives "1" or "1e-05"; Python repr adds ".0" to integral values printed plainly.
    bool has_point = s.find_first_of(".en") != std::string_view::npos;
    append(s);
    if (!has_point) append(".0");
    return *this;
  }
  // Constant evaluation: sign, then a fixed 17-significant-digit scientific form trimmed of zeros.
  if (v < 0 || (v == 0 && 1.0 / v < 0)) {
    push('-');
    v = -v;
  }
  if (v == 0) return append("0.0");
  int exp10 = 0;
  while (v >= 10) v /= 10, ++exp10;
  while (v < 1) v *= 10, --exp10;
  char digits[17];
  for (int i = 0; i < 17; ++i) {
    int d = static_cast<int>(v);
    digits[i] = static_cast<char>('0' + d);
    v = (v - d) * 10;
  }
  int nd = 17;
  while (nd > 1 && digits[nd - 1] == '0') --nd;
  if (exp10 >= 0 && exp10 < 16) {
    for (int i = 0; i <= exp10; ++i) push(i < nd ? digits[i] : '0');
    push('.');
    if (nd <= exp10 + 1) push('0');
    for (int i = exp10 + 1; i < nd; ++i) push(digits[i]);
    return *this;
  }
  push(digits[0]);
  if (nd > 1) {
    push('.');
    for (int i = 1; i < nd; ++i) push(digits[i]);
  }
  push('e');
  return append(exp10);
}

/// fail() with a message put together from its parts, as `text <<` prints them:
/// fail("remove reduces: ", a.describe(r.id()), " has no shape").
template <class... T>
  requires(sizeof...(T) > 1)
[[noreturn]] constexpr void fail(const T&... parts) {
  text t;
  (t << ... << parts);
  fail(t.view());
}

}  // namespace uopcg
#endif  // UOPCG_SINGLE_CORE_TEXT_HPP
// ---- end uopcg/core/text.hpp ----

namespace uopcg::render {

// --- target -----------------------------------------------------------------------------------------

/// What the emitter may assume about the OpenCL device: the fields of tinygrad's renderer object
/// (docs/json.md). Native half needs `cl_khr_fp16` in `arch`, double needs `cl_khr_fp64`.
struct OpenCLRenderer {
  text device = "CL";
  text arch;  // comma-joined device extension list
  bool supports_fp16 = false;
  bool supports_fp64 = false;
  bool supports_bf16 = true;  // bf16 is stored as ushort; its arithmetic is decomposed in codegen
  bool has_local = true;
  bool has_shared = true;
  bool has_threads = false;
  bool supports_float4 = true;
  std::int64_t shared_max = 32768;  // bytes of __local memory per work-group
  std::array<std::int64_t, 3> global_max{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  std::array<std::int64_t, 3> local_max{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  std::optional<std::int64_t> global_prod_max;
  int tensor_cores = 0;

  /// Whether `ext` is one of the comma-separated entries of `arch`.
  constexpr bool has_extension(std::string_view ext) const {
    std::string_view a = arch.view();
    while (!a.empty()) {
      std::size_t comma = a.find(',');
      if (a.substr(0, comma) == ext) return true;
      if (comma == std::string_view::npos) break;
      a.remove_prefix(comma + 1);
    }
    return false;
  }
  /// A target for a device with the given extension list (fp16 / fp64 follow the extensions).
  static constexpr OpenCLRenderer for_arch(std::string_view arch) {
    OpenCLRenderer r;
    r.arch = arch;
    r.supports_fp16 = r.has_extension("cl_khr_fp16");
    r.supports_fp64 = r.has_extension("cl_khr_fp64");
    return r;
  }
  /// The target the corpus' `pocl` kernels were generated for (PoCL CPU device: no fp16).
  static constexpr OpenCLRenderer pocl() {
    return for_arch(
        "cl_khr_byte_addressable_store,cl_khr_global_int32_base_atomics,cl_khr_global_int32_extended_atomics,"
        "cl_khr_local_int32_base_atomics,cl_khr_local_int32_extended_atomics,cl_khr_3d_image_writes,"
        "cl_khr_command_buffer,cl_khr_spir,cl_khr_int64_base_atomics,cl_khr_int64_extended_atomics,cl_khr_fp64");
  }
  /// The corpus' `fp16` target: pocl() plus cl_khr_fp16 (native half).
  static constexpr OpenCLRenderer pocl_fp16() {
    OpenCLRenderer r = pocl();
    r.arch.append(",cl_khr_fp16");
    r.supports_fp16 = true;
    return r;
  }
};

// --- output -----------------------------------------------------------------------------------------

enum class ParamKind : std::uint8_t { buffer, var };

/// The value of one variable argument at a launch: the var parameter's slot and its value.
struct VarValue {
  std::int64_t slot = 0;
  std::int64_t value = 0;
};

/// A launch size that depends on the kernel's variables (a SPECIAL's extent such as `n*64`), kept
/// as a postfix program over the var parameters' slots so that each launch computes its own size,
/// as tinygrad's sym_infer does: launching the largest size instead runs work-items past the
/// variable's extent, which the kernel does not guard.
struct SymbolicSize {
  enum class Code : std::uint8_t { constant, var, add, sub, mul, cdiv, cmod, floordiv, floormod, shl, shr,
                                   max, and_, or_, xor_, cmplt, cmpne, neg, where };
  struct Step {
    Code code = Code::constant;
    std::int64_t value = 0;  // constant: the value; var: the var parameter's slot
  };
  std::vector<Step> steps;  // postfix: operands before their operation
  text rendered;            // as the kernel's comment shows it (tinygrad's syntax: `(n<<6)`)

  /// The size for `vars`, or nullopt when a variable it reads is not among them. Integer arithmetic
  /// as the kernel's (C's truncating division for cdiv/cmod, floor for floordiv/floormod); a
  /// division by zero gives nullopt.
  constexpr std::optional<std::int64_t> eval(const std::vector<VarValue>& vars) const {
    std::vector<std::int64_t> st;
    auto pop = [&st] {
      const std::int64_t v = st.back();
      st.pop_back();
      return v;
    };
    for (const Step& s : steps) {
      if (s.code == Code::constant) {
        st.push_back(s.value);
        continue;
      }
      if (s.code == Code::var) {
        const VarValue* found = nullptr;
        for (const VarValue& v : vars)
          if (v.slot == s.value) found = &v;
        if (!found) return std::nullopt;
        st.push_back(found->value);
        continue;
      }
      if (s.code == Code::neg) {
        if (st.empty()) return std::nullopt;
        st.back() = -st.back();
        continue;
      }
      if (s.code == Code::where) {
        if (st.size() < 3) return std::nullopt;
        const std::int64_t f = pop(), t = pop(), c = pop();
        st.push_back(c ? t : f);
        continue;
      }
      if (st.size() < 2) return std::nullopt;
      const std::int64_t b = pop(), a = pop();
      std::int64_t r = 0;
      switch (s.code) {
        case Code::add: r = a + b; break;
        case Code::sub: r = a - b; break;
        case Code::mul: r = a * b; break;
        case Code::cdiv: case Code::cmod: case Code::floordiv: case Code::floormod: {
          if (b == 0) return std::nullopt;
          const std::int64_t q = a / b, m = a % b;
          const bool floor_fix = m != 0 && ((m < 0) != (b < 0));
          r = s.code == Code::cdiv ? q : s.code == Code::cmod ? m : s.code == Code::floordiv ? q - floor_fix : m + (floor_fix ? b : 0);
          break;
        }
        case Code::shl: r = b < 0 || b > 62 ? 0 : a * (std::int64_t{1} << b); break;
        case Code::shr: r = b < 0 || b > 62 ? 0 : a >> b; break;
        case Code::max: r = a < b ? b : a; break;
        case Code::and_: r = a & b; break;
        case Code::or_: r = a | b; break;
        case Code::xor_: r = a ^ b; break;
        case Code::cmplt: r = a < b; break;
        case Code::cmpne: r = a != b; break;
        default: return std::nullopt;
      }
      st.push_back(r);
    }
    if (st.size() != 1) return std::nullopt;
    return st.back();
  }
};

/// One kernel argument, in argument order (= order of the PARAMs in the program).
struct KernelParam {
  ParamKind kind = ParamKind::buffer;
  std::int64_t index = 0;  // OpenCL argument index
  std::int64_t slot = 0;   // ParamArg.slot
  text name;               // the C name: data<slot>_<dims>
  DType dtype = DType::float32;  // the kernel's element dtype (ushort for emulated half)
  std::optional<DType> logical_dtype;  // the PARAM's dtype tag (half for emulated half buffers)
  std::vector<std::int64_t> shape;     // buffer dims ([] for a var)
  std::int64_t size = 0;               // elements (1 for a var)
  std::int64_t itemsize = 0, nbytes = 0;
  AddrSpace addrspace = AddrSpace::GLOBAL;  // GLOBAL for buffers, ALU for vars
  bool is_volatile = false;
  bool written = false;  // some STORE addresses it
  bool read = false;     // some LOAD addresses it
  text var_name;         // a var's ParamArg.name (empty if none)
  std::int64_t var_min = 0, var_max = 0;  // a var's bounds (ParamArg.vmin_vmax), which size its buffers
};

/// The emitter's result.
struct RenderedKernel {
  text function_name;
  text source;  // exactly tinygrad's text: no trailing newline
  std::vector<KernelParam> params;
  /// Work-group counts per dimension (tinygrad's global_size) and the work-group size (local_size;
  /// nullopt when the kernel uses get_global_id and leaves the choice to the runtime).
  std::array<std::int64_t, 3> global_size{1, 1, 1};
  std::optional<std::array<std::int64_t, 3>> local_size = std::array<std::int64_t, 3>{1, 1, 1};
  std::vector<std::int64_t> globals, outs, ins;  // buffer slots: all, written, read
  std::int64_t local_bytes = 0;  // bytes of __local memory the kernel declares (per work-group)
  /// Per dimension, the extent that depends on variables, if any; global_size / local_size then hold
  /// its largest value. launch_sizes() gives the sizes of one launch.
  std::array<std::optional<SymbolicSize>, 3> global_symbolic, local_symbolic;

  constexpr bool symbolic_launch() const {
    for (int d = 0; d < 3; ++d)
      if (global_symbolic[d] || local_symbolic[d]) return true;
    return false;
  }

  /// global_size and local_size for one launch with these variable values. A launch size that
  /// reads a variable missing from `vars`, or that is not positive, is an error naming the kernel
  /// and the size.
  struct LaunchSizes {
    std::array<std::int64_t, 3> global_size{1, 1, 1};
    std::optional<std::array<std::int64_t, 3>> local_size;
    /// global_size × local_size, what clEnqueueNDRangeKernel takes.
    constexpr std::array<std::int64_t, 3> global_work_size() const {
      std::array<std::int64_t, 3> g = global_size;
      if (local_size)
        for (int d = 0; d < 3; ++d) g[d] *= (*local_size)[d];
      return g;
    }
  };
  constexpr LaunchSizes launch_sizes(const std::vector<VarValue>& vars = {}) const {
    LaunchSizes out{global_size, local_size};
    auto resolve = [&](const std::optional<SymbolicSize>& s, std::int64_t& size, std::string_view kind, int d) {
      if (!s) return;
      const std::optional<std::int64_t> v = s->eval(vars);
      if (!v || *v < 1) {
        text msg;
        msg.append("kernel ").append(function_name).append(": the ").append(kind).append(" size of dimension ")
            .append(d).append(", ").append(s->rendered);
        if (!v) msg.append(", needs the value of a variable it reads");
        else msg.append(", is ").append(*v).append(" for these variable values");
        fail(msg.view());
      }
      size = *v;
    };
    for (int d = 0; d < 3; ++d) resolve(global_symbolic[d], out.global_size[d], "global", d);
    if (out.local_size)
      for (int d = 0; d < 3; ++d) resolve(local_symbolic[d], (*out.local_size)[d], "local", d);
    return out;
  }

  /// OpenCL's global work size: global_size × local_size (docs/json.md).
  constexpr std::array<std::int64_t, 3> global_work_size() const {
    return LaunchSizes{global_size, local_size}.global_work_size();
  }
  constexpr const KernelParam* param_for_slot(std::int64_t slot) const {
    for (const KernelParam& p : params)
      if (p.kind == ParamKind::buffer && p.slot == slot) return &p;
    return nullptr;
  }
  /// The variable parameter named `name` (its ParamArg.name), or nullptr.
  constexpr const KernelParam* var_named(std::string_view name) const {
    for (const KernelParam& p : params)
      if (p.kind == ParamKind::var && p.var_name.view() == name) return &p;
    return nullptr;
  }
};

}  // namespace uopcg::render
#endif  // UOPCG_SINGLE_RENDER_KERNEL_HPP
// ---- end uopcg/render/kernel.hpp ----
// ---- begin uopcg/codegen/opt/tensor_core.hpp ----
#ifndef UOPCG_SINGLE_CODEGEN_OPT_TENSOR_CORE_HPP
#define UOPCG_SINGLE_CODEGEN_OPT_TENSOR_CORE_HPP
// A tensor core as the TC opt sees it (tinygrad/codegen/opt/tc.py, TensorCore): D(M×N) = A(M×K) ·
// B(K×N) + C done by `threads` work-items together. Its `opts` say how the N and M axes are split
// by 2 into local and upcast parts, its `swizzle` how each operand's lanes are permuted. A Target
// lists the tensor cores its renderer has; OpenCL has none, the tables below are the other
// renderers' of the snapshot, for targets that declare them.



namespace uopcg::codegen::opt {

/// One axis name of a tensor core's shape string: 'l' (local), 'u' (upcast) or 'r' (reduce), and
/// its number among the axes of that kind ("u1" = {'u', 1}).
struct TcAxis {
  char kind = 'u';
  int index = 0;
  friend constexpr bool operator==(const TcAxis&, const TcAxis&) = default;
  constexpr text str() const {
    text t;
    t.append(kind).append(index);
    return t;
  }
};

namespace detail {
/// "u0 l0 l1" -> {u0, l0, l1}.
constexpr std::vector<TcAxis> tc_axes(std::string_view spaced) {
  std::vector<TcAxis> out;
  std::size_t i = 0;
  while (i < spaced.size()) {
    if (spaced[i] == ' ') {
      ++i;
      continue;
    }
    TcAxis a{spaced[i++], 0};
    while (i < spaced.size() && spaced[i] >= '0' && spaced[i] <= '9') a.index = a.index * 10 + (spaced[i++] - '0');
    out.push_back(a);
  }
  return out;
}
constexpr int log2_exact(std::int64_t v) {
  int n = 0;
  while (v > 1) v >>= 1, ++n;
  return n;
}
}  // namespace detail

struct TensorCore {
  std::array<std::int64_t, 3> dims{};                 // N, M, K (note the order)
  std::int64_t threads = 0;                            // work-items of one operation
  std::array<std::int64_t, 3> elements_per_thread{};  // of A, B and C/D
  DType dtype_in = DType::float16, dtype_out = DType::float32;
  std::vector<TcAxis> opts;                            // "u<d>"/"l<d>": upcast/localize dim d (0 = N, 1 = M) by 2
  // per operand (A, B): the (local, upcast, reduce) axis names its lanes come from
  std::array<std::array<std::vector<TcAxis>, 3>, 2> swizzle;

  constexpr std::size_t local_count() const { return count('l'); }
  constexpr std::size_t upcast_count() const { return count('u'); }
  /// The K axis is unrolled by 2 log2(K) times.
  constexpr std::size_t reduce_count() const { return static_cast<std::size_t>(detail::log2_exact(dims[2])); }

  /// The axis names in the order the TC opt creates them: the opts (numbered per kind), then r0....
  constexpr std::vector<TcAxis> base_shape_str() const {
    std::vector<TcAxis> out;
    int u = 0, l = 0;
    for (TcAxis o : opts) out.push_back({o.kind, o.kind == 'u' ? u++ : l++});
    for (std::size_t i = 0; i < reduce_count(); ++i) out.push_back({'r', static_cast<int>(i)});
    return out;
  }
  /// The upcast axes of the WMMA's lanes: r0..., then u0..., all reversed.
  constexpr std::vector<TcAxis> base_upcast_axes() const {
    std::vector<TcAxis> out;
    for (std::size_t i = upcast_count(); i-- > 0;) out.push_back({'u', static_cast<int>(i)});
    for (std::size_t i = reduce_count(); i-- > 0;) out.push_back({'r', static_cast<int>(i)});
    return out;
  }
  /// For each operand, the position in `shape_str` each entry's lanes come from (identity for the
  /// names the swizzle does not move); nullopt (with the missing name in `missing`) when a swizzle
  /// names an axis `shape_str` lacks.
  constexpr std::optional<std::array<std::vector<std::size_t>, 2>> permutes_for_shape_str(
      const std::vector<TcAxis>& shape_str, text* missing = nullptr) const {
    std::vector<TcAxis> fwd;
    for (std::size_t i = 0; i < local_count(); ++i) fwd.push_back({'l', static_cast<int>(i)});
    for (std::size_t i = 0; i < upcast_count(); ++i) fwd.push_back({'u', static_cast<int>(i)});
    for (std::size_t i = 0; i < reduce_count(); ++i) fwd.push_back({'r', static_cast<int>(i)});
    std::array<std::vector<std::size_t>, 2> out;
    for (std::size_t operand = 0; operand < 2; ++operand) {
      std::vector<TcAxis> to;
      for (const auto& part : swizzle[operand]) to.insert(to.end(), part.begin(), part.end());
      for (std::size_t i = 0; i < shape_str.size(); ++i) {
        std::size_t k = 0;
        while (k < fwd.size() && !(fwd[k] == shape_str[i])) ++k;
        if (k == fwd.size() || k >= to.size()) {
          out[operand].push_back(i);
          continue;
        }
        std::size_t j = 0;
        while (j < shape_str.size() && !(shape_str[j] == to[k])) ++j;
        if (j == shape_str.size()) {
          if (missing) *missing = to[k].str();
          return std::nullopt;
        }
        out[operand].push_back(j);
      }
    }
    return out;
  }

  /// The description's consistency (tinygrad's TensorCore.__post_init__): the opts split N·M into
  /// `threads` local and elements_per_thread[2] upcast lanes, and the swizzles cover every axis.
  constexpr void check() const {
    auto bad = [](std::string_view why) {
      text t;
      t.append("TensorCore: ").append(why);
      fail(t.view());
    };
    const std::size_t l = local_count(), u = upcast_count(), r = reduce_count();
    if (dims[2] != (std::int64_t(1) << r)) bad("K is not a power of two");
    if (dims[0] * dims[1] != (std::int64_t(1) << (l + u))) bad("N x M is not local x upcast of the opts");
    if (threads != (std::int64_t(1) << l)) bad("threads is not 2^(local opts)");
    if (elements_per_thread[2] != (std::int64_t(1) << u)) bad("elements_per_thread of C is not 2^(upcast opts)");
    std::size_t d0 = 0, d1 = 0;
    for (TcAxis o : opts) {
      if ((o.kind != 'u' && o.kind != 'l') || (o.index != 0 && o.index != 1)) bad("an opt is not u0, u1, l0 or l1");
      (o.index == 0 ? d0 : d1)++;
    }
    if (dims[0] != (std::int64_t(1) << d0) || dims[1] != (std::int64_t(1) << d1)) bad("the opts do not split N and M");
    for (const auto& s : swizzle)
      if (s[0].size() != l || s[1].size() != u || s[2].size() != r) bad("a swizzle part has the wrong size");
  }

 private:
  constexpr std::size_t count(char kind) const {
    std::size_t n = 0;
    for (TcAxis o : opts) n += o.kind == kind;
    return n;
  }
};

/// The tensor-core tables of tinygrad's renderers (tinygrad/codegen/opt/tc.py).
namespace tensor_cores {

namespace detail {
using uopcg::codegen::opt::detail::tc_axes;
struct dtype_pair {
  DType in, out;
};
constexpr std::vector<TensorCore> family(std::array<std::int64_t, 3> dims, std::int64_t threads,
                                         std::array<std::int64_t, 3> ept, std::string_view opts,
                                         std::array<std::array<std::string_view, 3>, 2> swizzle,
                                         std::vector<dtype_pair> dtypes) {
  std::vector<TensorCore> out;
  for (dtype_pair d : dtypes) {
    TensorCore tc;
    tc.dims = dims;
    tc.threads = threads;
    tc.elements_per_thread = ept;
    tc.dtype_in = d.in;
    tc.dtype_out = d.out;
    tc.opts = tc_axes(opts);
    for (std::size_t o = 0; o < 2; ++o)
      for (std::size_t p = 0; p < 3; ++p) tc.swizzle[o][p] = tc_axes(swizzle[o][p]);
    out.push_back(std::move(tc));
  }
  return out;
}
constexpr std::vector<TensorCore> join(std::vector<TensorCore> a, const std::vector<TensorCore>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
// the dtype pairs of the tables below, one spelling each
constexpr DType f16 = DType::float16, bf16 = DType::bfloat16, f32 = DType::float32, e4m3 = DType::fp8e4m3,
                e5m2 = DType::fp8e5m2, i8 = DType::int8, i32 = DType::int32;
inline constexpr std::string_view cuda_opts = "u0 l0 l0 l1 l1 l1 u1";
}  // namespace detail

/// Apple Metal (Apple7 and later): 8x8x8, 32 threads.
constexpr std::vector<TensorCore> metal() {
  using namespace detail;
  return family({8, 8, 8}, 32, {2, 2, 2}, "u0 l0 l1 l1 l0 l1",
                {{{"r1 l1 l2 r2 l4", "r0", "u0 l0 l3"}, {"l0 r0 r1 l3 r2", "u0", "l1 l2 l4"}}},
                {{f32, f32}, {f16, f32}, {f16, f16}, {bf16, f32}, {bf16, bf16}});
}
/// CUDA sm_75: 8x16x8 half.
constexpr std::vector<TensorCore> cuda_sm75() {
  using namespace detail;
  return family({8, 16, 8}, 32, {4, 2, 4}, cuda_opts, {{{"r1 r2 l2 l3 l4", "r0 u1", "l0 l1 u0"}, {"r1 r2 u0 l0 l1", "u1 r0", "l2 l3 l4"}}},
                {{f16, f32}, {f16, f16}});
}
/// CUDA sm_80: 8x16x16 (half, bf16), 8x16x8 half, and tf32 (used only with ALLOW_TF32).
constexpr std::vector<TensorCore> cuda_sm80() {
  using namespace detail;
  auto m16 = family({8, 16, 16}, 32, {8, 4, 4}, cuda_opts,
                    {{{"r1 r2 l2 l3 l4", "u1 r3", "l0 l1 u0 r0"}, {"r1 r2 u0 l0 l1", "r0 r3", "l2 l3 l4 u1"}}},
                    {{f16, f32}, {bf16, f32}, {f16, f16}});
  auto tf32 = family({8, 16, 8}, 32, {4, 2, 4}, cuda_opts,
                     {{{"r0 r1 l2 l3 l4", "u1 r2", "l0 l1 u0"}, {"r0 r1 u0 l0 l1", "u1 r2", "l2 l3 l4"}}}, {{f32, f32}});
  return join(join(std::move(m16), cuda_sm75()), tf32);
}
/// CUDA sm_89: sm_80 plus 8x16x32 fp8.
constexpr std::vector<TensorCore> cuda_sm89() {
  using namespace detail;
  return join(cuda_sm80(), family({8, 16, 32}, 32, {16, 8, 4}, cuda_opts,
                                  {{{"r2 r3 l2 l3 l4", "u1 r4", "l0 l1 u0 r0 r1"}, {"r2 r3 u0 l0 l1", "r1 r4", "l2 l3 l4 u1 r0"}}},
                                  {{e4m3, f32}, {e5m2, f32}}));
}
/// AMD RDNA3: 16x16x16, 32 threads.
constexpr std::vector<TensorCore> amd_rdna3() {
  using namespace detail;
  return family({16, 16, 16}, 32, {16, 16, 8}, "l0 l0 l0 l0 l1 u1 u1 u1",
                {{{"l4 u0 u1 u2 l0", "r1 r2 r3", "l1 l2 l3 r0"}, {"l0 l1 l2 l3 l4", "r1 r2 r3", "u0 u1 u2 r0"}}},
                {{f16, f32}, {f16, f16}, {bf16, f32}, {i8, i32}});
}
/// AMD RDNA4: 16x16x16, 32 threads.
constexpr std::vector<TensorCore> amd_rdna4() {
  using namespace detail;
  return family({16, 16, 16}, 32, {8, 8, 8}, "l0 l0 l0 l0 u1 u1 u1 l1",
                {{{"u0 u1 u2 l4 r2", "r0 r1 r3", "l0 l1 l2 l3"}, {"l0 l1 l2 l3 r2", "r0 r1 r3", "l4 u0 u1 u2"}}},
                {{f16, f32}, {f16, f16}, {bf16, f32}, {bf16, bf16}});
}
namespace detail {
inline constexpr std::string_view cdna_opts = "l0 l0 l0 l0 u1 u1 l1 l1";
constexpr std::vector<TensorCore> cdna_161616() {
  return family({16, 16, 16}, 64, {4, 4, 4}, cdna_opts,
                {{{"u0 u1 l4 l5 r2 r3", "r0 r1", "l0 l1 l2 l3"}, {"l0 l1 l2 l3 r2 r3", "r0 r1", "l4 l5 u0 u1"}}},
                {{f16, f32}, {bf16, f32}});
}
constexpr std::vector<TensorCore> cdna_161632() {
  return family({16, 16, 32}, 64, {8, 8, 4}, cdna_opts,
                {{{"u0 u1 l4 l5 r3 r4", "r0 r1", "l0 l1 l2 l3 r2"}, {"l0 l1 l2 l3 r3 r4", "r0 r1", "l4 l5 u0 u1 r2"}}},
                {{e5m2, f32}, {e4m3, f32}, {f16, f32}, {bf16, f32}});
}
constexpr std::vector<TensorCore> cdna_1616128() {
  return family({16, 16, 128}, 64, {32, 32, 4}, cdna_opts,
                {{{"u0 u1 l4 l5 r5 r6", "r0 r1", "l0 l1 l2 l3 r2 r3 r4"}, {"l0 l1 l2 l3 r5 r6", "r0 r1", "l4 l5 u0 u1 r2 r3 r4"}}},
                {{e5m2, f32}, {e4m3, f32}});
}
}  // namespace detail
/// AMD CDNA3 (gfx942): the two fp8 16x16x32 cores, then 16x16x16.
constexpr std::vector<TensorCore> amd_cdna3() {
  auto fp8 = detail::cdna_161632();
  fp8.resize(2);
  return detail::join(std::move(fp8), detail::cdna_161616());
}
/// AMD CDNA4 (gfx950): 16x16x128, 16x16x32, 16x16x16.
constexpr std::vector<TensorCore> amd_cdna4() {
  return detail::join(detail::join(detail::cdna_1616128(), detail::cdna_161632()), detail::cdna_161616());
}

}  // namespace tensor_cores

}  // namespace uopcg::codegen::opt
#endif  // UOPCG_SINGLE_CODEGEN_OPT_TENSOR_CORE_HPP
// ---- end uopcg/codegen/opt/tensor_core.hpp ----

namespace uopcg {

struct Target {
  render::OpenCLRenderer renderer = render::OpenCLRenderer::pocl();

  // --- codegen configuration (tinygrad's context variables; defaults = the corpus' codegen_config) ---
  int transcendental = 1;         // TRANSCENDENTAL: >= 2 forces the polynomial exp2/log2/sin/sqrt
  bool disable_fast_idiv = true;  // DISABLE_FAST_IDIV: no magic-multiply integer division
  bool memory_coalescing = true;  // !DMC: form float4/float2 accesses
  bool allow_half8 = false;       // ALLOW_HALF8
  bool use_locals = true;         // !NOLOCALS: GPU dims through get_group_id/get_local_id
  OpSet emulated_ops{};           // ops forced through their decomposition even if renderable
  bool emulate_long = false;      // EMULATED_DTYPES contains long/ulong: int64 as pairs of int32
  bool emulate_half = false;      // ... contains half (even where cl_khr_fp16 exists)
  bool emulate_bf16 = false;      // ... contains bfloat16 (bf16 is always stored as ushort anyway)
  bool half_builtins = true;      // emulated half <-> float through vload_half / vstore_half_rte (core
                                  // OpenCL C, IEEE-exact) instead of integer bit graphs (tinygrad's way)
  bool verify_barriers = true;    // run the barrier verifier on the linearized program
  bool prune_barriers = false;    // remove the BARRIERs the verifier proves redundant (barrier_explain.hpp)
  bool reduce_identity = true;    // pm_reduce_identity: Invalid REDUCE lanes -> the op's identity (seed; not in the snapshot)
  DType default_float = DType::float32;  // DEFAULT_FLOAT: the float a weak float is computed in when
                                          // no concrete float meets it (stage 12)

  // --- kernel opts (codegen/opt/: apply_opts and the hand-coded heuristics) --------------------------
  bool noopt = false;      // NOOPT: no heuristics (explicit opts still apply; the kernel is still named)
  bool nolocals = false;   // NOLOCALS: the heuristics apply NOLOCALS instead of local / group axes
  int use_tc = 1;          // TC: 0 no tensor cores, 1 WMMA, 2 the tensor core's axes without WMMA
  int tc_opt = 0;          // TC_OPT: 1 also several reduce axes or cast operands, 2 also pads to the core's dims
  int tc_select = -1;      // TC_SELECT: the one of tensor_cores to use (-1: the first that fits)
  bool allow_tf32 = false; // ALLOW_TF32: float tensor cores on CUDA/NV
  int mv = 1;              // MV: the matrix-vector heuristic, with its sizes:
  int mv_blocksize = 4, mv_threads_per_row = 8, mv_rows_per_thread = 4;  // MV_BLOCKSIZE, ...
  /// The tensor cores the renderer has (the TC opt's candidates); OpenCL has none.
  std::vector<codegen::opt::TensorCore> tensor_cores;

  /// Ops the OpenCL C emitter prints directly (tinygrad's `code_for_op` keys).
  static constexpr OpSet renderable_ops = [] {
    using enum Ops;
    return OpSet{SQRT, RECIPROCAL, NEG, EXP2, LOG2, SIN, TRUNC, AND, XOR, OR, ADD,
                 SUB, MUL, CMOD, CDIV, CMPNE, SHR, SHL, CMPLT, WHERE, CMPEQ};
  }();

  /// Whether the target renders `op` natively (decompositions are keyed on this).
  constexpr bool supports_op(Ops op) const { return renderable_ops.contains(op) && !emulated_ops.contains(op); }

  /// Whether values of `dt` exist natively (tinygrad's `supported_dtypes()` minus EMULATED_DTYPES).
  constexpr bool supports_dtype(DType dt) const {
    using enum DType;
    switch (dt) {
      case float16: return renderer.supports_fp16 && !emulate_half;
      case float64: return renderer.supports_fp64;
      case bfloat16: return renderer.supports_bf16 && !emulate_bf16;
      case int64: case uint64: return !emulate_long;
      case fp8e4m3: case fp8e5m2: case fp8e4m3fnuz: case fp8e5m2fnuz: return false;
      default: return true;
    }
  }

  // --- presets -------------------------------------------------------------------------------------
  /// PoCL on the CPU (the corpus' `pocl` renderer): no cl_khr_fp16, so half is emulated in ushort.
  static constexpr Target pocl() { return Target{}; }
  /// An OpenCL device with cl_khr_fp16 (the corpus' `fp16` renderer): native half.
  static constexpr Target opencl_fp16() {
    Target t;
    t.renderer = render::OpenCLRenderer::pocl_fp16();
    return t;
  }
  /// Qualcomm Adreno A6xx through its OpenCL driver: native half, no fp64, 1024-item work-groups.
  static constexpr Target adreno_a6xx() {
    Target t;
    t.renderer = render::OpenCLRenderer::for_arch(
        "cl_khr_3d_image_writes,cl_img_egl_image,cl_khr_byte_addressable_store,cl_khr_depth_images,"
        "cl_khr_egl_event,cl_khr_egl_image,cl_khr_fp16,cl_khr_gl_sharing,cl_khr_global_int32_base_atomics,"
        "cl_khr_global_int32_extended_atomics,cl_khr_local_int32_base_atomics,"
        "cl_khr_local_int32_extended_atomics,cl_khr_image2d_from_buffer,cl_khr_mipmap_image,"
        "cl_khr_srgb_image_writes,cl_khr_subgroups,cl_qcom_create_buffer_from_image,"
        "cl_qcom_ext_host_ptr,cl_qcom_ion_host_ptr,cl_qcom_perf_hint,cl_qcom_other_image,"
        "cl_qcom_subgroup_shuffle,cl_qcom_vector_image_ops,cl_qcom_extract_image_plane,"
        "cl_qcom_android_native_buffer_host_ptr,cl_qcom_protected_context,cl_qcom_priority_hint,"
        "cl_qcom_compressed_yuv_image_read,cl_qcom_compressed_image,cl_qcom_ext_host_ptr_iocoherent,"
        "cl_qcom_accelerated_image_ops,cl_qcom_ml_ops");
    t.renderer.device = "QCOM";
    t.renderer.local_max = {1024, 1024, 1024};
    return t;
  }
};

}  // namespace uopcg
#endif  // UOPCG_SINGLE_CODEGEN_TARGET_HPP
// ---- end uopcg/codegen/target.hpp ----
// ---- begin uopcg/core/arena.hpp ----
#ifndef UOPCG_SINGLE_CORE_ARENA_HPP
#define UOPCG_SINGLE_CORE_ARENA_HPP
// The UOp arena: owns every node of a kernel graph, hash-conses them (building an equal node returns
// the existing handle), and caches the derived properties every pass asks for (shape, address
// space, value bounds, ranges). Everything here works in constant evaluation.


// ---- begin uopcg/core/arg.hpp ----
#ifndef UOPCG_SINGLE_CORE_ARG_HPP
#define UOPCG_SINGLE_CORE_ARG_HPP
// The `arg` (and `tag`) of a UOp: a closed variant of the kinds the snapshot uses — None, bool,
// ints, floats (inf/nan included), strings, enum members, Invalid, tuples, and the records ParamArg,
// KernelInfo, BufferizeOpts, Opt and Estimates. Records are stored as positional fields so that
// hashing, equality, printing and the JSON interchange treat every kind uniformly; typed views
// (ParamArg, ...) give named access.

#include <bit>
#include <utility>

// ---- begin uopcg/core/detail/out_of_line.hpp ----
#ifndef UOPCG_SINGLE_CORE_DETAIL_OUT_OF_LINE_HPP
#define UOPCG_SINGLE_CORE_DETAIL_OUT_OF_LINE_HPP
// The run-time paths of the core's heavy constexpr functions (Arena::make and the derivations it
// runs, the arena's set-up, the kernel args' records). A constexpr function is inline, so every
// translation unit that builds a graph would compile and optimize their bodies again. Instead, at run
// time each calls a non-inline member template instantiated for `out_of_line_tag`: header-only code
// instantiates it implicitly, as any template; uopcg/compile.hpp declares the instantiations
// `extern template`, so a program's users of compile.hpp compile a call and only its implementation
// translation unit compiles the bodies (compile.hpp defines them under UOPCG_IMPLEMENTATION or
// UOPCG_CORE_IMPLEMENTATION). Constant evaluation still runs the bodies inline.

namespace uopcg::detail {

/// The template argument of those out-of-line paths. Its name is the one a linker prints for a
/// program that includes compile.hpp and links no implementation translation unit.
struct uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit;
using out_of_line_tag = uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit;

}  // namespace uopcg::detail
#endif  // UOPCG_SINGLE_CORE_DETAIL_OUT_OF_LINE_HPP
// ---- end uopcg/core/detail/out_of_line.hpp ----

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
#endif  // UOPCG_SINGLE_CORE_ARG_HPP
// ---- end uopcg/core/arg.hpp ----
// ---- begin uopcg/core/detail/node.hpp ----
#ifndef UOPCG_SINGLE_CORE_DETAIL_NODE_HPP
#define UOPCG_SINGLE_CORE_DETAIL_NODE_HPP
// Internals of the arena: the node records, the storage that never moves, and the small helpers
// its derivations and traversals share. Not part of the public interface.

#include <cstddef>


namespace uopcg {

namespace detail {

/// Storage whose elements never move (fixed-size chunks), so references handed out stay valid
/// while the arena grows.
template <class T, std::size_t Chunk = 256>
class stable_pool {
 public:
  constexpr std::size_t size() const { return size_; }
  constexpr const T& operator[](std::size_t i) const { return chunks_[i / Chunk][i % Chunk]; }
  constexpr T& operator[](std::size_t i) { return chunks_[i / Chunk][i % Chunk]; }
  constexpr std::size_t push_back(T v) {
    if (size_ % Chunk == 0 && size_ / Chunk == chunks_.size()) {  // chunks kept by clear() are reused
      chunks_.emplace_back();
      chunks_.back().reserve(Chunk);
    }
    chunks_[size_ / Chunk].push_back(std::move(v));
    return size_++;
  }
  /// Destroys every element; the chunks keep their storage.
  constexpr void clear() {
    for (auto& c : chunks_) c.clear();
    size_ = 0;
  }
  /// The index of the element `p` points at when it is one of this pool's, else no_index. Not in
  /// constant evaluation (pointers into different allocations cannot be ordered there): no_index.
  static constexpr std::size_t no_index = ~std::size_t(0);
  constexpr std::size_t index_of(const T* p) const {
    if (std::is_constant_evaluated()) return no_index;
    const std::less<const T*> less;
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      const T* b = chunks_[c].data();
      if (!less(p, b) && less(p, b + chunks_[c].size())) return c * Chunk + static_cast<std::size_t>(p - b);
    }
    return no_index;
  }

 private:
  std::vector<std::vector<T>> chunks_;
  std::size_t size_ = 0;
};

constexpr std::uint64_t mix64(std::uint64_t x) { return Arg::mix(x); }

/// Ops whose result shape is the numpy broadcast of their sources' shapes.
constexpr bool broadcasts(Ops op) { return GroupOp::Broadcastable.contains(op); }

// Saturating arithmetic for value bounds (weakint is unbounded in principle).
constexpr std::int64_t sat(__int128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<std::int64_t>(v);
}

// What traversals and matching read (16 bytes: 4 records per cache line). The value bounds, the
// hash, the tag and the shape's offset live beside it, in Arena::cold_, so that a graph larger than
// the cache streams only what matching reads. The op summary has an array of its own
// (Arena::sub_ops_, 8 bytes a node): graph_rewrite reads it for every node whose own op has no
// rule, and in the cold record each of those reads would be a cache miss of its own.
struct Node {
  Ops op;
  DType dtype;
  std::uint8_t addrspace;  // 0 = none, else AddrSpace value
  std::int8_t rank;        // shape rank; -1 = no shape (statement), -2 = ill-formed
  std::uint32_t nsrc;
  std::uint32_t src_off;
  std::uint32_t arg;
};
struct NodeCold {
  std::int64_t vmin, vmax;
  std::uint64_t hash;
  std::uint32_t tag;       // an interned arg, like Node::arg (most nodes have none)
  std::uint32_t dims_off;  // the shape, into Arena::dims_
};
/// An op set folded to 64 bits (bit op % 64): a summary where a clear bit proves absence and a set
/// bit only says "maybe" (ops 64 and up share bits with 0-63).
constexpr std::uint64_t op_bits(OpSet s) { return s.lo | s.hi; }
constexpr std::uint64_t op_bit(Ops op) { return std::uint64_t(1) << (static_cast<unsigned>(op) & 63u); }

}  // namespace detail

}  // namespace uopcg
#endif  // UOPCG_SINGLE_CORE_DETAIL_NODE_HPP
// ---- end uopcg/core/detail/node.hpp ----

namespace uopcg {

class Arena;

/// A node id inside its arena.
using node_id = std::uint32_t;
inline constexpr node_id no_node = 0xFFFFFFFFu;

namespace detail {
/// A frame of an iterative traversal: a node, how far its visit got, one more id (the next source,
/// a pending replacement, ...).
struct walk_frame {
  node_id n;
  std::uint8_t stage;
  node_id aux;
};
}  // namespace detail

/// Handle of one node: trivially copyable; equality and hashing are O(1) because nodes are
/// hash-consed (structurally equal nodes have the same id).
class UOp {
 public:
  constexpr UOp() = default;
  constexpr UOp(Arena* arena, node_id id) : arena_(arena), id_(id) {}

  constexpr bool valid() const { return arena_ != nullptr && id_ != no_node; }
  constexpr explicit operator bool() const { return valid(); }
  constexpr node_id id() const { return id_; }
  constexpr Arena& arena() const { return *arena_; }

  constexpr Ops op() const;
  constexpr DType dtype() const;
  constexpr std::size_t nsrc() const;
  constexpr UOp src(std::size_t i) const;
  class src_range;
  constexpr src_range srcs() const;
  constexpr const Arg& arg() const;
  constexpr const Arg& tag() const;
  constexpr bool has_tag() const;

  /// Shape (None for statements such as SINK, GROUP, BARRIER); the rules are in core/detail/derive_shape.hpp.
  class shape_view;
  constexpr shape_view shape() const;
  /// GLOBAL/LOCAL/REG for memory and what addresses it, ALU for values, nullopt otherwise.
  constexpr std::optional<AddrSpace> addrspace() const;
  /// Value bounds of integer/bool nodes (dtype bounds for everything else).
  constexpr std::int64_t vmin() const;
  constexpr std::int64_t vmax() const;

  constexpr bool is(Ops o) const { return op() == o; }
  constexpr bool in(OpSet s) const { return s.contains(op()); }

  /// Identity (= structural equality, thanks to hash-consing). The ordering operators < > <= >=
  /// build comparison nodes (builder.hpp); order handles by id() when a container needs it.
  friend constexpr bool operator==(UOp a, UOp b) { return a.id_ == b.id_ && a.arena_ == b.arena_; }

 private:
  Arena* arena_ = nullptr;
  node_id id_ = no_node;
};


class UOp::src_range {
 public:
  class iterator {
   public:
    using value_type = UOp;
    using difference_type = std::ptrdiff_t;
    constexpr iterator() = default;
    constexpr iterator(const UOp* owner, std::size_t i) : owner_(owner), i_(i) {}
    constexpr UOp operator*() const { return owner_->src(i_); }
    constexpr iterator& operator++() { return ++i_, *this; }
    constexpr iterator operator++(int) {
      iterator t = *this;
      ++i_;
      return t;
    }
    friend constexpr bool operator==(const iterator& a, const iterator& b) { return a.i_ == b.i_; }

   private:
    const UOp* owner_ = nullptr;
    std::size_t i_ = 0;
  };
  constexpr explicit src_range(UOp u) : u_(u) {}
  constexpr iterator begin() const { return iterator(&u_, 0); }
  constexpr iterator end() const { return iterator(&u_, u_.nsrc()); }
  constexpr std::size_t size() const { return u_.nsrc(); }
  constexpr UOp operator[](std::size_t i) const { return u_.src(i); }
  constexpr std::vector<UOp> to_vector() const {
    std::vector<UOp> v;
    v.reserve(u_.nsrc());
    for (std::size_t i = 0; i < u_.nsrc(); ++i) v.push_back(u_.src(i));
    return v;
  }

 private:
  UOp u_;
};

/// A node's shape, read through the arena (stays valid while the arena grows).
class UOp::shape_view {
 public:
  constexpr shape_view(const Arena* a, std::uint32_t off, int rank) : a_(a), off_(off), rank_(rank) {}
  /// False for shapeless nodes (statements) and ill-formed ones.
  constexpr bool has_value() const { return rank_ >= 0; }
  constexpr bool ill_formed() const { return rank_ == -2; }
  constexpr std::size_t size() const { return rank_ < 0 ? 0 : static_cast<std::size_t>(rank_); }
  constexpr std::int64_t operator[](std::size_t i) const;
  constexpr std::int64_t numel() const {
    std::int64_t n = 1;
    for (std::size_t i = 0; i < size(); ++i) n *= (*this)[i];
    return n;
  }
  constexpr std::vector<std::int64_t> to_vector() const {
    std::vector<std::int64_t> v;
    v.reserve(size());
    for (std::size_t i = 0; i < size(); ++i) v.push_back((*this)[i]);
    return v;
  }
  constexpr bool operator==(std::initializer_list<std::int64_t> dims) const {
    if (!has_value() || dims.size() != size()) return false;
    std::size_t i = 0;
    for (std::int64_t d : dims)
      if ((*this)[i++] != d) return false;
    return true;
  }

 private:
  const Arena* a_;
  std::uint32_t off_;
  int rank_;
};

/// Owns the nodes of one or more graphs. Not copyable or movable: handles point at it.
class Arena {
  // The bodies of Arena() and make() (core/detail/out_of_line.hpp). Templates too, declared extern
  // with the out-of-line paths, so g++ -O0, which keeps their callers' constant-evaluation branch,
  // compiles a call, not these bodies; defined before their callers, since clang instantiates a
  // constexpr member template where it is first used.
  template <class Tag = detail::out_of_line_tag>
  constexpr void set_up() {
    // sized for a typical kernel (a pipeline run creates ~1-2k nodes): no rehash on the way
    node_table_.assign(2048, empty_slot);
    nodes_.reserve(1024);
    cold_.reserve(1024);
    sub_ops_.reserve(1024);
    ops_.reserve(1024);
    srcs_.reserve(2048);
    arg_table_.assign(64, no_node);
    init_args();
  }
  template <class Tag = detail::out_of_line_tag>
  constexpr UOp make_node(Ops op, DType dtype, std::span<const UOp> srcs, const Arg& arg, const Arg& tag) {
    // small weakint literals (lane numbers, strides, sizes) are most of the nodes made again and
    // again: found by value, without hashing the arg and the node
    if (op == Ops::CONST && dtype == DType::weakint && arg.kind() == ArgKind::int_ && tag.is_none() && srcs.empty()) {
      const std::int64_t v = arg.as_int();
      if (v >= 0 && v < small_ints) {
        if (small_int_.empty()) small_int_.assign(small_ints, no_node);
        node_id& id = small_int_[static_cast<std::size_t>(v)];
        if (id == no_node) id = intern(op, dtype, srcs, intern_arg(arg), 0);
        return UOp(this, id);
      }
    }
    return UOp(this, intern(op, dtype, srcs, intern_arg(arg), intern_arg(tag)));
  }

 public:
  constexpr Arena() {
    // at run time through one out-of-line function (core/detail/out_of_line.hpp), as make()
    if (std::is_constant_evaluated()) set_up();
    else set_up_out_of_line();
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  /// Drops every node and arg, keeping the memory: the arena is as a new one (ids restart at 0,
  /// nothing is interned), without allocating again what the last graphs grew. For a program that
  /// compiles kernel after kernel: a new arena per kernel gives its tables back to the allocator,
  /// which may return them to the system, and the next kernel pays the page faults again. Every UOp
  /// of the arena is invalid afterwards.
  constexpr void clear() {
    nodes_.clear();
    cold_.clear();
    sub_ops_.clear();
    ops_.clear();
    srcs_.clear();
    dims_.clear();
    for (auto& e : node_table_) e = empty_slot;
    for (auto& e : small_int_) e = no_node;
    args_.clear();
    arg_hashes_.clear();
    for (auto& e : arg_table_) e = no_node;
    init_args();
    // marks_ keeps its stamps: epochs only grow, so an old stamp never equals a new epoch; the
    // pooled maps and vectors are cleared when lent
    ranges_cache.clear();
    ended_ranges_cache.clear();
    backward_slice_cache.clear();
    origin_head_.clear();
    origins_.clear();
    origin_scopes_.clear();
    origin_text_.clear();
  }

  /// Builds (or finds) the node (op, dtype, srcs, arg, tag).
  constexpr UOp make(Ops op, DType dtype, std::span<const UOp> srcs, const Arg& arg = Arg(),
                     const Arg& tag = Arg()) {
    // the hashing, interning and derivations are compiled once per program that links an
    // implementation translation unit, not in every translation unit that builds a graph
    if (std::is_constant_evaluated()) return make_node(op, dtype, srcs, arg, tag);
    return make_out_of_line(op, dtype, srcs, arg, tag);
  }
  constexpr UOp make(Ops op, DType dtype, std::initializer_list<UOp> srcs, const Arg& arg = Arg(),
                     const Arg& tag = Arg()) {
    return make(op, dtype, std::span<const UOp>(srcs.begin(), srcs.size()), arg, tag);
  }
  constexpr UOp make(Ops op, DType dtype, const std::vector<UOp>& srcs, const Arg& arg = Arg(),
                     const Arg& tag = Arg()) {
    return make(op, dtype, std::span<const UOp>(srcs.data(), srcs.size()), arg, tag);
  }
  /// Same, with ids of already-interned args (fast path for rebuilding nodes).
  constexpr UOp make_raw(Ops op, DType dtype, std::span<const UOp> srcs, std::uint32_t arg_id,
                         std::uint32_t tag_id) {
    return UOp(this, intern(op, dtype, srcs, arg_id, tag_id));
  }

  constexpr std::size_t size() const { return nodes_.size(); }
  constexpr UOp node(node_id id) const {
    if (id >= nodes_.size()) fail("Arena::node: id out of range");
    return UOp(const_cast<Arena*>(this), id);
  }

  // --- raw accessors (UOp forwards here) ---------------------------------------------------------
  constexpr const detail::Node& raw(node_id id) const { return nodes_[id]; }
  constexpr const detail::NodeCold& cold(node_id id) const { return cold_[id]; }
  /// The op of node `id`, from an array of its own (1 byte a node: a graph's ops stay in cache
  /// where its 16-byte records do not; rule dispatch reads the ops of a node and its sources).
  constexpr Ops op_of(node_id id) const { return ops_[id]; }
  /// The interned tag of node `id` (0: none), as Node::arg is its arg.
  constexpr std::uint32_t tag_id(node_id id) const { return cold_[id].tag; }
  /// False when no node of an op in `ops` is `id` or below it (its whole graph); true when one may
  /// be: an O(1) test from a summary kept per node (graph_rewrite skips the subgraphs its rules
  /// cannot match; contains_op answers most questions without walking).
  constexpr bool may_contain(node_id id, OpSet ops) const {
    return (sub_ops_[id] & detail::op_bits(ops)) != 0;
  }
  /// Hints that node `id` will be read soon (traversals of graphs larger than the cache).
  constexpr void prefetch(node_id id) const {
    if (!std::is_constant_evaluated()) __builtin_prefetch(nodes_.data() + id);
  }
  constexpr node_id src_id(node_id id, std::size_t i) const {
    const auto& n = nodes_[id];
    if (i >= n.nsrc) src_index_error(id, i);
    return srcs_[n.src_off + i];
  }
  constexpr const Arg& arg_by_id(std::uint32_t arg_id) const { return args_[arg_id]; }
  /// The source ids of a node; the pointer is valid until the next node is created.
  constexpr const node_id* src_ids(node_id id) const { return srcs_.data() + nodes_[id].src_off; }
  constexpr std::uint32_t intern_arg(const Arg& a) {
    if (a.is_none()) return 0;
    // an arg read from a node of this arena (u.arg(), u.tag()) is interned already: no hashing
    if (const std::size_t k = args_.index_of(&a); k != args_.no_index) return static_cast<std::uint32_t>(k);
    std::uint64_t h = a.hash();
    std::size_t mask = arg_table_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      std::uint32_t slot = arg_table_[i];
      if (slot == no_node) break;
      if (arg_hashes_[slot] == h && args_[slot] == a) return slot;
    }
    auto id = static_cast<std::uint32_t>(args_.push_back(a));
    intern_arg_slot(id);
    return id;
  }
  constexpr std::int64_t dim(std::uint32_t off, std::size_t i) const { return dims_[off + i]; }

  /// Builds a text one-liner naming a node, for error messages: "node 12 (ADD weakint)", and, for
  /// a node read from a file, where it is there: "node 20 (RANGE weakint; k.json: post_opts node 6)".
  constexpr text describe(node_id id) const {
    text t;
    t.append("node ").append(id);
    if (id < nodes_.size()) {
      t.append(" (").append(name(nodes_[id].op)).append(' ').append(name(nodes_[id].dtype));
      append_origins(t, id);
      t.append(')');
    }
    return t;
  }

  /// Records that node `id` was read as node `index` of the graph `scope` of an input (the JSON
  /// importers do), so that errors name it as the file does: arena ids differ from a file's ids
  /// as soon as the arena holds anything else. A node read again (hash-consing: the same node in
  /// another graph of the file) keeps every place, in the order read.
  constexpr void note_origin(node_id id, std::string_view scope, std::uint32_t index) {
    if (id >= nodes_.size()) fail("Arena::note_origin: id out of range");
    // consecutive nodes come from one graph: a scope is stored once per run of them
    if (origin_scopes_.empty() || origin_scope(static_cast<std::uint32_t>(origin_scopes_.size() / 2 - 1)) != scope) {
      origin_scopes_.push_back(static_cast<std::uint32_t>(origin_text_.size()));
      origin_text_.insert(origin_text_.end(), scope.begin(), scope.end());
      origin_scopes_.push_back(static_cast<std::uint32_t>(origin_text_.size()));
    }
    if (origin_head_.size() <= id) origin_head_.resize(nodes_.size(), 0);
    const auto scope_k = static_cast<std::uint32_t>(origin_scopes_.size() / 2 - 1);
    origins_.push_back({scope_k, index, origin_head_[id]});
    origin_head_[id] = static_cast<std::uint32_t>(origins_.size());  // 1-based: 0 = none
  }
  /// Where node `id` was read (see note_origin), in the order read; empty for a node made here.
  struct origin {
    std::string_view scope;
    std::uint32_t index = 0;
  };
  constexpr std::vector<origin> origins(node_id id) const {
    std::vector<origin> out;
    for (std::uint32_t k = id < origin_head_.size() ? origin_head_[id] : 0; k != 0; k = origins_[k - 1].next)
      out.push_back({origin_scope(origins_[k - 1].scope), origins_[k - 1].index});
    return {out.rbegin(), out.rend()};
  }

  /// Per-traversal marks (epoch counters) so walks need no per-call allocation of visited sets.
  constexpr std::uint32_t new_epoch() {
    if (marks_.size() < nodes_.size()) grow_marks();
    if (++epoch_ == 0) {  // wrapped: clear
      for (auto& m : marks_) m = 0;
      epoch_ = 1;
    }
    return epoch_;
  }
  constexpr bool mark(node_id id, std::uint32_t epoch) {
    if (marks_.size() <= id) grow_marks();
    if (marks_[id] == epoch) return false;
    marks_[id] = epoch;
    return true;
  }
  constexpr bool marked(node_id id, std::uint32_t epoch) const {
    return id < marks_.size() && marks_[id] == epoch;
  }
  // geometric growth: the arena grows between traversals, an exact resize copied the marks each time
  constexpr void grow_marks() {
    const std::size_t n = 2 * marks_.size() > nodes_.size() ? 2 * marks_.size() : nodes_.size();
    marks_.resize(n, 0);
  }

  /// A node-indexed map (node id -> node id, no_node when unset) whose clearing costs what was
  /// set, not the arena's size: each slot set from empty is noted, and clear() empties just those.
  /// So a traversal of a small graph in a large arena costs O(graph), not O(arena), and a lookup
  /// is one 4-byte load (no epoch stamp beside each value: it would double the map's footprint, and
  /// its cache misses on graphs larger than the cache, and cost a compare per lookup).
  class node_map {
   public:
    constexpr node_id get(node_id id) const { return id < slots_.size() ? slots_[id] : no_node; }
    /// `hint`: the size to grow to when `id` is beyond the current size (at least id + 1).
    [[gnu::always_inline]] constexpr void set(node_id id, node_id v, std::size_t hint = 0) {
      if (id >= slots_.size()) [[unlikely]]
        grow(id, hint);
      set_unchecked(id, v);
    }
    /// Grows to at least n slots: then the unchecked accessors are valid for ids below n.
    constexpr void reserve(std::size_t n) {
      if (n > slots_.size()) grow(static_cast<node_id>(n - 1), n);
    }
    [[gnu::always_inline]] constexpr node_id get_unchecked(node_id id) const { return slots_[id]; }
    // forced inline, and the note kept in a presized buffer: g++ would outline both the setter and
    // vector::push_back, a call per traversal step
    [[gnu::always_inline]] constexpr void set_unchecked(node_id id, node_id v) {
      node_id& s = slots_[id];
      if (s == no_node) {
        if (nset_ == set_.size()) [[unlikely]]
          grow_set();
        set_[nset_++] = id;
      }
      s = v;
    }
    /// Lets set_untracked write the slots of ids lo..hi (below the size): clear() then fills
    /// that whole range instead of noting each slot. For a traversal that sets most ids of a
    /// range it has walked anyway (graph_rewrite's scan): one fill costs less than a note per slot.
    constexpr void untracked(node_id lo, node_id hi) {
      if (lo < lo_) lo_ = lo;
      if (hi + 1 > hi_) hi_ = hi + 1;
    }
    [[gnu::always_inline]] constexpr void set_untracked(node_id id, node_id v) { slots_[id] = v; }
    constexpr void clear() {
      for (std::size_t k = 0; k < nset_; ++k) slots_[set_[k]] = no_node;
      nset_ = 0;
      if (lo_ < hi_) std::fill(slots_.begin() + lo_, slots_.begin() + hi_, no_node);  // a memset
      lo_ = no_node, hi_ = 0;
    }

   private:
    // out of line: keeps set() small enough to inline into the traversals' hot loops
    [[gnu::noinline]] constexpr void grow(node_id id, std::size_t hint) {
      // at least double: the arena keeps growing while a map is lent out again and again
      std::size_t n = hint > id ? hint : static_cast<std::size_t>(id) + 1;
      if (n < 2 * slots_.size()) n = 2 * slots_.size();
      slots_.resize(n, no_node);
    }
    // resize with a value: clang 14 rejects libstdc++'s default-filling of trivial elements in
    // constant evaluation ("assignment to object outside its lifetime")
    [[gnu::noinline]] constexpr void grow_set() { set_.resize(set_.size() < 64 ? 64 : 2 * set_.size(), no_node); }
    std::vector<node_id> slots_;
    std::vector<node_id> set_;  // set_[0, nset_): the ids set from empty since the last clear
    std::size_t nset_ = 0;
    node_id lo_ = no_node, hi_ = 0;  // the untracked range [lo_, hi_), empty when lo_ >= hi_
  };
  /// Lends an empty vector from the arena's pool, returned with its capacity on destruction: the
  /// stacks of traversals that run many times per compile (a fresh stack grown per graph_rewrite and
  /// toposort would be a large share of a pipeline run's allocations).
  /// T: detail::walk_frame, UOp or node_id.
  template <class T>
  class scratch_vector {
   public:
    constexpr explicit scratch_vector(Arena& a) : a_(&a) {
      auto& pool = a.pool_of<T>();
      if (!pool.empty()) {
        v_ = std::move(pool.back());
        pool.pop_back();
        v_.clear();
      }
    }
    scratch_vector(const scratch_vector&) = delete;
    scratch_vector& operator=(const scratch_vector&) = delete;
    constexpr ~scratch_vector() { a_->pool_of<T>().push_back(std::move(v_)); }
    constexpr std::vector<T>& operator*() { return v_; }
    constexpr std::vector<T>* operator->() { return &v_; }

   private:
    Arena* a_;
    std::vector<T> v_;
  };
  /// Lends a bitmap of node ids from the arena's pool, every bit clear, at least `ids` bits long.
  /// Its user clears the words it set (then a small graph in a large arena costs O(graph), not
  /// O(arena)) and says so with cleared(); a bitmap not declared clear (its user left by an
  /// exception) is dropped instead of pooled.
  class scratch_bitmap {
   public:
    constexpr scratch_bitmap(Arena& a, std::size_t ids) : a_(&a) {
      if (!a.bitmap_pool_.empty()) {
        w_ = std::move(a.bitmap_pool_.back());
        a.bitmap_pool_.pop_back();
      }
      if (w_.size() * 32 < ids) w_.resize(ids / 32 + 1, 0);
    }
    scratch_bitmap(const scratch_bitmap&) = delete;
    scratch_bitmap& operator=(const scratch_bitmap&) = delete;
    constexpr ~scratch_bitmap() {
      if (clear_) a_->bitmap_pool_.push_back(std::move(w_));
    }
    /// The words, bit i % 32 of word i / 32 for id i.
    constexpr std::vector<std::uint32_t>& words() { return w_; }
    /// Every bit is clear again: the bitmap goes back to the pool.
    constexpr void cleared() { clear_ = true; }

   private:
    Arena* a_;
    std::vector<std::uint32_t> w_;
    bool clear_ = false;
  };
  /// Lends a cleared node_map from the arena's pool (returned on destruction), so repeated and
  /// nested traversals reuse their storage instead of allocating per call.
  class scratch_map {
   public:
    constexpr explicit scratch_map(Arena& a) : a_(&a) {
      if (!a.scratch_pool_.empty()) {
        m_ = std::move(a.scratch_pool_.back());
        a.scratch_pool_.pop_back();
        m_.clear();
      }
    }
    scratch_map(const scratch_map&) = delete;
    scratch_map& operator=(const scratch_map&) = delete;
    constexpr ~scratch_map() { a_->scratch_pool_.push_back(std::move(m_)); }
    constexpr node_id get(node_id id) const { return m_.get(id); }
    constexpr void set(node_id id, node_id v) { m_.set(id, v, a_->size()); }
    /// Makes room for every node of the arena now: then the unchecked accessors are valid for them.
    constexpr void cover_arena() { m_.reserve(a_->size()); }
    [[gnu::always_inline]] constexpr node_id get_unchecked(node_id id) const { return m_.get_unchecked(id); }
    [[gnu::always_inline]] constexpr void set_unchecked(node_id id, node_id v) { m_.set_unchecked(id, v); }
    constexpr void untracked(node_id lo, node_id hi) { m_.untracked(lo, hi); }
    [[gnu::always_inline]] constexpr void set_untracked(node_id id, node_id v) { m_.set_untracked(id, v); }

   private:
    Arena* a_;
    node_map m_;
  };

 private:
  template <class Tag = detail::out_of_line_tag>
  void set_up_out_of_line();
  template <class Tag = detail::out_of_line_tag>
  UOp make_out_of_line(Ops op, DType dtype, std::span<const UOp> srcs, const Arg& arg, const Arg& tag);

  [[noreturn]] constexpr void src_index_error(node_id id, std::size_t i) const {
    text t = describe(id);
    t.append(": source index ").append(i).append(" out of range (node has ")
        .append(nodes_[id].nsrc).append(" sources)");
    fail(t.view());
  }

  constexpr void init_args() {  // arg_table_ sized and empty
    args_.push_back(Arg());        // id 0 = None
    intern_arg_slot(0);
  }
  constexpr void intern_arg_slot(std::uint32_t id) {
    if (arg_hashes_.size() <= id) arg_hashes_.resize(id + 1);
    arg_hashes_[id] = args_[id].hash();
    if ((args_.size() + 1) * 2 > arg_table_.size()) {
      std::vector<std::uint32_t> t(arg_table_.size() * 2, no_node);
      std::size_t mask = t.size() - 1;
      for (std::uint32_t k = 0; k < args_.size(); ++k) {
        if (k == id) continue;
        std::size_t i = arg_hashes_[k] & mask;
        while (t[i] != no_node) i = (i + 1) & mask;
        t[i] = k;
      }
      arg_table_ = std::move(t);
    }
    std::size_t mask = arg_table_.size() - 1;
    std::size_t i = arg_hashes_[id] & mask;
    while (arg_table_[i] != no_node) i = (i + 1) & mask;
    arg_table_[i] = id;
  }

  static constexpr std::uint64_t node_hash(Ops op, DType dtype, std::span<const UOp> srcs,
                                           std::uint32_t arg, std::uint32_t tag) {
    std::uint64_t h = detail::mix64((static_cast<std::uint64_t>(op) << 8) ^ static_cast<std::uint64_t>(dtype) ^
                                    (static_cast<std::uint64_t>(arg) << 20) ^ (static_cast<std::uint64_t>(tag) << 44));
    for (UOp s : srcs) h = detail::mix64(h ^ (s.id() + 0x9E3779B97F4A7C15ull));
    return h;
  }

  constexpr bool same_node(node_id k, Ops op, DType dtype, std::span<const UOp> srcs,
                           std::uint32_t arg, std::uint32_t tag) const {
    const auto& n = nodes_[k];
    if (n.op != op || n.dtype != dtype || n.arg != arg || n.nsrc != srcs.size() || cold_[k].tag != tag) return false;
    for (std::size_t i = 0; i < srcs.size(); ++i)
      if (srcs_[n.src_off + i] != srcs[i].id()) return false;
    return true;
  }

  constexpr node_id intern(Ops op, DType dtype, std::span<const UOp> srcs, std::uint32_t arg,
                           std::uint32_t tag) {
    for (UOp s : srcs)
      if (&s.arena() != this || s.id() >= nodes_.size()) {
        text t;
        t.append("Arena::make(").append(name(op)).append("): a source belongs to another arena or is invalid");
        fail(t.view());
      }
    std::uint64_t h = node_hash(op, dtype, srcs, arg, tag);
    const std::uint64_t tag_bits = h & 0xFFFFFFFF00000000ull;
    std::size_t mask = node_table_.size() - 1;
    std::size_t i = h & mask;
    for (;; i = (i + 1) & mask) {
      std::uint64_t e = node_table_[i];
      if (e == empty_slot) break;
      // the slot keeps the hash's upper half: most mismatches are rejected without touching nodes_
      if ((e & 0xFFFFFFFF00000000ull) == tag_bits && same_node(static_cast<node_id>(e), op, dtype, srcs, arg, tag))
        return static_cast<node_id>(e);
    }
    auto id = static_cast<node_id>(nodes_.size());
    detail::Node n{op, dtype, 0, -1, static_cast<std::uint32_t>(srcs.size()),
                   static_cast<std::uint32_t>(srcs_.size()), arg};
    std::uint64_t sub = detail::op_bit(op);
    for (UOp s : srcs) {
      srcs_.push_back(s.id());
      sub |= sub_ops_[s.id()];
    }
    nodes_.push_back(n);
    cold_.push_back({0, 0, h, tag, 0});
    sub_ops_.push_back(sub);
    ops_.push_back(op);
    derive(id);
    node_table_[i] = tag_bits | id;
    if (nodes_.size() * 2 > node_table_.size()) grow_node_table();
    return id;
  }

  constexpr void grow_node_table() {
    std::vector<std::uint64_t> t(node_table_.size() * 2, empty_slot);
    std::size_t mask = t.size() - 1;
    for (node_id k = 0; k < nodes_.size(); ++k) {
      std::size_t i = cold_[k].hash & mask;
      while (t[i] != empty_slot) i = (i + 1) & mask;
      t[i] = (cold_[k].hash & 0xFFFFFFFF00000000ull) | k;
    }
    node_table_ = std::move(t);
  }
  static constexpr std::uint64_t empty_slot = ~std::uint64_t(0);

  // --- derived properties, computed once when the node is created ------------------------------
  constexpr void derive(node_id id);
  constexpr bool as_shape(node_id id, std::vector<std::int64_t>& out) const;
  constexpr void derive_shape(node_id id);
  constexpr void derive_addrspace(node_id id);
  constexpr void derive_bounds(node_id id);

  std::vector<detail::Node> nodes_;
  std::vector<detail::NodeCold> cold_;  // per node, like nodes_
  std::vector<std::uint64_t> sub_ops_;  // per node: its ops and those below it, folded (op_bits)
  std::vector<Ops> ops_;                // per node: Node::op again, densely (op_of)
  std::vector<node_id> srcs_;
  std::vector<std::uint64_t> node_table_;  // (upper half of the hash << 32) | node id
  detail::stable_pool<Arg> args_;
  std::vector<std::uint64_t> arg_hashes_;
  std::vector<std::uint32_t> arg_table_;
  std::vector<std::int64_t> dims_;
  std::vector<std::uint32_t> marks_;
  std::uint32_t epoch_ = 0;
  std::vector<node_map> scratch_pool_;
  std::vector<std::vector<detail::walk_frame>> frame_pool_;
  std::vector<std::vector<UOp>> uop_pool_;
  std::vector<std::vector<node_id>> id_pool_;
  std::vector<std::vector<std::uint32_t>> bitmap_pool_;  // every bit clear
  template <class T>
  constexpr std::vector<std::vector<T>>& pool_of() {
    if constexpr (std::is_same_v<T, detail::walk_frame>) return frame_pool_;
    else if constexpr (std::is_same_v<T, node_id>) return id_pool_;
    else {
      static_assert(std::is_same_v<T, UOp>, "Arena::scratch_vector: no pool for this element type");
      return uop_pool_;
    }
  }
  std::vector<std::int64_t> shape_tmp_;  // derive_shape's result buffer
  // note_origin's records: per node the newest (1-based, 0 = none), each linking to the older one
  struct origin_rec {
    std::uint32_t scope, index, next;
  };
  std::vector<std::uint32_t> origin_head_;
  std::vector<origin_rec> origins_;
  std::vector<std::uint32_t> origin_scopes_;  // [begin, end) in origin_text_ per scope
  std::vector<char> origin_text_;
  constexpr std::string_view origin_scope(std::uint32_t k) const {
    return {origin_text_.data() + origin_scopes_[2 * k], origin_scopes_[2 * k + 1] - origin_scopes_[2 * k]};
  }
  constexpr void append_origins(text& t, node_id id) const {
    if (id >= origin_head_.size() || origin_head_[id] == 0) return;
    const std::vector<origin> all = origins(id);
    for (std::size_t k = 0; k < all.size(); ++k) {
      if (k == 3 && all.size() > 4) {  // a node of every graph of a file: the first three say enough
        t.append(" and ").append(all.size() - 3).append(" more");
        break;
      }
      t.append(k == 0 ? "; " : ", ").append(all[k].scope).append(" node ").append(all[k].index);
    }
  }
  static constexpr std::int64_t small_ints = 1024;
  std::vector<node_id> small_int_;  // CONST weakint v for v in [0, small_ints), or no_node

 public:
  /// Lazily filled caches of derived properties that are too costly to compute for every node at
  /// creation (see graph.hpp). Indexed by node id; `has` says whether the entry is valid. The lists
  /// live in shared blocks that never move (one vector per node was one allocation per entry), so a
  /// list read by get() stays valid while other entries are added.
  struct lazy_cache {
    struct entry {
      const node_id* data = nullptr;
      std::uint32_t size = 0;
      bool done = false;
    };
    std::vector<entry> entries;
    std::vector<std::vector<node_id>> blocks;  // each filled up to its capacity, never reallocated
    constexpr bool has(node_id id) const { return id < entries.size() && entries[id].done; }
    constexpr void put(node_id id, std::span<const node_id> v) {
      if (entries.size() <= id) entries.resize(id + 1 > 2 * entries.size() ? id + 1 : 2 * entries.size());
      entry& e = entries[id];
      e.size = static_cast<std::uint32_t>(v.size());
      e.done = true;
      e.data = nullptr;
      if (v.empty()) return;
      if (blocks.empty() || blocks.back().capacity() - blocks.back().size() < v.size()) {
        blocks.emplace_back();
        blocks.back().reserve(v.size() > block_size ? v.size() : block_size);
      }
      std::vector<node_id>& b = blocks.back();
      const std::size_t at = b.size();
      b.insert(b.end(), v.begin(), v.end());
      e.data = b.data() + at;
    }
    constexpr std::span<const node_id> get(node_id id) const {
      const entry& e = entries[id];
      return {e.data, e.size};
    }
    constexpr void clear() {
      entries.clear();
      blocks.clear();
    }
    static constexpr std::size_t block_size = 4096;
  };
  lazy_cache ranges_cache, ended_ranges_cache, backward_slice_cache;

  friend class UOp;
};

// Not inline: see core/detail/out_of_line.hpp.
template <class Tag>
void Arena::set_up_out_of_line() {
  set_up<Tag>();
}
template <class Tag>
UOp Arena::make_out_of_line(Ops op, DType dtype, std::span<const UOp> srcs, const Arg& arg, const Arg& tag) {
  return make_node<Tag>(op, dtype, srcs, arg, tag);
}

// --- UOp accessors ----------------------------------------------------------------------------------
constexpr Ops UOp::op() const { return arena_->raw(id_).op; }
constexpr DType UOp::dtype() const { return arena_->raw(id_).dtype; }
constexpr std::size_t UOp::nsrc() const { return arena_->raw(id_).nsrc; }
constexpr UOp UOp::src(std::size_t i) const { return UOp(arena_, arena_->src_id(id_, i)); }
constexpr UOp::src_range UOp::srcs() const { return src_range(*this); }
constexpr const Arg& UOp::arg() const { return arena_->arg_by_id(arena_->raw(id_).arg); }
constexpr const Arg& UOp::tag() const { return arena_->arg_by_id(arena_->tag_id(id_)); }
// Args are interned, so a node without a tag has tag id 0 (None): one load, not tag()'s three, and
// a fraction of their code inlined into every rewriter that asks.
constexpr bool UOp::has_tag() const { return arena_->tag_id(id_) != 0; }
constexpr UOp::shape_view UOp::shape() const {
  return shape_view(arena_, arena_->cold(id_).dims_off, arena_->raw(id_).rank);
}
constexpr std::int64_t UOp::shape_view::operator[](std::size_t i) const {
  if (i >= size()) fail("shape: axis index out of range");
  return a_->dim(off_, i);
}
constexpr std::optional<AddrSpace> UOp::addrspace() const {
  auto a = arena_->raw(id_).addrspace;
  if (a == 0) return std::nullopt;
  return static_cast<AddrSpace>(a);
}
constexpr std::int64_t UOp::vmin() const { return arena_->cold(id_).vmin; }
constexpr std::int64_t UOp::vmax() const { return arena_->cold(id_).vmax; }

}  // namespace uopcg

// The derivations Arena::make runs on every new node.
// ---- begin uopcg/core/detail/derive_bounds.hpp ----
#ifndef UOPCG_SINGLE_CORE_DETAIL_DERIVE_BOUNDS_HPP
#define UOPCG_SINGLE_CORE_DETAIL_DERIVE_BOUNDS_HPP
// A node's value bounds, derived once when the arena creates it (the Arena member derive_bounds:
// core/arena.hpp declares it and includes this header).



namespace uopcg {

/// Value bounds (vmin/vmax) of integer and bool nodes, computed once when the node is created; the
/// analysis of the symbolic module (docs/symbolic.md "Value bounds"). Sound under the evaluation
/// semantics of symbolic/fold.hpp: a concrete-width result whose interval leaves the dtype's range
/// (it may wrap) gets the dtype's full range; weakint saturates at the int64 limits, which then mean
/// "unbounded". Floats are not tracked (INT64_MIN/INT64_MAX). An empty RANGE has vmin 0, vmax -1.
constexpr void Arena::derive_bounds(node_id id) {
  using i128 = __int128;
  const detail::Node& n = nodes_[id];
  detail::NodeCold& out = cold_[id];
  const DType dt = n.dtype;
  if (!(is_int(dt) || is_bool(dt))) {
    out.vmin = INT64_MIN;
    out.vmax = INT64_MAX;
    return;
  }
  const i128 dmin = int_min(dt);
  const i128 dmax = int_max_u(dt) > static_cast<std::uint64_t>(INT64_MAX) ? static_cast<i128>(INT64_MAX)
                                                                          : static_cast<i128>(int_max_u(dt));
  const bool weak = dt == DType::weakint;
  i128 lo = dmin, hi = dmax;
  // a source as the rules below read it (its record and its bounds)
  struct src_view {
    Ops op;
    DType dtype;
    std::uint32_t arg;
    std::int64_t vmin, vmax;
  };
  auto s = [&](std::uint32_t i) -> src_view {
    const node_id k = srcs_[n.src_off + i];
    return {nodes_[k].op, nodes_[k].dtype, nodes_[k].arg, cold_[k].vmin, cold_[k].vmax};
  };
  auto is_invalid_const = [&](const src_view& x) { return x.op == Ops::CONST && args_[x.arg].is_invalid(); };
  auto unbounded = [](const src_view& x) { return x.vmin == INT64_MIN || x.vmax == INT64_MAX; };
  // the interval [l, h]; outside the dtype's range: full range (wraps), or saturated for weakint
  auto set = [&](i128 l, i128 h) {
    if (l > h) { i128 t = l; l = h; h = t; }
    if (weak) {
      lo = l < dmin ? dmin : l;
      hi = h > dmax ? dmax : h;
    } else if (l >= dmin && h <= dmax) {
      lo = l;
      hi = h;
    }
  };
  auto min4 = [](i128 a, i128 b, i128 c, i128 d) {
    i128 m = a < b ? a : b;
    m = m < c ? m : c;
    return m < d ? m : d;
  };
  auto max4 = [](i128 a, i128 b, i128 c, i128 d) {
    i128 m = a > b ? a : b;
    m = m > c ? m : c;
    return m > d ? m : d;
  };
  auto floordiv = [](i128 a, i128 b) {
    i128 q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  };
  auto floormod = [&](i128 a, i128 b) { return a - floordiv(a, b) * b; };
  const bool binary = n.nsrc == 2;
  // an operand whose range leaves the dtype it is computed in is converted (wraps): nothing is known
  auto src_fits = [&](const src_view& x, DType d) {
    if (is_invalid_const(x) || d == DType::weakint) return true;
    const i128 l = int_min(d);
    const i128 h = int_max_u(d) > static_cast<std::uint64_t>(INT64_MAX) ? static_cast<i128>(INT64_MAX) : static_cast<i128>(int_max_u(d));
    return x.vmin >= l && x.vmax <= h;
  };
  if (GroupOp::ALU.contains(n.op)) {
    if (GroupOp::Comparison.contains(n.op)) {
      if (binary) {
        const DType cd = least_upper_dtype(s(0).dtype, s(1).dtype);
        if ((is_int(cd) || is_bool(cd)) && (!src_fits(s(0), cd) || !src_fits(s(1), cd))) {
          out.vmin = 0;
          out.vmax = 1;
          return;
        }
      }
    } else {
      for (std::uint32_t i = 0; i < n.nsrc; ++i) {
        if ((n.op == Ops::WHERE && i == 0) || ((n.op == Ops::SHL || n.op == Ops::SHR) && i == 1)) continue;
        if (!src_fits(s(i), dt)) {
          out.vmin = static_cast<std::int64_t>(lo);
          out.vmax = static_cast<std::int64_t>(hi);
          return;
        }
      }
    }
  }
  switch (n.op) {
    case Ops::CONST: {
      const Arg& a = args_[n.arg];
      if (a.kind() == ArgKind::int_ || a.is_bool()) {
        i128 v = a.as_int();
        if (is_bool(dt)) v = v != 0;
        if (v >= dmin && v <= dmax) lo = hi = v;
      } else if (a.kind() == ArgKind::uint_ && !weak) {
        lo = dmin;  // beyond INT64_MAX: not representable here
      }
      break;
    }
    case Ops::RANGE: case Ops::SPECIAL:
      // [0, bound - 1]; an empty range keeps vmax = -1 < vmin
      if (n.nsrc > 0) {
        lo = 0;
        hi = s(0).vmax == INT64_MAX ? dmax : static_cast<i128>(s(0).vmax) - 1;
        if (hi > dmax) hi = dmax;
        if (hi < dmin) hi = dmin;
      }
      break;
    case Ops::PARAM: case Ops::BUFFER: {
      // a variable's bounds: ints, or bools (load collapse's stand-in for a bool input it lifts)
      const Arg& p = args_[n.arg];
      auto bound = [](const Arg& b) { return b.kind() == ArgKind::int_ || b.kind() == ArgKind::boolean; };
      if (p.kind() == ArgKind::param_arg && p[2].is_tuple() && p[2].size() == 2 && bound(p[2][0]) && bound(p[2][1]))
        set(p[2][0].as_int(), p[2][1].as_int());
      break;
    }
    case Ops::ADD: case Ops::SUB: case Ops::MUL: case Ops::MAX:
      if (!binary) break;
      if (is_bool(dt)) {  // bool ADD / MAX are OR, MUL is AND
        if (n.op == Ops::MUL) set(s(0).vmin & s(1).vmin, s(0).vmax & s(1).vmax);
        else if (n.op != Ops::SUB) set(s(0).vmin | s(1).vmin, s(0).vmax | s(1).vmax);
        break;
      }
      if (!weak && (unbounded(s(0)) || unbounded(s(1)))) break;
      {
        i128 a0 = s(0).vmin, a1 = s(0).vmax, b0 = s(1).vmin, b1 = s(1).vmax;
        if (n.op == Ops::ADD) set(a0 + b0, a1 + b1);
        else if (n.op == Ops::SUB) set(a0 - b1, a1 - b0);
        else if (n.op == Ops::MAX) set(a0 > b0 ? a0 : b0, a1 > b1 ? a1 : b1);
        else set(min4(a0 * b0, a0 * b1, a1 * b0, a1 * b1), max4(a0 * b0, a0 * b1, a1 * b0, a1 * b1));
      }
      break;
    case Ops::MULACC:
      if (n.nsrc == 3 && !is_bool(dt) && (weak || !(unbounded(s(0)) || unbounded(s(1)) || unbounded(s(2))))) {
        i128 a0 = s(0).vmin, a1 = s(0).vmax, b0 = s(1).vmin, b1 = s(1).vmax;
        set(min4(a0 * b0, a0 * b1, a1 * b0, a1 * b1) + s(2).vmin, max4(a0 * b0, a0 * b1, a1 * b0, a1 * b1) + s(2).vmax);
      }
      break;
    case Ops::NEG:
      if (n.nsrc == 1 && !is_bool(dt)) set(-static_cast<i128>(s(0).vmax), -static_cast<i128>(s(0).vmin));
      break;
    case Ops::TRUNC:
      if (n.nsrc == 1) set(s(0).vmin, s(0).vmax);
      break;
    case Ops::FLOORDIV: case Ops::CDIV: {
      if (!binary) break;
      const i128 x0 = s(0).vmin, x1 = s(0).vmax, d0 = s(1).vmin, d1 = s(1).vmax;
      if (x0 > x1) { set(0, 0); break; }  // empty numerator range (RANGE(0))
      if (d0 > d1 || !(d0 > 0 || d1 < 0)) break;  // an empty divisor range, or its sign is not fixed
      if (!weak && (unbounded(s(0)) || unbounded(s(1)))) break;
      auto q = [&](i128 a, i128 b) { return n.op == Ops::FLOORDIV ? floordiv(a, b) : a / b; };
      set(min4(q(x0, d0), q(x0, d1), q(x1, d0), q(x1, d1)), max4(q(x0, d0), q(x0, d1), q(x1, d0), q(x1, d1)));
      break;
    }
    case Ops::FLOORMOD: {
      if (!binary) break;
      const i128 x0 = s(0).vmin, x1 = s(0).vmax, d0 = s(1).vmin, d1 = s(1).vmax;
      if (x0 > x1) { set(0, 0); break; }
      if (d0 > d1) break;  // an empty divisor range (a RANGE(0)): no value to bound by
      if (d0 == d1 && d0 != 0) {
        const i128 c = d0;
        const i128 span = c > 0 ? c : -c;
        // one period: the ends map in order
        if (!unbounded(s(0)) && x1 - x0 < span && floordiv(x0, c) == floordiv(x1, c)) set(floormod(x0, c), floormod(x1, c));
        else if (c > 0) set(0, c - 1);
        else set(c + 1, 0);
      } else if (d0 > 0) {
        set(0, d1 - 1);
      } else if (d1 < 0) {
        set(d0 + 1, 0);
      }
      break;
    }
    case Ops::CMOD: {
      // tinygrad's _min_max term for term. Tighter bounds (a remainder bounded by the numerator's
      // upper end under a divisor that varies, or by one period under a constant one) folded more
      // before the opts than tinygrad does, so the axes its opts name could be gone
      if (!binary) break;
      const i128 x0 = s(0).vmin, x1 = s(0).vmax, d0 = s(1).vmin, d1 = s(1).vmax;
      if (d0 > d1) break;  // an empty divisor range
      if (d0 == d1 && d0 > 0) {
        const i128 c = d0;
        set(x0 > 0 ? 0 : x0 > -c ? x0 : -(c - 1), x1 < 0 ? 0 : x1 < c ? x1 : c - 1);
      } else if (d0 > 0 || d1 < 0) {
        const i128 m = (d0 > 0 ? d1 : -d0) - 1;  // the largest |remainder|
        if (x0 >= 0) set(0, m);
        else if (x1 <= 0) set(-m, 0);
        else set(-m, m);
      }
      break;
    }
    case Ops::SHL: case Ops::SHR: {
      if (!binary || s(1).vmin != s(1).vmax) break;
      const i128 k = s(1).vmin;
      if (k < 0 || k >= 63 || (!weak && k >= bitsize(dt))) break;
      if (!weak && unbounded(s(0))) break;
      if (n.op == Ops::SHR) set(static_cast<i128>(s(0).vmin) >> k, static_cast<i128>(s(0).vmax) >> k);
      else set(static_cast<i128>(s(0).vmin) * (static_cast<i128>(1) << k), static_cast<i128>(s(0).vmax) * (static_cast<i128>(1) << k));
      break;
    }
    case Ops::AND: case Ops::OR: case Ops::XOR: {
      if (!binary) break;
      const auto& a = s(0);
      const auto& b = s(1);
      if (is_bool(dt)) {
        if (n.op == Ops::AND) set(a.vmin & b.vmin, a.vmax & b.vmax);
        else if (n.op == Ops::OR) set(a.vmin | b.vmin, a.vmax | b.vmax);
        else if (a.vmin == a.vmax && b.vmin == b.vmax) set(a.vmin ^ b.vmin, a.vmin ^ b.vmin);
        else set(0, 1);
        break;
      }
      auto is_c = [](const src_view& x) { return x.vmin == x.vmax; };
      // Integer bit operations are bounded only where tinygrad's _min_max bounds them (NOT as XOR with
      // a -1 on the right, AND with a non-negative constant mask on the right). Tighter bounds (OR and
      // XOR of non-negative values, a constant on the left) fold more before the opts than tinygrad
      // does (range-based folding, load collapse), so the axes its opts name could be gone
      if (n.op == Ops::XOR && is_c(b) && b.vmin == -1 && !unbounded(a)) {
        set(~static_cast<i128>(a.vmax), ~static_cast<i128>(a.vmin));
        break;
      }
      if (n.op == Ops::AND && is_c(b) && b.vmin >= 0) set(0, a.vmin >= 0 && a.vmax < b.vmin ? a.vmax : b.vmin);
      break;
    }
    case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ: {
      if (!binary) break;
      const auto& a = s(0);
      const auto& b = s(1);
      // float operands are not tracked; an Invalid operand decides nothing
      if (!(is_int(a.dtype) || is_bool(a.dtype)) || !(is_int(b.dtype) || is_bool(b.dtype))) { set(0, 1); break; }
      if (is_invalid_const(a) || is_invalid_const(b)) { set(0, 1); break; }
      bool is_true = false, is_false = false;
      const bool disjoint = a.vmax < b.vmin || a.vmin > b.vmax;
      const bool same_const = a.vmin == a.vmax && b.vmin == b.vmax && a.vmin == b.vmin;
      if (n.op == Ops::CMPLT) {
        is_true = a.vmax < b.vmin;
        is_false = a.vmin >= b.vmax;
      } else if (n.op == Ops::CMPNE) {
        is_true = disjoint;
        is_false = same_const;
      } else {
        is_true = same_const;
        is_false = disjoint;
      }
      if (is_true) set(1, 1);
      else if (is_false) set(0, 0);
      else set(0, 1);
      break;
    }
    case Ops::WHERE: {
      if (n.nsrc != 3) break;
      const auto& c = s(0);
      const auto& t = s(1);
      const auto& f = s(2);
      // an Invalid arm is "don't care": the other arm's bounds
      const bool ti = is_invalid_const(t), fi = is_invalid_const(f);
      const bool c_known = !is_invalid_const(c) && c.vmin == c.vmax;
      if ((c_known && c.vmin != 0) || fi) { if (!ti) set(t.vmin, t.vmax); }
      else if ((c_known && c.vmin == 0) || ti) set(f.vmin, f.vmax);
      else set(t.vmin < f.vmin ? t.vmin : f.vmin, t.vmax > f.vmax ? t.vmax : f.vmax);
      break;
    }
    case Ops::CAST: {
      if (n.nsrc != 1) break;
      const auto& x = s(0);
      // int / bool sources keep their bounds when they fit the destination (else it wraps)
      if ((is_int(x.dtype) || is_bool(x.dtype)) && !is_invalid_const(x)) {
        if (is_bool(dt)) {
          if (x.vmin > 0 || x.vmax < 0) set(1, 1);
          else if (x.vmin == 0 && x.vmax == 0) set(0, 0);
          else set(0, 1);
        } else if (!(x.dtype != DType::weakint && unbounded(x) && is_unsigned(x.dtype))) {
          set(x.vmin, x.vmax);
        }
      }
      break;
    }
    case Ops::BITCAST:
      break;
    case Ops::AFTER: case Ops::INDEX:
      if (n.nsrc > 0) set(s(0).vmin, s(0).vmax);
      break;
    case Ops::STACK: {
      bool any = false;
      i128 l = 0, h = 0;
      for (std::uint32_t i = 0; i < n.nsrc; ++i) {
        if (is_invalid_const(s(i))) continue;  // Invalid lanes are don't-care
        if (!any || s(i).vmin < l) l = s(i).vmin;
        if (!any || s(i).vmax > h) h = s(i).vmax;
        any = true;
      }
      if (any) set(l, h);
      break;
    }
    default:
      break;
  }
  out.vmin = static_cast<std::int64_t>(lo);
  out.vmax = static_cast<std::int64_t>(hi);
}

}  // namespace uopcg
#endif  // UOPCG_SINGLE_CORE_DETAIL_DERIVE_BOUNDS_HPP
// ---- end uopcg/core/detail/derive_bounds.hpp ----
// ---- begin uopcg/core/detail/derive_shape.hpp ----
#ifndef UOPCG_SINGLE_CORE_DETAIL_DERIVE_SHAPE_HPP
#define UOPCG_SINGLE_CORE_DETAIL_DERIVE_SHAPE_HPP
// A node's shape and address space, derived once when the arena creates it (the Arena members
// derive_shape and derive_addrspace: core/arena.hpp declares them and includes this header).



namespace uopcg {

/// The shape a size operand denotes: CONST n -> (n,), STACK of consts -> their values; CASTs are
/// looked through (sizes are CAST(int, CONST) after index lowering).
constexpr bool Arena::as_shape(node_id id, std::vector<std::int64_t>& out) const {
  // derivations never throw (a node is published before it is derived): every arg is checked
  auto strip_casts = [&](node_id x) {
    while (nodes_[x].op == Ops::CAST && nodes_[x].nsrc == 1) x = srcs_[nodes_[x].src_off];
    return x;
  };
  auto const_int = [&](node_id x, std::int64_t& v) {
    const Arg& a = args_[nodes_[x].arg];
    if (nodes_[x].op != Ops::CONST || (a.kind() != ArgKind::int_ && !a.is_bool())) return false;
    v = a.as_int();
    return true;
  };
  const node_id x = strip_casts(id);
  const auto& n = nodes_[x];
  std::int64_t v = 0;
  if (n.op == Ops::CONST) {
    if (!const_int(x, v)) return false;
    out.push_back(v);
    return true;
  }
  if (n.op == Ops::STACK) {
    for (std::uint32_t i = 0; i < n.nsrc; ++i) {
      if (!const_int(strip_casts(srcs_[n.src_off + i]), v)) return false;
      out.push_back(v);
    }
    return true;
  }
  return false;
}

constexpr void Arena::derive(node_id id) {
  derive_shape(id);
  derive_addrspace(id);
  derive_bounds(id);
}

namespace detail {
// Ops whose shape rule is not "broadcast of the sources" / "like src[0]".
inline constexpr OpSet shape_special_ops{
    Ops::SINK, Ops::GROUP, Ops::BARRIER, Ops::IF, Ops::ENDIF, Ops::LINEAR, Ops::PROGRAM, Ops::SOURCE,
    Ops::BINARY, Ops::NOOP, Ops::PARAM, Ops::BUFFER, Ops::STACK, Ops::INDEX, Ops::RESHAPE, Ops::EXPAND,
    Ops::PERMUTE, Ops::SHRINK, Ops::PAD, Ops::REDUCE, Ops::STAGE, Ops::BITCAST, Ops::WMMA};
}  // namespace detail

constexpr void Arena::derive_shape(node_id id) {
  detail::Node& n = nodes_[id];
  if (!detail::shape_special_ops.contains(n.op)) {
    // fast path, no allocation: scalar sources (or none) give a scalar
    bool scalar = true;
    for (std::uint32_t i = 0; i < n.nsrc && scalar; ++i) scalar = nodes_[srcs_[n.src_off + i]].rank == 0;
    if (scalar) {
      n.rank = 0;
      return;
    }
  }
  std::vector<std::int64_t>& out = shape_tmp_;  // reused: a derivation creates no node
  out.clear();
  bool ok = true, none = false;
  auto src = [&](std::uint32_t i) -> const detail::Node& { return nodes_[srcs_[n.src_off + i]]; };
  auto src_dims_off = [&](std::uint32_t i) { return cold_[srcs_[n.src_off + i]].dims_off; };
  auto src_dims = [&](std::uint32_t i, std::vector<std::int64_t>& v) {
    const auto& s = src(i);
    if (s.rank < 0) return false;
    for (int k = 0; k < s.rank; ++k) v.push_back(dims_[src_dims_off(i) + k]);
    return true;
  };
  auto like_src0 = [&] {
    if (n.nsrc == 0) return;  // scalar
    const auto& s = src(0);
    if (s.rank == -1) none = true;
    else if (s.rank == -2) ok = false;
    else src_dims(0, out);
  };
  switch (n.op) {
    case Ops::SINK: case Ops::GROUP: case Ops::BARRIER: case Ops::IF: case Ops::ENDIF:
    case Ops::LINEAR: case Ops::PROGRAM: case Ops::SOURCE: case Ops::BINARY: case Ops::NOOP:
      none = true;
      break;
    case Ops::CONST: case Ops::RANGE: case Ops::SPECIAL: case Ops::GETADDR:
      break;
    case Ops::PARAM: case Ops::BUFFER:
      if (n.nsrc > 0) {
        if (src(0).op == Ops::NOOP) ok = false;
        else ok = as_shape(srcs_[n.src_off], out);
      }
      break;
    case Ops::STACK:
      if (n.nsrc > 0) {
        out.push_back(n.nsrc);
        const auto& first = src(0);
        if (first.rank < 0) { ok = false; break; }
        for (std::uint32_t i = 1; i < n.nsrc && ok; ++i) {
          const auto& other = src(i);
          if (other.rank != first.rank) ok = false;
          for (int k = 0; k < first.rank && ok; ++k)
            if (dims_[src_dims_off(i) + k] != dims_[src_dims_off(0) + k]) ok = false;
        }
        src_dims(0, out);
      }
      break;
    case Ops::INDEX: {
      if (n.nsrc == 0) { ok = false; break; }
      const auto& b = src(0);
      if (b.rank < 0) { ok = false; break; }
      for (std::uint32_t i = 1; i < n.nsrc && ok; ++i)
        if (!src_dims(i, out)) ok = false;
      std::uint32_t m = n.nsrc - 1;
      if (m > static_cast<std::uint32_t>(b.rank)) { ok = false; break; }
      for (int k = static_cast<int>(m); k < b.rank; ++k) out.push_back(dims_[src_dims_off(0) + k]);
      break;
    }
    case Ops::RESHAPE:
      ok = n.nsrc >= 2 && as_shape(srcs_[n.src_off + 1], out);
      break;
    case Ops::EXPAND:
      ok = n.nsrc >= 2 && as_shape(srcs_[n.src_off + 1], out) && src_dims(0, out);
      break;
    case Ops::PERMUTE: {
      const Arg& perm = args_[n.arg];
      if (n.nsrc < 1 || src(0).rank < 0 || !perm.is_tuple() || perm.size() != static_cast<std::size_t>(src(0).rank)) {
        ok = false;
        break;
      }
      const std::size_t rank = static_cast<std::size_t>(src(0).rank);
      for (const Arg& p : perm.items()) {
        if (p.kind() != ArgKind::int_) {
          ok = false;
          break;
        }
        auto k = p.as_int();
        if (k < 0 || static_cast<std::size_t>(k) >= rank) { ok = false; break; }
        out.push_back(dims_[src_dims_off(0) + static_cast<std::size_t>(k)]);
      }
      break;
    }
    case Ops::SHRINK:  // (x, starts, sizes): the sizes; program form (buf, offset, CONST n) -> (n,)
      ok = n.nsrc == 3 && as_shape(srcs_[n.src_off + 2], out);
      break;
    case Ops::PAD: {
      std::vector<std::int64_t> x, lo, hi;
      ok = n.nsrc == 3 && src_dims(0, x) && as_shape(srcs_[n.src_off + 1], lo) &&
           as_shape(srcs_[n.src_off + 2], hi) && lo.size() == x.size() && hi.size() == x.size();
      if (ok)
        for (std::size_t k = 0; k < x.size() && ok; ++k) {
        __int128 d = static_cast<__int128>(x[k]) + lo[k] + hi[k];
        ok = d >= 0 && d <= INT64_MAX;
        out.push_back(static_cast<std::int64_t>(d));
      }
      break;
    }
    case Ops::REDUCE: {
      const Arg& a = args_[n.arg];
      std::int64_t nh = (a.is_tuple() && a.size() >= 2 && a[1].kind() == ArgKind::int_) ? a[1].as_int() : 0;
      if (n.nsrc < 1 || src(0).rank < 0 || nh < 0 || nh > src(0).rank) { ok = false; break; }
      // the source's dims past the first nh, read in place
      for (int k = static_cast<int>(nh); k < src(0).rank; ++k) out.push_back(dims_[src_dims_off(0) + k]);
      break;
    }
    case Ops::STAGE: {
      for (std::uint32_t i = 1; i < n.nsrc; ++i) out.push_back(detail::sat(static_cast<__int128>(cold_[srcs_[n.src_off + i]].vmax) + 1));
      ok = n.nsrc >= 1 && src_dims(0, out);
      break;
    }
    case Ops::BITCAST: {
      like_src0();
      if (ok && !none && !out.empty() && n.nsrc == 1) {
        int from = itemsize(src(0).dtype), to = itemsize(n.dtype);
        if (to > 0 && from > 0) {
          __int128 d = static_cast<__int128>(out.back()) * from / to;
          ok = d <= INT64_MAX;
          out.back() = static_cast<std::int64_t>(ok ? d : 0);
        }
      }
      break;
    }
    case Ops::WMMA: {
      // broadcast of the sources' shapes without their last axis, plus acc's last axis
      std::vector<std::int64_t> acc;
      if (n.nsrc < 3 || !src_dims(2, acc) || acc.empty()) { ok = false; break; }
      std::vector<std::int64_t> b;
      for (std::uint32_t i = 0; i < 3 && ok; ++i) {
        std::vector<std::int64_t> s;
        if (!src_dims(i, s) || s.empty()) { ok = false; break; }
        s.pop_back();
        if (s.size() > b.size()) b.insert(b.begin(), s.size() - b.size(), 1);
        for (std::size_t k = 0; k < s.size(); ++k) {
          std::size_t bk = b.size() - s.size() + k;
          if (b[bk] == 1) b[bk] = s[k];
          else if (s[k] != 1 && s[k] != b[bk]) ok = false;
        }
      }
      out = b;
      out.push_back(acc.back());
      break;
    }
    default: {
      if (detail::broadcasts(n.op) && n.nsrc >= 2) {
        // numpy broadcasting: right-aligned, size-1 axes stretch
        // (the sources' dims are read in place: dims_ does not change during a derivation)
        for (std::uint32_t i = 0; i < n.nsrc && ok; ++i) {
          const detail::Node& sn = src(i);
          if (sn.rank < 0) {
            ok = false;
            break;
          }
          const std::size_t rank = static_cast<std::size_t>(sn.rank);
          const std::int64_t* s = dims_.data() + src_dims_off(i);
          if (rank > out.size()) out.insert(out.begin(), rank - out.size(), 1);
          for (std::size_t k = 0; k < rank; ++k) {
            std::size_t ok_k = out.size() - rank + k;
            if (out[ok_k] == 1) out[ok_k] = s[k];
            else if (s[k] != 1 && s[k] != out[ok_k]) ok = false;
          }
        }
      } else {
        like_src0();  // unary ops, CAST, LOAD, STORE, AFTER, END, ...
      }
    }
  }
  if (none) {
    n.rank = -1;
  } else if (!ok || out.size() > 127) {
    n.rank = -2;
  } else {
    n.rank = static_cast<std::int8_t>(out.size());
    // most shaped nodes have their first source's shape: share its dims
    if (n.nsrc > 0 && out.size() == static_cast<std::size_t>(src(0).rank > 0 ? src(0).rank : 0) && !out.empty()) {
      const std::int64_t* s0 = dims_.data() + src_dims_off(0);
      bool same = true;
      for (std::size_t k = 0; k < out.size() && same; ++k) same = s0[k] == out[k];
      if (same) {
        cold_[id].dims_off = src_dims_off(0);
        return;
      }
    }
    cold_[id].dims_off = static_cast<std::uint32_t>(dims_.size());
    dims_.insert(dims_.end(), out.begin(), out.end());
  }
}

constexpr void Arena::derive_addrspace(node_id id) {
  detail::Node& n = nodes_[id];
  auto src_as = [&](std::uint32_t i) { return nodes_[srcs_[n.src_off + i]].addrspace; };
  std::uint8_t a = 0;
  switch (n.op) {
    case Ops::PARAM: case Ops::BUFFER: {
      const Arg& p = args_[n.arg];
      if (p.kind() == ArgKind::param_arg && p[5].kind() == ArgKind::addrspace)
        a = static_cast<std::uint8_t>(p[5].as_addrspace());
      break;
    }
    case Ops::SPECIAL: case Ops::RANGE: case Ops::LOAD:
      a = static_cast<std::uint8_t>(AddrSpace::ALU);
      break;
    case Ops::INDEX: case Ops::AFTER: case Ops::REDUCE: case Ops::STORE: case Ops::END:
    case Ops::MSTACK: case Ops::MSELECT: case Ops::UNSHARD:
    case Ops::RESHAPE: case Ops::EXPAND: case Ops::PERMUTE: case Ops::PAD: case Ops::SHRINK: case Ops::FLIP:
      if (n.nsrc > 0) a = src_as(0);
      break;
    default:
      if (GroupOp::Elementwise.contains(n.op) || n.op == Ops::STACK || n.op == Ops::WMMA ||
          n.op == Ops::GROUP || n.op == Ops::STAGE) {
        // the common address space of the sources that have one; none if they disagree
        for (std::uint32_t i = 0; i < n.nsrc; ++i) {
          std::uint8_t s = src_as(i);
          if (s == 0) continue;
          if (a == 0) a = s;
          else if (a != s) {
            a = 0;
            break;
          }
        }
      }
  }
  n.addrspace = a;
}

}  // namespace uopcg
#endif  // UOPCG_SINGLE_CORE_DETAIL_DERIVE_SHAPE_HPP
// ---- end uopcg/core/detail/derive_shape.hpp ----
#endif  // UOPCG_SINGLE_CORE_ARENA_HPP
// ---- end uopcg/core/arena.hpp ----
// ---- begin uopcg/core/builder.hpp ----
#ifndef UOPCG_SINGLE_CORE_BUILDER_HPP
#define UOPCG_SINGLE_CORE_BUILDER_HPP
// Building kernel graphs in C++: leaves (constants, params, buffers, ranges), memory and control
// ops (index, load, store, reduce, after, end, group, sink, barrier) and ALU ops through operators,
// all with the snapshot's meaning: literals are weak constants, `x - y` is ADD(x, MUL(y, -1)),
// `a > b` is CMPLT(b, a), integer `/` and `%` are FLOORDIV/FLOORMOD (floor semantics, like
// Python's `//` and `%` on index math), float `/` is MUL(x, RECIPROCAL(y)).
//
// `==` and `!=` on UOp compare identity; use eq()/ne() to build comparisons.

#include <concepts>

// ---- begin uopcg/core/graph.hpp ----
#ifndef UOPCG_SINGLE_CORE_GRAPH_HPP
#define UOPCG_SINGLE_CORE_GRAPH_HPP
// Graph operations on UOps: dtype derivation, toposort in the snapshot's order, backward slices,
// rebuilding a node with new sources, substitute, and the range properties (ranges, ended ranges,
// buf_uop). All iterative (no recursion), so they work on deep graphs and in constant evaluation.



namespace uopcg {

/// The dtype a node gets when built without one (tinygrad's derivation from op, sources and arg).
constexpr DType derive_dtype(Ops op, std::span<const UOp> srcs, const Arg& arg) {
  auto s = [&](std::size_t i) { return i < srcs.size() ? srcs[i].dtype() : DType::void_; };
  auto promoted = [&](std::size_t from) {
    DType d = DType::void_;
    for (std::size_t i = from; i < srcs.size(); ++i) {
      // Invalid (a bool CONST) matches any dtype: it takes no part in promotion
      if (srcs[i].op() == Ops::CONST && srcs[i].arg().is_invalid()) continue;
      d = d == DType::void_ ? srcs[i].dtype() : least_upper_dtype(d, srcs[i].dtype());
    }
    return d;
  };
  switch (op) {
    case Ops::CONST:
      if (arg.is_bool() || arg.is_invalid()) return DType::bool_;
      if (arg.is_int() || arg.kind() == ArgKind::bigint) return DType::weakint;
      if (arg.is_float()) return DType::weakfloat;
      return DType::void_;
    case Ops::PARAM: case Ops::BUFFER:
      return arg.kind() == ArgKind::param_arg ? arg[1].as_dtype() : DType::void_;
    case Ops::CAST: case Ops::BITCAST:
      return arg.kind() == ArgKind::dtype ? arg.as_dtype() : DType::void_;
    case Ops::RANGE: case Ops::SPECIAL: case Ops::AFTER: case Ops::INDEX: case Ops::SHRINK:
    case Ops::LOAD: case Ops::REDUCE: case Ops::STAGE: case Ops::NEG: case Ops::TRUNC:
    case Ops::SHL: case Ops::SHR: case Ops::RESHAPE: case Ops::EXPAND: case Ops::PERMUTE:
    case Ops::PAD: case Ops::FLIP:
      return s(0);
    case Ops::WMMA:
      return s(2);
    case Ops::EXP2: case Ops::LOG2: case Ops::SIN: case Ops::SQRT: case Ops::RECIPROCAL:
      return is_float(s(0)) ? s(0) : least_upper_dtype(s(0), DType::float32);
    case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ:
      return DType::bool_;
    case Ops::WHERE:
      return promoted(1);
    case Ops::STACK:
      return promoted(0);
    default:
      if (GroupOp::Binary.contains(op) || op == Ops::MULACC) return promoted(0);
      return DType::void_;
  }
}

/// Builds a node with a derived dtype.
constexpr UOp make_node(Arena& a, Ops op, std::span<const UOp> srcs, const Arg& arg = Arg(),
                        const Arg& tag = Arg()) {
  return a.make(op, derive_dtype(op, srcs, arg), srcs, arg, tag);
}

/// `u` with new sources (same op, arg and tag). The dtype is re-derived only when some source's
/// dtype changed, as tinygrad does when it rebuilds a node during rewriting.
constexpr UOp with_srcs(UOp u, std::span<const UOp> new_srcs) {
  const auto& n = u.arena().raw(u.id());
  DType dt = n.dtype;
  bool dtype_changed = new_srcs.size() != n.nsrc;
  for (std::size_t i = 0; i < new_srcs.size() && !dtype_changed; ++i)
    dtype_changed = new_srcs[i].dtype() != u.src(i).dtype();
  if (dtype_changed) {
    DType d = derive_dtype(n.op, new_srcs, u.arg());
    if (d != DType::void_ || dt == DType::void_) dt = d;
  }
  return u.arena().make_raw(n.op, dt, new_srcs, n.arg, u.arena().tag_id(u.id()));
}
constexpr UOp with_srcs(UOp u, const std::vector<UOp>& s) { return with_srcs(u, std::span<const UOp>(s)); }
constexpr UOp with_srcs(UOp u, std::initializer_list<UOp> s) {
  return with_srcs(u, std::span<const UOp>(s.begin(), s.size()));
}
/// `u` with each source s replaced by f(s) (through with_srcs), or `u` itself when f changed none.
/// Up to 8 sources are mapped on the stack: rules that rewrite a node's sources and usually find
/// nothing to change (a load to add, a cast to move) allocate nothing then, nor does graph_rewrite
/// when it rebuilds a node whose sources were rewritten (a larger buffer costs more to initialize
/// than the allocations it would save).
template <class F>
constexpr UOp map_srcs(UOp u, F&& f) {
  const std::size_t n = u.nsrc();
  std::size_t i = 0;
  UOp first_changed;
  for (; i < n; ++i) {
    first_changed = f(u.src(i));
    if (first_changed != u.src(i)) break;
  }
  if (i == n) return u;
  auto fill = [&](UOp* out) {
    for (std::size_t k = 0; k < i; ++k) out[k] = u.src(k);
    out[i] = first_changed;
    for (std::size_t k = i + 1; k < n; ++k) out[k] = f(u.src(k));
    return with_srcs(u, std::span<const UOp>(out, n));
  };
  if (n <= 8) {
    UOp buf[8];
    return fill(buf);
  }
  std::vector<UOp> v(n);
  return fill(v.data());
}
constexpr UOp with_arg(UOp u, const Arg& arg) {
  auto v = u.srcs().to_vector();
  return u.arena().make(u.op(), u.dtype(), v, arg, u.tag());
}
constexpr UOp with_tag(UOp u, const Arg& tag) {
  auto v = u.srcs().to_vector();
  return u.arena().make(u.op(), u.dtype(), v, u.arg(), tag);
}
constexpr UOp with_dtype(UOp u, DType dt) {
  const auto& n = u.arena().raw(u.id());
  auto v = u.srcs().to_vector();
  return u.arena().make_raw(n.op, dt, v, n.arg, u.arena().tag_id(u.id()));
}
constexpr UOp with_op(UOp u, Ops op) {
  const auto& n = u.arena().raw(u.id());
  auto v = u.srcs().to_vector();
  return u.arena().make_raw(op, n.dtype, v, n.arg, u.arena().tag_id(u.id()));
}

/// tinygrad's toposort: iterative DFS post-order visiting sources in order, each node once.
/// `gate(u)` returning false stops the descent at u and leaves u itself out. Appends to `out`
/// (callers that only iterate pass an Arena::scratch_vector and allocate nothing).
template <class Gate>
constexpr void toposort_into(std::span<const UOp> roots, Gate&& gate, std::vector<UOp>& out) {
  if (roots.empty()) return;
  Arena& a = roots[0].arena();
  const std::uint32_t epoch = a.new_epoch();
  Arena::scratch_vector<detail::walk_frame> stack_v(a);  // aux: the next source to visit
  auto& stack = *stack_v;
  for (UOp r : roots) {
    if (a.marked(r.id(), epoch) || !gate(r)) continue;
    a.mark(r.id(), epoch);
    stack.push_back({r.id(), 0, 0});
    while (!stack.empty()) {
      detail::walk_frame& f = stack.back();
      if (f.aux < a.raw(f.n).nsrc) {
        UOp c(&a, a.src_ids(f.n)[f.aux++]);
        if (a.marked(c.id(), epoch)) continue;
        a.mark(c.id(), epoch);
        if (!gate(c)) continue;
        stack.push_back({c.id(), 0, 0});
      } else {
        out.push_back(UOp(&a, f.n));
        stack.pop_back();
      }
    }
  }
}
template <class Gate>
constexpr std::vector<UOp> toposort(std::span<const UOp> roots, Gate&& gate) {
  std::vector<UOp> out;
  out.reserve(64);  // grown from empty, a kernel graph's order took ~8 reallocations
  toposort_into(roots, gate, out);
  return out;
}
constexpr std::vector<UOp> toposort(UOp root) {
  return toposort(std::span<const UOp>(&root, 1), [](UOp) { return true; });
}
template <class Gate>
constexpr std::vector<UOp> toposort(UOp root, Gate&& gate) {
  return toposort(std::span<const UOp>(&root, 1), gate);
}

/// Every node `u` depends on, in toposort order, without `u` itself. Cached per node; the list
/// stays valid while the arena grows.
constexpr std::span<const node_id> backward_slice_ids(UOp u) {
  Arena& a = u.arena();
  if (!a.backward_slice_cache.has(u.id())) {
    Arena::scratch_vector<UOp> order(a);
    toposort_into(std::span<const UOp>(&u, 1), [](UOp) { return true; }, *order);
    Arena::scratch_vector<node_id> ids(a);
    for (UOp n : *order)
      if (n != u) ids->push_back(n.id());
    a.backward_slice_cache.put(u.id(), *ids);
  }
  return a.backward_slice_cache.get(u.id());
}
constexpr std::vector<UOp> backward_slice(UOp u) {
  std::vector<UOp> out;
  const std::span<const node_id> ids = backward_slice_ids(u);
  out.reserve(ids.size() + 1);  // + 1: backward_slice_with_self
  for (node_id id : ids) out.push_back(UOp(&u.arena(), id));
  return out;
}
constexpr std::vector<UOp> backward_slice_with_self(UOp u) {
  auto v = backward_slice(u);
  v.push_back(u);
  return v;
}
/// Whether `x` is `u` or something `u` depends on.
constexpr bool depends_on(UOp u, UOp x) {
  if (u == x) return true;
  for (node_id id : backward_slice_ids(u))
    if (id == x.id()) return true;
  return false;
}

// --- ranges -------------------------------------------------------------------------------------

namespace detail {
constexpr void ordered_add(std::vector<node_id>& set, node_id id) {
  for (node_id x : set)
    if (x == id) return;
  set.push_back(id);
}
constexpr void ordered_remove(std::vector<node_id>& set, node_id id) {
  for (std::size_t i = 0; i < set.size(); ++i)
    if (set[i] == id) {
      set.erase(set.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}
constexpr std::size_t first_closed_src(Ops op) { return op == Ops::WMMA ? 3 : 1; }

// Computes ranges / ended ranges of u, assuming every source is already cached (`ended` and `rs`:
// the caller's buffers, cleared here).
constexpr void compute_range_props(Arena& a, UOp u, std::vector<node_id>& ended, std::vector<node_id>& rs) {
  ended.clear();
  rs.clear();
  if (GroupOp::RangeClosing.contains(u.op())) {
    for (std::size_t i = first_closed_src(u.op()); i < u.nsrc(); ++i) {
      UOp s = u.src(i);
      if (s.op() == Ops::RANGE) ordered_add(ended, s.id());
      else
        for (node_id r : a.ranges_cache.get(s.id())) ordered_add(ended, r);
    }
  } else if (u.op() == Ops::AFTER) {
    for (std::size_t i = 1; i < u.nsrc(); ++i)
      for (node_id r : a.ended_ranges_cache.get(u.src(i).id())) ordered_add(ended, r);
  }
  if (u.op() == Ops::RANGE) rs.push_back(u.id());
  for (UOp s : u.srcs())
    for (node_id r : a.ranges_cache.get(s.id())) ordered_add(rs, r);
  for (node_id e : ended) ordered_remove(rs, e);
  if (u.op() == Ops::RANGE) ordered_add(rs, u.id());  // a RANGE is inside itself even if a dep ended it
  a.ranges_cache.put(u.id(), rs);
  a.ended_ranges_cache.put(u.id(), ended);
}

constexpr void ensure_range_props(UOp u) {
  Arena& a = u.arena();
  if (a.ranges_cache.has(u.id())) return;
  // visit only the part of the graph not cached yet
  Arena::scratch_vector<UOp> order(a);
  toposort_into(std::span<const UOp>(&u, 1), [&a](UOp x) { return !a.ranges_cache.has(x.id()); }, *order);
  Arena::scratch_vector<node_id> ended(a), rs(a);
  for (UOp n : *order) compute_range_props(a, n, *ended, *rs);
}
}  // namespace detail

/// The ids of the RANGEs `u` is inside, as ranges() lists them, without building a vector (the
/// list stays valid while the arena grows).
constexpr std::span<const node_id> range_ids(UOp u) {
  detail::ensure_range_props(u);
  return u.arena().ranges_cache.get(u.id());
}
/// The RANGEs `u` is inside (insertion ordered, following source order).
constexpr std::vector<UOp> ranges(UOp u) {
  detail::ensure_range_props(u);
  std::vector<UOp> out;
  out.reserve(u.arena().ranges_cache.get(u.id()).size());
  for (node_id id : u.arena().ranges_cache.get(u.id())) out.push_back(UOp(&u.arena(), id));
  return out;
}
/// The RANGEs `u` closes (END/REDUCE/STAGE: src[1:], WMMA: src[3:], AFTER: what its deps close).
constexpr std::vector<UOp> ended_ranges(UOp u) {
  detail::ensure_range_props(u);
  std::vector<UOp> out;
  out.reserve(u.arena().ended_ranges_cache.get(u.id()).size());
  for (node_id id : u.arena().ended_ranges_cache.get(u.id())) out.push_back(UOp(&u.arena(), id));
  return out;
}
constexpr bool in_range(UOp u, UOp range) {
  for (node_id id : range_ids(u))
    if (id == range.id()) return true;
  return false;
}

/// The buffer a memory node addresses (PARAM/BUFFER/STAGE found by following src[0]), or an invalid
/// handle when it addresses none (a value, a constant).
constexpr UOp buffer_of(UOp u) {
  UOp x = u;
  while (x.op() != Ops::PARAM && x.op() != Ops::BUFFER && x.op() != Ops::STAGE) {
    if (x.nsrc() == 0) return UOp();
    x = x.src(0);
  }
  return x;
}

/// buffer_of, failing when `u` addresses no buffer.
constexpr UOp buf_uop(UOp u) {
  const UOp x = buffer_of(u);
  if (!x.valid()) {
    text t;
    t.append("buf_uop: ").append(u.arena().describe(u.id())).append(" does not address a buffer");
    fail(t.view());
  }
  return x;
}

// --- substitute ----------------------------------------------------------------------------------

/// Replaces nodes by others throughout the graph of `root` (tinygrad's substitute): the map is
/// consulted before a node's children (so the largest matching subgraph is replaced), replacements
/// are traversed afterwards (keys inside a replacement are replaced too), and tags of rebuilt
/// ancestors are kept. A replacement chain that loops is an error.
constexpr UOp substitute(UOp root, std::span<const std::pair<UOp, UOp>> mapping) {
  Arena& a = root.arena();
  // node-indexed scratch maps lent by the arena: O(graph) per call, not O(arena)
  bool any = false;
  for (const auto& [from, to] : mapping) any |= from != to;
  if (!any) return root;
  const std::size_t limit = a.size();  // a replacement chain longer than this loops
  // a subgraph holding no node of a key's op holds no key: it is its own result, not walked
  OpSet key_ops;
  for (const auto& [from, to] : mapping)
    if (from != to) key_ops = key_ops.with(from.op());
  if (!a.may_contain(root.id(), key_ops)) return root;
  Arena::scratch_map map(a);
  for (const auto& [from, to] : mapping)
    if (from != to) map.set(from.id(), to.id());
  Arena::scratch_map memo(a);  // result for each visited node id
  auto memo_get = [&](node_id id) { return memo.get(id); };
  auto memo_set = [&](node_id id, node_id v) { memo.set(id, v); };
  auto resolve = [&](node_id id) {
    std::size_t steps = 0;
    while (map.get(id) != no_node) {
      id = map.get(id);
      if (++steps > limit) {
        text t;
        t.append("substitute: the replacement of ").append(a.describe(id)).append(" leads back to itself");
        fail(t.view());
      }
    }
    return id;
  };
  struct frame {
    node_id orig;
    node_id cur;  // after applying the map
    std::size_t next;
  };
  Arena::scratch_map open(a);  // nodes whose frame is on the stack: 1
  auto is_open = [&](node_id id) { return open.get(id) == 1; };
  auto push = [&](std::vector<frame>& st, node_id orig) {
    node_id cur = resolve(orig);
    if (is_open(orig) || is_open(cur)) {
      text t;
      t.append("substitute: ").append(a.describe(orig)).append(" occurs inside its own replacement");
      fail(t.view());
    }
    open.set(orig, 1);
    open.set(cur, 1);
    st.push_back({orig, cur, 0});
  };
  std::vector<frame> stack;
  stack.reserve(32);
  push(stack, root.id());
  Arena::scratch_vector<UOp> new_srcs_v(a);
  std::vector<UOp>& new_srcs = *new_srcs_v;
  while (!stack.empty()) {
    frame& f = stack.back();
    UOp cur(&a, f.cur);
    if (f.next < cur.nsrc()) {
      node_id c = cur.src(f.next).id();
      if (memo_get(c) == no_node) {
        if (a.may_contain(c, key_ops)) {
          push(stack, c);
          continue;
        }
        memo_set(c, c);
      }
      ++f.next;
      continue;
    }
    new_srcs.clear();
    bool changed = false;
    for (UOp s : cur.srcs()) {
      node_id r = memo_get(s.id());
      changed |= r != s.id();
      new_srcs.push_back(UOp(&a, r));
    }
    node_id result = f.cur;
    if (changed) {
      UOp rebuilt = with_srcs(cur, new_srcs);
      // the rebuilt node may itself be a key of the map: go through the same procedure again
      node_id again = resolve(rebuilt.id());
      if (again != rebuilt.id() && memo_get(again) == no_node) {
        if (f.cur != f.orig) open.set(f.cur, 0);
        open.set(again, 1);
        f.cur = again;
        f.next = 0;
        continue;
      }
      result = again != rebuilt.id() ? memo_get(again) : rebuilt.id();
    }
    memo_set(f.orig, result);
    if (f.cur != f.orig) memo_set(f.cur, result);
    open.set(f.orig, 0);
    open.set(f.cur, 0);
    stack.pop_back();
  }
  return UOp(&a, memo_get(root.id()));
}
constexpr UOp substitute(UOp root, std::initializer_list<std::pair<UOp, UOp>> mapping) {
  return substitute(root, std::span<const std::pair<UOp, UOp>>(mapping.begin(), mapping.size()));
}
constexpr UOp substitute(UOp root, const std::vector<std::pair<UOp, UOp>>& mapping) {
  return substitute(root, std::span<const std::pair<UOp, UOp>>(mapping));
}

/// The graph of `root` rebuilt in the arena `dst` (same ops, dtypes, args and tags): to run a pass on
/// a fresh arena, or to move a graph between arenas.
constexpr UOp copy_graph(UOp root, Arena& dst) {
  if (&root.arena() == &dst) return root;
  const std::vector<UOp> nodes = toposort(root);
  std::vector<UOp> mapped(root.arena().size());
  std::vector<UOp> srcs;
  for (UOp u : nodes) {
    srcs.clear();
    for (std::size_t i = 0; i < u.nsrc(); ++i) srcs.push_back(mapped[u.src(i).id()]);
    mapped[u.id()] = dst.make(u.op(), u.dtype(), srcs, u.arg(), u.tag());
  }
  return mapped[root.id()];
}

}  // namespace uopcg
#endif  // UOPCG_SINGLE_CORE_GRAPH_HPP
// ---- end uopcg/core/graph.hpp ----

namespace uopcg {

// --- leaves -----------------------------------------------------------------------------------------

/// CONST of an explicit dtype.
constexpr UOp const_(Arena& a, DType dt, const Arg& value) { return a.make(Ops::CONST, dt, {}, value); }
/// A literal: weakint for integers, weakfloat for floating point, bool for bool.
template <class T>
  requires std::is_arithmetic_v<T>
constexpr UOp literal(Arena& a, T v) {
  if constexpr (std::is_same_v<T, bool>) return const_(a, DType::bool_, Arg::boolean(v));
  else if constexpr (std::is_floating_point_v<T>) return const_(a, DType::weakfloat, Arg::floating(static_cast<double>(v)));
  else return const_(a, DType::weakint, Arg(v));
}
/// A constant with the dtype of `like` (what tinygrad's const_like gives).
template <class T>
  requires std::is_arithmetic_v<T>
constexpr UOp const_like(UOp like, T v) {
  DType dt = like.dtype();
  if constexpr (std::is_same_v<T, bool>) return const_(like.arena(), dt, Arg::boolean(v));
  else if (is_float(dt)) return const_(like.arena(), dt, Arg::floating(static_cast<double>(v)));
  else if (is_bool(dt)) return const_(like.arena(), dt, Arg::boolean(v != 0));
  else return const_(like.arena(), dt, Arg(static_cast<std::int64_t>(v)));
}
/// The Invalid sentinel (a bool CONST that matches any dtype).
constexpr UOp invalid(Arena& a) { return const_(a, DType::bool_, Arg::invalid()); }

/// A kernel buffer argument: PARAM(size) with a ParamArg.
constexpr UOp param(Arena& a, std::int64_t slot, DType dt, std::int64_t size, AddrSpace space = AddrSpace::GLOBAL) {
  ParamArg p;
  p.slot = slot;
  p.dtype = dt;
  p.addrspace = space;
  return a.make(Ops::PARAM, dt, {literal(a, size)}, p.to_arg());
}
/// A symbolic integer whose value is given at launch (tinygrad's `UOp.variable`, in its kernel form):
/// an ALU PARAM named `name` with values in [lo, hi]. Its slot is -1, so the pipeline numbers it
/// after the buffers; launchers set it by name. Equal variables are one node, as in tinygrad.
constexpr UOp variable(Arena& a, std::string_view name, std::int64_t lo, std::int64_t hi, DType dt = DType::weakint) {
  if (name.empty()) fail("variable(): a variable needs a name");
  if (lo > hi) fail("variable(): empty bounds for variable " + std::string(name));
  if (!is_int(dt)) fail("variable(): variable " + std::string(name) + " must have an integer dtype");
  ParamArg p;
  p.slot = -1;
  p.dtype = dt;
  p.addrspace = AddrSpace::ALU;
  p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{lo, hi};
  p.has_name = true;
  p.name = name;
  return a.make(Ops::PARAM, dt, {a.make(Ops::STACK, DType::void_, {})}, p.to_arg());
}
/// Kernel-internal storage (LOCAL tile or REG accumulator).
constexpr UOp buffer(Arena& a, std::int64_t slot, DType dt, std::int64_t size, AddrSpace space) {
  ParamArg p;
  p.slot = slot;
  p.dtype = dt;
  p.addrspace = space;
  return a.make(Ops::BUFFER, dt, {literal(a, size)}, p.to_arg());
}
/// A loop / iteration axis over [0, bound).
constexpr UOp range(UOp bound, std::int64_t axis_id, AxisType type) {
  return bound.arena().make(Ops::RANGE, bound.dtype(), {bound}, Arg::tuple_of(axis_id, type));
}
constexpr UOp range(Arena& a, std::int64_t size, std::int64_t axis_id, AxisType type) {
  return range(literal(a, size), axis_id, type);
}
/// A RANGE's axis type, the last field of its arg (axis id, ..., AxisType); nullopt for another op
/// or a malformed arg.
constexpr std::optional<AxisType> range_axis(UOp r) {
  if (r.op() != Ops::RANGE) return std::nullopt;
  const Arg& a = r.arg();
  if (!a.is_tuple() || a.size() < 2 || a[a.size() - 1].kind() != ArgKind::axis_type) return std::nullopt;
  return a[a.size() - 1].as_axis_type();
}
/// A GPU index: "gidx<d>", "lidx<d>" or "idx<d>".
constexpr UOp special(UOp bound, std::string_view name) {
  return bound.arena().make(Ops::SPECIAL, bound.dtype(), {bound}, Arg::string(name));
}
constexpr UOp special(Arena& a, std::int64_t size, std::string_view name) { return special(literal(a, size), name); }

// --- structure ------------------------------------------------------------------------------------

namespace detail {
template <class... U>
constexpr std::vector<UOp> pack(UOp first, U... rest) {
  return std::vector<UOp>{first, rest...};
}
}  // namespace detail

constexpr UOp node(Ops op, std::initializer_list<UOp> srcs, const Arg& arg = Arg()) {
  if (srcs.size() == 0) fail("node(): needs at least one source (use Arena::make for leaves)");
  return make_node(srcs.begin()->arena(), op, std::span<const UOp>(srcs.begin(), srcs.size()), arg);
}
constexpr UOp node(Ops op, const std::vector<UOp>& srcs, const Arg& arg = Arg()) {
  if (srcs.empty()) fail("node(): needs at least one source (use Arena::make for leaves)");
  return make_node(srcs.front().arena(), op, srcs, arg);
}

template <class... I>
constexpr UOp index(UOp buf, I... idx) { return node(Ops::INDEX, {buf, idx...}); }
constexpr UOp load(UOp addr) { return node(Ops::LOAD, {addr}); }
/// Gated load: `alt` where `gate` is false.
constexpr UOp load(UOp addr, UOp alt, UOp gate) { return node(Ops::LOAD, {addr, alt, gate}); }
constexpr UOp store(UOp addr, UOp value) { return node(Ops::STORE, {addr, value}); }
constexpr UOp store(UOp addr, UOp value, UOp gate) { return node(Ops::STORE, {addr, value, gate}); }
template <class... R>
constexpr UOp reduce(UOp value, Ops op, R... ranges) {
  return node(Ops::REDUCE, {value, ranges...}, Arg::tuple_of(op, 0));
}
constexpr UOp reduce(UOp value, Ops op, const std::vector<UOp>& ranges) {
  std::vector<UOp> s{value};
  s.insert(s.end(), ranges.begin(), ranges.end());
  return node(Ops::REDUCE, s, Arg::tuple_of(op, 0));
}
template <class... D>
constexpr UOp after(UOp x, D... deps) { return node(Ops::AFTER, {x, deps...}); }
template <class... R>
constexpr UOp end(UOp body, R... ranges) { return node(Ops::END, {body, ranges...}); }
constexpr UOp end(UOp body, const std::vector<UOp>& ranges) {
  std::vector<UOp> s{body};
  s.insert(s.end(), ranges.begin(), ranges.end());
  return node(Ops::END, s);
}
template <class... S>
constexpr UOp group(UOp first, S... rest) { return node(Ops::GROUP, {first, rest...}); }
template <class... S>
constexpr UOp barrier(UOp first, S... rest) { return node(Ops::BARRIER, {first, rest...}); }
template <class... S>
constexpr UOp stack(UOp first, S... rest) { return node(Ops::STACK, {first, rest...}); }
/// STAGE: materialize `value` for every combination of `ranges` into a buffer of `space`.
template <class... R>
constexpr UOp stage(UOp value, AddrSpace space, R... ranges) {
  BufferizeOpts o;
  o.addrspace = space;
  return node(Ops::STAGE, {value, ranges...}, o.to_arg());
}
/// The kernel root.
constexpr UOp sink(const std::vector<UOp>& effects, const KernelInfo& info = KernelInfo{}) {
  if (effects.empty()) fail("sink(): needs at least one side effect");
  return effects.front().arena().make(Ops::SINK, DType::void_, effects, info.to_arg());
}
template <class... S>
constexpr UOp sink(UOp first, S... rest) { return sink(std::vector<UOp>{first, rest...}); }

// --- ALU --------------------------------------------------------------------------------------------

constexpr UOp cast(UOp x, DType dt) { return x.arena().make(Ops::CAST, dt, {x}, Arg::dtype(dt)); }
constexpr UOp bitcast(UOp x, DType dt) { return x.arena().make(Ops::BITCAST, dt, {x}, Arg::dtype(dt)); }
constexpr UOp alu(Ops op, UOp a) { return node(op, {a}); }
constexpr UOp alu(Ops op, UOp a, UOp b) { return node(op, {a, b}); }
constexpr UOp where(UOp c, UOp t, UOp f) { return node(Ops::WHERE, {c, t, f}); }
constexpr UOp exp2(UOp x) { return alu(Ops::EXP2, x); }
constexpr UOp log2(UOp x) { return alu(Ops::LOG2, x); }
constexpr UOp sin(UOp x) { return alu(Ops::SIN, x); }
constexpr UOp sqrt(UOp x) { return alu(Ops::SQRT, x); }
constexpr UOp reciprocal(UOp x) { return alu(Ops::RECIPROCAL, x); }
constexpr UOp trunc(UOp x) { return alu(Ops::TRUNC, x); }
constexpr UOp maximum(UOp a, UOp b) { return alu(Ops::MAX, a, b); }
constexpr UOp floordiv(UOp a, UOp b) { return alu(Ops::FLOORDIV, a, b); }
constexpr UOp floormod(UOp a, UOp b) { return alu(Ops::FLOORMOD, a, b); }
constexpr UOp cdiv(UOp a, UOp b) { return alu(Ops::CDIV, a, b); }
constexpr UOp cmod(UOp a, UOp b) { return alu(Ops::CMOD, a, b); }
constexpr UOp ne(UOp a, UOp b) { return alu(Ops::CMPNE, a, b); }
/// Logical not of a bool: CMPNE(x, True); other dtypes are cast to bool first.
constexpr UOp logical_not(UOp x) {
  UOp b = x.dtype() == DType::bool_ ? x : cast(x, DType::bool_);
  return ne(b, literal(x.arena(), true));
}
constexpr UOp eq(UOp a, UOp b) { return logical_not(ne(a, b)); }
/// x.valid(cond) = WHERE(cond, x, Invalid): x, meaningful only where cond holds.
constexpr UOp valid(UOp x, UOp cond) { return where(cond, x, invalid(x.arena())); }

// Operands of the operators: a UOp, or a C++ number that becomes a weak literal. Class traits, not
// `_v` variable templates: g++ mangles every variable it instantiates, and overload resolution of
// `a + b` on two rule sets asks this of types whose names spell every rule.
template <class T>
concept uop_operand = std::is_same<std::remove_cvref_t<T>, UOp>::value || std::is_arithmetic<std::remove_cvref_t<T>>::value;

namespace detail {
template <class T>
constexpr UOp as_uop(Arena& a, const T& v) {
  if constexpr (std::is_same_v<T, UOp>) return v;
  else return literal(a, v);
}
template <class A, class B>
constexpr Arena& arena_of(const A& a, const B& b) {
  if constexpr (std::is_same_v<A, UOp>) return a.arena();
  else return b.arena();
}
}  // namespace detail

#define UOPCG_BINARY_OPERATOR(OP, BUILD)                                                        \
  template <uop_operand A, uop_operand B>                                                       \
    requires(std::same_as<A, UOp> || std::same_as<B, UOp>)                                      \
  constexpr UOp operator OP(const A& a_, const B& b_) {                                         \
    Arena& ar = detail::arena_of(a_, b_);                                                       \
    UOp a = detail::as_uop(ar, a_), b = detail::as_uop(ar, b_);                                  \
    return BUILD;                                                                               \
  }
UOPCG_BINARY_OPERATOR(+, alu(Ops::ADD, a, b))
UOPCG_BINARY_OPERATOR(*, alu(Ops::MUL, a, b))
UOPCG_BINARY_OPERATOR(/, is_float(least_upper_dtype(a.dtype(), b.dtype())) ? alu(Ops::MUL, a, reciprocal(b))
                                                                           : floordiv(a, b))
UOPCG_BINARY_OPERATOR(%, floormod(a, b))
UOPCG_BINARY_OPERATOR(&, alu(Ops::AND, a, b))
UOPCG_BINARY_OPERATOR(|, alu(Ops::OR, a, b))
UOPCG_BINARY_OPERATOR(^, alu(Ops::XOR, a, b))
UOPCG_BINARY_OPERATOR(<<, alu(Ops::SHL, a, b))
UOPCG_BINARY_OPERATOR(>>, alu(Ops::SHR, a, b))
UOPCG_BINARY_OPERATOR(<, alu(Ops::CMPLT, a, b))
UOPCG_BINARY_OPERATOR(>, alu(Ops::CMPLT, b, a))
UOPCG_BINARY_OPERATOR(<=, logical_not(alu(Ops::CMPLT, b, a)))
UOPCG_BINARY_OPERATOR(>=, logical_not(alu(Ops::CMPLT, a, b)))
#undef UOPCG_BINARY_OPERATOR

constexpr UOp operator-(UOp x) { return alu(Ops::MUL, x, literal(x.arena(), -1)); }
/// x - y is ADD(x, MUL(y, -1)); subtracting a number adds its negation.
constexpr UOp operator-(UOp a, UOp b) { return alu(Ops::ADD, a, -b); }
template <class T>
  requires std::is_arithmetic_v<T>
constexpr UOp operator-(UOp a, T b) { return alu(Ops::ADD, a, literal(a.arena(), -b)); }
template <class T>
  requires std::is_arithmetic_v<T>
constexpr UOp operator-(T a, UOp b) { return alu(Ops::ADD, literal(b.arena(), a), -b); }
constexpr UOp operator~(UOp x) { return alu(Ops::XOR, x, literal(x.arena(), -1)); }
/// min(a, b) built from MAX: floats -max(-a, -b), ints ~max(~a, ~b).
constexpr UOp minimum(UOp a, UOp b) {
  if (is_float(least_upper_dtype(a.dtype(), b.dtype()))) return -maximum(-a, -b);
  return ~maximum(~a, ~b);
}

}  // namespace uopcg
#endif  // UOPCG_SINGLE_CORE_BUILDER_HPP
// ---- end uopcg/core/builder.hpp ----
// ---- begin uopcg/core/print.hpp ----
#ifndef UOPCG_SINGLE_CORE_PRINT_HPP
#define UOPCG_SINGLE_CORE_PRINT_HPP
// Printing graphs: a one-line form per node and a readable multi-line dump (in toposort order, with
// local numbering, shapes and address spaces). Built on uopcg::text, so it runs in constant
// evaluation too.



namespace uopcg {

namespace detail {
constexpr void print_shape(text& out, UOp u) {
  auto s = u.shape();
  if (s.ill_formed()) {
    out.append("<ill-formed>");
    return;
  }
  if (!s.has_value()) {
    out.append("None");
    return;
  }
  out.append('(');
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out.append(", ");
    out.append(s[i]);
  }
  if (s.size() == 1) out.append(',');
  out.append(')');
}

// `number(u)` gives the label printed for a source.
template <class Number>
constexpr void print_line(text& out, UOp u, Number&& number) {
  out.append(name(u.op())).append(' ').append(name(u.dtype())).append(" (");
  for (std::size_t i = 0; i < u.nsrc(); ++i) {
    if (i) out.append(", ");
    out.append('%').append(number(u.src(i)));
  }
  out.append(')');
  if (!u.arg().is_none()) {
    out.append(' ');
    u.arg().print(out);
  }
  if (u.has_tag()) {
    out.append(" tag=");
    u.tag().print(out);
  }
}
}  // namespace detail

/// One line: "ADD weakint (%3, %5)" with arena ids as source labels, prefixed by "%<id> = ".
constexpr text to_text(UOp u) {
  text out;
  out.append('%').append(u.id()).append(" = ");
  detail::print_line(out, u, [](UOp s) { return s.id(); });
  return out;
}

/// Multi-line dump of the graph of `root`, one node per line in toposort order:
///   %<n> <OP> <dtype> (<srcs>) <arg> [tag=...]   ; shape=<shape> <addrspace>
constexpr text print_graph(UOp root) {
  auto nodes = toposort(root);
  std::vector<std::uint32_t> local(root.arena().size(), 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) local[nodes[i].id()] = static_cast<std::uint32_t>(i);
  text out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    UOp u = nodes[i];
    out.append('%').append(i).append(' ');
    out.pad_to(6);
    detail::print_line(out, u, [&](UOp s) { return local[s.id()]; });
    out.append("   ; shape=");
    detail::print_shape(out, u);
    if (auto a = u.addrspace()) out.append(' ').append(name(*a));
    out.append('\n');
  }
  return out;
}

/// A linearized program (a list of nodes in execution order), numbered by position.
constexpr text print_program(std::span<const UOp> program) {
  text out;
  if (program.empty()) return out;
  std::vector<std::uint32_t> local(program[0].arena().size(), 0xFFFFFFFFu);
  for (std::size_t i = 0; i < program.size(); ++i) local[program[i].id()] = static_cast<std::uint32_t>(i);
  for (std::size_t i = 0; i < program.size(); ++i) {
    out.append('%').append(i).append(' ');
    out.pad_to(6);
    detail::print_line(out, program[i], [&](UOp s) { return local[s.id()]; });
    out.append('\n');
  }
  return out;
}

inline std::string to_string(UOp u) { return to_text(u).str(); }
inline std::string graph_to_string(UOp root) { return print_graph(root).str(); }

}  // namespace uopcg
#endif  // UOPCG_SINGLE_CORE_PRINT_HPP
// ---- end uopcg/core/print.hpp ----
// ---- begin uopcg/core/verify.hpp ----
#ifndef UOPCG_SINGLE_CORE_VERIFY_HPP
#define UOPCG_SINGLE_CORE_VERIFY_HPP
// The IR's typing rules (tinygrad's spec, in our words): a graph that breaks them is rejected before
// any pass runs, with an error naming the node. verify() checks every node of a graph; check_node()
// one node. Works in constant evaluation.



namespace uopcg {

namespace detail {
constexpr bool is_memory(std::optional<AddrSpace> a) {
  return a && (*a == AddrSpace::GLOBAL || *a == AddrSpace::LOCAL || *a == AddrSpace::REG);
}
// Invalid, possibly reshaped/expanded/stacked into a vector of Invalids.
constexpr bool is_invalid_const(UOp u) {
  while (u.nsrc() > 0 && (u.op() == Ops::RESHAPE || u.op() == Ops::EXPAND || u.op() == Ops::PERMUTE || u.op() == Ops::STACK))
    u = u.src(0);
  return u.op() == Ops::CONST && u.arg().is_invalid();
}
// Weak literals adopt the width of their strong neighbours; Invalid matches any dtype.
constexpr bool dtype_compatible(DType value, DType expected, UOp src) {
  if (value == expected || is_invalid_const(src)) return true;
  // a weak node takes strong operands of its own kind only (a weakint MUL of an fp8 value is no index)
  if (is_weak(expected) && !is_weak(value)) return (is_int(value) && is_int(expected)) || (is_float(value) && is_float(expected));
  if (is_weak(value) || is_weak(expected)) return least_upper_dtype(value, expected) == (is_weak(value) ? expected : value) ||
                                                    (is_int(value) && is_int(expected)) ||
                                                    (is_float(value) && is_float(expected));
  return false;
}
// Whether the graph of `u` holds a RANGE or SPECIAL (a value that varies inside the kernel).
constexpr bool varies_in_kernel(UOp u) {
  constexpr OpSet loop_vars{Ops::RANGE, Ops::SPECIAL};
  if (!u.arena().may_contain(u.id(), loop_vars)) return false;  // the op summary proves it: no walk
  for (UOp x : toposort(u))
    if (loop_vars.contains(x.op())) return true;
  return false;
}
// Axis types that become launch dimensions (gpudims: GLOBAL/THREAD global, LOCAL/WARP/GROUP_REDUCE local).
constexpr bool is_launch_axis(AxisType t) {
  return t == AxisType::GLOBAL || t == AxisType::THREAD || t == AxisType::LOCAL || t == AxisType::WARP ||
         t == AxisType::GROUP_REDUCE;
}
}  // namespace detail

/// Why node `u` breaks the IR's rules, or an empty text when it does not.
constexpr text check_node(UOp u) {
  text why;
  const Ops op = u.op();
  const DType dt = u.dtype();
  const Arg& arg = u.arg();
  const int n = static_cast<int>(u.nsrc());
  auto bad = [&](std::string_view msg) {
    if (why.empty()) why.append(msg);
  };
  if (!src_count(op).allows(n)) {
    text t;
    t.append("has ").append(n).append(" sources, which ").append(name(op)).append(" never has");
    return t;
  }
  if (u.shape().ill_formed()) bad("has an ill-formed shape (mismatched broadcast, bad size or permutation)");
  if (GroupOp::Comparison.contains(op)) {
    if (dt != DType::bool_) bad("is a comparison but its dtype is not bool");
  } else if (op == Ops::WHERE) {
    if (u.src(0).dtype() != DType::bool_) bad("is a WHERE whose condition is not bool");
    for (int i = 1; i < 3; ++i)
      if (!detail::dtype_compatible(u.src(i).dtype(), dt, u.src(i))) bad("is a WHERE whose branch dtype differs from its own");
  } else if (op == Ops::SHL || op == Ops::SHR) {
    if (!is_int(dt) && !is_bool(dt)) bad("shifts a value that is not an integer");
  } else if (GroupOp::Binary.contains(op) || op == Ops::MULACC) {
    if (dt == DType::void_) bad("is an ALU op with dtype void");
    for (UOp s : u.srcs())
      if (!detail::dtype_compatible(s.dtype(), dt, s) && !(is_bool(s.dtype()) && (op == Ops::AND || op == Ops::OR || op == Ops::XOR)))
        bad("has a source whose dtype is incompatible with its own");
    if ((op == Ops::AND || op == Ops::OR || op == Ops::XOR) && is_float(dt)) bad("is a bit operation on a float");
    if ((op == Ops::FLOORDIV || op == Ops::FLOORMOD || op == Ops::CDIV || op == Ops::CMOD) && !is_int(dt))
      bad("is an integer division or modulo whose dtype is not an integer");
  } else if (GroupOp::Unary.contains(op)) {
    if (dt == DType::void_) bad("is an ALU op with dtype void");
  }
  switch (op) {
    case Ops::CAST:
    case Ops::BITCAST:
      if (arg.kind() != ArgKind::dtype || arg.as_dtype() != dt) bad("has an arg that is not its own dtype");
      break;
    case Ops::CONST:
      if (!arg.is_number() && !arg.is_invalid() && arg.kind() != ArgKind::bigint) bad("is a CONST whose arg is not a number or Invalid");
      if (arg.is_float() && !is_float(dt)) bad("is a CONST holding a float in an integer or bool dtype");
      break;
    case Ops::PARAM:
    case Ops::BUFFER:
      if (arg.kind() != ArgKind::param_arg) bad("has an arg that is not a ParamArg");
      else if (arg[1].as_dtype() != dt) bad("has a dtype that differs from its ParamArg's");
      // the shape: an int CONST, a STACK of them, NOOP (unknown), or the empty STACK of a scalar
      // (tinygrad's Variable is PARAM(STACK()) with ALU addrspace)
      if (n == 1 && !is_int(u.src(0).dtype()) && u.src(0).op() != Ops::NOOP &&
          !(u.src(0).op() == Ops::STACK && u.src(0).nsrc() == 0))
        bad("has a size that is not an integer");
      if (n == 1 && u.src(0).op() == Ops::CONST && u.src(0).arg().is_number() && !u.src(0).arg().is_float() &&
          u.src(0).vmax() < 0)
        bad("has a negative size");
      break;
    case Ops::RANGE:
      if (!is_int(dt)) bad("is a RANGE whose dtype is not an integer");
      if (!is_int(u.src(0).dtype())) bad("is a RANGE whose bound is not an integer");
      if (!arg.is_tuple() || arg.size() < 2 || arg[arg.size() - 1].kind() != ArgKind::axis_type)
        bad("is a RANGE whose arg is not (axis id..., AxisType)");
      // a launch dimension's or an UPCAST/UNROLL range's size is one number for the whole kernel
      // (a variable's, at most): one sized by a loop index became `get_local_id(0); /* gidx0 */`, a
      // kernel no launch can size. A serial loop may be sized by an enclosing range or by loaded
      // data (a triangular or ragged loop)
      // a loop that can never run: tinygrad folds empty tensors before code generation, and the
      // stages assume a range holds at least one value (an empty REDUCE linearized out of order)
      else if (u.src(0).vmax() <= 0)
        bad("is an empty RANGE (its size is never above 0): a kernel over no elements has nothing to compute, "
            "and a reduction over none is its identity");
      else if (const AxisType at = arg[arg.size() - 1].as_axis_type();
               (detail::is_launch_axis(at) || at == AxisType::UPCAST || at == AxisType::UNROLL) && detail::varies_in_kernel(u.src(0)))
        bad(detail::is_launch_axis(at)
                ? "is a launch-dimension RANGE (GLOBAL, LOCAL, WARP, THREAD or GROUP_REDUCE) whose size varies inside the kernel (it depends on a RANGE or SPECIAL)"
                : "is an UPCAST/UNROLL RANGE whose size varies inside the kernel (it depends on a RANGE or SPECIAL): its lanes need one size");
      break;
    case Ops::SPECIAL:
      if (!is_int(dt)) bad("is a SPECIAL whose dtype is not an integer");
      if (!is_int(u.src(0).dtype())) bad("is a SPECIAL whose bound is not an integer");
      if (arg.kind() != ArgKind::string) bad("is a SPECIAL whose arg is not its name");
      if (detail::varies_in_kernel(u.src(0))) bad("is a SPECIAL whose size varies inside the kernel (it depends on a RANGE or SPECIAL)");
      break;
    case Ops::LOAD:
      if (!detail::is_memory(u.src(0).addrspace())) bad("loads from something that is not memory (a buffer or an address into one)");
      if (n == 3 && u.src(2).dtype() != DType::bool_) bad("is a gated LOAD whose gate is not bool");
      if (n >= 1 && u.src(0).dtype() != DType::void_ && !detail::dtype_compatible(dt, u.src(0).dtype(), u.src(0)))
        bad("loads a dtype that differs from the memory's");
      break;
    case Ops::STORE:
      if (!detail::is_memory(u.src(0).addrspace())) bad("stores to something that is not memory (a buffer or an address into one)");
      if (dt != DType::void_) bad("is a STORE whose dtype is not void");
      if (n == 3 && u.src(2).dtype() != DType::bool_) bad("is a gated STORE whose gate is not bool");
      // no implicit conversion: an upcast store would reinterpret the value's bits as the buffer's dtype
      if (n >= 2 && u.src(0).dtype() != DType::void_ && !detail::dtype_compatible(u.src(1).dtype(), u.src(0).dtype(), u.src(1)))
        bad("stores a value whose dtype differs from the memory's");
      break;
    case Ops::INDEX:
      if ((u.src(0).op() == Ops::PARAM || u.src(0).op() == Ops::BUFFER) && u.src(0).dtype() != dt)
        bad("indexes a buffer whose element dtype differs from its own");
      // (an INDEX as an index is a gather: before explicit loads an INDEX also stands for its value)
      for (int i = 1; i < n; ++i)
        if ((u.src(i).op() == Ops::PARAM || u.src(i).op() == Ops::BUFFER) && detail::is_memory(u.src(i).addrspace()))
          bad("has an index that is a buffer, not a value");
      for (int i = 1; i < n; ++i)
        if (!is_int(u.src(i).dtype()) && !detail::is_invalid_const(u.src(i)) &&
            !(u.src(i).op() == Ops::WHERE && is_int(u.src(i).src(1).dtype())))
          bad("has an index that is not an integer");
      break;
    case Ops::REDUCE:
      if (!arg.is_tuple() || arg.size() != 2 || arg[0].kind() != ArgKind::op || arg[1].kind() != ArgKind::int_ ||
          !GroupOp::Reduce.contains(arg[0].as_op()))
        bad("is a REDUCE whose arg is not (ADD|MUL|MAX, n_horizontal)");
      // a REDUCE folds values of its own dtype (the lowering builds the accumulator from the value)
      if (n >= 1 && !detail::dtype_compatible(u.src(0).dtype(), dt, u.src(0)))
        bad("is a REDUCE whose value's dtype differs from its own");
      break;
    case Ops::END:
      if (dt != DType::void_) bad("is an END whose dtype is not void");
      // closes RANGEs, or every range inside an index expression, or a bool loop-again condition
      for (int i = 1; i < n; ++i)
        if (!is_int(u.src(i).dtype()) && u.src(i).dtype() != DType::bool_) bad("ends something that is not a range or index expression");
      break;
    case Ops::STAGE:
      if (arg.kind() != ArgKind::bufferize_opts) bad("is a STAGE whose arg is not a BufferizeOpts");
      break;
    case Ops::SINK:
    case Ops::GROUP:
    case Ops::BARRIER:
      if (dt != DType::void_) bad("is a statement whose dtype is not void");
      break;
    default:
      break;
  }
  return why;
}

/// Why a kernel's ranges are out of scope, or an empty text: every RANGE is a loop that something
/// closes — the END of the statements it runs, the REDUCE that folds over it, the STAGE that
/// materializes it — and a node that uses a range outside its closer (a REDUCE's range in the
/// index of the store of its result, say) reads a loop variable that has no value there.
constexpr text check_scopes(UOp root) {
  const std::vector<UOp> order = toposort(root);
  std::vector<UOp> ranges;
  for (UOp u : order)
    if (u.op() == Ops::RANGE) ranges.push_back(u);
  if (ranges.empty()) return {};
  const std::size_t words = (ranges.size() + 63) / 64;
  auto bit_of = [&](UOp r) {
    for (std::size_t i = 0; i < ranges.size(); ++i)
      if (ranges[i] == r) return i;
    return ranges.size();
  };
  // open[k]: the ranges node order[k] depends on that nothing below it closes; ended[k]: the ranges
  // it ends. An AFTER ends what its dependencies end (tinygrad's `ended_ranges`): a buffer read
  // after the END of a loop whose stores it depends on is outside that loop
  std::vector<std::uint64_t> open(order.size() * words, 0), ended(order.size() * words, 0);
  std::vector<std::size_t> slot(root.arena().size(), 0);
  for (std::size_t k = 0; k < order.size(); ++k) slot[order[k].id()] = k;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const UOp u = order[k];
    std::uint64_t* mine = &open[k * words];
    const bool closer = u.op() == Ops::END || u.op() == Ops::REDUCE || u.op() == Ops::STAGE;
    for (std::size_t i = 0; i < u.nsrc(); ++i) {
      const std::uint64_t* s = &open[slot[u.src(i).id()] * words];
      for (std::size_t w = 0; w < words; ++w) mine[w] |= s[w];
    }
    if (u.op() == Ops::RANGE) {
      const std::size_t b = bit_of(u);
      mine[b / 64] |= std::uint64_t{1} << (b % 64);
    }
    std::uint64_t* ends = &ended[k * words];
    if (closer)  // sources 1... name what is closed: ranges, or index expressions whose ranges are
      for (std::size_t i = 1; i < u.nsrc(); ++i) {
        const std::uint64_t* s = &open[slot[u.src(i).id()] * words];
        for (std::size_t w = 0; w < words; ++w) ends[w] |= s[w];
      }
    if (u.op() == Ops::AFTER)
      for (std::size_t i = 1; i < u.nsrc(); ++i) {
        const std::uint64_t* s = &ended[slot[u.src(i).id()] * words];
        for (std::size_t w = 0; w < words; ++w) ends[w] |= s[w];
      }
    for (std::size_t w = 0; w < words; ++w) mine[w] &= ~ends[w];
  }
  const std::uint64_t* at_root = &open[slot[root.id()] * words];
  for (std::size_t b = 0; b < ranges.size(); ++b) {
    if (!(at_root[b / 64] >> (b % 64) & 1)) continue;
    // name the outermost statement it escapes into: a source of the root that has it open
    UOp user = root;
    for (UOp s : root.srcs())
      if (open[slot[s.id()] * words + b / 64] >> (b % 64) & 1) {
        user = s;
        break;
      }
    while ((user.op() == Ops::END || user.op() == Ops::GROUP) && user.nsrc() > 0) {
      UOp next = user;
      for (UOp s : user.srcs())
        if (open[slot[s.id()] * words + b / 64] >> (b % 64) & 1) {
          next = s;
          break;
        }
      if (next == user) break;
      user = next;
    }
    text t;
    t.append(root.arena().describe(ranges[b].id()))
        .append(" is used outside the END, REDUCE or STAGE that closes it, by ")
        .append(root.arena().describe(user.id()))
        .append(" (every RANGE a statement runs under must be closed by an END of it; a REDUCE's ranges exist only inside it)");
    return t;
  }
  return {};
}

/// The message verify() fails with for the graph of `root` (its first node that breaks a rule), or
/// empty text.
constexpr text graph_problem(UOp root, std::string_view what = "verify") {
  for (UOp u : toposort(root)) {
    text why = check_node(u);
    if (!why.empty()) {
      text t;
      t.append(what).append(": ").append(u.arena().describe(u.id())).append(' ').append(why);
      return t;
    }
  }
  return {};
}
/// Checks every node of the graph of `root`; fails naming the first node that breaks a rule.
constexpr void verify(UOp root, std::string_view what = "verify") {
  if (text t = graph_problem(root, what); !t.empty()) fail(t.view());
}
/// The message verify_kernel fails with, or empty text.
constexpr text kernel_problem(UOp root, std::string_view what = "verify") {
  text t = graph_problem(root, what);
  if (t.empty())
    if (text why = check_scopes(root); !why.empty()) t.append(what).append(": ").append(why);
  return t;
}
/// verify(), and for a kernel as it enters code generation (an AST or a post-opts graph, where
/// every loop is still an END, REDUCE or STAGE of its range) that its ranges are in scope. Later
/// stages lower REDUCEs into accumulators and no longer keep that form.
constexpr void verify_kernel(UOp root, std::string_view what = "verify") {
  if (text t = kernel_problem(root, what); !t.empty()) fail(t.view());
}
/// Same, for a linearized program.
constexpr void verify(std::span<const UOp> program, std::string_view what = "verify") {
  for (std::size_t i = 0; i < program.size(); ++i) {
    text why = check_node(program[i]);
    if (!why.empty()) {
      text t;
      t.append(what).append(": instruction ").append(i).append(", ").append(program[i].arena().describe(program[i].id()))
          .append(' ').append(why);
      fail(t.view());
    }
  }
}

}  // namespace uopcg
#endif  // UOPCG_SINGLE_CORE_VERIFY_HPP
// ---- end uopcg/core/verify.hpp ----

namespace uopcg::linked {

/// Called after every stage with its name (as in codegen::pipeline_stages, then "linearize"), the
/// graph it produced and its time in microseconds (codegen::PipelineOptions::trace).
using stage_trace = std::function<void(std::string_view stage, UOp graph, double us)>;

// The inline namespace is part of every entry point's linker name, so that the linker's complaint
// about a program without the implementation names the macro to define.
inline namespace uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit {

/// The post-opts graph `sink` as OpenCL C: codegen::compile_opencl (the pipeline, then the emitter).
render::RenderedKernel compile_opencl(UOp sink, const Target& target);

/// The linearized program of the post-opts graph `sink`: codegen::run_pipeline's program, with
/// `trace` (when set) called after every stage.
std::vector<UOp> to_program(UOp sink, const Target& target, const stage_trace& trace = {});

/// A linearized program (what to_program returns) as OpenCL C for `target`'s device: the emitter,
/// render::render_opencl, compiled with the pipeline rather than in every translation unit.
render::RenderedKernel render_opencl(std::span<const UOp> program, const Target& target);

/// A kernel's AST as OpenCL C (codegen::compile_ast_opencl: front stages, kernel opts, pipeline,
/// emitter), with tinygrad's choice of opts (the AST's opts_to_apply, else the heuristics).
render::RenderedKernel compile_ast_opencl(UOp ast, const Target& target);

/// The same with exactly `opts`, in order (an invalid one is an error naming it).
render::RenderedKernel compile_ast_opencl(UOp ast, const Target& target, std::span<const Opt> opts);

}  // namespace uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit
}  // namespace uopcg::linked

// The run-time paths of the core's graph building (core/detail/out_of_line.hpp) are compiled by the
// implementation translation unit too, not by every user of this header. A program that includes
// this header (or a single header of io/) and calls no entry point still needs them once: one of its
// translation units defines UOPCG_CORE_IMPLEMENTATION (those paths alone) or UOPCG_IMPLEMENTATION.
namespace uopcg {
// One list for both: defined where the macro asks for them, declared extern everywhere else.
#if defined(UOPCG_IMPLEMENTATION) || defined(UOPCG_CORE_IMPLEMENTATION)
#define UOPCG_DETAIL_INSTANCE template
#else
#define UOPCG_DETAIL_INSTANCE extern template
#endif
UOPCG_DETAIL_INSTANCE void Arena::set_up_out_of_line<detail::out_of_line_tag>();
UOPCG_DETAIL_INSTANCE UOp Arena::make_out_of_line<detail::out_of_line_tag>(Ops, DType, std::span<const UOp>, const Arg&,
                                                                           const Arg&);
UOPCG_DETAIL_INSTANCE Arg ParamArg::record_out_of_line<detail::out_of_line_tag>() const;
UOPCG_DETAIL_INSTANCE Arg KernelInfo::record_out_of_line<detail::out_of_line_tag>() const;
UOPCG_DETAIL_INSTANCE void Arena::set_up<detail::out_of_line_tag>();
UOPCG_DETAIL_INSTANCE UOp Arena::make_node<detail::out_of_line_tag>(Ops, DType, std::span<const UOp>, const Arg&, const Arg&);
UOPCG_DETAIL_INSTANCE Arg ParamArg::record<detail::out_of_line_tag>() const;
UOPCG_DETAIL_INSTANCE Arg KernelInfo::record<detail::out_of_line_tag>() const;
#undef UOPCG_DETAIL_INSTANCE
}  // namespace uopcg

#if defined(UOPCG_IMPLEMENTATION)
#include "compile_impl.hpp"  // single_include/uopcg/compile_impl.hpp
#endif
#endif  // UOPCG_SINGLE_COMPILE_HPP
// ---- end uopcg/compile.hpp ----
