#!/usr/bin/env bash
# Cross-builds uopcg's tests and examples for aarch64 Linux (Debian's g++-aarch64-linux-gnu) and runs
# every test binary under qemu-user (qemu-aarch64-static), on a fresh Debian 12 machine or
# incrementally:
#
#   1 packages    g++-aarch64-linux-gnu, qemu-user-static, meson, the header-only dependencies
#                 (Boost, doctest, nlohmann_json: arch-independent, the host's serve the cross build)
#                 and zlib1g-dev:arm64 (Debian multiarch; tests/io reads gzip'd stage dumps)
#   2 configure   build-aarch64/ with cross/aarch64-linux-gnu.ini, -Dopencl=disabled
#   3 build       tests and examples (ninja, UOPCG_JOBS jobs)
#   4 test        meson test: each test binary runs through the cross file's exe_wrapper (qemu), and
#                 so does every program a test script starts (MESON_EXE_WRAPPER): no binfmt_misc
#                 registration is needed (containers have none)
#   5 embedded    the embedded build's program, run once more to show it: the single header alone,
#                 -fno-exceptions -fno-rtti, a GROUP_REDUCE kernel as in the demo (LOCAL buffer,
#                 barrier) compiled to OpenCL C (tests/linked/header_only.cpp, built as
#                 header_only_single_noexcept)
#
# Exit status 0 only if everything built and every test passed.
#
# Environment: UOPCG_JOBS (default: number of CPUs), UOPCG_CORPUS (reference kernels),
#   UOPCG_CROSS_ZLIB=0   skip the arm64 zlib (no multiarch set-up; tests/io is then not built)
#   UOPCG_CROSS_TIMEOUT_MULTIPLIER (default 4: qemu runs the tests several times slower)
#   UOPCG_CROSS_DIR      build directory (default build-aarch64)
# Arguments are passed to `meson test` (e.g. `scripts/cross-aarch64.sh --suite core`).
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

T0=$(date +%s)
CROSS_FILE=cross/aarch64-linux-gnu.ini
DIR="${UOPCG_CROSS_DIR:-build-aarch64}"
TRIPLE=aarch64-linux-gnu
MULT="${UOPCG_CROSS_TIMEOUT_MULTIPLIER:-4}"
OPTIONS=(-Dopencl=disabled -Dtests=true -Dexamples=true -Dbenchmarks=false)
if [[ -d "$UOPCG_CORPUS" ]]; then OPTIONS+=("-Dcorpus_dir=$UOPCG_CORPUS"); fi
# The cross file names the compilers; CC/CXX from the environment must not leak into the setup.
unset CC CXX CFLAGS CXXFLAGS LDFLAGS

# --- 1 packages ---------------------------------------------------------------------------------
uopcg_section "1/5 packages"
uopcg_packages meson ninja-build pkg-config python3 libboost-dev doctest-dev nlohmann-json3-dev \
  "g++-$TRIPLE" binutils-$TRIPLE qemu-user-static

if [[ "${UOPCG_CROSS_ZLIB:-1}" != 0 ]]; then
  # zlib is the one compiled library the tests link: take Debian's arm64 build (multiarch).
  if ! dpkg-query -W -f='${Status}' zlib1g-dev:arm64 2>/dev/null | grep -q 'install ok installed'; then
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
      uopcg_log "packages: adding the arm64 architecture (dpkg multiarch) for zlib1g-dev:arm64"
      if [[ $(id -u) -eq 0 ]]; then dpkg --add-architecture arm64; else sudo dpkg --add-architecture arm64; fi
      unset UOPCG_APT_UPDATED  # the arm64 package lists must be fetched
    fi
    uopcg_packages zlib1g-dev:arm64 ||
      uopcg_log "warning: zlib1g-dev:arm64 could not be installed: tests/io will not be built"
  fi
fi
for tool in "$TRIPLE-g++" qemu-aarch64-static; do
  command -v "$tool" >/dev/null 2>&1 || uopcg_die "$tool not found"
done
# The cross file's exe_wrapper, as meson runs it (step 5 starts a program with it too).
WRAPPER=(qemu-aarch64-static -L /usr/$TRIPLE)
if [[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]]; then
  uopcg_log "binfmt_misc: qemu-aarch64 is registered (the tests do not rely on it)"
else
  uopcg_log "binfmt_misc: no qemu-aarch64 registration; every aarch64 program runs through ${WRAPPER[*]}"
fi
"$TRIPLE-g++" --version | head -n1
qemu-aarch64-static --version | head -n1
printf 'meson %s, ninja %s, jobs %s, timeout multiplier %s, corpus %s\n' "$(meson --version)" \
  "$(ninja --version)" "$UOPCG_JOBS" "$MULT" "$UOPCG_CORPUS"

# --- 2 configure --------------------------------------------------------------------------------
uopcg_section "2/5 configure ($DIR/, $CROSS_FILE)"
if [[ -f "$DIR/meson-private/coredata.dat" ]]; then
  meson setup --reconfigure "$DIR" --cross-file "$CROSS_FILE" "${OPTIONS[@]}"
else
  if [[ -d "$DIR/meson-private" ]]; then
    uopcg_log "$DIR holds a failed setup: configuring it afresh"
    rm -rf "$DIR/meson-private" "$DIR/meson-info" "$DIR/meson-logs"
  elif [[ -e "$DIR" && -n "$(ls -A "$DIR" 2>/dev/null)" ]]; then
    uopcg_die "$DIR exists and is not a meson build directory; remove it"
  fi
  meson setup "$DIR" --cross-file "$CROSS_FILE" "${OPTIONS[@]}"
fi
grep -q '^Host machine cpu family: aarch64$' "$DIR/meson-logs/meson-log.txt" ||
  uopcg_die "$DIR is not a cross build for aarch64 (configured without $CROSS_FILE?)"

# --- 3 build ------------------------------------------------------------------------------------
uopcg_section "3/5 build ($DIR/, $TRIPLE-g++, -j$UOPCG_JOBS)"
meson compile -C "$DIR" -j "$UOPCG_JOBS"
# Every executable is an aarch64 binary (nothing of the host slipped in).
mapfile -t exes < <(find "$DIR/tests" "$DIR/examples" -type f -perm -u+x 2>/dev/null | sort)
bad=0
for e in "${exes[@]}"; do
  head -c 4 "$e" | grep -q $'\x7fELF' || continue
  machine=$("$TRIPLE-readelf" -h "$e" | awk -F: '/Machine:/ { gsub(/^[ \t]+/, "", $2); print $2 }')
  if [[ "$machine" != "AArch64" ]]; then
    uopcg_log "error: $e is a $machine binary"
    bad=1
  fi
done
[[ $bad -eq 0 ]] || uopcg_die "non-aarch64 binaries in $DIR"
uopcg_log "${#exes[@]} aarch64 executables"

# --- 4 test -------------------------------------------------------------------------------------
uopcg_section "4/5 test (qemu-aarch64-static, --timeout-multiplier $MULT)"
set +e
meson test -C "$DIR" --no-rebuild --print-errorlogs --num-processes "$UOPCG_JOBS" \
  --timeout-multiplier "$MULT" "$@"
status=$?
set -e

uopcg_section "5/5 embedded program (single header, -fno-exceptions -fno-rtti, under qemu)"
embedded="$DIR/tests/linked/header_only_single_noexcept"
if [[ -x "$embedded" ]]; then
  if out=$("${WRAPPER[@]}" "$embedded") && grep -q '^__kernel void linked_rownorm' <<<"$out" &&
     grep -q 'barrier(CLK_LOCAL_MEM_FENCE)' <<<"$out"; then
    sed -n '/^==== rownorm/,/^}/p' <<<"$out"
    uopcg_log "(one of 4 kernels, $(wc -l <<<"$out") lines of output) compiled to OpenCL C on aarch64"
  else
    uopcg_log "error: $embedded did not print the row-norm kernel with its barrier"
    status=1
  fi
else
  uopcg_log "error: $embedded was not built (is single_include/ generated?)"
  status=1
fi
uopcg_section_end

log="$DIR/meson-logs/testlog.txt"
if [[ -f "$log" ]]; then
  awk '
    /^\[doctest\] test cases:/ { gsub(/\|/, " "); tc += $4; tcp += $5; tcf += $7; n++ }
    /^\[doctest\] assertions:/ { gsub(/\|/, " "); as += $3; asp += $4; asf += $6 }
    END { if (n) printf "[doctest] %s (aarch64, qemu): %d test binaries: %d test cases (%d passed, %d failed), %d assertions (%d passed, %d failed)\n",
                        dir, n, tc, tcp, tcf, as, asp, asf }' dir="$DIR" "$log"
fi
printf '\n==== summary ====\n'
printf '  %s\n' "${UOPCG_TIMINGS[@]}"
elapsed=$(( $(date +%s) - T0 ))
if [[ $status -ne 0 ]]; then
  printf 'uopcg cross-aarch64.sh: FAILED (meson test status %d) in %ds; see %s\n' "$status" "$elapsed" "$log"
  exit 1
fi
printf 'uopcg cross-aarch64.sh: all tests passed under qemu-aarch64 in %ds\n' "$elapsed"
