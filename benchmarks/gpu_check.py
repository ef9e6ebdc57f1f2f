"""Checks on a CUDA machine (not part of CI, which has no GPU).

A. Two ranks share one GPU (gloo backend on CUDA tensors, init_process_group(timeout=10 s)).
   The chosen rank is held at a breakpoint for 30 s, three times the job's own collective
   timeout, while the other rank waits in all-reduce: with the collective-timeout guard the
   job must finish with exit 0.
B. One rank on NCCL (one GPU: NCCL refuses two ranks on one device): the debugger attaches
   to a CUDA process, reads tensors on the GPU and the NCCL watchdog settings, holds it
   paused, and the job exits 0.
C. With two GPUs or more: two NCCL ranks, rank 1 held ``--nccl-hold`` seconds while rank 0
   waits in an NCCL all_reduce (``--nccl-hold 660``: past NCCL's 10-minute default).
For both: seconds from start until the chosen rank is paused at the line, against a plain
run reaching the same line (the floor), for the default (--attach hit: no tracer until the
breakpoint) and --attach start; and, while the rank is paused, what `rankdebug jobs --json`
says of each rank's GPU and memory, and whether `rankdebug stacks` reads every rank.

    python benchmarks/gpu_check.py                 # prints a report; exit status 1 on failure
    python benchmarks/gpu_check.py --cpu           # the same on the CPU (checks the script)
    python benchmarks/gpu_check.py --json-out F    # also writes every figure to F
"""

from __future__ import annotations

import argparse
import json
import os
import re
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

backend, where = sys.argv[1], sys.argv[2]
dist.init_process_group(backend, timeout=timedelta(seconds=10))
rank = dist.get_rank()
if where == "cuda":
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)) % torch.cuda.device_count())
    torch.cuda.set_device(device)
else:
    device = torch.device("cpu")
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
if where == "cuda":
    torch.cuda.synchronize()
dist.barrier()
del model
dist.destroy_process_group()
print(f"DONE {rank}", flush=True)
'''


def plain(script: Path, nproc: int, backend: str, where: str, rank: int) -> float:
    for _ in range(3):  # a rare run that dies at exit says nothing of the time to the line
        start = time.time()
        run = subprocess.run(["torchrun", "--nproc_per_node", str(nproc), str(script), backend,
                              where], capture_output=True, text=True, timeout=300, check=False)
        reached = [float(m) for m in re.findall(rf"REACHED {rank} ([0-9.]+)", run.stdout)]
        if reached:
            return reached[0] - start
        print(f"plain run: exit {run.returncode}, {run.stdout[-300:]!r} {run.stderr[-300:]!r}")
    raise RuntimeError("the plain run never reached the line")


def _rankdebug(*args: str) -> Any:
    out = subprocess.run([sys.executable, "-m", "rankdebug", *args], capture_output=True,
                         text=True, timeout=60, check=False)
    try:
        return json.loads(out.stdout)
    except ValueError:
        return {"rc": out.returncode, "stdout": out.stdout[-500:], "stderr": out.stderr[-500:]}


def _while_paused(job_id: str) -> dict[str, Any]:
    """What the jobs view and stacks say while the chosen rank is paused."""
    t0 = time.perf_counter()
    jobs = _rankdebug("jobs", "--json")
    jobs_s = time.perf_counter() - t0
    ranks = [{k: r.get(k) for k in ("rank", "state", "gpu", "cuda_visible_devices", "rss",
                                    "collective")}
             for j in jobs.get("jobs", []) if j.get("id") == job_id for r in j.get("ranks", [])]
    t0 = time.perf_counter()
    stacks = _rankdebug("stacks", job_id, "--json")
    stacks_s = time.perf_counter() - t0
    read = {str(r["rank"]): r.get("error") or r.get("via")
            for r in stacks.get("ranks", []) if isinstance(r, dict)}
    return {"jobs_ms": round(jobs_s * 1000), "ranks": ranks,
            "stacks_ms": round(stacks_s * 1000), "stacks_read": read}


def debugged(script: Path, nproc: int, backend: str, where: str, rank: int, attach: str,
             hold: float, checks: list[str]) -> dict[str, Any]:
    line = next(n for n, t in enumerate(script.read_text().splitlines(), 1) if "# MARK" in t)
    cmd = [sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", str(rank),
           "--attach", attach, "--", "torchrun", "--nproc_per_node", str(nproc), str(script),
           backend, where]
    start = time.time()
    err = tempfile.TemporaryFile("w+")  # noqa: SIM115 (read in finally, then closed)
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
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
        t_hold = time.time()
        result["while_paused"] = _while_paused(str(listening["job"]))
        # the other ranks wait in their next collective meanwhile
        time.sleep(max(0.0, hold - (time.time() - t_hold)))
        result["held_s"] = round(time.time() - t_hold, 1)
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
        if result.get("exit") != 0:
            err.seek(0)
            result["stderr"] = err.read()[-3000:]
        err.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cpu", action="store_true", help="run on the CPU (gloo only)")
    parser.add_argument("--json-out", help="write every figure to this file")
    parser.add_argument("--hold", type=float, default=30.0, help="seconds held paused (A)")
    parser.add_argument("--nccl-hold", type=float, default=30.0,
                        help="seconds rank 1 of two NCCL ranks is held (C, with 2 GPUs or more; "
                             "660 holds it past NCCL's 10-minute default)")
    args = parser.parse_args()
    where = "cpu" if args.cpu else "cuda"
    ok = True
    report: dict[str, Any] = {"torch": _torch_version(), "gpus": _gpus(), "cases": []}
    cases = [("A gloo, 2 ranks, 1 GPU", 2, "gloo", 1, args.hold)]
    if not args.cpu:
        cases.append(("B nccl, 1 rank", 1, "nccl", 0, min(15.0, args.hold / 2)))
    gpus = _gpus()
    if not args.cpu and gpus.count("GPU ") >= 2:
        # NCCL's own case: rank 1 paused while rank 0 waits in an NCCL all_reduce, held for
        # --nccl-hold seconds (660: longer than NCCL's 10-minute default too, not only the
        # job's own 10 s; it needs a command limit over 11 minutes).
        cases.append(("C nccl, 2 ranks, 2 GPUs", 2, "nccl", 1, args.nccl_hold))
    checks = ["str(x.device)", "float(loss)",
              "os.environ.get('TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC')",
              "os.environ.get('TORCH_NCCL_ENABLE_MONITORING')"]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "gpu_train.py"
        script.write_text(TRAIN)
        print(f"torch {report['torch']}; GPUs: {report['gpus']}")
        for name, nproc, backend, rank, hold in cases:
            # plain runs before and after the debugged ones: the floor is the faster
            first = plain(script, nproc, backend, where, rank)
            case: dict[str, Any] = {"name": name, "runs": {}}
            for attach in ("hit", "start"):
                try:
                    res = debugged(script, nproc, backend, where, rank, attach, hold, checks)
                except Exception as exc:  # a report of every case, even when one breaks
                    res = {"error": f"{type(exc).__name__}: {exc}"}
                case["runs"][attach] = res
            floor = min(first, plain(script, nproc, backend, where, rank))
            case["floor_s"] = round(floor, 2)
            print(f"\n{name}: plain run reaches the line in {floor:.2f} s")
            for attach, res in case["runs"].items():
                passed = res.get("exit") == 0 and res.get("line") is True
                ok = ok and passed
                paused = res.get("paused_s", 0.0)
                res["ratio"] = round(paused / floor, 2)
                print(f"  --attach {attach}: paused after {paused:.2f} s = {res['ratio']:.2f}x "
                      f"the floor; held {res.get('held_s')} s (job timeout 10 s); "
                      f"exit {res.get('exit')}; {'PASS' if passed else 'FAIL'}")
                for key in checks:
                    print(f"      {key} = {res.get(key)}")
                print(f"      while paused: {json.dumps(res.get('while_paused'))}")
                for key in ("error", "stderr"):
                    if key in res:
                        print(f"      {key}: {res[key]}")
            report["cases"].append(case)
    report["ok"] = ok
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=1))
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
