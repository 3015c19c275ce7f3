#!/usr/bin/env python3
"""Configure-time helper for the header checks and the single-header test (tests/headers,
tests/single_header). Meson has no glob; this lists what is on disk.

    gen_header_checks.py list INCLUDE_DIR
        Every public header under INCLUDE_DIR/uopcg, as `uopcg/...hpp`, sorted, one per line.

    gen_header_checks.py single-header-tests REPO DIR...
        The test sources (REPO-relative DIR/*.cpp) written against the umbrella header: the only uopcg
        header they include, directly or through their quoted local includes, is <uopcg/uopcg.hpp>.
        They compile unchanged against single_include/ alone.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

UMBRELLA = "uopcg/uopcg.hpp"
_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def list_headers(include_dir: Path) -> list[str]:
    root = include_dir.resolve()
    return sorted(p.relative_to(root).as_posix() for p in (root / "uopcg").rglob("*.hpp") if p.is_file())


def _uopcg_includes(path: Path, seen: set[Path]) -> set[str]:
    """The <uopcg/...> headers a source includes, following its quoted includes that exist."""
    if path in seen:
        return set()
    seen.add(path)
    found: set[str] = set()
    for kind, name in _INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
        name = name.strip()
        local = (path.parent / name).resolve() if kind == '"' else None
        if local is not None and local.is_file():
            found |= _uopcg_includes(local, seen)
        elif name.startswith("uopcg/"):
            found.add(name)
    return found


def single_header_tests(repo: Path, dirs: list[str]) -> list[str]:
    repo = repo.resolve()
    found = []
    for d in dirs:
        for src in sorted((repo / d).glob("*.cpp")):
            if _uopcg_includes(src.resolve(), set()) == {UMBRELLA}:
                found.append(src.relative_to(repo).as_posix())
    return found


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "list":
        print("\n".join(list_headers(Path(argv[1]))))
        return 0
    if len(argv) >= 2 and argv[0] == "single-header-tests":
        print("\n".join(single_header_tests(Path(argv[1]), argv[2:])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
