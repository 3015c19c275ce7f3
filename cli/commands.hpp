// Sub-commands of the `uopcg` tool. Each lives in its own cmd_<name>.cpp and returns the exit code.
#pragma once

int uopcg_cmd_check_rules(int argc, char** argv);
int uopcg_cmd_compile(int argc, char** argv);
int uopcg_cmd_bench(int argc, char** argv);
#if UOPCG_CLI_HAS_OPENCL
int uopcg_cmd_run(int argc, char** argv);
int uopcg_cmd_search(int argc, char** argv);
#endif
#if defined(__linux__)
int uopcg_cmd_kgsl_abi(int argc, char** argv);
int uopcg_cmd_kgsl_dispatch(int argc, char** argv);
#endif

struct uopcg_command {
  const char* name;
  int (*run)(int argc, char** argv);  // argv[0] is the sub-command's name
  const char* summary;
};

inline constexpr uopcg_command uopcg_commands[] = {
    {"compile", uopcg_cmd_compile, "compile a kernel file's post-opts graph and print the OpenCL C (or a stage's graph)"},
#if UOPCG_CLI_HAS_OPENCL
    {"run", uopcg_cmd_run, "compile a kernel file, run it on the OpenCL device, compare with its outputs"},
    {"search", uopcg_cmd_search, "BEAM search of a kernel file's opts on the OpenCL device (cached); prints the best"},
#endif
    {"bench", uopcg_cmd_bench, "codegen time per kernel file (TSV); --exec adds device times vs tinygrad's kernel"},
    {"check-rules", uopcg_cmd_check_rules, "check every built-in symbolic rule for soundness on random instances"},
#if defined(__linux__)
    {"kgsl-abi", uopcg_cmd_kgsl_abi, "print the KGSL ioctl ABI this build assumes (tab-separated)"},
    {"kgsl-dispatch", uopcg_cmd_kgsl_dispatch, "print the register writes of one A630 dispatch of a synthetic program"},
#endif
};
