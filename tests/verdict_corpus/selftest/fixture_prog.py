# A handmade ground-truth source for run_corpus.py --selftest (never run). Its line numbers are
# referenced by report_*.json and expected.json: append only.
# A comment that mentions `EXPECT: leak` in the middle of a line is not an annotation.
import fake_torch as torch


def main():
    model = torch.Model(1024)  # EXPECT: retained
    kept = []
    for step in range(30):
        x = torch.empty(4096)  # EXPECT: retained|transient
        output = model(x)  # EXPECT: leak
        kept.append(output)
        buf = torch.empty(65 * 4096)  # EXPECT: transient OOM
        out = model(x)  # EXPECT: accumulation
        scratch = torch.empty(step + 1)  # EXPECT: transient
        helper = torch.empty(8)  # HELPER
    return kept, buf, out, scratch, helper
