// uopcg::text: short texts live inline, longer ones move to the heap; every operation must give the
// same characters on both sides of that boundary, at run time and in constant evaluation.
#include <doctest/doctest.h>

#include <string>

#include <uopcg/core/text.hpp>

using namespace uopcg;

namespace {
// The same text built one piece at a time, crossing the inline size somewhere on the way.
constexpr bool builds_across_the_boundary() {
  text t;
  std::string_view expect = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  for (char c : expect) t.append(c);
  if (t.view() != expect || t.size() != expect.size()) return false;
  text u("0123456789");
  u.append(std::string_view("abcdefghijklmnopqrstuvwxyz")).append("ABCDEFGHIJKLMNOPQRSTUVWXYZ");
  return u.view() == expect && u[61] == 'Z' && u == expect;
}
static_assert(builds_across_the_boundary(), "text: building across the inline size changes the characters");

constexpr bool numbers_and_self_append() {
  text t;
  t.append(-9223372036854775807LL - 1).append(' ').append(18446744073709551615ULL).append(' ').append(true);
  if (t.view() != "-9223372036854775808 18446744073709551615 True") return false;
  text s("ab");
  s.append(s).append(s).append(s).append(s).append(s);  // 2 -> 64 characters: crosses the inline size
  return s.size() == 64 && s.view().substr(60) == "abab";
}
static_assert(numbers_and_self_append());
}  // namespace

TEST_CASE("text: short and long texts read back alike") {
  CHECK(builds_across_the_boundary());
  CHECK(numbers_and_self_append());
  for (std::size_t n : {0u, 1u, 47u, 48u, 49u, 100u, 1000u}) {
    CAPTURE(n);
    std::string expect(n, 'x');
    text t;
    for (std::size_t i = 0; i < n; ++i) t.append('x');
    CHECK(t.size() == n);
    CHECK(t.empty() == (n == 0));
    CHECK(t.str() == expect);
    CHECK(std::string(t.c_str()) == expect);  // NUL-terminated on both sides of the boundary
    text copy = t;
    copy.append('y');
    CHECK(copy.str() == expect + "y");
    CHECK(t.str() == expect);  // a copy does not share characters with its source
    text moved = std::move(copy);
    CHECK(moved.str() == expect + "y");
    if (n > 0) {
      moved.pop_back();
      moved.pop_back();
      CHECK(moved.str() == expect.substr(0, n - 1));
    }
  }
}

TEST_CASE("text: clear keeps working on both sides, and pad_to counts from the last line") {
  text t("a fairly long first line that does not fit inline at all\n");
  t.append("ab").pad_to(6, '.').append('|');
  CHECK(t.view().substr(t.size() - 7) == "ab....|");
  t.clear();
  CHECK(t.empty());
  t.append("short");
  CHECK(t == "short");
  text u("x");
  u.pad_to(3).append('|');
  CHECK(u == "x  |");
  u.clear();
  CHECK(u.size() == 0);
}

TEST_CASE("text: a view of itself appended while it moves to the heap") {
  text t("0123456789012345678901234567890123456789");  // 40: inline
  t.append(t.view());                                   // 80: the view points into the inline buffer
  CHECK(t == "01234567890123456789012345678901234567890123456789012345678901234567890123456789");
  text f;
  f.append_float(0.1).append(' ').append_float(1e-05).append(' ').append_float(3.0);
  CHECK(f == "0.1 1e-05 3.0");
}

TEST_CASE("fail(parts...): the message is the parts printed one after another") {
  const std::string node = "RANGE(4)";
  CHECK_THROWS_WITH_AS(fail("remove reduces: ", node, " has ", 2, " sources, wanted ", 1.5),
                       "remove reduces: RANGE(4) has 2 sources, wanted 1.5", uopcg::error);
  CHECK_THROWS_WITH_AS(fail(text("a message that lives on the heap, past the inline size: "), -7, ' ', true),
                       "a message that lives on the heap, past the inline size: -7 True", uopcg::error);
}
