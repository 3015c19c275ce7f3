#!/usr/bin/env python3
"""Generate the single headers under single_include/uopcg/ from include/uopcg/.

  uopcg.hpp            the whole portable library: <uopcg/uopcg.hpp> and everything it includes
                       (core, pattern, symbolic, the codegen pipeline, render); needs only Boost
  compile.hpp          the declarations-only header <uopcg/compile.hpp> (graph building, Target,
                       the pipeline's entry points); with UOPCG_IMPLEMENTATION it includes
  compile_impl.hpp     their definitions, on top of uopcg.hpp
  runtime/*.hpp, io/*.hpp
                       one per header directly under include/uopcg/runtime/ and io/: the OpenCL and
                       KGSL launchers, JSON interchange (nlohmann_json; stage dumps also zlib), DOT

Each output is its root header with every `#include <uopcg/...>` (or quoted include resolving under
include/) replaced by the header's contents, recursively, each header once, at its first inclusion
(dependency order), its `#pragma once` dropped. An output may instead *refer* to another: a header
that is another output's root, or that an earlier output it builds on (its bases) already holds,
becomes `#include "<that output>"` (a path relative to it). So the optional headers include
compile.hpp rather than repeating the core, and no output repeats uopcg.hpp.

Every inlined header sits in an include guard named after its path (UOPCG_SINGLE_CORE_ARENA_HPP), the
same in every output, so any combination of the single headers can share a translation unit (e.g.
compile.hpp and uopcg.hpp both inline the core). The single headers must not be mixed with
include/'s headers in one translation unit: those are guarded by `#pragma once` only.

Every other #include (standard library, Boost, ...) stays an #include line; a repeated one is dropped
unless the first occurrence sat inside a conditional block. The output is deterministic: no dates,
no paths outside the repository.

    python3 tools/amalgamate.py            write every single header
    python3 tools/amalgamate.py --check    exit 1 if any committed single header is stale, missing or
                                           not generated (a stray file under single_include/uopcg/)
    python3 tools/amalgamate.py --list     print each output and its inlined headers in order
    python3 tools/amalgamate.py --names    print the outputs' names (tests/single_header/meson.build)

Portable headers (outside runtime/ and io/) that uopcg.hpp does not reach are reported as warnings:
the umbrella include/uopcg/uopcg.hpp should include them.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

OUTPUT_DIR = Path("single_include") / "uopcg"


@dataclass
class Output:
    name: str                      # path under single_include/uopcg/
    root: str                      # header under include/ it is generated from
    summary: str                   # one line for the banner
    bases: list[str] = field(default_factory=list)  # earlier outputs it refers to, in order of preference


# What the optional single headers hold, for their banners; an optional header not listed here (a
# new one under runtime/ or io/) gets a single header too, with a generic line.
OPTIONAL_SUMMARIES = {
    "runtime/opencl.hpp": "the OpenCL launcher; needs the OpenCL headers and library (or an ICD loader).",
    "runtime/kgsl.hpp": "the KGSL launcher (Adreno A6xx, Linux/Android).",
    "io/json.hpp": "tinygrad's JSON kernel interchange; needs nlohmann_json.",
    "io/target.hpp": "the codegen target a kernel file records; needs nlohmann_json.",
    "io/json_stages.hpp": "stage dumps (.stages.json.gz); needs nlohmann_json and zlib.",
    "io/dot.hpp": "Graphviz DOT output of graphs and programs.",
    "io/viz.hpp": "the HTML page of a compilation (uopcg compile --viz); runs Graphviz dot (POSIX).",
}


def outputs(include_root: Path) -> list[Output]:
    """Every single header, in generation order (an output's bases come before it): the library,
    the pay-once pair, then one per header directly under runtime/ and io/."""
    out = [
        Output("uopcg.hpp", "uopcg/uopcg.hpp",
               "the whole portable library (core, pattern, symbolic, codegen, render); needs only Boost."),
        Output("compile.hpp", "uopcg/compile.hpp",
               "the declarations-only header: graph building, Target, rendering and the pipeline's entry\n"
               "// points (uopcg::linked); `#define UOPCG_IMPLEMENTATION` in one translation unit for the definitions."),
        Output("compile_impl.hpp", "uopcg/compile_impl.hpp",
               "the definitions of compile.hpp's entry points (UOPCG_IMPLEMENTATION); includes uopcg.hpp.",
               bases=["compile.hpp", "uopcg.hpp"]),
    ]
    for part in ("runtime", "io"):
        for h in sorted((include_root / "uopcg" / part).glob("*.hpp")):
            name = f"{part}/{h.name}"
            summary = OPTIONAL_SUMMARIES.get(name, f"the optional header include/uopcg/{name} (its comment says what it needs).")
            out.append(Output(name, f"uopcg/{name}", summary, bases=["compile.hpp", "uopcg.hpp"]))
    return out


# Headers no single header needs to reach from uopcg.hpp: the optional parts and the pay-once pair.
OPTIONAL_PREFIXES = ("uopcg/runtime/", "uopcg/io/", "uopcg/compile.hpp", "uopcg/compile_impl.hpp")

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


def guard_name(rel: str) -> str:
    """The include guard of an inlined header, from its path under include/uopcg/."""
    stem = rel[len("uopcg/"):] if rel.startswith("uopcg/") else rel
    return "UOPCG_SINGLE_" + re.sub(r"[^A-Za-z0-9]", "_", stem).upper()


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
    """Builds one output. `roots` maps the root header of every output to its name; `owned` maps
    each base output's name to the headers it holds."""

    def __init__(self, include_root: Path, output: Output, roots: dict[str, str], owned: dict[str, set[str]]):
        self.root = include_root.resolve()
        self.output = output
        self.roots = roots
        self.owned = owned
        self.order: list[str] = []  # inlined headers, relative to include/, in output order
        self.refers: list[str] = []  # outputs it includes
        self._done: set[str] = set()
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

    def _refer(self, other: str) -> None:
        """Emit `#include "<other output>"` once, and count its headers as done."""
        if other in self.refers:
            return
        self.refers.append(other)
        self._done |= self.owned.get(other, set())
        rel = os.path.relpath(other, os.path.dirname(self.output.name) or ".")
        self._out.append(f'#include "{Path(rel).as_posix()}"  // single_include/uopcg/{other}\n')

    def run(self) -> str:
        self._inline((self.root / self.output.root).resolve())
        return "".join(self._out)

    def _inline(self, path: Path) -> None:
        rel = self._rel(path)
        self._done.add(rel)
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

        guard = guard_name(rel)
        self._out.append(f"// ---- begin {rel} ----\n#ifndef {guard}\n#define {guard}\n")
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
                trel = self._rel(target)
                if trel in self._done:
                    continue
                other = self.roots.get(trel)
                if other is not None and other != self.output.name:
                    self._refer(other)
                    continue
                base_of = next((b for b in self.output.bases if trel in self.owned.get(b, ())), None)
                if base_of is not None:
                    self._refer(base_of)
                    continue
                if depth > base:
                    self.warnings.append(f"{self.output.name}: {rel}:{k + 1}: {name} is included inside a "
                                         "conditional block; inlined there, once")
                self._inline(target)
                continue
            key = f"{kind}{name}"
            if key in self._external_seen:
                continue
            if depth <= base:
                self._external_seen.add(key)
            self._out.append(line + "\n")
        self._out.append(f"#endif  // {guard}\n// ---- end {rel} ----\n")


@dataclass
class Generated:
    output: Output
    text: str
    order: list[str]
    refers: list[str]


def amalgamate(repo: Path) -> tuple[list[Generated], list[str]]:
    """Every output, in generation order, and the warnings."""
    include_root = repo / "include"
    todo = outputs(include_root)
    roots = {o.root: o.name for o in todo}
    owned: dict[str, set[str]] = {}
    result: list[Generated] = []
    warnings: list[str] = []
    for o in todo:
        if not (include_root / o.root).is_file():
            raise AmalgamationError(f"{include_root / o.root} does not exist")
        am = Amalgamator(include_root, o, roots, owned)
        body = am.run()
        owned[o.name] = set(am.order)
        warnings += am.warnings
        banner = (
            f"// uopcg single header {o.name}: {o.summary}\n"
            "// Generated from include/ by tools/amalgamate.py \u2014 do not edit; regenerate with\n"
            "// `python3 tools/amalgamate.py`. Do not mix with include/'s headers in one translation unit;\n"
            "// the single headers combine with each other (shared include guards).\n"
            + "".join(f"// Includes single_include/uopcg/{r}.\n" for r in am.refers)
            + f"// Inlined, in order: {len(am.order)} headers from include/\n"
            + "".join(f"//   {h}\n" for h in am.order)
            + "#pragma once\n"
            "#ifndef UOPCG_SINGLE_HEADER\n"
            "#define UOPCG_SINGLE_HEADER 1\n"
            "#endif\n\n"
        )
        result.append(Generated(o, banner + body, am.order, am.refers))

    reached = set(owned["uopcg.hpp"])
    for h in sorted(p.relative_to(include_root).as_posix() for p in (include_root / "uopcg").rglob("*.hpp")):
        if h not in reached and not h.startswith(OPTIONAL_PREFIXES):
            warnings.append(f"uopcg.hpp: {h} is not reached from include/uopcg/uopcg.hpp "
                            "(the umbrella should include it)")
    return result, warnings


def _stray(out_dir: Path, generated: list[Generated]) -> list[Path]:
    names = {g.output.name for g in generated}
    if not out_dir.is_dir():
        return []
    return sorted(p for p in out_dir.rglob("*") if p.is_file() and p.relative_to(out_dir).as_posix() not in names)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                    help="repository root (default: the one holding this script)")
    ap.add_argument("--output-dir", type=Path, default=None,
                    help=f"where to write (default: <root>/{OUTPUT_DIR.as_posix()})")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if any single header is stale")
    mode.add_argument("--list", action="store_true", help="print the outputs and their inlined headers")
    mode.add_argument("--names", action="store_true", help="print the outputs' names, one per line")
    args = ap.parse_args(argv)

    repo = args.root.resolve()
    out_dir = (args.output_dir or repo / OUTPUT_DIR).resolve()
    try:
        generated, warnings = amalgamate(repo)
    except AmalgamationError as e:
        print(f"amalgamate.py: error: {e}", file=sys.stderr)
        return 2
    for w in warnings:
        print(f"amalgamate.py: warning: {w}", file=sys.stderr)

    def shown(p: Path) -> str:
        try:
            return p.relative_to(repo).as_posix()
        except ValueError:
            return str(p)

    if args.names:
        print("\n".join(g.output.name for g in generated))
        return 0
    if args.list:
        for g in generated:
            refs = f" (includes {', '.join(g.refers)})" if g.refers else ""
            print(f"{g.output.name}: {len(g.order)} headers{refs}")
            print("".join(f"  {h}\n" for h in g.order), end="")
        return 0

    if args.check:
        bad = 0
        for g in generated:
            out = out_dir / g.output.name
            current = out.read_text(encoding="utf-8") if out.is_file() else None
            if current == g.text:
                continue
            bad += 1
            if current is None:
                print(f"amalgamate.py: {shown(out)} is missing; run: python3 tools/amalgamate.py", file=sys.stderr)
                continue
            print(f"amalgamate.py: {shown(out)} is stale; run: python3 tools/amalgamate.py", file=sys.stderr)
            diff = list(difflib.unified_diff(current.splitlines(), g.text.splitlines(),
                                             f"{shown(out)} (committed)", f"{shown(out)} (generated)",
                                             lineterm="", n=1))
            for line in diff[:40]:
                print(line, file=sys.stderr)
            if len(diff) > 40:
                print(f"... ({len(diff) - 40} more diff lines)", file=sys.stderr)
        for p in _stray(out_dir, generated):
            bad += 1
            print(f"amalgamate.py: {shown(p)} is not generated by tools/amalgamate.py; remove it", file=sys.stderr)
        if bad:
            return 1
        print(f"amalgamate.py: {len(generated)} single headers under {shown(out_dir)} are up to date")
        return 0

    for g in generated:
        out = out_dir / g.output.name
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.is_file() and out.read_text(encoding="utf-8") == g.text:
            print(f"amalgamate.py: {shown(out)} already up to date ({len(g.order)} headers)")
            continue
        with open(out, "w", encoding="utf-8", newline="\n") as f:
            f.write(g.text)
        print(f"amalgamate.py: wrote {shown(out)} ({len(g.order)} headers, {g.text.count(chr(10))} lines)")
    for p in _stray(out_dir, generated):
        print(f"amalgamate.py: warning: {shown(p)} is not generated by tools/amalgamate.py", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
