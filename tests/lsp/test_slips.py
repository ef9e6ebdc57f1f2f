"""A new user's slips in the editor, from the real server: a launcher's name misspelt, an
option's value left out, a file that ends inside an open array."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import apply_edit, by_code, open_doc

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_misspelt_launcher_is_an_error_with_its_fix(client: LanguageClient,
                                                         workspace: Path) -> None:
    text = "export A=1\ntorchrn --nproc_per_node 2 train.py\n"
    doc = open_doc(client, workspace, text)
    (diag,) = by_code(await doc.diagnostics(), "unknown-launcher")
    assert diag.severity == types.DiagnosticSeverity.Error
    assert diag.message == "torchrn: no such program; did you mean torchrun?"
    r = diag.range
    assert (r.start.line, r.start.character, r.end.line, r.end.character) == (1, 0, 1, 7)
    (act,) = await doc.actions(diag)
    assert act.edit is not None and act.edit.changes is not None
    (edit,) = act.edit.changes[doc.uri]
    fixed = apply_edit(text, edit)
    assert fixed == text.replace("torchrn", "torchrun")
    doc.replace(fixed)
    diags = await doc.diagnostics()
    assert by_code(diags, "unknown-launcher") == []
    assert len(await doc.lenses()) > 0  # now a launch command


async def test_value_left_out_is_one_error_at_the_option(client: LanguageClient,
                                                         workspace: Path) -> None:
    doc = open_doc(client, workspace, "torchrun --nproc_per_node train.py\n")
    diags = await doc.diagnostics()
    assert [d.code for d in diags] == ["missing-value"]
    assert diags[0].range.start.character == 9


async def test_array_open_at_the_end_keeps_the_lens(client: LanguageClient,
                                                    workspace: Path) -> None:
    text = "torchrun --nproc_per_node 2 train.py\nARGS=(\n  --lr 1 \\\n"
    doc = open_doc(client, workspace, text)
    (diag,) = by_code(await doc.diagnostics(), "syntax")
    assert diag.range.start.line == 1 and "ARGS=(" in diag.message
    lenses = await doc.lenses()
    assert lenses and {lens.range.start.line for lens in lenses} == {0}
