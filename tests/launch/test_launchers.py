"""Other launchers, DataLoader workers and the collective-timeout guard, on real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from launch_helpers import SCRIPTS, Launch, job_processes, line_of, read_json, tool

from dap_client import DAPClient

pytestmark = pytest.mark.timeout(180)


def _debug_one_stop(launch: Launch, script: str, line: int, rank: int) -> None:
    ev = launch.event("listening")
    assert ev["rank"] == rank
    client = DAPClient(str(ev["host"]), int(ev["port"]))
    client.attach({script: [line]})
    stopped = client.stopped()
    assert stopped["reason"] == "breakpoint"
    frame = client.top_frame(stopped["threadId"])
    assert frame["line"] == line
    assert client.evaluate('int(os.environ.get("RANK", "0"))', frame["id"]) == str(rank)
    client.request("setBreakpoints", {"source": {"path": script}, "breakpoints": []})
    client.cont(stopped["threadId"])
    assert launch.exited() == 0
    client.close()


def test_plain_python(tmp_path: Path) -> None:
    script = str(SCRIPTS / "single.py")
    launch = Launch(["--ranks", "0", "--", sys.executable, script], tmp_path)
    try:
        _debug_one_stop(launch, script, line_of("single.py"), 0)
    finally:
        launch.close()


def test_torchrun_of_rankdebugs_environment_without_activating_it(tmp_path: Path) -> None:
    """`.venv/bin/rankdebug launch -- torchrun …` with the venv not on PATH: the torchrun
    beside rankdebug's Python runs (what an activated environment would have found)."""
    script = str(SCRIPTS / "single.py")
    launch = Launch(["--ranks", "0", "--", "torchrun", "--nproc_per_node", "1", script],
                    tmp_path, env={"PATH": "/usr/local/bin:/usr/bin:/bin"})
    try:
        _debug_one_stop(launch, script, line_of("single.py"), 0)
    finally:
        launch.close()


def test_torch_distributed_launch_all_ranks(tmp_path: Path) -> None:
    script = str(SCRIPTS / "ddp_steps.py")
    line = line_of("ddp_steps.py")
    launch = Launch(["--ranks", "all", "--break", f"{script}:{line}", "--", sys.executable,
                     "-m", "torch.distributed.launch", "--nproc_per_node", "2", "--use-env",
                     script], tmp_path)
    try:
        clients = []
        for _ in range(2):
            ev = launch.event("listening")
            client = DAPClient(str(ev["host"]), int(ev["port"]))
            client.attach({script: [line]})
            clients.append((int(ev["rank"]), client))
        for rank, client in clients:
            stopped = client.stopped()
            frame = client.top_frame(stopped["threadId"])
            assert client.evaluate('int(os.environ["RANK"])', frame["id"]) == str(rank)
            client.request("setBreakpoints", {"source": {"path": script}, "breakpoints": []})
            client.cont(stopped["threadId"])
        assert launch.exited() == 0
    finally:
        launch.close()
    assert read_json(tmp_path / "rank-0.json")["debugpy"] is True
    assert read_json(tmp_path / "rank-1.json")["debugpy"] is True


def test_dataloader_workers_start_no_second_debugger(tmp_path: Path) -> None:
    launch = Launch(["--ranks", "0", "--no-wait", "--", sys.executable,
                     str(SCRIPTS / "loader.py")], tmp_path)
    try:
        launch.event("listening")
        assert launch.exited() == 0
    finally:
        launch.close()
    assert [e for e in launch.events if e.get("event") == "listening"][1:] == []
    result = read_json(tmp_path / "loader.json")
    workers = result["fork"] + result["spawn"]
    assert len({w["pid"] for w in workers}) >= 2
    assert all(w["pid"] != result["main"] for w in workers)
    assert result["adapters"] == 1
    assert not any(w["traced"] for w in workers)
    assert not any(w["debugpy"] for w in result["spawn"])


@pytest.mark.timeout(240)
@pytest.mark.parametrize(("guard", "ok"), [("86400", True), ("0", False)])
def test_collective_timeout_guard(tmp_path: Path, guard: str, ok: bool) -> None:
    # rank 1 is away 30 s while rank 0 waits in all_reduce with a 10 s process-group timeout.
    launch = Launch(["--ranks", "1", "--no-wait", "--collective-timeout", guard, "--",
                     tool("torchrun"), "--nproc_per_node", "2", str(SCRIPTS / "guard.py")],
                    tmp_path, env={"PAUSE_S": "30" if ok else "15"})
    try:
        code = launch.exited(timeout=200)
    finally:
        launch.close()
    assert (code == 0) is ok, launch.stderr()
    assert launch.job is not None and job_processes(launch.job) == []


def test_accelerate(tmp_path: Path) -> None:
    pytest.importorskip("accelerate")
    script = str(SCRIPTS / "ddp_steps.py")
    launch = Launch(["--ranks", "1", "--", tool("accelerate"), "launch", "--multi_gpu",
                     "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
                     "--dynamo_backend", "no", script], tmp_path)
    try:
        _debug_one_stop(launch, script, line_of("ddp_steps.py"), 1)
    finally:
        launch.close()
    assert read_json(tmp_path / "rank-0.json")["debugpy"] is False


def _tune(tmp: Path) -> dict[str, str]:
    """PATH with a ``tune`` program (``scripts/tune_stub.py``: torchtune's ``tune run``)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    tune = bin_dir / "tune"
    tune.write_text(f"#!{sys.executable}\n" + (SCRIPTS / "tune_stub.py").read_text())
    tune.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "TUNE_RECIPES": str(SCRIPTS)}


def test_tune_run_with_torchrun_options_debugs_a_rank_torchrun_starts(tmp_path: Path) -> None:
    script = str(SCRIPTS / "ddp_steps.py")
    launch = Launch(["--ranks", "1", "--", "tune", "run", "--nproc_per_node", "2", "ddp_steps",
                     "--config", "x.yaml"], tmp_path, env=_tune(tmp_path))
    try:
        job = launch.event("job")
        assert (job["launcher"], job["ranks"]) == ("tune", [1])
        _debug_one_stop(launch, script, line_of("ddp_steps.py"), 1)
    finally:
        launch.close()
    assert read_json(tmp_path / "rank-0.json")["debugpy"] is False


def test_tune_run_of_one_device_debugs_the_recipe_in_tunes_own_process(tmp_path: Path) -> None:
    """No torchrun option: the recipe runs in the tune process, which has no rank variable."""
    script = str(SCRIPTS / "single.py")
    launch = Launch(["--ranks", "0", "--", "tune", "run", "single", "--config", "x.yaml"],
                    tmp_path, env=_tune(tmp_path))
    try:
        _debug_one_stop(launch, script, line_of("single.py"), 0)
    finally:
        launch.close()


@pytest.mark.skipif(not shutil.which("mpirun"), reason="no mpirun (Debian's openmpi-bin)")
def test_mpirun(tmp_path: Path) -> None:
    script = str(SCRIPTS / "single.py")
    # Open MPI refuses root unless told (CI runs as root).
    as_root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    launch = Launch(["--ranks", "1", "--", "mpirun", *as_root, "--oversubscribe", "-n", "2",
                     sys.executable, script], tmp_path)
    try:
        ev = launch.event("listening")
        assert ev["rank"] == 1
        client = DAPClient(str(ev["host"]), int(ev["port"]))
        client.attach({script: [line_of("single.py")]})
        stopped = client.stopped()
        frame = client.top_frame(stopped["threadId"])
        env = 'int(os.environ["OMPI_COMM_WORLD_RANK"])'
        assert client.evaluate(env, frame["id"]) == "1"
        client.request("setBreakpoints", {"source": {"path": script}, "breakpoints": []})
        client.cont(stopped["threadId"])
        assert launch.exited() == 0
    finally:
        launch.close()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--ranks", "5", "--", "torchrun", "--nproc_per_node", "2", "x.py"], "outside"),
        (["--ranks", "1-", "--", "torchrun", "--nproc_per_node", "2", "x.py"], "cannot read"),
        ([], "give either"),
    ],
)
def test_refuses_bad_input_with_a_json_error(args: list[str], needle: str) -> None:
    out = subprocess.run([sys.executable, "-m", "rankdebug", "launch", "--json", *args],
                         capture_output=True, text=True, cwd=SCRIPTS, timeout=60, check=False)
    assert out.returncode == 2, out.stderr
    error = json.loads(out.stdout)["error"]
    assert needle in error["message"]


def test_refuses_before_start_what_would_fail_at_once(tmp_path: Path) -> None:
    """A flag without its value, an entry script that is not there: refused with the
    plan's position, exit 2, and nothing started (no job in the registry)."""
    script = tmp_path / "run.sh"
    script.write_text("cd sub\ntorchrun --nproc_per_node 2 trian.py --lr 1\n"
                      "torchrun --nproc_per_node\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "train.py").write_text("print(1)\n")
    for line, (message, column) in {
        2: ("the entry script trian.py does not exist in " + str(tmp_path / "sub"), 29),
        3: ("--nproc_per_node needs a value", 10),
    }.items():
        out = subprocess.run([sys.executable, "-m", "rankdebug", "launch", "--json", "--file",
                              str(script), "--line", str(line)], capture_output=True,
                             text=True, cwd=tmp_path, timeout=60, check=False)
        assert out.returncode == 2, out.stderr
        (answer,) = out.stdout.strip().splitlines()  # no job event: nothing started
        error = json.loads(answer)["error"]
        assert (error["message"], error["line"], error["column"]) == (message, line, column)


def test_refuses_words_whose_value_is_unknown(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("# never run\ntorchrun --nproc_per_node $(nproc) x.py\n")
    out = subprocess.run([sys.executable, "-m", "rankdebug", "launch", "--json", "--file",
                          str(script), "--line", "2"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60, check=False)
    assert out.returncode == 2, out.stderr
    error = json.loads(out.stdout)["error"]
    assert "$(nproc)" in error["message"] and "word 3" in error["message"]
    assert (error["line"], error["column"]) == (2, 27)


PYENV = Path.home() / ".pyenv" / "versions"


def _pythons() -> list[str]:
    found = sorted(PYENV.glob("3.*/bin/python"))
    want = ("3.9.", "3.12.", "3.13.")
    return [str(p) for p in found if p.parent.parent.name.startswith(want)]


@pytest.mark.parametrize("attach", ["start", "hit"])
@pytest.mark.parametrize("python", _pythons() or [pytest.param("", marks=pytest.mark.skip)])
def test_runtime_on_other_pythons(tmp_path: Path, python: str, attach: str) -> None:
    """The runtime and the in-rank debugger on 3.9 and on 3.12+ (sys.monitoring)."""
    script = str(SCRIPTS / "single.py")
    line = line_of("single.py")
    launch = Launch(["--ranks", "0", "--attach", attach, "--break", f"{script}:{line}", "--",
                     python, script], tmp_path)
    try:
        _debug_one_stop(launch, script, line, 0)
    finally:
        launch.close()


def test_a_chosen_rank_that_never_starts_is_named(tmp_path: Path) -> None:
    """``accelerate launch --cpu --num_processes 2`` starts one process (no rank 1): the
    user is told which chosen rank never started and why that may be, not left waiting."""
    script = tmp_path / "one.py"
    script.write_text("import time\ntime.sleep(6)\n")
    launch = Launch(["--ranks", "1", "--", tool("accelerate"), "launch", "--cpu",
                     "--num_processes", "2", str(script)], tmp_path,
                    env={"RANKDEBUG_MISSING_RANK_S": "2"})
    try:
        assert launch.exited() == 0
        said = launch.stderr()
        assert "rank(s) 1 chosen but not started after 2 s" in said, said[-2000:]
        assert "accelerate launch --cpu starts one" in said
    finally:
        launch.close()


def test_accelerate_with_one_process_debugs_its_child(tmp_path: Path) -> None:
    """``accelerate launch --num_processes 1`` runs the script in a child python with no rank
    variable (its simple launcher): that child is rank 0, debugged; accelerate's own process
    is not."""
    pytest.importorskip("accelerate")
    script = str(SCRIPTS / "single.py")
    launch = Launch(["--ranks", "0", "--", tool("accelerate"), "launch", "--cpu",
                     "--num_processes", "1", "--num_machines", "1", "--mixed_precision", "no",
                     "--dynamo_backend", "no", script], tmp_path)
    try:
        ev = launch.event("listening")
        assert ev["rank"] == 0
        _debug_one_stop_at(launch, ev, script, line_of("single.py"))
    finally:
        launch.close()


def _debug_one_stop_at(launch: Launch, ev: dict[str, object], script: str, line: int) -> None:
    client = DAPClient(str(ev["host"]), int(str(ev["port"])))
    client.attach({script: [line]})
    stopped = client.stopped()
    assert stopped["reason"] == "breakpoint"
    frame = client.top_frame(stopped["threadId"])
    assert frame["line"] == line and frame["source"]["path"] == script
    client.request("setBreakpoints", {"source": {"path": script}, "breakpoints": []})
    client.cont(stopped["threadId"])
    assert launch.exited() == 0
    client.close()
