#!/usr/bin/env bash
# Builds and runs the demo (examples/demo.cpp) on a fresh Debian 12 machine or incrementally:
# installs whatever packages are missing, configures build/ with g++ (the same options as
# scripts/test.sh), builds the demo and runs build/examples/demo.
# The reference kernels come from $UOPCG_CORPUS (default: ../shared/corpus beside the repository).
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

uopcg_section "packages"
uopcg_packages "${UOPCG_BASE_PACKAGES[@]}"

uopcg_section "build (build/, g++)"
log="$(mktemp "${TMPDIR:-/tmp}/uopcg-demo-setup.XXXXXX")"
if ! uopcg_setup build "$UOPCG_CXX_GCC" "${UOPCG_MAIN_OPTIONS[@]}" >"$log" 2>&1; then
  cat "$log"
  rm -f "$log"
  uopcg_die "meson setup failed"
fi
rm -f "$log"
uopcg_compile build examples/demo
[[ -x build/examples/demo ]] || uopcg_die "build/examples/demo was not built (examples/demo.cpp missing?)"
uopcg_section_end

printf '\n==== demo (UOPCG_CORPUS=%s) ====\n' "$UOPCG_CORPUS"
exec build/examples/demo
