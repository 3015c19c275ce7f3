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
NARROW = ["int8", "uint8", "int16"]  # cast targets only (see above)
RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint32": (0, 2**32 - 1),
          "int32": (-2**31, 2**31 - 1)}
INT_LIMIT = 2**29  # int32 values stay below it, so + - * of two tracked values are checked before they overflow


def inp(shape, dtype, lo, hi, seed):
  """A deterministic input: uniform floats in [lo, hi] or integers in [lo, hi], as a device tensor."""
  r = random.Random(seed)
  n = math.prod(shape)
  if dtype in ("float32", "bfloat16"): vals = [round(r.uniform(lo, hi), 4) for _ in range(n)]
  elif dtype == "bool": vals = [r.random() < 0.5 for _ in range(n)]
  else: vals = [r.randint(int(lo), int(hi)) for _ in range(n)]
  t = Tensor(vals, dtype=getattr(dtypes, "float32" if dtype == "bfloat16" else dtype)).reshape(shape)
  return t.cast(dtypes.bfloat16) if dtype == "bfloat16" else t


class V:
  """A value of the program: its variable name, dtype name, interval, and whether a float reduction
  made it (another reduction order may move it slightly: comparisons and truncations of it are avoided)."""
  def __init__(self, name, t, dtype, lo, hi, reduced=False):
    self.name, self.t, self.dtype, self.lo, self.hi, self.reduced = name, t, dtype, float(lo), float(hi), reduced

  @property
  def shape(self): return tuple(self.t.shape)

  @property
  def is_float(self): return self.dtype in ("float32", "bfloat16")

  @property
  def mag(self): return max(abs(self.lo), abs(self.hi))


class Program:
  def __init__(self, rng: random.Random, seed_base: int):
    self.rng, self.seed_base, self.lines, self.env, self.n = rng, seed_base, [], {"Tensor": Tensor, "dtypes": dtypes, "inp": inp}, 0

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
    dtype = dtype or r.choice([FLOAT] * 5 + [INT] * 2 + ["bool", "uint8", "int8", "bfloat16"])
    lo, hi = {"float32": (-2.0, 2.0), "bfloat16": (-2.0, 2.0), "int32": (-50, 50), "bool": (0, 1), "uint8": (0, 255),
              "int8": (-128, 127)}[dtype]
    if dtype == FLOAT and r.random() < 0.3: lo, hi = r.choice([(0.0, 1.0), (-10.0, 10.0), (0.5, 3.0)])
    seed = self.seed_base * 1000 + self.n
    return self.emit(f"inp({shape}, '{dtype}', {lo}, {hi}, seed={seed})", dtype, lo, hi)

  # ---- keeping values in range ----

  def to_compute(self, v: V) -> V:
    """A value that arithmetic may use: narrow ints, bool and uint32 become int32 or float32."""
    if v.dtype in (FLOAT, INT, "bfloat16"): return v
    if v.dtype == "uint32" and v.hi < INT_LIMIT: return self.emit(f"{v.name}.cast(dtypes.int32)", INT, v.lo, v.hi)
    to = self.rng.choice([FLOAT, INT]) if v.dtype != "uint32" else FLOAT
    return self.emit(f"{v.name}.cast(dtypes.{to})", to, v.lo, v.hi)

  def tame(self, v: V) -> V:
    """Bring a value whose interval grew large back to a small one."""
    if v.is_float and v.mag > 1e4:
      return self.emit(f"{v.name} * {1.0 / v.mag!r}", v.dtype, v.lo / v.mag, v.hi / v.mag, v.reduced)
    if v.dtype == INT and v.mag > 2**20:
      return self.emit(f"{v.name} % 1000", INT, 0, 999)  # floor modulo: non-negative for a positive divisor
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
    if r.random() < 0.25 and len(v.shape) > 0:
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
      if op == "abs": return self.emit(f"{v.name}.abs()", INT, 0, v.mag)
      if op == "neg": return self.emit(f"-{v.name}", INT, -v.hi, -v.lo)
      if op == "square" and v.mag < 2**14: return self.emit(f"{v.name} * {v.name}", INT, 0, v.mag ** 2)
      return self.emit(f"{v.name}.float()", FLOAT, v.lo, v.hi)
    op = r.choice(["exp", "log", "sqrt", "sin", "recip", "abs", "relu", "sigmoid", "gelu", "tanh", "neg", "exp2", "cos"])
    d, rd = v.dtype, v.reduced
    if op in ("exp", "exp2"):
      if v.mag > 20: v = self.emit(f"{v.name}.tanh() * 4", d, -4, 4, rd)
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
    ops = ["+", "-", "*", "/", "max", "min", "where"] + (["//", "%", "&", "|", "^", "<<", ">>"] if d == INT else [])
    op = r.choice(ops)
    prods = [a * b for a in (v.lo, v.hi) for b in (wlo, whi)]
    if op == "+": lo, hi = v.lo + wlo, v.hi + whi
    elif op == "-": lo, hi = v.lo - whi, v.hi - wlo
    elif op == "*": lo, hi = min(prods), max(prods)
    if op in ("+", "-", "*"):
      if d == INT and max(abs(lo), abs(hi)) >= INT_LIMIT: op = "max"
      else: return self.tame(self.emit(f"{v.name} {op} {wname}", d, lo, hi, rd))
    if op == "/":
      if d == INT: return self.emit(f"{v.name}.float() / ({wname} * 0 + 3)", FLOAT, v.lo / 3, v.hi / 3)
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
    if op in ("//", "%"):
      den = f"({wname}.abs() % 7 + 1)" if w is not None else repr(r.choice([3, 7, -4, 13]))
      if op == "//": return self.emit(f"{v.name} // {den}", INT, -v.mag, v.mag)
      return self.emit(f"{v.name} % {den}", INT, -13, 13)
    if op in ("&", "|", "^"):
      m = 2 ** math.ceil(math.log2(max(v.mag, abs(wlo), abs(whi)) + 2))
      return self.emit(f"{v.name} {op} {wname}", INT, -m, m)
    k = r.randint(0, 6)
    if op == "<<" and v.mag * 2 ** k < INT_LIMIT: return self.emit(f"{v.name} << {k}", INT, v.lo * 2 ** k, v.hi * 2 ** k)
    return self.emit(f"{v.name} >> {k}", INT, min(v.lo, 0), max(v.hi, 0))

  # ---- casts ----

  def cast(self, v: V) -> V:
    r = self.rng
    to = r.choice([FLOAT, INT, "int8", "uint8", "int16", "uint32", "bool", "bfloat16"])
    if to == v.dtype: return v
    if v.dtype == "bfloat16" and to not in (FLOAT, "bool"): v = self.emit(f"{v.name}.float()", FLOAT, v.lo, v.hi, v.reduced)
    if to == "bool":
      return self.emit(f"{v.name}.cast(dtypes.bool)", "bool", 0, 1)
    if to in (FLOAT, "bfloat16"):
      return self.emit(f"{v.name}.cast(dtypes.{to})", to, v.lo, v.hi, v.reduced)
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
    ax, kd = self.axes(v), r.random() < 0.5
    n = math.prod(v.shape[a] for a in ax)
    op = r.choice(["sum", "sum", "max", "min", "mean", "prod", "two", "argmax", "cumsum", "softmax", "norm"])
    if op in ("max", "min"):
      return self.emit(f"{v.name}.{op}(axis={ax}, keepdim={kd})", v.dtype, v.lo, v.hi, v.reduced)
    if op == "argmax" and not v.reduced:
      a = r.randrange(len(v.shape))
      return self.emit(f"{v.name}.{r.choice(['argmax', 'argmin'])}(axis={a}, keepdim={kd})", INT, 0, v.shape[a] - 1)
    v = self.to_compute(v)
    if v.dtype == INT and v.mag * n >= INT_LIMIT: v = self.emit(f"{v.name} % 100", INT, 0, 99)
    d = v.dtype
    if op == "cumsum":
      a = r.randrange(len(v.shape))
      return self.tame(self.emit(f"{v.name}.cumsum(axis={a})", d, min(0, v.lo * v.shape[a]), max(0, v.hi * v.shape[a]), v.is_float))
    if op == "mean":
      return self.emit(f"{v.name}.mean(axis={ax}, keepdim={kd})", FLOAT if d == INT else d, v.lo, v.hi, True)
    if op == "prod" and n <= 40:  # factors in [0.5, 1.5] (floats) or {1, 2} (ints): no overflow
      if d == INT: f = self.emit(f"({v.name} % 2) + 1", INT, 1, 2)
      else: f = self.emit(f"{v.name}.sigmoid() + 0.5", d, 0.5, 1.5, v.reduced)
      return self.tame(self.emit(f"{f.name}.prod(axis={ax}, keepdim={kd})", d, 0.5 ** n if d != INT else 1, f.hi ** n, True))
    if op == "two":  # two reductions of one value in one kernel, fused with elementwise ops
      kind = r.choice(["sum_max", "center"])
      if kind == "sum_max":
        return self.tame(self.emit(f"{v.name}.sum(axis={ax}, keepdim={kd}) * 0.5 + {v.name}.max(axis={ax}, keepdim={kd})",
                                   FLOAT if d == INT else d, min(0, v.lo * n), max(0, v.hi * n) + v.hi, True))
      return self.emit(f"{v.name} - {v.name}.mean(axis={ax}, keepdim=True)", FLOAT if d == INT else d, -2 * v.mag, 2 * v.mag, True)
    if op in ("softmax", "norm") and v.is_float:
      a = r.randrange(len(v.shape))
      if op == "softmax": return self.emit(f"{v.name}.softmax(axis={a})", d, 0, 1, True)
      return self.emit(f"({v.name} - {v.name}.mean(axis={a}, keepdim=True)) * ({v.name}.var(axis={a}, keepdim=True, correction=0)"
                       f" + 1e-3).rsqrt()", d, -1e3 * v.mag, 1e3 * v.mag, True)
    return self.tame(self.emit(f"{v.name}.sum(axis={ax}, keepdim={kd})", d, min(0, v.lo * n), max(0, v.hi * n), v.is_float))

  def reduce_of_broadcast(self, v: V) -> V:
    """x[..., None] op y[None, ...] summed: a reduce whose source is a broadcast of two values."""
    r = self.rng
    v = self.to_compute(v)
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
    v = self.to_compute(v)
    if v.dtype == "bfloat16": v = self.emit(f"{v.name}.float()", FLOAT, v.lo, v.hi, v.reduced)
    if v.dtype == INT and v.mag > 1000: v = self.emit(f"{v.name} % 100", INT, 0, 99)
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

  # ---- a program ----

  def step(self, v: V) -> V:
    r = self.rng.random()
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
    p = Program(random.Random(f"uopcg-fuzz:{seed}:{i}"), seed * 100000 + i)
    try:
      outs = p.build()
    except Exception as e:  # noqa: BLE001 (tinygrad refused the program while building it: reported, skipped)
      p.lines.append(f"# tinygrad: {type(e).__name__}: {str(e)[:200]}")
      outs = None
    yield i, "\n".join(p.lines), outs
