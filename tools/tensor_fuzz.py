"""Random tensor programs for tools/model_differential.py's `fuzz` set: shapes, movement chains, casts,
elementwise ops, reductions and matmuls nobody chose, drawn from a seed.

Each program is Python text over tinygrad's Tensor API, executed line by line as it is drawn (the
shape of every value is then tinygrad's own), so a failing kernel's program can be printed and rerun
alone. The generator tracks an interval for every value and keeps each op inside the range where
OpenCL C defines it: no float overflow, NaN or infinity (exp of bounded values, log/sqrt/reciprocal
of |x|+c, divisors kept away from 0), no integer division by 0, no signed overflow, no float -> int
conversion out of the target's range. 8- and 16-bit integers (and uint8) only ever come out of a
CAST and go into another CAST, a comparison, max/min or a reduction that tinygrad accumulates in a
wider type: their arithmetic, which tinygrad computes in C's promoted int without wrapping, is a known
divergence (docs/DIVERGENCES.md, R1) and not what this set looks for.
"""
import math
import random

from tinygrad import Tensor, dtypes

# sizes: small, odd and prime ones, and a few larger ones
SIZES = [1, 1, 2, 3, 3, 4, 5, 7, 7, 8, 13, 16, 33, 1, 3, 7, 13, 64, 129]
LARGE = [257, 1000]
MAX_ELEMENTS = 24000
FLOAT, INT = "float32", "int32"
# 16-bit floats: bfloat16, and float16, which tinygrad emulates in float32 (with ushort storage) on a device
# without cl_khr_fp16 such as PoCL; float16 overflows past 65504, so its values are kept below HALF_LIMIT.
# tinygrad's emulated CAST to half only clamps the range and keeps the float's precision until the store,
# where uopcg rounds at the CAST (docs/DIVERGENCES.md, emulated narrow floats): every value cast to float16
# is stored (.contiguous()) before it is used, a computed half value is stored before it is widened or
# converted (Program.stored_half), and half values are widened to float32 before a reduction
# (whose accumulator tinygrad casts back to half inside the kernel)
NARROW_FLOATS = ("bfloat16", "float16")
FLOATS = (FLOAT,) + NARROW_FLOATS
INTS = (INT, "int64")  # the integers arithmetic runs on (int64: index tensors as models load them)
HALF_LIMIT = 3e4
NARROW = ["int8", "uint8", "int16"]  # cast targets only (see above)
RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint32": (0, 2**32 - 1),
          "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}
INT_LIMIT = 2**29  # int32 values stay below it, so + - * of two tracked values are checked before they overflow


def inp(shape, dtype, lo, hi, seed):
  """A deterministic input: uniform floats in [lo, hi] or integers in [lo, hi], as a device tensor."""
  r = random.Random(seed)
  n = math.prod(shape)
  if dtype in FLOATS: vals = [round(r.uniform(lo, hi), 4) for _ in range(n)]
  elif dtype == "bool": vals = [r.random() < 0.5 for _ in range(n)]
  else: vals = [r.randint(int(lo), int(hi)) for _ in range(n)]
  t = Tensor(vals, dtype=getattr(dtypes, "float32" if dtype in FLOATS else dtype)).reshape(shape)
  if dtype == "float16": return t.cast(dtypes.float16).contiguous()  # see HALF_LIMIT: rounded by a store
  return t.cast(getattr(dtypes, dtype)) if dtype in NARROW_FLOATS else t


class V:
  """A value of the program: its variable name, dtype name, interval, and whether a float reduction
  made it (another reduction order may move it slightly: comparisons and truncations of it are avoided)."""
  def __init__(self, name, t, dtype, lo, hi, reduced=False):
    self.name, self.t, self.dtype, self.lo, self.hi, self.reduced = name, t, dtype, float(lo), float(hi), reduced

  @property
  def shape(self): return tuple(self.t.shape)

  @property
  def is_float(self): return self.dtype in FLOATS

  @property
  def is_int(self): return self.dtype in INTS

  @property
  def mag(self): return max(abs(self.lo), abs(self.hi))


EXTENDED_FROM = 21  # seeds from this one on also draw float16, int64 and the model layers (Program.layer)


class Program:
  def __init__(self, rng: random.Random, seed_base: int, extended: bool = True):
    self.rng, self.seed_base, self.lines, self.env, self.n = rng, seed_base, [], {"Tensor": Tensor, "dtypes": dtypes, "inp": inp}, 0
    self.extended = extended  # False: the draws of the first generator (seeds below EXTENDED_FROM), for reproducing them

  def emit(self, expr, dtype, lo, hi, reduced=False) -> V:
    name = f"t{self.n}"
    self.n += 1
    self.lines.append(f"{name} = {expr}")
    exec(self.lines[-1], self.env)  # noqa: S102 (our own generated text)
    v = V(name, self.env[name], dtype, lo, hi, reduced)
    if math.prod(v.shape) > MAX_ELEMENTS * 4: raise OverflowError(f"{name} has {math.prod(v.shape)} elements")
    return v

  # ---- inputs ----

  def shape(self, ndim=None):
    r = self.rng
    ndim = ndim or r.choice([1, 2, 2, 3, 3, 4])
    s = [r.choice(SIZES) for _ in range(ndim)]
    if r.random() < 0.15: s[r.randrange(ndim)] = r.choice(LARGE)
    while math.prod(s) > MAX_ELEMENTS: s[s.index(max(s))] = r.choice([1, 3, 7, 13])
    return tuple(s)

  def input(self, shape, dtype=None) -> V:
    r = self.rng
    dtype = dtype or r.choice([FLOAT] * 5 + [INT] * 2 + ["bool", "uint8", "int8", "bfloat16"]
                              + ([FLOAT, "float16", "int64"] if self.extended else []))
    lo, hi = {"float32": (-2.0, 2.0), "bfloat16": (-2.0, 2.0), "float16": (-2.0, 2.0), "int32": (-50, 50),
              "int64": (-50, 50), "bool": (0, 1), "uint8": (0, 255),
              "int8": (-128, 127)}[dtype]
    if dtype == FLOAT and r.random() < 0.3: lo, hi = r.choice([(0.0, 1.0), (-10.0, 10.0), (0.5, 3.0)])
    seed = self.seed_base * 1000 + self.n
    return self.emit(f"inp({shape}, '{dtype}', {lo}, {hi}, seed={seed})", dtype, lo, hi)

  # ---- keeping values in range ----

  def to_compute(self, v: V) -> V:
    """A value that arithmetic may use: narrow ints, bool and uint32 become int32 or float32."""
    if v.is_float or v.is_int: return v
    if v.dtype == "uint32" and v.hi < INT_LIMIT: return self.emit(f"{v.name}.cast(dtypes.int32)", INT, v.lo, v.hi)
    to = self.rng.choice([FLOAT, INT]) if v.dtype != "uint32" else FLOAT
    return self.emit(f"{v.name}.cast(dtypes.{to})", to, v.lo, v.hi)

  def tame(self, v: V) -> V:
    """Bring a value whose interval grew large back to a small one."""
    if v.is_float and v.mag > (300 if v.dtype == "float16" else 1e4):
      return self.emit(f"{v.name} * {1.0 / v.mag!r}", v.dtype, v.lo / v.mag, v.hi / v.mag, v.reduced)
    if v.is_int and v.mag > 2**20:
      return self.emit(f"{v.name} % 1000", v.dtype, 0, 999)  # floor modulo: non-negative for a positive divisor
    return v

  def stored_half(self, v: V) -> V:
    """A float16 value stored (.contiguous()) before it is widened or converted, unless it is an input or
    already stored: tinygrad's emulation keeps a computed half value's float precision through a CAST
    (`t.exp().float()`), uopcg rounds it to half there (see NARROW_FLOATS)."""
    if v.dtype != "float16": return v
    line = next((ln for ln in self.lines if ln.startswith(f"{v.name} = ")), "")
    if line.endswith(".contiguous()") or " = inp(" in line: return v
    return self.emit(f"{v.name}.contiguous()", v.dtype, v.lo, v.hi, v.reduced)

  def widen_half(self, v: V) -> V:
    """A float16 value as float32 before a reduction (see NARROW_FLOATS)."""
    if v.dtype != "float16": return v
    v = self.stored_half(v)
    return self.emit(f"{v.name}.float()", FLOAT, v.lo, v.hi, v.reduced)

  def fit(self, v: V, n: float) -> V:
    """Scale a float16 value down so that n times its magnitude (a sum or a dot product of it) stays finite."""
    if v.dtype == "float16" and v.mag * n > HALF_LIMIT:
      c = HALF_LIMIT / (2 * v.mag * n)
      return self.emit(f"{v.name} * {c!r}", v.dtype, v.lo * c, v.hi * c, v.reduced)
    return v

  # ---- movement ----

  def movement(self, v: V) -> V:
    r, s = self.rng, v.shape
    nd = len(s)
    if nd == 0: return self.emit(f"{v.name}.reshape(1).expand({r.choice([1, 3, 7])})", v.dtype, v.lo, v.hi, v.reduced)
    ops = ["permute", "reshape", "pad", "shrink", "stride", "flip", "expand"]
    op = r.choice(ops)
    if op == "permute" and nd > 1:
      p = list(range(nd)); r.shuffle(p)
      return self.emit(f"{v.name}.permute{tuple(p)}", v.dtype, v.lo, v.hi, v.reduced)
    if op == "reshape":
      n = math.prod(s)
      if r.random() < 0.4 and nd > 1:  # merge two adjacent dims
        i = r.randrange(nd - 1)
        ns = s[:i] + (s[i] * s[i + 1],) + s[i + 2:]
      else:  # split a dim into a factor pair, or flatten
        divs = [(i, d) for i, x in enumerate(s) for d in range(2, x) if x % d == 0]
        if divs and nd < 4:
          i, d = r.choice(divs)
          ns = s[:i] + (d, s[i] // d) + s[i + 1:]
        else: ns = (n,)
      return self.emit(f"{v.name}.reshape{ns}", v.dtype, v.lo, v.hi, v.reduced)
    if op == "pad":
      pads = tuple((r.choice([0, 0, 1, 2]), r.choice([0, 1, 3])) for _ in s)
      val = r.choice([0, 0, 1]) if v.dtype != "bool" else 0
      lo, hi = min(v.lo, val), max(v.hi, val)
      return self.emit(f"{v.name}.pad({pads}, value={val})", v.dtype, lo, hi, v.reduced)
    if op == "shrink":
      sl = []
      for x in s:
        a = r.randrange(0, x)
        b = r.randrange(a + 1, x + 1)
        sl.append(f"{a}:{b}" if r.random() < 0.6 else ":")
      return self.emit(f"{v.name}[{', '.join(sl)}]", v.dtype, v.lo, v.hi, v.reduced)
    if op == "stride":
      sl = [":"] * nd
      i = r.randrange(nd)
      st = r.choice([2, 2, 3, -1, -2])
      start = r.choice(["", "1"]) if st > 0 and s[i] > 1 else ""
      sl[i] = f"{start}::{st}"
      return self.emit(f"{v.name}[{', '.join(sl)}]", v.dtype, v.lo, v.hi, v.reduced)
    if op == "flip":
      ax = tuple(sorted(r.sample(range(nd), r.randint(1, nd))))
      return self.emit(f"{v.name}.flip({ax})", v.dtype, v.lo, v.hi, v.reduced)
    if op == "expand" and math.prod(s) * 13 <= MAX_ELEMENTS * 2:
      ones = [i for i, x in enumerate(s) if x == 1]
      if ones:
        ns = list(s); ns[r.choice(ones)] = r.choice([2, 3, 5, 13])
        return self.emit(f"{v.name}.expand{tuple(ns)}", v.dtype, v.lo, v.hi, v.reduced)
      if nd < 4:
        i = r.randint(0, nd)
        ns = s[:i] + (r.choice([2, 3, 7]),) + s[i:]
        return self.emit(f"{v.name}.unsqueeze({i}).expand{ns}", v.dtype, v.lo, v.hi, v.reduced)
    return v

  # ---- elementwise ----

  def other(self, v: V, dtype) -> V:
    """A second operand that broadcasts against v: a fresh input of its shape or with some dims 1, or v
    reduced with keepdim."""
    r = self.rng
    if r.random() < 0.25 and len(v.shape) > 0 and dtype != "float16":
      ax = r.randrange(len(v.shape))
      w = v if v.dtype == dtype else self.emit(f"{v.name}.cast(dtypes.{dtype})", dtype, v.lo, v.hi, v.reduced)
      red = "max" if r.random() < 0.5 else "min"
      return self.emit(f"{w.name}.{red}(axis={ax}, keepdim=True)", dtype, w.lo, w.hi, w.reduced)
    shape = tuple(1 if r.random() < 0.3 else x for x in v.shape)
    return self.input(shape, dtype)

  def unary(self, v: V) -> V:
    r = self.rng
    v = self.to_compute(v)
    if not v.is_float:
      op = r.choice(["abs", "neg", "square", "float"])
      if op == "abs": return self.emit(f"{v.name}.abs()", v.dtype, 0, v.mag)
      if op == "neg": return self.emit(f"-{v.name}", v.dtype, -v.hi, -v.lo)
      if op == "square" and v.mag < 2**14: return self.emit(f"{v.name} * {v.name}", v.dtype, 0, v.mag ** 2)
      return self.emit(f"{v.name}.float()", FLOAT, v.lo, v.hi)
    op = r.choice(["exp", "log", "sqrt", "sin", "recip", "abs", "relu", "sigmoid", "gelu", "tanh", "neg", "exp2", "cos"])
    d, rd = v.dtype, v.reduced
    if op in ("exp", "exp2"):
      if v.mag > (8 if d == "float16" else 20): v = self.emit(f"{v.name}.tanh() * 4", d, -4, 4, rd)
      return self.emit(f"{v.name}.{op}()", d, 0, math.exp(v.hi) if op == "exp" else 2 ** v.hi, rd)
    if op == "log": return self.emit(f"({v.name}.abs() + 0.5).log()", d, math.log(0.5), math.log(v.mag + 0.5), rd)
    if op == "sqrt": return self.emit(f"{v.name}.abs().sqrt()", d, 0, math.sqrt(v.mag), rd)
    if op in ("sin", "cos"):
      if v.mag > 100: v = self.emit(f"{v.name}.tanh() * 8", d, -8, 8, rd)
      return self.emit(f"{v.name}.{op}()", d, -1, 1, rd)
    if op == "recip": return self.emit(f"({v.name}.abs() + 0.5).reciprocal()", d, 1 / (v.mag + 0.5), 2, rd)
    if op == "abs": return self.emit(f"{v.name}.abs()", d, 0, v.mag, rd)
    if op == "relu": return self.emit(f"{v.name}.relu()", d, max(0, v.lo), max(0, v.hi), rd)
    if op in ("sigmoid", "tanh"): return self.emit(f"{v.name}.{op}()", d, -1 if op == "tanh" else 0, 1, rd)
    if op == "gelu": return self.emit(f"{v.name}.gelu()", d, -0.2, max(0, v.hi), rd)
    return self.emit(f"-{v.name}", d, -v.hi, -v.lo, rd)

  def binary(self, v: V) -> V:
    r = self.rng
    v = self.to_compute(v)
    d = v.dtype
    w = self.other(v, d) if r.random() < 0.8 else None
    if w is None:  # a constant operand
      c = r.choice([2, 3, -1, 7]) if not v.is_float else r.choice([0.5, -1.5, 3.0, 0.1])
      wname, wlo, whi, wred = repr(c), c, c, False
    else:
      w = self.to_compute(w)
      if w.dtype != d: w = self.emit(f"{w.name}.cast(dtypes.{d})", d, w.lo, w.hi, w.reduced)
      wname, wlo, whi, wred = w.name, w.lo, w.hi, w.reduced
    rd = v.reduced or wred
    ops = ["+", "-", "*", "/", "max", "min", "where"] + (["//", "%", "&", "|", "^", "<<", ">>"] if d in INTS else [])
    if self.extended and d in INTS: ops.append("div")
    op = r.choice(ops)
    prods = [a * b for a in (v.lo, v.hi) for b in (wlo, whi)]
    if op == "+": lo, hi = v.lo + wlo, v.hi + whi
    elif op == "-": lo, hi = v.lo - whi, v.hi - wlo
    elif op == "*": lo, hi = min(prods), max(prods)
    if op in ("+", "-", "*"):
      if (d in INTS and max(abs(lo), abs(hi)) >= INT_LIMIT) or (d == "float16" and max(abs(lo), abs(hi)) >= HALF_LIMIT): op = "max"
      else: return self.tame(self.emit(f"{v.name} {op} {wname}", d, lo, hi, rd))
    if op == "/":
      if d in INTS: return self.emit(f"{v.name}.float() / ({wname} * 0 + 3)", FLOAT, v.lo / 3, v.hi / 3)
      den = f"({wname}.abs() + 0.5)" if w is not None else f"({abs(wlo) + 0.5!r})"
      return self.emit(f"{v.name} / {den}", d, -v.mag * 2, v.mag * 2, rd)
    if op in ("max", "min"):
      f = "maximum" if op == "max" else "minimum"
      lo, hi = (max(v.lo, wlo), max(v.hi, whi)) if op == "max" else (min(v.lo, wlo), min(v.hi, whi))
      return self.emit(f"{v.name}.{f}({wname})", d, lo, hi, rd)
    if op == "where":
      if rd: cond = f"({v.name} * 0 + {wname}).sign() >= 0" if r.random() < 0.3 else f"{v.name}.abs() < 1e30"
      else: cond = f"{v.name} {r.choice(['<', '>', '==', '!=', '>='])} {wname}"
      alt = r.choice(["0", "1", wname])
      lo, hi = min(v.lo, wlo, 0), max(v.hi, whi, 1)
      return self.emit(f"({cond}).where({v.name}, {alt})", d, lo, hi, rd)
    if op in ("//", "%", "div"):
      # divisors of both signs (floor division and Python's modulo differ from C's on negative operands)
      if w is None: den = repr(r.choice([3, 7, -4, 13] + ([-3, -1] if self.extended else [])))
      elif not self.extended or r.random() < 0.5: den = f"({wname}.abs() % 7 + 1)"
      else: den = f"((({wname} % 2) * 2 - 1) * ({wname}.abs() % 5 + 1))"
      if op == "//": return self.emit(f"{v.name} // {den}", d, -v.mag, v.mag)
      if op == "div": return self.emit(f"{v.name}.div({den}, rounding_mode='{r.choice(['trunc', 'floor'])}')", d, -v.mag, v.mag)
      return self.emit(f"{v.name} % {den}", d, -13, 13)
    if op in ("&", "|", "^"):
      m = 2 ** math.ceil(math.log2(max(v.mag, abs(wlo), abs(whi)) + 2))
      return self.emit(f"{v.name} {op} {wname}", d, -m, m)
    k = r.randint(0, 6)
    if op == "<<" and v.mag * 2 ** k < INT_LIMIT: return self.emit(f"{v.name} << {k}", d, v.lo * 2 ** k, v.hi * 2 ** k)
    return self.emit(f"{v.name} >> {k}", d, min(v.lo, 0), max(v.hi, 0))

  # ---- casts ----

  def cast(self, v: V) -> V:
    r = self.rng
    to = r.choice([FLOAT, INT, "int8", "uint8", "int16", "uint32", "bool", "bfloat16"] + (["float16", "int64"] if self.extended else []))
    if to == v.dtype: return v
    v = self.stored_half(v)
    if v.dtype in NARROW_FLOATS and to not in FLOATS + ("bool",): v = self.emit(f"{v.name}.float()", FLOAT, v.lo, v.hi, v.reduced)
    if to == "bool":
      return self.emit(f"{v.name}.cast(dtypes.bool)", "bool", 0, 1)
    if to == "float16" and v.mag > HALF_LIMIT:
      if v.is_float: v = self.emit(f"{v.name} * {1.0 / v.mag!r}", v.dtype, v.lo / v.mag, v.hi / v.mag, v.reduced)
      else: v = self.emit(f"{v.name}.clip(-30000, 30000)", v.dtype, max(v.lo, -30000), min(v.hi, 30000))
    if to in FLOATS:
      return self.emit(f"{v.name}.cast(dtypes.{to})" + (".contiguous()" if to == "float16" else ""), to, v.lo, v.hi, v.reduced)
    lo, hi = RANGES[to]
    if v.is_float:
      if v.reduced: return v  # a truncation could flip on another reduction order
      if v.lo < lo or v.hi > hi:  # float -> int is defined inside the target's range only
        # inside the target's range even where v's interval lies wholly outside it (clip(0, -1.5) is -1.5)
        clo, chi = min(max(v.lo, lo), hi), max(min(v.hi, hi, 1e6), lo)
        v = self.emit(f"{v.name}.clip({clo}, {chi})", v.dtype, clo, chi)
      return self.emit(f"{v.name}.cast(dtypes.{to})", to, math.trunc(v.lo), math.trunc(v.hi))
    if to == "uint32": return self.emit(f"{v.name}.cast(dtypes.uint32)", to, 0 if v.lo < 0 else v.lo, 2**32 - 1 if v.lo < 0 else v.hi)
    if v.lo < lo or v.hi > hi:  # signed targets: keep in range; unsigned ones wrap by definition
      if to.startswith("u"): return self.emit(f"{v.name}.cast(dtypes.{to})", to, lo, hi)
      v = self.emit(f"{v.name}.clip({lo}, {hi})", v.dtype, min(max(v.lo, lo), hi), max(min(v.hi, hi), lo))
    return self.emit(f"{v.name}.cast(dtypes.{to})", to, v.lo, v.hi)

  # ---- reductions ----

  def axes(self, v: V):
    nd = len(v.shape)
    k = self.rng.choice([1, 1, 2, nd])
    return tuple(sorted(self.rng.sample(range(nd), min(k, nd))))

  def reduce(self, v: V) -> V:
    r = self.rng
    v = self.widen_half(v)
    ax, kd = self.axes(v), r.random() < 0.5
    n = math.prod(v.shape[a] for a in ax)
    op = r.choice(["sum", "sum", "max", "min", "mean", "prod", "two", "argmax", "cumsum", "softmax", "norm"])
    if op in ("max", "min"):
      return self.emit(f"{v.name}.{op}(axis={ax}, keepdim={kd})", v.dtype, v.lo, v.hi, v.reduced)
    if op == "argmax" and not v.reduced:
      a = r.randrange(len(v.shape))
      return self.emit(f"{v.name}.{r.choice(['argmax', 'argmin'])}(axis={a}, keepdim={kd})", INT, 0, v.shape[a] - 1)
    v = self.to_compute(v)
    if v.is_int and v.mag * n >= INT_LIMIT: v = self.emit(f"{v.name} % 100", v.dtype, 0, 99)
    d = v.dtype
    if op in ("sum", "mean", "two", "cumsum"): v = self.fit(v, n if op != "cumsum" else max(v.shape))
    if op == "cumsum":
      a = r.randrange(len(v.shape))
      return self.tame(self.emit(f"{v.name}.cumsum(axis={a})", d, min(0, v.lo * v.shape[a]), max(0, v.hi * v.shape[a]), v.is_float))
    if op == "mean":
      return self.emit(f"{v.name}.mean(axis={ax}, keepdim={kd})", FLOAT if d in INTS else d, v.lo, v.hi, True)
    if op == "prod" and n <= 40:  # factors in [0.5, 1.5] (floats) or {1, 2} (ints): no overflow
      if d in INTS: f = self.emit(f"({v.name} % 2) + 1", d, 1, 2)
      else: f = self.emit(f"{v.name}.sigmoid() + 0.5", d, 0.5, 1.5, v.reduced)
      return self.tame(self.emit(f"{f.name}.prod(axis={ax}, keepdim={kd})", d, 0.5 ** n if d not in INTS else 1, f.hi ** n, True))
    if op == "two":  # two reductions of one value in one kernel, fused with elementwise ops
      kind = r.choice(["sum_max", "center"])
      if kind == "sum_max":
        return self.tame(self.emit(f"{v.name}.sum(axis={ax}, keepdim={kd}) * 0.5 + {v.name}.max(axis={ax}, keepdim={kd})",
                                   FLOAT if d in INTS else d, min(0, v.lo * n), max(0, v.hi * n) + v.hi, True))
      return self.emit(f"{v.name} - {v.name}.mean(axis={ax}, keepdim=True)", FLOAT if d in INTS else d, -2 * v.mag, 2 * v.mag, True)
    if op in ("softmax", "norm") and v.is_float:
      a = r.randrange(len(v.shape))
      if op == "softmax": return self.emit(f"{v.name}.softmax(axis={a})", d, 0, 1, True)
      return self.emit(f"({v.name} - {v.name}.mean(axis={a}, keepdim=True)) * ({v.name}.var(axis={a}, keepdim=True, correction=0)"
                       f" + 1e-3).rsqrt()", d, -1e3 * v.mag, 1e3 * v.mag, True)
    return self.tame(self.emit(f"{v.name}.sum(axis={ax}, keepdim={kd})", d, min(0, v.lo * n), max(0, v.hi * n), v.is_float))

  def reduce_of_broadcast(self, v: V) -> V:
    """x[..., None] op y[None, ...] summed: a reduce whose source is a broadcast of two values."""
    r = self.rng
    v = self.widen_half(self.to_compute(v))
    if len(v.shape) > 2 or math.prod(v.shape) > 2000: return self.reduce(v)
    m = r.choice([1, 3, 7, 13])
    w = self.input((m,) + (1,) * len(v.shape), v.dtype)
    op = r.choice(["*", "-", "maximum"])
    body = f"{v.name}.unsqueeze(0).maximum({w.name})" if op == "maximum" else f"({v.name}.unsqueeze(0) {op} {w.name})"
    red = r.choice(["sum", "max"])
    bound = max(v.mag, w.mag) ** 2 + v.mag + w.mag
    return self.tame(self.emit(f"{body}.{red}(axis=0)", v.dtype, -bound * m, bound * m, v.is_float))

  def matmul(self, v: V) -> V:
    r = self.rng
    v = self.widen_half(self.to_compute(v))
    if v.dtype == "bfloat16": v = self.emit(f"{v.name}.float()", FLOAT, v.lo, v.hi, v.reduced)
    if v.is_int and v.mag > 1000: v = self.emit(f"{v.name} % 100", v.dtype, 0, 99)
    k = v.shape[-1]
    m = r.choice([1, 3, 4, 7, 16])
    if k * m > 20000: return v
    w = self.input((k, m) if r.random() < 0.8 else (k,), v.dtype)
    bound = v.mag * w.mag * k
    return self.tame(self.emit(f"{v.name} @ {w.name}", v.dtype, -bound, bound, v.is_float))

  def index(self, v: V) -> V:
    """Data-dependent and arange-built indexing: a gather along an axis by a random int tensor, a row pick
    `x[idx]`, or a mask from an arange compared with a bound."""
    r, s = self.rng, v.shape
    if len(s) == 0: return v
    a = r.randrange(len(s))
    kind = r.choice(["gather", "pick", "mask"])
    if kind == "gather":
      ishape = tuple(r.choice([1, 2, 3, x]) if i == a else x for i, x in enumerate(s))
      idx = self.emit(f"inp({ishape}, 'int32', 0, {s[a] - 1}, seed={self.seed_base * 1000 + self.n})", INT, 0, s[a] - 1)
      return self.emit(f"{v.name}.gather({a}, {idx.name})", v.dtype, v.lo, v.hi, v.reduced)
    if kind == "pick":
      m = r.choice([1, 3, 5])
      idx = self.emit(f"inp(({m},), 'int32', 0, {s[0] - 1}, seed={self.seed_base * 1000 + self.n})", INT, 0, s[0] - 1)
      return self.emit(f"{v.name}[{idx.name}]", v.dtype, v.lo, v.hi, v.reduced)
    k = r.randint(0, s[a])
    shape = tuple(x if i == a else 1 for i, x in enumerate(s))
    alt = "False" if v.dtype == "bool" else "0"
    return self.emit(f"(Tensor.arange({s[a]}).reshape{shape} {r.choice(['<', '>=', '!='])} {k}).where({v.name}, {alt})",
                     v.dtype, min(v.lo, 0), max(v.hi, 0), v.reduced)

  def logic(self, v: V) -> V:
    """bool values: a comparison of v with a fresh input, combined with another by & | ^ or negated."""
    r = self.rng
    if v.dtype != "bool":
      if v.reduced: return v
      c = self.input(tuple(1 if r.random() < 0.3 else x for x in v.shape), v.dtype if v.dtype in (FLOAT, INT) else None)
      c = self.to_compute(c)
      w = self.to_compute(v)
      if c.dtype != w.dtype: c = self.emit(f"{c.name}.cast(dtypes.{w.dtype})", w.dtype, c.lo, c.hi)
      v = self.emit(f"{w.name} {r.choice(['<', '>', '==', '!=', '<='])} {c.name}", "bool", 0, 1)
    b = self.input(tuple(1 if r.random() < 0.3 else x for x in v.shape), "bool")
    op = r.choice(["&", "|", "^", "~"])
    if op == "~": return self.emit(f"{v.name}.logical_not()", "bool", 0, 1)
    return self.emit(f"{v.name} {op} {b.name}", "bool", 0, 1)

  # ---- the layers models are built from (extended seeds) ----

  def as_float(self, v: V) -> V:
    v = self.to_compute(v)
    return v if v.is_float else self.emit(f"{v.name}.float()", FLOAT, v.lo, v.hi)

  def as_image(self, v: V) -> V:
    """v as an NCHW image: leading dims of 1 added (a 1-D value is a row of width n), the leading dims of a
    wider one merged."""
    s = v.shape
    if len(s) > 4: return self.emit(f"{v.name}.reshape{(math.prod(s[:-3]),) + s[-3:]}", v.dtype, v.lo, v.hi, v.reduced)
    if len(s) == 4: return v
    ns = (1,) * (4 - len(s)) + s
    if len(s) == 2 and self.rng.random() < 0.4: ns = (1, s[0], 1, s[1])  # channels x width, as a 1-D conv sees it
    return self.emit(f"{v.name}.reshape{ns}", v.dtype, v.lo, v.hi, v.reduced)

  @staticmethod
  def out_size(n, k, s, d, p, ceil=False, p2=None):
    """An output dim of a window of k (dilation d, stride s) over n padded by p each side (p and p2)."""
    span = n + p + (p if p2 is None else p2) - d * (k - 1) - 1
    if span < 0: return 0
    return (-(-span // s) if ceil else span // s) + 1

  def layer(self, v: V) -> V:
    if len(v.shape) == 0: return v
    kind = self.rng.choice(["conv"] * 3 + ["conv_transpose", "pool", "pool", "norm", "norm", "norm", "cum", "scatter",
                                          "onehot", "masked", "mm", "mm", "move", "move", "move"])
    return getattr(self, f"layer_{kind}")(v if kind == "move" else self.widen_half(v))

  def layer_conv(self, v: V) -> V:
    """conv2d with groups (depthwise too), stride, dilation, symmetric or asymmetric padding, and a bias."""
    r = self.rng
    x = self.as_image(self.as_float(v))
    n, c, h, w = x.shape
    divs = [g for g in range(1, c + 1) if c % g == 0]
    g = r.choice(divs) if r.random() < 0.4 else r.choice([1, c])
    cout = g * r.choice([1, 1, 2, 3])
    if cout > 64: cout = g
    kh, kw = (1 if h == 1 else r.choice([1, 2, 3, 3, 5])), r.choice([1, 2, 3, 3, 5])
    s, d = r.choice([1, 1, 2, 3]), r.choice([1, 1, 1, 2])
    pk = r.random()
    if pk < 0.4: pad, pads = "0", [0] * 4
    elif pk < 0.7: p = r.choice([1, 2]); pad, pads = str(p), [p] * 4
    elif pk < 0.85: ph, pw = (0 if h == 1 else r.choice([0, 1])), r.choice([1, 2]); pad, pads = f"({ph}, {pw})", [pw, pw, ph, ph]
    else:  # (left, right, top, bottom): "same" padding of an even kernel
      pads = [r.choice([0, 1]) for _ in range(4)]
      if h == 1: pads[2] = pads[3] = 0
      pad = str(tuple(pads))
    ho, wo = self.out_size(h, kh, s, d, pads[2], p2=pads[3]), self.out_size(w, kw, s, d, pads[0], p2=pads[1])
    macs = n * cout * ho * wo * (c // g) * kh * kw
    if ho < 1 or wo < 1 or n * cout * ho * wo > MAX_ELEMENTS or macs > 2_000_000: return v
    wt = self.input((cout, c // g, kh, kw), x.dtype if x.dtype != "bfloat16" else FLOAT)
    k = (c // g) * kh * kw
    x = self.fit(x, k * wt.mag + 1)
    bias = self.input((cout,), wt.dtype) if r.random() < 0.5 else None
    bound = x.mag * wt.mag * k + (bias.mag if bias else 0)
    b = f"{bias.name}" if bias else "None"
    return self.tame(self.emit(f"{x.name}.conv2d({wt.name}, {b}, groups={g}, stride={s}, dilation={d}, padding={pad})",
                               wt.dtype if x.dtype == "bfloat16" else x.dtype, -bound, bound, True))

  def layer_conv_transpose(self, v: V) -> V:
    """conv_transpose2d (an upsampling decoder's layer): stride, padding, output padding, groups."""
    r = self.rng
    x = self.as_image(self.as_float(v))
    if x.dtype == "bfloat16": x = self.emit(f"{x.name}.float()", FLOAT, x.lo, x.hi, x.reduced)
    n, c, h, w = x.shape
    g = r.choice([1, 1, c])
    cout_g = r.choice([1, 2, 3])
    kh, kw = (1 if h == 1 else r.choice([1, 2, 3])), r.choice([1, 2, 3, 4])
    s, d = r.choice([1, 2, 2, 3]), r.choice([1, 1, 2])
    p = r.choice([0, 0, 1]) if min(kh, kw) > 1 else 0
    op = r.randrange(0, max(s, d)) if r.random() < 0.3 else 0
    ho, wo = (h - 1) * s - 2 * p + d * (kh - 1) + op + 1, (w - 1) * s - 2 * p + d * (kw - 1) + op + 1
    if ho < 1 or wo < 1 or n * g * cout_g * ho * wo > MAX_ELEMENTS or n * c * h * w * cout_g * kh * kw > 2_000_000: return v
    wt = self.input((c, cout_g, kh, kw), x.dtype)
    k = (c // g) * kh * kw
    x = self.fit(x, k * wt.mag + 1)
    bound = x.mag * wt.mag * k
    return self.tame(self.emit(f"{x.name}.conv_transpose2d({wt.name}, groups={g}, stride={s}, dilation={d}, padding={p}, "
                               f"output_padding={op})", x.dtype, -bound, bound, True))

  def layer_pool(self, v: V) -> V:
    """max or average pooling with kernel, stride, dilation, padding (at most half the kernel), ceil mode."""
    r = self.rng
    avg = r.random() < 0.5
    x = self.as_image(self.as_float(v) if avg else self.to_compute(v))
    n, c, h, w = x.shape
    kh, kw = (1 if h == 1 else r.choice([2, 2, 3, 5])), r.choice([2, 2, 3, 5])
    stride = r.choice([None, None, 1, 2, 3])
    s = stride or 0
    d = r.choice([1, 1, 1, 2]) if not avg else 1  # tinygrad's avg_pool2d takes a dilation, torch's does not
    p = r.choice([0, 0, 1]) if min(kh if h > 1 else kw, kw) >= 2 else 0
    ph = p if h > 1 else 0
    pad = str(p) if ph == p else f"(0, {p})"
    ceil = r.random() < 0.25
    sh, sw = (s or kh, s or kw)
    if self.out_size(h, kh, sh, d, ph, ceil) < 1 or self.out_size(w, kw, sw, d, p, ceil) < 1: return v
    args = f"kernel_size=({kh}, {kw}), stride={stride if stride is None else (stride if h > 1 else (1, stride))}, padding={pad}, ceil_mode={ceil}"
    if avg:
      x = self.fit(x, kh * kw)
      cip = r.random() < 0.5
      return self.emit(f"{x.name}.avg_pool2d({args}, count_include_pad={cip})", x.dtype, min(x.lo, 0), max(x.hi, 0), True)
    return self.emit(f"{x.name}.max_pool2d({args}, dilation={d})", x.dtype, x.lo, x.hi, x.reduced)

  def layer_norm(self, v: V) -> V:
    """Normalisations over an axis: layernorm, var/std (both corrections), logsumexp, log_softmax, RMS norm,
    a causally masked softmax (-inf above the diagonal), attention."""
    r = self.rng
    v = self.as_float(v)
    nd, a = len(v.shape), r.randrange(len(v.shape))
    n, d, kd = v.shape[a], v.dtype, r.random() < 0.5
    kind = r.choice(["layernorm", "var", "std", "logsumexp", "log_softmax", "rms", "masked_softmax", "attention"])
    if kind == "layernorm": return self.emit(f"{v.name}.layernorm(axis={a})", d, -math.sqrt(n) - 1, math.sqrt(n) + 1, True)
    if kind in ("var", "std"):
      corr = r.choice([0, 1]) if n > 1 else 0
      v = self.fit(v, v.mag * 4)
      bound = 4 * v.mag ** 2
      return self.tame(self.emit(f"{v.name}.{kind}(axis={a}, keepdim={kd}, correction={corr})", d, 0,
                                 bound if kind == "var" else math.sqrt(bound), True))
    if kind == "logsumexp":
      return self.emit(f"{v.name}.logsumexp(axis={a}, keepdim={kd})", d, v.lo, v.hi + math.log(n) + 1, True)
    if kind == "log_softmax":
      return self.emit(f"{v.name}.log_softmax(axis={a})", d, v.lo - v.hi - math.log(n) - 1, 0, True)
    if kind == "rms":
      return self.emit(f"{v.name} * ({v.name}.square().mean(axis={a}, keepdim=True) + 1e-6).rsqrt()", d,
                       -math.sqrt(n) - 1, math.sqrt(n) + 1, True)
    if kind == "masked_softmax" and nd >= 2:
      p, q = v.shape[-2:]
      k = r.choice([0, 0, 1, 2])  # column 0 is never masked: no row is -inf throughout
      return self.emit(f"({v.name} + Tensor.full(({p}, {q}), float('-inf'), dtype=dtypes.{d}).triu({1 + k})).softmax(-1)",
                       d, 0, 1, True)
    if kind == "attention" and nd >= 2:
      t, e = v.shape[-2:]
      slen = r.choice([t, 1, 3, 7])
      kv_shape = v.shape[:-2] + (slen, e)
      if math.prod(kv_shape) > MAX_ELEMENTS: return v
      k_, v_ = self.input(kv_shape, d), self.input(kv_shape[:-1] + (r.choice([e, 4]),), d)
      causal = r.random() < 0.5
      return self.emit(f"{v.name}.scaled_dot_product_attention({k_.name}, {v_.name}, is_causal={causal})", d,
                       -v_.mag, v_.mag, True)
    return self.emit(f"{v.name}.softmax(axis={a})", d, 0, 1, True)

  def layer_cum(self, v: V) -> V:
    """cummax (values or indices), cumprod of factors near 1, logcumsumexp."""
    r = self.rng
    v = self.to_compute(v)
    a = r.randrange(len(v.shape))
    n = v.shape[a]
    kind = r.choice(["cummax", "cummax", "cumprod", "logcumsumexp"])
    if kind == "cummax":
      if r.random() < 0.3 and not v.reduced: return self.emit(f"{v.name}.cummax({a})[1]", INT, 0, n - 1)
      return self.emit(f"{v.name}.cummax({a})[0]", v.dtype, v.lo, v.hi, v.reduced)
    v = self.as_float(v)
    if kind == "cumprod" and n <= 40:
      f = self.emit(f"{v.name}.sigmoid() + 0.5", v.dtype, 0.5, 1.5, v.reduced)
      return self.tame(self.emit(f"{f.name}.cumprod({a})", v.dtype, 0.5 ** n, 1.5 ** n, True))
    return self.emit(f"{v.name}.logcumsumexp({a})", v.dtype, v.lo, v.hi + math.log(n) + 1, True)

  def layer_scatter(self, v: V) -> V:
    """scatter and scatter_reduce along an axis by a random index tensor (duplicates included)."""
    r = self.rng
    v = self.to_compute(v)
    s = v.shape
    a = r.randrange(len(s))
    ishape = tuple(r.randint(1, x) if i == a or r.random() < 0.3 else x for i, x in enumerate(s))
    idx = self.emit(f"inp({ishape}, 'int32', 0, {s[a] - 1}, seed={self.seed_base * 1000 + self.n})", INT, 0, s[a] - 1)
    src = self.input(ishape, v.dtype)
    red = r.choice([None, "sum", "amax", "amin", "mean"])
    if red is None: return self.emit(f"{v.name}.scatter({a}, {idx.name}, {src.name})", v.dtype, min(v.lo, src.lo), max(v.hi, src.hi), v.reduced)
    if red == "mean" and not v.is_float: red = "sum"
    m = ishape[a] + 1
    if red == "sum": v, src = self.fit(v, m), self.fit(src, m)
    lo, hi = (min(v.lo, src.lo) * m, max(v.hi, src.hi) * m) if red == "sum" else (min(v.lo, src.lo), max(v.hi, src.hi))
    inc = r.random() < 0.7
    return self.emit(f"{v.name}.scatter_reduce({a}, {idx.name}, {src.name}, reduce='{red}', include_self={inc})",
                     v.dtype, min(lo, 0), max(hi, 0), v.reduced or red in ("sum", "mean"))

  def layer_onehot(self, v: V) -> V:
    """An embedding lookup written as a one-hot matmul, or a one-hot mask of v's last axis."""
    r = self.rng
    v = self.as_float(v)
    s = v.shape
    if len(s) >= 2 and r.random() < 0.6:
      m = r.choice([1, 3, 5, 8])
      idx = self.emit(f"inp(({m},), 'int32', 0, {s[-2] - 1}, seed={self.seed_base * 1000 + self.n})", INT, 0, s[-2] - 1)
      return self.emit(f"{idx.name}.one_hot({s[-2]}).cast(dtypes.{v.dtype}) @ {v.name}", v.dtype, v.lo, v.hi, v.reduced)
    idx = self.emit(f"inp({s[:-1]}, 'int32', 0, {s[-1] - 1}, seed={self.seed_base * 1000 + self.n})", INT, 0, s[-1] - 1)
    return self.emit(f"({idx.name}.one_hot({s[-1]}) * {v.name}).sum(-1)", v.dtype, v.lo, v.hi, v.reduced)

  def layer_masked(self, v: V) -> V:
    """The min or max over the elements a mask keeps (masked_fill with a bound, then the reduce)."""
    r = self.rng
    v = self.to_compute(v)
    mask = self.input(tuple(1 if r.random() < 0.3 else x for x in v.shape), "bool")
    a = r.randrange(len(v.shape))
    mx = r.random() < 0.5
    fill = math.floor(v.lo) - 1 if mx else math.ceil(v.hi) + 1
    return self.emit(f"{v.name}.masked_fill({mask.name}, {fill}).{'max' if mx else 'min'}(axis={a})", v.dtype,
                     min(v.lo, fill), max(v.hi, fill), v.reduced)

  def layer_mm(self, v: V) -> V:
    """Matmuls as layers write them: x @ w.T (+ bias), w @ x, x.T @ w, batched with a broadcast operand."""
    r = self.rng
    v = self.to_compute(v)
    if v.dtype == "bfloat16": v = self.emit(f"{v.name}.float()", FLOAT, v.lo, v.hi, v.reduced)
    if v.is_int and v.mag > 1000: v = self.emit(f"{v.name} % 100", v.dtype, 0, 99)
    s, m = v.shape, r.choice([1, 3, 4, 7, 16])
    kind = r.choice(["linear", "left", "xT", "batched"]) if len(s) >= 2 else "linear"
    if kind == "linear": k, wshape, expr = s[-1], (m, s[-1]), "{x} @ {w}.T"
    elif kind == "left": k, wshape, expr = s[-2], (m, s[-2]), "{w} @ {x}"
    elif kind == "xT": k, wshape, expr = s[-2], (s[-2], m), "{x}.transpose(-1, -2) @ {w}"
    else: k, wshape, expr = s[-1], (r.choice([1, s[-2]]), s[-1], m), "{x}.unsqueeze(-3) @ {w}"
    if math.prod(wshape) > 20000 or math.prod(s) * m > 4 * MAX_ELEMENTS: return v
    w = self.input(wshape, v.dtype)
    v = self.fit(v, k * w.mag)
    bound = v.mag * w.mag * k
    out = expr.format(x=v.name, w=w.name)
    if kind == "linear" and r.random() < 0.5:
      b = self.input((m,), v.dtype)
      out, bound = f"{out} + {b.name}", bound + b.mag
    return self.tame(self.emit(out, v.dtype, -bound, bound, v.is_float))

  def layer_move(self, v: V) -> V:
    """Movement models use: reflect/replicate/circular padding, roll, repeat, cat and stack, tril/triu,
    interpolation, a chunk, unfold."""
    r, s = self.rng, v.shape
    nd = len(s)
    kind = r.choice(["padmode", "roll", "repeat", "cat", "stack", "tri", "interp", "chunk", "unfold"])
    if kind == "padmode":
      mode = r.choice(["reflect", "replicate", "circular"])
      lim = [x - 1 if mode == "reflect" else x for x in s]
      pads = tuple((r.randint(0, min(2, l)), r.randint(0, min(2, l))) if r.random() < 0.6 else (0, 0) for l in lim)
      return self.emit(f"{v.name}.pad({pads}, mode='{mode}')", v.dtype, v.lo, v.hi, v.reduced)
    if kind == "roll":
      a = r.randrange(nd)
      return self.emit(f"{v.name}.roll({r.randint(-s[a], s[a])}, {a})", v.dtype, v.lo, v.hi, v.reduced)
    if kind == "repeat" and math.prod(s) * 6 <= MAX_ELEMENTS:
      reps = tuple(r.choice([1, 1, 2, 3]) for _ in s)
      if math.prod(reps) <= 6: return self.emit(f"{v.name}.repeat{reps}", v.dtype, v.lo, v.hi, v.reduced)
    if kind == "cat" and math.prod(s) * 3 <= MAX_ELEMENTS:
      a = r.randrange(nd)
      w = self.input(s[:a] + (r.choice([1, 2, s[a]]),) + s[a + 1:], v.dtype if v.is_float or v.is_int or v.dtype == "bool" else None)
      if w.dtype != v.dtype: w = self.emit(f"{w.name}.cast(dtypes.{v.dtype})", v.dtype, w.lo, w.hi)
      lo, hi = min(v.lo, w.lo), max(v.hi, w.hi)
      if v.dtype in RANGES: lo, hi = max(lo, RANGES[v.dtype][0]), min(hi, RANGES[v.dtype][1])
      parts = [v.name, w.name, f"{v.name}.flip({a})"][:r.choice([2, 3])]
      r.shuffle(parts)
      return self.emit(f"Tensor.cat({', '.join(parts)}, dim={a})", v.dtype, lo, hi, v.reduced)
    if kind == "stack" and math.prod(s) * 2 <= MAX_ELEMENTS:
      a = r.randint(0, nd)
      return self.emit(f"Tensor.stack({v.name}, {v.name}.flip({r.randrange(nd)}), dim={a})", v.dtype, v.lo, v.hi, v.reduced)
    if kind == "tri" and nd >= 2:
      val = "False" if v.dtype == "bool" else "0"
      return self.emit(f"{v.name}.{r.choice(['tril', 'triu'])}({r.randint(-2, 2)})", v.dtype, min(v.lo, 0), max(v.hi, 0), v.reduced) \
        if val == "0" else v
    if kind == "interp" and v.is_float:
      k = r.randint(1, min(2, nd))
      size = tuple(max(1, min(64, x * r.choice([2, 3]) // r.choice([1, 2]))) for x in s[-k:])
      if math.prod(s[:-k]) * math.prod(size) > MAX_ELEMENTS: return v
      mode = r.choice(["linear", "nearest", "nearest-exact"])
      ac = ", align_corners=True" if mode == "linear" and r.random() < 0.5 else ""
      return self.emit(f"{v.name}.interpolate({size}, mode='{mode}'{ac})", v.dtype, v.lo, v.hi, v.reduced)
    if kind == "chunk":
      a = r.randrange(nd)
      k = r.choice([2, 3])
      if s[a] >= k: return self.emit(f"{v.name}.chunk({k}, {a})[{r.randrange(k)}]", v.dtype, v.lo, v.hi, v.reduced)
    if kind == "unfold":
      a = r.randrange(nd)
      size = r.randint(1, min(s[a], 4))
      if math.prod(s) * size <= MAX_ELEMENTS and nd < 4:
        return self.emit(f"{v.name}.unfold({a}, {size}, {r.choice([1, 2, 3])})", v.dtype, v.lo, v.hi, v.reduced)
    return self.movement(v)

  # ---- a program ----

  def step(self, v: V) -> V:
    r = self.rng.random()
    if self.extended and self.rng.random() < 0.3: return self.layer(v)
    if r < 0.25: return self.movement(v)
    if r < 0.42: return self.unary(v)
    if r < 0.62: return self.binary(v)
    if r < 0.72: return self.cast(v)
    if r < 0.86: return self.reduce(v) if len(v.shape) > 0 else v
    if r < 0.91: return self.matmul(v) if len(v.shape) > 0 else v
    if r < 0.95: return self.reduce_of_broadcast(v)
    if r < 0.98: return self.index(v)
    return self.logic(v)

  def build(self):
    """1 or 2 chains of 3 to 8 steps from fresh inputs; returns the tensors to realize."""
    outs = []
    for _ in range(self.rng.choice([1, 1, 2])):
      v = self.input(self.shape())
      for _ in range(self.rng.randint(3, 8)):
        v = self.step(v)
        if self.rng.random() < 0.1: v = self.emit(f"{v.name}.contiguous()", v.dtype, v.lo, v.hi, v.reduced)
      outs.append(v)
    self.lines.append(f"Tensor.realize({', '.join(v.name for v in outs)})")
    return [v.t for v in outs]


def programs(seed: int, count: int):
  """(index, source text, output tensors) for `count` programs; program i depends on (seed, i) only.
  A program tinygrad cannot build is returned with outputs None and the error as its last line."""
  for i in range(count):
    p = Program(random.Random(f"uopcg-fuzz:{seed}:{i}"), seed * 100000 + i, seed >= EXTENDED_FROM)
    try:
      outs = p.build()
    except Exception as e:  # noqa: BLE001 (tinygrad refused the program while building it: reported, skipped)
      p.lines.append(f"# tinygrad: {type(e).__name__}: {str(e)[:200]}")
      outs = None
    yield i, "\n".join(p.lines), outs
