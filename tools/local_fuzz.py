#!/usr/bin/env python3
"""Random hand-written kernels that stage values through LOCAL memory, checked against numpy and for races.

The seed's subject is the barriers of LOCAL memory: a STORE to a LOCAL buffer read by other work-items
needs a barrier before the read (RAW, "add_raw_barrier"), and a LOCAL buffer rewritten in every
iteration of a loop needs one at the loop's tail (WAR, "add_war_barrier"). tools/ast_fuzz.py draws
ASTs in the form tinygrad's scheduler makes, which have no LOCAL buffer; the LOCAL kernels of
tools/uop_kernels*.py and tools/tinygrad_tests_differential.py are written one by one. This tool draws
them from a seed, in the form a user writes with tinygrad 0.14's UOp API (`UOp.placeholder(...,
addrspace=LOCAL)`, `.after(store)` or `.after(store.barrier())`, LOCAL and LOOP ranges):

  permute   tile[p(l)] = a[g, l]; out[g, l] = tile[q(l)] + a[g, l]                      (RAW)
  reduce    tile[l] = a[g, l]; out[g, l] = sum_r tile[r] * w[l, r]  (or a prefix sum, r <= l)
  loop      for t: tile[p(l)] = a[g, t, l]; out[g, t, l] = tile[q(l)] * 2              (RAW and WAR)
  loopacc   for t: tile[p(l)] = a[g, t, l]; acc += tile[q(l)]; out[g, l] = acc         (RAW and WAR)
  two       tile1[p(l)] = a[g, l]; tile2[p2(l)] = tile1[q(l)] * 2 + 1; out = tile2[q2(l)]
  transpose two LOCAL axes: tile[l0, l1] = a[g, l0, l1]; out[g, l0, l1] = tile'[l0, l1] read transposed
  multi     each work-item stages K elements in a loop and reads K others back in another loop
  tree      a tree sum or max in place: tile[l] = tile[l] op tile[l + s] for l < s, s = L/2 ... 1 (RAW and the
            WAR of a store after other work-items' reads, DIVERGENCES P16)
  scan      a Hillis-Steele prefix sum in place: tile[l] += tile[l - s] for l >= s, s = 1, 2, 4 ... (the same)
  gemm      out[g, l] = sum_k a[g, k] * b[k, l], a's row staged L elements at a time in a loop, a REDUCE over the
            tile inside it, a REG accumulator across it (RAW, WAR)

where p, q are permutations of the LOCAL ids (identity, reversal, rotation, an odd stride, an xor).
Each kernel's outputs are numpy's (`tg=ok` when tinygrad's program agreed, `tg=WRONG` when not).
uopcg then runs the file from tinygrad's post-opts graph, from the AST, with its heuristics, with
random opt lists (uopcg's refusal of an opt is counted, not failed), with BEAM, and on the post-opts
graphs of tinygrad's own random opt variants; with --oclgrind every program uopcg ran is run again
under Oclgrind's race detector (`oclgrind --data-races`), which must report nothing. A variant whose
post-opts graph the barrier verifier refuses is RACE when Oclgrind finds the race in the program run
anyway, or that program computes other values than numpy's on Oclgrind, or tinygrad's program computed
other values than numpy's (tinygrad's LOCAL split of an axis a
user's LOCAL buffer does not index, for one), a failure (the verifier's false positive) when neither.
A variant whose outputs differ from numpy's where tinygrad's differ too is TGGRAPH when uopcg's
program computes tinygrad's outputs (tinygrad's post-opts graph is wrong: its UPCAST of a LOCAL axis
shares one REG accumulator between the lanes, for one); the from-AST run of the same opts tells
whether uopcg's own opts get it right.

usage: POCL_MAX_PTHREAD_COUNT=1 python3 tools/local_fuzz.py --uopcg build-fuzz/uopcg --out /tmp/lf [--seed 0]
                                 [--kernels 40] [--oclgrind] [--no-beam] [--kinds tree,loop,...]
Exit status 1 when a run uopcg did not refuse fails, or Oclgrind reports a race in uopcg's program.
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tinygrad_oracle as O  # noqa: E402
import model_differential as md  # noqa: E402  (random_variants, opt_str)
from uop_kernels_v4 import set_numpy, run  # noqa: E402
from tinygrad import dtypes  # noqa: E402
from tinygrad.dtype import AddrSpace as AS  # noqa: E402
from tinygrad.helpers import Target  # noqa: E402
from tinygrad.renderer.cstyle import OpenCLRenderer  # noqa: E402
from tinygrad.uop.ops import UOp as U, Ops, AxisType, KernelInfo  # noqa: E402

NPT = {dtypes.float: np.float32, dtypes.int32: np.int32, dtypes.int8: np.int8}


KINDS = ["permute", "reduce", "loop", "loopacc", "two", "transpose", "multi", "tree", "scan", "gemm"]


def ph(shape, slot, dt, space=AS.GLOBAL):
  return U.placeholder(shape, dt, slot, space) if space is not AS.GLOBAL else U.placeholder(shape, dt, slot)


class Draw:
  """One random kernel: `build()` returns (ast, numpy reference, features)."""

  def __init__(self, rng: random.Random, name: str, kinds):
    self.rng, self.name, self.features, self.kinds = rng, name, [], kinds
    self.dt = rng.choice([dtypes.float, dtypes.float, dtypes.int32, dtypes.int8])
    self.np = NPT[self.dt]

  def perm(self, L: int, tag: str):
    """A random permutation of range(L) as (uop builder, numpy array)."""
    kinds = ["id", "rev", "rot"]
    if L > 2: kinds.append("stride")
    if L & (L - 1) == 0 and L > 1: kinds.append("xor")
    k = self.rng.choice(kinds)
    if k == "id": f, arr = (lambda l: l), np.arange(L)
    elif k == "rev": f, arr = (lambda l: (L - 1) - l), np.arange(L)[::-1]
    elif k == "rot":
      c = self.rng.randrange(1, L) if L > 1 else 0
      f, arr, k = (lambda l: (l + c) % L), (np.arange(L) + c) % L, f"rot{c}"
    elif k == "stride":
      s = self.rng.choice([s for s in range(2, L) if math.gcd(s, L) == 1] or [1])
      f, arr, k = (lambda l: (l * s) % L), (np.arange(L) * s) % L, f"stride{s}"
    else:
      c = self.rng.randrange(1, L)
      f, arr, k = (lambda l: l ^ c), np.arange(L) ^ c, f"xor{c}"
    self.features.append(f"{tag}={k}")
    return f, arr

  def stage(self, tile, st):
    """The tile as read after `st`: through .after(st) (implicit barrier) or .after(st.barrier())."""
    if self.rng.random() < 0.3:
      self.features.append("explicit barrier")
      return tile.after(st.barrier())
    return tile.after(st)

  def scale(self, x):
    """x * 2 (+ 1): an op the tile's value goes through (none for int8, whose products wrap at 8 bits)."""
    if self.dt == dtypes.int8: return x, (lambda v: v)
    return x * 2 + 1, (lambda v: v * self.np(2) + self.np(1))

  def build(self):
    kind = self.rng.choice(self.kinds)
    if self.dt == dtypes.int8 and kind in ("reduce", "loopacc", "scan", "gemm"): kind = "permute"
    self.features.append(kind)
    G = self.rng.choice([1, 2, 3, 4, 8])
    L = self.rng.choice([2, 3, 4, 5, 8, 12, 16, 32])
    self.features.append(f"G={G} L={L} {self.dt.name}")
    return getattr(self, "k_" + kind)(G, L)

  def k_permute(self, G, L):
    out, a = ph((G * L,), 0, self.dt), ph((G * L,), 1, self.dt)
    g, l = U.range(G, 0, AxisType.GLOBAL), U.range(L, 1, AxisType.LOCAL)
    tile = ph((L,), 0, self.dt, AS.LOCAL)
    p, pa = self.perm(L, "p")
    q, qa = self.perm(L, "q")
    v, f = self.scale(a[g * L + l])
    t = self.stage(tile, tile[p(l)].store(v))
    ast = out[g * L + l].store(t[q(l)] + a[g * L + l]).end(g, l)

    def ref(I):
      A = I[1].reshape(G, L)
      T = np.empty_like(A)
      T[:, pa] = f(A)
      return {0: (T[:, qa] + A).reshape(-1)}
    return ast, ref

  def k_reduce(self, G, L):
    out, a, w = ph((G * L,), 0, self.dt), ph((G * L,), 1, self.dt), ph((L * L,), 2, self.dt)
    g, l = U.range(G, 0, AxisType.GLOBAL), U.range(L, 1, AxisType.LOCAL)
    r = U.range(L, 2, AxisType.REDUCE)
    tile = ph((L,), 0, self.dt, AS.LOCAL)
    p, pa = self.perm(L, "p")
    t = self.stage(tile, tile[p(l)].store(a[g * L + l]))
    prefix = self.rng.random() < 0.4
    op = self.rng.choice([Ops.ADD, Ops.ADD, Ops.MAX])
    self.features.append(("prefix " if prefix else "") + op.name)
    x = t[r] if prefix else t[r] * w[l * L + r]
    if prefix: x = (r < l + 1).where(x, U.const(0 if op is Ops.ADD else self.dt.min, self.dt))
    ast = out[g * L + l].store(x.reduce(r, arg=op)).end(g, l)

    def ref(I):
      A = I[1].reshape(G, L)  # w (slot 2) is not a parameter of a prefix sum's program
      T = np.empty_like(A)
      T[:, pa] = A
      if prefix:
        M = np.tril(np.ones((L, L), bool))  # M[l, r]: r <= l
        X = np.where(M[None], T[:, None, :], 0 if op is Ops.ADD else np.finfo(self.np).min if self.np is np.float32
                     else np.iinfo(self.np).min)
      else: X = T[:, None, :] * I[2].reshape(L, L)[None]
      return {0: (X.sum(-1) if op is Ops.ADD else X.max(-1)).astype(self.np).reshape(-1)}
    return ast, ref

  def k_loop(self, G, L):
    T_ = self.rng.choice([2, 3, 4])
    out, a = ph((G * T_ * L,), 0, self.dt), ph((G * T_ * L,), 1, self.dt)
    g, l = U.range(G, 0, AxisType.GLOBAL), U.range(L, 1, AxisType.LOCAL)
    t = U.range(T_, 2, AxisType.LOOP)
    tile = ph((L,), 0, self.dt, AS.LOCAL)
    p, pa = self.perm(L, "p")
    q, qa = self.perm(L, "q")
    idx = (g * T_ + t) * L + l
    tt = self.stage(tile, tile[p(l)].store(a[idx]))
    v, f = self.scale(tt[q(l)])
    ast = out[idx].store(v).end(t).end(g, l)

    def ref(I):
      A = I[1].reshape(G, T_, L)
      Tm = np.empty_like(A)
      Tm[:, :, pa] = A
      return {0: f(Tm[:, :, qa]).reshape(-1)}
    return ast, ref

  def k_loopacc(self, G, L):
    T_ = self.rng.choice([2, 3, 4])
    out, a = ph((G * L,), 0, self.dt), ph((G * T_ * L,), 1, self.dt)
    g, l = U.range(G, 0, AxisType.GLOBAL), U.range(L, 1, AxisType.LOCAL)
    t = U.range(T_, 2, AxisType.LOOP)
    tile = ph((L,), 0, self.dt, AS.LOCAL)
    p, pa = self.perm(L, "p")
    q, qa = self.perm(L, "q")
    tt = self.stage(tile, tile[p(l)].store(a[(g * T_ + t) * L + l]))
    acc = ph((1,), 1, self.dt, AS.REG)
    acc = acc[0].set(U.const(0, self.dt))
    acc = acc[0].set(acc.after(t)[0] + tt[q(l)], end=t)
    ast = out[g * L + l].store(acc[0]).end(g, l)

    def ref(I):
      A = I[1].reshape(G, T_, L)
      Tm = np.empty_like(A)
      Tm[:, :, pa] = A
      return {0: Tm[:, :, qa].sum(1).astype(self.np).reshape(-1)}
    return ast, ref

  def k_two(self, G, L):
    out, a = ph((G * L,), 0, self.dt), ph((G * L,), 1, self.dt)
    g, l = U.range(G, 0, AxisType.GLOBAL), U.range(L, 1, AxisType.LOCAL)
    t1, t2 = ph((L,), 0, self.dt, AS.LOCAL), ph((L,), 1, self.dt, AS.LOCAL)
    p1, p1a = self.perm(L, "p1")
    q1, q1a = self.perm(L, "q1")
    p2, p2a = self.perm(L, "p2")
    q2, q2a = self.perm(L, "q2")
    s1 = self.stage(t1, t1[p1(l)].store(a[g * L + l]))
    v, f = self.scale(s1[q1(l)])
    s2 = self.stage(t2, t2[p2(l)].store(v))
    ast = out[g * L + l].store(s2[q2(l)]).end(g, l)

    def ref(I):
      A = I[1].reshape(G, L)
      T1, T2 = np.empty_like(A), np.empty_like(A)
      T1[:, p1a] = A
      T2[:, p2a] = f(T1[:, q1a])
      return {0: T2[:, q2a].reshape(-1)}
    return ast, ref

  def k_transpose(self, G, L):
    L0, L1 = self.rng.choice([(2, 4), (4, 4), (4, 8), (3, 5), (8, 2), (16, 4)])
    self.features.append(f"L0={L0} L1={L1}")
    N = L0 * L1
    out, a = ph((G * N,), 0, self.dt), ph((G * N,), 1, self.dt)
    g = U.range(G, 0, AxisType.GLOBAL)
    l0, l1 = U.range(L0, 1, AxisType.LOCAL), U.range(L1, 2, AxisType.LOCAL)
    tile = ph((N,), 0, self.dt, AS.LOCAL)
    t = self.stage(tile, tile[l0 * L1 + l1].store(a[g * N + l0 * L1 + l1]))
    # out[g, l0, l1] = element (l0, l1) of the tile read as an L1 x L0 matrix
    ast = out[g * N + l0 * L1 + l1].store(t[((l0 * L1 + l1) % L0) * L1 + (l0 * L1 + l1) // L0]).end(g, l0, l1)

    def ref(I):
      A = I[1].reshape(G, N)
      k = np.arange(N)
      return {0: A[:, (k % L0) * L1 + k // L0].reshape(-1)}
    return ast, ref

  def k_tree(self, G, L):
    L = self.rng.choice([2, 4, 8, 16, 32])
    self.features.append(f"tree L={L}")
    out, a = ph((G,), 0, self.dt), ph((G * L,), 1, self.dt)
    g, l = U.range(G, 0, AxisType.GLOBAL), U.range(L, 1, AxisType.LOCAL)
    tile = ph((L,), 0, self.dt, AS.LOCAL)
    op = self.rng.choice([Ops.ADD, Ops.MAX])
    self.features.append(op.name)
    tile = self.stage(tile, tile[l].store(a[g * L + l]))
    s = L // 2
    while s >= 1:  # each step folds the upper half of what is left onto the lower half, gated on l < s
      tile = self.stage(tile, tile[l.valid(l < s)].store(tile[l].alu(op, tile[(l + s).valid(l < s)])))
      s //= 2
    ast = out[g.valid(l < 1)].store(tile[0]).end(g, l)

    def ref(I):
      A = I[1].reshape(G, L)
      return {0: (A.sum(1) if op is Ops.ADD else A.max(1)).astype(self.np)}
    return ast, ref

  def k_scan(self, G, L):
    out, a = ph((G * L,), 0, self.dt), ph((G * L,), 1, self.dt)
    g, l = U.range(G, 0, AxisType.GLOBAL), U.range(L, 1, AxisType.LOCAL)
    tile = ph((L,), 0, self.dt, AS.LOCAL)
    tile = self.stage(tile, tile[l].store(a[g * L + l]))
    s = 1
    while s < L:  # Hillis-Steele in place: each step reads tile[l - s], which work-item l - s overwrites
      prev = (l >= s).where(tile[(l - s).valid(l >= s)], U.const(0, self.dt))
      tile = self.stage(tile, tile[l].store(tile[l] + prev))
      s *= 2
    ast = out[g * L + l].store(tile[l]).end(g, l)

    def ref(I):
      return {0: np.cumsum(I[1].reshape(G, L), axis=1, dtype=np.float64 if self.np is np.float32 else None)
              .astype(self.np).reshape(-1)}
    return ast, ref

  def k_gemm(self, G, L):
    T_ = self.rng.choice([1, 2, 3])
    K = T_ * L
    out, a, b = ph((G * L,), 0, self.dt), ph((G * K,), 1, self.dt), ph((K * L,), 2, self.dt)
    g, l = U.range(G, 0, AxisType.GLOBAL), U.range(L, 1, AxisType.LOCAL)
    t, r = U.range(T_, 2, AxisType.LOOP), U.range(L, 3, AxisType.REDUCE)
    tile = ph((L,), 0, self.dt, AS.LOCAL)
    tt = self.stage(tile, tile[l].store(a[g * K + t * L + l]))  # row g of A, one L-wide slice per iteration
    part = (tt[r] * b[(t * L + r) * L + l]).reduce(r, arg=Ops.ADD)
    acc = ph((1,), 1, self.dt, AS.REG)
    acc = acc[0].set(U.const(0, self.dt))
    acc = acc[0].set(acc.after(t)[0] + part, end=t)
    self.features.append(f"T={T_}")
    ast = out[g * L + l].store(acc[0]).end(g, l)

    def ref(I):
      return {0: (I[1].reshape(G, K) @ I[2].reshape(K, L)).astype(self.np).reshape(-1)}
    return ast, ref

  def k_multi(self, G, L):
    K = self.rng.choice([2, 3, 4])
    N = K * L
    out, a = ph((G * N,), 0, self.dt), ph((G * N,), 1, self.dt)
    g, l = U.range(G, 0, AxisType.GLOBAL), U.range(L, 1, AxisType.LOCAL)
    k, j = U.range(K, 2, AxisType.LOOP), U.range(K, 3, AxisType.LOOP)
    tile = ph((N,), 0, self.dt, AS.LOCAL)
    q, qa = self.perm(L, "q")
    st = tile[k * L + l].store(a[g * N + l * K + k]).end(k)  # each work-item stages K strided elements
    t = self.stage(tile, st)
    ast = out[g * N + j * L + l].store(t[j * L + q(l)]).end(j).end(g, l)

    def ref(I):
      A = I[1].reshape(G, L, K)
      T = A.transpose(0, 2, 1)  # T[g, k, l] = A[g, l, k]: the tile, K rows of L
      return {0: T[:, :, qa].reshape(-1)}
    return ast, ref


def oclgrind_clean(exe, path, *args):
  """Oclgrind's race detector on uopcg's program: (clean, first lines of its report)."""
  r = subprocess.run(["oclgrind", "--data-races", exe, "run", path, *args], capture_output=True, text=True, timeout=600)
  text = r.stdout + r.stderr
  bad = [ln for ln in text.splitlines() if "race" in ln.lower() or "error" in ln.lower() and "0 error" not in ln.lower()]
  return not bad and "PASS" in text, " ".join(bad[:3])[:200]


def checked_run(args, counts, path, *a, race_check=True) -> str:
  """`uopcg run path a...`, then (with --oclgrind) the same under Oclgrind's race detector; counted by outcome."""
  r = run(args.uopcg, path, *a)
  if r == "PASS" and args.oclgrind and race_check:
    clean, why = oclgrind_clean(args.uopcg, path, *a)
    if not clean: r = f"FAIL(oclgrind: {why})"
  counts[r.split("(")[0]] += 1
  return r


def tinygrad_variant(args, counts, ast, ren, name, n, i, opts, ref) -> list:
  """tinygrad's opt variant: its post-opts graph through uopcg's back half (labelled RACE or TGGRAPH where tinygrad's
  graph is at fault), then the same opts applied by uopcg to the AST (its own LOCAL splits widen a user's LOCAL buffer)."""
  vname, ostr = f"{name}.v{i}", md.opt_str(opts)
  try:
    kv = O.export(vname, ast.replace(arg=KernelInfo(name=name, opts_to_apply=tuple(opts))), ren, "pocl", {})
    O.attach_data(kv, args.out, seed=args.seed * 1000 + n)
  except Exception as e:
    return [f"{vname}[{ostr}]=tinygrad: {type(e).__name__}"]
  shutil.copy(os.path.join(args.out, vname + ".bin"), os.path.join(args.out, vname + ".tg.bin"))
  tgv = "ok" if set_numpy(kv, args.out, ref) else "WRONG"
  vpath = os.path.join(args.out, vname + ".json")
  json.dump(kv, open(vpath, "w"), separators=(",", ":"))
  r = run(args.uopcg, vpath)
  if r.startswith("FAIL") and "barrier verifier rejects" in r:
    # the verifier refused tinygrad's post-opts graph: right when tinygrad's program computed other values than
    # numpy's or Oclgrind finds the race in the program run anyway; else a false positive of the verifier
    racy = subprocess.run(["oclgrind", "--data-races", args.uopcg, "run", vpath, "--unverified"], capture_output=True,
                          text=True, timeout=600)
    # (Oclgrind's detector misses some vector write-write races; the values the program computes on it show them)
    wrong_on_oclgrind = re.search(r"^FAIL .* on Oclgrind", racy.stdout, re.M) is not None
    if tgv == "WRONG" or "data race" in (racy.stdout + racy.stderr).lower() or wrong_on_oclgrind: r = "RACE"
  elif r.startswith("FAIL") and tgv == "WRONG":
    # tinygrad's post-opts graph itself computes other values: does uopcg's program compute what tinygrad's does?
    tpath = os.path.join(args.out, vname + ".tg.json")
    json.dump(dict(kv, data=dict(kv["data"], file=vname + ".tg.bin")), open(tpath, "w"), separators=(",", ":"))
    if run(args.uopcg, tpath) == "PASS": r = "TGGRAPH"
  elif r == "PASS" and args.oclgrind:
    clean, why = oclgrind_clean(args.uopcg, vpath)
    if not clean: r = f"FAIL(oclgrind: {why})"
  counts[r.split("(")[0]] += 1
  path = os.path.join(args.out, name + ".json")
  return [f"v{i}[{ostr}](tg={tgv})={r}", f"ast[{ostr}]={checked_run(args, counts, path, '--from-ast', '--opts', ostr)}"]


def random_opts(rng: random.Random, naxes: int) -> str:
  ops = ["UPCAST", "UPCAST", "LOCAL", "UNROLL", "GROUP", "GROUPTOP"]
  return ",".join(f"{rng.choice(ops)}:{rng.randrange(max(naxes, 1))}:{rng.choice([0, 2, 2, 4])}"
                  for _ in range(rng.randint(1, 3)))


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--uopcg", required=True)
  ap.add_argument("--out", default="/tmp/uopcg_localfuzz")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--kernels", type=int, default=40)
  ap.add_argument("--oclgrind", action="store_true")
  ap.add_argument("--no-beam", action="store_true")
  ap.add_argument("--kinds", default=",".join(KINDS), help="the kernel forms to draw, comma-separated (default: all)")
  args = ap.parse_args()
  os.makedirs(args.out, exist_ok=True)
  idx = json.load(open(os.path.join(O.CORPUS, "index.json")))
  ren = OpenCLRenderer(Target("CL", arch=idx["renderers"]["pocl"]["arch"]))
  rng = random.Random(args.seed)
  bad = rejected = 0
  counts = {"PASS": 0, "REFUSED": 0, "FAIL": 0, "RACE": 0, "TGGRAPH": 0}
  for n in range(args.kernels):
    name = f"lf{args.seed}_{n:03d}"
    d = Draw(rng, name, args.kinds.split(","))
    try:
      body, ref = d.build()
      ast = body.sink(arg=KernelInfo(name=name, opts_to_apply=()))
      k = O.export(name, ast, ren, "pocl", {})
      O.attach_data(k, args.out, seed=args.seed * 1000 + n)
    except Exception as e:  # tinygrad cannot build, render or run it: nothing to compare with
      rejected += 1
      print(f"{name} [{', '.join(d.features)}] | tinygrad: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:160]}")
      continue
    tg = "tg=" + ("ok" if set_numpy(k, args.out, ref) else "WRONG")
    k["description"] = "tools/local_fuzz.py: " + ", ".join(d.features) + " (outputs: numpy's)"
    path = os.path.join(args.out, name + ".json")
    json.dump(k, open(path, "w"), separators=(",", ":"))
    runs = [("post", ()), ("ast", ("--from-ast",)), ("heur", ("--from-ast", "--opts", "heuristic"))]
    runs += [(f"[{s}]", ("--from-ast", "--opts", s)) for s in sorted({random_opts(rng, 2) for _ in range(3)})]
    if not args.no_beam: runs.append(("beam", ("--from-ast", "--opts", "beam=2")))
    res = [f"{label}={checked_run(args, counts, path, *a, race_check=label != 'beam')}" for label, a in runs]
    # tinygrad's own random opt variants
    try: variants = md.random_variants(ast, ren, 2, rng)
    except Exception as e: variants, res = [], res + [f"tgvariants=tinygrad: {type(e).__name__}"]
    for i, opts in enumerate(variants): res += tinygrad_variant(args, counts, ast, ren, name, n, i, opts, ref)
    line = " ; ".join(res)
    bad += "FAIL" in line
    print(f"{name} [{', '.join(d.features)}] {tg} | {line}", flush=True)
  print(f"{args.kernels} kernels ({rejected} tinygrad could not build or run), runs {counts}, {bad} kernels with a failure")
  return 1 if bad else 0


if __name__ == "__main__":
  sys.exit(main())
