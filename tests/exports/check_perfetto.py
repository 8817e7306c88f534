#!/usr/bin/env python3
"""Checks a Chrome/Perfetto trace written by `gpuleak-report --format perfetto` against the rules
of the Trace Event Format (the JSON that ui.perfetto.dev and chrome://tracing import), and its
numbers against the JSON report of the same traces:
  - a JSON object with a traceEvents array, displayTimeUnit "ms" or "ns";
  - every event has a known phase, a name, integer pid and tid, and (but metadata) a number ts >= 0;
  - counters (C) carry numeric args and each counter track's times never go back;
  - instant events (i) have scope g, p or t; metadata (M) only the known names, with their args;
  - durations (X) are >= 0, begin/end (B/E) pairs balance per thread;
  - per process: the device tracks end at what the report says is live at the end and reach its
    peak; the leaking site's track ends at its live bytes; per loop of the report (loops[]), one
    iteration instant per iteration on a track of that loop's own, named after it, the main loop's
    (iterations.loop) first; one OOM instant per failed allocation.
Usage: check_perfetto.py TRACE.json REPORT.json   (exit 0 ok, 1 a rule broken)"""
import json
import sys

PHASES = set("BEXiICMbensftPONDRc()") | {"I"}
METADATA = {"process_name", "process_labels", "process_sort_index", "thread_name",
            "thread_sort_index"}


def main():
    trace_path, report_path = sys.argv[1], sys.argv[2]
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
        return cond

    with open(trace_path, encoding="utf-8") as f:
        text = f.read()
    # Strict JSON: no NaN/Infinity (browsers' JSON.parse rejects them).
    trace = json.loads(text, parse_constant=lambda c: failures.append("non-JSON constant " + c))
    report = json.load(open(report_path))
    procs = report["processes"] if "processes" in report else [report]
    check(isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list),
          "top level is an object with a traceEvents array")
    check(trace.get("displayTimeUnit", "ms") in ("ms", "ns"), "displayTimeUnit is ms or ns")
    events = trace["traceEvents"]
    counters = {}  # (pid, name) -> [(ts, value)]
    stacks = {}
    instants = {}
    names = {}
    thread_names = {}
    thread_sort = {}
    for i, e in enumerate(events):
        where = f"event {i}"
        if not check(isinstance(e, dict), where + " is an object"):
            continue
        ph = e.get("ph")
        check(ph in PHASES, f"{where}: known phase ({ph!r})")
        check(isinstance(e.get("name"), str), f"{where}: a name")
        check(isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int),
              f"{where}: integer pid and tid")
        if ph != "M":
            ts = e.get("ts")
            check(isinstance(ts, (int, float)) and ts >= 0, f"{where}: ts is a number >= 0")
        args = e.get("args", {})
        check(isinstance(args, dict), f"{where}: args is an object")
        if ph == "C":
            check(args and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                               for v in args.values()), f"{where}: counter args are numbers")
            track = counters.setdefault((e["pid"], e["name"]), [])
            if track:
                check(e["ts"] >= track[-1][0], f"{where}: counter {e['name']!r} goes back in time")
            track.append((e["ts"], sum(args.values())))
        elif ph in ("i", "I"):
            check(e.get("s", "t") in ("g", "p", "t"), f"{where}: instant scope g, p or t")
            instants.setdefault((e["pid"], e.get("cat", "")), []).append(e)
        elif ph == "M":
            check(e["name"] in METADATA, f"{where}: known metadata {e['name']!r}")
            if e["name"].endswith("_name"):
                check(isinstance(args.get("name"), str), f"{where}: metadata name")
                if e["name"] == "process_name":
                    names[e["pid"]] = args.get("name")
                else:
                    thread_names[(e["pid"], e["tid"])] = args.get("name")
            if e["name"].endswith("_sort_index"):
                check(isinstance(args.get("sort_index"), int), f"{where}: sort_index")
                if e["name"] == "thread_sort_index":
                    thread_sort[(e["pid"], e["tid"])] = args.get("sort_index")
        elif ph == "X":
            check(isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, f"{where}: dur >= 0")
        elif ph == "B":
            stacks.setdefault((e["pid"], e["tid"]), []).append(e["name"])
        elif ph == "E":
            check(stacks.get((e["pid"], e["tid"])), f"{where}: E without B")
            if stacks.get((e["pid"], e["tid"])):
                stacks[(e["pid"], e["tid"])].pop()
    for key, st in stacks.items():
        check(not st, f"unclosed B events on {key}")

    for p in procs:
        pid = p["summary"]["pid"]
        s = p["summary"]
        check(pid in names, f"pid {pid}: a process_name")
        dev = {n: v for (q, n), v in counters.items() if q == pid and n.startswith("GPU ")}
        check(dev, f"pid {pid}: a counter track per device")
        end = sum(v[-1][1] for v in dev.values())
        check(end == s["live_bytes_end"],
              f"pid {pid}: device tracks end at {end}, the report says {s['live_bytes_end']}")
        top = max((x for v in dev.values() for _, x in v), default=0)
        if len(dev) == 1:
            check(top == s["peak_bytes"], f"pid {pid}: the device track peaks at {top}, the report"
                  f" says {s['peak_bytes']}")
        else:
            check(top <= s["peak_bytes"], f"pid {pid}: a device track above the peak")
        for site in p["sites"]:
            if site["verdict"] != "leak":
                continue
            track = next((v for (q, n), v in counters.items()
                          if q == pid and n.startswith(f"site {site['id']}: ")), None)
            if check(track is not None, f"pid {pid}: a counter track for leaking site {site['id']}"):
                check(track[-1][1] == site["live_bytes_end"],
                      f"pid {pid}: site {site['id']} ends at {track[-1][1]}, the report says "
                      f"{site['live_bytes_end']}")
        its = instants.get((pid, "iteration"), [])
        windowed = any(n.startswith("window:") for n in p.get("notes", []))
        by_loop = {}
        for e in its:
            loop = e.get("args", {}).get("loop")
            check(isinstance(loop, int), f"pid {pid}: an iteration instant without its loop")
            by_loop.setdefault(loop, []).append(e)
        loops = p.get("loops", [])
        check(set(by_loop) <= {l["id"] for l in loops},
              f"pid {pid}: iteration instants of loops the report does not have: {sorted(by_loop)}")
        for l in loops:
            marks = by_loop.get(l["id"], [])
            n_it = len(marks)
            if windowed:
                check(n_it <= l["iterations"], f"pid {pid} loop {l['id']}: more iteration instants"
                      " than iterations")
            elif l["iterations"] <= 4096:
                check(n_it == l["iterations"], f"pid {pid} loop {l['id']}: {n_it} iteration "
                      f"instants, {l['iterations']} iterations")
            # Numbered 1, 2, ... in time order, on one track of their own named after the loop.
            check([e["args"]["iteration"] for e in marks] == sorted(e["args"]["iteration"] for e in marks),
                  f"pid {pid} loop {l['id']}: iterations out of order")
            tids = {e["tid"] for e in marks}
            check(len(tids) <= 1, f"pid {pid} loop {l['id']}: iterations on {len(tids)} tracks")
            for tid in tids:
                name = thread_names.get((pid, tid), "")
                main = l["id"] == p["iterations"].get("loop")
                check(name.startswith("main loop: " if main else "loop: "),
                      f"pid {pid} loop {l['id']}: its track is named {name!r}")
                if main:
                    check(thread_sort.get((pid, tid)) == 0,
                          f"pid {pid}: the main loop's track is not sorted first")
        main = p["iterations"].get("loop")
        if main is not None and not windowed and report_iterations(p) <= 4096:
            n_main = len(by_loop.get(main, []))
            check(n_main == report_iterations(p),
                  f"pid {pid}: {n_main} iteration instants of the main loop, "
                  f"{report_iterations(p)} iterations")
        n_oom = len(instants.get((pid, "oom"), []))
        check(n_oom == min(s["failed_allocations"], 1000),
              f"pid {pid}: {n_oom} OOM instants, {s['failed_allocations']} failed allocations")
        if p["iterations"]["markers"] <= 4096 and not windowed:
            n_mark = len(instants.get((pid, "marker"), []))
            check(n_mark == p["iterations"]["markers"],
                  f"pid {pid}: {n_mark} marker instants, {p['iterations']['markers']} markers")
    for f in failures[:30]:
        print("FAIL " + f)
    print(f"check_perfetto: {len(events)} events, {len(counters)} counter tracks, "
          f"{len(failures)} problems")
    return 1 if failures else 0


def report_iterations(p):
    return p["iterations"]["count"]


if __name__ == "__main__":
    sys.exit(main())
