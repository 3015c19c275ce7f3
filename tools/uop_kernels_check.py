#!/usr/bin/env python3
"""The values of tinygrad_oracle.uop_kernels_v3's kernels under every opt set (docs/uop-kernels.md).

For each AST of the batch the reference is tinygrad's program without opts (plain loops) run on the
OpenCL device with random inputs; uopcg then runs the AST with its own heuristics, with no opts and
with every explicit opt set the batch names for it (`uopcg run --from-ast --opts SPEC`), and each
run must reproduce the reference. Unlike the oracle's --run, which compares a file with tinygrad's
program for the same opts, this catches opts that change a kernel's values (in tinygrad or in uopcg).
usage: POCL_MAX_PTHREAD_COUNT=1 python3 tools/uop_kernels_check.py build/uopcg /tmp/uops3_values
Prints one line per AST; exit status 1 when a run fails.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tinygrad_oracle as O  # noqa: E402
from tinygrad.uop.ops import KernelInfo  # noqa: E402
from tinygrad.renderer.cstyle import OpenCLRenderer  # noqa: E402
from tinygrad.helpers import Target  # noqa: E402


def main():
  exe, out = sys.argv[1], sys.argv[2]
  os.makedirs(out, exist_ok=True)
  idx = json.load(open(os.path.join(O.CORPUS, "index.json")))
  ren = OpenCLRenderer(Target("CL", arch=idx["renderers"]["pocl"]["arch"]))
  groups = {}
  for name, ast in O.uop_kernels_v3(): groups.setdefault(ast.arg.name, []).append((name, ast))
  runs = failed = 0
  for base, items in groups.items():
    plain = items[0][1].replace(arg=KernelInfo(name=base, opts_to_apply=()))
    try:
      k = O.export(f"values_{base}", plain, ren, "pocl", {})
      O.attach_data(k, out, seed=1)
    except Exception as e:  # tinygrad cannot render or run it: no reference
      print(f"{base} | no reference: {type(e).__name__}: {str(e)[:100]}")
      continue
    path = os.path.join(out, f"values_{base}.json")
    with open(path, "w") as f: json.dump(k, f)
    sets = [("heuristic", "heuristic"), ("none", "none")]
    sets += [(name, ",".join(f"{o.op.name}:{o.axis}:{o.arg}" for o in a.arg.opts_to_apply)) for name, a in items if a.arg.opts_to_apply]
    res = []
    for label, spec in sets:
      r = subprocess.run([exe, "run", path, "--from-ast", "--opts", spec], capture_output=True, text=True)
      txt = (r.stdout + r.stderr).strip().replace("\n", " ")
      ok = txt.startswith("PASS")
      runs += 1
      failed += not ok
      res.append(f"{label}={'PASS' if ok else 'FAIL(' + txt[:120] + ')'}")
    print(base, "|", " ; ".join(res), flush=True)
  print(f"{runs - failed}/{runs} runs compute the kernel's values without opts")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
