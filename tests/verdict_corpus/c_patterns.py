"""Each pattern's C code, leaky or fixed, with the ground truth of every allocating line."""
from c_library import c_loop_close, c_loop_open, c_noise_calls, c_reps_close, c_reps_open


def c_pattern(e, p, s, N, leaky):
    """Defines void pattern_phase(int tid) and its globals; returns a summary expression."""
    k, st = p.key, s.style
    E, B, F = N.E, N.B, N.free

    def loop(d):
        return c_loop_open(e, d, s.epochs, "ITERATIONS", "EPOCHS")

    def close(d):
        c_loop_close(e, d, s.epochs)

    def step_function(name, body):
        """In the func style, the loop body as `void NAME(int step, int tid)`."""
        if st == "func":
            e(0, "void %s(int step, int tid) {" % name)
            e(1, "(void)step;")
            body(1)
            e(0, "}")
            e(0)

    def step(d, name, body):
        """One iteration: a call of the step function, or the body written in the loop."""
        if st == "func":
            e(d, "%s(step, tid);" % name)
        else:
            body(d)

    def phase(name, body):
        """pattern_phase(tid): the loops around one step."""
        step_function(name, body)
        e(0, "void pattern_phase(int tid) {")
        d = loop(1)
        step(d, name, body)
        close(d)
        e(0, "}")

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

        phase("train_step", body)
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

        phase("rank_step", body)
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

        phase("eval_step", body)
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

        phase("embed_step", body)
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

        step_function("micro_batch", body)
        e(0, "void pattern_phase(int tid) {")
        d = loop(1)
        step(d, "micro_batch", body)
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
