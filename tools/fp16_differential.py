#!/usr/bin/env python3
"""Native-half differential test: uopcg's OpenCL C for the `fp16` renderer kind (the PoCL target with
`,cl_khr_fp16` appended to its arch: half is a native type, docs/json.md) compared with tinygrad's, on
many kernels that compute in half.

PoCL has no cl_khr_fp16, so tinygrad_oracle.py, model_differential.py and ast_fuzz.py run the `pocl`
kind only, where codegen emulates half in float. This tool draws kernels from the same places, runs them
on the CL device (half emulated) as model_differential.py does to capture the buffers they read and
wrote, and exports every AST (and random opt variants of it) rendered by tinygrad for the fp16 target:
  layers  hand-written model layers in half: convs, norms, softmax, attention, half matmuls (half and
          float accumulation), casts half <-> float/int/bool, half reductions, comparisons and selects,
          transcendental functions on half (natively and with TRANSCENDENTAL=2, whose polynomials
          depend on the dtype)
  fuzz    tensor_fuzz.py programs; --half-heavy draws most inputs in float16 and reduces half values
          in half too (which tinygrad's emulation on PoCL cannot always compile: such a kernel is then
          rendered for the fp16 target only, without data)
  ast     ast_fuzz.py's generator with half as the most common float dtype
Each file is checked as text, as the corpus's native-half kernel is: `uopcg compile FILE --target fp16`
from the post-opts graph and with --from-ast, each compared with tinygrad's source. Float-only kernels
are kept too (the fp16 target must change nothing for them). The captured data (the emulated-half run)
is attached to the files for reference; no device here builds native half (see docs/fp16-differential.md).

usage:
  POCL_MAX_PTHREAD_COUNT=1 python3 tools/fp16_differential.py --uopcg build/uopcg --out /tmp/uopcg_fp16 \
      [--sets layers fuzz ast] [--variants 2] [--fuzz-seed 21] [--fuzz-programs 20] [--half-heavy]
      [--ast-seed 0] [--ast-kernels 40] [--jobs 2] [--pocl]
  python3 tools/fp16_differential.py --uopcg build/uopcg --out DIR --recheck     # uopcg on the files in DIR
  python3 tools/fp16_differential.py --out DIR --keep tests/e2e/models NAME...   # the CI set (as model_differential.py)
Prints one line per file (`ok`; `DIFF`: the source differs in a way KNOWN below does not classify, to
be read; `FAIL`: uopcg cannot compile it) and a summary; exit status 1 when uopcg fails to compile a
file (or, with --pocl, an emulated-half file computes other outputs).
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tinygrad_oracle as oracle  # noqa: E402  (export: a kernel file of an AST as tinygrad compiles it)
import model_differential as md  # noqa: E402  (capture, attach, random_variants, SinkAtOpts, difference)
import tensor_fuzz  # noqa: E402
import ast_fuzz  # noqa: E402
import source_algebra  # noqa: E402  (same values up to the grouping of + and *: symbolic divergence 3)

from tinygrad import Tensor, Device, Context, dtypes  # noqa: E402
from tinygrad.renderer.cstyle import OpenCLRenderer  # noqa: E402
from tinygrad.helpers import Target  # noqa: E402
import tinygrad.engine.realize as realize  # noqa: E402

HALF = dtypes.half


def fp16_renderer():
  """tinygrad's OpenCL renderer for the fp16 kind: this device's arch with cl_khr_fp16 appended."""
  arch = Device["CL"].renderer.target.arch
  return OpenCLRenderer(Target("CL", arch=arch if "cl_khr_fp16" in arch else arch + ",cl_khr_fp16"))


# ---- capture: every AST tinygrad lowers, also those its emulated-half build rejects ----


class Capture(md.Capture):
  """model_differential's capture, remembering each AST before it is compiled for PoCL (a kernel the
  emulation fails on still has a native-half rendering to compare) and the codegen context it ran in."""
  context: dict = {}

  def __init__(self):
    super().__init__()
    self.asts = {}  # ast.key -> (ast, model, program, context), in lowering order

  def to_program(self, ast, ren):
    self.asts.setdefault(ast.key, (ast, self.model, self.program, dict(Capture.context)))
    return super().to_program(ast, ren)


def half_layers():
  """Model layers computing in half, on the device (half emulated there). Inputs are host data (no
  threefry kernels); each output is realized alone, so one that tinygrad's emulation fails on (a half
  reduction it cannot verify) loses only its own kernels."""
  rng = np.random.default_rng(24)
  h = lambda *s: Tensor(rng.uniform(-2, 2, s).astype(np.float16))  # noqa: E731
  f = lambda *s: Tensor(rng.uniform(-2, 2, s).astype(np.float32))  # noqa: E731
  i32 = lambda *s: Tensor(rng.integers(-100, 100, s).astype(np.int32))  # noqa: E731
  x = h(2, 4, 9, 9)
  q, k, v = h(1, 2, 6, 8), h(1, 2, 6, 8), h(1, 2, 6, 8)
  layers = [
    # convs, pools, norms, attention
    lambda: x.conv2d(h(8, 4, 3, 3), h(8), padding=1), lambda: x.conv2d(h(4, 1, 3, 3), groups=4, stride=2),
    lambda: x.conv2d(h(6, 4, 1, 1)).relu(), lambda: x.max_pool2d(kernel_size=3, stride=2), lambda: x.avg_pool2d(kernel_size=2),
    lambda: h(6, 32).layernorm(), lambda: h(6, 32).softmax(-1), lambda: h(5, 17).log_softmax(), lambda: h(4, 40).logsumexp(1),
    lambda: q.scaled_dot_product_attention(k, v), lambda: q.scaled_dot_product_attention(k, v, is_causal=True),
    lambda: (f(6, 32).layernorm().half() @ h(32, 16)).relu(),  # mixed precision: a float norm cast to half
    # matmuls: half accumulation, float accumulation
    lambda: h(16, 24) @ h(24, 8), lambda: h(16, 24).matmul(h(24, 8), dtype=dtypes.float), lambda: (h(3, 8, 16) @ h(3, 16, 4)).float(),
    lambda: h(1, 64) @ h(64, 32), lambda: h(64).dot(h(64)),
    # reductions
    lambda: h(64).sum(), lambda: h(33, 7).sum(axis=0), lambda: h(13, 29).max(axis=1), lambda: h(9, 11).min(axis=0),
    lambda: h(40, 6).mean(axis=0), lambda: h(8, 30).argmax(1), lambda: h(30).cumsum(), lambda: h(12, 10).var(axis=1),
    lambda: h(7, 9).std(axis=0), lambda: (h(20).abs() * 0.1 + 0.95).prod(), lambda: h(300).sum(dtype=dtypes.half),
    lambda: f(16, 20).half().sum(axis=1), lambda: h(16, 20).float().sum(axis=1).half(),
    # comparisons, selects, max
    lambda: h(128).maximum(h(128)), lambda: (h(64) < h(64)).where(h(64), h(64)), lambda: (h(50) == h(50)) | (h(50) != 1),
    lambda: h(40).clip(-0.5, 0.5), lambda: h(64).relu6(), lambda: (h(64) > 0.5).where(1.0, h(64)),
    # casts
    lambda: h(64).cast(dtypes.int32), lambda: (h(64).abs() * 50).cast(dtypes.uint8), lambda: i32(64).cast(dtypes.half) * 0.5,
    lambda: h(64).cast(dtypes.float) * 3, lambda: (f(64) * 3).cast(dtypes.half), lambda: (h(64) > 0).cast(dtypes.half),
    lambda: h(48).cast(dtypes.bool), lambda: h(64).cast(dtypes.int8).cast(dtypes.half), lambda: h(64).bitcast(dtypes.uint16),
    lambda: h(32).cast(dtypes.double) + 1, lambda: (f(64) + 1).half().float() * 2, lambda: h(64).cast(dtypes.int64),
    lambda: h(64).cast(dtypes.bfloat16).cast(dtypes.float),
    # transcendental and other unary functions
    lambda: h(96).exp(), lambda: h(96).abs().log(), lambda: h(96).abs().sqrt(), lambda: h(96).sin(), lambda: h(96).cos(),
    lambda: h(96).exp2(), lambda: (h(96).abs() + 1).log2(), lambda: (h(96).abs() + 1).reciprocal(), lambda: (h(96).abs() + 1).rsqrt(),
    lambda: h(96).tanh(), lambda: h(96).sigmoid(), lambda: h(96).gelu(), lambda: h(96).erf(), lambda: h(96).abs() ** 1.5,
    lambda: h(96).floor() + h(96).ceil(), lambda: h(96).round(), lambda: h(96).trunc(), lambda: h(64).silu(), lambda: h(64).hardswish(),
    lambda: h(96) / (h(96).abs() + 1), lambda: h(96) % 1.5, lambda: h(96).tan(), lambda: h(64).softplus(), lambda: h(64).mish(),
    # elementwise and movement
    lambda: h(32, 1) * h(1, 32) + 2, lambda: h(40, 40).permute(1, 0) * 2, lambda: h(20).pad((3, 2), value=1.5),
    lambda: h(64, 64) * h(64, 64) + h(64, 64), lambda: h(8, 8).flip(0)[1:7:2] - 1, lambda: h(10, 12).cat(h(10, 4), dim=1) + 0.5,
    lambda: (h(33) > 0).where(h(33), float("-inf")), lambda: h(64).isnan() | h(64).isinf(),
  ]
  poly = [lambda: h(96).exp(), lambda: h(96).abs().log(), lambda: h(96).sin(), lambda: h(96).exp2(), lambda: (h(96).abs() + 1).log2(),
          lambda: h(64).gelu(), lambda: h(64).tanh(), lambda: (h(64).abs() + 0.5) ** h(64)]
  for ctx, fns in (({}, layers), ({"TRANSCENDENTAL": 2}, poly)):  # TRANSCENDENTAL=2: the polynomials, per dtype
    Capture.context = ctx
    for n, fn in enumerate(fns):
      try:
        with Context(**ctx): fn().realize()
      except Exception as e:  # noqa: BLE001  (tinygrad's emulated-half build failed: its AST is kept, text-only)
        print(f"NOTE layer {n}{' ' + str(ctx) if ctx else ''}: tinygrad: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}")
  Capture.context = {}


class HalfProgram(tensor_fuzz.Program):
  """A tensor_fuzz program whose inputs are mostly float16 and whose half values are reduced in half
  half of the time (tinygrad accumulates those in float and casts back to half inside the kernel)."""
  def input(self, shape, dtype=None):
    if dtype is None and self.rng.random() < 0.6: dtype = "float16"
    return super().input(shape, dtype)

  def widen_half(self, v):
    return v if self.rng.random() < 0.5 else super().widen_half(v)


FUZZ = {"seed": 21, "programs": 20, "half_heavy": False}
POCL = {"copies": False}  # --pocl: also write (and run) the emulated-half kernel file of each captured kernel


def fuzz_programs():
  cls = HalfProgram if FUZZ["half_heavy"] else tensor_fuzz.Program
  base = FUZZ["seed"] * 100000
  for i in range(FUZZ["programs"]):
    p = cls(random.Random(f"uopcg-fuzz{'-half' if FUZZ['half_heavy'] else ''}:{FUZZ['seed']}:{i}"), base + i,
            FUZZ["seed"] >= tensor_fuzz.EXTENDED_FROM or FUZZ["half_heavy"])
    Capture.active.program = i
    try:
      Tensor.realize(*p.build())
    except Exception as e:  # noqa: BLE001  (tinygrad failed on its own program: what it lowered so far still counts)
      print(f"SKIP fuzz program {i}: tinygrad: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}")
  Capture.active.program = None


def capture(sets) -> Capture:
  cap = Capture()
  with cap:
    for m in sets:
      cap.model = m
      realize.to_program_cache.clear()
      try:
        {"layers": half_layers, "fuzz": fuzz_programs}[m]()
      except Exception as e:  # noqa: BLE001
        print(f"NOTE {m}: tinygrad stopped: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
  return cap



def write_fp16(k: dict, out_dir: str, name: str, data_from: dict | None) -> None:
  k["name"] = k["spec"] = name
  k["description"] = (k["description"] if k["description"].startswith("tools/fp16") else "tools/fp16_differential.py") + (
    "" if data_from else "; no data: tinygrad's emulated-half build failed")
  if data_from:
    if data_from["data"]["file"] != name + ".bin":  # the emulated-half file's data, under this file's name
      with open(os.path.join(out_dir, data_from["data"]["file"]), "rb") as fi, open(os.path.join(out_dir, name + ".bin"), "wb") as fo:
        fo.write(fi.read())
    k["data"], k["execution"] = dict(data_from["data"], file=name + ".bin"), dict(data_from["execution"])
    k["execution"]["executed_on_pocl"] = False
    k["execution"]["expected_from"] = "the PoCL-target (emulated half) build of the same AST: this native-half source was not run"
    k["data"]["output_tolerance"] = {"rtol": 2e-2, "atol": 2e-2} if k["data"]["output_tolerance"]["rtol"] else k["data"]["output_tolerance"]
  json.dump(k, open(os.path.join(out_dir, name + ".json"), "w"))


def write_captured(cap: Capture, out_dir: str, n_variants: int, seed: int) -> list:
  ren, ren16 = Device["CL"].renderer, fp16_renderer()
  rng = random.Random(seed)
  pocl_files = []
  runs = {}
  for run in cap.runs:
    ast = cap.ast_of.get(run["prg"].key)
    if ast is not None: runs.setdefault(ast.key, run)
  files = []
  for n, (ast, model, program, ctx) in enumerate(cap.asts.values()):
    run = runs.get(ast.key)
    try:
      with md.SinkAtOpts() as at:
        k = oracle.export("", ast, ren16, "fp16", ctx)
    except Exception as e:  # noqa: BLE001  (tinygrad cannot compile it natively either)
      print(f"SKIP {model}.{n:03d}: tinygrad fp16: {type(e).__name__}: {str(e)[:160]}")
      continue
    base = f"{model}.{n:03d}.{'' if program is None else f'p{program:03d}.'}{k['function_name']}.fp16"
    data = None
    if run is not None:
      kp = oracle.export(base[:-5], ast, ren, "pocl", ctx)
      if md.attach(kp, run, out_dir, 1e-4) is None:
        data = kp
        if any(o["dtype"] == "half" for o in kp["data"]["outputs"]):  # the corpus's tolerance for half outputs
          kp["data"]["output_tolerance"] = {"rtol": 2e-3, "atol": 2e-3}
        if POCL["copies"]:  # the emulated-half file too, run by uopcg as model_differential.py does
          json.dump(kp, open(os.path.join(out_dir, base[:-5] + ".json"), "w"))
          pocl_files.append(base[:-5])
    write_fp16(k, out_dir, base, data)
    files.append(base)
    if at.sink is None: continue
    for i, opts in enumerate(md.random_variants(at.sink, ren16, n_variants, rng)):
      vname = f"{base[:-5]}.v{i}.fp16"
      try:
        v = oracle.export(vname, oracle.with_opts(ast, opts), ren16, "fp16", ctx)
      except Exception as e:  # noqa: BLE001
        print(f"SKIP {vname} [{md.opt_str(opts)}]: tinygrad: {type(e).__name__}: {str(e)[:160]}")
        continue
      v["opts_requested"] = [oracle.enc(o) for o in opts]
      vd = None
      if run is not None:
        try:
          kp = oracle.export(vname, oracle.with_opts(ast, opts), ren, "pocl", ctx)
          if md.attach(kp, run, out_dir, 1e-3) is None: vd = kp
        except Exception:  # noqa: BLE001  (the emulated build rejects these opts: the file is text-only)
          pass
      write_fp16(v, out_dir, vname, vd)
      files.append(vname)
  return files, pocl_files


def write_ast_fuzz(seed: int, count: int, n_variants: int, out_dir: str) -> list:
  """ast_fuzz.py's generation 2 with half as the most common float dtype."""
  ast_fuzz.FLOATS[:] = [HALF, HALF, HALF, dtypes.float, dtypes.double]
  ren, ren16 = Device["CL"].renderer, fp16_renderer()
  vr = random.Random(seed + 1)
  files = []
  for i in range(count):
    g = ast_fuzz.Gen(random.Random(seed * 100003 + i), 2)
    name = f"astfz16.s{seed}.{i:03d}"
    try:
      ast = g.kernel(name.replace(".", "_"))
      with md.SinkAtOpts() as at:
        k = oracle.export(name, ast, ren16, "fp16", {})
    except Exception as e:  # noqa: BLE001  (a draw the UOp API or tinygrad refuses)
      print(f"SKIP {name}: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}")
      continue
    if not k["program"]["outs"]: continue
    todo = [(name + ".fp16", ast, k, None)]
    if at.sink is not None:
      for j, opts in enumerate(ast_fuzz.opt_variants(at.sink, ren16, n_variants, vr)):
        try:
          v = oracle.export(f"{name}.v{j}.fp16", oracle.with_opts(ast, opts), ren16, "fp16", {})
        except Exception as e:  # noqa: BLE001
          print(f"SKIP {name}.v{j} [{md.opt_str(opts)}]: tinygrad: {type(e).__name__}: {str(e)[:160]}")
          continue
        v["opts_requested"] = [oracle.enc(o) for o in opts]
        todo.append((f"{name}.v{j}.fp16", oracle.with_opts(ast, opts), v, opts))
    for fname, a, kk, opts in todo:
      data = None
      try:  # the emulated-half build on PoCL gives reference outputs (same inputs for a kernel and its variants)
        kp = oracle.export(fname, a, ren, "pocl", {})
        if kp["program"]["outs"]:
          oracle.attach_data(kp, out_dir, seed=i)
          data = kp
      except Exception:  # noqa: BLE001  (the emulated build fails: the file is text-only)
        pass
      kk["description"] = "tools/fp16_differential.py (ast_fuzz): " + ", ".join(sorted(g.features))
      write_fp16(kk, out_dir, fname, data)
      files.append(fname)
    print(f"gen  {name}: {', '.join(sorted(g.features))}", flush=True)
  return files


# ---- uopcg on every file ----

# Differences that are not bugs, each with its reason (docs/fp16-differential.md); a difference matching
# none of these fails the run.
KNOWN = {
  "statement order": "the same statements in another order (symbolic divergence 1's structural order)",
  "explicit wrap-around": "signed arithmetic that may overflow wraps explicitly (renderer divergence R2)",
  "8/16-bit results converted back (R1)": "narrow integer results wrap to their type (renderer divergence R1)",
  "float <-> bfloat16 conversion": "bfloat16 emulation rounds IEEE-exactly (emulated narrow floats)",
  "vector CAST as convert_ (R4)": "OpenCL C has no cast between vector types: tinygrad's `(half4)((float4)(...))` does not build",
  "reduce identity (P2)": "padded lanes of a reduction are the op's identity, not a gated accumulator update (pipeline P2)",
  "half round trip kept (P6)": "a float cast to half and back is rounded: tinygrad drops `(float)(half)x` in every kernel (pipeline P6)",
  "reassociation (symbolic 3)": "equal in exact arithmetic up to the grouping and order of + and *: float like terms and constant "
                                "chains tinygrad folds and uopcg keeps (symbolic divergence 3), operand and statement order",
}


def difference(theirs: str, ours: str) -> str:
  d = md.difference(theirs, ours)
  if d != "other": return d
  if source_algebra.same_up_to_reassociation(theirs, ours): return "reassociation (symbolic 3)"
  if ast_fuzz.narrow_wrap(theirs, ours): return "8/16-bit results converted back (R1)"
  if "|65536u):" in theirs and "|65536u):" not in ours: return "float <-> bfloat16 conversion"  # tinygrad's bf16 rounding
  if "convert_" in ours and "convert_" not in theirs: return "vector CAST as convert_ (R4)"
  if theirs.count("if (") > ours.count("if ("): return "reduce identity (P2)"  # a gated update made a select
  if ours.count("(half)") > theirs.count("(half)"): return "half round trip kept (P6)"
  return d


def check(exe: str, out_dir: str, name: str) -> dict:
  path = os.path.join(out_dir, name + ".json")
  k = json.load(open(path))
  want = k["source"]
  r = {"name": name, "half": "half" in want, "data": bool(k["data"]["outputs"])}
  for key, extra in (("compile", []), ("compile_ast", ["--from-ast"])):
    c = subprocess.run([exe, "compile", path, "--target", "fp16"] + extra, capture_output=True, text=True, timeout=300)
    if c.returncode != 0:
      r[key] = "error"
      r[key + "_cause"] = md.cause_of(c.stderr)
    elif c.stdout.rstrip("\n") == want:
      r[key] = "identical"
    else:
      r[key] = "differs"
      r[key + "_difference"] = difference(want, c.stdout.rstrip("\n"))
  return r


def check_pocl(exe: str, out_dir: str, name: str) -> dict:
  """An emulated-half file (--pocl): model_differential.py's check, source and outputs on PoCL."""
  r = md.check(exe, out_dir, name)
  return {"name": name, "identical": r["identical"], "passed": bool(r.get("passed")), "cause": r.get("cause", ""),
          "difference": r.get("difference", "")}


def summary(results) -> str:
  lines = ["| kind | files | compiled | identical source | identical source from the AST | differs (known cause) | differs (other) | compile errors |",
           "|---|---|---|---|---|---|---|---|"]
  groups = collections.OrderedDict()
  for r in results:
    s = r["name"].split(".")[0]
    groups.setdefault((s, "half" if r["half"] else "float-only"), []).append(r)
  for (s, h), rs in list(groups.items()) + [(("total", ""), results)]:
    lines.append(f"| {s} {h} | {len(rs)} | {sum(r['compile'] != 'error' for r in rs)} | {sum(r['compile'] == 'identical' for r in rs)} "
                 f"| {sum(r['compile_ast'] == 'identical' for r in rs)} "
                 f"| {sum(r['compile'] == 'differs' and r['compile_difference'] in KNOWN for r in rs)} "
                 f"| {sum(r['compile'] == 'differs' and r['compile_difference'] not in KNOWN for r in rs)} "
                 f"| {sum(r['compile'] == 'error' or r['compile_ast'] == 'error' for r in rs)} |")
  diffs = collections.Counter(r.get(k + "_difference") or r.get(k + "_cause") for r in results for k in ("compile", "compile_ast")
                              if r[k] != "identical")
  lines += ["", "| difference or error (post-opts and from-AST counted apart) | files |", "|---|---|"]
  lines += [f"| {d} | {n} |" for d, n in diffs.most_common()] or ["| (none) | 0 |"]
  return "\n".join(lines)


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--uopcg", default=os.path.join(oracle.ROOT, "build", "uopcg"))
  ap.add_argument("--out", default="/tmp/uopcg_fp16")
  ap.add_argument("--sets", nargs="+", default=["layers", "fuzz", "ast"], choices=["layers", "fuzz", "ast"])
  ap.add_argument("--variants", type=int, default=2, help="random opt variants per kernel")
  ap.add_argument("--seed", type=int, default=0, help="the opt variants' seed")
  ap.add_argument("--fuzz-seed", type=int, default=21)
  ap.add_argument("--fuzz-programs", type=int, default=20)
  ap.add_argument("--half-heavy", action="store_true", help="fuzz: most inputs float16, half reductions kept in half")
  ap.add_argument("--ast-seed", type=int, default=0)
  ap.add_argument("--ast-kernels", type=int, default=40)
  ap.add_argument("--jobs", type=int, default=2)
  ap.add_argument("--pocl", action="store_true",
                  help="also write each captured kernel's emulated-half (pocl) file and check it as model_differential.py does")
  ap.add_argument("--keep", nargs="+", metavar=("DIR", "NAME"), help="copy the named kernel files from --out into DIR and stop")
  ap.add_argument("--recheck", action="store_true", help="run uopcg on the files already in --out")
  a = ap.parse_args()
  if a.keep:
    md.keep(a.out, a.keep[0], a.keep[1:])
    return 0
  os.makedirs(a.out, exist_ok=True)
  if a.recheck:
    files = sorted(f[:-5] for f in os.listdir(a.out) if f.endswith(".fp16.json"))
  else:
    if Device.DEFAULT != "CL": sys.exit(f"needs tinygrad's CL device (PoCL), not {Device.DEFAULT}")
    FUZZ.update(seed=a.fuzz_seed, programs=a.fuzz_programs, half_heavy=a.half_heavy)
    files = []
    POCL["copies"] = a.pocl
    cap_sets = [s for s in a.sets if s != "ast"]
    if cap_sets:
      got, pocl_files = write_captured(capture(cap_sets), a.out, a.variants, a.seed)
      files += got
      json.dump(pocl_files, open(os.path.join(a.out, "pocl_files.json"), "w"))
    if "ast" in a.sets: files += write_ast_fuzz(a.ast_seed, a.ast_kernels, a.variants, a.out)
  print(f"{len(files)} fp16 kernel files in {a.out}")
  results = []
  with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
    for r in pool.map(lambda n: check(a.uopcg, a.out, n), files):
      results.append(r)
      tag = ("FAIL" if "error" in (r["compile"], r["compile_ast"])
             else "DIFF" if r["compile"] == "differs" and r["compile_difference"] not in KNOWN else "ok  ")
      note = "" if r["compile"] == "identical" else f" ({r.get('compile_difference') or r.get('compile_cause')})"
      print(f"{tag} {r['name']}{note}", flush=True)
  pocl_list = os.path.join(a.out, "pocl_files.json")
  pocl_results = []
  if os.path.exists(pocl_list) and json.load(open(pocl_list)):
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
      for r in pool.map(lambda n: check_pocl(a.uopcg, a.out, n), json.load(open(pocl_list))):
        pocl_results.append(r)
        print(f"{'ok  ' if r['passed'] else 'FAIL'} {r['name']} (pocl){'' if r['identical'] else ' (source differs)'}"
              + ("" if r["passed"] else f": {r['cause']}"), flush=True)
  json.dump({"fp16": results, "pocl": pocl_results}, open(os.path.join(a.out, "results.json"), "w"), indent=1)
  print()
  print(summary(results))
  if pocl_results:
    print(f"\nemulated-half (pocl) files: {len(pocl_results)}, identical source {sum(r['identical'] for r in pocl_results)}, "
          f"outputs match {sum(r['passed'] for r in pocl_results)}")
  return 1 if any("error" in (r["compile"], r["compile_ast"]) for r in results) or not all(r["passed"] for r in pocl_results) else 0


if __name__ == "__main__":
  sys.exit(main())
