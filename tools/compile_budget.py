#!/usr/bin/env python3
"""Compile-time budget: wall time and peak memory of compiling each test file and the single-header
example, one translation unit at a time (-c), on each compiler, beside a baseline file that only
includes <boost/hana.hpp>. Prints a markdown table (scripts/compile-budget.sh runs this).

Measured with /usr/bin/time (wall seconds, CPU seconds = user + system, peak RSS of the compiler;
on a loaded machine the CPU seconds are the steadier figure). The files:
  - baseline: `#include <boost/hana.hpp>` and an empty main (what any Hana user pays);
  - examples/single_header_budget.cpp against single_include/ alone (the goal: <= 10 s and <= 1 GB
    on g++ -O2); when single_include/uopcg/uopcg.hpp is missing it is generated into a temporary
    directory with tools/amalgamate.py;
  - every tests/**/*.cpp, except the must-not-compile files (tests/pattern/compile_fail/), with the
    include paths of the meson build (include/, tests/ for the KGSL fakes, single_include/ for
    tests/single_header and tests/noexcept, -fno-exceptions -fno-rtti for tests/noexcept).
Flags: -std=c++20 -O2 -Wall -Wextra (the meson build's, less -g and -Werror: a warning must not
stop a measurement), Boost from the system include path. Runs sequentially.

usage: compile_budget.py [--cxx CXX]... [--flags "FLAGS"] [--repeat N] [--only SUBSTRING]...
                         [--enforce] [--output FILE]
  --cxx       compilers (default: g++ and clang++, those found)
  --flags     replaces -O2 (e.g. "-O0", "-O2 -g")
  --repeat    compile each file N times and keep the fastest (default 1)
  --only      measure only the files whose path contains SUBSTRING (the baseline always)
  --enforce   exit 1 if the single-header example misses the goal on the first g++ compiler
  --output    also write the table (markdown) to FILE
"""

from __future__ import annotations

import argparse
import os
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
BUDGET_EXAMPLE = "examples/single_header_budget.cpp"
GOAL_SECONDS = 10.0
GOAL_MB = 1024.0
SKIP_DIRS = ("tests/pattern/compile_fail/",)


@dataclass
class Unit:
    label: str
    path: Path
    args: list[str] = field(default_factory=list)  # include paths and unit-specific flags


@dataclass
class Result:
    seconds: float | None = None  # wall
    cpu: float | None = None  # user + system
    mb: float | None = None
    error: str = ""


def units(single_include: Path, only: list[str]) -> list[Unit]:
    inc = ["-I", str(REPO / "include")]
    out: list[Unit] = []
    ex = REPO / BUDGET_EXAMPLE
    if ex.is_file():
        out.append(Unit(BUDGET_EXAMPLE, ex, ["-I", str(single_include)]))
    else:
        print(f"compile_budget.py: warning: {BUDGET_EXAMPLE} is missing", file=sys.stderr)
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
    if only:
        out = [u for u in out if any(s in u.label for s in only)]
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
        if best.seconds is None or s < best.seconds:
            best = Result(s, cpu if best.cpu is None else min(cpu, best.cpu), mb if best.mb is None else min(mb, best.mb))
        else:
            best.cpu = min(best.cpu, cpu)
            best.mb = min(best.mb, mb)
    return best


def fmt(r: Result | None) -> tuple[str, str, str]:
    if r is None:
        return ("-", "-", "-")
    if r.error:
        return ("FAIL", "FAIL", "FAIL")
    return (f"{r.seconds:.1f}", f"{r.cpu:.1f}", f"{r.mb:.0f}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cxx", action="append", default=None)
    ap.add_argument("--flags", default="-O2")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--enforce", action="store_true")
    ap.add_argument("--output", type=Path)
    args = ap.parse_args(argv)

    if not Path("/usr/bin/time").is_file():
        print("compile_budget.py: /usr/bin/time is missing (Debian package `time`)", file=sys.stderr)
        return 2
    compilers = args.cxx or [c for c in ("g++", "clang++") if shutil.which(c)]
    if not compilers:
        print("compile_budget.py: no compiler found", file=sys.stderr)
        return 2
    flags = shlex.split(args.flags)

    with tempfile.TemporaryDirectory(prefix="uopcg-budget-") as d:
        tmp = Path(d)
        single = REPO / "single_include"
        generated = ""
        if not (single / "uopcg" / "uopcg.hpp").is_file():
            single = tmp / "single_include"
            subprocess.run([sys.executable, str(REPO / "tools" / "amalgamate.py"),
                            "--output", str(single / "uopcg" / "uopcg.hpp")], check=True, capture_output=True)
            generated = " (single_include/uopcg/uopcg.hpp generated for this run: it is not in the tree)"
        baseline = tmp / "baseline_hana.cpp"
        baseline.write_text("#include <boost/hana.hpp>\nint main() {}\n")
        todo = [Unit("baseline: #include <boost/hana.hpp>", baseline)] + units(single, args.only)

        versions = {}
        for c in compilers:
            v = subprocess.run(shlex.split(c) + ["--version"], capture_output=True, text=True)
            versions[c] = (v.stdout.splitlines() or ["?"])[0]
        print(f"compile budget: {len(todo)} files x {len(compilers)} compilers, flags: -std=c++20 "
              f"{' '.join(flags)} -Wall -Wextra, -c, sequential, best of {args.repeat}{generated}", flush=True)
        for c in compilers:
            print(f"  {c}: {versions[c]}")
        try:
            load = os.getloadavg()[0]
            print(f"  {os.cpu_count()} CPUs, load average {load:.2f} at start (other work skews the figures)")
        except OSError:
            pass

        results: dict[tuple[str, str], Result] = {}
        t0 = time.monotonic()
        for u in todo:
            for c in compilers:
                r = measure(shlex.split(c), flags, u, max(1, args.repeat), tmp)
                results[(u.label, c)] = r
                s, cpu, m = fmt(r)
                note = f"  ({r.error})" if r.error else ""
                print(f"  {c:<10} {u.label:<48} {s:>6} s {cpu:>6} s cpu {m:>6} MB{note}", flush=True)
        elapsed = time.monotonic() - t0

    header = "| file |" + "".join(f" {c} s | {c} cpu s | {c} MB |" for c in compilers)
    rule = "|---|" + "---:|---:|---:|" * len(compilers)
    rows = []
    for u in todo:
        cells = "".join(f" {a} | {b} | {m} |" for a, b, m in (fmt(results.get((u.label, c))) for c in compilers))
        label = f"**{u.label}**" if u.label == BUDGET_EXAMPLE else u.label
        rows.append(f"| {label} |{cells}")
    table = "\n".join([header, rule] + rows)

    verdicts = []
    goal_ok = True
    first_gcc = next((c for c in compilers if "g++" in c and "clang" not in c), None)
    for c in compilers:
        r = results.get((BUDGET_EXAMPLE, c))
        b = results.get((todo[0].label, c))
        if r is None or r.error:
            continue
        over = f", {r.seconds - b.seconds:+.1f} s / {r.mb - b.mb:+.0f} MB over the baseline" if b and not b.error else ""
        if c == first_gcc:
            ok = r.seconds <= GOAL_SECONDS and r.mb <= GOAL_MB
            goal_ok = ok
            verdicts.append(f"{BUDGET_EXAMPLE} on {c} {' '.join(flags)}: {r.seconds:.1f} s ({r.cpu:.1f} s cpu), {r.mb:.0f} MB{over} "
                            f"(goal <= {GOAL_SECONDS:.0f} s, <= {GOAL_MB / 1024:.0f} GB): {'met' if ok else 'MISSED'}")
        else:
            verdicts.append(f"{BUDGET_EXAMPLE} on {c} {' '.join(flags)}: {r.seconds:.1f} s ({r.cpu:.1f} s cpu), {r.mb:.0f} MB{over}")

    print()
    print(table)
    print()
    for v in verdicts:
        print(v)
    failed = [(u, c) for (u, c), r in results.items() if r.error]
    print(f"measured in {elapsed:.0f} s; {len(failed)} compile failure(s)")
    if args.output:
        args.output.write_text(table + "\n\n" + "\n".join(verdicts) + "\n")
    if failed:
        for u, c in failed:
            print(f"FAIL {c} {u}: {results[(u, c)].error}", file=sys.stderr)
        return 1
    if args.enforce and not goal_ok:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
