"""Parallel coordinates read from the running job: each rank's handler reads its DeviceMesh
(or Megatron's ``parallel_state``), ``rankdebug jobs`` shows them, the registry keeps them,
and RANKS arguments select by them. Real torchrun jobs on gloo, started by ``rankdebug launch
--arm``."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from launched import SCRIPTS, Launch, cli, cli_json, start, tool, wait_for

from rankdebug.jobs import job_coords
from rankdebug.runtime import coords as rank_coords
from rankdebug.runtime import handler, registry, wire

pytestmark = pytest.mark.timeout(300)


def _ready(tmp: Path, n: int) -> bool:
    return all((tmp / f"ready-{r}").exists() for r in range(n))


def _mesh_job(tmp: Path, layout: str, nproc: int = 4) -> Launch:
    env = {"LAYOUT": layout}
    if layout == "megatron":
        env["PYTHONPATH"] = os.pathsep.join(
            [str(SCRIPTS / "fake_megatron"), os.environ.get("PYTHONPATH", "")])
    launch = start(tmp, ["--arm"], "mesh_job.py", nproc=nproc, env=env)
    launch.event("job")
    wait_for("every rank's layout", lambda: _ready(tmp, nproc), 180, launch)
    return launch


def _ranks(job: str) -> dict[int, dict[str, Any]]:
    out = cli_json("jobs", job, "--no-gpu")[0]
    (found,) = out["jobs"]
    return {r["rank"]: r for r in found["ranks"]}


def _end(launch: Launch, tmp: Path) -> None:
    (tmp / "stop").touch()
    assert launch.exited(120) == 0


def test_a_2d_mesh_gives_each_rank_its_coordinates(tmp_path: Path) -> None:
    launch = _mesh_job(tmp_path, "mesh")
    try:
        assert launch.job is not None
        job = launch.job
        want = {r: {"dp": r // 2, "tp": r % 2} for r in range(4)}

        def recorded() -> bool:
            entries = {e["rank"]: e for e in (registry.read_job(job) or {})["ranks"]}
            return all(entries.get(r, {}).get("coords") == want[r] for r in range(4))

        # Each rank records them in its registry entry unasked, once the mesh is made;
        # ``jobs`` reads them there (it asks no rank).
        wait_for("the coordinates in the registry", recorded, 60, launch)
        entry = registry.read_rank(job, 3) or {}
        assert (entry["coord_sizes"], entry["coords_from"], entry["coord_dims"]) == (
            {"dp": 2, "tp": 2}, "device_mesh", ["dp", "tp"])
        ranks = _ranks(job)
        assert [list(ranks[r]["coords"].items()) for r in range(4)] == [
            list(want[r].items()) for r in range(4)]

        # The handler answers ``coords`` itself, and only for its own rank.
        sock = str(ranks[2]["socket"])
        reply = wire.ask(sock, {"command": "coords", "extra": [1, {"x": None}]})
        assert (reply["coords"], reply["sizes"], reply["source"]) == (
            {"dp": 1, "tp": 0}, {"dp": 2, "tp": 2}, "device_mesh")
        with pytest.raises(wire.WireError, match="not rank 0's"):
            wire.ask(sock, {"command": "coords", "rank": 0})

        table = cli("jobs", job, "--no-gpu").stdout
        line = next(ln for ln in table.splitlines() if "rank   3" in ln)
        assert "dp 1 · tp 1" in line, table

        # A selector picks by those coordinates: tp=0 is ranks 0 and 2.
        stacks = cli_json("stacks", job, "--ranks", "tp=0", timeout=120)[0]
        assert sorted(r["rank"] for r in stacks["ranks"]) == [0, 2], stacks
        lines = cli_json("eval", job, "dp=1", "dist.get_rank()", timeout=120)
        assert sorted(ln["rank"] for ln in lines if ln["event"] == "result") == [2, 3], lines
        # This job makes no optimizer: a compare reads its ranks where they are at once and
        # says so, instead of waiting --timeout for a step that never comes.
        compare = cli_json("eval", job, "all", "1", "--timeout", "60", timeout=120)[-1]
        assert compare["at"] is None, compare
        assert compare["warning"].startswith("ranks 0-3 have no optimizer yet"), compare
        lines = cli_json("diagnose", job, "--ranks", "dp=0 and tp=1", "--samples", "2",
                         timeout=120)
        assert [ln["rank"] for ln in lines if ln["event"] == "rank"] == [1], lines
        done = next(ln for ln in lines if ln["event"] == "done")
        assert (done["ranks_read"], done["ranks_unread"]) == (1, []), done
        attached = cli_json("attach", job, "dp=last tp=first",
                            timeout=120)[-1]
        assert (attached["event"], attached["rank"]) == ("listening", 2), attached

        # Selectors this job cannot answer: one line, the column, exit 2.
        for verb, where, why in (
                (["stacks", job, "--ranks"], "pp=0",
                 "unknown dimension 'pp': this job has dp, tp (column 1 of 'pp=0')"),
                (["stacks", job, "--ranks"], "dp=1 tp=2",
                 "tp=2 is past the job's tp (size 2: tp=0-1) (column 9 of 'dp=1 tp=2')"),
                (["diagnose", job, "--ranks"], "tp=0 and", "(column 9 of 'tp=0 and')"),
                (["eval", job], "dp=0 tp", "(column 8 of 'dp=0 tp')"),
                (["attach", job], "tp=2", "tp=2 is past the job's tp (size 2")):
            out = cli(*verb, where, *([] if verb[0] != "eval" else ["1"]))
            assert out.returncode == 2, (verb, out)
            said = out.stdout + out.stderr
            assert why in said and "Traceback" not in said, (verb, where, said)
        _end(launch, tmp_path)
    finally:
        launch.close()


def test_megatron_parallel_state_gives_the_coordinates(tmp_path: Path) -> None:
    """A stand-in ``megatron.core.parallel_state`` (its real function names, real gloo
    groups in Megatron's order: tp fastest, then dp, then pp) on the job's path."""
    launch = _mesh_job(tmp_path, "megatron")
    try:
        assert launch.job is not None
        job = launch.job
        want = {r: {"pp": r // 2, "dp": 0, "tp": r % 2} for r in range(4)}

        def shown() -> dict[int, dict[str, Any]] | None:
            got = _ranks(job)
            return got if {r: got[r]["coords"] for r in got} == want else None

        ranks = wait_for("the coordinates", shown, 60, launch)
        assert list(ranks[0]["coords"]) == ["pp", "dp", "tp"]  # outermost first
        reply = wire.ask(str(ranks[1]["socket"]), {"command": "coords"})
        assert reply["source"] == "megatron"
        assert reply["sizes"] == {"pp": 2, "dp": 1, "tp": 2}
        _end(launch, tmp_path)
    finally:
        launch.close()


def test_a_job_without_a_layout_has_no_coordinates(tmp_path: Path) -> None:
    launch = _mesh_job(tmp_path, "none", nproc=2)
    try:
        assert launch.job is not None
        time.sleep(2 * rank_coords.POLL_S + 1)  # past the ranks' own look at the job
        for _ in range(2):
            ranks = _ranks(launch.job)
            assert [ranks[r]["coords"] for r in (0, 1)] == [None, None]
            assert all(ranks[r]["socket"] for r in (0, 1))
        reply = wire.ask(str(ranks[0]["socket"]), {"command": "coords"})
        assert (reply["coords"], reply["sizes"], reply["source"]) == (None, None, None)
        assert "coords" not in (registry.read_rank(launch.job, 0) or {"coords": 1})
        out = cli("stacks", launch.job, "--ranks", "tp=0")
        assert out.returncode == 2 and "not known" in out.stderr, out
        assert "Traceback" not in out.stderr
        _end(launch, tmp_path)
    finally:
        launch.close()


def test_coordinates_read_inside_a_rank_at_each_stage(tmp_path: Path) -> None:
    """``runtime.coords.read`` in each rank of a plain torchrun job: none before a mesh, the
    mesh's once made (kept: the second read is a lookup), the process groups' when
    ``gc.freeze()`` hides the mesh objects, and a mesh that lists ranks out of order read
    from the mesh itself."""
    env = dict(os.environ, MARKER_DIR=str(tmp_path), OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(Path(rank_coords.__file__).parents[2]),
                                         env.get("PYTHONPATH", "")])
    import subprocess

    out = subprocess.run([tool("torchrun"), "--standalone", "--nproc_per_node", "4",
                          str(SCRIPTS / "coords_inside.py")], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=240, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    # DeviceMesh("cpu", [[3, 2], [1, 0]], ("pp", "cp")): where each rank sits in it.
    permuted = {3: (0, 0), 2: (0, 1), 1: (1, 0), 0: (1, 1)}
    for r in range(4):
        said = json.loads((tmp_path / f"coords-{r}.json").read_text())
        mesh = {"coords": {"dp": r // 2, "tp": r % 2}, "sizes": {"dp": 2, "tp": 2},
                "source": "device_mesh"}
        assert said["before"] is None
        assert said["mesh"] == mesh
        assert said["again_ms"] < 1.0
        assert said["frozen"] == dict(mesh, source="process_groups")
        pp, cp = permuted[r]
        assert said["permuted"]["coords"] == {"dp": r // 2, "tp": r % 2, "pp": pp, "cp": cp}


def test_the_handler_answers_coords_without_torch() -> None:
    """In a process whose job has no process group: null, at once."""
    reply = handler.handle({"command": "coords"})
    assert reply == {"event": "coords", "coords": None, "sizes": None, "source": None}
    assert "coords" in handler.COMMANDS


@pytest.mark.parametrize("value", [
    None, [], {}, "dp", {"dp": -1}, {"dp": True}, {"dp": 1.0}, {"dp": "1"}, {"1dp": 0},
    {"dp tp": 0}, {"d" * 41: 0}, {"dp": 1 << 40}, {f"d{i}": 0 for i in range(17)},
    {"dp": [0]}, {"dp": {"x": 0}},
])
def test_bad_recorded_coordinates_are_dropped(value: object) -> None:
    assert job_coords.valid(value) is None


def test_recorded_coordinates_keep_their_order() -> None:
    got = job_coords.valid({"dp": 1, "pp": 0, "tp": 3}, ["pp", "dp", "tp"])
    assert list(got or {}) == ["pp", "dp", "tp"]
    for order in (["pp", "dp"], [["pp"], "dp", "tp"], "pdt", ["pp", "pp", "tp"], None):
        assert list(job_coords.valid({"dp": 1, "pp": 0, "tp": 3}, order) or {}) == [
            "dp", "pp", "tp"]
    assert job_coords.text({"dp": 1, "tp": 3}) == "dp 1 · tp 3"


def test_dimension_names_are_made_selectable() -> None:
    coords: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for name, index, size in (("dp-shard", 1, 2), ("2d", 0, 1), ("tp", 5, 4), ("tp", 0, 8),
                              ("", 0, 1), (3, 0, 1), ("cp", True, 2), ("é", 0, 1)):
        rank_coords._put(coords, sizes, name, index, size)
    # An index past its size is dropped; the first of a name stays.
    assert coords == {"dp_shard": 1, "d2d": 0, "tp": 0, "dim": 0, "_": 0}
    assert sizes == {"dp_shard": 2, "d2d": 1, "tp": 8, "dim": 1, "_": 1}


def test_the_watch_of_a_job_without_a_layout_backs_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job with no torch.distributed (or no layout at its count of groups) is looked at
    less and less often, down to every POLL_MAX_S, not every POLL_S for its whole life."""
    pauses: list[float] = []

    def sleep(s: float) -> None:
        pauses.append(s)
        if len(pauses) == 7:
            monkeypatch.setattr(rank_coords._cache, "found", {"coords": {}})

    monkeypatch.setattr(rank_coords.time, "sleep", sleep)
    monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)
    monkeypatch.setattr(rank_coords._cache, "found", None)
    monkeypatch.setattr(rank_coords._cache, "recorded", True)
    rank_coords._watch()
    assert pauses == [2.0, 4.0, 8.0, 10.0, 10.0, 10.0, 10.0]


def test_compare_within_a_dimension(tmp_path: Path) -> None:
    """``eval --per DIM``: one compare per set of ranks sharing DIM's value. On dp 2 × tp 2,
    a value that is the rank's tp index is equal within each tp (the dp replicas) and
    differs within each dp (the shards)."""
    launch = _mesh_job(tmp_path, "mesh")
    try:
        assert launch.job is not None
        job = launch.job
        wait_for("the coordinates in the registry",
                 lambda: all(r.get("coords") for r in (registry.read_job(job) or {})
                             .get("ranks", [{}])), 60, launch)
        expr = "dist.get_rank() % 2"
        lines = cli_json("eval", job, "all", expr, "--per", "tp", timeout=120)
        compares = [ln for ln in lines if ln["event"] == "compare"]
        assert [(c["per"], [g["ranks"] for g in c["groups"]]) for c in compares] == [
            ({"tp": 0}, [[0, 2]]), ({"tp": 1}, [[1, 3]])], lines
        assert sorted(ln["rank"] for ln in lines if ln["event"] == "result") == [0, 1, 2, 3]
        lines = cli_json("eval", job, "all", expr, "--per", "dp", timeout=120)
        compares = [ln for ln in lines if ln["event"] == "compare"]
        assert [(c["per"], sorted(g["ranks"] for g in c["groups"])) for c in compares] == [
            ({"dp": 0}, [[0], [1]]), ({"dp": 1}, [[2], [3]])], lines
        text = cli("eval", job, "all", expr, "--per", "dp").stdout
        assert "dp 0:" in text and "dp 1:" in text, text
        for per, why in (("xp", "rank 0 has no dimension 'xp' (its coordinates: dp, tp)"),
                         ("tp,", "'' is no dimension name (column 4)"),
                         ("tp,tp", "a dimension is named twice")):
            out = cli("eval", job, "all", expr, "--per", per)
            said = out.stdout + out.stderr
            assert out.returncode == 2 and why in said and "Traceback" not in said, (per, said)
        _end(launch, tmp_path)
    finally:
        launch.close()
