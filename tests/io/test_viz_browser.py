#!/usr/bin/env python3
"""`uopcg compile --viz` in a real browser: headless Chromium, driven through the DevTools protocol
on a pipe (--remote-debugging-pipe: NUL-terminated JSON on fds 3 and 4; no Python package needed),
loads the page of a corpus kernel, steps through the stages with the keyboard, checks the SVG count,
one node's rule attribution and its tooltip, and saves a screenshot of one stage in OUT_DIR.

usage: test_viz_browser.py UOPCG CORPUS_DIR OUT_DIR
Exits 77 (meson's "skipped") only when no Chromium is installed."""
import base64
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

KERNEL = "dmm_stage_local"  # LOCAL buffers and barriers: every part of the page has content


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok:", msg)


class Browser:
    """One headless Chromium with one page, spoken to over the DevTools pipe."""

    def __init__(self, exe, profile):
        def high_fd(fd):  # out of the way of fds 3 and 4, which the child's dup2 sets
            new = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
            os.close(fd)
            return new

        to_child_r, self.to_child = map(high_fd, os.pipe())
        self.from_child, from_child_w = map(high_fd, os.pipe())

        def wire():
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--disable-gpu", "--no-sandbox", "--remote-debugging-pipe", "--no-first-run",
             "--user-data-dir=" + profile, "--window-size=1400,1000", "about:blank"],
            pass_fds=(3, 4), preexec_fn=wire, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b""
        self.next_id = 0
        self.session = None
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.from_child], [], [], left)[0]:
                fail("no answer from Chromium in time")
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                fail("Chromium closed the DevTools pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, timeout=30):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session:
            msg["sessionId"] = self.session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    fail(f"{method}: {m['error']}")
                return m.get("result", {})
            # an event (not asked for): ignored

    def open(self, url, timeout=30):
        """Loads url (through about:blank, so that a change of the fragment alone loads it anew) and
        waits until its scripts have run."""
        self.call("Page.navigate", {"url": "about:blank"})
        self.call("Page.navigate", {"url": url})
        base = url.split("#")[0]
        deadline = time.time() + timeout
        while not self.js(f"location.href.split('#')[0] === {json.dumps(base)} && document.readyState === 'complete'"):
            if time.time() > deadline:
                fail(f"{url} did not load in time")
            time.sleep(0.05)

    def js(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            fail(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def key(self, key, code, keycode):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": code,
                                                 "windowsVirtualKeyCode": keycode, "nativeVirtualKeyCode": keycode})

    def close(self):
        try:
            self.session = None
            self.call("Browser.close", timeout=10)
        except SystemExit:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    uopcg, corpus, out_dir = sys.argv[1:]
    chromium = find_chromium()
    if not chromium:
        print("SKIP: no Chromium installed (Debian package chromium; scripts/test.sh installs it)")
        return 77
    kernel = os.path.join(corpus, KERNEL + ".json")
    os.makedirs(out_dir, exist_ok=True)
    page = os.path.join(out_dir, KERNEL + ".viz.html")
    r = subprocess.run([uopcg, "compile", kernel, "--viz", page], capture_output=True, text=True)
    check(r.returncode == 0, f"uopcg compile --viz writes the page ({r.stderr.strip()})")
    # the stage list the page must show, from the CLI's own list of stages
    r = subprocess.run([uopcg, "compile", kernel, "--stage", "?"], capture_output=True, text=True)
    stage_names = re.findall(r"'([^']+)'", r.stderr.split("stages:", 1)[1])
    check(len(stage_names) > 10, f"the CLI lists {len(stage_names)} stages")
    html = open(page, encoding="utf-8").read()
    check(not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "the page fetches nothing")

    with tempfile.TemporaryDirectory() as profile:
        b = Browser(chromium, profile)
        try:
            url = "file://" + os.path.abspath(page)
            b.open(url)
            names = b.js("[...document.querySelectorAll('section.stage-view')].map(s => s.dataset.name)")
            check(names == stage_names, f"one view per stage, in order ({len(names)})")
            check(b.js("document.querySelectorAll('#stages li').length") == len(stage_names), "one list entry per stage")

            svgs = b.js("document.querySelectorAll('#graphs svg').length")
            distinct = b.js("new Set([...document.querySelectorAll('section.stage-view')].map(s => s.dataset.graph)).size")
            changed = b.js("document.querySelectorAll('section.stage-view[data-changed=\"1\"]').length")
            first_same = b.js("document.querySelector('section.stage-view').dataset.changed === '0' ? 1 : 0")
            check(svgs == distinct == changed + first_same and svgs > 5,
                  f"one SVG per changed stage: {svgs} SVGs, {changed} changed stages (+{first_same})")

            def state():
                return b.js("""(() => { const i = +document.body.dataset.stage;
                  const vis = [...document.querySelectorAll('section.stage-view')].filter(s => !s.hidden);
                  const g = [...document.querySelectorAll('#graphs > div')].filter(d => !d.hidden);
                  return {i, views: vis.map(v => v.id), graph: g.map(d => d.dataset.stage),
                          want: vis.length ? vis[0].dataset.graph : null,
                          current: document.querySelector('#stages li.current').dataset.index}; })()""")

            s = state()
            check(s["i"] == 0 and s["views"] == ["stage-0"] and s["graph"] == [s["want"]], "starts at the first stage")
            for step in range(1, 6):
                b.key("ArrowDown", "ArrowDown", 40)
                s = state()
                check(s["i"] == step and s["views"] == [f"stage-{step}"] and s["graph"] == [s["want"]] and
                      s["current"] == str(step), f"ArrowDown shows stage {step} ({names[step]}) and its graph")
            b.key("k", "KeyK", 75)
            check(state()["i"] == 4, "k goes back one stage")
            b.key("End", "End", 35)
            check(state()["i"] == len(names) - 1, "End goes to the last stage")
            b.key("Home", "Home", 36)
            check(state()["i"] == 0, "Home goes to the first stage")
            b.open(url + "#stage-3")
            check(state()["i"] == 3 and b.js("location.hash") == "#stage-3", "the address #stage-3 opens stage 3")
            b.key("j", "KeyJ", 74)
            check(b.js("location.hash") == "#stage-4", "the address follows the stage shown")
            b.key("Home", "Home", 36)

            # rule attribution: the BARRIER "add implicit barriers" added names a rule that this
            # stage's rule table lists
            k = names.index("add implicit barriers")
            for _ in range(k):
                b.key("j", "KeyJ", 74)
            check(state()["i"] == k, "j steps forward to 'add implicit barriers'")
            rule = b.js(f"(() => {{ const n = document.querySelector('#graphs > div[data-stage=\"{k}\"] g.node.added[data-op=\"BARRIER\"]');"
                        " return n ? n.dataset.rule : null; })()")
            table = b.js(f"[...document.querySelectorAll('#stage-{k} table.rules td:first-child')].map(t => t.textContent)")
            check(rule and not rule.startswith("(") and rule in table,
                  f"the added BARRIER is attributed to rule '{rule}', which the stage's table lists")
            # its tooltip: op, dtype, rule; shown on hover
            box = b.js(f"(() => {{ const n = document.querySelector('#graphs > div[data-stage=\"{k}\"] g.node.added[data-op=\"BARRIER\"]');"
                       " n.scrollIntoView({block:'center'}); const r = n.getBoundingClientRect();"
                       " return [r.x + r.width / 2, r.y + r.height / 2]; })()")
            b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0], "y": box[1]})
            tip = b.js("(() => { const t = document.getElementById('tip'); return t.style.display === 'block' ? t.textContent : ''; })()")
            check(tip.startswith("BARRIER void") and ("created by " + rule) in tip, f"hovering shows the tooltip ({tip!r})")

            program = b.js("document.getElementById('program').textContent")
            source = b.js("document.getElementById('opencl').textContent")
            barriers = b.js("document.getElementById('barriers').textContent")
            check("BARRIER" in program and "__kernel" in source and "barrier(CLK_LOCAL_MEM_FENCE)" in source,
                  "the program and its OpenCL C are on the page")
            check("orders" in barriers, "the barrier report says what a barrier orders")

            shot = b.call("Page.captureScreenshot", {"format": "png"})["data"]
            png = os.path.join(out_dir, KERNEL + ".viz-stage.png")
            with open(png, "wb") as f:
                f.write(base64.b64decode(shot))
            check(open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 10000,
                  f"screenshot of stage {k} saved as {png}")
        finally:
            b.close()

    # a kernel that fails in a stage: a page up to the failure, the error last
    bad = os.path.join(out_dir, KERNEL + ".failing.viz.html")
    r = subprocess.run([uopcg, "compile", kernel, "--from-ast", "--opts", "UPCAST:9:4", "--viz", bad],
                       capture_output=True, text=True)
    check(r.returncode == 1 and os.path.exists(bad), "a failing compilation still writes its page")
    text = open(bad, encoding="utf-8").read()
    check('class="stage-view failed"' in text and "invalid axis" in text, "the failing page ends with the error")
    print("all browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
