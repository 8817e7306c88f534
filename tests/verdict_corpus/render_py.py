"""A whole Python program (and its helper module) from a pattern, a variant and a shape."""
from source_emitter import Src, header_lines
from py_library import PY_HELPER_MODULE, PyNames, py_clean_phase, py_noise_calls
from py_patterns import py_pattern
from corpus_model import main_phase_calls


def render_py(prog):
    p, s, leaky = prog["pattern_obj"], prog["shape_obj"], prog["variant"] == "leaky"
    name = prog["name"]
    helper_module = prog["helper_module"]
    N = PyNames(s, helper_module)
    e = Src("#")

    def transient_batch(d, phase):
        """One step that keeps nothing: the model's output of a batch, the phase's noise."""
        e(d, "model(%s(BATCH)).item()" % N.empty, "transient")
        py_noise_calls(e, d, s, phase)

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
        transient_batch(2, "warmup")
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
        transient_batch(2, "pattern")
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
    for function, arg in main_phase_calls(s):
        e(1, "%s(%s)" % (function, ", ".join(["model"] + ([arg] if arg else []))))
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
