"""A whole C program (its sources, helpers and header) from a pattern, a variant and a shape."""
import re

from source_emitter import Src, header_lines
from c_library import (
    CNames, C_DIRECT_ALLOC, C_TYPES, C_VEC, c_array, c_clean_phase, c_lib_text, c_noise_calls)
from c_patterns import c_pattern
from corpus_model import main_phase_calls


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

    def transient_batch(d, phase):
        """One step that keeps nothing: a batch, the model's output, the phase's noise."""
        e(d, "void *x = %s;" % N.E("BATCH"), "transient")
        e(d, "output_t output = model_forward(MODEL, x, 1);", "transient")
        e(d, "output_free(&output);")
        e(d, "%s(x);" % N.free)
        c_noise_calls(e, d, s, phase)

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
        transient_batch(2, "warmup")
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
        transient_batch(2, "pattern")
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
    for function, arg in main_phase_calls(s):
        e(1, "%s(%s);" % (function, arg or ""))
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
