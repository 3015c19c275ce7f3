#!/usr/bin/env python3
"""BEAM search, uopcg against tinygrad, on corpus kernels (a benchmark that prints figures).

For each kernel: `uopcg search --beam N --no-cache` from the file's AST (wall time of the search, the
opts it chose), beside tinygrad 0.14.0's BEAM=N on the same AST and device from the TSV
bench/tinygrad_beam.py writes (bench/beam_tinygrad.tsv; --run-tinygrad refreshes it first, which
needs tinygrad installed). Then the kernels both searches chose, and the heuristics' choice, are
timed the same way by uopcg (`uopcg run --from-ast --opts ... --time`: median device time on the
file's inputs, outputs checked), rounds alternating. Both searches run with POCL_KERNEL_CACHE=0, so
PoCL builds every candidate as in a first search.

The anchor a C++ user would otherwise reach for (issue 36, measured outside this script): Apache TVM
0.27 tuned with 64 MetaSchedule trials runs matmul_64 in 22 us on this machine's PoCL, against 85 us
for tinygrad's heuristics' choice; it is printed next to the figures measured here.

usage: bench/beam_vs_tinygrad.py [--uopcg build/uopcg] [--corpus ../shared/corpus] [--beam 4] [--rounds 3]
                                 [--runs 100] [--run-tinygrad] [KERNEL...]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = ["matmul_64", "red_sum_4096_group", "red_sum_rows_f32"]
TVM = {"kernel": "matmul_64", "tvm_us": 22.0, "tinygrad_heuristic_us": 85.0}

ap = argparse.ArgumentParser()
ap.add_argument("--uopcg", default=os.path.join(ROOT, "build", "uopcg"))
ap.add_argument("--corpus", default=os.environ.get("UOPCG_CORPUS", os.path.join(ROOT, "..", "shared", "corpus")))
ap.add_argument("--beam", type=int, default=4)
ap.add_argument("--rounds", type=int, default=3, help="alternating timing rounds per choice")
ap.add_argument("--runs", type=int, default=100, help="launches per timing round")
ap.add_argument("--tsv", default=os.path.join(ROOT, "bench", "beam_tinygrad.tsv"))
ap.add_argument("--run-tinygrad", action="store_true", help="run bench/tinygrad_beam.py first (tinygrad must be installed)")
ap.add_argument("kernels", nargs="*", default=KERNELS)
a = ap.parse_args()
env = {**os.environ, "POCL_KERNEL_CACHE": "0"}


def sh(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


if a.run_tinygrad:
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "tinygrad_beam.py"), "--beam", str(a.beam), "--out", a.tsv, *a.kernels],
                   check=True, env=env)
tg = {}
with open(a.tsv) as f:
    rows = [l.rstrip("\n").split("\t") for l in f if not l.startswith("#")]
for r in rows[1:]:
    d = dict(zip(rows[0], r))
    if int(d["beam"]) == a.beam:
        tg[d["kernel"]] = d


def exec_us(kernel, opts):
    out = sh(a.uopcg, "run", os.path.join(a.corpus, kernel + ".json"), "--from-ast", "--opts", opts, "--time", "--runs", str(a.runs))
    if not out.startswith("PASS"):
        sys.exit(f"{kernel} --opts {opts}: the kernel's outputs differ from the file's:\n{out}")
    return float(re.search(r"^exec_us ([0-9.]+)$", out, re.M).group(1))


print(f"BEAM={a.beam}, search wall time (s) and the chosen kernels' device time (us, uopcg run --time, median of medians)")
print("kernel\tuopcg_search_s\ttinygrad_search_s\tspeedup\theuristic_us\tuopcg_best_us\ttinygrad_best_us\tuopcg_opts\ttinygrad_opts")
results = {}
for k in a.kernels:
    out = sh(a.uopcg, "search", os.path.join(a.corpus, k + ".json"), "--beam", str(a.beam), "--no-cache", "--runs", "20")
    search_s = float(re.search(r"^search .* ([0-9.]+) s \(codegen", out, re.M).group(1))
    ours = re.search(r"^best (\S+) heuristic_us", out, re.M).group(1)
    heur = re.search(r"^heuristic +(\S+)", out, re.M).group(1)
    theirs = tg.get(k, {}).get("opts")
    choices = {"heuristic": heur, "uopcg": ours}
    if theirs:
        choices["tinygrad"] = theirs
    times = {c: [] for c in choices}
    for _ in range(a.rounds):
        for c, opts in choices.items():
            times[c].append(exec_us(k, opts))
    med = {c: statistics.median(v) for c, v in times.items()}
    tg_s = float(tg[k]["search_s"]) if k in tg else float("nan")
    results[k] = med
    print(f"{k}\t{search_s:.1f}\t{tg_s:.1f}\t{tg_s / search_s:.1f}x\t{med['heuristic']:.1f}\t{med['uopcg']:.1f}\t"
          f"{med.get('tinygrad', float('nan')):.1f}\t{ours}\t{theirs or '-'}")
    sys.stdout.flush()
if TVM["kernel"] in results:
    m = results[TVM["kernel"]]
    print(f"anchor {TVM['kernel']}: TVM 0.27 tuned {TVM['tvm_us']:.0f} us vs tinygrad heuristics {TVM['tinygrad_heuristic_us']:.0f} us "
          f"({TVM['tinygrad_heuristic_us'] / TVM['tvm_us']:.1f}x, issue 36's figures); here the heuristics' kernel "
          f"{m['heuristic']:.1f} us, uopcg BEAM {m['uopcg']:.1f} us ({m['heuristic'] / m['uopcg']:.1f}x)")
