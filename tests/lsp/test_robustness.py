"""Bad and big documents: diagnostics or nothing, never a crashed or blocked server."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import LENSES_PER_COMMAND, by_code, open_doc, titles

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def alive(client: LanguageClient, workspace: Path) -> None:
    """The server still answers, with the right lenses."""
    doc = open_doc(client, workspace, "torchrun --nproc_per_node 2 train.py\n")
    assert titles(await doc.lenses())[0] == (0, "▶ Debug · 2 ranks")


async def test_nul_character_is_one_error_at_its_place(client: LanguageClient,
                                                       workspace: Path) -> None:
    doc = open_doc(client, workspace, "torchrun train.py\necho a\x00b\n")
    diags = await doc.diagnostics()
    (diag,) = by_code(diags, "unreadable")
    assert diag.severity == types.DiagnosticSeverity.Error
    assert (diag.range.start.line, diag.range.start.character) == (1, 6)
    assert await doc.lenses() == []
    await alive(client, workspace)


async def test_binary_garbage(client: LanguageClient, workspace: Path) -> None:
    garbage = bytes(range(1, 256)).decode("latin-1") * 200
    doc = open_doc(client, workspace, garbage + "\ntorchrun --nproc_per_node 2 train.py\n")
    await doc.diagnostics()  # whatever they are, they come
    await alive(client, workspace)


async def test_one_megabyte_line(client: LanguageClient, workspace: Path) -> None:
    line = "echo " + "x" * (1 << 20)
    doc = open_doc(client, workspace, line + "\ntorchrun --nproc_per_node 2 train.py\n")
    assert titles(await doc.lenses())[0] == (1, "▶ Debug · 2 ranks")
    await alive(client, workspace)


async def test_unterminated_quotes_and_syntax_errors(client: LanguageClient,
                                                     workspace: Path) -> None:
    doc = open_doc(client, workspace, "torchrun train.py\nif [ x; then\n  echo 'open\n")
    await doc.diagnostics()
    await alive(client, workspace)


async def test_one_megabyte_markdown(client: LanguageClient, workspace: Path) -> None:
    prose = ("Training notes: learning rates, schedules and checkpoints. " * 16 + "\n\n") * 20
    block = "```bash\ntorchrun --nproc_per_node 2 train.py\n```\n\n"
    text = (prose + block) * (1_000_000 // len(prose + block) + 1)
    assert len(text) > 1_000_000
    doc = open_doc(client, workspace, text, suffix=".md", language="markdown")
    lenses = await doc.lenses()
    assert len(lenses) == LENSES_PER_COMMAND * text.count("torchrun")


async def test_huge_markdown_does_not_block_other_documents(client: LanguageClient,
                                                            workspace: Path) -> None:
    # Thousands of commands: seconds of work, done in the pool while others are served.
    block = "Some prose about training.\n\n```bash\ntorchrun --nproc_per_node 2 train.py\n```\n\n"
    text = block * (1_000_000 // len(block))
    big = open_doc(client, workspace, text, suffix=".md", language="markdown")
    started = time.perf_counter()
    big_task = asyncio.ensure_future(big.lenses())
    await asyncio.sleep(0.2)
    await alive(client, workspace)
    small_done = time.perf_counter() - started
    lenses = await big_task
    big_done = time.perf_counter() - started
    assert len(lenses) == LENSES_PER_COMMAND * text.count("torchrun")
    assert small_done < big_done / 2, (small_done, big_done)


async def test_five_thousand_line_script(client: LanguageClient, workspace: Path) -> None:
    lines = []
    for i in range(1250):
        lines += [f"LR_{i}=1e-{i % 5 + 1}", f"echo step {i}", "if [ -n \"$X\" ]; then",
                  f"  torchrun --nproc_per_node {i % 8 + 1} train.py --lr $LR_{i}\nfi"]
    text = "\n".join(lines) + "\n"
    assert text.count("\n") >= 5000
    doc = open_doc(client, workspace, text)
    started = time.perf_counter()
    lenses = await doc.lenses()
    assert len(lenses) == LENSES_PER_COMMAND * 1250
    assert time.perf_counter() - started < 60


async def test_stale_versions_are_skipped(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, "torchrun --nproc_per_node 1 train.py\n")
    for n in range(2, 30):
        doc.replace(f"torchrun --nproc_per_node {n} train.py\n")
    assert titles(await doc.lenses())[0] == (0, "▶ Debug · 29 ranks")


async def test_too_large_documents_are_not_read(client: LanguageClient,
                                                workspace: Path) -> None:
    doc = open_doc(client, workspace, "torchrun train.py\n" + "#" * (17 << 20) + "\n")
    diags = await doc.diagnostics()
    assert by_code(diags, "too-large")
    assert await doc.lenses() == []
    await alive(client, workspace)


async def test_crlf_line_endings(client: LanguageClient, workspace: Path) -> None:
    text = "echo start\r\ntorchrun --nproc_per_node 2 \\\r\n    train.py\r\n"
    doc = open_doc(client, workspace, text)
    diags = await doc.diagnostics()
    (crlf,) = by_code(diags, "crlf")
    assert crlf.range.start.line == 0
    assert titles(await doc.lenses())[0] == (1, "▶ Debug · 2 ranks")
