#!/usr/bin/env python3
"""Compares a program's own ground truth with gpuleak-report's JSON and prints result rows for
gpu-validate.sh: one tab-separated line per check, `check  mode  expected  observed  verdict`.

usage: check.py native  TRUTH REPORT MODE           CUDA C++ program (alloc_paths.cu)
       check.py python  TRUTH REPORT MODE           framework scenario (torch_*.py, cupy, jax)
       check.py overhead PLAIN TRACED TRACED_REPORT MODE

A missing or unreadable input is a FAIL row, never a crash: the table must still come out.
"""
import json
import os
import sys

MIB = 1 << 20

# Tolerances for the framework scenarios, and why they are not zero.
#  torch: the report sees every driver allocation of the process, PyTorch counts only its own
#    allocator's. cuBLAS/cuBLASLt workspaces (32 MiB on Hopper) are outside "live tensors" in the
#    no-caching mode, library handles allocate on their own, and with cudaMallocAsync
#    memory_allocated() is the pool's used memory, which rounds each allocation up.
#  cupy: nothing but the kept arrays should be allocated; a little slack for CuPy's own buffers.
#  jax: XLA adds its own buffers (constants, scratch, cuBLAS/cuDNN workspaces) beside the arrays.
TOLERANCE = {
    "torch": (128 * MIB, 0.02),
    "cupy": (64 * MIB, 0.0),
    "jax": (256 * MIB, 0.02),
}
# The caching allocator rounds a large request up to a multiple of 2 MiB before calling cudaMalloc.
TORCH_ROUNDING = 2 * MIB
# PyTorch's allocator modes in which every tensor is a driver allocation of its own.
TORCH_PER_TENSOR_MODES = ("cudaMallocAsync", "no-caching")


def row(check, mode, expected, observed, verdict):
    clean = [str(v).replace("\t", " ").replace("\n", " ") for v in (check, mode, expected, observed)]
    print("\t".join(clean + [verdict]))


def mib(n):
    return f"{n / MIB:.1f} MiB" if n is not None else "n/a"


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def same_file(a, b):
    if not a or not b:
        return False
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    return os.path.basename(a) == os.path.basename(b)


def has_python_frames(report):
    return any(f.get("kind") == "python" for s in report["sites"] for f in s.get("frames", []))


def headline_text(site):
    h = site.get("headline") or {}
    where = f"{os.path.basename(h['file'])}:{h.get('line')}" if h.get("file") else "?"
    return f"{h.get('function') or '?'} ({where}, {h.get('kind', '?')})"


def headline_at(site, where):
    h = site.get("headline") or {}
    return h.get("kind") == "python" and h.get("line") == where["line"] and same_file(
        h.get("file"), where["file"])


def frames_reach(site, where):
    return any(f.get("kind") == "python" and f.get("line") == where["line"]
               and same_file(f.get("file"), where["file"]) for f in site.get("frames", []))


def top_site(report):
    """The site holding the most device bytes at the end (ties: the most allocations)."""
    sites = report["sites"]
    if not sites:
        return None
    return max(sites, key=lambda s: (s.get("live_bytes_end", 0), s.get("allocations", 0)))


def site_by_id(report, site_id):
    return next((s for s in report["sites"] if s.get("id") == site_id), None)


def within(observed, expected, framework):
    absolute, relative = TOLERANCE[framework]
    allowed = absolute + int(relative * expected)
    return abs(observed - expected) <= allowed, allowed


# --- CUDA C++ programs -----------------------------------------------------------------------


def check_native(truth, report, mode):
    s = report["summary"]
    keys = ("allocations", "frees", "failed_allocations", "live_count_end", "live_bytes_end",
            "pinned_live_bytes_end")
    ok = all(s.get(k) == truth[k] for k in keys)
    row("cuda summary", mode, "/".join(str(truth[k]) for k in keys),
        "/".join(str(s.get(k)) for k in keys), "PASS" if ok else "FAIL")

    for want in truth["sites"]:
        name = want["function"]
        matches = [x for x in report["sites"] if (x.get("headline") or {}).get("function") == name]
        if not matches:
            heads = ", ".join(sorted({headline_text(x) for x in report["sites"]})) or "no sites"
            row(f"cuda site {name}", mode, "a site headed by it", f"none; sites: {heads}", "FAIL")
            continue
        got = {k: sum(x.get(k, 0) for x in matches)
               for k in ("allocations", "frees", "bytes_allocated", "live_count_end",
                         "live_bytes_end", "pinned_live_count_end", "pinned_live_bytes_end")}
        apis = sorted({a for x in matches for a in x.get("apis", [])})
        kinds = sorted({k for x in matches for k in x.get("kinds", [])})
        pinned = want["kind"] == "pinned_host"
        live_count = got["pinned_live_count_end"] if pinned else got["live_count_end"]
        live_bytes = got["pinned_live_bytes_end"] if pinned else got["live_bytes_end"]
        ok = (got["allocations"] == want["allocations"] and got["frees"] == want["frees"]
              and got["bytes_allocated"] == want["bytes_allocated"]
              and live_count == want["live_count_end"] and live_bytes == want["live_bytes_end"]
              and kinds == [want["kind"]] and bool(apis) and set(apis) <= set(want["apis"]))
        expected = (f"{want['allocations']}x{want['bytes_allocated']} {want['kind']} "
                    f"live {want['live_count_end']} ({'|'.join(want['apis'])})")
        observed = (f"{got['allocations']}x{got['bytes_allocated']} {'/'.join(kinds)} "
                    f"live {live_count} ({'|'.join(apis)})")
        row(f"cuda site {name}", mode, expected, observed, "PASS" if ok else "FAIL")

    top = top_site(report)
    head = (top.get("headline") or {}).get("function") if top else None
    row("cuda leak top site", mode, truth["leak_function"], head or "no site",
        "PASS" if head == truth["leak_function"] else "FAIL")


# --- framework scenarios ---------------------------------------------------------------------


def check_bytes(name, mode, framework, observed, expected, source):
    ok, allowed = within(observed, expected, framework)
    delta = observed - expected
    row(name, mode, f"{source} {mib(expected)} ±{mib(allowed)}",
        f"{mib(observed)} ({'+' if delta >= 0 else '-'}{mib(abs(delta))})", "PASS" if ok else "FAIL")


def check_python_line(name, mode, report, site, where, strict):
    """strict: the site's headline (innermost Python frame) must be the line; else any frame."""
    want = f"{os.path.basename(where['file'])}:{where['line']}"
    if not has_python_frames(report):
        row(name, mode, want, "pending (no Python frames)", "SKIP")
        return
    if site is None:
        row(name, mode, want, "no such site", "FAIL")
    elif headline_at(site, where) or (not strict and frames_reach(site, where)):
        row(name, mode, want, headline_text(site), "PASS")
    elif not strict:
        row(name, mode, want, f"not in the stack of {headline_text(site)}", "SKIP")
    else:
        row(name, mode, want, headline_text(site), "FAIL")


def leak_sites(report, where):
    """Every site the leak line allocated from (one line can reach the driver by several native
    paths); without Python frames, the site holding the most bytes."""
    if has_python_frames(report):
        return [s for s in report["sites"] if headline_at(s, where) or frames_reach(s, where)]
    top = top_site(report)
    return [top] if top else []


def check_leak(truth, report, mode, framework):
    leak = truth["leak"]
    count, each = leak["count"], leak["bytes_each"]
    sites = leak_sites(report, leak)
    live_count = sum(s.get("live_count_end", 0) for s in sites)
    live_bytes = sum(s.get("live_bytes_end", 0) for s in sites)
    per_tensor = framework == "cupy" or truth.get("mode") in TORCH_PER_TENSOR_MODES
    if per_tensor:
        # One driver allocation per kept object: exact.
        ok = live_count == count and live_bytes == count * each
        row("leak count", mode, f"{count} x {each} B", f"{live_count} x, {live_bytes} B",
            "PASS" if ok else "FAIL")
    elif framework == "jax":
        ok = live_count >= count and live_bytes >= count * each
        row("leak count", mode, f">= {count} x {each} B", f"{live_count} x, {live_bytes} B",
            "PASS" if ok else "FAIL")
    else:
        # Caching modes: the driver sees segments (rounded, and some leaks land in cached blocks).
        ok = live_bytes >= (count - 2) * each
        row("leak bytes", mode, f">= {mib((count - 2) * each)} in segments",
            f"{live_count} segments, {mib(live_bytes)}", "PASS" if ok else "FAIL")
    top = top_site(report)
    check_python_line("leak line", mode, report, top, leak, strict=framework != "jax")
    verdict = top.get("verdict") if top else None
    row("leak verdict", mode, "leak (the site holding most)", verdict or "no site",
        "PASS" if verdict == "leak" else "FAIL")


def check_no_false_leak(report, mode):
    """A loop that frees what it makes, and a cache grown for larger inputs, are no leak."""
    flagged = [f"{s.get('verdict')} at {headline_text(s)}" for s in report["sites"]
               if s.get("verdict") in ("leak", "accumulation")]
    row("no false leak", mode, "no leak or accumulation", "; ".join(flagged) or "none",
        "FAIL" if flagged else "PASS")


def names_host_cache(site):
    return any("cachinghostallocator" in f"{f.get('function')} {f.get('file')}".lower()
               for f in site.get("frames", []))


def check_pinned_cache(report, mode):
    """Pinned batches are read as PyTorch's pinned-memory cache only where their stacks name it."""
    pinned = [s for s in report["sites"] if "pinned_host" in s.get("kinds", [])]
    unnamed = [headline_text(s) for s in pinned if not names_host_cache(s)]
    observed = (f"{len(pinned)} pinned sites ({', '.join(s.get('verdict', '?') for s in pinned)})"
                + (f"; no CachingHostAllocator frame at {'; '.join(unnamed)}" if unnamed else ""))
    row("pinned cache", mode, "pinned sites through CachingHostAllocator", observed,
        "PASS" if pinned and not unnamed else "FAIL")


def check_oom(truth, report, mode):
    oom = truth["oom"]
    if not oom["raised"]:
        row("oom raised", mode, "torch.OutOfMemoryError", "no error: the buffer fit", "FAIL")
        return
    requested = oom["requested"]
    ooms = report.get("ooms", [])
    hits = [o for o in ooms if requested <= o.get("requested_bytes", 0) <= requested + TORCH_ROUNDING]
    if not hits:
        seen = ", ".join(str(o.get("requested_bytes")) for o in ooms) or "none"
        if mode == "expandable":
            # PyTorch maps expandable segments page by page and may refuse a request larger than
            # the device before any driver call: then there is nothing for a tracer to see.
            row("oom recorded", mode, f"{requested} B failed", f"failures recorded: {seen}", "SKIP")
        else:
            row("oom recorded", mode, f"{requested} B failed", f"failures recorded: {seen}", "FAIL")
        return
    first = hits[0]
    row("oom recorded", mode, f"{requested} B failed",
        f"{first['requested_bytes']} B, error {first.get('error')}", "PASS")
    check_bytes("oom live", mode, "torch", first.get("live_bytes", 0), oom["live_before"],
                oom["live_before_source"])
    check_python_line("oom line", mode, report, site_by_id(report, first.get("site")), oom,
                      strict=True)


def made_by_autograd_engine(site):
    return any("torch::autograd::Engine" in (f.get("function") or "") for f in site.get("frames", []))


def check_gradients(truth, report, mode):
    """Gradients kept every step, made on the autograd engine's thread: a leak there; in the
    per-tensor modes timed by the training loop, growing by the parameters' bytes per step."""
    grads = truth["gradients"]
    engine = [s for s in report["sites"] if made_by_autograd_engine(s)]
    leaks = [s for s in engine if s.get("verdict") == "leak"]
    verdicts = ", ".join(sorted(s.get("verdict", "?") for s in engine)) or "no engine site"
    row("gradients verdict", mode, "leak at the engine's sites", verdicts,
        "PASS" if leaks else "FAIL")
    if truth.get("mode") not in TORCH_PER_TENSOR_MODES:
        # Segments: whichever thread finds the cache full asks for one, the forward pass's too.
        held = sum(s.get("live_bytes_end", 0) for s in report["sites"] if s.get("verdict") == "leak")
        want = (grads["steps"] - 2) * grads["bytes_per_step"]
        row("gradients bytes", mode, f">= {mib(want)} in leaking segments", mib(held),
            "PASS" if held >= want else "FAIL")
        return
    others = [f"{s.get('verdict')} at {headline_text(s)}" for s in report["sites"]
              if not made_by_autograd_engine(s) and s.get("verdict") in ("leak", "accumulation")]
    row("gradients elsewhere", mode, "no leak outside the engine's thread", "; ".join(others) or "none",
        "FAIL" if others else "PASS")
    growth = sum(s.get("growth_bytes_per_iteration", 0) for s in leaks)
    # The engine allocates each gradient exactly; a few bytes of slack for a rounding pool.
    allowed = max(TORCH_ROUNDING, grads["bytes_per_step"] // 50)
    row("gradients growth", mode, f"{mib(grads['bytes_per_step'])}/step ±{mib(allowed)}",
        f"{mib(growth)}/iteration", "PASS" if abs(growth - grads["bytes_per_step"]) <= allowed
        else "FAIL")
    want = f"{os.path.basename(grads['file'])}:{grads['line']}"
    loops = report.get("loops", [])

    def loop_of(site):
        index = site.get("loop")
        return loops[index] if isinstance(index, int) and 0 <= index < len(loops) else None

    def the_training_loop(loop):
        # Its for statement where the source shows it, else the body's first line below it.
        return bool(loop) and same_file(loop.get("file"), grads["file"]) and (
            loop.get("loop_line") == grads["line"]
            or (not loop.get("loop_line") and 0 < (loop.get("line") or 0) - grads["line"] <= 4))

    def place(loop):
        if not loop:
            return "no loop"
        if loop.get("file"):
            return f"{os.path.basename(loop['file'])}:{loop.get('loop_line') or loop.get('line')}"
        return loop.get("function") or "?"

    timed = sorted({place(loop_of(s)) for s in leaks})
    ok = bool(leaks) and all(the_training_loop(loop_of(s)) for s in leaks)
    row("gradients loop", mode, f"the training loop at {want}", ", ".join(timed) or "none",
        "PASS" if ok else "FAIL")


def check_python(truth, report, mode):
    framework = truth["framework"]
    s = report["summary"]
    check_bytes("live bytes", mode, framework, s["live_bytes_end"], truth["expected_live"],
                truth["expected_live_source"])
    no_leak = ("clean-loop", "growing", "pinned-loader")
    if truth.get("expected_peak") is not None and truth["scenario"] in ("clean-loop", "growing"):
        check_bytes("peak", mode, framework, s["peak_bytes"], truth["expected_peak"],
                    truth["expected_peak_source"])
    if truth["scenario"] in no_leak:
        check_no_false_leak(report, mode)
    if truth["scenario"] == "pinned-loader":
        check_pinned_cache(report, mode)
    if "leak" in truth:
        check_leak(truth, report, mode, framework)
    if "oom" in truth:
        check_oom(truth, report, mode)
    if "gradients" in truth:
        check_gradients(truth, report, mode)


# --- overhead --------------------------------------------------------------------------------


def check_overhead(plain, traced, traced_report, mode):
    ratio = traced["ms_per_step"] / plain["ms_per_step"]
    observed = f"{plain['ms_per_step']:.3f} -> {traced['ms_per_step']:.3f} ms/step (x{ratio:.2f})"
    same_loss = abs(traced["final_loss"] - plain["final_loss"]) <= 1e-3 * max(1.0, abs(plain["final_loss"]))
    if not same_loss:
        observed += f"; loss {plain['final_loss']:.6g} vs {traced['final_loss']:.6g}"
    row("overhead", mode, "same loss; ratio reported", observed, "PASS" if same_loss else "FAIL")
    complete = traced_report["summary"].get("complete")
    row("traced exit", mode, "exit 0, trace complete", f"complete={complete}",
        "PASS" if complete else "FAIL")
    # A training run with Adam: its first steps grow the caching allocator, which must not read as
    # a leak (docs/loops-and-verdicts.md), nor must anything in the per-tensor modes.
    check_no_false_leak(traced_report, mode)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    kind, args = argv[1], argv[2:]
    try:
        if kind == "native" and len(args) == 3:
            check_native(load(args[0]), load(args[1]), args[2])
        elif kind == "python" and len(args) == 3:
            check_python(load(args[0]), load(args[1]), args[2])
        elif kind == "overhead" and len(args) == 4:
            check_overhead(load(args[0]), load(args[1]), load(args[2]), args[3])
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError) as e:
        row(f"{kind} check", args[-1] if args else "?", "readable truth and report",
            f"{type(e).__name__}: {e}", "FAIL")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
