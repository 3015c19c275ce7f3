#!/usr/bin/env python3
"""The tinygrad Tensor API that no other differential set calls, as model_differential.py sets.

tools/model_differential.py captures every kernel a tinygrad program runs on PoCL and checks uopcg on
it (from the post-opts graph and from the AST, with random opt variants). Its models and
tools/tensor_fuzz.py call about half of tinygrad 0.14's Tensor methods; the sets here call the rest
that lower to kernels: inverse and hyperbolic functions, sorting (bitonic networks: argsort, topk,
randperm), hashing (keccak's 64-bit rotations), einsum, diagonals, losses, unpooling, masked selection,
cumulative minimum and maximum, dropout. Each set's inputs stay inside the op's domain (no NaN or
infinity the dtype's definition and tinygrad could disagree on).

  python3 tools/tensor_api_sweep.py --uopcg build-fuzz/uopcg --out /tmp/api --variants 2 [--only api_math ...]
  python3 tools/tensor_api_sweep.py --list       # which Tensor methods no set or other tool calls

Options other than --list are model_differential.py's (--only takes these sets' names).
"""
import inspect
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_differential as md  # noqa: E402

from tinygrad import Tensor, dtypes  # noqa: E402


def uniform(seed: int, *shape, lo=-1.0, hi=1.0, dtype=dtypes.float32) -> Tensor:
  """Host-drawn data (a copy, not a captured kernel), rounded to 4 decimals."""
  return md.host_tensor(md.np.round(md.np.random.default_rng(seed).uniform(lo, hi, shape), 4), dtype)


def run_api_math():
  """Inverse and hyperbolic functions, log10, logaddexp, logsigmoid, copysign, fmod, lerp, isclose and
  isfinite, the activations the models lack, and 64-bit integer shifts and complements."""
  x = uniform(1, 5, 37, lo=-0.9, hi=0.9)
  y = uniform(2, 5, 37, lo=-3.0, hi=3.0)
  big = uniform(3, 5, 37, lo=1.1, hi=9.0)
  outs = [x.asin() + x.acos() * 2 + x.atan() * 3, big.acosh() + y.asinh() * 2 + x.atanh() * 3, y.cosh() - y.sinh(),
          big.log10(), y.logaddexp(x * 4), y.logsigmoid(), y.copysign(x), y.fmod(big), y.fmod(-1.75), x.lerp(y, 0.3),
          x.lerp(y, big / 10), y.isclose(x * 3, rtol=0.1, atol=0.05).where(1.0, 0.0), (y / (x + 0.95)).isfinite().where(y, -1.0),
          y.celu(0.7) + y.elu(1.3) + y.selu(), y.softsign() + y.hardtanh(-0.5, 0.8) + y.quick_gelu() + y.swish(), -y]
  a = Tensor.randint(7, 11, low=-(2**20), high=2**20, dtype=dtypes.int32).cast(dtypes.int64)
  s = Tensor.randint(7, 11, low=0, high=20, dtype=dtypes.int32).cast(dtypes.int64)
  outs += [(a * 4099 << 3) + (a >> 2) - (~a), a.lshift(5) ^ a.rshift(3), a.bitwise_and(0xFF0F) | a.bitwise_or(3).bitwise_xor(s),
           (a.cast(dtypes.uint64) * 2654435761).cast(dtypes.uint32), a.bitwise_not().cast(dtypes.int32)]
  Tensor.realize(*outs)


def run_api_shape():
  """Diagonals and identity matrices, meshgrid, linspace, repeat_interleave, triu/tril, einsum in five
  forms, rearrange, pad_to/shrink_to, cumulative minimum and maximum, std/var with their means, softmin,
  normalize."""
  m = uniform(4, 9, 9, lo=-2.0, hi=2.0)
  b = uniform(5, 3, 7, 5)
  c = uniform(6, 3, 5, 6)
  v = uniform(7, 11)
  outs = [m.diagonal(), m.diagonal(offset=2), v.diag(), Tensor.eye(7, 5) * 3, *v.meshgrid(v[:5]),
          Tensor.linspace(-1.5, 2.5, 13), v.repeat_interleave(3), m.triu(1) - m.tril(-2),
          Tensor.einsum("bij,bjk->bik", b, c), Tensor.einsum("ii->i", m), Tensor.einsum("bij->bji", b),
          Tensor.einsum("ij,j->i", m, v[:9]), Tensor.einsum("bij,bij->b", b, b),
          b.rearrange("b i j -> (b j) i"), m.pad_to(11, 12), b.shrink_to(2, 6, 4),
          *m.cummin(axis=1), *b.cummax(axis=1), *m.std_mean(axis=0), *b.var_mean(axis=(0, 2), correction=0),
          m.softmin(axis=-1), b.normalize(dim=2)]
  Tensor.realize(*outs)


def run_api_sort():
  """Bitonic sorting networks: sort and argsort (both directions, an odd length), topk, randperm."""
  Tensor.manual_seed(11)
  x = uniform(8, 3, 13, lo=-5.0, hi=5.0)
  outs = [*x.sort(dim=-1), *x.sort(dim=0, descending=True), x.argsort(dim=-1, descending=True), *x.topk(4, dim=-1),
          *x.topk(2, dim=0, largest=False), Tensor.randperm(19)]
  i = Tensor.randint(5, 9, low=-50, high=50, dtype=dtypes.int32)
  outs += [*i.sort(dim=-1), i.argsort(dim=0)]
  Tensor.realize(*outs)


def run_api_hash():
  """keccak (sha3_256 and shake_128) over bytes: 64-bit rotations, xors and the round constants."""
  data = Tensor(list(range(200)), dtype=dtypes.uint8).reshape(2, 100)
  Tensor.realize(data.keccak("sha3_256"), data.keccak("shake_128"))


def run_api_loss():
  """Losses: cross_entropy (with label smoothing), nll_loss (weights, an ignored index, every
  reduction), binary cross-entropy on probabilities and on logits; max_unpool2d of max_pool2d's
  indices; masked_select and nonzero at a fixed size; dropout in training mode."""
  Tensor.manual_seed(13)
  logits = uniform(9, 6, 10, lo=-3.0, hi=3.0)
  y = Tensor([3, 0, 9, 4, 4, 7], dtype=dtypes.int32)
  w = uniform(10, 10, lo=0.1, hi=2.0)
  p = uniform(11, 6, 10, lo=0.05, hi=0.95)
  t = uniform(12, 6, 10, lo=0.0, hi=1.0)
  outs = [logits.cross_entropy(y), logits.cross_entropy(y, label_smoothing=0.1, reduction="sum"),
          logits.log_softmax().nll_loss(y, weight=w, ignore_index=4), logits.log_softmax().nll_loss(y, reduction="none"),
          p.binary_crossentropy(t), logits.binary_crossentropy_logits(t, reduction="none")]
  img = uniform(13, 1, 2, 9, 9)
  pooled, idx = img.max_pool2d(kernel_size=2, stride=2, return_indices=True)
  outs += [pooled, pooled.max_unpool2d(idx, kernel_size=(2, 2), stride=2, output_size=(9, 9))]
  v = uniform(14, 23, lo=-1.0, hi=1.0)
  outs += [v.masked_select(v > 0.2, size=23), (v > 0).nonzero(size=23)]
  Tensor.training = True
  try:
    outs.append(v.dropout(0.3))
  finally:
    Tensor.training = False
  Tensor.realize(*outs)


SETS = {"api_math": run_api_math, "api_shape": run_api_shape, "api_sort": run_api_sort, "api_hash": run_api_hash,
        "api_loss": run_api_loss}


def uncalled() -> list[str]:
  """Tensor methods that neither these sets nor the other differential tools call."""
  here = os.path.dirname(os.path.abspath(__file__))
  src = "".join(open(os.path.join(here, f)).read() for f in ("model_differential.py", "tensor_fuzz.py",
                "known_bugs_differential.py", "fp16_differential.py", "tensor_api_sweep.py"))
  names = [n for n, f in inspect.getmembers(Tensor) if not n.startswith("_") and callable(f)]
  return [n for n in names if not re.search(r"\." + n + r"\b", src)]


if __name__ == "__main__":
  if "--list" in sys.argv:
    print(" ".join(uncalled()))
    sys.exit(0)
  md.MODELS.update(SETS)
  if "--only" not in sys.argv: sys.argv += ["--only", *SETS]
  sys.exit(md.main())
