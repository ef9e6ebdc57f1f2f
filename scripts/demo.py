"""The Quick start's main job: debug rank 1 of the bundled two-rank example, in a terminal.

1. `rankdebug plan` reads the torchrun command in examples/train.sh;
2. `rankdebug launch --ranks 1` runs the job: rank 1 waits for a debugger, rank 0 runs;
3. this script attaches to rank 1 over the Debug Adapter Protocol (what VS Code does),
   stops at a breakpoint in the training loop, prints the stack and a few variables,
   continues, and checks that the whole job ends cleanly.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


class DAP:
    """Just enough of a DAP client: requests, responses and events over one socket."""

    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=120)
        self.buf = b""
        self.seq = 0
        self.events: list[dict[str, Any]] = []

    def send(self, command: str, arguments: dict[str, Any] | None = None) -> int:
        self.seq += 1
        body = json.dumps({"seq": self.seq, "type": "request", "command": command,
                           "arguments": arguments or {}}).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.seq

    def read(self) -> dict[str, Any]:
        while b"\r\n\r\n" not in self.buf:
            self.buf += self._recv()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")))
        while len(self.buf) < length:
            self.buf += self._recv()
        body, self.buf = self.buf[:length], self.buf[length:]
        message: dict[str, Any] = json.loads(body)
        return message

    def _recv(self) -> bytes:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the debug adapter closed the connection")
        return chunk

    def request(self, command: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        seq = self.send(command, arguments)
        while True:
            msg = self.read()
            if msg.get("type") == "event":
                self.events.append(msg)
            elif msg.get("type") == "response" and msg.get("request_seq") == seq:
                if not msg.get("success"):
                    raise RuntimeError(f"{command} failed: {msg.get('message')}")
                return msg

    def event(self, name: str) -> dict[str, Any]:
        for i, ev in enumerate(self.events):
            if ev.get("event") == name:
                return self.events.pop(i)
        while True:
            msg = self.read()
            if msg.get("type") == "event" and msg.get("event") == name:
                return msg
            if msg.get("type") == "event":
                self.events.append(msg)


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
        dap = DAP(str(listening["host"]), int(listening["port"]))
        dap.request("initialize", {"adapterID": "rankdebug", "clientID": "demo",
                                   "linesStartAt1": True, "columnsStartAt1": True,
                                   "pathFormat": "path"})
        attach_seq = dap.send("attach", {"justMyCode": True})
        dap.event("initialized")
        dap.request("setBreakpoints", {"source": {"path": str(train)},
                                       "breakpoints": [{"line": stop_line}]})
        dap.request("configurationDone")
        while True:  # the attach response comes after configurationDone
            msg = dap.read()
            if msg.get("type") == "response" and msg.get("request_seq") == attach_seq:
                break
            if msg.get("type") == "event":
                dap.events.append(msg)
        stopped = dap.event("stopped")["body"]
        paused_at = time.monotonic() - start
        frames = dap.request("stackTrace", {"threadId": stopped["threadId"], "levels": 5})
        frames = frames["body"]["stackFrames"]
        top = frames[0]
        print(f"rank 1 stopped ({stopped['reason']}) {paused_at:.1f} s after launch:")
        for f in frames:
            src = Path(f.get("source", {}).get("path", "?")).name
            print(f"    {f['name']}  {src}:{f['line']}")
        for expr in ("rank", "step", "float(loss)", "__import__('os').environ['RANK']"):
            value = dap.request("evaluate", {"expression": expr, "frameId": top["id"],
                                             "context": "watch"})["body"]["result"]
            print(f"    {expr} = {value}")
        dap.request("setBreakpoints", {"source": {"path": str(train)}, "breakpoints": []})
        dap.request("continue", {"threadId": stopped["threadId"]})
        print("continued; rank 0 was waiting at the next all-reduce, not timing out")
        for raw in job.stdout:
            event = json.loads(raw)
            if event.get("event") == "exited":
                print(f"  {raw.strip()}")
                dap.sock.close()
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
