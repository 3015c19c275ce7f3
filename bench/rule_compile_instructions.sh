#!/usr/bin/env bash
# The compiler's instructions per rule of a file holding one rule set of N rules (bench/gen_rule_file.py),
# against the same file with BASE rules (default 1; with BASE=N/2 the figure leaves out what the
# first rule of each shape instantiates once, the shared drivers, and is the cost of one more rule):
# cachegrind counts of the compiler proper (cc1plus, clang -cc1; not the driver or the assembler).
# Unlike bench/rule_compile_cost.sh's times, the counts do not move with the machine's load, so two
# revisions compare on one run each. The same is counted for the rules written by hand as plain C++
# functions (gen_rule_file.py --plain), and the ratio of the two per-rule figures printed: what the
# pattern library's types, checks and dispatch cost over the code they stand for. Needs valgrind;
# takes a few minutes per configuration (two files are counted at a time).
# usage: bench/rule_compile_instructions.sh [N=200] [CONFIGS="g++:-O0 clang++:-O0 g++:-O2 clang++:-O2"] [BASE=1]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
configs=${2:-"g++:-O0 clang++:-O0 g++:-O2 clang++:-O2"}
base=${3:-1}
command -v valgrind >/dev/null || { echo "rule_compile_instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 bench/gen_rule_file.py "$base" "$tmp/r1.cpp"
python3 bench/gen_rule_file.py "$n" "$tmp/rn.cpp"
python3 bench/gen_rule_file.py "$base" "$tmp/p1.cpp" --plain
python3 bench/gen_rule_file.py "$n" "$tmp/pn.cpp" --plain
inc=$(pwd)/include

# instructions of compiling $3 with compiler $1 at $2 (the compiler proper only)
count() {
  local cxx=$1 opt=$2 src=$3 cmd
  if [[ $cxx == g++* ]]; then
    "$cxx" -std=c++20 -I"$inc" -E "$src" -o "$src.ii"
    cmd=("$("$cxx" -print-prog-name=cc1plus)" -fpreprocessed -quiet -std=c++20 "$opt" "$src.ii" -o "$src.s")
  else
    # the -cc1 line the driver would run, one argument per line
    mapfile -t cmd < <("$cxx" -std=c++20 "$opt" -I"$inc" -c "$src" -o "$src.o" -### 2>&1 |
                       grep -- '"-cc1"' | python3 -c 'import shlex, sys; print("\n".join(shlex.split(sys.stdin.read())))')
  fi
  valgrind --tool=cachegrind --cache-sim=no --branch-sim=no --cachegrind-out-file=/dev/null "${cmd[@]}" 2>&1 >/dev/null |
    awk '/I +refs/ { gsub(",", "", $NF); print $NF }'
}

printf '| compiler | flags | %d rules: G instr | %d rules: G instr | M instr per rule | by hand: M instr per rule | ratio |\n' "$base" "$n"
printf '|---|---|---|---|---|---|---|\n'
for cfg in $configs; do
  cxx=${cfg%%:*}
  opt=${cfg#*:}
  for f in r1 rn p1 pn; do
    count "$cxx" "$opt" "$tmp/$f.cpp" > "$tmp/$f.count" &
    [[ $f == rn || $f == pn ]] && wait
  done
  read -r i1 < "$tmp/r1.count"
  read -r in < "$tmp/rn.count"
  read -r p1 < "$tmp/p1.count"
  read -r pn < "$tmp/pn.count"
  python3 -c "u, p = ($in - $i1) / ($n - $base), ($pn - $p1) / ($n - $base)
print(f'| $cxx | $opt | {$i1 / 1e9:.2f} | {$in / 1e9:.2f} | {u / 1e6:.1f} | {p / 1e6:.1f} | {u / p:.2f} |')"
done
