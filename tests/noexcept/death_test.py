#!/usr/bin/env python3
"""Death checks of tests/noexcept/noexcept.cpp (built with -fno-exceptions -fno-rtti): runs the
program's API checks, then each death case (`EXE --die CASE`, listed by `EXE --list` with the texts
its stderr must contain) in its own process, and expects every case to end in SIGABRT with its
texts on stderr. In a cross build the program runs through meson's exe wrapper (qemu), which meson
passes to tests in MESON_EXE_WRAPPER.

usage: death_test.py EXE
"""

from __future__ import annotations

import os
import resource
import shlex
import signal
import subprocess
import sys


def no_core() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # an expected abort leaves no core file


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    wrapper = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
    exe = wrapper + [argv[0]]

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(exe + list(args), capture_output=True, text=True, errors="replace",
                              preexec_fn=no_core, timeout=120)

    failures = 0
    api = run()
    sys.stdout.write(api.stdout)
    if api.returncode != 0:
        print(f"FAIL the API checks exited with status {api.returncode}:\n{api.stderr}")
        failures += 1

    listed = run("--list")
    cases = [l.split("\t") for l in listed.stdout.splitlines() if l.strip()]
    if listed.returncode != 0 or not cases:
        print(f"FAIL {argv[0]} --list: status {listed.returncode}, {len(cases)} cases\n{listed.stderr}")
        return 1
    for fields in cases:
        name, texts = fields[0], [t for t in fields[1:] if t]
        r = run("--die", name)
        # SIGABRT: a negative status from subprocess, or 128+6 when a shell or wrapper reports it
        aborted = r.returncode in (-signal.SIGABRT, 128 + signal.SIGABRT)
        missing = [t for t in texts if t not in r.stderr]
        ok = aborted and not missing
        print(f"death case {name:<18} {'ok' if ok else 'FAILED'}")
        if not aborted:
            print(f"  expected SIGABRT, got status {r.returncode}")
        for t in missing:
            print(f"  stderr lacks {t!r}")
        if not ok:
            print("  stderr was:\n    " + "\n    ".join(r.stderr.splitlines()))
            failures += 1
    if failures:
        print(f"{failures} failure(s)")
        return 1
    print(f"noexcept: API checks and {len(cases)} death cases passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
