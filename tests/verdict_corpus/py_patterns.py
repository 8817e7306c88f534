"""Each pattern's Python code, leaky or fixed, with the ground truth of every allocating line."""
from corpus_model import RT, tmp_truth
from py_library import py_loop_open, py_noise_calls, py_reps_open


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
