"""Show a debugger stop without an editor: attach to each rank that ``rankdebug launch``
reports, stop at a breakpoint, print where and the locals, then continue.

    cd examples
    rankdebug launch --json --ranks 1 --break train.py:30 --file train.sh --line 5 \\
        | python show_stop.py train.py:30

(What the VS Code extension does through debugpy's adapter, in a few lines of DAP.)
"""

import json
import os
import socket
import sys
import threading


class DAP:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port))
        self.file = self.sock.makefile("rb")
        self.seq = 0

    def send(self, command, arguments=None):
        self.seq += 1
        body = json.dumps({"seq": self.seq, "type": "request", "command": command,
                           "arguments": arguments or {}}).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.seq

    def read(self):
        length = 0
        while True:
            line = self.file.readline().strip()
            if not line:
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.file.read(length))

    def until(self, pred):
        while True:
            msg = self.read()
            if pred(msg):
                return msg

    def call(self, command, arguments=None):
        seq = self.send(command, arguments)
        msg = self.until(lambda m: m.get("type") == "response" and m["request_seq"] == seq)
        return msg.get("body") or {}


def debug_rank(event, path, line):
    dap = DAP(event["host"], event["port"])
    dap.call("initialize", {"adapterID": "debugpy", "pathFormat": "path",
                            "linesStartAt1": True, "columnsStartAt1": True})
    dap.send("attach", {"justMyCode": True})
    dap.until(lambda m: m.get("event") == "initialized")
    dap.call("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line}]})
    dap.call("configurationDone")
    stop = dap.until(lambda m: m.get("event") == "stopped")["body"]
    frame = dap.call("stackTrace", {"threadId": stop["threadId"], "levels": 1})["stackFrames"][0]
    scope = dap.call("scopes", {"frameId": frame["id"]})["scopes"][0]
    names = dap.call("variables", {"variablesReference": scope["variablesReference"]})
    shown = {v["name"]: v["value"] for v in names["variables"]
             if v["name"] in ("rank", "step", "loss", "x")}
    print(f"rank {event['rank']} (pid {event['pid']}) stopped ({stop['reason']}) at "
          f"{os.path.basename(frame['source']['path'])}:{frame['line']} in {frame['name']}()",
          flush=True)
    for name, value in shown.items():
        print(f"    {name} = {value.splitlines()[0][:70]}", flush=True)
    dap.call("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
    dap.call("continue", {"threadId": stop["threadId"]})
    print(f"rank {event['rank']} continued", flush=True)


def main():
    where, _, line = sys.argv[1].rpartition(":")
    path = os.path.realpath(where)
    for text in sys.stdin:
        event = json.loads(text)
        if event.get("event") == "listening":
            threading.Thread(target=debug_rank, args=(event, path, int(line)),
                             daemon=True).start()
        elif event.get("event") == "exited":
            print(f"job exited with code {event['code']}", flush=True)
            return event["code"]
    return 1


if __name__ == "__main__":
    sys.exit(main())
