#!/usr/bin/env python3
"""The axes kernel opts see, uopcg against tinygrad: for each kernel of tools/ast_fuzz.py's seeds, the
RANGEs of the graph that enters apply_opts (after "simplify ranges"), drawn again from the seed and
run through tinygrad 0.14.0's front stages, and uopcg's (`uopcg compile --from-ast --opts none
--stage "simplify ranges"` on the kernel file ast_fuzz.py wrote). An opt names an axis by its
position among these ranges, so a kernel whose ranges differ (one folded away, merged or split where
tinygrad keeps it) compiles another kernel from tinygrad's opts, or refuses them. A developer tool:
tinygrad is not a dependency.

usage: front_axes.py UOPCG_EXE DIR SEED [--gen 2]   (DIR: an ast_fuzz.py --out directory of SEED)
       front_axes.py UOPCG_EXE DIR SEED --to LAST  (seeds SEED..LAST drawn here, each kernel file
                                                   written to DIR without data: no device run)
Exit status 1 when a kernel's ranges differ."""
import argparse
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ast_fuzz  # noqa: E402
import json  # noqa: E402
import tinygrad.codegen as cg  # noqa: E402
import tinygrad_oracle as oracle  # noqa: E402
from tinygrad import Device  # noqa: E402
from tinygrad.uop.ops import Ops, KernelInfo  # noqa: E402

STAGE = "simplify ranges"


def size_text(u) -> str:
  return str(u.arg) if u.op is Ops.CONST else u.render() if hasattr(u, "render") else "?"


def tinygrad_axes(ast) -> list:
  """(axis id fields, AxisType name, size) of every RANGE entering apply_opts, sorted."""
  seen = {}
  orig = cg.graph_rewrite

  def traced(sink, pm, *a, **kw):
    out = orig(sink, pm, *a, **kw)
    if kw.get("name") == STAGE: seen["g"] = out
    return out

  cg.graph_rewrite = traced
  try:
    cg.full_rewrite_to_sink(ast.replace(arg=KernelInfo(name=ast.arg.name, opts_to_apply=())), Device["CL"].renderer)
  finally:
    cg.graph_rewrite = orig
  g = seen.get("g")
  if g is None: return None
  return sorted((tuple(r.arg[:-1]), r.arg[-1].name, size_text(r.src[0])) for r in g.toposort() if r.op is Ops.RANGE)


_LINE = re.compile(r"^%(\d+)\s+(\w+)\s+\S+\s+\(([^)]*)\)\s*(.*?)\s*(;.*)?$")


def uopcg_axes(exe: str, path: str):
  p = subprocess.run([exe, "compile", path, "--from-ast", "--opts", "none", "--stage", STAGE],
                     capture_output=True, text=True, timeout=300)
  if p.returncode != 0: return "error: " + (p.stderr.strip().splitlines() or ["?"])[-1]
  nodes = {}
  for line in p.stdout.splitlines():
    m = _LINE.match(line)
    if m: nodes[int(m.group(1))] = (m.group(2), m.group(3), m.group(4))
  out = []
  for op, srcs, arg in nodes.values():
    if op != "RANGE": continue
    m = re.match(r"\((.*), AxisType\.(\w+)\)$", arg)
    ids = tuple(int(v) for v in m.group(1).split(",") if v.strip())
    src = nodes.get(int(srcs.split(",")[0].strip().lstrip("%")))
    size = src[2] if src and src[0] == "CONST" else "?"
    out.append((ids, m.group(2), size))
  return sorted(out)


def check_seed(exe: str, out_dir: str, seed: int, gen: int, kernels: int, write: bool) -> tuple:
  same = differ = skipped = 0
  for i in range(kernels):
    name = f"astfz.s{seed}.{i:03d}" if gen == 1 else f"astfz.g{gen}.s{seed}.{i:03d}"
    path = os.path.join(out_dir, name + ".json")
    try:
      ast = ast_fuzz.Gen(random.Random(seed * 100003 + i), gen).kernel(name.replace(".", "_"))
      if write: json.dump(oracle.export(name, ast, Device["CL"].renderer, "pocl", {}), open(path, "w"))
      if not os.path.exists(path):
        skipped += 1
        continue
      theirs = tinygrad_axes(ast)
    except Exception as e:  # noqa: BLE001  (a draw the UOp API or tinygrad's pipeline refuses)
      print(f"skip {name}: tinygrad: {type(e).__name__}")
      skipped += 1
      continue
    ours = uopcg_axes(exe, path)
    if theirs == ours:
      same += 1
    else:
      differ += 1
      print(f"DIFF {name}\n  tinygrad {theirs}\n  uopcg    {ours}", flush=True)
  print(f"seed {seed}: {same} kernels with tinygrad's axes, {differ} differ, {skipped} skipped", flush=True)
  return same, differ, skipped


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("exe")
  ap.add_argument("dir")
  ap.add_argument("seed", type=int)
  ap.add_argument("--to", type=int, help="draw and write the kernels of seeds SEED..TO here (no data)")
  ap.add_argument("--gen", type=int, default=2)
  ap.add_argument("--kernels", type=int, default=60)
  a = ap.parse_args()
  os.makedirs(a.dir, exist_ok=True)
  differ = 0
  for seed in range(a.seed, (a.to if a.to is not None else a.seed) + 1):
    differ += check_seed(a.exe, a.dir, seed, a.gen, a.kernels, a.to is not None)[1]
  return 1 if differ else 0


if __name__ == "__main__":
  sys.exit(main())
