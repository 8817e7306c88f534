"""The field reports' leak patterns, one per command-line argument, with known ground truth.

Each scenario's leaking line carries a `# LEAK` comment: the test finds it by that comment and checks
that the report's headline for the leaking site is exactly that file, function and line.
"""
import sys

import fake_torch as torch

ITERATIONS = 12
BATCH = 1 << 20


def append_output(model):
    losses = []
    for _ in range(ITERATIONS):
        x = torch.empty(BATCH)
        output = model(x)  # LEAK
        losses.append(output)
    return len(losses)


def append_item(model):
    losses = []
    for _ in range(ITERATIONS):
        x = torch.empty(BATCH)
        output = model(x)
        losses.append(output.item())
    return len(losses)


def loss_sum(model):
    total = 0
    for _ in range(ITERATIONS):
        x = torch.empty(BATCH)
        loss = model(x)  # LEAK
        total += loss  # LEAK
    return total


def kept_past_loop(model):
    for _ in range(ITERATIONS):
        x = torch.empty(BATCH)
        output = model(x)
    return output.item() + x.item()


def per_fold(_model):
    models = []
    for _fold in range(4):
        model = torch.Model()  # LEAK
        models.append(model)  # never released between folds
        for _ in range(ITERATIONS // 4 + 2):
            x = torch.empty(BATCH)
            model(x).item()
    return len(models)


def evaluate(model):
    outputs = []
    for _ in range(ITERATIONS):
        x = torch.empty(BATCH)
        outputs.append(model(x))  # LEAK
    return len(outputs)


def evaluate_detached(model):
    outputs = []
    for _ in range(ITERATIONS):
        x = torch.empty(BATCH)
        with torch.no_grad():
            outputs.append(model(x).detach().item())
    return len(outputs)


def wrong_batch_size(model):
    for step in range(ITERATIONS):
        batch = BATCH * 65 if step == ITERATIONS - 2 else BATCH
        try:
            x = torch.empty(batch)  # LEAK
        except torch.OutOfMemoryError as e:
            print(e, file=sys.stderr)
            return 0
        model(x).item()
    return 1


if __name__ == "__main__":
    scenario = globals()[sys.argv[1]]
    scenario(torch.Model())
