#!/usr/bin/env python3
"""Kernels with a bound Variable, as tinygrad's JIT runs a decode step at a symbolic position: slices
`A[:n]`, softmax and attention scores over `start_pos+1`, matmuls, reshapes and expands of a symbolic
axis, a cumulative sum, a pad. Each kernel tinygrad 0.14.0 lowers is written as a kernel file with up
to three random opt variants from its BEAM action space (model_differential.random_variants), its
launch sizes as expressions where they depend on the variable (`{"t": "sym", "v": "(n<<6)"}`), and
`program.vars`. Kernel files carry no value for a variable, so the files are compiled, not run: uopcg's
source, from the post-opts graph and from the AST, is compared with tinygrad's. A difference is printed
as DIFF; pipeline divergence P20 (tinygrad's unfolded `gidx1/n`) and explicit wrap-around are the known
ones (docs/model-differential.md).

usage: python3 tools/symbolic_kernels.py UOPCG_EXE OUT_DIR [--seed S] [--variants N]
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_differential as md  # noqa: E402
import tinygrad_oracle as oracle  # noqa: E402
from tinygrad import Device, Tensor, Variable  # noqa: E402
from tinygrad.engine import realize  # noqa: E402


def cases():
  n, pos, m = Variable("n", 1, 64).bind(17), Variable("start_pos", 1, 63).bind(17), Variable("m", 2, 40).bind(9)
  A, B, C = Tensor.rand(64, 64).realize(), Tensor.rand(64).realize(), Tensor.rand(64, 32).realize()
  K, q = Tensor.rand(64, 32).realize(), Tensor.rand(4, 32).realize()
  return {
    "slice_mul": lambda: A[:n] * 2, "slice_sum": lambda: A[:n].sum(1), "slice_sum0": lambda: A[:n].sum(0),
    "softmax": lambda: B[:n].softmax(), "max": lambda: A[:n].max(1), "mean": lambda: A[:n].mean(),
    "two_vars": lambda: A[:n, :m] + 1, "matmul": lambda: A[:n] @ C, "matvec": lambda: A[:, :n] @ B[:n],
    "cumsum": lambda: B[:n].cumsum(), "pad": lambda: B[:n].pad(((2, 3),)) + 1,
    "scores": lambda: (q @ K[:pos + 1].T / 5.0).softmax(-1), "attn": lambda: (q @ K[:pos + 1].T).softmax(-1) @ K[:pos + 1],
    "reshape": lambda: A[:n].reshape(n, 8, 8).sum(2), "expand": lambda: B[:n].reshape(n, 1).expand(n, 32) * C[:n],
    "arange": lambda: Tensor.arange(pos + 1).float() * B[:pos + 1],
  }


def known(tinygrad: str, ours: str) -> str:
  """The known divergence a source difference shows, if one does."""
  unfolded = re.compile(r"[/%]\(?(data\d+_|alu\d+)\)?\)")
  if unfolded.search(tinygrad) and not unfolded.search(ours): return " (P20: tinygrad's unfolded id / variable)"
  if "as_uint(" in ours and "as_uint(" not in tinygrad: return " (explicit wrap-around)"
  return ""


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("uopcg")
  ap.add_argument("out")
  ap.add_argument("--seed", type=int, default=1)
  ap.add_argument("--variants", type=int, default=3)
  a = ap.parse_args()
  os.makedirs(a.out, exist_ok=True)
  ren, rng, files = Device["CL"].renderer, random.Random(a.seed), []
  for name, make in cases().items():
    cap = md.Capture()
    try:
      with cap:
        realize.to_program_cache.clear()
        make().realize()
    except Exception as e:  # noqa: BLE001 (tinygrad cannot run this case: nothing to compare)
      print(f"SKIP {name}: tinygrad: {type(e).__name__}: {str(e)[:200]}")
      continue
    for i, ast in enumerate(cap.ast_of.values()):
      base = f"sym.{name}.{i}"
      with md.SinkAtOpts() as at:
        k = oracle.export(base, ast, ren, "pocl", {})
      if not re.search(r"const int data\d+_", k["source"]): continue  # the variable folded away
      json.dump(md.symbolic_launch(k), open(os.path.join(a.out, base + ".json"), "w"))
      files.append(base)
      for j, opts in enumerate(md.random_variants(at.sink, ren, a.variants, rng, True)):
        try:
          v = oracle.export(f"{base}.v{j}", oracle.with_opts(ast, opts), ren, "pocl", {})
        except Exception as e:  # noqa: BLE001 (tinygrad cannot compile this opt list)
          print(f"SKIP {base}.v{j} [{md.opt_str(opts)}]: tinygrad: {type(e).__name__}: {str(e)[:200]}")
          continue
        json.dump(md.symbolic_launch(v), open(os.path.join(a.out, f"{base}.v{j}.json"), "w"))
        files.append(f"{base}.v{j}")
  same = failed = 0
  for f in files:
    path = os.path.join(a.out, f + ".json")
    want = json.load(open(path))["source"]
    for how in ([], ["--from-ast"]):
      r = subprocess.run([a.uopcg, "compile", path, *how], capture_output=True, text=True, timeout=300)
      if r.returncode != 0:
        failed += 1
        print(f"FAIL {f} {' '.join(how)}: {r.stderr.strip()[:300]}")
      elif r.stdout.rstrip("\n") == want: same += 1
      else: print(f"DIFF {f} {' '.join(how)}{known(want, r.stdout)}")
  print(f"{len(files)} files, {2 * len(files)} compiles: {same} identical to tinygrad's source, {failed} failed")
  sys.exit(1 if failed else 0)


if __name__ == "__main__":
  main()
