#!/usr/bin/env python3
"""Writes tests/codegen/opt/opt_cases.json: kernels outside the corpus run through tinygrad's
apply_opts (the hand-coded heuristics, or an explicit opt list), for tests/codegen/opt/test_heuristic.cpp.
Each case holds the input graph (as "simplify ranges" would leave it), the target's settings, what
was asked (heuristics or opts), and tinygrad's result: the applied opts and the post-opts graph, or
the KernelOptError message. The cases cover what the corpus does not: the matrix-vector path,
masked upcasts, unrolling, NOLOCALS, targets without locals or with threads, and tensor cores
(tables of Metal and CUDA, on an OpenCL renderer object given them).

tinygrad is the oracle only (a developer tool, like tinygrad_oracle.py):
  python3 -m venv /tmp/tgv && /tmp/tgv/bin/pip install tinygrad==0.14.0
  /tmp/tgv/bin/python tools/gen_opt_fixtures.py [--out tests/codegen/opt/opt_cases.json]
"""
import argparse
import json
import os
import sys

from tinygrad.codegen.opt import Opt, OptOps, KernelOptError, tc
from tinygrad.codegen.opt.heuristic import hand_coded_optimizations
from tinygrad.codegen.opt.postrange import Scheduler
from tinygrad.dtype import dtypes
from tinygrad.helpers import Context, Target
from tinygrad.renderer.cstyle import OpenCLRenderer
from tinygrad.uop.ops import UOp, Ops, KernelInfo, AxisType, ParamArg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tinygrad_oracle import enc, graph  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
W = AxisType.WEAK
R = AxisType.REDUCE


def param(slot, dt, n): return UOp(Ops.PARAM, dt, (UOp.const(n, dtypes.weakint),), ParamArg(slot, dt))
def rng(n, i, t): return UOp.range(n, i, t)
def sink(*x): return UOp.sink(*x, arg=KernelInfo())


def rowsum(rows, cols):
  out, inp = param(0, dtypes.float, rows), param(1, dtypes.float, rows * cols)
  r1, r0 = rng(rows, 1, W), rng(cols, 0, R)
  return sink(out.index(r1).store(inp.index(r1 * cols + r0).reduce(r0, arg=Ops.ADD)).end(r1))


def window_sum(rows):  # two small reduce axes: out[r0] = sum_{r1, r2} in[r0*9 + r1*3 + r2]
  out, inp = param(0, dtypes.float, rows), param(1, dtypes.float, rows * 9)
  r0, r1, r2 = rng(rows, 0, W), rng(3, 1, R), rng(3, 2, R)
  return sink(out.index(r0).store(inp.index(r0 * 9 + r1 * 3 + r2).reduce(r1, r2, arg=Ops.ADD)).end(r0))


def matmul(n, dt=dtypes.float, acc=None):
  c, a, b = param(0, acc or dt, n * n), param(1, dt, n * n), param(2, dt, n * n)
  r1, r2, r0 = rng(n, 1, W), rng(n, 2, W), rng(n, 0, R)
  prod = a.index(r1 * n + r0) * b.index(r0 * n + r2)
  if acc is not None: prod = prod.cast(acc)
  return sink(c.index(r1 * n + r2).store(prod.reduce(r0, arg=Ops.ADD)).end(r1, r2))


def matvec(n, k, vec_first):
  out, mat, vec = param(0, dtypes.float, n), param(1, dtypes.float, n * k), param(2, dtypes.float, k)
  r1, r0 = rng(n, 1, W), rng(k, 0, R)
  prod = vec.index(r0) * mat.index(r1 * k + r0) if vec_first else mat.index(r1 * k + r0) * vec.index(r0)
  return sink(out.index(r1).store(prod.reduce(r0, arg=Ops.ADD)).end(r1))


def masked(n):  # out[r0*4 + r1] = r1 < 2 ? a[r0*2 + r1] : b[r0*2 + r1 - 2]
  out, a, b = param(0, dtypes.float, n * 4), param(1, dtypes.float, n * 2), param(2, dtypes.float, n * 2)
  r0, r1 = rng(n, 0, W), rng(4, 1, W)
  c = r1 < 2
  val = c.where(a.index((r0 * 2 + r1).valid(c)), b.index((r0 * 2 + r1 + (-2)).valid(c.logical_not())))
  return sink(out.index(r0 * 4 + r1).store(val).end(r0, r1))


def bcast_add(rows, cols):
  out, x, y = param(0, dtypes.float, rows * cols), param(1, dtypes.float, rows * cols), param(2, dtypes.float, rows)
  r0, r1 = rng(rows, 0, W), rng(cols, 1, W)
  return sink(out.index(r0 * cols + r1).store(x.index(r0 * cols + r1) + y.index(r0)).end(r0, r1))


TABLES = {"metal": tc.metal, "cuda_sm80": tc.cuda_sm80}


def renderer(t: dict):
  ren = OpenCLRenderer(Target(t.get("device", "CL"), arch=""))
  for key in ("has_local", "has_shared", "has_threads", "shared_max"):
    if key in t: setattr(ren, key, t[key])
  if "global_max" in t: ren.global_max = tuple(t["global_max"])
  if "tensor_cores" in t: ren.tensor_cores = TABLES[t["tensor_cores"]]
  return ren


def run(name, ast, target=None, opts=None, context=None):
  target, context = target or {}, context or {}
  case = {"name": name, "target": target, "context": context, "input": graph(ast),
          "request": "heuristic" if opts is None else [enc(o) for o in opts]}
  with Context(**context):
    k = Scheduler(ast, renderer(target))
    k.convert_loop_to_global()
    try:
      if opts is None: k = hand_coded_optimizations(k)
      else:
        for o in opts: k.apply_opt(o)
    except KernelOptError as e:
      case["error"] = str(e)
      return case
    case["applied_opts"] = [enc(o) for o in k.applied_opts]
    case["expected"] = graph(k.get_optimized_ast())
  return case


def cases():
  metal, cuda = {"tensor_cores": "metal"}, {"tensor_cores": "cuda_sm80", "device": "CUDA"}
  half_mm = matmul(64, dtypes.half, dtypes.float)
  return [
    run("matvec", matvec(256, 512, True)),
    run("matvec, matrix first (grouped)", matvec(256, 512, False)),
    run("masked upcast", masked(1024)),
    run("full unroll", rowsum(4096, 16)),
    run("unroll by 4", rowsum(4096, 64)),
    run("two small unrolls", window_sum(4096)),
    run("NOLOCALS", rowsum(4096, 64), context={"NOLOCALS": 1}),
    run("NOLOCALS, small output (grouped)", rowsum(64, 256), context={"NOLOCALS": 1}),
    run("no local memory", rowsum(4096, 64), {"has_local": False}),
    run("threads", rowsum(4096, 64), {"has_local": False, "has_threads": True, "global_max": [16, 16, 16]}),
    run("broadcast upcast and locals", bcast_add(32, 64)),
    run("broadcast upcast and locals, larger", bcast_add(256, 256)),
    run("matmul", matmul(64)),
    run("matmul 128", matmul(128)),
    run("tensor cores: heuristics (Metal)", half_mm, metal),
    run("tensor cores: heuristics (CUDA sm80)", half_mm, cuda),
    run("tensor cores: TC_OPT=1 heuristics", half_mm, metal, context={"TC_OPT": 1}),
    run("tensor cores: TC=2 heuristics (no WMMA)", half_mm, metal, context={"TC": 2}),
    run("tensor cores: TC=0 heuristics", half_mm, metal, context={"TC": 0}),
    run("tensor cores: TC axis 0", half_mm, metal, [Opt(OptOps.TC, 0, (-1, 0, 1))]),
    run("tensor cores: TC axis 1", half_mm, metal, [Opt(OptOps.TC, 1, (-1, 0, 1))]),
    run("tensor cores: TC select 1, shape only", half_mm, metal, [Opt(OptOps.TC, 0, (1, 0, 2))]),
    run("tensor cores: TC then opts", half_mm, metal,
        [Opt(OptOps.TC, 0, (-1, 0, 1)), Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.LOCAL, 1, 2), Opt(OptOps.UNROLL, 0, 2)]),
    run("tensor cores: padding refused", matmul(36, dtypes.half, dtypes.float), metal, [Opt(OptOps.TC, 0, (-1, 0, 1))]),
    run("tensor cores: padding", matmul(36, dtypes.half, dtypes.float), metal, [Opt(OptOps.TC, 0, (-1, 2, 1))]),
    run("tensor cores: float on CUDA needs ALLOW_TF32", matmul(64), cuda, [Opt(OptOps.TC, 0, (-1, 0, 1))]),
    run("tensor cores: tf32", matmul(64), cuda, [Opt(OptOps.TC, 0, (-1, 0, 1))], context={"ALLOW_TF32": 1}),
    run("tensor cores: no reduce of a product", rowsum(64, 256), metal, [Opt(OptOps.TC, 0, (-1, 0, 1))]),
  ]


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--out", default=os.path.join(ROOT, "tests", "codegen", "opt", "opt_cases.json"))
  args = ap.parse_args()
  with open(args.out, "w") as f:
    json.dump({"schema_version": 1, "generator": "tools/gen_opt_fixtures.py", "cases": cases()}, f, indent=None,
              separators=(",", ":"))
    f.write("\n")
  print(f"wrote {args.out}")


if __name__ == "__main__":
  main()
