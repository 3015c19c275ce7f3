#!/usr/bin/env python3
"""UPCAST and UNROLL over staged buffers, uopcg against tinygrad: every kernel with a STAGE that a model
family captures under PCONTIG=2 (tools/model_differential.py's models, or `dmm`: three double matmuls
staged in LOCAL memory) is tried with every single UPCAST/UNROLL opt on its axes (amounts 0 and 4), and
with --pairs every pair of amount-4 opts. Each line: the opt list, whether tinygrad 0.14 compiles it
(its variant's outputs must match the kernel's), and uopcg's run of the kernel from the AST with the same
opts (PASS, its opt error, or its failure). The reference outputs are tinygrad's program of the kernel
without opts with its accumulator resets moved before their loops (model_differential's
outputs_with_resets_moved; tinygrad 0.14 resets them inside under PCONTIG=2). A developer tool, like
model_differential.py; the counts at the end are the ones docs/DIVERGENCES.md O8 quotes.

usage: POCL_MAX_PTHREAD_COUNT=1 python3 tools/stage_opts.py --uopcg build-fuzz/uopcg [--out /tmp/stage_opts]
                                                             [--pairs] [dmm | misc transformer ...]
"""
import argparse
import collections
import itertools
import json
import os
import subprocess
import sys

os.environ.setdefault("PCONTIG", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_differential as md  # noqa: E402
import tinygrad_oracle as oracle  # noqa: E402

import numpy as np  # noqa: E402
from tinygrad import Tensor, Device  # noqa: E402
from tinygrad.codegen.opt import Opt, OptOps  # noqa: E402
from tinygrad.uop.ops import Ops  # noqa: E402


def run_dmm():
  """(A @ B) @ D, softmax(A @ B) @ D and (A @ B - mean) @ D: under PCONTIG=2 tinygrad stages A @ B in LOCAL memory."""
  rng = np.random.default_rng(5)
  A, B, D = (Tensor(rng.standard_normal((16, 16)).astype(np.float32)).realize() for _ in range(3))
  ((A @ B) @ D).realize()
  ((A @ B).softmax(-1) @ D).realize()
  (((A @ B) - (A @ B).mean(-1, keepdim=True)) @ D).realize()


def main():
  md.MODELS["dmm"] = run_dmm
  ap = argparse.ArgumentParser()
  ap.add_argument("--uopcg", required=True)
  ap.add_argument("--out", default="/tmp/stage_opts")
  ap.add_argument("--pairs", action="store_true", help="also every pair of amount-4 opts")
  ap.add_argument("families", nargs="*", default=["dmm"], choices=list(md.MODELS))
  args = ap.parse_args()
  os.makedirs(args.out, exist_ok=True)
  cap = md.capture(args.families)
  ren = Device["CL"].renderer
  counts, seen, n = collections.Counter(), set(), 0
  for run in cap.runs:
    ast = cap.ast_of.get(run["prg"].key)
    if ast is None or ast.key in seen: continue
    seen.add(ast.key)
    if not any(u.op is Ops.STAGE for u in ast.toposort()): continue
    with md.SinkAtOpts() as at:
      k = oracle.export("", ast, ren, "pocl", {})
    base = f"st{n:02d}.{k['function_name']}"
    n += 1
    k["name"] = k["spec"] = base
    if md.attach(k, run, args.out, 1e-4): continue
    path = os.path.join(args.out, base + ".json")
    json.dump(k, open(path, "w"))
    blob = md.outputs_with_resets_moved(path)
    if blob is not None:
      with open(os.path.join(args.out, k["data"]["file"]), "wb") as f: f.write(blob)
    r = subprocess.run([args.uopcg, "run", path], capture_output=True, text=True)
    print(base, "without opts:", "PASS" if r.returncode == 0 else (r.stdout + r.stderr).strip().splitlines()[-1][:100], flush=True)
    s = md.Scheduler(at.sink, ren)
    s.convert_loop_to_global()
    singles = [Opt(op, ax, amt) for op, ax, amt in itertools.product((OptOps.UPCAST, OptOps.UNROLL), range(len(s.rngs)), (0, 4))]
    lists = [[o] for o in singles] + ([[a, b] for a in singles for b in singles if a.arg == 4 and b.arg == 4] if args.pairs else [])
    for opts in lists:
      ostr = md.opt_str(opts)
      try:
        v = oracle.export(base + "." + ostr, oracle.with_opts(ast, opts), ren, "pocl", {})
        tg = "tinygrad ok" if md.attach(v, run, args.out, 1e-3) is None else "tinygrad: other outputs"
      except Exception as e:  # tinygrad cannot apply or compile the list
        if "KernelOptError" in type(e).__name__: continue  # an axis the list cannot take: no comparison
        tg = f"tinygrad fails: {type(e).__name__}: {str(e)[:60]}"
      r = subprocess.run([args.uopcg, "run", path, "--from-ast", "--opts", ostr], capture_output=True, text=True)
      ur = "PASS" if r.returncode == 0 else (r.stdout + r.stderr).strip().splitlines()[-1][:110]
      if r.returncode != 0 and ("out of range" in ur or "is for GLOBAL" in ur): continue
      counts[(tg.split(":")[0], "PASS" if r.returncode == 0 else "refused" if "invalid Opt" in ur else "FAIL")] += 1
      print(f"{base}.{ostr:40s} | {tg[:60]:60s} | {ur.replace(base, '')}", flush=True)
  print("\n| tinygrad | uopcg from the AST | opt lists |\n|---|---|---|")
  for (tg, u), c in sorted(counts.items()): print(f"| {tg} | {u} | {c} |")


if __name__ == "__main__":
  main()
