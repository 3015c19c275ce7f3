#!/usr/bin/env python3
"""Generate single_include/uopcg/uopcg.hpp, the single-header amalgamation of <uopcg/uopcg.hpp>.

Starting from include/uopcg/uopcg.hpp, every `#include <uopcg/...>` and every `#include "..."` that
resolves to a file under include/ is replaced by that file's contents, recursively, each header once
(at its first inclusion, which gives dependency order), with its `#pragma once` dropped. Every other
#include (standard library, Boost, ...) stays an #include line; a repeated one is dropped unless the
first occurrence sat inside a conditional block. The output is deterministic: no dates, no paths
outside the repository.

    python3 tools/amalgamate.py            write single_include/uopcg/uopcg.hpp
    python3 tools/amalgamate.py --check    exit 1 if the committed file is stale
    python3 tools/amalgamate.py --list     print the inlined headers in order
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

UMBRELLA = "uopcg/uopcg.hpp"
OUTPUT = Path("single_include") / "uopcg" / "uopcg.hpp"

_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
_PRAGMA_ONCE = re.compile(r"^\s*#\s*pragma\s+once\b")
_IF = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b")
_ENDIF = re.compile(r"^\s*#\s*endif\b")
_IFNDEF = re.compile(r"^\s*#\s*ifndef\s+(\w+)")
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)")
_DIRECTIVE = re.compile(r"^\s*#")
_RAW_OPEN = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(')


class AmalgamationError(Exception):
    pass


def _line_start_states(text: str) -> list[bool]:
    """For each line, whether it starts in plain code (not inside a comment or raw string).

    A small lexer: // and /* */ comments, "strings", 'chars' (digit separators tolerated) and raw
    strings R"d(...)d", so that text inside them that looks like a directive is left alone."""
    states: list[bool] = []
    mode = "code"  # code | block | raw
    raw_end = ""
    for line in text.split("\n"):
        states.append(mode == "code")
        i, n = 0, len(line)
        while i < n:
            if mode == "block":
                j = line.find("*/", i)
                if j < 0:
                    break
                mode, i = "code", j + 2
            elif mode == "raw":
                j = line.find(raw_end, i)
                if j < 0:
                    break
                mode, i = "code", j + len(raw_end)
            else:
                c = line[i]
                if line.startswith("//", i):
                    break
                if line.startswith("/*", i):
                    mode, i = "block", i + 2
                    continue
                m = _RAW_OPEN.match(line, i)
                if m and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_")):
                    mode, raw_end, i = "raw", ")" + m.group(1) + '"', m.end()
                    continue
                if c == '"' or (c == "'" and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_"))):
                    j = i + 1
                    while j < n and line[j] != c:
                        j += 2 if line[j] == "\\" else 1
                    i = j + 1
                    continue
                i += 1
    return states


class Amalgamator:
    def __init__(self, include_root: Path):
        self.root = include_root.resolve()
        self.order: list[str] = []  # inlined headers, relative to include/, in output order
        self._done: set[Path] = set()
        self._external_seen: set[str] = set()
        self._out: list[str] = []
        self.warnings: list[str] = []

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _resolve(self, kind: str, name: str, current: Path) -> Path | None:
        candidates = []
        if kind == '"':
            candidates += [current.parent / name, self.root / name]
        elif name.startswith("uopcg/"):
            candidates.append(self.root / name)
        for cand in candidates:
            cand = cand.resolve()
            if cand.is_file() and self.root in cand.parents:
                return cand
        if kind == "<" and name.startswith("uopcg/"):
            raise AmalgamationError(f"{self._rel(current)}: #include <{name}> not found under {self.root}")
        return None

    def run(self, umbrella: Path) -> str:
        self._inline(umbrella.resolve())
        return "".join(self._out)

    def _inline(self, path: Path) -> None:
        self._done.add(path)
        rel = self._rel(path)
        self.order.append(rel)
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        if text.endswith("\n"):
            text = text[:-1]
        lines = text.split("\n")
        code = _line_start_states(text)

        # A classic include guard (#ifndef X / #define X as the first two directives) does not make
        # the file's contents conditional.
        directives = [k for k, l in enumerate(lines) if code[k] and _DIRECTIVE.match(l)]
        base = 0
        if len(directives) >= 2:
            m1, m2 = _IFNDEF.match(lines[directives[0]]), _DEFINE.match(lines[directives[1]])
            if m1 and m2 and m1.group(1) == m2.group(1):
                base = 1

        self._out.append(f"// ---- begin {rel} ----\n")
        depth = 0
        for k, line in enumerate(lines):
            if not code[k]:
                self._out.append(line + "\n")
                continue
            if _PRAGMA_ONCE.match(line):
                continue
            if _IF.match(line):
                depth += 1
            elif _ENDIF.match(line):
                depth -= 1
            m = _INCLUDE.match(line)
            if not m:
                self._out.append(line + "\n")
                continue
            kind, name = m.group(1), m.group(2).strip()
            target = self._resolve(kind, name, path)
            if target is not None:
                if target in self._done:
                    continue
                if depth > base:
                    self.warnings.append(f"{rel}:{k + 1}: {name} is included inside a conditional block; "
                                         "inlined there, once")
                self._inline(target)
                continue
            key = f"{kind}{name}"
            if key in self._external_seen:
                continue
            if depth <= base:
                self._external_seen.add(key)
            self._out.append(line + "\n")
        self._out.append(f"// ---- end {rel} ----\n")


def amalgamate(repo: Path) -> tuple[str, list[str], list[str]]:
    """Returns (text, inlined headers in order, warnings)."""
    include_root = repo / "include"
    umbrella = include_root / UMBRELLA
    if not umbrella.is_file():
        raise AmalgamationError(f"{umbrella} does not exist")
    am = Amalgamator(include_root)
    body = am.run(umbrella)
    banner = (
        "// uopcg: single-header amalgamation of <uopcg/uopcg.hpp>.\n"
        "// generated by tools/amalgamate.py \u2014 do not edit; regenerate with `python3 tools/amalgamate.py`.\n"
        "// Needs the Boost (Hana) headers. The runtime/ and io/ headers are not part of it: use include/.\n"
        f"// Inlined, in order: {len(am.order)} headers from include/\n"
        + "".join(f"//   {h}\n" for h in am.order)
        + "#pragma once\n"
        "#ifndef UOPCG_SINGLE_HEADER\n"
        "#define UOPCG_SINGLE_HEADER 1\n"
        "#endif\n\n"
    )
    return banner + body, am.order, am.warnings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                    help="repository root (default: the one holding this script)")
    ap.add_argument("--output", type=Path, default=None,
                    help=f"output file (default: <root>/{OUTPUT.as_posix()})")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if the output file is stale")
    mode.add_argument("--list", action="store_true", help="print the inlined headers in order")
    args = ap.parse_args(argv)

    repo = args.root.resolve()
    out = (args.output or repo / OUTPUT).resolve()
    try:
        text, order, warnings = amalgamate(repo)
    except AmalgamationError as e:
        print(f"amalgamate.py: error: {e}", file=sys.stderr)
        return 2
    for w in warnings:
        print(f"amalgamate.py: warning: {w}", file=sys.stderr)

    try:
        shown = out.relative_to(repo).as_posix()
    except ValueError:
        shown = str(out)
    if args.list:
        print("\n".join(order))
        return 0
    if args.check:
        current = out.read_text(encoding="utf-8") if out.is_file() else None
        if current == text:
            print(f"amalgamate.py: {shown} is up to date ({len(order)} headers)")
            return 0
        if current is None:
            print(f"amalgamate.py: {shown} is missing; run: python3 tools/amalgamate.py", file=sys.stderr)
        else:
            print(f"amalgamate.py: {shown} is stale; run: python3 tools/amalgamate.py", file=sys.stderr)
            diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(),
                                             f"{shown} (committed)", f"{shown} (generated)", lineterm="", n=1))
            for line in diff[:40]:
                print(line, file=sys.stderr)
            if len(diff) > 40:
                print(f"... ({len(diff) - 40} more diff lines)", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.is_file() or out.read_text(encoding="utf-8") != text:
        with open(out, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print(f"amalgamate.py: wrote {shown} ({len(order)} headers, {text.count(chr(10))} lines)")
    else:
        print(f"amalgamate.py: {shown} already up to date ({len(order)} headers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
