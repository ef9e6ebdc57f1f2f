"""pytest-lsp fixtures: the real server (`python -m rankdebug server`) over stdio.

``client`` is one server per test module (documents get unique URIs per test);
``fresh_client`` starts a server per test for tests that change settings or end it.
Both open a workspace folder holding ``train.py`` (which reads LOCAL_RANK from the
environment) and ``scripts/pretrain.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

SERVER = [sys.executable, "-m", "rankdebug", "server"]
# The servers' job registry lives here, not in the user's runtime directory.
RUNTIME_DIR = Path(tempfile.gettempdir()) / f"rankdebug-lsp-tests-{os.getuid()}"
RUNTIME_DIR.mkdir(mode=0o700, exist_ok=True)
SERVER_ENV = {**os.environ, "XDG_RUNTIME_DIR": str(RUNTIME_DIR)}
CONFIG = ClientServerConfig(server_command=SERVER, server_env=SERVER_ENV)
_counter = itertools.count()

TRAIN_PY = """import os
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
"""


def make_workspace(root: Path) -> Path:
    (root / "scripts").mkdir(parents=True, exist_ok=True)
    (root / "train.py").write_text(TRAIN_PY)
    (root / "scripts" / "pretrain.py").write_text("print('pretrain')\n")
    (root / "args_train.py").write_text(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--local_rank')\n")
    return root


def capabilities() -> types.ClientCapabilities:
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            configuration=False,
            code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=True),
        ),
        text_document=types.TextDocumentClientCapabilities(
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(
                        value_set=[types.CodeActionKind.QuickFix]),
                ),
                data_support=True,
            ),
            hover=types.HoverClientCapabilities(
                content_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText]),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                version_support=True, data_support=True),
        ),
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf16]),
    )


async def initialize(client: LanguageClient, root: Path,
                     settings: dict[str, Any] | None = None) -> None:
    uri = root.as_uri()
    options: dict[str, Any] = {
        "settings": [{"workspace": uri, **(settings or {})}],
        "globalSettings": {},
    }
    await client.initialize_session(types.InitializeParams(
        capabilities=capabilities(),
        root_uri=uri,
        workspace_folders=[types.WorkspaceFolder(uri=uri, name="ws")],
        initialization_options=options,
    ))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("ws"))


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[None]:
    await initialize(lsp_client, workspace)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def fresh_client(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[None]:
    # Tests initialize the session themselves (with the settings they need).
    make_workspace(tmp_path)
    yield
    if lsp_client.capabilities is not None and lsp_client.error is None:
        with contextlib.suppress(Exception):  # the test may have ended the session itself
            await asyncio.wait_for(lsp_client.shutdown_session(), 10)


class Doc:
    """An open document in the test workspace."""

    def __init__(self, client: LanguageClient, uri: str, text: str) -> None:
        self.client = client
        self.uri = uri
        self.text = text
        self.version = 1

    @property
    def ident(self) -> types.TextDocumentIdentifier:
        return types.TextDocumentIdentifier(uri=self.uri)

    def replace(self, text: str) -> None:
        self.version += 1
        self.text = text
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri,
                                                                 version=self.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        ))

    def edit(self, line: int, start: int, end: int, new: str) -> None:
        self.version += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri,
                                                                 version=self.version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line=line, character=start),
                                  end=types.Position(line=line, character=end)),
                text=new)],
        ))

    async def lenses(self) -> list[types.CodeLens]:
        result = await self.client.text_document_code_lens_async(
            types.CodeLensParams(text_document=self.ident))
        return list(result or [])

    async def diagnostics(self) -> Sequence[types.Diagnostic]:
        """Diagnostics of the current version: published before a request that needs the
        whole analysis (hover) is answered. (Code lenses may come before them.)"""
        await self.hover(0, 0)
        for _ in range(100):
            if self.uri in self.client.diagnostics:
                return self.client.diagnostics[self.uri]
            await asyncio.sleep(0.02)
        raise AssertionError(f"no diagnostics for {self.uri}")

    async def hover(self, line: int, character: int) -> types.Hover | None:
        return await self.client.text_document_hover_async(types.HoverParams(
            text_document=self.ident, position=types.Position(line=line, character=character)))

    async def actions(self, diag: types.Diagnostic) -> list[types.CodeAction]:
        result = await self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=self.ident, range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag])))
        return [a for a in result or [] if isinstance(a, types.CodeAction)]

    def close(self) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=self.ident))


def open_doc(client: LanguageClient, folder: Path, text: str, *, suffix: str = ".sh",
             language: str = "shellscript", name: str | None = None) -> Doc:
    """Open a document (saved to disk too, as scripts usually are)."""
    path = folder / (name or f"doc{next(_counter)}{suffix}")
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1,
                                             text=text)))
    return Doc(client, uri, text)


def apply_edit(text: str, edit: types.TextEdit) -> str:
    lines = text.split("\n")
    r = edit.range
    before = "\n".join([*lines[:r.start.line], lines[r.start.line][:r.start.character]])
    after_line = lines[r.end.line][r.end.character:]
    after = "\n".join([after_line, *lines[r.end.line + 1:]])
    return before + edit.new_text + after


def by_code(diags: Sequence[types.Diagnostic], code: str) -> list[types.Diagnostic]:
    return [d for d in diags if d.code == code]


async def execute(client: LanguageClient, command: str, *args: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(args)))


# ▶ Debug, Pick ranks…, Smoke run.
LENSES_PER_COMMAND = 3


def titles(lenses: Sequence[types.CodeLens]) -> list[tuple[int, str]]:
    return [(lens.range.start.line, lens.command.title if lens.command else "")
            for lens in lenses]


Check = Callable[[types.Diagnostic], bool]
