#!/usr/bin/env bash
# Compile time and peak memory of a file holding one rule set of N rules (bench/gen_rule_file.py),
# against the same file with 1 rule, on g++ and clang at -O0 and -O2; prints the marginal cost per
# rule. Sequential (the machine has 2 cores); takes a few minutes.
# usage: bench/rule_compile_cost.sh [N=200]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 bench/gen_rule_file.py 1 "$tmp/r1.cpp"
python3 bench/gen_rule_file.py "$n" "$tmp/rn.cpp"
printf '| compiler | flags | 1 rule: s | 1 rule: MB | %d rules: s | %d rules: MB | ms per rule |\n' "$n" "$n"
printf '|---|---|---|---|---|---|---|\n'
for cxx in g++ clang++; do
  for opt in -O0 -O2; do
    row=()
    for f in r1 rn; do
      /usr/bin/time -f '%e %M' -o "$tmp/time" "$cxx" -std=c++20 $opt -Iinclude -c "$tmp/$f.cpp" -o "$tmp/$f.o"
      read -r secs kb < "$tmp/time"
      row+=("$secs" "$((kb / 1024))")
    done
    per=$(python3 -c "print(f'{(${row[2]} - ${row[0]}) * 1000 / ($n - 1):.1f}')")
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$cxx" "$opt" "${row[0]}" "${row[1]}" "${row[2]}" "${row[3]}" "$per"
  done
done
