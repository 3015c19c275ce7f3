// Built by scripts/test.sh (step "install") against an installed uopcg only: through pkg-config,
// through CMake's find_package(uopcg), and as a meson subproject.
#include <uopcg/uopcg.hpp>

#include <cstdio>
#include <string_view>

int main() {
  const uopcg::error e("installed uopcg is usable");
  if (std::string_view(e.what()) != "installed uopcg is usable") return 1;
  std::printf("consumer: %s\n", e.what());
  return 0;
}
