// A growable character buffer usable in constant evaluation (constexpr std::string is not available
// on clang 14 with libstdc++ 12; constexpr std::vector is). Printing, error messages and the OpenCL
// emitter build their text here.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "error.hpp"

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
