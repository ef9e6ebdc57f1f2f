"""A Megatron-DeepSpeed-style pretraining script: Megatron's flags (``--train-iters``,
``--micro-batch-size``, ``--global-batch-size``, ``--seq-length``, ``--eval-iters``,
``--save``) and a DeepSpeed engine configured by a JSON file (``--deepspeed_config``).

The model is a small transformer and the data is synthetic, so it runs on a CPU (DeepSpeed's
CPU accelerator, gloo). Its full command trains for 2000 iterations; `rankdebug smoke`
shrinks it, and the JSON's batch sizes with it (in a copy). Run from this folder:

    deepspeed --num_gpus 2 pretrain.py --deepspeed --deepspeed_config ds_config.json ...
"""

import argparse
import time

import deepspeed
import torch
from torch import nn


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--train-iters", type=int, required=True)
    p.add_argument("--micro-batch-size", type=int, default=1)
    p.add_argument("--global-batch-size", type=int, default=None)
    p.add_argument("--seq-length", type=int, default=256)
    p.add_argument("--hidden-size", type=int, default=64)
    p.add_argument("--num-layers", type=int, default=2)
    p.add_argument("--eval-iters", type=int, default=10)
    p.add_argument("--eval-interval", type=int, default=100)
    p.add_argument("--save", default=None)
    p.add_argument("--save-interval", type=int, default=500)
    p.add_argument("--log-interval", type=int, default=10)
    p.add_argument("--num-workers", type=int, default=2)
    p.add_argument("--local_rank", type=int, default=-1)
    p = deepspeed.add_config_arguments(p)
    return p.parse_args()


class Tiny(nn.Module):
    def __init__(self, hidden: int, layers: int, seq: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(256, hidden)
        self.pos = nn.Embedding(seq, hidden)
        layer = nn.TransformerEncoderLayer(hidden, 4, 4 * hidden, dropout=0.0, batch_first=True)
        self.body = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(hidden, 256)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x) + self.pos(torch.arange(x.size(1)))
        logits = self.head(self.body(h))
        return nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 256),
                                           x[:, 1:].reshape(-1))


def batch(args: argparse.Namespace) -> torch.Tensor:
    start = torch.randint(0, 256, (args.micro_batch_size, 1))
    return (start + torch.arange(args.seq_length)) % 256


def main() -> None:
    args = parse()
    torch.set_num_threads(1)
    deepspeed.init_distributed(dist_backend="gloo")
    model = Tiny(args.hidden_size, args.num_layers, args.seq_length)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, optimizer=optimizer)
    if args.global_batch_size is not None:
        assert engine.train_batch_size() == args.global_batch_size, (
            f"--global-batch-size {args.global_batch_size} but DeepSpeed's train_batch_size "
            f"is {engine.train_batch_size()}")
    master = engine.global_rank == 0
    t0 = time.time()
    for it in range(1, args.train_iters + 1):
        for _ in range(engine.gradient_accumulation_steps()):
            loss = engine(batch(args))
            engine.backward(loss)
            engine.step()
        if it % args.log_interval == 0 and master:
            dt, t0 = time.time() - t0, time.time()
            print(f"iteration {it}/{args.train_iters}: loss {loss.item():.4f}, "
                  f"time {dt * 1000:.0f}ms", flush=True)
        if args.eval_iters and it % args.eval_interval == 0:
            with torch.no_grad():
                val = sum(engine(batch(args)).item() for _ in range(args.eval_iters))
            if master:
                print(f"validation at {it}: loss {val / args.eval_iters:.4f}", flush=True)
        if args.save and it % args.save_interval == 0:
            engine.save_checkpoint(args.save, tag=f"iter_{it}")
    if args.save:
        engine.save_checkpoint(args.save, tag="last")
    if master:
        print("done", flush=True)
    # Every rank is done with its collectives before any tears its process group down: a
    # rank closing its gloo pairs while a peer has one in flight can abort the peer at exit
    # ("terminate called without an active exception"), seen under CI load.
    torch.distributed.barrier()
    del engine  # the engine's hooks go before the group they hold
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
