"""The Quick start's main job: debug rank 1 of the bundled two-rank example, in a terminal.

1. `rankdebug plan` reads the torchrun command in examples/train.sh;
2. `rankdebug launch --ranks 1` runs the job: rank 1 waits for a debugger, rank 0 runs;
3. this script attaches to rank 1 over the Debug Adapter Protocol (what VS Code does),
   stops at a breakpoint in the training loop, prints the stack and a few variables,
   continues, and checks that the whole job ends cleanly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(ROOT / "tests"))
from dap_client import DAPClient  # noqa: E402  (the DAP client the tests use)


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def main() -> int:
    script = EXAMPLES / "train.sh"
    train = EXAMPLES / "train.py"
    cmd_line = line_of(script, "torchrun")
    stop_line = line_of(train, "loss.backward()")
    rankdebug = [sys.executable, "-m", "rankdebug"]

    print(f"$ rankdebug plan --file examples/train.sh --line {cmd_line}")
    plan = json.loads(subprocess.run(
        [*rankdebug, "plan", "--file", str(script), "--line", str(cmd_line)],
        check=True, capture_output=True, text=True, cwd=EXAMPLES).stdout)
    print(f"  {plan['launcher']}: {plan['nnodes']} node x {plan['nproc_per_node']} processes"
          f" = world size {plan['world_size']}; entry {plan['entry']['target']}"
          f" {' '.join(plan['entry_args'])}")

    launch = [*rankdebug, "launch", "--json", "--ranks", "1", "--break",
              f"{train}:{stop_line}", "--file", str(script), "--line", str(cmd_line)]
    print(f"$ rankdebug launch --json --ranks 1 --break train.py:{stop_line} "
          f"--file examples/train.sh --line {cmd_line}")
    start = time.monotonic()
    job = subprocess.Popen(launch, stdout=subprocess.PIPE, text=True, cwd=EXAMPLES)
    assert job.stdout is not None
    try:
        listening: dict[str, Any] = {}
        for raw in job.stdout:
            event = json.loads(raw)
            print(f"  {raw.strip()}")
            if event.get("event") == "listening":
                listening = event
                break
            if event.get("event") == "exited":
                print("the job ended before rank 1 listened", file=sys.stderr)
                return 1
        dap = DAPClient(str(listening["host"]), int(listening["port"]), timeout=120)
        dap.attach({str(train): [stop_line]}, timeout=120)
        stopped = dap.stopped(timeout=120)
        paused_at = time.monotonic() - start
        frames = dap.request("stackTrace", {"threadId": stopped["threadId"], "levels": 5})
        frames = frames["stackFrames"]
        top = frames[0]
        print(f"rank 1 stopped ({stopped['reason']}) {paused_at:.1f} s after launch:")
        for f in frames:
            src = Path(f.get("source", {}).get("path", "?")).name
            print(f"    {f['name']}  {src}:{f['line']}")
        for expr in ("rank", "step", "loss.item()", "__import__('os').environ['RANK']"):
            print(f"    {expr} = {dap.evaluate(expr, top['id'])}")
        dap.request("setBreakpoints", {"source": {"path": str(train)}, "breakpoints": []})
        dap.cont(stopped["threadId"])
        print("continued; rank 0 was waiting at the next all-reduce, not timing out")
        for raw in job.stdout:
            event = json.loads(raw)
            if event.get("event") == "exited":
                print(f"  {raw.strip()}")
                dap.close()
                code = int(event.get("code", 1))
                print("job finished cleanly" if code == 0 else f"job failed ({code})")
                return code
        return job.wait(timeout=60)
    finally:
        if job.poll() is None:
            job.terminate()
            job.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
