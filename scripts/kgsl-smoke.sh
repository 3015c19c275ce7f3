#!/usr/bin/env bash
# On-device smoke check of the KGSL launcher, for the first time it meets a real Adreno A630
# (docs/kgsl.md, "First device"). Builds tests/kgsl/device_smoke.cpp with the device's C++ compiler
# (no meson or Boost needed: the launcher is header-only and self-contained) and runs it:
#
#   private   a kernel with private memory, in both register encodings
#   big       a shader over 8 KiB (preload capped at the instruction cache)
#   replay    a captured sequence of 24 launches, replayed with a rebound input and a new scalar
#   sandbox   the same replay inside the seccomp sandbox; socket(AF_CAN) refused
#
# each compared with the vendor OpenCL runtime running the same kernels. Exit status 0 only if every
# check passed; on a machine without /dev/kgsl-3d0 it says so and fails.
#
# Environment: CXX (default c++), UOPCG_SMOKE_BIN (a prebuilt kgsl_smoke, e.g. from a cross build:
# build/tests/kgsl/kgsl_smoke), UOPCG_SMOKE_LOG (copy of the output; default kgsl-smoke.log here).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE=/dev/kgsl-3d0
LOG="${UOPCG_SMOKE_LOG:-$PWD/kgsl-smoke.log}"

fail() { printf 'kgsl-smoke: %s\n' "$*" >&2; exit 1; }

[[ "$(uname -s)" == Linux ]] || fail "KGSL is a Linux (Android) driver; this is $(uname -s)"
[[ -e "$NODE" ]] || fail "no $NODE on this machine: this check needs an Adreno A630 GPU (Snapdragon 845) with the msm KGSL driver. Nothing was checked."
[[ -c "$NODE" ]] || fail "$NODE exists but is not a character device"
[[ -r "$NODE" && -w "$NODE" ]] ||
  fail "$NODE is not readable and writable by $(id -un) (mode $(stat -c '%A %U:%G' "$NODE")): run as a member of its group, or as root"

BIN="${UOPCG_SMOKE_BIN:-}"
if [[ -z "$BIN" ]]; then
  CXX="${CXX:-c++}"
  command -v "$CXX" >/dev/null || fail "no C++ compiler ($CXX); set CXX, or UOPCG_SMOKE_BIN to a prebuilt kgsl_smoke"
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
  BIN="$WORK/kgsl_smoke"
  echo "kgsl-smoke: building $BIN with $CXX"
  "$CXX" -std=c++20 -O2 -Wall -Wextra -I"$ROOT/include" "$ROOT/tests/kgsl/device_smoke.cpp" -o "$BIN" -ldl ||
    fail "building tests/kgsl/device_smoke.cpp failed (a C++20 compiler is needed: g++ >= 12 or clang >= 14)"
fi
[[ -x "$BIN" ]] || fail "$BIN is not an executable"

"$BIN" 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}
case $rc in
  0) echo "kgsl-smoke: every check passed (log: $LOG)" ;;
  2) fail "nothing was checked (see above; log: $LOG)" ;;
  *) fail "some checks FAILED (log: $LOG); see docs/kgsl.md, First device, for what each one means" ;;
esac
