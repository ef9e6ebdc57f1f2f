"""Each diagnostic on launch commands, its range, and its quick fix applied."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import Doc, apply_edit, by_code, open_doc

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def fix(doc: Doc, diag: types.Diagnostic) -> str:
    """The document text after the diagnostic's quick fix."""
    acts = await doc.actions(diag)
    assert len(acts) == 1, acts
    act = acts[0]
    assert act.kind == types.CodeActionKind.QuickFix
    assert act.edit is not None and act.edit.changes is not None
    (edit,) = act.edit.changes[doc.uri]
    return apply_edit(doc.text, edit)


def span(diag: types.Diagnostic) -> tuple[int, int, int, int]:
    r = diag.range
    return r.start.line, r.start.character, r.end.line, r.end.character


async def test_misspelled_flag_is_an_error_with_the_closest_spelling(
        client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, "torchrun --nproc_per_nodes 2 train.py\n")
    (diag,) = by_code(await doc.diagnostics(), "unknown-flag")
    assert diag.severity == types.DiagnosticSeverity.Error
    assert diag.source == "rankdebug"
    assert span(diag) == (0, 9, 0, 26)
    assert "--nproc_per_node" in diag.message
    assert await fix(doc, diag) == "torchrun --nproc_per_node 2 train.py\n"


async def test_more_processes_than_visible_devices(client: LanguageClient,
                                                   workspace: Path) -> None:
    text = "CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 4 train.py\n"
    doc = open_doc(client, workspace, text)
    (diag,) = by_code(await doc.diagnostics(), "too-many-processes")
    assert diag.severity == types.DiagnosticSeverity.Warning
    assert span(diag) == (0, 51, 0, 52)
    assert "2 devices" in diag.message
    assert await fix(doc, diag) == text.replace("4", "2")


async def test_nproc_from_a_variable_gets_no_fix(client: LanguageClient,
                                                 workspace: Path) -> None:
    text = "export CUDA_VISIBLE_DEVICES=0\nN=2\ntorchrun --nproc_per_node $N train.py\n"
    doc = open_doc(client, workspace, text)
    (diag,) = by_code(await doc.diagnostics(), "too-many-processes")
    assert span(diag) == (2, 26, 2, 28)
    assert await doc.actions(diag) == []


async def test_missing_entry_script_suggests_a_near_spelling(client: LanguageClient,
                                                             workspace: Path) -> None:
    text = "torchrun --nproc_per_node 2 trian.py --lr 1\n"
    doc = open_doc(client, workspace, text)
    (diag,) = by_code(await doc.diagnostics(), "missing-script")
    assert span(diag) == (0, 28, 0, 36)
    assert "trian.py does not exist" in diag.message
    assert await fix(doc, diag) == text.replace("trian.py", "train.py")


async def test_missing_entry_script_next_to_the_document(client: LanguageClient,
                                                         workspace: Path) -> None:
    # scripts/run.sh runs pretrain.py, which lives in scripts/, from the workspace root.
    text = "python pretrain.py --steps 10\n"
    doc = open_doc(client, workspace / "scripts", text, name="run.sh")
    (diag,) = by_code(await doc.diagnostics(), "missing-script")
    assert span(diag) == (0, 7, 0, 18)
    assert await fix(doc, diag) == "python scripts/pretrain.py --steps 10\n"


async def test_existing_script_and_cd_are_fine(client: LanguageClient, workspace: Path) -> None:
    text = "torchrun train.py\ncd scripts\npython pretrain.py\n"
    doc = open_doc(client, workspace, text)
    assert by_code(await doc.diagnostics(), "missing-script") == []


async def test_same_master_port_in_two_jobs_at_once(client: LanguageClient,
                                                    workspace: Path) -> None:
    text = (
        "torchrun --nproc_per_node 2 --master_port 29600 train.py &\n"
        "torchrun --nproc_per_node 2 --master_port 29600 train.py\n"
    )
    doc = open_doc(client, workspace, text)
    (diag,) = by_code(await doc.diagnostics(), "port-in-use")
    assert span(diag) == (1, 42, 1, 47)
    assert "line 1" in diag.message
    assert await fix(doc, diag) == text[:text.rindex("29600")] + "29601 train.py\n"


async def test_default_master_port_twice_inserts_one(client: LanguageClient,
                                                     workspace: Path) -> None:
    text = "torchrun --nproc_per_node 2 train.py &\ntorchrun --nproc_per_node 2 train.py\n"
    doc = open_doc(client, workspace, text)
    (diag,) = by_code(await doc.diagnostics(), "port-in-use")
    assert "29500" in diag.message
    fixed = await fix(doc, diag)
    assert fixed.splitlines()[1] == "torchrun --master_port 29501 --nproc_per_node 2 train.py"


async def test_wait_between_jobs_means_no_port_clash(client: LanguageClient,
                                                     workspace: Path) -> None:
    text = (
        "torchrun --master_port 29600 train.py &\nwait\n"
        "torchrun --master_port 29600 train.py\n"
        "torchrun --master_port 29600 train.py\n"
    )
    doc = open_doc(client, workspace, text)
    assert by_code(await doc.diagnostics(), "port-in-use") == []


async def test_launch_without_use_env_while_the_script_reads_local_rank(
        client: LanguageClient, workspace: Path) -> None:
    text = "python -m torch.distributed.launch --nproc_per_node 2 train.py\n"
    doc = open_doc(client, workspace, text)
    diags = await doc.diagnostics()
    (diag,) = by_code(diags, "use-env")
    assert by_code(diags, "local-rank-arg") == []  # replaced by the finding
    assert span(diag) == (0, 10, 0, 34)
    assert await fix(doc, diag) == text.replace("launch ", "launch --use-env ")
    fixed = open_doc(client, workspace, await fix(doc, diag))
    assert by_code(await fixed.diagnostics(), "use-env") == []


async def test_script_taking_local_rank_argument_is_fine(client: LanguageClient,
                                                         workspace: Path) -> None:
    doc = open_doc(client, workspace, "python -m torch.distributed.launch args_train.py\n")
    assert by_code(await doc.diagnostics(), "use-env") == []


async def test_unknown_values_are_hints_not_warnings(client: LanguageClient,
                                                     workspace: Path) -> None:
    doc = open_doc(client, workspace, "torchrun --nproc_per_node $NGPUS train.py\n")
    diags = by_code(await doc.diagnostics(), "unknown-value")
    assert diags
    assert {d.severity for d in diags} == {types.DiagnosticSeverity.Hint}


async def test_diagnostics_clear_when_fixed_and_on_close(client: LanguageClient,
                                                         workspace: Path) -> None:
    doc = open_doc(client, workspace, "torchrun --nproc_per_nodes 2 train.py\n")
    assert by_code(await doc.diagnostics(), "unknown-flag")
    doc.replace("torchrun --nproc_per_node 2 train.py\n")
    assert by_code(await doc.diagnostics(), "unknown-flag") == []
    doc.replace("torchrun --nproc_per_nodes 2 train.py\n")
    assert by_code(await doc.diagnostics(), "unknown-flag")
    doc.close()
    for _ in range(100):
        if not client.diagnostics.get(doc.uri):
            break
        await asyncio.sleep(0.02)
    assert list(client.diagnostics[doc.uri]) == []


async def test_code_actions_only_in_range(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, "echo hi\ntorchrun --nproc_per_nodes 2 train.py\n")
    await doc.diagnostics()
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc.ident,
        range=types.Range(start=types.Position(line=0, character=0),
                          end=types.Position(line=0, character=3)),
        context=types.CodeActionContext(diagnostics=[])))
    assert not result
    # Without the client's copy of the diagnostic the server's own is used.
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc.ident,
        range=types.Range(start=types.Position(line=1, character=12),
                          end=types.Position(line=1, character=12)),
        context=types.CodeActionContext(diagnostics=[])))
    assert result and isinstance(result[0], types.CodeAction)
    assert result[0].title == "Change to --nproc_per_node"
