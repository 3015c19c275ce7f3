#!/usr/bin/env python3
"""Kernels captured from small models by tools/model_differential.py (a conv net with depthwise convs
and batchnorm, a transformer block with a KV cache, sinusoidal embeddings, an MLP's Adam step, single
tensor ops (bfloat16 arithmetic, uint8 image normalisation, a cumulative sum through local memory),
random tensor programs (the fuzz set), and random opt variants of some), each with the buffers tinygrad's run read and wrote;
the `kb.*` files (tools/known_bugs_differential.py) record numpy's values instead, where tinygrad's kernel is wrong;
the `tt.*` files (tools/tinygrad_tests_differential.py) are kernels of tinygrad's own tests, hand-written ones among
them, with numpy's values. Every file must compile to the OpenCL C tinygrad ran (`uopcg compile`; a few differ on purpose, listed below) and
compute the recorded outputs on the device (`uopcg run`, from the post-opts graph and from the AST).
Files of the native-half renderer kind (`*.fp16.json`, tools/fp16_differential.py) and kernels with a
variable (`program.vars`: a scalar argument, which kernel files carry no value for) are checked as text
only, from the post-opts graph and from the AST.
No tinygrad needed.
usage: run_models.py UOPCG_EXE MODELS_DIR"""
import glob
import json
import os
import shlex
import subprocess
import sys

exe, models = sys.argv[1], sys.argv[2]
wrapper = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))

# kernels whose OpenCL C differs from tinygrad's on purpose (docs/DIVERGENCES.md; docs/model-differential.md
# classifies every difference): their outputs are still checked
SOURCE_DIFFERS = {
    "mlp_adam.116.E_4_2": "Tensor.rand's threefry: independent statements in another order (symbolic divergence 1)",
    "embedding.098.r_4_2_16_2_8": "float constant chains are not reassociated (symbolic divergence 3)",
    "mlp_adam.136.E_8_4": "a float product keeps its right operand's grouping, val0*(val4.x*(1/...)) (renderer divergence R5)",
    "embedding.102.E_3_4_8_2_2": "signed index arithmetic that may overflow wraps explicitly (renderer divergence R2)",
    "fuzz.079.p031.r_13_13.v1": "13 minus a loaded int max, which may be INT_MIN, wraps explicitly (renderer divergence R2)",
    "ops.022.r_5_16_10": "float -> bfloat16 conversions are IEEE round-to-nearest-even with NaN kept (emulated narrow floats)",
    "odd.039.r_77_13.v2": "PADTO under an UPCAST and UNROLL: Invalid reduce lanes are the MAX identity (pipeline divergence P2); "
                          "tinygrad gates the accumulator by all lanes' masks at once and drops valid lanes",
    "astfz.g2.s29.011.v1": "PADTO under an UNROLL of a MAX reduce: Invalid reduce lanes are the MAX identity (pipeline "
                           "divergence P2), where tinygrad gates the accumulator's update by all lanes' masks at once",
    "astfz.g2.s30.026.v0": "a padded ADD over an unrolled MAX: the padded elements are the ADD's identity (pipeline "
                           "divergence P2) where tinygrad gates the accumulator's update",
    "astfz.g2.s31.018.v0": "a short result converted back before its char cast (renderer divergence R1); a long "
                           "difference that may overflow wraps explicitly (R2)",
    "astfz.g2.s47.017": "EMULATED_DTYPES=long: uopcg's 32-bit word arithmetic is its own (pipeline divergence P13); the "
                        "outputs are tinygrad's native program's (its emulated x % -5 differs for negative x)",
    "astfz.g2.s39.059.v1": "the padded short sum accumulates its identity ungated (pipeline divergence P2) and converts "
                           "back to short (renderer divergence R1); from the AST, two GROUP sums share their ranges and "
                           "each ends its own (pipeline divergence P21)",
    "astfz.reg_upcast.reg_upcast": "a long sum that may overflow wraps explicitly (renderer divergence R2)",
    "astfz.cdiv_bounds.cdiv_bounds": "the padded accumulator is stored ungated with a selected value; an int sum that may "
                                     "overflow wraps explicitly (renderer divergence R2)",
    "bounds.or_floordiv.or_bounds_floordiv": "the padded accumulator is stored ungated with a selected value; an int sum "
                                              "that may overflow wraps explicitly (renderer divergence R2)",
    "bounds.xor_cmpne.xor_bounds_cmpne": "the padded accumulator is stored ungated with a selected value; an int sum "
                                         "that may overflow wraps explicitly (renderer divergence R2)",
    "uops3.reg_stack_set": "the REG stack pointer's int increments and the pop index wrap explicitly (renderer divergence R2)",
    "pc.transformer.019": "PCONTIG=2: the accumulators of the reduces over a LOCAL stage are initialised before their "
                          "loops (tinygrad 0.14 resets them inside, so its variance is the last element's square; numpy's values)",
    "pc.transformer.017.v1": "PCONTIG=2 with GROUPTOP and LOCAL on a fused transformer block: the accumulators of the "
                             "reduces over a LOCAL stage are initialised before their loops (tinygrad 0.14 resets them "
                             "inside; the outputs are its program's with the resets moved out), and a stage of a GROUP "
                             "reduce's result is not indexed by the group range (P23 reads data dependences)",
    "pc.misc.112.v0": "PCONTIG=2, UNROLL of the sum over a LOCAL stage: the accumulators of the reduces over a stage are "
                      "initialised before their loops (tinygrad 0.14 resets them inside; the outputs are its program's "
                      "without opts with the resets moved out)",
    "lf.s4.058": "an in-place Hillis-Steele scan in LOCAL memory: each step's store waits for the step's reads of other "
                 "work-items' elements (pipeline divergence P16; tinygrad's program races, numpy's values)",
    # tools/known_bugs_differential.py: expected outputs from numpy, where tinygrad's own kernel is wrong
    "kb.i32_gt_plus1": "x < x+1 at INT_MAX: the sum wraps explicitly (renderer divergence R2; tinygrad's C lets clang fold it to true)",
    "kb.f32_add_grouping": "x+(y+z) keeps its parentheses (renderer divergence R5; tinygrad writes x+y+z, C computes (x+y)+z)",
    "kb.f32_mul_grouping": "x*(y*z) keeps its parentheses (renderer divergence R5; tinygrad's (x*y)*z overflows to inf)",
    "kb.u8_sub_lt": "uint8 (a-b) < a: the difference is converted back to uchar (renderer divergence R1)",
    "kb.f16_arith_rounding": "emulated half keeps subnormal results (emulated narrow floats; tinygrad flushes them to zero)",
    "kb.f32_to_f16_rne": "float -> half -> float is kept, rounding to half (pipeline divergence P6; tinygrad drops the round trip)",
    "kb.i32_f16_i32": "int -> half -> int: the CAST to emulated half rounds to a half (emulated narrow floats; tinygrad keeps 2049)",
    "kb.f16_to_bool": "emulated half reads a subnormal with its value, so it is true (emulated narrow floats; tinygrad reads 0)",
    # tools/tinygrad_tests_differential.py: kernels of tinygrad's own tests, numpy's values
    "tt.qcom_local_reduce_in_loop": "a reduce over a LOCAL range goes through LOCAL memory (pipeline divergence P15; tinygrad 0.14 "
                                    "reduces each work-item's own element)",
    "tt.dumb_beam_mnist": "int sums that may overflow wrap explicitly, the uchar sum is narrowed (renderer divergences R2, R1)",
    "tt.llm_q4k_gemv": "the reduce over the LOCAL group range goes through LOCAL memory (P15), half bits read with vload_half "
                       "(emulated narrow floats)",
    "tt.llm_ssmab_two_local_reduces": "each reduce over the LOCAL range gets its own LOCAL buffer (P15)",
    "tt.llm_q4k_gemv.v0": "GROUP:0:4,UNROLL:1:0: the GROUP reduce inside the reduce over the LOCAL range, both through LOCAL memory (P15)",
    # tinygrad_oracle.py uop_kernels_v3, numpy's values
    "uops4.reduce_in_reg_loop": "the REDUCE's accumulator skips the slot of the hand-written REG accumulator (pipeline "
                                 "divergence P17; tinygrad's program shares one register and computes other values)",
    "uops4.mixed_stack": "the STACK's constant lane is broadcast to the upcast lanes (pipeline divergence P18; tinygrad's "
                         "program adds the lane number to it)",
    "uops3.local_reuse": "a barrier between the reads of the LOCAL tile and its overwrite (pipeline divergence P16; tinygrad's "
                         "program races)",
}

# kernels whose recorded outputs are those of tinygrad's program for opts that change the kernel's values
# (docs/DIVERGENCES.md): from the AST, uopcg's program with the opts must compute what it computes without
# them, so both runs report the same difference from the recording
OPTS_WRONG_IN_TINYGRAD = {
    "astfz.reg_if.reg_if": "UPCAST lanes of a hand-written REG accumulator share it in tinygrad's program; "
                           "uopcg gives each lane its own (opts divergence O4)",
}

files = sorted(glob.glob(os.path.join(models, "*.json")))
failures = []
for path in files:
    name = os.path.basename(path)[:-len(".json")]
    k = json.load(open(path))
    c = subprocess.run([*wrapper, exe, "compile", path], capture_output=True, text=True, timeout=300)
    if c.returncode != 0:
        failures.append(f"{name}: compile failed: {c.stderr.strip()}")
    elif name not in SOURCE_DIFFERS and c.stdout.rstrip("\n") != k["source"]:
        failures.append(f"{name}: the source differs from the one tinygrad ran")
    if k.get("renderer_kind") == "fp16" or k.get("program", {}).get("vars"):
        # native half (tools/fp16_differential.py): PoCL cannot build it, so it is checked as text, as the
        # corpus's native-half kernel is; from the AST too. A kernel with a variable (a scalar argument, which
        # kernel files carry no value for) likewise
        f = subprocess.run([*wrapper, exe, "compile", path, "--from-ast"], capture_output=True, text=True, timeout=300)
        if f.returncode != 0 or f.stdout.rstrip("\n") != k["source"]:
            failures.append(f"{name}: compile --from-ast: the source differs from tinygrad's {f.stderr.strip()}")
        print(("FAIL " if failures and failures[-1].startswith(name + ":") else "ok   ") + name + " (text)")
        continue
    # the recorded post-opts graph, and the AST through uopcg's own front stages and apply_opts
    for how in ([], ["--from-ast"]):
        r = subprocess.run([*wrapper, exe, "run", path, *how], capture_output=True, text=True, timeout=300)
        if how and name in OPTS_WRONG_IN_TINYGRAD:
            plain = subprocess.run([*wrapper, exe, "run", path, *how, "--opts", "none"], capture_output=True, text=True, timeout=300)
            if r.stdout != plain.stdout or "differ" not in r.stdout:
                failures.append(f"{name}: run --from-ast computes other outputs than without opts: {r.stdout.strip()} / {plain.stdout.strip()}")
        elif r.returncode != 0 or not r.stdout.startswith("PASS"):
            failures.append(f"{name}: run {' '.join(how)}: {(r.stdout + r.stderr).strip()}")
    print(("FAIL " if failures and failures[-1].startswith(name + ":") else "ok   ") + name)

if len(files) < 6:
    failures.append(f"{models}: {len(files)} kernel files, expected the committed set (6 or more)")
for f in failures:
    print("FAIL " + f)
print(f"{len(files)} model kernels, {len(failures)} failures")
sys.exit(1 if failures else 0)
