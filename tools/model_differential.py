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
  python3 tools/model_differential.py --uopcg build/uopcg --only fuzz [--fuzz-seed 0] [--fuzz-programs 24]
  python3 tools/model_differential.py --out /tmp/uopcg_models --keep tests/e2e/models NAME...   # the CI set
Prints one line per kernel file and a Markdown summary table (the one in docs/model-differential.md);
exit status 1 when a kernel's outputs differ or uopcg fails on it.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tinygrad_oracle as oracle  # noqa: E402  (export: the kernel-file JSON of an AST, as tinygrad compiles it)
import tensor_fuzz  # noqa: E402  (the fuzz set's random programs)

from tinygrad import Tensor, Device, Context, dtypes, nn  # noqa: E402
import tinygrad.codegen as cg  # noqa: E402
import tinygrad.engine.realize as realize  # noqa: E402
from tinygrad.codegen.opt import OptOps  # noqa: E402
from tinygrad.codegen.opt.postrange import Scheduler  # noqa: E402
from tinygrad.codegen.opt.search import get_kernel_actions  # noqa: E402
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
          "ops": run_ops, "fuzz": run_fuzz}
DEFAULT_SET = [m for m in MODELS if m != "fuzz"]  # the fuzz set runs when asked for

# ---- capture: every kernel tinygrad runs, with its buffers before and after ----


class Capture:
  """Wraps tinygrad's lowering (to remember which AST each PROGRAM came from) and its kernel launch
  (to copy the buffers out around it). Compiles in this process so the AST wrapper sees every kernel."""
  active = None  # the launch wrapper is a pattern-matcher function: tinygrad compiles those, no closures

  def __init__(self):
    self.ast_of, self.runs, self.model, self.program = {}, [], "", None

  def to_program(self, ast, ren):
    prg = self.saved[0](ast, ren)
    self.ast_of[prg.key] = ast
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


def random_variants(sink, ren, n: int, rng: random.Random) -> list:
  """n distinct opt lists, each one to three random steps through tinygrad's BEAM action space."""
  out, tries = [], 0
  while len(out) < n and tries < 4 * n:
    tries += 1
    s = Scheduler(sink, ren)
    s.convert_loop_to_global()
    for _ in range(rng.randint(1, 3)):
      acts = [a for a in get_kernel_actions(s, include_0=False).values()
              if a.applied_opts[-1].op not in (OptOps.TC, OptOps.THREAD)]
      if not acts: break
      s = rng.choice(acts)
    if s.applied_opts and s.applied_opts not in out: out.append(list(s.applied_opts))
  return out


def opt_str(opts) -> str: return ",".join(f"{o.op.name}:{o.axis}:{o.arg}" for o in opts)


def write_kernels(cap, out_dir: str, n_variants: int, seed: int):
  ren = Device["CL"].renderer
  rng = random.Random(seed)
  seen, files, counts = set(), [], collections.Counter()
  for run in cap.runs:
    ast = cap.ast_of.get(run["prg"].key)
    counts[run["model"]] += 1
    if ast is None or ast.key in seen: continue
    seen.add(ast.key)
    with SinkAtOpts() as at:
      k = oracle.export("", ast, ren, "pocl", {})
    prog = "" if run["program"] is None else f"p{run['program']:03d}."
    base = f"{run['model']}.{len(seen) - 1:03d}.{prog}{k['function_name']}"
    k["name"] = k["spec"] = base
    if k["source"] != run["prg"].src[2].arg: print(f"NOTE {base}: the exported source differs from the one tinygrad ran")
    why = attach(k, run, out_dir, 1e-4)
    if why: print(f"SKIP {base}: {why}"); continue
    json.dump(k, open(os.path.join(out_dir, base + ".json"), "w"))
    files.append((base, run["model"], None))
    for i, opts in enumerate(random_variants(at.sink, ren, n_variants, rng)):
      vname = f"{base}.v{i}"
      try:
        v = oracle.export(vname, oracle.with_opts(ast, opts), ren, "pocl", {})
      except Exception as e:  # tinygrad cannot compile this opt list: not a kernel to compare
        print(f"SKIP {vname} [{opt_str(opts)}]: tinygrad: {type(e).__name__}: {str(e)[:200]}")
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
  want = json.load(open(path))["source"]
  r = {"name": name}
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
  if not r["passed"]: r["cause"] = run_failure(x)
  elif f.returncode != 0: r["passed"], r["cause"] = False, "from the AST: compile: " + r["from_ast_error"]
  elif f.stdout != c.stdout:  # uopcg's front stages made another program: run it too
    x = subprocess.run([exe, "run", path, "--from-ast"], capture_output=True, text=True)
    r["passed"] = x.returncode == 0
    if not r["passed"]: r["cause"] = "from the AST: " + run_failure(x)
  r["detail"] = (c.stderr + x.stdout + x.stderr).strip()[:600]
  return r


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
  return (head + "\n".join(rows) + "\n\n| source differs from tinygrad's | files | of them pass |\n|---|---|---|\n"
          + (diff_rows or "| (none) | 0 | 0 |\n") + "\n| failure cause | files |\n|---|---|\n" + (cause_rows or "| (none) | 0 |\n"))


def keep(out_dir: str, dest: str, names) -> None:
  """Copy kernel files into the repository's test set: compact, without tinygrad's own lowering
  (full_sink, linear), which `uopcg compile` and `uopcg run` do not read."""
  os.makedirs(dest, exist_ok=True)
  for n in names:
    k = json.load(open(os.path.join(out_dir, n + ".json")))
    for key in ("full_sink", "linear"): k.pop(key, None)
    with open(os.path.join(dest, n + ".json"), "w") as f: json.dump(k, f, separators=(",", ":"))
    with open(os.path.join(out_dir, n + ".bin"), "rb") as src, open(os.path.join(dest, n + ".bin"), "wb") as f: f.write(src.read())


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--out", default="/tmp/uopcg_models")
  ap.add_argument("--uopcg", default=os.path.join(oracle.ROOT, "build", "uopcg"))
  ap.add_argument("--only", nargs="*", choices=list(MODELS))
  ap.add_argument("--variants", type=int, default=2, help="random opt variants per captured kernel")
  ap.add_argument("--seed", type=int, default=0)
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
    files, counts = write_kernels(cap, a.out, a.variants, a.seed)
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
