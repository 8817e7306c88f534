#!/usr/bin/env python3
"""Generates the verdict benchmark corpus (docs/verdict-corpus.md): ground-truth programs in C and
in Python, each field-report pattern in a leaky and a fixed variant, embedded in program shapes that
are randomized from a seed (loops in sequence, nested loops, threads, processes, allocation
helpers in the user's own tree, a variable number of allocations per iteration, a warm-up phase,
noise).

Every allocating line of a program's own code carries its ground truth in a comment,
`EXPECT: <verdict>[|<verdict>...] [OOM]`; lines inside allocation helpers carry `HELPER` and are
not judged (the helper's call line carries the EXPECT). The runner (run_corpus.py) reads the
ground truth from the sources, never from here.

Its parts: corpus_model.py (verdict words, patterns, shapes drawn from the seed),
source_emitter.py (lines with their ground truth, program headers), py_library.py, py_patterns.py
and render_py.py (Python programs), c_library.py, c_patterns.py and render_c.py (C programs).

Standard library only. Usage: generate.py --seed N --out DIR [--per-pattern K] [--list]
Writes DIR/manifest.json, DIR/programs.cmake, DIR/c/NAME/*, DIR/py/NAME/*; files whose content did
not change are left alone (no rebuilds), programs that are no longer generated are removed.
"""
import argparse
import json
import os
import random
import shutil
import sys

from corpus_model import (
    DEFAULT_SEED, EXPECT_RE, GENERATOR_VERSION, PATTERNS, VERDICTS, coverage, make_shape,
    shape_summary)
from render_py import render_py
from render_c import render_c


def build_corpus(seed, per_pattern=1):
    rng = random.Random(seed)
    programs = []
    for lang in ("c", "py"):
        for attempt in range(200):
            lrng = random.Random("%d-%s-%d" % (seed, lang, attempt))
            shapes = []
            for p in PATTERNS:
                for _ in range(per_pattern):
                    shapes.append((p, make_shape(lrng, lang, p)))
            if not coverage(shapes):
                break
        else:
            raise SystemExit("generate.py: no shape set covers %s with seed %d: %s" % (
                lang, seed, coverage(shapes)))
        index = {}
        for p, s in shapes:
            n = index.get(p.key, 0)
            index[p.key] = n + 1
            for variant in ("leaky", "fixed"):
                suffix = "" if per_pattern == 1 else "%d_" % n
                name = "%s_%s_%s%s" % (lang, p.key, suffix, variant)
                prog = {"name": name, "lang": lang, "pattern": p.key, "variant": variant,
                        "seed": seed, "pattern_obj": p, "shape_obj": s,
                        "helper_module": rng.choice(("tensorutil", "devmem", "buffers", "memlib"))}
                programs.append(prog)
    return programs


def manifest_entry(prog):
    p, s = prog["pattern_obj"], prog["shape_obj"]
    lang, name = prog["lang"], prog["name"]
    files = render_c(prog) if lang == "c" else render_py(prog)
    env = {}
    expect_rc = 0
    if p.key == "oversized_buffer":
        env["FAKECUDA_CAPACITY"] = str(s.device_capacity)
        expect_rc = 1 if prog["variant"] == "leaky" else 0
    if p.key == "torch_load_ranks":
        env["FAKECUDA_DEVICES"] = str(s.ranks)
    entry = {
        "name": name, "lang": lang, "pattern": p.key, "variant": prog["variant"],
        "title": p.title, "shape": shape_summary(p, s),
        "dir": "%s/%s" % (lang, name),
        "sources": sorted(files),
        "main": "%s.%s" % (name, "c" if lang == "c" else "py"),
        "env": env, "expect_rc": expect_rc,
        "processes": s.ranks if p.key == "torch_load_ranks" else 1,
    }
    if lang == "c":
        entry["binary"] = "bin/%s" % name
        entry["compile"] = [f for f in sorted(files) if f.endswith(".c")]
    return entry, files


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return False
    except OSError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return True


def check_annotations(name, files):
    """The generator's own rules: verdicts are known words, leak lines are exactly `leak`, no clean
    line accepts `leak`, every annotated Python line compiles."""
    for fname, text in files.items():
        for i, line in enumerate(text.split("\n"), 1):
            m = EXPECT_RE.search(line)
            if m:
                parts = m.group(1).split("|")
                assert all(x in VERDICTS for x in parts), (name, fname, i, line)
                assert "leak" not in parts or parts == ["leak"], (name, fname, i, line)
        if fname.endswith(".py"):
            compile(text, fname, "exec")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-pattern", type=int, default=1,
                    help="shapes per pattern and language (each rendered leaky and fixed)")
    ap.add_argument("--list", action="store_true", help="print the programs and their shapes")
    args = ap.parse_args(argv)
    out = os.path.abspath(args.out)
    programs = build_corpus(args.seed, args.per_pattern)
    manifest = {"generator_version": GENERATOR_VERSION, "seed": args.seed, "programs": []}
    keep = set()
    for prog in programs:
        entry, files = manifest_entry(prog)
        check_annotations(entry["name"], files)
        manifest["programs"].append(entry)
        keep.add(entry["dir"])
        for fname, text in files.items():
            write_if_changed(os.path.join(out, entry["dir"], fname), text)
        if args.list:
            print("%-40s %s" % (entry["name"], json.dumps(entry["shape"], ensure_ascii=False)))
    for lang in ("c", "py"):
        d = os.path.join(out, lang)
        for sub in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if "%s/%s" % (lang, sub) not in keep:
                shutil.rmtree(os.path.join(d, sub))
    write_if_changed(os.path.join(out, "manifest.json"),
                     json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    cm = ["# Generated by tests/verdict_corpus/generate.py (seed %d): the corpus's C programs." %
          args.seed, "set(GPULEAK_CORPUS_C_PROGRAMS"]
    cm += ["  %s" % e["name"] for e in manifest["programs"] if e["lang"] == "c"]
    cm.append(")")
    for e in manifest["programs"]:
        if e["lang"] == "c":
            cm.append("set(GPULEAK_CORPUS_SOURCES_%s %s)" % (
                e["name"], " ".join("%s/%s" % (e["dir"], f) for f in e["compile"])))
    write_if_changed(os.path.join(out, "programs.cmake"), "\n".join(cm) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
