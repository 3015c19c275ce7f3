"""Do two rendered kernels (OpenCL C / C as tinygrad and uopcg write them) compute the same values in exact
arithmetic, differing only by the order and grouping of `+` and `*`? That is the class of symbolic divergence 3
(docs/DIVERGENCES.md): uopcg folds like terms, constant chains and moves constants only on integers, where
tinygrad also does so on floats (`x*2+x` against `x*3`, `(x*c)*c` against `x*(c*c)`), which changes a float
result's rounding but nothing else.

`same_up_to_reassociation(a, b)` inlines every temporary assigned once (`alu3`, `val0`, `cast1`, ...) into the
statements that remain (stores, accumulator updates, control lines), brings each expression to a normal form
(sums and products flattened, operands sorted, like terms and numeric constants combined, a constant factor
distributed over a sum) and compares the statements of each block as multisets. Everything else (casts,
divisions, comparisons, calls, selects) must match exactly, up to the operand order of commutative operators.
"The same values" is meant in exact arithmetic: infinities and NaN are not considered (`x-x` is 0). Anything it
cannot parse makes it answer False: it is a classifier for a differential test's report, erring towards "read
this by hand".
"""
import collections
import hashlib
import re
import struct

_TOKEN = re.compile(r"\s*(0x[0-9a-fA-F]+[uUlL]*|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?[fFuUlLh]*|[A-Za-z_]\w*"
                    r"|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>!~&|^?:(),.\[\]])")
_TYPE = re.compile(r"(?:unsigned|signed|bool|char|uchar|short|ushort|int|uint|long|ulong|half|float|double|size_t)\d*$")
_QUAL = {"__global", "__local", "__constant", "const", "volatile", "unsigned", "signed", "__private"}
_BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7, "<=": 7, ">=": 7,
           "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}
_COMMUTATIVE = {"||", "&&", "|", "^", "&", "==", "!="}
_FLOAT_FORMAT = {"half": "e", "float": "f", "double": "d"}


def _tokens(s: str) -> list:
  out, pos, s = [], 0, s.rstrip()
  while pos < len(s):
    m = _TOKEN.match(s, pos)
    if not m: raise ValueError(f"cannot tokenize {s[pos:pos + 20]!r}")
    out.append(m.group(1))
    pos = m.end()
  return out


def _number(tok: str):
  """A literal's value and whether it is a float literal (None for a non-number)."""
  body = tok.rstrip("uUlL")
  if tok.startswith("0x"): return int(body, 16), False
  if not re.match(r"(\d|\.\d)", tok): return None
  is_float = any(ch in tok for ch in ".eEfFh")
  return float(body.rstrip("fFh")), is_float


class _Canon:
  """Hash-consed normal forms: every node is a short digest of its operator and its children's digests, so a
  temporary used many times is not copied into every user (inlining a whole kernel stays linear)."""
  def __init__(self):
    self.node = {}

  def mk(self, n: tuple) -> str:
    k = hashlib.sha1(repr(_rounded(n)).encode()).hexdigest()[:20]
    self.node[k] = n
    return k

  def num(self, v: float, is_float: bool) -> str:
    return self.mk(("num", is_float, v))

  def terms(self, k) -> tuple:
    """A summand as (coefficient, monomial digest)."""
    n = self.node[k]
    if n[0] == "mul":
      return n[2], (n[1][0] if len(n[1]) == 1 else self.mk(("mul", n[1], 1.0)))
    return 1.0, k

  def add(self, ks: list) -> str:
    coef, const, is_float = collections.OrderedDict(), 0.0, False
    for k in ks:
      n = self.node[k]
      if n[0] == "add":
        for t, c in n[1]: coef[t] = coef.get(t, 0.0) + c
        const += n[2]
      elif n[0] == "num":
        const += n[2]
        is_float |= n[1]
      else:
        c, t = self.terms(k)
        coef[t] = coef.get(t, 0.0) + c
    items = tuple(sorted((t, c) for t, c in coef.items() if c != 0.0))
    if not items: return self.num(const, is_float)
    if len(items) == 1 and const == 0.0: return self.mul([items[0][0], self.num(items[0][1], False)])
    return self.mk(("add", items, const))

  def mul(self, ks: list) -> str:
    factors, coef, is_float = [], 1.0, False
    for k in ks:
      n = self.node[k]
      if n[0] == "mul": factors += n[1]; coef *= n[2]
      elif n[0] == "num": coef *= n[2]; is_float |= n[1]
      else: factors.append(k)
    if not factors: return self.num(coef, is_float)
    if len(factors) == 1 and coef == 1.0: return factors[0]
    if len(factors) == 1 and self.node[factors[0]][0] == "add":  # c*(x+y+k) -> c*x+c*y+c*k
      n = self.node[factors[0]]
      return self.add([self.mul([t, self.num(c * coef, False)]) for t, c in n[1]] + [self.num(n[2] * coef, False)])
    return self.mk(("mul", tuple(sorted(factors)), coef))

  def op(self, name: str, ks: list) -> str:
    if name == "+": return self.add(ks)
    if name == "*": return self.mul(ks)
    if name == "-": return self.add([ks[0], self.mul([ks[1], self.num(-1.0, False)])])
    if name in (">", ">="): name, ks = "<" if name == ">" else "<=", [ks[1], ks[0]]
    if name in _COMMUTATIVE: ks = sorted(ks)
    return self.mk(("op", name, tuple(ks)))


def _rounded(n):
  """A node as its digest sees it: numbers to 7 significant digits, since a constant tinygrad folded in float and
  the chain uopcg keeps differ in the last bits (the node itself keeps full precision for further folding)."""
  if isinstance(n, float): return f"{n:.6e}"
  if isinstance(n, tuple): return tuple(_rounded(x) for x in n)
  return n


class _Parser:
  """Precedence climbing over one C expression; names in `defs` are replaced by their normal form."""
  def __init__(self, canon: _Canon, toks: list, defs: dict):
    self.c, self.t, self.i, self.defs = canon, toks, 0, defs

  def peek(self, o=0):
    return self.t[self.i + o] if self.i + o < len(self.t) else None

  def take(self, want=None):
    tok = self.peek()
    if tok is None or (want is not None and tok != want): raise ValueError(f"expected {want!r}, got {tok!r}")
    self.i += 1
    return tok

  def done(self):
    if self.i != len(self.t): raise ValueError(f"trailing {self.t[self.i:]!r}")

  def expr(self, prec=0):
    lhs = self.unary()
    while True:
      tok = self.peek()
      if tok == "?" and prec == 0:
        self.take()
        a = self.expr()
        self.take(":")
        b = self.expr()
        lhs = self.c.mk(("op", "?:", (lhs, a, b)))
        continue
      p = _BINARY.get(tok)
      if p is None or p <= prec: return lhs
      self.take()
      lhs = self.c.op(tok, [lhs, self.expr(p)])

  def cast_type(self):
    """The type of a cast starting at the current `(`, or None when it is a parenthesized expression."""
    j, words = self.i + 1, []
    while j < len(self.t) and (self.t[j] in _QUAL or _TYPE.match(self.t[j])): words.append(self.t[j]); j += 1
    while j < len(self.t) and self.t[j] == "*": words.append("*"); j += 1
    if not words or words == ["*"] or j >= len(self.t) or self.t[j] != ")": return None
    if not any(_TYPE.match(w) for w in words): return None
    self.i = j + 1
    return " ".join(words)

  def unary(self):
    tok = self.peek()
    if tok == "-": self.take(); return self.c.mul([self.unary(), self.c.num(-1.0, False)])
    if tok == "+": self.take(); return self.unary()
    if tok in ("!", "~", "*"): self.take(); return self.c.mk(("op", "u" + tok, (self.unary(),)))
    if tok == "(":
      ty = self.cast_type()
      if ty is not None:
        if self.peek() == "(":  # (float4)(a,b,c,d) builds a vector; (float)(x) casts
          self.take("(")
          parts = [self.expr()]
          while self.peek() == ",": self.take(); parts.append(self.expr())
          self.take(")")
          return self.postfix(self.c.mk(("vec", ty, tuple(parts))) if len(parts) > 1 else self.cast(ty, parts[0]))
        return self.cast(ty, self.unary())
    return self.postfix(self.primary())

  def cast(self, ty: str, k: str) -> str:
    """A cast; a literal cast to a float type (`((half)(3.0f))`) is the number it rounds to, so it folds."""
    n = self.c.node[k]
    if n[0] == "num" and ty in _FLOAT_FORMAT:
      return self.c.num(struct.unpack(_FLOAT_FORMAT[ty], struct.pack(_FLOAT_FORMAT[ty], n[2]))[0], True)
    return self.c.mk(("cast", ty, (k,)))

  def primary(self):
    tok = self.take()
    if tok == "(":
      e = self.expr()
      self.take(")")
      return e
    num = _number(tok)
    if num is not None: return self.c.num(float(num[0]), num[1])
    if not re.match(r"[A-Za-z_]\w*$", tok): raise ValueError(f"unexpected {tok!r}")
    if self.peek() == "(":
      self.take()
      args = []
      while self.peek() != ")":
        args.append(self.expr())
        if self.peek() == ",": self.take()
      self.take(")")
      return self.c.mk(("call", tok, tuple(args)))
    return self.defs.get(tok) or self.c.mk(("atom", tok))

  def postfix(self, k):
    while self.peek() in (".", "["):
      if self.take() == ".": k = self.c.mk(("member", self.take(), (k,)))
      else:
        i = self.expr()
        self.take("]")
        k = self.c.mk(("op", "[]", (k, i)))
    return k


_DECL = re.compile(r"((?:(?:const|__local|unsigned)\s+)*[A-Za-z_]\w*)\s+(\w+)\s*=\s*(.*);$")


def _statements(src: str, canon: _Canon) -> collections.Counter:
  """Each statement that is not the single assignment of a temporary, in normal form, with the control lines
  of its enclosing blocks."""
  lines = [re.sub(r"/\*.*?\*/", "", ln).strip() for ln in src.splitlines()]
  assigned = collections.Counter()
  for ln in lines:
    m = _DECL.match(ln) or re.match(r"()(\w+)\s*(?:\+|-|\*)?=[^=]", ln)
    if m: assigned[m.group(2)] += 1 if not re.match(r"\w+\s*[-+*]=", ln) else 2
  defs, out, ctx = {}, collections.Counter(), []

  def norm(text):
    p = _Parser(canon, _tokens(text), defs)
    k = p.expr()
    p.done()
    return k

  for ln in lines:
    if not ln: continue
    m = _DECL.match(ln)
    if m and not ln.startswith(("for ", "for(")):
      if assigned[m.group(2)] == 1: defs[m.group(2)] = norm(m.group(3))
      else: out[(tuple(ctx), ("decl", m.group(1), m.group(2), norm(m.group(3))))] += 1
    elif ln == "}": ctx.pop()
    elif ln.endswith("{"):
      c = re.match(r"if\s*\((.*)\)\s*\{$", ln)
      ctx.append(("if", norm(c.group(1))) if c else ("raw", ln))
    elif " = " in ln or " += " in ln:
      op = " += " if " += " in ln.split(" = ")[0] + " = " else " = "
      lhs, rhs = ln.split(op, 1)
      if not rhs.endswith(";"): raise ValueError(f"statement {ln!r}")
      out[(tuple(ctx), ("set", op.strip(), norm(lhs), norm(rhs[:-1])))] += 1
    else: out[(tuple(ctx), ("raw", ln))] += 1
  if ctx: raise ValueError("unbalanced braces")
  return out


def same_up_to_reassociation(a: str, b: str) -> bool:
  canon = _Canon()
  try:
    return _statements(a, canon) == _statements(b, canon)
  except (ValueError, IndexError, KeyError):
    return False


def _kernel(*body: str) -> str:
  return "\n".join(["__kernel void k(__global float* data0, __global float* data1) {",
                    "  float val0 = (*(data1+0));", "  float val1 = (*(data1+1));", *("  " + ln for ln in body), "}"])


def self_test() -> int:
  """Pairs that differ only by the grouping of + and * (same), and pairs that compute something else (not)."""
  same = [  # tinygrad's form, uopcg's form
    (["*(data0+0) = (exp2(val0)*3.0f);"], ["float alu0 = exp2(val0);", "*(data0+0) = ((alu0*2.0f)+alu0);"]),
    (["*(data0+0) = (val0*2.0184893393762895f);"], ["*(data0+0) = (val0*1.4207354924039484f*1.4207354924039484f);"]),
    (["*(data0+0) = ((val0*0.5f)+0.5f);"], ["*(data0+0) = ((val0+1.0f)*0.5f);"]),
    (["float alu0 = (val0-val1);", "float alu1 = sin(val1);", "*(data0+1) = alu1;", "*(data0+0) = (alu0*11.0f*0.0078125f);"],
     ["float alu0 = sin(val1);", "float alu1 = ((-val1)+val0);", "*(data0+0) = (0.0859375f*alu1);", "*(data0+1) = alu0;"]),
    (["float acc0 = 0.0f;", "for (int Ridx0 = 0; Ridx0 < 4; Ridx0++) {", "  float val2 = (*(data1+(Ridx0+2)));",
      "  acc0 = (acc0+(val2*val0));", "}", "*(data0+0) = ((acc0<val1)?val1:acc0);"],
     ["float acc0 = 0.0f;", "for (int Ridx0 = 0; Ridx0 < 4; Ridx0++) {", "  float val2 = (*(data1+(2+Ridx0)));",
      "  acc0 = (acc0+(val0*val2));", "}", "*(data0+0) = ((acc0<val1)?val1:acc0);"]),
    (["half alu0 = ((half)(val0));", "*(data0+0) = ((float)((alu0*((half)(3.0f)))+alu0));"],
     ["half alu0 = ((half)(val0));", "*(data0+0) = ((float)((alu0*((half)(2.0f)))+alu0+alu0));"]),
  ]
  other = [
    (["*(data0+0) = (val0-val1);"], ["*(data0+0) = (val1-val0);"]),
    (["*(data0+0) = (val0/3.0f);"], ["*(data0+0) = (val0*0.3333333432674408f);"]),  # a division is not a product
    (["*(data0+0) = ((float)((half)(val0)));"], ["*(data0+0) = val0;"]),
    (["*(data0+0) = val0;"], ["*(data0+1) = val0;"]),
    (["*(data0+0) = (val0*2.0184f);"], ["*(data0+0) = (val0*1.4207354924039484f*1.4207354924039484f);"]),
    (["*(data0+0) = ((val0<val1)?val1:val0);"], ["*(data0+0) = ((val1<val0)?val1:val0);"]),
    (["*(data0+0) = (val0*((half)(0.1f)));"], ["*(data0+0) = (val0*0.1f);"]),  # half's 0.1 is another number
    (["for (int Ridx0 = 0; Ridx0 < 4; Ridx0++) {", "  *(data0+Ridx0) = val0;", "}"], ["*(data0+0) = val0;"]),
    (["*(data0+0) = val0;"], ["*(data0+0) = val0 @ val1;"]),  # what it cannot parse is not classified
  ]
  bad = [(a, b) for a, b in same if not same_up_to_reassociation(_kernel(*a), _kernel(*b))]
  bad += [(a, b) for a, b in other if same_up_to_reassociation(_kernel(*a), _kernel(*b))]
  for a, b in bad: print(f"FAIL {a} vs {b}")
  print(f"source_algebra self-test: {len(same) + len(other) - len(bad)} of {len(same) + len(other)} pairs classified as expected")
  return 1 if bad else 0


if __name__ == "__main__":
  import sys
  if sys.argv[1:] != ["--self-test"]: sys.exit("usage: python3 tools/source_algebra.py --self-test")
  sys.exit(self_test())
