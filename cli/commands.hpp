// Sub-commands of the `uopcg` tool. Each lives in its own cmd_<name>.cpp and returns the exit code.
#pragma once

int uopcg_cmd_check_rules(int argc, char** argv);
#if defined(__linux__)
int uopcg_cmd_kgsl_abi(int argc, char** argv);
#endif

struct uopcg_command {
  const char* name;
  int (*run)(int argc, char** argv);  // argv[0] is the sub-command's name
  const char* summary;
};

inline constexpr uopcg_command uopcg_commands[] = {
    {"check-rules", uopcg_cmd_check_rules, "check every built-in symbolic rule for soundness on random instances"},
#if defined(__linux__)
    {"kgsl-abi", uopcg_cmd_kgsl_abi, "print the KGSL ioctl ABI this build assumes (tab-separated)"},
#endif
};
