"""A gloo/CPU training loop whose rank RAISE_RANK (default 0) raises IndexError in its
model's forward at step RAISE_STEP (default 3): an embedding index out of range, raised in
torch's code under the user's two ``forward`` methods. Every rank counts its steps into
MARKER_DIR/steps-RANK; with RAISE_STEP=0 nobody raises and the loop runs until
MARKER_DIR/stop exists.
"""

import os
import time

import torch
import torch.distributed as dist
from raise_model import Net

OUT = os.environ["MARKER_DIR"]
RAISE_RANK = int(os.environ.get("RAISE_RANK", "0"))
RAISE_STEP = int(os.environ.get("RAISE_STEP", "3"))


def write(name, text):
    tmp = os.path.join(OUT, f".{name}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(OUT, name))


def train_step(model, step, rank):
    shift = 20 if (step == RAISE_STEP and rank == RAISE_RANK) else 0
    tokens = torch.arange(4) + shift
    loss = model(tokens)  # STEP CALLS MODEL
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    return loss


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = Net()
    step = 0
    while not os.path.exists(os.path.join(OUT, "stop")):
        step += 1
        train_step(model, step, rank)
        write(f"steps-{rank}", str(step))  # COUNTED
        time.sleep(0.02)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
