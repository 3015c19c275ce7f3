#!/usr/bin/env python3
"""Model-level differential testing against tinygrad: small real architectures written with tinygrad's
Tensor API run on the OpenCL device (PoCL); every kernel tinygrad runs is captured with the buffers it
read and wrote, in the corpus's kernel-file format (docs/json.md), together with a
few random variants from tinygrad's BEAM action space (tinygrad/codegen/opt/search.py, actions and
get_kernel_actions) checked against the same outputs. uopcg then compiles and runs every file.

A developer tool like tools/tinygrad_oracle.py (whose export it reuses); tinygrad is not a build or CI
dependency. The kernels in tests/e2e/models/ were captured by this tool and copied there with --keep.

usage:
  python3 tools/model_differential.py --uopcg build/uopcg [--out /tmp/uopcg_models] [--variants 2]
                                      [--only convnet transformer embedding mlp_adam ops] [--recheck] [--jobs 2]
  python3 tools/model_differential.py --uopcg build/uopcg --only resnet mobilenet gpt2 llama unet yolo half [--extend-heuristic]
  python3 tools/model_differential.py --uopcg build/uopcg --only vit whisper conv3d lstm odd --variants 4 --extend-heuristic
  python3 tools/model_differential.py --uopcg build/uopcg --only double intmix misc --variants 4 --extend-heuristic
  python3 tools/model_differential.py --uopcg build/uopcg --only fuzz [--fuzz-seed 0] [--fuzz-programs 24]
  python3 tools/model_differential.py --out /tmp/uopcg_models --keep tests/e2e/models NAME...   # the CI set
Prints one line per kernel file and a Markdown summary table (the one in docs/model-differential.md);
exit status 1 when a kernel's outputs differ or uopcg fails on it. The realistic models (resnet, mobilenet, gpt2,
llama, unet, yolo, half: layer shapes at which tinygrad's heuristics upcast, use locals and group reductions) and the
further families (vit, whisper, conv3d, lstm, odd: head dims, token counts and sizes that are not powers of two; double,
intmix, misc: float64 layers, integer dtypes and layers no other family has) run when named with --only, a few minutes each. BEAM_PADTO=1 in the environment adds tinygrad's PADTO actions to the variants.
"""
import argparse
import collections
import concurrent.futures
import json
import math
import os
import random
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tinygrad_oracle as oracle  # noqa: E402  (export: the kernel-file JSON of an AST, as tinygrad compiles it)
import tensor_fuzz  # noqa: E402  (the fuzz set's random programs)

from tinygrad import Tensor, Device, Context, Variable, dtypes, nn  # noqa: E402
import tinygrad.codegen as cg  # noqa: E402
import tinygrad.engine.realize as realize  # noqa: E402
from tinygrad.codegen.opt import OptOps  # noqa: E402
from tinygrad.helpers import ContextVar  # noqa: E402
from tinygrad.codegen.opt.postrange import Scheduler  # noqa: E402
from tinygrad.codegen.opt.search import get_kernel_actions  # noqa: E402
from tinygrad.codegen.opt.heuristic import hand_coded_optimizations  # noqa: E402
from tinygrad.uop.ops import Ops, UPat, PatternMatcher  # noqa: E402

# ---- the models (tiny: the whole harness runs in minutes on two cores) ----


class ConvNet:
  """MobileNet-like: a stem conv, a depthwise-separable block (depthwise 3x3, pointwise 1x1), batchnorm
  after each of those three (training mode: batch statistics and running-stat updates), a strided
  depthwise conv with bias, global average pool, a head."""
  def __init__(self):
    self.stem, self.bn0 = nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm(8)
    self.dw, self.bn1 = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False), nn.BatchNorm(8)
    self.pw, self.bn2 = nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm(16)
    self.down = nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16)
    self.head = nn.Linear(16, 10)

  def __call__(self, x: Tensor) -> Tensor:
    x = self.bn0(self.stem(x)).relu()
    x = self.bn1(self.dw(x)).relu6()
    x = self.bn2(self.pw(x)).hardswish()
    x = self.down(x).mean(axis=(2, 3))
    return self.head(x).log_softmax()


def run_convnet():
  Tensor.manual_seed(1)
  net = ConvNet()
  x = Tensor.randn(2, 3, 12, 12)
  with Context(TRAINING=1):
    net(x).realize()
  for bn in (net.bn0, net.bn1, net.bn2): Tensor.realize(bn.running_mean, bn.running_var)
  net(x).realize()  # eval mode: running statistics


class Block:
  """A pre-norm transformer block: layernorm, causal multi-head attention with a KV cache, a GELU MLP."""
  def __init__(self, dim=32, heads=4, max_context=16):
    self.heads, self.hd, self.max_context = heads, dim // heads, max_context
    self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
    self.wq, self.wk, self.wv, self.wo = (nn.Linear(dim, dim, bias=False) for _ in range(4))
    self.up, self.down = nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim)
    self.cache_kv = Tensor.zeros(2, 1, max_context, heads, self.hd).contiguous().realize()

  def attention(self, x: Tensor, start_pos: int) -> Tensor:
    b, t, _ = x.shape
    q, k, v = (w(x).reshape(b, t, self.heads, self.hd) for w in (self.wq, self.wk, self.wv))
    self.cache_kv[:, :, start_pos:start_pos + t].assign(Tensor.stack(k, v)).realize()
    keys, values = self.cache_kv[0, :, :start_pos + t], self.cache_kv[1, :, :start_pos + t]
    q, keys, values = q.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
    mask = Tensor.full((1, 1, t, start_pos + t), float("-inf")).triu(start_pos + 1) if t > 1 else None
    att = q.scaled_dot_product_attention(keys, values, attn_mask=mask)
    return self.wo(att.transpose(1, 2).reshape(b, t, -1))

  def __call__(self, x: Tensor, start_pos: int) -> Tensor:
    h = x + self.attention(self.ln1(x), start_pos)
    return h + self.down(self.up(self.ln2(h)).gelu())


def run_transformer():
  Tensor.manual_seed(2)
  blk = Block()
  blk(Tensor.randn(1, 5, 32), 0).realize()  # prefill
  for pos in (5, 6):  # decode steps through the cache
    blk(Tensor.randn(1, 1, 32), pos).realize()


def timestep_embedding(t: Tensor, dim: int, max_period=10000) -> Tensor:
  half = dim // 2
  freqs = (-math.log(max_period) * Tensor.arange(half, dtype=dtypes.float32) / half).exp()
  args = t[:, None].cast(dtypes.float32) * freqs[None]
  return Tensor.cat(args.cos(), args.sin(), dim=-1)


def run_embedding():
  """Token embedding + sinusoidal positions + a diffusion-style timestep embedding through a SiLU MLP."""
  Tensor.manual_seed(3)
  vocab, dim, seq = 50, 16, 12
  emb, t1, t2 = nn.Embedding(vocab, dim), nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
  tokens = Tensor.randint(2, seq, low=0, high=vocab)
  pos = timestep_embedding(Tensor.arange(seq), dim)  # positional encoding: the same formula on positions
  temb = t2(t1(timestep_embedding(Tensor([3, 981]), dim)).silu())
  (emb(tokens) + pos[None] + temb[:, None]).realize()


def run_mlp_adam():
  """One (and a second) training step of an MLP with Adam: forward, cross-entropy, backward, the update."""
  Tensor.manual_seed(4)
  l1, l2 = nn.Linear(16, 32), nn.Linear(32, 10)
  opt = nn.optim.Adam(nn.state.get_parameters([l1, l2]), lr=1e-2)
  x, y = Tensor.randn(8, 16), Tensor.randint(8, low=0, high=10)
  with Context(TRAINING=1):
    for _ in range(2):
      opt.zero_grad()
      loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y)
      loss.backward()
      opt.step()
      loss.realize()


def run_ops():
  """The tensor ops real models use that the four models above do not: arg-reductions, cumulative sums,
  pooling, resizing, gathers, integer and quantized arithmetic, rounding and transcendental functions,
  and the 16-bit float formats (bfloat16 everywhere; half where the device has cl_khr_fp16)."""
  Tensor.manual_seed(5)
  x = Tensor.randn(2, 4, 10, 10)
  img = Tensor.randint(2, 3, 9, 9, low=0, high=256, dtype=dtypes.uint8)
  ids = Tensor.randint(6, low=0, high=10)
  outs = [
      x.argmax(axis=-1), x.argmin(axis=1), x.max(axis=(2, 3)), x.cumsum(axis=-1), x.flatten(1).cumsum(axis=-1),
      x.max_pool2d(kernel_size=3, stride=2), x.avg_pool2d(kernel_size=2), x.pad((1, 2, 0, 1)).avg_pool2d(kernel_size=3, stride=1),
      x.interpolate((15, 7), mode="linear"), x.interpolate((20, 20), mode="nearest"),
      x.reshape(8, 100).gather(1, ids.reshape(6, 1).expand(6, 3).pad(((0, 2), (0, 0)))),
      (img.cast(dtypes.float32) / 255.0 - 0.5) / 0.25,
      x.clip(-0.5, 0.5), x.sign() * x.abs().sqrt(), x.floor() + x.ceil() * 2 + x.round() * 3 + x.trunc() * 5,
      x.exp2() - x.abs().log2(), x.sin() * x.cos() + x.tan().tanh(), x.erf(), x.pow(3) + x.abs().pow(0.5), x.softmax(axis=-1), x.logsumexp(axis=1),
      x.cast(dtypes.bfloat16).exp().cast(dtypes.float32), (x.cast(dtypes.bfloat16) * 3 + 1).sum(axis=-1).cast(dtypes.float32),
  ]
  a = Tensor.randint(7, 9, low=-100, high=100, dtype=dtypes.int32)
  b = Tensor.randint(7, 9, low=1, high=13, dtype=dtypes.int32)
  outs += [a // b, a % b, a * b + (a << 2) - (a >> 1), (a & 0x55) | (b ^ 3), a.maximum(b) - a.minimum(-b), (a < b).where(a, b),
           (a.cast(dtypes.int8) * 3).cast(dtypes.int32), a.cast(dtypes.uint16).cast(dtypes.float32), (a.float() / 7).cast(dtypes.int32)]
  qa = Tensor.randint(8, 16, low=-128, high=128, dtype=dtypes.int8)
  qb = Tensor.randint(16, 4, low=-128, high=128, dtype=dtypes.int8)
  outs.append((qa.cast(dtypes.int32) @ qb.cast(dtypes.int32)).cast(dtypes.float32) * 0.01)
  outs.append((Tensor.arange(40).reshape(5, 8) * 3 % 7).float().cumsum(axis=0))
  if "cl_khr_fp16" in Device[Device.DEFAULT].device_exts:
    outs.append((x.half() * 2 + 1).float())
  Tensor.realize(*outs)


# ---- realistic layer shapes: the heuristics' upcasts, locals and GROUP reductions at real sizes ----
# Parameters come from numpy (a copy, not captured), so these models add their layers' kernels and not one
# threefry initialisation kernel per parameter shape; the other models capture those.


def init_params(seed: int, *layers, dtype=None) -> None:
  """Every parameter of the layers drawn on the host: weights ~ N(0, 1/fan_in), norm scales near 1, batchnorm
  running variances in [0.5, 1.5] (an eval-mode batchnorm then neither vanishes nor explodes)."""
  rng = np.random.default_rng(seed)
  for name, p in nn.state.get_state_dict(list(layers)).items():
    if not dtypes.is_float(p.dtype): continue
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "running_var": v = rng.uniform(0.5, 1.5, p.shape)
    elif leaf == "running_mean" or (leaf == "bias" and len(p.shape) == 1): v = 0.1 * rng.standard_normal(p.shape)
    elif len(p.shape) == 1: v = 1 + 0.1 * rng.standard_normal(p.shape)  # norm scales
    else: v = rng.standard_normal(p.shape) / math.sqrt(math.prod(p.shape[1:]))
    p.replace(host_tensor(v, dtype or p.dtype))


def host_tensor(v, dtype) -> Tensor:
  """float16 data without subnormals: tinygrad's emulated half reads them as zero, uopcg with their value
  (docs/DIVERGENCES.md, emulated narrow floats), and one subnormal weight shifts hundreds of outputs by a half ulp."""
  if dtype == dtypes.float16: v = np.where(np.abs(v) < 2.0 ** -14, 0.0, v)
  return Tensor(v.astype(np.float32), dtype=dtype)


def host_randn(seed: int, *shape, dtype=dtypes.float32) -> Tensor:
  return host_tensor(np.random.default_rng(seed).standard_normal(shape), dtype)


class ConvBN:
  """conv (no bias) + eval-mode batchnorm + an activation, the unit of ResNet, MobileNet and YOLO."""
  def __init__(self, cin, cout, k, stride=1, groups=1, act=Tensor.relu):
    self.conv, self.bn, self.act = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm(cout), act

  def __call__(self, x: Tensor) -> Tensor:
    y = self.bn(self.conv(x))
    return y if self.act is None else self.act(y)


class BasicBlock:
  """ResNet's basic block: two 3x3 convs, a 1x1 stride-2 downsample on the shortcut where the shape changes."""
  def __init__(self, cin, cout, stride=1):
    self.c1, self.c2 = ConvBN(cin, cout, 3, stride), ConvBN(cout, cout, 3, act=None)
    self.short = ConvBN(cin, cout, 1, stride, act=None) if stride != 1 or cin != cout else None

  def __call__(self, x: Tensor) -> Tensor:
    return (self.c2(self.c1(x)) + (x if self.short is None else self.short(x))).relu()


class Bottleneck:
  """ResNet's bottleneck: 1x1 reduce, 3x3 (strided), 1x1 expand by 4, a 1x1 strided projection shortcut."""
  def __init__(self, cin, mid, stride=1):
    self.c1, self.c2, self.c3 = ConvBN(cin, mid, 1), ConvBN(mid, mid, 3, stride), ConvBN(mid, 4 * mid, 1, act=None)
    self.short = ConvBN(cin, 4 * mid, 1, stride, act=None)

  def __call__(self, x: Tensor) -> Tensor: return (self.c3(self.c2(self.c1(x))) + self.short(x)).relu()


def run_resnet():
  """ResNet at 112x112: a 7x7 stride-2 stem, 3x3 stride-2 max pool, two basic blocks (the second strided with a
  1x1 downsample), a bottleneck block, global average pool, a 1000-class head and its softmax."""
  stem, blocks = ConvBN(3, 32, 7, 2), [BasicBlock(32, 32), BasicBlock(32, 64, 2), Bottleneck(64, 32, 2)]
  fc = nn.Linear(128, 1000)
  init_params(10, stem, blocks, fc)
  x = stem(host_randn(11, 1, 3, 112, 112)).max_pool2d(kernel_size=3, stride=2, padding=1)
  for b in blocks: x = b(x)
  fc(x.mean(axis=(2, 3))).softmax().realize()


def run_resnet_train():
  """One SGD training step of a ResNet stage at 28x28, batch 2: a strided basic block with a 1x1 downsample and a
  basic block, training-mode batchnorm (batch statistics, running-statistic updates), a 1000-class cross-entropy;
  the backward pass's weight gradients and batch statistics are the large reductions the heuristics GROUP."""
  blocks, fc = [BasicBlock(32, 64, 2), BasicBlock(64, 64)], nn.Linear(64, 1000)
  init_params(27, blocks, fc)
  params = [p for n, p in nn.state.get_state_dict([blocks, fc]).items() if not n.endswith(("running_mean", "running_var", "num_batches_tracked"))]
  for p in params: p.requires_grad = True
  opt = nn.optim.SGD(params, lr=0.01, momentum=0.9)
  x, y = host_randn(28, 2, 32, 28, 28), Tensor(np.array([3, 997], dtype=np.int32))
  with Context(TRAINING=1):
    opt.zero_grad()
    h = x
    for b in blocks: h = b(h)
    loss = fc(h.mean(axis=(2, 3))).sparse_categorical_crossentropy(y)
    loss.backward()
    opt.step()
    loss.realize()


class SqueezeExcite:
  def __init__(self, c, squeeze, act=Tensor.silu, gate=Tensor.sigmoid):
    self.reduce, self.expand, self.act, self.gate = nn.Conv2d(c, squeeze, 1), nn.Conv2d(squeeze, c, 1), act, gate

  def __call__(self, x: Tensor) -> Tensor:
    return x * self.gate(self.expand(self.act(self.reduce(x.mean(axis=(2, 3), keepdim=True)))))


class InvertedResidual:
  """MobileNetV2 / EfficientNet MBConv: expand 1x1, depthwise kxk (strided), optional squeeze-and-excite,
  project 1x1 (no activation), a residual add where the shape allows."""
  def __init__(self, cin, cout, k, stride, expand=4, act=Tensor.relu6, se=None):
    mid = cin * expand
    self.expand, self.dw = ConvBN(cin, mid, 1, act=act), ConvBN(mid, mid, k, stride, groups=mid, act=act)
    self.se, self.project, self.residual = se(mid) if se else None, ConvBN(mid, cout, 1, act=None), stride == 1 and cin == cout

  def __call__(self, x: Tensor) -> Tensor:
    y = self.dw(self.expand(x))
    y = self.project(y if self.se is None else self.se(y))
    return x + y if self.residual else y


def run_mobilenet():
  """MobileNetV2 / EfficientNet / MobileNetV3 blocks at 56x56: a stride-2 stem, an inverted residual with ReLU6,
  an MBConv with SiLU, a 5x5 stride-2 depthwise conv and squeeze-and-excite (sigmoid gate), a MobileNetV3 block
  with hardswish and a hardsigmoid gate, a 1x1 head conv, global pool and a 1000-class classifier."""
  stem = ConvBN(3, 16, 3, 2, act=Tensor.relu6)
  blocks = [InvertedResidual(16, 16, 3, 1),
            InvertedResidual(16, 24, 5, 2, act=Tensor.silu, se=lambda c: SqueezeExcite(c, 8)),
            InvertedResidual(24, 32, 3, 2, act=Tensor.hardswish, se=lambda c: SqueezeExcite(c, 24, Tensor.relu, Tensor.hardsigmoid))]
  head, fc = ConvBN(32, 128, 1, act=Tensor.hardswish), nn.Linear(128, 1000)
  init_params(12, stem, blocks, head, fc)
  x = stem(host_randn(13, 1, 3, 56, 56))
  for b in blocks: x = b(x)
  fc(head(x).mean(axis=(2, 3))).log_softmax().realize()


class GPT2Block:
  def __init__(self, dim, heads, explicit):
    self.heads, self.explicit = heads, explicit
    self.ln_1, self.ln_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
    self.c_attn, self.c_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
    self.c_fc, self.mlp_proj = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

  def attention(self, x: Tensor) -> Tensor:
    b, t, d = x.shape
    q, k, v = (y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for y in self.c_attn(x).split(d, dim=-1))
    if self.explicit:  # GPT-2's own form: scores, the causal mask, softmax, weighted values
      att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
      att = att.masked_fill(Tensor.ones(t, t, dtype=dtypes.bool).tril().logical_not(), float("-inf"))
      y = att.softmax(-1) @ v
    else: y = q.scaled_dot_product_attention(k, v, is_causal=True)
    return self.c_proj(y.transpose(1, 2).reshape(b, t, d))

  def __call__(self, x: Tensor) -> Tensor:
    x = x + self.attention(self.ln_1(x))
    return x + self.mlp_proj(self.c_fc(self.ln_2(x)).gelu())


def run_gpt2():
  """GPT-2 at dim 256, four heads of 64, 40 tokens, vocabulary 1500: token and position embeddings, a block with
  scaled_dot_product_attention and one with the explicit masked softmax, tanh-GELU MLPs, the final layernorm,
  logits tied to the token embedding, the last token's softmax, argmax and a multinomial sample."""
  vocab, dim, seq = 1500, 256, 40
  wte, wpe = nn.Embedding(vocab, dim), nn.Embedding(64, dim)
  blocks, ln_f = [GPT2Block(dim, 4, False), GPT2Block(dim, 4, True)], nn.LayerNorm(dim)
  init_params(14, wte, wpe, blocks, ln_f)
  tokens = Tensor(np.random.default_rng(15).integers(0, vocab, (1, seq)).astype(np.int32))
  x = wte(tokens) + wpe(Tensor.arange(seq).reshape(1, seq))
  for b in blocks: x = b(x)
  logits = ln_f(x) @ wte.weight.T
  probs = (logits[:, -1, :] / 0.8).softmax()
  Tensor.manual_seed(16)
  Tensor.realize(probs, probs.argmax(-1), probs.multinomial())


def rotary(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
  """LLaMA's rotary embedding as a complex multiply on (even, odd) pairs: the reshape form."""
  pairs = x.reshape(*x.shape[:-1], x.shape[-1] // 2, 2)
  re, im = pairs[..., 0], pairs[..., 1]
  return Tensor.stack(re * cos - im * sin, re * sin + im * cos, dim=-1).flatten(-2)


class LlamaBlock:
  def __init__(self, dim, heads, kv_heads, hidden, max_context):
    self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
    self.attention_norm, self.ffn_norm = nn.RMSNorm(dim), nn.RMSNorm(dim)
    self.wq, self.wo = nn.Linear(dim, dim, bias=False), nn.Linear(dim, dim, bias=False)
    self.wk, self.wv = nn.Linear(dim, kv_heads * self.hd, bias=False), nn.Linear(dim, kv_heads * self.hd, bias=False)
    self.w1, self.w2, self.w3 = nn.Linear(dim, hidden, bias=False), nn.Linear(hidden, dim, bias=False), nn.Linear(dim, hidden, bias=False)
    self.cache_kv = Tensor.zeros(2, 1, max_context, kv_heads, self.hd).contiguous().realize()

  def attention(self, x: Tensor, start_pos: int, cos: Tensor, sin: Tensor) -> Tensor:
    b, t, _ = x.shape
    q = rotary(self.wq(x).reshape(b, t, self.heads, self.hd), cos, sin)
    k = rotary(self.wk(x).reshape(b, t, self.kv_heads, self.hd), cos, sin)
    v = self.wv(x).reshape(b, t, self.kv_heads, self.hd)
    self.cache_kv[:, :, start_pos:start_pos + t].assign(Tensor.stack(k, v)).realize()
    keys, values = self.cache_kv[0, :, :start_pos + t], self.cache_kv[1, :, :start_pos + t]
    rep = self.heads // self.kv_heads  # repeat_kv: each kv head serves rep query heads
    keys, values = (y.unsqueeze(3).expand(b, start_pos + t, self.kv_heads, rep, self.hd).reshape(b, start_pos + t, self.heads, self.hd)
                    for y in (keys, values))
    mask = Tensor.full((1, 1, t, start_pos + t), float("-inf")).triu(start_pos + 1) if t > 1 else None
    att = q.transpose(1, 2).scaled_dot_product_attention(keys.transpose(1, 2), values.transpose(1, 2), attn_mask=mask)
    return self.wo(att.transpose(1, 2).reshape(b, t, -1))

  def __call__(self, x: Tensor, start_pos: int, cos: Tensor, sin: Tensor) -> Tensor:
    h = x + self.attention(self.attention_norm(x), start_pos, cos, sin)
    f = self.ffn_norm(h)
    return h + self.w2(self.w1(f).silu() * self.w3(f))  # SwiGLU


def run_llama(symbolic: bool = False):
  """A LLaMA block at dim 256 (four query heads of 64, two kv heads: grouped-query attention), SwiGLU hidden 512,
  RMSNorm, rotary embeddings from precomputed cos/sin: a 29-token prefill into the KV cache, then two decode steps,
  each ending in the logits over 1024 tokens and their argmax. symbolic: the decode steps' position is a bound
  Variable, as tinygrad's LLaMA runs them under the JIT (kernels with a scalar argument: compiled, not run)."""
  dim, vocab, max_context = 256, 1024, 64
  blk, norm, tok, out = LlamaBlock(dim, 4, 2, 512, max_context), nn.RMSNorm(dim), nn.Embedding(vocab, dim), nn.Linear(dim, vocab, bias=False)
  init_params(17, blk, norm, tok, out)
  freqs = 1.0 / (10000.0 ** (np.arange(0, 64, 2, dtype=np.float32) / 64))
  ang = np.outer(np.arange(max_context, dtype=np.float32), freqs)
  cos, sin = Tensor(np.cos(ang).astype(np.float32)).realize(), Tensor(np.sin(ang).astype(np.float32)).realize()
  ids = np.random.default_rng(18).integers(0, vocab, 29).astype(np.int32)
  pos, toks = 0, Tensor(ids.reshape(1, 29))
  for _ in range(3):  # the prefill, then two decode steps of one token
    t = toks.shape[1]
    p = Variable("start_pos", 1, max_context - 1).bind(pos) if symbolic and pos else pos
    c, s = (y[p:p + t].reshape(1, t, 1, 32) for y in (cos, sin))
    nxt = out(norm(blk(tok(toks), p, c, s)))[:, -1, :].argmax(-1).realize()
    pos, toks = pos + t, nxt.reshape(1, 1)


def run_unet():
  """A UNet at 64x64 with groupnorm + SiLU: two stride-2 conv downs, a middle conv, a nearest upsample and a
  transposed-conv upsample, each concatenated with its skip connection."""
  def gn_conv(cin, cout, stride=1):
    conv, gn = nn.Conv2d(cin, cout, 3, stride, 1), nn.GroupNorm(8, cout)
    return conv, gn, (lambda x: gn(conv(x)).silu())
  layers, fs = [], []
  for cin, cout, s in ((3, 32, 1), (32, 64, 2), (64, 64, 2), (64, 64, 1), (128, 64, 1), (64, 32, 1)):
    conv, gn, f = gn_conv(cin, cout, s)
    layers += [conv, gn]
    fs.append(f)
  up, out = nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1), nn.Conv2d(32, 3, 1)
  init_params(19, layers, up, out)
  x0 = fs[0](host_randn(20, 1, 3, 64, 64))
  x1 = fs[1](x0)
  x2 = fs[3](fs[2](x1))
  u1 = fs[4](Tensor.cat(x2.interpolate((32, 32), mode="nearest"), x1, dim=1))  # nearest upsample, skip
  u0 = fs[5](Tensor.cat(up(u1), x0, dim=1))  # transposed-conv upsample, skip
  out(u0).realize()


def run_yolo():
  """YOLO-like at 64x64: stride-2 conv + batchnorm + leaky ReLU stages, SPPF (three chained 5x5 max pools with
  stride 1 and padding 2, concatenated), a nearest upsample concatenated with a skip, SiLU, a sigmoid head."""
  leaky = lambda x: x.leaky_relu(0.1)  # noqa: E731
  c1, c2, c3 = ConvBN(3, 16, 3, 2, act=leaky), ConvBN(16, 32, 3, 2, act=leaky), ConvBN(32, 64, 3, 2, act=leaky)
  cv1, cv2, lat, head = ConvBN(64, 32, 1, act=Tensor.silu), ConvBN(128, 64, 1, act=Tensor.silu), ConvBN(96, 32, 1, act=Tensor.silu), nn.Conv2d(32, 255, 1)
  init_params(21, c1, c2, c3, cv1, cv2, lat, head)
  p2 = c2(c1(host_randn(22, 1, 3, 64, 64)))
  x = cv1(c3(p2))
  y1 = x.max_pool2d(5, 1, padding=2)
  y2 = y1.max_pool2d(5, 1, padding=2)
  y3 = y2.max_pool2d(5, 1, padding=2)
  x = cv2(Tensor.cat(x, y1, y2, y3, dim=1))
  x = lat(Tensor.cat(x.interpolate((16, 16), mode="nearest"), p2, dim=1))
  head(x).sigmoid().realize()


def run_half():
  """float16 storage with float32 arithmetic (a mixed-precision forward): a conv + batchnorm + ReLU block and a
  causal attention block whose weights, activations and outputs are half. PoCL has no cl_khr_fp16, so tinygrad
  emulates half in float32, keeping a CAST's precision until the store where uopcg rounds at the CAST
  (docs/DIVERGENCES.md, emulated narrow floats): every half value is stored (.contiguous()) right after its cast,
  and widened to float32 before arithmetic."""
  half = lambda t: t.cast(dtypes.float16).contiguous()  # noqa: E731
  conv, bn = nn.Conv2d(32, 64, 3, 1, 1, bias=False), nn.BatchNorm(64)
  init_params(23, conv, bn, dtype=dtypes.float16)
  x = host_randn(24, 1, 32, 28, 28, dtype=dtypes.float16)
  w = conv.weight
  y = half(x.float().conv2d(w.float(), padding=1).batchnorm(bn.weight.float(), bn.bias.float(), bn.running_mean.float(),
                                                              bn.running_var.float().add(bn.eps).rsqrt()).relu())
  qkv, proj = nn.Linear(256, 768), nn.Linear(256, 256)
  init_params(25, qkv, proj, dtype=dtypes.float16)
  h = host_randn(26, 1, 32, 256, dtype=dtypes.float16)
  q, k, v = (half(t).reshape(1, 32, 4, 64).transpose(1, 2) for t in (h.float() @ qkv.weight.float().T + qkv.bias.float()).split(256, dim=-1))
  att = half(q.float().scaled_dot_product_attention(k.float(), v.float(), is_causal=True))
  out = half(att.float().transpose(1, 2).reshape(1, 32, 256) @ proj.weight.float().T + proj.bias.float())
  Tensor.realize(y, out)


# ---- more families: a ViT, a Whisper encoder front, a video conv, an LSTM, prime and awkward shapes ----


def host_param(seed: int, *shape, scale=1.0) -> Tensor:
  """A learned tensor that no nn layer owns (a class token, a position table), drawn on the host."""
  return Tensor((scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float32))


def erf_gelu(x: Tensor) -> Tensor: return 0.5 * x * (1 + (x * (1 / math.sqrt(2))).erf())


class ViTBlock:
  """A pre-norm ViT block: layernorm, non-causal multi-head attention (fused qkv), layernorm, an erf-GELU MLP."""
  def __init__(self, dim, heads, hidden):
    self.heads = heads
    self.ln1, self.ln2 = nn.LayerNorm(dim, eps=1e-6), nn.LayerNorm(dim, eps=1e-6)
    self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
    self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

  def __call__(self, x: Tensor) -> Tensor:
    b, t, d = x.shape
    q, k, v = (y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for y in self.qkv(self.ln1(x)).split(d, dim=-1))
    x = x + self.proj(q.scaled_dot_product_attention(k, v).transpose(1, 2).reshape(b, t, d))
    return x + self.fc2(erf_gelu(self.fc1(self.ln2(x))))


def run_vit():
  """A ViT at 48x48, batch 2: patch embedding as a conv with stride = kernel = 8 (36 patches), a class token (37
  tokens), a learned position embedding, one pre-norm block at dim 96 with four heads of 24 (a head dim that is
  not a power of two) and an erf-GELU MLP 96->384->96, the final layernorm on the class token, a 1000-class head."""
  dim, heads, patch = 96, 4, 8
  embed, blk, ln_f, head = nn.Conv2d(3, dim, patch, stride=patch), ViTBlock(dim, heads, 4 * dim), nn.LayerNorm(dim, eps=1e-6), nn.Linear(dim, 1000)
  init_params(30, embed, blk, ln_f, head)
  cls, pos = host_param(31, 1, 1, dim, scale=0.02), host_param(32, 1, 37, dim, scale=0.02)
  x = embed(host_randn(33, 2, 3, 48, 48)).flatten(2).transpose(1, 2)  # (2, 36, 96)
  x = Tensor.cat(cls.expand(2, 1, dim), x, dim=1) + pos
  x = blk(x)
  head(ln_f(x[:, 0])).log_softmax().realize()


def sinusoids(length: int, channels: int, max_timescale=10000) -> Tensor:
  """Whisper's position table, computed on the device: sin and cos of position x timescale, concatenated."""
  inc = math.log(max_timescale) / (channels // 2 - 1)
  inv = (-inc * Tensor.arange(channels // 2, dtype=dtypes.float32)).exp()
  scaled = Tensor.arange(length, dtype=dtypes.float32)[:, None] * inv[None, :]
  return Tensor.cat(scaled.sin(), scaled.cos(), dim=1)


def run_whisper():
  """A Whisper audio encoder's front at 150 mel frames: conv1d 80->128 (kernel 3, padding 1), GELU, a stride-2
  conv1d to 75 frames, GELU, sinusoidal positions, one pre-norm attention block at 75 tokens (two heads of 64,
  q and k each scaled by head_dim**-0.25, the key projection without bias, no mask), a GELU MLP 128->512->128,
  the final layernorm."""
  dim, heads = 128, 2
  conv1, conv2 = nn.Conv1d(80, dim, 3, padding=1), nn.Conv1d(dim, dim, 3, stride=2, padding=1)
  ln1, ln2, ln_post = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
  wq, wk, wv, wo = nn.Linear(dim, dim), nn.Linear(dim, dim, bias=False), nn.Linear(dim, dim), nn.Linear(dim, dim)
  fc1, fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
  init_params(34, conv1, conv2, ln1, ln2, ln_post, wq, wk, wv, wo, fc1, fc2)
  x = conv2(conv1(host_randn(35, 1, 80, 150)).gelu()).gelu().permute(0, 2, 1)  # (1, 75, 128)
  x = x + sinusoids(75, dim)
  b, t, _ = x.shape
  h, scale = ln1(x), (dim // heads) ** -0.25
  q, k, v = (w(h).reshape(b, t, heads, dim // heads).permute(0, 2, 1, 3) for w in (wq, wk, wv))
  att = ((q * scale) @ (k * scale).transpose(-1, -2)).softmax(-1) @ v
  x = x + wo(att.permute(0, 2, 1, 3).flatten(2))
  x = x + fc2(fc1(ln2(x)).gelu())
  ln_post(x).realize()


def run_conv3d():
  """A small video conv: Conv3d 3->8 (kernel 3, padding 1) on 5x20x20 frames, batch 2, training-mode batchnorm
  (batch statistics over batch, depth, height, width; running-statistic updates), ReLU, a 2x2x2 max pool and a
  3x3x3 stride-2 padded average pool; then the eval-mode forward on the running statistics."""
  conv, bn = nn.Conv2d(3, 8, (3, 3, 3), padding=1), nn.BatchNorm(8)
  init_params(36, conv, bn)
  x = host_randn(37, 2, 3, 5, 20, 20)
  with Context(TRAINING=1):
    y = bn(conv(x)).relu()
    Tensor.realize(y.max_pool2d(kernel_size=(2, 2, 2)), y.avg_pool2d(kernel_size=(3, 3, 3), stride=2, padding=1), bn.running_mean, bn.running_var)
  y = bn(conv(x)).relu()
  Tensor.realize(y.max_pool2d(kernel_size=(2, 2, 2)), y.avg_pool2d(kernel_size=(3, 3, 3), stride=2, padding=1))


def run_lstm():
  """An LSTM cell (input 20, hidden 48, batch 3) unrolled over 7 steps, each step realized as an eager loop does
  (the gates' sigmoid and tanh, the elementwise state update), then a linear head over every step's hidden state
  and a cumulative sum of its outputs over time."""
  cell, head = nn.LSTMCell(20, 48), nn.Linear(48, 5)
  init_params(38, cell, head)
  xs = host_randn(39, 7, 3, 20).realize()
  hc, hs = None, []
  for t in range(7):
    hc = cell(xs[t], hc)
    Tensor.realize(*hc)
    hs.append(hc[0])
  head(Tensor.stack(*hs)).cumsum(axis=0).realize()


def run_odd():
  """Prime and awkward shapes: matmuls 13x29 @ 29x37 and 1x997 @ 997x3, sum / max / mean / var over 997 and
  4099 elements, a softmax over 1001, a conv with 5 channels on 31x31 with stride 3 and dilation 2, argmax and
  argmin over odd axes, where / comparisons on int8 and uint8, int32 floor and truncating division and modulo
  by non-powers of two (both signs) on negative values."""
  rng = np.random.default_rng(40)
  f = lambda *s: Tensor(rng.standard_normal(s).astype(np.float32))  # noqa: E731
  a, b, v, w = f(13, 29), f(29, 37), f(1, 997), f(997, 3)
  r1, r2, s = f(997), f(4099), f(3, 1001)
  img, cw, cb, am = f(1, 5, 31, 31), f(5, 5, 3, 3), f(5), f(7, 11, 13)
  i8 = Tensor(rng.integers(-128, 128, (5, 23)).astype(np.int8))
  u8 = Tensor(rng.integers(0, 256, (5, 23)).astype(np.uint8))
  i32 = Tensor(rng.integers(-100000, 100000, (9, 17)).astype(np.int32))
  d = Tensor(rng.choice(np.array([-13, -7, -3, 3, 5, 6, 7, 11, 1000], dtype=np.int32), (9, 17)))
  outs = [a @ b, v @ w, (v @ w).relu(),
          r1.sum(), r1.max(), r1.mean(), r1.var(), r2.sum(), r2.max(), r2.mean(), r2.var(), r2.std(correction=0),
          s.softmax(-1), s.log_softmax(-1),
          img.conv2d(cw, cb, stride=3, dilation=2), img.conv2d(cw, stride=3, dilation=2, padding=2).relu(),
          am.argmax(axis=1), am.argmin(axis=2), am.argmax(axis=0),
          (i8 < 3).where(i8, i8.maximum(-7)), (u8 >= 200).where(u8, 17), (i8.cast(dtypes.int16) < u8.cast(dtypes.int16)),
          (i8 == -1) | (u8 != 255), i8.max(axis=1), u8.min(axis=0), (i8 > 0).sum(axis=1), u8.cast(dtypes.int32).sum(axis=1),
          i32 // 7, i32 % 7, i32 // -3, i32 % -5, i32 // 1000, i32 % 997, i32.div(7, rounding_mode="trunc"),
          i32 // d, i32 % d, i32.div(d, rounding_mode="trunc"), (i32 * 3 + 11) // 13 - (i32 % 6)]
  Tensor.realize(*outs)


# ---- float64, integer mixes and other layers (docs/model-differential.md, "Float64, integer mixes and other layers") ----


def run_double():
  """float64 layers (PoCL's CPU device has cl_khr_fp64; tinygrad's CL device runs double there): a conv + batchnorm +
  ReLU block and a small causal attention block built under DEFAULT_FLOAT=float64 (dtypes.default_float), a layernorm, exp / log /
  sin / sqrt / tanh / erf / pow, a sum over 2**17 + 3 elements, argmax, and casts float64 <-> float32 / int64 / int32
  and to half (stored right after the cast: docs/DIVERGENCES.md, emulated narrow floats), pow at a zero exponent and
  a -inf base (inputs with inf and NaN)."""
  with Context(DEFAULT_FLOAT="float64"):
    conv, bn = nn.Conv2d(6, 12, 3, padding=1, bias=False), nn.BatchNorm(12)
    qkv, proj, ln = nn.Linear(48, 144), nn.Linear(48, 48), nn.LayerNorm(48)
    init_params(50, conv, bn, qkv, proj, ln, dtype=dtypes.float64)
    img = host_randn(51, 2, 6, 15, 17, dtype=dtypes.float64)
    y = bn(conv(img)).relu()
    h = host_randn(52, 1, 13, 48, dtype=dtypes.float64)
    q, k, v = (t.reshape(1, 13, 2, 24).transpose(1, 2) for t in qkv(ln(h)).split(48, dim=-1))
    att = proj(q.scaled_dot_product_attention(k, v, is_causal=True).transpose(1, 2).reshape(1, 13, 48))
    rng = np.random.default_rng(53)
    x = Tensor(rng.standard_normal((7, 33)), dtype=dtypes.float64)
    p = Tensor(rng.uniform(0.1, 5.0, (7, 33)), dtype=dtypes.float64)
    big = Tensor(rng.standard_normal(2 ** 17 + 3), dtype=dtypes.float64)
    i64 = Tensor(rng.integers(-2 ** 40, 2 ** 40, (5, 19)), dtype=dtypes.int64)
    f32 = Tensor(rng.standard_normal((5, 19)).astype(np.float32))
    outs = [y, att, x.layernorm(), x.exp(), p.log(), x.sin(), p.sqrt(), x.tanh(), x.erf(), p.pow(x), p ** 3.5, x.sigmoid(),
            x.softmax(-1), big.sum(), big.max(), (big * big).mean(), x.argmax(axis=1), x.argmax(),
            (x * 1000).cast(dtypes.float32), (x * 1e6).cast(dtypes.int64), (x * 1000).cast(dtypes.int32),
            x.cast(dtypes.float16).contiguous(), i64.cast(dtypes.float64) * 0.5, f32.cast(dtypes.float64).exp(),
            (x.cast(dtypes.float32) + 1).cast(dtypes.float64) - x,
            # pow where exp2(y * log2|x|) is not pow: x ** 0 for inf / NaN / -inf / 0, -inf to non-integer powers
            Tensor([math.inf, math.nan, -math.inf, 0.0, -3.0, -math.inf, -math.inf, -math.inf, -2.0, 2.0], dtype=dtypes.float64)
            .pow(Tensor([0.0, 0.0, 0.0, 0.0, 0.0, 0.5, -0.5, 3.0, 3.0, 0.5], dtype=dtypes.float64))]
    Tensor.realize(*outs)


def run_intmix():
  """Integer preprocessing and quantization: int16 / uint16 / uint32 / int64 / uint64 elementwise arithmetic and
  reductions (sum / max / min, unsigned sums that wrap), uint8 arithmetic that wraps, mixed-signedness promotion,
  a cumsum, shifts, bitwise ops, floor division and modulo by constants and tensors of both signs
  (signed values kept in range; unsigned wrap-around is defined and used), an int8 quantize -> int32-accumulating
  matmul -> float dequantize, a uint8 image -> float pipeline with a bilinear resize and normalisation, and int64
  index arithmetic (a gather from a 5000-row table, one_hot over 1000 classes, arange arithmetic past 2**31)."""
  rng = np.random.default_rng(60)
  i16 = Tensor(rng.integers(-3000, 3000, (9, 31)).astype(np.int16))
  i16d = Tensor(rng.choice(np.array([-9, -4, -1, 3, 7, 10], dtype=np.int16), (9, 31)))
  u16 = Tensor(rng.integers(0, 65536, (9, 31)).astype(np.uint16))
  u16d = Tensor(rng.integers(1, 300, (9, 31)).astype(np.uint16))
  u32 = Tensor(rng.integers(0, 2 ** 32, (6, 41), dtype=np.uint64).astype(np.uint32))
  u32d = Tensor(rng.integers(1, 100000, (6, 41)).astype(np.uint32))
  i64 = Tensor(rng.integers(-2 ** 50, 2 ** 50, (6, 41)).astype(np.int64))
  i64d = Tensor(rng.choice(np.array([-(2 ** 33) - 5, -77, -3, 5, 1000003, 2 ** 35], dtype=np.int64), (6, 41)))
  u64 = Tensor(rng.integers(0, 2 ** 63, (6, 41), dtype=np.uint64) * np.uint64(2) + np.uint64(1))
  u64d = Tensor(rng.integers(1, 2 ** 40, (6, 41), dtype=np.uint64))
  u8 = Tensor(rng.integers(0, 256, (9, 31)).astype(np.uint8))
  outs = [i16 * 7 + i16 // 3, i16 // i16d, i16 % i16d, i16 // -5, i16 % -7, i16.sum(axis=1), i16.max(axis=0), i16.min(),
          (i16 & 0x0F0F) | (i16 ^ -2), i16 >> 3, (i16 % 100) << 4,
          u16 + u16, u16 * 3, u16 // u16d, u16 % u16d, u16 // 7, u16 % 255, u16.sum(axis=0), u16.max(axis=1), u16.min(axis=1),
          u16 >> 5, (u16 & 0xFF) ^ (u16 >> 8), u16.cast(dtypes.int32) - 40000,
          u32 * 2654435761, u32 + u32d, u32 - u32d, u32 // u32d, u32 % u32d, u32 // 1000, u32 % 97, u32 >> 13, u32 << 3,
          u32 ^ (u32 >> 16), u32.sum(axis=1), u32.max(axis=0), u32.min(axis=1), u32.cast(dtypes.float32), u32.cast(dtypes.int64) - 2 ** 31,
          i64 * 3 - 7, i64 // i64d, i64 % i64d, i64 // 1000003, i64 % -97, i64 >> 9, (i64 % 1024) << 20, i64 & 0xFFFF_FFFF,
          i64.sum(axis=1), i64.max(axis=0), i64.min(), i64.cast(dtypes.float64), i64.cast(dtypes.int32),
          u64 * 6364136223846793005 + 1442695040888963407, u64 // u64d, u64 % u64d, u64 // 3, u64 % 1000, u64 >> 33,
          u64 ^ (u64 << 7), u64.max(axis=1), u64.min(axis=0), (u64 >> 20).sum(axis=1), u64.sum(axis=1), u64.cast(dtypes.float32),
          u8 + u8, u8 * 7, u8 - 200, u8 // 3, u8 % 10, (u8 >> 2) ^ u8, u8.sum(axis=1), u8.max(axis=0),
          i16.cumsum(axis=1), i64.maximum(-i64), i16 + u16, u32 + i64, u16.cast(dtypes.int16) * 2]
  # quantize -> int8 -> int32-accumulating matmul -> dequantize (per-tensor activation scale, per-channel weight scales)
  x, w = host_randn(61, 11, 40), host_randn(62, 40, 24)
  xs = x.abs().max() / 127
  ws = w.abs().max(axis=0) / 127
  xq = (x / xs).round().clip(-128, 127).cast(dtypes.int8)
  wq = (w / ws).round().clip(-128, 127).cast(dtypes.int8)
  acc = xq.cast(dtypes.int32) @ wq.cast(dtypes.int32)
  outs += [acc.cast(dtypes.float32) * xs * ws, acc.sum(axis=1), acc.max()]
  # a uint8 image -> float, bilinear resize 37x53 -> 24x32, per-channel normalisation; and back to uint8
  img = Tensor(rng.integers(0, 256, (1, 3, 37, 53)).astype(np.uint8))
  f = img.cast(dtypes.float32) / 255
  r = f.interpolate((24, 32), mode="linear")
  mean, std = Tensor([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1), Tensor([0.229, 0.224, 0.225]).reshape(1, 3, 1, 1)
  outs += [(r - mean) / std, (r * 255).round().clip(0, 255).cast(dtypes.uint8), img.interpolate((19, 26), mode="nearest")]
  # int64 index arithmetic: a gather from a 5000-row table, one_hot over 1000 classes, arange past 2**31
  table = host_randn(63, 5000, 12)
  idx = Tensor(rng.integers(0, 5000, (64,)).astype(np.int64))
  labels = Tensor(rng.integers(0, 1000, (48,)).astype(np.int64))
  a = Tensor.arange(3 * 2 ** 20, dtype=dtypes.int64)
  outs += [table[idx], table.gather(0, idx.reshape(64, 1).expand(64, 12)), labels.one_hot(1000).sum(axis=0),
           ((a * 1021 + 2 ** 31) % 65537).max(), (a * a // 7 % 1000003).sum(), idx * 12 + labels[:1]]
  Tensor.realize(*outs)


def run_misc():
  """Layers no other family has: a GRU cell unrolled over 4 steps (each step realized), a conv and pixel_shuffle by 2
  (reshape / permute), instance norm, group norm with 6 groups of 5 channels, a depthwise-separable conv1d with
  dilation 3, ALiBi attention (5 heads, 19 tokens, causal), a mixture of 6 experts with top-2 gating and a gather of
  the chosen experts' weights, an embedding bag (gather + sum and mean), reflect / replicate / circular padding,
  cumprod."""
  rng = np.random.default_rng(70)
  # GRU: r = s(Wx + Uh), z = s(...), n = tanh(Wn x + r * (Un h)), h = (1 - z) n + z h
  wi, wh = nn.Linear(14, 3 * 36), nn.Linear(36, 3 * 36)
  conv, inorm, gnorm = nn.Conv2d(5, 20, 3, padding=1), nn.InstanceNorm(20), nn.GroupNorm(6, 30)
  dw, pw = nn.Conv1d(12, 12, 3, padding=3, dilation=3, groups=12), nn.Conv1d(12, 20, 1)
  gate = nn.Linear(24, 6, bias=False)
  init_params(71, wi, wh, conv, inorm, gnorm, dw, pw, gate)
  xs, h = host_randn(72, 4, 3, 14).realize(), Tensor.zeros(3, 36).contiguous().realize()
  for t in range(4):
    gi, gh = wi(xs[t]).chunk(3, dim=-1), wh(h).chunk(3, dim=-1)
    r, z = (gi[0] + gh[0]).sigmoid(), (gi[1] + gh[1]).sigmoid()
    n = (gi[2] + r * gh[2]).tanh()
    h = ((1 - z) * n + z * h).realize()
  # a conv, pixel_shuffle by 2: (1, 20, 7, 9) -> (1, 5, 14, 18); instance norm on the conv's output
  c = conv(host_randn(73, 1, 5, 7, 9))
  ps = c.reshape(1, 5, 2, 2, 7, 9).permute(0, 1, 4, 2, 5, 3).reshape(1, 5, 14, 18)
  outs = [ps.relu(), inorm(c), gnorm(host_randn(74, 2, 30, 9, 7))]
  # depthwise-separable conv1d with dilation 3
  outs.append(pw(dw(host_randn(75, 2, 12, 50)).relu()))
  # ALiBi: scores minus slope * distance, causal, 5 heads of 16 over 19 tokens
  heads, T, d = 5, 19, 16
  q, k, v = host_randn(76, 1, heads, T, d), host_randn(77, 1, heads, T, d), host_randn(78, 1, heads, T, d)
  slopes = Tensor([2 ** (-8 * (i + 1) / heads) for i in range(heads)]).reshape(1, heads, 1, 1)
  pos = Tensor.arange(T)
  dist = (pos.reshape(T, 1) - pos.reshape(1, T)).cast(dtypes.float32)
  bias = (-slopes * dist).masked_fill(dist < 0, -float("inf"))
  outs.append(((q @ k.transpose(-1, -2)) / math.sqrt(d) + bias).softmax(-1) @ v)
  # mixture of 6 experts, top-2 gating, the chosen experts' weights gathered per token
  tok = host_randn(79, 10, 24)
  experts = host_randn(80, 6, 24, 32)
  vals, idx = gate(tok).topk(2)
  wts = vals.softmax(-1)
  chosen = experts[idx]  # (10, 2, 24, 32)
  outs.append(((tok.reshape(10, 1, 1, 24) @ chosen).reshape(10, 2, 32) * wts.reshape(10, 2, 1)).sum(1))
  # embedding bag: 7 bags of 5 indices into a 50x16 table, sum and mean
  table = host_randn(81, 50, 16)
  bags = Tensor(rng.integers(0, 50, (7, 5)).astype(np.int32))
  e = table[bags]
  outs += [e.sum(1), e.mean(1)]
  # padding modes and cumprod
  im = host_randn(82, 1, 3, 6, 7)
  outs += [im.pad((2, 1, 3, 2), mode="reflect"), im.pad((1, 3, 2, 2), mode="replicate"), im.pad((2, 2, 1, 1), mode="circular"),
           (1 + 0.1 * host_randn(83, 4, 9)).cumprod(1), (1 + 0.1 * host_randn(84, 17, 3)).cumprod(0)]
  Tensor.realize(h, *outs)


FUZZ = {"seed": 0, "programs": 24, "out": None}  # set from the command line


def run_fuzz():
  """Random tensor programs (tools/tensor_fuzz.py): each one's kernels are tagged with its index, and its
  text is written to fuzz_programs.py in --out so that a failing kernel's program can be rerun alone."""
  texts = []
  for i, text, outs in tensor_fuzz.programs(FUZZ["seed"], FUZZ["programs"]):
    Capture.active.program = i
    if outs is not None:
      try:
        Tensor.realize(*outs)
      except Exception as e:  # noqa: BLE001 (tinygrad fails on its own program: reported, not ours to check)
        text += f"\n# tinygrad: {type(e).__name__}: {str(e)[:200]}"
    if "# tinygrad:" in text: print(f"SKIP fuzz program {i}: {text.splitlines()[-1][2:]}")
    texts.append(f"# ---- program {i} (seed {FUZZ['seed']})\n{text}\n")
  Capture.active.program = None
  with open(os.path.join(FUZZ["out"], "fuzz_programs.py"), "w") as f: f.write("".join(texts))


MODELS = {"convnet": run_convnet, "transformer": run_transformer, "embedding": run_embedding, "mlp_adam": run_mlp_adam,
          "ops": run_ops, "resnet": run_resnet, "resnet_train": run_resnet_train, "mobilenet": run_mobilenet, "gpt2": run_gpt2, "llama": run_llama,
          "llama_symbolic": lambda: run_llama(symbolic=True),
          "unet": run_unet, "yolo": run_yolo, "half": run_half,
          "vit": run_vit, "whisper": run_whisper, "conv3d": run_conv3d, "lstm": run_lstm, "odd": run_odd,
          "double": run_double, "intmix": run_intmix, "misc": run_misc, "fuzz": run_fuzz}
REALISTIC = ["resnet", "resnet_train", "mobilenet", "gpt2", "llama", "llama_symbolic", "unet", "yolo", "half",
             "vit", "whisper", "conv3d", "lstm", "odd", "double", "intmix", "misc"]  # minutes each on two cores: run when asked for
DEFAULT_SET = [m for m in MODELS if m != "fuzz" and m not in REALISTIC]  # the fuzz set runs when asked for

# ---- capture: every kernel tinygrad runs, with its buffers before and after ----


def codegen_settings() -> dict:
  """The codegen settings in force that differ from tinygrad's defaults (a model's own Context, or the
  environment: `DISABLE_FAST_IDIV=0 TRANSCENDENTAL=2 python3 tools/model_differential.py ...`). DMC and
  ALLOW_HALF8 are plain environment reads in tinygrad, not recorded."""
  defaults = {"TRANSCENDENTAL": 1, "DISABLE_FAST_IDIV": 1, "NOLOCALS": 0, "EMULATED_DTYPES": "", "DEFAULT_FLOAT": "float32"}
  out = {}
  for key in oracle.CODEGEN_KEYS:
    var = ContextVar._cache.get(key)
    if var is not None and key in defaults and var.value != defaults[key]: out[key] = var.value
  return out


class Capture:
  """Wraps tinygrad's lowering (to remember which AST each PROGRAM came from) and its kernel launch
  (to copy the buffers out around it). Compiles in this process so the AST wrapper sees every kernel."""
  active = None  # the launch wrapper is a pattern-matcher function: tinygrad compiles those, no closures

  def __init__(self):
    self.ast_of, self.runs, self.model, self.program = {}, [], "", None
    self.context_of = {}  # the codegen settings a model ran under that change its kernels (codegen_settings)

  def to_program(self, ast, ren):
    prg = self.saved[0](ast, ren)
    self.ast_of[prg.key] = ast
    self.context_of[prg.key] = codegen_settings()
    return prg

  def __enter__(self):
    self.saved = (realize.to_program, realize.pm_exec, realize.get_worker_pool)
    Capture.active = self
    realize.to_program, realize.get_worker_pool = self.to_program, lambda: None
    realize.pm_exec = PatternMatcher([(UPat(Ops.CALL, src=(UPat(Ops.PROGRAM, name="ast"),), name="call", allow_any_len=True),
                                       _exec_kernel_captured)]) + self.saved[1]
    return self

  def __exit__(self, *exc):
    realize.to_program, realize.pm_exec, realize.get_worker_pool = self.saved
    Capture.active = None


def _exec_kernel_captured(ctx, call, ast):
  """tinygrad's exec_kernel, with every argument buffer copied out before and every output after."""
  res = realize.resolve_params(call, ctx.input_uops)
  bufs = {slot: res[slot].buffer for slot in ast.arg.globals}
  before = {}
  for slot, b in bufs.items():
    allocated = b.is_allocated()
    b.ensure_allocated()
    before[slot] = bytes(b.as_memoryview()) if allocated else None
  ret = realize.exec_kernel(ctx, call, ast)
  after = {slot: bytes(bufs[slot].as_memoryview()) for slot in ast.arg.outs}
  cap = Capture.active
  cap.runs.append({"model": cap.model, "program": cap.program, "prg": ast, "before": before, "after": after})
  return ret


def capture(models):
  cap = Capture()
  with cap:
    for m in models:
      cap.model = m
      realize.to_program_cache.clear()  # every model lowers its own kernels (so the AST wrapper sees them)
      MODELS[m]()
  return cap


# ---- kernel files ----


def float_dtype(name): return name in ("float", "half", "bfloat16", "double")


def attach(k: dict, run: dict, out_dir: str, tol: float) -> str | None:
  """The captured buffers as the file's data; None, or why the run cannot stand as a kernel file."""
  prog = k["program"]
  entries, blob = {"inputs": [], "outputs": []}, b""
  args = {a["slot"]: a for a in prog["kernel_args"]}
  for kind in ("inputs", "outputs"):
    for slot in sorted(args):
      a = args[slot]
      # an input: a slot read, or one not written; and a slot written whose buffer already held data
      # (an in-place update or a partial write keeps what it does not overwrite)
      if kind == "inputs" and not (slot in prog["ins"] or slot not in prog["outs"] or run["before"][slot] is not None): continue
      if kind == "outputs" and slot not in prog["outs"]: continue
      raw = run["before"][slot] if kind == "inputs" else run["after"][slot]
      if raw is None: raw = bytes(a["nbytes"])  # read but never written by tinygrad: its allocation's zeros
      if len(raw) != a["nbytes"]: return f"slot {slot}: the buffer has {len(raw)} bytes, the kernel's parameter {a['nbytes']}"
      entries[kind].append({"slot": slot, "dtype": a["logical"], "count": a["size"], "offset": len(blob), "nbytes": len(raw),
                            "preview": []})
      blob += raw
  floats = any(float_dtype(args[s]["logical"]) for s in prog["outs"])
  k["data"] = {"file": k["name"] + ".bin", "byte_order": "little", **entries,
               "output_tolerance": {"rtol": tol if floats else 0, "atol": tol if floats else 0}}
  k["execution"] = {"executed_on_pocl": True, "expected_from": "this kernel run by tinygrad on PoCL inside a model"
                    + ("" if k["opts_requested"] is None else " (the heuristic opts; this file is an opt variant)")}
  with open(os.path.join(out_dir, k["name"] + ".bin"), "wb") as f: f.write(blob)
  return None


class SinkAtOpts:
  """The AST as apply_opts receives it (after the front stages): the Scheduler's starting point."""
  def __enter__(self):
    self.orig, self.sink = cg.apply_opts, None

    def apply_opts(ast, ren, beam=0):
      self.sink = ast
      return self.orig(ast, ren, beam)
    cg.apply_opts = apply_opts
    return self

  def __exit__(self, *exc): cg.apply_opts = self.orig


def random_variants(sink, ren, n: int, rng: random.Random, extend: bool = False) -> list:
  """n distinct opt lists, each one to three random steps through tinygrad's BEAM action space. With extend,
  every second list is tinygrad's heuristic opts followed by one or two random steps: the deeper combinations
  (upcasts, unrolls and locals, then a GROUP or another split) that a BEAM search walks through."""
  out, tries = [], 0
  while len(out) < n and tries < 4 * n:
    tries += 1
    s = Scheduler(sink, ren)
    s.convert_loop_to_global()
    deeper = extend and len(out) % 2 == 1
    if deeper: s = hand_coded_optimizations(s)
    for _ in range(rng.randint(1, 2) if deeper else rng.randint(1, 3)):
      acts = [a for a in get_kernel_actions(s, include_0=False).values()
              if a.applied_opts[-1].op not in (OptOps.TC, OptOps.THREAD)]
      if not acts: break
      s = rng.choice(acts)
    if s.applied_opts and s.applied_opts not in out: out.append(list(s.applied_opts))
  return out


def symbolic_launch(k: dict) -> dict:
  """A kernel file with a variable: launch sizes that depend on it as their text (docs/json.md), and the
  names of its variable arguments as `program.vars`."""
  p = k["program"]
  for key in ("global_size", "local_size"):
    if p[key]: p[key] = [x if isinstance(x, int) else {"t": "sym", "v": x.render()} for x in p[key]]
  p["vars"] = re.findall(r"const int (data\d+_)", k["source"])
  return k


def opt_str(opts) -> str: return ",".join(f"{o.op.name}:{o.axis}:{o.arg}" for o in opts)


def write_kernels(cap, out_dir: str, n_variants: int, seed: int, extend: bool = False):
  ren = Device["CL"].renderer
  rng = random.Random(seed)
  seen, files, counts = set(), [], collections.Counter()
  for run in cap.runs:
    ast = cap.ast_of.get(run["prg"].key)
    counts[run["model"]] += 1
    if ast is None or ast.key in seen: continue
    seen.add(ast.key)
    context = cap.context_of.get(run["prg"].key, {})
    with SinkAtOpts() as at:
      k = oracle.export("", ast, ren, "pocl", context)
    prog = "" if run["program"] is None else f"p{run['program']:03d}."
    base = f"{run['model']}.{len(seen) - 1:03d}.{prog}{k['function_name']}"
    k["name"] = k["spec"] = base
    if k["source"] != run["prg"].src[2].arg: print(f"NOTE {base}: the exported source differs from the one tinygrad ran")
    variables = re.findall(r"const int (data\d+_)", k["source"])
    if variables:  # a scalar argument: kernel files carry no values for it, so the file is compiled, not run
      symbolic_launch(k)
      json.dump(k, open(os.path.join(out_dir, base + ".json"), "w"))
      files.append((base, run["model"], None))
      continue
    why = attach(k, run, out_dir, 1e-4)
    if why: print(f"SKIP {base}: {why}"); continue
    json.dump(k, open(os.path.join(out_dir, base + ".json"), "w"))
    files.append((base, run["model"], None))
    for i, opts in enumerate(random_variants(at.sink, ren, n_variants, rng, extend)):
      vname = f"{base}.v{i}"
      try:
        v = oracle.export(vname, oracle.with_opts(ast, opts), ren, "pocl", context)
      except Exception as e:  # tinygrad cannot compile this opt list: not a kernel to compare
        print(f"SKIP {vname} [{opt_str(opts)}]: tinygrad: {type(e).__name__}: {str(e)[:200]}")
        continue
      # tinygrad lowered the variant to a program that stores nothing or drops a buffer the kernel reads (a padded reduce
      # it lost): its bug, and the file could not carry the dropped inputs
      if not v["program"]["outs"] or set(v["program"]["globals"]) < set(k["program"]["globals"]):
        print(f"SKIP {vname} [{opt_str(opts)}]: tinygrad's program for these opts drops buffers "
              f"{sorted(set(k['program']['globals']) - set(v['program']['globals']))}")
        continue
      v["opts_requested"] = [oracle.enc(o) for o in opts]
      if attach(v, run, out_dir, 1e-3): continue  # 1e-3: another reduction order than the run's
      json.dump(v, open(os.path.join(out_dir, vname + ".json"), "w"))
      files.append((vname, run["model"], opts))
  return files, counts


# ---- uopcg on every file, and the classification ----


def cause_of(text: str) -> str:
  """A failure's cause: the first line of uopcg's message, numbers and names masked, so that one
  cause in many kernels counts once."""
  line = next((ln for ln in text.strip().splitlines() if ln.strip()), "(no message)")
  line = re.sub(r"^uopcg( \w+)?: ", "", line)
  line = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", line)
  line = re.sub(r"\S+\.json", "FILE", line)
  return re.sub(r"\d+", "N", line)[:140]


def difference(theirs: str, ours: str) -> str:
  """What kind of difference two sources show: the same statements in another order (names
  renumbered), uopcg's explicit wrap-around for signed arithmetic that may overflow, or other."""
  def statements(src): return sorted(re.sub(r"\b(alu|val|cast|acc)\d+", "X", ln).strip() for ln in src.splitlines())
  if statements(theirs) == statements(ours): return "statement order"
  if re.search(r"as_u(char|short|int|long)\(", ours) and not re.search(r"as_u(char|short|int|long)\(", theirs):
    return "explicit wrap-around"
  return "other"


def check(exe: str, out_dir: str, name: str) -> dict:
  path = os.path.join(out_dir, name + ".json")
  k = json.load(open(path))
  want = k["source"]
  r = {"name": name}
  if k["program"]["vars"]: return check_text_only(exe, path, want, r)
  c = subprocess.run([exe, "compile", path], capture_output=True, text=True)
  r["compiled"] = c.returncode == 0
  r["identical"] = c.returncode == 0 and c.stdout.rstrip("\n") == want
  if c.returncode != 0:
    r["cause"] = "compile: " + cause_of(c.stderr)
    return r
  if not r["identical"]: r["difference"] = difference(want, c.stdout.rstrip("\n"))
  f = subprocess.run([exe, "compile", path, "--from-ast"], capture_output=True, text=True)
  r["identical_from_ast"] = f.returncode == 0 and f.stdout.rstrip("\n") == want
  if f.returncode != 0: r["from_ast_error"] = cause_of(f.stderr)
  x = subprocess.run([exe, "run", path], capture_output=True, text=True)
  r["passed"] = x.returncode == 0
  if not r["passed"]:
    r["cause"] = run_failure(x)
    base = os.path.join(out_dir, re.sub(r"\.v\d+$", "", name) + ".json")
    if r["cause"] == "wrong outputs" and reset_fault(exe, path, base if base != path and os.path.exists(base) else ""):
      r["cause"] = RESET_FAULT
  elif f.returncode != 0: r["passed"], r["cause"] = False, "from the AST: compile: " + r["from_ast_error"]
  elif f.stdout != c.stdout:  # uopcg's front stages made another program: run it too
    x = subprocess.run([exe, "run", path, "--from-ast"], capture_output=True, text=True)
    r["passed"] = x.returncode == 0
    if not r["passed"]: r["cause"] = "from the AST: " + run_failure(x)
  if r["passed"] and k["opts_requested"] is None: check_heuristic(exe, path, f.stdout, r)
  r["detail"] = (c.stderr + x.stdout + x.stderr).strip()[:600]
  return r


def check_text_only(exe: str, path: str, want: str, r: dict) -> dict:
  """A kernel with a variable (a scalar argument): compiled from the post-opts graph and from the AST, compared with
  tinygrad's source; it passes when both compile (a difference in the source is classified as for the others)."""
  for how, key in (([], "identical"), (["--from-ast"], "identical_from_ast")):
    c = subprocess.run([exe, "compile", path, *how], capture_output=True, text=True)
    r[key] = c.returncode == 0 and c.stdout.rstrip("\n") == want
    if c.returncode != 0:
      r["passed"], r["cause"] = False, ("from the AST: " if how else "") + "compile: " + cause_of(c.stderr)
      return r
    if not how and not r[key]: r["difference"] = difference(want, c.stdout.rstrip("\n"))
  r["passed"], r["compiled_only"] = True, True
  return r


def check_heuristic(exe: str, path: str, from_ast: str, r: dict) -> None:
  """A captured kernel's opts are tinygrad's heuristics (hand_coded_optimizations): uopcg's own heuristics from
  the AST should choose the same, so give the from-AST program with the file's opts; where they do not, that
  program must still compute the outputs."""
  h = subprocess.run([exe, "compile", path, "--from-ast", "--opts", "heuristic"], capture_output=True, text=True)
  r["heuristic_same"] = h.returncode == 0 and h.stdout == from_ast
  if h.returncode != 0: r["passed"], r["cause"] = False, "heuristic opts: compile: " + cause_of(h.stderr)
  elif not r["heuristic_same"]:
    x = subprocess.run([exe, "run", path, "--from-ast", "--opts", "heuristic"], capture_output=True, text=True)
    if x.returncode != 0: r["passed"], r["cause"] = False, "heuristic opts: " + run_failure(x)


RESET_FAULT = ("tinygrad's: it resets an accumulator inside its own reduce loop (uopcg computes tinygrad's program "
               "with the resets moved before their loops)")


def move_accumulator_resets(src: str):
  """tinygrad 0.14 (PCONTIG=2: a reduce over a LOCAL stage) resets a REG accumulator inside its own reduce loop
  (`for (int Ridx2 ...) { val = buf4[Ridx2]; *(buf1+0) = 0.0f; *(buf1+0) = ...; }`): the source with every such
  reset moved to just before its loop, and how many were moved."""
  lines, moved = src.split("\n"), 0
  def indent(ln): return len(ln) - len(ln.lstrip(" "))
  for i in range(len(lines)):
    m = re.match(r"^( *)\*\((buf\d+)\+0\) = (0\.0f|0|\(\(\w+\)\(-INFINITY\)\)|\(\(\w+\)\(INFINITY\)\)|1\.0f);$", lines[i])
    if not m: continue
    ind = len(m.group(1))
    # the update follows in the same block, not inside a nested loop (there the reset is the nested reduce's own)
    k = i + 1
    while k < len(lines) and indent(lines[k]) >= ind and not (
        indent(lines[k]) == ind and lines[k].lstrip().startswith(f"*({m.group(2)}+0) = ")): k += 1
    if k >= len(lines) or indent(lines[k]) < ind: continue
    j = i - 1
    while j >= 0 and indent(lines[j]) >= ind: j -= 1
    if j >= 0 and re.match(r"^ *for \(int Ridx", lines[j]) and indent(lines[j]) == ind - 2:
      lines.insert(j, lines.pop(i)[2:])
      moved += 1
  return "\n".join(lines), moved


def outputs_with_resets_moved(path: str, base_path: str = ""):
  """The file's data blob with its outputs replaced by what the source of the kernel whose outputs the file holds
  (the file's own, or for a variant the captured kernel's, `base_path`) computes with its accumulator resets moved
  before their loops (pyopencl on the file's inputs); None when that source has no such reset."""
  k = json.load(open(path))
  b = json.load(open(base_path)) if base_path else k
  src, moved = move_accumulator_resets(b["source"])
  if not moved or k["program"]["vars"]: return None
  import pyopencl as cl
  blob = bytearray(open(os.path.join(os.path.dirname(path), k["data"]["file"]), "rb").read())
  inputs = {e["slot"]: bytes(blob[e["offset"]:e["offset"] + e["nbytes"]]) for e in k["data"]["inputs"]}
  ctx = cl.Context(devices=[cl.get_platforms()[0].get_devices()[0]])
  q = cl.CommandQueue(ctx)
  knl = getattr(cl.Program(ctx, src).build(), b["function_name"])
  prog, bufs = b["program"], []
  for arg in prog["kernel_args"]:
    raw = inputs.get(arg["slot"], b"\xa5" * arg["nbytes"])
    bufs.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=bytearray(raw)))
  lsz = prog["local_size"]
  knl(q, [g * (lsz[i] if lsz else 1) for i, g in enumerate(prog["global_size"])], lsz, *bufs)
  for arg, buf in zip(prog["kernel_args"], bufs):
    e = next((o for o in k["data"]["outputs"] if o["slot"] == arg["slot"]), None)
    if e is None: continue
    got = bytearray(arg["nbytes"])
    cl.enqueue_copy(q, got, buf)
    blob[e["offset"]:e["offset"] + e["nbytes"]] = got[:e["nbytes"]]
  q.finish()
  return blob


def reset_fault(exe: str, path: str, base_path: str = "") -> bool:
  """Whether a file's other outputs are tinygrad's accumulator reset: the source of the kernel whose outputs the
  file holds has resets inside reduce loops, and uopcg's programs (from the post-opts graph and from the AST)
  compute what that source computes with the resets moved before their loops (outputs_with_resets_moved)."""
  blob = outputs_with_resets_moved(path, base_path)
  if blob is None: return False
  k = json.load(open(path))
  fixed = os.path.join(os.path.dirname(path), k["name"] + ".resets_moved")
  k["data"]["file"] = os.path.basename(fixed) + ".bin"
  with open(fixed + ".bin", "wb") as f: f.write(blob)
  with open(fixed + ".json", "w") as f: json.dump(k, f)
  try:
    return all(subprocess.run([exe, "run", fixed + ".json", *how], capture_output=True, text=True).returncode == 0
               for how in ([], ["--from-ast"]))
  finally:
    for ext in (".json", ".bin"): os.remove(fixed + ext)


def run_failure(x) -> str:
  """The cause of a failed `uopcg run`."""
  if x.returncode == 1 and x.stdout.startswith("output slot"): return "wrong outputs"
  if x.returncode == 3: return "barrier verifier rejects the program"
  return "run: " + cause_of(x.stderr + x.stdout)


def table(results, files) -> str:
  model_of = {n: m for n, m, _ in files}
  variant = {n: o is not None for n, _, o in files}
  rows = []
  for m in list(MODELS) + ["total"]:
    for kind in ("captured", "variants"):
      rs = [r for r in results if (m == "total" or model_of[r["name"]] == m) and variant[r["name"]] == (kind == "variants")]
      if not rs: continue
      fails = sum(1 for r in rs if not r.get("passed"))
      rows.append(f"| {m} | {kind} | {len(rs)} | {sum(r['identical'] for r in rs)} | {sum(r.get('identical_from_ast', False) for r in rs)} "
                  f"| {sum(bool(r.get('passed')) for r in rs)} | {fails} |")
  head = ("| model | kind | files | identical source | identical source from the AST | pass (outputs match) | fail |\n"
          "|---|---|---|---|---|---|---|\n")
  causes = collections.Counter(r["cause"] for r in results if "cause" in r)
  cause_rows = "".join(f"| {c} | {n} |\n" for c, n in causes.most_common())
  diffs = collections.Counter(r["difference"] for r in results if "difference" in r)
  diff_rows = "".join(f"| {d} | {n} | {sum(1 for r in results if r.get('difference') == d and r.get('passed'))} |\n"
                      for d, n in diffs.most_common())
  heur = [r for r in results if "heuristic_same" in r]
  heur_line = (f"\nuopcg's heuristics (`--from-ast --opts heuristic`) chose tinygrad's opts for {sum(r['heuristic_same'] for r in heur)}"
               f" of {len(heur)} captured kernels that pass\n")
  return (head + "\n".join(rows) + "\n" + heur_line + "\n| source differs from tinygrad's | files | of them pass |\n|---|---|---|\n"
          + (diff_rows or "| (none) | 0 | 0 |\n") + "\n| failure cause | files |\n|---|---|\n" + (cause_rows or "| (none) | 0 |\n"))


def keep(out_dir: str, dest: str, names) -> None:
  """Copy kernel files into the repository's test set: compact, without tinygrad's own lowering
  (full_sink, linear), which `uopcg compile` and `uopcg run` do not read."""
  os.makedirs(dest, exist_ok=True)
  for n in names:
    k = json.load(open(os.path.join(out_dir, n + ".json")))
    for key in ("full_sink", "linear"): k.pop(key, None)
    with open(os.path.join(dest, n + ".json"), "w") as f: json.dump(k, f, separators=(",", ":"))
    if not os.path.exists(os.path.join(out_dir, n + ".bin")): continue  # a kernel with a variable: compiled, not run
    with open(os.path.join(out_dir, n + ".bin"), "rb") as src, open(os.path.join(dest, n + ".bin"), "wb") as f: f.write(src.read())


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--out", default="/tmp/uopcg_models")
  ap.add_argument("--uopcg", default=os.path.join(oracle.ROOT, "build", "uopcg"))
  ap.add_argument("--only", nargs="*", choices=list(MODELS))
  ap.add_argument("--variants", type=int, default=2, help="random opt variants per captured kernel")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--extend-heuristic", action="store_true",
                  help="every second variant extends tinygrad's heuristic opts by one or two random steps")
  ap.add_argument("--fuzz-seed", type=int, default=0, help="the fuzz set's programs are drawn from this seed")
  ap.add_argument("--fuzz-programs", type=int, default=24, help="how many random programs the fuzz set runs")
  ap.add_argument("--jobs", type=int, default=2, help="uopcg processes at a time")
  ap.add_argument("--recheck", action="store_true", help="run uopcg on the files already in --out (no capture)")
  ap.add_argument("--no-run", action="store_true", help="capture and write the kernel files only")
  ap.add_argument("--keep", nargs="+", metavar=("DIR", "NAME"), help="copy the named kernel files from --out into DIR and stop")
  a = ap.parse_args()
  if a.keep:
    keep(a.out, a.keep[0], a.keep[1:])
    return 0
  if Device.DEFAULT != "CL": sys.exit(f"needs tinygrad's CL device (PoCL), not {Device.DEFAULT}")
  os.makedirs(a.out, exist_ok=True)
  if a.recheck:  # the files an earlier capture wrote
    names = sorted(f[:-len(".json")] for f in os.listdir(a.out) if f.endswith(".json") and f != "results.json")
    files = [(n, n.split(".")[0], [] if re.search(r"\.v\d+$", n) else None) for n in names]
  else:
    FUZZ.update(seed=a.fuzz_seed, programs=a.fuzz_programs, out=a.out)
    cap = capture(a.only or DEFAULT_SET)
    files, counts = write_kernels(cap, a.out, a.variants, a.seed, a.extend_heuristic)
    print("kernel launches per model: " + ", ".join(f"{m} {n}" for m, n in counts.items()))
  print(f"{len(files)} kernel files in {a.out}")
  if a.no_run: return 0
  results = []
  with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
    for r in pool.map(lambda f: check(a.uopcg, a.out, f[0]), files):  # in order, as they finish
      results.append(r)
      tag = "ok  " if r.get("passed") else "FAIL"
      print(f"{tag} {r['name']}{'' if r['identical'] else ' (source differs)'}" + ("" if r.get("passed") else f": {r['cause']}"),
            flush=True)
  json.dump(results, open(os.path.join(a.out, "results.json"), "w"), indent=1)
  print()
  print(table(results, files))
  return 0 if all(r.get("passed") for r in results) else 1


if __name__ == "__main__":
  sys.exit(main())
