"""A nanoGPT-style training script: module-level defaults, then ``configurator.py`` applies
config files and ``--key=value`` overrides (the pattern of karpathy/nanoGPT's train.py).

Small enough for a CPU: ranks talk over gloo, the data is this file's own text. Its full
command trains for 5000 steps with evaluation and checkpoints; `rankdebug smoke` shrinks it
to a run of seconds. Run from this folder:

    torchrun --standalone --nproc_per_node 2 train.py config/char.py
"""

import math
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

# -----------------------------------------------------------------------------
# defaults, overridden by config files and --key=value (see configurator.py)
out_dir = "out"
eval_interval = 200
log_interval = 10
eval_iters = 50
always_save_checkpoint = True
wandb_log = False
gradient_accumulation_steps = 4
batch_size = 16
block_size = 256
n_layer = 2
n_head = 4
n_embd = 64
learning_rate = 1e-3
max_iters = 5000
backend = "gloo"
compile = False
# -----------------------------------------------------------------------------
exec(open("configurator.py").read())  # overrides from the command line or a config file

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    dist.init_process_group(backend=backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    assert gradient_accumulation_steps % world == 0
    gradient_accumulation_steps //= world
else:
    rank, world = 0, 1
master = rank == 0
torch.manual_seed(1337 + rank)
torch.set_num_threads(1)

text = open(__file__, "rb").read()
data = torch.tensor(list(text), dtype=torch.long)
vocab = 256


def get_batch():
    ix = torch.randint(len(data) - block_size - 1, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x, y


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(vocab, n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        layer = nn.TransformerEncoderLayer(n_embd, n_head, 4 * n_embd, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, n_layer, enable_nested_tensor=False)
        self.head = nn.Linear(n_embd, vocab)

    def forward(self, x, y):
        t = x.size(1)
        mask = nn.Transformer.generate_square_subsequent_mask(t)
        h = self.tok(x) + self.pos(torch.arange(t))
        logits = self.head(self.blocks(h, mask=mask, is_causal=True))
        return nn.functional.cross_entropy(logits.view(-1, vocab), y.view(-1))


model = TinyGPT()
if compile:
    model = torch.compile(model)
if ddp:
    model = DistributedDataParallel(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)


@torch.no_grad()
def estimate_loss():
    model.eval()
    losses = [model(*get_batch()).item() for _ in range(eval_iters)]
    model.train()
    return sum(losses) / len(losses)


if master:
    os.makedirs(out_dir, exist_ok=True)
best = math.inf
t0 = time.time()
for iter_num in range(max_iters + 1):
    if iter_num % eval_interval == 0 and master:
        val = estimate_loss()
        print(f"step {iter_num}: val loss {val:.4f}", flush=True)
        if iter_num > 0 and (val < best or always_save_checkpoint):
            best = val
            torch.save({"model": model.state_dict(), "iter_num": iter_num},
                       os.path.join(out_dir, "ckpt.pt"))
    if iter_num == max_iters:
        break
    for micro in range(gradient_accumulation_steps):
        if ddp:
            model.require_backward_grad_sync = micro == gradient_accumulation_steps - 1
        loss = model(*get_batch()) / gradient_accumulation_steps
        loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if iter_num % log_interval == 0 and master:
        dt = time.time() - t0
        t0 = time.time()
        print(f"iter {iter_num}: loss {loss.item() * gradient_accumulation_steps:.4f}, "
              f"time {dt * 1000:.0f}ms", flush=True)
if ddp:
    # Every rank is done with its collectives before any tears its process group down: a
    # rank that closes its gloo pairs while a peer still has one in flight can abort the
    # peer at exit ("terminate called without an active exception"), seen under load.
    dist.barrier()
    del model  # DDP's reducer goes before the group it holds
    dist.destroy_process_group()
if master:
    print("done", flush=True)
