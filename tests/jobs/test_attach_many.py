"""``rankdebug attach JOB all``: every rank of a job that rankdebug did not start (stdlib
ranks of ``many_ranks.py``, run plainly) made to listen at once; a rank that cannot be
attached is reported on its own line and the others are attached all the same."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from jobs_helpers import rankdebug, with_marker

import wire_check
from dap_client import DAPClient
from rankdebug.jobs import attach as att
from rankdebug.jobs import attach_many, cli_attach, procfs
from rankdebug.jobs.discover import Job, Rank
from rankdebug.jobs.injector import inject

pytestmark = pytest.mark.skipif(not inject.supported(), reason="the injector is x86-64 only")

MANY = Path(__file__).resolve().parent.parent / "launch" / "scripts" / "many_ranks.py"
NPROC = 6


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _children(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and procfs.ppid(int(name)) == pid:
            out.append(int(name))
    return out


@pytest.fixture
def job(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], list[int]]]:
    """``many_ranks.py launch --nproc 6``: the launcher and its ranks' pids (rank order)."""
    env = dict(os.environ, MARKER_DIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, str(MANY), "launch", "--nproc", str(NPROC),
                             "--per-node", str(NPROC), "--odd", "-1", "--master-port",
                             str(_free_port())], env=env, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(pids := _children(proc.pid)) < NPROC:
            assert proc.poll() is None and time.monotonic() < deadline, "the job did not start"
            time.sleep(0.1)
        ranks = {int((procfs.environ(p) or {}).get("RANK", -1)): p for p in pids}
        assert sorted(ranks) == list(range(NPROC)), ranks
        time.sleep(1.0)  # every rank past its imports, in its loop
        yield proc, [ranks[r] for r in range(NPROC)]
    finally:
        for pid in [proc.pid, *with_marker(tmp_path)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait()


def _peak(spans: list[tuple[float, float]]) -> int:
    """The most intervals in flight at one moment."""
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def _gone_pid() -> int:
    """The pid of a process that has already exited."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_ranks_attach_side_by_side_and_one_failure_stays_its_own(
        job: tuple[subprocess.Popen[bytes], list[int]]) -> None:
    """The library: six ranks and one pid that has exited, attached together. The six
    attaches were in flight at the same time (their recorded start/end intervals overlap:
    one after another, they never would); the gone pid fails alone."""
    _, pids = job
    gone = _gone_pid()
    outcomes = attach_many.attach_pids([*pids[:3], gone, *pids[3:]], timeout=60,
                                       workers=NPROC + 1)
    assert [o.item for o in outcomes] == [*pids[:3], gone, *pids[3:]]  # input order
    failed = [o for o in outcomes if o.error is not None]
    assert [o.item for o in failed] == [gone], [(o.item, o.error) for o in failed]
    assert isinstance(failed[0].error, att.AttachError)
    assert f"no process {gone}" in str(failed[0].error)
    done = [o for o in outcomes if o.result is not None]
    assert len(done) == NPROC
    listening = procfs.listening_ports()
    for o in done:
        assert o.result is not None and o.result.via == "ptrace"  # Python 3.11: no PEP 768
        assert o.result.port in listening, o
    assert len({o.result.port for o in done if o.result}) == NPROC  # a port each
    spans = [(o.started, o.ended) for o in done]
    assert _peak(spans) >= 2, spans
    # Each attach overlapped another: none ran alone from start to end.
    for i, (a, b) in enumerate(spans):
        assert any(c < b and a < d for j, (c, d) in enumerate(spans) if j != i), spans


def test_cli_attaches_every_rank_and_reports_the_one_it_cannot(
        job: tuple[subprocess.Popen[bytes], list[int]]) -> None:
    """``rankdebug attach LAUNCHER all``: rank 2 is already traced (by this test), so it
    fails on its own line; every other rank listens, and a DAP client on each port stops in
    that very rank (its RANK variable says so)."""
    launcher, pids = job
    held = inject.Tracee(pids[2], time.monotonic() + 30)  # what a py-spy or gdb would hold
    try:
        out = rankdebug("attach", str(launcher.pid), "all", "--json", timeout=240)
    finally:
        held.restore()
    lines = [json.loads(ln) for ln in out.stdout.splitlines()]
    assert out.returncode == 1, out.stdout + out.stderr
    assert wire_check.problem("attach", lines) is None, lines
    by_event: dict[str, list[dict[str, object]]] = {}
    for ln in lines:
        by_event.setdefault(str(ln["event"]), []).append(ln)
    assert lines[-1]["event"] == "done", lines
    assert lines[-1]["attached"] == [0, 1, 3, 4, 5] and lines[-1]["failed"] == [2], lines
    (failed,) = by_event["failed"]
    assert failed["rank"] == 2 and failed["pid"] == pids[2], failed
    assert f"already traced by process {os.getpid()}" in str(failed["message"]), failed
    listening = sorted(by_event["listening"], key=lambda e: int(str(e["rank"])))
    assert [e["rank"] for e in listening] == [0, 1, 3, 4, 5]
    line = next(n for n, text in enumerate(MANY.read_text().splitlines(), 1)
                if "time.sleep(0.5)" in text)  # wait_for_peers's sleep
    for event in listening:
        assert event["pid"] == pids[int(str(event["rank"]))], event
        client = DAPClient(str(event["host"]), int(str(event["port"])))
        try:
            client.attach({str(MANY): [line]})
            stopped = client.stopped(timeout=90)
            frame = client.top_frame(stopped["threadId"])
            assert frame["line"] == line, frame
            assert client.evaluate("os.environ['RANK']", frame["id"]) == repr(
                str(event["rank"]))
        finally:
            client.disconnect()
    # Asked again (rank 2 no longer traced), rank 2 is attached too.
    again = rankdebug("attach", str(launcher.pid), "0-5", "--json", timeout=120)
    last = json.loads(again.stdout.splitlines()[-1])
    assert wire_check.problem("attach", [json.loads(ln) for ln in again.stdout.splitlines()]) \
        is None, again.stdout
    assert (last["attached"], last["failed"]) == ([0, 1, 2, 3, 4, 5], []), again.stdout


def test_many_ranks_refuse_one_port_and_a_bad_parallel(
        job: tuple[subprocess.Popen[bytes], list[int]]) -> None:
    launcher, _ = job
    out = rankdebug("attach", str(launcher.pid), "0-2", "--port", "5999", "--json")
    assert out.returncode == 2
    assert "--port takes one rank" in json.loads(out.stdout)["error"]["message"]
    out = rankdebug("attach", str(launcher.pid), "0-2", "--parallel", "0", "--json")
    assert out.returncode == 2 and "--parallel" in out.stdout, out.stdout
    out = rankdebug("attach", str(launcher.pid), "0-2 x", "--json")
    assert out.returncode == 2 and "Traceback" not in out.stdout + out.stderr
    assert "RANK" in json.loads(out.stdout)["error"]["message"], out.stdout


def test_ports_handed_to_ranks_at_once_are_all_different() -> None:
    """Ranks attached side by side each take a port before the first listens: never the
    same one twice."""
    outcomes = attach_many.run_all(list(range(64)), lambda _: att.free_port("127.0.0.1"),
                                   workers=16)
    got = [o.result for o in outcomes if o.result is not None]
    assert len(got) == 64 and len(set(got)) == 64


def test_ranks_named_but_not_running_get_their_own_failure() -> None:
    """RANK names ranks 0-7 of a 6-rank job whose ranks 2 and 5 are gone: those two come
    back without a pid (each then fails on its own line); 6 and 7 are past the job."""
    host = "here"
    job = Job(id="j", source="scan", host=host, launcher="torchrun", launcher_pid=1,
              command=[], cwd=None, start_time=None, world_size=6,
              ranks=[Rank(pid=100 + n, rank=n, local_rank=n, world_size=6, host=host)
                     for n in (0, 1, 3, 4)])
    picked = cli_attach._picked("0-7,4,2", job, host)
    assert [(r.rank, r.pid) for r in picked] == [(0, 100), (1, 101), (2, None), (3, 103),
                                                 (4, 104), (5, None)]
    assert [r.rank for r in cli_attach._picked("all", job, host)] == [0, 1, 3, 4]
