#!/usr/bin/env python3
"""Differential testing against tinygrad: export kernels that are not in the corpus, in the corpus's
kernel-file format (docs/reference/tinygrad-json.md), and check that uopcg compiles each one to the
OpenCL C tinygrad rendered.

tinygrad is the oracle only (a developer tool, not used by the build or CI). The snapshot the corpus
was made with (a9069c177a) is not on PyPI; tinygrad 0.14.0 reproduces the corpus kernels it was tried
on (see --selfcheck), so it is the nearest oracle there is. Any difference this tool reports is
either a uopcg bug or a change in tinygrad after the snapshot: read both before acting.

usage:
  python3 -m venv /tmp/tgv && /tmp/tgv/bin/pip install tinygrad==0.14.0
  /tmp/tgv/bin/python tools/tinygrad_oracle.py --out /tmp/oracle [--uopcg build/uopcg] [--only NAME...]
  /tmp/tgv/bin/python tools/tinygrad_oracle.py --selfcheck      # re-derive corpus kernels, compare sources
  /tmp/tgv/bin/pip install pyopencl numpy; ... tools/tinygrad_oracle.py --run   # also compare outputs on PoCL
Exit status 1 when a kernel's source differs (each difference is printed as a unified diff) or, with
--run, when uopcg's kernel computes other outputs than tinygrad's source on the same random inputs.
"""
import argparse
import difflib
import json
import math
import os
import subprocess
import sys

from tinygrad import Tensor, Context, dtypes
import tinygrad.codegen as cg
from tinygrad.codegen import to_program
from tinygrad.codegen.opt import Opt, OptOps
from tinygrad.uop.ops import UOp, Ops, KernelInfo, AxisType, ParamArg
from tinygrad.dtype import AddrSpace, DType
from tinygrad.renderer.cstyle import OpenCLRenderer
from tinygrad.helpers import Target, PCONTIG
import enum

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.environ.get("UOPCG_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))


def dname(d) -> str:  # the corpus's dtype names: the repr without "dtypes."
  return repr(d).replace("dtypes.", "")


# ---- value encoding (tinygrad-json.md section 5) ----
def enc(v):
  if v is None or isinstance(v, (bool, str)): return v
  if isinstance(v, enum.Enum):
    kind = type(v).__name__
    return {"t": kind, "v": v.name}
  if isinstance(v, int):
    if -2**63 <= v < 2**64: return v
    return {"t": "bigint", "v": str(v)}
  if isinstance(v, float):
    if math.isnan(v): return {"t": "float", "v": "nan"}
    if math.isinf(v): return {"t": "float", "v": "inf" if v > 0 else "-inf"}
    return {"t": "float", "v": float(v)}
  if isinstance(v, DType): return {"t": "dtype", "v": dname(v)}
  if isinstance(v, (tuple, list)): return [enc(x) for x in v]
  if isinstance(v, ParamArg):
    return {"t": "ParamArg", "slot": v.slot, "dtype": dname(v.dtype),
            "vmin_vmax": None if v.vmin_vmax is None else [enc(x) for x in v.vmin_vmax], "multiple_of": v.multiple_of,
            "name": v.name, "addrspace": None if v.addrspace is None else v.addrspace.name, "axis": v.axis,
            "device": enc(v.device), "volatile": v.volatile}
  if isinstance(v, KernelInfo):
    return {"t": "KernelInfo", "name": v.name, "function_name": v.function_name, "axis_types": [enc(x) for x in v.axis_types],
            "dont_use_locals": v.dont_use_locals, "applied_opts": [enc(x) for x in v.applied_opts],
            "opts_to_apply": None if v.opts_to_apply is None else [enc(x) for x in v.opts_to_apply], "estimates": None, "beam": v.beam}
  if isinstance(v, Opt): return {"t": "Opt", "op": v.op.name, "axis": v.axis, "arg": enc(v.arg)}
  tn = type(v).__name__
  if tn == "BufferizeOpts":
    return {"t": "BufferizeOpts", "device": enc(v.device), "addrspace": v.addrspace.name, "removable": v.removable}
  if tn == "InvalidType" or repr(v) == "Invalid": return {"t": "Invalid"}
  raise TypeError(f"cannot encode {tn}: {v!r}")


def node(u: UOp, ids: dict) -> dict:
  return {"id": len(ids), "op": u.op.name, "dtype": dname(u.dtype), "src": [ids[s] for s in u.src],
          "arg": enc(u.arg), "tag": enc(u.tag)}


def graph(root: UOp) -> dict:
  ids, nodes = {}, []
  for u in root.toposort():
    nodes.append(node(u, ids))
    ids[u] = len(ids)
  return {"root": ids[root], "nodes": nodes}


def linear(lst) -> dict:
  ids, nodes = {}, []
  for u in lst:
    nodes.append(node(u, ids))
    ids[u] = len(ids)
  return {"nodes": nodes}


def renderer_obj(ren) -> dict:
  return {"class": "OpenCLRenderer", "target": f"CL::{ren.target.arch}", "device": "CL", "arch": ren.target.arch,
          "supports_fp16": "cl_khr_fp16" in ren.target.arch, "supports_fp64": "cl_khr_fp64" in ren.target.arch,
          "supports_bf16": True, "has_local": ren.has_local, "has_shared": ren.has_shared, "has_threads": ren.has_threads,
          "supports_float4": ren.supports_float4, "shared_max": ren.shared_max, "global_max": list(ren.global_max),
          "local_max": list(ren.local_max), "global_prod_max": ren.global_prod_max, "tensor_cores": 0}


CODEGEN_KEYS = ["TRANSCENDENTAL", "DISABLE_FAST_IDIV", "NOLOCALS", "DMC", "EMULATED_DTYPES", "ALLOW_HALF8", "DEFAULT_FLOAT"]


def export(name: str, ast: UOp, ren, kind: str, context: dict) -> dict:
  captured = {}
  orig = cg.graph_rewrite

  def traced(sink, pm, *args, **kwargs):
    ret = orig(sink, pm, *args, **kwargs)
    if kwargs.get("name") == "postopt symbolic": captured["post_opts"] = ret
    return ret
  cg.graph_rewrite = traced
  try:
    cg.to_program_cache.clear()
    with Context(**context):
      prg = to_program(ast, ren)
  finally:
    cg.graph_rewrite = orig
  full_sink, lin, src = prg.src[0], list(prg.src[1].src), prg.src[2].arg
  info = prg.arg
  params = [u for u in lin if u.op is Ops.PARAM and u.arg.addrspace not in (AddrSpace.REG, AddrSpace.LOCAL, None)]
  kargs = []
  for i, p in enumerate(sorted(params, key=lambda p: p.arg.slot)):
    size = math.prod(int(x) for x in p.shape) if p.shape else 1
    dt = p.dtype
    kargs.append({"index": i, "kind": "buffer", "slot": p.arg.slot, "dtype": dname(dt), "size": size, "itemsize": dt.itemsize,
                  "nbytes": size * dt.itemsize, "addrspace": "GLOBAL",
                  "logical": dname(p.tag) if isinstance(p.tag, DType) else dname(dt)})
  ki = full_sink.arg
  return {
    "schema_version": 1, "name": name, "spec": name, "kernel_index": 0, "num_kernels": 1, "description": "tinygrad_oracle.py",
    "tinygrad": {"commit": "pypi", "version": "0.14.0", "tree_sha256": ""},
    "codegen_context": {k: v for k, v in context.items() if k in CODEGEN_KEYS},
    "renderer": renderer_obj(ren), "renderer_kind": kind,
    # the scheduler's settings that shaped the AST (PCONTIG=2: LOCAL stages), as the corpus records them
    "schedule_context": {"PCONTIG": PCONTIG.value} if PCONTIG.value else {}, "opts_requested": None,
    "applied_opts": [enc(o) for o in ki.applied_opts], "function_name": ki.function_name,
    "program": {"global_size": list(info.global_size), "local_size": None if info.local_size is None else list(info.local_size),
                "globals": list(info.globals), "outs": list(info.outs), "ins": list(info.ins), "vars": [], "kernel_args": kargs},
    "source": src,
    "data": {"file": name + ".bin", "byte_order": "little", "inputs": [], "outputs": [], "output_tolerance": {"rtol": 0, "atol": 0}},
    "execution": {"executed_on_pocl": False, "expected_from": "not executed"},
    "ast": graph(ast), "post_opts": graph(captured["post_opts"]), "full_sink": graph(full_sink), "linear": linear(lin),
  }


# ---- reference outputs: tinygrad's own source run on the OpenCL device (pyopencl) ----
def attach_data(k: dict, out_dir: str, seed: int) -> None:
  """Random inputs, and the outputs tinygrad's source computes from them, as the file's `data`."""
  import numpy as np
  import pyopencl as cl
  NP = {"float": np.float32, "half": np.float16, "double": np.float64, "int": np.int32, "uint": np.uint32, "char": np.int8,
        "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "long": np.int64, "ulong": np.uint64, "bool": np.bool_}
  rng = np.random.default_rng(seed)
  ctx = cl.Context(devices=[cl.get_platforms()[0].get_devices()[0]])
  q = cl.CommandQueue(ctx)
  knl = getattr(cl.Program(ctx, k["source"]).build(), k["function_name"])
  prog = k["program"]
  host, bufs = {}, []
  for a in prog["kernel_args"]:
    n = a["size"]
    bf16 = a["logical"] == "bfloat16"  # no numpy dtype: the top half of a float32's bits
    dt = np.uint16 if bf16 else NP[a["logical"]]
    if a["slot"] in prog["ins"]:
      if bf16: v = (rng.uniform(-2, 2, n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
      elif dt in (np.float32, np.float16, np.float64): v = rng.uniform(-2, 2, n).astype(dt)
      elif dt is np.bool_: v = rng.integers(0, 2, n).astype(dt)
      elif np.issubdtype(dt, np.unsignedinteger): v = rng.integers(0, min(np.iinfo(dt).max, 300) + 1, n).astype(dt)
      else: v = rng.integers(-70, 71, n).astype(dt)
      raw = v.tobytes()
    else:
      raw = b"\xff" * a["nbytes"]
    host[a["slot"]] = raw
    bufs.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=bytearray(raw)))
  lsz = prog["local_size"]
  gsz = [g * (lsz[d] if lsz else 1) for d, g in enumerate(prog["global_size"])]
  knl(q, gsz, lsz, *bufs)
  outs = {}
  for a, b in zip(prog["kernel_args"], bufs):
    if a["slot"] in prog["outs"]:
      got = bytearray(a["nbytes"])
      cl.enqueue_copy(q, got, b)
      outs[a["slot"]] = bytes(got)
  q.finish()
  entries, blob = {"inputs": [], "outputs": []}, b""
  for kind, slots in (("inputs", [a for a in prog["kernel_args"] if a["slot"] in prog["ins"]]),
                      ("outputs", [a for a in prog["kernel_args"] if a["slot"] in prog["outs"]])):
    for a in slots:
      raw = host[a["slot"]] if kind == "inputs" else outs[a["slot"]]
      entries[kind].append({"slot": a["slot"], "dtype": a["logical"], "count": a["size"], "offset": len(blob),
                            "nbytes": len(raw), "preview": []})
      blob += raw
  floats = any(a["logical"] in ("float", "half", "bfloat16", "double") for a in prog["kernel_args"] if a["slot"] in prog["outs"])
  half = any(a["logical"] in ("half", "bfloat16") for a in prog["kernel_args"])
  tol = (2e-2 if half else 1e-4) if floats else 0
  k["data"] = {"file": k["name"] + ".bin", "byte_order": "little", "inputs": entries["inputs"], "outputs": entries["outputs"],
               "output_tolerance": {"rtol": tol, "atol": tol}}
  k["execution"] = {"executed_on_pocl": True, "expected_from": "tinygrad's source run on the OpenCL device by tinygrad_oracle.py"}
  with open(os.path.join(out_dir, k["name"] + ".bin"), "wb") as f: f.write(blob)


# ---- kernels ----
class NoKernel(list):
  """An empty kernel list that says why (printed with the spec's name, which asts_of does not know)."""
  def __init__(self, why: str):
    super().__init__()
    self.why = why


def asts_of(*ts: Tensor, ctx=None):
  try:
    with Context(**(ctx or {})):
      lin = Tensor.schedule_linear(*ts) if len(ts) > 1 else ts[0].schedule_linear()
  except Exception as e:  # an expression tinygrad cannot schedule: nothing to compare
    return NoKernel(f"tinygrad: {type(e).__name__}: {e}")
  out = []
  for item in lin.src:
    a = item.src[0] if item.src else None
    if a is not None and a.op is Ops.SINK and isinstance(a.arg, KernelInfo): out.append(a)
  return out


def E(*shape, dtype=dtypes.float): return Tensor.empty(*shape, dtype=dtype, device="NULL")


def with_opts(ast: UOp, opts) -> UOp: return ast.replace(arg=KernelInfo(opts_to_apply=tuple(opts)))


def uop_kernels():
  """Kernels written in UOps (spec §12): REG accumulators, LOOP ranges, gated loads and stores,
  nested ENDs, a LOCAL buffer written and read in every iteration of a loop (RAW and WAR barriers)."""
  from tinygrad.uop.ops import UOp as U
  from tinygrad.dtype import AddrSpace as AS
  f = dtypes.float
  ph = lambda shape, slot, space=AS.GLOBAL: U.placeholder(shape, f, slot, space) if space is not AS.GLOBAL else U.placeholder(shape, f, slot)
  out, inp = ph((64,), 0), ph((512,), 1)
  g, l = U.range(64, 0, AxisType.GLOBAL), U.range(8, 1, AxisType.LOOP)
  acc = ph((1,), 0, AS.REG)
  acc = acc[0].set(0.0)
  idx = g * 8 + l
  acc = acc[0].set(acc.after(l)[0] + inp[idx.valid(idx < 500)], end=l)
  yield "uops_loop_gated", out[g.valid(g < 60)].store(acc[0]).end(g).sink(arg=KernelInfo(name="loop_gated", opts_to_apply=()))

  out, inp = ph((32,), 0), ph((32,), 1)
  i, j = U.range(4, 0, AxisType.LOOP), U.range(8, 1, AxisType.LOOP)
  yield "uops_nested_ends", out[i * 8 + j].store(inp[j * 4 + i] * 2.0).end(j).end(i).sink(arg=KernelInfo(name="nested_ends", opts_to_apply=()))

  out, inp = ph((128,), 0), ph((512,), 1)
  g, lx, t = U.range(8, 0, AxisType.GLOBAL), U.range(16, 1, AxisType.LOCAL), U.range(4, 2, AxisType.LOOP)
  tile = ph((16,), 0, AS.LOCAL)
  acc = ph((1,), 1, AS.REG)
  acc = acc[0].set(0.0)
  st = tile[lx].store(inp[(g * 4 + t) * 16 + lx])
  tile = tile.after(st)
  acc = acc[0].set(acc.after(t)[0] + tile[(lx + 1) % 16] * tile[lx], end=t)
  yield "uops_local_exchange", out[g * 16 + lx].store(acc[0]).end(g, lx).sink(arg=KernelInfo(name="local_exchange", opts_to_apply=()))


def uop_kernels_more():
  """More hand-written kernels: two outputs of one loop, a tree reduction and a Hillis-Steele scan in
  LOCAL memory, a REG array indexed by a loop, uint32 wrap-around, boundary-gated loads, bitcasts, a
  LOCAL transpose, two accumulators in sequence, half storage with an int8 scale."""
  from tinygrad.uop.ops import UOp as U
  from tinygrad.dtype import AddrSpace as AS
  f, u32 = dtypes.float, dtypes.uint32

  def ph(shape, slot, space=AS.GLOBAL, dt=f):
    return U.placeholder(shape, dt, slot, space) if space is not AS.GLOBAL else U.placeholder(shape, dt, slot)

  def Kn(name): return KernelInfo(name=name, opts_to_apply=())
  # two outputs from one loop
  o0, o1, a, b = ph((64,), 0), ph((64,), 1), ph((64,), 2), ph((64,), 3)
  g = U.range(64, 0, AxisType.GLOBAL)
  s0 = o0[g].store(a[g] + b[g]); s1 = o1[g].store(a[g] * b[g])
  yield "uops_two_outputs", U.group(s0, s1).end(g).sink(arg=Kn("two_outputs"))
  # tree reduction in LOCAL memory
  out, inp = ph((8,), 0), ph((128,), 1)
  g, lx = U.range(8, 0, AxisType.GLOBAL), U.range(16, 1, AxisType.LOCAL)
  tile = ph((16,), 0, AS.LOCAL)
  tile = tile.after(tile[lx].store(inp[g * 16 + lx]))
  for s in (8, 4, 2, 1):
    tile = tile.after(tile[lx.valid(lx < s)].store(tile[lx] + tile[(lx + s).valid(lx < s)]))
  yield "uops_local_tree_sum", out[g.valid(lx < 1)].store(tile[0]).end(g, lx).sink(arg=Kn("local_tree_sum"))
  # REG array accumulators indexed by a LOOP range
  out, inp = ph((32,), 0), ph((32 * 4 * 8,), 1)
  g, k, t = U.range(32, 0, AxisType.GLOBAL), U.range(4, 1, AxisType.LOOP), U.range(8, 2, AxisType.LOOP)
  acc = ph((4,), 0, AS.REG)
  acc = acc[k].set(0.0, end=k)
  k2 = U.range(4, 3, AxisType.LOOP)
  acc = acc[k2].set(acc.after(t)[k2] + inp[g * 32 + t * 4 + k2], end=(k2, t))
  k3 = U.range(4, 4, AxisType.LOOP)
  tot = ph((1,), 1, AS.REG)
  tot = tot[0].set(0.0)
  tot = tot[0].set(tot.after(k3)[0] + acc[k3] * (k3 + 1).cast(f), end=k3)
  yield "uops_reg_array", out[g].store(tot[0]).end(g).sink(arg=Kn("reg_array"))
  # uint32 FNV-1a hash of each row, wrapping arithmetic
  u32 = dtypes.uint32
  out, inp = ph((16,), 0, dt=u32), ph((16 * 24,), 1, dt=u32)
  g, t = U.range(16, 0, AxisType.GLOBAL), U.range(24, 1, AxisType.LOOP)
  h = ph((1,), 0, AS.REG, dt=u32)
  h = h[0].set(inp[g * 24].const_like(2166136261))
  h = h[0].set((h.after(t)[0] ^ inp[g * 24 + t]) * inp[g * 24].const_like(16777619), end=t)
  yield "uops_fnv_hash", out[g].store(h[0]).end(g).sink(arg=Kn("fnv_hash"))
  # 5-point stencil with boundary gates
  N = 20
  out, inp = ph((N * N,), 0), ph((N * N,), 1)
  i, j = U.range(N, 0, AxisType.GLOBAL), U.range(N, 1, AxisType.GLOBAL)
  c = inp[i * N + j]
  up = inp[((i - 1) * N + j).valid(i > 0)]
  dn = inp[((i + 1) * N + j).valid(i < N - 1)]
  lf = inp[(i * N + j - 1).valid(j > 0)]
  rt = inp[(i * N + j + 1).valid(j < N - 1)]
  yield "uops_stencil5", out[i * N + j].store(c * 4.0 - up - dn - lf - rt).end(i, j).sink(arg=Kn("stencil5"))
  # float abs through bits
  out, inp = ph((64,), 0), ph((64,), 1)
  g = U.range(64, 0, AxisType.GLOBAL)
  bits = inp[g].bitcast(u32) & inp[g].bitcast(u32).const_like(0x7fffffff)
  yield "uops_bitcast_abs", out[g].store(bits.bitcast(f) + inp[g]).end(g).sink(arg=Kn("bitcast_abs"))
  # LOCAL tile transpose
  T = 8
  out, inp = ph((32 * 32,), 0), ph((32 * 32,), 1)
  gx, gy = U.range(4, 0, AxisType.GLOBAL), U.range(4, 1, AxisType.GLOBAL)
  lx, ly = U.range(T, 2, AxisType.LOCAL), U.range(T, 3, AxisType.LOCAL)
  tile = ph((T * T,), 0, AS.LOCAL)
  tile = tile.after(tile[ly * T + lx].store(inp[(gy * T + ly) * 32 + gx * T + lx]))
  yield "uops_local_transpose", out[(gx * T + ly) * 32 + gy * T + lx].store(tile[lx * T + ly]).end(gx, gy, lx, ly).sink(arg=Kn("local_transpose"))
  # MAX accumulator with -inf init, then exp-sum in a second loop (softmax denominator)
  out, inp = ph((16,), 0), ph((16 * 40,), 1)
  g, t, t2 = U.range(16, 0, AxisType.GLOBAL), U.range(40, 1, AxisType.LOOP), U.range(40, 2, AxisType.LOOP)
  m = ph((1,), 0, AS.REG)
  m = m[0].set(-float("inf"))
  m = m[0].set(m.after(t)[0].maximum(inp[g * 40 + t]), end=t)
  sacc = ph((1,), 1, AS.REG)
  sacc = sacc[0].set(0.0)
  sacc = sacc[0].set(sacc.after(t2)[0] + (inp[g * 40 + t2] - m[0]).exp2(), end=t2)
  yield "uops_max_then_sum", out[g].store(sacc[0].log2() + m[0]).end(g).sink(arg=Kn("max_then_sum"))
  # Hillis-Steele inclusive scan in LOCAL memory (double buffered by step)
  out, inp = ph((4 * 16,), 0), ph((4 * 16,), 1)
  g, lx = U.range(4, 0, AxisType.GLOBAL), U.range(16, 1, AxisType.LOCAL)
  A, B = ph((16,), 0, AS.LOCAL), ph((16,), 1, AS.LOCAL)
  A = A.after(A[lx].store(inp[g * 16 + lx]))
  src, dst = A, B
  for s in (1, 2, 4, 8):
    dst = dst.after(dst[lx].store(src[lx] + (lx >= s).where(src[(lx - s).valid(lx >= s)], 0.0)))
    src, dst = dst, src
  yield "uops_local_scan", out[g * 16 + lx].store(src[lx]).end(g, lx).sink(arg=Kn("local_scan"))
  # half storage, float math in a REG accumulator, int8 scale
  h16, i8 = dtypes.half, dtypes.int8
  out, inp, sc = ph((32,), 0, dt=h16), ph((32 * 12,), 1, dt=h16), ph((12,), 2, dt=i8)
  g, t = U.range(32, 0, AxisType.GLOBAL), U.range(12, 1, AxisType.LOOP)
  acc = ph((1,), 0, AS.REG)
  acc = acc[0].set(0.0)
  acc = acc[0].set(acc.after(t)[0] + inp[g * 12 + t].cast(f) * sc[t].cast(f), end=t)
  yield "uops_half_int8_dot", out[g].store(acc[0].cast(h16)).end(g).sink(arg=Kn("half_int8_dot"))
  # a gather through an int index buffer; tinygrad's heuristics on hand-written WEAK ranges, with a REDUCE
  out, inp, idx = ph((32,), 0), ph((256,), 1), ph((32,), 2, dt=dtypes.uint8)  # the random inputs stay in bounds
  g = U.range(32, 0, AxisType.GLOBAL)
  yield "uops_gather", out[g].store(inp[idx[g].cast(dtypes.weakint)] * 3.0).end(g).sink(arg=Kn("gather"))
  out, a = ph((48 * 40,), 0), ph((48 * 40,), 1)
  r0, r1 = U.range(48, 0), U.range(40, 1)
  yield "uops_heuristic_ew", out[r0 * 40 + r1].store(a[r0 * 40 + r1].sqrt() * 2.0).end(r0, r1).sink(arg=KernelInfo(name="heuristic_ew"))
  out, a = ph((6 * 7,), 0), ph((6 * 7 * 50,), 1)
  r0, r1, r2 = U.range(6, 0), U.range(7, 1), U.range(50, 2, AxisType.REDUCE)
  red = (a[(r0 * 7 + r1) * 50 + r2] * a[(r0 * 7 + r1) * 50 + r2]).reduce(r2, arg=Ops.ADD)
  yield "uops_reduce_heur", out[r0 * 7 + r1].store(red.sqrt()).end(r0, r1).sink(arg=KernelInfo(name="reduce_heur"))


def uop_kernels_v3():
  """A third batch of hand-written kernels, in forms neither uop_kernels_more nor tools/ast_fuzz.py
  draws: SPECIAL-indexed kernels (explicit gidx/lidx, no ranges), a rectangular LOCAL-tiled matmul
  with explicit BARRIERs, stores of different ranks and dtypes in one SINK, bool/int8/int64/double
  buffers, a REG histogram and a REG stack indexed by data, global memory written and read back in
  one work-item, NaN through MAX and comparisons, CAST and BITCAST chains, prime-size reductions,
  many GLOBAL dims; each with no opts, some with tinygrad's heuristics or explicit opts
  (docs/uop-kernels.md)."""
  from tinygrad.uop.ops import UOp as U
  from tinygrad.dtype import AddrSpace as AS
  f, i8, u8, i32, i64, u32, h16, f64, b = (dtypes.float, dtypes.int8, dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.uint32,
                                           dtypes.half, dtypes.double, dtypes.bool)
  wi = dtypes.weakint

  def ph(shape, slot, space=AS.GLOBAL, dt=f):
    return U.placeholder(shape, dt, slot, space) if space is not AS.GLOBAL else U.placeholder(shape, dt, slot)

  def Kn(name, opts=()): return KernelInfo(name=name, opts_to_apply=opts)
  # SPECIAL-indexed elementwise with a tail gate on the load and the store
  out, a = ph((250,), 0), ph((250,), 1)
  g, l = U.special(16, "gidx0"), U.special(16, "lidx0")
  i = g * 16 + l
  yield "uops3_sp_tail", out[i.valid(i < 250)].store(a[i.valid(i < 250)] * 2.0 + 1.0).sink(arg=Kn("sp_tail"))
  # SPECIAL 2-D launch with a LOOP row sum in a REG accumulator
  out, a = ph((12 * 10,), 0), ph((12 * 10 * 7,), 1)
  gx, gy, lx = U.special(5, "gidx0"), U.special(12, "gidx1"), U.special(2, "lidx0")
  t = U.range(7, 0, AxisType.LOOP)
  col = gx * 2 + lx
  acc = ph((1,), 0, AS.REG)
  acc = acc[0].set(0.0)
  acc = acc[0].set(acc.after(t)[0] + a[(gy * 10 + col) * 7 + t], end=t)
  yield "uops3_sp_rowsum", out[gy * 10 + col].store(acc[0]).sink(arg=Kn("sp_rowsum"))
  # SPECIAL-indexed tree max in LOCAL memory, explicit BARRIERs between the steps
  out, inp = ph((6,), 0), ph((6 * 32,), 1)
  g, l = U.special(6, "gidx0"), U.special(32, "lidx0")
  tile = ph((32,), 0, AS.LOCAL)
  st = tile[l].store(inp[g * 32 + l])
  tile = tile.after(U(Ops.BARRIER, src=(st,)))
  for s in (16, 8, 4, 2, 1):
    st = tile[l.valid(l < s)].store(tile[l].maximum(tile[(l + s).valid(l < s)]))
    tile = tile.after(U(Ops.BARRIER, src=(st,)))
  yield "uops3_sp_local_max", out[g.valid(l.eq(0))].store(tile[0]).sink(arg=Kn("sp_local_max"))
  # SPECIAL-indexed rotate through LOCAL memory (implicit barrier)
  out, a = ph((8 * 16,), 0), ph((8 * 16,), 1)
  g, l = U.special(8, "gidx0"), U.special(16, "lidx0")
  tile = ph((16,), 0, AS.LOCAL)
  tile = tile.after(tile[l].store(a[g * 16 + l]))
  yield "uops3_sp_local_rotate", out[g * 16 + l].store(tile[(l + 5) % 16] - tile[l]).sink(arg=Kn("sp_local_rotate"))
  # rectangular LOCAL-tiled matmul (20x36 @ 36x24, 8x8 tiles) with explicit BARRIERs and bounds-gated tile loads
  M, N, K, T = 20, 24, 36, 8
  c, A, B = ph((M * N,), 0), ph((M * K,), 1), ph((K * N,), 2)
  gx, gy = U.range((N + T - 1) // T, 0, AxisType.GLOBAL), U.range((M + T - 1) // T, 1, AxisType.GLOBAL)
  ly, lx = U.range(T, 2, AxisType.LOCAL), U.range(T, 3, AxisType.LOCAL)
  kt = U.range((K + T - 1) // T, 4, AxisType.LOOP)
  As, Bs = ph((T * T,), 0, AS.LOCAL), ph((T * T,), 1, AS.LOCAL)
  row, colm, ka, kb = gy * T + ly, gx * T + lx, kt * T + lx, kt * T + ly
  st_a = As[ly * T + lx].store(A[(row * K + ka).valid((row < M) & (ka < K))])
  st_b = Bs[ly * T + lx].store(B[(kb * N + colm).valid((kb < K) & (colm < N))])
  bar = U(Ops.BARRIER, src=(st_a, st_b))
  As, Bs = As.after(bar), Bs.after(bar)
  k = U.range(T, 5, AxisType.LOOP)
  acc = ph((1,), 2, AS.REG)
  acc = acc[0].set(0.0)
  acc = acc[0].set(acc.after(kt, k)[0] + As[ly * T + k] * Bs[k * T + lx], end=(k, kt))
  yield "uops3_tiled_mm_barrier", c[(row * N + colm).valid((row < M) & (colm < N))].store(acc[0]).end(gx, gy, ly, lx).sink(
    arg=Kn("tiled_mm_barrier"))
  # three stores of different ranks and dtypes: int8 over a LOOP, float 2-D over WEAK ranges, a bool scalar of a MAX reduce
  o0, o1, o2, a, bb = ph((6,), 0, dt=i8), ph((6 * 9,), 1), ph((1,), 2, dt=b), ph((6 * 9,), 3), ph((6,), 4, dt=i8)
  r0 = U.range(6, 0, AxisType.LOOP)
  s0 = o0[r0].store(bb[r0] // 2 + 1).end(r0)
  r2, r3 = U.range(6, 2), U.range(9, 3)
  s1 = o1[r2 * 9 + r3].store(a[r2 * 9 + r3] * bb[r2].cast(f)).end(r2, r3)
  r4 = U.range(54, 4, AxisType.REDUCE)
  s2 = o2[0].store(a[r4].reduce(r4, arg=Ops.MAX) > 1.5)
  yield "uops3_multi_out_ranks", U.sink(s0, s1, s2, arg=Kn("multi_out_ranks"))
  # bool and int8 buffers
  o, x, y, m = ph((100,), 0, dt=b), ph((100,), 1, dt=i8), ph((100,), 2, dt=i8), ph((100,), 3, dt=b)
  g = U.range(100, 0, AxisType.GLOBAL)
  yield "uops3_bool_i8", o[g].store(m[g].where(x[g] < y[g], (x[g] ^ y[g]) != x[g].const_like(0))).end(g).sink(arg=Kn("bool_i8"))
  # int64 values beyond 2^31 from a range, floor mod and division by 2^32
  o, a = ph((64,), 0, dt=i64), ph((64,), 1, dt=i64)
  g = U.range(64, 0, AxisType.GLOBAL)
  big = g.cast(i64) * 3000000007 + a[g] * 65537
  yield "uops3_i64_big", o[g].store(big % 1000000000039 - (big // 4294967296)).end(g).sink(arg=Kn("i64_big"))
  # stores inside a loop gated by the loaded value, and by the ranges (a triangle)
  o, a = ph((16 * 10,), 0), ph((16 * 10,), 1)
  g, t = U.range(16, 0, AxisType.GLOBAL), U.range(10, 1, AxisType.LOOP)
  v = a[g * 10 + t]
  yield "uops3_loop_gated_store", o[(g * 10 + t).valid(v > 0.0)].store(v.sqrt()).end(t).end(g).sink(arg=Kn("loop_gated_store"))
  out, a = ph((12 * 12,), 0), ph((12,), 1)
  g, t = U.range(12, 0, AxisType.GLOBAL), U.range(12, 1, AxisType.LOOP)
  yield "uops3_tri_loop_store", out[(g * 12 + t).valid(t <= g)].store(a[t] - a[g]).end(t).end(g).sink(arg=Kn("tri_loop_store"))
  # a REG array as a histogram, indexed by loaded data
  o, a = ph((8 * 8,), 0, dt=i32), ph((8 * 50,), 1, dt=i32)
  g, k = U.range(8, 0, AxisType.GLOBAL), U.range(8, 1, AxisType.LOOP)
  h = ph((8,), 0, AS.REG, dt=i32)
  h = h[k].set(0, end=k)
  t = U.range(50, 2, AxisType.LOOP)
  bin_ = (a[g * 50 + t] & 7).cast(wi)
  h = h[bin_].set(h.after(t)[bin_] + 1, end=t)
  k2 = U.range(8, 3, AxisType.LOOP)
  yield "uops3_reg_histogram", o[g * 8 + k2].store(h[k2]).end(k2).end(g).sink(arg=Kn("reg_histogram"))
  # a REG stack: push a row's positive values at the stack pointer, then pop them weighted. First as
  # `set` writes it (the push is a dependency of the pointer's update, which END(t) closes; the reads
  # after the END are outside the loop through the AFTER), then with both stores under one END
  for form in ("set", "grouped"):
    out, a = ph((16,), 0), ph((16 * 8,), 1)
    g, t = U.range(16, 0, AxisType.GLOBAL), U.range(8, 1, AxisType.LOOP)
    sp, stk = ph((1,), 0, AS.REG, dt=i32), ph((8,), 1, AS.REG)
    sp = sp[0].set(0)
    v = a[g * 8 + t]
    cur = sp.after(t)[0].cast(wi)
    if form == "set":
      stk = stk[cur.valid(v > 0.0)].set(v)
      sp = sp[0].set(sp.after(t, stk)[0] + (v > 0.0).cast(i32), end=t)
      stk = stk.after(sp)
    else:
      e = U.group(stk[cur.valid(v > 0.0)].store(v), sp[0].store(sp.after(t)[0] + (v > 0.0).cast(i32))).end(t)
      sp, stk = sp.src[0].after(e), stk.after(e)
    k = U.range(8, 2, AxisType.LOOP)
    acc = ph((1,), 2, AS.REG)
    acc = acc[0].set(0.0)
    n = sp[0].cast(wi)
    top = n - 1 - k
    acc = acc[0].set(acc.after(k)[0] + (k < n).where(stk[top.valid(top >= 0)] * (k + 1).cast(f), 0.0), end=k)
    yield f"uops3_reg_stack_{form}", out[g].store(acc[0]).end(g).sink(arg=Kn(f"reg_stack_{form}"))
  # a running sum kept in a REG and stored in every iteration
  out, a = ph((8 * 20,), 0), ph((8 * 20,), 1)
  g, t = U.range(8, 0, AxisType.GLOBAL), U.range(20, 1, AxisType.LOOP)
  acc = ph((1,), 0, AS.REG)
  acc = acc[0].set(0.0)
  acc2 = acc[0].set(acc.after(t)[0] + a[g * 20 + t])
  yield "uops3_reg_prefix_store", out[g * 20 + t].store(acc2[0]).end(t).end(g).sink(arg=Kn("reg_prefix_store"))
  # global memory written in one loop and read back reversed in the next, by the same work-item
  out, out2, a = ph((6 * 10,), 0), ph((6 * 10,), 1), ph((6 * 10,), 2)
  g, t, t2 = U.range(6, 0, AxisType.GLOBAL), U.range(10, 1, AxisType.LOOP), U.range(10, 2, AxisType.LOOP)
  e1 = out[g * 10 + t].store(a[g * 10 + t] * 3.0).end(t)
  e2 = out2[g * 10 + t2].store(out.after(e1)[g * 10 + 9 - t2] + a[g * 10 + t2]).end(t2)
  yield "uops3_global_raw_loops", U.group(e1, e2).end(g).sink(arg=Kn("global_raw_loops"))
  # nested LOOP ranges with a REDUCE inside
  o, a = ph((5 * 6,), 0), ph((5 * 6 * 11,), 1)
  i, j, r = U.range(5, 0, AxisType.LOOP), U.range(6, 1, AxisType.LOOP), U.range(11, 2, AxisType.REDUCE)
  yield "uops3_loop_reduce", o[i * 6 + j].store(a[(i * 6 + j) * 11 + r].reduce(r, arg=Ops.ADD) * (j + 1).cast(f)).end(j).end(i).sink(
    arg=Kn("loop_reduce"))
  # WHERE over loads of different buffers at shifted, gated indices
  o, a, bb, c = ph((96,), 0), ph((96,), 1), ph((96,), 2), ph((96,), 3, dt=i32)
  g = U.range(96, 0)
  base = o[g].store((c[g] > 0).where(a[(g + 1).valid(g < 95)], bb[(g - 1).valid(g > 0)])).end(g)
  for nm, opts in (("none", ()), ("heur", None), ("upcast4", (Opt(OptOps.UPCAST, 0, 4),)),
                   ("upcast3_local8", (Opt(OptOps.UPCAST, 0, 3), Opt(OptOps.LOCAL, 0, 8)))):
    yield f"uops3_where_bufs_{nm}", base.sink(arg=Kn("where_bufs", opts))
  # integer floor division and modulo by negative constants: int32, int64; uint32 by constants
  o, a = ph((141,), 0, dt=i32), ph((141,), 1, dt=i32)
  g = U.range(141, 0)
  x = a[g]
  yield "uops3_idiv_neg", o[g].store(x // -7 + x % -5 * 100 + (x * 3) // -4 * 10000).end(g).sink(arg=Kn("idiv_neg", None))
  o, a = ph((77,), 0, dt=i64), ph((77,), 1, dt=i64)
  g = U.range(77, 0)
  x = a[g] * 123456789012
  yield "uops3_i64_neg_divmod", o[g].store(x // -1000003 + x % -97).end(g).sink(arg=Kn("i64_neg_divmod", None))
  o, a = ph((100,), 0, dt=u32), ph((100,), 1, dt=u32)
  g = U.range(100, 0)
  x = a[g] * 40000037
  yield "uops3_u32_divmod", o[g].store(x // 1000003 + x % 65521 + (x > 3000000000).cast(u32)).end(g).sink(arg=Kn("u32_divmod", None))
  # NaN (sqrt of the negative inputs) and inf through MAX, MIN and comparisons; a NaN MAX reduce
  o, o2, a = ph((64,), 0), ph((64,), 1, dt=b), ph((64,), 2)
  g = U.range(64, 0, AxisType.GLOBAL)
  s = a[g].sqrt()
  inf = a[g] * 0.0 + 1.0 / (a[g] * 0.0)
  s0 = o[g].store(s.maximum(0.5) + s.maximum(-inf).minimum(inf * 0.0 + 3.0))
  s1 = o2[g].store((s < 1.0) | (s != s))
  yield "uops3_nan_max_cmp", U.group(s0, s1).end(g).sink(arg=Kn("nan_max_cmp"))
  out, out2, a = ph((8,), 0), ph((8,), 1, dt=i32), ph((8 * 21,), 2)
  i, r, r2 = U.range(8, 0), U.range(21, 1, AxisType.REDUCE), U.range(21, 2, AxisType.REDUCE)
  st0 = out[i].store(a[i * 21 + r].sqrt().reduce(r, arg=Ops.MAX))
  sq2 = a[i * 21 + r2].sqrt()
  st1 = out2[i].store((sq2 != sq2).cast(i32).reduce(r2, arg=Ops.ADD))
  for nm, opts in (("none", ()), ("heur", None), ("unroll", (Opt(OptOps.UNROLL, 0, 3), Opt(OptOps.UPCAST, 0, 4)))):
    yield f"uops3_nan_max_reduce_{nm}", U.group(st0, st1).end(i).sink(arg=Kn("nan_max_reduce", opts))
  # a NaN constant on either side of MAX and MIN, and compared: MAX is `(a<b)?b:a` (NaN wins only as the first
  # operand), so the operand order must survive the rewrites; tinygrad folds `x < NaN` to false, uopcg from the AST keeps it
  o, a = ph((64,), 0), ph((64,), 1)
  g = U.range(64, 0, AxisType.GLOBAL)
  x = a[g]
  nan = x.const_like(float("nan"))
  val = x.maximum(nan) + nan.maximum(x) * 2.0 + (x < nan).where(1.0, 0.0) + (x.minimum(nan) != x.minimum(nan)).where(100.0, 0.0)
  yield "uops3_nan_const_max", o[g].store(val).end(g).sink(arg=Kn("nan_const_max"))
  # CAST chains (float -> int8 -> float, double -> float -> half) and same-size BITCASTs (double/long, half/ushort)
  o, o2, a, d = ph((64,), 0), ph((64,), 1, dt=h16), ph((64,), 2), ph((64,), 3, dt=f64)
  g = U.range(64, 0, AxisType.GLOBAL)
  s0 = o[g].store((a[g] * 50.0).cast(i8).cast(f) * 0.25)
  s1 = o2[g].store((d[g] * 1000.0001).cast(f).cast(h16))
  yield "uops3_cast_chains", U.group(s0, s1).end(g).sink(arg=Kn("cast_chains"))
  o, o2, a, hh = ph((64,), 0, dt=i64), ph((64,), 1, dt=dtypes.uint16), ph((64,), 2, dt=f64), ph((64,), 3, dt=h16)
  g = U.range(64, 0, AxisType.GLOBAL)
  s0 = o[g].store(a[g].bitcast(i64) >> 52)
  s1 = o2[g].store(hh[g].bitcast(dtypes.uint16) ^ hh[g].bitcast(dtypes.uint16).const_like(0x8000))
  yield "uops3_bitcast_same", U.group(s0, s1).end(g).sink(arg=Kn("bitcast_same"))
  o, o2, d = ph((50,), 0, dt=i64), ph((50,), 1, dt=f64), ph((50,), 2, dt=f64)
  g = U.range(50, 0, AxisType.GLOBAL)
  q = (d[g] * 1e12).cast(i64)
  s0 = o[g].store(q * 7 - 1)
  s1 = o2[g].store(q.cast(dtypes.uint64).cast(f64) * 1e-12 + (q >> 3).cast(f64))
  yield "uops3_double_long", U.group(s0, s1).end(g).sink(arg=Kn("double_long"))
  # an emulated-half LOCAL tile beside a uchar one (tinygrad 0.14.0 fails its own verification on a
  # target without cl_khr_fp16; --fp16 renders it)
  out, a, m = ph((4 * 16,), 0), ph((4 * 16,), 1, dt=h16), ph((4 * 16,), 2, dt=u8)
  g, lx = U.range(4, 0, AxisType.GLOBAL), U.range(16, 1, AxisType.LOCAL)
  th, tm = ph((16,), 0, AS.LOCAL, dt=h16), ph((16,), 1, AS.LOCAL, dt=u8)
  s1, s2 = th[lx].store(a[g * 16 + lx]), tm[lx].store(m[g * 16 + lx] >> 1)
  th, tm = th.after(s1, s2), tm.after(s1, s2)
  yield "uops3_local_half_u8", out[g * 16 + lx].store(th[15 - lx].cast(f) * tm[(lx + 3) % 16].cast(f)).end(g, lx).sink(
    arg=Kn("local_half_u8"))
  # prime-size reductions (31 per output) with UNROLL/UPCAST/GROUPTOP; bool any and a count; int8 masked sums
  o, a = ph((7 * 13,), 0), ph((7 * 13 * 31,), 1)
  i, j, r = U.range(7, 0), U.range(13, 1), U.range(31, 2, AxisType.REDUCE)
  base = o[i * 13 + j].store((a[(i * 13 + j) * 31 + r] * 2.0).reduce(r, arg=Ops.MAX)).end(i, j)
  for nm, opts in (("none", ()), ("heur", None), ("unroll31", (Opt(OptOps.UNROLL, 0, 0), Opt(OptOps.UPCAST, 0, 7))),
                   ("grouptop31", (Opt(OptOps.UPCAST, 0, 13), Opt(OptOps.GROUPTOP, 0, 31)))):
    yield f"uops3_prime_red_{nm}", base.sink(arg=Kn("prime_red", opts))
  o, o2, a = ph((24,), 0, dt=b), ph((24,), 1, dt=i32), ph((24 * 40,), 2)
  i, r, r2 = U.range(24, 0), U.range(40, 1, AxisType.REDUCE), U.range(40, 2, AxisType.REDUCE)
  s0 = o[i].store((a[i * 40 + r] > 1.9).reduce(r, arg=Ops.MAX))
  s1 = o2[i].store((a[i * 40 + r2] < -1.5).cast(i32).reduce(r2, arg=Ops.ADD))
  for nm, opts in (("none", ()), ("heur", None), ("grouptop", (Opt(OptOps.GROUPTOP, 0, 8),)),
                   ("upcast_unroll", (Opt(OptOps.UPCAST, 0, 3), Opt(OptOps.UNROLL, 0, 5)))):
    yield f"uops3_bool_any_{nm}", U.group(s0, s1).end(i).sink(arg=Kn("bool_any", opts))
  out, a, m = ph((16,), 0, dt=i32), ph((16 * 64,), 1, dt=i8), ph((16 * 64,), 2, dt=u8)
  i, r = U.range(16, 0), U.range(64, 1, AxisType.REDUCE)
  val = a[i * 64 + r].cast(i32) * m[i * 64 + r].cast(b).cast(i8).cast(i32)
  base = out[i].store(val.reduce(r, arg=Ops.ADD)).end(i)
  for nm, opts in (("none", ()), ("heur", None), ("grouptop", (Opt(OptOps.GROUPTOP, 0, 16), Opt(OptOps.UPCAST, 0, 2))),
                   ("local_unroll", (Opt(OptOps.LOCAL, 0, 4), Opt(OptOps.UNROLL, 0, 8)))):
    yield f"uops3_i8_masked_sum_{nm}", base.sink(arg=Kn("i8_masked_sum", opts))
  # a REG accumulator loop under WEAK output ranges, with opts on the merged output axis (axis 1: the LOOP is axis 0)
  out, a = ph((32 * 24,), 0), ph((32 * 24 * 5,), 1)
  i, j, t = U.range(32, 0), U.range(24, 1), U.range(5, 2, AxisType.LOOP)
  acc = ph((1,), 0, AS.REG)
  acc = acc[0].set(1.0)
  acc = acc[0].set(acc.after(t)[0] * 0.5 + a[(i * 24 + j) * 5 + t], end=t)
  base = out[i * 24 + j].store(acc[0]).end(i, j)
  for nm, opts in (("heur", None), ("upcast_local", (Opt(OptOps.UPCAST, 1, 4), Opt(OptOps.LOCAL, 1, 8))), ("upcast3", (Opt(OptOps.UPCAST, 1, 3),))):
    yield f"uops3_reg_weak_{nm}", base.sink(arg=Kn("reg_weak", opts))
  # SPECIAL rows with a REDUCE range: no opts, heuristics, explicit (tinygrad adds no GPU dims to a kernel with
  # SPECIALs, so a GROUPTOP's GROUP_REDUCE range stays a loop of the one work-item)
  out, a = ph((24,), 0), ph((24 * 96,), 1)
  g, r = U.special(24, "gidx0"), U.range(96, 0, AxisType.REDUCE)
  base = out[g].store((a[g * 96 + r] * a[g * 96 + r]).reduce(r, arg=Ops.ADD).sqrt())
  for nm, opts in (("none", ()), ("heur", None), ("unroll4", (Opt(OptOps.UNROLL, 0, 4),)), ("grouptop16", (Opt(OptOps.GROUPTOP, 0, 16),))):
    yield f"uops3_sp_reduce_{nm}", base.sink(arg=Kn("sp_reduce", opts))
  # a LOCAL range that the output store does not use (one work-item of the group stores)
  out, a = ph((10,), 0), ph((10 * 8,), 1)
  g, l = U.range(10, 0, AxisType.GLOBAL), U.range(8, 1, AxisType.LOCAL)
  tile = ph((8,), 0, AS.LOCAL)
  tile = tile.after(tile[l].store(a[g * 8 + l] * 2.0))
  t = U.range(8, 2, AxisType.REDUCE)
  yield "uops3_local_bcast_sum", out[g].store(tile[t].reduce(t, arg=Ops.ADD)).end(g, l).sink(arg=Kn("local_bcast_sum"))
  # one LOCAL buffer reused in straight-line code: stored, read reversed, overwritten with the squares, read
  # again. tinygrad 0.14.0 places no barrier between the first reads and the overwrite (its WAR barrier is
  # only at the END of a loop), so its program races (wrong on PoCL); uopcg's barrier verifier refuses it
  out, a = ph((4 * 16,), 0), ph((4 * 16,), 1)
  g, l = U.range(4, 0, AxisType.GLOBAL), U.range(16, 1, AxisType.LOCAL)
  tile = ph((16,), 0, AS.LOCAL)
  tile = tile.after(tile[l].store(a[g * 16 + l]))
  v1 = tile[15 - l]
  tile = tile.after(tile[l].store(v1 * v1))
  yield "uops3_local_reuse", out[g * 16 + l].store(tile[(l + 1) % 16] + v1).end(g, l).sink(arg=Kn("local_reuse"))
  # an int64 MUL reduce under a LOOP it does not depend on
  o, a = ph((6 * 4,), 0, dt=i64), ph((6 * 9,), 1, dt=i64)
  g, t, r = U.range(6, 0, AxisType.GLOBAL), U.range(4, 1, AxisType.LOOP), U.range(9, 2, AxisType.REDUCE)
  p = ((a[g * 9 + r] & 3) + 1).reduce(r, arg=Ops.MUL)
  yield "uops3_i64_prod_loop", o[g * 4 + t].store(p * (t + 1).cast(i64) - 1000000000000).end(t).end(g).sink(arg=Kn("i64_prod_loop"))
  # an END over a LOOP the store does not use (the store repeats); a float REG set from an int literal;
  # int32 ranges; a 2-D buffer indexed by two indices; CUSTOMI inline OpenCL C on explicit LOADs
  out, a = ph((16,), 0), ph((16,), 1)
  g, t = U.range(16, 0, AxisType.GLOBAL), U.range(4, 1, AxisType.LOOP)
  yield "uops3_end_extra_range", out[g].store(a[g] + 1.0).end(t).end(g).sink(arg=Kn("end_extra_range"))
  out, a = ph((16,), 0), ph((16 * 5,), 1)
  g, t = U.range(16, 0, AxisType.GLOBAL), U.range(5, 1, AxisType.LOOP)
  acc = ph((1,), 0, AS.REG)
  acc = acc[0].set(0)
  acc = acc[0].set(acc.after(t)[0] + a[g * 5 + t], end=t)
  yield "uops3_reg_int_literal", out[g].store(acc[0]).end(g).sink(arg=Kn("reg_int_literal"))
  out, a = ph((8 * 6,), 0), ph((8 * 6,), 1)
  g, t = U.range(8, 0, AxisType.GLOBAL, dtype=i32), U.range(6, 1, AxisType.LOOP, dtype=i32)
  yield "uops3_int32_ranges", out[g * 6 + t].store(a[g * 6 + t] * 3.0).end(t).end(g).sink(arg=Kn("int32_ranges"))
  out, a = ph((6, 7), 0), ph((7, 6), 1)
  i, j = U.range(6, 0, AxisType.GLOBAL), U.range(7, 1, AxisType.GLOBAL)
  yield "uops3_two_index", out[i, j].store(a[j, i] * 2.0).end(i, j).sink(arg=Kn("two_index"))
  out, a = ph((32,), 0, dt=u32), ph((32,), 1, dt=u32)
  g = U.range(32, 0, AxisType.GLOBAL)
  pc = U(Ops.CUSTOMI, u32, (U(Ops.LOAD, u32, (a[g],)),), "popcount({0})")
  yield "uops3_customi_popcount", out[g].store(pc * 3).end(g).sink(arg=Kn("customi_popcount"))
  # six GLOBAL dims (merged into the three the device has) and a 4M-element elementwise with heuristics
  o, a = ph((2 * 3 * 5 * 7 * 11 * 13,), 0), ph((2 * 3 * 5 * 7 * 11 * 13,), 1)
  rs = [U.range(n, ii, AxisType.GLOBAL) for ii, n in enumerate((2, 3, 5, 7, 11, 13))]
  idx = ((((rs[0] * 3 + rs[1]) * 5 + rs[2]) * 7 + rs[3]) * 11 + rs[4]) * 13 + rs[5]
  yield "uops3_many_global_dims", o[idx].store(a[idx] + rs[5].cast(f) - rs[2].cast(f)).end(*rs).sink(arg=Kn("many_global_dims"))
  o, a = ph((1 << 22,), 0), ph((1 << 22,), 1)
  g = U.range(1 << 22, 0)
  yield "uops3_huge_1d_heur", o[g].store(a[g] * a[g]).end(g).sink(arg=Kn("huge_1d", None))


def weak_default_kernel():
  """(float)i * 0.1 < 0.7 with i a weak int made a weak float: no concrete float meets it."""
  from tinygrad.uop.ops import UOp as U
  out, g = U.placeholder((16,), dtypes.bool, 0), U.range(16, 0, AxisType.GLOBAL)
  return out[g].store(g.cast(dtypes.weakfloat) * 0.1 < 0.7).end(g).sink(arg=KernelInfo(name="weak_default", opts_to_apply=()))


def specs():
  # (name, list of asts, context); heuristics unless opts are given
  f16 = dtypes.half
  yield "ew_bcast_add", asts_of(E(32, 64) + E(1, 64)), {}
  yield "ew_bcast_col", asts_of(E(48, 40) * E(48, 1) - 3.5), {}
  yield "ew_odd_shape", asts_of(E(37, 19) + E(37, 19)), {}
  yield "ew_int_mix", asts_of(E(64, dtype=dtypes.int32) * 3 + E(64, dtype=dtypes.int32) // 5), {}
  yield "ew_idiv_neg", asts_of((E(100, dtype=dtypes.int32) - 50) // 7 + (E(100, dtype=dtypes.int32) % 3)), {}
  yield "ew_uint8", asts_of((E(256, dtype=dtypes.uint8) + E(256, dtype=dtypes.uint8)) >> 1), {}
  yield "ew_bool_where", asts_of(((E(128) > 0) & (E(128) < 1)).where(E(128), -1.0)), {}
  yield "ew_cast_chain", asts_of(E(200).cast(dtypes.int32).cast(dtypes.float) * 0.5), {}
  yield "ew_transcend", asts_of(E(256).exp() + E(256).log() + E(256).sin()), {}
  yield "ew_transcend_poly", asts_of(E(256).exp() + E(256).log() + E(256).sin()), {"TRANSCENDENTAL": 2}
  yield "ew_fast_idiv", asts_of(E(4096, dtype=dtypes.int32) // 7 + E(4096, dtype=dtypes.int32) % 13), {"DISABLE_FAST_IDIV": 0}
  yield "ew_permute", asts_of(E(32, 48).permute(1, 0) + 1), {}
  yield "ew_pad", asts_of(E(30, 30).pad(((1, 1), (2, 0))) * 2), {}
  yield "ew_half", asts_of(E(64, 64, dtype=f16) * E(64, 64, dtype=f16) + 1), {}
  yield "red_max_rows", asts_of(E(64, 96).max(axis=1)), {}
  yield "red_sum_cols", asts_of(E(128, 64).sum(axis=0)), {}
  yield "red_mean_all", asts_of(E(1000).mean()), {}
  yield "red_int_sum", asts_of(E(333, dtype=dtypes.int32).sum()), {}
  yield "red_argmax", asts_of(E(16, 50).argmax(axis=1)), {}
  yield "red_cumsum", asts_of(E(64).cumsum()), {}
  yield "red_var", asts_of(E(32, 48).var(axis=1)), {}
  yield "red_layernorm", asts_of(E(16, 64).layernorm()), {}
  yield "red_half_sum", asts_of(E(512, dtype=f16).sum()), {}
  yield "mm_heur", asts_of(E(32, 48) @ E(48, 40)), {}
  yield "mm_vec", asts_of(E(1, 256) @ E(256, 64)), {}
  yield "conv2d", asts_of(E(1, 4, 12, 12).conv2d(E(8, 4, 3, 3))), {}
  yield "maxpool", asts_of(E(1, 2, 16, 16).max_pool2d()), {}
  yield "gather", asts_of(E(64, 32)[E(8, dtype=dtypes.int32)]), {}
  yield "softmax_big", asts_of(E(8, 1000).softmax()), {}
  yield "relu_sigmoid", asts_of(E(500).relu() + E(500).sigmoid()), {}
  yield "gelu", asts_of(E(300).gelu()), {}
  yield "gelu_poly", asts_of(E(300).gelu()), {"TRANSCENDENTAL": 2}
  yield "pow_abs", asts_of(E(128).abs() ** 1.5 + E(128).clip(-1, 1)), {}
  yield "mod_neg", asts_of(E(99, dtype=dtypes.int32) % -7 + E(99, dtype=dtypes.int32) // -3), {}
  yield "int64_math", asts_of(E(64, dtype=dtypes.int64) * 100000 + E(64, dtype=dtypes.int64)), {}
  yield "bool_any", asts_of((E(32, 40) > 0.5).any(axis=1)), {}
  yield "int_max_red", asts_of(E(16, 33, dtype=dtypes.int32).max(axis=1)), {}
  yield "uint8_sum", asts_of(E(300, dtype=dtypes.uint8).sum()), {}
  yield "cat", asts_of(E(10, 20).cat(E(10, 12), dim=1)), {}
  yield "flip_slice", asts_of(E(40, 40).flip(0)[3:30:2, ::3] + 1), {}
  yield "conv2d_pad_stride", asts_of(E(1, 3, 17, 17).conv2d(E(4, 3, 3, 3), padding=1, stride=2)), {}
  yield "avgpool", asts_of(E(1, 2, 12, 12).avg_pool2d()), {}
  yield "one_hot", asts_of(E(16, dtype=dtypes.int32).one_hot(10)), {}
  yield "half_mm", asts_of(E(32, 32, dtype=f16) @ E(32, 32, dtype=f16)), {}
  yield "half_exp_poly", asts_of(E(64, dtype=f16).exp()), {"TRANSCENDENTAL": 2}
  yield "sqrt_recip", asts_of(E(256).sqrt().reciprocal() + E(256).rsqrt()), {}
  yield "idiv_fast_u32", asts_of(E(1000, dtype=dtypes.uint32) // 13 + E(1000, dtype=dtypes.uint32) % 10), {"DISABLE_FAST_IDIV": 0}
  yield "idiv_fast_rows", asts_of(E(60, 70).sum(axis=1) + E(60)), {"DISABLE_FAST_IDIV": 0}
  yield "sum_3d_mid", asts_of(E(8, 30, 10).sum(axis=1)), {}
  yield "max_3d_last", asts_of(E(6, 7, 50).max(axis=2)), {}
  yield "softmax_half", asts_of(E(8, 64, dtype=f16).softmax()), {}
  yield "logsumexp", asts_of(E(16, 128).logsumexp(axis=1)), {}
  yield "bcast_3d", asts_of(E(4, 1, 32) * E(1, 16, 1) + E(4, 16, 32)), {}
  yield "where_int", asts_of((E(70, dtype=dtypes.int32) > 3).where(E(70, dtype=dtypes.int32), 7)), {}
  yield "cast_f2i_u8", asts_of((E(128) * 255).cast(dtypes.uint8)), {}
  yield "double_math", asts_of(E(64, dtype=dtypes.double).sqrt() + 1), {}
  yield "bf16_add", asts_of(E(128, dtype=dtypes.bfloat16) * 2 + E(128, dtype=dtypes.bfloat16)), {}
  yield "bf16_sum", asts_of(E(256, dtype=dtypes.bfloat16).sum()), {}
  yield "int8_mm", asts_of(E(16, 32, dtype=dtypes.int8).cast(dtypes.int32) @ E(32, 8, dtype=dtypes.int8).cast(dtypes.int32)), {}
  yield "long_sum", asts_of(E(1000, dtype=dtypes.int64).sum()), {}
  yield "sum_100k", asts_of(E(100000).sum()), {}
  yield "argmin_cols", asts_of(E(40, 24).argmin(axis=0)), {}
  yield "std_rows", asts_of(E(12, 80).std(axis=1)), {}
  yield "exp_poly_double", asts_of(E(64, dtype=dtypes.double).exp()), {"TRANSCENDENTAL": 2}
  yield "sin_poly_half", asts_of(E(64, dtype=f16).sin()), {"TRANSCENDENTAL": 2}
  yield "clamp_int16", asts_of(E(100, dtype=dtypes.int16).clip(-5, 5) * 3), {}
  yield "mixed_where", asts_of((E(90, dtype=dtypes.int32) > 0).where(E(90), E(90, dtype=dtypes.int32).cast(dtypes.float))), {}
  yield "cumsum_rows", asts_of(E(8, 40).cumsum(axis=1)), {}
  yield "reshape_permute", asts_of(E(6, 10).reshape(4, 15).permute(1, 0).contiguous() + 1), {}
  yield "center_rows", asts_of(E(16, 48) - E(16, 48).mean(axis=1, keepdim=True)), {}
  yield "sum_3d_permuted", asts_of(E(6, 10, 12).permute(2, 0, 1).sum(axis=2)), {}
  yield "conv_dilated", asts_of(E(1, 2, 14, 14).conv2d(E(3, 2, 3, 3), dilation=2)), {}
  yield "bool_where_bcast", asts_of((E(16, 1) > 0).where(E(1, 24), E(16, 24))), {}
  yield "int_max_group", [with_opts(asts_of(E(2048, dtype=dtypes.int32).max())[-1], [Opt(OptOps.GROUPTOP, 0, 16)])], {}
  yield "half_max_group", [with_opts(asts_of(E(2048, dtype=f16).max())[-1], [Opt(OptOps.GROUPTOP, 0, 16)])], {}
  yield "rows_local_upcast_unroll", [with_opts(asts_of(E(64, 128).sum(axis=1))[-1],
                                                [Opt(OptOps.LOCAL, 0, 16), Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UNROLL, 0, 4)])], {}
  yield "max_rows_grouptop_local", [with_opts(asts_of(E(32, 256).max(axis=1))[-1],
                                               [Opt(OptOps.LOCAL, 0, 4), Opt(OptOps.GROUPTOP, 0, 8)])], {}
  yield "mm_rect_opts", [with_opts(asts_of(E(48, 32) @ E(32, 40))[-1],
                                    [Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.LOCAL, 1, 8), Opt(OptOps.UNROLL, 0, 2)])], {}
  yield "mean_int", asts_of(E(100, dtype=dtypes.int32).mean()), {}
  yield "div_float", asts_of(E(64) / (E(64).abs() + 1)), {}
  yield "idiv_range", asts_of(E(60, 7).reshape(420)[::3] * 2), {}
  yield "idiv_range_fast", asts_of(E(60, 7).reshape(420)[::3] * 2 + E(140, 3)[:, 1]), {"DISABLE_FAST_IDIV": 0}
  yield "softmax_poly", asts_of(E(8, 40).softmax()), {"TRANSCENDENTAL": 2}
  yield "ew_nolocals", asts_of(E(64, 64) + E(64, 64)), {"NOLOCALS": 1}
  yield "rows_nolocals", asts_of(E(64, 256).sum(axis=1)), {"NOLOCALS": 1}
  yield "ew_dmc", asts_of(E(64, 64) * 3 + E(64, 64)), {"DMC": 1}
  yield "half_emulated_ctx", asts_of(E(64, dtype=f16) * E(64, dtype=f16)), {"EMULATED_DTYPES": "half"}
  # kernels written in UOps (spec §12): LOCAL tiles, REG accumulators, AFTER, barriers (the reference
  # examples in docs/reference/tinygrad-codegen-tools)
  sys.path.insert(0, os.path.join(ROOT, "..", "shared", "docs", "reference", "tinygrad-codegen-tools"))
  try:
    import gen_examples
    for which in ("tiled", "sum", "matmul", "upcast", "padmax", "rowsum"):
      yield f"uops_{which}", [gen_examples.make(which)], {}
  except ImportError:
    pass
  try:
    for name, ast in uop_kernels(): yield name, [ast], {}
    for name, ast in uop_kernels_more(): yield name, [ast], {}
    for name, ast in uop_kernels_v3(): yield name, [ast], {}
    for df in ("float64", "half"):  # a weak float that meets nothing concrete lives at DEFAULT_FLOAT
      yield f"uops_weak_default_{df}", [weak_default_kernel()], {"DEFAULT_FLOAT": df}
  except Exception as e:
    print(f"SKIP uop kernels: {type(e).__name__}: {e}")
  a = asts_of(E(4096).sum())[-1]
  yield "red_grouptop_32", [with_opts(a, [Opt(OptOps.GROUPTOP, 0, 32)])], {}
  yield "red_group_unroll", [with_opts(a, [Opt(OptOps.GROUP, 0, 8), Opt(OptOps.UNROLL, 0, 4)])], {}
  r = asts_of(E(16, 256).sum(axis=1))[-1]
  yield "rows_group_local_upcast", [with_opts(r, [Opt(OptOps.GROUP, 0, 8), Opt(OptOps.LOCAL, 0, 4), Opt(OptOps.UPCAST, 0, 2)])], {}
  m = asts_of(E(64, 64) @ E(64, 64))[-1]
  yield "mm_opts_a", [with_opts(m, [Opt(OptOps.LOCAL, 0, 8), Opt(OptOps.LOCAL, 1, 8), Opt(OptOps.UPCAST, 0, 2),
                                     Opt(OptOps.UPCAST, 1, 2), Opt(OptOps.UNROLL, 0, 4)])], {}
  yield "mm_noopt", [with_opts(m, [])], {}
  yield "mm_upcast_only", [with_opts(m, [Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UPCAST, 1, 4)])], {}
  yield "mm_grouptop", [with_opts(m, [Opt(OptOps.GROUPTOP, 0, 16), Opt(OptOps.UPCAST, 0, 4)])], {}
  p = asts_of(E(60).max())[-1]
  yield "padmax", [with_opts(p, [Opt(OptOps.PADTO, 0, 64)])], {}
  p2 = asts_of(E(60, 60).sum(axis=1))[-1]
  yield "padsum_upcast", [with_opts(p2, [Opt(OptOps.PADTO, 0, 64), Opt(OptOps.UPCAST, 0, 4)])], {}
  u = asts_of(E(64) + 1)[-1]
  yield "upcast4", [with_opts(u, [Opt(OptOps.UPCAST, 0, 4)])], {}
  yield "mm_local_unroll_fp", [with_opts(m, [Opt(OptOps.LOCAL, 0, 16), Opt(OptOps.UNROLL, 0, 8)])], {}
  c = asts_of(E(1, 4, 12, 12).conv2d(E(8, 4, 3, 3)))[-1]
  yield "conv_opts", [with_opts(c, [Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.LOCAL, 1, 2), Opt(OptOps.UNROLL, 0, 3)])], {}
  g = asts_of(E(32, 512).sum(axis=1))[-1]
  yield "rows_grouptop_upcast", [with_opts(g, [Opt(OptOps.GROUPTOP, 0, 16), Opt(OptOps.UPCAST, 0, 4)])], {}
  yield "rows_group_local", [with_opts(g, [Opt(OptOps.LOCAL, 0, 8), Opt(OptOps.GROUP, 0, 16)])], {}
  h = asts_of(E(32, 512, dtype=f16).sum(axis=1))[-1]
  yield "rows_half_grouptop", [with_opts(h, [Opt(OptOps.GROUPTOP, 0, 16)])], {}
  # index math of real layers, with tinygrad's heuristic opts
  yield "conv_stride2", asts_of(E(2, 3, 16, 16).conv2d(E(6, 3, 3, 3), stride=2)), {}
  yield "conv_pad2_5x5", asts_of(E(1, 2, 11, 11).conv2d(E(4, 2, 5, 5), padding=2)), {}
  yield "conv_1x1", asts_of(E(2, 8, 7, 7).conv2d(E(16, 8, 1, 1))), {}
  yield "conv_depthwise", asts_of(E(1, 6, 10, 10).conv2d(E(6, 1, 3, 3), groups=6, padding=1)), {}
  yield "conv1d", asts_of(E(2, 4, 30).conv2d(E(5, 4, 3), padding=1)), {}
  yield "conv_transpose", asts_of(E(1, 3, 6, 6).conv_transpose2d(E(3, 2, 3, 3), stride=2)), {}
  yield "maxpool_s1_k3", asts_of(E(1, 2, 10, 10).max_pool2d(kernel_size=3, stride=1)), {}
  yield "avgpool_pad", asts_of(E(1, 2, 9, 9).avg_pool2d(kernel_size=3, stride=2, padding=1)), {}
  yield "bmm", asts_of(E(4, 16, 32) @ E(4, 32, 8)), {}
  yield "attention", asts_of((E(2, 8, 16) @ E(2, 16, 8) / 4).softmax(-1) @ E(2, 8, 16)), {}
  yield "repeat", asts_of(E(4, 5).repeat(3, 2) + 1), {}
  yield "pad_reflect", asts_of(E(1, 1, 8, 8).pad((2, 2, 1, 1), mode="reflect") * 2), {}
  yield "roll", asts_of(E(64).roll(5) - E(64)), {}
  yield "tril", asts_of(E(16, 16).tril() + E(16, 16).triu(1)), {}
  yield "arange_math", asts_of(Tensor.arange(100).to("NULL") * 3 + E(100)), {}
  yield "cumsum_long", asts_of(E(700).cumsum()), {}
  yield "gather_dim", asts_of(E(8, 16).gather(1, E(8, 4, dtype=dtypes.int32))), {}
  yield "sum_axes_02", asts_of(E(8, 16, 4).sum(axis=(0, 2))), {}
  yield "slice_pad", asts_of(E(20, 20)[2:18, 3:17].pad(((1, 1), (0, 2))) + 1), {}
  yield "batchnorm", asts_of((E(4, 8, 6) - E(1, 8, 1)) / (E(1, 8, 1) + 1e-5).sqrt() * E(1, 8, 1) + E(1, 8, 1)), {}
  yield "xent", asts_of(E(16, 10).sparse_categorical_crossentropy(E(16, dtype=dtypes.int32))), {}
  yield "interp", asts_of(E(1, 1, 6, 6).interpolate(size=(12, 12), mode="linear")), {}
  yield "shift_mask_u32", asts_of(((E(128, dtype=dtypes.uint32) >> 3) & 0xff) | (E(128, dtype=dtypes.uint32) << 2)), {}
  yield "int_div_pow2", asts_of(E(256, dtype=dtypes.int32) // 8 + E(256, dtype=dtypes.int32) % 16), {}
  yield "mean_3d_keep", asts_of(E(6, 20, 5) / E(6, 20, 5).sum(axis=1, keepdim=True)), {}
  yield "mm_tall", asts_of(E(256, 8) @ E(8, 4)), {}
  yield "mm_wide_k", asts_of(E(4, 1024) @ E(1024, 4)), {}
  yield "max_axes_12", asts_of(E(3, 33, 33).max(axis=(1, 2))), {}
  yield "permute_4d", asts_of(E(5, 7, 9, 11).permute(3, 1, 0, 2).contiguous() * 2), {}
  yield "rowsum_times", asts_of(E(16, 16).sum(axis=1, keepdim=True) * E(16, 16)), {}
  yield "int8_wrap", asts_of(E(64, dtype=dtypes.int8) * 3 + E(64, dtype=dtypes.int8)), {}
  yield "half_mean", asts_of(E(300, dtype=f16).mean()), {}
  yield "patchify", asts_of(E(2, 3, 8, 8).conv2d(E(4, 3, 2, 2), stride=2)), {}
  yield "pad_reshape_sum", asts_of(E(33).pad((0, 31)).reshape(8, 8).sum(axis=1)), {}
  yield "sum_axes_13", asts_of(E(4, 4, 4, 4).sum(axis=(1, 3))), {}
  yield "where3_bcast", asts_of((E(8, 1) > E(1, 8)).where(E(8, 8), E(1, 8))), {}
  yield "fancy_index", asts_of(E(10, 10)[E(6, dtype=dtypes.int32), E(6, dtype=dtypes.int32)]), {}
  yield "mm_transposed", asts_of(E(32, 24).T @ E(32, 40)), {}
  yield "stack_expand", asts_of(Tensor.stack(E(8), E(8), E(8)).reshape(3, 2, 4).expand(2, 3, 2, 4).contiguous() + 1), {}
  yield "argmax_3d", asts_of(E(4, 6, 20).argmax(axis=2, keepdim=True)), {}
  yield "tril_sum", asts_of(E(40, 40).tril().sum()), {}
  yield "to_bool", asts_of(E(64).cast(dtypes.bool).where(E(64), 2.0)), {}
  yield "mod_neg_div_opts", asts_of((E(96, dtype=dtypes.int32) % -5) * (E(96, dtype=dtypes.int32) // -3)), {"DISABLE_FAST_IDIV": 0}
  yield "exp2_log2", asts_of(E(128).exp2() * E(128).log2()), {"TRANSCENDENTAL": 2}
  yield "min_rows", asts_of(E(20, 70).min(axis=1)), {}
  yield "sum_int16", asts_of(E(500, dtype=dtypes.int16).sum()), {}
  yield "prod_rows", asts_of(E(8, 12).prod(axis=1)), {}
  yield "conv_3x3_s2_p1_big", asts_of(E(1, 8, 20, 20).conv2d(E(8, 8, 3, 3), stride=2, padding=1)), {}
  yield "maxpool_pad", asts_of(E(1, 3, 13, 13).max_pool2d(kernel_size=3, stride=2, padding=1)), {}
  yield "softmax_3d", asts_of(E(2, 6, 50).softmax(axis=1)), {}
  yield "logsoftmax", asts_of(E(8, 33).log_softmax()), {}
  yield "sum_uint16", asts_of(E(700, dtype=dtypes.uint16).sum()), {}
  yield "where_chain", asts_of((E(50) > 0).where((E(50) < 1).where(E(50), 1.0), -1.0)), {}
  yield "sub_rev_slice", asts_of(E(64)[::-1] - E(64)[::2].repeat(2)), {}
  yield "cumprod", asts_of(E(32).cumprod(0)), {}
  yield "mm_int32", asts_of(E(16, 24, dtype=dtypes.int32) @ E(24, 8, dtype=dtypes.int32)), {}
  yield "lerp", asts_of(E(100).lerp(E(100), 0.25)), {}
  yield "tanh_erf", asts_of(E(200).tanh() + E(200).erf()), {}
  yield "round_family", asts_of(E(150).floor() + E(150).ceil() + E(150).round() + E(150).trunc()), {}
  yield "nan_inf_mask", asts_of((E(64).isnan() | E(64).isinf()).where(0.0, E(64))), {}
  yield "softplus_hswish", asts_of(E(128).softplus() + E(128).hardswish() + E(128).silu()), {}
  yield "cos_tan_poly", asts_of(E(96).cos() + E(96).tan()), {"TRANSCENDENTAL": 2}
  yield "bitcast_u32", asts_of(E(64).bitcast(dtypes.uint32) >> 23), {}
  yield "uint64_mix", asts_of((E(48, dtype=dtypes.uint64) * 3 + 7) // 5), {}
  yield "eye_mul", asts_of(Tensor.eye(24).to("NULL") * E(24, 24)), {}
  yield "masked_fill", asts_of(E(30, 30).masked_fill(E(30, 30, dtype=dtypes.bool), -1e9)), {}
  yield "einsum_ij_jk", asts_of(Tensor.einsum("ij,jk->ik", E(12, 20), E(20, 16))), {}
  yield "interp_nearest", asts_of(E(1, 2, 6, 6).interpolate((11, 9), mode="nearest")), {}
  yield "avgpool_ceil", asts_of(E(1, 2, 11, 11).avg_pool2d(kernel_size=3, stride=2, ceil_mode=True)), {}
  yield "sign_abs_i8", asts_of(E(90, dtype=dtypes.int8).sign() * E(90, dtype=dtypes.int8).abs()), {}
  yield "cmp_ne_eq", asts_of(((E(77, dtype=dtypes.int32) != 3) & (E(77, dtype=dtypes.int32) == E(77, dtype=dtypes.int32))).cast(dtypes.int32)), {}
  yield "dot_vec", asts_of(E(1024).dot(E(1024))), {}
  yield "std_cols_half", asts_of(E(40, 24, dtype=f16).std(axis=0)), {}
  yield "rsqrt_mean_sq", asts_of((E(16, 128).square().mean(axis=1) + 1e-5).rsqrt()), {}
  yield "mish", asts_of(E(100).mish()), {}
  yield "pad_value", asts_of(E(9, 9).pad(((2, 1), (0, 3)), value=7.0) - 1), {}
  yield "int_pow_shift", asts_of((E(60, dtype=dtypes.int32) << 3) ^ (E(60, dtype=dtypes.int32) | 5)), {}
  yield "rand_threefry", asts_of(Tensor.rand(256, device="NULL") * E(256)), {}
  yield "randint", asts_of(Tensor.randint(100, low=0, high=10, device="NULL") + E(100, dtype=dtypes.int32)), {}
  yield "conv_groups", asts_of(E(1, 8, 9, 9).conv2d(E(8, 2, 3, 3), groups=4)), {}
  yield "conv3d", asts_of(E(1, 2, 6, 6, 6).conv2d(E(4, 2, 3, 3, 3))), {}
  yield "scatter_add", asts_of(E(10, 8).scatter_reduce(0, E(4, 8, dtype=dtypes.int32), E(4, 8), reduce="sum")), {}
  yield "topk_vals", asts_of(E(64).topk(5)[0]), {}
  yield "sort_small", asts_of(E(16).sort()[0]), {}
  yield "cumsum_2d_axis0", asts_of(E(40, 12).cumsum(0)), {}
  yield "max_min_diff", asts_of(E(12, 77).max(axis=1) - E(12, 77).min(axis=1)), {}
  yield "outer_sum", asts_of((E(64, 1) * E(1, 48)).sum(axis=0)), {}
  # hand-picked opt sets on a few more shapes
  s3 = asts_of(E(8, 64, 32).sum(axis=1))[-1]
  yield "sum_mid_local_group", [with_opts(s3, [Opt(OptOps.LOCAL, 1, 8), Opt(OptOps.GROUP, 0, 8), Opt(OptOps.UPCAST, 0, 2)])], {}
  yield "sum_mid_unroll_upcast", [with_opts(s3, [Opt(OptOps.UNROLL, 0, 8), Opt(OptOps.UPCAST, 1, 4)])], {}
  mx = asts_of(E(32, 96).max(axis=1))[-1]
  yield "max_rows_group_unroll", [with_opts(mx, [Opt(OptOps.GROUP, 0, 4), Opt(OptOps.UNROLL, 0, 4), Opt(OptOps.LOCAL, 0, 4)])], {}
  mr = asts_of(E(24, 40) @ E(40, 56))[-1]
  yield "mm_rect_local_group", [with_opts(mr, [Opt(OptOps.LOCAL, 0, 4), Opt(OptOps.LOCAL, 1, 8), Opt(OptOps.GROUPTOP, 0, 4)])], {}
  yield "mm_rect_upcast_unroll", [with_opts(mr, [Opt(OptOps.UPCAST, 1, 8), Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UNROLL, 0, 8)])], {}
  cv = asts_of(E(1, 4, 10, 10).conv2d(E(8, 4, 3, 3), padding=1))[-1]
  yield "conv_pad_upcast_local", [with_opts(cv, [Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.LOCAL, 1, 2)])], {}
  mm2 = asts_of(E(8, 256).max(axis=1) - E(8, 256).min(axis=1))[-1]
  yield "max_min_grouptop", [with_opts(mm2, [Opt(OptOps.GROUPTOP, 0, 16)])], {}
  yield "max_min_group_local", [with_opts(mm2, [Opt(OptOps.LOCAL, 0, 2), Opt(OptOps.GROUP, 0, 8)])], {}
  ln = asts_of(E(16, 128).layernorm())
  yield "layernorm_grouptop", [with_opts(a_, [Opt(OptOps.GROUPTOP, 0, 16)]) for a_ in ln], {}
  s2 = asts_of((E(12, 64) * E(12, 64)).sum(axis=1) + E(12, 64).sum(axis=1))[-1]
  yield "two_sums_upcast_unroll", [with_opts(s2, [Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UNROLL, 0, 4)])], {}
  am = asts_of(E(16, 200).argmax(axis=1))
  yield "argmax_grouptop", [with_opts(a_, [Opt(OptOps.GROUPTOP, 0, 8)]) for a_ in am], {}
  lse = asts_of(E(8, 300).logsumexp(axis=1))
  yield "logsumexp_group_upcast", [with_opts(a_, [Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.GROUP, 0, 4)]) for a_ in lse], {}
  st2 = asts_of(E(4, 96).std(axis=1))
  yield "std_rows_local_unroll", [with_opts(a_, [Opt(OptOps.LOCAL, 0, 4), Opt(OptOps.UNROLL, 0, 4)]) for a_ in st2], {}
  sm = asts_of(E(16, 256).softmax(-1))
  yield "softmax_rows_group", [with_opts(a_, [Opt(OptOps.GROUPTOP, 0, 16)]) for a_ in sm[:2]], {}

  # session 12: vector widths, PADTO, odd factors, int/bool/half reductions under GROUP
  ew = asts_of(E(64, 64) * 2 + E(64, 64))[-1]
  yield "ew_upcast4_local", [with_opts(ew, [Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.LOCAL, 0, 8)])], {}
  yield "ew_upcast3_odd", [with_opts(asts_of(E(9, 33) + 1)[-1], [Opt(OptOps.UPCAST, 0, 3), Opt(OptOps.UPCAST, 0, 3)])], {}
  yield "ew_half_upcast8", [with_opts(asts_of(E(32, 64, dtype=f16) * E(32, 64, dtype=f16))[-1], [Opt(OptOps.UPCAST, 0, 8)])], {}
  ps = asts_of(E(16, 30).sum(axis=1))[-1]
  yield "sum_padto", [with_opts(ps, [Opt(OptOps.PADTO, 1, 32), Opt(OptOps.GROUP, 0, 8)])], {}
  yield "sum_padto_upcast", [with_opts(ps, [Opt(OptOps.PADTO, 0, 32), Opt(OptOps.UPCAST, 0, 4)])], {}
  yield "int_sum_grouptop", [with_opts(asts_of(E(8, 1024, dtype=dtypes.int32).sum(axis=1))[-1], [Opt(OptOps.GROUPTOP, 0, 16), Opt(OptOps.UNROLL, 0, 4)])], {}
  yield "bool_all_group", [with_opts(asts_of((E(8, 256) > 0).all(axis=1))[-1], [Opt(OptOps.GROUPTOP, 0, 32)])], {}
  yield "half_sum_group_upcast", [with_opts(asts_of(E(16, 512, dtype=f16).sum(axis=1))[-1], [Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.GROUP, 0, 16)])], {}
  m64 = asts_of(E(64, 64) @ E(64, 64))[-1]
  yield "mm64_local_upcast_unroll", [with_opts(m64, [Opt(OptOps.LOCAL, 0, 8), Opt(OptOps.UPCAST, 1, 4), Opt(OptOps.UNROLL, 0, 4), Opt(OptOps.LOCAL, 1, 4)])], {}
  yield "mm64_group_upcast", [with_opts(m64, [Opt(OptOps.GROUP, 0, 8), Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UPCAST, 1, 2)])], {}
  yield "u8_sum_upcast_unroll", [with_opts(asts_of(E(32, 128, dtype=dtypes.uint8).sum(axis=1))[-1], [Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UNROLL, 0, 8)])], {}
  yield "max_local3", [with_opts(asts_of(E(27, 60).max(axis=1))[-1], [Opt(OptOps.LOCAL, 0, 3), Opt(OptOps.GROUP, 0, 6)])], {}
  yield "max_full_unroll", [with_opts(asts_of(E(16, 12).max(axis=1))[-1], [Opt(OptOps.UNROLL, 0, 0)])], {}
  yield "sum_two_axes_group", [with_opts(asts_of(E(8, 16, 24).sum(axis=(0, 2)))[-1], [Opt(OptOps.GROUP, 0, 4), Opt(OptOps.UNROLL, 0, 2)])], {}
  vr = asts_of(E(8, 200).var(axis=1))
  yield "var_grouptop_upcast", [with_opts(a_, [Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.GROUPTOP, 0, 8)]) for a_ in vr], {}
  cv2 = asts_of(E(1, 3, 8, 8).conv2d(E(6, 3, 3, 3)))[-1]
  yield "conv_unroll_reduce", [with_opts(cv2, [Opt(OptOps.UNROLL, 0, 3), Opt(OptOps.UNROLL, 1, 3), Opt(OptOps.UPCAST, 0, 2)])], {}
  yield "idiv_fast_local", [with_opts(asts_of(E(48, 70).sum(axis=1) // 3)[-1], [Opt(OptOps.LOCAL, 0, 16), Opt(OptOps.GROUP, 0, 7)])], {"DISABLE_FAST_IDIV": 0}
  yield "i64_upcast_where", [with_opts(asts_of((E(40, 32, dtype=dtypes.int64) > 5).where(E(40, 32, dtype=dtypes.int64), -3))[-1], [Opt(OptOps.UPCAST, 1, 4)])], {}
  yield "dot_group_upcast", [with_opts(asts_of(E(2048).dot(E(2048)))[-1], [Opt(OptOps.GROUP, 0, 32), Opt(OptOps.UNROLL, 0, 4)])], {}
  yield "argmin_local_group", [with_opts(a_, [Opt(OptOps.LOCAL, 0, 4), Opt(OptOps.GROUPTOP, 0, 8)]) for a_ in asts_of(E(16, 120).argmin(axis=1))], {}

POCL_ARCH = None


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--out", default="/tmp/uopcg_oracle")
  ap.add_argument("--uopcg", default=os.path.join(ROOT, "build", "uopcg"))
  ap.add_argument("--only", nargs="*")
  ap.add_argument("--fp16", action="store_true", help="also render every kernel for a cl_khr_fp16 target")
  ap.add_argument("--run", action="store_true",
                  help="also run tinygrad's source and uopcg's kernel on random inputs (pyopencl) and compare outputs")
  a = ap.parse_args()
  idx = json.load(open(os.path.join(CORPUS, "index.json")))
  rens = {"pocl": idx["renderers"]["pocl"]["arch"], "fp16": idx["renderers"]["fp16"]["arch"]}
  os.makedirs(a.out, exist_ok=True)
  bad = 0
  total = 0
  ran_ok = 0
  for name, asts, ctx in specs():
    if a.only and name not in a.only: continue
    if not asts: print(f"SKIP {name}: {getattr(asts, 'why', 'no kernel')}"); continue
    for kind in (["pocl", "fp16"] if a.fp16 else ["pocl"]):
      ren = OpenCLRenderer(Target("CL", arch=rens[kind]))
      for i, ast in enumerate(asts):
        kname = (name if len(asts) == 1 else f"{name}.k{i}") + ("" if kind == "pocl" else ".fp16")
        try:
          k = export(kname, ast, ren, kind, ctx)
        except Exception as e:  # tinygrad itself failed: not uopcg's problem
          print(f"SKIP {kname}: tinygrad: {type(e).__name__}: {e}")
          continue
        path = os.path.join(a.out, kname + ".json")
        ran = False
        if a.run and kind == "pocl":
          try:
            attach_data(k, a.out, seed=len(kname))
            ran = True
          except Exception as e:
            print(f"NORUN {kname}: reference run failed: {type(e).__name__}: {str(e)[:200]}")
        with open(path, "w") as f: json.dump(k, f)
        total += 1
        if ran:
          rr = subprocess.run([a.uopcg, "run", path], capture_output=True, text=True)
          if rr.returncode != 0:
            bad += 1
            print(f"WRONG {kname}: uopcg run: {(rr.stdout + rr.stderr).strip()[:800]}")
            continue
          rr = subprocess.run([a.uopcg, "run", path, "--from-ast"], capture_output=True, text=True)
          if rr.returncode != 0:
            bad += 1
            print(f"WRONG {kname}: uopcg run --from-ast: {(rr.stdout + rr.stderr).strip()[:800]}")
            continue
          ran_ok += 1
        r = subprocess.run([a.uopcg, "compile", path] + (["--target", "fp16"] if kind == "fp16" else []), capture_output=True, text=True)
        if r.returncode != 0:
          bad += 1
          print(f"FAIL {kname}: uopcg exit {r.returncode}: {r.stderr.strip()[:800]}")
          continue
        ours = r.stdout.rstrip("\n")
        if ours != k["source"]:
          bad += 1
          print(f"DIFF {kname}")
          sys.stdout.writelines(difflib.unified_diff(k["source"].splitlines(True), (ours + "\n").splitlines(True), "tinygrad", "uopcg", n=1))
          print()
        else:
          print(f"ok   {kname}")
  print(f"{total - bad}/{total} kernels: same OpenCL C as tinygrad")
  if a.run: print(f"{ran_ok} kernels run on the device, from the post-opts graph and from the AST: same outputs as tinygrad's source")
  return 1 if bad else 0


if __name__ == "__main__":
  sys.exit(main())
