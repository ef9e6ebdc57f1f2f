"""What a stopped rank costs each click: the round trip of the requests an editor sends at a
stop (stackTrace, scopes, variables, evaluate) and of a step (``next`` until ``stopped``),
through rankdebug (client → gate → debugpy's adapter → the rank) and with plain debugpy
(``python -m debugpy --listen … --wait-for-client``, the client on its adapter), the same
script and client, run side by side. Median of ``--rounds`` rounds each.

VS Code sends about six such requests in sequence before it shows a stop, and as many at
each step. pydevd writes a message's header and body apart, so without TCP_NODELAY on its
socket each answer waits ~40 ms for a delayed ACK: plain debugpy shows that; rankdebug sets
it (``runtime/debug._send_at_once``).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_common import DAPClient, launch_one, median

SCRIPT = """\
def inner(n):
    total = 0
    for i in range(n):
        total += i
    return total


state = {"a": list(range(100)), "b": "text"}
for step in range(1_000_000):
    y = inner(3)  # BREAK
"""
LINE = 10

Timings = dict[str, list[float]]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _connect(port: int, deadline: float) -> DAPClient:
    while True:
        try:
            return DAPClient("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _measure(client: DAPClient, script: str, rounds: int) -> Timings:
    client.attach({script: [LINE]})
    thread = int(client.stopped(timeout=120)["threadId"])
    got: Timings = {}

    def timed(command: str, args: dict[str, Any]) -> dict[str, Any]:
        t0 = time.perf_counter()
        out = client.request(command, args)
        got.setdefault(command, []).append((time.perf_counter() - t0) * 1000)
        return out

    for _ in range(rounds):
        frames = timed("stackTrace", {"threadId": thread, "startFrame": 0, "levels": 20})
        frame = int(frames["stackFrames"][0]["id"])
        scopes = timed("scopes", {"frameId": frame})
        timed("variables", {"variablesReference": int(scopes["scopes"][0]["variablesReference"])})
        timed("evaluate", {"expression": "len(state['a'])", "frameId": frame, "context": "watch"})
        t0 = time.perf_counter()
        _step(client, thread)
        got.setdefault("step (next → stopped)", []).append((time.perf_counter() - t0) * 1000)
        # Back to the breakpoint line for the next round.
        seen = len(client.events)
        client.request("continue", {"threadId": thread})
        thread = int(client.stopped(timeout=60, after=seen)["threadId"])
    return got


def _step(client: DAPClient, thread: int) -> None:
    seen = len(client.events)
    client.request("next", {"threadId": thread})
    client.stopped(timeout=60, after=seen)


def plain_debugpy(script: str, rounds: int) -> Timings:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}",
                             "--wait-for-client", script],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = _connect(port, time.monotonic() + 60)
        try:
            return _measure(client, script, rounds)
        finally:
            client.close()
    finally:
        proc.kill()
        proc.wait()


def rankdebug(script: str, rounds: int) -> Timings:
    proc, client = launch_one(["--ranks", "0", "--", sys.executable, script])
    try:
        return _measure(client, script, rounds)
    finally:
        client.close()
        proc.terminate()
        proc.wait(60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = str(Path(tmp, "stepped.py"))
        Path(script).write_text(SCRIPT)
        plain = plain_debugpy(script, args.rounds)
        ours = rankdebug(script, args.rounds)
    print(f"round trip at a stop, ms, median of {args.rounds} rounds (Python "
          f"{sys.version.split()[0]})")
    print(f"{'request':<24} {'plain debugpy':>14} {'rankdebug':>10} {'ratio':>6}")
    for name in plain:
        a, b = median(plain[name]), median(ours[name])
        print(f"{name:<24} {a:14.1f} {b:10.1f} {b / a:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
