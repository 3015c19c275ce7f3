// A growable character buffer usable in constant evaluation (constexpr std::string is not available
// on clang 14 with libstdc++ 12; constexpr std::vector is). Printing, error messages and the OpenCL
// emitter build their text here.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace uopcg {

class text {
 public:
  constexpr text() = default;
  constexpr text(std::string_view s) { append(s); }  // NOLINT: text is a string
  constexpr text(const char* s) { append(s); }         // NOLINT

  constexpr text& append(std::string_view s) {
    room(s.size());
    buf_.insert(buf_.end(), s.begin(), s.end());
    return *this;
  }
  constexpr text& append(char c) {
    room(1);
    buf_.push_back(c);
    return *this;
  }
  constexpr text& append(const char* s) { return append(std::string_view(s)); }
  constexpr text& append(const text& t) {
    if (&t != this) return append(t.view());
    const std::size_t n = buf_.size();  // t.append(t): the view would dangle once room() reallocates
    room(n);
    for (std::size_t i = 0; i < n; ++i) buf_.push_back(buf_[i]);
    return *this;
  }
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool> &&
                                          !std::is_same_v<I, char>, int> = 0>
  constexpr text& append(I v) {
    if constexpr (std::is_signed_v<I>) {
      if (v < 0) {
        buf_.push_back('-');
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
    std::size_t line_start = 0;
    for (std::size_t i = buf_.size(); i > 0; --i)
      if (buf_[i - 1] == '\n') {
        line_start = i;
        break;
      }
    while (buf_.size() - line_start < column) buf_.push_back(fill);
    return *this;
  }

  template <class T>
  constexpr text& operator<<(const T& v) {
    if constexpr (std::is_floating_point_v<T>) return append_float(static_cast<double>(v));
    else return append(v);
  }

  constexpr std::size_t size() const { return buf_.size(); }
  constexpr bool empty() const { return buf_.empty(); }
  constexpr char operator[](std::size_t i) const { return buf_[i]; }
  constexpr void clear() { buf_.clear(); }
  constexpr void pop_back() { buf_.pop_back(); }
  constexpr std::string_view view() const { return {buf_.data(), buf_.size()}; }
  constexpr bool operator==(std::string_view s) const { return view() == s; }
  std::string str() const { return std::string(buf_.begin(), buf_.end()); }
  /// NUL-terminated pointer (valid until the next append).
  const char* c_str() {
    buf_.push_back('\0');
    buf_.pop_back();
    return buf_.data();
  }

 private:
  constexpr text& append_unsigned(std::uint64_t v) {
    char tmp[20];
    int n = 0;
    do {
      tmp[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    room(static_cast<std::size_t>(n));
    while (n) buf_.push_back(tmp[--n]);
    return *this;
  }
  /// Makes room for n more characters: at least 32 to begin with, then doubling (a vector grown one
  /// character at a time from empty reallocates at 1, 2, 4, 8, ... characters: the emitter's texts
  /// are mostly short, so most of them now take one allocation).
  constexpr void room(std::size_t n) {
    const std::size_t need = buf_.size() + n;
    if (need <= buf_.capacity()) return;
    std::size_t cap = buf_.capacity() * 2;
    if (cap < 32) cap = 32;
    buf_.reserve(cap < need ? need : cap);
  }
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
    buf_.push_back('-');
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
    for (int i = 0; i <= exp10; ++i) buf_.push_back(i < nd ? digits[i] : '0');
    buf_.push_back('.');
    if (nd <= exp10 + 1) buf_.push_back('0');
    for (int i = exp10 + 1; i < nd; ++i) buf_.push_back(digits[i]);
    return *this;
  }
  buf_.push_back(digits[0]);
  if (nd > 1) {
    buf_.push_back('.');
    for (int i = 1; i < nd; ++i) buf_.push_back(digits[i]);
  }
  buf_.push_back('e');
  return append(exp10);
}

}  // namespace uopcg
