// Opts as text, for command lines and configuration: `LOCAL:0:4,UPCAST:1:4,NOLOCALS,TC:0:(-1,2,1)`.
// Each opt is OP, OP:AXIS or OP:AXIS:ARG (ARG an integer or a parenthesized tuple of integers),
// opts separated by commas; tinygrad's Opt(op, axis, arg) with the same meaning. opts_text writes it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../../core/arg.hpp"
#include "../../core/error.hpp"
#include "../../core/text.hpp"

namespace uopcg::codegen::opt {

namespace detail {
[[noreturn]] constexpr void bad_opt(std::string_view item, std::string_view why) {
  text m;
  m.append("opt '").append(item).append("': ").append(why);
  fail(m.view());
}
constexpr std::int64_t parse_int(std::string_view item, std::string_view s) {
  bool neg = !s.empty() && s.front() == '-';
  if (neg) s.remove_prefix(1);
  if (s.empty()) bad_opt(item, "expected an integer");
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') bad_opt(item, "expected an integer");
    if (v > (INT64_MAX - (c - '0')) / 10) bad_opt(item, "the integer does not fit int64");
    v = v * 10 + (c - '0');
  }
  return neg ? -v : v;
}
constexpr Arg parse_arg(std::string_view item, std::string_view s) {
  if (s.empty() || s.front() != '(') return Arg::integer(parse_int(item, s));
  if (s.back() != ')') bad_opt(item, "a tuple argument ends with ')'");
  s = s.substr(1, s.size() - 2);
  std::vector<Arg> parts;
  while (!s.empty()) {
    const std::size_t comma = s.find(',');
    parts.push_back(Arg::integer(parse_int(item, s.substr(0, comma))));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return Arg::tuple(std::move(parts));
}
constexpr Opt parse_one(std::string_view item) {
  std::string_view fields[3];
  std::size_t n = 0;
  std::string_view rest = item;
  while (true) {
    const std::size_t colon = n < 2 ? rest.find(':') : std::string_view::npos;
    if (n == 3) bad_opt(item, "expected OP, OP:AXIS or OP:AXIS:ARG");
    fields[n++] = rest.substr(0, colon);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  Opt o;
  if (!opt_ops_from_name(fields[0], o.op)) bad_opt(item, "unknown op (TC, UPCAST, UNROLL, LOCAL, THREAD, GROUP, GROUPTOP, NOLOCALS, PADTO, SWAP)");
  if (n >= 2) o.axis = parse_int(item, fields[1]);
  if (n == 3) o.arg = parse_arg(item, fields[2]);
  return o;
}
}  // namespace detail

/// The opts of a comma-separated list (empty text: none). Bad text is an error naming the item.
constexpr std::vector<Opt> parse_opts(std::string_view s) {
  std::vector<Opt> out;
  std::size_t depth = 0, start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    const char c = i < s.size() ? s[i] : ',';
    if (c == '(') ++depth;
    else if (c == ')' && depth > 0) --depth;
    else if (c == ',' && depth == 0) {
      const std::string_view item = s.substr(start, i - start);
      if (item.empty()) {
        if (s.empty()) break;
        detail::bad_opt(s, "an empty item in the list");
      }
      out.push_back(detail::parse_one(item));
      start = i + 1;
    }
  }
  return out;
}

/// The text parse_opts reads back: `LOCAL:0:4,UPCAST:1:4,TC:0:(-1,2,1)` (empty for no opts). An opt
/// with an arg but no axis has no such text: an error naming it.
constexpr text opts_text(std::span<const Opt> opts) {
  text t;
  for (const Opt& o : opts) {
    if (!t.empty()) t.append(',');
    t.append(name(o.op));
    if (!o.axis) {
      if (!o.arg.is_none()) detail::bad_opt(name(o.op), "an opt with an arg but no axis has no text form");
      continue;
    }
    t.append(':').append(*o.axis);
    if (o.arg.is_none()) continue;
    t.append(':');
    if (o.arg.is_int()) {
      t.append(o.arg.as_int());
      continue;
    }
    if (!o.arg.is_tuple()) detail::bad_opt(name(o.op), "its arg is neither an integer nor a tuple of integers");
    t.append('(');
    for (std::size_t i = 0; i < o.arg.size(); ++i) {
      if (!o.arg[i].is_int()) detail::bad_opt(name(o.op), "its arg is neither an integer nor a tuple of integers");
      if (i) t.append(',');
      t.append(o.arg[i].as_int());
    }
    t.append(')');
  }
  return t;
}

}  // namespace uopcg::codegen::opt
