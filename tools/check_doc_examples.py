#!/usr/bin/env python3
"""The C++ blocks of README.md and docs/*.md, checked against the code that is compiled (Boost.Hana's
way: the documentation shows a file, the build compiles and runs it, and this check fails when the two
differ). The convention is written down in docs/modules.md, "Code in the documentation".

Every ```cpp block carries a marker, as the nearest non-blank line above its opening fence:

  <!-- example: PATH -->        the block is the whole file PATH (relative to the repository root)
  <!-- example: PATH#NAME -->   the block is the region of PATH between the lines `// doc: NAME` and
                                `// end doc` (the region's common indentation removed)
  <!-- fragment: REASON -->     not a program (calls out of context, names the reader supplies,
                                elisions); REASON says why, and must not be empty

A tied block must equal its file or region exactly, the file must be named in a meson.build (so the
build compiles it), and every `// doc: NAME` region of a tied file must be shown by some block. A block
that defines main() is a program and cannot be a fragment unless it elides code (a line `...`).
Other blocks (```sh, ```cmake, plain ```) are commands, output and diagrams, and are not checked.

usage: check_doc_examples.py [--root DIR] [--list] [--self-test]
  --list        print every block with its marker and exit 0
  --self-test   check the checker on a scratch tree holding one of each problem
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`{]*)[^`]*$")  # the info string's first word is the language
_MARKER = re.compile(r"^\s*<!--\s*(example|fragment):(.*?)-->\s*$")
_REGION_BEGIN = re.compile(r"^\s*// doc: (.+?)\s*$")
_REGION_END = re.compile(r"^\s*// end doc\s*$")
_MAIN = re.compile(r"\bint\s+main\s*\(")
_CPP = {"cpp", "c++", "cxx", "cc"}


@dataclass
class Block:
    doc: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: list[str]
    marker: tuple[str, str] | None  # (kind, argument)


def blocks_of(doc: Path) -> list[Block]:
    lines = doc.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks, lang = m.group(1), m.group(2), m.group(3).lower()
        j = i + 1
        while j < len(lines) and not (set(lines[j].strip()) == {ticks[0]} and len(lines[j].strip()) >= len(ticks)):
            j += 1
        body = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1:j]]
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = None
        if k >= 0 and (mm := _MARKER.match(lines[k])):
            marker = (mm.group(1), mm.group(2).strip())
        out.append(Block(doc, i + 1, lang, body, marker))
        i = j + 1
    return out


def dedent(lines: list[str]) -> list[str]:
    widths = [len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.strip()]
    w = min(widths, default=0)
    return [ln[w:] for ln in lines]


def regions_of(path: Path, name_as: str) -> tuple[dict[str, list[str]], list[str]]:
    """The `// doc: NAME` ... `// end doc` regions of a file, and any malformed ones (the file
    named `name_as` in them)."""
    regions: dict[str, list[str]] = {}
    problems: list[str] = []
    name: str | None = None
    start = 0
    body: list[str] = []
    for n, ln in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if (b := _REGION_BEGIN.match(ln)):
            if name is not None:
                problems.append(f"{name_as}:{n}: region '{b.group(1)}' opens inside region '{name}' (line {start})")
            name, start, body = b.group(1), n, []
        elif _REGION_END.match(ln):
            if name is None:
                problems.append(f"{name_as}:{n}: '// end doc' without a '// doc: NAME' above it")
            else:
                if name in regions:
                    problems.append(f"{name_as}:{start}: region '{name}' is defined twice")
                regions[name] = dedent(body)
                name = None
        elif name is not None:
            body.append(ln)
    if name is not None:
        problems.append(f"{name_as}:{start}: region '{name}' has no '// end doc'")
    return regions, problems


def named_in_meson(root: Path, path: Path) -> bool:
    """Whether a meson.build in the file's directory or above names it (relative to that directory)."""
    d = path.parent
    while True:
        build = d / "meson.build"
        if build.is_file():
            rel = path.relative_to(d).as_posix()
            text = build.read_text(encoding="utf-8")
            if f"'{rel}'" in text:
                return True
            # a file in a subdirectory is named as 'sub' / 'file.cpp' or 'sub/file.cpp'
            parts = rel.split("/")
            if len(parts) > 1 and " / ".join(f"'{p}'" for p in parts) in text:
                return True
        if d == root:
            return False
        d = d.parent


def first_difference(want: list[str], got: list[str]) -> str:
    for n, (a, b) in enumerate(zip(want, got), 1):
        if a != b:
            return f"line {n} of the block:\n      doc:  {a!r}\n      code: {b!r}"
    if len(want) != len(got):
        return f"the doc has {len(want)} lines, the code {len(got)}"
    return "identical"


def check(root: Path) -> tuple[list[str], dict[str, int], list[str]]:
    """The problems, the count of each kind of marker, and one line per block."""
    docs = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    problems: list[str] = []
    shown: dict[Path, set[str]] = {}
    region_cache: dict[Path, dict[str, list[str]]] = {}
    counts = {"example": 0, "fragment": 0}
    listing: list[str] = []
    for doc in docs:
        if not doc.is_file():
            continue
        for b in blocks_of(doc):
            if b.lang not in _CPP:
                continue
            where = f"{b.doc.relative_to(root)}:{b.line}"
            listing.append(f"{where}: {b.marker[0] + ': ' + b.marker[1] if b.marker else '(no marker)'}")
            if b.marker is None:
                problems.append(f"{where}: a cpp block without a marker; put '<!-- example: PATH[#NAME] -->' "
                                "or '<!-- fragment: REASON -->' on the line above it")
                continue
            kind, arg = b.marker
            counts[kind] += 1
            if kind == "fragment":
                if not arg:
                    problems.append(f"{where}: a fragment needs a reason ('<!-- fragment: why -->')")
                if any(_MAIN.search(ln) for ln in b.text) and not any(ln.strip() == "..." for ln in b.text):
                    problems.append(f"{where}: the block defines main(): it is a program; tie it to a file "
                                    "('<!-- example: examples/NAME.cpp -->')")
                continue
            path_s, _, region = arg.partition("#")
            path = root / path_s.strip()
            if not path.is_file():
                problems.append(f"{where}: {path_s} does not exist")
                continue
            if not named_in_meson(root, path):
                problems.append(f"{where}: {path_s} is named in no meson.build, so nothing compiles it")
            if region:
                if path not in region_cache:
                    region_cache[path], bad = regions_of(path, path_s.strip())
                    problems += bad
                regions = region_cache[path]
                if region not in regions:
                    problems.append(f"{where}: {path_s} has no region '// doc: {region}' ... '// end doc'")
                    continue
                shown.setdefault(path, set()).add(region)
                code = regions[region]
            else:
                code = path.read_text(encoding="utf-8").splitlines()
            if b.text != code:
                problems.append(f"{where}: differs from {arg}; {first_difference(b.text, code)}")
    for path, regions in region_cache.items():
        for name in sorted(set(regions) - shown.get(path, set())):
            problems.append(f"{path.relative_to(root)}: region '{name}' is shown by no document")
    return problems, counts, listing


def self_test() -> int:
    """Each kind of problem, made once in a scratch tree, is reported at its document and line."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        (root / "docs").mkdir()
        (root / "ex").mkdir()
        (root / "ex" / "meson.build").write_text("executable('a', 'a.cpp', 'sub' / 'b.cpp')\n")
        (root / "ex" / "sub").mkdir()
        (root / "ex" / "a.cpp").write_text("// why\n// doc: one\n  int f() { return 1; }\n// end doc\n"
                                            "// doc: unshown\nint g();\n// end doc\n")
        (root / "ex" / "sub" / "b.cpp").write_text("int main() {}\n")
        (root / "ex" / "c.cpp").write_text("int main() {}\n")
        (root / "README.md").write_text(
            "<!-- example: ex/a.cpp#one -->\n```cpp\nint f() { return 1; }\n```\n"       # 2: equal
            "<!-- example: ex/sub/b.cpp -->\n```cpp\nint main() {}\n```\n"              # 6: equal
            "```sh\nmeson test\n```\n"                                                   # not C++
            "<!-- example: ex/a.cpp#one -->\n```cpp\nint f() { return 2; }\n```\n"       # 13: differs
            "\n```cpp\nint x;\n```\n"                                                   # 17: no marker
            "<!-- fragment: -->\n```cpp\nf();\n```\n"                                   # 21: no reason
            "<!-- fragment: short -->\n```cpp\nint main() { f(); }\n```\n"              # 25: a program
            "<!-- fragment: elided -->\n```cpp\nint main() {\n  ...\n}\n```\n"        # 29: fine
            "<!-- example: ex/c.cpp -->\n```cpp\nint main() {}\n```\n"                  # 35: not built
            "<!-- example: ex/a.cpp#two -->\n```cpp\nint g();\n```\n"                   # 39: no region
            "~~~~C++ title=x\nint y;\n~~~~\n")                                           # 42: no marker
        problems, counts, _ = check(root)
        expected = ["README.md:13: differs", "README.md:17: a cpp block without a marker",
                    "README.md:21: a fragment needs a reason", "README.md:25: the block defines main()",
                    "README.md:35: ex/c.cpp is named in no meson.build", "README.md:39: ex/a.cpp has no region",
                    "README.md:42: a cpp block without a marker",
                    "ex/a.cpp: region 'unshown' is shown by no document"]
        missing = [e for e in expected if not any(p.startswith(e) for p in problems)]
        extra = [p for p in problems if not any(p.startswith(e) for e in expected)]
        for m in missing:
            print(f"self-test: not reported: {m}")
        for e in extra:
            print(f"self-test: reported wrongly: {e}")
        if counts != {"example": 5, "fragment": 3}:
            print(f"self-test: counts {counts}")
            return 1
        print(f"self-test: {len(expected)} problems reported, {len(missing) + len(extra)} wrong")
        return 1 if missing or extra else 0


def main(argv: list[str]) -> int:
    if "--self-test" in argv:
        return self_test()
    root = Path(__file__).resolve().parent.parent
    if "--root" in argv:
        root = Path(argv[argv.index("--root") + 1]).resolve()
    problems, counts, listing = check(root)
    if "--list" in argv:
        print("\n".join(listing))
        return 0
    for p in problems:
        print(p)
    print(f"check_doc_examples: {counts['example']} blocks tied to compiled code, {counts['fragment']} fragments, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
