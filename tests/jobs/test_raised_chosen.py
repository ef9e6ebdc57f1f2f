"""A chosen rank that its debugger stopped at an uncaught exception is a raised rank for the
whole command line, for real: torchrun (gloo, CPU), real debugpy, our DAP client.

scripts/raise_train.py's rank 0 raises IndexError in torch's ``embedding``, under the user's
``Block.forward`` and ``Net.forward`` (scripts/raise_model.py). Attached with VS Code's
default "uncaught" filter, the rank stops there; then ``rankdebug stacks`` gives the
traceback (no debugpy frame, no debugpy thread), ``eval`` runs in the raising frame and
``--frame`` reaches every frame of the traceback (an ambiguous name lists its candidates),
and ``rankdebug jobs`` says "raised IndexError at raise_model.py:N", as for a held rank.
Both ways a chosen rank stops there: untraced until the exception (``--attach hit``) and
traced from the start (``--attach start``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from launched import Launch, cli, cli_json, line_of, start, wait_for

from dap_client import DAPClient

pytestmark = pytest.mark.timeout(300)

RAISES = line_of("raise_model.py", "# RAISES")
CALLS_BLOCK = line_of("raise_model.py", "# CALLS BLOCK")
STEP_CALLS = line_of("raise_train.py", "# STEP CALLS MODEL")
DEBUGGER = re.compile(r"[/\\](debugpy|pydevd\w*|_pydevd\w*|_pydev_\w*)[/\\]")


def _stopped(launch: Launch) -> tuple[DAPClient, int]:
    ev = launch.event("listening", 120)
    assert ev["rank"] == 0
    client = DAPClient(str(ev["host"]), int(ev["port"]), timeout=60)
    launch._clients.append(client)
    client.attach({}, exceptions=["uncaught"])  # VS Code's default filter
    stopped = client.stopped(120)
    assert stopped["reason"] == "exception", stopped
    return client, int(stopped["threadId"])


def _evaluate(job: str, expr: str, *frame: str) -> dict[str, Any]:
    got: dict[str, Any] = cli_json("eval", job, "0", expr, *(("--frame", *frame) if frame
                                                             else ()))[0]
    return got


@pytest.mark.parametrize("attach", ["hit", "start"])
def test_a_chosen_rank_stopped_at_its_exception_is_a_raised_rank(tmp_path: Path,
                                                                 attach: str) -> None:
    launch = start(tmp_path, ["--ranks", "0", "--attach", attach], "raise_train.py")
    try:
        client, thread = _stopped(launch)
        job = str(launch.job)

        # stacks: the traceback, innermost first, with no frame or thread of the debugger.
        report = cli_json("stacks", job)[0]
        rank0 = next(r for r in report["ranks"] if r["rank"] == 0)
        main = next(t for t in rank0["threads"] if t["main"])
        assert main["raised"]["exception"] == "IndexError", main
        frames = [(f["name"], Path(f["file"]).name, f["line"]) for f in main["frames"]]
        assert frames[0][0] == "embedding" and frames[0][1] == "functional.py", frames
        assert ("forward", "raise_model.py", RAISES) in frames, frames
        assert ("forward", "raise_model.py", CALLS_BLOCK) in frames, frames
        assert ("train_step", "raise_train.py", STEP_CALLS) in frames, frames
        assert frames[-1][0] == "<module>", frames
        for one in rank0["threads"]:
            assert not [f for f in one["frames"] if DEBUGGER.search(f["file"])], one
        group = next(g for g in report["groups"] if 0 in g["ranks"] and g["main"])
        assert group["raised"] == "IndexError", group
        text = cli("stacks", job).stdout
        assert "[raised IndexError: held]" in text and "_do_wait_suspend" not in text, text

        # eval: in the raising frame (Block.forward's locals first), every frame reachable.
        assert _evaluate(job, "width")["text"] == "4"
        assert _evaluate(job, "int(tokens.max())")["text"] == "23"
        assert _evaluate(job, "depth", "Net.forward")["text"] == "2"
        assert _evaluate(job, "depth", f"raise_model.py:{CALLS_BLOCK}")["text"] == "2"
        assert _evaluate(job, "step", "train_step")["text"] == "3"
        assert _evaluate(job, "weight.shape[0]", "embedding")["text"] == "10"  # torch's frame
        assert _evaluate(job, "type(self).__name__", "Embedding.forward")["text"] == \
            "'Embedding'"
        assert _evaluate(job, "sorted(locals())[:2]", "0")["event"] == "result"
        ambiguous = _evaluate(job, "1", "forward")
        assert ambiguous["event"] == "error" and "ambiguous" in ambiguous["message"], ambiguous
        picks = {(c["function"], Path(c["file"]).name, c["line"])
                 for c in ambiguous["candidates"]}
        assert picks == {("Block.forward", "raise_model.py", RAISES),
                         ("Net.forward", "raise_model.py", CALLS_BLOCK)}, ambiguous
        index = next(c["index"] for c in ambiguous["candidates"]
                     if c["function"] == "Net.forward")
        assert _evaluate(job, "depth", str(index))["text"] == "2"

        # jobs: raised, where, as for a held rank.
        def raised() -> Any:
            ranks = cli_json("jobs", job)[0]["jobs"][0]["ranks"]
            return next(r for r in ranks if r["rank"] == 0)["raised"]

        info = wait_for("rank 0's raised entry", raised, 30, launch)
        assert (info["exception"], Path(info["file"]).name, info["line"], info["function"]) \
            == ("IndexError", "raise_model.py", RAISES, "forward"), info
        row = next(line for line in cli("jobs", job).stdout.splitlines()
                   if "rank   0" in line)
        assert row.endswith(f"raised IndexError at raise_model.py:{RAISES}"), row

        client.cont(thread)
        assert launch.exited() != 0
    finally:
        launch.close()
