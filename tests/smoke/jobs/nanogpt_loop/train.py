"""karpathy/nanoGPT's train.py in outline (written anew, small enough for a CPU): defaults
for a GPU run (device 'cuda', backend 'nccl'), the configurator, and nanoGPT's own loop,
which makes max_iters + 1 optimizer steps (``while True: ... iter_num += 1; if iter_num >
max_iters: break``). Unlike nanoGPT, a DDP rank keeps the device it is given when that is not
CUDA, so that ``--device=cpu --backend=gloo`` runs it on a CPU. Each optimizer step prints
``iter N``, counted by the tests."""
# ruff: noqa: SIM115, PLW1508 (nanoGPT's own idioms: exec(open(...)), environ.get(k, -1))

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

out_dir = 'out'
eval_interval = 2000
log_interval = 1
eval_iters = 200
always_save_checkpoint = True
gradient_accumulation_steps = 8
batch_size = 12
block_size = 1024
learning_rate = 6e-4
max_iters = 600000
backend = 'nccl'  # 'nccl', 'gloo', etc.
device = 'cuda'  # 'cpu', 'cuda', 'cuda:0', 'cuda:1' etc.
compile = True
exec(open('configurator.py').read())

ddp = int(os.environ.get('RANK', -1)) != -1
if ddp:
    dist.init_process_group(backend=backend)
    ddp_rank = int(os.environ['RANK'])
    ddp_local_rank = int(os.environ['LOCAL_RANK'])
    device = f'cuda:{ddp_local_rank}' if device == 'cuda' else device
    master_process = ddp_rank == 0
    assert gradient_accumulation_steps % dist.get_world_size() == 0
    gradient_accumulation_steps //= dist.get_world_size()
else:
    master_process = True
torch.manual_seed(1337)
torch.set_num_threads(1)
data = torch.tensor(list(open(__file__, 'rb').read()), dtype=torch.long)


def get_batch():
    ix = torch.randint(len(data) - block_size - 1, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x.to(device), y.to(device)


class Bigram(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(256, 256)

    def forward(self, x, y):
        logits = self.table(x)
        return nn.functional.cross_entropy(logits.view(-1, 256), y.view(-1))


model = Bigram().to(device)
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


if master_process:
    os.makedirs(out_dir, exist_ok=True)
iter_num = 0
while True:
    if iter_num % eval_interval == 0 and master_process:
        val = estimate_loss()
        print(f"step {iter_num}: val loss {val:.4f}", flush=True)
        if iter_num > 0 or always_save_checkpoint:
            torch.save({"iter_num": iter_num}, os.path.join(out_dir, 'ckpt.pt'))
    for micro_step in range(gradient_accumulation_steps):
        if ddp:
            model.require_backward_grad_sync = micro_step == gradient_accumulation_steps - 1
        loss = model(*get_batch()) / gradient_accumulation_steps
        loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if iter_num % log_interval == 0 and master_process:
        print(f"iter {iter_num}: loss {loss.item() * gradient_accumulation_steps:.4f}", flush=True)
    iter_num += 1
    if iter_num > max_iters:
        break
if ddp:
    dist.barrier()  # no peer still in a collective when the groups go (gloo, under load)
    del model
    dist.destroy_process_group()
print("done", flush=True)
