"""Running jobs for real: 4-rank torchrun jobs on gloo/CPU, started without rankdebug.

- discovery finds the job (launcher, ranks, world size, rendezvous) from /proc alone;
- ``stacks`` singles out rank 3, which blocks somewhere else while 0-2 wait in all_reduce;
- ``attach --pid`` makes rank 2 listen; a DAP client stops it at a breakpoint while ranks
  0, 1 and 3 keep counting steps; the job then ends cleanly;
- the same injection into a process running another Python than rankdebug's, and through
  gdb when asked (where gdb can call into a process at all);
- another user's rank process is never listed.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from jobs_helpers import JOB_SCRIPT, TorchrunJob, line_of, rankdebug, rankdebug_json

from dap_client import DAPClient
from rankdebug.jobs import discover, procfs
from rankdebug.protocol import fields
from rankdebug.protocol import jobs as jobs_answer

pytestmark = pytest.mark.timeout(180)


def _need_pyspy() -> None:
    from rankdebug.jobs.analysis.stacks import StacksError, find_pyspy

    try:
        find_pyspy()
    except StacksError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def hang_job(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TorchrunJob]:
    job = TorchrunJob(tmp_path_factory.mktemp("hang"), mode="hang")
    try:
        job.wait_ready()
        yield job
    finally:
        job.stop()


def _job_of(found: dict[str, object], launcher_pid: int) -> dict[str, object]:
    jobs = found["jobs"]
    assert isinstance(jobs, list)
    hits = [j for j in jobs if j["launcher_pid"] == launcher_pid]
    assert len(hits) == 1, json.dumps(found)[:3000]
    hit: dict[str, object] = hits[0]
    return hit


def test_discovery_finds_a_job_started_without_rankdebug(hang_job: TorchrunJob) -> None:
    found = rankdebug_json("jobs")
    # The whole answer as protocol/jobs.py declares it (the extension's types come from it).
    assert fields.shape_problem(found, jobs_answer.SHAPES["Answer"], jobs_answer.SHAPES) is None
    job = _job_of(found, hang_job.proc.pid)
    assert job["source"] == "scan" and job["dir"] is None
    assert job["launcher"] == "torchrun"
    assert job["world_size"] == 4
    assert job["id"] == f"{hang_job.proc.pid}@{found['host']}"
    assert "--nproc_per_node" in job["command"]  # type: ignore[operator]
    assert job["rendezvous"] and job["run_id"]
    ranks = job["ranks"]
    assert isinstance(ranks, list)
    assert [(r["rank"], r["local_rank"], r["pid"]) for r in ranks] == [
        (n, n, hang_job.pids[n]) for n in range(4)]
    for r in ranks:
        assert r["host"] == found["host"] and r["world_size"] == 4
        assert r["rss"] > 0 and r["cpu"] is not None and r["start_time"] > 0
        assert r["cwd"] == str(JOB_SCRIPT.parent)
        assert str(JOB_SCRIPT) in r["command"]
        assert r["port"] is None
    # One job by its launcher's pid, in the text form too.
    text = rankdebug("jobs", str(hang_job.proc.pid))
    assert text.returncode == 0 and "torchrun" in text.stdout and "rank   3" in text.stdout


def test_stacks_single_out_the_rank_that_blocks_elsewhere(hang_job: TorchrunJob) -> None:
    _need_pyspy()
    job_id = str(hang_job.proc.pid)
    deadline = time.monotonic() + 30
    while True:  # ranks 0-2 reach all_reduce a moment after writing ready-N
        out = rankdebug_json("stacks", job_id)
        mains = [g for g in out["groups"] if g["main"]]
        if [g["ranks"] for g in mains] == [[0, 1, 2], [3]] or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert [g["ranks"] for g in mains] == [[0, 1, 2], [3]], json.dumps(out)[:3000]
    assert mains[0]["collective"] == "all_reduce" and not mains[0]["odd"]
    assert mains[0]["summary"].startswith("all_reduce ← train_step")
    assert mains[1]["odd"] and mains[1]["collective"] is None
    assert mains[1]["summary"].startswith("stuck_in_data")
    assert out["odd"] == [3]
    by_rank = {r["rank"]: r for r in out["ranks"]}
    assert by_rank[0]["collective"]["name"] == "all_reduce"
    assert by_rank[3]["collective"] is None
    assert all(r["error"] is None and r["threads"] for r in out["ranks"])
    assert {r["via"] for r in out["ranks"]} == {"py-spy"}  # not armed: read from outside
    text = rankdebug("stacks", job_id)
    assert text.returncode == 0, text.stderr
    assert "ranks 0-2: all_reduce ← train_step" in text.stdout
    assert "rank 3: stuck_in_data" in text.stdout and "odd one out" in text.stdout


def test_eval_needs_an_armed_job(hang_job: TorchrunJob) -> None:
    out = rankdebug("eval", str(hang_job.proc.pid), "1", "1 + 1", "--json")
    assert out.returncode == 2
    message = json.loads(out.stdout)["error"]["message"]
    assert "rankdebug launch --arm" in message and "rankdebug attach" in message


def test_attach_to_a_rank_waiting_in_all_reduce(hang_job: TorchrunJob) -> None:
    """The case this is for: a hung job. Rank 0 waits in all_reduce (in C++, the GIL
    released); debugpy is injected all the same, the collective is not disturbed, and once
    rank 3 is released rank 0 stops at the next line with the reduced value."""
    if hang_job.proc.poll() is not None:
        pytest.skip("the hang job already ended")
    out = rankdebug_json("attach", str(hang_job.proc.pid), "0")
    assert out.get("event") == "listening", out
    assert out["pid"] == hang_job.pids[0] and out["rank"] == 0
    client = DAPClient(out["host"], out["port"])
    try:
        client.attach({str(JOB_SCRIPT): [line_of("# AFTER")]})
        (hang_job.tmp / "release").touch()
        stopped = client.stopped(timeout=60)
        frame = client.top_frame(stopped["threadId"])
        assert frame["line"] == line_of("# AFTER")
        assert client.evaluate("t.item()", frame["id"]) == "16.0"  # two sums of 4 ones
        client.request("setBreakpoints", {"source": {"path": str(JOB_SCRIPT)},
                                          "breakpoints": []})
        client.cont(stopped["threadId"])
    finally:
        client.disconnect()
    assert hang_job.proc.wait(timeout=60) == 0, hang_job.output()
    assert [(hang_job.tmp / f"total-{r}").read_text() for r in range(4)] == ["16.0"] * 4


def _proc_state(pid: int) -> str | None:
    st = procfs.status(pid)
    return st.state if st else None


def test_attach_by_pid_stops_rank2_while_the_others_run(tmp_path: Path) -> None:
    job = TorchrunJob(tmp_path, mode="loop")
    try:
        pids = job.wait_ready()
        t0 = time.monotonic()
        attach = rankdebug("attach", "--pid", str(pids[2]), "--json")
        assert attach.returncode == 0, attach.stdout + attach.stderr
        event = json.loads(attach.stdout.strip().splitlines()[-1])
        t_listen = time.monotonic() - t0
        assert event["event"] == "listening" and event["rank"] == 2
        assert event["pid"] == pids[2] and event["host"] == "127.0.0.1"
        assert event["job"] == f"{job.proc.pid}@{os.uname().nodename}"
        # The others were never stopped while rank 2 was injected.
        assert all(_proc_state(pids[r]) not in ("t", "T") for r in (0, 1, 3))

        client = DAPClient(event["host"], event["port"])
        try:
            client.attach({str(JOB_SCRIPT): [line_of("# BREAK")]})
            stopped = client.stopped(timeout=60)
            t_paused = time.monotonic() - t0
            frame = client.top_frame(stopped["threadId"])
            assert frame["line"] == line_of("# BREAK")
            assert client.evaluate("rank", frame["id"]) == "2"
            sock = '__import__("pydevd").get_global_debugger().writer.sock'
            assert client.evaluate(f"{sock}.getsockopt(6, 1)", frame["id"]) != "0"  # NODELAY
            before = {r: job.steps(r) for r in range(4)}
            time.sleep(1.0)
            after = {r: job.steps(r) for r in range(4)}
            assert after[2] == before[2], "rank 2 should be paused"
            for r in (0, 1, 3):
                assert after[r] > before[r] + 5, f"rank {r} did not run on: {before} {after}"
            # `jobs` now shows rank 2 listening on that port.
            found = rankdebug_json("jobs", str(job.proc.pid))
            ranks = {r["rank"]: r for r in found["jobs"][0]["ranks"]}
            assert ranks[2]["port"] == event["port"] and ranks[2]["state"] == "listening"
            assert ranks[0]["port"] is None
            print(f"\nattach --pid: listening after {t_listen:.2f} s, "
                  f"rank paused at the breakpoint {t_paused:.2f} s after the attach began")
            client.request("setBreakpoints", {"source": {"path": str(JOB_SCRIPT)},
                                              "breakpoints": []})
            client.cont(stopped["threadId"])
        finally:
            client.disconnect()
        deadline = time.monotonic() + 10
        while job.steps(2) == after[2] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert job.steps(2) > after[2], "rank 2 did not resume"
        (tmp_path / "stop").touch()
        assert job.proc.wait(timeout=60) == 0, job.output()
    finally:
        job.stop()


def _other_python() -> str | None:
    """A Python other than rankdebug's (another minor version), if this machine has one."""
    mine = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    roots = [Path.home() / ".pyenv" / "versions", Path("/usr/local/bin"), Path("/usr/bin")]
    for minor in (12, 13, 10, 9):
        name = f"python3.{minor}"
        if name == mine:
            continue
        for root in roots:
            hits = sorted(root.glob(f"*/bin/{name}")) + sorted(root.glob(name))
            for hit in hits:
                if os.access(hit, os.X_OK):
                    return str(hit)
    return None


@contextlib.contextmanager
def _spinning(tmp_path: Path, python: str) -> Iterator[tuple[Path, int]]:
    """A one-rank Python process on ``python`` stepping at line 4 of spin.py; yields (the
    script, its pid); ends it and whatever it started (debugpy's adapter) after."""
    from jobs_helpers import with_marker

    script = tmp_path / "spin.py"
    script.write_text(
        "import os, sys, time\n"
        "n = 0\n"
        "while True:\n"
        "    n += 1  # BREAK\n"
        "    time.sleep(0.02)\n")
    env = dict(os.environ, RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(20000 + os.getpid() % 10000), MARKER_DIR=str(tmp_path))
    env.pop("PYTHONPATH", None)
    proc = subprocess.Popen([python, str(script)], env=env)
    try:
        time.sleep(0.5)
        yield script, proc.pid
    finally:
        for pid in [proc.pid, *with_marker(tmp_path)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        proc.wait()


def test_attach_injects_into_another_python(tmp_path: Path) -> None:
    """debugpy (rankdebug's copy) goes onto the target's path and runs on its interpreter."""
    python = _other_python()
    if python is None:
        pytest.skip("no Python of another version on this machine")
    with _spinning(tmp_path, python) as (script, pid):
        out = rankdebug_json("attach", "--pid", str(pid))
        assert out.get("event") == "listening", out
        assert out["rank"] == 0
        client = DAPClient(out["host"], out["port"])
        try:
            client.attach({str(script): [4]})
            stopped = client.stopped(timeout=60)
            frame = client.top_frame(stopped["threadId"])
            assert frame["line"] == 4
            version = client.evaluate("sys.version_info[:2]", frame["id"])
            assert version != str(tuple(sys.version_info[:2])), version
        finally:
            client.disconnect(terminate=True)


def _gdb_cannot_call() -> str | None:
    """Why gdb cannot run code in a process here (a sacrificial one), or None when it can.
    gdb 13's inferior calls fail on some CPUs (AMX state) and kill the process."""
    if shutil.which("gdb") is None:
        return "gdb is not installed"
    probe = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.01)"],
                             stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.3)
        out = subprocess.run(["gdb", "--batch", "--nx", "-p", str(probe.pid), "-ex",
                              "call (int)Py_IsInitialized()"], capture_output=True,
                             text=True, timeout=60, check=False)
        time.sleep(0.3)
        if "= 1" not in out.stdout or probe.poll() is not None:
            return "gdb cannot call into a process here: " + (out.stdout + out.stderr)[-300:]
        return None
    finally:
        probe.kill()
        probe.communicate()


def test_attach_with_gdb_when_asked(tmp_path: Path) -> None:
    """RANKDEBUG_INJECT=gdb takes the other way (the default off x86-64): debugpy's own
    ``--pid``, through gdb."""
    why = _gdb_cannot_call()
    if why is not None:
        pytest.skip(why)
    with _spinning(tmp_path, sys.executable) as (script, pid):
        out = subprocess.run([sys.executable, "-m", "rankdebug", "attach", "--pid",
                              str(pid), "--json"], capture_output=True, text=True,
                             timeout=120, check=False,
                             env=dict(os.environ, RANKDEBUG_INJECT="gdb"))
        event = json.loads(out.stdout.strip().splitlines()[-1])
        assert event.get("event") == "listening", out.stdout + out.stderr
        client = DAPClient(event["host"], event["port"])
        try:
            client.attach({str(script): [4]})
            stopped = client.stopped(timeout=60)
            assert client.top_frame(stopped["threadId"])["line"] == 4
        finally:
            client.disconnect(terminate=True)


def test_an_unknown_injector_is_refused() -> None:
    out = subprocess.run([sys.executable, "-m", "rankdebug", "attach", "--pid",
                          str(os.getpid()), "--json"], capture_output=True, text=True,
                         timeout=60, check=False, env=dict(os.environ, RANKDEBUG_INJECT="lldb"))
    assert out.returncode != 0
    assert "RANKDEBUG_INJECT='lldb'" in json.loads(out.stdout)["error"]["message"]


def _make_user() -> str:
    if os.getuid() != 0:
        pytest.skip("creating a second user needs root; this test runs as "
                    f"uid {os.getuid()}")
    if shutil.which("useradd") is None:
        pytest.skip("no useradd on this machine")
    name = f"rdt{uuid.uuid4().hex[:8]}"
    made = subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin",
                           name], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"useradd refused here: {made.stderr.strip()}")
    return name


def test_another_users_rank_is_not_listed(tmp_path: Path) -> None:
    name = _make_user()
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    code = "import time; time.sleep(60)"
    env = {"PATH": "/usr/bin:/bin", "RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0",
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}
    procs = []
    try:
        uid = pwd.getpwnam(name).pw_uid
        theirs = subprocess.Popen([python, "-c", code], env=env, user=uid, cwd="/")
        procs.append(theirs)
        mine = subprocess.Popen([python, "-c", code], env=dict(env, RANK="1"), cwd="/")
        procs.append(mine)
        time.sleep(0.3)
        assert procfs.status(theirs.pid) is not None
        assert procfs.status(theirs.pid).uid == uid  # type: ignore[union-attr]
        found = discover.discover(gpus=False)
        listed = {r.pid for j in found.jobs for r in j.ranks}
        assert mine.pid in listed
        assert theirs.pid not in listed
        # Nor can it be attached or read.
        out = rankdebug_json("attach", "--pid", str(theirs.pid))
        assert "another user" in out["error"]["message"]
    finally:
        for p in procs:
            p.kill()
            p.wait()
        subprocess.run(["userdel", name], capture_output=True, check=False)


def test_a_rankdebug_launch_job_is_one_registry_job(tmp_path: Path) -> None:
    """Ranks of a job started by ``rankdebug launch`` are merged into its registry entry
    (the chosen rank with its port, the others from the scan), never listed twice."""
    from jobs_helpers import BIN, with_marker

    env = dict(os.environ, MARKER_DIR=str(tmp_path), JOB_MODE="loop", OMP_NUM_THREADS="1")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    launch = subprocess.Popen(
        [sys.executable, "-m", "rankdebug", "launch", "--ranks", "1", "--no-wait", "--json",
         "--", "torchrun", "--standalone", "--nproc_per_node", "2", str(JOB_SCRIPT)],
        cwd=JOB_SCRIPT.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, start_new_session=True)
    try:
        assert launch.stdout is not None
        events = {}
        for line in launch.stdout:
            ev = json.loads(line)
            events[ev["event"]] = ev
            if ev["event"] in ("listening", "exited"):
                break
        assert "listening" in events, events
        job_id = events["job"]["job"]
        deadline = time.monotonic() + 90
        while not all((tmp_path / f"ready-{r}").exists() for r in range(2)):
            assert time.monotonic() < deadline and launch.poll() is None
            time.sleep(0.1)
        found = rankdebug_json("jobs")
        assert fields.shape_problem(found, jobs_answer.SHAPES["Answer"],
                                    jobs_answer.SHAPES) is None
        mine = [j for j in found["jobs"]
                if any(str(tmp_path) in " ".join(r["command"]) or j["id"] == job_id
                       for r in j["ranks"])]
        assert [j["id"] for j in mine] == [job_id], json.dumps(found)[:3000]
        job = mine[0]
        assert job["source"] == "registry" and job["world_size"] == 2
        # Where the editor sends the job's commands and watches for jobs: said, not guessed.
        assert job["dir"] == os.path.join(found["registry"], job_id)
        assert os.path.exists(os.path.join(job["dir"], "ctl.sock"))
        assert stat.S_IMODE(os.stat(found["registry"]).st_mode) == 0o700
        ranks = {r["rank"]: r for r in job["ranks"]}
        assert sorted(ranks) == [0, 1]
        pids = {r: int((tmp_path / f"ready-{r}").read_text()) for r in range(2)}
        assert {r: ranks[r]["pid"] for r in ranks} == pids
        assert ranks[1]["port"] == events["listening"]["port"]
        assert ranks[0]["port"] is None
        assert ranks[0]["rss"] > 0 and ranks[1]["rss"] > 0
        # attach by JOB RANK to a rank that already listens: reported as it is.
        out = rankdebug_json("attach", job_id, "1")
        assert out == {"event": "listening", "rank": 1, "host": "127.0.0.1",
                       "port": events["listening"]["port"], "pid": pids[1], "job": job_id}
        (tmp_path / "stop").touch()
        assert launch.wait(timeout=60) == 0
    finally:
        if launch.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(launch.pid, 15)
            with contextlib.suppress(subprocess.TimeoutExpired):
                launch.wait(timeout=10)
        for pid in with_marker(tmp_path):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        if launch.poll() is None:
            launch.kill()
            launch.wait()
