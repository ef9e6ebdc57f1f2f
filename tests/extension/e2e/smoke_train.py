# A nanoGPT-style training script (the layout of karpathy/nanoGPT train.py): module-level
# defaults, then the configurator; DDP on gloo (CPU). As written it runs 5000 iterations.
import time

import torch
import torch.distributed as dist

max_iters = 5000
batch_size = 64
block_size = 256
eval_interval = 500
eval_iters = 200
always_save_checkpoint = True
wandb_log = False
compile = False
exec(open('configurator.py').read())  # noqa: SIM115 (nanoGPT's way)

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(block_size, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
t0 = time.time()
for iter_num in range(max_iters):
    x = torch.randn(batch_size, block_size)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    opt.step()
    if iter_num % 100 == 0 and rank == 0:
        print(f"iter {iter_num}: loss {loss.item():.4f}, {time.time() - t0:.1f}s")
print(f"rank {rank}: {max_iters} iterations in {time.time() - t0:.1f}s")
dist.destroy_process_group()
