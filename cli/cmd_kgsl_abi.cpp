// `uopcg kgsl-abi`: prints the KGSL driver ABI this build assumes, one line per ioctl and per struct
// field, tab-separated, names as in the uapi header (msm_kgsl.h):
//   ioctl  NAME             0xREQUEST  SIZE
//   field  STRUCT  FIELD    OFFSET     SIZE
// so a user can diff it against a table generated from their device's kernel header.
#include <cstdio>
#include <cstring>

#include "commands.hpp"
#include "uopcg/runtime/kgsl/abi.hpp"

int uopcg_cmd_kgsl_abi(int argc, char** argv) {
  // argv[0] is the sub-command; it takes no options besides --help.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "usage: uopcg kgsl-abi\n"
          "Prints the KGSL ioctl request numbers and struct layouts (64-bit) this build assumes:\n"
          "  ioctl<TAB>NAME<TAB>0xREQUEST<TAB>SIZE\n"
          "  field<TAB>STRUCT<TAB>FIELD<TAB>OFFSET<TAB>SIZE\n");
      return 0;
    }
    std::fprintf(stderr, "uopcg kgsl-abi: unexpected argument '%s' (try --help)\n", argv[i]);
    return 2;
  }
  for (const auto& line : uopcg::kgsl::abi::abi_lines()) {
    std::fputs(line.c_str(), stdout);
    std::fputc('\n', stdout);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}
