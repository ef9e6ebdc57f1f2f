"""Settings (initializationOptions, didChangeConfiguration, workspace/configuration) and the
end of a session (shutdown then exit; exit alone)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import by_code, capabilities, initialize, open_doc, titles

pytestmark = pytest.mark.asyncio

SCRIPT = "torchrun --nproc_per_node $NGPUS pretrain.py\n"


def change_settings(client: LanguageClient, settings: Any) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=settings))


async def eventually(check: Any, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def test_initialization_options_turn_lenses_off(fresh_client: LanguageClient,
                                                      tmp_path: Path) -> None:
    await initialize(fresh_client, tmp_path, {"codeLens": False, "unknownValues": "warning"})
    doc = open_doc(fresh_client, tmp_path, SCRIPT)
    assert await doc.lenses() == []
    unknown = by_code(await doc.diagnostics(), "unknown-value")
    assert unknown and unknown[0].severity == types.DiagnosticSeverity.Warning


async def test_configuration_changes_apply_to_open_documents(fresh_client: LanguageClient,
                                                             tmp_path: Path) -> None:
    refreshes: list[None] = []

    @fresh_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(client: LanguageClient, params: None) -> None:
        refreshes.append(params)

    await initialize(fresh_client, tmp_path)
    doc = open_doc(fresh_client, tmp_path, SCRIPT)
    diags = await doc.diagnostics()
    assert by_code(diags, "missing-script")  # pretrain.py is in scripts/, not the root
    assert by_code(diags, "unknown-value")[0].severity == types.DiagnosticSeverity.Hint

    # The extension's shape: per-folder settings.
    change_settings(fresh_client, {
        "settings": [{"workspace": tmp_path.as_uri(), "cwd": "${workspaceFolder}/scripts",
                      "unknownValues": "off"}],
        "globalSettings": {},
    })
    await eventually(lambda: refreshes)
    diags = await doc.diagnostics()
    assert by_code(diags, "missing-script") == []
    assert by_code(diags, "unknown-value") == []

    # A plain section, as other clients send it: environment makes $NGPUS known.
    change_settings(fresh_client, {"rankdebug": {"env": {"NGPUS": "4"}}})
    await eventually(lambda: len(refreshes) >= 2)
    assert titles(await doc.lenses())[0] == (0, "▶ Debug · 4 ranks")


async def test_bad_setting_values_are_logged_and_ignored(fresh_client: LanguageClient,
                                                         tmp_path: Path) -> None:
    await initialize(fresh_client, tmp_path, {"basePort": "high", "codeLens": "yes"})
    doc = open_doc(fresh_client, tmp_path, "torchrun --nproc_per_node 2 train.py\n")
    assert titles(await doc.lenses())[0] == (0, "▶ Debug · 2 ranks")
    warnings = [m.message for m in fresh_client.log_messages
                if m.type == types.MessageType.Warning]
    assert any("rankdebug.basePort" in m for m in warnings)
    assert any("rankdebug.codeLens" in m for m in warnings)


async def test_settings_pulled_with_workspace_configuration(fresh_client: LanguageClient,
                                                            tmp_path: Path) -> None:
    fresh_client.set_configuration({"enable": False}, section="rankdebug")
    caps = capabilities()
    assert caps.workspace is not None
    caps.workspace.configuration = True
    caps.workspace.code_lens = None  # no refresh requests: the test polls
    uri = tmp_path.as_uri()
    await fresh_client.initialize_session(types.InitializeParams(
        capabilities=caps, root_uri=uri,
        workspace_folders=[types.WorkspaceFolder(uri=uri, name="ws")]))
    doc = open_doc(fresh_client, tmp_path, "torchrun --nproc_per_node 2 train.py\n")
    for _ in range(50):
        if await doc.lenses() == []:
            break
        await asyncio.sleep(0.05)
    assert await doc.lenses() == []
    # An empty change makes the server ask again.
    fresh_client.set_configuration({"enable": True}, section="rankdebug")
    change_settings(fresh_client, None)
    for _ in range(100):
        if await doc.lenses():
            break
        await asyncio.sleep(0.05)
    assert titles(await doc.lenses())[0] == (0, "▶ Debug · 2 ranks")


async def test_shutdown_then_exit_ends_with_status_0(fresh_client: LanguageClient,
                                                     tmp_path: Path) -> None:
    await initialize(fresh_client, tmp_path)
    doc = open_doc(fresh_client, tmp_path, "torchrun train.py\n")
    await doc.lenses()
    await fresh_client.shutdown_async(None)
    fresh_client.exit(None)
    server = fresh_client._server
    assert server is not None
    assert await asyncio.wait_for(server.wait(), 10) == 0


async def test_exit_without_shutdown_ends_with_status_1(fresh_client: LanguageClient,
                                                        tmp_path: Path) -> None:
    await initialize(fresh_client, tmp_path)
    fresh_client.exit(None)
    server = fresh_client._server
    assert server is not None
    assert await asyncio.wait_for(server.wait(), 10) == 1


async def test_created_entry_script_clears_the_finding(fresh_client: LanguageClient,
                                                        tmp_path: Path) -> None:
    registrations: list[types.RegistrationParams] = []

    @fresh_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(client: LanguageClient, params: types.RegistrationParams) -> None:
        registrations.append(params)

    caps = capabilities()
    assert caps.workspace is not None
    caps.workspace.code_lens = None
    caps.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
        dynamic_registration=True)
    uri = tmp_path.as_uri()
    await fresh_client.initialize_session(types.InitializeParams(
        capabilities=caps, root_uri=uri,
        workspace_folders=[types.WorkspaceFolder(uri=uri, name="ws")]))
    await eventually(lambda: registrations)
    (reg,) = registrations[0].registrations
    assert reg.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    doc = open_doc(fresh_client, tmp_path, "torchrun --nproc_per_node 2 finetune.py\n")
    assert by_code(await doc.diagnostics(), "missing-script")
    (tmp_path / "finetune.py").write_text("print('ok')\n")
    fresh_client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=(tmp_path / "finetune.py").as_uri(),
                                 type=types.FileChangeType.Created)]))
    for _ in range(100):
        if not by_code(await doc.diagnostics(), "missing-script"):
            break
        await asyncio.sleep(0.05)
    assert by_code(await doc.diagnostics(), "missing-script") == []
