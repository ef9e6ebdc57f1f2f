"""Ray-based trainers (verl-shaped): the ranks are actors a driver starts, with RANK in their
runtime environment. A real Ray cluster started by the job (CPU), a gloo all-reduce in each
actor, a DAP client per chosen rank."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from launch_helpers import SCRIPTS, Launch, job_processes, line_of, wait_for

from dap_client import DAPClient
from rankdebug.command import plan_argv

ray = pytest.importorskip("ray", reason="ray is in the test extras; it did not install here")

TRAINER = str(SCRIPTS / "ray_trainer.py")
WORKER = str(SCRIPTS / "ray_worker.py")


def _ray_processes(job: str) -> list[str]:
    """Command lines of the job's Ray processes (raylet, GCS, workers) still alive."""
    out = []
    for pid in job_processes(job):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                out.append(f.read().replace(b"\0", b" ").decode(errors="replace")[:120])
        except OSError:
            continue
    return out


def test_plan_reads_a_ray_driver_script(tmp_path: Path) -> None:
    plan = plan_argv(["python", TRAINER, "3"], cwd=SCRIPTS)
    assert plan.launcher == "ray"
    assert plan.world_size is None
    assert any(d.code == "ray-driver" and d.severity == "info" for d in plan.diagnostics)


def test_chosen_actor_ranks_pause_together_at_a_breakpoint(tmp_path: Path) -> None:
    line = line_of("ray_worker.py")
    launch = Launch(["--ranks", "1,2", "--", sys.executable, TRAINER, "3", "5"], tmp_path,
                    env={"RAY_DEDUP_LOGS": "0"})
    try:
        clients: dict[int, DAPClient] = {}
        clients.update(launch.clients(2, 120))
        assert sorted(clients) == [1, 2]
        for client in clients.values():
            client.attach({WORKER: [line]}, exceptions=["uncaught"])
        assert not [e for e in launch.events if e.get("event") == "listening"
                    and e.get("rank") not in (1, 2)], "only the chosen actors listen"
        for rank, client in clients.items():
            stopped = client.stopped(timeout=120)
            frame = client.top_frame(int(stopped["threadId"]))
            assert frame["line"] == line
            assert client.evaluate("__import__('os').environ['RANK']", frame["id"]) == f"'{rank}'"
            assert client.evaluate("rank", frame["id"]) == str(rank)
            # The raylet would kill a worker still waiting for its client after 60 s.
            timeout = "__import__('os').environ.get('RAY_worker_register_timeout_seconds')"
            assert client.evaluate(timeout, frame["id"]) == "'86400'"
        # Each paused actor rank is labelled with its role, from its class
        # (ActorRolloutRefWorker, as verl names its worker): the sessions' labels.
        roles = {e["rank"]: e["role"] for e in (launch.event("role"), launch.event("role"))}
        assert roles == {1: "actor/rollout/ref", 2: "actor/rollout/ref"}, launch.events
        listed = json.loads(subprocess.run(
            [sys.executable, "-m", "rankdebug", "jobs", "--json"], capture_output=True,
            text=True, check=True).stdout)
        job = next(j for j in listed["jobs"] if j["id"] == launch.job)
        assert {r["rank"]: r["role"] for r in job["ranks"] if r["role"]} == roles
        assert launch.job is not None
        running = _ray_processes(launch.job)
        assert any("raylet" in c for c in running), running  # the cluster the job started
        for client in clients.values():
            client.request("setBreakpoints", {"source": {"path": WORKER}, "breakpoints": []})
            client.request("continue", {"threadId": 0})
        assert launch.exited(timeout=120) == 0
        assert "ended before its script finished" not in launch.stderr()
        wait_for("no process of the job left", lambda: not _ray_processes(launch.job), 30)
    finally:
        launch.close()


def test_stop_while_paused_leaves_no_ray_process(tmp_path: Path) -> None:
    line = line_of("ray_worker.py")
    launch = Launch(["--ranks", "1", "--", sys.executable, TRAINER, "2", "1000"], tmp_path)
    try:
        ev = launch.event("listening", timeout=120)
        client = DAPClient(str(ev["host"]), int(ev["port"]), timeout=120)
        client.attach({WORKER: [line]})
        client.stopped(timeout=120)
        assert launch.job is not None
        assert any("gcs_server" in c for c in _ray_processes(launch.job))
        client.disconnect(terminate=True)
        launch.wait(60)
        wait_for("no process of the job left", lambda: not _ray_processes(launch.job), 30)
    finally:
        launch.close()


PICKLED = """
import sys, pickle
sys.path.insert(0, {pyserver!r}); sys.path.insert(0, {here!r})
import ray.cloudpickle as cp
import {module} as m  # the sender's code: no hook
from rankdebug.runtime import hithook
cp.register_pickle_by_value(m)
blob = cp.dumps(m.plain)
hits = []
hithook.install([({path!r}, {line})], lambda frame: hits.append(frame.f_code.co_name))
fn = pickle.loads(blob)  # the receiver: a chosen rank
print(hits, fn.__code__.co_filename == {path!r}, "{hook}" in fn.__code__.co_names,
      "{hook}" in m.plain.__code__.co_names)
fn(1); print(hits)
"""


def test_a_function_pickled_by_value_gets_the_hook(tmp_path: Path) -> None:
    """What a Ray worker does with an actor's methods: unpickle them (cloudpickle, by
    value); the chosen rank's copy carries the hook, the code's file and lines unchanged."""
    import subprocess

    from rankdebug.runtime import hithook

    src = tmp_path / "pickled_mod.py"
    src.write_text("def plain(x):\n    y = x + 1\n    return y\n")
    code = PICKLED.format(pyserver=str(Path(hithook.__file__).parents[2]), here=str(tmp_path),
                          path=str(src), line=2, module="pickled_mod", hook=hithook.HOOK)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split("\n")
    assert out[0] == "[] True True False"  # planted in the copy, not yet run
    assert out[1] == "['plain']"  # the first call reached the hook


def test_armed_actor_ranks_compare_a_value(tmp_path: Path) -> None:
    """`--arm`: every actor rank serves its handler; eval and compare reach them all."""
    import json
    import subprocess

    launch = Launch(["--arm", "--", sys.executable, TRAINER, "2", "100000000"], tmp_path)
    try:
        launch.event("job", timeout=60)
        assert launch.job is not None

        def answers() -> list[dict[str, object]] | None:
            out = subprocess.run([sys.executable, "-m", "rankdebug", "eval", str(launch.job),
                                  "all", "rank * 10", "--json"], capture_output=True, text=True,
                                 timeout=60, check=False)
            lines = [json.loads(x) for x in out.stdout.splitlines() if x.strip()]
            results = [x for x in lines if x.get("event") == "result"]
            return lines if len(results) == 2 else None

        lines = wait_for("both actor ranks answering", answers, 120)
        results = {x["rank"]: x["text"] for x in lines if x.get("event") == "result"}
        assert results == {0: "0", 1: "10"}
        groups = next(x for x in lines if x.get("event") == "compare")["groups"]
        assert sorted(g["ranks"] for g in groups) == [[0], [1]]
    finally:
        launch.close()
        if launch.job:
            wait_for("no process of the job left", lambda: not _ray_processes(str(launch.job)),
                     30)


def test_a_driver_that_joins_a_running_cluster_is_warned(tmp_path: Path) -> None:
    own = plan_argv(["python", TRAINER], cwd=SCRIPTS)
    assert not [d for d in own.diagnostics if d.code == "ray-existing-cluster"]
    env = plan_argv(["python", TRAINER], cwd=SCRIPTS,
                    caller_env={"RAY_ADDRESS": "10.0.0.5:6379", "PATH": "/usr/bin"})
    (warned,) = [d for d in env.diagnostics if d.code == "ray-existing-cluster"]
    assert "RAY_ADDRESS is 10.0.0.5:6379" in warned.message and warned.severity == "warning"
    script = tmp_path / "joins.py"
    script.write_text("import ray\nray.init(address='auto')\n@ray.remote\ndef f():\n    pass\n")
    code = plan_argv(["python", str(script)], cwd=tmp_path)
    assert code.launcher == "ray"
    assert [d for d in code.diagnostics if d.code == "ray-existing-cluster"]
    script.write_text("import ray\nray.init(address=None)\nray.get(f.remote())\n")
    assert not [d for d in plan_argv(["python", str(script)], cwd=tmp_path).diagnostics
                if d.code == "ray-existing-cluster"]
