// Python-style float text (`repr(float)`): the shortest decimal that reads back as the same double,
// printed the way Python prints it ("0.0", "1e-05", "1.4426950216293335", "1e+16", "-65504.0").
// Renderers print float literals with it.
//
// Works in constant evaluation: the digits come from an exact big-integer implementation of the
// free-format (shortest, correctly rounded) digit generation, so compile-time text is byte-identical
// to run-time text. At run time the digits come from std::to_chars (scientific, shortest), which is
// the reference the exact implementation is tested against.
#pragma once

#include <bit>
#include <charconv>
#include <cstdint>
#include <system_error>
#include <type_traits>

#include "../core/error.hpp"
#include "../core/text.hpp"

namespace uopcg::render {

/// The shortest round-trip digits of a finite, non-zero |v|: v = 0.d1 d2 ... dn × 10^point
/// written as d1.d2...dn × 10^exp10 (exp10 = point - 1). No trailing zeros.
struct ShortestDigits {
  char digits[17] = {};
  int count = 0;
  int exp10 = 0;
};

namespace detail {

/// A fixed-capacity unsigned big integer (little-endian 32-bit limbs); enough for every value the
/// digit generation of a double needs (below 2^1400).
struct big {
  static constexpr int capacity = 44;
  std::uint32_t w[capacity] = {};
  int n = 0;  // limbs in use (no leading zero limbs)

  constexpr explicit big(std::uint64_t v = 0) {
    while (v) {
      w[n++] = static_cast<std::uint32_t>(v);
      v >>= 32;
    }
  }
  constexpr void trim() {
    while (n > 0 && w[n - 1] == 0) --n;
  }
  constexpr void mul_small(std::uint32_t m) {
    std::uint64_t carry = 0;
    for (int i = 0; i < n; ++i) {
      std::uint64_t t = static_cast<std::uint64_t>(w[i]) * m + carry;
      w[i] = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
    if (carry) push(static_cast<std::uint32_t>(carry));
    trim();
  }
  constexpr void shl(int bits) {
    if (n == 0 || bits == 0) return;
    int limbs = bits / 32, rem = bits % 32;
    if (n + limbs + 1 > capacity) overflow();
    for (int i = n - 1; i >= 0; --i) w[i + limbs] = w[i];
    for (int i = 0; i < limbs; ++i) w[i] = 0;
    n += limbs;
    if (rem) {
      std::uint32_t carry = 0;
      for (int i = limbs; i < n; ++i) {
        std::uint32_t next = w[i] >> (32 - rem);
        w[i] = (w[i] << rem) | carry;
        carry = next;
      }
      if (carry) w[n++] = carry;
    }
  }
  constexpr void mul_pow10(int k) {
    while (k >= 9) {
      mul_small(1000000000u);
      k -= 9;
    }
    std::uint32_t p = 1;
    while (k-- > 0) p *= 10;
    if (p != 1) mul_small(p);
  }
  constexpr void add(const big& o) {
    std::uint64_t carry = 0;
    int m = n > o.n ? n : o.n;
    for (int i = 0; i < m; ++i) {
      std::uint64_t t = static_cast<std::uint64_t>(i < n ? w[i] : 0) + (i < o.n ? o.w[i] : 0) + carry;
      w[i] = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
    n = m;
    if (carry) push(static_cast<std::uint32_t>(carry));
  }
  /// this -= o (requires this >= o).
  constexpr void sub(const big& o) {
    std::int64_t borrow = 0;
    for (int i = 0; i < n; ++i) {
      std::int64_t t = static_cast<std::int64_t>(w[i]) - (i < o.n ? o.w[i] : 0) - borrow;
      borrow = t < 0 ? 1 : 0;
      w[i] = static_cast<std::uint32_t>(t + (borrow << 32));
    }
    trim();
  }
  friend constexpr int compare(const big& a, const big& b) {
    if (a.n != b.n) return a.n < b.n ? -1 : 1;
    for (int i = a.n - 1; i >= 0; --i)
      if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
    return 0;
  }
  /// compare(a + b, c) without materialising the sum elsewhere.
  friend constexpr int compare_sum(const big& a, const big& b, const big& c) {
    big s = a;
    s.add(b);
    return compare(s, c);
  }

 private:
  constexpr void push(std::uint32_t limb) {
    if (n >= capacity) overflow();
    w[n++] = limb;
  }
  [[noreturn]] static constexpr void overflow() { fail("float_text: big integer capacity exceeded"); }
};

}  // namespace detail

/// Shortest round-trip digits of a finite non-zero double (sign ignored), computed exactly
/// (Steele & White / Burger & Dybvig free-format generation; ties round to the even digit).
/// Usable in constant evaluation.
constexpr ShortestDigits shortest_digits_exact(double v) {
  if (v < 0) v = -v;
  if (!(v > 0) || v > 1.7976931348623157e308) fail("shortest_digits: needs a finite non-zero value");
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(v);
  const int biased = static_cast<int>((bits >> 52) & 0x7FF);
  std::uint64_t f = bits & ((std::uint64_t(1) << 52) - 1);
  int e;
  if (biased == 0) {
    e = -1074;
  } else {
    f |= std::uint64_t(1) << 52;
    e = biased - 1075;
  }
  const bool even = (f & 1) == 0;
  // boundary: the gap below v is half the gap above (f is a power of two, not the smallest normal)
  const bool lower_closer = biased > 1 && f == (std::uint64_t(1) << 52);

  // v = r/s, upper half-gap m_plus/s, lower half-gap m_minus/s
  detail::big r(f), s(1), m_plus(1), m_minus(1);
  if (e >= 0) {
    if (lower_closer) {
      r.shl(e + 2);
      s = detail::big(4);
      m_plus.shl(e + 1);
      m_minus.shl(e);
    } else {
      r.shl(e + 1);
      s = detail::big(2);
      m_plus.shl(e);
      m_minus.shl(e);
    }
  } else {
    if (lower_closer) {
      r.shl(2);
      s.shl(2 - e);
      m_plus = detail::big(2);
    } else {
      r.shl(1);
      s.shl(1 - e);
    }
  }

  // k: the decimal point position, 10^(k-1) <= high < 10^k (high = (r + m_plus)/s); start from an
  // estimate and fix it up exactly.
  int bitlen = 0;
  for (std::uint64_t t = f; t; t >>= 1) ++bitlen;
  const int exp2 = e + bitlen - 1;  // 2^exp2 <= v < 2^(exp2+1)
  double est = exp2 * 0.30102999566398114;
  int k = static_cast<int>(est);
  if (static_cast<double>(k) < est) ++k;  // ceil
  if (k >= 0) s.mul_pow10(k);
  else {
    r.mul_pow10(-k);
    m_plus.mul_pow10(-k);
    m_minus.mul_pow10(-k);
  }
  auto high_reaches = [&](const detail::big& rr, const detail::big& mp, const detail::big& ss) {
    int c = compare_sum(rr, mp, ss);
    return even ? c >= 0 : c > 0;
  };
  while (high_reaches(r, m_plus, s)) {
    s.mul_small(10);
    ++k;
  }
  for (;;) {  // the estimate may be one too high
    detail::big r10 = r, mp10 = m_plus, s1 = s;
    r10.mul_small(10);
    mp10.mul_small(10);
    if (high_reaches(r10, mp10, s1)) break;
    r = r10;
    m_plus = mp10;
    m_minus.mul_small(10);
    --k;
  }

  ShortestDigits out;
  out.exp10 = k - 1;
  for (;;) {
    r.mul_small(10);
    m_plus.mul_small(10);
    m_minus.mul_small(10);
    int d = 0;
    while (compare(r, s) >= 0) {
      r.sub(s);
      ++d;
    }
    const int lo = compare(r, m_minus);
    const bool tc1 = even ? lo <= 0 : lo < 0;
    const int hi = compare_sum(r, m_plus, s);
    const bool tc2 = even ? hi >= 0 : hi > 0;
    if (!tc1 && !tc2) {
      if (out.count >= 17) fail("shortest_digits: more than 17 digits");
      out.digits[out.count++] = static_cast<char>('0' + d);
      continue;
    }
    bool up;
    if (tc1 && !tc2) up = false;
    else if (tc2 && !tc1) up = true;
    else {
      detail::big r2 = r;
      r2.shl(1);
      int c = compare(r2, s);
      up = c > 0 || (c == 0 && (d & 1));
    }
    if (out.count >= 17) fail("shortest_digits: more than 17 digits");
    out.digits[out.count++] = static_cast<char>('0' + d + (up ? 1 : 0));
    break;
  }
  // a round-up may carry (a "10" digit)
  for (int i = out.count - 1; i > 0; --i) {
    if (out.digits[i] <= '9') break;
    out.digits[i] = '0';
    ++out.digits[i - 1];
  }
  if (out.digits[0] > '9') {
    out.digits[0] = '1';
    out.count = 1;
    ++out.exp10;
  }
  while (out.count > 1 && out.digits[out.count - 1] == '0') --out.count;
  return out;
}

/// Shortest round-trip digits: exact implementation in constant evaluation, std::to_chars at run
/// time (both give the same digits; tests/render checks it).
constexpr ShortestDigits shortest_digits(double v) {
  if (std::is_constant_evaluated()) return shortest_digits_exact(v);
  if (v < 0) v = -v;
  if (!(v > 0) || v > 1.7976931348623157e308) fail("shortest_digits: needs a finite non-zero value");
  char tmp[40];
  auto res = std::to_chars(tmp, tmp + sizeof tmp, v, std::chars_format::scientific);
  if (res.ec != std::errc()) fail("shortest_digits: std::to_chars failed");
  ShortestDigits out;
  const char* p = tmp;
  for (; p < res.ptr && *p != 'e'; ++p)
    if (*p >= '0' && *p <= '9') out.digits[out.count++] = *p;
  int sign = 1, ex = 0;
  if (p < res.ptr) ++p;  // 'e'
  if (p < res.ptr && (*p == '-' || *p == '+')) sign = *p++ == '-' ? -1 : 1;
  for (; p < res.ptr; ++p) ex = ex * 10 + (*p - '0');
  out.exp10 = sign * ex;
  while (out.count > 1 && out.digits[out.count - 1] == '0') --out.count;
  return out;
}

/// Appends Python's repr of a double: "0.0", "-0.0", "1.5", "100000.0", "1e-05", "1e+16",
/// "0.0001", "1.4426950216293335", "inf", "-inf", "nan".
constexpr text& append_python_float(text& out, double v) {
  if (v != v) return out.append("nan");
  if (v > 1.7976931348623157e308) return out.append("inf");
  if (v < -1.7976931348623157e308) return out.append("-inf");
  if (std::bit_cast<std::uint64_t>(v) >> 63) out.append('-');
  if (v == 0) return out.append("0.0");
  const ShortestDigits d = shortest_digits(v);
  const int e = d.exp10;
  if (e >= -4 && e < 16) {  // positional
    if (e < 0) {
      out.append("0.");
      for (int i = 0; i < -e - 1; ++i) out.append('0');
      for (int i = 0; i < d.count; ++i) out.append(d.digits[i]);
      return out;
    }
    for (int i = 0; i <= e; ++i) out.append(i < d.count ? d.digits[i] : '0');
    out.append('.');
    if (d.count <= e + 1) return out.append('0');
    for (int i = e + 1; i < d.count; ++i) out.append(d.digits[i]);
    return out;
  }
  out.append(d.digits[0]);
  if (d.count > 1) {
    out.append('.');
    for (int i = 1; i < d.count; ++i) out.append(d.digits[i]);
  }
  out.append('e').append(e < 0 ? '-' : '+');
  int a = e < 0 ? -e : e;
  if (a < 10) out.append('0');
  return out.append(a);
}

constexpr text python_float(double v) {
  text t;
  append_python_float(t, v);
  return t;
}

}  // namespace uopcg::render
