#!/usr/bin/env python3
"""The core needs no iostream, RTTI or exceptions: a test (tests/noexcept/meson.build runs it).

Scans every header under include/uopcg/ except runtime/ and io/ (which may use them): the arena,
patterns, rewriting, symbolic, codegen, pipeline and the OpenCL emitter. Fails on
  - #include of <iostream> <istream> <ostream> <fstream> <sstream> <iomanip> <typeinfo> <typeindex>
    <stdexcept> <exception>, or of any runtime/ or io/ header;
  - the keywords throw, try, catch, typeid, dynamic_cast and the names std::type_info,
    std::type_index, std::cout/cerr/clog, std::exception_ptr, std::current_exception;
in code (comments, string and character literals do not count), except in the one guarded place:
core/error.hpp, inside a `#if UOPCG_HAS_EXCEPTIONS` or `#if defined(__cpp_exceptions) ...` block
(there <exception> may be included, and `throw` used). GUARDED_FILES lists the guarded places.

With --compile CXX [FLAGS...] it also compiles the umbrella header (include/uopcg/uopcg.hpp) with
-fno-exceptions -fno-rtti -fsyntax-only (tests/noexcept builds and runs a whole program that way).

usage: check_core_deps.py [--include DIR] [--list] [--compile CXX [FLAGS...]]
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True

ALLOWED_DIRS = ("runtime", "io")  # under include/uopcg/: may use iostream, RTTI, exceptions
# The places that may use exceptions, inside an `#if UOPCG_HAS_EXCEPTIONS` block only (so that they
# compile, and the core works, with -fno-exceptions): core/error.hpp's throw. Keep this list short.
GUARDED_FILES = {"core/error.hpp", "symbolic/rule_tester.hpp"}

BANNED_HEADERS = {
    "iostream", "istream", "ostream", "fstream", "sstream", "iomanip",
    "typeinfo", "typeindex", "stdexcept", "exception",
}
BANNED_WORDS = re.compile(
    r"\b(?:throw|try|catch|typeid|dynamic_cast)\b"
    r"|\bstd::(?:type_info|type_index|cout|cerr|clog|exception_ptr|current_exception|rethrow_exception)\b"
)
# `#if` conditions that open the exceptions-on block of core/error.hpp
GUARD = re.compile(r"UOPCG_HAS_EXCEPTIONS|__cpp_exceptions|__EXCEPTIONS")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
IF = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b(.*)")
ELSE = re.compile(r"^\s*#\s*(else|elif)\b")
ENDIF = re.compile(r"^\s*#\s*endif\b")
RAW_OPEN = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(')


def strip_code(text: str) -> list[str]:
    """The text, line by line, with comments and string/char literal contents blanked out."""
    out: list[str] = []
    mode, raw_end = "code", ""
    for line in text.split("\n"):
        res: list[str] = []
        i, n = 0, len(line)
        while i < n:
            if mode == "block":
                j = line.find("*/", i)
                if j < 0:
                    i = n
                    break
                mode, i = "code", j + 2
                res.append(" ")
            elif mode == "raw":
                j = line.find(raw_end, i)
                if j < 0:
                    i = n
                    break
                mode, i = "code", j + len(raw_end)
                res.append('""')
            else:
                if line.startswith("//", i):
                    break
                if line.startswith("/*", i):
                    mode, i = "block", i + 2
                    continue
                m = RAW_OPEN.match(line, i)
                if m and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_")):
                    mode, raw_end, i = "raw", ")" + m.group(1) + '"', m.end()
                    continue
                c = line[i]
                # a quote: a literal, except a digit separator (1'000) — but #include "x" keeps its name
                if c == '"' or (c == "'" and not (i > 0 and line[i - 1].isalnum())):
                    j = i + 1
                    while j < n and line[j] != c:
                        j += 2 if line[j] == "\\" else 1
                    is_include = c == '"' and INCLUDE.match(line[: j + 1] + ('"' if j >= n else ""))
                    res.append(line[i : j + 1] if is_include else c + c)
                    i = j + 1
                    continue
                res.append(c)
                i += 1
        out.append("".join(res))
    return out


def core_headers(include_dir: Path) -> list[Path]:
    root = include_dir / "uopcg"
    hs = []
    for p in sorted(root.rglob("*.hpp")):
        rel = p.relative_to(root)
        if rel.parts[0] in ALLOWED_DIRS:
            continue
        hs.append(p)
    return hs


def scan(path: Path, rel: str, root: Path) -> list[str]:
    """Problems in one core header; `rel` is its path below `root` (include/uopcg)."""
    problems: list[str] = []
    lines = strip_code(path.read_text(encoding="utf-8"))
    # one entry per open #if block: true inside the exceptions-on branch of an exceptions test
    stack: list[bool] = []
    for k, line in enumerate(lines, 1):
        m = IF.match(line)
        if m:
            stack.append(bool(GUARD.search(m.group(2))) and "!" not in m.group(2) and m.group(1) != "ifndef")
        elif ELSE.match(line):
            if stack:
                stack[-1] = False  # the other branch of an exceptions test is the exceptions-off one
        elif ENDIF.match(line):
            if stack:
                stack.pop()
        guarded = rel in GUARDED_FILES and any(stack)
        m = INCLUDE.match(line)
        if m:
            name = m.group(2).strip()
            if name in BANNED_HEADERS and not guarded:
                problems.append(f"{rel}:{k}: #include <{name}> in the core")
            target = name[len("uopcg/"):] if m.group(1) == "<" and name.startswith("uopcg/") else None
            if m.group(1) == '"':
                resolved = (path.parent / name).resolve()
                if root in resolved.parents:
                    target = resolved.relative_to(root).as_posix()
            if target and target.split("/")[0] in ALLOWED_DIRS:
                problems.append(f"{rel}:{k}: the core includes {target} (runtime/ and io/ are optional)")
            continue
        if line.lstrip().startswith("#"):
            continue
        for w in BANNED_WORDS.finditer(line):
            if w.group(0) in ("throw", "try", "catch") and guarded:
                continue
            problems.append(f"{rel}:{k}: `{w.group(0)}` in the core: {line.strip()}")
    return problems


def compile_umbrella(include_dir: Path, cxx: list[str]) -> list[str]:
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "umbrella_noexcept.cpp"
        src.write_text("#include <uopcg/uopcg.hpp>\n"
                       "#if defined(__cpp_exceptions) || defined(__cpp_rtti) || defined(__GXX_RTTI)\n"
                       "#error \"not compiled with -fno-exceptions -fno-rtti\"\n#endif\n"
                       "static_assert(UOPCG_HAS_EXCEPTIONS == 0);\nint main() {}\n")
        cmd = cxx + ["-std=c++20", "-fno-exceptions", "-fno-rtti", "-fsyntax-only",
                     "-Wall", "-Wextra", "-Werror", "-I", str(include_dir), str(src)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return [f"include/uopcg/uopcg.hpp does not compile with -fno-exceptions -fno-rtti:\n"
                    f"  {' '.join(cmd)}\n{(r.stdout + r.stderr)[-4000:]}"]
    return []


def main(argv: list[str]) -> int:
    repo = Path(__file__).resolve().parent.parent
    include_dir = repo / "include"
    cxx: list[str] = []
    list_only = False
    i = 0
    while i < len(argv):
        if argv[i] == "--include":
            include_dir = Path(argv[i + 1]).resolve()
            i += 2
        elif argv[i] == "--list":
            list_only = True
            i += 1
        elif argv[i] == "--compile":
            cxx = argv[i + 1:]
            if not cxx:
                print(__doc__)
                return 2
            break
        else:
            print(__doc__)
            return 2
    headers = core_headers(include_dir)
    if not headers:
        print(f"check_core_deps.py: no core headers under {include_dir}/uopcg", file=sys.stderr)
        return 2
    rels = [h.relative_to(include_dir / "uopcg").as_posix() for h in headers]
    if list_only:
        print("\n".join(rels))
        return 0
    problems: list[str] = []
    for h, rel in zip(headers, rels):
        problems += scan(h, rel, (include_dir / "uopcg").resolve())
    if cxx:
        problems += compile_umbrella(include_dir, cxx)
    for p in problems:
        print(f"FAIL {p}")
    if problems:
        print(f"check_core_deps.py: {len(problems)} problem(s) in {len(headers)} core headers "
              "(iostream, RTTI and exceptions belong in runtime/ and io/ only)")
        return 1
    extra = ", umbrella compiles with -fno-exceptions -fno-rtti" if cxx else ""
    print(f"check_core_deps.py: {len(headers)} core headers clean (no iostream, RTTI, exceptions){extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
