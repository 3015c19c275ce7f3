// The bit layout of the float dtypes (sign, exponent, mantissa), which the float emulation
// (dtype_decomps.hpp) and the transcendental decompositions (transcendental.hpp) compute with.
#pragma once

#include "../core/dtype.hpp"
#include "../core/text.hpp"

namespace uopcg::codegen {

/// Bit layout of a float dtype: total bits, exponent bits, mantissa bits, exponent bias.
struct FloatFormat {
  int bits = 0, exp = 0, man = 0, bias = 0;
};
constexpr FloatFormat float_format(DType d) {
  using enum DType;
  switch (d) {
    case float16: return {16, 5, 10, 15};
    case bfloat16: return {16, 8, 7, 127};
    case float32: return {32, 8, 23, 127};
    case float64: return {64, 11, 52, 1023};
    case fp8e4m3: return {8, 4, 3, 7};
    case fp8e5m2: return {8, 5, 2, 15};
    case fp8e4m3fnuz: return {8, 4, 3, 8};
    case fp8e5m2fnuz: return {8, 5, 2, 16};
    default: fail("float_format: ", name(d), " is not a float dtype");
  }
}
constexpr bool is_fp8(DType d) {
  using enum DType;
  return d == fp8e4m3 || d == fp8e5m2 || d == fp8e4m3fnuz || d == fp8e5m2fnuz;
}
constexpr bool is_fnuz(DType d) {
  using enum DType;
  return d == fp8e4m3fnuz || d == fp8e5m2fnuz;
}
/// The unsigned dtype holding the bits of float dtype `d`.
constexpr DType bits_dtype(DType d) {
  using enum DType;
  switch (float_format(d).bits) {
    case 8: return uint8;
    case 16: return uint16;
    case 32: return uint32;
    default: return uint64;
  }
}
/// The signed integer dtype of the float's width.
constexpr DType sbits_dtype(DType d) {
  using enum DType;
  switch (float_format(d).bits) {
    case 8: return int8;
    case 16: return int16;
    case 32: return int32;
    default: return int64;
  }
}

}  // namespace uopcg::codegen
