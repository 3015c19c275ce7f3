// Compiled with single_include/ (and not include/) on the include path: the single header must stand
// on its own, needing only the standard library and Boost.
#include <uopcg/uopcg.hpp>

#ifndef UOPCG_SINGLE_HEADER
#error "expected single_include/uopcg/uopcg.hpp"
#endif
#if __has_include(<uopcg/core/error.hpp>)
#error "include/ must not be on the include path of the single-header test"
#endif

#include <doctest/doctest.h>

#include <string_view>

TEST_CASE("single header: the library is usable from single_include/uopcg/uopcg.hpp alone") {
  const uopcg::error e("boom");
  CHECK(std::string_view(e.what()) == "boom");
}
