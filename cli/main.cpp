// The `uopcg` command: dispatches to the sub-commands listed in commands.hpp.
#include <cstdio>
#include <cstring>
#include <exception>

#include <uopcg/core/error.hpp>

#include "commands.hpp"

namespace {
void usage(std::FILE* out) {
  std::fputs("usage: uopcg <command> [args...]\n\ncommands:\n", out);
  for (const auto& c : uopcg_commands) std::fprintf(out, "  %-14s %s\n", c.name, c.summary);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const auto& c : uopcg_commands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const uopcg::error& e) {
      std::fprintf(stderr, "uopcg %s: %s\n", c.name, e.what());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "uopcg %s: unexpected error: %s\n", c.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "uopcg: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
