"""The corpus's vocabulary (docs/verdict-corpus.md): the verdict words, the field-report
patterns and the program shapes drawn for them from a seed.
"""
import random
import re


GENERATOR_VERSION = 5
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
    # Half the shapes with noise call it first in each iteration, before the loop's other lines:
    # an iteration whose noise allocates nothing goes back to another line than one whose noise
    # does (one loop with two heads). Drawn from a generator of its own, seeded by the shape's
    # sizes, so that every other value of every shape is what generator v4 drew.
    s.noise_first = bool(s.noise) and random.Random(s.width * 1000003 + s.batch).random() < 0.5
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


def main_phase_calls(s):
    """The calls main makes, one per phase of the shape in order: (function, argument or None)."""
    for ph in s.phases:
        if ph == "warmup":
            yield "warmup", None
        elif ph in ("train", "eval"):
            yield "clean_" + ph, None
        elif s.threads > 1:
            yield "run_workers", None
        else:
            yield "pattern_phase", "0"


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
        "noise_first": s.noise_first,
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
        "noise first": sum(s.noise_first for _, s in shapes) >= 2,
        "inline and func": {s.style for _, s in shapes} == {"func", "inline"},
    }
    return [k for k, v in feats.items() if not v]
