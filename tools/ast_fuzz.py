#!/usr/bin/env python3
"""Random kernel ASTs written at the UOp level, differentially tested against tinygrad.

tools/model_differential.py reaches kernels through tinygrad's Tensor API; hand-written kernels take
shapes the Tensor API rarely makes. This tool builds ASTs directly with tinygrad's UOp API, in the
form tinygrad's scheduler hands to codegen (PARAMs, RANGEs, INDEX, REDUCE, STORE, END, SINK), drawing
from a seed: several STOREs in one kernel (to several outputs, or to disjoint parts of one), index
expressions with floor div/mod by constants, gated loads and stores (WHERE(valid, idx, Invalid)),
reductions nested through elementwise ops, several reduce axes and ops (ADD, MAX, MUL), mixed dtypes
with CAST and BITCAST in the middle, ranges read as values, size-1 axes and large odd sizes.

Each AST goes through tinygrad's own pipeline first (one it rejects is counted and skipped), is written
in the corpus's kernel-file format by tinygrad_oracle.export, with random inputs and the outputs
tinygrad's rendered program computes on PoCL (tinygrad_oracle.attach_data, pyopencl), plus random
opt variants from tinygrad's BEAM action space (model_differential.random_variants). uopcg then
compiles each file (source compared with tinygrad's, from the post-opts graph and from the AST) and runs
it (outputs compared, from the post-opts graph and from the AST).

usage:
  pip install pyopencl numpy
  python3 tools/ast_fuzz.py --uopcg build/uopcg [--seed 0] [--kernels 40] [--variants 2] [--out /tmp/uopcg_astfuzz]
  python3 tools/ast_fuzz.py --uopcg build/uopcg --recheck --out DIR      # rerun uopcg on the files in DIR
Exit status 1 when uopcg fails on a file or computes other outputs.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tinygrad_oracle as oracle  # noqa: E402  (export, attach_data)
import model_differential as md  # noqa: E402  (random_variants, SinkAtOpts, cause_of, run_failure, difference)

from tinygrad import Device, dtypes  # noqa: E402
from tinygrad.dtype import DType, Invalid, AddrSpace  # noqa: E402
from tinygrad.codegen.opt import Opt, OptOps, KernelOptError  # noqa: E402
from tinygrad.codegen.opt.postrange import Scheduler  # noqa: E402
from tinygrad.codegen.opt.search import actions  # noqa: E402  (BEAM's action space)
from tinygrad.uop.ops import UOp, Ops, AxisType, KernelInfo  # noqa: E402

FLOATS = [dtypes.float, dtypes.float, dtypes.double]
INTS = [dtypes.int, dtypes.int, dtypes.uint, dtypes.long, dtypes.short, dtypes.uchar, dtypes.char, dtypes.ulong]
SIZES = [1, 1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 31, 32, 33, 64, 97, 128, 255, 1000, 1031]
WORK_MAX = 300_000  # product of all range sizes a kernel may loop over (PoCL runs it on one core)


def is_float(dt: DType) -> bool: return dtypes.is_float(dt)


def K(dt: DType, v) -> UOp: return UOp.const(v, dt)


def narrow(dt: DType) -> bool:
  """8- and 16-bit integers: tinygrad computes their arithmetic in C's promoted int without converting back
  (renderer divergence R1), so generation 2 gives them only ops whose result fits the type."""
  return dtypes.is_int(dt) and dt.itemsize < 4


class Gen:
  """One random kernel. `self.why` lists the features drawn (printed with the kernel's name)."""

  def __init__(self, rng: random.Random, gen: int = 1):
    self.rng, self.axis, self.slot, self.inputs, self.features = rng, 0, 0, [], set()
    # generation 2 draws the forms below marked "g2"; generation 1 keeps seeds 0-2 of docs/ast-fuzz.md as they were
    self.g2, self.hand = gen >= 2, False
    self.closed = []  # g2: the range lists of REDUCEs already built, which a later REDUCE may share (fused reduces)
    self.reg_slot, self.store_ranges, self.reg_ok = 0, None, False
    # g2: axis numbers in a random order, so a reduce axis may come before an output axis
    self.ids = rng.sample(range(40), 40) if self.g2 and rng.random() < 0.3 else None
    if self.ids is not None: self.features.add("axis ids shuffled")

  # ---- ranges and indices ----
  def new_range(self, n: int, kind: AxisType) -> UOp:
    r = UOp.range(n, self.axis if self.ids is None else self.ids[self.axis], kind)
    self.axis += 1
    if n == 1: self.features.add("size-1 axis")
    if n >= 255 and n % 2: self.features.add("large odd size")
    return r

  def size(self, budget: int) -> int:
    ok = [s for s in SIZES if s <= budget]
    return self.rng.choice(ok or [1])

  def index_expr(self, ranges: list) -> UOp:
    """A non-negative index over some of the ranges: affine, or with floor div/mod by constants."""
    rng = self.rng
    used = [r for r in ranges if rng.random() < 0.8]
    rng.shuffle(used)
    e = K(dtypes.weakint, rng.choice([0, 0, 0, 1, 5]))
    stride = 1
    for r in used:
      k = rng.random()
      if k < 0.6:
        e = e + r * stride
        stride *= int(r.src[0].arg)
      elif k < 0.75:
        m = rng.choice([2, 3, 5, 7, 13])
        e = e + (r * rng.choice([1, 3, 7]) + rng.randint(0, 5)) % m * stride
        stride *= m
        self.features.add("index mod")
      elif k < 0.9:
        d = rng.choice([2, 3, 4, 7])
        e = e + (r // d) * stride
        stride *= max(1, (int(r.src[0].arg) - 1) // d + 1)
        self.features.add("index div")
      elif self.g2 and k < 0.95:  # g2: a product beyond int32 in the index math, folded back by a mod or a div
        big = rng.choice([1000003, 4000037, 3 << 30, 2654435761])
        if rng.random() < 0.5:
          m = rng.choice([7, 13, 64, 97])
          e = e + ((r * big + rng.randint(0, 9)) % m) * stride
          stride *= m
        else:
          e = e + (r * big) // (big * rng.choice([1, 2, 3])) * stride
          stride *= int(r.src[0].arg)
        self.features.add("index product beyond int32")
      else:  # a combined expression over two ranges, (r0*7+r1)%13
        other = rng.choice(ranges)
        e = e + ((r * 7 + other) % 13) * stride
        stride *= 13
        self.features.add("index mod")
    return e

  def input(self, dt: DType, n: int) -> UOp:
    p = UOp.placeholder((n,), dt, self.slot)
    self.slot += 1
    return p

  def load(self, dt: DType, ranges: list) -> UOp:
    rng = self.rng
    e = self.index_expr(ranges)
    if rng.random() < 0.25 and ranges:  # gated, as a pad: read e-s where e >= s, 0 elsewhere
      s = rng.randint(1, 3)
      cond = UOp(Ops.CMPNE, dtypes.bool, (e < s, K(dtypes.bool, True)))
      if rng.random() < 0.4:
        r = rng.choice(ranges)
        cond = cond & (r < max(1, int(r.src[0].arg) - 1))
      size = max(1, int(e.vmax) - s + 1)
      buf = self.input(dt, size)
      ld = buf[(e - s).valid(cond)]
      self.features.add("gated load")
      return cond.where(ld, ld.const_like(0)) if rng.random() < 0.6 else ld
    if rng.random() < 0.08 and ranges and dt in (dtypes.float, dtypes.int):  # a gather: the index is loaded
      i = self.input(it := rng.choice([dtypes.int, dtypes.long]), int(e.vmax) + 1)[e]
      if it == dtypes.long: self.features.add("int64 index")
      n = rng.choice([8, 13, 64])
      ii = i.cast(dtypes.weakint)
      cond = UOp(Ops.CMPNE, dtypes.bool, (ii < 0, K(dtypes.bool, True))) & (ii < n)
      self.features.add("gather")
      return self.input(dt, n)[ii.valid(cond)]
    return self.input(dt, int(e.vmax) + 1)[e]

  # ---- values ----
  def expr(self, dt: DType, ranges: list, depth: int, budget: int) -> UOp:
    rng = self.rng
    if depth <= 0: return self.leaf(dt, ranges)
    if self.g2 and rng.random() < 0.25: return self.extra(dt, ranges, depth, budget)
    k = rng.random()
    if k < 0.22 and budget >= 2: return self.reduce(dt, ranges, depth, budget)
    if k < 0.45: return self.binary(dt, ranges, depth, budget)
    if k < 0.55 and is_float(dt):
      x = self.expr(dt, ranges, depth - 1, budget)
      f = rng.choice(["exp2", "log2", "sqrt", "sin", "recip"])
      if f == "exp2": return (-x.maximum(-x)).exp2() if rng.random() < 0.5 else x.sin().exp2()
      if f == "log2": return (x.maximum(-x) + 1).log2()
      if f == "sqrt": return x.maximum(-x).sqrt()
      if f == "sin": return x.sin()
      return (x.maximum(-x) + 1).reciprocal()
    if k < 0.65: return self.convert(dt, ranges, depth, budget)
    if k < 0.75:
      a, b = self.expr(dt, ranges, depth - 1, budget), self.expr(dt, ranges, depth - 1, budget)
      c = self.expr(dt, ranges, depth - 1, budget)
      cmp = (a < b) if rng.random() < 0.6 else a.ne(b)
      return cmp.where(c, self.leaf(dt, ranges))
    if k < 0.82 and ranges:  # a range read as a value (arange-like), compared or cast
      r = rng.choice(ranges)
      if rng.random() < 0.5:
        self.features.add("range as value")
        if self.g2 and narrow(dt): return r.cast(dt).maximum(self.expr(dt, ranges, depth - 1, budget))
        return r.cast(dt) + self.expr(dt, ranges, depth - 1, budget)
      other = rng.choice(ranges)
      return (r < other + 1).where(self.expr(dt, ranges, depth - 1, budget), self.leaf(dt, ranges))
    return self.binary(dt, ranges, depth, budget)

  def leaf(self, dt: DType, ranges: list) -> UOp:
    if self.rng.random() < 0.2:
      v = self.rng.choice([0.5, -1.25, 3.0, 2.0]) if is_float(dt) else self.rng.choice([1, 2, 3, 7])
      if dt == dtypes.bool: return K(dt, True)
      return K(dt, v)
    return self.load(dt, ranges)

  def binary(self, dt: DType, ranges: list, depth: int, budget: int) -> UOp:
    rng = self.rng
    a, b = self.expr(dt, ranges, depth - 1, budget), self.expr(dt, ranges, depth - 1, budget)
    if dt == dtypes.bool: return rng.choice([a & b, a | b, a ^ b, a.ne(b)])
    ops = ["add", "sub", "mul", "max"] + ([] if is_float(dt) else ["div", "mod", "and", "or", "xor", "shl", "shr"])
    if self.g2 and narrow(dt):  # g2: only ops whose promoted-int result fits the narrow type (R1 aside)
      ops = ["max", "div", "mod", "and", "or", "xor", "shr"]
    op = rng.choice(ops)
    if op == "add": return a + b
    if op == "sub": return a - b
    if op == "mul":  # integer products stay small: a multiple by a constant, or of a masked value
      return a * (b if is_float(dt) else (b & 7))
    if op == "max": return a.maximum(b)
    if op in ("div", "mod"):
      c = rng.choice([3, 7, 13, -5, 16]) if dtypes.is_unsigned(dt) is False else rng.choice([3, 7, 13, 16])
      self.features.add("int div/mod")
      return a // c if op == "div" else a % c
    if op == "and": return a & b
    if op == "or": return a | b
    if op == "xor": return a ^ b
    sh = rng.randint(0, 3)
    if op == "shl": return (a & 255) << sh
    return a >> sh

  def convert(self, dt: DType, ranges: list, depth: int, budget: int) -> UOp:
    """A CAST from another dtype, or a BITCAST through one of the same size."""
    rng = self.rng
    if rng.random() < 0.3 and dt in (dtypes.float, dtypes.int, dtypes.uint, dtypes.double, dtypes.long):
      self.features.add("bitcast")
      if is_float(dt):  # through the integer of its size: flip the sign bit
        it = dtypes.uint if dt.itemsize == 4 else dtypes.ulong
        x = self.expr(dt, ranges, depth - 1, budget).bitcast(it)
        return (x ^ K(it, 1 << (8 * dt.itemsize - 1))).bitcast(dt)
      ft = dtypes.float if dt.itemsize == 4 else dtypes.double
      return self.expr(ft, ranges, depth - 1, budget).bitcast(dt)
    self.features.add("cast")
    src = rng.choice(FLOATS + INTS + [dtypes.bool])
    x = self.expr(src, ranges, depth - 1, budget)
    if is_float(src) and not is_float(dt) and dt != dtypes.bool:
      # float -> int only from a value the integer holds: out of range, C leaves it undefined
      scale = 100 if dt.itemsize == 1 else 1000
      x = (x.sin() + 1) * scale if dtypes.is_unsigned(dt) else x.sin() * scale
    return x.cast(dt)

  def reduce(self, dt: DType, ranges: list, depth: int, budget: int) -> UOp:
    rng = self.rng
    op = rng.choice([Ops.ADD, Ops.ADD, Ops.MAX, Ops.MUL])
    if dt == dtypes.bool: op = Ops.MAX
    nr = 1 if rng.random() < 0.6 else 2
    new = []
    # only the reduce ranges of a REDUCE built under the same ranges: tinygrad's linearizer (CFGContext)
    # fails on a reduce range shared by a nested REDUCE and an outer one
    shared = [c for ctx, c in self.closed if ctx == ranges and self.work(c) <= budget and (op is not Ops.MUL or self.work(c) <= 6)]
    if self.g2 and shared and rng.random() < 0.4:  # g2: the ranges of a REDUCE already built (two reduces fused)
      new = rng.choice(shared)
      budget //= self.work(new)
      nr = len(new)
      self.features.add("reduce ranges shared by two REDUCEs")
    else:
      for _ in range(nr):
        # no size-1 reduce range: tinygrad folds it to 0 before its REDUCE checks (it asserts)
        n = max(2, self.size(min(budget, 6 if op is Ops.MUL else budget)))
        budget //= max(n, 1)
        new.append(self.new_range(n, AxisType.REDUCE))
    v = self.expr(dt, ranges + new, depth - 1, max(budget, 1))
    if ranges and rng.random() < 0.3:  # the reduce range against an output range: cumsum-like triangle
      o = rng.choice(ranges)
      ident = {Ops.ADD: 0, Ops.MUL: 1, Ops.MAX: dt.min}[op]
      v = (new[0] < o + 1).where(v, K(dt, ident))
      self.features.add("reduce range against an output range")
    if op is Ops.MUL:  # keep products finite and exact: floats in [0.5, 1.5], integers in 1..4
      v = v.sin() * 0.5 + 1 if is_float(dt) else (v & 3) + 1
    if nr == 2: self.features.add("multi-axis reduce")
    self.features.add(f"reduce {op.name}")
    if any(u.op is Ops.REDUCE for u in v.toposort()): self.features.add("reduce in a reduce")
    if self.g2: self.closed.append((list(ranges), new))
    return v.reduce(*new, arg=op)

  @staticmethod
  def work(rs: list) -> int:
    n = 1
    for r in rs: n *= int(r.src[0].arg)
    return n

  # ---- g2: forms hand-written kernels have ----
  def bool_value(self, ranges: list, depth: int, budget: int) -> UOp:
    """A condition: a loaded bool, an equality (CMPEQ) of ints or of floored floats, a comparison."""
    rng = self.rng
    k = rng.random()
    if k < 0.3:
      self.features.add("bool load")
      return self.load(dtypes.bool, ranges)
    dt = rng.choice([dtypes.int, dtypes.uint, dtypes.long, dtypes.float, dtypes.char])
    a, b = self.expr(dt, ranges, depth - 1, budget), self.expr(dt, ranges, depth - 1, budget)
    if is_float(dt): a, b = a.floor(), (b * 0.5).trunc()  # few values: equal often
    else: a, b = a & 3, b & 3
    if k < 0.55:
      self.features.add("CMPEQ")
      return UOp(Ops.CMPEQ, dtypes.bool, (a, b))
    if k < 0.8:
      self.features.add("eq")
      return a.eq(b)
    return (a < b) if rng.random() < 0.5 else (a <= b)

  def reg_loop(self, dt: DType, ranges: list, depth: int, budget: int) -> UOp:
    """A hand-written accumulation: a REG accumulator set before a LOOP range and updated inside it
    (as tinygrad_oracle.uop_kernels), only where every output range is a thread's (GLOBAL/WEAK)."""
    rng = self.rng
    n = max(2, self.size(min(budget, 64)))
    lp = self.new_range(n, AxisType.LOOP)
    op = rng.choice(["add", "max"]) if dt != dtypes.bool else "max"
    acc = UOp.placeholder((1,), dt, self.reg_slot, AddrSpace.REG)
    self.reg_slot += 1
    acc = acc[0].set(K(dt, 0 if op == "add" else dt.min))
    v = self.expr(dt, ranges + [lp], depth - 1, max(1, budget // n))
    acc = acc[0].set(acc.after(lp)[0] + v if op == "add" else acc.after(lp)[0].maximum(v), end=lp)
    self.features.add(f"REG accumulator loop ({op})")
    return acc[0]

  def extra(self, dt: DType, ranges: list, depth: int, budget: int) -> UOp:
    rng = self.rng
    sub = lambda d=dt: self.expr(d, ranges, depth - 1, budget)  # noqa: E731
    k = rng.random()
    if k < 0.2:  # a WHERE chain on conditions
      self.features.add("where chain")
      c1, c2 = self.bool_value(ranges, depth, budget), self.bool_value(ranges, depth, budget)
      x = c2.where(sub(), self.leaf(dt, ranges))
      if rng.random() < 0.5: x = (c1 & c2.logical_not()).where(self.leaf(dt, ranges), x)
      return c1.where(sub(), x)
    if k < 0.3 and self.hand and ranges == self.store_ranges and self.reg_ok and budget >= 4:
      return self.reg_loop(dt, ranges, depth, budget)
    if dt == dtypes.bool:
      return self.bool_value(ranges, depth, budget)
    if is_float(dt):
      x = sub()
      f = rng.choice(["trunc", "floor", "ceil", "frac", "fmod", "exp", "log", "div", "round", "pow", "cmpeq"])
      self.features.add("float " + f)
      if f == "trunc": return (x * 3.7).trunc()
      if f == "floor": return (x * 2.3).floor()
      if f == "ceil": return (x * 1.7).ceil()
      if f == "frac": return x - x.floor()
      if f == "fmod": return x % rng.choice([0.75, 2.0, -1.5])
      if f == "exp": return (-(x.maximum(-x))).exp() + x.sin().exp()
      if f == "log": return (x.maximum(-x) + 0.5).log()
      if f == "div": return x / (sub().maximum(-sub()) + 1)
      if f == "round": return (x * 2.5).round()
      if f == "pow": return (x.maximum(-x) + 0.5) ** rng.choice([2.0, 0.5, 3.0, -1.0, 1.5])
      return (x.floor().eq(sub().floor())).where(x, sub())
    # integers
    f = rng.choice(["vdiv", "vmod", "cdiv", "cmod", "shv", "hash", "rot", "wrap", "not", "threefry"])
    if f in ("hash", "rot", "wrap", "threefry") and not dtypes.is_unsigned(dt):
      f = rng.choice(["vdiv", "vmod", "cdiv", "cmod", "shv", "not"])
    if narrow(dt) and f in ("shv", "hash", "rot", "wrap"): f = rng.choice(["vdiv", "cmod", "not"])
    self.features.add("int " + f)
    if f in ("vdiv", "vmod", "cdiv", "cmod"):
      a, b = sub(), sub() & 7
      # a divisor never 0 and never -1 (INT_MIN / -1 is undefined)
      d = (b + 1) if dtypes.is_unsigned(dt) or rng.random() < 0.5 else -(b + 2)
      if f == "vdiv": return a // d
      if f == "vmod": return a % d
      op = Ops.CDIV if f == "cdiv" else Ops.CMOD
      if rng.random() < 0.5: d = d.const_like(rng.choice([3, 7, 16, -5] if not dtypes.is_unsigned(dt) else [3, 7, 16]))
      return a.alu(op, d)
    bits = 8 * dt.itemsize
    if f == "shv":  # a shift by an amount in range, drawn at run time
      amt = sub() & (min(bits, 8) - 1)
      if dtypes.is_unsigned(dt) or rng.random() < 0.5:
        return (sub() & 255) << amt if not dtypes.is_unsigned(dt) else sub() << (sub() & (bits - 1))
      return sub() >> amt
    if f == "not": return ~sub() if dtypes.is_unsigned(dt) else (sub() ^ -1)
    if f == "hash":  # unsigned products that wrap (defined in C)
      x = sub() * K(dt, 2654435761 if bits >= 32 else 157) + K(dt, (1 << bits) - 7)
      return x ^ (x >> (bits // 2))
    if f == "rot":
      s2 = rng.randint(1, bits - 1)
      x = sub()
      return (x << s2) | (x >> (bits - s2))
    if f == "threefry" and dt == dtypes.ulong:
      return sub().threefry(sub() | K(dt, 1 << 40))
    return sub() * sub() - K(dt, (1 << bits) - 3)  # wraparound both ways

  # ---- the kernel ----
  def kernel(self, name: str) -> UOp:
    rng = self.rng
    nstore = rng.choice([1, 1, 2, 2, 3])
    ends = []
    mode = rng.choice(["outputs", "outputs", "disjoint"]) if nstore > 1 else "outputs"
    self.features.add(f"{nstore} stores" + (" (disjoint parts of one output)" if mode == "disjoint" else ""))
    odt = rng.choice(FLOATS + INTS + [dtypes.bool])
    outs_shared = rng.random() < 0.5  # the stores share their ranges
    ranges = None
    plan = []
    self.hand = rng.random() < 0.3 if self.g2 else False
    total = WORK_MAX // 8  # g2: what the output ranges of all stores may take together (see below)
    for s in range(nstore):
      if ranges is None or not outs_shared:
        nax = rng.choice([0, 1, 1, 2, 2, 3])
        # g2: a thread per element of every output range, those of the other stores included (tinygrad's
        # convert_loop_to_global makes every WEAK output range GLOBAL), so all of them share the budget
        budget = total if self.g2 else WORK_MAX // 8
        ranges = []
        # g2: output ranges as the scheduler makes them (WEAK: tinygrad's convert_loop_to_global makes them
        # GLOBAL, so opts act on them), GLOBAL as a hand-written kernel names them, or LOOP (one thread)
        kind = rng.choice([AxisType.WEAK] * 6 + [AxisType.GLOBAL, AxisType.LOOP]) if self.g2 else AxisType.LOOP
        if self.g2: self.features.add(f"{kind.name} output axes")
        for _ in range(nax):
          n = self.size(min(budget, 1031))
          budget //= n
          ranges.append(self.new_range(n, kind))
        total = budget
      plan.append(list(ranges))
    # output slots first, then inputs
    nbufs = 1 if mode == "disjoint" else nstore
    outs = [UOp.placeholder((1,), odt if mode == "disjoint" else rng.choice(FLOATS + INTS), i) for i in range(nbufs)]
    self.slot = nbufs
    sizes, stores = [0] * nbufs, []
    for s, rs in enumerate(plan):
      b = 0 if mode == "disjoint" else s
      dt = outs[b].arg.dtype
      work = 1
      for r in (rs if not self.g2 else list({r.arg: r for p in plan for r in p}.values())): work *= int(r.src[0].arg)
      self.store_ranges = rs
      self.reg_ok = all(r.arg[-1] in (AxisType.WEAK, AxisType.GLOBAL) for r in rs)
      prev = [v for _, _, v, prs in stores if prs == rs and v.dtype == dt]
      if self.g2 and prev and rng.random() < 0.4:  # g2: the value of another STORE, stored again or reused
        val = rng.choice(prev)
        if rng.random() < 0.5: val = val + self.expr(dt, rs, 1, max(1, WORK_MAX // max(work, 1))) if dt != dtypes.bool else val
        self.features.add("a value stored twice")
      else:
        val = self.expr(dt, rs, rng.randint(1, 4), max(1, WORK_MAX // max(work, 1)))
      # a dense row-major index over the store's ranges (permuted), at an offset for disjoint parts
      order = rs[:]
      rng.shuffle(order)
      idx, stride = K(dtypes.weakint, sizes[b]), 1
      for r in reversed(order):
        idx = idx + r * stride
        stride *= int(r.src[0].arg)
      sizes[b] += stride
      if rng.random() < 0.2 and rs:  # a gated store: part of the lanes only
        r = rng.choice(rs)
        cut = max(1, int(r.src[0].arg) // 2)
        idx = idx.valid(r < cut) if rng.random() < 0.5 else idx.valid(UOp(Ops.CMPNE, dtypes.bool, (r < cut, K(dtypes.bool, True))))
        self.features.add("gated store")
      stores.append((b, idx, val, rs))
    outs = [UOp.placeholder((sizes[i],), outs[i].arg.dtype, i) for i in range(nbufs)]
    sts = [outs[b][idx].store(val) for b, idx, val, _ in stores]
    if outs_shared and len(sts) > 1:  # stores over the same ranges: one END of their GROUP (tinygrad
      # rejects two ENDs of one range)
      g = UOp.group(*sts)
      ends.append(g.end(*plan[0]) if plan[0] else g)
    else:
      ends += [st.end(*rs) if rs else st for st, (_, _, _, rs) in zip(sts, stores)]
    hand = self.hand if self.g2 else rng.random() < 0.3  # hand-written: no heuristic opts, as tinygrad_oracle.uop_kernels
    if hand: self.features.add("opts_to_apply=()")
    return UOp.sink(*ends, arg=KernelInfo(name=name, opts_to_apply=() if hand else None))


# ---- opt variants (g2) ----
PADTO = [Opt(OptOps.PADTO, a, amt) for amt in (4, 8, 16, 32) for a in range(6)]
ACTIONS = [a for a in actions if a.op not in (OptOps.TC, OptOps.THREAD)] + PADTO + [Opt(OptOps.NOLOCALS, None, None)]


def opt_variants(sink, ren, n: int, rng: random.Random) -> list:
  """n distinct opt lists of one to five steps, each a random valid action: tinygrad's BEAM actions (TC and
  THREAD left out: PoCL has neither), PADTO (among BEAM's only with BEAM_PADTO) and NOLOCALS. Actions are
  tried in a random order until one applies (get_kernel_actions tries them all, too slow for five steps)."""
  out, tries = [], 0
  while len(out) < n and tries < 4 * n:
    tries += 1
    s = Scheduler(sink, ren)
    s.convert_loop_to_global()
    for _ in range(rng.choice([1, 2, 3, 3, 4, 5])):
      for o in rng.sample(ACTIONS, len(ACTIONS)):
        s2 = s.copy()
        try:
          s2.apply_opt(o)
        except (KernelOptError, AssertionError, IndexError):
          continue
        up = lcl = 1
        for x, t in zip(s2.full_shape, s2.axis_types):
          if t in (AxisType.UPCAST, AxisType.UNROLL): up *= x
          elif t in (AxisType.WARP, AxisType.LOCAL, AxisType.GROUP_REDUCE): lcl *= x
        if up <= 256 and lcl <= 1024:  # get_kernel_actions' limits
          s = s2
          break
      else:
        break
    if s.applied_opts and s.applied_opts not in out: out.append(list(s.applied_opts))
  return out


# ---- uopcg on every file ----


NARROW = re.compile(r"\(\((u?char|u?short)\)\(")


def narrow_wrap(theirs: str, ours: str) -> bool:
  """Whether uopcg's source converts 8/16-bit results back to their type where tinygrad's does not:
  tinygrad computes them in C's promoted int (docs/DIVERGENCES.md, renderer R1), so outputs may differ."""
  return len(NARROW.findall(ours)) > len(NARROW.findall(theirs))


def matches_kernel(exe: str, out_dir: str, name: str, args: list) -> bool:
  """Whether uopcg's program for an opt variant computes the outputs tinygrad's program for the kernel
  without these opts computes (same inputs): the variant's expected outputs are then tinygrad's fault."""
  base = name.rsplit(".v", 1)[0]
  if base == name or not os.path.exists(os.path.join(out_dir, base + ".json")): return False
  v, b = json.load(open(os.path.join(out_dir, name + ".json"))), json.load(open(os.path.join(out_dir, base + ".json")))
  # the same outputs. Either program may read inputs the other's folded away: an input only the variant
  # reads gets no data (uopcg run fills it with 0xFF bytes), so a pass says its value does not matter
  slots = lambda k, kind: {(x["slot"], x["count"], x["dtype"]) for x in k["data"][kind]}  # noqa: E731
  if slots(v, "outputs") != slots(b, "outputs"): return False
  theirs = {s: (n, d) for s, n, d in slots(b, "inputs")}
  if any(s in theirs and theirs[s] != (n, d) for s, n, d in slots(v, "inputs")): return False
  with tempfile.TemporaryDirectory() as d:
    v["data"] = b["data"]
    json.dump(v, open(os.path.join(d, name + ".json"), "w"))
    os.symlink(os.path.join(os.path.abspath(out_dir), b["data"]["file"]), os.path.join(d, b["data"]["file"]))
    x = subprocess.run([exe, "run", os.path.join(d, name + ".json")] + args, capture_output=True, text=True, timeout=300)
  return x.returncode == 0


def with_settings(out_dir: str, name: str, context: dict, tmp: str) -> str:
  """The file `name` with `context` added to its codegen settings, written into `tmp` (its data beside
  it): uopcg compiles it under the settings and compares with the outputs recorded without them."""
  k = json.load(open(os.path.join(out_dir, name + ".json")))
  k["codegen_context"] = dict(k.get("codegen_context") or {}, **context)
  path = os.path.join(tmp, name + ".json")
  json.dump(k, open(path, "w"))
  data = os.path.join(tmp, k["data"]["file"])
  if not os.path.exists(data): os.symlink(os.path.join(os.path.abspath(out_dir), k["data"]["file"]), data)
  return path


def check(exe: str, out_dir: str, name: str, context: dict | None = None, tmp: str = "") -> dict:
  """All four: compile (source compared), compile --from-ast (compared), run, run --from-ast. With
  `context` (a recheck under other settings) the file is compiled under them, its outputs compared
  with those recorded without them."""
  path = os.path.join(out_dir, name + ".json")
  want = json.load(open(path))["source"]
  if context: path = with_settings(out_dir, name, context, tmp)
  r = {"name": name, "fails": []}
  ours = ""
  for key, args in (("compile", ["compile", path]), ("compile_ast", ["compile", path, "--from-ast"])):
    c = subprocess.run([exe] + args, capture_output=True, text=True, timeout=300)
    if key == "compile": ours = c.stdout
    if c.returncode != 0:
      r[key] = "error"
      r["fails"].append(f"{key}: " + md.cause_of(c.stderr))
    else:
      same = c.stdout.rstrip("\n") == want
      r[key] = "identical" if same else "differs"
      if not same:
        d = md.difference(want, c.stdout.rstrip("\n"))
        if d == "other" and narrow_wrap(want, c.stdout): d = "8/16-bit results converted back (R1)"
        r[key + "_difference"] = d
  for key, args in (("run", ["run", path]), ("run_ast", ["run", path, "--from-ast"])):
    x = subprocess.run([exe] + args, capture_output=True, text=True, timeout=300)
    r[key] = "pass" if x.returncode == 0 else "fail"
    if x.returncode != 0:
      why = md.run_failure(x)
      if why == "wrong outputs" and matches_kernel(exe, out_dir, name, args[2:]):
        why += " (tinygrad's: uopcg computes the outputs of tinygrad's kernel without these opts)"
      elif why == "wrong outputs" and narrow_wrap(want, ours): why += " (uopcg wraps 8/16-bit ints where tinygrad does not: R1)"
      r["fails"].append(f"{key}: " + why)
      r[key + "_detail"] = (x.stdout + x.stderr).strip()[:600]
  return r


def drop_repeated_linear(k: dict, stats) -> None:
  """tinygrad's linearized list can hold one UOp twice (the IF of two gated stores of one address
  under one gate); the file format's linear has each node once, and the exporter then writes repeated
  ids. uopcg does not read that section, so such a file goes without it."""
  lin = k.get("linear")
  if lin is not None and [n["id"] for n in lin["nodes"]] != list(range(len(lin["nodes"]))):
    del k["linear"]
    stats["files without tinygrad's linear list (it holds a UOp twice)"] += 1


def generate(seed: int, count: int, n_variants: int, out_dir: str, gen: int = 1, context: dict | None = None):
  ren, context = Device["CL"].renderer, context or {}
  vr = random.Random(seed + 1)
  files = []
  stats = collections.Counter({"generated": 0, "rejected by tinygrad": 0, "variants": 0})
  for i in range(count):
    g = Gen(random.Random(seed * 100003 + i), gen)
    name = f"astfz.s{seed}.{i:03d}" if gen == 1 else f"astfz.g{gen}.s{seed}.{i:03d}"
    try:
      ast = g.kernel(name.replace(".", "_"))
    except Exception as e:  # noqa: BLE001  (a draw the UOp API itself refuses)
      stats["rejected: building"] += 1
      print(f"SKIP {name}: building: {type(e).__name__}: {str(e)[:160]}")
      continue
    stats["generated"] += 1
    try:
      with md.SinkAtOpts() as at:
        k = oracle.export(name, ast, ren, "pocl", context)
    except Exception as e:  # noqa: BLE001  (tinygrad rejects this AST: not a kernel to compare)
      stats["rejected by tinygrad"] += 1
      print(f"SKIP {name}: tinygrad: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}")
      continue
    if not k["program"]["outs"]:  # every store folded away (a gate never true): nothing to compare
      stats["skipped: no output left"] += 1
      print(f"SKIP {name}: tinygrad's program writes no output")
      continue
    try:
      oracle.attach_data(k, out_dir, seed=i)
    except Exception as e:  # noqa: BLE001  (tinygrad's own source does not build or run on PoCL)
      stats["rejected: tinygrad's source fails on PoCL"] += 1
      print(f"SKIP {name}: reference run: {type(e).__name__}: {str(e)[:160]}")
      continue
    k["description"] = "tools/ast_fuzz.py: " + ", ".join(sorted(g.features))
    drop_repeated_linear(k, stats)
    json.dump(k, open(os.path.join(out_dir, name + ".json"), "w"))
    files.append(name)
    print(f"gen  {name}: {', '.join(sorted(g.features))}", flush=True)
    if at.sink is None: continue
    draw = md.random_variants if gen == 1 else opt_variants
    for j, opts in enumerate(draw(at.sink, ren, n_variants, vr)):
      vname = f"{name}.v{j}"
      try:
        v = oracle.export(vname, oracle.with_opts(ast, opts), ren, "pocl", context)
        v["opts_requested"] = [oracle.enc(o) for o in opts]
        if v["program"]["outs"]: oracle.attach_data(v, out_dir, seed=i)  # the same inputs as the kernel's (same seed, same arguments)
        else:  # tinygrad lost every store under these opts: the kernel's outputs without them are the reference
          v["program"]["outs"], v["data"], v["execution"] = k["program"]["outs"], k["data"], k["execution"]
          stats["variants whose tinygrad program writes nothing (compared with the kernel's outputs)"] += 1
      except Exception as e:  # noqa: BLE001
        stats["variants rejected by tinygrad"] += 1
        print(f"SKIP {vname} [{md.opt_str(opts)}]: tinygrad: {type(e).__name__}: {str(e)[:160]}")
        continue
      v["description"] = k["description"] + f"; opt variant {md.opt_str(opts)}"
      drop_repeated_linear(v, stats)
      json.dump(v, open(os.path.join(out_dir, vname + ".json"), "w"))
      files.append(vname)
      stats["variants"] += 1
  return files, stats


def summary(results, stats) -> str:
  kinds = {"kernels": [r for r in results if ".v" not in r["name"]], "variants": [r for r in results if ".v" in r["name"]]}
  lines = ["| kind | files | identical source | identical source from the AST | run passes | run --from-ast passes | files failing |",
           "|---|---|---|---|---|---|---|"]
  for kind, rs in list(kinds.items()) + [("total", results)]:
    lines.append(f"| {kind} | {len(rs)} | {sum(r['compile'] == 'identical' for r in rs)} | {sum(r['compile_ast'] == 'identical' for r in rs)} "
                 f"| {sum(r['run'] == 'pass' for r in rs)} | {sum(r['run_ast'] == 'pass' for r in rs)} | {sum(bool(r['fails']) for r in rs)} |")
  causes = collections.Counter(c for r in results for c in set(r["fails"]))
  lines += ["", "| failure cause | files |", "|---|---|"] + [f"| {c} | {n} |" for c, n in causes.most_common()] + (
    [] if causes else ["| (none) | 0 |"])
  diffs = collections.Counter(r.get("compile_difference") for r in results if r["compile"] == "differs")
  lines += ["", "| source differs from tinygrad's | files |", "|---|---|"] + [f"| {d} | {n} |" for d, n in diffs.most_common()] + (
    [] if diffs else ["| (none) | 0 |"])
  head = ", ".join(f"{k} {v}" for k, v in stats.items())
  return head + "\n\n" + "\n".join(lines)


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--uopcg", default=os.path.join(oracle.ROOT, "build", "uopcg"))
  ap.add_argument("--out", default="/tmp/uopcg_astfuzz")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--kernels", type=int, default=40, help="random ASTs to draw")
  ap.add_argument("--variants", type=int, default=2, help="random opt variants per kernel")
  ap.add_argument("--jobs", type=int, default=2)
  ap.add_argument("--gen", type=int, default=2, choices=(1, 2),
                  help="generator: 1 = the draws of seeds 0-2 in docs/ast-fuzz.md, 2 = with the forms added after them")
  ap.add_argument("--context", action="append", default=[], metavar="KEY=VALUE",
                  help="a tinygrad codegen setting for every kernel (recorded in its file), e.g. DISABLE_FAST_IDIV=0, "
                       "TRANSCENDENTAL=2, EMULATED_DTYPES=long; repeatable. With --recheck: uopcg compiles the files "
                       "under it and compares with the outputs recorded without it")
  ap.add_argument("--floats", default="", metavar="NAMES",
                  help="more float dtypes to draw, comma-separated (half, bfloat16): kernels that compute in them, "
                       "emulated on PoCL (no cl_khr_fp16)")
  ap.add_argument("--recheck", action="store_true", help="run uopcg on the files already in --out")
  ap.add_argument("--no-run", action="store_true", help="write the kernel files only")
  a = ap.parse_args()
  os.makedirs(a.out, exist_ok=True)
  context = {}
  for kv in a.context:
    key, _, val = kv.partition("=")
    if key not in oracle.CODEGEN_KEYS: sys.exit(f"--context {kv}: not one of {', '.join(oracle.CODEGEN_KEYS)}")
    context[key] = int(val) if val.lstrip("-").isdigit() else val
  tmp = tempfile.mkdtemp(prefix="astfz_settings_") if a.recheck and context else ""
  if a.recheck:
    files = sorted(f[:-5] for f in os.listdir(a.out) if f.endswith(".json") and not f.startswith(("results", "stats")))
    saved = os.path.join(a.out, "stats.json")
    stats = collections.Counter(json.load(open(saved)) if os.path.exists(saved) else {})
  else:
    if Device.DEFAULT != "CL": sys.exit(f"needs tinygrad's CL device (PoCL), not {Device.DEFAULT}")
    for f in filter(None, a.floats.split(",")):
      if f not in ("half", "bfloat16"): sys.exit(f"--floats {f}: not half or bfloat16")
      FLOATS.append(getattr(dtypes, f))
    files, stats = generate(a.seed, a.kernels, a.variants, a.out, a.gen, context)
    json.dump(stats, open(os.path.join(a.out, "stats.json"), "w"))
  print(f"{len(files)} kernel files in {a.out}: " + ", ".join(f"{k} {v}" for k, v in stats.items()))
  if a.no_run: return 0
  results = []
  with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
    for r in pool.map(lambda n: check(a.uopcg, a.out, n, context if a.recheck else None, tmp), files):
      results.append(r)
      print(("ok   " if not r["fails"] else "FAIL ") + r["name"] + ("" if r["compile"] == "identical" else f" (source {r['compile']})")
            + ("" if not r["fails"] else ": " + "; ".join(r["fails"])), flush=True)
  json.dump(results, open(os.path.join(a.out, "results-settings.json" if tmp else "results.json"), "w"), indent=1)
  if tmp: shutil.rmtree(tmp)
  print()
  print(summary(results, stats))
  return 1 if any(r["fails"] for r in results) else 0


if __name__ == "__main__":
  sys.exit(main())
