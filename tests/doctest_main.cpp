// The one translation unit that holds doctest's implementation and main(); every test executable
// links it through doctest_main_dep (see the top-level meson.build).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
