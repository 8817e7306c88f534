"""What a generated Python program is made of besides its pattern: the user's helper module,
the names it allocates through, loops, repetitions, noise calls and the clean phases.
"""
from corpus_model import RT
from source_emitter import noise_calls


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
    noise_calls(e, d, s, phase, step, "noise_%d(%s)")


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
