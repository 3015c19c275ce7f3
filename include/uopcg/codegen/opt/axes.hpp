// How kernel opts see an AxisType (tinygrad/uop/ops.py: axis_to_pos, axis_letters, axis_colors):
// its position class in the Scheduler's axis list, its letter in shape strings ("g0", "R1"), and
// its colour in kernel names, which carry ANSI colour codes as tinygrad's do.
#pragma once

#include <string_view>

#include "../../core/error.hpp"
#include "../../core/ops.hpp"
#include "../../core/text.hpp"

namespace uopcg::codegen::opt {

/// Sort class of an axis: the axis list orders by this, then by the range's id (and split part).
/// LOCAL and GROUP_REDUCE share a class, so they interleave by id.
constexpr int axis_position(AxisType t) {
  switch (t) {
    case AxisType::DEVICE: return -2;
    case AxisType::WEAK: case AxisType::LOOP: return -1;
    case AxisType::GLOBAL: case AxisType::THREAD: return 0;
    case AxisType::WARP: return 1;
    case AxisType::LOCAL: case AxisType::GROUP_REDUCE: return 2;
    case AxisType::UPCAST: return 3;
    case AxisType::REDUCE: return 4;
    case AxisType::UNROLL: return 5;
    default: break;
  }
  text msg;
  msg.append("kernel opts: a RANGE of type AxisType.").append(name(t)).append(" has no place in the axis list");
  fail(msg.view());
}

/// The letter of an axis in shape strings.
constexpr char axis_shape_letter(AxisType t) {
  switch (t) {
    case AxisType::DEVICE: return 'd';
    case AxisType::GLOBAL: return 'g';
    case AxisType::THREAD: return 't';
    case AxisType::LOCAL: return 'l';
    case AxisType::WARP: return 'w';
    case AxisType::WEAK: case AxisType::LOOP: return 'L';
    case AxisType::UPCAST: return 'u';
    case AxisType::GROUP_REDUCE: return 'G';
    case AxisType::REDUCE: return 'R';
    case AxisType::UNROLL: return 'r';
    default: return '?';
  }
}

/// A terminal colour of tinygrad's helpers.colored: the eight basic ones, bright when `bright`.
struct Color {
  enum Base : int { black, red, green, yellow, blue, magenta, cyan, white };
  Base base = white;
  bool bright = false;
  /// The SGR code: 30 + base, + 60 when bright.
  constexpr int code() const { return 30 + static_cast<int>(base) + (bright ? 60 : 0); }
};

/// The colour of an axis of type `t` in a kernel name.
constexpr Color axis_color(AxisType t) {
  switch (t) {
    case AxisType::DEVICE: return {Color::green, false};
    case AxisType::GLOBAL: return {Color::blue, false};
    case AxisType::THREAD: return {Color::blue, true};
    case AxisType::LOCAL: return {Color::cyan, false};
    case AxisType::WARP: return {Color::cyan, true};
    case AxisType::WEAK: case AxisType::LOOP: return {Color::white, true};
    case AxisType::UPCAST: return {Color::yellow, false};
    case AxisType::GROUP_REDUCE: return {Color::red, true};
    case AxisType::REDUCE: return {Color::red, false};
    case AxisType::UNROLL: return {Color::magenta, false};
    default: return {Color::white, false};
  }
}

/// `s` wrapped in the colour's escape codes (tinygrad's colored).
constexpr text colored(std::string_view s, Color c) {
  text t;
  t.append("\x1b[").append(c.code()).append('m').append(s).append("\x1b[0m");
  return t;
}

}  // namespace uopcg::codegen::opt
