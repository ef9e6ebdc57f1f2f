"""Runs on node 0 (a DAP client must be on the node whose loopback the gates listen on):
starts ``rankdebug launch`` with the given arguments, attaches a DAP client to every chosen
rank, sets one breakpoint, and prints one JSON line of what happened.

    python dap_driver.py MODE COUNT FILE LINE -- rankdebug-launch-args...

MODE: ``continue`` (evaluate RANK and the hostname in each paused rank, continue, wait for
the end), ``stop`` (SIGTERM to rankdebug launch while the ranks are paused), ``hold``
(print a ``paused`` line, wait for a line on stdin, then continue).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/dap_client.py

from dap_client import DAPClient


def main() -> int:  # noqa: PLR0912 (one linear script)
    mode, count, path, line = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    launch_args = sys.argv[sys.argv.index("--") + 1:]
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "rankdebug", "launch", "--json", *launch_args],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    events: list[dict[str, Any]] = []
    clients: dict[int, DAPClient] = {}
    for raw in proc.stdout:
        event = json.loads(raw)
        events.append(event)
        if event.get("event") == "listening":
            clients[int(event["rank"])] = DAPClient(str(event["host"]), int(event["port"]),
                                                    timeout=90.0)
            if len(clients) == count:
                break
        if event.get("event") == "exited":
            print(json.dumps({"events": events, "code": proc.wait()}))
            return 0
    threads = [threading.Thread(target=c.attach, args=({path: [line]},), kwargs={"timeout": 90})
               for c in clients.values()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stopped: dict[int, dict[str, Any]] = {}
    for rank, client in clients.items():
        body = client.stopped(90)
        frame = client.top_frame(body["threadId"])
        stopped[rank] = {
            "line": frame["line"], "name": frame["name"],
            "RANK": client.evaluate("__import__('os').environ['RANK']", frame["id"]),
            "host": client.evaluate("__import__('socket').gethostname()", frame["id"]),
            "thread": body["threadId"],
        }
    paused_s = time.monotonic() - t0
    if mode == "hold":  # say so, and go on when told (stdin)
        print(json.dumps({"paused": stopped, "events": events}), flush=True)
        sys.stdin.readline()
    if mode == "stop":
        proc.send_signal(signal.SIGTERM)
    else:
        for client in clients.values():
            client.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        for rank, client in clients.items():
            client.cont(stopped[rank]["thread"])
    rest = proc.stdout.read()
    events += [json.loads(x) for x in rest.splitlines() if x.strip()]
    code = proc.wait(120)
    for client in clients.values():
        client.close()
    print(json.dumps({"events": events, "stopped": stopped, "paused_s": round(paused_s, 2),
                      "code": code, "seconds": round(time.monotonic() - t0, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
