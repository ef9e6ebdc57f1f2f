"""Code lenses above launch commands: counts, titles, positions, and where there are none."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from .conftest import open_doc, titles

pytestmark = pytest.mark.asyncio(loop_scope="module")

SCRIPT = """#!/bin/bash
export CUDA_VISIBLE_DEVICES=0,1,2,3
echo "starting"
torchrun --nproc_per_node 4 \\
    train.py --lr 1e-4
torchrun --nnodes 2 --nproc_per_node 8 train.py
torchrun --nproc_per_node $NGPUS train.py
python -m pip install -r requirements.txt
python -c 'import torch; print(torch.__version__)'
python setup.py develop
python train.py --epochs 1
ls -la
"""


async def test_lenses_count_ranks_and_sit_on_the_first_line(client: LanguageClient,
                                                            workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    lenses = await doc.lenses()
    assert titles(lenses) == [
        (3, "▶ Debug · 4 ranks"), (3, "Pick ranks…"), (3, "Smoke run"),
        (5, "▶ Debug · 16 ranks"), (5, "Pick ranks…"), (5, "Smoke run"),
        (6, "▶ Debug · ? ranks"), (6, "Pick ranks…"), (6, "Smoke run"),
        (10, "▶ Debug · 1 rank"), (10, "Pick ranks…"), (10, "Smoke run"),
    ]
    first = lenses[0]
    assert first.range.start.character == 0
    assert first.command is not None
    assert first.command.command == "rankdebug.debugCommand"
    assert list(first.command.arguments or []) == [doc.uri, 3]
    assert lenses[1].command is not None
    assert lenses[1].command.command == "rankdebug.pickRanks"
    assert lenses[2].command is not None
    assert lenses[2].command.command == "rankdebug.smokeRun"
    assert list(lenses[2].command.arguments or []) == [doc.uri, 3]


async def test_lenses_follow_edits(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, "torchrun --nproc_per_node 2 train.py\n")
    assert titles(await doc.lenses())[0] == (0, "▶ Debug · 2 ranks")
    doc.edit(0, 26, 27, "6")
    assert titles(await doc.lenses())[0] == (0, "▶ Debug · 6 ranks")
    doc.replace("echo nothing here\n\n" + doc.text.replace("2", "3"))
    assert titles(await doc.lenses()) == [
        (2, "▶ Debug · 3 ranks"), (2, "Pick ranks…"), (2, "Smoke run")]
    doc.replace("echo nothing\n")
    assert await doc.lenses() == []


async def test_markdown_code_blocks_get_lenses(client: LanguageClient, workspace: Path) -> None:
    text = (
        "# Training\n\nRun it like this:\n\n```bash\n"
        "torchrun --nproc_per_node 2 train.py\n```\n\n"
        "Prose with torchrun --nproc_per_node 8 in it.\n\n"
        "```python\nimport torch\n```\n\n"
        "```console\n$ deepspeed --num_gpus 2 train.py\n```\n"
    )
    doc = open_doc(client, workspace, text, suffix=".md", language="markdown")
    lenses = titles(await doc.lenses())
    assert lenses[0] == (5, "▶ Debug · 2 ranks")
    assert [line for line, _ in lenses] == [5, 5, 5, 15, 15, 15]


async def test_columns_are_utf16_after_non_ascii_text(client: LanguageClient,
                                                      workspace: Path) -> None:
    # "😀" is one code point but two UTF-16 units.
    doc = open_doc(client, workspace, "echo '😀' ; torchrun --nproc_per_node 2 train.py\n")
    lenses = await doc.lenses()
    assert lenses[0].range.start.character == len("echo '😀' ; ") + 1


async def test_documents_of_other_languages_are_left_alone(client: LanguageClient,
                                                           workspace: Path) -> None:
    doc = open_doc(client, workspace, "torchrun --nproc_per_node 2 train.py\n", suffix=".txt",
                   language="plaintext")
    assert await doc.lenses() == []
    slurm = open_doc(client, workspace, "#!/bin/bash\n#SBATCH -N 1\ntorchrun train.py\n",
                     suffix=".slurm", language="plaintext")
    assert titles(await slurm.lenses())[0] == (2, "▶ Debug · 1 rank")
