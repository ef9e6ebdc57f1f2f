"""The workers of ray_trainer.py: a Ray actor (pickled by value to the worker process, as
Ray sends actor classes) that trains with a gloo all-reduce."""

import ray


@ray.remote(num_cpus=1)
class ActorRolloutRefWorker:
    def train(self, steps: int) -> float:
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        rank = dist.get_rank()
        t = torch.zeros(1)
        for step in range(steps):
            t += rank + step
            dist.all_reduce(t)  # BREAK
        total = float(t.item())
        dist.destroy_process_group()
        return total
