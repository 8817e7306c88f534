#!/usr/bin/env python3
"""Runs frames_scenarios.py under every CPython it can find and prints one row per interpreter.

usage: run_frames.py --lib LIBPYWALK [--only VERSION] [--scenario NAME] [--bench] [--pyenv-root DIR]

VERSION is a minor version ("3.12") or "system" (/usr/bin/python3). Exit status: 0 all passed,
1 a mismatch, 77 (ctest's skip code) when --only names an interpreter that is not installed.
"""
import argparse
import json
import os
import subprocess
import sys

import pythons

SCENARIOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "frames_scenarios.py")


def run_one(label, exe, lib, bench, scenario):
    cmd = [exe, SCENARIOS, lib] + (["--bench"] if bench else [])
    cmd += ["--scenario", scenario] if scenario else []
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=300, env=env)
    except subprocess.TimeoutExpired:
        return {"label": label, "ok": False, "error": "timed out"}
    rows, summary, final = [], None, None
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if obj.get("summary"):
            summary = obj
        elif obj.get("finalizing"):
            final = obj
        else:
            rows.append(obj)
    # Printed from a __del__ during interpreter shutdown, after the summary.
    if final is not None:
        ok = final["frames"] == "[]" and final["warned"]
        rows.append({"scenario": "finalization", "ok": ok, "checks": 1,
                     "failures": [] if ok else [final]})
        if summary is not None:
            summary["total"] += 1
            summary["passed"] += ok
    if summary is None:
        stderr = proc.stderr.decode("utf-8", "replace")[-2000:]
        return {"label": label, "ok": False,
                "error": "no summary (exit %d): %s" % (proc.returncode, stderr)}
    return {"label": label, "ok": proc.returncode == 0 and summary["passed"] == summary["total"],
            "rows": rows, "summary": summary}


def layout_of(summary):
    info = summary.get("info") or {}
    return info.get("layout", "none")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--only")
    parser.add_argument("--scenario", help="run only this scenario")
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--pyenv-root", default=pythons.default_pyenv_root())
    args = parser.parse_args()

    wanted = [args.only] if args.only else pythons.MINORS + ["system"]
    results, skipped = [], []
    for minor in wanted:
        found = pythons.find(minor, args.pyenv_root)
        if not found:
            skipped.append(minor)
            continue
        for label, exe in found:
            result = run_one(label, exe, args.lib, args.bench, args.scenario)
            if label == "system" and "summary" in result:
                result["label"] = "system-" + result["summary"]["python"]
            results.append(result)

    header = "%-16s %-14s %-10s %-6s" % ("interpreter", "layout", "scenarios", "result")
    if args.bench:
        header += " %12s %12s %12s" % ("ns@20fr", "ns@100fr", "ns no-py")
    print(header)
    for r in results:
        if "summary" not in r:
            print("%-16s %-14s %-10s %-6s %s" % (r["label"], "?", "-", "FAIL", r["error"]))
            continue
        s = r["summary"]
        line = "%-16s %-14s %-10s %-6s" % (r["label"], layout_of(s),
                                           "%d/%d" % (s["passed"], s["total"]),
                                           "PASS" if r["ok"] else "FAIL")
        if args.bench and "bench" in s:
            cells = []
            for b in s["bench"]:
                cell = str(b["ns_per_capture"])
                cells.append(cell + "(%d)" % b["frames"] if b["frames"] else cell)
            line += " %12s %12s %12s" % tuple(cells)
        print(line)
    for minor in skipped:
        print("SKIP %s: not installed" % minor)
    for r in results:
        for row in r.get("rows", []):
            if not row["ok"]:
                print("FAIL %s %s: %s" % (r["label"], row["scenario"],
                                          json.dumps(row["failures"], ensure_ascii=False)[:3000]))
        warnings = r.get("summary", {}).get("warnings", "").strip()
        if warnings:
            print("note: %s warned (expected from the subinterpreter/finalization scenarios): %s"
                  % (r["label"], warnings.replace("\n", " | ")))

    if any(not r["ok"] for r in results):
        return 1
    if not results:
        return pythons.SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
