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

Standard library only. Usage: generate.py --seed N --out DIR [--per-pattern K] [--list]
Writes DIR/manifest.json, DIR/programs.cmake, DIR/c/NAME/*, DIR/py/NAME/*; files whose content did
not change are left alone (no rebuilds), programs that are no longer generated are removed.
"""
import argparse
import json
import os
import random
import re
import shutil
import sys

GENERATOR_VERSION = 4
DEFAULT_SEED = 1207
VERDICTS = ("leak", "accumulation", "growth", "retained", "transient")
# The annotation at the end of a line, as run_corpus.py reads it.
EXPECT_RE = re.compile(r"\s(?:#|//) EXPECT: ([a-z|]+)( OOM)?$")
# Bound temporaries rebound by the next iteration (Python), or a model freed at the end of its own
# fold: freed within an iteration or one later, both honest.
RT = "retained|transient"

# --------------------------------------------------------------------------------------------
# Patterns. threads / nested: whether the shape may put the pattern in worker threads or inside
# an epoch loop ("inherent": always nested). styles: "func" (the loop body is a step function
# whose locals die when it returns) and "inline" (the body is written in the loop).


class Pattern:
    def __init__(self, key, title, source, leaky, fixed, threads=True, nested=True,
                 styles=("func", "inline"), reps=True):
        self.key, self.title, self.source = key, title, source
        self.leaky, self.fixed = leaky, fixed
        self.threads, self.nested, self.styles, self.reps = threads, nested, styles, reps


PATTERNS = [
    Pattern("append_output", "losses.append(output): the kept output holds its graph",
            "000, 问题一 and the opening example",
            "appends the output tensor (with its graph) every iteration: leak",
            "appends output.item(): the output dies with its iteration"),
    Pattern("loss_sum", "loss_sum += loss chains every iteration's graph",
            "000, 问题一 (知乎: loss没写好，显存爆炸)",
            "adds the loss tensor: each sum keeps the previous sum and the loss: leak",
            "adds loss.item(): no tensor is kept"),
    Pattern("kept_after_loop", "the loop variable is used after the loop",
            "000, 问题二 and `y = x + ...` after the loop",
            "x and output survive each iteration and the last pair is kept to the end: retained",
            "del x, output at the end of each iteration: transient",
            styles=("inline",)),
    Pattern("model_per_fold", "a model built per cross-validation fold and never freed",
            "000, 问题五 (pretrained weights, 几折过后显存就爆炸了)",
            "every fold's model is kept: leak",
            "del model; gc.collect() after each fold", nested="inherent"),
    Pattern("torch_load_ranks", "torch.load onto cuda:0 in every rank",
            "000, 问题四 (torch.load 默认把数据放到0卡上)",
            "every rank loads the checkpoint onto device 0 and keeps it: retained",
            "map_location=the rank's device, released after loading: transient",
            threads=False, nested=False, reps=False),
    Pattern("eval_no_grad", "evaluation without no_grad keeps the graph",
            "000, 问题六 (不做backward，中间变量会保存)",
            "appends the loss tensor: graph kept forever: leak",
            "appends loss.item() (graph kept until the batch ends) or runs under no_grad",
            threads=False, nested=False),
    Pattern("oversized_buffer", "a buffer 65x too large because the batch size was not passed",
            "000, 写在最前面的话 (开了一个65倍图像尺寸的空间)",
            "the perturbation buffer is sized for 65 images; a large input makes it fail: OOM",
            "the batch size is passed", threads=False, nested=False, styles=("func",),
            reps=False),
    Pattern("cache_growth", "a rare huge input grows a kept workspace",
            "003 (卷积的输入尺寸变化，占用的显存也不释放了)",
            "the cache keeps the largest workspace seen: bounded count, growing size: growth",
            "a workspace per batch, or one sized for the largest input up front", reps=False),
    Pattern("lru_cache", "a memo cache of embeddings",
            "the LRU scenario of tests/scenarios, as a Python idiom",
            "no eviction: every batch's entry is kept: leak",
            "evicts beyond its capacity: retained"),
    Pattern("grad_accumulation", "gradient accumulation over micro-batches",
            "the sawtooth scenario of tests/scenarios",
            "the pending micro-batch losses are never cleared: leak",
            "cleared after each optimizer step (sawtooth): retained"),
    Pattern("epoch_accumulation", "outputs collected through an epoch",
            "issue 12: memory that accumulates through a loop and is freed after it",
            "every epoch's outputs are also kept in a history: leak",
            "the epoch's list is cleared after the epoch: accumulation", nested="inherent"),
]
PATTERN = {p.key: p for p in PATTERNS}


def tmp_truth(style, in_reps, deleted=False):
    """A tensor bound to a local in the loop body and kept by nothing else."""
    if deleted or (style == "func" and not in_reps):
        return "transient"  # dies when the step function returns, or at its del
    return RT  # lives until the name is rebound in the next iteration


# --------------------------------------------------------------------------------------------
# Shapes


class Shape:
    pass


def rsize(rng, lo, hi, align=16):
    return rng.randrange(lo // align, hi // align) * align + rng.choice((0, 0, 4, 8, 12))


def make_noise(rng, phases):
    n = rng.choice((0, 1, 2, 2, 3))
    noise = []
    loops = [p for p in phases]
    for _ in range(n):
        counts = [rng.randint(0, 3) for _ in range(rng.randint(4, 9))]
        counts[0] = rng.randint(1, 3)  # step 0 allocates: every noise line runs at least once
        noise.append({
            "sizes": [rsize(rng, 4096, 1536 * 1024) for _ in range(rng.randint(3, 6))],
            "counts": counts,
            "phases": sorted(rng.sample(loops, rng.randint(1, len(loops)))),
        })
    return noise


def make_shape(rng, lang, p):
    s = Shape()
    s.width = rsize(rng, 64 * 1024, 512 * 1024, 1024)
    s.batch = rsize(rng, 32 * 1024, 1024 * 1024, 1024)
    s.helpers = rng.random() < 0.5
    s.helper_buf = rng.choice(("empty", "tensor_class", "allocator")) if s.helpers else "empty"
    s.threads = 1
    s.one_leaky_thread = False
    if p.threads and rng.random() < 0.45:
        s.threads = rng.randint(2, 8)
        s.one_leaky_thread = rng.random() < 0.4
    s.style = rng.choice(p.styles)
    s.epochs = 1
    if p.key == "model_per_fold":  # a leak across folds needs a few of them
        s.epochs = rng.randint(4, 8)
        s.iterations = rng.randint(3, max(4, 60 // s.epochs))
    elif p.key == "epoch_accumulation":
        # An epoch of a few batches, filled then released, is what a gradient-accumulation
        # sawtooth of a few micro-batches looks like (retained): an epoch runs at least 8.
        s.epochs = rng.randint(2, 5)
        s.iterations = rng.randint(8, max(8, 60 // s.epochs))
    elif p.nested == "inherent" or (p.nested and rng.random() < 0.4):
        s.epochs = rng.randint(2, 5)
        s.iterations = rng.randint(max(4, 12 // s.epochs), max(6, 60 // s.epochs))
    else:
        s.iterations = rng.randint(12, 60)
    s.reps = None
    if p.reps and rng.random() < 0.4:
        s.reps = [rng.randint(1, 3) for _ in range(rng.randint(3, 7))]
        s.reps[0], s.reps[1] = 1, rng.randint(2, 3)
    # Loops in sequence: the pattern's and 0-2 clean ones, in random order; a warm-up first.
    clean = rng.sample(["train", "eval"], rng.choice((0, 1, 1, 2)))
    phases = clean + ["pattern"]
    rng.shuffle(phases)
    if p.key == "eval_no_grad" and "train" not in phases[:phases.index("pattern")]:
        if "train" in phases:
            phases.remove("train")
        phases.insert(phases.index("pattern"), "train")
    if p.key == "oversized_buffer":  # the OOM ends the leaky run: nothing may come after it
        phases.remove("pattern")
        phases.append("pattern")
    s.warmup = rng.randint(2, 5) if rng.random() < 0.5 else 0
    if s.warmup:
        phases.insert(0, "warmup")
    s.phases = phases
    s.clean = {}
    for ph in phases:
        if ph in ("train", "eval"):
            ep = rng.randint(2, 3) if rng.random() < 0.3 else 1
            s.clean[ph] = {"epochs": ep, "iterations": rng.randint(max(6, 12 // ep), 60 // ep),
                           "style": rng.choice(("func", "inline"))}
    s.noise = make_noise(rng, [ph for ph in phases])
    # Pattern parameters.
    s.label = rsize(rng, 4096, 64 * 1024)
    s.entry = rsize(rng, 64 * 1024, 1024 * 1024)
    # A bounded cache or a sawtooth is told from a leak only by what happens after it is full: the
    # loop runs at least four capacities (periods) per thread.
    total = s.epochs * s.iterations
    s.capacity = rng.randint(2, max(2, min(8, total // 4)))
    # A period is counted in iterations of the loop the pending outputs are made in: with
    # repetitions per step (an inner loop, in a step function where its runs cannot be seen) a
    # period of 6 steps x 3 repetitions is 18 iterations filled then released, which is what an
    # epoch's accumulation looks like. A sawtooth stays under 7 of them (docs/loops-and-verdicts.md).
    per_step = max(s.reps) if s.reps else 1
    s.accum = rng.randint(2, max(2, min(6 // per_step, total // 4)))
    s.ranks = rng.randint(2, 4)
    s.ckpt = rsize(rng, 4 << 20, 64 << 20, 4096)
    s.fixed_kind = rng.choice(("a", "b"))
    if p.key == "cache_growth":
        base = rsize(rng, 256 * 1024, 2 << 20, 1024)
        s.ws_sizes = [base + rng.randrange(0, 8) * 4096 for _ in range(rng.randint(3, 6))]
        total = s.epochs * s.iterations
        steps = sorted(rng.sample(range(2, total), rng.randint(3, 4)))
        mult = sorted(rng.sample(range(3, 12), len(steps)))
        s.ws_rare = {st: base * m for st, m in zip(steps, mult)}
    if p.key == "oversized_buffer":
        s.image = rsize(rng, 64 * 1024, 192 * 1024, 1024)
        s.width = s.image * rng.randint(4, 16) // 1024 * 1024
        s.images = [rng.randint(1, 3) for _ in range(rng.randint(3, 6))]
        s.big_step = rng.randint(3, s.iterations - 3)
        for nz in s.noise:
            nz["sizes"] = [min(x, s.image * 8 // len(nz["sizes"])) for x in nz["sizes"]]
        noise_max = sum(max(nz["sizes"]) * 3 for nz in s.noise)
        s.big_input = 4 * (s.batch + s.width * 5 // 4 + 3 * s.image + noise_max) + 65536
        weights = 8 * s.width
        # The large input still fits; the 65-image buffer on top of it does not.
        s.device_capacity = weights + s.big_input + 65 * s.image - 4096
        assert 3 * s.image + s.width * 5 // 4 + noise_max < 65 * s.image - 4096
    return s


def shape_summary(p, s):
    d = {
        "phases": s.phases,
        "threads": s.threads,
        "one_leaky_thread": s.one_leaky_thread,
        "epochs": s.epochs,
        "iterations": s.iterations,
        "style": s.style,
        "allocations_per_iteration": "varies " + "".join(map(str, s.reps)) if s.reps else "fixed",
        "helpers": s.helper_buf if s.helpers else "none",
        "noise_sites": len(s.noise),
        "warmup": s.warmup,
    }
    if p.key == "torch_load_ranks":
        d["processes"] = s.ranks
    return d


def coverage(shapes):
    """Shape features the corpus must contain for each language."""
    feats = {
        "threads": any(s.threads > 1 for _, s in shapes),
        "one leaky thread": any(s.one_leaky_thread for _, s in shapes),
        "8 threads or 6+": any(s.threads >= 6 for _, s in shapes),
        "nested (optional)": any(s.epochs > 1 and p.nested is True for p, s in shapes),
        "helpers": sum(s.helpers for _, s in shapes) >= 3,
        "varying allocations": sum(bool(s.reps) for _, s in shapes) >= 3,
        "warm-up": sum(bool(s.warmup) for _, s in shapes) >= 3,
        "three loops": any(len([x for x in s.phases if x != "warmup"]) == 3 for _, s in shapes),
        "pattern loop first, clean after": any(
            [x for x in s.phases if x != "warmup"][0] == "pattern" and len(s.phases) > 1
            and s.phases[-1] != "pattern" for _, s in shapes),
        "clean loop before the pattern": any(
            [x for x in s.phases if x != "warmup"][0] != "pattern" for _, s in shapes),
        "noise": sum(bool(s.noise) for _, s in shapes) >= len(shapes) // 2,
        "inline and func": {s.style for _, s in shapes} == {"func", "inline"},
    }
    return [k for k, v in feats.items() if not v]


# --------------------------------------------------------------------------------------------
# Source emitter: lines with their ground-truth comments.


class Src:
    def __init__(self, comment):
        self.c = comment
        self.lines = []

    def __call__(self, depth, text="", expect=None, helper=False, oom=False):
        assert not (expect and helper)
        line = "    " * depth + text if text else ""
        if expect:
            for v in expect.split("|"):
                assert v in VERDICTS, expect
            line += "  %s EXPECT: %s%s" % (self.c, expect, " OOM" if oom else "")
        elif helper:
            line += "  %s HELPER" % self.c
        self.lines.append(line)

    def block(self, text, depth=0):
        for ln in text.strip("\n").split("\n"):
            self.lines.append("    " * depth + ln if ln.strip() else "")

    def text(self):
        return "\n".join(self.lines) + "\n"


def header_lines(prog, c):
    p, s = prog["pattern_obj"], prog["shape_obj"]
    out = [
        "%s gpuleak verdict corpus: a generated ground-truth program. Do not edit." % c,
        "%s generator: tests/verdict_corpus/generate.py version %d, seed %d, program %s" % (
            c, GENERATOR_VERSION, prog["seed"], prog["name"]),
        "%s pattern: %s (%s variant): %s" % (c, p.title, prog["variant"],
                                          p.leaky if prog["variant"] == "leaky" else p.fixed),
        "%s field report: %s" % (c, p.source),
        "%s shape: %s" % (c, json.dumps(shape_summary(p, s), ensure_ascii=False)),
        "%s Ground truth: every allocating line of this program carries `EXPECT: verdict`" % c,
        "%s (several separated by |: each is honest); HELPER lines are inside allocation" % c,
        "%s helpers and are judged at their caller's line. OOM: the report must name this" % c,
        "%s line for the OOM." % c,
    ]
    return out


# --------------------------------------------------------------------------------------------
# Python programs

PY_HELPER_MODULE = '''
"""The program's own tensor helpers: user code next to the script, not a library."""
import fake_torch as torch


def empty(nbytes):
    """A torch.empty-style function."""
    return torch.empty(nbytes)  # HELPER


class DeviceBuffer:
    """A tensor class of the user's own, over a library tensor."""

    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.storage = torch.empty(nbytes)  # HELPER

    def item(self):
        return self.storage.item()


class Allocator:
    """An allocator wrapper that counts what it hands out."""

    def __init__(self):
        self.handed_out = 0

    def alloc(self, nbytes):
        self.handed_out += nbytes
        return DeviceBuffer(nbytes)  # HELPER


class Net:
    """The user's model: two layers over the library's Linear."""

    def __init__(self, width):
        self.fc1 = torch.Linear(width, width)  # HELPER
        self.fc2 = torch.Linear(width, width // 4)  # HELPER

    def __call__(self, x):
        hidden = self.fc1(x)  # HELPER
        return self.fc2(hidden)  # HELPER
'''


class PyNames:
    def __init__(self, s, helper_module):
        h = helper_module
        self.empty = h + ".empty" if s.helpers else "torch.empty"
        self.buf = {"empty": self.empty, "tensor_class": h + ".DeviceBuffer",
                    "allocator": "ALLOCATOR.alloc"}[s.helper_buf]
        self.model = h + ".Net" if s.helpers else "torch.Model"


def py_noise_calls(e, d, s, phase, step="step"):
    for i, nz in enumerate(s.noise):
        if phase in nz["phases"]:
            e(d, "noise_%d(%s)" % (i, step))


def py_loop_open(e, d, epochs, iterations_name, epochs_name):
    if epochs > 1:
        e(d, "for epoch in range(%s):" % epochs_name)
        d += 1
    e(d, "for step in range(%s):" % iterations_name)
    return d + 1


def py_reps_open(e, d, s):
    if s.reps:
        e(d, "for rep in range(REPS[step % len(REPS)]):")
        return d + 1
    return d


def py_clean_phase(e, s, N, kind):
    cfg = s.clean[kind]
    fn = "clean_" + kind
    ep, it = "EPOCHS_" + kind.upper(), "ITERATIONS_" + kind.upper()
    if cfg["style"] == "func":
        e(0, "def %s_step(model, step):" % fn)
        e(1, "x = %s(BATCH)" % N.empty, "transient")
        if kind == "eval":
            e(1, "with torch.no_grad():")
            e(2, "output = model(x)", "transient")
        else:
            e(1, "output = model(x)", "transient")
        py_noise_calls(e, 1, s, kind)
        e(1, "return output.item()")
        e(0)
        e(0)
    e(0, "def %s(model):" % fn)
    e(1, '"""A clean %s loop: everything it allocates dies with its iteration."""' % (
        "training" if kind == "train" else "evaluation"))
    e(1, "total = 0.0")
    d = py_loop_open(e, 1, cfg["epochs"], it, ep)
    if cfg["style"] == "func":
        e(d, "total += %s_step(model, step)" % fn)
    else:
        e(d, "x = %s(BATCH)" % N.empty, RT)
        if kind == "eval":
            e(d, "with torch.no_grad():")
            e(d + 1, "output = model(x)", RT)
        else:
            e(d, "output = model(x)", RT)
        e(d, "total += output.item()")
        py_noise_calls(e, d, s, kind)
    e(1, "return total")
    e(0)
    e(0)


def py_pattern(e, p, s, N, leaky):
    """Defines pattern_phase(model, tid) (and its globals); returns extra summary code."""
    k, st, reps = p.key, s.style, bool(s.reps)
    T = tmp_truth(st, reps)
    E, B = N.empty, N.buf

    def step_loop(d, body_call):
        d = py_loop_open(e, d, s.epochs, "ITERATIONS", "EPOCHS")
        e(d, body_call)
        return d

    if k == "append_output":
        e(0, "LOSSES = collections.defaultdict(list)  # reported at the end")
        e(0)
        e(0)
        if st == "func":
            e(0, "def train_step(model, step, tid):")
            d = py_reps_open(e, 1, s)
            e(d, "x = %s(BATCH)" % E, T)
            e(d, "output = model(x)", "leak" if leaky else T)
            e(d, "LOSSES[tid].append(output)" if leaky else "LOSSES[tid].append(output.item())")
            py_noise_calls(e, 1, s, "pattern")
            e(0)
            e(0)
            e(0, "def pattern_phase(model, tid):")
            step_loop(1, "train_step(model, step, tid)")
        else:
            e(0, "def pattern_phase(model, tid):")
            d = py_loop_open(e, 1, s.epochs, "ITERATIONS", "EPOCHS")
            d2 = py_reps_open(e, d, s)
            e(d2, "x = %s(BATCH)" % E, RT)
            e(d2, "output = model(x)", "leak" if leaky else RT)
            e(d2, "LOSSES[tid].append(output)" if leaky else "LOSSES[tid].append(output.item())")
            py_noise_calls(e, d, s, "pattern")
        return "sum(len(v) for v in LOSSES.values())"

    if k == "loss_sum":
        e(0, "EPOCH_LOSSES = collections.defaultdict(list)  # one per epoch, reported at the end")
        e(0)
        e(0)
        if st == "func":
            e(0, "def compute_loss(model, step):")
            e(1, "x = %s(BATCH)" % E, "transient")
            e(1, "return model(x)", "leak" if leaky else RT)
            e(0)
            e(0)
        e(0, "def pattern_phase(model, tid):")
        d = 1
        if s.epochs > 1:
            e(d, "for epoch in range(EPOCHS):")
            d += 1
        e(d, "loss_sum = 0")
        e(d, "for step in range(ITERATIONS):")
        d2 = py_reps_open(e, d + 1, s)
        if st == "func":
            e(d2, "loss = compute_loss(model, step)")
        else:
            e(d2, "x = %s(BATCH)" % E, RT)
            e(d2, "loss = model(x)", "leak" if leaky else RT)
        if leaky:
            e(d2, "loss_sum += loss", "leak")
        else:
            e(d2, "loss_sum += loss.item()")
        py_noise_calls(e, d + 1, s, "pattern")
        e(d, "EPOCH_LOSSES[tid].append(loss_sum)")
        return "len(EPOCH_LOSSES)"

    if k == "kept_after_loop":
        e(0, "LAST = {}  # the last batch of each worker, for the summary at the end")
        e(0)
        e(0)
        e(0, "def pattern_phase(model, tid):")
        e(1, "score = 0.0")
        d = py_loop_open(e, 1, s.epochs, "ITERATIONS", "EPOCHS")
        d2 = py_reps_open(e, d, s)
        e(d2, "x = %s(BATCH)" % E, "retained" if leaky else "transient")
        e(d2, "output = model(x)", "retained" if leaky else "transient")
        e(d2, "score += output.item()")
        if not leaky:
            e(d2, "del x, output")
        py_noise_calls(e, d, s, "pattern")
        if leaky:
            e(1, "LAST[tid] = (x, output)  # y = x + ... after the loop")
        else:
            e(1, "LAST[tid] = score")
        return ("sum(x.item() + o.item() for x, o in LAST.values())" if leaky
                else "sum(LAST.values())")

    if k == "model_per_fold":
        e(0, "FOLD_MODELS = collections.defaultdict(list)  # kept to ensemble the folds")
        e(0)
        e(0)
        if st == "func":
            e(0, "def fold_step(model, step):")
            d = py_reps_open(e, 1, s)
            e(d, "x = %s(BATCH)" % E, T)
            e(d, "loss = model(x)", T)
            e(d, "loss.item()")
            py_noise_calls(e, 1, s, "pattern")
            e(0)
            e(0)
        e(0, "def pattern_phase(_model, tid):")
        e(1, "for epoch in range(EPOCHS):  # the cross-validation folds")
        e(2, "model = %s(WIDTH)" % N.model, "leak" if leaky else "transient|retained")
        if leaky:
            e(2, "FOLD_MODELS[tid].append(model)")
        e(2, "for step in range(ITERATIONS):")
        if st == "func":
            e(3, "fold_step(model, step)")
        else:
            d = py_reps_open(e, 3, s)
            e(d, "x = %s(BATCH)" % E, RT)
            e(d, "loss = model(x)", RT)
            e(d, "loss.item()")
            py_noise_calls(e, 3, s, "pattern")
        if not leaky:
            e(2, "del model")
            e(2, "gc.collect()")
        return "sum(len(v) for v in FOLD_MODELS.values())"

    if k == "torch_load_ranks":
        # The rank's training loop is a clean one; the pattern is the checkpoint, in rank_main.
        if st == "func":
            e(0, "def rank_step(model, step):")
            e(1, "x = %s(BATCH)" % E, "transient")
            e(1, "loss = model(x)", "transient")
            py_noise_calls(e, 1, s, "pattern")
            e(1, "return loss.item()")
            e(0)
            e(0)
        e(0, "def pattern_phase(model, tid):")
        e(1, "total = 0.0")
        d = py_loop_open(e, 1, s.epochs, "ITERATIONS", "EPOCHS")
        if st == "func":
            e(d, "total += rank_step(model, step)")
        else:
            e(d, "x = %s(BATCH)" % E, RT)
            e(d, "loss = model(x)", RT)
            e(d, "total += loss.item()")
            py_noise_calls(e, d, s, "pattern")
        e(1, "return total")
        return "0"

    if k == "eval_no_grad":
        e(0, "TOTAL_LOSS = []  # for the evaluation report")
        e(0)
        e(0)
        no_grad = not leaky and s.fixed_kind == "b"

        def body(d, T):
            e(d, "x = %s(BATCH)" % E, T)
            e(d, "target = %s(LABEL)" % E, "leak" if leaky else T)
            if no_grad:
                e(d, "with torch.no_grad():")
                e(d + 1, "output = model(x)", T)
                e(d + 1, "loss = output + target", T)
            else:
                e(d, "output = model(x)", "leak" if leaky else T)
                e(d, "loss = output + target", "leak" if leaky else T)
            e(d, "TOTAL_LOSS.append(loss)" if leaky else "TOTAL_LOSS.append(loss.item())")

        if st == "func":
            e(0, "def eval_step(model, step):")
            d = py_reps_open(e, 1, s)
            body(d, T)
            py_noise_calls(e, 1, s, "pattern")
            e(0)
            e(0)
            e(0, "def pattern_phase(model, tid):")
            step_loop(1, "eval_step(model, step)")
        else:
            e(0, "def pattern_phase(model, tid):")
            d = py_loop_open(e, 1, s.epochs, "ITERATIONS", "EPOCHS")
            body(py_reps_open(e, d, s), RT)
            py_noise_calls(e, d, s, "pattern")
        return "len(TOTAL_LOSS)"

    if k == "oversized_buffer":
        e(0, "def input_bytes(step):")
        e(1, "return BIG_INPUT if step == BIG_STEP else IMAGE * IMAGES[step % len(IMAGES)]")
        e(0)
        e(0)
        e(0, "def attack_step(model, step, batch_size=65):")
        e(1, '"""One attack step; the perturbation space is sized for batch_size images."""')
        e(1, "x = %s(input_bytes(step))" % E, "transient")
        e(1, "perturbation = %s(batch_size * IMAGE)" % E, "transient", oom=leaky)
        e(1, "score = model(x).item()", "transient")
        py_noise_calls(e, 1, s, "pattern")
        e(1, "return score + perturbation.item()")
        e(0)
        e(0)
        e(0, "def pattern_phase(model, tid):")
        e(1, "total = 0.0")
        e(1, "for step in range(ITERATIONS):")
        if leaky:
            e(2, "total += attack_step(model, step)  # the batch size is not passed")
        else:
            e(2, "total += attack_step(model, step, batch_size=IMAGES[step % len(IMAGES)])")
        e(1, "return total")
        return "0"

    if k == "cache_growth":
        e(0, "def workspace_bytes(step):")
        e(1, "return RARE.get(step, WORKSPACE[step % len(WORKSPACE)])")
        e(0)
        e(0)
        if leaky:
            e(0, "class WorkspaceCache:")
            e(1, '"""Keeps the largest workspace seen so far, as a caching allocator keeps its')
            e(1, 'largest segment: a rare huge input grows it for good."""')
            e(0)
            e(1, "def __init__(self):")
            e(2, "self.buffer = None")
            e(2, "self.capacity = 0")
            e(0)
            e(1, "def get(self, nbytes):")
            e(2, "if nbytes > self.capacity:")
            e(3, "self.buffer = %s(nbytes)" % B, "growth")
            e(3, "self.capacity = nbytes")
            e(2, "return self.buffer")
            e(0)
            e(0)
            e(0, "CACHES = {}")
        else:
            e(0, "WORKSPACES = {}")
        e(0)
        e(0)
        prealloc = not leaky and s.fixed_kind == "b"
        gstep = "epoch * ITERATIONS + step" if s.epochs > 1 else "step"
        if st == "func":
            e(0, "def cache_step(model, workspace, step):")
            e(1, "x = %s(BATCH)" % E, "transient")
            e(1, "score = model(x).item()", "transient")
            if not leaky and not prealloc:
                e(1, "workspace = %s(workspace_bytes(step))" % B, "transient")
            py_noise_calls(e, 1, s, "pattern")
            e(1, "return score + workspace.item()")
            e(0)
            e(0)
        e(0, "def pattern_phase(model, tid):")
        if leaky:
            e(1, "cache = CACHES[tid] = WorkspaceCache()")
        elif prealloc:
            e(1, "workspace = WORKSPACES[tid] = %s(MAX_WORKSPACE)  # for the largest input"
              % B, "retained")
        e(1, "total = 0.0")
        d = py_loop_open(e, 1, s.epochs, "ITERATIONS", "EPOCHS")
        e(d, "g = %s" % gstep)
        if leaky:
            e(d, "workspace = cache.get(workspace_bytes(g))")
        if st == "func":
            e(d, "total += cache_step(model, %s, g)" % ("None" if not leaky and not prealloc
                                                       else "workspace"))
        else:
            e(d, "x = %s(BATCH)" % E, RT)
            e(d, "total += model(x).item()", "transient")
            if not leaky and not prealloc:
                e(d, "workspace = %s(workspace_bytes(g))" % B, RT)
            e(d, "total += workspace.item()")
            py_noise_calls(e, d, s, "pattern")
        e(1, "return total")
        return "0"

    if k == "lru_cache":
        e(0, "class EmbeddingCache:")
        e(1, '"""Memoizes each batch\'s embedding%s."""' % (
            "" if leaky else ", keeping the `capacity` most recent"))
        e(0)
        e(1, "def __init__(self, capacity):")
        e(2, "self.entries = collections.OrderedDict()")
        e(2, "self.capacity = capacity")
        e(0)
        e(1, "def put(self, key, value):")
        e(2, "self.entries[key] = value")
        e(2, "self.entries.move_to_end(key)")
        if not leaky:
            e(2, "while len(self.entries) > self.capacity:")
            e(3, "self.entries.popitem(last=False)")
        e(0)
        e(0)
        e(0, "CACHES = {}")
        e(0)
        e(0)
        if st == "func":
            e(0, "def embed_step(model, cache, key, step):")
            e(1, "x = %s(BATCH)" % E, "transient")
            e(1, "score = model(x).item()", "transient")
            d = py_reps_open(e, 1, s)
            e(d, "embedding = %s(ENTRY)" % B, "leak" if leaky else "retained")
            e(d, "cache.put((key, %s), embedding)" % ("rep" if s.reps else "0"))
            py_noise_calls(e, 1, s, "pattern")
            e(1, "return score")
            e(0)
            e(0)
        e(0, "def pattern_phase(model, tid):")
        e(1, "cache = CACHES[tid] = EmbeddingCache(CAPACITY)")
        e(1, "total = 0.0")
        d = py_loop_open(e, 1, s.epochs, "ITERATIONS", "EPOCHS")
        key = "(epoch, step)" if s.epochs > 1 else "step"
        if st == "func":
            e(d, "total += embed_step(model, cache, %s, step)" % key)
        else:
            e(d, "x = %s(BATCH)" % E, RT)
            e(d, "total += model(x).item()", "transient")
            d2 = py_reps_open(e, d, s)
            e(d2, "embedding = %s(ENTRY)" % B, "leak" if leaky else "retained")
            e(d2, "cache.put((%s, %s), embedding)" % (key, "rep" if s.reps else "0"))
            py_noise_calls(e, d, s, "pattern")
        e(1, "return total")
        return "sum(len(c.entries) for c in CACHES.values())"

    if k == "grad_accumulation":
        e(0, "PENDING = {}")
        e(0)
        e(0)
        e(0, "def optimizer_step(pending):")
        e(1, "return sum(loss.item() for loss in pending)")
        e(0)
        e(0)
        if st == "func":
            e(0, "def micro_batch(model, pending, step):")
            d = py_reps_open(e, 1, s)
            e(d, "x = %s(BATCH)" % E, T)
            e(d, "loss = model(x)", "leak" if leaky else "retained")
            e(d, "pending.append(loss)")
            py_noise_calls(e, 1, s, "pattern")
            e(0)
            e(0)
        e(0, "def pattern_phase(model, tid):")
        e(1, "pending = PENDING[tid] = []")
        e(1, "total = 0.0")
        d = py_loop_open(e, 1, s.epochs, "ITERATIONS", "EPOCHS")
        if st == "func":
            e(d, "micro_batch(model, pending, step)")
        else:
            d2 = py_reps_open(e, d, s)
            e(d2, "x = %s(BATCH)" % E, RT)
            e(d2, "loss = model(x)", "leak" if leaky else "retained")
            e(d2, "pending.append(loss)")
            py_noise_calls(e, d, s, "pattern")
        e(d, "if (%s + 1) %% ACCUMULATE == 0:" %
          ("epoch * ITERATIONS + step" if s.epochs > 1 else "step"))
        e(d + 1, "total += optimizer_step(pending)")
        if not leaky:
            e(d + 1, "pending.clear()  # zero_grad")
        if not leaky:
            e(1, "pending.clear()")
        e(1, "return total")
        return "sum(len(v) for v in PENDING.values())"

    if k == "epoch_accumulation":
        e(0, "HISTORY = collections.defaultdict(list)")
        e(0)
        e(0)
        if st == "func":
            e(0, "def forward_step(model, step):")
            e(1, "x = %s(BATCH)" % E, "transient")
            e(1, "return model(x)", "leak" if leaky else "accumulation")
            e(0)
            e(0)
        e(0, "def pattern_phase(model, tid):")
        e(1, "metric = 0.0")
        e(1, "for epoch in range(EPOCHS):")
        e(2, "epoch_outputs = []")
        e(2, "for step in range(ITERATIONS):")
        d = py_reps_open(e, 3, s)
        if st == "func":
            e(d, "epoch_outputs.append(forward_step(model, step))")
        else:
            e(d, "x = %s(BATCH)" % E, RT)
            e(d, "output = model(x)", "leak" if leaky else "accumulation")
            e(d, "epoch_outputs.append(output)")
        py_noise_calls(e, 3, s, "pattern")
        e(2, "metric += sum(o.item() for o in epoch_outputs) / len(epoch_outputs)")
        if leaky:
            e(2, "HISTORY[tid].extend(epoch_outputs)")
        else:
            e(2, "epoch_outputs.clear()")
        e(1, "return metric")
        return "sum(len(v) for v in HISTORY.values())"

    raise AssertionError(k)


def render_py(prog):
    p, s, leaky = prog["pattern_obj"], prog["shape_obj"], prog["variant"] == "leaky"
    name = prog["name"]
    helper_module = prog["helper_module"]
    N = PyNames(s, helper_module)
    e = Src("#")
    for ln in header_lines(prog, "#"):
        e(0, ln)
    e(0, "import collections")
    e(0, "import ctypes")
    e(0, "import gc")
    e(0, "import os")
    e(0, "import subprocess")
    e(0, "import sys")
    e(0, "import threading")
    e(0)
    e(0, "import fake_torch as torch")
    if s.helpers:
        e(0, "import %s" % helper_module)
    e(0)
    consts = [("WIDTH", s.width), ("BATCH", s.batch), ("ITERATIONS", s.iterations),
              ("EPOCHS", s.epochs), ("THREADS", s.threads), ("WARMUP", s.warmup),
              ("REPS", s.reps or [1]), ("LABEL", s.label), ("ENTRY", s.entry),
              ("CAPACITY", s.capacity), ("ACCUMULATE", s.accum), ("RANKS", s.ranks),
              ("CHECKPOINT", s.ckpt)]
    for kind, cfg in s.clean.items():
        consts += [("EPOCHS_" + kind.upper(), cfg["epochs"]),
                   ("ITERATIONS_" + kind.upper(), cfg["iterations"])]
    if p.key == "cache_growth":
        consts += [("WORKSPACE", s.ws_sizes), ("RARE", s.ws_rare),
                   ("MAX_WORKSPACE", max(list(s.ws_rare.values()) + s.ws_sizes))]
    if p.key == "oversized_buffer":
        consts += [("IMAGE", s.image), ("IMAGES", s.images), ("BIG_STEP", s.big_step),
                   ("BIG_INPUT", s.big_input)]
    for k, v in consts:
        e(0, "%s = %r" % (k, v))
    if s.helpers and s.helper_buf == "allocator":
        e(0, "ALLOCATOR = %s.Allocator()" % helper_module)
    e(0)
    e(0)
    for i, nz in enumerate(s.noise):
        e(0, "NOISE_SIZES_%d = %r" % (i, nz["sizes"]))
        e(0, "NOISE_COUNTS_%d = %r" % (i, nz["counts"]))
        e(0)
        e(0)
        e(0, "def noise_%d(step):" % i)
        e(1, '"""Transient scratch buffers of varying sizes and counts."""')
        e(1, "for j in range(NOISE_COUNTS_%d[step %% len(NOISE_COUNTS_%d)]):" % (i, i))
        e(2, "%s(NOISE_SIZES_%d[(step + j) %% len(NOISE_SIZES_%d)]).item()" % (N.buf, i, i),
          "transient")
        e(0)
        e(0)
    if s.warmup:
        e(0, "def warmup(model):")
        e(1, "for step in range(WARMUP):")
        e(2, "model(%s(BATCH)).item()" % N.empty, "transient")
        py_noise_calls(e, 2, s, "warmup")
        e(0)
        e(0)
    for kind in ("train", "eval"):
        if kind in s.clean:
            py_clean_phase(e, s, N, kind)
    summary = py_pattern(e, p, s, N, leaky)
    e(0)
    e(0)
    if s.threads > 1 and s.one_leaky_thread:
        e(0, "def clean_worker(model, tid):")
        e(1, '"""A worker that only churns: everything it allocates dies with its iteration."""')
        e(1, "for step in range(ITERATIONS * EPOCHS):")
        e(2, "model(%s(BATCH)).item()" % N.empty, "transient")
        py_noise_calls(e, 2, s, "pattern")
        e(0)
        e(0)
    if s.threads > 1:
        e(0, "def run_workers(model):")
        e(1, "workers = []")
        e(1, "for tid in range(THREADS):")
        if s.one_leaky_thread:
            e(2, "target = pattern_phase if tid == 0 else clean_worker")
        else:
            e(2, "target = pattern_phase")
        e(2, "workers.append(threading.Thread(target=target, args=(model, tid)))")
        e(1, "for w in workers:")
        e(2, "w.start()")
        e(1, "for w in workers:")
        e(2, "w.join()")
        e(0)
        e(0)
    ranks = p.key == "torch_load_ranks"
    if ranks:
        e(0, "_cudart = ctypes.CDLL('libcudart.so.13')")
        e(0)
        e(0)
        e(0, "def set_device(rank):")
        e(1, "if _cudart.cudaSetDevice(rank) != 0:")
        e(2, "raise RuntimeError('cudaSetDevice(%d) failed' % rank)")
        e(0)
        e(0)
        e(0, "def run(rank):")
        e(1, "set_device(rank)")
    else:
        e(0, "def run():")
    e(1, "model = %s(WIDTH)" % N.model, "retained")
    if ranks:
        if leaky:
            e(1, "set_device(0)  # torch.load restores onto the device it was saved from")
            e(1, "checkpoint = torch.load(CHECKPOINT)", "retained")
            e(1, "set_device(rank)")
        else:
            e(1, "checkpoint = torch.load(CHECKPOINT, map_location='cuda:%d' % rank)",
              "transient")
            e(1, "checkpoint.item()  # load_state_dict copies it into the model")
            e(1, "del checkpoint")
    for ph in s.phases:
        if ph == "warmup":
            e(1, "warmup(model)")
        elif ph in ("train", "eval"):
            e(1, "clean_%s(model)" % ph)
        elif s.threads > 1:
            e(1, "run_workers(model)")
        else:
            e(1, "pattern_phase(model, 0)")
    e(1, "print(%r, %s)" % (name, summary))
    if ranks and leaky:
        e(1, "return int(checkpoint.item() < 0)")
    else:
        e(1, "return 0")
    e(0)
    e(0)
    e(0, "def main(argv):")
    e(1, "try:")
    if ranks:
        e(2, "if '--rank' in argv:")
        e(3, "return run(int(argv[argv.index('--rank') + 1]))")
        e(2, "script = os.path.abspath(__file__)")
        e(2, "children = [subprocess.Popen([sys.executable, script, '--rank', str(r)])")
        e(2, "            for r in range(1, RANKS)]")
        e(2, "rc = run(0)")
        e(2, "for child in children:")
        e(3, "rc = max(rc, child.wait())")
        e(2, "return rc")
    else:
        e(2, "return run()")
    e(1, "except torch.OutOfMemoryError as err:")
    e(2, "print('%s: %s' % (os.path.basename(__file__), err), file=sys.stderr)")
    e(2, "return 1")
    e(0)
    e(0)
    e(0, "if __name__ == '__main__':")
    e(1, "sys.exit(main(sys.argv))")
    files = {"%s.py" % name: e.text()}
    if s.helpers:
        files["%s.py" % helper_module] = PY_HELPER_MODULE.lstrip("\n")
    return files


# --------------------------------------------------------------------------------------------
# C programs

C_LIB = r'''
void oom_exit(size_t nbytes) {
    fprintf(stderr, "CUDA out of memory: tried to allocate %zu bytes\n", nbytes);
    exit(1);
}

@ALLOCDEF@

/* The model: two weights; its forward pass makes a hidden activation and an output. The output
 * keeps the hidden activation (its graph) alive until it is freed, as autograd does, unless the
 * pass ran without gradients. */
model_t *model_new(size_t width) {
    model_t *m = calloc(1, sizeof *m);
    m->width = width;
    m->w1 = @ALLOC@(4 * width); @HELPER@
    m->w2 = @ALLOC@(4 * width); @HELPER@
    return m;
}

void model_free(model_t *m) {
    @FREE@(m->w1);
    @FREE@(m->w2);
    free(m);
}

output_t model_forward(model_t *m, void *x, int grad) {
    output_t o;
    (void)x;
    o.hidden = @ALLOC@(m->width); @HELPER@
    o.out = @ALLOC@(m->width / 4); @HELPER@
    o.nbytes = m->width / 4;
    if (!grad) {
        @FREE@(o.hidden);
        o.hidden = NULL;
    }
    return o;
}

void output_free(output_t *o) {
    if (o->out) @FREE@(o->out);
    if (o->hidden) @FREE@(o->hidden);
    o->out = o->hidden = NULL;
}

double output_item(const output_t *o) { return (double)o->nbytes; }

/* a + b (+ prev): the result keeps its inputs alive, as autograd does; 0 + a is a itself. */
node_t *node_add(node_t *prev, output_t a, void *b) {
    node_t *n = calloc(1, sizeof *n);
    n->prev = prev;
    n->a = a;
    n->b = b;
    n->nbytes = a.nbytes;
    if (prev || b) n->data = @ALLOC@(a.nbytes); @HELPER@
    return n;
}

void node_free(node_t *n) {
    while (n) {
        node_t *prev = n->prev;
        if (n->data) @FREE@(n->data);
        output_free(&n->a);
        if (n->b) @FREE@(n->b);
        free(n);
        n = prev;
    }
}
'''

C_TYPES = r'''
typedef struct {
    void *w1, *w2;
    size_t width;
} model_t;
typedef struct {
    void *out, *hidden;
    size_t nbytes;
} output_t;
typedef struct node {
    void *data;
    size_t nbytes;
    output_t a;
    void *b;
    struct node *prev;
} node_t;
typedef struct {
    size_t handed_out;
} pool_t;

void oom_exit(size_t nbytes);
model_t *model_new(size_t width);
void model_free(model_t *m);
output_t model_forward(model_t *m, void *x, int grad);
void output_free(output_t *o);
double output_item(const output_t *o);
node_t *node_add(node_t *prev, output_t a, void *b);
void node_free(node_t *n);
'''

C_HELPER_ALLOC = r'''
void *dev_alloc(size_t nbytes) {
    void *p = NULL;
    if (cudaMalloc(&p, nbytes) != cudaSuccess) oom_exit(nbytes); @HELPER@
    return p;
}

void dev_free(void *p) { cudaFree(p); }

/* An allocator wrapper that counts what it hands out. */
void *pool_alloc(pool_t *pool, size_t nbytes) {
    __atomic_fetch_add(&pool->handed_out, nbytes, __ATOMIC_RELAXED);
    return dev_alloc(nbytes); @HELPER@
}
'''

C_DIRECT_ALLOC = r'''
/* Allocations in this file go through a macro: each one is attributed to the line that uses it. */
#define DEV_ALLOC(n)                                                                               \
    ({                                                                                             \
        void *p_ = NULL;                                                                           \
        if (cudaMalloc(&p_, (n)) != cudaSuccess) oom_exit(n);                                      \
        p_;                                                                                        \
    })
'''

C_VEC = r'''
/* Host-side arrays (no device memory). */
typedef struct {
    void **v;
    size_t n, cap;
} ptrvec;
typedef struct {
    output_t *v;
    size_t n, cap;
} outvec;

void ptrvec_push(ptrvec *a, void *p) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->v = realloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = p;
}

void outvec_push(outvec *a, output_t o) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->v = realloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = o;
}
'''


class CNames:
    def __init__(self, s):
        if s.helpers:
            self.empty = "dev_alloc"
            self.buf = {"empty": "dev_alloc", "tensor_class": "dev_alloc",
                        "allocator": "POOL_ALLOC"}[s.helper_buf]
            self.free = "dev_free"
        else:
            self.empty = self.buf = "DEV_ALLOC"
            self.free = "cudaFree"

    def E(self, n):
        return "%s(%s)" % (self.empty, n)

    def B(self, n):
        if self.buf == "POOL_ALLOC":
            return "pool_alloc(&POOL, %s)" % n
        return "%s(%s)" % (self.buf, n)


def c_lib_text(helper_style, helper_marker):
    if helper_style:
        alloc, free = "dev_alloc", "dev_free"
        allocdef = C_HELPER_ALLOC
    else:
        alloc, free = "DEV_ALLOC", "cudaFree"
        allocdef = ""
    t = C_LIB.replace("@ALLOCDEF@", allocdef.strip("\n")).replace("@ALLOC@", alloc)
    t = t.replace("@FREE@", free).replace(" @HELPER@", "  " + helper_marker)
    return t


def c_array(name, ctype, values):
    return "static const %s %s[] = {%s};" % (ctype, name, ", ".join(str(v) for v in values))


def c_noise_calls(e, d, s, phase, step="step"):
    for i, nz in enumerate(s.noise):
        if phase in nz["phases"]:
            e(d, "noise_%d(%s);" % (i, step))


def c_loop_open(e, d, epochs, it_name, ep_name):
    if epochs > 1:
        e(d, "for (int epoch = 0; epoch < %s; ++epoch) {" % ep_name)
        d += 1
    e(d, "for (int step = 0; step < %s; ++step) {" % it_name)
    return d + 1


def c_loop_close(e, d, epochs):
    e(d - 1, "}")
    if epochs > 1:
        e(d - 2, "}")


def c_reps_open(e, d, s):
    if s.reps:
        e(d, "for (int rep = 0; rep < REPS[step %% %d]; ++rep) {" % len(s.reps))
        return d + 1
    return d


def c_reps_close(e, d, s):
    if s.reps:
        e(d - 1, "}")
        return d - 1
    return d


def c_clean_phase(e, s, N, kind):
    cfg = s.clean[kind]
    fn = "clean_" + kind
    grad = "0" if kind == "eval" else "1"
    if cfg["style"] == "func":
        e(0, "double %s_step(int step) {" % fn)
        e(1, "(void)step;")
        e(1, "void *x = %s;" % N.E("BATCH"), "transient")
        e(1, "output_t output = model_forward(MODEL, x, %s);" % grad, "transient")
        e(1, "double v = output_item(&output);")
        e(1, "output_free(&output);")
        e(1, "%s(x);" % N.free)
        c_noise_calls(e, 1, s, kind)
        e(1, "return v;")
        e(0, "}")
        e(0)
    e(0, "/* A clean %s loop: everything it allocates dies with its iteration. */" % (
        "training" if kind == "train" else "evaluation"))
    e(0, "double %s(void) {" % fn)
    e(1, "double total = 0;")
    d = c_loop_open(e, 1, cfg["epochs"], "ITERATIONS_" + kind.upper(), "EPOCHS_" + kind.upper())
    if cfg["style"] == "func":
        e(d, "total += %s_step(step);" % fn)
    else:
        e(d, "void *x = %s;" % N.E("BATCH"), "transient")
        e(d, "output_t output = model_forward(MODEL, x, %s);" % grad, "transient")
        e(d, "total += output_item(&output);")
        e(d, "output_free(&output);")
        e(d, "%s(x);" % N.free)
        c_noise_calls(e, d, s, kind)
    c_loop_close(e, d, cfg["epochs"])
    e(1, "return total;")
    e(0, "}")
    e(0)


def c_pattern(e, p, s, N, leaky):
    """Defines void pattern_phase(int tid) and its globals; returns a summary expression."""
    k, st = p.key, s.style
    E, B, F = N.E, N.B, N.free

    def loop(d):
        return c_loop_open(e, d, s.epochs, "ITERATIONS", "EPOCHS")

    def close(d):
        c_loop_close(e, d, s.epochs)

    if k == "append_output":
        e(0, "outvec LOSSES[THREADS]; /* reported at the end */")
        e(0, "double TOTAL[THREADS];")
        e(0)

        def body(d):
            d2 = c_reps_open(e, d, s)
            e(d2, "void *x = %s;" % E("BATCH"), "transient")
            e(d2, "output_t output = model_forward(MODEL, x, 1);", "leak" if leaky else "transient")
            if leaky:
                e(d2, "outvec_push(&LOSSES[tid], output);")
            else:
                e(d2, "TOTAL[tid] += output_item(&output);")
                e(d2, "output_free(&output);")
            e(d2, "%s(x);" % F)
            c_reps_close(e, d2, s)
            c_noise_calls(e, d, s, "pattern")

        if st == "func":
            e(0, "void train_step(int step, int tid) {")
            e(1, "(void)step;")
            body(1)
            e(0, "}")
            e(0)
            e(0, "void pattern_phase(int tid) {")
            d = loop(1)
            e(d, "train_step(step, tid);")
            close(d)
            e(0, "}")
        else:
            e(0, "void pattern_phase(int tid) {")
            d = loop(1)
            body(d)
            close(d)
            e(0, "}")
        return "(double)LOSSES[0].n"

    if k == "loss_sum":
        e(0, "ptrvec EPOCH_LOSSES[THREADS]; /* one per epoch, reported at the end */")
        e(0, "double TOTAL[THREADS];")
        e(0)
        if st == "func":
            e(0, "output_t compute_loss(void) {")
            e(1, "void *x = %s;" % E("BATCH"), "transient")
            e(1, "output_t loss = model_forward(MODEL, x, 1);", "leak" if leaky else "transient")
            e(1, "%s(x);" % F)
            e(1, "return loss;")
            e(0, "}")
            e(0)
        e(0, "void pattern_phase(int tid) {")
        d = 1
        if s.epochs > 1:
            e(d, "for (int epoch = 0; epoch < EPOCHS; ++epoch) {")
            d += 1
        e(d, "node_t *loss_sum = NULL;")
        e(d, "for (int step = 0; step < ITERATIONS; ++step) {")
        d2 = c_reps_open(e, d + 1, s)
        if st == "func":
            e(d2, "output_t loss = compute_loss();")
        else:
            e(d2, "void *x = %s;" % E("BATCH"), "transient")
            e(d2, "output_t loss = model_forward(MODEL, x, 1);", "leak" if leaky else "transient")
            e(d2, "%s(x);" % F)
        if leaky:
            e(d2, "loss_sum = node_add(loss_sum, loss, NULL);", "leak")
        else:
            e(d2, "TOTAL[tid] += output_item(&loss);")
            e(d2, "output_free(&loss);")
        c_reps_close(e, d2, s)
        c_noise_calls(e, d + 1, s, "pattern")
        e(d, "}")
        e(d, "ptrvec_push(&EPOCH_LOSSES[tid], loss_sum);")
        if s.epochs > 1:
            e(1, "}")
        e(0, "}")
        return "(double)EPOCH_LOSSES[0].n"

    if k == "kept_after_loop":
        e(0, "void *LAST_X[THREADS]; /* the last batch of each worker, for the summary */")
        e(0, "output_t LAST_OUTPUT[THREADS];")
        e(0, "double TOTAL[THREADS];")
        e(0)
        e(0, "void pattern_phase(int tid) {")
        e(1, "void *x = NULL;")
        e(1, "output_t output = {0};")
        d = loop(1)
        d2 = c_reps_open(e, d, s)
        if leaky:
            e(d2, "if (x) %s(x); /* the previous batch is released only now */" % F)
            e(d2, "output_free(&output);")
        # Freed at the top of the next iteration, before anything is allocated there: in the
        # allocations' order that is where the previous iteration ends, so both readings are honest.
        kept = "retained|transient" if leaky else "transient"
        e(d2, "x = %s;" % E("BATCH"), kept)
        e(d2, "output = model_forward(MODEL, x, 1);", kept)
        e(d2, "TOTAL[tid] += output_item(&output);")
        if not leaky:
            e(d2, "output_free(&output);")
            e(d2, "%s(x);" % F)
            e(d2, "x = NULL;")
        c_reps_close(e, d2, s)
        c_noise_calls(e, d, s, "pattern")
        close(d)
        e(1, "LAST_X[tid] = x; /* y = x + ... after the loop */")
        e(1, "LAST_OUTPUT[tid] = output;")
        e(0, "}")
        return "output_item(&LAST_OUTPUT[0])"

    if k == "model_per_fold":
        e(0, "ptrvec FOLD_MODELS[THREADS]; /* kept to ensemble the folds */")
        e(0, "double TOTAL[THREADS];")
        e(0)

        def body(d, m):
            d2 = c_reps_open(e, d, s)
            e(d2, "void *x = %s;" % E("BATCH"), "transient")
            e(d2, "output_t loss = model_forward(%s, x, 1);" % m, "transient")
            e(d2, "TOTAL[tid] += output_item(&loss);")
            e(d2, "output_free(&loss);")
            e(d2, "%s(x);" % F)
            c_reps_close(e, d2, s)
            c_noise_calls(e, d, s, "pattern")

        if st == "func":
            e(0, "void fold_step(model_t *model, int step, int tid) {")
            e(1, "(void)step;")
            body(1, "model")
            e(0, "}")
            e(0)
        e(0, "void pattern_phase(int tid) {")
        e(1, "for (int epoch = 0; epoch < EPOCHS; ++epoch) { /* the cross-validation folds */")
        e(2, "model_t *model = model_new(WIDTH);", "leak" if leaky else "transient|retained")
        if leaky:
            e(2, "ptrvec_push(&FOLD_MODELS[tid], model);")
        e(2, "for (int step = 0; step < ITERATIONS; ++step) {")
        if st == "func":
            e(3, "fold_step(model, step, tid);")
        else:
            body(3, "model")
        e(2, "}")
        if not leaky:
            e(2, "model_free(model);")
        e(1, "}")
        e(0, "}")
        return "(double)FOLD_MODELS[0].n"

    if k == "torch_load_ranks":
        e(0, "double TOTAL[THREADS];")
        e(0)

        def body(d):
            e(d, "void *x = %s;" % E("BATCH"), "transient")
            e(d, "output_t loss = model_forward(MODEL, x, 1);", "transient")
            e(d, "TOTAL[tid] += output_item(&loss);")
            e(d, "output_free(&loss);")
            e(d, "%s(x);" % F)
            c_noise_calls(e, d, s, "pattern")

        if st == "func":
            e(0, "void rank_step(int step, int tid) {")
            e(1, "(void)step;")
            body(1)
            e(0, "}")
            e(0)
        e(0, "void pattern_phase(int tid) {")
        d = loop(1)
        if st == "func":
            e(d, "rank_step(step, tid);")
        else:
            body(d)
        close(d)
        e(0, "}")
        return "TOTAL[0]"

    if k == "eval_no_grad":
        e(0, "ptrvec TOTAL_LOSS; /* for the evaluation report */")
        e(0, "double TOTAL[THREADS];")
        e(0)
        grad = "0" if (not leaky and s.fixed_kind == "b") else "1"

        def body(d):
            d2 = c_reps_open(e, d, s)
            e(d2, "void *x = %s;" % E("BATCH"), "transient")
            e(d2, "void *target = %s;" % E("LABEL"), "leak" if leaky else "transient")
            e(d2, "output_t output = model_forward(MODEL, x, %s);%s" % (
                grad, " /* under no_grad */" if grad == "0" else ""),
              "leak" if leaky else "transient")
            e(d2, "node_t *loss = node_add(NULL, output, target);",
              "leak" if leaky else "transient")
            if leaky:
                e(d2, "ptrvec_push(&TOTAL_LOSS, loss);")
            else:
                e(d2, "TOTAL[tid] += (double)loss->nbytes;")
                e(d2, "node_free(loss);")
            e(d2, "%s(x);" % F)
            c_reps_close(e, d2, s)
            c_noise_calls(e, d, s, "pattern")

        if st == "func":
            e(0, "void eval_step(int step, int tid) {")
            e(1, "(void)step;")
            body(1)
            e(0, "}")
            e(0)
            e(0, "void pattern_phase(int tid) {")
            d = loop(1)
            e(d, "eval_step(step, tid);")
            close(d)
            e(0, "}")
        else:
            e(0, "void pattern_phase(int tid) {")
            d = loop(1)
            body(d)
            close(d)
            e(0, "}")
        return "(double)TOTAL_LOSS.n"

    if k == "oversized_buffer":
        e(0, "double TOTAL[THREADS];")
        e(0, "typedef struct {")
        e(1, "size_t batch_size;")
        e(0, "} attack_options;")
        e(0)
        e(0, "size_t input_bytes(int step) {")
        e(1, "return step == BIG_STEP ? BIG_INPUT : IMAGE * IMAGES[step %% %d];" % len(s.images))
        e(0, "}")
        e(0)
        e(0, "/* One attack step; the perturbation space is sized for opts.batch_size images. */")
        e(0, "double attack_step(int step, attack_options opts) {")
        e(1, "void *x = %s;" % E("input_bytes(step)"), "transient")
        e(1, "void *perturbation = %s;" % E("opts.batch_size * IMAGE"), "transient", oom=leaky)
        e(1, "output_t output = model_forward(MODEL, x, 1);", "transient")
        e(1, "double score = output_item(&output);")
        c_noise_calls(e, 1, s, "pattern")
        e(1, "output_free(&output);")
        e(1, "%s(perturbation);" % F)
        e(1, "%s(x);" % F)
        e(1, "return score;")
        e(0, "}")
        e(0)
        e(0, "void pattern_phase(int tid) {")
        e(1, "attack_options opts = {.batch_size = 65}; /* the default */")
        e(1, "for (int step = 0; step < ITERATIONS; ++step) {")
        if not leaky:
            e(2, "opts.batch_size = IMAGES[step %% %d];" % len(s.images))
        else:
            e(2, "/* the batch size is never set */")
        e(2, "TOTAL[tid] += attack_step(step, opts);")
        e(1, "}")
        e(0, "}")
        return "TOTAL[0]"

    if k == "cache_growth":
        e(0, "double TOTAL[THREADS];")
        e(0, "size_t workspace_bytes(int step) {")
        e(1, "for (size_t i = 0; i < sizeof RARE_STEPS / sizeof RARE_STEPS[0]; ++i)")
        e(2, "if (RARE_STEPS[i] == step) return RARE_BYTES[i];")
        e(1, "return WORKSPACE[step %% %d];" % len(s.ws_sizes))
        e(0, "}")
        e(0)
        prealloc = not leaky and s.fixed_kind == "b"
        if leaky:
            e(0, "/* Keeps the largest workspace seen so far, as a caching allocator keeps its")
            e(0, " * largest segment: a rare huge input grows it for good. */")
            e(0, "typedef struct {")
            e(1, "void *buffer;")
            e(1, "size_t capacity;")
            e(0, "} workspace_cache;")
            e(0, "workspace_cache CACHES[THREADS];")
            e(0)
            e(0, "void *cache_get(workspace_cache *c, size_t nbytes) {")
            e(1, "if (nbytes > c->capacity) {")
            e(2, "void *bigger = %s;" % B("nbytes"), "growth")
            e(2, "if (c->buffer) %s(c->buffer);" % F)
            e(2, "c->buffer = bigger;")
            e(2, "c->capacity = nbytes;")
            e(1, "}")
            e(1, "return c->buffer;")
            e(0, "}")
            e(0)
        elif prealloc:
            e(0, "void *WORKSPACES[THREADS];")
            e(0)
        per_step = not leaky and not prealloc

        def body(d, g):
            e(d, "void *x = %s;" % E("BATCH"), "transient")
            e(d, "output_t output = model_forward(MODEL, x, 1);", "transient")
            e(d, "TOTAL[tid] += output_item(&output);")
            if per_step:
                e(d, "void *workspace = %s;" % B("workspace_bytes(%s)" % g), "transient")
                e(d, "%s(workspace);" % F)
            e(d, "output_free(&output);")
            e(d, "%s(x);" % F)
            c_noise_calls(e, d, s, "pattern", g)

        if st == "func":
            e(0, "void cache_step(int g, int tid) {")
            if not per_step:
                e(1, "(void)g;")
            body(1, "g")
            e(0, "}")
            e(0)
        e(0, "void pattern_phase(int tid) {")
        if prealloc:
            e(1, "WORKSPACES[tid] = %s; /* sized for the largest input */" % B("MAX_WORKSPACE"),
              "retained")
        d = loop(1)
        e(d, "int g = %s;" % ("epoch * ITERATIONS + step" if s.epochs > 1 else "step"))
        e(d, "(void)g;")
        if leaky:
            e(d, "void *workspace = cache_get(&CACHES[tid], workspace_bytes(g));")
            e(d, "(void)workspace;")
        if st == "func":
            e(d, "cache_step(g, tid);")
        else:
            body(d, "g")
        close(d)
        e(0, "}")
        return "TOTAL[0]"

    if k == "lru_cache":
        e(0, "double TOTAL[THREADS];")
        e(0, "/* Memoizes each batch's embedding%s. */" % (
            "" if leaky else ", keeping the CAPACITY most recent"))
        e(0, "typedef struct {")
        e(1, "ptrvec entries;")
        e(0, "} embedding_cache;")
        e(0, "embedding_cache CACHES[THREADS];")
        e(0)
        e(0, "void cache_put(embedding_cache *c, void *value) {")
        e(1, "ptrvec_push(&c->entries, value);")
        if not leaky:
            e(1, "while (c->entries.n > CAPACITY) {")
            e(2, "%s(c->entries.v[0]);" % F)
            e(2, "memmove(c->entries.v, c->entries.v + 1, --c->entries.n * sizeof(void *));")
            e(1, "}")
        e(0, "}")
        e(0)

        def body(d):
            e(d, "void *x = %s;" % E("BATCH"), "transient")
            e(d, "output_t output = model_forward(MODEL, x, 1);", "transient")
            e(d, "TOTAL[tid] += output_item(&output);")
            e(d, "output_free(&output);")
            e(d, "%s(x);" % F)
            d2 = c_reps_open(e, d, s)
            e(d2, "void *embedding = %s;" % B("ENTRY"), "leak" if leaky else "retained")
            e(d2, "cache_put(&CACHES[tid], embedding);")
            c_reps_close(e, d2, s)
            c_noise_calls(e, d, s, "pattern")

        if st == "func":
            e(0, "void embed_step(int step, int tid) {")
            e(1, "(void)step;")
            body(1)
            e(0, "}")
            e(0)
        e(0, "void pattern_phase(int tid) {")
        d = loop(1)
        if st == "func":
            e(d, "embed_step(step, tid);")
        else:
            body(d)
        close(d)
        e(0, "}")
        return "(double)CACHES[0].entries.n"

    if k == "grad_accumulation":
        e(0, "double TOTAL[THREADS];")
        e(0, "outvec PENDING[THREADS];")
        e(0)
        e(0, "double optimizer_step(outvec *pending) {")
        e(1, "double sum = 0;")
        e(1, "for (size_t i = 0; i < pending->n; ++i)")
        e(2, "sum += output_item(&pending->v[i]);")
        e(1, "return sum;")
        e(0, "}")
        e(0)
        e(0, "void zero_grad(outvec *pending) {")
        e(1, "for (size_t i = 0; i < pending->n; ++i)")
        e(2, "output_free(&pending->v[i]);")
        e(1, "pending->n = 0;")
        e(0, "}")
        e(0)

        def body(d):
            d2 = c_reps_open(e, d, s)
            e(d2, "void *x = %s;" % E("BATCH"), "transient")
            e(d2, "output_t loss = model_forward(MODEL, x, 1);", "leak" if leaky else "retained")
            e(d2, "outvec_push(&PENDING[tid], loss);")
            e(d2, "%s(x);" % F)
            c_reps_close(e, d2, s)
            c_noise_calls(e, d, s, "pattern")

        if st == "func":
            e(0, "void micro_batch(int step, int tid) {")
            e(1, "(void)step;")
            body(1)
            e(0, "}")
            e(0)
        e(0, "void pattern_phase(int tid) {")
        d = loop(1)
        if st == "func":
            e(d, "micro_batch(step, tid);")
        else:
            body(d)
        # Counted over the whole run, not per epoch: a period that straddled an epoch would
        # accumulate up to 2 x ACCUMULATE - 1 steps.
        e(d, "if ((%s + 1) %% ACCUMULATE == 0) {" %
          ("epoch * ITERATIONS + step" if s.epochs > 1 else "step"))
        e(d + 1, "TOTAL[tid] += optimizer_step(&PENDING[tid]);")
        if not leaky:
            e(d + 1, "zero_grad(&PENDING[tid]);")
        e(d, "}")
        close(d)
        if not leaky:
            e(1, "zero_grad(&PENDING[tid]);")
        e(0, "}")
        return "(double)PENDING[0].n"

    if k == "epoch_accumulation":
        e(0, "double TOTAL[THREADS];")
        e(0, "outvec HISTORY[THREADS];")
        e(0)
        if st == "func":
            e(0, "output_t forward_step(void) {")
            e(1, "void *x = %s;" % E("BATCH"), "transient")
            e(1, "output_t output = model_forward(MODEL, x, 1);",
              "leak" if leaky else "accumulation")
            e(1, "%s(x);" % F)
            e(1, "return output;")
            e(0, "}")
            e(0)
        e(0, "void pattern_phase(int tid) {")
        e(1, "outvec epoch_outputs = {0};")
        e(1, "for (int epoch = 0; epoch < EPOCHS; ++epoch) {")
        e(2, "for (int step = 0; step < ITERATIONS; ++step) {")
        d = c_reps_open(e, 3, s)
        if st == "func":
            e(d, "outvec_push(&epoch_outputs, forward_step());")
        else:
            e(d, "void *x = %s;" % E("BATCH"), "transient")
            e(d, "output_t output = model_forward(MODEL, x, 1);",
              "leak" if leaky else "accumulation")
            e(d, "outvec_push(&epoch_outputs, output);")
            e(d, "%s(x);" % F)
        c_reps_close(e, d, s)
        c_noise_calls(e, 3, s, "pattern")
        e(2, "}")
        e(2, "for (size_t i = 0; i < epoch_outputs.n; ++i) {")
        e(3, "TOTAL[tid] += output_item(&epoch_outputs.v[i]) / (double)epoch_outputs.n;")
        if leaky:
            e(3, "outvec_push(&HISTORY[tid], epoch_outputs.v[i]);")
        else:
            e(3, "output_free(&epoch_outputs.v[i]);")
        e(2, "}")
        e(2, "epoch_outputs.n = 0;")
        e(1, "}")
        e(1, "free(epoch_outputs.v);")
        e(0, "}")
        return "(double)HISTORY[0].n"

    raise AssertionError(k)


C_FUNCTION_RE = re.compile(r"^[a-z_][a-z_0-9 *]* \**([a-z_0-9]+)\(([^)]*)\) \{$")


def c_void_params(text):
    """Marks every parameter of the program's functions used ((void)p;), so that the shapes that
    leave one unused still compile under -Wall -Wextra -Werror."""
    out = []
    for line in text.split("\n"):
        out.append(line)
        m = C_FUNCTION_RE.match(line)
        if m and m.group(2) not in ("", "void"):
            for param in m.group(2).split(","):
                pname = param.strip().split()[-1].lstrip("*")
                out.append("    (void)%s;" % pname)
    return "\n".join(out)


def render_c(prog):
    p, s, leaky = prog["pattern_obj"], prog["shape_obj"], prog["variant"] == "leaky"
    name = prog["name"]
    N = CNames(s)
    e = Src("//")
    for ln in header_lines(prog, "//"):
        e(0, ln)
    e(0, "#define _GNU_SOURCE")
    e(0, "#include <cuda_runtime_api.h>")
    e(0, "#include <pthread.h>")
    e(0, "#include <stdint.h>")
    e(0, "#include <stdio.h>")
    e(0, "#include <stdlib.h>")
    e(0, "#include <string.h>")
    e(0, "#include <sys/wait.h>")
    e(0, "#include <unistd.h>")
    e(0)
    files = {}
    if s.helpers:
        e(0, '#include "%s_util.h"' % name)
        h = Src("//")
        h(0, "// The program's own device-memory helpers (user code; see %s.c)." % name)
        h(0, "#pragma once")
        h(0, "#include <stddef.h>")
        h.block(C_TYPES)
        h(0, "void *dev_alloc(size_t nbytes);")
        h(0, "void dev_free(void *p);")
        h(0, "void *pool_alloc(pool_t *pool, size_t nbytes);")
        files["%s_util.h" % name] = h.text()
        u = Src("//")
        u(0, "// The program's own device-memory helpers: user code in the program's tree, not a")
        u(0, "// library. Allocations here are judged at their caller's line (HELPER).")
        u(0, "#include <cuda_runtime_api.h>")
        u(0, "#include <stdio.h>")
        u(0, "#include <stdlib.h>")
        u(0)
        u(0, '#include "%s_util.h"' % name)
        u(0)
        u.block(c_lib_text(True, "// HELPER"))
        files["%s_util.c" % name] = u.text()
    else:
        e.block(C_TYPES)
        e.block(C_DIRECT_ALLOC)
        e.block(c_lib_text(False, "// HELPER"))
    e(0)
    e.block(C_VEC)
    e(0)
    consts = [("WIDTH", s.width), ("BATCH", s.batch), ("ITERATIONS", s.iterations),
              ("EPOCHS", s.epochs), ("THREADS", s.threads), ("WARMUP", s.warmup),
              ("LABEL", s.label), ("ENTRY", s.entry), ("CAPACITY", s.capacity),
              ("ACCUMULATE", s.accum), ("RANKS", s.ranks), ("CHECKPOINT", s.ckpt)]
    for kind, cfg in s.clean.items():
        consts += [("EPOCHS_" + kind.upper(), cfg["epochs"]),
                   ("ITERATIONS_" + kind.upper(), cfg["iterations"])]
    if p.key == "oversized_buffer":
        consts += [("IMAGE", s.image), ("BIG_STEP", s.big_step), ("BIG_INPUT", s.big_input)]
    if p.key == "cache_growth":
        consts += [("MAX_WORKSPACE", max(list(s.ws_rare.values()) + s.ws_sizes))]
    for k, v in consts:
        e(0, "#define %s ((size_t)%dull)" % (k, v) if k in (
            "WIDTH", "BATCH", "LABEL", "ENTRY", "CHECKPOINT", "IMAGE", "BIG_INPUT",
            "MAX_WORKSPACE") else "#define %s %d" % (k, v))
    if s.reps:
        e(0, c_array("REPS", "int", s.reps))
    if p.key == "oversized_buffer":
        e(0, c_array("IMAGES", "size_t", s.images))
    if p.key == "cache_growth":
        e(0, c_array("WORKSPACE", "size_t", s.ws_sizes))
        steps = sorted(s.ws_rare)
        e(0, c_array("RARE_STEPS", "int", steps))
        e(0, c_array("RARE_BYTES", "size_t", [s.ws_rare[x] for x in steps]))
    e(0)
    e(0, "model_t *MODEL;")
    if s.helpers:
        e(0, "pool_t POOL;")
    e(0)
    for i, nz in enumerate(s.noise):
        e(0, c_array("NOISE_SIZES_%d" % i, "size_t", nz["sizes"]))
        e(0, c_array("NOISE_COUNTS_%d" % i, "int", nz["counts"]))
        e(0, "/* Transient scratch buffers of varying sizes and counts. */")
        e(0, "void noise_%d(int step) {" % i)
        e(1, "for (int j = 0; j < NOISE_COUNTS_%d[step %% %d]; ++j) {" % (i, len(nz["counts"])))
        e(2, "void *scratch = %s;" % N.B("NOISE_SIZES_%d[(step + j) %% %d]" % (
            i, len(nz["sizes"]))), "transient")
        e(2, "%s(scratch);" % N.free)
        e(1, "}")
        e(0, "}")
        e(0)
    if s.warmup:
        e(0, "void warmup(void) {")
        e(1, "for (int step = 0; step < WARMUP; ++step) {")
        e(2, "void *x = %s;" % N.E("BATCH"), "transient")
        e(2, "output_t output = model_forward(MODEL, x, 1);", "transient")
        e(2, "output_free(&output);")
        e(2, "%s(x);" % N.free)
        c_noise_calls(e, 2, s, "warmup")
        e(1, "}")
        e(0, "}")
        e(0)
    for kind in ("train", "eval"):
        if kind in s.clean:
            c_clean_phase(e, s, N, kind)
    summary = c_pattern(e, p, s, N, leaky)
    e(0)
    if s.threads > 1 and s.one_leaky_thread:
        e(0, "/* A worker that only churns: everything it allocates dies with its iteration. */")
        e(0, "void clean_worker(int tid) {")
        e(1, "(void)tid;")
        e(1, "for (int step = 0; step < ITERATIONS * EPOCHS; ++step) {")
        e(2, "void *x = %s;" % N.E("BATCH"), "transient")
        e(2, "output_t output = model_forward(MODEL, x, 1);", "transient")
        e(2, "output_free(&output);")
        e(2, "%s(x);" % N.free)
        c_noise_calls(e, 2, s, "pattern")
        e(1, "}")
        e(0, "}")
        e(0)
    if s.threads > 1:
        e(0, "void *worker_main(void *arg) {")
        e(1, "int tid = (int)(intptr_t)arg;")
        if s.one_leaky_thread:
            e(1, "if (tid == 0)")
            e(2, "pattern_phase(tid);")
            e(1, "else")
            e(2, "clean_worker(tid);")
        else:
            e(1, "pattern_phase(tid);")
        e(1, "return NULL;")
        e(0, "}")
        e(0)
        e(0, "void run_workers(void) {")
        e(1, "pthread_t workers[THREADS];")
        e(1, "for (int t = 0; t < THREADS; ++t)")
        e(2, "pthread_create(&workers[t], NULL, worker_main, (void *)(intptr_t)t);")
        e(1, "for (int t = 0; t < THREADS; ++t)")
        e(2, "pthread_join(workers[t], NULL);")
        e(0, "}")
        e(0)
    ranks = p.key == "torch_load_ranks"
    e(0, "int run(int rank) {")
    if ranks:
        e(1, "if (cudaSetDevice(rank) != cudaSuccess) return 3;")
    else:
        e(1, "(void)rank;")
    e(1, "MODEL = model_new(WIDTH);", "retained")
    if ranks:
        if leaky:
            e(1, "cudaSetDevice(0); /* torch.load restores onto the device it was saved from */")
            e(1, "void *checkpoint = %s;" % N.E("CHECKPOINT"), "retained")
            e(1, "cudaSetDevice(rank);")
        else:
            e(1, "void *checkpoint = %s; /* map_location: this rank's device */" % N.E(
                "CHECKPOINT"), "transient")
            e(1, "%s(checkpoint); /* copied into the model */" % N.free)
    for ph in s.phases:
        if ph == "warmup":
            e(1, "warmup();")
        elif ph in ("train", "eval"):
            e(1, "clean_%s();" % ph)
        elif s.threads > 1:
            e(1, "run_workers();")
        else:
            e(1, "pattern_phase(0);")
    e(1, 'printf("%s %%g\\n", %s);' % (name, summary))
    if ranks and leaky:
        e(1, "%s(checkpoint);" % N.free)
    e(1, "model_free(MODEL);")
    e(1, "return 0;")
    e(0, "}")
    e(0)
    e(0, "int main(int argc, char **argv) {")
    if ranks:
        e(1, 'if (argc == 3 && strcmp(argv[1], "--rank") == 0) return run(atoi(argv[2]));')
        e(1, "pid_t children[RANKS];")
        e(1, "for (int r = 1; r < RANKS; ++r) {")
        e(2, "char rank[16];")
        e(2, 'snprintf(rank, sizeof rank, "%d", r);')
        e(2, "children[r] = fork();")
        e(2, "if (children[r] == 0) {")
        e(3, 'execl("/proc/self/exe", argv[0], "--rank", rank, (char *)NULL);')
        e(3, "_exit(127);")
        e(2, "}")
        e(1, "}")
        e(1, "int rc = run(0);")
        e(1, "for (int r = 1; r < RANKS; ++r) {")
        e(2, "int status = 0;")
        e(2, "waitpid(children[r], &status, 0);")
        e(2, "if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;")
        e(1, "}")
        e(1, "return rc;")
    else:
        e(1, "(void)argc;")
        e(1, "(void)argv;")
        e(1, "return run(0);")
    e(0, "}")
    files["%s.c" % name] = c_void_params(e.text())
    # Keep the model functions' HELPER lines honest in the direct style too: they are the
    # program's own model library, judged at the caller.
    return files


# --------------------------------------------------------------------------------------------


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
