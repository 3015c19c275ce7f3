#!/usr/bin/env bash
# Compile time and peak memory of a file holding one rule set of N rules (bench/gen_rule_file.py),
# against the same file with 1 rule, on g++ and clang at -O0 and -O2; prints the marginal cost per
# rule, and the same for the rules written by hand as plain C++ functions (gen_rule_file.py --plain)
# with the ratio of the two: what the pattern library's types, checks and dispatch cost over the code
# they stand for. Time is the compiler's CPU time (user + system), the least of REPS runs (the four
# files alternating): on a shared machine, elapsed time and single runs vary by tens of percent.
# Sequential (the machine has 2 cores); takes a few minutes per repetition.
# usage: bench/rule_compile_cost.sh [N=200] [REPS=1]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
reps=${2:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 bench/gen_rule_file.py 1 "$tmp/r1.cpp"
python3 bench/gen_rule_file.py "$n" "$tmp/rn.cpp"
python3 bench/gen_rule_file.py 1 "$tmp/p1.cpp" --plain
python3 bench/gen_rule_file.py "$n" "$tmp/pn.cpp" --plain
printf '| compiler | flags | 1 rule: s | 1 rule: MB | %d rules: s | %d rules: MB | ms per rule | by hand: ms per rule | ratio |\n' "$n" "$n"
printf '|---|---|---|---|---|---|---|---|---|\n'
for cxx in g++ clang++; do
  for opt in -O0 -O2; do
    declare -A secs=() mb=()
    for ((r = 0; r < reps; r++)); do
      for f in r1 rn p1 pn; do
        /usr/bin/time -f '%U %S %M' -o "$tmp/time" "$cxx" -std=c++20 $opt -Iinclude -c "$tmp/$f.cpp" -o "$tmp/$f.o"
        read -r user sys kb < "$tmp/time"
        s=$(python3 -c "print(f'{$user + $sys:.2f}')")
        if [[ -z "${secs[$f]:-}" ]] || python3 -c "import sys; sys.exit(0 if $s < ${secs[$f]} else 1)"; then secs[$f]=$s; fi
        mb[$f]=$((kb / 1024))
      done
    done
    read -r per hand ratio < <(python3 -c "u, p = (${secs[rn]} - ${secs[r1]}) * 1000 / ($n - 1), (${secs[pn]} - ${secs[p1]}) * 1000 / ($n - 1)
print(f'{u:.1f} {p:.1f}', f'{u / p:.2f}' if p > 0 else '-')")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$cxx" "$opt" "${secs[r1]}" "${mb[r1]}" "${secs[rn]}" "${mb[rn]}" "$per" "$hand" "$ratio"
    unset secs mb
  done
done
