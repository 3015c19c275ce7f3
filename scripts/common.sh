# shellcheck shell=bash disable=SC2034  # (sourced: the arrays are used by the scripts)
# Shared set-up for scripts/demo.sh, scripts/test.sh and scripts/fuzz.sh (sourced, not run).
#
# - uopcg_packages PKG...   installs the missing Debian packages (apt-get; sudo when not root)
# - uopcg_setup DIR CXX ARGS... configures DIR with compiler CXX, or reconfigures it (incremental)
# - uopcg_section TITLE     prints a step header and times the step (uopcg_section_end closes it)
#
# Environment: UOPCG_JOBS (parallel compile/test jobs; default: number of CPUs),
#              UOPCG_CXX_GCC / UOPCG_CXX_CLANG (compilers; default g++ / clang++),
#              UOPCG_CORPUS (reference kernels; default ../shared/corpus beside the repository).

UOPCG_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$UOPCG_ROOT" || exit 1

# Everything a fresh Debian 12 machine needs to build, test, install and run on PoCL (and Oclgrind,
# the race oracle of scripts/race-oracle.sh).
UOPCG_BASE_PACKAGES=(
  g++ clang meson ninja-build pkg-config cmake python3
  libboost-dev doctest-dev nlohmann-json3-dev zlib1g-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo oclgrind
)
# `uopcg compile --viz` draws its graphs with Graphviz's dot; its page is tested in headless Chromium
# (tests/io/test_viz_browser.py).
UOPCG_VIZ_PACKAGES=(graphviz chromium)
# clang's sanitizer and libFuzzer runtimes, and llvm-symbolizer for readable sanitizer reports.
UOPCG_SANITIZER_PACKAGES=(libclang-rt-14-dev llvm-14)

UOPCG_JOBS="${UOPCG_JOBS:-$(nproc 2>/dev/null || echo 2)}"
UOPCG_CXX_GCC="${UOPCG_CXX_GCC:-g++}"
UOPCG_CXX_CLANG="${UOPCG_CXX_CLANG:-clang++}"
export UOPCG_CORPUS="${UOPCG_CORPUS:-$(cd "$UOPCG_ROOT/.." && pwd)/shared/corpus}"
# PoCL: one worker thread, deterministic __local contents (see the PoCL notes in the reference).
export POCL_MAX_PTHREAD_COUNT="${POCL_MAX_PTHREAD_COUNT:-1}"

# Options of build/ (shared by demo.sh and test.sh, so neither reconfigures the other's build): -O2
# without debug info, which costs a third of the compile time of the template-heavy tests (configure
# a directory of your own with -Dbuildtype=debug to debug). test.sh's clang build lowers it to -O0.
UOPCG_MAIN_OPTIONS=(-Dtests=true -Dexamples=true -Dbenchmarks=true -Dopencl=enabled
                    -Doptimization=2 -Ddebug=false)

uopcg_log() { printf '%s\n' "$*"; }
uopcg_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

UOPCG_SECTION_NAME=""
UOPCG_SECTION_START=0
UOPCG_TIMINGS=()
uopcg_section() {
  uopcg_section_end
  UOPCG_SECTION_NAME="$1"
  UOPCG_SECTION_START=$(date +%s)
  printf '\n==== %s ====\n' "$1"
}
uopcg_section_end() {
  if [[ -n "$UOPCG_SECTION_NAME" ]]; then
    local dt=$(( $(date +%s) - UOPCG_SECTION_START ))
    UOPCG_TIMINGS+=("$(printf '%-34s %4ds' "$UOPCG_SECTION_NAME" "$dt")")
    printf -- '---- %s: done in %ds\n' "$UOPCG_SECTION_NAME" "$dt"
    UOPCG_SECTION_NAME=""
  fi
}

# uopcg_packages PKG... : apt-get install whatever of PKG is not installed (update once, only then).
uopcg_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    uopcg_log "packages: all ${#} present"
    return 0
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    uopcg_log "warning: not a Debian system; install these yourself if the build fails: ${missing[*]}"
    return 0
  fi
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || uopcg_die "missing packages (${missing[*]}) and no sudo"
    sudo=(sudo)
  fi
  uopcg_log "packages: installing ${missing[*]} (apt-get; this can take a few minutes)"
  if [[ -z "${UOPCG_APT_UPDATED:-}" ]]; then
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    UOPCG_APT_UPDATED=1
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
  uopcg_log "packages: installed ${#missing[@]}"
}

# The C++ compiler a configured build directory uses (empty when unknown).
uopcg_build_cxx() {
  local info="$1/meson-info/intro-compilers.json"
  [[ -f "$info" ]] || return 0
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["host"]["cpp"]["exelist"][-1])' "$info" \
    2>/dev/null || true
}

# uopcg_setup DIR CXX MESON_ARGS... : configure DIR, or reconfigure it in place (picks up new headers
# and the given options; only what changed is rebuilt). A directory made with another compiler, or
# left half-configured by a failed first setup, is configured afresh.
uopcg_setup() {
  local dir="$1" cxx="$2"
  shift 2
  local want have
  want="$(readlink -f "$(command -v "$cxx")" 2>/dev/null || echo "$cxx")"
  if [[ -f "$dir/meson-private/coredata.dat" ]]; then
    have="$(uopcg_build_cxx "$dir")"
    have="$(readlink -f "$(command -v "$have" 2>/dev/null || echo "$have")" 2>/dev/null || echo "$have")"
    if [[ -n "$have" && "$have" != "$want" ]]; then
      uopcg_log "$dir was configured with $have, not $want: configuring it afresh"
      CXX="$cxx" meson setup --wipe "$dir" "$@"
    else
      # (meson 1.0's setup --reconfigure ignores changed compiler options such as cpp_args;
      # meson configure sets them)
      meson configure "$dir" "$@" >/dev/null 2>&1 || true
      CXX="$cxx" meson setup --reconfigure "$dir" "$@"
    fi
  elif [[ -d "$dir/meson-private" ]]; then
    uopcg_log "$dir holds a failed setup: configuring it afresh"
    rm -rf "$dir/meson-private" "$dir/meson-info" "$dir/meson-logs"
    CXX="$cxx" meson setup "$dir" "$@"
  elif [[ -e "$dir" && -n "$(ls -A "$dir" 2>/dev/null)" ]]; then
    uopcg_die "$dir exists and is not a meson build directory; remove it"
  else
    CXX="$cxx" meson setup "$dir" "$@"
  fi
}

uopcg_compile() { meson compile -C "$1" -j "$UOPCG_JOBS" "${@:2}"; }
