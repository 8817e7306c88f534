#!/usr/bin/env python3
"""Unit tests of check.py's verdicts on hand-made truths and reports, including the cases a run
without a GPU never produces (Python frames, a wrong headline, an OOM the driver never saw).

usage: python3 check_test.py   (ctest: gpu_validate.check_py)
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402

MIB = 1 << 20
SCRIPT = "/work/scripts/gpu/torch_leak.py"


def rows(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn(*args)
    return [line.split("\t") for line in out.getvalue().splitlines()]


def verdicts(table):
    return {r[0]: r[4] for r in table}


def frame(kind, function, file=None, line=None):
    return {"function": function, "file": file, "line": line, "module": None, "kind": kind,
            "inlined": False}


def site(site_id, head, live_count=0, live_bytes=0, allocations=1, **extra):
    return dict({"id": site_id, "frames": [head], "headline": head, "apis": ["cudaMalloc"],
                 "kinds": ["device"], "allocations": allocations, "frees": 0,
                 "bytes_allocated": live_bytes, "live_count_end": live_count,
                 "live_bytes_end": live_bytes, "pinned_live_count_end": 0,
                 "pinned_live_bytes_end": 0}, **extra)


def report(sites, live_bytes, peak=0, ooms=()):
    return {"summary": {"live_bytes_end": live_bytes, "peak_bytes": peak, "complete": False},
            "sites": sites, "ooms": list(ooms)}


class NativeTest(unittest.TestCase):
    truth = {"allocations": 4, "frees": 1, "failed_allocations": 0, "live_count_end": 3,
             "live_bytes_end": 300, "pinned_live_bytes_end": 0, "leak_function": "leaky",
             "sites": [{"function": "pair", "kind": "device", "apis": ["cudaMalloc", "cuMemAlloc_v2"],
                        "allocations": 1, "frees": 1, "bytes_allocated": 7, "live_count_end": 0,
                        "live_bytes_end": 0},
                       {"function": "leaky", "kind": "device", "apis": ["cudaMalloc", "cuMemAlloc_v2"],
                        "allocations": 3, "frees": 0, "bytes_allocated": 300,
                        "live_count_end": 3, "live_bytes_end": 300}]}

    def good_report(self):
        pair = site(1, frame("native", "pair"), allocations=1)
        pair.update(frees=1, bytes_allocated=7, apis=["cuMemAlloc_v2"])
        leaky = site(0, frame("native", "leaky"), 3, 300, allocations=3)
        summary = {k: self.truth[k] for k in ("allocations", "frees", "failed_allocations",
                                              "live_count_end", "live_bytes_end",
                                              "pinned_live_bytes_end")}
        return {"summary": summary, "sites": [leaky, pair], "ooms": []}

    def test_matching_report_passes(self):
        table = rows(check.check_native, self.truth, self.good_report(), "shared")
        self.assertEqual({r[4] for r in table}, {"PASS"}, table)

    def test_wrong_bytes_and_missing_site_fail(self):
        r = self.good_report()
        r["sites"][1]["bytes_allocated"] = 8
        r["sites"][0]["headline"] = frame("native", "main")
        v = verdicts(rows(check.check_native, self.truth, r, "static"))
        self.assertEqual(v["cuda site pair"], "FAIL")
        self.assertEqual(v["cuda site leaky"], "FAIL")
        self.assertEqual(v["cuda leak top site"], "FAIL")
        self.assertEqual(v["cuda summary"], "PASS")

    def test_api_outside_the_accepted_set_fails(self):
        r = self.good_report()
        r["sites"][1]["apis"] = ["cudaMallocAsync"]
        self.assertEqual(verdicts(rows(check.check_native, self.truth, r, "x"))["cuda site pair"], "FAIL")


class PythonTest(unittest.TestCase):
    def leak_truth(self, mode):
        return {"framework": "torch", "scenario": "leak", "mode": mode, "expected_live": 24 * MIB,
                "expected_live_source": "allocated",
                "leak": {"file": SCRIPT, "line": 20, "count": 3, "bytes_each": 8 * MIB}}

    def test_per_tensor_leak_with_python_frames(self):
        head = frame("python", "<module>", "torch_leak.py", 20)
        r = report([site(0, head, 3, 24 * MIB, verdict="leak"),
                    site(1, frame("python", "<module>", SCRIPT, 14), 1, MIB, verdict="retained")],
                   25 * MIB)
        v = verdicts(rows(check.check_python, self.leak_truth("cudaMallocAsync"), r, "cudaMallocAsync"))
        self.assertEqual(v, {"live bytes": "PASS", "leak count": "PASS",
                             "leak line": "PASS", "leak verdict": "PASS"})
        r["sites"][0]["verdict"] = "retained"
        v = verdicts(rows(check.check_python, self.leak_truth("cudaMallocAsync"), r, "cudaMallocAsync"))
        self.assertEqual(v["leak verdict"], "FAIL")

    def test_a_leak_in_a_clean_loop_or_a_growing_cache_fails(self):
        for scenario in ("clean-loop", "growing"):
            truth = {"framework": "torch", "scenario": scenario, "mode": "default",
                     "expected_live": 24 * MIB, "expected_live_source": "reserved"}
            clean = [site(0, frame("python", "<module>", SCRIPT, 14), 3, 24 * MIB,
                          verdict="growth")]
            v = verdicts(rows(check.check_python, truth, report(clean, 24 * MIB), "default"))
            self.assertEqual(v["no false leak"], "PASS")
            clean[0]["verdict"] = "leak"
            table = rows(check.check_python, truth, report(clean, 24 * MIB), "default")
            flagged = [x for x in table if x[0] == "no false leak"][0]
            self.assertEqual(flagged[4], "FAIL")
            self.assertIn("torch_leak.py:14", flagged[3])

    def test_pinned_batches_must_be_read_as_the_host_cache(self):
        truth = {"framework": "torch", "scenario": "pinned-loader", "mode": "default",
                 "expected_live": 24 * MIB, "expected_live_source": "reserved"}
        cache = frame("native", "at::cuda::(anonymous namespace)::CUDACachingHostAllocatorImpl::"
                      "allocate_host_memory(unsigned long, void**)")
        pinned = site(1, frame("python", "pin_memory", "pin_memory.py", 64), kinds=["pinned_host"],
                      verdict="retained")
        pinned["frames"] = [cache, pinned["headline"]]
        device = site(0, frame("python", "<module>", SCRIPT, 14), 3, 24 * MIB, verdict="retained")
        v = verdicts(rows(check.check_python, truth, report([device, pinned], 24 * MIB), "default"))
        self.assertEqual(v, {"live bytes": "PASS", "no false leak": "PASS", "pinned cache": "PASS"})
        pinned["verdict"] = "leak"
        v = verdicts(rows(check.check_python, truth, report([device, pinned], 24 * MIB), "default"))
        self.assertEqual(v["no false leak"], "FAIL")
        # Frames without the cache's name: the analyzer cannot know them for its blocks.
        pinned.update(verdict="retained", frames=[pinned["headline"]])
        table = rows(check.check_python, truth, report([device, pinned], 24 * MIB), "default")
        named = [x for x in table if x[0] == "pinned cache"][0]
        self.assertEqual(named[4], "FAIL")
        self.assertIn("pin_memory.py:64", named[3])
        # No pinned memory at all: the loader did not pin, nothing was checked.
        v = verdicts(rows(check.check_python, truth, report([device], 24 * MIB), "default"))
        self.assertEqual(v["pinned cache"], "FAIL")

    def test_wrong_line_fails_and_no_python_frames_is_pending(self):
        r = report([site(0, frame("python", "<module>", SCRIPT, 19), 3, 24 * MIB)], 24 * MIB)
        v = verdicts(rows(check.check_python, self.leak_truth("no-caching"), r, "no-caching"))
        self.assertEqual(v["leak line"], "FAIL")
        self.assertEqual(v["leak count"], "FAIL")  # the leak line's sites hold nothing
        r = report([site(0, frame("native", "at::empty"), 3, 24 * MIB)], 24 * MIB)
        table = rows(check.check_python, self.leak_truth("no-caching"), r, "no-caching")
        self.assertEqual(verdicts(table)["leak count"], "PASS")  # the top site stands in
        pending = [x for x in table if x[0] == "leak line"][0]
        self.assertEqual((pending[3], pending[4]), ("pending (no Python frames)", "SKIP"))

    def test_byte_tolerance(self):
        truth = dict(self.leak_truth("default"), expected_live=1000 * MIB)
        del truth["leak"]
        ok = verdicts(rows(check.check_python, truth, report([], 1000 * MIB + 140 * MIB), "default"))
        bad = verdicts(rows(check.check_python, truth, report([], 1000 * MIB + 150 * MIB), "default"))
        self.assertEqual((ok["live bytes"], bad["live bytes"]), ("PASS", "FAIL"))

    def oom_truth(self, mode):
        return {"framework": "torch", "scenario": "oom", "mode": mode, "expected_live": 0,
                "expected_live_source": "reserved",
                "oom": {"file": SCRIPT, "line": 21, "requested": 1000 * MIB + 5, "raised": True,
                        "live_before": 40 * MIB, "live_before_source": "reserved"}}

    def test_oom_rounded_by_the_caching_allocator(self):
        r = report([site(4, frame("python", "<module>", SCRIPT, 21))], 0,
                   ooms=[{"requested_bytes": 1002 * MIB, "site": 4, "live_bytes": 40 * MIB,
                          "error": 2}])
        v = verdicts(rows(check.check_python, self.oom_truth("default"), r, "default"))
        self.assertEqual(v, {"live bytes": "PASS", "oom recorded": "PASS",
                             "oom live": "PASS", "oom line": "PASS"})

    def test_oom_never_seen_by_the_driver(self):
        r = report([], 0)
        self.assertEqual(verdicts(rows(check.check_python, self.oom_truth("expandable"), r,
                                       "expandable"))["oom recorded"], "SKIP")
        self.assertEqual(verdicts(rows(check.check_python, self.oom_truth("default"), r,
                                       "default"))["oom recorded"], "FAIL")


class GradientsTest(unittest.TestCase):
    GRADS = "/work/scripts/gpu/torch_gradients.py"

    def truth(self, mode):
        return {"framework": "torch", "scenario": "gradients", "mode": mode,
                "expected_live": 40 * MIB, "expected_live_source": "allocated",
                "gradients": {"file": self.GRADS, "line": 28, "steps": 10,
                              "bytes_per_step": 8 * MIB}}

    def engine_site(self, site_id, verdict, growth, loop, live_bytes=20 * MIB):
        head = frame("native", "at::native::empty_cuda(unsigned long)")
        s = site(site_id, head, 10, live_bytes, allocations=10, verdict=verdict,
                 growth_bytes_per_iteration=growth, loop=loop)
        s["frames"] = [head, frame("native", "torch::autograd::Engine::thread_main()")]
        return s

    def loops(self):
        return [{"id": 0, "file": self.GRADS, "line": 30, "loop_line": 28, "function": "<module>"},
                {"id": 1, "file": None, "line": 0, "loop_line": 0,
                 "function": "torch::autograd::Engine::call_function"}]

    def test_per_tensor_leak_timed_by_the_training_loop(self):
        r = report([self.engine_site(0, "leak", 4 * MIB, 0), self.engine_site(1, "leak", 4 * MIB, 0)],
                   40 * MIB)
        r["loops"] = self.loops()
        table = rows(check.check_python, self.truth("no-caching"), r, "no-caching")
        self.assertEqual({x[4] for x in table}, {"PASS"}, table)
        self.assertEqual(verdicts(table)["gradients loop"], "PASS")

    def test_per_gradient_growth_in_the_engines_loop_fails(self):
        # A gradient's growth per iteration of the engine's loop: half a step's, per gradient.
        r = report([self.engine_site(0, "leak", 2 * MIB, 1), self.engine_site(1, "leak", 2 * MIB, 1)],
                   40 * MIB)
        r["loops"] = self.loops()
        v = verdicts(rows(check.check_python, self.truth("cudaMallocAsync"), r, "cudaMallocAsync"))
        self.assertEqual(v["gradients loop"], "FAIL")
        self.assertEqual(v["gradients growth"], "FAIL")

    def test_retained_gradients_and_a_leak_elsewhere_fail(self):
        forward = site(2, frame("python", "forward", "/work/model.py", 9), verdict="leak")
        r = report([self.engine_site(0, "retained", 0, 1), forward], 40 * MIB)
        r["loops"] = self.loops()
        v = verdicts(rows(check.check_python, self.truth("no-caching"), r, "no-caching"))
        self.assertEqual(v["gradients verdict"], "FAIL")
        self.assertEqual(v["gradients elsewhere"], "FAIL")

    def test_caching_modes_check_the_verdict_and_the_segments(self):
        r = report([self.engine_site(0, "leak", 1 * MIB, 1, live_bytes=66 * MIB)], 40 * MIB)
        r["loops"] = self.loops()
        v = verdicts(rows(check.check_python, self.truth("default"), r, "default"))
        self.assertEqual((v["gradients verdict"], v["gradients bytes"]), ("PASS", "PASS"))
        self.assertNotIn("gradients loop", v)
        r["sites"][0]["live_bytes_end"] = 62 * MIB  # under (10 - 2) steps of 8 MiB
        v = verdicts(rows(check.check_python, self.truth("default"), r, "default"))
        self.assertEqual(v["gradients bytes"], "FAIL")


class OverheadAndInputTest(unittest.TestCase):
    def test_overhead(self):
        plain = {"ms_per_step": 2.0, "final_loss": 1.0}
        traced_report = {"summary": {"complete": True},
                         "sites": [site(0, frame("python", "step", SCRIPT, 30), verdict="retained")]}
        v = verdicts(rows(check.check_overhead, plain, {"ms_per_step": 2.2, "final_loss": 1.0},
                          traced_report, "default"))
        self.assertEqual(v, {"overhead": "PASS", "traced exit": "PASS", "no false leak": "PASS"})
        leaky = {"summary": {"complete": False},
                 "sites": [site(0, frame("python", "step", SCRIPT, 30), verdict="leak")]}
        v = verdicts(rows(check.check_overhead, plain, {"ms_per_step": 2.2, "final_loss": 1.5},
                          leaky, "default"))
        self.assertEqual(v, {"overhead": "FAIL", "traced exit": "FAIL", "no false leak": "FAIL"})

    def test_unreadable_input_is_a_fail_row(self):
        with tempfile.TemporaryDirectory() as d:
            truth = os.path.join(d, "truth.json")
            with open(truth, "w") as f:
                json.dump({"framework": "torch"}, f)
            table = rows(check.main, ["check.py", "python", truth, os.path.join(d, "none.json"), "m"])
        self.assertEqual(len(table), 1)
        self.assertEqual(table[0][4], "FAIL")


if __name__ == "__main__":
    unittest.main(verbosity=1)
