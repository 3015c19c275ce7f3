#!/usr/bin/env bash
# Fuzzes uopcg with libFuzzer for SECONDS (default 60):
#   scripts/fuzz.sh [json|pipeline|ast] [SECONDS]
#   json      tests/fuzz/fuzz_json_import: the JSON importer, seeded with the corpus' kernel files
#   pipeline  tests/fuzz/fuzz_pipeline: post-opts graphs through the verifier, every stage, the
#             barrier verifier and the emitter, seeded with the corpus' post_opts graphs; its
#             mutator edits graphs (constants, dtypes, ops, axis types, sources)
#   ast       tests/fuzz/fuzz_from_ast: a kernel's AST and opts through the front stages, apply_opts
#             and the pipeline, seeded with the ASTs and applied_opts of the corpus and of the CI's
#             kernel files (tests/e2e/models); its mutator edits the graph, the opts and the target
# Configures build-fuzz/ with clang++ and -Dfuzz=true and builds the target (libFuzzer + ASan +
# UBSan). The growing corpus is kept in build-fuzz/fuzz-corpus[-pipeline]/, crash inputs in
# build-fuzz/fuzz-artifacts[-pipeline]/.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

target=json
if [[ "${1:-}" == json || "${1:-}" == pipeline || "${1:-}" == ast ]]; then target="$1"; shift; fi
duration="${1:-60}"
[[ "$duration" =~ ^[0-9]+$ ]] || uopcg_die "usage: scripts/fuzz.sh [json|pipeline|ast] [SECONDS]"
case $target in
  json) exe_name=fuzz_json_import suffix="" ;;
  pipeline) exe_name=fuzz_pipeline suffix="-pipeline" ;;
  ast) exe_name=fuzz_from_ast suffix="-ast" ;;
esac

uopcg_section "packages"
uopcg_packages "${UOPCG_BASE_PACKAGES[@]}" "${UOPCG_SANITIZER_PACKAGES[@]}"

uopcg_section "build (build-fuzz/, clang++)"
uopcg_setup build-fuzz "$UOPCG_CXX_CLANG" -Dfuzz=true -Dtests=true -Dexamples=false \
  -Dbenchmarks=false -Dopencl=disabled
uopcg_compile build-fuzz "tests/fuzz/$exe_name"
exe="build-fuzz/tests/fuzz/$exe_name"
[[ -x "$exe" ]] || uopcg_die "$exe was not built (tests/fuzz/meson.build)"

uopcg_section "seeds"
corpus="build-fuzz/fuzz-corpus$suffix"
artifacts="build-fuzz/fuzz-artifacts$suffix"
mkdir -p "$corpus" "$artifacts"
seeds="$(mktemp -d "${TMPDIR:-/tmp}/uopcg-fuzz-seeds.XXXXXX")"
trap 'rm -rf "$seeds"' EXIT
shopt -s nullglob
jsons=("$UOPCG_CORPUS"/*.json)
[[ ${#jsons[@]} -gt 0 ]] || uopcg_log "warning: no JSON seeds in $UOPCG_CORPUS"
if [[ $target == json ]]; then
  for f in "${jsons[@]}"; do cp "$f" "$seeds/"; done
else
  # a pipeline input is a kernel's post_opts graph (plus "fp16": true for the cl_khr_fp16 renderer);
  # an ast input is a kernel's AST, its applied_opts as text (LOCAL:0:4,...) and the renderer
  [[ $target == ast ]] && jsons+=(tests/e2e/models/*.json)
  python3 - "$target" "$seeds" "${jsons[@]}" <<'PY'
import json, os, sys
target, out = sys.argv[1], sys.argv[2]
for path in sys.argv[3:]:
    try:
        k = json.load(open(path, encoding="utf-8"))
    except (OSError, ValueError):
        continue
    if not isinstance(k, dict):
        continue
    fp16 = k.get("renderer_kind") == "fp16"
    if target == "pipeline":
        if "post_opts" not in k:
            continue
        doc = k["post_opts"]
        if fp16:
            doc["fp16"] = True
    else:
        if not isinstance(k.get("ast"), dict):
            continue
        opts = []
        for o in k.get("applied_opts") or []:
            arg, axis = o.get("arg"), o.get("axis")
            if isinstance(arg, list):
                arg = "(" + ",".join(str(x) for x in arg) + ")"
            opts.append(o["op"] if axis is None else f"{o['op']}:{axis}" + ("" if arg is None else f":{arg}"))
        doc = {"ast": k["ast"], "opts": ",".join(opts), "target": "fp16" if fp16 else "pocl"}
    with open(os.path.join(out, os.path.basename(path)), "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"))
PY
fi
uopcg_log "${#jsons[@]} seed files (from $UOPCG_CORPUS$([[ $target == ast ]] && echo " and tests/e2e/models")), $(find "$corpus" -type f | wc -l) inputs already in $corpus"

uopcg_section "fuzz for ${duration}s"
# New inputs go to the first directory ($corpus); the seeds are only read. The per-input NEW/REDUCE
# lines and the recommended dictionary stay in build-fuzz/fuzz-last$suffix.log.
dict=()
[[ $target == json && -f tests/fuzz/fuzz_json_import.dict ]] && dict=(-dict=tests/fuzz/fuzz_json_import.dict)
set +e
"$exe" "${dict[@]}" -max_total_time="$duration" -print_final_stats=1 -timeout=30 -rss_limit_mb=4096 \
  -artifact_prefix="$artifacts/" "$corpus" "$seeds" 2>&1 | tee "build-fuzz/fuzz-last$suffix.log" |
  awk '/^###### Recommended dictionary/ { skip = 1 } !skip && !/^#[0-9]+[[:space:]]+(NEW|REDUCE)/ && !/^[[:space:]]+NEW_FUNC/
       /^###### End of recommended dictionary/ { skip = 0 }'
status=${PIPESTATUS[0]}
set -e
if [[ $status -ne 0 ]]; then
  uopcg_die "the fuzzer stopped with status $status: see build-fuzz/fuzz-last$suffix.log and $artifacts/"
fi
uopcg_section_end
uopcg_log "fuzz.sh: no crash in ${duration}s"
