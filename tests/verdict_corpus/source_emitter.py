"""Program text with its ground truth: lines that carry `EXPECT:` or `HELPER` comments, and the
header every generated program starts with.
"""
import json

from corpus_model import GENERATOR_VERSION, VERDICTS, shape_summary


# --------------------------------------------------------------------------------------------
# Source emitter: lines with their ground-truth comments.


class Src:
    def __init__(self, comment):
        self.c = comment
        self.lines = []

    def __call__(self, depth, text="", expect=None, helper=False, oom=False):
        assert not (expect and helper)
        line = "    " * depth + text if text else ""
        if expect:
            for v in expect.split("|"):
                assert v in VERDICTS, expect
            line += "  %s EXPECT: %s%s" % (self.c, expect, " OOM" if oom else "")
        elif helper:
            line += "  %s HELPER" % self.c
        self.lines.append(line)

    def first_in_block(self, depth, text):
        """A line at `depth` placed first in the block being written at that depth (after the
        line that opened it), not after what the block holds so far."""
        for i in range(len(self.lines) - 1, -1, -1):
            ln = self.lines[i]
            if ln.strip() and len(ln) - len(ln.lstrip()) < 4 * depth:
                assert ln.rstrip().endswith((":", "{")), ln
                self.lines.insert(i + 1, "    " * depth + text)
                return
        raise AssertionError("no block open at depth %d" % depth)

    def block(self, text, depth=0):
        for ln in text.strip("\n").split("\n"):
            self.lines.append("    " * depth + ln if ln.strip() else "")

    def text(self):
        return "\n".join(self.lines) + "\n"


def noise_calls(e, d, s, phase, step, call):
    """The calls of the noise sites of `phase` (`call` % (site, step)), at the end of the block
    being written or, where the shape says so, first in it (the step is the loop's own variable
    there; anything else is computed in the body, so the call stays after it)."""
    for i, nz in enumerate(s.noise):
        if phase in nz["phases"]:
            if s.noise_first and step == "step":
                e.first_in_block(d, call % (i, step))
            else:
                e(d, call % (i, step))


def header_lines(prog, c):
    p, s = prog["pattern_obj"], prog["shape_obj"]
    out = [
        "%s gpuleak verdict corpus: a generated ground-truth program. Do not edit." % c,
        "%s generator: tests/verdict_corpus/generate.py version %d, seed %d, program %s" % (
            c, GENERATOR_VERSION, prog["seed"], prog["name"]),
        "%s pattern: %s (%s variant): %s" % (c, p.title, prog["variant"],
                                          p.leaky if prog["variant"] == "leaky" else p.fixed),
        "%s field report: %s" % (c, p.source),
        "%s shape: %s" % (c, json.dumps(shape_summary(p, s), ensure_ascii=False)),
        "%s Ground truth: every allocating line of this program carries `EXPECT: verdict`" % c,
        "%s (several separated by |: each is honest); HELPER lines are inside allocation" % c,
        "%s helpers and are judged at their caller's line. OOM: the report must name this" % c,
        "%s line for the OOM." % c,
    ]
    return out
