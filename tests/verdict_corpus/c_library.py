"""What a generated C program is made of besides its pattern: the fake-torch-like C library
(tensors, model, allocation helpers), names, loops, repetitions, noise calls and the clean phases.
"""
from source_emitter import noise_calls


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
    noise_calls(e, d, s, phase, step, "noise_%d(%s);")


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
