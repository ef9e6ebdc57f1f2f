"""The plan and the debug plan over LSP carry the command's parallel coordinates, and a
rank choice takes selectors (tp=0) resolved through them."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from .conftest import execute, open_doc

pytestmark = pytest.mark.asyncio(loop_scope="module")

MEGATRON = """#!/bin/bash
MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size 2
    --pipeline-model-parallel-size 2
)
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    ${MODEL_PARALLEL_ARGS[@]} --lr 1e-4
"""


async def test_plan_carries_the_layout_and_follows_edits(client: LanguageClient,
                                                         workspace: Path) -> None:
    doc = open_doc(client, workspace, MEGATRON)
    plan = await execute(client, "rankdebug.plan", {"uri": doc.uri, "line": 5})
    coords = plan["coords"]
    assert coords["dims"] == {"tp": 2, "dp": 2, "pp": 2} and coords["source"] == "megatron"
    assert coords["order"] == ["tp", "cp", "dp", "pp"]
    assert coords["ranks"][5] == {"tp": 1, "dp": 0, "pp": 1}
    assert {r["name"]: r["value"] for r in coords["read"]} == {
        "--tensor-model-parallel-size": "2", "--pipeline-model-parallel-size": "2"}
    # The unsaved text is what counts: tp 4 now, and 8 ranks leave dp 1.
    doc.replace(MEGATRON.replace("parallel-size 2\n    --pipeline", "parallel-size 4\n"
                                 "    --pipeline"))
    plan = await execute(client, "rankdebug.plan", {"uri": doc.uri, "line": 5})
    assert plan["coords"]["dims"] == {"tp": 4, "dp": 1, "pp": 2}
    # Sizes the world cannot hold: no layout, and the plan says why.
    doc.replace(MEGATRON.replace("--nproc_per_node 8", "--nproc_per_node 6"))
    plan = await execute(client, "rankdebug.plan", {"uri": doc.uri, "line": 5})
    assert plan["coords"] is None
    assert any("'world_size (6) is not divisible by 4'" in w for w in plan["warnings"])


async def test_debug_plan_resolves_a_selector(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, MEGATRON)
    result = await execute(client, "rankdebug.debugPlan",
                           {"uri": doc.uri, "line": 5, "ranks": "pp=last tp=0"})
    assert result["ranks"] == [4, 6] and result["rankSpec"] == "4,6"
    assert result["argv"][result["argv"].index("--ranks") + 1] == "4,6"
    assert [c["name"] for c in result["configurations"]] == ["rank 4", "rank 6"]
    assert result["plan"]["coords"]["dims"]["tp"] == 2
    bad = await execute(client, "rankdebug.debugPlan",
                        {"uri": doc.uri, "line": 5, "ranks": "pp=1 xp=0"})
    assert bad["error"]["message"].startswith("--ranks: unknown dimension 'xp': this job has")
    assert bad["error"]["column"] == 6
