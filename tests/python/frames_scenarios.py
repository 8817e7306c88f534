# -*- coding: utf-8 -*-
"""Runs under one interpreter (3.9+): captures the Python stack through the pywalk probe (ctypes,
so the GIL is released during the capture) and compares it with traceback.extract_stack() taken
on the same source line. Prints one JSON object per scenario, then a summary line.

usage: python frames_scenarios.py LIBPYWALK [--bench]
"""
import asyncio
import ctypes
import json
import os
import sys
import threading
import traceback

LIB = ctypes.CDLL(sys.argv[1])
LIB.pywalk_capture_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
LIB.pywalk_capture_json.restype = ctypes.c_int
LIB.pywalk_capture_json_cxx_thread.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
LIB.pywalk_capture_json_cxx_thread.restype = ctypes.c_int
LIB.pywalk_last_native_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
LIB.pywalk_info_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
LIB.pywalk_warnings.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
LIB.pywalk_bench_ns.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
LIB.pywalk_bench_ns.restype = ctypes.c_double
LIB.pywalk_bench_cxx_thread_ns.argtypes = [ctypes.c_int]
LIB.pywalk_bench_cxx_thread_ns.restype = ctypes.c_double

BUF_SIZE = 1 << 20
CAP = LIB.pywalk_capture_json
SCENARIOS = []


def newbuf():
    return ctypes.create_string_buffer(BUF_SIZE)


def text(fn):
    buf = newbuf()
    if fn(buf, BUF_SIZE) < 0:
        raise RuntimeError("pywalk buffer too small")
    return buf.value.decode("utf-8")


def qualname(code):
    # The probe reports co_qualname where it exists (3.11+) and co_name before.
    return getattr(code, "co_qualname", code.co_name)


def verdict(rc, buf, expected):
    """Compares the capture in `buf` with `expected` (extract_stack, outermost first), using the
    calling frame's chain for qualified names."""
    native = json.loads(text(LIB.pywalk_last_native_json))
    if rc < 0:
        return {"ok": False, "why": "buffer too small"}
    got = json.loads(buf.value.decode("utf-8"))
    want = []
    frame = sys._getframe(1)
    for summary in reversed(expected):
        want.append({
            "file": summary.filename,
            "function": qualname(frame.f_code),
            "line": summary.lineno or 0,
        })
        if frame.f_code.co_name != summary.name:
            return {"ok": False, "why": "frame chain and extract_stack disagree"}
        frame = frame.f_back
    trimmed = [{k: f[k] for k in ("file", "function", "line")} for f in got]
    if trimmed != want:
        diff = [(i, g, w) for i, (g, w) in enumerate(zip(trimmed, want)) if g != w][:3]
        return {"ok": False, "why": "mismatch", "got_n": len(got), "want_n": len(want),
                "first_diffs": diff}
    if not native["aligned"] or native["native_evals"] != native["entries"]:
        return {"ok": False, "why": "native eval frames do not line up", "native": native,
                "entries": [f["entry"] for f in got]}
    return {"ok": True, "frames": len(got)}


def scenario(fn):
    SCENARIOS.append(fn)
    return fn


def run_scenario(fn):
    try:
        results = fn()
    except Exception as exc:  # a broken scenario is a failure, not the end of the run
        results = [{"ok": False, "why": "exception: %r" % (exc,)}]
    if isinstance(results, dict):
        results = [results]
    failed = [r for r in results if not r["ok"]]
    return {"scenario": fn.__name__, "ok": not failed and bool(results), "checks": len(results),
            "failures": failed[:2]}


# --- scenarios -------------------------------------------------------------------------------

@scenario
def nested_calls():
    def a():
        return b()

    def b():
        return c()

    def c():
        buf = newbuf()
        rc, exp = CAP(buf, BUF_SIZE), traceback.extract_stack()
        return verdict(rc, buf, exp)
    return a()


def _make_cycle(count):
    """count distinct functions calling each other in a ring, each from its own line."""
    namespace = {"_leaf": None}
    source = ""
    for i in range(count):
        source += "def ring_%d(depth):\n" % i
        source += "    if depth == 0:\n        return _leaf()\n"
        source += "    return ring_%d(depth - 1)\n" % ((i + 1) % count)
    exec(compile(source, "<ring-%d>" % count, "exec"), namespace)
    return namespace


@scenario
def repeated_codes():
    """Code objects met several times in one stack (recursion, a ring of 3 and of 12 functions,
    more than the walk's per-capture memo holds), interleaved: every frame must keep its own
    function and line, however often its code object appeared further in."""
    out = []

    def recurse(depth):
        if depth == 0:
            return _leaf()
        return recurse(depth - 1)
    out.append(recurse(30))
    for count in (3, 12):
        ring = _make_cycle(count)
        ring["_leaf"] = _leaf
        for depth in (count - 1, 3 * count + 1):
            out.append(ring["ring_0"](depth))
    # The same again, now that every code is in the thread's cache.
    out.append(recurse(30))
    out.append(ring["ring_5"](40))
    return out


def _leaf():
    buf = newbuf()
    rc, exp = CAP(buf, BUF_SIZE), traceback.extract_stack()
    return verdict(rc, buf, exp)


def _combine(x, y, z):
    return y


@scenario
def multiline_call():
    def callee(x, y,
               z):
        return _leaf()
    first = callee(
        1,
        2,
        3,
    )
    second = _combine(
        1,
        _leaf(),
        3,
    )
    third = _combine(1, [
        0,
        _leaf()][1], 3)
    return [first, second, third]


@scenario
def generators():
    def gen():
        yield _leaf()
        yield _leaf()

    def gen_from():
        yield from gen()

    out = [r for r in gen()]
    out += list(gen_from())
    g = gen()
    out.append(next(g))
    out.append(g.send(None))
    out += [r for r in (_leaf() for _ in range(2))]
    return out


@scenario
def coroutines():
    async def inner():
        await asyncio.sleep(0)
        return _leaf()

    async def outer():
        first = await inner()
        second = await asyncio.gather(inner(), inner())
        return [first] + list(second)
    return asyncio.run(outer())


class Widget:
    instances = []

    def __init__(self, value):
        self.value = value
        Widget.instances.append(_leaf())

    def method(self):
        return _leaf()

    @classmethod
    def klass(cls):
        return _leaf()

    @staticmethod
    def static():
        return _leaf()

    @property
    def prop(self):
        return _leaf()

    def __getitem__(self, key):
        return _leaf()

    def __add__(self, other):
        return _leaf()

    def __eq__(self, other):
        return _leaf()["ok"]

    __hash__ = object.__hash__


@scenario
def methods():
    Widget.instances.clear()
    # Enough calls for 3.13 to specialize construction: CALL_ALLOC_AND_ENTER_INIT pushes an
    # _Py_InitCleanup frame under __init__ that tracebacks hide (_co_firsttraceable).
    for i in range(64):
        Widget(i)
    w = Widget(0)
    out = list(Widget.instances)
    out += [w.method(), Widget.klass(), Widget.static(), w.prop, w[1], w + w]
    out.append({"ok": w == w})
    for _ in range(16):
        out.append(w.method())
    return out


@scenario
def lambdas():
    direct = (lambda: _leaf())()
    keyed = []
    sorted([3, 1, 2], key=lambda v: (keyed.append(_leaf()), v)[1])
    mapped = list(map(lambda v: _leaf(), range(2)))
    return [direct] + keyed + mapped


@scenario
def deep_recursion():
    def down(n):
        if n == 0:
            return _leaf()
        return down(n - 1)
    result = down(200)
    if result.get("ok") and result["frames"] < 200:
        return {"ok": False, "why": "only %d frames" % result["frames"]}
    return result


@scenario
def truncated():
    """600 frames deep: the innermost 512 are kept, and the merge must refuse to pair a stack
    whose outermost eval calls are missing."""
    def down(n):
        if n == 0:
            buf = newbuf()
            rc, exp = CAP(buf, BUF_SIZE), traceback.extract_stack()
            return rc, buf, exp
        return down(n - 1)
    rc, buf, exp = down(600)
    native = json.loads(text(LIB.pywalk_last_native_json))
    got = [(f["file"], f["line"]) for f in json.loads(buf.value.decode("utf-8"))]
    want = [(s.filename, s.lineno) for s in reversed(exp)][:512]
    return [{"ok": rc >= 0 and got == want, "why": "innermost 512 frames", "n": len(got)},
            {"ok": not native["aligned"], "why": "merge falls back", "native": native}]


@scenario
def threads():
    out = []

    def worker():
        def inner():
            return _leaf()
        out.append(inner())
        out.append(_leaf())

    ts = [threading.Thread(target=worker, name="w%d" % i) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


EXEC_SOURCE = '''
def exec_func():
    buf = newbuf()
    rc, exp = CAP(buf, BUF_SIZE), traceback.extract_stack()
    return verdict(rc, buf, exp)

def exec_outer():
    return exec_func()
'''


@scenario
def exec_code():
    out = []
    for filename in ("<exec-test>", "<exec-ünï>", "<exec-файл>", "<exec-\U00020000>"):
        namespace = dict(globals())
        exec(compile(EXEC_SOURCE, filename, "exec"), namespace)
        out.append(namespace["exec_outer"]())
    # Fresh code objects at recycled addresses: the registry must notice.
    for i in range(50):
        namespace = dict(globals())
        exec(compile(EXEC_SOURCE.replace("exec_func", "exec_func_%d" % i),
                     "<exec-%d>" % i, "exec"), namespace)
        out.append(namespace["exec_outer"]())
    return out


def _probe_caller_line():
    buf = newbuf()
    CAP(buf, BUF_SIZE)
    return json.loads(buf.value.decode("utf-8"))[1]["line"]


@scenario
def address_reuse():
    """exec() in a loop frees and reallocates code objects and line tables at the same
    addresses, under the same name and file; only the line table's content differs. Every
    capture must still report the line of the function it ran."""
    out = []
    for i in range(2000):
        k = i % 6
        body = ["    a = 1\n"] * 6
        body[k] = "    b = probe()\n"
        namespace = {"probe": _probe_caller_line}
        exec(compile("def f():\n" + "".join(body) + "    return b\n", "<reused>", "exec"),
             namespace)
        line = namespace["f"]()
        if line != 2 + k:
            out.append({"ok": False, "why": "stale code info", "iteration": i, "line": line,
                        "want": 2 + k})
    return out or [{"ok": True}]


def fünf():
    return _leaf()


def функция():
    return fünf()


def 𠀀名():
    return функция()


@scenario
def non_ascii_names():
    return [fünf(), функция(), 𠀀名()]


@scenario
def exceptions():
    out = []
    try:
        raise ValueError("x")
    except ValueError:
        out.append(_leaf())
    try:
        try:
            raise KeyError("y")
        finally:
            out.append(_leaf())
    except KeyError:
        pass
    try:
        {}["missing"]
    except KeyError as exc:
        try:
            raise RuntimeError("z") from exc
        except RuntimeError:
            buf = newbuf()
            rc, exp = CAP(buf, BUF_SIZE), traceback.extract_stack()
            out.append(verdict(rc, buf, exp))
    with _Ctx():
        pass
    out.extend(_Ctx.results)
    return out


class _Ctx:
    results = []

    def __enter__(self):
        _Ctx.results.append(_leaf())

    def __exit__(self, *exc):
        _Ctx.results.append(_leaf())


@scenario
def cxx_thread():
    buf = newbuf()
    rc = LIB.pywalk_capture_json_cxx_thread(buf, BUF_SIZE)
    frames = json.loads(buf.value.decode("utf-8"))
    return {"ok": rc >= 0 and frames == [], "frames": frames[:2]}


_buf = newbuf()
_rc, _exp = CAP(_buf, BUF_SIZE), traceback.extract_stack()
MODULE_LEVEL = verdict(_rc, _buf, _exp)


@scenario
def module_level():
    return MODULE_LEVEL


SUBINTERPRETER_SOURCE = '''
import ctypes, json, threading
lib = ctypes.CDLL(%(lib)r)
results = {}
def capture(key):
    buf = ctypes.create_string_buffer(1 << 20)
    lib.pywalk_capture_json(buf, len(buf))
    results[key] = json.loads(buf.value.decode("utf-8"))
capture("run_string")
t = threading.Thread(target=capture, args=("thread",))
t.start()
t.join()
with open(%(out)r, "w") as f:
    json.dump(results, f)
'''


@scenario
def subinterpreters():
    """A thread created in a subinterpreter gets no Python stack (and one warning). On 3.12+ a
    thread that switches into one is rebound to the subinterpreter's thread state, so it gets
    none either; up to 3.11 the binding stays with the main thread state, whose frames (the
    caller of the switch) are what the walk then reports."""
    import tempfile
    try:
        import _interpreters as interpreters
    except ImportError:
        try:
            import _xxsubinterpreters as interpreters
        except ImportError:
            return {"ok": True, "skipped": "no subinterpreter module"}
    if hasattr(interpreters, "new_config"):
        interp = interpreters.create(interpreters.new_config("legacy"))
    else:
        try:
            interp = interpreters.create(isolated=False)
        except TypeError:
            interp = interpreters.create()
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        source = SUBINTERPRETER_SOURCE % {"lib": sys.argv[1], "out": out}
        exp, _ = traceback.extract_stack(), interpreters.run_string(interp, source)
        with open(out) as f:
            got = json.load(f)
    finally:
        os.unlink(out)
        interpreters.destroy(interp)
    checks = [{"ok": got["thread"] == [], "why": "subinterpreter thread", "got": got["thread"][:2]}]
    if sys.version_info >= (3, 12):
        checks.append({"ok": got["run_string"] == [], "why": "switched thread",
                       "got": got["run_string"][:2]})
    else:
        want = [{"file": s.filename, "line": s.lineno} for s in reversed(exp)]
        trimmed = [{"file": f["file"], "line": f["line"]} for f in got["run_string"]]
        checks.append({"ok": trimmed == want, "why": "switched thread shows the caller's frames",
                       "got": trimmed[:2], "want": want[:2]})
    warned = text(LIB.pywalk_warnings).count("subinterpreter")
    checks.append({"ok": warned == 1, "why": "one warning about subinterpreters"})
    return checks


class _AtFinalization:
    """Captures from __del__ while the interpreter finalizes: no frames, one warning."""

    def __del__(self, lib=LIB, write=os.write, dumps=json.dumps, make=ctypes.create_string_buffer):
        buf = make(BUF_SIZE)
        lib.pywalk_capture_json(buf, BUF_SIZE)
        warnings = make(BUF_SIZE)
        lib.pywalk_warnings(warnings, BUF_SIZE)
        line = dumps({"finalizing": True, "frames": buf.value.decode("utf-8"),
                      "warned": b"finalizing" in warnings.value})
        write(1, line.encode("utf-8") + b"\n")


def bench():
    """ns per capture at 20 and 100 frames, every frame a distinct code object (a chain of
    generated functions), every code object already registered."""
    base = ctypes.c_int(0)
    LIB.pywalk_bench_ns(1, ctypes.byref(base))
    rows = []
    for target in (20, 100):
        frames = ctypes.c_int(0)
        # bench() -> chain_0 -> ... -> chain_{k-1} -> measure, from `base` frames below bench.
        k = target - base.value - 1
        namespace = {"measure": None}
        source = "".join("def chain_%d():\n    return chain_%d()\n" % (i, i + 1) for i in range(k))
        source = source.replace("chain_%d()" % k, "measure()")
        exec(compile(source, "<bench>", "exec"), namespace)

        def measure():
            best = None
            for _ in range(5):
                ns = LIB.pywalk_bench_ns(20000, ctypes.byref(frames))
                best = ns if best is None else min(best, ns)
            return best
        namespace["measure"] = measure
        ns = namespace["chain_0"]()
        rows.append({"frames": frames.value, "ns_per_capture": round(ns, 1)})
    rows.append({"frames": 0, "ns_per_capture": round(LIB.pywalk_bench_cxx_thread_ns(200000), 1),
                 "note": "C++ thread, no Python state"})
    return rows


def main():
    only = sys.argv[sys.argv.index("--scenario") + 1] if "--scenario" in sys.argv else None
    results = [run_scenario(fn) for fn in SCENARIOS if only in (None, fn.__name__)]
    info = json.loads(text(LIB.pywalk_info_json))
    for r in results:
        print(json.dumps(r, ensure_ascii=False))
    summary = {
        "summary": True,
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "info": info,
        "passed": sum(r["ok"] for r in results),
        "total": len(results),
        "warnings": text(LIB.pywalk_warnings),
    }
    if "--bench" in sys.argv:
        summary["bench"] = bench()
    print(json.dumps(summary, ensure_ascii=False))
    sys.stdout.flush()
    global AT_FINALIZATION
    AT_FINALIZATION = _AtFinalization()
    return 0 if summary["passed"] == summary["total"] else 1


if __name__ == "__main__":
    sys.exit(main())
