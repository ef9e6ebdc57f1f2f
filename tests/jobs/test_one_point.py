"""Compare at one point: on a training DDP job (gloo, 2 ranks, weights equal after every
step and changing every step), ``rankdebug eval`` of a weight reads every rank after the same
optimizer step and never reports a phantom difference; ``--now`` reads each rank as it
answers, says each rank's collective count, and warns when they differ."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from launched import Launch, cli, cli_json, start, steps, tool, wait_for

EXPR = "model[0].weight"
COMPARES = 30


def _training(tmp: Path) -> Launch:
    launch = start(tmp, ["--arm"], "ddp_train.py")
    launch.event("job")
    wait_for("both ranks to train", lambda: steps(tmp, 0) > 5 and steps(tmp, 1) > 5)
    return launch


def _compare(job: str, *extra: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    lines = cli_json("eval", job, "all", EXPR, *extra, timeout=120)
    *results, compare = lines
    assert compare["event"] == "compare", lines
    return results, compare


@pytest.mark.timeout(600)
def test_a_weight_compared_on_a_training_job_is_read_at_one_step(tmp_path: Path) -> None:
    launch = _training(tmp_path)
    try:
        assert launch.job is not None
        phantom, seqs = 0, set()
        for _ in range(COMPARES):
            results, compare = _compare(launch.job)
            assert all(r["event"] == "result" for r in results), results
            at = compare["at"]
            assert at is not None and at["collective"]["op"] == "optimizer.step", compare
            assert {r["seq"] for r in results} == {at["collective"]["seq"]}, (results, at)
            seqs.add(at["collective"]["seq"])
            phantom += len(compare["groups"]) > 1
        now_phantom, warned = 0, 0
        for _ in range(COMPARES):
            results, compare = _compare(launch.job, "--now")
            assert compare["at"] is None
            assert all(isinstance(r["seq"], int) for r in results), results
            if len(compare["groups"]) > 1:
                now_phantom += 1
                # A difference read as each answered is said to be maybe that, not divergence.
                assert "not at one point of training" in compare.get("warning", ""), compare
            warned += "warning" in compare
        print(f"{COMPARES} compares of an unchanged weight on a training DDP job: "
              f"{phantom} phantom groups at one step ({len(seqs)} different steps read); "
              f"--now: {now_phantom} phantom groups, {warned} warned")
        assert phantom == 0
        assert len(seqs) > 1  # the job trained on between compares
        human = cli("eval", launch.job, "all", EXPR)
        assert "read after the same optimizer step on every rank" in human.stdout, human
        (tmp_path / "stop").write_text("")
        assert launch.exited(120) == 0
    finally:
        launch.close()


@pytest.mark.timeout(600)
def test_a_deepspeed_zero_job_is_read_at_one_step(tmp_path: Path) -> None:
    """DeepSpeed's ZeRO issues its collectives on a data-parallel group of its own (the
    default group's count stays 0): the count over every group still finds one step."""
    example = Path(__file__).resolve().parents[2] / "examples" / "smoke" / "deepspeed"
    config = json.loads((example / "ds_config.json").read_text())
    config.pop("csv_monitor", None)  # it writes beside the job's working folder
    (tmp_path / "ds_config.json").write_text(json.dumps(config))
    launch = Launch(["--arm", "--", tool("deepspeed"), "--num_gpus", "2",
                     str(example / "pretrain.py"), "--deepspeed", "--deepspeed_config",
                     str(tmp_path / "ds_config.json"), "--train-iters", "100000",
                     "--seq-length", "32", "--log-interval", "100000", "--save-interval",
                     "100000", "--eval-interval", "100000"], tmp_path)
    try:
        launch.event("job")
        assert launch.job is not None
        job = launch.job

        def compared() -> dict[str, Any] | None:
            lines = cli_json("eval", job, "all", "engine.module.head.weight", timeout=120)
            compare = lines[-1]
            return compare if len(lines) == 3 and all(
                line.get("event") == "result" for line in lines[:2]) else None

        first = wait_for("both ranks to answer", compared, 180)
        for compare in [first, *(compared() for _ in range(4))]:
            assert compare is not None
            assert compare["at"] is not None and compare["at"]["collective"]["seq"] > 0, compare
            assert len(compare["groups"]) == 1, compare
    finally:
        launch.close()
