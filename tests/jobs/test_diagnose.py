"""``rankdebug diagnose`` on real 4-rank torchrun jobs on gloo/CPU (``scripts/hang_job.py``),
each started both by ``rankdebug launch --arm`` (read through the ranks' handlers, with
PyTorch's collective numbers) and as a plain torchrun found running (read through py-spy):
a skipped collective, mismatched collectives, a dead rank, a rank spinning in a data loop, a
rank blocked on a queue, ranks waiting in DDP's collectives (issued from C++), a healthy job
and one with a slow rank; under ``launch`` also a rank held at an exception and a rank that
exits mid-training. Each checks the JSON
contract's shapes, the classes, and that the finding names the right rank, for the right
reason, at the right line of the script (and that a healthy job blames no one).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jobs_helpers import BIN, descendants, with_marker
from launched import Launch, start

SCRIPT = Path(__file__).resolve().parent / "scripts" / "hang_job.py"
WORLD = 4
ODD = WORLD - 1

pytestmark = pytest.mark.timeout(240)


def line(tag: str) -> int:
    for n, text in enumerate(SCRIPT.read_text().splitlines(), 1):
        if f"# {tag}" in text:
            return n
    raise AssertionError(tag)


@dataclass
class Job:
    id: str
    tmp: Path
    launch: Launch | None = None


def _ran(pid: int) -> int | None:
    """Nanoseconds the process's main thread has run; None once it is gone."""
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _wait_at(tmp: Path, output: Any, quiet: int, timeout: float = 150.0) -> None:
    """Until every rank wrote ``at-RANK`` (its pid, just before the call it stays in), and
    then until ``quiet`` of them stand still (their main thread ran no more over half a
    second: in that call), however loaded the machine."""
    deadline = time.monotonic() + timeout
    while len(list(tmp.glob("at-*"))) < WORLD:
        assert time.monotonic() < deadline, f"ranks never got there: {output()}"
        time.sleep(0.2)
    pids = [int(f.read_text()) for f in tmp.glob("at-*")]
    while quiet:
        before = {pid: _ran(pid) for pid in pids}
        time.sleep(0.5)
        still = [p for p in pids if before[p] is not None and before[p] == _ran(p)]
        if len(still) >= quiet:
            return
        assert time.monotonic() < deadline, f"ranks never stood still: {output()}"


# How many ranks stand still once each scenario is where it stays: all but a spinning,
# exited or held one (a held rank's hook looks in on its debugger now and then); none of a
# job that trains.
QUIET = {"skip": WORLD, "mismatch": WORLD, "ddp": WORLD, "dead": WORLD - 1, "spin": WORLD - 1,
         "eval": WORLD - 1, "queue": WORLD, "raise": WORLD - 1, "exit": 1, "healthy": 0, "slow": 0}


@contextlib.contextmanager
def plain(tmp: Path, scenario: str) -> Iterator[Job]:
    """``torchrun --standalone --nproc_per_node 4 hang_job.py``, as a user starts it."""
    env = dict(os.environ, MARKER_DIR=str(tmp), SCENARIO=scenario, OMP_NUM_THREADS="1")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    for name in [n for n in env if n.startswith("RANKDEBUG_")]:
        del env[name]
    log = open(tmp / "job.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([str(BIN / "torchrun"), "--standalone", "--nproc_per_node",
                             str(WORLD), str(SCRIPT)], cwd=SCRIPT.parent, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_at(tmp, lambda: (tmp / "job.log").read_text(errors="replace")[-3000:],
                 QUIET[scenario])
        yield Job(str(proc.pid), tmp)
    finally:
        pids = descendants(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        for pid in [*pids, *with_marker(tmp), proc.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        log.close()


@contextlib.contextmanager
def armed(tmp: Path, scenario: str) -> Iterator[Job]:
    """``rankdebug launch --arm -- torchrun --standalone --nproc_per_node 4 hang_job.py``."""
    launch: Launch = start(tmp, ["--arm"], "hang_job.py", nproc=WORLD,
                           env={"SCENARIO": scenario})
    try:
        job = str(launch.event("job")["job"])
        _wait_at(tmp, launch.stderr, QUIET[scenario])
        yield Job(job, tmp, launch)
    finally:
        launch.close()


def diagnose(job: Job, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    out = subprocess.run([sys.executable, "-m", "rankdebug", "diagnose", job.id, "--json",
                          *extra], capture_output=True, text=True, timeout=180, check=False)
    assert out.stdout.strip(), out.stderr
    lines = [json.loads(ln) for ln in out.stdout.splitlines() if ln.strip()]
    return out.returncode, lines


def text(job: Job) -> str:
    out = subprocess.run([sys.executable, "-m", "rankdebug", "diagnose", job.id],
                         capture_output=True, text=True, timeout=180, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


FRAME_KEYS = {"file", "line", "function"}


def check_contract(lines: list[dict[str, Any]]) -> None:
    """The shapes the issue fixes, in their order: classes largest first, then findings or
    healthy, ``done`` last."""
    events = [ln["event"] for ln in lines]
    assert events[-1] == "done" and events.count("done") == 1
    assert events.index("class") == 0
    last_class = max(i for i, e in enumerate(events) if e == "class")
    assert all(e != "class" for e in events[last_class + 1:])
    findings = [i for i, e in enumerate(events) if e in ("culprit", "healthy")]
    assert findings and min(findings) > last_class
    assert ("healthy" in events) != ("culprit" in events)
    classes = [ln for ln in lines if ln["event"] == "class"]
    sizes = [len(c["ranks"]) for c in classes]
    assert sizes == sorted(sizes, reverse=True)
    for c in classes:
        assert set(c) == {"event", "ranks", "state", "collective", "where", "frames"}
        assert c["state"] in ("waiting", "running", "stuck", "exited", "raised", "unknown")
        assert c["collective"] is None or set(c["collective"]) == {"op", "seq", "group"}
        assert set(c["where"]) == FRAME_KEYS
        assert all(set(f) == FRAME_KEYS for f in c["frames"])
    for f in (ln for ln in lines if ln["event"] == "culprit"):
        assert set(f) == {"event", "ranks", "why", "where"} and f["why"]
        assert f["where"] is None or set(f["where"]) == FRAME_KEYS
    done = lines[-1]
    assert set(done) == {"event", "seconds", "ranks_read", "ranks_unread"}
    assert all(set(u) == {"rank", "reason"} for u in done["ranks_unread"])
    ranks = sorted(r for c in classes for r in c["ranks"])
    assert ranks == list(range(WORLD)), classes


class Classes(dict[tuple[int, ...], dict[str, Any]]):
    """The class lines by their ranks; a missing one shows every line but the frames."""

    def __init__(self, lines: list[dict[str, Any]]) -> None:
        super().__init__((tuple(ln["ranks"]), ln) for ln in lines if ln["event"] == "class")
        self.lines = lines

    def __missing__(self, ranks: tuple[int, ...]) -> dict[str, Any]:
        shown = [{k: v for k, v in ln.items() if k not in ("frames", "collectives")}
                 for ln in self.lines]
        raise AssertionError(f"no class of ranks {ranks}: {json.dumps(shown)[:6000]}")


def classes(lines: list[dict[str, Any]]) -> Classes:
    return Classes(lines)


def culprits(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [ln for ln in lines if ln["event"] == "culprit"]


def rank_line(lines: list[dict[str, Any]], rank: int) -> dict[str, Any]:
    return next(ln for ln in lines if ln["event"] == "rank" and ln["rank"] == rank)


def where(obj: dict[str, Any]) -> tuple[str, int, str]:
    w = obj["where"]
    return os.path.basename(w["file"]), w["line"], w["function"]


MODES = {"plain": plain, "armed": armed}
WAIT_LINE = ("hang_job.py", line("COLLECTIVE"), "train_step")


def _job(tmp: Path, mode: str, scenario: str) -> contextlib.AbstractContextManager[Job]:
    maker = MODES[mode]
    return maker(tmp, scenario)


@pytest.mark.parametrize("mode", ["armed", "plain"])
def test_a_skipped_collective(tmp_path: Path, mode: str) -> None:
    with _job(tmp_path, mode, "skip") as job:
        code, lines = diagnose(job)
        report = text(job) if mode == "armed" else ""
    assert code == 0
    check_contract(lines)
    got = classes(lines)
    waiters, odd = got[(0, 1, 2)], got[(ODD,)]
    assert waiters["state"] == odd["state"] == "waiting"
    assert where(waiters) == WAIT_LINE
    assert where(odd) == ("hang_job.py", line("BARRIER"), "skip")
    assert waiters["collective"]["op"] == "all_reduce" and odd["collective"]["op"] == "barrier"
    [found] = culprits(lines)
    assert found["ranks"] == [ODD] and where(found) == where(odd)
    if mode == "armed":  # the handlers give PyTorch's numbers: #STEPS+2 (two warm-ups)
        assert waiters["collective"] == {"op": "all_reduce", "seq": 6, "group": "0"}
        assert odd["collective"] == {"op": "barrier", "seq": 1, "group": "1"}
        assert "never entered all_reduce #6" in found["why"]
        assert "wait on each other" in found["why"]
        assert "issued 5" in found["why"]
        groups = {ln["group"]: ln for ln in lines if ln["event"] == "collectives"}
        assert groups["0"]["positions"] == [
            {"ranks": [0, 1, 2], "op": "all_reduce", "seq": 6, "context": None},
            {"ranks": [3], "op": None, "seq": 5, "context": None}]
        assert report.splitlines()[0].startswith(f"job {job.id}: 4 of 4 ranks read")
        assert "culprit: rank 3 never entered all_reduce #6" in report
        assert len(report.splitlines()) <= 12
    else:  # py-spy names the operations, not their numbers
        assert waiters["collective"]["seq"] is None
        assert "different collectives" in found["why"]


@pytest.mark.parametrize("mode", ["armed", "plain"])
def test_mismatched_collectives(tmp_path: Path, mode: str) -> None:
    with _job(tmp_path, mode, "mismatch") as job:
        code, lines = diagnose(job)
    assert code == 0
    check_contract(lines)
    got = classes(lines)
    assert where(got[(0, 1, 2)]) == WAIT_LINE
    assert where(got[(ODD,)]) == ("hang_job.py", line("GATHER_CALL"), "gather_step")
    assert got[(ODD,)]["collective"]["op"] == "all_gather"
    [found] = culprits(lines)
    assert found["ranks"] == [ODD]
    assert "all_gather" in found["why"] and "all_reduce" in found["why"]
    if mode == "armed":  # the same number in the same group: a mismatch, said so
        assert got[(ODD,)]["collective"] == {"op": "all_gather", "seq": 3, "group": "0"}
        assert got[(0, 1, 2)]["collective"] == {"op": "all_reduce", "seq": 3, "group": "0"}
        assert "different collectives at the same point" in found["why"]


@pytest.mark.parametrize("mode", ["armed", "plain"])
def test_a_dead_rank(tmp_path: Path, mode: str) -> None:
    with _job(tmp_path, mode, "dead") as job:
        code, lines = diagnose(job)
    assert code == 0
    check_contract(lines)
    got = classes(lines)
    assert got[(ODD,)]["state"] == "exited" and got[(ODD,)]["frames"] == []
    waiters = got[(0, 1, 2)]
    assert waiters["state"] == "waiting"
    assert waiters["collective"]["op"] == "init_process_group"
    assert where(waiters) == ("hang_job.py", line("INIT"), "main")
    [found] = culprits(lines)
    assert found["ranks"] == [ODD] and found["where"] is None
    assert found["why"].startswith("rank 3 has exited while ranks 0-2 wait in "
                                   "init_process_group")
    assert lines[-1]["ranks_read"] == 3
    assert [u["rank"] for u in lines[-1]["ranks_unread"]] == [ODD]


def test_a_rank_that_exits_mid_training(tmp_path: Path) -> None:
    """Gloo sees the peer gone in some ranks (they raise, held by launch), the others wait."""
    with armed(tmp_path, "exit") as job:
        assert job.launch is not None
        job.launch.event("raised", timeout=60)  # held, once its all_reduce saw the peer gone
        code, lines = diagnose(job)
    assert code == 0
    check_contract(lines)
    found = culprits(lines)
    assert found[0]["ranks"] == [ODD] and "has exited" in found[0]["why"]
    raised = [c for c in classes(lines).values() if c["state"] == "raised"]
    assert raised, lines
    for c in raised:
        assert where(c) == WAIT_LINE
        assert any(f["ranks"] == c["ranks"] and "raised RuntimeError" in f["why"]
                   for f in found)


def test_a_raised_rank(tmp_path: Path) -> None:
    with armed(tmp_path, "raise") as job:
        assert job.launch is not None
        job.launch.event("raised", timeout=60)
        code, lines = diagnose(job)
    assert code == 0
    check_contract(lines)
    got = classes(lines)
    assert got[(ODD,)]["state"] == "raised", rank_line(lines, ODD)
    assert where(got[(ODD,)]) == ("hang_job.py", line("RAISE"), "forward")
    [found] = culprits(lines)
    assert found["ranks"] == [ODD]
    assert found["why"].startswith("rank 3 raised ValueError at hang_job.py:")
    assert "loss is nan" in found["why"] and "ranks 0-2 wait in all_reduce #3" in found["why"]


@pytest.mark.parametrize("mode", ["armed", "plain"])
def test_a_rank_spinning_in_its_data_loop(tmp_path: Path, mode: str) -> None:
    with _job(tmp_path, mode, "spin") as job:
        code, lines = diagnose(job)
    assert code == 0
    check_contract(lines)
    got = classes(lines)
    assert got[(0, 1, 2)]["state"] == "waiting" and where(got[(0, 1, 2)]) == WAIT_LINE
    assert got[(ODD,)]["state"] == "stuck"
    assert got[(ODD,)]["where"]["function"] == "load_batch"
    assert rank_line(lines, ODD)["manner"] == "busy"
    [found] = culprits(lines)
    assert found["ranks"] == [ODD] and found["where"]["function"] == "load_batch"
    assert "never entered all_reduce" in found["why"] and "spinning" in found["why"]


@pytest.mark.parametrize("mode", ["armed", "plain"])
def test_a_rank_evaluating_at_one_line_is_slow_not_stuck(tmp_path: Path, mode: str) -> None:
    """The odd rank evaluates (nanoGPT's estimate_loss on rank 0 alone): one line of one
    function at every read, CPU busy, while the others wait in all_reduce for it. Its
    variables change from read to read (``busy_progress``): it is computing, said and not
    blamed; the spinning rank above, whose variables do not change, is still named."""
    with _job(tmp_path, mode, "eval") as job:
        code, lines = diagnose(job)
    assert code == 0
    check_contract(lines)
    assert culprits(lines) == [], culprits(lines)
    [healthy] = [ln for ln in lines if ln["event"] == "healthy"]
    assert "slow, not stuck" in healthy["why"] and "evaluate" in healthy["why"], healthy
    assert classes(lines)[(ODD,)]["state"] == "running"


@pytest.mark.parametrize("mode", ["armed", "plain"])
def test_a_rank_blocked_on_a_queue(tmp_path: Path, mode: str) -> None:
    with _job(tmp_path, mode, "queue") as job:
        code, lines = diagnose(job)
    assert code == 0
    check_contract(lines)
    got = classes(lines)
    assert got[(ODD,)]["state"] == "stuck"
    assert where(got[(ODD,)]) == ("hang_job.py", line("QUEUE"), "next_batch")
    odd = rank_line(lines, ODD)
    assert odd["manner"] == "blocked" and odd["wakes"] == 0
    [found] = culprits(lines)
    assert found["ranks"] == [ODD] and "blocked" in found["why"]
    assert "never woke" in found["why"]


@pytest.mark.parametrize("mode", ["armed", "plain"])
def test_a_healthy_job(tmp_path: Path, mode: str) -> None:
    with _job(tmp_path, mode, "healthy") as job:
        code, lines = diagnose(job)
    assert code == 0
    check_contract(lines)
    assert culprits(lines) == [], culprits(lines)
    healthy = [ln for ln in lines if ln["event"] == "healthy"]
    # Ranks caught waiting for the slowest a moment are said so ("no rank is stuck: … the
    # slowest"); a read that caught none in a collective, "no rank waits on another".
    assert len(healthy) == 1 and healthy[0]["why"].startswith(
        ("no rank waits on another", "no rank is stuck")), healthy
    if healthy[0]["why"].startswith("no rank is stuck"):
        assert "slow" in healthy[0]["why"], healthy
    assert all(c["state"] == "running" for c in classes(lines).values())
    assert lines[-1]["ranks_read"] == WORLD and lines[-1]["ranks_unread"] == []


@pytest.mark.parametrize("mode", ["armed", "plain"])
def test_a_healthy_job_with_a_slow_rank(tmp_path: Path, mode: str) -> None:
    with _job(tmp_path, mode, "slow") as job:
        code, lines = diagnose(job, "--samples", "5")  # 5: a loaded machine blurs 3
    assert code == 0
    check_contract(lines)
    assert culprits(lines) == [], culprits(lines)
    [healthy] = [ln for ln in lines if ln["event"] == "healthy"]
    assert "rank 3 is the slowest" in healthy["why"], healthy  # said, not blamed
    assert all(c["state"] == "running" for c in classes(lines).values())


@pytest.mark.parametrize("mode", ["armed", "plain"])
def test_ddp_ranks_waiting_in_a_collective_issued_from_cpp(tmp_path: Path, mode: str) -> None:
    """The others wait in DDP's own collectives (no torch.distributed frame on their stack):
    their handlers say which; a plain job's ranks, read by py-spy, show only
    ``_engine_run_backward``, and their native frames (``c10d::Reducer::finalize_backward``)
    say it. Either way the rank they wait for is the one finding."""
    with _job(tmp_path, mode, "ddp") as job:
        code, lines = diagnose(job)
    assert code == 0
    check_contract(lines)
    found = culprits(lines)
    odd = [f for f in found if f["ranks"] == [ODD]]
    assert len(odd) == 1 and odd[0]["where"]["function"] == "next_batch", found
    assert classes(lines)[(ODD,)]["state"] == "stuck"
    assert found == odd
    assert "never entered" in odd[0]["why"] and "(DDP bucket" in odd[0]["why"], odd
    others = [c for c in classes(lines).values() if ODD not in c["ranks"]]
    # Those past the bucket rebuild's broadcast wait in backward's all_reduce.
    assert all(c["state"] == "waiting" and c["where"]["function"] == "ddp"
               and c["collective"]["op"] in ("all_reduce", "broadcast") for c in others), others
    assert sorted(r for c in others for r in c["ranks"]) == [0, 1, 2]
