"""Checks on a CUDA machine (not part of CI, which has no GPU).

A. Two ranks share one GPU (gloo backend, CUDA tensors, init_process_group(timeout=10 s)).
   Rank 1 is held at a breakpoint for 30 s while rank 0 waits in all-reduce: with the
   collective-timeout guard the job must finish with exit 0.
B. One rank on NCCL: the debugger attaches to a CUDA process, reads tensors on the GPU
   and the NCCL watchdog settings, and the job exits 0.
For both: seconds from start until the chosen rank is paused at the line, against a
plain run reaching the same line (the floor), for --attach start and --attach hit.

    python benchmarks/gpu_check.py            # prints a report; exit status 1 on failure

Status: written for a machine with a GPU and not yet run on one (the task that wrote it
was lent none); expect to adjust it on its first run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from dap_client import DAPClient  # noqa: E402

TRAIN = '''\
import os, sys, time
from datetime import timedelta
import torch
import torch.distributed as dist
from torch import nn

backend = sys.argv[1]
dist.init_process_group(backend, timeout=timedelta(seconds=10))
rank = dist.get_rank()
device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)) % torch.cuda.device_count())
torch.cuda.set_device(device)
model = nn.parallel.DistributedDataParallel(nn.Linear(1024, 1024).to(device))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(20):
    x = torch.randn(256, 1024, device=device)
    loss = model(x).pow(2).mean()
    if step == 0:
        print(f"REACHED {rank} {time.time()}", flush=True)  # MARK
    loss.backward()
    opt.step()
    opt.zero_grad()
torch.cuda.synchronize()
dist.destroy_process_group()
print(f"DONE {rank}", flush=True)
'''


def plain(script: Path, nproc: int, backend: str, rank: int) -> float:
    start = time.time()
    out = subprocess.run(["torchrun", "--nproc_per_node", str(nproc), str(script), backend],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    reached = [float(line.split()[2]) for line in out.splitlines()
               if line.startswith(f"REACHED {rank} ")]
    return reached[0] - start


def debugged(script: Path, nproc: int, backend: str, rank: int, attach: str,
             hold: float, checks: list[str]) -> dict[str, Any]:
    line = next(n for n, t in enumerate(script.read_text().splitlines(), 1) if "# MARK" in t)
    cmd = [sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", str(rank),
           "--attach", attach, "--break", f"{script}:{line}", "--",
           "torchrun", "--nproc_per_node", str(nproc), str(script), backend]
    start = time.time()
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert job.stdout is not None
    result: dict[str, Any] = {}
    try:
        listening = next(json.loads(raw) for raw in job.stdout
                         if json.loads(raw).get("event") == "listening")
        dap = DAPClient(str(listening["host"]), int(listening["port"]), timeout=300)
        dap.attach({str(script): [line]}, timeout=300)
        stopped = dap.stopped(timeout=300)
        result["paused_s"] = time.time() - start
        frame = dap.top_frame(stopped["threadId"])
        result["line"] = frame["line"] == line
        for expr in checks:
            result[expr] = dap.evaluate(expr, frame["id"])
        time.sleep(hold)  # the other ranks wait in their next collective meanwhile
        dap.request("setBreakpoints", {"source": {"path": str(script)}, "breakpoints": []})
        dap.cont(stopped["threadId"])
        for raw in job.stdout:
            event = json.loads(raw)
            if event.get("event") == "exited":
                result["exit"] = event.get("code")
                break
        dap.close()
    finally:
        if job.poll() is None:
            job.terminate()
            job.wait(timeout=30)
    return result


def main() -> int:
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "gpu_train.py"
        script.write_text(TRAIN)
        print(f"torch {_torch_version()}; GPUs: {_gpus()}")
        for name, nproc, backend, rank, hold in (("A gloo, 2 ranks, 1 GPU", 2, "gloo", 1, 30.0),
                                                  ("B nccl, 1 rank", 1, "nccl", 0, 15.0)):
            floor = plain(script, nproc, backend, rank)
            print(f"\n{name}: plain run reaches the line in {floor:.2f} s")
            for attach in ("start", "hit"):
                checks = ["str(x.device)", "float(loss)",
                          "os.environ.get('TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC')",
                          "os.environ.get('TORCH_NCCL_ENABLE_MONITORING')"]
                res = debugged(script, nproc, backend, rank, attach, hold, checks)
                passed = res.get("exit") == 0 and res.get("line") is True
                ok = ok and passed
                print(f"  --attach {attach}: paused after {res.get('paused_s', 0):.2f} s = "
                      f"{res.get('paused_s', 0) / floor:.2f}x the floor; held {hold:.0f} s "
                      f"(timeout 10 s); exit {res.get('exit')}; "
                      f"{'PASS' if passed else 'FAIL'}")
                for key in checks:
                    print(f"      {key} = {res.get(key)}")
    print("\nall checks passed" if ok else "\nSOME CHECKS FAILED")
    return 0 if ok else 1


def _torch_version() -> str:
    return subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                          check=False, capture_output=True, text=True).stdout.strip()


def _gpus() -> str:
    try:
        return subprocess.run(["nvidia-smi", "-L"], check=False, capture_output=True, text=True,
                              timeout=30).stdout.strip().replace("\n", "; ")
    except OSError:
        return "none"


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
