// Ops of the tinygrad snapshot (with its enum values, which order nodes structurally) and the op
// groups as constexpr sets.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

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
