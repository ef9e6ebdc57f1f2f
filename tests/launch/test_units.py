"""Fast checks of the pieces: rank detection, the registry, the guard, ports."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rankdebug.runtime import bootstrap, registry


def test_detect_rank_per_launcher() -> None:
    torch_vars = "RANK/LOCAL_RANK/WORLD_SIZE"
    assert bootstrap.detect_rank({"RANKDEBUG_RANKVARS": torch_vars}) is None  # torchrun agent
    assert bootstrap.detect_rank(
        {"RANKDEBUG_RANKVARS": torch_vars, "RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4"}
    ) == (3, 1, 4)
    slurm = "RANK/LOCAL_RANK/WORLD_SIZE,SLURM_PROCID/SLURM_LOCALID/SLURM_NTASKS"
    assert bootstrap.detect_rank({"RANKDEBUG_RANKVARS": slurm, "SLURM_PROCID": "2",
                                  "SLURM_LOCALID": "0"}) == (2, 0, None)
    assert bootstrap.detect_rank({"RANKDEBUG_RANKVARS": "RANK/LOCAL_RANK/WORLD_SIZE,=0"}) == (
        0, 0, None)
    assert bootstrap.detect_rank({"OMPI_COMM_WORLD_RANK": "5"}) == (5, None, None)
    # msrun: LOCAL_RANK where MindSpore sets it, else DEVICE_ID; the scan reads the same table
    from rankdebug.jobs.proc_scan import rank_vars

    ms = {"RANKDEBUG_RANKVARS": bootstrap.MINDSPORE_VARS, "RANK_ID": "6", "DEVICE_ID": "2",
          "RANK_SIZE": "8"}
    assert bootstrap.detect_rank(ms) == (6, 2, 8)
    assert bootstrap.detect_rank({**ms, "LOCAL_RANK": "1"}) == (6, 1, 8)
    found = rank_vars(ms)
    assert found is not None and (found.rank, found.local_rank, found.world_size) == (6, 2, 8)


def test_rank_chosen() -> None:
    assert bootstrap.rank_chosen("1,3", 3, 3)
    assert not bootstrap.rank_chosen("1,3", 2, 2)
    assert bootstrap.rank_chosen("0-3", 2, None)
    assert bootstrap.rank_chosen("local0", 4, 0)
    assert not bootstrap.rank_chosen("local0", 5, 1)
    assert bootstrap.rank_chosen("all", 17, None)


def test_registry_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    job = registry.new_job_id()
    folder = Path(registry.create_job(job, {"pid": os.getpid()}))
    registry.write_rank(job, {"rank": 1, "port": 1234, "state": "starting"})
    registry.update_rank(job, 1, state="listening", pid=42)
    assert folder.parent == runtime / "rankdebug"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    for f in folder.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600
    entry = registry.read_job(job)
    assert entry is not None and entry["ranks"][0]["state"] == "listening"
    assert [j["job"] for j in registry.list_jobs()] == [job]
    registry.remove_job(job)
    assert registry.read_job(job) is None


def test_prune_removes_only_jobs_whose_supervisor_is_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    registry.create_job("live", {"pid": os.getpid()})
    registry.create_job("dead", {"pid": dead.pid})
    registry.create_job("elsewhere", {"pid": dead.pid, "host": "another-host"})
    (runtime / "rankdebug" / "half").mkdir()  # no job.json yet: a job being created
    assert registry.prune() == ["dead"]
    assert sorted(p.name for p in (runtime / "rankdebug").iterdir()) == [
        "elsewhere", "half", "live"]


def test_guard_patches_real_c10d_without_importing_torch_first() -> None:
    code = (
        "import sys, datetime\n"
        "from rankdebug.runtime import bootstrap\n"
        "bootstrap.install_guard(3600)\n"
        "assert 'torch' not in sys.modules\n"
        "import torch.distributed as dist\n"
        "c = dist.distributed_c10d\n"
        "assert c._get_default_timeout(dist.Backend.GLOO) == datetime.timedelta(hours=1)\n"
        "print(c.init_process_group.__rankdebug_guard__,\n"
        "      dist.init_process_group is c.init_process_group)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]


def test_ports_skip_ports_in_use_and_promised() -> None:
    import socket

    from rankdebug.supervise import ports

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        base = busy.getsockname()[1]
        got = ports.choose([0, 1, 2], "127.0.0.1", base, taken={base + 1})
    assert got[0] != base and base + 1 not in got.values()
    assert len(set(got.values())) == 3 and min(got.values()) > base
    free = ports.choose([0, 1], "127.0.0.1", 0, taken=set())
    assert len(set(free.values())) == 2


def test_dap_endpoints_send_each_message_at_once() -> None:
    """The gate's connections (to the client, to the adapter) without Nagle's delay; a Unix
    socket (another node's adapter, forwarded) is left as it is."""
    import socket

    from rankdebug.supervise.gates.dapwire import Endpoint

    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname()[:2])
        accepted, _ = server.accept()
        ends = [Endpoint(client), Endpoint(accepted)]
        try:
            assert [e.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for e in ends] \
                == [1, 1]
        finally:
            for e in ends:
                e.close()
    a, b = socket.socketpair()
    Endpoint(a).close()
    b.close()


def test_one_port_rule_for_the_supervisor_the_ranks_and_launch_json(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The supervisor offers the chosen ranks base, base+1, ... in order (as launch.json's
    debugpy configurations say); a rank it reserved nothing for takes any free port, never
    base + its rank number (which could be another rank's reserved port)."""
    from rankdebug.runtime import debugpy_start
    from rankdebug.runtime.port_rule import on_port_or_any, port_of
    from rankdebug.supervise import ports

    base = next(b for b in range(20000, 60000, 97)
                if all(ports.is_free("127.0.0.1", b + i) for i in range(3)))
    got = ports.choose([1, 3, 5], "127.0.0.1", base, taken=set())
    assert got == {r: port_of(base, i) for i, r in enumerate([1, 3, 5])}
    assert port_of(0, 3) == 0 and port_of(65535, 1) == 0
    monkeypatch.setenv("RANKDEBUG_PORTS", f"1:{base},3:{base + 1}")
    monkeypatch.setenv("RANKDEBUG_BASE_PORT", str(base))  # an older supervisor's variable
    monkeypatch.delenv("RANKDEBUG_NODE", raising=False)
    assert debugpy_start._port_for(3) == base + 1
    assert debugpy_start._port_for(1) == base
    assert debugpy_start._port_for(2) == 0  # base + 2 would be rank 5's
    tries: list[int] = []

    def start(port: int) -> int:
        tries.append(port)
        if port:
            raise OSError("taken")
        return 4242
    assert on_port_or_any(base, start) == 4242 and tries == [base, 0]

    def refuse(port: int) -> int:
        tries.append(port)
        raise OSError("no port at all")
    tries.clear()
    with pytest.raises(OSError):
        on_port_or_any(0, refuse)
    assert tries == [0]  # any free port failing is not tried again


def test_launch_json_ports_follow_the_rule() -> None:
    from rankdebug import debugplan
    from rankdebug.command import plan_argv
    from rankdebug.debugplan import Caller
    from rankdebug.debugplan.launch_json import launch_json
    from rankdebug.debugplan.options import LaunchOptions
    from rankdebug.debugplan.origin import Origin
    from rankdebug.runtime.port_rule import port_of

    plan = plan_argv(["torchrun", "--nproc_per_node", "8", "t.py"], cwd=Path("/"))
    d = debugplan.make(plan, Origin.of_argv(["x"]), Caller(cwd="/"), "2,5,7",
                       LaunchOptions(base_port=6000))
    out = launch_json(d, workspace=None, extra_env={})
    ports = {c["name"].split("rank ")[1].split(" ")[0]: c["connect"]["port"]
             for c in out["configurations"] if c.get("type") == "debugpy" and "connect" in c}
    assert ports == {"2": port_of(6000, 0), "5": port_of(6000, 1), "7": port_of(6000, 2)}
