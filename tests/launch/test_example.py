"""The README's main job: debug rank 1 of the bundled two-rank example (examples/train.sh)."""

from __future__ import annotations

from pathlib import Path

import pytest
from launch_helpers import Launch

from dap_client import DAPClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _line(text: str, tag: str) -> int:
    return next(n for n, t in enumerate(text.splitlines(), 1) if tag in t)


@pytest.mark.timeout(120)
def test_debug_rank_1_of_the_example(tmp_path: Path) -> None:
    """As the README runs it: --break makes it --attach hit (the default then)."""
    script = EXAMPLES / "train.py"
    line = _line(script.read_text(), "loss.backward()")
    command_line = _line((EXAMPLES / "train.sh").read_text(), "torchrun")
    launch = Launch(["--ranks", "1", "--break", f"train.py:{line}",
                     "--file", str(EXAMPLES / "train.sh"), "--line", str(command_line)],
                    tmp_path)
    try:
        ev = launch.event("listening")
        assert ev["rank"] == 1
        client = DAPClient(str(ev["host"]), int(ev["port"]))
        client.attach({str(script): [line]})
        stopped = client.stopped()
        assert stopped["reason"] == "breakpoint"
        frame = client.top_frame(stopped["threadId"])
        assert frame["line"] == line
        assert client.evaluate("rank", frame["id"]) == "1"
        assert client.evaluate("step", frame["id"]) == "0"
        client.request("setBreakpoints", {"source": {"path": str(script)}, "breakpoints": []})
        client.cont(stopped["threadId"])
        assert launch.exited() == 0
        client.close()
    finally:
        launch.close()
