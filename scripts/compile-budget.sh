#!/usr/bin/env bash
# Compile-time budgets: CPU seconds (user + system) and peak memory of compiling, one translation unit
# at a time, what a user compiles: a kernel through the declarations-only <uopcg/compile.hpp>
# (<= 2 s, <= 300 MB), the implementation translation unit (UOPCG_IMPLEMENTATION: <= 20 s, <= 1 GB)
# and the demo as one translation unit (<= 30 s, <= 1 GB), with g++ and clang++ at -O0 and -O2. Each
# measurement prints `budget NAME COMPILER FLAGS cpu_s S rss_mb M limit_cpu_s L limit_mb X ok|over`,
# then a markdown table (docs/embedded.md keeps the last one measured). Sequential: several minutes
# on 2 cores; not part of scripts/test.sh.
#
#   scripts/compile-budget.sh                          the three budgets, g++ and clang++, -O0 and -O2
#   scripts/compile-budget.sh --only user --flags=-O2  one budget, one level
#   scripts/compile-budget.sh --enforce                exit 1 if any row is over its budget
#   scripts/compile-budget.sh --survey --flags=-O2     every test file instead (no limits)
#   scripts/compile-budget.sh --repeat 3 --output budget.md
#
# Options are those of tools/compile_budget.py (see its --help). Compilers: UOPCG_CXX_GCC and
# UOPCG_CXX_CLANG (default g++ / clang++), or --cxx given explicitly.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

uopcg_packages g++ clang python3 time libboost-dev doctest-dev nlohmann-json3-dev zlib1g-dev \
  ocl-icd-opencl-dev opencl-headers

cxx_args=()
if [[ " $* " != *" --cxx "* ]]; then
  cxx_args=(--cxx "$UOPCG_CXX_GCC" --cxx "$UOPCG_CXX_CLANG")
fi
exec python3 tools/compile_budget.py "${cxx_args[@]}" "$@"
