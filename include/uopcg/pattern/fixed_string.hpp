// Compile-time strings for capture names (C++20 class-type template parameters).
#pragma once

#include <cstddef>
#include <string_view>

namespace uopcg::pat {

template <std::size_t N>
struct fixed_string {
  char v[N]{};
  constexpr fixed_string(const char (&s)[N]) {  // NOLINT: implicit from a literal by design
    for (std::size_t i = 0; i < N; ++i) v[i] = s[i];
  }
  constexpr std::string_view view() const { return {v, N - 1}; }
  static constexpr bool empty() { return N <= 1; }
};
template <std::size_t N>
fixed_string(const char (&)[N]) -> fixed_string<N>;

/// The "no name" value of a pattern node.
inline constexpr fixed_string<1> unnamed{""};

}  // namespace uopcg::pat
