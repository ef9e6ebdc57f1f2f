"""The quick-pick's typed selectors (tp=0, pp=last tp=0) checked by ``rankdebug.checkRanks``
through the coordinates the plan carries, as the extension sends them back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from .conftest import execute, open_doc

pytestmark = pytest.mark.asyncio(loop_scope="module")

MEGATRON = ("torchrun --nnodes 2 --node_rank 0 --nproc_per_node 8 pretrain_gpt.py "
            "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2\n")


async def _plan(client: LanguageClient, workspace: Path) -> dict[str, Any]:
    doc = open_doc(client, workspace, MEGATRON)
    plan = await execute(client, "rankdebug.plan", {"uri": doc.uri, "line": 0})
    assert plan["coords"]["dims"] == {"tp": 4, "dp": 2, "pp": 2}
    return plan


async def test_selectors_resolve_through_the_plans_coords(client: LanguageClient,
                                                          workspace: Path) -> None:
    plan = await _plan(client, workspace)
    base = {"ranks": plan["ranks"], "worldSize": plan["world_size"], "coords": plan["coords"]}

    async def check(spec: str, **more: Any) -> dict[str, Any]:
        reply: dict[str, Any] = await execute(client, "rankdebug.checkRanks",
                                              {**base, "spec": spec, **more})
        return reply

    # Megatron's order tp-cp-dp-pp: tp fastest, then dp (stride 4), then pp (stride 8).
    assert await check("pp=last tp=0") == {"rankSpec": "8,12", "ranks": [8, 12], "arm": False}
    assert (await check("dp=0 tp=0"))["ranks"] == [0, 8]  # first rank of each pipeline stage
    assert (await check("dp=0 pp=0"))["ranks"] == [0, 1, 2, 3]  # one tensor-parallel group
    assert (await check("dp=1 and tp=0-1"))["ranks"] == [4, 5, 12, 13]
    assert await check("tp=3 arm", allowArm=True) == {
        "rankSpec": "3,7,11,15", "ranks": [3, 7, 11, 15], "arm": True}
    # Plain specs are read as before, coords or not.
    assert (await check("0-3,8"))["ranks"] == [0, 1, 2, 3, 8]
    unknown = await check("pp=1 xp=0")
    assert unknown["error"]["message"].startswith("--ranks: unknown dimension 'xp'")
    assert unknown["error"]["column"] == 6
    past = await check("tp=4")
    assert "past the job's tp (size 4: tp=0-3)" in past["error"]["message"]


async def test_a_selector_without_coords_says_where_they_come_from(
        client: LanguageClient, workspace: Path) -> None:
    plan = await _plan(client, workspace)
    got = await execute(client, "rankdebug.checkRanks",
                        {"spec": "tp=0", "ranks": plan["ranks"], "coords": None})
    assert "selects by parallel coordinates, and this job's are not known" in \
        got["error"]["message"]


@pytest.mark.parametrize("coords", [
    [], "tp", {"dims": {}, "ranks": []}, {"dims": {"tp": 0}, "ranks": []},
    {"dims": {"tp": 2}, "ranks": [{"tp": 2}]}, {"dims": {"tp": 2}, "ranks": [{"dp": 0}]},
    {"dims": {"tp": True}, "ranks": [{"tp": 0}]}, {"dims": {"tp": 2}, "ranks": [[0]]},
    {"dims": {"tp": 2}, "ranks": {"0": {"tp": 0}}},
])
async def test_malformed_coords_are_one_line_errors(client: LanguageClient,
                                                    coords: Any) -> None:
    got = await execute(client, "rankdebug.checkRanks", {"spec": "tp=0", "coords": coords})
    assert got["error"]["message"].startswith("coords must be null or the plan's coords"), got
    assert "\n" not in got["error"]["message"]
