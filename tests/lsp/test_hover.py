"""Hover: the command's summary, and an option's meaning and value."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import open_doc

pytestmark = pytest.mark.asyncio(loop_scope="module")

SCRIPT = """export OMP_NUM_THREADS=4
CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nnodes 2 --nproc_per_node 4 \\
    --master_port 29501 train.py --model llama --lr 1e-4
torchrun --nproc_per_node $NGPUS train.py
"""


def text_of(h: types.Hover | None) -> str:
    assert h is not None
    assert isinstance(h.contents, types.MarkupContent)
    assert h.contents.kind == types.MarkupKind.Markdown
    return h.contents.value


async def test_hover_summarises_the_command(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    h = await doc.hover(2, 30)
    value = text_of(h)
    assert "**torchrun** · 2 nodes × 4 processes per node = **8 ranks**" in value
    assert "script `train.py` `--model llama --lr 1e-4`" in value
    assert "`CUDA_VISIBLE_DEVICES=0,1,2,3`" in value
    assert "`OMP_NUM_THREADS`" in value
    assert "port `29501`" in value
    assert h is not None and h.range is not None
    assert (h.range.start.line, h.range.end.line) == (1, 2)


async def test_hover_on_an_option_explains_it(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    value = text_of(await doc.hover(1, 56))
    assert value.startswith("**--nproc_per_node** · torchrun option `nproc_per_node`")
    assert "Workers per node" in value
    assert "Value: `4`" in value


async def test_hover_says_what_is_unknown_and_why(client: LanguageClient,
                                                  workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    value = text_of(await doc.hover(3, 2))
    assert "= **? ranks**" in value
    assert "**Not known here**" in value
    assert "NGPUS" in value


async def test_no_hover_outside_commands(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, "# a comment\necho hi\n" + SCRIPT)
    assert await doc.hover(0, 3) is None
    assert await doc.hover(1, 2) is None
