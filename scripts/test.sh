#!/usr/bin/env bash
# Runs every check CI runs (.ci/run calls this and nothing else), on a fresh Debian 12 machine or
# incrementally on a developer's:
#
#   1 packages       install whatever is missing (apt-get), print the toolchain and OpenCL devices
#   2 amalgamation   python3 tools/amalgamate.py --check (single_include/ is up to date)
#   3 gcc            g++ build in build/ (everything, -Werror, header checks), its tests
#   4 clang          clang++ -O0 build in build-clang/ (no header checks, no benchmarks), its tests
#   5 sanitizers     clang++ ASan+UBSan build in build-san/, its tests
#   6 single-header  the suites compiled against single_include/uopcg/uopcg.hpp alone (in build/)
#   7 install        meson install (build/) into a temporary directory; pkg-config consumers (uopcg,
#                    uopcg-single), CMake find_package(uopcg) consumers (uopcg::uopcg, uopcg::single)
#                    and a meson subproject consumer build and run; a header-only install
#                    (tests/install/lean_install.sh) has no targets
#
# Usage: scripts/test.sh [STEP...]   (default: all; e.g. `scripts/test.sh gcc single-header`)
# A failing step does not stop the others (steps 6 and 7 need step 3's build); the exit status is
# non-zero if any step failed. Build directories are reused (reconfigured in place), so a second run
# only rebuilds what changed.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ALL_STEPS=(amalgamation gcc clang sanitizers single-header install)
if [[ $# -gt 0 ]]; then STEPS=("$@"); else STEPS=("${ALL_STEPS[@]}"); fi
for s in "${STEPS[@]}"; do
  [[ " ${ALL_STEPS[*]} " == *" $s "* ]] || uopcg_die "unknown step '$s' (steps: ${ALL_STEPS[*]})"
done
want() { [[ " ${STEPS[*]} " == *" $1 "* ]]; }
T0=$(date +%s)
DOCTEST_TOTALS=()
FAILED=()
INST=""
trap '[[ -z "$INST" ]] || rm -rf "$INST"' EXIT

# step NAME FUNCTION: runs FUNCTION in a subshell with `set -e`, records a failure and goes on.
step() {
  local name="$1" rc
  set +e
  (set -e; "$2")
  rc=$?
  set -e
  if [[ $rc -ne 0 ]]; then
    FAILED+=("$name")
    printf '**** %s FAILED (status %d)\n' "$name" "$rc"
  fi
  return 0
}
failed() { [[ " ${FAILED[*]} " == *" $1 "* ]]; }

# Adds up doctest's own summary lines of a build's last test run (meson keeps every test's output in
# meson-logs/testlog.txt) and prints them.
doctest_totals() {
  local log="$1/meson-logs/testlog.txt" line
  [[ -f "$log" ]] || return 0
  line=$(awk '
    /^\[doctest\] test cases:/ { gsub(/\|/, " "); tc += $4; tcp += $5; tcf += $7; n++ }
    /^\[doctest\] assertions:/ { gsub(/\|/, " "); as += $3; asp += $4; asf += $6 }
    END { if (n) printf "%d test binaries: %d test cases (%d passed, %d failed), %d assertions (%d passed, %d failed)",
                       n, tc, tcp, tcf, as, asp, asf }' "$log")
  if [[ -n "$line" ]]; then
    printf '[doctest] %s: %s\n' "$1" "$line"
    DOCTEST_TOTALS+=("$1: $line")
  fi
}

# Each meson test run appends its results here; the closing line adds them up.
UOPCG_RESULTS="$(mktemp "${TMPDIR:-/tmp}/uopcg-results.XXXXXX")"
export UOPCG_RESULTS
run_tests() {  # DIR MESON_TEST_ARGS...
  local rc=0
  meson test -C "$1" --print-errorlogs --num-processes "$UOPCG_JOBS" "${@:2}" || rc=$?
  python3 -c 'import json,sys
for line in open(sys.argv[1], encoding="utf-8"): print(json.loads(line).get("result", "?"))' \
    "$1/meson-logs/testlog.json" >> "$UOPCG_RESULTS" 2>/dev/null || true
  return $rc
}

# --- 1 packages ---------------------------------------------------------------------------------
uopcg_section "1/7 packages"
PKGS=("${UOPCG_BASE_PACKAGES[@]}" "${UOPCG_VIZ_PACKAGES[@]}")
if want sanitizers; then PKGS+=("${UOPCG_SANITIZER_PACKAGES[@]}"); fi
uopcg_packages "${PKGS[@]}"
"$UOPCG_CXX_GCC" --version | head -n1
"$UOPCG_CXX_CLANG" --version | head -n1
printf 'meson %s, ninja %s, %s, cmake %s\n' "$(meson --version)" "$(ninja --version)" \
  "$(python3 --version)" "$(cmake --version | head -n1 | awk '{print $3}')"
printf 'jobs: %s, corpus: %s\n' "$UOPCG_JOBS" "$UOPCG_CORPUS"
[[ -d "$UOPCG_CORPUS" ]] || uopcg_log "warning: no corpus at $UOPCG_CORPUS (set UOPCG_CORPUS)"
clinfo -l 2>/dev/null || uopcg_log "warning: clinfo lists no OpenCL platform"

# --- 2 amalgamation -----------------------------------------------------------------------------
amalgamation() { python3 tools/amalgamate.py --check; }

# --- 3..5 builds --------------------------------------------------------------------------------
build_gcc() {
  uopcg_setup build "$UOPCG_CXX_GCC" "${UOPCG_MAIN_OPTIONS[@]}"
  uopcg_compile build
}
test_gcc() { run_tests build --no-suite single_header; }

build_clang() {
  # the standalone-header checks run in the g++ build: a header's includes do not depend on the
  # compiler (both use libstdc++), and they were a third of this build's compile time; so do the
  # benchmarks, which print figures and are no tests. -O0: clang's warnings do not depend on the
  # optimizer (g++'s do, so build/ stays -O2, as users compile), and -O2 made this build's compiles
  # about 2.5 times as long for tests that run in about the same time
  uopcg_setup build-clang "$UOPCG_CXX_CLANG" "${UOPCG_MAIN_OPTIONS[@]}" -Doptimization=0 -Dheader_checks=false \
    -Dbenchmarks=false
  uopcg_compile build-clang
}
test_clang() { run_tests build-clang; }

build_san() {
  # -O0 with line tables only: cheap to compile, and sanitizer reports still name file:line.
  uopcg_setup build-san "$UOPCG_CXX_CLANG" -Dtests=true -Dexamples=false -Dbenchmarks=false \
    -Dopencl=enabled -Doptimization=0 -Ddebug=false -Db_sanitize=address,undefined -Db_lundef=false \
    "-Dcpp_args=-fno-sanitize-recover=all -gline-tables-only"
  uopcg_compile build-san
}
test_san() { run_tests build-san --timeout-multiplier 4; }

# --- 6 single header ----------------------------------------------------------------------------
single_header() { run_tests build --suite single_header; }

# --- 7 install ----------------------------------------------------------------------------------
install_test() {
  meson install -C build --no-rebuild --destdir "$INST/dest" --quiet
  opt() {  # a build option of build/, as meson reports it
    meson introspect build --buildoptions |
      python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"
  }
  local prefix datadir flags
  prefix="$INST/dest$(opt prefix)"
  datadir="$(opt datadir)"
  if [[ "$datadir" == /* ]]; then datadir="$INST/dest$datadir"; else datadir="$prefix/$datadir"; fi
  uopcg_log "installed into $prefix:"
  (cd "$prefix" && find . -type f | sort | grep -v '^\./include/uopcg/' | sed 's/^/  /'
   printf '  (+ %s headers under include/uopcg/)\n' "$(find include/uopcg -name '*.hpp' | wc -l)")

  uopcg_log "-- pkg-config consumer"
  flags="$(PKG_CONFIG_PATH="$datadir/pkgconfig" pkg-config --define-variable=prefix="$prefix" --cflags uopcg)"
  uopcg_log "pkg-config --cflags uopcg: $flags"
  [[ "$flags" == *"$prefix/include"* ]] || uopcg_die "pkg-config does not point into the install"
  # shellcheck disable=SC2086
  "$UOPCG_CXX_GCC" -std=c++20 -Wall -Wextra -Werror -DUOPCG_CONSUMER_SINGLE=0 $flags tests/install/consumer.cpp \
    -o "$INST/consumer-pkgconfig"
  "$INST/consumer-pkgconfig"
  flags="$(PKG_CONFIG_PATH="$datadir/pkgconfig" pkg-config --define-variable=prefix="$prefix" --cflags uopcg-single)"
  uopcg_log "pkg-config --cflags uopcg-single: $flags"
  [[ "$flags" == *"$prefix/include/uopcg-single"* ]] || uopcg_die "pkg-config uopcg-single does not point at the single headers"
  # shellcheck disable=SC2086
  "$UOPCG_CXX_GCC" -std=c++20 -Wall -Wextra -Werror -DUOPCG_CONSUMER_SINGLE=1 $flags tests/install/consumer.cpp \
    -o "$INST/consumer-pkgconfig-single"
  "$INST/consumer-pkgconfig-single"

  uopcg_log "-- CMake find_package(uopcg) consumer"
  CXX="$UOPCG_CXX_GCC" cmake -S tests/install/cmake -B "$INST/cmake" -G Ninja \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$INST/cmake.log" 2>&1 ||
    { cat "$INST/cmake.log"; uopcg_die "CMake could not configure the consumer"; }
  grep -- '-- uopcg' "$INST/cmake.log" || true
  grep -q "uopcg_DIR:PATH=$datadir/cmake/uopcg" "$INST/cmake/CMakeCache.txt" ||
    uopcg_die "find_package(uopcg) did not find the installed package"
  cmake --build "$INST/cmake" >/dev/null
  "$INST/cmake/consumer"
  "$INST/cmake/consumer_single"

  uopcg_log "-- meson subproject consumer"
  mkdir -p "$INST/sub/subprojects"
  cp tests/install/subproject/meson.build tests/install/consumer.cpp "$INST/sub/"
  ln -s "$UOPCG_ROOT" "$INST/sub/subprojects/uopcg"
  CXX="$UOPCG_CXX_GCC" meson setup "$INST/sub/build" "$INST/sub" --force-fallback-for=uopcg \
    >"$INST/sub.log" 2>&1 || { cat "$INST/sub.log"; uopcg_die "the meson subproject consumer did not configure"; }
  meson compile -C "$INST/sub/build" >/dev/null
  "$INST/sub/build/consumer"

  uopcg_log "-- header-only install builds nothing"
  tests/install/lean_install.sh "$UOPCG_ROOT" "$INST/lean"
}

# --- run ----------------------------------------------------------------------------------------
if want amalgamation; then
  uopcg_section "2/7 amalgamation check"
  step amalgamation amalgamation
fi

if want gcc || want single-header || want install; then
  uopcg_section "3/7 g++ build (build/)"
  step gcc-build build_gcc
  if want gcc && ! failed gcc-build; then
    step gcc test_gcc
    doctest_totals build
  fi
fi

if want clang; then
  uopcg_section "4/7 clang++ build (build-clang/)"
  step clang-build build_clang
  if ! failed clang-build; then
    step clang test_clang
    doctest_totals build-clang
  fi
fi

if want sanitizers; then
  uopcg_section "5/7 ASan+UBSan build (build-san/, clang++)"
  step sanitizers-build build_san
  if ! failed sanitizers-build; then
    step sanitizers test_san
    doctest_totals build-san
  fi
fi

if want single-header; then
  uopcg_section "6/7 single-header test (build/, single_include/ only)"
  if failed gcc-build; then
    uopcg_log "skipped: build/ did not build"
  else
    step single-header single_header
    doctest_totals build
  fi
fi

if want install; then
  uopcg_section "7/7 install test"
  if failed gcc-build; then
    uopcg_log "skipped: build/ did not build"
  else
    INST="$(mktemp -d "${TMPDIR:-/tmp}/uopcg-install.XXXXXX")"
    step install install_test
  fi
fi

uopcg_section_end
printf '\n==== summary ====\n'
printf '  %s\n' "${UOPCG_TIMINGS[@]}"
if [[ ${#DOCTEST_TOTALS[@]} -gt 0 ]]; then printf '  [doctest] %s\n' "${DOCTEST_TOTALS[@]}"; fi
elapsed=$(( $(date +%s) - T0 ))
# The closing line CI reads: every meson test of this run (all builds), as "N passed, N failed".
totals=$(awk '$1 == "OK" || $1 == "EXPECTEDFAIL" { p++ } $1 != "OK" && $1 != "EXPECTEDFAIL" && $1 != "SKIP" { f++ }
              END { printf "%d passed, %d failed", p, f }' "$UOPCG_RESULTS")
rm -f "$UOPCG_RESULTS"
if [[ ${#FAILED[@]} -gt 0 ]]; then
  printf 'uopcg test.sh: FAILED: %s (of: %s) in %ds\n' "${FAILED[*]}" "${STEPS[*]}" "$elapsed"
  printf '%s\n' "$totals"
  exit 1
fi
printf 'uopcg test.sh: all steps passed (%s) in %ds\n' "${STEPS[*]}" "$elapsed"
printf '%s\n' "$totals"
