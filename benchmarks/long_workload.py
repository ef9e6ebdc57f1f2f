"""A training job the way real ones start: it builds its data and its model first, then
trains; about 15-20 s to the first step on a quiet 2-core machine (2 ranks, gloo/CPU).

Environment: BENCH_OUT (folder) - each rank writes ``reach-<rank>.txt`` (wall time it first
reached the marked line); BENCH_STEPS (default 3) - training steps after it.
"""

import os
import random
import time

import torch
import torch.distributed as dist
from torch import nn

OUT = os.environ.get("BENCH_OUT", "")
STEPS = int(os.environ.get("BENCH_STEPS", "3"))
VOCAB, WIDTH, SEQ = 4096, 256, 64


def mark(rank):
    if OUT:
        now = time.time()
        tmp = os.path.join(OUT, f".reach-{rank}.tmp")
        with open(tmp, "w") as f:
            f.write(repr(now))
        os.replace(tmp, os.path.join(OUT, f"reach-{rank}.txt"))


def build_corpus(rank, documents=12000):
    """Tokenise a synthetic corpus in Python, as a data pipeline does before training."""
    rng = random.Random(rank)
    words = [f"w{i}" for i in range(VOCAB)]
    vocab = {w: i for i, w in enumerate(words)}
    tokens = []
    for _ in range(documents):
        text = " ".join(rng.choice(words) for _ in range(SEQ))
        tokens.append([vocab[w] for w in text.split()])
    return torch.tensor(tokens)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        layer = nn.TransformerEncoderLayer(WIDTH, 4, 4 * WIDTH, batch_first=True)
        self.body = nn.TransformerEncoder(layer, 4)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, x):
        return self.head(self.body(self.embed(x)))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    data = build_corpus(rank)
    model = nn.parallel.DistributedDataParallel(Model())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    with torch.no_grad():  # a warm-up evaluation before training
        for i in range(0, 64, 8):
            model(data[i:i + 8])
    for step in range(STEPS):
        batch = data[step * 8:(step + 1) * 8]
        mark(rank)  # BREAK
        logits = model(batch[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
