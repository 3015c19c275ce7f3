#!/usr/bin/env bash
# Oclgrind as an independent race oracle for the barrier verifier.
#
# Every LOCAL-memory kernel of the corpus (through `uopcg run`) and of the builder tests and the
# classic patterns (tests/e2e/local_patterns.hpp, through `race_kernels run`) runs under Oclgrind's
# dynamic data-race detector: the clean program must pass and show no race and no uninitialised
# read; then each of its barriers is dropped singly and the verifier's verdict (`uopcg compile
# --drop-barrier N`, `race_kernels verify NAME --drop-barrier N`) is compared with Oclgrind's on the
# program run anyway (`--unverified`). Prints a table and a last line
#   agree A of N, verifier false positives P, false negatives F
# Exit 0 when every row agrees and every clean program passes clean, 1 otherwise, 77 (skipped) when
# oclgrind is not installed.
#
# usage: scripts/race-oracle.sh [--quick] [--build DIR] [--uopcg PATH] [--race-kernels PATH] [--verbose]
#   --quick         a time-bounded subset (what CI runs as the meson test e2e_race_oracle)
#   --build DIR     take uopcg and race_kernels from this build directory (default: build)
#   --verbose       print Oclgrind's report for every row that is not clean
# Environment: UOPCG_CORPUS (the corpus directory; default ../shared/corpus beside the repository).
set -u

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
uopcg="" race_kernels="" quick=0 verbose=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --verbose) verbose=1 ;;
    --build) build="$2"; shift ;;
    --uopcg) uopcg="$2"; shift ;;
    --race-kernels) race_kernels="$2"; shift ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "race-oracle: unexpected argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
uopcg="${uopcg:-$build/uopcg}"
race_kernels="${race_kernels:-$build/tests/e2e/race_kernels}"
corpus="${UOPCG_CORPUS:-$(cd "$root/.." && pwd)/shared/corpus}"

if ! command -v oclgrind >/dev/null 2>&1; then
  echo "race-oracle: skipped: oclgrind is not installed (Debian package oclgrind)"
  exit 77
fi
for tool in "$uopcg" "$race_kernels"; do
  [[ -x "$tool" ]] || { echo "race-oracle: $tool is not built (ninja -C $build uopcg tests/e2e/race_kernels)" >&2; exit 2; }
done
# Oclgrind replaces the OpenCL library for the command it runs. Its default leaves out write-write
# races where both work-items store the same value (--uniform-writes would count them), as the
# verifier does for one STORE (barrier_program.hpp, store_value_dependencies). Uninitialised values
# are looked for in the clean programs only (in a faulty one they are the symptom of the race, and
# their reports would crowd out the race's), built with -cl-opt-disable: on optimised code Oclgrind
# reports a float4 assembled lane by lane as uninitialised though every lane is written (matmul_64's
# stores to LOCAL memory).
oclgrind_cmd=(oclgrind --data-races)
clean_extra=(--uninitialized --build-options -cl-opt-disable)
unset UOPCG_OPENCL_DEVICE

# --- the kernels: "corpus NAME PATH" and "pattern NAME", each with its barrier count ---------------
kinds=() names=() paths=() counts=()
quick_corpus=(red_sum_4096_group red_sum_rows_local_group)
quick_patterns=(tree_reduce_sequential tiled_matmul two_pass_variance builder_dmm_stage)
in_list() { local x="$1"; shift; local y; for y in "$@"; do [[ "$x" == "$y" ]] && return 0; done; return 1; }

if [[ -d "$corpus" ]]; then
  for f in "$corpus"/*.json; do
    name="$(basename "$f" .json)"
    [[ "$name" == index ]] && continue
    [[ $quick -eq 1 ]] && ! in_list "$name" "${quick_corpus[@]}" && continue
    listing="$("$uopcg" compile "$f" --stage linearize 2>/dev/null)" || continue
    grep -q 'addrspace=AddrSpace.LOCAL' <<<"$listing" || continue
    kinds+=(corpus) names+=("$name") paths+=("$f") counts+=("$(grep -c '^%[0-9]* *BARRIER ' <<<"$listing")")
  done
else
  echo "race-oracle: no corpus at $corpus (UOPCG_CORPUS): patterns only" >&2
fi
while read -r name count; do
  [[ $quick -eq 1 ]] && ! in_list "$name" "${quick_patterns[@]}" && continue
  kinds+=(pattern) names+=("$name") paths+=("") counts+=("$count")
done < <("$race_kernels" list)

# --- one row per program: the clean one, then each barrier dropped --------------------------------
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
agree=0 total=0 false_pos=0 false_neg=0 bad_clean=0

# verifier verdict of kernel k with barrier $2 dropped ("" = none): race / clean
verifier_verdict() {
  local k="$1" drop=("${@:2}") rc
  if [[ "${kinds[$k]}" == corpus ]]; then
    "$uopcg" compile "${paths[$k]}" "${drop[@]}" >/dev/null 2>&1
  else
    "$race_kernels" verify "${names[$k]}" "${drop[@]}" >/dev/null 2>&1
  fi
  rc=$?
  case $rc in 0) echo clean ;; 3) echo race ;; *) echo "error($rc)" ;; esac
}
# Oclgrind's verdict: race / uninit / clean, and whether the output matched (PASS / FAIL / ERROR)
oclgrind_verdict() {
  local k="$1" drop=("${@:2}") rc cmd=("${oclgrind_cmd[@]}")
  [[ ${#drop[@]} -eq 0 ]] && cmd+=("${clean_extra[@]}")
  if [[ "${kinds[$k]}" == corpus ]]; then
    "${cmd[@]}" "$uopcg" run "${paths[$k]}" "${drop[@]}" --unverified >"$log" 2>&1
  else
    "${cmd[@]}" "$race_kernels" run "${names[$k]}" "${drop[@]}" --unverified >"$log" 2>&1
  fi
  rc=$?
  local out=PASS
  [[ $rc -eq 1 ]] && out=FAIL
  [[ $rc -ne 0 && $rc -ne 1 ]] && out="ERROR($rc)"
  if grep -q 'data race' "$log"; then echo "race $out"
  elif grep -qi 'uninitiali[sz]ed' "$log"; then echo "uninit $out"
  else echo "clean $out"; fi
}

printf '%-30s %-8s %-9s %-9s %-6s %s\n' kernel barrier verifier oclgrind output agree
for k in "${!names[@]}"; do
  for ((b = -1; b < counts[k]; ++b)); do
    drop=()
    label=none
    if [[ $b -ge 0 ]]; then drop=(--drop-barrier "$b"); label="$b"; fi
    v="$(verifier_verdict "$k" "${drop[@]}")"
    read -r o out <<<"$(oclgrind_verdict "$k" "${drop[@]}")"
    total=$((total + 1))
    ok=yes
    if [[ "$v" == "$o" ]]; then
      agree=$((agree + 1))
    else
      ok=NO
      [[ "$v" == race && "$o" != race ]] && false_pos=$((false_pos + 1))
      [[ "$v" == clean && "$o" == race ]] && false_neg=$((false_neg + 1))
    fi
    if [[ $b -lt 0 && ( "$o" != clean || "$out" != PASS || "$v" != clean ) ]]; then
      bad_clean=$((bad_clean + 1))
      ok=NO
    fi
    printf '%-30s %-8s %-9s %-9s %-6s %s\n' "${names[$k]}" "$label" "$v" "$o" "$out" "$ok"
    if [[ $verbose -eq 1 && "$o" != clean ]]; then sed 's/^/    | /' "$log" | head -40; fi
  done
done
if [[ $bad_clean -gt 0 ]]; then
  echo "clean programs that failed, raced or were rejected: $bad_clean"
fi
echo "agree $agree of $total, verifier false positives $false_pos, false negatives $false_neg"
[[ $agree -eq $total && $bad_clean -eq 0 ]]
