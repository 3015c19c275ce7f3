#!/usr/bin/env python3
"""Checks of the pay-once build (include/uopcg/compile.hpp + UOPCG_IMPLEMENTATION), run by
tests/linked/meson.build.

    check_linked.py same-output PROGRAM...
        Runs every program (through MESON_EXE_WRAPPER in a cross build): each must exit 0 and all
        must print the same text (the linked programs, with and without LTO, and the header-only one).

    check_linked.py objects NM USERS_LIB IMPL_LIB
        The users' objects define nothing of the pipeline or the emitter (no graph_rewrite,
        run_pipeline or cl_emitter: they paid only for the declarations), nor the out-of-line
        run-time paths of the arena's node creation and the kernel args' records
        (core/detail/out_of_line.hpp); the implementation's define the entry points and those paths.

    check_linked.py link-error SOURCE -- COMPILER FLAGS...
        SOURCE compiles (-c), but a program of it alone does not link, and every undefined reference
        the linker reports names uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile

MARK = "uopcg_define_UOPCG_IMPLEMENTATION_in_one_translation_unit"
# What only the implementation compiles besides the entry points: the run-time paths of the core's
# constexpr graph building and the bodies they run (templates declared extern by compile.hpp, so
# that even g++ -O0, which keeps the callers' constant-evaluation branch, compiles only a call).
OUT_OF_LINE = ("Arena::make_out_of_line<", "Arena::set_up_out_of_line<", "ParamArg::record_out_of_line<",
               "KernelInfo::record_out_of_line<", "Arena::make_node<", "Arena::set_up<", "ParamArg::record<",
               "KernelInfo::record<")


def same_output(programs: list[str]) -> int:
    wrapper = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
    outputs = []
    for p in programs:
        r = subprocess.run(wrapper + [p], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            print(f"FAIL {p}: exit status {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
            return 1
        outputs.append(r.stdout)
    for p, out in zip(programs[1:], outputs[1:]):
        if out != outputs[0]:
            print(f"FAIL {p} prints other text than {programs[0]}:")
            a, b = outputs[0].splitlines(), out.splitlines()
            for i, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    print(f"  line {i + 1}:\n    {programs[0]}: {x}\n    {p}: {y}")
                    break
            else:
                print(f"  {len(a)} lines against {len(b)}")
            return 1
    print(outputs[0], end="")
    print(f"same output ({len(outputs[0].splitlines())} lines) from {len(programs)} programs")
    return 0


def defined_symbols(nm: str, lib: str) -> list[str]:
    r = subprocess.run([nm, "-C", "--defined-only", lib], capture_output=True, text=True, check=True)
    return [line.split(" ", 2)[2] for line in r.stdout.splitlines() if line.count(" ") >= 2 and not line.endswith(":")]


def objects(nm: str, users: str, impl: str) -> int:
    failures = 0
    user_syms = defined_symbols(nm, users)
    pipeline = [s for s in user_syms if "graph_rewrite" in s or "run_pipeline" in s or "cl_emitter" in s]
    if pipeline:
        print(f"FAIL {users} defines {len(pipeline)} pipeline or emitter symbols, e.g.:")
        for s in pipeline[:5]:
            print(f"  {s}")
        failures += 1
    building = [s for s in user_syms if any(w in s for w in OUT_OF_LINE)]
    if building:
        print(f"FAIL {users} compiles the run-time paths of graph building (core/detail/out_of_line.hpp), e.g.:")
        for s in building[:5]:
            print(f"  {s}")
        failures += 1
    impl_syms = defined_symbols(nm, impl)
    for want in (f"{MARK}::compile_opencl(", f"{MARK}::to_program(", f"{MARK}::render_opencl(", "run_pipeline(", "cl_emitter",
                 *OUT_OF_LINE):
        if not any(want in s for s in impl_syms):
            print(f"FAIL {impl} does not define {want}...)")
            failures += 1
    if failures == 0:
        print(f"users: {len(user_syms)} symbols, none of the pipeline, the emitter or graph building's run-time paths; "
              f"implementation: {len(impl_syms)} symbols, the entry points and those paths among them")
    return 1 if failures else 0


def link_error(source: str, compiler: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="uopcg-link-error-") as d:
        obj = os.path.join(d, "user.o")
        c = subprocess.run(compiler + ["-c", source, "-o", obj], capture_output=True, text=True)
        if c.returncode != 0:
            print(f"FAIL {source} does not compile:\n{c.stderr[-3000:]}")
            return 1
        link = subprocess.run(compiler + [obj, "-o", os.path.join(d, "user")], capture_output=True, text=True)
        out = link.stdout + link.stderr
        if link.returncode == 0:
            print(f"FAIL {source} linked without an implementation")
            return 1
        if MARK not in out:
            print(f"FAIL the link error does not name {MARK}:\n{out[-3000:]}")
            return 1
        # ld: "undefined reference to `X'"; lld: "undefined symbol: X"
        silent = [line for line in out.splitlines()
                  if ("undefined reference" in line or "undefined symbol" in line) and MARK not in line]
        if silent:
            print(f"FAIL {len(silent)} undefined references do not name {MARK}, e.g.:")
            print("\n".join(silent[:5]))
            return 1
        print("link error, as expected:")
        print("\n".join(line for line in out.splitlines() if MARK in line))
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "same-output":
        return same_output(argv[1:])
    if len(argv) == 4 and argv[0] == "objects":
        return objects(*argv[1:])
    if len(argv) >= 4 and argv[0] == "link-error" and argv[2] == "--":
        return link_error(argv[1], argv[3:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
