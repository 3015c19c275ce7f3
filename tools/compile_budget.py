#!/usr/bin/env python3
"""Compile-time budgets: what a user pays to compile uopcg, per translation unit.

Each budgeted file is compiled alone (-c) with every compiler at every optimisation level (default:
g++ and clang++, -O0 and -O2), measured with /usr/bin/time: CPU seconds (user + system, the steady
figure on a shared machine) and the compiler's peak RSS. Each measurement prints one line

    budget NAME COMPILER FLAGS cpu_s S rss_mb M limit_cpu_s L limit_mb X ok|over

and a markdown table follows (docs/embedded.md keeps the last one measured). Before them, with the same
compiler and flags, it compiles tools/compile_reference.cpp (ordinary standard-library C++, no uopcg
header) before and after that compiler and level's files, and prints the mean

    reference COMPILER FLAGS cpu_s S rss_mb M (before S1, after S2)

and the table gives each row's CPU time as a multiple of it: the seconds move with the machine and
its load, the ratio much less, so ratios are what compare runs on different machines. The budgets:

    user            tests/linked/user_a.cpp: builds a kernel and compiles it through the
                    declarations-only <uopcg/compile.hpp>                        <= 2 s,  <= 300 MB
    implementation  tests/linked/impl.cpp: #define UOPCG_IMPLEMENTATION, the whole pipeline and
                    every rule set                                               <= 20 s, <= 1 GB
    demo            examples/demo.cpp: the demo as one translation unit (header-only pipeline and the
                    OpenCL launcher)                                             <= 30 s, <= 1 GB

The limits are stated for g++ -O2 (the user's usual release build) and applied to every row.
Flags: -std=c++20 FLAGS -Wall -Wextra (the meson build's, less -g and -Werror: a warning must not stop
a measurement), include/ on the include path, Boost and OpenCL from the system include path.

usage: compile_budget.py [--cxx CXX]... [--flags=FLAGS]... [--repeat N] [--only NAME]... [--enforce]
                         [--output FILE] [--survey]
  --cxx       compilers (default: g++ and clang++, those found)
  --flags     optimisation flags, one level per --flags (default: -O0 and -O2; write --flags=-O2, or --flags="-O2 -g")
  --repeat    compile each file N times and keep the least CPU time and memory (default 1)
  --only      measure only the budgets (or, with --survey, the files) whose name contains NAME
  --enforce   exit 1 if any measurement is over its budget
  --output    also write the markdown table to FILE
  --survey    instead of the budgets, every tests/**/*.cpp and examples/single_header_budget.cpp (no
              limits; the table shows where compile time goes across the test suite)
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.dont_write_bytecode = True

REPO = Path(__file__).resolve().parent.parent
SKIP_DIRS = ("tests/pattern/compile_fail/",)
REFERENCE = REPO / "tools" / "compile_reference.cpp"


@dataclass
class Unit:
    name: str
    path: Path
    args: list[str] = field(default_factory=list)  # include paths and unit-specific flags
    limit_cpu: float | None = None
    limit_mb: float | None = None


@dataclass
class Result:
    seconds: float | None = None  # wall
    cpu: float | None = None  # user + system
    mb: float | None = None
    error: str = ""


def budgets() -> list[Unit]:
    inc = ["-I", str(REPO / "include")]
    return [
        Unit("user", REPO / "tests/linked/user_a.cpp", inc, 2.0, 300.0),
        Unit("implementation", REPO / "tests/linked/impl.cpp", inc, 20.0, 1024.0),
        Unit("demo", REPO / "examples/demo.cpp", inc, 30.0, 1024.0),
    ]


def survey(single_include: Path) -> list[Unit]:
    inc = ["-I", str(REPO / "include")]
    out: list[Unit] = []
    ex = REPO / "examples/single_header_budget.cpp"
    if ex.is_file():
        out.append(Unit("examples/single_header_budget.cpp", ex, ["-I", str(single_include)]))
    for p in sorted((REPO / "tests").rglob("*.cpp")):
        rel = p.relative_to(REPO).as_posix()
        if any(rel.startswith(d) for d in SKIP_DIRS):
            continue
        if rel.startswith("tests/single_header/"):
            args = ["-I", str(single_include)]
        elif rel.startswith("tests/noexcept/"):
            args = ["-I", str(single_include), "-DUOPCG_EXPECT_SINGLE_HEADER", "-fno-exceptions", "-fno-rtti"]
        else:
            args = inc + ["-I", str(REPO / "tests")]
        out.append(Unit(rel, p, args))
    return out


def measure(cxx: list[str], flags: list[str], unit: Unit, repeat: int, tmp: Path) -> Result:
    best = Result()
    timing = tmp / "time.txt"
    for _ in range(repeat):
        cmd = ["/usr/bin/time", "-f", "%e %U %S %M", "-o", str(timing)] + cxx + \
              ["-std=c++20"] + flags + ["-Wall", "-Wextra"] + unit.args + ["-c", str(unit.path), "-o", str(tmp / "out.o")]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
        if r.returncode != 0:
            lines = [l for l in (r.stderr or r.stdout).splitlines() if "error" in l] or (r.stderr or "").splitlines()
            return Result(error=(lines[0] if lines else f"status {r.returncode}")[:200])
        last = timing.read_text().strip().splitlines()[-1].split()
        s, cpu, mb = float(last[0]), float(last[1]) + float(last[2]), int(last[3]) / 1024.0
        best = Result(s if best.seconds is None else min(s, best.seconds),
                      cpu if best.cpu is None else min(cpu, best.cpu),
                      mb if best.mb is None else min(mb, best.mb))
    return best


def compiler_label(cxx: str) -> str:
    """`g++` -> `g++-12`, `clang++` -> `clang++-14`: the command and its major version."""
    base = Path(shlex.split(cxx)[0]).name
    if re.search(r"-\d+$", base):
        return base
    v = subprocess.run(shlex.split(cxx) + ["-dumpversion"], capture_output=True, text=True).stdout.strip()
    major = v.split(".")[0] if v else ""
    return f"{base}-{major}" if major.isdigit() else base


def verdict(u: Unit, r: Result) -> str:
    if r.error:
        return "FAIL"
    if u.limit_cpu is None:
        return "-"
    return "ok" if r.cpu <= u.limit_cpu and r.mb <= u.limit_mb else "over"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cxx", action="append", default=None)
    ap.add_argument("--flags", action="append", default=None)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--enforce", action="store_true")
    ap.add_argument("--output", type=Path)
    ap.add_argument("--survey", action="store_true")
    args = ap.parse_args(argv)

    if not Path("/usr/bin/time").is_file():
        print("compile_budget.py: /usr/bin/time is missing (Debian package `time`)", file=sys.stderr)
        return 2
    compilers = args.cxx or [c for c in ("g++", "clang++") if shutil.which(c)]
    if not compilers:
        print("compile_budget.py: no compiler found", file=sys.stderr)
        return 2
    levels = args.flags or ["-O0", "-O2"]
    labels = {c: compiler_label(c) for c in compilers}

    with tempfile.TemporaryDirectory(prefix="uopcg-budget-") as d:
        tmp = Path(d)
        single = REPO / "single_include"
        if args.survey and not (single / "uopcg" / "uopcg.hpp").is_file():
            single = tmp / "single_include"
            subprocess.run([sys.executable, str(REPO / "tools" / "amalgamate.py"),
                            "--output-dir", str(single / "uopcg")], check=True, capture_output=True)
        todo = survey(single) if args.survey else budgets()
        if args.only:
            todo = [u for u in todo if any(s in u.name for s in args.only)]
        missing = [u for u in todo if not u.path.is_file()]
        for u in missing:
            print(f"compile_budget.py: {u.path.relative_to(REPO)} is missing", file=sys.stderr)
        todo = [u for u in todo if u.path.is_file()]

        print(f"compile budget: {len(todo)} files x {len(compilers)} compilers x {len(levels)} levels, flags: "
              f"-std=c++20 LEVEL -Wall -Wextra -c, sequential, best of {args.repeat}", flush=True)
        for c in compilers:
            v = subprocess.run(shlex.split(c) + ["--version"], capture_output=True, text=True)
            print(f"  {labels[c]}: {(v.stdout.splitlines() or ['?'])[0]}")
        try:
            print(f"  {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start "
                  "(other work inflates CPU time too, less than wall time)")
        except OSError:
            pass

        rows: list[tuple[Unit, str, str, Result]] = []
        t0 = time.monotonic()
        reference: dict[tuple[str, str], Result] = {}
        # One compiler and level at a time, the reference compiled before and after its files: the
        # ratio divides by their mean, so a load that changes during the run moves both alike.
        for c in compilers:
            for lv in levels:
                fl = ",".join(shlex.split(lv))
                ref_unit = Unit("reference", REFERENCE)
                before = measure(shlex.split(c), shlex.split(lv), ref_unit, max(1, args.repeat), tmp)
                for u in todo:
                    r = measure(shlex.split(c), shlex.split(lv), u, max(1, args.repeat), tmp)
                    rows.append((u, labels[c], lv, r))
                    if r.error:
                        print(f"budget {u.name} {labels[c]} {fl} FAIL ({r.error})", flush=True)
                        continue
                    lim = (f"limit_cpu_s {u.limit_cpu:g} limit_mb {u.limit_mb:g} {verdict(u, r)}"
                           if u.limit_cpu is not None else "")
                    print(f"budget {u.name} {labels[c]} {fl} cpu_s {r.cpu:.2f} rss_mb {r.mb:.0f} {lim}".rstrip(),
                          flush=True)
                after = measure(shlex.split(c), shlex.split(lv), ref_unit, max(1, args.repeat), tmp)
                ref = before if after.error else after if before.error else \
                    Result(None, (before.cpu + after.cpu) / 2, max(before.mb, after.mb))
                reference[(labels[c], lv)] = ref
                print(f"reference {labels[c]} {fl} " + (f"FAIL ({ref.error})" if ref.error else
                      f"cpu_s {ref.cpu:.2f} rss_mb {ref.mb:.0f} (before {before.cpu or 0:.2f}, after {after.cpu or 0:.2f})"),
                      flush=True)
        order = {u.name: i for i, u in enumerate(todo)}
        rows.sort(key=lambda row: order[row[0].name])  # the table by file, as before
        elapsed = time.monotonic() - t0

    def ratio(lab: str, lv: str, r: Result) -> str:
        ref = reference.get((lab, lv))
        return f"{r.cpu / ref.cpu:.1f}" if ref and not ref.error and ref.cpu else "?"

    lines = ["| file | compiler | flags | CPU s | x reference | peak MB | budget | |",
             "|---|---|---|---:|---:|---:|---|---|"]
    for (lab, lv), r in reference.items():
        if not r.error:
            lines.append(f"| reference (`tools/compile_reference.cpp`) | {lab} | {lv} | {r.cpu:.1f} | 1.0 | {r.mb:.0f} | | |")
    for u, lab, lv, r in rows:
        label = u.name if args.survey else f"{u.name} (`{u.path.relative_to(REPO).as_posix()}`)"
        if r.error:
            lines.append(f"| {label} | {lab} | {lv} | FAIL | | FAIL | | |")
            continue
        lim = f"{u.limit_cpu:g} s, {u.limit_mb:g} MB" if u.limit_cpu is not None else ""
        lines.append(f"| {label} | {lab} | {lv} | {r.cpu:.1f} | {ratio(lab, lv, r)} | {r.mb:.0f} | {lim} | {verdict(u, r)} |")
    table = "\n".join(lines)
    print()
    print(table)
    failed = [row for row in rows if row[3].error]
    over = [row for row in rows if verdict(row[0], row[3]) == "over"]
    print(f"\nmeasured in {elapsed:.0f} s; {len(over)} over budget, {len(failed)} compile failure(s)")
    if args.output:
        args.output.write_text(table + "\n")
    if failed or missing:
        return 1
    if args.enforce and over:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
