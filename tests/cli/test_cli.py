#!/usr/bin/env python3
"""The `uopcg` command's behaviour: compile / run / bench on corpus files, fault injection, and one
clear error line with a non-zero exit for bad files, unknown stages and bad options.
usage: test_cli.py UOPCG_EXE CORPUS_DIR [--opencl]"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

exe, corpus = sys.argv[1], sys.argv[2]
# In a cross build meson gives the exe_wrapper (qemu) here: the tool is started through it, so the test
# needs no binfmt_misc registration.
wrapper = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
have_opencl = "--opencl" in sys.argv
failures = []


def run(*args):
    p = subprocess.run([*wrapper, exe, *args], capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
        if detail:
            print("     " + detail.replace("\n", "\n     ")[:3000])


def k(name):
    return os.path.join(corpus, name + ".json")


# compile prints the OpenCL C of the file's post-opts graph
rc, out, err = run("compile", k("red_sum_4096_group"))
check(rc == 0 and "__kernel void" in out and "barrier(CLK_LOCAL_MEM_FENCE)" in out, "compile prints the kernel", err)
rc, out, err = run("compile", k("red_sum_4096_group"), "--trace")
check(rc == 0 and "expander" in err and "total" in err, "compile --trace prints per-stage timings", err)
rc, out, err = run("compile", k("red_sum_4096_group"), "--stage", "expander")
check(rc == 0 and "REDUCE" in out and "__kernel" not in out, "compile --stage prints the graph after a stage", err)
rc, out, err = run("compile", k("red_sum_4096_group"), "--stage", "add local buffers", "--dot")
check(rc == 0 and out.startswith("digraph"), "compile --stage --dot prints DOT", err)
rc, out, err = run("compile", k("red_sum_4096_group"), "--stage", "linearize")
check(rc == 0 and "BARRIER" in out, "compile --stage linearize prints the program", err)

with tempfile.TemporaryDirectory() as d:
    rc, out, err = run("compile", k("red_sum_4096_group"), "--dump-dir", d)
    files = sorted(os.listdir(d))
    check(rc == 0 and len(files) == 2 * 24 and files[0] == "00-postopt_symbolic.dot" and "23-linearize.txt" in files,
          "compile --dump-dir writes every stage as text and DOT", f"{files}\n{err}")

# --from-ast: the file's AST through the front stages and apply_opts (the recorded opts by default)
for name in ("red_sum_4096_group", "matmul_64", "ew_where_cmp_f32"):
    rc0, post, _ = run("compile", k(name))
    rc, out, err = run("compile", k(name), "--from-ast")
    check(rc == 0 and rc0 == 0 and out == post, f"{name}: compile --from-ast gives the post-opts graph's source", err)
rc, out, err = run("compile", k("matmul_64"), "--from-ast", "--opts", "none")
check(rc == 0 and "__kernel void r_64_64_64(" in out, "compile --from-ast --opts none: one output per work-item", err)
rc, out, err = run("compile", k("matmul_64"), "--from-ast", "--opts", "LOCAL:0:4,UPCAST:1:4")
check(rc == 0 and "__kernel void r_16_16_4_4_64(" in out, "compile --from-ast --opts LIST names the kernel by its opts", err)
rc, out, err = run("compile", k("matmul_64"), "--from-ast", "--opts", "heuristic")
check(rc == 0 and "__kernel void" in out, "compile --from-ast --opts heuristic", err)
rc, out, err = run("compile", k("red_sum_4096_group"), "--from-ast", "--stage", "simplify ranges")
check(rc == 0 and "RANGE" in out and "__kernel" not in out, "compile --from-ast --stage takes a front stage", err)
rc, out, err = run("compile", k("red_sum_4096_group"), "--from-ast", "--stage", "apply_opts")
check(rc == 0 and "GROUP_REDUCE" in out, "compile --from-ast --stage apply_opts", err)
rc, out, err = run("compile", k("matmul_64"), "--from-ast", "--opts", "UPCAST:9:4")
check(rc == 1 and err.count("\n") == 1 and "Opt(op=OptOps.UPCAST, axis=9" in err, "an invalid opt: one line naming it", err)
rc, out, err = run("compile", k("matmul_64"), "--from-ast", "--opts", "FOO:1")
check(rc != 0 and err.count("\n") == 1 and "FOO" in err, "an unknown opt op: one line", err)
rc, out, err = run("compile", k("matmul_64"), "--opts", "none")
check(rc != 0 and "--from-ast" in err, "--opts without --from-ast is an error", err)
rc, out, err = run("bench", k("red_sum_4096_group"), "--from-ast", "--runs", "3")
check(rc == 0 and out.startswith("kernel\tcodegen_us\nred_sum_4096_group\t"), "bench --from-ast", out + err)
with tempfile.TemporaryDirectory() as d:
    # a file with only an AST (what tinygrad's scheduler emits) compiles with --from-ast
    import json
    doc = json.load(open(k("red_sum_4096_group")))
    for key in ("post_opts", "full_sink", "linear", "applied_opts"):
        doc.pop(key, None)
    path = os.path.join(d, "ast_only.json")
    json.dump(doc, open(path, "w"))
    rc, out, err = run("compile", path, "--from-ast")
    check(rc == 0 and "__kernel void r_16_64_4(" in out, "an AST-only file compiles with --from-ast (heuristics)", err)
    rc, out, err = run("compile", path)
    check(rc != 0 and err.count("\n") == 1 and "--from-ast" in err, "an AST-only file without --from-ast: one line", err)

# fault injection: every barrier of a LOCAL-memory kernel, dropped alone, is rejected with exit 3
for name in ("red_sum_4096_group", "dmm_stage_local", "softmax_rows.k1"):
    rc, out, err = run("compile", k(name), "--stage", "linearize")
    nb = out.count("BARRIER")
    check(nb >= 1, f"{name} has barriers ({nb})")
    for n in range(nb):
        rc, out, err = run("compile", k(name), "--drop-barrier", str(n))
        check(rc == 3 and "LOCAL" in err and "STORE" in err and "LOAD" in err,
              f"{name} --drop-barrier {n} is rejected (exit 3, names store, load, buffer)", f"rc={rc}\n{err}")
    rc, out, err = run("compile", k(name), "--drop-barrier", str(nb))
    check(rc != 0 and rc != 3 and err.count("\n") == 1, f"{name} --drop-barrier past the last barrier is an error", err)
    rc, out, err = run("compile", k(name), "--explain-barriers")
    check(rc == 0 and out.count("\n") == nb and out.count(": orders LOCAL buffer %") == nb and "(read after write" in out,
          f"{name} --explain-barriers: what each barrier orders", out + err)
rc, out, err = run("compile", k("red_sum_4096_group"), "--trace")
check(rc == 0 and "us  barrier verifier" in err, "compile --trace times the barrier verifier", err)

# bad input: one clear line, non-zero exit
rc, out, err = run("compile", k("red_sum_4096_group"), "--stage", "no such stage")
check(rc != 0 and "unknown stage" in err, "unknown stage", err)
rc, out, err = run("compile", os.path.join(corpus, "does_not_exist.json"))
check(rc != 0 and err.count("\n") == 1 and "does_not_exist" in err, "missing file: one line", err)
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    f.write('{"schema_version": 1, "name": "x"')
rc, out, err = run("compile", f.name)
check(rc != 0 and err.count("\n") == 1, "malformed JSON: one line", err)
os.unlink(f.name)
rc, out, err = run("compile", k("red_sum_4096_group"), "--drop-barrier", "minus")
check(rc != 0 and "--drop-barrier" in err, "bad option value", err)

# bench: TSV with a header
rc, out, err = run("bench", k("ew_add_f32"), k("red_sum_4096_group"), "--runs", "3")
lines = out.strip().split("\n")
check(rc == 0 and lines[0] == "kernel\tcodegen_us" and lines[1].startswith("ew_add_f32\t") and len(lines) == 3,
      "bench prints a TSV", out + err)
rc, out, err = run("bench", k("ew_add_f32"), k("red_sum_4096_group"), "--runs", "3", "--interleave")
lines = out.strip().split("\n")
check(rc == 0 and len(lines) == 3 and lines[1].startswith("ew_add_f32\t") and lines[2].startswith("red_sum_4096_group\t")
      and all(float(l.split("\t")[1]) > 0 for l in lines[1:]), "bench --interleave: one row per kernel, in order", out + err)

# kgsl-dispatch (Linux builds): one A630 dispatch's register writes, one per line, and the shader preload
if sys.platform.startswith("linux"):
    def kgsl_dispatch(*args):
        rc, out, err = run("kgsl-dispatch", *args)
        regs, preload, bad = {}, None, []
        for line in out.splitlines():
            if re.fullmatch(r"reg [A-Z0-9_]+ 0x[0-9A-F]{4} 0x[0-9A-F]{8}", line):
                _, name, addr, value = line.split()
                regs[name] = (int(addr, 16), int(value, 16))
            elif re.fullmatch(r"preload_units \d+", line):
                preload = int(line.split()[1])
            else:
                bad.append(line)
        return rc, out + err, regs, preload, bad

    # 600 private bytes per item: 1024 per fiber, 2048 fibers -> 2 MiB per SP = 512 units of 4 KiB in both
    # encodings; a 9000-byte shader is 71 units of 128 bytes, of which the 64-unit instruction cache is preloaded
    for enc, const_config, stack_offset in (("freedreno", 0x140, (2 << 20) >> 11), ("tinygrad", 0x100, 2 << 20)):
        rc, text, regs, preload, bad = kgsl_dispatch("--pvtmem", "600", "--image-size", "9000", "--encoding", enc)
        check(rc == 0 and not bad and regs.get("SP_CS_PVT_MEM_SIZE") == (0xA9B9, 512)
              and regs.get("SP_CS_PVT_MEM_PARAM") == (0xA9B6, 2) and regs.get("SP_CS_INSTR_SIZE") == (0xA9BC, 71)
              and preload == 64 and regs.get("SP_CS_CONST_CONFIG") == (0xB987, const_config)
              and regs.get("SP_CS_PVT_MEM_STACK_OFFSET") == (0xA9BD, stack_offset),
              f"kgsl-dispatch --encoding {enc}: private memory 512 x 4 KiB per SP, preload capped at 64 of 71 units", text)
    rc, text, regs, preload, bad = kgsl_dispatch("--pvtmem", "0", "--image-size", "384")
    check(rc == 0 and not bad and regs.get("SP_CS_PVT_MEM_SIZE") == (0xA9B9, 0) and preload == 3
          and regs.get("SP_CS_INSTR_SIZE") == (0xA9BC, 3) and len(regs) > 30,
          "kgsl-dispatch: a small shader is preloaded whole; no private memory", text)
    for args, what in ((["--pvtmem", "600", "--image-size", "64", "--encoding", "vendor"], "--encoding"),
                       (["--pvtmem", "600"], "--image-size"),
                       (["--pvtmem", "600", "--image-size", "0"], "--image-size"),
                       (["--pvtmem", "-1", "--image-size", "64"], "--pvtmem"),
                       (["--pvtmem", "200000", "--image-size", "64"], "200000 bytes of private memory")):
        rc, out, err = run("kgsl-dispatch", *args)
        check(rc != 0 and out == "" and err.count("\n") == 1 and what in err,
              f"kgsl-dispatch {' '.join(args)}: one-line error naming {what}", err)

if have_opencl:
    rc, out, err = run("run", k("red_sum_4096_group"))
    check(rc == 0 and out.startswith("PASS"), "run: uopcg's kernel matches the file's outputs", out + err)
    rc, out, err = run("run", k("softmax_rows.k2"), "--time", "--runs", "3")
    check(rc == 0 and "exec_us" in out, "run --time", out + err)
    rc, out, err = run("run", k("red_sum_4096_group"), "--no-barriers")
    check(rc in (0, 1) and "[barriers removed]" in out, "run --no-barriers runs and reports", out + err)
    rc, out, err = run("run", k("red_sum_4096_group"), "--drop-barrier", "0")
    check(rc == 3 and out == "" and "rejects the program" in err and "read after write" in err,
          "run --drop-barrier: rejected by the verifier, not run", out + err)
    rc, out, err = run("run", k("red_sum_4096_group"), "--drop-barrier", "0", "--unverified")
    check(rc in (0, 1) and "[barrier 0 dropped]" in out and "running it anyway" in err,
          "run --drop-barrier --unverified: runs the faulty program (fault injection)", out + err)
    rc, out, err = run("run", k("red_sum_4096_group"), "--drop-barrier", "0", "--no-barriers")
    check(rc == 2 and "--drop-barrier" in err, "run --drop-barrier with --no-barriers is a usage error", out + err)
    rc, out, err = run("bench", k("ew_add_f32"), "--exec", "--runs", "3")
    check(rc == 0 and out.split("\n")[0] == "kernel\tcodegen_us\texec_us\tref_exec_us", "bench --exec", out + err)
    # a kernel with a variable argument is recorded without data (and without a .bin): one line that says so
    import json
    with tempfile.TemporaryDirectory() as d:
        doc = json.load(open(k("ew_add_f32")))
        doc["program"]["vars"] = ["data3_"]
        doc["data"].update({"file": ".bin", "inputs": [], "outputs": []})
        path = os.path.join(d, "with_var.json")
        json.dump(doc, open(path, "w"))
        rc, out, err = run("run", path)
        check(rc != 0 and err.count("\n") == 1 and "records no outputs" in err and "variable argument, data3_" in err,
              "run: a kernel file with a variable and no data: one line naming the variable", out + err)

if have_opencl:
    # search: a BEAM search on the device, cached under UOPCG_CACHE_DIR; the last line pastes into --opts
    def run_env(env, *args):
        p = subprocess.run([*wrapper, exe, *args], capture_output=True, text=True, timeout=600, env={**os.environ, **env})
        return p.returncode, p.stdout, p.stderr

    with tempfile.TemporaryDirectory() as d:
        cache = {"UOPCG_CACHE_DIR": d}
        rc, out, err = run_env(cache, "search", k("red_sum_rows_f32"), "--beam", "1", "--budget", "300", "--runs", "5")
        last = out.strip().split("\n")[-1]
        m = re.fullmatch(r"best (\S+) heuristic_us ([0-9.]+) best_us ([0-9.]+)", last)
        check(rc == 0 and m is not None and float(m.group(2)) > 0 and float(m.group(3)) > 0 and "from the cache" not in out,
              "search prints the best opts and both kernel times last", out + err)
        if m:
            best = m.group(1)
            name = re.search(r"^best +\S+ +(\S+)", out, re.M).group(1)
            rc, out2, err = run("compile", k("red_sum_rows_f32"), "--from-ast", "--opts", best)
            check(rc == 0 and f"__kernel void {name}(" in out2, "search: the best opts paste into --opts", out2 + err)
            rc, out2, err = run_env(cache, "search", k("red_sum_rows_f32"), "--beam", "1", "--runs", "5")
            check(rc == 0 and "from the cache" in out2 and out2.strip().split("\n")[-1].startswith(f"best {best} heuristic_us "),
                  "search: a second search comes from the cache", out2 + err)
            rc, out2, err = run_env(cache, "compile", k("red_sum_rows_f32"), "--from-ast", "--opts", "beam=1")
            check(rc == 0 and f"__kernel void {name}(" in out2, "compile --opts beam=1 takes the cached search", out2 + err)
            rc, out2, err = run_env(cache, "run", k("red_sum_rows_f32"), "--from-ast", "--opts", "beam=1")
            check(rc == 0 and out2.startswith("PASS") and f"({name})" in out2, "run --from-ast --opts beam=1", out2 + err)
            rc, out2, err = run_env(cache, "bench", k("red_sum_rows_f32"), "--from-ast", "--opts", "beam=1", "--runs", "3")
            check(rc == 0 and out2.startswith("kernel\tcodegen_us\nred_sum_rows_f32\t"), "bench --from-ast --opts beam=1", out2 + err)
        # the progress line: only when stderr is a terminal (script(1) gives the command one); bytes, not
        # text, so that the carriage returns stay
        search = [*wrapper, exe, "search", k("red_sum_rows_f32"), "--budget", "2"]
        p = subprocess.run(search, capture_output=True, timeout=600, env={**os.environ, "UOPCG_CACHE_DIR": os.path.join(d, "pipe")})
        check(p.returncode == 0 and b"\r" not in p.stderr, "search: no progress line when stderr is not a terminal", repr(p.stderr[-500:]))
        import shutil
        if shutil.which("script"):
            p = subprocess.run(["script", "-qec", shlex.join(search), "/dev/null"], capture_output=True, timeout=600,
                               env={**os.environ, "UOPCG_CACHE_DIR": os.path.join(d, "tty")})
            check(p.returncode == 0 and re.search(rb"\rbeam 4: round 1, ", p.stdout) is not None,
                  "search: a progress line on a terminal", repr(p.stdout[-500:]))
    with tempfile.TemporaryDirectory() as d:
        nodev = {"UOPCG_CACHE_DIR": os.path.join(d, "cache"), "UOPCG_OPENCL_DEVICE": "9:0"}
        rc, out, err = run_env(nodev, "search", k("matmul_64"))
        check(rc == 1 and out == "" and err.count("\n") == 1 and "platform 9" in err and not os.path.exists(nodev["UOPCG_CACHE_DIR"]),
              "search without the device: one line naming it, nothing cached", err)
        rc, out, err = run_env(nodev, "compile", k("matmul_64"), "--from-ast", "--opts", "beam=2")
        check(rc == 1 and err.count("\n") == 1 and "platform 9" in err, "--opts beam=N without the device: one line", err)
    for args, what in ((["search", k("matmul_64"), "--beam", "0"], "--beam"), (["search", k("matmul_64"), "--budget", "-1"], "--budget"),
                       (["compile", k("matmul_64"), "--from-ast", "--opts", "beam=0"], "beam=N"),
                       (["search", k("red_sum_4096_group").replace("red_sum_4096_group", "nope")], "nope")):
        rc, out, err = run(*args)
        check(rc != 0 and err.count("\n") == 1 and what in err, f"{' '.join(args[:1] + args[2:])}: one line naming {what}", err)

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
