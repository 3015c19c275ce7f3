#!/usr/bin/env bash
# Fuzzes the JSON kernel importer with libFuzzer for SECONDS (default 60):
#   scripts/fuzz.sh [SECONDS]
# Configures build-fuzz/ with clang++ and -Dfuzz=true, builds tests/fuzz's fuzz_json_import
# (libFuzzer + ASan + UBSan), seeds it with the corpus' JSON kernels and prints libFuzzer's final
# stats. The growing corpus is kept in build-fuzz/fuzz-corpus/, crash inputs in build-fuzz/fuzz-artifacts/.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

duration="${1:-60}"
[[ "$duration" =~ ^[0-9]+$ ]] || uopcg_die "usage: scripts/fuzz.sh [SECONDS]"

uopcg_section "packages"
uopcg_packages "${UOPCG_BASE_PACKAGES[@]}" "${UOPCG_SANITIZER_PACKAGES[@]}"

uopcg_section "build (build-fuzz/, clang++)"
uopcg_setup build-fuzz "$UOPCG_CXX_CLANG" -Dfuzz=true -Dtests=true -Dexamples=false \
  -Dbenchmarks=false -Dopencl=disabled
uopcg_compile build-fuzz tests/fuzz/fuzz_json_import
exe=build-fuzz/tests/fuzz/fuzz_json_import
[[ -x "$exe" ]] || uopcg_die "$exe was not built (tests/fuzz/meson.build)"

uopcg_section "seeds"
corpus=build-fuzz/fuzz-corpus
artifacts=build-fuzz/fuzz-artifacts
mkdir -p "$corpus" "$artifacts"
seeds="$(mktemp -d "${TMPDIR:-/tmp}/uopcg-fuzz-seeds.XXXXXX")"
trap 'rm -rf "$seeds"' EXIT
shopt -s nullglob
jsons=("$UOPCG_CORPUS"/*.json)
[[ ${#jsons[@]} -gt 0 ]] || uopcg_log "warning: no JSON seeds in $UOPCG_CORPUS"
for f in "${jsons[@]}"; do cp "$f" "$seeds/"; done
uopcg_log "${#jsons[@]} seed files from $UOPCG_CORPUS, $(find "$corpus" -type f | wc -l) inputs already in $corpus"

uopcg_section "fuzz for ${duration}s"
uopcg_section_end
# New inputs go to the first directory ($corpus); the seeds are only read. The per-input NEW/REDUCE
# lines and the recommended dictionary stay in build-fuzz/fuzz-last.log.
dict=()
[[ -f tests/fuzz/fuzz_json_import.dict ]] && dict=(-dict=tests/fuzz/fuzz_json_import.dict)
set +e
"$exe" "${dict[@]}" -max_total_time="$duration" -print_final_stats=1 -timeout=30 -rss_limit_mb=4096 \
  -artifact_prefix="$artifacts/" "$corpus" "$seeds" 2>&1 | tee build-fuzz/fuzz-last.log |
  awk '/^###### Recommended dictionary/ { skip = 1 } !skip && !/^#[0-9]+[[:space:]]+(NEW|REDUCE)/ && !/^[[:space:]]+NEW_FUNC/
       /^###### End of recommended dictionary/ { skip = 0 }'
status=${PIPESTATUS[0]}
set -e
if [[ $status -ne 0 ]]; then
  uopcg_die "the fuzzer stopped with status $status: see build-fuzz/fuzz-last.log and $artifacts/"
fi
uopcg_log "fuzz.sh: no crash in ${duration}s"
