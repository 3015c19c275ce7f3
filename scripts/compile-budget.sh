#!/usr/bin/env bash
# Compile-time budget of a header-only TMP library: the wall time and peak memory of compiling each
# test file and the single-header example (examples/single_header_budget.cpp), one translation unit
# at a time, on g++ and clang++, beside a baseline file that only includes <boost/hana.hpp>.
# Prints a markdown table (wall seconds, CPU seconds, peak MB) and whether the single-header example meets the goal (<= 10 s and
# <= 1 GB on g++ -O2). Sequential: a few minutes on 2 cores. Figures from a loaded machine are high.
#
#   scripts/compile-budget.sh                    every file, g++ and clang++, -O2
#   scripts/compile-budget.sh --only examples    the example (and the baseline) only
#   scripts/compile-budget.sh --enforce          exit 1 if the example misses the goal on g++
#   scripts/compile-budget.sh --flags "-O2 -g" --repeat 3 --output budget.md
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
