#!/usr/bin/env bash
# A header-only install compiles nothing (scripts/test.sh, step "install"): with tests, examples and
# benchmarks off, the build has no targets (the command-line tool follows the tests unless
# -Dcli=enabled), `meson install` installs the headers, the single headers, the pkg-config files and
# the CMake package, and no program; -Dcli=enabled brings the tool back.
#
#   tests/install/lean_install.sh SOURCE_ROOT WORK_DIR
set -euo pipefail
src="$1"
work="$2"
mkdir -p "$work"
lean=(-Dtests=false -Dexamples=false -Dbenchmarks=false)

targets() {  # the build targets of a configured build directory, one name per line
  meson introspect "$1" --targets | python3 -c 'import json,sys; print("\n".join(t["name"] for t in json.load(sys.stdin)))'
}

meson setup "$work/lean" "$src" "${lean[@]}" --prefix=/usr/local >"$work/lean-setup.log" 2>&1 ||
  { cat "$work/lean-setup.log"; exit 1; }
t=$(targets "$work/lean")
if [[ -n "$t" ]]; then
  printf 'lean install: the build has targets, it must have none:\n%s\n' "$t"
  exit 1
fi
meson install -C "$work/lean" --destdir "$work/lean-dest" --quiet
prefix="$work/lean-dest/usr/local"
for f in include/uopcg/uopcg.hpp include/uopcg/compile.hpp include/uopcg/compile_impl.hpp \
         include/uopcg-single/uopcg/uopcg.hpp include/uopcg-single/uopcg/compile.hpp \
         include/uopcg-single/uopcg/runtime/opencl.hpp share/pkgconfig/uopcg.pc \
         share/pkgconfig/uopcg-single.pc share/cmake/uopcg/uopcgConfig.cmake; do
  [[ -f "$prefix/$f" ]] || { echo "lean install: $f is not installed"; exit 1; }
done
if [[ -e "$prefix/bin" ]]; then
  echo "lean install: a program was installed:"; find "$prefix/bin"; exit 1
fi
echo "lean install: no targets, $(find "$prefix" -type f | wc -l) files installed, no program"

meson setup "$work/lean-cli" "$src" "${lean[@]}" -Dcli=enabled >"$work/lean-cli-setup.log" 2>&1 ||
  { cat "$work/lean-cli-setup.log"; exit 1; }
t=$(targets "$work/lean-cli")
[[ "$t" == "uopcg" ]] || { printf 'lean install: -Dcli=enabled: targets %s, expected uopcg\n' "$t"; exit 1; }
echo "lean install: -Dcli=enabled builds the tool and nothing else"
