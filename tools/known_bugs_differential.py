#!/usr/bin/env python3
"""Known-bug differential testing: tinygrad's known codegen bugs and past regressions (issues, PRs and the
regression tests of its own test suite), and the classic edge cases of C integer and IEEE float semantics,
written as small tinygrad Tensor programs, run by tinygrad on its OpenCL device (PoCL) and captured as kernel
files like tools/model_differential.py does; but the expected outputs are computed independently, with numpy
in the exact dtype semantics (wrap-around integers, floor division, round-to-nearest-even narrow floats),
not taken from tinygrad. So a bug uopcg shares with tinygrad shows, and every case also says whether
tinygrad's own kernel computed the right values. docs/known-bugs-differential.md describes the campaign.

Each case's kernel is written as tinygrad's heuristics optimise it, plus a few random variants from tinygrad's
BEAM action space (tools/model_differential.py, random_variants) and the opt lists the case names itself.
uopcg runs every file twice: from the file's post-opts graph and from its AST (uopcg's own front stages and
opts). Only the last kernel of a case (the one writing the result) gets numpy's values; a case of several
kernels takes the earlier kernels' outputs from tinygrad's run.

usage:
  python3 tools/known_bugs_differential.py --uopcg build/uopcg [--out /tmp/uopcg_known] [--only NAME...] [--variants 3]
  python3 tools/known_bugs_differential.py --list
  python3 tools/known_bugs_differential.py --uopcg build/uopcg --only 'alu_*'    # patterns (fnmatch) select cases
Exit status 1 when uopcg computes another value than numpy's on a case marked `strict`.
Cases marked `ieee` (NaN through max/min/clip) compare with IEEE-754/numpy propagation, which is not what
tinygrad's MAX op defines (`a<b ? b : a`), and cases marked `finite` (x-x, x/x, x*0, x<x of inf/NaN, -0.0+0.0)
are outside the finite-math model of uopcg's symbolic rules (docs/symbolic.md; tinygrad folds them before the
kernel AST already): both are reported, not counted as failures. A file that fails only from its post-opts
graph where tinygrad's own kernel is wrong too is tinygrad's front stages folding wrongly (uopcg's own front
stages, from the AST, must pass): reported as such.
"""
import argparse
import fnmatch
import json
import os
import random
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tinygrad_oracle as oracle  # noqa: E402
import model_differential as md  # noqa: E402  (Capture, attach, SinkAtOpts, random_variants)

from tinygrad import Tensor, Device, dtypes  # noqa: E402
from tinygrad.codegen.opt import Opt, OptOps  # noqa: E402
import tinygrad.engine.realize as realize  # noqa: E402

VERBOSE = False
NPD = {dtypes.float32: np.float32, dtypes.float16: np.float16, dtypes.float64: np.float64, dtypes.int8: np.int8,
       dtypes.int16: np.int16, dtypes.int32: np.int32, dtypes.int64: np.int64, dtypes.uint8: np.uint8,
       dtypes.uint16: np.uint16, dtypes.uint32: np.uint32, dtypes.uint64: np.uint64, dtypes.bool: np.bool_}


# ---- exact narrow-float conversions (numpy has no bfloat16) ----
def f32_to_bf16_bits(x) -> np.ndarray:
  """Round-to-nearest-even float32 -> bfloat16 bits; NaN stays a (quiet) NaN."""
  b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
  r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
  return np.where(np.isnan(np.asarray(x, dtype=np.float32)), np.uint16(0x7FC0), r).astype(np.uint16)


def bf16_bits_to_f32(b) -> np.ndarray: return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def bf16(x) -> np.ndarray: return bf16_bits_to_f32(f32_to_bf16_bits(x))


# ---- the cases ----
class Case:
  """A Tensor program on explicit inputs, the expected result computed with numpy, and where it comes from.
  kind: strict (a wrong value is a failure), ieee (reported only, see the module doc)."""
  def __init__(self, name, src, inputs, prog, want, tol=0.0, kind="strict", opts=()):
    self.name, self.src, self.inputs, self.prog, self.want, self.tol, self.kind, self.opts = \
        name, src, inputs, prog, want, tol, kind, [list(o) for o in opts]


def ints(dt, *vals): return np.array(vals, dtype=dt)


def edge_i32():  # every sign, the extremes, multiples of small divisors and their neighbours
  return ints(np.int32, -2**31, -2**31 + 1, -2**31 + 7, -100, -9, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7,
              8, 9, 100, 2**31 - 8, 2**31 - 2, 2**31 - 1, 12345678)


def floor_div(a, b): return np.floor_divide(a, b)


def trunc_div(a, b):
  q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
  return (np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64)) * q).astype(a.dtype)


def wrap(v, dt):
  """Exact integers (any width) wrapped to dt's two's complement width, as C's unsigned arithmetic wraps."""
  bits = 8 * np.dtype(dt).itemsize
  signed = np.issubdtype(dt, np.signedinteger)
  flat = [int(x) % (1 << bits) for x in np.asarray(v).ravel()]
  if signed: flat = [x - (1 << bits) if x >= 1 << (bits - 1) else x for x in flat]
  return np.array(flat, dtype=object).astype(dt).reshape(np.asarray(v).shape)


def cases():
  rng = np.random.default_rng(7)
  out = []
  add = out.append
  T = lambda a: Tensor(a)  # noqa: E731
  e = edge_i32()

  # -- integer division and modulo: floor semantics of Tensor // and %, every sign (tinygrad PRs 10064, 10164,
  #    10229, 10832: div/mod folding wrong with negative numerators and divisors; issue 1316)
  for d in (3, -3, 8, -8, 7, 1, -1):
    add(Case(f"idiv_i32_const{d}", "PR 10164/10832 (sign out of idiv/mod), fast idiv", [e], lambda a, d=d: a // d,
             lambda a, d=d: floor_div(a.astype(np.int64), d).astype(np.int32) if d != -1 else wrap(-a.astype(np.int64), np.int32)))
    add(Case(f"mod_i32_const{d}", "PR 10832 (x%-d), issue 1316", [e], lambda a, d=d: a % d, lambda a, d=d: np.mod(a.astype(np.int64), d).astype(np.int32)))
  b = ints(np.int32, *([3, -3, 7, -7, 1, 2, -2, 5, -5, 9, -9, 4, -4, 6] * 2))
  a2 = np.where((e == -2**31) & (b == -1), 0, e).astype(np.int32)
  add(Case("idiv_i32_tensor", "floor division, operands of unknown sign (DIVERGENCES P8)", [a2, b], lambda a, b: a // b,
           lambda a, b: floor_div(a, b)))
  add(Case("mod_i32_tensor", "floor modulo, operands of unknown sign", [a2, b], lambda a, b: a % b, lambda a, b: np.mod(a, b)))
  add(Case("trunc_div_i32_tensor", "Tensor.div(rounding_mode='trunc'): C division", [a2, b],
           lambda a, b: a.div(b, rounding_mode="trunc"), trunc_div))
  i8 = ints(np.int8, -128, -127, -100, -9, -8, -7, -1, 0, 1, 7, 8, 9, 100, 126, 127, -3)
  add(Case("idiv_i8_const3", "narrow floor division (DIVERGENCES R1)", [i8], lambda a: a // 3, lambda a: floor_div(a, np.int8(3))))
  add(Case("mod_i8_const-4", "narrow floor modulo by a negative power of two", [i8], lambda a: a % -4, lambda a: np.mod(a, np.int8(-4))))
  u32 = ints(np.uint32, 0, 1, 2, 3, 6, 7, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 1, 2**32 - 2, 3000000000, 4000000001, 123456789, 99, 1 << 24)
  add(Case("idiv_u32_const7", "fast idiv on unsigned values >= 2^31 (magic-number bound)", [u32], lambda a: a // 7, lambda a: a // np.uint32(7)))
  add(Case("mod_u32_const10", "unsigned modulo >= 2^31", [u32], lambda a: a % 10, lambda a: a % np.uint32(10)))
  i64 = ints(np.int64, -2**62, -2**40 - 3, -7, -1, 0, 1, 7, 2**40 + 5, 2**62 + 3, 2**63 - 1, -2**63 + 1, 10**15)
  add(Case("idiv_i64_const3", "fast idiv declines numerators wider than 2^62 (DIVERGENCES P10)", [i64], lambda a: a // 3, lambda a: floor_div(a, 3)))
  add(Case("mod_i64_const1000", "int64 modulo of large values", [i64], lambda a: a % 1000, lambda a: np.mod(a, 1000)))

  # -- index arithmetic through aranges: the symbolic div/mod folding of negative and offset ranges
  #    (PR 10064 "bug_in_div_range", PR 10229 test_div_numerator_negative, test_uop_symbolic.py test_div_neg*)
  n = 96
  ar = lambda: Tensor.arange(n, dtype=dtypes.int32)  # noqa: E731
  A = np.arange(n, dtype=np.int64)
  add(Case("arange_div_offset", "test_uop_symbolic.py test_div_const_div_wrong_sign", [], lambda: (((ar() - 10) // 2) + 10) // 2,
           lambda: (((A - 10) // 2 + 10) // 2).astype(np.int32)))
  add(Case("arange_mod_negative", "floor mod of a range with negative values", [], lambda: (ar() * 3 - 150) % 7,
           lambda: np.mod(A * 3 - 150, 7).astype(np.int32)))
  add(Case("arange_div_negative_coef", "range times -1 divided (PR 10164)", [], lambda: (ar() * -1 + 5) // 4,
           lambda: floor_div(-A + 5, 4).astype(np.int32)))
  add(Case("arange_div_neg_divisor", "range divided by a negative constant (PR 10832)", [], lambda: (ar() - 40) // -6 + (ar() - 40) % -6,
           lambda: (floor_div(A - 40, -6) + np.mod(A - 40, -6)).astype(np.int32)))
  add(Case("arange_nested_divmod", "div of mod of div (symbolic nesting)", [], lambda: ((ar() - 50) // 3 % 5 - 2) // 2,
           lambda: floor_div(np.mod(floor_div(A - 50, 3), 5) - 2, 2).astype(np.int32)))
  add(Case("arange_sum_overflow", "reduce folding of an arange sum (closed form) in int32: wraps", [],
           lambda: Tensor.arange(70000, dtype=dtypes.int32).sum(dtype=dtypes.int32),
           lambda: np.array(np.arange(70000, dtype=np.int64).sum(), dtype=np.int64).astype(np.int32).reshape(())))
  add(Case("arange_count_lt", "(arange < k).sum(): a folded count", [], lambda: (Tensor.arange(1000) < 317).sum(),
           lambda: np.array(317, dtype=np.int32)))
  add(Case("arange_big_i64", "int64 values near 2^31 from a range (index math near 2^31)", [],
           lambda: Tensor.arange(32, dtype=dtypes.int64) + (2**31 - 16),
           lambda: np.arange(32, dtype=np.int64) + (2**31 - 16)))
  add(Case("arange_i32_wrap", "int32 range times 2^27 wraps", [], lambda: Tensor.arange(40, dtype=dtypes.int32) * (2**27),
           lambda: wrap(np.arange(40, dtype=np.int64) * 2**27, np.int32)))

  # -- wrap-around and overflow (C: unsigned wraps; tinygrad's integer dtypes are two's complement and wrap)
  big = ints(np.int32, 2**31 - 1, 2**31 - 2, -2**31, 65536, 65537, -65536, 46341, 1, 0, -1, 1000000, -1000000)
  add(Case("i32_mul_wrap", "int32 overflow wraps (signed overflow is UB in C: DIVERGENCES R2)", [big], lambda a: a * 65537,
           lambda a: wrap(a.astype(np.int64) * 65537, np.int32)))
  add(Case("i32_add_wrap", "x + 1 at INT_MAX", [big], lambda a: a + 1, lambda a: wrap(a.astype(np.int64) + 1, np.int32)))
  add(Case("i32_neg_abs_min", "-x and abs(x) of INT_MIN", [big], lambda a: (-a) + a.abs() * 3,
           lambda a: wrap(-a.astype(np.int64) + np.abs(a.astype(np.int64)) * 3, np.int32)))
  add(Case("i32_gt_plus1", "(x+1) > x folded to True is wrong at INT_MAX (DIVERGENCES 4)", [big], lambda a: (a + 1) > a,
           lambda a: wrap(a.astype(np.int64) + 1, np.int32) > a))
  add(Case("i32_mul2_div2", "(x*2)//2 == x folded is wrong when x*2 wraps", [big], lambda a: (a * 2) // 2,
           lambda a: floor_div(wrap(a.astype(np.int64) * 2, np.int32), 2)))
  u8a = ints(np.uint8, 0, 1, 2, 100, 127, 128, 200, 254, 255, 17, 3, 250)
  u8b = ints(np.uint8, 255, 0, 3, 200, 129, 128, 100, 1, 255, 18, 4, 6)
  add(Case("u8_add_mul_wrap", "uint8 arithmetic wraps at 8 bits (DIVERGENCES R1)", [u8a, u8b], lambda a, b: (a + b) * 3 - b,
           lambda a, b: ((a + b) * np.uint8(3) - b).astype(np.uint8)))
  add(Case("u8_sub_lt", "uint8 (a-b) < a after wrap", [u8a, u8b], lambda a, b: (a - b) < a, lambda a, b: (a - b).astype(np.uint8) < a))
  i8b = ints(np.int8, 127, -128, 100, -100, 64, -1, 0, 1, 2, -2, 120, 50)
  add(Case("i8_mul_neg_wrap", "int8 product and negation wrap (-(-128) = -128)", [i8b], lambda a: a * 3 + (-a),
           lambda a: wrap(a.astype(np.int64) * 3 - a.astype(np.int64), np.int8)))
  u32b = ints(np.uint32, 0, 1, 5, 2**31, 2**31 + 5, 2**32 - 1, 7, 3000000000)
  u32c = ints(np.uint32, 5, 0, 1, 5, 2**31, 2**32 - 2, 2**31 + 7, 2999999999)
  add(Case("u32_cmp_big", "unsigned comparison of values >= 2^31", [u32b, u32c], lambda a, b: (a < b).cast(dtypes.int32) * 2 + (a - b < a).cast(dtypes.int32),
           lambda a, b: (a < b).astype(np.int32) * 2 + ((a - b).astype(np.uint32) < a).astype(np.int32)))
  add(Case("u32_minmax", "uint32 min/max (PR 7675: min through negation was wrong for unsigned)", [u32b, u32c],
           lambda a, b: a.minimum(b) + (a.maximum(b) // 2), lambda a, b: np.minimum(a, b) + np.maximum(a, b) // np.uint32(2)))
  add(Case("u32_sub_ge", "uint32 a - 1 < a at 0", [u32b], lambda a: (a - 1) < a, lambda a: (a - np.uint32(1)).astype(np.uint32) < a))

  # -- shifts and bitwise ops
  sh = ints(np.int32, -1, -2, -7, -8, -2**31, 2**31 - 1, 1, 5, 255, -256, 12345, -12345)
  add(Case("i32_shr_negative", "Tensor >> on negative ints is a floor shift", [sh], lambda a: a >> 3, lambda a: a >> 3))
  add(Case("i32_shl_wrap", "Tensor << wraps past the sign bit", [sh], lambda a: a << 5, lambda a: wrap(a.astype(np.int64) << 5, np.int32)))
  add(Case("u32_shr31", "uint32 >> 31 and << 31", [u32b], lambda a: (a >> 31) + (a << 31), lambda a: ((a >> np.uint32(31)) + (a << np.uint32(31))).astype(np.uint32)))
  add(Case("u8_shl_wrap", "uint8 << 4 keeps 8 bits", [u8a], lambda a: a << 4, lambda a: (a << np.uint8(4)).astype(np.uint8)))
  add(Case("i32_bitwise", "& | ^ ~ on negative ints", [sh, e[:12]], lambda a, b: ((a & b) | (a ^ 0x5555)) ^ ~b,
           lambda a, b: ((a & b) | (a ^ 0x5555)) ^ ~b))
  add(Case("bool_arith", "bool + and * are logical or/and", [np.array([0, 1, 0, 1], bool), np.array([0, 0, 1, 1], bool)],
           lambda a, b: (a + b).cast(dtypes.int32) * 2 + (a * b).cast(dtypes.int32), lambda a, b: (a | b).astype(np.int32) * 2 + (a & b).astype(np.int32)))

  # -- min/max reductions of integers (PR 7669/7675 uint8 min, PR 8118 argmin at INT_MIN, issue 9244 uchar pool min)
  img = rng.integers(0, 256, (4, 9)).astype(np.uint8)
  img[1, 3], img[2] = 0, 255
  add(Case("u8_min_reduce", "issue 9244, PR 7669 (uint8 min)", [img], lambda a: a.min(axis=1), lambda a: a.min(axis=1)))
  add(Case("u8_min_pool", "issue 9244 (uchar _pool min)", [img.reshape(4, 9)], lambda a: a.reshape(4, 3, 3).min(axis=2), lambda a: a.reshape(4, 3, 3).min(axis=2)))
  m32 = rng.integers(-1000, 1000, (3, 10)).astype(np.int32)
  m32[0, 4], m32[1, 0], m32[2, 9] = -2**31, 2**31 - 1, -2**31
  add(Case("i32_min_reduce", "int32 min at INT_MIN (PR 8118: ~ instead of -)", [m32], lambda a: a.min(axis=1), lambda a: a.min(axis=1)))
  add(Case("i32_argmin", "PR 8118 argmin on int32 min", [m32], lambda a: a.argmin(axis=1), lambda a: a.argmin(axis=1).astype(np.int32)))
  add(Case("u32_max_reduce", "uint32 max reduce of values >= 2^31 (identity 0)", [u32b.reshape(2, 4)], lambda a: a.max(axis=1), lambda a: a.max(axis=1)))
  neg = -rng.uniform(1, 100, (17, 13)).astype(np.float32)
  add(Case("f32_max_all_negative_padded", "linearizer failure 27 (PADTO on a MAX reduce: padding must be -inf)", [neg],
           lambda a: a.max(axis=1), lambda a: a.max(axis=1),
           opts=[[Opt(OptOps.PADTO, 0, 32), Opt(OptOps.UPCAST, 0, 4)], [Opt(OptOps.PADTO, 1, 16)], [Opt(OptOps.GROUPTOP, 0, 13)]]))
  pr = rng.uniform(0.5, 1.5, (9, 11)).astype(np.float32)
  add(Case("f32_prod_padded", "MUL reduce with PADTO (identity 1)", [pr], lambda a: a.prod(axis=1), lambda a: a.astype(np.float64).prod(axis=1).astype(np.float32),
           tol=1e-5, opts=[[Opt(OptOps.PADTO, 1, 16)], [Opt(OptOps.UNROLL, 0, 11)]]))
  s8 = rng.integers(-128, 128, (5, 300)).astype(np.int8)
  add(Case("i8_sum_acc", "int8 sum accumulates in a wider int (tinygrad's sum_acc_dtype)", [s8], lambda a: a.sum(axis=1),
           lambda a: a.astype(np.int64).sum(axis=1).astype(np.int32), opts=[[Opt(OptOps.GROUPTOP, 0, 16)], [Opt(OptOps.UNROLL, 0, 4), Opt(OptOps.UPCAST, 0, 5)]]))
  s32 = rng.integers(2**28, 2**30, (2, 64)).astype(np.int32)
  add(Case("i32_sum_wrap", "int32 sum that overflows wraps, in any order (GROUP/UNROLL)", [s32], lambda a: a.sum(axis=1, dtype=dtypes.int32),
           lambda a: wrap(a.astype(np.int64).sum(axis=1), np.int32), opts=[[Opt(OptOps.GROUP, 0, 8)], [Opt(OptOps.UNROLL, 0, 4)]]))
  u8s = rng.integers(200, 256, (3, 70)).astype(np.uint8)
  add(Case("u8_sum_acc", "uint8 sum (accumulated as uint32)", [u8s], lambda a: a.sum(axis=1), lambda a: a.astype(np.uint64).sum(axis=1).astype(np.uint32)))
  cs = rng.integers(-50, 50, (3, 20)).astype(np.int32)
  add(Case("i32_cumsum", "int cumsum (a pad-and-reduce kernel)", [cs], lambda a: a.cumsum(axis=1), lambda a: a.cumsum(axis=1).astype(np.int32)))
  add(Case("i32_mean", "mean of int32 (to float)", [cs], lambda a: a.mean(axis=1), lambda a: a.astype(np.float64).mean(axis=1).astype(np.float32), tol=1e-6))

  # -- casts (C: float -> int truncates; out-of-range conversions are undefined and not tested)
  fv = np.array([-2.7, -2.5, -0.5, -0.0, 0.0, 0.49, 0.5, 1.5, 2.5, 2.7, 126.9, -127.9, 1e9, -1e9, 2147483520.0, -2147483648.0], np.float32)
  add(Case("f32_to_i32_trunc", "float -> int truncates toward zero", [fv], lambda a: a.cast(dtypes.int32), lambda a: a.astype(np.int32)))
  add(Case("f32_to_i8", "float -> int8 in range", [np.clip(fv, -128.5, 127.5)], lambda a: a.cast(dtypes.int8), lambda a: np.trunc(a).astype(np.int8)))
  fu = np.array([0.0, 0.9, 255.9, 3e9, 4294967040.0, 2147483648.0, 2147483904.0, 1.5, 16777217.0, 65535.5], np.float32)
  add(Case("f32_to_u32_big", "float -> uint32 above 2^31 (not through int)", [fu], lambda a: a.cast(dtypes.uint32), lambda a: a.astype(np.uint32)))
  add(Case("f32_to_u8", "float -> uint8 in range", [fu[[0, 1, 2, 7, 9]] % 256], lambda a: a.cast(dtypes.uint8), lambda a: a.astype(np.uint8)))
  add(Case("u32_to_f32_big", "uint32 -> float above 2^31 (classic: through int)", [u32], lambda a: a.cast(dtypes.float32), lambda a: a.astype(np.float32)))
  add(Case("u64_to_f32_big", "uint64 -> float above 2^63", [ints(np.uint64, 0, 1, 2**63, 2**64 - 1, 2**53 + 1, 12345678901234567890)],
           lambda a: a.cast(dtypes.float32), lambda a: a.astype(np.float32)))
  add(Case("i32_to_f32_round", "int -> float rounds to nearest even", [ints(np.int32, 16777217, 16777219, -16777217, 2**31 - 1, -2**31, 33554435)],
           lambda a: a.cast(dtypes.float32), lambda a: a.astype(np.float32)))
  add(Case("i32_f32_i32_roundtrip", "int -> float -> int must not fold to x", [ints(np.int32, 16777217, 16777219, -16777217, 2**30 + 1, 7, -3)],
           lambda a: a.cast(dtypes.float32).cast(dtypes.int32), lambda a: a.astype(np.float32).astype(np.int32)))
  add(Case("f32_i32_f32_roundtrip", "float -> int -> float must truncate", [fv[:10]], lambda a: a.cast(dtypes.int32).cast(dtypes.float32),
           lambda a: np.trunc(a).astype(np.float32) + np.float32(0)))
  wv = ints(np.int32, 300, 200, 128, 255, 256, -1, -129, 65535, 65536, -32769, 2**31 - 1, -2**31)
  add(Case("i32_narrow_widen", "x.cast(int8).cast(int32) and uint8/uint16 must wrap, not fold", [wv],
           lambda a: a.cast(dtypes.int8).cast(dtypes.int32) * 100000 + a.cast(dtypes.uint8).cast(dtypes.int32) * 10 + a.cast(dtypes.int16).cast(dtypes.int32),
           lambda a: a.astype(np.int8).astype(np.int32) * 100000 + a.astype(np.uint8).astype(np.int32) * 10 + a.astype(np.int16).astype(np.int32)))
  add(Case("i32_to_u64_sign", "negative int32 -> uint64 and -> int64 (sign extension, modulo 2^64)", [wv],
           lambda a: a.cast(dtypes.uint64) + a.cast(dtypes.int64).cast(dtypes.uint64) // 2,
           lambda a: (a.astype(np.int64).astype(np.uint64) + a.astype(np.int64).astype(np.uint64) // np.uint64(2)).astype(np.uint64)))
  add(Case("u32_to_i64", "uint32 >= 2^31 -> int64 is positive", [u32], lambda a: a.cast(dtypes.int64) - 1, lambda a: a.astype(np.int64) - 1))
  bv = np.array([0.0, -0.0, 1e-45, np.nan, np.inf, -1.0, 0.5], np.float32)
  add(Case("f32_to_bool", "float -> bool: NaN is true, -0.0 false", [bv], lambda a: a.cast(dtypes.bool).cast(dtypes.int32), lambda a: (a != 0).astype(np.int32)))
  add(Case("i32_to_bool_where", "int -> bool, where on it", [wv], lambda a: a.cast(dtypes.bool).where(a, 7), lambda a: np.where(a != 0, a, 7).astype(np.int32)))

  # -- narrow floats: round-to-nearest-even, overflow to inf, subnormals (PR 11848: float_to_bf16 rounds)
  hv = np.array([1.0, 1.00048828125, 1.00146484375, 2049.0, 2051.0, 65504.0, 65519.0, 65520.0, 1e6, -1e6, 6e-8, 3e-8, 1e-5,
                 2.0**-24, 2.0**-25, 2.0**-25 * 1.5, 0.1, -0.0, np.inf, -np.inf], np.float32)
  add(Case("f32_to_f16_rne", "float -> half rounds to nearest even, overflows to inf, keeps subnormals", [hv], lambda a: a.cast(dtypes.float16).cast(dtypes.float32),
           lambda a: a.astype(np.float16).astype(np.float32)))
  h16 = np.array([1.0, 2049.0, 0.1, 65504.0, -3.5, 6e-8, 1e-3, 300.0], np.float16)
  # on these operands rounding each op to half and rounding once (emulated half, see f16_add_mul_chain) agree
  add(Case("f16_arith_rounding", "half a*b+b rounds to nearest even, overflows to inf, keeps a subnormal result", [h16, h16[::-1].copy()],
           lambda a, b: a * b + b,
           lambda a, b: ((a.astype(np.float32) * b.astype(np.float32)).astype(np.float16).astype(np.float32) + b.astype(np.float32)).astype(np.float16)))
  r3 = np.random.default_rng(1).uniform(-4, 4, (3, 256)).astype(np.float16)
  # on PoCL (no cl_khr_fp16) half arithmetic is evaluated in float and rounded to half at the store: C's excess
  # precision (docs/DIVERGENCES.md, emulated narrow floats); native half would round the sum first
  add(Case("f16_add_mul_chain", "half (a+b)*c on emulated half: evaluated in float, rounded once at the store (no contraction applies)",
           [r3[0], r3[1], r3[2]], lambda a, b, c: (a + b) * c,
           lambda a, b, c: ((a.astype(np.float32) + b.astype(np.float32)) * c.astype(np.float32)).astype(np.float16)))
  bvals = np.array([1.0, 1.00390625, 1.005859375, 1.0078125 + 2.0**-9, 3.140625, 0.26914087, 1e-8, -1e-8, 3.4e38, -3.39e38, 65536.5,
                    1e-40, -0.0, np.inf, np.nan], np.float32)
  add(Case("f32_to_bf16_rne", "PR 11848: float -> bfloat16 rounds to nearest even (was truncation)", [bvals],
           lambda a: a.cast(dtypes.bfloat16).cast(dtypes.float32), lambda a: bf16(a), tol=1e-30))
  bb = f32_to_bf16_bits(np.array([1.0, 3.0, 1.0078125, -2.5, 100.0, 0.1, 7.0, 1e30], np.float32))
  add(Case("bf16_arith_rounding", "bfloat16 a*b+a rounds each op to bfloat16", [("bf16", bb), ("bf16", bb[::-1].copy())],
           lambda a, b: (a * b + a).cast(dtypes.float32),
           lambda a, b: bf16(bf16(bf16_bits_to_f32(a) * bf16_bits_to_f32(b)) + bf16_bits_to_f32(a)), tol=1e-30))

  # -- float folding that is wrong for inf/NaN/-0.0 (DIVERGENCES 2, 3)
  sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e38, -3.5, 1e-45], np.float32)
  add(Case("f32_x_minus_x", "x - x is NaN for inf/NaN (not 0)", [sp], lambda a: a - a, lambda a: a - a, tol=1e-30, kind="finite"))
  add(Case("f32_x_div_x", "x / x is NaN for 0, inf, NaN (not 1)", [sp], lambda a: a / a, lambda a: a / a, tol=1e-30, kind="finite"))
  add(Case("f32_x_times_0", "x * 0 is NaN for inf/NaN, -0.0 for negatives", [sp], lambda a: a * 0, lambda a: a * np.float32(0), kind="finite"))
  add(Case("f32_x_eq_x", "x == x is false for NaN; x != x true", [sp], lambda a: (a == a).cast(dtypes.int32) * 2 + (a != a).cast(dtypes.int32),
           lambda a: (a == a).astype(np.int32) * 2 + (a != a).astype(np.int32)))
  add(Case("f32_x_lt_x", "x < x, x <= x (NaN: both false)", [sp], lambda a: (a < a).cast(dtypes.int32) * 2 + (a <= a).cast(dtypes.int32),
           lambda a: (a < a).astype(np.int32) * 2 + (a <= a).astype(np.int32), kind="finite"))
  add(Case("f32_isnan_isinf", "isnan/isinf", [sp], lambda a: a.isnan().cast(dtypes.int32) * 2 + a.isinf().cast(dtypes.int32),
           lambda a: np.isnan(a).astype(np.int32) * 2 + np.isinf(a).astype(np.int32)))
  add(Case("f32_neg_zero", "-x of +0.0 is -0.0; x + 0 of -0.0 is +0.0 (bit-exact)", [sp[:4]], lambda a: (-a) * 1, lambda a: -a))
  add(Case("f32_add_zero_negzero", "-0.0 + 0.0 = +0.0: x + 0 must not fold to x for -0.0", [sp[:4]], lambda a: a + 0.0, lambda a: a + np.float32(0.0), kind="finite"))
  # tinygrad's renderer writes x+(y+z) as x+y+z, which C groups as (x+y)+z (DIVERGENCES R5)
  gx = np.array([1e20, 1.0, 3e-8, -2.0, 1e30, 0.1], np.float32)
  gy = np.array([-1e20, 1e8, 1.0, 2.0, 1e30, 0.2], np.float32)
  gz = np.array([1.0, -1e8, -1.0, 0.5, 1e-30, 0.3], np.float32)
  add(Case("f32_add_grouping", "x + (y + z): C groups x+y+z as (x+y)+z (renderer, strip_parens)", [gx, gy, gz],
           lambda a, b, c: a + (b + c), lambda a, b, c: a + (b + c)))
  add(Case("f32_mul_grouping", "x * (y * z): (x*y)*z overflows where x*(y*z) does not", [gx, gy, gz],
           lambda a, b, c: a * (b * c), lambda a, b, c: a * (b * c)))
  add(Case("f32_plus1_gt", "(x + 1) > x is false for large x (float)", [np.array([1e8, 1.0, -1e8, 16777216.0, np.inf], np.float32)],
           lambda a: (a + 1) > a, lambda a: (a + np.float32(1)) > a))
  add(Case("f32_abs_sign", "abs(-0.0) = 0.0; sign(-0.0), sign(NaN)", [sp], lambda a: a.abs() + a.sign() * 2,
           lambda a: np.abs(a) + np.where(np.isnan(a), np.nan, np.sign(a)).astype(np.float32) * 2, tol=1e-30))
  add(Case("f32_reciprocal_zero", "1/+0 = inf, 1/-0 = -inf", [sp], lambda a: a.reciprocal(), lambda a: np.float32(1) / a, tol=1e-6))
  add(Case("f32_transcendental_edges", "sqrt(-1)=NaN, exp(+-inf)", [sp], lambda a: a.sqrt() + a.exp(),
           lambda a: np.sqrt(a) + np.exp(a), tol=1e-5))
  add(Case("f32_log_edges", "log(0)=-inf, log(-1)=NaN, log(inf)=inf", [sp], lambda a: a.log(), lambda a: np.log(a), tol=1e-5))
  add(Case("f32_sigmoid_inf", "sigmoid at +-inf is 1/0", [sp[[0, 2, 3, 4, 5, 7, 8]]], lambda a: a.sigmoid(), lambda a: (1 / (1 + np.exp(-a.astype(np.float64)))).astype(np.float32), tol=1e-6))
  mask = np.array([[0, -np.inf, 1, 2], [-np.inf, -np.inf, -np.inf, -np.inf], [3, 3, -np.inf, 3]], np.float32)
  add(Case("f32_softmax_masked", "softmax of masked rows (a row of -inf is NaN)", [mask], lambda a: a.softmax(axis=1),
           lambda a: (np.exp(a - a.max(axis=1, keepdims=True)) / np.exp(a - a.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)).astype(np.float32), tol=1e-6))
  add(Case("f32_where_nan", "where(x > 0, x, 0) of NaN is 0 (comparison false)", [sp], lambda a: (a > 0).where(a, 0.0), lambda a: np.where(a > 0, a, np.float32(0)), tol=1e-30))

  # -- NaN through max/min/clip/relu: IEEE/numpy propagate NaN; tinygrad's MAX is a<b?b:a (issue 862, PR 15828)
  na = np.array([np.nan, 1.0, np.nan, 0.0, -np.inf, np.inf, -1.0, 5.0], np.float32)
  nb = np.array([1.0, np.nan, np.nan, -0.0, np.nan, 2.0, -1.0, np.inf], np.float32)
  add(Case("nan_maximum", "issue 862 / PR 15828: maximum(NaN, x)", [na, nb], lambda a, b: a.maximum(b), np.maximum, tol=1e-30, kind="ieee"))
  add(Case("nan_minimum", "minimum(NaN, x)", [na, nb], lambda a, b: a.minimum(b), np.minimum, tol=1e-30, kind="ieee"))
  add(Case("nan_relu", "relu(NaN) (mxnet 11115, tvm 19579 class)", [na], lambda a: a.relu(), lambda a: np.maximum(a, 0), tol=1e-30, kind="ieee"))
  add(Case("nan_clip", "clip(NaN, -1, 1)", [na], lambda a: a.clip(-1, 1), lambda a: np.clip(a, -1, 1), tol=1e-30, kind="ieee"))
  nm = np.array([[1, np.nan, 3, 2], [np.nan, np.nan, np.nan, np.nan], [-np.inf, -np.inf, -np.inf, -np.inf], [5, 4, np.nan, 9]], np.float32)
  add(Case("nan_max_reduce", "issue 862: Tensor([1, nan]).max()", [nm], lambda a: a.max(axis=1), lambda a: a.max(axis=1), tol=1e-30, kind="ieee"))
  add(Case("neg_inf_max_reduce", "max of an all -inf row is -inf (identity)", [nm[2:3].copy()], lambda a: a.max(axis=1), lambda a: a.max(axis=1), tol=1e-30))

  # -- 64-bit integers, narrow reductions with padding, narrow float reductions under opts
  u64 = ints(np.uint64, 0, 1, 9, 10, 2**63, 2**63 + 7, 2**64 - 1, 2**64 - 10, 12345678901234567890, 2**32, 2**32 + 9, 999)
  add(Case("u64_divmod_const", "uint64 // 10 and % 10 of values >= 2^63 (fast idiv declines)", [u64], lambda a: a // 10 + a % 10,
           lambda a: a // np.uint64(10) + a % np.uint64(10)))
  ia = ints(np.int64, 2**62, -2**62, 2**63 - 1, -2**63, 3037000500, -3037000500, 7, -1, 0, 1, 2**40, 12345678912345)
  add(Case("i64_mul_wrap", "int64 products that overflow wrap", [ia], lambda a: a * 3 + a * a, lambda a: wrap(a.astype(object) * 3 + a.astype(object) * a.astype(object), np.int64)))
  add(Case("i64_min_reduce", "int64 min reduce at INT64_MIN", [ia.reshape(3, 4)], lambda a: a.min(axis=1), lambda a: a.min(axis=1)))
  am = np.array([[1, 3, 3, 2], [-1, -1, -1, -1], [0, -0.0, 5, 5], [2, 9, 1, 9]], np.float32)
  add(Case("f32_argmax_ties", "argmax returns the first of equal maxima", [am], lambda a: a.argmax(axis=1), lambda a: a.argmax(axis=1).astype(np.int32)))
  i8m = np.random.default_rng(11).integers(-128, -100, (7, 13)).astype(np.int8)
  add(Case("i8_max_padded", "int8 max reduce of values near -128 with PADTO (identity is -128, not 0)", [i8m], lambda a: a.max(axis=1), lambda a: a.max(axis=1),
           opts=[[Opt(OptOps.PADTO, 1, 16)], [Opt(OptOps.PADTO, 0, 8), Opt(OptOps.UPCAST, 0, 8)], [Opt(OptOps.GROUP, 0, 13)]]))
  bl = np.zeros((6, 11), bool)
  bl[1, 10] = bl[3, 0] = True
  bl[4] = True
  add(Case("bool_any_all_padded", "any/all (bool MAX) with PADTO", [bl], lambda a: a.any(axis=1).cast(dtypes.int32) * 2 + a.all(axis=1).cast(dtypes.int32),
           lambda a: a.any(axis=1).astype(np.int32) * 2 + a.all(axis=1).astype(np.int32), opts=[[Opt(OptOps.PADTO, 1, 16)], [Opt(OptOps.UNROLL, 0, 11)]]))
  hs = np.random.default_rng(5).uniform(-4, 4, (8, 64)).astype(np.float16)
  add(Case("f16_sum_opts", "half sum accumulated in float, under UPCAST/UNROLL/GROUP", [hs], lambda a: a.sum(axis=1),
           lambda a: a.astype(np.float32).sum(axis=1).astype(np.float16), tol=2e-3,
           opts=[[Opt(OptOps.UNROLL, 0, 4), Opt(OptOps.UPCAST, 0, 4)], [Opt(OptOps.GROUPTOP, 0, 16)], [Opt(OptOps.UPCAST, 0, 8)]]))
  bs = f32_to_bf16_bits(np.random.default_rng(6).uniform(-4, 4, (8, 32)).astype(np.float32))
  add(Case("bf16_sum_opts", "bfloat16 sum accumulated in float, under UPCAST/UNROLL/GROUP", [("bf16", bs)], lambda a: a.sum(axis=1).cast(dtypes.float32),
           lambda a: bf16(bf16_bits_to_f32(a).reshape(8, 32).sum(axis=1)), tol=1e-2,
           opts=[[Opt(OptOps.UNROLL, 0, 4), Opt(OptOps.UPCAST, 0, 4)], [Opt(OptOps.GROUPTOP, 0, 16)]]))
  add(Case("i32_to_f16", "int -> half rounds to nearest even, overflows to inf", [ints(np.int32, 2049, 2051, 65504, 65520, 70000, -70000, 1, -3, 4097, 0)],
           lambda a: a.cast(dtypes.float16), lambda a: a.astype(np.float16)))
  add(Case("i32_f16_i32", "int -> half -> int: rounded to half, then truncated (the round trip must not fold)", [ints(np.int32, 2049, 2051, 65504, -3, 4097, -4099, 0, 1)],
           lambda a: a.cast(dtypes.float16).cast(dtypes.int32), lambda a: a.astype(np.float16).astype(np.int32)))
  add(Case("f32_bf16_i32", "float -> bfloat16 -> int: rounded to bfloat16, then truncated", [np.array([257.0, 259.0, -257.5, 1.9921875, 65535.0, 100.7], np.float32)],
           lambda a: a.cast(dtypes.bfloat16).cast(dtypes.int32), lambda a: bf16(a).astype(np.int32)))
  add(Case("f16_to_bool", "half -> bool: -0.0 false, subnormal true", [np.array([0.0, -0.0, 6e-8, 1.0, -65504, np.inf], np.float16)],
           lambda a: a.cast(dtypes.bool).cast(dtypes.int32), lambda a: (a != 0).astype(np.int32)))
  fb = np.array([1.5, -0.0, np.inf, -2.0, 1e-45, 3.4e38], np.float32)
  add(Case("f32_bitcast_i32", "Tensor.bitcast float <-> int keeps the bits (PR 11853 class)", [fb],
           lambda a: a.bitcast(dtypes.int32) + (a.bitcast(dtypes.uint32) >> 31).cast(dtypes.int32),
           lambda a: wrap(a.view(np.int32).astype(np.int64) + (a.view(np.uint32) >> 31).astype(np.int64), np.int32)))
  hb = np.array([0x3C00, 0x8000, 0x7C00, 0x0001, 0x7BFF, 0xC000, 0x3555], np.uint16)
  add(Case("u16_bitcast_f16", "uint16 bits as half (emulated half holds bits: subnormal 0x0001 is 2^-24)", [hb],
           lambda a: a.bitcast(dtypes.float16).cast(dtypes.float32), lambda a: a.view(np.float16).astype(np.float32)))
  bi = ints(np.int32, -3, -1, 0, 1, 2, 5)
  add(Case("bool_cast_ne_const", "PR 15874: bool.cast() != const (2 is never a bool's value)", [bi],
           lambda a: ((a > 0).cast(dtypes.int32) != 2).cast(dtypes.int32) * 4 + ((a > 0).cast(dtypes.int32) != 1).cast(dtypes.int32) * 2
           + ((a > 0).cast(dtypes.int32) != 0).cast(dtypes.int32),
           lambda a: np.full(a.shape, 4, np.int32) + (a <= 0).astype(np.int32) * 2 + (a > 0).astype(np.int32)))
  add(Case("i32_clip_extremes", "clip of ints at INT_MIN/INT_MAX", [big], lambda a: a.clip(-5, 70000), lambda a: np.clip(a, -5, 70000).astype(np.int32)))
  u16 = ints(np.uint16, 65535, 0, 1, 32768, 40000, 7)
  add(Case("u16_wrap", "uint16 65535 + 1 wraps; 0 - 1 is 65535", [u16], lambda a: (a + 1) * 2 - a, lambda a: ((a + np.uint16(1)) * np.uint16(2) - a).astype(np.uint16)))
  return out


# ---- tinygrad's test/test_dtype_alu.py, with our operand choice: every binary op on every dtype ----
def alu_cases():
  """test_dtype_alu.py (TestDTypeALU) draws one operand pair per hypothesis example and disallows subnormals;
  here each (dtype, op) is one kernel over 64 pairs: the extremes, their neighbours, random values, and for
  floats subnormals, signed zeros and infinities too (NaN is left to the named cases above)."""
  import operator
  rng = np.random.default_rng(17)
  out = []
  int_ops = [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul), ("lt", operator.lt), ("eq", operator.eq),
             ("xor", operator.xor), ("and", operator.and_), ("or", operator.or_)]
  for dt, nd in ((dtypes.int8, np.int8), (dtypes.int16, np.int16), (dtypes.int32, np.int32), (dtypes.int64, np.int64),
                 (dtypes.uint8, np.uint8), (dtypes.uint16, np.uint16), (dtypes.uint32, np.uint32), (dtypes.uint64, np.uint64)):
    info = np.iinfo(nd)
    special = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, -1 if info.min < 0 else 3, info.max // 2, info.max // 2 + 1]
    vals = lambda: np.concatenate([np.array(special, dtype=nd), rng.integers(info.min, info.max, 54, dtype=nd, endpoint=True)])  # noqa: E731
    a, b = vals(), vals()
    b[:10] = b[:10][::-1]
    for oname, op in int_ops:
      out.append(Case(f"alu_{np.dtype(nd).name}_{oname}", "test_dtype_alu.py TestDTypeALU (integer ops; wrap-around)", [a, b],
                      lambda x, y, op=op: op(x, y), lambda x, y, op=op: op(x, y)))
  out.append(Case("alu_bool_add_mul", "test_dtype_alu.py test_bool", [np.array([0, 1, 0, 1] * 4, bool), np.array([0, 0, 1, 1] * 4, bool)],
                  lambda x, y: (x + y).cast(dtypes.int32) * 2 + (x * y).cast(dtypes.int32), lambda x, y: (x | y).astype(np.int32) * 2 + (x & y).astype(np.int32)))
  # Tensor division is x * reciprocal(y) in tinygrad's AST (two roundings, and 0 * inf = NaN for 0/0)
  fops = [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul), ("div", None), ("lt", operator.lt), ("eq", operator.eq)]
  for dt, nd, rnd in ((dtypes.float32, np.float32, lambda v: v.astype(np.float32)), (dtypes.float16, np.float16, lambda v: v.astype(np.float16)),
                      (dtypes.bfloat16, None, bf16), (dtypes.float64, np.float64, lambda v: v.astype(np.float64))):
    fin = np.finfo(nd) if nd is not None else None
    special = np.array([0.0, -0.0, 1.0, -1.0, 3.0, np.inf, -np.inf, 0.5, 1e-3, -7.25], np.float32)
    if dt == dtypes.bfloat16: special = np.concatenate([special, np.array([3.3e38, 1e-39, 9.2e-41, -3e38], np.float32)])
    else: special = np.concatenate([special.astype(nd), np.array([fin.max, fin.tiny, fin.smallest_subnormal, -fin.max], nd)])
    def draw():
      v = np.concatenate([special, (rng.standard_normal(64 - len(special)) * 10.0 ** rng.integers(-6, 6, 64 - len(special))).astype(special.dtype)])
      return rnd(v)
    with np.errstate(over="ignore"): a, b = draw(), draw()
    b[:14] = b[:14][::-1]
    for oname, op in fops:
      top = operator.truediv if op is None else op
      # tinygrad's division is x * reciprocal(y): bfloat16 rounds the reciprocal (its ops are decomposed one by
      # one); emulated half evaluates the pair in float and rounds once (docs/DIVERGENCES.md, emulated narrow
      # floats: C's excess precision), as float32 and float64 do natively
      if op is None: op = (lambda x, y, r=rnd: x * r(np.float32(1) / y)) if dt == dtypes.bfloat16 else (lambda x, y: x * (1 / y))
      if dt == dtypes.bfloat16:
        ins = [("bf16", f32_to_bf16_bits(a)), ("bf16", f32_to_bf16_bits(b))]
        want = (lambda x, y, op=op, oname=oname: bf16(op(bf16_bits_to_f32(x), bf16_bits_to_f32(y))) if oname not in ("lt", "eq") else op(bf16_bits_to_f32(x), bf16_bits_to_f32(y)))
        prog = (lambda x, y, op=top: op(x, y))
      else:
        ins = [a, b]
        want = (lambda x, y, op=op, oname=oname: op(x.astype(np.promote_types(x.dtype, np.float32)), y.astype(np.promote_types(x.dtype, np.float32))).astype(x.dtype)
                if oname not in ("lt", "eq") else op(x, y))
        prog = (lambda x, y, op=top: op(x, y))
      # half division: float's 1/y may be 2.5 ulp off in OpenCL C, so one half ulp of slack (an overflow is not)
      tol = 1e-3 if (dt == dtypes.float16 and oname == "div") else 0.0
      out.append(Case(f"alu_{'bfloat16' if nd is None else np.dtype(nd).name}_{oname}", "test_dtype_alu.py TestDTypeALU (float ops; subnormals and infinities too)", ins, prog, want, tol=tol))
  return out


# ---- kernels written as UOp ASTs: what the Tensor front end would normalise away ----
class AstCase:
  """A hand-written kernel AST (C division and modulo, shift counts past the width, constant folding)
  over explicit inputs in slots 1.., one output in slot 0; expected values from numpy."""
  def __init__(self, name, src, inputs, out_dtype, build, want, opts=()):
    self.name, self.src, self.inputs, self.out_dtype, self.build, self.want, self.opts = name, src, inputs, out_dtype, build, want, list(opts)
    self.kind, self.tol = "strict", 0.0


def c_div(a, b):  # C: truncating division, remainder with the numerator's sign
  q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64)) * np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64))
  return q, a.astype(np.int64) - q * b.astype(np.int64)


def ast_cases():
  from tinygrad.uop.ops import UOp, Ops, KernelInfo, AxisType
  out = []
  add = out.append
  e = edge_i32()
  e = e[e != -2**31]  # INT_MIN / -1 is undefined
  n = len(e)

  def elementwise(dt_out, dts, f, opts=None):
    def build():
      o = UOp.placeholder((n,), dt_out, 0)
      ins = [UOp.placeholder((n,), d, i + 1) for i, d in enumerate(dts)]
      g = UOp.range(n, 0, AxisType.WEAK)
      return o[g].store(f(*[x[g] for x in ins])).end(g).sink(arg=KernelInfo(name="kb", opts_to_apply=opts))
    return build

  i32 = dtypes.int32
  for d in (3, -3, 8, -8, 1, 7):
    add(AstCase(f"ast_cdiv_const{d}", "C division by a constant (fast idiv, shifts for powers of two: negative numerators)",
                [e], i32, elementwise(i32, [i32], lambda a, d=d: a.alu(Ops.CDIV, a.const_like(d))), lambda a, d=d: c_div(a, np.full_like(a, d))[0].astype(np.int32)))
    add(AstCase(f"ast_cmod_const{d}", "C remainder by a constant (sign of the numerator)", [e], i32,
                elementwise(i32, [i32], lambda a, d=d: a.alu(Ops.CMOD, a.const_like(d))), lambda a, d=d: c_div(a, np.full_like(a, d))[1].astype(np.int32)))
  b = np.array(([3, -3, 7, -7, 1, 2, -2, 5, -5, 9, -9, 4, -4, 6] * 3)[:n], np.int32)
  add(AstCase("ast_cdiv_cmod_tensor", "C division and remainder, operands of unknown sign", [e, b], i32,
              elementwise(i32, [i32, i32], lambda a, b: a.alu(Ops.CDIV, b) * 1000 + a.alu(Ops.CMOD, b)),
              lambda a, b: wrap(c_div(a, b)[0] * 1000 + c_div(a, b)[1], np.int32)))
  u = np.array([0, 1, 7, 2**31, 2**32 - 1, 3000000000, 2**31 - 1, 12345, 99, 5, 6, 4000000000][:n] + [1] * max(0, n - 12), np.uint32)
  add(AstCase("ast_udiv_const", "unsigned C division and remainder by constants, values >= 2^31", [u], dtypes.uint32,
              elementwise(dtypes.uint32, [dtypes.uint32], lambda a: a.alu(Ops.CDIV, a.const_like(7)) + a.alu(Ops.CMOD, a.const_like(8)) * 3),
              lambda a: (a // np.uint32(7) + (a % np.uint32(8)) * np.uint32(3)).astype(np.uint32)))
  add(AstCase("ast_shift_past_width", "OpenCL C takes shift counts modulo the width: x << 33 is x << 1, x >> 35 is x >> 3", [e], i32,
              elementwise(i32, [i32], lambda a: a.alu(Ops.SHL, a.const_like(33)) ^ a.alu(Ops.SHR, a.const_like(35))),
              lambda a: wrap(a.astype(np.int64) << 1, np.int32) ^ (a >> 3)))
  cnt = np.array([(i * 7) % 64 for i in range(n)], np.int32)
  add(AstCase("ast_shift_loaded_count", "shift by loaded counts in [0, 64): modulo 32", [e, cnt], i32,
              elementwise(i32, [i32, i32], lambda a, c: a.alu(Ops.SHL, c) + a.alu(Ops.SHR, c)),
              lambda a, c: wrap(wrap(a.astype(np.int64) << (c % 32), np.int32).astype(np.int64) + (a >> (c % 32)), np.int32)))
  i64 = np.array([-2**62, -2**40 - 3, -7, -1, 0, 1, 7, 2**40 + 5, 2**62 + 3, 2**63 - 1, -2**63 + 1, 10**15], np.int64)
  add(AstCase("ast_i64_shr40", "int64 >> 40 is not int32 >> 8 (DIVERGENCES 9)", [i64], dtypes.int64,
              lambda: _one_in(UOp, Ops, KernelInfo, AxisType, dtypes.int64, dtypes.int64, len(i64), lambda a: a.alu(Ops.SHR, a.const_like(40)) + a.alu(Ops.CDIV, a.const_like(-3))),
              lambda a: (a >> 40) + c_div(a, np.full_like(a, -3))[0]))
  add(AstCase("ast_const_fold_c", "constants folded with C semantics: -7/2, -7%2, 1<<33 (int32), 0u-1, (char)100+100", [e], i32,
              elementwise(i32, [i32], lambda a: a + a.const_like(-7).alu(Ops.CDIV, a.const_like(2)) * 10 + a.const_like(-7).alu(Ops.CMOD, a.const_like(2)) * 100
                          + a.const_like(1).alu(Ops.SHL, a.const_like(33)) * 1000
                          + (UOp.const(100, dtypes.int8) + UOp.const(100, dtypes.int8)).cast(i32) * 10000
                          + (UOp.const(0, dtypes.uint32) - UOp.const(1, dtypes.uint32)).alu(Ops.SHR, UOp.const(28, dtypes.uint32)).cast(i32) * 100000),
              lambda a: wrap(a.astype(np.int64) + (-3) * 10 + (-1) * 100 + 2 * 1000 + (-56) * 10000 + 15 * 100000, np.int32)))
  # constant BITCASTs folded at the constant's width (PR 3743: a const bitcast was folded as a value cast;
  # PRs 11853, 17385, 17601: fold_bitcast's types and truncation of its input)
  add(AstCase("ast_bitcast_consts", "PR 3743, PR 17601: BITCAST of constants folds to the bits, at the source's width", [e], i32,
              elementwise(i32, [i32], lambda a: a + UOp.const(1.5, dtypes.float32).bitcast(i32)
                          + UOp.const(200, dtypes.uint8).bitcast(dtypes.int8).cast(i32) * 3
                          + UOp.const(-1, dtypes.int16).bitcast(dtypes.uint16).cast(i32) * 5
                          + UOp.const(-2.0, dtypes.float16).bitcast(dtypes.uint16).cast(i32) * 7),
              lambda a: wrap(a.astype(np.int64) + 0x3FC00000 + (-56) * 3 + 65535 * 5 + 0xC000 * 7, np.int32)))
  r = np.random.default_rng(3).integers(-1000, 1000, 16 * 24).astype(np.int32)

  def reduce_build(opts):
    def build():
      o = UOp.placeholder((16,), i32, 0)
      x = UOp.placeholder((16 * 24,), i32, 1)
      g, rr = UOp.range(16, 0, AxisType.WEAK), UOp.range(24, 1, AxisType.REDUCE)
      v = x[g * 24 + rr].alu(Ops.CDIV, UOp.const(-7, i32)) + x[g * 24 + rr].alu(Ops.CMOD, UOp.const(8, i32))
      return o[g].store(v.reduce(rr, arg=Ops.ADD)).end(g).sink(arg=KernelInfo(name="kb", opts_to_apply=opts))
    return build
  add(AstCase("ast_reduce_cdiv", "a sum of C quotients and remainders of negative values, unrolled, upcast and grouped", [r], i32,
              reduce_build(None), lambda x: (c_div(x, np.full_like(x, -7))[0] + c_div(x, np.full_like(x, 8))[1]).reshape(16, 24).sum(axis=1).astype(np.int32),
              opts=[[Opt(OptOps.UNROLL, 0, 4), Opt(OptOps.UPCAST, 0, 4)], [Opt(OptOps.GROUP, 0, 8)], [Opt(OptOps.GROUPTOP, 0, 6), Opt(OptOps.LOCAL, 0, 4)],
                    [Opt(OptOps.PADTO, 1, 32), Opt(OptOps.UNROLL, 0, 8)]]))

  # index arithmetic whose intermediate values pass 2^31 (issue 3961, PR 6987: int64 indexing): the index dtype
  # must widen where the bounds need it, and the symbolic rules must not fold through a wrap
  src = np.arange(97, dtype=np.int32) * 3 - 100
  idx_exprs = {
    "ast_index_mul_2p20_mod": (lambda i: (i * 1048576 + 12345) % 97, lambda i: (i * 1048576 + 12345) % 97),
    "ast_index_neg_big_div": (lambda i: ((i - 2048) * 3000000) // 1000000 % 97, lambda i: ((i - 2048) * 3000000) // 1000000 % 97),
    "ast_index_square_mod": (lambda i: (i * i * 65537) % 97, lambda i: (i * i * 65537) % 97),
  }
  for name, (f, fn) in idx_exprs.items():
    def build(f=f, opts=None):
      o, x = UOp.placeholder((4096,), i32, 0), UOp.placeholder((97,), i32, 1)
      g = UOp.range(4096, 0, AxisType.WEAK)
      return o[g].store(x[f(g)]).end(g).sink(arg=KernelInfo(name="kb", opts_to_apply=opts))
    I = np.arange(4096, dtype=object)
    add(AstCase(name, "issue 3961 / PR 6987: index math past 2^31 (weakint is exact; lowering must pick int64)", [src], i32, build,
                lambda x, fn=fn: x[np.array([int(v) for v in fn(I)], dtype=np.int64)],
                opts=[[Opt(OptOps.UPCAST, 0, 4)], [Opt(OptOps.LOCAL, 0, 16), Opt(OptOps.UPCAST, 0, 8)]]))
  return out


def _one_in(UOp, Ops, KernelInfo, AxisType, dt_out, dt_in, n, f):
  o, a = UOp.placeholder((n,), dt_out, 0), UOp.placeholder((n,), dt_in, 1)
  g = UOp.range(n, 0, AxisType.WEAK)
  return o[g].store(f(a[g])).end(g).sink(arg=KernelInfo(name="kb", opts_to_apply=None))


def run_tinygrad_source(k: dict, inputs, out_bytes: int) -> bytes:
  """tinygrad's OpenCL C for the kernel, run with pyopencl on the case's inputs: its output slot's bytes."""
  import pyopencl as cl
  ctx = cl.Context(devices=[cl.get_platforms()[0].get_devices()[0]])
  q = cl.CommandQueue(ctx)
  knl = getattr(cl.Program(ctx, k["source"]).build(), k["function_name"])
  prog = k["program"]
  bufs = []
  for arg in prog["kernel_args"]:
    raw = b"\xff" * arg["nbytes"] if arg["slot"] == 0 else np.ascontiguousarray(inputs[arg["slot"] - 1]).tobytes()
    bufs.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=bytearray(raw)))
  lsz = prog["local_size"]
  knl(q, [g * (lsz[d] if lsz else 1) for d, g in enumerate(prog["global_size"])], lsz, *bufs)
  got = bytearray(out_bytes)
  cl.enqueue_copy(q, got, bufs[[arg["slot"] for arg in prog["kernel_args"]].index(0)])
  q.finish()
  return bytes(got)


def opt_variants(base: str, named, sink, ren, n_variants: int, rng: random.Random):
  """(name, opts) of a result kernel's variants: the opt lists the case names, then random BEAM-action ones."""
  return [(f"{base}.o{i}", o) for i, o in enumerate(named)] + \
         [(f"{base}.v{i}", o) for i, o in enumerate(md.random_variants(sink, ren, n_variants, rng, EXTEND))]


def export_variant(k: dict, ast, ren, vname: str, opts):
  """The kernel file of one variant (k itself when opts is None), or None where tinygrad cannot apply the opts."""
  try:
    v = k if opts is None else oracle.export(vname, oracle.with_opts(ast, opts), ren, "pocl", {})
  except Exception as ex:
    print(f"SKIP {vname}: tinygrad cannot apply {md.opt_str(opts)}: {type(ex).__name__}: {str(ex)[:120]}")
    return None
  v["name"] = v["spec"] = vname
  v["opts_requested"] = None if opts is None else [oracle.enc(o) for o in opts]
  return v


def write_ast_case(c: AstCase, out_dir: str, n_variants: int, rng: random.Random):
  ast = c.build()
  ren = Device["CL"].renderer
  with np.errstate(all="ignore"):
    want = np.ascontiguousarray(np.asarray(c.want(*c.inputs)).astype(np_dtype(c.out_dtype))).tobytes()
  with md.SinkAtOpts() as at:
    k = oracle.export("", ast, ren, "pocl", {})
  tg_right = run_tinygrad_source(k, c.inputs, len(want)) == want
  if not tg_right and VERBOSE:
    got = run_tinygrad_source(k, c.inputs, len(want))
    print(f"  tinygrad {c.name}: got {np.frombuffer(got, np_dtype(c.out_dtype)).tolist()}\n  numpy    {c.name}: want {np.frombuffer(want, np_dtype(c.out_dtype)).tolist()}")
  files = []
  for vname, opts in [(f"kb.{c.name}", None)] + opt_variants(f"kb.{c.name}", c.opts, at.sink, ren, n_variants, rng):
    v = export_variant(k, ast, ren, vname, opts)
    if v is None: continue
    run = {"before": {0: None, **{i + 1: np.ascontiguousarray(x).tobytes() for i, x in enumerate(c.inputs)}}, "after": {0: want}}
    why = md.attach(v, run, out_dir, 0)
    if why: print(f"SKIP {vname}: {why}"); continue
    v["execution"]["expected_from"] = "numpy (tools/known_bugs_differential.py), not tinygrad"
    json.dump(v, open(os.path.join(out_dir, vname + ".json"), "w"))
    files.append((vname, True, opts))
  return files, tg_right, ""


# ---- running ----
def np_dtype(dt): return NPD[dt]


def realize_inputs(c: Case):
  ts = []
  for v in c.inputs:
    if isinstance(v, tuple) and v[0] == "bf16":  # bfloat16 bits: build from the bits, realised (not a captured kernel)
      ts.append(Tensor(v[1]).bitcast(dtypes.bfloat16).contiguous().realize())
    else:
      ts.append(Tensor(v).realize())
  return ts


def expected(c: Case, dt):
  with np.errstate(all="ignore"):
    args = [v[1] if isinstance(v, tuple) else v for v in c.inputs]
    w = np.asarray(c.want(*args))
  if dt == dtypes.bfloat16: return f32_to_bf16_bits(w.astype(np.float32)).tobytes()
  return np.ascontiguousarray(w.astype(np_dtype(dt))).tobytes()


def as_floats(b: bytes, dt) -> np.ndarray:
  if dt == dtypes.bfloat16: return bf16_bits_to_f32(np.frombuffer(b, np.uint16)).astype(np.float64)
  return np.frombuffer(b, np_dtype(dt)).astype(np.float64)


def got_bits(b: bytes, dt) -> np.ndarray: return np.frombuffer(b, {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize])


def has_nan(b: bytes, dt) -> bool: return dtypes.is_float(dt) and bool(np.isnan(as_floats(b, dt)).any())


def close(got: bytes, want: bytes, dt, tol: float) -> bool:
  if not dtypes.is_float(dt): return got == want
  if tol == 0:  # bit-exact, but any NaN matches any NaN
    g, w = as_floats(got, dt), as_floats(want, dt)
    return bool(((np.isnan(g) & np.isnan(w)) | (got_bits(got, dt) == got_bits(want, dt))).all())
  if dt == dtypes.bfloat16: g, w = bf16_bits_to_f32(np.frombuffer(got, np.uint16)), bf16_bits_to_f32(np.frombuffer(want, np.uint16))
  else: g, w = np.frombuffer(got, np_dtype(dt)).astype(np.float64), np.frombuffer(want, np_dtype(dt)).astype(np.float64)
  with np.errstate(all="ignore"):
    ok = (np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= tol + tol * np.abs(w))
  return bool(ok.all())


EXTEND = False  # every second random variant extends tinygrad's heuristic opts (tools/model_differential.py)


def write_case(c: Case, cap, out_dir: str, n_variants: int, rng: random.Random):
  """Runs the case under the capture; returns (files, tinygrad_right, note)."""
  ts = realize_inputs(c)
  cap.runs.clear()
  cap.model = c.name
  realize.to_program_cache.clear()
  res = c.prog(*ts)
  res = res.contiguous().realize() if isinstance(res, Tensor) else res
  n_runs = len(cap.runs)  # 0 for a graph of constants: tinygrad runs it when it is read
  host = res.cast(dtypes.float32).numpy() if res.dtype == dtypes.bfloat16 else res.numpy()
  if n_runs: del cap.runs[n_runs:]  # the read-back's own cast kernel (bfloat16) is not the case's
  if not cap.runs: return [], None, "no kernel: tinygrad computed it without a kernel"
  dt = res.dtype
  want = expected(c, dt)
  if dt == dtypes.bfloat16: got_tg = f32_to_bf16_bits(host).tobytes()
  else: got_tg = np.ascontiguousarray(host.astype(np_dtype(dt))).tobytes()
  if len(got_tg) != len(want): return [], None, f"shape mismatch: tinygrad {len(got_tg)} bytes, numpy {len(want)}"
  tg_right = close(got_tg, want, dt, c.tol)
  if not tg_right and VERBOSE:
    view = (lambda b: bf16_bits_to_f32(np.frombuffer(b, np.uint16))) if dt == dtypes.bfloat16 else (lambda b: np.frombuffer(b, np_dtype(dt)))
    print(f"  tinygrad {c.name}: got {view(got_tg).tolist()}\n  numpy    {c.name}: want {view(want).tolist()}")
  ren = Device["CL"].renderer
  files = []
  last = len(cap.runs) - 1
  for ri, run in enumerate(cap.runs):
    ast = cap.ast_of.get(run["prg"].key)
    if ast is None: continue
    final = ri == last
    with md.SinkAtOpts() as at:
      k = oracle.export("", ast, ren, "pocl", {})
    base = f"kb.{c.name}.k{ri}" if len(cap.runs) > 1 else f"kb.{c.name}"
    variants = [(base, None)] + (opt_variants(base, c.opts, at.sink, ren, n_variants, rng) if final else [])
    for vname, opts in variants:
      v = export_variant(k, ast, ren, vname, opts)
      if v is None: continue
      run2 = dict(run)
      if final:  # numpy's values replace what tinygrad wrote, in the output slot (the one the result lives in)
        outs = v["program"]["outs"]
        if len(outs) != 1 or len(run["after"][outs[0]]) != len(want):
          print(f"SKIP {vname}: the result kernel's output buffer is not the result")
          continue
        run2["after"] = {outs[0]: want}
      why = md.attach(v, run2, out_dir, c.tol)
      if why: print(f"SKIP {vname}: {why}"); continue
      if final:
        v["execution"]["expected_from"] = "numpy (tools/known_bugs_differential.py), not tinygrad"
        if dtypes.is_float(dt) and c.tol == 0 and not has_nan(want, dt):  # bit-exact: -0.0 matters
          v["data"]["output_tolerance"] = {"rtol": 0, "atol": 0}
        elif dtypes.is_float(dt) and c.tol == 0:  # a NaN's sign and payload are not defined (IEEE 754 6.3): NaN matches NaN
          v["data"]["output_tolerance"] = {"rtol": 1e-30, "atol": 1e-30}
        elif dtypes.is_float(dt):
          v["data"]["output_tolerance"] = {"rtol": c.tol, "atol": c.tol}
      json.dump(v, open(os.path.join(out_dir, vname + ".json"), "w"))
      files.append((vname, final, opts))
  return files, tg_right, ""


def run_uopcg(exe: str, path: str) -> dict:
  """uopcg run from the file's post-opts graph (tinygrad's front stages and opts) and from its AST (uopcg's own)."""
  res = {}
  for how, key in (([], "post_opts"), (["--from-ast"], "from_ast")):
    r = subprocess.run([exe, "run", path, *how], capture_output=True, text=True)
    res[key] = r.returncode == 0
    if r.returncode != 0: res[key + "_msg"] = ((r.stdout + r.stderr).strip().splitlines() or ["(no output)"])[0][:200]
  return res


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--out", default="/tmp/uopcg_known")
  ap.add_argument("--uopcg", default=os.path.join(oracle.ROOT, "build", "uopcg"))
  ap.add_argument("--only", nargs="*")
  ap.add_argument("--variants", type=int, default=3, help="random BEAM-action opt variants per result kernel")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--list", action="store_true")
  ap.add_argument("--extend-heuristic", action="store_true", help="every second random variant extends tinygrad's heuristic opts")
  ap.add_argument("--verbose", action="store_true", help="print tinygrad's and numpy's values where tinygrad is wrong")
  a = ap.parse_args()
  global VERBOSE, EXTEND
  VERBOSE, EXTEND = a.verbose, a.extend_heuristic
  cs = cases() + ast_cases() + alu_cases()
  if a.list:
    for c in cs: print(f"{c.name:32s} {c.kind:6s} {c.src}")
    return 0
  if Device.DEFAULT != "CL": sys.exit(f"needs tinygrad's CL device (PoCL), not {Device.DEFAULT}")
  os.makedirs(a.out, exist_ok=True)
  rng = random.Random(a.seed)
  summary = {"cases": 0, "files": 0, "uopcg_wrong_files": 0, "uopcg_wrong_cases": [], "tinygrad_wrong_cases": [], "tinygrad_front_folds": [],
             "ieee_reported": [], "finite_reported": []}
  cap = md.Capture()
  for c in cs:
    if a.only and not any(fnmatch.fnmatch(c.name, pat) for pat in a.only): continue
    with cap:
      try:
        if isinstance(c, AstCase): files, tg_right, note = write_ast_case(c, a.out, a.variants, rng)
        else: files, tg_right, note = write_case(c, cap, a.out, a.variants, rng)
      except Exception as ex:
        print(f"SKIP {c.name}: tinygrad: {type(ex).__name__}: {str(ex)[:200]}")
        continue
    if note: print(f"SKIP {c.name}: {note}"); continue
    summary["cases"] += 1
    bad, front = [], []
    for vname, final, opts in files:
      r = run_uopcg(a.uopcg, os.path.join(a.out, vname + ".json"))
      summary["files"] += 1
      if r["post_opts"] and r["from_ast"]: continue
      label = f"{vname}{'' if opts is None else ' [' + md.opt_str(opts) + ']'}"
      if r["from_ast"] and not tg_right:  # tinygrad's post-opts graph already holds its wrong fold
        front.append(vname)
        print(f"  TGFRONT {label}: {r['post_opts_msg']}")
        continue
      bad.append(vname)
      print(f"  WRONG {label}: " + "; ".join(f"{k}: {r[k + '_msg']}" for k in ("post_opts", "from_ast") if not r[k]))
    tag = "ok  " if not bad else {"ieee": "IEEE", "finite": "FINI"}.get(c.kind, "FAIL")
    print(f"{tag} {c.name} ({len(files)} files){'' if tg_right else '  [tinygrad wrong]'}", flush=True)
    if not tg_right: summary["tinygrad_wrong_cases"].append(c.name)
    if front: summary["tinygrad_front_folds"].append(c.name)
    if bad:
      if c.kind in ("ieee", "finite"): summary[c.kind + "_reported"].append(c.name)
      else:
        summary["uopcg_wrong_cases"].append(c.name)
        summary["uopcg_wrong_files"] += len(bad)
  json.dump(summary, open(os.path.join(a.out, "summary.json"), "w"), indent=1)
  print(json.dumps(summary, indent=1))
  return 1 if summary["uopcg_wrong_cases"] else 0


if __name__ == "__main__":
  sys.exit(main())
