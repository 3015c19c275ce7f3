#!/usr/bin/env python3
"""Must-not-compile tests: each file has `// expect: <message>` on its first line. Compiled with
-DCONTROL it must compile (so the harness itself is checked); without, it must fail and the
compiler's output must contain the message. A message that clang prints as a pack of characters
('a', 'b', ...: how constexpr_compile.hpp shows a computed report there) is matched as the text it
spells.

usage: check_compile_fail.py --include DIR [--include DIR...] FILE... -- COMPILER [FLAGS...]
"""
import re
import subprocess
import sys

_CHAR = r"'(?:\\.|[^'\\])'"
_CHAR_PACK = re.compile(_CHAR + r"(?:, " + _CHAR + r")+")


def spelled(out):
    """The output with each pack of character literals replaced by the characters it spells."""
    def join(m):
        return "".join(c[1:-1].encode().decode("unicode_escape") for c in re.findall(_CHAR, m.group(0)))
    return _CHAR_PACK.sub(join, out)


def main(argv):
    if "--" not in argv:
        print(__doc__)
        return 2
    sep = argv.index("--")
    ours, compiler = argv[:sep], argv[sep + 1:]
    includes, files = [], []
    i = 0
    while i < len(ours):
        if ours[i] == "--include":
            includes.append(ours[i + 1])
            i += 2
        else:
            files.append(ours[i])
            i += 1
    base = compiler + ["-std=c++20", "-fsyntax-only"] + ["-I" + d for d in includes]
    failures = 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            first = fh.readline().strip()
        if not first.startswith("// expect: "):
            print(f"FAIL {f}: first line must be '// expect: <message>'")
            failures += 1
            continue
        expected = first[len("// expect: "):]
        ok = subprocess.run(base + ["-DCONTROL", f], capture_output=True, text=True)
        if ok.returncode != 0:
            print(f"FAIL {f}: the CONTROL variant does not compile:\n{ok.stderr[-2000:]}")
            failures += 1
            continue
        bad = subprocess.run(base + [f], capture_output=True, text=True)
        out = bad.stdout + bad.stderr
        if bad.returncode == 0:
            print(f"FAIL {f}: compiled, but must not")
            failures += 1
        elif expected not in out and expected not in spelled(out):
            print(f"FAIL {f}: failed without the expected message '{expected}':\n{out[-3000:]}")
            failures += 1
        else:
            size = len(out)
            print(f"ok   {f}: '{expected}' ({size} bytes of diagnostics)")
    print(f"{len(files) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
