#!/usr/bin/env python3
"""tinygrad's own BEAM search on corpus kernels, for bench/beam_vs_tinygrad.py: writes one TSV row per
kernel with the search's wall time, the opts it chose (in uopcg's --opts syntax) and the kernel time
it measured for them.

Each kernel's `ast` (the corpus file's, exactly) is decoded into tinygrad UOps with BEAM=N asked for in
its KernelInfo, then goes through tinygrad's full_rewrite_to_sink on its OpenCL device (PoCL here);
search_s is the wall time of apply_opts, which is the search (from a Scheduler to the chosen opts,
candidates compiled by tinygrad's worker pool and timed on the device). tinygrad's caches are off
(IGNORE_BEAM_CACHE=1, CACHELEVEL=0); run with POCL_KERNEL_CACHE=0 so that PoCL builds every
candidate, as a first search does.

tinygrad is a developer tool here (not used by the build or CI):
  pip install tinygrad==0.14.0
  POCL_KERNEL_CACHE=0 DEV=CL python3 bench/tinygrad_beam.py [--beam 4] [--out bench/beam_tinygrad.tsv] [KERNEL...]
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("DEV", "CL")
os.environ.setdefault("IGNORE_BEAM_CACHE", "1")
os.environ.setdefault("CACHELEVEL", "0")

import tinygrad  # noqa: E402
import tinygrad.codegen as cg  # noqa: E402
import tinygrad.codegen.opt.search as search  # noqa: E402
from tinygrad import Device  # noqa: E402
from tinygrad.codegen.opt import Opt, OptOps  # noqa: E402
from tinygrad.dtype import AddrSpace, Invalid, dtypes  # noqa: E402
from tinygrad.schedule.indexing import BufferizeOpts  # noqa: E402
from tinygrad.uop.ops import AxisType, KernelInfo, Ops, ParamArg, UOp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.environ.get("UOPCG_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))
KERNELS = ["matmul_64", "red_sum_4096_group", "red_sum_rows_f32"]


def dec(v, beam):
  """A corpus JSON value (docs/reference/tinygrad-json.md) as tinygrad's; KernelInfo asks for BEAM."""
  if v is None or isinstance(v, (bool, int, str)): return v
  if isinstance(v, list): return tuple(dec(x, beam) for x in v)
  t = v["t"]
  if t == "AxisType": return AxisType[v["v"]]
  if t == "Ops": return Ops[v["v"]]
  if t == "AddrSpace": return AddrSpace[v["v"]]
  if t == "dtype": return getattr(dtypes, v["v"])
  if t == "bigint": return int(v["v"])
  if t == "float": return float(v["v"])
  if t == "Opt": return Opt(OptOps[v["op"]], v["axis"], dec(v["arg"], beam))
  if t == "ParamArg":
    return ParamArg(v["slot"], getattr(dtypes, v["dtype"]), None if v["vmin_vmax"] is None else tuple(dec(x, beam) for x in v["vmin_vmax"]),
                    v["multiple_of"], v["name"], None if v["addrspace"] is None else AddrSpace[v["addrspace"]], v["axis"],
                    dec(v["device"], beam), v["volatile"])
  if t == "BufferizeOpts": return BufferizeOpts(dec(v["device"], beam), AddrSpace[v["addrspace"]], v["removable"])
  if t == "Invalid": return Invalid
  if t == "KernelInfo": return KernelInfo(name=v["name"], beam=beam)  # no opts_to_apply: the search decides
  raise TypeError(f"cannot decode {t}")


def load_ast(name, beam):
  g = json.load(open(os.path.join(CORPUS, name + ".json")))["ast"]
  uops = []
  for n in g["nodes"]:
    uops.append(UOp(Ops[n["op"]], getattr(dtypes, n["dtype"]), tuple(uops[i] for i in n["src"]), dec(n["arg"], beam), dec(n["tag"], beam)))
  return uops[g["root"]]


def opts_text(opts):
  def one(o):
    s = o.op.name if o.axis is None else f"{o.op.name}:{o.axis}"
    if o.arg is None: return s
    return s + ":" + (f"({','.join(str(x) for x in o.arg)})" if isinstance(o.arg, tuple) else str(o.arg))
  return ",".join(one(o) for o in opts) or "none"


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--beam", type=int, default=4)
  ap.add_argument("--out", default=os.path.join(ROOT, "bench", "beam_tinygrad.tsv"))
  ap.add_argument("kernels", nargs="*", default=KERNELS)
  a = ap.parse_args()
  ren = Device[Device.DEFAULT].renderer
  dev = Device[Device.DEFAULT]
  rows = []
  for name in a.kernels:
    times = []  # every candidate's time: the search's result is the fastest
    orig_time = search._time_program
    def timed(*args, **kw):
      tms = orig_time(*args, **kw)
      times.append(min(tms))
      return tms
    search._time_program = timed
    spent = {}
    orig_apply = cg.apply_opts
    def apply(*args, **kw):
      t0 = time.perf_counter()
      r = orig_apply(*args, **kw)
      spent["s"] = time.perf_counter() - t0
      spent["opts"] = r.arg.applied_opts
      return r
    cg.apply_opts = apply
    try:
      cg.full_rewrite_to_sink(load_ast(name, a.beam), ren)
    finally:
      search._time_program, cg.apply_opts = orig_time, orig_apply
    rows.append((name, a.beam, spent["s"], opts_text(spent["opts"]), min(times) * 1e6, len(times)))
    print(f"{name}\tbeam {a.beam}\t{spent['s']:.1f} s\t{rows[-1][3]}\t{rows[-1][4]:.2f} us\t{len(times)} timed", file=sys.stderr)
  with open(a.out, "w") as f:
    f.write(f"# tinygrad {tinygrad.__version__ if hasattr(tinygrad, '__version__') else '0.14.0'} BEAM on {dev.device} "
            f"({os.cpu_count()} CPUs), written by bench/tinygrad_beam.py; search_s = wall time of apply_opts\n")
    f.write("kernel\tbeam\tsearch_s\topts\tbest_us\ttimed\n")
    for r in rows:
      f.write(f"{r[0]}\t{r[1]}\t{r[2]:.2f}\t{r[3]}\t{r[4]:.2f}\t{r[5]}\n")


if __name__ == "__main__":
  main()
