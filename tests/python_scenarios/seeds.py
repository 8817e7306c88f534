"""The field reports' leak patterns, one per command-line argument, with known ground truth.

Each scenario's leaking line carries a `# LEAK` comment: the test finds it by that comment and checks
that the report's headline for the leaking site is exactly that file, function and line.
"""
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import fake_torch as torch
import fake_trainer
from fake_torch import autograd, data
from user_tensor import Buffer

ITERATIONS = 12
BATCH = 1 << 20


def append_output(model):
    losses = []
    for _ in range(ITERATIONS):
        x = torch.empty(BATCH)
        output = model(x)  # LEAK
        losses.append(output)
    return len(losses)


def append_output_of_new_input(model):
    """One line makes the input, runs both layers and keeps the output: three sites on one line."""
    outputs = []
    for _ in range(ITERATIONS):
        outputs.append(model(torch.empty(BATCH)))  # LEAK
    return len(outputs)


def append_output_of_one_input(model):
    """The input made once, before the loop (a dataset already on the device): each iteration's
    only allocating line is the model's call, which makes two tensors."""
    x = torch.empty(BATCH)
    outputs = []
    for _ in range(ITERATIONS):
        outputs.append(model(x))  # LEAK
    return len(outputs)


def evaluate_one_input(model):
    """The same loop keeping only each output's item()."""
    x = torch.empty(BATCH)
    items = []
    for _ in range(ITERATIONS):
        items.append(model(x).item())
    return items


def micro_batches_summed(model):
    """Each step's loss summed over its micro-batches by sum() over a generator, a new total every
    step: nothing outlives its step. sum() is a builtin that calls back into Python: on 3.11, once
    the call has warmed up, the step's frame stops at its specialized PRECALL, before at its CALL."""
    total = None
    for _ in range(ITERATIONS):
        total = sum(model(torch.empty(BATCH)) for _ in range(4))
    return total.item()


def two_calls_on_one_line(model):
    """Two inputs made and the model called twice, each pair on one line; the first call's output
    is kept. The sites of one line differ only in their columns."""
    outputs = []
    for _ in range(ITERATIONS):
        x, y = torch.empty(BATCH), torch.empty(BATCH)
        outputs.append(model(x)); scratch = model(y)  # LEAK
    return len(outputs), scratch


def tagged(model, tag):
    return model(torch.empty(BATCH))


def long_calls_on_one_line(model):
    """two_calls_on_one_line with calls too long to quote whole, in UTF-8 of two bytes a letter."""
    outputs = []
    for _ in range(ITERATIONS):
        outputs.append(tagged(model, "aéééééééééééééééééééééééééééééééééééééééééééé")); tagged(model, "ü")  # LEAK
    return len(outputs)


def micro_batch_losses_kept(model):
    """The same steps, every step's summed loss kept with its graph."""
    losses = []
    for _ in range(ITERATIONS):
        losses.append(sum(model(torch.empty(BATCH)) for _ in range(4)))  # LEAK
    return len(losses)


def mapped_over_a_generator(model):
    """map() calls a lambda on each input a generator expression makes, and every output is kept:
    no loop of the program's, and the generator never allocates twice in a row."""
    outputs = list(map(lambda x: model(x), (torch.empty(BATCH) for _ in range(ITERATIONS))))  # LEAK
    return len(outputs)


def mapped_over_a_generator_items(model):
    """The same, keeping only each output's item()."""
    return list(map(lambda x: model(x).item(), (torch.empty(BATCH) for _ in range(ITERATIONS))))


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


def outputs_kept_late(model):
    """Outputs kept only in the last quarter of the run (from some epoch or condition on): the
    loop is flat until then."""
    outputs = []
    for step in range(4 * ITERATIONS):
        x = torch.empty(BATCH)
        output = model(x)  # LEAK
        if step >= 3 * ITERATIONS:
            outputs.append(output)
    return len(outputs)


def fit_by_a_framework(model, keep=True):
    """A framework's fit loop (fake_trainer: PyTorch Lightning's, Keras's) calls the program's
    training_step once per batch; the step keeps every loss for the epoch's end."""

    class Module:
        def __init__(self):
            self.losses = []

        def training_step(self, batch):
            loss = model(batch)  # LEAK
            if keep:
                self.losses.append(loss)
            return loss

    fake_trainer.Trainer(epochs=3, steps=8).fit(Module(), lambda: torch.empty(BATCH))


def fit_by_a_framework_released(model):
    fit_by_a_framework(model, keep=False)


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


def train_then_fixed_loop(model):
    """The leak grows through the first loop and stays flat while a second loop runs."""
    total = 0
    for _ in range(ITERATIONS):
        x = torch.empty(BATCH)
        loss = model(x)  # LEAK
        total += loss  # LEAK
    for _ in range(ITERATIONS):
        x = torch.empty(BATCH)
        model(x).item()
    return total


def items_then_outputs(model):
    """An evaluation that keeps item()s, then one that keeps the outputs."""
    values, outputs = [], []
    for _ in range(ITERATIONS):
        values.append(model(torch.empty(BATCH)).item())
    for _ in range(ITERATIONS):
        x = torch.empty(BATCH)
        outputs.append(model(x))  # LEAK
    return len(values) + len(outputs)


def threads_churn(_model):
    """Four threads allocating and freeing in their own loops at once: nothing is kept."""
    def worker():
        for _ in range(ITERATIONS * 4):
            a = torch.empty(4096)
            b = torch.empty(8192)
            del a, b
    workers = [threading.Thread(target=worker) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return 0


def leaky_worker_thread(_model):
    """One worker of four keeps what it allocates."""
    kept = []

    def worker(keep):
        for _ in range(ITERATIONS * 2):
            scratch = torch.empty(4096)
            if keep:
                kept.append(torch.empty(BATCH))  # LEAK
            del scratch
    workers = [threading.Thread(target=worker, args=(i == 2,)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return len(kept)


def workers_per_epoch(_model, keep=True):
    """Three workers started for each of 5 epochs, each making a replica before its own loop."""
    replicas = []

    def worker(started):
        replica = torch.empty(BATCH)  # LEAK
        replicas.append(replica)
        started.wait()  # the workers of an epoch run side by side
        for _ in range(ITERATIONS):
            x = torch.empty(4096)
            del x
    for _epoch in range(5):
        started = threading.Barrier(3)
        workers = [threading.Thread(target=worker, args=(started,)) for _ in range(3)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        if not keep:
            replicas.clear()
    return len(replicas)


def workers_per_epoch_released(model):
    """The same workers; each epoch's replicas are released once its workers are done."""
    return workers_per_epoch(model, keep=False)


def pool_per_epoch(_model, keep=True):
    """A one-worker pool per epoch maps 4 shards to tensors; the program keeps them all."""
    kept = []

    def load_shard(i):
        shard = torch.empty(BATCH)  # LEAK
        return shard
    for _epoch in range(5):
        with ThreadPoolExecutor(max_workers=1) as pool:
            shards = list(pool.map(load_shard, range(4)))
        if keep:
            kept.extend(shards)
        del shards
    return len(kept)


def pool_per_epoch_released(model):
    """The same pools; each epoch's shards are released after it, the last ones at the exit."""
    return pool_per_epoch(model, keep=False)


def validated_every_few_steps(model):
    """Training that validates every 4th step before the step's own work, and keeps each loss."""
    losses = []

    def validate():
        with torch.no_grad():
            for _ in range(3):
                model(torch.empty(BATCH)).item()

    for epoch in range(2):
        for step in range(ITERATIONS):
            if step % 4 == 3:
                validate()
            x = torch.empty(BATCH)
            losses.append(model(x))  # LEAK
    return len(losses)


def through_a_helper(_model):
    """Every allocation goes through one constructor in the program's own tree."""
    kept = []
    for _ in range(ITERATIONS):
        scratch = Buffer(4096)
        kept.append(Buffer(BATCH))  # LEAK
        del scratch
    return len(kept)


class Block:
    def __init__(self):
        self.weight = torch.empty(BATCH)

    def __call__(self, x):
        return torch.Tensor(x.nbytes, grad_fn=(x, self.weight))


def layers_then_training(_model):
    """A model's blocks built by a comprehension, then trained: the blocks are the model."""
    blocks = [Block() for _ in range(6)]
    for _ in range(ITERATIONS):
        x = torch.empty(BATCH)
        for block in blocks:
            x = block(x)
        del x
    return len(blocks)


def trained_in_a_function(model):
    """The same blocks freed when the function that trained them returns, before another phase of
    the program runs."""
    layers_then_training(model)
    return append_item(model)


def model_to_device(_model):
    """Parameters moved to the device by one library call, then one forward pass: no loop."""
    params = torch.to_device([BATCH] * 8)
    x = torch.empty(BATCH)
    return len(params) + int(x.item() > 0)


class Net:
    """Blocks run by a loop of the model's own forward (nanoGPT's `for block in self.h`)."""

    def __init__(self, blocks):
        self.blocks = [Block() for _ in range(blocks)]

    def __call__(self, x):
        for block in self.blocks:
            x = block(x)
        return x


# Steps that take time, as a GPU's do: the run goes on for 1.4 s after its first two steps (which
# is what tells a caching allocator's warm-up from a leak, analysis/verdicts.h).
STEPS = 16
STEP_SECONDS = 0.1


def training_steps(_model, keep=False):
    """Steps that take time; each one's activations die with it unless its output is kept."""
    net = Net(6)
    outputs = []
    for _ in range(STEPS):
        x = torch.empty(BATCH)
        out = net(x)
        if keep:
            outputs.append(out)
        del out
        time.sleep(STEP_SECONDS)
    return len(outputs)


def training_with_adam(_model):
    """Steps whose first optimizer step makes the optimizer's state: kept, bounded by the model."""
    net = Net(6)
    optimizer = torch.Adam(block.weight for block in net.blocks)
    for _ in range(STEPS):
        x = torch.empty(BATCH)
        net(x).item()
        optimizer.step()
        time.sleep(STEP_SECONDS)
    return len(optimizer.state)


def growing_batches(_model):
    """Each batch larger than the last, every tensor freed: the cache grows, the program keeps
    nothing (torch_growing.py on a GPU)."""
    weight = torch.empty(4 * BATCH)
    batch = BATCH
    while batch <= 60 * BATCH:
        x = torch.empty(batch)
        y = torch.Tensor(2 * batch, grad_fn=(x, weight))
        y.item()
        del x, y
        batch = batch * 3 // 2
    return 0


def leak_then_long_steady_loop(_model):
    """Steps that keep their outputs, then a longer loop that keeps nothing. Under the cache the
    second loop reuses segments unseen, and the first reads as the cache's warm-up: the miss
    docs/loops-and-verdicts.md describes. Without caching it is a leak, whatever code allocates."""
    kept = []
    for _ in range(6):
        scratch = torch.empty(4096)
        kept.append(torch.empty(4 * BATCH))  # LEAK
        del scratch
    for _ in range(STEPS):
        x = torch.empty(BATCH)
        del x
        time.sleep(STEP_SECONDS)
    return len(kept)


def training_steps_keeping_outputs(model):
    """The same steps, each one's output (and with it its activations) kept."""
    return training_steps(model, keep=True)


def training_with_backward(_model, keep=False, steps=ITERATIONS, step_seconds=0,
                           last_backward_seconds=0, warm_up=False):
    """Steps whose backward() makes each parameter's gradient on the autograd engine's own native
    thread, as PyTorch's does for CUDA, dropped by the next step's zero_grad()."""
    net = Net(6)
    params = [block.weight for block in net.blocks]
    if warm_up:
        net(torch.empty(BATCH)).item()
        autograd.backward(params)
    kept = []
    for step in range(steps):
        autograd.zero_grad(params)
        x = torch.empty(BATCH)
        net(x).item()
        if step == steps - 1:
            time.sleep(last_backward_seconds)
        autograd.backward(params)
        if keep:
            kept.extend(p.grad for p in params)  # every step's gradients kept
        time.sleep(step_seconds)
    return len(kept)


def training_keeping_gradients(model):
    return training_with_backward(model, keep=True)


def training_with_a_slow_last_backward(model, keep=False):
    """The last step's backward() starts long after its forward pass, longer than all the steps
    before it took (a slow batch, a busy machine): its gradients still belong to that step."""
    return training_with_backward(model, keep=keep, last_backward_seconds=0.3)


def training_with_a_slow_last_backward_keeping_gradients(model):
    return training_with_a_slow_last_backward(model, keep=True)


def training_after_a_warm_up_backward(model, keep=False):
    """A warm-up step before the loop: its gradients come from the same stacks on the engine's
    thread as the loop's."""
    return training_with_backward(model, keep=keep, warm_up=True)


def training_after_a_warm_up_backward_keeping_gradients(model):
    return training_after_a_warm_up_backward(model, keep=True)


def timed_training_with_backward(model, keep=False):
    """The same steps taking time, as under the caching allocator a run must for its warm-up."""
    return training_with_backward(model, keep=keep, steps=STEPS, step_seconds=STEP_SECONDS)


def timed_training_keeping_gradients(model):
    return timed_training_with_backward(model, keep=True)


def two_phases(model):
    """Training steps with backward, then an evaluation without no_grad keeping every output: the
    evaluation holds more than the training did."""
    training_with_backward(model)
    return evaluate(model)


# Two epochs of 12 steps: the first epoch's shorter last batch is pinned two thirds of the way
# through the run, too late for a warm-up (analysis/verdicts.h) unless read as a new batch shape.
EPOCH_STEPS = 12
LOADER_STEP_SECONDS = 0.06


def loader_with_pinned_memory(_model, keep=False, num_workers=2):
    """DataLoader(pin_memory=True) over two epochs whose last batch is smaller: the loader's thread
    pins batches ahead of the steps, so the pinned cache grows by the batches in flight and by the
    first short batch, then serves every batch."""
    net = Net(6)
    kept = []
    for _epoch in range(2):
        loader = data.DataLoader([BATCH] * (EPOCH_STEPS - 1) + [BATCH // 3], num_workers=num_workers)
        for batch in loader:
            x = batch[0].cuda(non_blocking=True)
            net(x).item()
            if keep:
                kept.append(batch)  # every pinned batch kept: a block a batch
            del x, batch
            time.sleep(LOADER_STEP_SECONDS)
    return len(kept)


def loader_keeping_pinned_batches(model):
    return loader_with_pinned_memory(model, keep=True)


def loader_pinning_in_the_loop(model):
    """Without workers the training loop's own thread pins each batch as it fetches the next."""
    return loader_with_pinned_memory(model, num_workers=0)



# Requests served as asyncio tasks: each task's coroutine is stepped by the event loop itself, so
# no loop of the program is on its stack, and tasks that run at once interleave their allocations.
# asyncio is imported where used: it takes 70 ms to import, in every scenario's process otherwise.
TASKS_AT_ONCE = 3


def served_in_tasks(model, keep=True, waves=ITERATIONS, at_once=TASKS_AT_ONCE):
    """Waves of requests, each wave's tasks at once; each request's output is kept in a cache."""
    import asyncio

    cache = []

    async def request():
        await asyncio.sleep(0.001)
        x = torch.empty(BATCH)
        out = model(x)  # LEAK
        if keep:
            cache.append(out)
        await asyncio.sleep(0.001)
        return out.item()

    async def serve():
        for _ in range(waves):
            await asyncio.gather(*[asyncio.create_task(request()) for _ in range(at_once)])

    asyncio.run(serve())
    return len(cache)


def served_in_tasks_released(model):
    """The same waves; every request's memory dies with its task."""
    return served_in_tasks(model, keep=False)


def gathered_at_once(model):
    """All requests at once through one asyncio.gather, nothing kept: each task holds its input and
    output until it ends, so the tasks' memory rises over all of them and falls at the end."""
    return served_in_tasks(model, keep=False, waves=1, at_once=ITERATIONS)


def awaited_in_a_loop(model):
    """Requests awaited one after another by a loop of the program, each output kept."""
    import asyncio

    outputs = []

    async def request():
        await asyncio.sleep(0.001)
        x = torch.empty(BATCH)
        return model(x)  # LEAK

    async def serve():
        for _ in range(ITERATIONS):
            outputs.append(await request())

    asyncio.run(serve())
    return len(outputs)


if __name__ == "__main__":
    scenario = globals()[sys.argv[1]]
    scenario(torch.Model())
