#!/usr/bin/env python3
"""The module graph of include/uopcg/ (docs/modules.md), checked: every #include of a library header
must follow an allowed edge, and is written one way, relative to the including file ("../core/x.hpp").

    core      <- pattern <- symbolic <- codegen -> render -> core
    runtime   -> codegen, render, core
    io        -> codegen, render, core

Top-level headers (uopcg.hpp, compile.hpp, compile_impl.hpp) may include any module.

usage: check_modules.py [--include DIR] [--list]
  --list   print the edges found and exit 0
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ALLOWED = {
    "core": set(),
    "pattern": {"core"},
    "symbolic": {"core", "pattern"},
    "render": {"core"},
    "codegen": {"core", "pattern", "symbolic", "render"},
    "runtime": {"core", "pattern", "symbolic", "render", "codegen"},
    "io": {"core", "pattern", "symbolic", "render", "codegen"},
}
_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent / "include"
    if "--include" in argv:
        root = Path(argv[argv.index("--include") + 1])
    lib = root / "uopcg"
    problems: list[str] = []
    edges: dict[tuple[str, str], str] = {}
    for path in sorted(lib.rglob("*.hpp")):
        rel = path.relative_to(lib)
        module = rel.parts[0] if len(rel.parts) > 1 else None
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = _INCLUDE.match(line)
            if not m:
                continue
            quote, inc = m.groups()
            where = f"{rel}:{no}"
            if inc.startswith("uopcg/"):
                close = '"' if quote == '"' else ">"
                problems.append(f"{where}: #include {quote}{inc}{close}: write library includes relative to the file (\"../core/x.hpp\")")
                target = lib / inc[len("uopcg/"):]
            elif quote == '"':
                target = (path.parent / inc).resolve()
            else:
                continue  # a system or third-party header
            try:
                trel = target.resolve().relative_to(lib.resolve())
            except ValueError:
                problems.append(f"{where}: #include \"{inc}\" leaves include/uopcg/")
                continue
            if not target.exists():
                problems.append(f"{where}: #include \"{inc}\": no such header")
                continue
            tmod = trel.parts[0] if len(trel.parts) > 1 else None
            if module is None or tmod is None or tmod == module:
                continue
            edges.setdefault((module, tmod), where)
            if tmod not in ALLOWED.get(module, set()):
                problems.append(f"{where}: {module}/ includes {tmod}/, which the module graph does not allow (docs/modules.md)")
    if "--list" in argv:
        for (a, b), where in sorted(edges.items()):
            print(f"{a} -> {b}   (first: {where})")
        return 0
    for p in problems:
        print(p)
    print(f"check_modules: {len(problems)} problem(s), {len(edges)} module edge(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
