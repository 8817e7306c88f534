#!/usr/bin/env python3
"""Runs the verdict benchmark corpus (docs/verdict-corpus.md) under libgpuleak.so and scores
gpuleak-report's verdicts against the ground truth written in each program's source.

For every program (C once; Python on every CPython found, or the ones asked for): one run without
the preload and one with it (their exit statuses must agree, and match the manifest), then
`gpuleak-report --format json` on the traces. Each reported site is mapped to a ground-truth line
by walking its frames from the innermost outward and taking the first whose file:line carries an
`EXPECT:` comment; a line's reported verdict is the most severe among its sites (an EXPECT line no
site maps to is "not traced"). Prints per program the mismatches, then per suite the confusion
matrix (expected x reported, per ground-truth line), leak precision and recall, and the lines
whose verdict is outside their accepted set.

Exit status: 0 when every suite meets the target (every leak line reported `leak`, no other line
reported `leak`, every line's verdict in its accepted set, the OOMs named at their lines, exit
statuses as expected); 1 otherwise; 77 when an interpreter asked for is not installed.
With --leak-only the accepted-set and OOM checks are printed but do not fail the run.

  run_corpus.py --build BUILD [--lang c|py|all] [--interpreter 3.12|system ...] [--python EXE ...]
                [--jobs N] [--only REGEX] [--json OUT] [--keep DIR] [--leak-only]
  run_corpus.py --selftest      checks the matching and the matrix on selftest/*.json
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SOURCE, "tests", "python"))
import pythons  # noqa: E402  (tests/python/pythons.py: the interpreters the Python tests use)

EXPECT_RE = re.compile(r"\s(?:#|//) EXPECT: ([a-z|]+)( OOM)?$")
# Most severe first. Verdict strings the analyzer adds later are their own class, ranked after
# accumulation (so a new severe class is never hidden under growth/retained/transient).
SEVERITY = ["leak", "accumulation", "growth", "retained", "transient", "none"]
NOT_TRACED = "not traced"
UNKNOWN_RANK = 1.5


def rank(verdict):
    if verdict == NOT_TRACED:
        return 99
    return SEVERITY.index(verdict) if verdict in SEVERITY else UNKNOWN_RANK


def canonical(accepted):
    return "|".join(sorted(accepted, key=rank))


# --------------------------------------------------------------------------------------------
# Ground truth and matching


def read_truth(paths):
    """{(basename, line): {"accepted": set, "oom": bool, "text": str, "file": path}} for the
    EXPECT lines of `paths` (a program's own sources; their basenames are unique to it)."""
    truth = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, text in enumerate(f, 1):
                m = EXPECT_RE.search(text.rstrip("\n"))
                if m:
                    truth[(os.path.basename(path), n)] = {
                        "accepted": set(m.group(1).split("|")), "oom": bool(m.group(2)),
                        "text": text.strip(), "file": path}
    return truth


def report_processes(report):
    """The per-process report objects of one gpuleak-report JSON (one trace, or processes[])."""
    if "processes" in report:
        return report["processes"]
    return [report]


def site_line(site, truth):
    """The ground-truth line of a site: its innermost frame whose file:line has an EXPECT."""
    for frame in site.get("frames") or []:
        f, line = frame.get("file"), frame.get("line")
        if f and line:
            key = (os.path.basename(f), line)
            if key in truth:
                return key
    return None


def evaluate(report, truth):
    """Scores one program's report. Returns a dict with per line expected/reported, the unmatched
    sites and the OOM checks."""
    reported = {}
    unmatched = []
    oom_lines = set()
    for proc in report_processes(report):
        by_id = {}
        for site in proc.get("sites") or []:
            by_id[site.get("id")] = site
            key = site_line(site, truth)
            if key is None:
                unmatched.append(site)
                continue
            v = site.get("verdict") or "none"
            if key not in reported or rank(v) < rank(reported[key]):
                reported[key] = v
        for oom in proc.get("ooms") or []:
            site = by_id.get(oom.get("site"))
            key = site_line(site, truth) if site else None
            oom_lines.add(key)
    lines = []
    for key in sorted(truth, key=lambda k: (k[0], k[1])):
        t = truth[key]
        got = reported.get(key, NOT_TRACED)
        lines.append({
            "file": key[0], "line": key[1], "text": t["text"],
            "expected": canonical(t["accepted"]), "reported": got,
            "accepted": got in t["accepted"],
            "leak_line": t["accepted"] == {"leak"},
            "oom_expected": t["oom"],
        })
    oom_problems = []
    for key, t in truth.items():
        if t["oom"] and key not in oom_lines:
            oom_problems.append("no OOM reported at %s:%d" % key)
    for key in oom_lines:
        if key is None:
            oom_problems.append("an OOM at a site with no ground-truth line")
        elif not truth[key]["oom"]:
            oom_problems.append("unexpected OOM at %s:%d" % key)
    return {"lines": lines, "unmatched": unmatched, "oom_problems": sorted(oom_problems)}


class Score:
    """Confusion matrix and leak precision/recall over ground-truth lines."""

    def __init__(self):
        self.matrix = collections.defaultdict(collections.Counter)
        self.tp = self.fp = self.fn = 0
        self.lines = self.not_accepted = 0
        self.oom_problems = 0
        self.program_failures = 0
        self.programs = 0

    def add(self, result):
        self.programs += 1
        for ln in result["lines"]:
            self.lines += 1
            self.matrix[ln["expected"]][ln["reported"]] += 1
            said_leak = ln["reported"] == "leak"
            if ln["leak_line"]:
                if said_leak:
                    self.tp += 1
                else:
                    self.fn += 1
            elif said_leak:
                self.fp += 1
            if not ln["accepted"]:
                self.not_accepted += 1
        self.oom_problems += len(result["oom_problems"])

    def precision(self):
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    def recall(self):
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    def leak_target(self):
        return self.fn == 0 and self.fp == 0

    def passed(self, leak_only=False):
        ok = self.leak_target() and self.program_failures == 0
        if not leak_only:
            ok = ok and self.not_accepted == 0 and self.oom_problems == 0
        return ok

    def columns(self):
        cols = set()
        for row in self.matrix.values():
            cols.update(row)
        return sorted(cols, key=rank)

    def rows(self):
        return sorted(self.matrix, key=lambda r: ([rank(v) for v in r.split("|")], r))

    def table(self):
        cols = self.columns()
        rows = self.rows()
        w0 = max([len("expected \\ reported")] + [len(r) for r in rows])
        widths = [max(len(c), 4) for c in cols]
        out = ["%-*s  %s" % (w0, "expected \\ reported",
                             "  ".join("%*s" % (w, c) for w, c in zip(widths, cols)))]
        for r in rows:
            out.append("%-*s  %s" % (w0, r, "  ".join(
                "%*s" % (w, self.matrix[r][c] or ".") for w, c in zip(widths, cols))))
        return "\n".join(out)

    def summary(self):
        def pct(x):
            return "n/a" if x is None else "%.3f" % x
        return ("leak precision %s (%d of %d lines reported leak are leak lines), recall %s "
                "(%d of %d leak lines reported leak); %d of %d lines outside their accepted set; "
                "%d OOM problems; %d program failures" % (
                    pct(self.precision()), self.tp, self.tp + self.fp, pct(self.recall()),
                    self.tp, self.tp + self.fn, self.not_accepted, self.lines,
                    self.oom_problems, self.program_failures))

    def to_json(self):
        return {"matrix": {r: dict(self.matrix[r]) for r in self.rows()},
                "columns": self.columns(),
                "leak": {"true_positive": self.tp, "false_positive": self.fp,
                         "false_negative": self.fn, "precision": self.precision(),
                         "recall": self.recall()},
                "lines": self.lines, "not_accepted": self.not_accepted,
                "oom_problems": self.oom_problems, "programs": self.programs,
                "program_failures": self.program_failures}


# --------------------------------------------------------------------------------------------
# Running programs


def clean_env(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPULEAK_") and k not in ("LD_PRELOAD", "FAKECUDA_LOG")}
    env.update(extra)
    return env


def run_program(job, cfg):
    """Runs one (program, interpreter) job; returns its result dict."""
    prog, suite, python = job["program"], job["suite"], job["python"]
    gen = cfg["corpus"]
    pdir = os.path.join(gen, prog["dir"])
    if prog["lang"] == "c":
        argv = [os.path.join(gen, prog["binary"])]
    else:
        argv = [python, "-B", os.path.join(pdir, prog["main"])]
    base_env = {
        "LD_LIBRARY_PATH": cfg["fake_dir"],
        "PYTHONPATH": os.path.join(SOURCE, "tests", "python_scenarios", "site-packages"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    base_env.update(prog.get("env") or {})
    result = {"name": prog["name"], "suite": suite, "problems": [], "eval": None}
    work = tempfile.mkdtemp(prefix="corpus-%s-" % prog["name"], dir=cfg["tmp"])
    try:
        def run(preload):
            env = dict(base_env)
            if preload:
                env["LD_PRELOAD"] = cfg["preload"]
                env["GPULEAK_OUTPUT"] = os.path.join(work, "trace.%p.bin")
            try:
                p = subprocess.run(argv, cwd=work, env=clean_env(env), stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=cfg["timeout"])
                return p.returncode, p.stdout.decode(errors="replace")
            except subprocess.TimeoutExpired:
                return "timeout", ""

        rc_plain, out_plain = run(False)
        rc, out = run(True)
        expect = prog.get("expect_rc", 0)
        if rc_plain != expect:
            result["problems"].append("exit status %s without the preload, expected %s: %s" % (
                rc_plain, expect, out_plain.strip()[-300:]))
        if rc != rc_plain:
            result["problems"].append("exit status %s under the preload, %s without it: %s" % (
                rc, rc_plain, out.strip()[-300:]))
        traces = sorted(glob.glob(os.path.join(work, "trace.*.bin")))
        if len(traces) != prog.get("processes", 1):
            result["problems"].append("%d traces, expected %d" % (
                len(traces), prog.get("processes", 1)))
        if traces:
            p = subprocess.run([cfg["report"], "--format", "json"] + traces,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=cfg["timeout"])
            if p.returncode != 0:
                result["problems"].append("gpuleak-report exit %d: %s" % (
                    p.returncode, p.stderr.decode(errors="replace")[-300:]))
            else:
                report = json.loads(p.stdout)
                truth = read_truth([os.path.join(pdir, s) for s in prog["sources"]])
                result["eval"] = evaluate(report, truth)
                if any(ln["reported"] == NOT_TRACED for ln in result["eval"]["lines"]):
                    result["diagnosis"] = diagnose(report, p.stderr.decode(errors="replace"), out)
                if cfg["keep"]:
                    kd = os.path.join(cfg["keep"], suite, prog["name"])
                    os.makedirs(kd, exist_ok=True)
                    with open(os.path.join(kd, "report.json"), "w") as f:
                        json.dump(report, f, indent=1)
                    for t in traces:
                        shutil.copy(t, kd)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return result


def diagnose(report, analyzer_stderr, preload_output):
    """What a run with "not traced" lines leaves to go on, printed with its mismatches (a rare
    failure seen in full ctest runs only, docs/verdict-corpus.md): the warnings, and every site
    with its innermost Python frames (else the innermost frames that have a file)."""
    out = []
    if analyzer_stderr.strip():
        out.append("gpuleak-report stderr: " + analyzer_stderr.strip()[-400:])
    if preload_output.strip():
        out.append("program output under the preload: " + preload_output.strip()[-400:])
    for proc in report_processes(report):
        summary = proc.get("summary") or {}
        out.append("process %s: %s events, %s allocations, complete %s, warnings %s" % (
            summary.get("pid"), summary.get("events"), summary.get("allocations"),
            summary.get("complete"), proc.get("warnings")))
        for site in proc.get("sites") or []:
            frames = site.get("frames") or []
            frames = ([f for f in frames if f.get("kind") == "python" and f.get("file")] or
                      [f for f in frames if f.get("file")])[:6]
            out.append("site %s (%s, %s allocations, no_python_state %s): %s" % (
                site.get("id"), site.get("verdict"), site.get("allocations"),
                site.get("no_python_state"),
                " <- ".join("%s:%s %s" % (os.path.basename(f["file"]), f.get("line"),
                                          f.get("function")) for f in frames) or "no file"))
    return out


def print_program(result, verbose):
    ev = result["eval"]
    bad = []
    if ev:
        for ln in ev["lines"]:
            if not ln["accepted"]:
                tag = ""
                if ln["leak_line"] and ln["reported"] != "leak":
                    tag = "  <- missed leak"
                elif not ln["leak_line"] and ln["reported"] == "leak":
                    tag = "  <- false leak"
                bad.append("    %s:%d expected %s, reported %s%s   %s" % (
                    ln["file"], ln["line"], ln["expected"], ln["reported"], tag, ln["text"]))
        bad += ["    " + p for p in ev["oom_problems"]]
    bad += ["    " + p for p in result["problems"]]
    if ev is None and not result["problems"]:
        bad.append("    no report")
    status = "ok" if not bad else "%d mismatches" % len(bad)
    print("  %-40s %s" % (result["name"], status))
    for b in bad:
        print(b)
    for d in result.get("diagnosis") or []:
        print("      " + d)
    if verbose and ev and ev["unmatched"]:
        for s in ev["unmatched"]:
            h = s.get("headline") or {}
            print("    (site %s, %s, maps to no ground-truth line: %s:%s)" % (
                s.get("id"), s.get("verdict"), h.get("file"), h.get("line")))


def find_suites(args):
    """[(suite label, python executable or None for C)]; exits 77 when an asked-for interpreter
    is absent."""
    suites = []
    if args.lang in ("c", "all") and not args.python and not args.interpreter:
        suites.append(("c", None))
    if args.lang in ("py", "all"):
        if args.python:
            for exe in args.python:
                suites.append(("py:" + exe, exe))
        elif args.interpreter:
            for which in args.interpreter:
                found = pythons.find(which, args.pyenv_root)
                if not found:
                    print("run_corpus: no Python %s here (skipped)" % which)
                    sys.exit(pythons.SKIP)
                for label, exe in found:
                    suites.append(("py" + label if which != "system" else "py_debian", exe))
        else:
            for which in pythons.MINORS + ["system"]:
                for label, exe in pythons.find(which, args.pyenv_root):
                    suites.append(("py" + label if which != "system" else "py_debian", exe))
    return suites


def run_corpus(args):
    build = os.path.abspath(args.build)
    corpus = os.path.abspath(args.corpus or os.path.join(build, "tests", "verdict_corpus", "gen"))
    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = json.load(f)
    cfg = {"corpus": corpus, "preload": os.path.join(build, "lib", "libgpuleak.so"),
           "report": os.path.join(build, "bin", "gpuleak-report"),
           "fake_dir": os.path.join(build, "tests", "fake"), "timeout": args.timeout,
           "keep": os.path.abspath(args.keep) if args.keep else None,
           "tmp": tempfile.mkdtemp(prefix="gpuleak-corpus-")}
    for what in ("preload", "report"):
        if not os.path.exists(cfg[what]):
            sys.exit("run_corpus: %s not found (build first)" % cfg[what])
    suites = find_suites(args)
    only = re.compile(args.only) if args.only else None
    stale = []
    for prog in manifest["programs"]:
        if prog["lang"] == "c" and any(s == "c" for s, _ in suites):
            exe = os.path.join(corpus, prog["binary"])
            srcs = [os.path.join(corpus, prog["dir"], f) for f in prog["sources"]]
            if not os.path.exists(exe) or any(
                    os.path.getmtime(f) > os.path.getmtime(exe) for f in srcs):
                stale.append(prog["name"])
    if stale:
        sys.exit("run_corpus: %d C programs are missing or older than their sources (%s ...): "
                 "cmake --build %s --target verdict_corpus" % (len(stale), stale[0], build))
    jobs = []
    for suite, python in suites:
        for prog in manifest["programs"]:
            if prog["lang"] != ("c" if python is None else "py"):
                continue
            if only and not only.search(prog["name"]):
                continue
            jobs.append({"program": prog, "suite": suite, "python": python})
    print("verdict corpus: generator v%d, seed %d, %d programs; %d runs on %s, %d jobs at once" % (
        manifest["generator_version"], manifest["seed"], len(manifest["programs"]), len(jobs),
        ", ".join(s for s, _ in suites) or "nothing", args.jobs))
    start = time.monotonic()
    results = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(run_program, j, cfg): j for j in jobs}
            for fut in concurrent.futures.as_completed(futures):
                r = fut.result()
                results[(r["suite"], r["name"])] = r
    finally:
        shutil.rmtree(cfg["tmp"], ignore_errors=True)
    elapsed = time.monotonic() - start
    scores = {}
    all_ok = True
    out_json = {"generator_version": manifest["generator_version"], "seed": manifest["seed"],
                "suites": {}}
    for suite, _ in suites:
        score = Score()
        print("\n== %s ==" % suite)
        names = [j["program"]["name"] for j in jobs if j["suite"] == suite]
        for name in names:
            r = results[(suite, name)]
            print_program(r, args.verbose)
            if r["eval"]:
                score.add(r["eval"])
            if r["problems"] or r["eval"] is None:
                score.program_failures += 1
        scores[suite] = score
        print("\nconfusion matrix, %s (rows: ground truth per line; columns: reported):" % suite)
        print(score.table())
        print(score.summary())
        ok = score.passed(args.leak_only)
        print("%s: leak target %s; accepted sets %s -> %s" % (
            suite, "met" if score.leak_target() else "NOT met",
            "all met" if score.not_accepted == 0 else "%d lines outside" % score.not_accepted,
            "PASS" if ok else "FAIL"))
        all_ok = all_ok and ok
        out_json["suites"][suite] = score.to_json()
        out_json["suites"][suite]["mismatches"] = [
            dict(program=r["name"], **ln) for name in names
            for r in [results[(suite, name)]] if r["eval"]
            for ln in r["eval"]["lines"] if not ln["accepted"]]
    print("\ncorpus time: %.1f s for %d runs (%d jobs at once)" % (elapsed, len(jobs), args.jobs))
    out_json["seconds"] = elapsed
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out_json, f, indent=1, ensure_ascii=False)
    return 0 if all_ok else 1


# --------------------------------------------------------------------------------------------
# Self-test: the matching and scoring logic on a handmade fixture (selftest/).


def selftest():
    d = os.path.join(HERE, "selftest")
    truth = read_truth([os.path.join(d, "fixture_prog.py"), os.path.join(d, "fixture_util.c")])
    with open(os.path.join(d, "expected.json")) as f:
        expected = json.load(f)
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append("%s: got %r, want %r" % (what, got, want))

    check("ground-truth lines", sorted("%s:%d" % k for k in truth), expected["truth_lines"])
    for case in expected["cases"]:
        with open(os.path.join(d, case["report"])) as f:
            report = json.load(f)
        ev = evaluate(report, truth)
        score = Score()
        score.add(ev)
        name = case["report"]
        check(name + " per line", {"%s:%d" % (l["file"], l["line"]): l["reported"]
                                   for l in ev["lines"]}, case["reported"])
        check(name + " matrix", score.to_json()["matrix"], case["matrix"])
        check(name + " leak counts", [score.tp, score.fp, score.fn], case["tp_fp_fn"])
        check(name + " not accepted", score.not_accepted, case["not_accepted"])
        check(name + " oom problems", ev["oom_problems"], case["oom_problems"])
        check(name + " unmatched sites", sorted(s["id"] for s in ev["unmatched"]),
              case["unmatched"])
        check(name + " leak target", score.leak_target(), case["leak_target"])
        check(name + " passes", score.passed(), case["passes"])
        check(name + " passes --leak-only", score.passed(leak_only=True),
              case["passes_leak_only"])
    check("rank of an unknown verdict", sorted(["transient", "oversized", "leak", "growth",
                                                "accumulation"], key=rank),
          ["leak", "accumulation", "oversized", "growth", "transient"])
    check("canonical accepted set", canonical({"transient", "retained"}), "retained|transient")
    for f in failures:
        print("corpus selftest: FAIL " + f)
    print("corpus selftest: %d cases, %s" % (len(expected["cases"]),
                                             "FAIL" if failures else "ok"))
    return 1 if failures else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(SOURCE, "build"),
                    help="the CMake build directory (default: SOURCE/build)")
    ap.add_argument("--corpus",
                    help="the generated corpus (default: BUILD/tests/verdict_corpus/gen)")
    ap.add_argument("--lang", choices=("c", "py", "all"), default="all")
    ap.add_argument("--interpreter", action="append",
                    help="a CPython by minor version (3.12) or `system`; repeatable")
    ap.add_argument("--python", action="append", help="a Python executable; repeatable")
    ap.add_argument("--pyenv-root", default=pythons.default_pyenv_root())
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--only", help="regular expression on program names")
    ap.add_argument("--json", help="write the matrices and mismatches here")
    ap.add_argument("--keep", help="keep each program's traces and report under this directory")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per program run")
    ap.add_argument("--leak-only", action="store_true",
                    help="fail only on the leak target (accepted sets and OOMs still printed)")
    ap.add_argument("--verbose", action="store_true", help="also list sites with no ground truth")
    ap.add_argument("--selftest", action="store_true")
    args = ap.parse_args(argv)
    if args.selftest:
        return selftest()
    return run_corpus(args)


if __name__ == "__main__":
    sys.exit(main())
