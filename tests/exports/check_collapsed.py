#!/usr/bin/env python3
"""Reads collapsed stacks as flamegraph.pl and speedscope do (one "frame;frame;... COUNT" per line,
the count after the last run of spaces, frames split at ';', outermost first) and checks them
against the JSON report: the counts add up to the report's total for the metric, and the leaking
site's innermost frame carries its bytes.
Usage: check_collapsed.py STACKS REPORT.json METRIC LEAK_FUNCTION"""
import json
import re
import sys

LINE = re.compile(r"^(.*)\s+?(\d+(?:\.\d*)?)$")  # flamegraph.pl's own pattern
FIELD = {"live-end": "live_bytes_end", "allocated": "bytes_allocated", "allocations": "allocations",
         "peak": "live_bytes_at_peak", "live-count": "live_count_end"}


def main():
    path, report_path, metric, leak_function = sys.argv[1:5]
    report = json.load(open(report_path))
    procs = report["processes"] if "processes" in report else [report]
    field = FIELD[metric]
    failures = []
    total, by_leaf = 0, {}
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        m = LINE.match(line)
        if not m:
            failures.append(f"line {n} is not 'stack count': {line[:100]!r}")
            continue
        frames = m.group(1).split(";")
        if any(not f for f in frames):
            failures.append(f"line {n} has an empty frame")
        total += int(m.group(2))
        leaf = frames[-1].split(" (")[0]
        by_leaf[leaf] = by_leaf.get(leaf, 0) + int(m.group(2))
    want = sum(s[field] for p in procs for s in p["sites"])
    if total != want:
        failures.append(f"counts add up to {total}, the report's {field} to {want}")
    leak = [s for p in procs for s in p["sites"]
            if s["verdict"] == "leak" and s["frames"] and s["frames"][0]["function"] == leak_function]
    if not leak:
        failures.append(f"the report has no leak at {leak_function}")
    elif by_leaf.get(leak_function, 0) < sum(s[field] for s in leak):
        failures.append(f"{leak_function} carries {by_leaf.get(leak_function, 0)}, "
                        f"its sites {sum(s[field] for s in leak)}")
    for f in failures:
        print("FAIL " + f)
    print(f"check_collapsed: total {total}, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
