#!/usr/bin/env python3
"""Where a translation unit's compile time goes, by part of the library: reads clang's -ftime-trace
output and adds up, per part, the time spent optimizing each function (OptFunction) and generating
its code (CodeGen Function), and the time spent instantiating function templates (outermost
InstantiateFunction events only: nested ones are inside them).

    clang++ -std=c++20 -O2 -Iinclude -ftime-trace -c tests/linked/impl.cpp -o impl.o
    python3 tools/compile_profile.py impl.json [--top N] [--by-rule-set]
    python3 tools/compile_profile.py --self-test     (a made-up trace; run by the test suite)

A function is put in the first part whose pattern its demangled name matches (PARTS below): a rule's
rewriter (its offer thunk names the rule set whose lambda it calls), the rewrite engine and its
shape drivers, the barrier verifier, kernel opts, the emitter, ... The rest of the compiler's time
(the whole-module passes, the inliner between functions, parsing) is printed as totals: it is not
attributed to a function by clang. With --by-rule-set, rules are split by the rule set (or
function) whose lambda they are. Needs c++filt (binutils).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys

# (part, pattern on the demangled name), first match wins
PARTS = [
    ("rules: rewriters (offer thunks)", r"pat::detail::offer_thunk$"),
    ("rules: predicates, right-hand sides", r"pat::detail::(check_thunk|build_|rhs_|run_check|both|number_)|\{lambda#\d+\}"),
    ("rewrite engine, drivers, matcher", r"pat::detail::(rewriter_engine|rewrite_with|run_shaped|shaped_match|run_matcher|run_generic|drive|matcher|try_rules|apply_one)|pat::graph_rewrite"),
    ("barrier verifier", r"codegen::(detail::)?verifier|verify_barriers|barrier_|codegen::explain_barriers"),
    ("kernel opts, heuristics, BEAM", r"codegen::opt::"),
    ("OpenCL emitter", r"uopcg::render::"),
    ("linearize, control flow", r"codegen::(detail::)?(linearize|CFG|control_flow|block)"),
    ("pipeline stages (other code)", r"uopcg::codegen::"),
    ("symbolic (folding, bounds, helpers)", r"uopcg::symbolic::"),
    ("core (arena, args, graph walks, text)", r"^uopcg::(Arena|Arg|UOp|text|detail|toposort|substitute|map_srcs|fail|KernelInfo|ParamArg|Opt|DType|check_|describe|graph_to_string|range|param|index|sink|end|store|reduce|cast|operator)"),
    ("uopcg (other)", r"uopcg::"),
    ("standard library", r"^std::|^__gnu_cxx::"),
    ("names too long for the trace", r"^_Z"),
    ("other", r""),
]


def demangle(names: list[str]) -> list[str]:
    r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    out = r.stdout.split("\n")
    return out[: len(names)]


def own_name(name: str) -> str:
    """The qualified name of the function itself: no return type, template arguments or parameters
    (a template argument may name any other part of the library)."""
    s = re.sub(r"\{lambda\([^{}]*?\)#(\d+)\}", r"{lambda#\1}", name)
    prev = None
    while prev != s:
        prev, s = s, re.sub(r"<[^<>]*>", "", s)
    s = re.sub(r"(\s+(const|volatile|&|&&))+$", "", s.strip())
    if s.endswith(")"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(s[i], 0)
            if depth == 0:
                s = s[:i]
                break
    return s.split(" ")[-1] if " " in s and not s.endswith("operator") else s


def outermost(events: list[dict]) -> list[dict]:
    """The events not nested in another of the list (one thread: sorted by start)."""
    out, end = [], -1
    for e in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
        if e["ts"] >= end:
            out.append(e)
            end = e["ts"] + e["dur"]
    return out


def rule_set_of(name: str) -> str:
    m = re.search(r"uopcg::(?:detail::)?(\w+)::(?:detail::)?(\w+)(?:\(\))?(?: const)?::\{lambda", name)
    return f"{m.group(1)}::{m.group(2)}" if m else "(unnamed)"


def profile(events: list[dict]) -> dict:
    """Per part: optimization and code generation time of its functions, how many functions, and
    outermost instantiation time; per rule set: its rewriters' optimization time; clang's totals."""
    kinds = ("OptFunction", "CodeGen Function")
    per_fn = [e for e in events if e["name"] in kinds]
    inst = outermost([e for e in events if e["name"] == "InstantiateFunction"])
    names = demangle([e.get("args", {}).get("detail", "") for e in per_fn])
    compiled = [(re.compile(p), part) for part, p in PARTS]

    def part_of(name: str) -> str:
        own = own_name(name)
        for rx, part in compiled:
            if rx.search(own):
                return part
        return PARTS[-1][0]

    r = {"time": {k: collections.Counter() for k in kinds}, "functions": collections.Counter(),
         "by_set": collections.Counter(), "instantiation": collections.Counter(), "totals": collections.Counter()}
    for e, name in zip(per_fn, names):
        part = part_of(name)
        r["time"][e["name"]][part] += e["dur"]
        if e["name"] == "OptFunction":
            r["functions"][part] += 1
        if part == PARTS[0][0]:
            r["by_set"][rule_set_of(name)] += e["dur"]
    for e in inst:
        r["instantiation"][part_of(e.get("args", {}).get("detail", ""))] += e["dur"]
    for e in events:
        if e["name"].startswith("Total "):
            r["totals"][e["name"][6:]] += e["dur"]
    return r


def self_test() -> int:
    """A made-up trace: each function lands in its part, a nested instantiation is not counted twice."""
    def fn(kind, mangled, ts, dur):
        return {"ph": "X", "name": kind, "ts": ts, "dur": dur, "args": {"detail": mangled}}
    events = [
        fn("OptFunction", "_ZN5uopcg6render6detail10cl_emitter3runEv", 0, 5),
        fn("CodeGen Function", "_ZN5uopcg6render6detail10cl_emitter3runEv", 5, 2),
        fn("OptFunction", "_ZN5uopcg7codegen3opt24hand_coded_optimizationsEv", 10, 7),
        # a standard container of uopcg's type is the standard library's, not uopcg's
        fn("OptFunction", "_ZNSt6vectorIN5uopcg3UOpESaIS1_EE9push_backERKS1_", 20, 3),
        fn("OptFunction", "_ZN5uopcg8symbolic8simplifyEv", 30, 11),
        fn("InstantiateFunction", "uopcg::codegen::opt::hand_coded_optimizations", 100, 40),
        fn("InstantiateFunction", "std::vector<int>::push_back", 110, 20),  # nested: inside the one above
        fn("InstantiateFunction", "std::vector<int>::push_back", 200, 9),
        {"ph": "X", "name": "Total Frontend", "ts": 0, "dur": 300},
    ]
    r = profile(events)
    want = {("time", "OptFunction", "OpenCL emitter"): 5, ("time", "CodeGen Function", "OpenCL emitter"): 2,
            ("time", "OptFunction", "kernel opts, heuristics, BEAM"): 7,
            ("time", "OptFunction", "standard library"): 3,
            ("time", "OptFunction", "symbolic (folding, bounds, helpers)"): 11,
            ("instantiation", "kernel opts, heuristics, BEAM"): 40, ("instantiation", "standard library"): 9,
            ("functions", "OpenCL emitter"): 1, ("totals", "Frontend"): 300}
    wrong = 0
    for key, v in want.items():
        got = r[key[0]][key[1]][key[2]] if key[0] == "time" else r[key[0]][key[1]]
        if got != v:
            print(f"self-test: {' / '.join(key)}: {got}, expected {v}")
            wrong += 1
    print(f"self-test: {len(want)} figures checked, {wrong} wrong")
    return 1 if wrong else 0


def main(argv: list[str]) -> int:
    if "--self-test" in argv:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="clang's -ftime-trace JSON (next to the object file)")
    ap.add_argument("--top", type=int, default=15, help="rule sets listed with --by-rule-set")
    ap.add_argument("--by-rule-set", action="store_true")
    args = ap.parse_args(argv)

    events = [e for e in json.load(open(args.trace))["traceEvents"] if e.get("ph") == "X"]
    r = profile(events)
    t, fns, ti, totals, by_set = r["time"], r["functions"], r["instantiation"], r["totals"], r["by_set"]

    print("| part | functions | optimize s | code generation s | instantiation s |")
    print("|---|---:|---:|---:|---:|")
    order = sorted({p for p, _ in PARTS}, key=lambda p: -(t["OptFunction"][p] + t["CodeGen Function"][p]))
    for p in order:
        if fns[p] == 0 and ti[p] == 0:
            continue
        print(f"| {p} | {fns[p]} | {t['OptFunction'][p] / 1e6:.2f} | {t['CodeGen Function'][p] / 1e6:.2f} | {ti[p] / 1e6:.2f} |")
    s_opt, s_cg = sum(t["OptFunction"].values()), sum(t["CodeGen Function"].values())
    print(f"| all functions | {sum(fns.values())} | {s_opt / 1e6:.2f} | {s_cg / 1e6:.2f} | {sum(ti.values()) / 1e6:.2f} |")
    print()
    # clang's own totals ("Total ExecuteCompiler" counts nested events twice: not printed)
    for k in ("Frontend", "Backend", "Optimizer", "CodeGenPasses"):
        if k in totals:
            print(f"{k}: {totals[k] / 1e6:.2f} s")
    if args.by_rule_set:
        print()
        print("| rule set (or function) of the rewriter | optimize s |")
        print("|---|---:|")
        for k, v in by_set.most_common(args.top):
            print(f"| {k} | {v / 1e6:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
