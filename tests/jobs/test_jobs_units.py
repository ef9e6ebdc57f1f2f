"""Unit tests of the running-jobs parts that need no job: rank variables, launcher names,
grouping and summaries of stacks, ptrace diagnoses, argument errors."""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jobs_helpers import rankdebug, rankdebug_json

from rankdebug.jobs import discover, gpu, proc_scan, procfs, registry_jobs
from rankdebug.jobs.analysis import stacks as stk
from rankdebug.jobs.injector import ptrace

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(("env", "want"), [
    ({"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "8"}, (3, 1, 8, "RANK")),
    ({"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
      "OMPI_COMM_WORLD_SIZE": "6"}, (5, 1, 6, "OMPI_COMM_WORLD_RANK")),
    ({"PMI_RANK": "2", "PMI_SIZE": "4"}, (2, None, 4, "PMI_RANK")),
    ({"SLURM_PROCID": "7", "SLURM_LOCALID": "3", "SLURM_NTASKS": "8"},
     (7, 3, 8, "SLURM_PROCID")),
    ({"RANK_ID": "1", "RANK_SIZE": "8"}, (1, None, 8, "RANK_ID")),
    ({"LOCAL_RANK": "0"}, (None, 0, None, "LOCAL_RANK")),
    ({"WORLD_SIZE": "2"}, (None, None, 2, "WORLD_SIZE")),
])
def test_rank_vars(env: dict[str, str], want: tuple[object, ...]) -> None:
    got = proc_scan.rank_vars(env)
    assert got is not None
    assert (got.rank, got.local_rank, got.world_size, got.source) == want


def test_no_rank_vars() -> None:
    assert proc_scan.rank_vars({"HOME": "/root", "RANKING": "x"}) is None


@pytest.mark.parametrize(("argv", "want"), [
    (["/venv/bin/python3", "/venv/bin/torchrun", "--nproc_per_node", "4", "t.py"], "torchrun"),
    (["python", "-m", "torch.distributed.run", "t.py"], "torchrun"),
    (["python", "-m", "torch.distributed.launch", "t.py"], "torch.distributed.launch"),
    (["/usr/bin/python3.11", "-u", "-m", "deepspeed.launcher.launch", "x"], "deepspeed"),
    (["mpirun", "-np", "4", "python", "t.py"], "mpirun"),
    (["slurmstepd: [12.0]"], "srun"),
    (["/usr/bin/python3", "-c", "import torchrun"], None),
    (["/opt/venv/bin/python", "/opt/venv/bin/accelerate", "launch", "t.py"], "accelerate"),
    (["bash", "run.sh"], None),
])
def test_launcher_name(argv: list[str], want: str | None) -> None:
    assert proc_scan.launcher_name(argv) == want


def test_is_python() -> None:
    for name in (b"python", b"/usr/bin/python3", b"/x/python3.11", b"python3.13t", b"pypy3"):
        assert procfs.is_python_argv0(name + b"\0-c\0pass\0"), name
    for name in (b"/bin/sleep", b"bash", b"/usr/bin/pythonista-helper", b"ipython"):
        assert not procfs.is_python_argv0(name + b"\0x\0"), name


def _frame(name: str, path: str, line: int = 1) -> stk.Frame:
    return stk.Frame(name, path, line)


LIB = "/venv/lib/python3.11/site-packages/torch/distributed/"


def test_summary_and_collective() -> None:
    frames = [
        _frame("all_reduce", LIB + "distributed_c10d.py", 3252),
        _frame("wrapper", LIB + "c10d_logger.py", 83),
        _frame("train_step", "/home/me/train.py", 24),
        _frame("main", "/home/me/train.py", 53),
        _frame("<module>", "/home/me/train.py", 61),
    ]
    assert stk.summary(frames) == "all_reduce ← train_step ← main ← <module>"
    # py-spy 0.4.3 names inner functions by their qualified name.
    qualified = [*frames[:1], _frame("_exception_logger.<locals>.wrapper",
                                     LIB + "c10d_logger.py", 83), *frames[2:]]
    assert stk.summary(qualified) == "all_reduce ← train_step ← main ← <module>"
    thread = stk.Thread("MainThread", 1, 10, True, False, False, frames)
    found = stk.collective([thread])
    assert found is not None and found["name"] == "all_reduce"
    backward = [
        _frame("_engine_run_backward", "/venv/lib/python3.11/site-packages/torch/autograd/"
               "graph.py"),
        _frame("backward", "/venv/lib/python3.11/site-packages/torch/autograd/__init__.py"),
        _frame("backward", "/venv/lib/python3.11/site-packages/torch/_tensor.py"),
        _frame("train_step", "/home/me/train.py"),
    ]
    assert stk.summary(backward) == "_engine_run_backward ← backward ← train_step"
    assert stk.collective([stk.Thread("MainThread", 1, 10, True, True, True, backward)]) is None


def test_a_paused_rank_shows_its_own_frames_not_the_debugger_s() -> None:
    """A rank paused under the extension's debugpy (bundled: outside site-packages) waits in
    pydevd's frames and threading's: the stack starts at the user's frame; a thread of the
    debugger's own keeps its frames."""
    pydevd = "/ext/dist/bundled/libs/debugpy/_vendored/pydevd/"
    def raw(name: str, path: str, line: int) -> dict[str, object]:
        return {"name": name, "filename": path, "line": line}
    data = [
        {"thread_name": "MainThread", "os_thread_id": 7, "frames": [
            raw("wait", "/usr/lib/python3.11/threading.py", 331),
            raw("_do_wait_suspend", pydevd + "pydevd.py", 2328),
            raw("trace_dispatch", pydevd + "_pydevd_bundle/pydevd_frame.py", 774),
            raw("main", "/p/train.py", 32), raw("<module>", "/p/train.py", 38)]},
        {"thread_name": "pydevd.Reader", "os_thread_id": 8, "frames": [
            raw("_on_run", pydevd + "_pydevd_bundle/pydevd_comm.py", 200),
            raw("run", "/usr/lib/python3.11/threading.py", 975)]},
        {"thread_name": "Thread-1", "os_thread_id": 9, "frames": [
            raw("wait", "/usr/lib/python3.11/threading.py", 331),
            raw("loop", "/p/train.py", 5)]},
    ]
    threads = {t.name: t for t in stk.parse_dump(data, 7)}
    main, reader, other = threads["MainThread"], threads["pydevd.Reader"], threads["Thread-1"]
    assert [(f.name, f.line) for f in main.frames] == [("main", 32), ("<module>", 38)]
    assert [f.name for f in reader.frames] == ["_on_run", "run"]
    assert [f.name for f in other.frames] == ["wait", "loop"]  # no debugger: untouched


def test_an_async_wait_its_handler_names_is_the_rank_s_collective() -> None:
    """A rank in ``work.wait()`` shows no torch.distributed frame: its handler's
    ``collectives.current`` names the collective, for the rank and its row."""
    user = [_frame("main", "/p/train.py", 26), _frame("<module>", "/p/train.py", 30)]
    current = {"op": "all_reduce", "group": "0", "seq": 1, "source": "flight recorder",
               "file": "/p/train.py", "line": 26, "context": None, "label": "all_reduce #1"}
    rs = stk.RankStack(10, 0, "h", threads=[stk.Thread("MainThread", 1, 10, True, False, False,
                                                       user)],
                       collectives={"current": current, "groups": {}})
    assert stk._collective_of(rs) == {"name": "all_reduce", "file": "/p/train.py", "line": 26,
                                      "thread": "MainThread", "seq": 1, "group": "0",
                                      "context": None, "label": "all_reduce #1"}
    rs.collective = stk._collective_of(rs)
    (row,) = stk.group([rs])
    assert (row.collective, row.collective_text) == ("all_reduce", "all_reduce #1")
    # The handler's account (PyTorch's records) is the truth; the stack, where it has none.
    blocking = [_frame("barrier", LIB + "distributed_c10d.py", 9), *user]
    rs.threads = [stk.Thread("MainThread", 1, 10, True, False, False, blocking)]
    found = stk._collective_of(rs)
    assert found is not None and found["name"] == "all_reduce"
    rs.collectives = {"current": None, "groups": {}}
    found = stk._collective_of(rs)
    assert found is not None and (found["name"], found.get("label")) == ("barrier", None)
    # No handler (py-spy read it): nothing to add.
    rs.threads, rs.collectives = [stk.Thread("MainThread", 1, 10, True, False, False, user)], None
    assert stk._collective_of(rs) is None


def test_ranks_label() -> None:
    assert stk.ranks_label([0, 1, 2, 4, 5, 7], [1] * 6) == "ranks 0-2,4,5,7"
    assert stk.ranks_label([3], [9]) == "rank 3"
    assert stk.ranks_label([None, 2], [9, 8]) == "rank 2 pid 9"


def test_group_singles_out_the_odd_rank() -> None:
    waiting = [_frame("all_reduce", LIB + "distributed_c10d.py", 10),
               _frame("train_step", "/p/train.py", 5)]
    stuck = [_frame("__next__", "/venv/lib/python3.11/site-packages/torch/utils/data/x.py"),
             _frame("train_step", "/p/train.py", 3)]
    ranks = []
    for r in range(8):
        frames = stuck if r == 3 else waiting
        ranks.append(stk.RankStack(100 + r, r, "h", threads=[
            stk.Thread("MainThread", 1, 100 + r, True, False, False, frames),
            stk.Thread(f"Thread-{r + 1} (pin)", 2, 200 + r, False, False, False,
                       [_frame("wait", "/usr/lib/python3.11/threading.py")]),
        ]))
    groups = stk.group(ranks)
    mains = [g for g in groups if g.main]
    assert [g.label() for g in mains] == ["ranks 0-2,4-7", "rank 3"]
    assert [g.odd for g in mains] == [False, True]
    assert mains[0].collective == "all_reduce"
    others = [g for g in groups if not g.main]
    assert len(others) == 1 and others[0].label() == "ranks 0-7"
    report = stk.report(ranks, groups, "job", 0.1)
    assert report["odd"] == [3]
    text = stk.render(ranks, groups, "job", 0.1)
    assert "rank 3: __next__ ← train_step" in text and "odd one out" in text


def test_ptrace_diagnoses() -> None:
    pid = os.getppid()
    assert ptrace.diagnose(pid, scope=0, cap=False) is None
    assert ptrace.diagnose(pid, scope=None, cap=False) is None
    one = ptrace.diagnose(pid, scope=1, cap=False)
    assert one is not None and "ptrace_scope = 1" in one and "sysctl -w" in one
    assert ptrace.diagnose(pid, scope=1, cap=True) is None
    two = ptrace.diagnose(pid, scope=2, cap=False)
    assert two is not None and "administrators" in two
    three = ptrace.diagnose(pid, scope=3, cap=True)
    assert three is not None and "reboot" in three
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert ptrace.diagnose(child.pid, scope=1, cap=False) is None  # our own child
    finally:
        child.kill()
        child.wait()
    msg = ptrace.explain_failure(pid, "ptrace: Operation not permitted.")
    assert msg is not None
    assert ptrace.explain_failure(pid, "all fine") is None


def test_attach_refuses_what_it_cannot_attach() -> None:
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        out = rankdebug_json("attach", "--pid", str(sleeper.pid))
        assert "not a Python interpreter" in out["error"]["message"]
    finally:
        sleeper.kill()
        sleeper.wait()
    out = rankdebug_json("attach", "--pid", "999999999")
    assert "no process" in out["error"]["message"]
    assert rankdebug("attach").returncode == 2


def test_eval_and_stacks_name_unknown_jobs() -> None:
    assert rankdebug("eval", "no-such-job", "0", "1+1").returncode == 2
    out = rankdebug_json("stacks", "no-such-job")
    assert "no job" in out["error"]["message"]


def test_scan_sees_a_rank_and_drops_its_workers(tmp_path: object) -> None:
    """A process with RANK set is a one-rank job; a child with the same variables (a
    DataLoader worker) is not a rank of its own."""
    code = ("import subprocess, sys, time; "
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            "time.sleep(60)")
    env = dict(os.environ, RANK="0", WORLD_SIZE="1", LOCAL_RANK="0",
               MASTER_ADDR="127.0.0.1", MASTER_PORT="1")
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            found = discover.discover(gpus=False, registry=False)
            mine = [j for j in found.jobs if any(r.pid == proc.pid for r in j.ranks)]
            if mine:
                break
            time.sleep(0.2)
        assert mine, found.to_json()
        job = mine[0]
        assert [r.pid for r in job.ranks] == [proc.pid]
        assert job.world_size == 1 and job.rendezvous == "127.0.0.1:1"
        assert job.ranks[0].rss and job.ranks[0].start_time
        assert found.scan_ms < 1000
    finally:
        for p in procfs.pids():
            if procfs.ppid(p) == proc.pid:
                os.kill(p, 9)
        proc.kill()
        proc.wait()


def test_stacks_by_pid() -> None:
    from rankdebug.jobs.analysis.stacks import StacksError, find_pyspy

    try:
        find_pyspy()
    except StacksError as exc:
        pytest.skip(str(exc))
    code = "import time\ndef waiting_here():\n    time.sleep(60)\nwaiting_here()\n"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.5)
        out = rankdebug_json("stacks", "--pid", str(proc.pid))
        assert out["job"] is None and out["odd"] == []
        (group,) = out["groups"]
        assert group["main"] and group["label"] == f"pid {proc.pid}"
        assert group["summary"] == "waiting_here ← <module>"
    finally:
        proc.kill()
        proc.wait()


def test_gpu_from_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With nvidia-smi on PATH, each rank gets the GPUs its pid uses (a stand-in
    nvidia-smi answers the two queries); without it, ``gpu`` stays null."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                            env=dict(os.environ, RANK="0", WORLD_SIZE="1"))
    fake = tmp_path / "nvidia-smi"
    fake.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        "  --query-gpu=*) echo '0, GPU-aaa'; echo '1, GPU-bbb' ;;\n"
        f"  --query-compute-apps=*) echo '{proc.pid}, GPU-bbb, 1234'; "
        "echo '1, GPU-aaa, 5' ;;\n"
        "esac\n")
    fake.chmod(0o755)
    try:
        time.sleep(0.3)
        monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
        assert gpu.usage() == {proc.pid: [{"index": 1, "uuid": "GPU-bbb", "memory_mib": 1234}],
                               1: [{"index": 0, "uuid": "GPU-aaa", "memory_mib": 5}]}
        found = discover.discover(registry=False)
        (rank,) = [r for j in found.jobs for r in j.ranks if r.pid == proc.pid]
        assert rank.gpu == [{"index": 1, "uuid": "GPU-bbb", "memory_mib": 1234}]
    finally:
        proc.kill()
        proc.wait()


def test_attach_refuses_a_traced_process() -> None:
    """A process held by another tracer (here: py-spy's, or our own PTRACE) is refused with
    the tracer's name rather than a misleading ptrace_scope message."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.2)
        if libc.ptrace(16, child.pid, None, None) != 0:  # PTRACE_ATTACH
            pytest.skip("ptrace not permitted here")
        try:
            from rankdebug.jobs.attach import AttachError, check_target

            with pytest.raises(AttachError, match="already traced by process"):
                check_target(child.pid)
        finally:
            os.waitpid(child.pid, 0)
            libc.ptrace(17, child.pid, None, 0)  # PTRACE_DETACH
    finally:
        child.kill()
        child.wait()


def test_odd_ones_need_to_stay_apart_in_every_read() -> None:
    from rankdebug.jobs.analysis.odd_ones import odd_ranks

    assert odd_ranks([{0: "a", 1: "a", 2: "b"}]) == {2}  # one read: apart is odd
    loop = [{0: "x", 1: "x", 2: "y"}, {0: "y", 1: "y", 2: "z"}, {0: "z", 1: "z", 2: "x"}]
    assert odd_ranks(loop) == set()  # elsewhere in a running loop, moving like the rest
    stuck = [{0: "x", 1: "x", 2: "s"}, {0: "y", 1: "y", 2: "s"}, {0: "z", 1: "z", 2: "s"}]
    assert odd_ranks(stuck) == {2}  # stays put while the others move
    waited = [{0: "w", 1: "w", 2: "p"}, {0: "w", 1: "w", 2: "q"}, {0: "w", 1: "w", 2: "r"}]
    assert odd_ranks(waited) == {2}  # the others wait for it while it runs elsewhere
    once = [{0: "w", 1: "w", 2: "s"}, {0: "w", 1: "w", 2: "w"}]
    assert odd_ranks(once) == set()  # joined the others in one read
    assert odd_ranks([{0: "a", 1: "b", 2: "c"}] * 3) == set()  # no two ranks agree


def test_more_reads_are_needed_only_while_a_rank_stays_apart() -> None:
    from rankdebug.jobs.analysis.odd_ones import odd_ranks, settled

    assert settled([{0: "a", 1: "a", 2: "a"}])  # all together: nothing more to learn
    assert settled([{0: "a", 1: "b", 2: "c"}])  # no two agree: nobody is apart from a set
    assert settled([{0: "a"}])
    assert not settled([])
    assert not settled([{0: "a", 1: "a", 2: "b"}])  # rank 2 apart: read again
    assert settled([{0: "a", 1: "a", 2: "b"}, {0: "c", 1: "c", 2: "c"}])  # it rejoined
    assert not settled([{0: "x", 1: "x", 2: "s"}, {0: "y", 1: "y", 2: "s"}])
    # What settles can no longer be flagged, whatever the later reads say.
    for later in ({0: "a", 1: "a", 2: "z"}, {0: "q", 1: "r", 2: "s"}):
        assert odd_ranks([{0: "a", 1: "a", 2: "a"}, later]) == set()


def test_reads_start_an_interval_apart_and_stop_when_settled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from rankdebug.jobs import cli_stacks

    def rank(n: int, where: str) -> stk.RankStack:
        return stk.RankStack(100 + n, n, "h", threads=[
            stk.Thread("MainThread", 1, 100 + n, True, False, False,
                       [_frame(where, "/p/train.py", 5)])], via="handler")

    starts: list[float] = []
    odd = {"where": "elsewhere"}

    def take(*_args: object, **_kwargs: object) -> list[stk.RankStack]:
        starts.append(time.monotonic())
        time.sleep(0.25)  # a slow read
        return [rank(0, "step"), rank(1, "step"), rank(2, odd["where"])]

    monkeypatch.setattr(stk, "take", take)
    args = argparse.Namespace(samples=3, interval=0.3, nonblocking=False, timeout=5.0)
    reads = cli_stacks._reads(args, [], {})
    assert len(reads) == 3  # rank 2 stayed apart: every read taken
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert all(0.28 < g < 0.5 for g in gaps), gaps  # start to start, not 0.25 + 0.3
    starts.clear()
    odd["where"] = "step"
    assert len(cli_stacks._reads(args, [], {})) == 1  # together in the first read
    assert len(starts) == 1


def test_an_armed_rank_that_does_not_answer_is_read_by_pyspy_or_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rankdebug.pyspy

    def missing() -> str:
        raise stk.StacksError("py-spy is not installed")

    monkeypatch.setattr(stk, "find_pyspy", missing)
    monkeypatch.setattr(rankdebug.pyspy, "find_pyspy", missing)
    gone = str(tmp_path / "rank-0.sock")
    got = stk.take([(os.getpid(), 0, "h")], sockets={os.getpid(): gone})
    assert got[0].via == "py-spy" and got[0].error == "py-spy is not installed"
    with pytest.raises(stk.StacksError):  # a rank with no handler at all needs py-spy
        stk.take([(os.getpid(), 0, "h")])


def test_a_rank_counts_once_in_a_row_however_many_threads_share_it() -> None:
    same = [_frame("wait", "/usr/lib/python3.11/threading.py")]
    ranks = [stk.RankStack(100 + r, r, "h", threads=[
        stk.Thread("MainThread", 1, 100 + r, True, False, False, same),
        stk.Thread("Thread-1 (pin)", 2, 200 + r, False, False, False, same),
        stk.Thread("Thread-2 (pin)", 3, 300 + r, False, False, False, same)])
        for r in range(300)]
    t0 = time.monotonic()
    groups = stk.group(ranks)
    assert time.monotonic() - t0 < 1.0
    assert [(g.main, len(g.ranks)) for g in groups] == [(True, 300), (False, 300)]


def test_status_reads_what_the_status_file_says(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(0.3)
        for pid in (proc.pid, os.getpid()):
            st = procfs.status(pid)
            text = Path(f"/proc/{pid}/status").read_text()
            fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
            assert st is not None
            assert [st.uid, st.euid] == [int(x) for x in fields["Uid"].split()[:2]]
            assert st.ppid == int(fields["PPid"])
            assert st.threads == int(fields["Threads"])
            if pid == proc.pid:  # asleep: its memory stays put between the two reads
                assert st.rss == int(fields["VmRSS"].split()[0]) * 1024
                assert st.state == "S"
        assert procfs.status(proc.pid + 10_000_000) is None
    finally:
        proc.kill()
        proc.wait()


def test_the_scan_parses_only_the_variables_it_reads() -> None:
    data = (b"RANK=3\0XRANK=9\0LOCAL_RANK=1\0OMPI_COMM_WORLD_SIZE=4\0PATH=/a=b\0"
            b"RANK=4\0NOEQ\0=x\0HOME=/h\0")
    everything = procfs.parse_environ(data)
    assert everything["PATH"] == "/a=b" and everything["RANK"] == "4"
    kept = procfs.parse_environ(data, procfs.EnvFilter.of(["RANK", "LOCAL_RANK", "PATH"],
                                                          ["OMPI_COMM_WORLD"]))
    assert kept == {"RANK": "4", "LOCAL_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4",
                    "PATH": "/a=b"}
    env = {"RANK": "5", "LOCAL_RANK": "1", "WORLD_SIZE": "8", "MASTER_ADDR": "n0",
           "MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "r", "CUDA_VISIBLE_DEVICES": "1",
           "RANKDEBUG_JOB": "j", "OMPI_COMM_WORLD_RANK": "5", "SLURM_PROCID": "5",
           "HOME": "/h", "PS1": "$"}
    raw = b"\0".join(f"{k}={v}".encode() for k, v in env.items())
    scanned = procfs.parse_environ(raw, proc_scan._ENV_READ)
    assert set(env) - set(scanned) == {"HOME", "PS1"}
    assert proc_scan.rank_vars(scanned) == proc_scan.rank_vars(env)
    assert proc_scan.signature(scanned) == proc_scan.signature(env)
    assert proc_scan.env_launcher(scanned) == proc_scan.env_launcher(env)


def test_hundreds_of_scanned_ranks_merge_into_their_registry_job() -> None:
    import dataclasses

    job = discover.Job("J", "registry", "h", "torchrun", 1, ["torchrun"], "/w", 1.0, None,
                       ranks=[discover.Rank(None, r, None, None, "h", state="starting",
                                            socket=f"/r/rank-{r}.sock", armed=True)
                              for r in range(0, 512, 2)])
    seen = [discover.Rank(10_000 + r, r, r % 8, 512, "h", cpu=1.0, rss=5, command=["python"],
                          gpu=[{"index": 0, "memory_mib": 10}])
            for r in reversed(range(512))]
    t0 = time.monotonic()
    registry_jobs.merge(job, seen)
    assert time.monotonic() - t0 < 0.5
    assert [r.rank for r in job.ranks] == list(range(512))
    assert job.world_size == 512
    even = job.ranks[2]
    assert (even.pid, even.socket, even.state, even.local_rank) == (10_002, "/r/rank-2.sock",
                                                                    "running", 2)
    assert job.ranks[3].socket is None and job.ranks[3].pid == 10_003
    # The JSON is dataclasses.asdict's, field for field, in order.
    assert job.to_json() == dataclasses.asdict(job)
    assert list(job.to_json()["ranks"][0]) == [f.name for f in dataclasses.fields(discover.Rank)]
    out = job.to_json()
    out["ranks"][1]["gpu"][0]["memory_mib"] = 0
    assert job.ranks[1].gpu == [{"index": 0, "memory_mib": 10}]  # a copy, not the rank's own


def test_collective_check_names_the_rank_behind_and_the_numbers() -> None:
    from rankdebug.jobs.analysis.collective_check import check

    def state(op: str | None, seq: int) -> dict[str, object]:
        current = {"op": op, "seq": seq, "group": "0"} if op else None
        return {"current": current,
                "groups": {"0": {"desc": "default_pg", "ranks": [0, 1, 2, 3], "issued": seq}}}

    found = check({0: state("all_reduce", 1205), 1: state("all_reduce", 1205),
                   2: state("all_reduce", 1204), 3: state("all_reduce", 1205)})
    assert found == [{
        "group": "0", "desc": "default_pg", "odd": [2],
        "message": "group 0 (default_pg): rank 2 is at all_reduce #1204; "
                   "ranks 0,1,3 at all_reduce #1205",
        "positions": [{"ranks": [0, 1, 3], "op": "all_reduce", "seq": 1205, "context": None},
                      {"ranks": [2], "op": "all_reduce", "seq": 1204, "context": None}]}]
    assert check({r: state("all_reduce", 7) for r in range(4)}) == []
    assert check({0: {"error": "torch changed"}, 1: state(None, 3)}) == []


def test_a_job_is_found_by_the_pid_the_user_started_or_a_ranks() -> None:
    """``deepspeed`` runs an inner launcher whose children the ranks are: the job's id is
    the inner launcher's pid, yet the outer pid (the command the user ran) and a rank's pid
    find the job too."""
    inner = ("import os, subprocess, sys, time\n"
             "env = dict(os.environ, WORLD_SIZE='2', MASTER_ADDR='127.0.0.1', MASTER_PORT='7')\n"
             "kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],\n"
             "        env=dict(env, RANK=str(r), LOCAL_RANK=str(r))) for r in (0, 1)]\n"
             "time.sleep(60)\n")
    outer = subprocess.Popen([sys.executable, "-c",
                              "import subprocess, sys, time\n"
                              f"p = subprocess.Popen([sys.executable, '-c', {inner!r}])\n"
                              "time.sleep(60)\n"])
    try:
        deadline = time.monotonic() + 20
        job = None
        while job is None and time.monotonic() < deadline:
            found = discover.discover(gpus=False, registry=False)
            job = discover.find_job(found.jobs, str(outer.pid))
            time.sleep(0.2)
        assert job is not None and len(job.ranks) == 2, found.to_json()
        assert str(outer.pid) not in job.id  # the id names the inner launcher
        assert discover.find_job(found.jobs, str(job.ranks[1].pid)) is job
    finally:
        tree = [outer.pid]
        for _ in range(3):
            tree += [p for p in procfs.pids() if procfs.ppid(p) in tree and p not in tree]
        for pid in reversed(tree):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        outer.wait()
