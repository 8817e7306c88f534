"""Seed: a DataLoader with pin_memory=True and two workers, over two epochs whose last batch is
short (drop_last=False, the default). The loader's thread pins each batch through PyTorch's
pinned-memory cache, which grows by the batches in flight and by the first short batch (a block
of a smaller power of two), then serves every batch: no leak, in device memory or pinned.

The report's live device bytes at the end must match PyTorch's, no site may be a leak, and every
pinned site must be read as that cache's blocks (its stack names CachingHostAllocator).
"""
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

from scenario_support import finish, torch_memory_state

EPOCHS = 2
BATCH = 256
STEPS = 30  # per epoch; the last batch has 100 rows: 400 KiB, pinned in a 512 KiB block
STEP_SECONDS = 0.03

dataset = TensorDataset(torch.randn((STEPS - 1) * BATCH + 100, 1024))
w = torch.randn(1024, 1024, device="cuda")
for epoch in range(EPOCHS):
    for (x,) in DataLoader(dataset, batch_size=BATCH, num_workers=2, pin_memory=True):
        y = (x.cuda(non_blocking=True) @ w).relu()
        y.sum().item()
        del x, y
        time.sleep(STEP_SECONDS)

finish({"framework": "torch", "scenario": "pinned-loader", **torch_memory_state()})
