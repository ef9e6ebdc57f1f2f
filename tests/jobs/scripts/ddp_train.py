"""A data-parallel training loop (gloo, CPU) for the one-point compare tests: DDP keeps the
model's weights equal on every rank after each optimizer step, but they change every step,
so ranks read a step apart differ. Each rank feeds its own batches; the loop runs until
MARKER_DIR/stop exists (the ranks agree on it through an all_reduce) and writes its step
count to MARKER_DIR/steps-RANK."""

import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

OUT = os.environ["MARKER_DIR"]

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
ddp = DistributedDataParallel(model)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
gen = torch.Generator().manual_seed(rank)
step = 0
while True:
    stop = torch.tensor([1.0 if os.path.exists(os.path.join(OUT, "stop")) else 0.0])
    dist.all_reduce(stop)
    if stop.item() > 0:
        break
    x = torch.randn(16, 64, generator=gen)
    loss = ddp(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    step += 1
    with open(os.path.join(OUT, f".steps-{rank}.tmp"), "w") as f:
        f.write(str(step))
    os.replace(os.path.join(OUT, f".steps-{rank}.tmp"), os.path.join(OUT, f"steps-{rank}"))
    time.sleep(0.005 * (1 + rank))  # rank 1 lags a little: reads land a step apart
# DDP's reducer goes before the group it holds: left to the interpreter's exit, gloo's threads
# abort the rank now and then ("terminate called without an active exception": 3 plain
# torchrun runs in 25 here, none in 30 with this line).
del ddp, optimizer, model
dist.destroy_process_group()
