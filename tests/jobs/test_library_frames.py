"""``rankdebug eval --frame`` on a library frame's ``self``, for real: an armed torchrun job
(gloo, CPU) whose rank 0 waits inside methods of torch's own classes — first in
``ZeroRedundancyOptimizer.step``, then in ``DistributedDataParallel.forward`` called by
``Module._call_impl`` — while rank 1 holds back (scripts/library_frames.py). A frame is named
by its function, by ``Class.method``, or by its module and qualified name.

Also the qualified names where the code has no ``co_qualname`` (Python 3.9 and 3.10: the
class is found from the frame's ``self``), in a real Python 3.9 when the machine has one.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jobs_helpers import BIN, SCRIPTS, rankdebug, with_marker

import wire_check

pytestmark = pytest.mark.timeout(240)

SCRIPT = SCRIPTS / "library_frames.py"
PYSERVER = Path(__file__).resolve().parent.parent.parent / "pyserver"


class ArmedJob:
    """``rankdebug launch --arm -- torchrun --nproc_per_node 2 library_frames.py``."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        env = dict(os.environ, MARKER_DIR=str(tmp), OMP_NUM_THREADS="1")
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        self.err = open(tmp / "launch.stderr", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rankdebug", "launch", "--arm", "--json", "--",
             str(BIN / "torchrun"), "--standalone", "--nproc_per_node", "2", str(SCRIPT)],
            cwd=SCRIPTS, env=env, stdout=subprocess.PIPE, stderr=self.err, text=True,
            start_new_session=True)
        assert self.proc.stdout is not None
        first = json.loads(self.proc.stdout.readline() or "{}")
        assert first.get("event") == "job", (first, self.stderr())
        self.id = str(first["job"])

    def stderr(self) -> str:
        self.err.flush()
        return (self.tmp / "launch.stderr").read_text(errors="replace")[-4000:]

    def finish(self) -> int:
        for name in ("go", "go2"):
            (self.tmp / name).touch()
        return self.proc.wait(60)

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
        for pid in with_marker(self.tmp):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        self.err.close()


@pytest.fixture
def job(tmp_path: Path) -> Iterator[ArmedJob]:
    found = ArmedJob(tmp_path)
    try:
        yield found
    finally:
        found.stop()


def evaluate(job: ArmedJob, ranks: str, expr: str, frame: str) -> list[dict[str, Any]]:
    """``rankdebug eval JOB RANKS EXPR --frame FRAME --json``: one line per rank, and the
    compare line."""
    out = rankdebug("eval", job.id, ranks, expr, "--json", "--frame", frame, timeout=60)
    assert out.stdout.strip(), out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert wire_check.problem("eval", lines) is None, lines
    return lines


def wait_in(job: ArmedJob, frame: str, expr: str, want: str) -> None:
    """Until rank 0 waits in ``frame`` (it gets there after the job's first steps)."""
    deadline = time.monotonic() + 120
    last: dict[str, Any] = {}
    while time.monotonic() < deadline:
        last = evaluate(job, "0", expr, frame)[0]
        if last.get("text") == want:
            return
        assert job.proc.poll() is None, job.stderr()
        time.sleep(0.3)
    raise AssertionError(f"rank 0 never waited in {frame}: {last}\n{job.stderr()}")


def test_self_of_a_library_frame_by_name_and_by_qualified_name(job: ArmedJob) -> None:
    # 1. Rank 0 waits in the optimizer's broadcast, inside ZeroRedundancyOptimizer.step.
    wait_in(job, "step", "type(self).__name__", "'ZeroRedundancyOptimizer'")
    lr = 'self.param_groups[0]["lr"]'
    for frame in ("step", "ZeroRedundancyOptimizer.step",
                  "torch.distributed.optim.zero_redundancy_optimizer.ZeroRedundancyOptimizer.step",
                  "optim.zero_redundancy_optimizer.ZeroRedundancyOptimizer.step"):
        result = evaluate(job, "0", lr, frame)[0]
        assert (result["event"], result["text"], result.get("number")) == (
            "result", "0.125", 0.125), (frame, result)
    # Rank 1 waits in the script's own wait_for: no such frame there, said per rank.
    both = evaluate(job, "all", "type(self).__name__", "ZeroRedundancyOptimizer.step")
    assert both[0]["text"] == "'ZeroRedundancyOptimizer'"
    assert both[1]["event"] == "error", both
    assert both[1]["message"] == ("no frame of a function 'ZeroRedundancyOptimizer.step' on "
                                  "the main thread's stack")
    # A dotted name that is no frame's (another class, a bare tail of a name) matches none.
    for frame in ("SGD.step", "izer.step"):
        wrong = evaluate(job, "0", "1", frame)[0]
        assert wrong["event"] == "error" and repr(frame) in wrong["message"], (frame, wrong)
    # 2. Past the step, rank 0 waits in DDP's buffer broadcast, inside its forward, called by
    # Module._call_impl: that frame's self is the DDP wrapper, whose module is the user's.
    (job.tmp / "go").touch()
    pair = "type(self).__name__, type(self.module).__name__"
    want = "('DistributedDataParallel', 'Net')"
    wait_in(job, "Module._call_impl", pair, want)
    for frame in ("torch.nn.modules.module.Module._call_impl", "DistributedDataParallel.forward",
                  "forward", "_pre_forward"):
        result = evaluate(job, "0", pair, frame)[0]
        assert result.get("text") == want, (frame, result)
    assert job.finish() == 0, job.stderr()


QUALIFIED = textwrap.dedent("""
    import json, sys
    from rankdebug.runtime import handler

    class Base:
        def step(self):
            return sys._getframe()

        @classmethod
        def make(cls):
            return sys._getframe()

    class Child(Base):
        pass

    def plain():
        return sys._getframe()

    frames = {"step": Child().step(), "make": Child.make(), "plain": plain()}
    out = {}
    for key, frame in frames.items():
        for name in ("Base.step", "__main__.Base.step", "Child.step", "Base.make", "plain",
                     "__main__.plain", "step"):
            try:
                out[f"{key} {name}"] = handler._pick([frame], name) is frame
            except LookupError:
                out[f"{key} {name}"] = False
    print(json.dumps(out))
""")


def _python39() -> str | None:
    candidates = [*map(str, sorted(Path.home().glob(".pyenv/versions/3.9*/bin/python3.9"))),
                  shutil.which("python3.9")]
    for exe in filter(None, candidates):
        ran = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
        if ran.returncode == 0 and ran.stdout.startswith("Python 3.9"):
            return exe
    return None


@pytest.mark.parametrize("python", ["this", "3.9"])
def test_a_frame_is_named_by_its_class_where_the_code_has_no_qualified_name(
        python: str) -> None:
    exe = sys.executable if python == "this" else _python39()
    if exe is None:
        pytest.skip("no Python 3.9 on this machine")
    ran = subprocess.run([exe, "-c", QUALIFIED], capture_output=True, text=True, check=False,
                         env=dict(os.environ, PYTHONPATH=str(PYSERVER)), timeout=60)
    assert ran.returncode == 0, ran.stderr
    got = json.loads(ran.stdout)
    assert {k for k, v in got.items() if v} == {
        "step Base.step", "step __main__.Base.step", "step step",
        "make Base.make", "plain plain", "plain __main__.plain"}, got
