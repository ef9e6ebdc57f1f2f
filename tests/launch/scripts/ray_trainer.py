"""A verl-shaped Ray trainer: a driver, a worker group of actors whose runtime environment
carries RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (as verl's RayWorkerGroup sets them), and a
gloo all-reduce in a loop in each worker."""

import socket
import sys

import ray
from ray_worker import ActorRolloutRefWorker  # the workers' code lives in a module, as verl's does


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(world_size: int, steps: int) -> None:
    ray.init(num_cpus=world_size, include_dashboard=False, log_to_driver=True)
    port = free_port()
    workers = []
    for rank in range(world_size):
        env = {"RANK": str(rank), "WORLD_SIZE": str(world_size), "LOCAL_RANK": str(rank),
               "LOCAL_WORLD_SIZE": str(world_size), "MASTER_ADDR": "127.0.0.1",
               "MASTER_PORT": str(port)}
        workers.append(ActorRolloutRefWorker.options(runtime_env={"env_vars": env},
                                                     name=f"actor_rank{rank}").remote())
    results = ray.get([w.train.remote(steps) for w in workers])
    print("results", results, flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2,
         int(sys.argv[2]) if len(sys.argv) > 2 else 20)
