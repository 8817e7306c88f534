#!/usr/bin/env python3
"""Prints gpu-validate.sh's result rows (tab-separated: check, mode, expected, observed, verdict) as
one aligned table with a count line under it. Exit status 1 if any row is a FAIL, else 0.

usage: table.py RESULTS_TSV
"""
import sys

HEADER = ("check", "mode", "expected", "observed", "verdict")
WIDEST = 40  # a longer cell is cut, the full text stays in the TSV and the log


def cell(text):
    return text if len(text) <= WIDEST else text[: WIDEST - 3] + "..."


def main(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == len(HEADER):
                rows.append(tuple(cell(x) for x in fields))
            elif line.strip():
                rows.append(("malformed row", "-", "-", cell(line.strip()), "FAIL"))
    widths = [max(len(r[i]) for r in [HEADER] + rows) for i in range(len(HEADER))]

    def show(r):
        print(" | ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip())

    show(HEADER)
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        show(r)
    counts = {v: sum(1 for r in rows if r[4] == v) for v in ("PASS", "FAIL", "SKIP")}
    print(f"\n{counts['PASS']} PASS, {counts['FAIL']} FAIL, {counts['SKIP']} SKIP")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
