"""A rank whose DataLoaders start workers (fork and spawn): none may start a debugger."""

import json
import os
import sys

import torch
from torch.utils.data import DataLoader, Dataset


class Probe(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = {
            "pid": os.getpid(),
            "debugpy": "debugpy" in sys.modules,
            "traced": sys.gettrace() is not None,
        }
        return torch.tensor([i]), json.dumps(info)


def collect(ctx):
    out = []
    loader = DataLoader(Probe(), batch_size=1, num_workers=2, multiprocessing_context=ctx)
    for _, info in loader:
        out.append(json.loads(info[0]))
    return out


def adapters():
    """debugpy adapter processes of this job (each listener has one)."""
    job = ("RANKDEBUG_JOB=" + os.environ.get("RANKDEBUG_JOB", "-")).encode()
    found = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        found += b"debugpy/adapter" in cmd and job in env
    return found


if __name__ == "__main__":
    results = {"fork": collect("fork"), "spawn": collect("spawn"), "main": os.getpid(),
               "adapters": adapters()}
    with open(os.path.join(os.environ["MARKER_DIR"], "loader.json"), "w") as f:
        json.dump(results, f)
