#!/usr/bin/env python3
"""Codegen (and, with --exec, kernel) speed of uopcg vs tinygrad on the corpus kernels.

Runs `uopcg bench` (median time from post-opts graph to OpenCL source, each run on a cleared arena: nothing interned, memory kept)
over every corpus kernel and prints it beside tinygrad's own figure from
corpus/bench_tinygrad.tsv (codegen_us: post-opts graph -> OpenCL source, same machine class), the
ratio per kernel and the geometric mean. With --from-ast the time is AST -> OpenCL source (front
stages, apply_opts with the file's recorded opts, pipeline, emitter), beside tinygrad's ast_to_src_us.
With --exec it also compares the device time of uopcg's kernel with tinygrad's kernel (the file's own
source), both launched by uopcg in one process.

usage: bench/codegen_vs_tinygrad.py [--uopcg build/uopcg] [--corpus ../shared/corpus] [--runs N] [--from-ast] [--exec] [--interleave]
"""
import argparse
import math
import os
import subprocess
import sys

ap = argparse.ArgumentParser()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap.add_argument("--uopcg", default=os.path.join(root, "build", "uopcg"))
ap.add_argument("--corpus", default=os.environ.get("UOPCG_CORPUS", os.path.join(root, "..", "shared", "corpus")))
ap.add_argument("--runs", type=int, default=51)
ap.add_argument("--exec", action="store_true")
ap.add_argument("--from-ast", action="store_true", help="time AST -> source against tinygrad's ast_to_src_us")
ap.add_argument("--interleave", action="store_true", help="one compile of each kernel per round (uopcg bench --interleave)")
a = ap.parse_args()

ref = {}
with open(os.path.join(a.corpus, "bench_tinygrad.tsv")) as f:
    rows = [l.rstrip("\n").split("\t") for l in f if not l.startswith("#")]
head = rows[0]
for r in rows[1:]:
    ref[r[0]] = dict(zip(head, r))

kernels = [k for k in ref]
files = [os.path.join(a.corpus, k + ".json") for k in kernels]
cmd = [a.uopcg, "bench", *files, "--runs", str(a.runs)] + (["--exec"] if a.exec else []) + (["--interleave"] if a.interleave else []) + (["--from-ast"] if a.from_ast else [])
out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().split("\n")
ours_head = out[0].split("\t")
ours = {r.split("\t")[0]: dict(zip(ours_head, r.split("\t"))) for r in out[1:]}

ref_col = "ast_to_src_us" if a.from_ast else "codegen_us"
what = "ast_to_src" if a.from_ast else "codegen"
print(f"kernel\tuopcg_{what}_us\ttinygrad_{what}_us\tspeedup" + ("\tuopcg_exec_us\ttinygrad_exec_us\texec_ratio" if a.exec else ""))
logs, elogs = [], []
for k in kernels:
    o, t = ours[k], ref[k]
    cg, tg = float(o["codegen_us"]), float(t[ref_col])
    sp = tg / cg
    logs.append(math.log(sp))
    line = f"{k}\t{cg:.1f}\t{tg:.1f}\t{sp:.0f}x"
    if a.exec:
        e, re_ = float(o["exec_us"]), float(o["ref_exec_us"])
        if e > 0 and re_ > 0 and not k.endswith("_native"):
            elogs.append(math.log(e / re_))
        line += f"\t{e:.1f}\t{re_:.1f}\t{e / re_:.2f}"
    print(line)
print(f"geomean {what} speedup vs tinygrad: {math.exp(sum(logs) / len(logs)):.0f}x (min {math.exp(min(logs)):.0f}x)")
if a.exec and elogs:
    print(f"geomean exec time ratio uopcg/tinygrad: {math.exp(sum(elogs) / len(elogs)):.3f}")
