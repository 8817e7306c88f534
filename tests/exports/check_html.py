#!/usr/bin/env python3
"""Opens a gpuleak HTML report in headless Chromium and checks what a person would see.

Talks to the browser over the DevTools protocol on a pipe (--remote-debugging-pipe: fd 3 in,
fd 4 out, NUL-separated JSON), so it needs nothing but Python and Chromium. Checks:
  - the page loads from the file with no console error, no uncaught exception and no network
    request (the report must be self-contained);
  - the page says it finished drawing (body[data-ready]) in under the time limit;
  - the leak's row is in the table and visible, naming the expected function;
  - the timeline is drawn: its SVG is visible, has a band for the leaking site, and the
    screenshot of its area has the band's colour in it (pixels, not only the DOM);
  - the flame graph has frames and zooms when one is clicked;
  - with --processes N: N process tabs, and each one draws when selected.
Writes a full-page screenshot (the test artifact) to --screenshot.

Exit status: 0 all checks passed, 1 a check failed, 77 Chromium is not installed (skip).
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, exe, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def child_fds():
            # Copies first: a pipe end may already be fd 3 or 4, and os.pipe()'s ends are
            # close-on-exec (os.dup2 onto another number makes the copy inheritable).
            r, w = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-extensions", "--disable-default-apps",
                "--hide-scrollbars", "--mute-audio", "--remote-debugging-pipe",
                "--user-data-dir=" + profile, "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=child_fds, close_fds=False,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self.read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def read(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise RuntimeError("Chromium closed the pipe: " + err[-2000:])
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def wait_event(self, method, timeout=30):
        deadline = time.time() + timeout
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self.read(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def evaluate(self, expression):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate failed: " + json.dumps(r["exceptionDetails"])[:500])
        return r["result"].get("value")

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def decode_png(data):
    """RGB(A) 8-bit PNG -> (width, height, channels, rows of bytes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), f"PNG depth {depth} colour type {color}"
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif f == 4:
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, channels, rows


def parse_color(text):
    text = text.strip()
    if text.startswith("#") and len(text) == 7:
        return tuple(int(text[i:i + 2], 16) for i in (1, 3, 5))
    raise ValueError("colour " + text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("html")
    ap.add_argument("--leak-function", required=True)
    ap.add_argument("--screenshot", required=True)
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--max-load-s", type=float, default=10.0)
    ap.add_argument("--expect-text", action="append", default=[],
                    help="text the leak's row must show (its source line, its loop); repeatable")
    args = ap.parse_args()
    exe = find_chromium()
    if not exe:
        print("check_html: SKIP: no chromium installed (apt-get install chromium)")
        return 77
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    profile = tempfile.mkdtemp(prefix="gpuleak-chromium-")
    browser = Browser(exe, profile)
    try:
        targets = browser.send("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        browser.session = browser.send("Target.attachToTarget",
                                       {"targetId": page["targetId"], "flatten": True},
                                       session=False)["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            browser.send(domain + ".enable")
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        url = "file://" + os.path.abspath(args.html)
        start = time.time()
        browser.send("Page.navigate", {"url": url})
        browser.wait_event("Page.loadEventFired", timeout=args.max_load_s * 3)
        ready = None
        while time.time() - start < args.max_load_s * 3:
            if browser.evaluate("document.body && document.body.dataset.ready") == "1":
                ready = time.time() - start
                break
            time.sleep(0.02)
        check(ready is not None, "the page finished drawing (body[data-ready])")
        if ready is not None:
            print(f"     drawn {ready:.3f} s after navigation")
            check(ready < args.max_load_s, f"drawn in under {args.max_load_s} s")
        check(browser.evaluate("document.body.dataset.errors") == "0", "no error caught by the page")

        # What the page shows.
        leak = browser.evaluate("""(() => {
            const row = document.querySelector('tr.site-row.verdict-leak');
            if (!row) return null;
            const r = row.getBoundingClientRect();
            return {text: row.textContent, site: row.dataset.site, w: r.width, h: r.height,
                    visible: getComputedStyle(row).visibility !== 'hidden' && row.offsetParent !== null};
        })()""")
        check(leak is not None, "a row with verdict leak")
        if leak:
            check(leak["w"] > 100 and leak["h"] > 5 and leak["visible"], "the leak row is visible")
            check(args.leak_function in leak["text"],
                  f"the leak row names {args.leak_function}: {leak['text'][:120]!r}")
            for text in args.expect_text:
                check(text in leak["text"], f"the leak row shows {text!r}")
        tl = browser.evaluate("""(() => {
            const s = document.getElementById('timeline-svg');
            if (!s) return null;
            const r = s.getBoundingClientRect();
            const bands = [...s.querySelectorAll('polygon.band')].map(p => ({site: p.dataset.site,
                fill: p.getAttribute('fill'), n: p.getAttribute('points').split(' ').length}));
            return {x: r.x + scrollX, y: r.y + scrollY, w: r.width, h: r.height, bands,
                    total: !!s.querySelector('polyline.total-line'),
                    peak: !!s.querySelector('circle.peak-mark'),
                    iterations: s.querySelectorAll('line.iteration-mark').length,
                    ooms: s.querySelectorAll('polygon.oom-mark').length};
        })()""")
        check(tl is not None and tl["w"] > 300 and tl["h"] > 100, "the timeline is drawn and visible")
        if tl and leak:
            band = next((b for b in tl["bands"] if b["site"] == leak["site"]), None)
            check(band is not None, "the timeline has a band for the leaking site")
            check(tl["total"] and tl["peak"], "the timeline marks the maximum line and the peak")
            print(f"     {len(tl['bands'])} bands, {tl['iterations']} iteration marks, "
                  f"{tl['ooms']} OOM marks")
            if band:
                shot = browser.send("Page.captureScreenshot", {
                    "format": "png", "captureBeyondViewport": True,
                    "clip": {"x": tl["x"], "y": tl["y"], "width": tl["w"], "height": tl["h"],
                             "scale": 1}})
                import base64
                w, h, ch, rows = decode_png(base64.b64decode(shot["data"]))
                want = parse_color(band["fill"])
                # Drawn at 85% opacity over white.
                want = tuple(round(c * 0.85 + 255 * 0.15) for c in want)
                hits = nonwhite = 0
                for row in rows:
                    for x in range(0, w * ch, ch):
                        px = row[x:x + 3]
                        if px[0] < 245 or px[1] < 245 or px[2] < 245:
                            nonwhite += 1
                        if all(abs(px[i] - want[i]) <= 12 for i in range(3)):
                            hits += 1
                print(f"     timeline pixels: {nonwhite} not white, {hits} of the leak band's colour")
                check(nonwhite > w * h * 0.02, "the timeline's pixels are not blank")
                check(hits > 50, "the leak's band shows in the timeline's pixels")
        # Full page as first drawn, kept as the test's artifact.
        height = browser.evaluate("document.documentElement.scrollHeight")
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": 1400, "height": min(int(height), 6000), "deviceScaleFactor": 1,
                      "mobile": False})
        import base64
        shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        with open(args.screenshot, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        print(f"     screenshot: {args.screenshot}")

        flame = browser.evaluate("""(() => {
            const nodes = [...document.querySelectorAll('#flame .node')];
            if (!nodes.length) return null;
            const leafy = nodes.filter(n => n.textContent).sort((a, b) => b.offsetTop - a.offsetTop);
            const target = leafy.length > 1 ? leafy[Math.floor(leafy.length / 2)] : nodes[0];
            const name = target.title.split('\\n')[0];
            const section = target.closest('section');
            target.click();
            const crumbs = section.querySelector('.crumbs').textContent;
            return {count: nodes.length, name, crumbs};
        })()""")
        check(flame is not None and flame["count"] > 0, "the flame graph has frames")
        if flame:
            check(flame["name"] in flame["crumbs"],
                  f"clicking {flame['name']!r} zooms to it (breadcrumbs {flame['crumbs']!r})")
        if args.processes > 1:
            tabs = browser.evaluate("""(() => {
                const b = [...document.querySelectorAll('#process-tabs button')];
                let drawn = 0;
                for (const x of b) { x.click(); }
                for (const v of document.querySelectorAll('.process')) drawn += v.dataset.drawn === '1';
                b[0].click();
                return {tabs: b.length, drawn, errors: document.body.dataset.errors};
            })()""")
            check(tabs["tabs"] == args.processes, f"{args.processes} process tabs ({tabs['tabs']})")
            check(tabs["drawn"] == args.processes and tabs["errors"] == "0",
                  "every process draws when its tab is selected")

        # Everything the browser reported while loading and drawing.
        time.sleep(0.2)
        browser.evaluate("1")
        console_errors, requests = [], []
        for m in browser.events:
            method, p = m.get("method"), m.get("params", {})
            if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                console_errors.append(" ".join(str(a.get("value", a.get("description")))
                                               for a in p.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                console_errors.append(json.dumps(p.get("exceptionDetails", {}))[:400])
            elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                console_errors.append(p["entry"].get("text", ""))
            elif method == "Network.requestWillBeSent":
                u = p.get("request", {}).get("url", "")
                if u != url and not u.startswith("data:"):
                    requests.append(u)
        check(not console_errors, "no console errors: " + "; ".join(console_errors)[:600])
        check(not requests, "no network requests: " + " ".join(requests)[:600])
    except Exception as e:  # a protocol failure is a failed check, with what happened
        check(False, f"browser session: {type(e).__name__}: {e}")
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    if failures:
        print(f"check_html: {len(failures)} checks failed")
        return 1
    print("check_html: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
