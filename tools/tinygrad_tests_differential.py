#!/usr/bin/env python3
"""Kernels from tinygrad's own test suite, re-expressed with tinygrad 0.14.0's Tensor and UOp APIs and checked
through the path of tools/known_bugs_differential.py: tinygrad runs each on its OpenCL device (PoCL), the kernel
is written as a kernel file, and `uopcg run` computes it from tinygrad's post-opts graph and from the AST (uopcg's
own front stages and opts), under the opts the test names and a few random ones from tinygrad's BEAM action space.
docs/tinygrad-tests-differential.md says which test each case comes from.

Two kinds of case:
- Tensor programs (known_bugs_differential.Case): the values of the kernel writing the result come from numpy;
- hand-written kernels (UCase: UOp.range / UOp.placeholder / .set / .after / LOCAL and REG buffers, several
  outputs, explicit opts): tinygrad's OpenCL C is run with pyopencl on the case's inputs; the file records numpy's
  values where the case computes them (and says whether tinygrad's kernel agreed), tinygrad's values otherwise.
Facts (shapes, ops, dtypes, opts) are taken from the tests; the code is this file's own.

usage:
  POCL_MAX_PTHREAD_COUNT=1 python3 tools/tinygrad_tests_differential.py --uopcg build-fuzz/uopcg [--out DIR] [--only PAT...] [--variants 2]
  python3 tools/tinygrad_tests_differential.py --list
Exit status 1 when uopcg computes another value than the expected one on a `strict` case.
"""
import argparse
import fnmatch
import json
import math
import os
import random
import signal
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import known_bugs_differential as kb  # noqa: E402  (Case, write_case, run_uopcg, opt_variants, export_variant, close)
import model_differential as md  # noqa: E402
import tinygrad_oracle as oracle  # noqa: E402

from tinygrad import Tensor, Device, dtypes, nn  # noqa: E402
from tinygrad.codegen.opt import Opt, OptOps  # noqa: E402
from tinygrad.dtype import AddrSpace  # noqa: E402
from tinygrad.uop.ops import UOp, Ops, KernelInfo, AxisType  # noqa: E402

PREFIX = "tt"
TG_WRONG_VARIANTS = set()  # hand-written kernels' opt variants whose tinygrad program disagrees with numpy
U, L, UP, R = OptOps.UPCAST, OptOps.LOCAL, OptOps.UNROLL, OptOps.GROUPTOP


# ---- hand-written kernels ----
class UCase:
  """A hand-written kernel AST. inputs: {slot: array}; init: {slot: array} for outputs it writes partly (the
  buffer's contents before the launch); want: {slot: array} from the inputs, or None (tinygrad's values)."""
  def __init__(self, name, src, build, inputs, want=None, tol=0.0, opts=(), init=None, kind="strict"):
    self.name, self.src, self.build, self.inputs, self.want, self.tol, self.opts, self.init, self.kind = \
        name, src, build, inputs, want, tol, [list(o) for o in opts], init or {}, kind


def run_source(k: dict, inputs: dict, init: dict) -> dict:
  """tinygrad's OpenCL C run with pyopencl: {output slot: bytes}."""
  import pyopencl as cl
  ctx = cl.Context(devices=[cl.get_platforms()[0].get_devices()[0]])
  q = cl.CommandQueue(ctx)
  knl = getattr(cl.Program(ctx, k["source"]).build(), k["function_name"])
  prog = k["program"]
  bufs = []
  for arg in prog["kernel_args"]:
    s = arg["slot"]
    raw = np.ascontiguousarray(inputs[s]).tobytes() if s in inputs else \
        np.ascontiguousarray(init[s]).tobytes() if s in init else b"\xa5" * arg["nbytes"]
    if len(raw) != arg["nbytes"]: raise ValueError(f"slot {s}: {len(raw)} bytes given, the kernel's buffer has {arg['nbytes']}")
    bufs.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=bytearray(raw)))
  lsz = prog["local_size"]
  knl(q, [g * (lsz[d] if lsz else 1) for d, g in enumerate(prog["global_size"])], lsz, *bufs)
  out = {}
  for arg, b in zip(prog["kernel_args"], bufs):
    if arg["slot"] in prog["outs"]:
      got = bytearray(arg["nbytes"])
      cl.enqueue_copy(q, got, b)
      out[arg["slot"]] = bytes(got)
  q.finish()
  return out


def slot_dtype(k: dict, slot: int):
  a = next(a for a in k["program"]["kernel_args"] if a["slot"] == slot)
  return getattr(dtypes, {"float": "float32", "half": "float16", "double": "float64", "int": "int32", "uint": "uint32", "char": "int8",
                          "uchar": "uint8", "short": "int16", "ushort": "uint16", "long": "int64", "ulong": "uint64"}.get(a["logical"], a["logical"]))


def write_ucase(c: UCase, out_dir: str, n_variants: int, rng: random.Random):
  ast = c.build()
  ren = Device["CL"].renderer
  with md.SinkAtOpts() as at:
    k = oracle.export("", ast, ren, "pocl", {})
  got = run_source(k, c.inputs, c.init)
  outs = k["program"]["outs"]
  if c.want is not None:
    with np.errstate(all="ignore"): w = c.want(c.inputs)
    want = {s: np.ascontiguousarray(np.asarray(w[s]).astype(kb.np_dtype(slot_dtype(k, s)))).tobytes() for s in outs}
    tg_right = all(kb.close(got[s], want[s], slot_dtype(k, s), c.tol) for s in outs)
    if not tg_right and kb.VERBOSE:
      for s in outs:
        dt = kb.np_dtype(slot_dtype(k, s))
        print(f"  tinygrad {c.name} slot {s}: got {np.frombuffer(got[s], dt).tolist()[:64]}\n  numpy    {c.name} slot {s}: want {np.frombuffer(want[s], dt).tolist()[:64]}")
  else:
    want, tg_right = got, None
  files = []
  base = f"{PREFIX}.{c.name}"
  for vname, opts in [(base, None)] + kb.opt_variants(base, c.opts, at.sink, ren, n_variants, rng):
    v = kb.export_variant(k, ast, ren, vname, opts)
    if v is None: continue
    if opts is not None and c.want is not None:
      # a hand-written accumulation (a REG or global buffer stored in a loop) is not valid under every opt: where
      # tinygrad's own program for the opts computes other values, the opts changed the kernel's meaning
      vgot = run_source(v, c.inputs, c.init)
      if not all(kb.close(vgot[s], want[s], slot_dtype(k, s), c.tol) for s in outs):
        print(f"NOTE {vname} [{md.opt_str(opts)}]: tinygrad's own program for these opts computes other values (uopcg reported, not counted)")
        TG_WRONG_VARIANTS.add(vname)
    before = {a["slot"]: None for a in k["program"]["kernel_args"]}
    before.update({s: np.ascontiguousarray(x).tobytes() for s, x in c.inputs.items()})
    before.update({s: np.ascontiguousarray(x).tobytes() for s, x in c.init.items()})
    why = md.attach(v, {"before": before, "after": want}, out_dir, c.tol if c.want is not None else 1e-4)
    if why: print(f"SKIP {vname}: {why}"); continue
    set_tolerance(v, [slot_dtype(k, s) for s in outs], c.tol if c.want is not None else 1e-4, want, outs, k)
    v["execution"]["expected_from"] = ("numpy (tools/tinygrad_tests_differential.py)" if c.want is not None else
                                       "tinygrad's source run on PoCL on the case's inputs (tools/tinygrad_tests_differential.py)")
    json.dump(v, open(os.path.join(out_dir, vname + ".json"), "w"))
    files.append((vname, True, opts))
  return files, tg_right, ""


def set_tolerance(v: dict, dts, tol: float, want: dict, outs, k):
  floats = [dt for dt in dts if dtypes.is_float(dt)]
  if not floats: return
  if tol == 0 and not any(kb.has_nan(want[s], slot_dtype(k, s)) for s in outs): v["data"]["output_tolerance"] = {"rtol": 0, "atol": 0}
  elif tol == 0: v["data"]["output_tolerance"] = {"rtol": 1e-30, "atol": 1e-30}  # NaN matches NaN, the rest bit-exact
  else: v["data"]["output_tolerance"] = {"rtol": tol, "atol": tol}


def rename(out_dir: str, files):
  """known_bugs_differential writes kb.* files: this tool's are tt.*"""
  res = []
  for vname, final, opts in files:
    if not vname.startswith("kb."):
      res.append((vname, final, opts)); continue
    new = PREFIX + vname[2:]
    k = json.load(open(os.path.join(out_dir, vname + ".json")))
    k["name"] = k["spec"] = new
    k["data"]["file"] = new + ".bin"
    if "numpy" in k["execution"].get("expected_from", ""): k["execution"]["expected_from"] = "numpy (tools/tinygrad_tests_differential.py)"
    json.dump(k, open(os.path.join(out_dir, new + ".json"), "w"))
    os.replace(os.path.join(out_dir, vname + ".bin"), os.path.join(out_dir, new + ".bin"))
    os.remove(os.path.join(out_dir, vname + ".json"))
    res.append((new, final, opts))
  return res


def pyval(v, dt):
  return bool(v) if dt == dtypes.bool else float(v) if dtypes.is_float(dt) else int(v)


def threefry_ref(x, key):
  """Random123 threefry2x32 with 20 rounds: x and key as (low, high) 32-bit words, the result's words high:low."""
  def rotl(v, r): return ((v << r) | (v >> (32 - r))) & 0xFFFFFFFF
  out = []
  for xv, kv in zip(x.tolist(), key.tolist()):
    ks = [kv & 0xFFFFFFFF, kv >> 32]
    ks.append(ks[0] ^ ks[1] ^ 0x1BD11BDA)
    x0, x1 = ((xv & 0xFFFFFFFF) + ks[0]) & 0xFFFFFFFF, ((xv >> 32) + ks[1]) & 0xFFFFFFFF
    for i in range(5):
      for r in ((13, 15, 26, 6) if i % 2 == 0 else (17, 29, 16, 24)):
        x0 = (x0 + x1) & 0xFFFFFFFF
        x1 = rotl(x1, r) ^ x0
      x0, x1 = (x0 + ks[(i + 1) % 3]) & 0xFFFFFFFF, (x1 + ks[(i + 2) % 3] + i + 1) & 0xFFFFFFFF
    out.append((x1 << 32) | x0)
  return np.array(out, np.uint64)


def kinfo(name, opts=()): return KernelInfo(name=name, opts_to_apply=None if opts is None else tuple(opts))


# ---- the cases ----
F32 = dtypes.float32


def custom_kernel_cases():
  """test/backend/test_custom_kernel.py: the kernels its tests hand to Tensor.custom_kernel."""
  rng = np.random.default_rng(1)
  out = []
  add = out.append

  def arange():
    C = UOp.placeholder((100,), F32, 0)
    i = UOp.range(100, 0)
    return C[i].store(i.cast(F32)).end(i).sink(arg=kinfo("ck_arange", None))
  add(UCase("ck_arange", "test_custom_kernel.py custom_arange_kernel (test_arange)", arange, {}, lambda d: {0: np.arange(100, dtype=np.float32)}))

  def eye():
    C = UOp.placeholder((48, 48), F32, 0)
    i, j = UOp.range(48, 0), UOp.range(48, 1)
    return C[i, j].store(i.eq(j).cast(F32)).end(i, j).sink(arg=kinfo("ck_eye", None))
  add(UCase("ck_eye", "test_custom_kernel.py custom_eye_kernel (test_eye)", eye, {}, lambda d: {0: np.eye(48, dtype=np.float32)},
            opts=[[Opt(U, 1, 4), Opt(L, 0, 8)]]))

  a16 = rng.standard_normal(256).astype(np.float32)
  b16 = rng.standard_normal(256).astype(np.float32)

  def add_one():
    B, A = UOp.placeholder((256,), F32, 0), UOp.placeholder((256,), F32, 1)
    i = UOp.range(256, 0)
    return B[i].store(A[i] + 1).end(i).sink(arg=kinfo("ck_add_one", None))
  add(UCase("ck_add_one", "test_custom_kernel.py custom_add_one_kernel (test_noncontig)", add_one, {1: a16}, lambda d: {0: d[1] + np.float32(1)}))

  def ew_add():
    C, A, B = UOp.placeholder((256,), F32, 0), UOp.placeholder((256,), F32, 1), UOp.placeholder((256,), F32, 2)
    i = UOp.range(256, 0)
    return C[i].store(A[i] + B[i]).end(i).sink(arg=kinfo("ck_add", None)).simplify()
  add(UCase("ck_elementwise_add", "test_custom_kernel.py custom_elementwise_add_kernel (test_simple), simplified before codegen", ew_add,
            {1: a16, 2: b16}, lambda d: {0: d[1] + d[2]}))

  def addmul():
    C, D = UOp.placeholder((256,), F32, 0), UOp.placeholder((256,), F32, 1)
    A, B = UOp.placeholder((256,), F32, 2), UOp.placeholder((256,), F32, 3)
    i = UOp.range(256, 0)
    return UOp.group(C[i].store(A[i] + B[i]), D[i].store(A[i] * B[i])).end(i).sink(arg=kinfo("ck_addmul", None)).simplify()
  add(UCase("ck_addmul_two_outputs", "test_custom_kernel.py custom_elementwise_addmul_kernel (test_multioutput): two outputs, one range",
            addmul, {2: a16, 3: b16}, lambda d: {0: d[2] + d[3], 1: d[2] * d[3]}, opts=[[Opt(U, 0, 4)], [Opt(L, 0, 16), Opt(U, 0, 2)]]))

  ga, gb = rng.standard_normal((16, 12)).astype(np.float32), rng.standard_normal((12, 16)).astype(np.float32)

  def gemm():
    C, A, B = UOp.placeholder((16, 16), F32, 0), UOp.placeholder((16, 12), F32, 1), UOp.placeholder((12, 16), F32, 2)
    i, j, k = UOp.range(16, 0), UOp.range(16, 1), UOp.range(12, 2, axis_type=AxisType.REDUCE)
    C = C[i, j].set(0.0)
    C = C[i, j].set(C.after(k)[i, j] + A[i, k] * B[k, j], end=k)
    return C.end(i, j).sink(arg=kinfo("ck_gemm"))
  add(UCase("ck_gemm_set_after", "test_custom_kernel.py custom_gemm (test_gemm): the output zeroed, then accumulated through AFTER",
            gemm, {1: ga, 2: gb}, lambda d: {0: d[1] @ d[2]}, tol=1e-5))

  def csum(dt):
    def build():
      B, A = UOp.placeholder((1,), dt, 0), UOp.placeholder((37,), dt, 1)
      i = UOp.range(37, 0, axis_type=AxisType.REDUCE)
      B = B[0].set(0.0 if dt == F32 else 0)
      B = B[0].set(B.after(i)[0] + A[i], end=i)
      return B.sink(arg=kinfo("ck_sum"))
    return build
  sf = rng.standard_normal(37).astype(np.float32)
  si = rng.integers(-10**8, 10**8, 37).astype(np.int32)
  add(UCase("ck_sum_f32", "test_custom_kernel.py custom_sum (test_sum): a sum accumulated in the output buffer", csum(F32), {1: sf},
            lambda d: {0: np.array([d[1].astype(np.float64).sum()])}, tol=1e-5))
  add(UCase("ck_sum_i32", "test_custom_kernel.py custom_sum (test_sum_int), values whose sum wraps", csum(dtypes.int32), {1: si},
            lambda d: {0: kb.wrap(np.array([d[1].astype(np.int64).sum()]), np.int32)}))

  fc = rng.standard_normal((10, 4)).astype(np.float32)

  def flip_contract():
    dest, src = UOp.placeholder((10, 4), F32, 0), UOp.placeholder((10, 4), F32, 1)
    i, j = UOp.range(10, 0), UOp.range(4, 1, AxisType.UPCAST)
    vec = src[i, j].contract(j)
    return UOp.group(*[dest[i, k].store(vec.src[3 - k]) for k in range(4)]).end(i, j).sink(arg=kinfo("ck_flip"))
  add(UCase("ck_flip_contract", "test_custom_kernel.py flip_contract_kernel (test_flip_contract): an UPCAST range contracted, lanes stored reversed "
            "(0.14 has no GEP: the STACK's lanes are taken directly)",
            flip_contract, {1: fc}, lambda d: {0: d[1][:, ::-1]}))

  ss = rng.standard_normal((16, 20)).astype(np.float32)

  def slice_sum():
    dest, src = UOp.placeholder((16,), F32, 0), UOp.placeholder((16, 20), F32, 1)
    G = UOp.range(16, 0)
    reg = UOp.placeholder((1,), F32, 0, addrspace=AddrSpace.REG)
    reg = reg.after(G)[0].set(0)
    Rr = UOp.range(20, 1, AxisType.REDUCE)
    reg = reg[0].set(reg.after(Rr)[0] + src[G, :][Rr], end=Rr)
    return dest[G].set(reg[0], end=G).sink(arg=kinfo("ck_slice_sum"))
  add(UCase("ck_slice_sum_reg", "test_custom_kernel.py slice_sum_kernel (test_slice_sum): a REG accumulator per row", slice_sum, {1: ss},
            lambda d: {0: d[1].astype(np.float64).sum(axis=1)}, tol=1e-5))

  N, dd = 8, 4
  Q, K, V = (rng.standard_normal((N, dd)).astype(np.float32) for _ in range(3))

  def qkv():
    O, Qp, Kp, Vp = (UOp.placeholder((N, dd), F32, s) for s in range(4))
    i, d_out = UOp.range(N, 0), UOp.range(dd, 1)
    j, k_in = UOp.range(N, 2, axis_type=AxisType.REDUCE), UOp.range(dd, 3, axis_type=AxisType.REDUCE)
    qk = UOp.placeholder((1,), F32, 0, addrspace=AddrSpace.REG)
    qk = qk.after(i, j)[0].set(0.0)
    qk = qk[0].set(qk.after(k_in)[0] + Qp[i, k_in] * Kp[j, k_in], end=k_in)
    score = qk[0] / (dd ** 0.5)
    acc = UOp.placeholder((1,), F32, 1, addrspace=AddrSpace.REG)
    acc = acc.after(i, d_out)[0].set(0.0)
    acc = acc[0].set(acc.after(j)[0] + score * Vp[j, d_out], end=j)
    return O[i, d_out].store(acc[0]).end(d_out).end(i).sink(arg=kinfo("ck_qkv"))
  add(UCase("ck_simple_qkv", "test_custom_kernel.py simple_qkv_kernel (test_simple_qkv): two REG accumulators, nested reduce ranges", qkv,
            {1: Q, 2: K, 3: V}, lambda d: {0: ((d[1].astype(np.float64) @ d[2].T.astype(np.float64)) / 2.0) @ d[3]}, tol=1e-5))
  return out


def uops_program_cases():
  """test/backend/test_uops.py: TestUOpPrograms, TestLocalAccess, the ALU tests (TestFloatUOps, TestNonFloatUOps,
  TestBoolUOps: one op on loaded values and on constants), TestAssembly's expressions; and
  test/backend/test_renderer_failures.py; test/device/qcom/test_emu.py test_local_reduce_in_loop."""
  rng = np.random.default_rng(2)
  out = []
  add = out.append

  def store42():
    ptr = UOp.placeholder((10, 10), dtypes.int32, 0)
    i, j = UOp.range(10, 0), UOp.range(10, 1)
    return ptr[i, j].store(42).end(i, j).sink(arg=KernelInfo())
  add(UCase("uop_store42", "test_uops.py TestUOpPrograms.test_simple", store42, {}, lambda d: {0: np.full((10, 10), 42, np.int32)}))

  ma, mb = rng.standard_normal((10, 10)).astype(np.float32), rng.standard_normal((10, 10)).astype(np.float32)

  def matmul_slot2():
    A, B, C = UOp.placeholder((10, 10), F32, 0), UOp.placeholder((10, 10), F32, 1), UOp.placeholder((10, 10), F32, 2)
    i, j, k = UOp.range(10, 0), UOp.range(10, 1), UOp.range(10, 2, axis_type=AxisType.REDUCE)
    C = C[i, j].set(0.0)
    return C[i, j].store(C.after(k)[i, j] + A[i, k] * B[k, j]).end(i, j, k).sink(arg=KernelInfo())
  add(UCase("uop_matmul_out_slot2", "test_uops.py TestUOpPrograms.test_matmul: inputs in slots 0 and 1, the output in slot 2, one END for all three ranges",
            matmul_slot2, {0: ma, 1: mb}, lambda d: {2: d[0].astype(np.float64) @ d[1]}, tol=1e-5))

  def matmul_relu():
    A, B, C = UOp.placeholder((10, 10), F32, 0), UOp.placeholder((10, 10), F32, 1), UOp.placeholder((10, 10), F32, 2)
    i, j, k = UOp.range(10, 0), UOp.range(10, 1), UOp.range(10, 2, axis_type=AxisType.REDUCE)
    C = C[i, j].set(0.0)
    C = C[i, j].set(C.after(k)[i, j] + A[i, k] * B[k, j], end=k)
    return C[i, j].store(C[i, j].maximum(0.0)).end(i, j).sink(arg=KernelInfo(opts_to_apply=()))
  add(UCase("uop_matmul_relu", "test_uops.py TestUOpPrograms.test_matmul_relu: the accumulated output read back and stored again",
            matmul_relu, {0: ma, 1: mb}, lambda d: {2: np.maximum(d[0].astype(np.float64) @ d[1], 0)}, tol=1e-5))

  def local_basic():
    o = UOp.placeholder((1,), F32, 0)
    smem = UOp.placeholder((16,), F32, 0, addrspace=AddrSpace.LOCAL)
    st = smem[0].store(UOp.const(42.0, F32))
    return o[0].store(smem.after(st.barrier())[0]).sink(arg=KernelInfo())
  add(UCase("uop_local_basic", "test_uops.py TestLocalAccess.test_local_basic: a LOCAL store, a barrier, a load", local_basic, {},
            lambda d: {0: np.array([42.0], np.float32)}))

  # test/unit/test_modern_scan.py test_copy_local: a value staged through a LOCAL buffer and read back; here every
  # element is read by another work-item (reversed), so the read needs the barrier the AFTER asks for
  lv = rng.standard_normal(64).astype(np.float32)

  def local_copy(kind):
    def build():
      o, x = UOp.placeholder((64,), F32, 0), UOp.placeholder((64,), F32, 1)
      tmp = UOp.placeholder((64,), F32, 0, addrspace=AddrSpace.LOCAL)
      i = UOp.range(64, 0, kind)
      if kind == AxisType.LOCAL:
        st = tmp[i].store(x[i])
        return o[i].store(tmp.after(st.barrier())[63 - i] * 2.0).end(i).sink(arg=KernelInfo(opts_to_apply=()))
      j = UOp.range(64, 1, AxisType.LOOP)
      st = tmp[i].store(x[i]).end(i)
      return o[j].store(tmp.after(st)[63 - j] * 2.0).end(j).sink(arg=KernelInfo(opts_to_apply=()))
    return build
  add(UCase("scan_copy_local_reversed", "test/unit/test_modern_scan.py test_copy_local: staged in LOCAL memory by LOCAL work-items, read back reversed",
            local_copy(AxisType.LOCAL), {1: lv}, lambda d: {0: d[1][::-1] * np.float32(2)}))
  add(UCase("scan_copy_local_loops", "test/unit/test_modern_scan.py test_copy_local: a LOCAL buffer filled by one loop, read reversed by another",
            local_copy(AxisType.LOOP), {1: lv}, lambda d: {0: d[1][::-1] * np.float32(2)}))

  la = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)

  def local_reduce_loop():
    C, A = UOp.placeholder((64,), F32, 0), UOp.placeholder((64, 8), F32, 1)
    i, j = UOp.range(64, 0, AxisType.LOOP), UOp.range(8, 1, AxisType.LOCAL)
    return C[i].store(A[i, j].reduce(j, arg=Ops.ADD)).end(i).sink(arg=KernelInfo(opts_to_apply=()))
  add(UCase("qcom_local_reduce_in_loop", "test/device/qcom/test_emu.py test_local_reduce_in_loop: a LOCAL-axis reduce inside a LOOP range (a barrier in a loop)",
            local_reduce_loop, {1: la}, lambda d: {0: d[1].sum(axis=1)}))

  # -- one ALU op on loaded values and on constants (folded by the front stages): TestFloatUOps / TestNonFloatUOps / TestBoolUOps
  def alu_case(name, op, dts, vals, fn, tol=0.0, src="test_uops.py"):
    n = len(vals[0])
    out_dt = dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE) else dts[-1]
    arrs = {i + 1: np.array(v, dtype=kb.np_dtype(dt)) for i, (v, dt) in enumerate(zip(vals, dts))}
    apply = (lambda xs: xs[0].where(xs[1], xs[2])) if op is Ops.WHERE else (lambda xs: xs[0].alu(op, *xs[1:]))

    def loaded():
      o = UOp.placeholder((n,), out_dt, 0)
      ins = [UOp.placeholder((n,), dt, i + 1) for i, dt in enumerate(dts)]
      g = UOp.range(n, 0)
      return o[g].store(apply([x[g] for x in ins])).end(g).sink(arg=KernelInfo())

    def consts():
      o = UOp.placeholder((n,), out_dt, 0)
      return UOp.group(*[o[e].store(apply([UOp.const(pyval(v[e], dt), dt) for v, dt in zip(vals, dts)]))
                         for e in range(n)]).sink(arg=KernelInfo())
    want = lambda d: {0: fn(*[d[i + 1] for i in range(len(dts))])}  # noqa: E731
    add(UCase(f"uop_alu_{name}", f"{src}: {op.name} on {'/'.join(d.name for d in dts)} loaded values", loaded, arrs, want, tol=tol))
    # uopcg's symbolic model equates -0.0 and 0.0 (docs/symbolic.md): `x * 0` of a constant may fold to +0.0 before the
    # constants are multiplied, so the folded float cases compare -0.0 equal to 0.0 (1e-30: NaN still matches only NaN)
    ctol = tol if tol or not dtypes.is_float(dts[-1]) or op in (Ops.CMPLT, Ops.CMPNE) else 1e-30
    add(UCase(f"uop_alu_{name}_const", f"{src}: {op.name} on constants (folded before codegen)", consts, {}, lambda d: want(arrs), tol=ctol))

  fa = [-2.0, 0.0, 1.0, -0.0, 0.5, 3.0, 1e-3]
  fpair = [(a, b) for a in [-2.0, 0.0, 1.0, 7.5] for b in [-3.0, 1.0, 0.0, -0.0]]
  A2, B2 = [p[0] for p in fpair], [p[1] for p in fpair]
  f32 = lambda f: (lambda *x: f(*[np.asarray(v, np.float32) for v in x]))  # noqa: E731
  with np.errstate(all="ignore"):
    alu_case("f32_exp2", Ops.EXP2, (F32,), [fa], f32(np.exp2), tol=1e-6)
    alu_case("f32_log2", Ops.LOG2, (F32,), [fa], f32(np.log2), tol=1e-6)
    alu_case("f32_sin", Ops.SIN, (F32,), [fa], f32(np.sin), tol=1e-6)
    alu_case("f32_recip", Ops.RECIPROCAL, (F32,), [fa], f32(lambda a: np.float32(1) / a), tol=1e-6)
    alu_case("f32_sqrt", Ops.SQRT, (F32,), [fa], f32(np.sqrt), tol=1e-6)
    alu_case("f32_add", Ops.ADD, (F32, F32), [A2, B2], f32(np.add))
    alu_case("f32_mul", Ops.MUL, (F32, F32), [A2, B2], f32(np.multiply))
    alu_case("f32_max", Ops.MAX, (F32, F32), [A2, B2], f32(lambda a, b: np.where(a < b, b, a)))
    alu_case("f32_cmplt", Ops.CMPLT, (F32, F32), [A2, B2], f32(np.less))
    alu_case("f32_cmpne", Ops.CMPNE, (F32, F32), [A2 + [math.nan, 1.0, math.nan], B2 + [1.0, math.nan, math.nan]], f32(np.not_equal),
             src="test_uops.py (test_cmpne, test_cmpne_nan)")
  tcond = [bool(x) for x in [1, 0, 1, 0, 1, 0, 1, 0]]
  tb, tc = [-3.0, -3.0, 3.0, 3.0, -3.0, 3.0, 0.5, -0.0], [-4.0, 4.0, -4.0, 4.0, 4.0, -4.0, 2.0, 0.0]
  alu_case("f32_where", Ops.WHERE, (dtypes.bool, F32, F32), [tcond, tb, tc], lambda c, b, e: np.where(c, b, e).astype(np.float32))
  alu_case("f16_where", Ops.WHERE, (dtypes.bool, dtypes.float16, dtypes.float16), [tcond, tb, tc], lambda c, b, e: np.where(c, b, e).astype(np.float16),
           src="test_uops.py test_where_float16")
  ipair = [(a, b) for a in [-2, 0, 1, 7, -7, 2**31 - 1, -2**31 + 1] for b in [-3, 1, 2, 5]]
  IA, IB = [p[0] for p in ipair], [p[1] for p in ipair]
  i32 = dtypes.int32
  I = lambda f: (lambda a, b: f(a.astype(np.int64), b.astype(np.int64)))  # noqa: E731
  alu_case("i32_add", Ops.ADD, (i32, i32), [IA, IB], I(lambda a, b: kb.wrap(a + b, np.int32)))
  alu_case("i32_mul", Ops.MUL, (i32, i32), [IA, IB], I(lambda a, b: kb.wrap(a * b, np.int32)))
  sha = [(a, b) for a in [-2, 0, 1, 7, -7, 2**31 - 1, -2**31] for b in [0, 1, 3, 31]]
  SA, SB = [p[0] for p in sha], [p[1] for p in sha]
  alu_case("i32_shr", Ops.SHR, (i32, i32), [SA, SB], I(lambda a, b: (a >> b).astype(np.int32)))
  alu_case("i32_shl", Ops.SHL, (i32, i32), [SA, SB], I(lambda a, b: kb.wrap(a << b, np.int32)))
  alu_case("i32_cdiv", Ops.CDIV, (i32, i32), [IA, IB], lambda a, b: kb.c_div(a, b)[0].astype(np.int32))
  alu_case("i32_cmod", Ops.CMOD, (i32, i32), [IA, IB], lambda a, b: kb.c_div(a, b)[1].astype(np.int32))
  alu_case("i32_and", Ops.AND, (i32, i32), [IA, IB], lambda a, b: a & b)
  alu_case("i32_or", Ops.OR, (i32, i32), [IA, IB], lambda a, b: a | b)
  alu_case("i32_cmplt", Ops.CMPLT, (i32, i32), [IA, IB], np.less)
  alu_case("i32_cmpne", Ops.CMPNE, (i32, i32), [IA, IB], np.not_equal)
  bp = [(a, b) for a in (False, True) for b in (False, True)]
  BA, BB = [p[0] for p in bp], [p[1] for p in bp]
  bl = dtypes.bool
  for nm, op, fn in (("add", Ops.ADD, np.logical_or), ("mul", Ops.MUL, np.logical_and), ("xor", Ops.XOR, np.logical_xor),
                     ("and", Ops.AND, np.logical_and), ("or", Ops.OR, np.logical_or), ("cmpne", Ops.CMPNE, np.not_equal),
                     ("cmplt", Ops.CMPLT, lambda a, b: (~a) & b)):
    alu_case(f"bool_{nm}", op, (bl, bl), [BA, BB], fn, src="test_uops.py TestBoolUOps")
  bt = [(a, b, c) for a in (False, True) for b in (False, True) for c in (False, True)]
  alu_case("bool_where", Ops.WHERE, (bl, bl, bl), [[t[0] for t in bt], [t[1] for t in bt], [t[2] for t in bt]], lambda a, b, c: np.where(a, b, c),
           src="test_uops.py TestBoolUOps.test_where_bool")

  # TestAssembly: expressions whose lowering picks MULACC / CMPEQ on other backends
  mv = rng.integers(-2**20, 2**20, 2).astype(np.int32)

  def mulacc_shl():
    o, g1 = UOp.placeholder((1,), i32, 0), UOp.placeholder((2,), i32, 1)
    return o[0].store(g1[0] * 4096 + g1[1]).sink(arg=KernelInfo())
  add(UCase("uop_mulacc_shl", "test_uops.py TestAssembly.test_mulacc_shl: x*4096 + y", mulacc_shl, {1: mv},
            lambda d: {0: kb.wrap(np.array([int(d[1][0]) * 4096 + int(d[1][1])]), np.int32)}))
  cq = np.array([7, 0, 7, 2**32 - 7, 7, 8, 6, 7], np.uint32)

  def use_cmpeq():
    o, g = UOp.placeholder((8,), dtypes.bool, 0), UOp.placeholder((8,), dtypes.uint32, 1)
    i = UOp.range(8, 0)
    return o[i].store(g[i].ne(7).ne(True)).end(i).sink(arg=KernelInfo())
  add(UCase("uop_use_cmpeq", "test_uops.py TestAssembly.test_use_cmpeq: (x != 7) != True on uint32", use_cmpeq, {1: cq}, lambda d: {0: d[1] == 7}))

  # test_renderer_failures.py
  ic = np.array([1, -5, 2**31 - 1, -2**31, 0, -2**31 + 1], np.int32)

  def inline_const():
    o, b = UOp.placeholder((6,), i32, 0), UOp.placeholder((6,), i32, 1)
    i = UOp.range(6, 0)
    return o[i].store(b[i].alu(Ops.MAX, UOp.const(-2**31 + 1, i32))).end(i).sink(arg=KernelInfo())
  add(UCase("rf_inline_const_alu", "test_renderer_failures.py test_inline_const_alu: MAX with INT_MIN+1", inline_const, {1: ic},
            lambda d: {0: np.maximum(d[1], np.int32(-2**31 + 1))}))

  def gated_store(two_d):
    def build():
      a = UOp.placeholder((8 if two_d else 4,), i32, 0)
      l0 = UOp.range(4, 0, AxisType.LOCAL)
      if not two_d: return a[l0.valid(l0.ne(0))].store(UOp.const(1, i32)).end(l0).sink(arg=KernelInfo(opts_to_apply=()))
      l1 = UOp.range(2, 1, AxisType.LOCAL)
      return a[(l0 + l1 * 4).valid(l0.ne(0) & l1.ne(0))].store(UOp.const(1, i32)).end(l0, l1).sink(arg=KernelInfo(opts_to_apply=()))
    return build
  add(UCase("rf_gated_store_alu", "test_renderer_failures.py test_gated_store_with_alu: a store gated on lidx0 != 0", gated_store(False), {},
            lambda d: {0: np.array([0, 1, 1, 1], np.int32)}, init={0: np.zeros(4, np.int32)}))
  add(UCase("rf_gated_store_alu_2d", "test_renderer_failures.py test_gated_store_with_alu_2d", gated_store(True), {},
            lambda d: {0: np.array([0, 0, 0, 0, 0, 1, 1, 1], np.int32)}, init={0: np.zeros(8, np.int32)}))
  iv = np.array([5.0, -5.0, 0.0, 1e-30], np.float32)

  def mul_inf():
    o, b = UOp.placeholder((4,), F32, 0), UOp.placeholder((4,), F32, 1)
    i = UOp.range(4, 0)
    return o[i].store(b[i] * UOp.const(math.inf, F32)).end(i).sink(arg=KernelInfo())
  with np.errstate(all="ignore"):
    add(UCase("rf_multiply_infinity", "test_renderer_failures.py TestWGSLFailures.test_multiply_infinity (0 * inf is NaN)", mul_inf, {1: iv},
              lambda d: {0: d[1] * np.float32(np.inf)}))

  # test_linearizer_dumb.py test_failure_beam_mnist, shrunk: a uchar sum over a nested int count, GROUP_REDUCE range given
  B_, P_, K_, R1, R2, G_ = 4, 12, 10, 6, 3, 4
  xs = rng.integers(0, 256, K_ * R1 * P_).astype(np.uint8)
  ids = np.array([3, 0, 11, 2], np.int32)

  def beam_mnist():
    c0 = UOp.placeholder((B_ * P_ * K_,), dtypes.uint8, 0)
    c1, c2, c3 = UOp.range(B_, 0, AxisType.GLOBAL), UOp.range(P_, 1, AxisType.GLOBAL), UOp.range(K_, 3, AxisType.GLOBAL)
    c4 = UOp.placeholder((B_,), i32, 1)
    c6, c7, c8 = UOp.range(R1, 1004, AxisType.REDUCE), UOp.range(R2, 2006, AxisType.REDUCE), UOp.range(G_, 2007, AxisType.GROUP_REDUCE)
    c9 = UOp.placeholder((K_ * R1 * P_,), dtypes.uint8, 2)
    cnt = ((c3 * R1 + c6) + (c7 * G_ + c8)).alu(Ops.CMPLT, UOp.const(K_ * R1 - 1, dtypes.weakint)).where(UOp.const(0, i32), UOp.const(1, i32))
    val = c4[c1].alu(Ops.CMPNE, cnt.reduce(c7, c8, arg=Ops.ADD) + UOp.const(-1, i32)).where(UOp.const(0, dtypes.uint8), c9[(c3 * (R1 * P_) + c2) + c6 * P_])
    st = c0[(c1 * (P_ * K_) + c2 * K_) + c3].store(val.reduce(c6, arg=Ops.ADD)).end(c1, c2, c3)
    return st.sink(arg=KernelInfo(name="beam_mnist", applied_opts=(Opt(OptOps.GROUP, 1, G_),), opts_to_apply=()))

  def beam_want(d):
    out_ = np.zeros((B_, P_, K_), np.int64)
    for b in range(B_):
      for p in range(P_):
        for kk in range(K_):
          s = 0
          for r in range(R1):
            cnt = sum(0 if (kk * R1 + r + c7 * G_ + c8) < K_ * R1 - 1 else 1 for c7 in range(R2) for c8 in range(G_))
            if d[1][b] == cnt - 1: s += int(d[2][kk * R1 * P_ + p + r * P_])
          out_[b, p, kk] = s
    return {0: (out_ % 256).astype(np.uint8).reshape(-1)}
  add(UCase("dumb_beam_mnist", "test_linearizer_dumb.py test_failure_beam_mnist (shrunk): a uchar sum gated by a nested count over a GROUP_REDUCE range",
            beam_mnist, {1: ids, 2: xs}, beam_want))

  # test_const_folding.py TestThreefryConstFolding: threefry of two uint64 constants folds; and of loaded values
  def threefry_const():
    o = UOp.placeholder((1,), dtypes.uint64, 0)
    return o[0].store(UOp.const(5, dtypes.uint64).threefry(UOp.const(10, dtypes.uint64))).sink(arg=KernelInfo())
  # the stored test's constant (18148657672717807409) is another tinygrad's threefry; 0.14's THREEFRY is Random123's
  # threefry2x32-20 (x as two 32-bit words, key as two), which threefry_ref computes
  add(UCase("cf_threefry_const", "test_const_folding.py test_threefry: threefry(5, 10) on constants", threefry_const, {},
            lambda d: {0: threefry_ref(np.array([5], np.uint64), np.array([10], np.uint64))}))
  tf = np.array([5, 0, 2**64 - 1, 12345678901234567], np.uint64)
  tk = np.array([10, 0, 7, 2**63], np.uint64)

  def threefry_loaded():
    o, x, k = UOp.placeholder((4,), dtypes.uint64, 0), UOp.placeholder((4,), dtypes.uint64, 1), UOp.placeholder((4,), dtypes.uint64, 2)
    i = UOp.range(4, 0)
    return o[i].store(x[i].threefry(k[i])).end(i).sink(arg=KernelInfo())
  add(UCase("cf_threefry_loaded", "test_const_folding.py test_threefry, on loaded values (element 0 is the test's pair)",
            threefry_loaded, {1: tf, 2: tk}, lambda d: {0: threefry_ref(d[1], d[2])}))

  # test_coupled_reduce.py's normalised weighted sum, as 0.14 writes it: two ADD reduces over separate ranges, one over a product
  wx, ww = rng.standard_normal((6, 9)).astype(np.float32), rng.uniform(0.5, 2, (6, 9)).astype(np.float32)

  def weighted():
    o, x, w = UOp.placeholder((6,), F32, 0), UOp.placeholder((6, 9), F32, 1), UOp.placeholder((6, 9), F32, 2)
    g, nr, dr = UOp.range(6, 0), UOp.range(9, 1, AxisType.REDUCE), UOp.range(9, 2, AxisType.REDUCE)
    num = (x[g, nr] * w[g, nr]).reduce(nr, arg=Ops.ADD)
    den = w[g, dr].reduce(dr, arg=Ops.ADD)
    return o[g].store(num * den.reciprocal()).end(g).sink(arg=KernelInfo())
  add(UCase("coupled_weighted_mean", "test/unit/test_coupled_reduce.py _normalized_weighted_expr: sum(x*w) / sum(w), two reduce ranges", weighted,
            {1: wx, 2: ww}, lambda d: {0: (d[1].astype(np.float64) * d[2]).sum(1) / d[2].astype(np.float64).sum(1)}, tol=1e-5,
            opts=[[Opt(UP, 0, 3)], [Opt(OptOps.GROUP, 0, 3)], [Opt(U, 0, 2), Opt(UP, 1, 9)]]))
  return out


def llm_kernel_cases():
  """Hand-written kernels of tinygrad's Vulkan LLM path (the module beside tinygrad.llm.gguf that defines
  q4k_gemv_kernel, ssmab_kernel and moe_selprob_kernel): real-model kernels written as UOp ASTs, with reduces over
  LOCAL ranges (one work-item per 32-element group) and several outputs. Re-expressed at small sizes."""
  rng = np.random.default_rng(4)
  out = []
  add = out.append
  u8, f16 = dtypes.uint8, dtypes.float16

  # Q4_K GEMV: 144-byte blocks of 256 elements (d and dmin as half bits, 12 bytes of 6-bit scales and mins, 128 nibble bytes)
  OF, IN = 4, 256
  W = rng.integers(0, 256, (OF, 144)).astype(np.uint8)
  for r_ in range(OF):
    W[r_, 0:2] = np.frombuffer(np.float16(rng.uniform(0.005, 0.02)).tobytes(), np.uint8)
    W[r_, 2:4] = np.frombuffer(np.float16(rng.uniform(0.001, 0.01)).tobytes(), np.uint8)
  xq = rng.standard_normal(IN).astype(np.float32)

  def q4k():
    o_, W8, x = UOp.placeholder((OF,), F32, 0), UOp.placeholder((OF * 144,), u8, 1), UOp.placeholder((IN,), F32, 2)
    o = UOp.range(OF, 0, AxisType.GLOBAL)
    g = UOp.range(IN // 32, 1, AxisType.LOCAL)
    b = UOp.range(32, 2, AxisType.REDUCE)
    blk, sg = g // 8, g % 8
    base = o * 144 + blk * 144
    B = lambda k: W8[base + k]  # noqa: E731
    d = (B(0).cast(dtypes.uint16) | B(1).cast(dtypes.uint16).lshift(8)).bitcast(f16).float()
    dmin = (B(2).cast(dtypes.uint16) | B(3).cast(dtypes.uint16).lshift(8)).bitcast(f16).float()
    lt4 = sg < 4
    sc = lt4.where(B(4 + sg) & 63, (B(8 + sg) & 15) | ((B(sg) >> 6).lshift(4)))
    mn = lt4.where(B(8 + sg) & 63, (B(8 + sg) >> 4) | ((B(4 + sg) >> 6).lshift(4)))
    wbyte = W8[base + 16 + (sg // 2) * 32 + b]
    q = (sg & 1).eq(0).where(wbyte & 15, (wbyte >> 4) & 15)
    term = (d * sc.float() * q.float() - dmin * mn.float()) * x[g * 32 + b]
    return o_[o].store(term.reduce(b, arg=Ops.ADD).reduce(g, arg=Ops.ADD)).end(o).sink(arg=KernelInfo(name="q4k_gemv", opts_to_apply=()))

  def q4k_ref(dd):
    W8, x = dd[1].reshape(OF, 144).astype(np.int64), dd[2].astype(np.float64)
    res = np.zeros(OF)
    for r_ in range(OF):
      Bq = W8[r_]
      d = float(np.frombuffer(Bq[0:2].astype(np.uint8).tobytes(), np.float16)[0])
      dmin = float(np.frombuffer(Bq[2:4].astype(np.uint8).tobytes(), np.float16)[0])
      for g in range(IN // 32):
        sg = g % 8
        sc = Bq[4 + sg] & 63 if sg < 4 else (Bq[8 + sg] & 15) | ((Bq[sg] >> 6) << 4)
        mn = Bq[8 + sg] & 63 if sg < 4 else (Bq[8 + sg] >> 4) | ((Bq[4 + sg] >> 6) << 4)
        for b in range(32):
          wb = Bq[16 + (sg // 2) * 32 + b]
          q = wb & 15 if sg % 2 == 0 else (wb >> 4) & 15
          res[r_] += (d * sc * q - dmin * mn) * x[g * 32 + b]
    return {0: res}
  add(UCase("llm_q4k_gemv", "tinygrad's Vulkan LLM kernels q4k_gemv_kernel: Q4_K dequant GEMV, half scales from byte pairs, a reduce over "
            "32 bytes then over a LOCAL range of 8 groups", q4k, {1: W.reshape(-1), 2: xq}, q4k_ref, tol=1e-4))

  # ssmab_kernel's two dot products, written as two reductions over the same LOCAL range (the form its comment says
  # tinygrad's later versions staged into one shared array): each must get its own LOCAL buffer
  NH, T_, R_ = 4, 16, 8
  xs_, wa_, wb_ = rng.standard_normal(T_ * R_).astype(np.float32), rng.standard_normal((NH, T_ * R_)).astype(np.float32) * 0.1, \
      rng.standard_normal((NH, T_ * R_)).astype(np.float32) * 0.1

  def ssmab():
    oa, ob = UOp.placeholder((NH,), F32, 0), UOp.placeholder((NH,), F32, 1)
    x, wa, wb = UOp.placeholder((T_ * R_,), F32, 2), UOp.placeholder((NH * T_ * R_,), F32, 3), UOp.placeholder((NH * T_ * R_,), F32, 4)
    t, r, o = UOp.range(T_, 1, AxisType.LOCAL), UOp.range(R_, 2, AxisType.REDUCE), UOp.range(NH, 0, AxisType.GLOBAL)
    k = t * R_ + r
    pa = (x[k] * wa[o * (T_ * R_) + k]).reduce(r, arg=Ops.ADD).reduce(t, arg=Ops.ADD)
    pb = (x[k] * wb[o * (T_ * R_) + k]).reduce(r, arg=Ops.ADD).reduce(t, arg=Ops.ADD)
    return UOp.group(oa[o].store(pa.softplus()), ob[o].store(pb.sigmoid())).end(o).sink(arg=KernelInfo(name="ssmab", opts_to_apply=()))

  def ssmab_ref(dd):
    pa, pb = dd[3].reshape(NH, -1).astype(np.float64) @ dd[2], dd[4].reshape(NH, -1).astype(np.float64) @ dd[2]
    return {0: np.log1p(np.exp(pa)), 1: 1 / (1 + np.exp(-pb))}
  add(UCase("llm_ssmab_two_local_reduces", "tinygrad's Vulkan LLM kernels ssmab_kernel: two dot products each reduced over a REDUCE then the same "
            "LOCAL range, softplus and sigmoid epilogues, two outputs", ssmab, {2: xs_, 3: wa_.reshape(-1), 4: wb_.reshape(-1)}, ssmab_ref, tol=1e-5))

  # moe_selprob_kernel: top-k selection by rank (a MAX reduce with a -1 sentinel), a gather by a masked ADD reduce,
  # and a softmax over the k picks, all in one work-item; int32 and float outputs
  E, K = 16, 4
  lg = rng.standard_normal(E).astype(np.float32)
  rank = np.array([sum(lg[e] > lg[j] for j in range(E)) for e in range(E)], np.int32)

  def selprob():
    osel, oprob = UOp.placeholder((K,), dtypes.int32, 0), UOp.placeholder((K,), F32, 1)
    rk, lgt = UOp.placeholder((E,), dtypes.int32, 2), UOp.placeholder((E,), F32, 3)
    m = UOp.range(1, 0, AxisType.GLOBAL)
    sels, ss = [], []
    for mp in range(K):
      u1, u2 = UOp.range(E, 1 + 2 * mp, AxisType.REDUCE), UOp.range(E, 2 + 2 * mp, AxisType.REDUCE)
      sels.append(rk[u1].eq(E - K + mp).where(u1.cast(dtypes.int32), -1).reduce(u1, arg=Ops.MAX))
      ss.append(rk[u2].eq(E - K + mp).where(lgt[u2], 0.0).reduce(u2, arg=Ops.ADD))
    mx = ss[0]
    for v in ss[1:]: mx = mx.maximum(v)
    es = [((v + mx * -1.0) * 1.4426950408889634).exp2() for v in ss]
    tot = es[0]
    for v in es[1:]: tot = tot + v
    rcp = tot.reciprocal()
    return UOp.group(*[osel[mp].store(sels[mp]) for mp in range(K)], *[oprob[mp].store(es[mp] * rcp) for mp in range(K)]).end(m) \
        .sink(arg=KernelInfo(name="moe_selprob", opts_to_apply=()))

  def selprob_ref(dd):
    sel = np.array([int(np.where(dd[2] == E - K + mp)[0][0]) for mp in range(K)], np.int32)
    s_ = dd[3][sel].astype(np.float64)
    e_ = np.exp(s_ - s_.max())
    return {0: sel, 1: e_ / e_.sum()}
  add(UCase("llm_moe_selprob", "tinygrad's Vulkan LLM kernels moe_selprob_kernel: top-k by rank (MAX reduce, -1 sentinel), masked-sum gather, "
            "softmax, eight reduces in one work-item", selprob, {2: rank, 3: lg}, selprob_ref, tol=1e-6))
  return out


def tensor_cases():
  """Tensor programs from test/backend/test_linearizer.py, test_arange.py, test_renderer_failures.py,
  test/device/qcom/test_emu.py and test_custom_kernel's references: numpy computes the result."""
  rng = np.random.default_rng(3)
  out = []
  add = out.append
  C = kb.Case
  f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
  a2, b11, a41 = f(2), f(1, 1), f(4, 1)
  add(C("lin_two_nested_range", "test_linearizer.py test_two_nested_range", [a2], lambda a: a.reshape(2, 1).expand(2, 3).sum(),
        lambda a: np.array(np.broadcast_to(a.reshape(2, 1), (2, 3)).astype(np.float64).sum(), np.float32), tol=1e-6))
  add(C("lin_three_nested_range", "test_linearizer.py test_three_nested_range", [a2], lambda a: a.reshape(2, 1).expand(2, 3).expand(2, 2, 3).sum(),
        lambda a: np.array(np.broadcast_to(a.reshape(2, 1), (2, 2, 3)).astype(np.float64).sum(), np.float32), tol=1e-6))
  add(C("lin_two_nested_range_alt_indexing", "test_linearizer.py test_two_nested_range_alt_indexing", [np.array([2, 2], np.int32)],
        lambda a: a.reshape(2, 1).pad(((1, 1), (1, 1)), value=2).sum(), lambda a: np.array(24, np.int32)))
  add(C("lin_range_outer_op_before_phi", "test_linearizer.py test_range_outer_op_before_phi", [a41, b11], lambda a, b: (a + b[0]).sum() + b[0],
        lambda a, b: ((a + b[0]).astype(np.float64).sum() + b[0]).astype(np.float32), tol=1e-6))
  add(C("lin_range_outer_op_nested", "test_linearizer.py test_range_outer_op_before_phi_nested_range", [a2, b11],
        lambda a, b: (a.reshape(2, 1).expand(2, 3) + b[0]).sum() + b[0],
        lambda a, b: ((np.broadcast_to(a.reshape(2, 1), (2, 3)) + b[0]).astype(np.float64).sum() + b[0]).astype(np.float32), tol=1e-6))
  a4 = f(4)
  add(C("lin_load_dedup", "test_linearizer.py test_load_dedup (UPCAST:0:0)", [a4], lambda a: a[:-1] + a[1:], lambda a: a[:-1] + a[1:],
        opts=[[Opt(U, 0, 0)]]))
  x13, w12 = f(1, 1, 3), f(1, 1, 2)
  add(C("lin_reduce_upcast", "test_linearizer.py test_reduce_upcast: a padded 1-D conv, relu (UPCAST:0:0, UNROLL:0:0)", [x13, w12],
        lambda x, w: Tensor.conv2d(x, w, padding=1).relu(),
        lambda x, w: np.maximum(np.convolve(np.pad(x[0, 0], 1), w[0, 0][::-1], mode="valid").reshape(1, 1, 4), 0).astype(np.float32),
        tol=1e-6, opts=[[Opt(U, 0, 0), Opt(UP, 0, 0)]]))
  s1, s2 = f(1), f(1)
  add(C("lin_zero_fold", "test_linearizer.py test_zero_fold: Tensor.stack (UPCAST:0:0)", [s1, s2], lambda a, b: Tensor.stack(a, b),
        lambda a, b: np.stack([a, b]), opts=[[Opt(U, 0, 0)]]))
  for tdt, nd in ((dtypes.bool, np.bool_), (dtypes.int16, np.int16), (dtypes.float16, np.float16)):
    add(C(f"lin_sum_acc_{tdt.name}", "test_linearizer.py test_sum_acc_dtype", [], lambda tdt=tdt: Tensor([1, 2, 3], dtype=tdt).sum(),
          lambda nd=nd: np.array([1, 2, 3]).astype(nd).sum(dtype=np.float16 if nd is np.float16 else np.int32)))
  h8a, h8b = (rng.uniform(0, 1, (8, 8)).astype(np.float16) for _ in range(2))
  add(C("lin_arg_acc_f16_sum", "test_linearizer.py test_arg_acc_dtype: a.sum(dtype=half)", [h8a], lambda a: a.sum(dtype=dtypes.float16),
        lambda a: np.array(a.astype(np.float32).sum(), np.float16), tol=2e-2))
  add(C("lin_arg_acc_f16_matmul", "test_linearizer.py test_arg_acc_dtype: a.matmul(b, dtype=half)", [h8a, h8b], lambda a, b: a.matmul(b, dtype=dtypes.float16),
        lambda a, b: (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16), tol=1e-2))
  f8a = rng.uniform(0, 1, (8, 8)).astype(np.float32)
  add(C("lin_arg_acc_f32_to_f16", "test_linearizer.py test_arg_acc_dtype: float a.sum(dtype=half)", [f8a], lambda a: a.sum(dtype=dtypes.float16),
        lambda a: np.array(a.astype(np.float64).sum(), np.float16), tol=2e-2))
  d4, w8 = rng.uniform(0, 1, (2, 8, 6, 6)).astype(np.float16), rng.uniform(0, 1, (4, 8, 2, 2)).astype(np.float16)
  add(C("lin_arg_acc_f16_conv", "test_linearizer.py test_arg_acc_dtype: conv2d(dtype=half)", [d4, w8], lambda d, w: d.conv2d(w, dtype=dtypes.float16),
        lambda d, w: np.einsum("bchwij,ocij->bohw", np.lib.stride_tricks.sliding_window_view(d.astype(np.float32), (2, 2), axis=(2, 3)), w.astype(np.float32)).astype(np.float16),
        tol=2e-2))
  x64, y64 = f(64, 64), f(64, 64)
  mm = lambda x, y: (x.astype(np.float64) @ y).astype(np.float32)  # noqa: E731
  add(C("lin_unroll_no_phi_deps", "test_linearizer.py test_simple_unroll_no_between_phi_dependencies (UNROLL:0:4, UPCAST:0:4)", [x64, y64],
        lambda x, y: (x @ y).relu(), lambda x, y: np.maximum(mm(x, y), 0), tol=1e-4, opts=[[Opt(UP, 0, 4), Opt(U, 0, 4)]]))
  add(C("lin_grouped_store_locals_globals", "test_linearizer.py test_grouped_store_locals_and_globals", [x64, y64], lambda x, y: x @ y, mm, tol=1e-4,
        opts=[[Opt(L, 0, 4), Opt(R, 0, 8), Opt(UP, 0, 4), Opt(U, 0, 4), Opt(U, 1, 2)]]))
  x1, y128 = rng.uniform(0, 1, (1, 128)).astype(np.float32), rng.uniform(-1, 1, (128, 128)).astype(np.float32)
  add(C("lin_upcast_with_locals", "test_linearizer.py test_upcast_with_locals (GROUP:0:8, LOCAL:0:4, UPCAST:0:4)", [x1, y128],
        lambda x, y: (x @ y).relu(), lambda x, y: np.maximum(mm(x, y), 0), tol=1e-4,
        opts=[[Opt(OptOps.GROUP, 0, 8), Opt(L, 0, 4), Opt(U, 0, 4)], [Opt(R, 0, 16), Opt(L, 0, 8)]]))
  ones567 = np.ones((5, 6, 7), np.float32)
  add(C("lin_default_global_reversed", "test_linearizer.py test_default_global_reversed", [ones567],
        lambda t: t.shrink(((0, 4), (0, 5), (0, 6))) + 1, lambda t: t[:4, :5, :6] + 1))
  add(C("lin_sum_collapse", "test_linearizer.py test_sum_collapse", [np.array([2], np.int32)], lambda t: t.reshape(1, 1).expand(256, 256).sum(),
        lambda t: np.array(2 * 256 * 256, np.int32)))
  add(C("lin_phi_arange_float", "test_linearizer.py test_phi_simplification: arange(5.5, 3.5*300, 3.5)", [],
        lambda: Tensor.arange(5.5, 3.5 * 300, 3.5).clone(), lambda: (5.5 + 3.5 * np.arange(len(np.arange(5.5, 3.5 * 300, 3.5)))).astype(np.float32), tol=1e-6))
  add(C("lin_phi_arange_neg_step", "test_linearizer.py test_phi_simplification: arange(-1, -100, -5)", [],
        lambda: Tensor.arange(-1, -100, -5).clone(), lambda: np.arange(-1, -100, -5).astype(np.int32)))
  add(C("lin_phi_arange_255", "test_linearizer.py test_phi_simplification: arange(255)", [], lambda: Tensor.arange(255).clone(), lambda: np.arange(255, dtype=np.int32)))
  ones16 = np.ones(16, np.int32)
  add(C("lin_cast_there_and_back", "test_linearizer.py test_cast_there_and_back", [ones16],
        lambda t: t.neg().cast(dtypes.char).cast(dtypes.int).cast(dtypes.char) * 2, lambda t: (-t).astype(np.int8) * np.int8(2)))
  add(C("lin_cast_back_and_there", "test_linearizer.py test_cast_back_and_there", [ones16 * 300],
        lambda t: t.neg().cast(dtypes.char).cast(dtypes.int) * 2, lambda t: (-t).astype(np.int8).astype(np.int32) * 2))
  img, wc, bc = f(1, 3, 16, 16), f(16, 3, 3, 3), f(16)

  def conv_ref(x, w, b):
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (3, 3), axis=(2, 3))
    return (np.einsum("bchwij,ocij->bohw", win, w) + b[None, :, None, None]).astype(np.float32)
  add(C("lin_late_bias_load", "test_linearizer.py test_late_bias_load: conv2d with a bias", [img, wc, bc], lambda x, w, b: x.conv2d(w, b), conv_ref, tol=1e-4))
  aa, bb = f(4), f(4)
  add(C("lin_arg_dedup", "test_linearizer.py test_arg_dedup: shrinks of two buffers", [aa, bb],
        lambda a, b: (a.shrink(((0, 2),)) - a.shrink(((2, 4),))) - (b.shrink(((0, 2),)) - b.shrink(((2, 4),))),
        lambda a, b: (a[:2] - a[2:]) - (b[:2] - b[2:])))
  # test_arange.py
  add(C("ar_cumsum_513", "test_arange.py test_arange_cumsum", [], lambda: Tensor.arange(513).cumsum(0), lambda: np.arange(513).cumsum().astype(np.int32)))
  add(C("ar_arange_cat", "test_arange.py test_arange_cat", [], lambda: (lambda t: t.cat(t))(Tensor.arange(2, dtype=dtypes.int) + Tensor([3])),
        lambda: np.array([3, 4, 3, 4], np.int32)))
  add(C("ar_eye", "test_arange.py test_eye_complexity (smaller)", [], lambda: Tensor.eye(96).clone(), lambda: np.eye(96, dtype=np.float32)))
  add(C("ar_triu", "test_arange.py test_tri_complexity (smaller)", [np.ones((40, 40), np.float32)], lambda t: t.triu(), lambda t: np.triu(t)))
  needle = np.zeros(16384, np.int32)
  needle[1337] = 1
  add(C("ar_arange_2_reduce", "test_arange.py test_arange_2_reduce", [needle], lambda n: ((Tensor.arange(1, 16385) - 1) * n).sum(),
        lambda n: np.array(1337, np.int32)))
  ds, ix = rng.uniform(0, 1, (256, 8)).astype(np.float32), np.array([0, 3, 5, 6], np.int32)

  def manual_index(d, i):
    rg = Tensor.arange(256, dtype=dtypes.int).reshape(1, 1, 256, 1).expand(4, 8, 256, 1)
    ii = i.reshape(4, 1, 1, 1).expand(4, 8, 256, 1)
    full = (rg == ii).where(d.T.reshape(1, 8, 256, 1).expand(4, 8, 256, 1), Tensor.zeros(4, 8, 256, 1))
    return full.sum(axis=(2, 3))
  add(C("ar_manual_index", "test_arange.py test_manual_index (DSET 256, DDIM 8)", [ds, ix], manual_index, lambda d, i: d[i]))
  add(C("ar_index", "test_arange.py test_index / test_index_fused", [ds, ix], lambda d, i: d[i], lambda d, i: d[i]))
  xt = rng.integers(0, 256, (64, 1, 6, 6)).astype(np.uint8)
  smp = rng.integers(0, 64, 12).astype(np.int32)
  add(C("ar_index_mnist_uchar", "test_arange.py test_index_mnist (smaller): a uint8 gather", [xt, smp], lambda x, s: x[s], lambda x, s: x[s]))
  ew = rng.standard_normal((10, 3)).astype(np.float32)

  def embedding(w, i):
    emb = nn.Embedding(10, 3)
    emb.weight = w
    return emb(i)
  add(C("ar_llama_embedding", "test_arange.py test_llama_embedding", [ew, np.array([[1, 2, 3, 4]], np.int32)], embedding, lambda w, i: w[i]))
  # test_renderer_failures.py
  e5 = [f(1) for _ in range(6)]
  add(C("rf_repeat_sub", "test_renderer_failures.py test_repeat_sub (a chain of five SUBs: no parentheses dropped)", e5,
        lambda a, b, c, d, e, g: ((((a - b) - c) - d) - e) - g, lambda a, b, c, d, e, g: ((((a - b) - c) - d) - e) - g))
  add(C("rf_repeat_xor_bool", "test_renderer_failures.py test_repeat_xor", [np.array([True, False, True]), np.array([True, True, False]),
        np.array([False, True, True])], lambda a, b, c: ((a ^ b) ^ c) ^ (a ^ c), lambda a, b, c: ((a ^ b) ^ c) ^ (a ^ c)))
  ha, hb = rng.standard_normal((32, 32)).astype(np.float16), rng.standard_normal((34, 32)).astype(np.float16)
  add(C("rf_gated_acc_half", "test_renderer_failures.py test_gated_define_acc_with_half_dtype: a padded matmul with a half accumulator", [ha, hb],
        lambda a, b: a.pad((1, 1)).matmul(b, dtype=dtypes.half), lambda a, b: (np.pad(a.astype(np.float32), ((0, 0), (1, 1))) @ b.astype(np.float32)).astype(np.float16),
        tol=5e-2))
  # test/device/qcom/test_emu.py: instruction semantics pinned by tinygrad's QCOM emulator tests, on the OpenCL path
  qa = np.array([-4, 7, -7, -9, 2**20 + 1], np.int32)
  add(C("qcom_mod_const", "test/device/qcom/test_emu.py test_mod_const", [qa], lambda a: a % 3, lambda a: a % 3))
  qb, qc = np.array([-123456, 70000, -1, 2**31 - 1], np.int32), np.array([7891, -70000, -1, 3], np.int32)
  add(C("qcom_imul", "test/device/qcom/test_emu.py test_imul", [qb, qc], lambda a, b: a * b, lambda a, b: kb.wrap(a.astype(np.int64) * b, np.int32)))
  add(C("qcom_int64_to_float", "test/device/qcom/test_emu.py test_int64_to_float", [np.array([1, -2, 0, 2**40, -2**53 - 1, 2**63 - 1], np.int64)],
        lambda a: a.cast(dtypes.float32), lambda a: a.astype(np.float32)))
  add(C("qcom_half_const", "test/device/qcom/test_emu.py test_half_const", [np.array([1.5, 2.5, 1.0], np.float16)], lambda a: a - 1.0,
        lambda a: a - np.float16(1)))
  u8i = np.random.default_rng(0).integers(0, 32, (1, 1, 8, 8)).astype(np.uint8)

  # tinygrad interpolates uint8 in fixed point (a weight in 1/128ths, rounded): no independent reference, so the
  # expected values are tinygrad's own (want=None: computed by a run outside the capture)
  add(C("qcom_u8_lerp", "test/device/qcom/test_emu.py test_u8_lerp: uint8 interpolate, linear (fixed-point lerp); expected: tinygrad's",
        [u8i], lambda a: a.interpolate((4, 4), mode="linear"), None))
  wv = np.array([1, -2, 3, -4], np.int32)
  add(C("qcom_where", "test/device/qcom/test_emu.py test_where", [wv], lambda a: (a > 0).where(a * 10, -a), lambda a: np.where(a > 0, a * 10, -a)))
  add(C("qcom_bool_store", "test/device/qcom/test_emu.py test_bool_store", [np.array([1.0, 5, 6], np.float32), np.array([2.0, 3, 6], np.float32)],
        lambda a, b: a < b, lambda a, b: a < b))
  add(C("qcom_cov_rounding", "test/device/qcom/test_emu.py test_cov_rounds_to_zero: int -> float and float -> half round to nearest even here",
        [np.array([16777219, -19794315, 2**31 - 1], np.int32)], lambda a: a.cast(dtypes.float32), lambda a: a.astype(np.float32)))
  add(C("qcom_f32_to_half", "test/device/qcom/test_emu.py test_cov_rounds_to_zero (half)", [np.array([1 + 2**-11 + 2**-13, 1e5, -1e30, 2**-20], np.float32)],
        lambda a: a.cast(dtypes.half), lambda a: a.astype(np.float16)))
  add(C("qcom_denormals", "test/device/qcom/test_emu.py test_denormals_flush: OpenCL keeps denormals here (x * 1.5, log2)",
        [np.array([1e-45, -1e-39, 1.0], np.float32)], lambda a: a * 1.5, lambda a: a * np.float32(1.5)))
  # tinygrad's MAX is a<b ? b : a, and minimum(a, b) is -max(-a, -b) = (-a < -b) ? b : a: a NaN survives as the first operand
  add(C("qcom_minmax_nan", "test/device/qcom/test_emu.py test_minmax_nan, with tinygrad's MAX (a<b ? b : a), not IEEE's",
        [np.array([np.nan, 1, -0.0, 0.0], np.float32), np.array([1, np.nan, 0.0, -0.0], np.float32)], lambda a, b: a.maximum(b) * 2 + a.minimum(b),
        lambda a, b: np.where(a < b, b, a) * 2 + np.where(-a < -b, b, a), tol=1e-30))
  add(C("qcom_half_reciprocal", "test/device/qcom/test_emu.py test_half_cat4_truncates: half reciprocal (round to nearest here)",
        [np.array([894.0, 17.52, 2418.0], np.float16)], lambda a: a.reciprocal(), lambda a: (np.float32(1) / a.astype(np.float32)).astype(np.float16)))
  pa, pb = np.arange(15, dtype=np.float32).reshape(5, 3), np.arange(15, dtype=np.float32).reshape(3, 5) - 7
  add(C("qcom_predication_matmul", "test/device/qcom/test_emu.py test_predication: an exact small matmul", [pa, pb], lambda a, b: a @ b, lambda a, b: a @ b))
  add(C("qcom_triu1", "test/device/qcom/test_emu.py test_predf_first: triu(1)", [np.arange(1, 26, dtype=np.float32).reshape(5, 5)], lambda a: a.triu(1),
        lambda a: np.triu(a, 1)))
  for dt, eps in ((np.float32, 2**-12), (np.float16, 2**-6)):
    ma_, mc_ = np.array([1 + eps, 1 + 2 * eps, 1 + 3 * eps, 1.5], dt), np.array([-1, -1, -1, -2.25], dt)
    # a*a + c: OpenCL C may contract it into one rounding (FP_CONTRACT) and emulated half rounds once at the store, so
    # the product rounded first and the fused result are both accepted: the tolerance is one ulp of the product
    add(C(f"qcom_mad_{np.dtype(dt).name}", "test/device/qcom/test_emu.py test_mad_unfused: a*a + c (contraction allowed)", [ma_, mc_],
          lambda a, c: a * a + c, lambda a, c, dt=dt: ((a * a).astype(dt) + c).astype(dt), tol=float(np.finfo(dt).eps)))
  # test_const_folding.py: movement ops on constants folded (or not) before the kernel
  x4 = np.array([1.0, 2, 3, 4], np.float32)
  add(C("cf_mul_padded_one", "test_const_folding.py test_add_padded_one: x * ones(2).pad(1, 1)", [x4], lambda x: x * Tensor.ones(2).pad(((1, 1),)),
        lambda x: x * np.array([0, 1, 1, 0], np.float32)))
  add(C("cf_add_shrunk_zero", "test_const_folding.py test_add_shrunk_zero", [x4], lambda x: x + Tensor.zeros(6).shrink(((1, 5),)), lambda x: x))
  add(C("cf_cast_padded_i16", "test_const_folding.py test_cast_padded: ones(4).pad(1, 1).cast(int16)", [], lambda: Tensor.ones(4).pad(((1, 1),)).cast(dtypes.int16),
        lambda: np.array([0, 1, 1, 1, 1, 0], np.int16)))
  add(C("cf_cast_padded_u16", "test_const_folding.py test_cast_padded: full(4, -1).pad(1, 1).cast(uint16)", [],
        lambda: Tensor.full(4, fill_value=-1).pad(((1, 1),)).cast(dtypes.uint16), lambda: np.array([0, 65535, 65535, 65535, 65535, 0], np.uint16)))
  add(C("cf_padded_exp_sum", "test_const_folding.py test_padded_const_sum: ones(4).pad(1, 1).exp().sum() (exp(0) = 1 in the pad)", [],
        lambda: Tensor.ones(4).pad(((1, 1),)).exp().sum(), lambda: np.array(4 * math.e + 2, np.float32), tol=1e-6))
  add(C("cf_tautological_lt", "test_const_folding.py TestTautologicalCompare: bool < False, True < bool", [np.array([True, False])],
        lambda a: (a < False).cast(dtypes.int32) * 2 + (True < a).cast(dtypes.int32), lambda a: np.zeros(2, np.int32)))
  add(C("cf_a_eq_a_nan", "test_const_folding.py test_a_eq_a / test_a_ne_a: a == a and a != a with NaN", [np.array([math.nan, 1.0, 2.0], np.float32)],
        lambda a: (a == a).cast(dtypes.int32) * 2 + (a != a).cast(dtypes.int32), lambda a: np.array([1, 2, 2], np.int32)))
  add(C("cf_a_eq_a_int", "test_const_folding.py test_a_eq_a: ints", [np.array([1, 2, 3], np.int32)],
        lambda a: (a == a).cast(dtypes.int32) * 2 + (a != a).cast(dtypes.int32), lambda a: np.full(3, 2, np.int32)))
  # test/backend/test_llama_kernels.py run_fused_ce's reference: the cross-entropy of bfloat16 logits with label smoothing
  lg = kb.f32_to_bf16_bits(rng.standard_normal((2, 16, 128)).astype(np.float32))
  tg = rng.integers(0, 128, (2, 16)).astype(np.int32)

  def ce_ref(x, t):
    x = kb.bf16_bits_to_f32(x).astype(np.float64)
    lp = x - x.max(-1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    nll = np.take_along_axis(lp, t[..., None].astype(np.int64), -1)[..., 0]
    return np.array(-(0.8 * nll + 0.2 * lp.mean(-1)).mean(), np.float32)
  add(C("llama_ce_label_smoothing", "test/backend/test_llama_kernels.py run_fused_ce (the reference loss): bf16 logits, label smoothing 0.2",
        [("bf16", lg), tg], lambda x, t: x.float().sparse_categorical_crossentropy(t, label_smoothing=0.2), ce_ref, tol=1e-5))
  # test_custom_kernel.py references, as Tensor programs
  add(C("ck_ref_gemm_backward", "test_custom_kernel.py test_gemm_backward: the weight gradient a.T @ ones", [f(4, 8)],
        lambda a: a.T @ Tensor.ones(4, 4), lambda a: (a.T.astype(np.float64) @ np.ones((4, 4))).astype(np.float32), tol=1e-5))
  return out


def all_cases(): return custom_kernel_cases() + uops_program_cases() + llm_kernel_cases() + tensor_cases()


class CaseTimeout(Exception):
  pass


def on_alarm(signum, frame): raise CaseTimeout("tinygrad took longer than --case-timeout")


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--out", default="/tmp/uopcg_tgtests")
  ap.add_argument("--uopcg", default=os.path.join(oracle.ROOT, "build", "uopcg"))
  ap.add_argument("--only", nargs="*")
  ap.add_argument("--variants", type=int, default=2, help="random BEAM-action opt variants per result kernel")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--list", action="store_true")
  ap.add_argument("--extend-heuristic", action="store_true")
  ap.add_argument("--verbose", action="store_true")
  ap.add_argument("--case-timeout", type=int, default=240, help="seconds for tinygrad's part of one case (export, variants)")
  a = ap.parse_args()
  kb.VERBOSE, kb.EXTEND = a.verbose, a.extend_heuristic
  cs = all_cases()
  if a.list:
    for c in cs: print(f"{c.name:36s} {c.kind:6s} {c.src}")
    return 0
  if Device.DEFAULT != "CL": sys.exit(f"needs tinygrad's CL device (PoCL), not {Device.DEFAULT}")
  os.makedirs(a.out, exist_ok=True)
  rng = random.Random(a.seed)
  summary = {"cases": 0, "files": 0, "skipped": [], "uopcg_wrong_files": 0, "uopcg_wrong_cases": [], "tinygrad_wrong_cases": [],
             "tinygrad_front_folds": [], "reported": [], "tinygrad_wrong_variants": []}
  cap = md.Capture()
  signal.signal(signal.SIGALRM, on_alarm)
  for c in cs:
    if a.only and not any(fnmatch.fnmatch(c.name, pat) for pat in a.only): continue
    if isinstance(c, kb.Case) and c.want is None:  # expected: tinygrad's own values, from a run outside the capture
      vals = c.prog(*kb.realize_inputs(c)).numpy()
      c.want = lambda *args, vals=vals: vals
    with cap:
      signal.alarm(a.case_timeout)  # tinygrad's rewrites can loop on an opt variant: the case is skipped
      try:
        if isinstance(c, UCase): files, tg_right, note = write_ucase(c, a.out, a.variants, rng)
        else:
          files, tg_right, note = kb.write_case(c, cap, a.out, a.variants, rng)
          files = rename(a.out, files)
      except Exception as ex:
        print(f"SKIP {c.name}: tinygrad: {type(ex).__name__}: {str(ex)[:200]}")
        summary["skipped"].append(c.name)
        continue
      finally:
        signal.alarm(0)
    if note: print(f"SKIP {c.name}: {note}"); summary["skipped"].append(c.name); continue
    summary["cases"] += 1
    bad, front = [], []
    for vname, final, opts in files:
      r = kb.run_uopcg(a.uopcg, os.path.join(a.out, vname + ".json"))
      summary["files"] += 1
      if vname in TG_WRONG_VARIANTS:  # opts that change a hand-written accumulation's meaning for tinygrad too
        summary["tinygrad_wrong_variants"].append(f"{vname}: uopcg post-opts {'right' if r['post_opts'] else 'wrong'}, from AST {'right' if r['from_ast'] else 'wrong'}")
        continue
      if r["post_opts"] and r["from_ast"]: continue
      label = f"{vname}{'' if opts is None else ' [' + md.opt_str(opts) + ']'}"
      if r["from_ast"] and tg_right is False:
        front.append(vname)
        print(f"  TGFRONT {label}: {r['post_opts_msg']}")
        continue
      bad.append(vname)
      print(f"  WRONG {label}: " + "; ".join(f"{k}: {r[k + '_msg']}" for k in ("post_opts", "from_ast") if not r[k]))
    tag = "ok  " if not bad else ("FAIL" if c.kind == "strict" else "RPRT")
    tg = {True: "", False: "  [tinygrad wrong]", None: "  [expected: tinygrad's values]"}[tg_right]
    print(f"{tag} {c.name} ({len(files)} files){tg}", flush=True)
    if tg_right is False: summary["tinygrad_wrong_cases"].append(c.name)
    if front: summary["tinygrad_front_folds"].append(c.name)
    if bad:
      if c.kind != "strict": summary["reported"].append(c.name)
      else:
        summary["uopcg_wrong_cases"].append(c.name)
        summary["uopcg_wrong_files"] += len(bad)
  json.dump(summary, open(os.path.join(a.out, "summary.json"), "w"), indent=1)
  print(json.dumps(summary, indent=1))
  return 1 if summary["uopcg_wrong_cases"] else 0


if __name__ == "__main__":
  sys.exit(main())
