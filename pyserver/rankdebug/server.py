"""``rankdebug server``: the language server (pygls, LSP over stdio).

It makes launch commands in shell scripts and Markdown code blocks clickable (code
lenses), explained (hover) and checked (diagnostics with quick fixes), and answers the
extension's ``workspace/executeCommand`` requests. Documents are analysed in a thread
pool, newest version only, a burst of edits once (``rankdebug.lsp.documents``); memory
is kept bounded and collected while idle (``rankdebug.lsp.memory``); settings follow the
vscode-python-tools-extension-template flow (``rankdebug.lsp.settings``); problems are
logged to the client's output channel (``window/logMessage``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import threading
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any, TypeVar

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter

from rankdebug import __version__ as _version
from rankdebug.lsp import actions, commands, hover, memory
from rankdebug.lsp.analysis import Analysis, PlannerSlot, Snapshot
from rankdebug.lsp.commands import DebugPlanArgs, LaunchJsonArgs, PlanArgs
from rankdebug.lsp.documents import Documents, language_of
from rankdebug.lsp.lenses import Lenses
from rankdebug.lsp.protocol import Protocol
from rankdebug.lsp.settings import SECTION, Settings, SettingsStore

A = TypeVar("A", bound=PlanArgs)

NAME = "rankdebug"
SLOW_ANALYSIS_S = 2.0
logger = logging.getLogger("rankdebug.server")


class RankdebugServer(LanguageServer):
    """The server's state: settings, documents and the pool that analyses them."""

    def __init__(self) -> None:
        super().__init__(NAME, _version,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=Protocol)
        self.settings = SettingsStore()
        self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="rankdebug")
        self.documents = Documents(self._executor, self._snapshot, self._publish,
                                   self._analysis_failed, memory.collect)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.loop_thread: int | None = None
        self.shutdown_requested = False
        # What each document's last diagnostics notification held (unchanged: not resent).
        self.published: dict[str, list[types.Diagnostic]] = {}

    # -- Host (rankdebug.lsp.commands) ------------------------------------------------

    @property
    def executor(self) -> Executor:
        return self._executor

    def settings_for(self, path: str | None) -> Settings:
        return self.settings.for_path(path)

    def open_document(self, uri: str) -> tuple[str, str | None, str | None] | None:
        if uri not in self.workspace.text_documents:
            return None
        doc = self.workspace.get_text_document(uri)
        return doc.source, _file_path(uri, doc.path), language_of(doc.language_id, doc.path)

    def workspace_folder(self, path: str | None) -> str | None:
        settings = self.settings.for_path(path)
        if settings.workspace:
            return settings.workspace
        folders = list(self.settings.folders)
        return folders[0] if folders else None

    # -- documents ---------------------------------------------------------------------

    def _snapshot(self, uri: str, seq: int, planner: PlannerSlot) -> Snapshot | None:
        if uri not in self.workspace.text_documents:
            return None
        doc = self.workspace.get_text_document(uri)
        path = _file_path(uri, doc.path)
        language = language_of(doc.language_id, doc.path) or "shell"
        return Snapshot(uri, seq, doc.version, doc.source, path, language,
                        self.settings.for_path(path), self.workspace.position_codec, planner)

    def _publish(self, analysis: Analysis) -> None:
        snap = analysis.snapshot
        if analysis.seconds > SLOW_ANALYSIS_S:
            self.log(f"analysing {snap.uri} took {analysis.seconds:.1f} s",
                     types.MessageType.Warning)
        if self.published.get(snap.uri) == analysis.diagnostics:
            return  # the client's copies still hold for this version
        self.published[snap.uri] = analysis.diagnostics
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=snap.uri, diagnostics=analysis.diagnostics, version=snap.version))

    def _analysis_failed(self, uri: str, message: str) -> None:
        self.log(message, types.MessageType.Error)

    # -- logging -----------------------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        """A line in the client's output channel (from any thread)."""
        if self.loop is not None and threading.get_ident() != self.loop_thread:
            self.loop.call_soon_threadsafe(self.log, message, kind)
            return
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
            notify = self.settings.global_settings.show_notifications
            if ((kind == types.MessageType.Error and notify in ("onError", "onWarning", "always"))
                    or (kind == types.MessageType.Warning and notify in ("onWarning", "always"))):
                self.window_show_message(types.ShowMessageParams(type=kind, message=message))
        except Exception:  # no client to tell (shutting down)
            logger.exception("cannot log to the client: %s", message)

    def report_server_error(self, error: Exception, source: Any) -> None:
        self.log(f"server error ({getattr(source, '__name__', source)}): {error!r}",
                 types.MessageType.Error)

    def update_settings(self, payload: Any) -> bool:
        problems: list[str] = []
        taken = self.settings.update(payload, problems)
        for problem in problems:
            self.log(problem, types.MessageType.Warning)
        return taken

    def reanalyse_all(self) -> None:
        for uri in self.documents.uris():
            self.documents.changed(uri, force=True)
        caps = self.client_capabilities.workspace
        if caps and caps.code_lens and caps.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _file_path(uri: str, path: str | None) -> str | None:
    return path if uri.startswith("file:") else None


def create_server() -> RankdebugServer:
    server = RankdebugServer()
    _lifecycle(server)
    _workspace(server)
    _documents(server)
    _features(server)
    _commands(server)
    return server


def _lifecycle(server: RankdebugServer) -> None:
    """initialize, initialized, shutdown."""

    @server.feature(types.INITIALIZE)
    def initialize(ls: RankdebugServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.loop_thread = threading.get_ident()
        for folder in params.workspace_folders or []:
            path = uris.to_fs_path(folder.uri)
            if path:
                ls.settings.add_folder(path)
        if not params.workspace_folders and params.root_uri:
            root = uris.to_fs_path(params.root_uri)
            if root:
                ls.settings.add_folder(root)
        options = params.initialization_options
        if options is not None:
            ls.update_settings(options)
        ls.log(f"rankdebug {_version} language server; Python {sys.version.split()[0]}; "
               f"pid {os.getpid()}; cwd {os.getcwd()}", types.MessageType.Info)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RankdebugServer, params: types.InitializedParams) -> None:
        await _watch_files(ls)
        await _pull_settings(ls)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: RankdebugServer, params: None) -> None:
        ls.shutdown_requested = True
        ls.close()


def _workspace(server: RankdebugServer) -> None:
    """Watched files, settings and workspace folders."""

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: RankdebugServer,
                                 params: types.DidChangeWatchedFilesParams) -> None:
        # An entry script, hostfile or config appeared or went away: check again.
        if any(c.type != types.FileChangeType.Changed for c in params.changes):
            ls.reanalyse_all()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: RankdebugServer,
                                       params: types.DidChangeConfigurationParams) -> None:
        if not ls.update_settings(params.settings):
            await _pull_settings(ls, always=True)
        ls.log("settings changed; analysing open documents again", types.MessageType.Info)
        ls.reanalyse_all()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: RankdebugServer,
                           params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.added:
            path = uris.to_fs_path(folder.uri)
            if path:
                ls.settings.add_folder(path)
        for folder in params.event.removed:
            path = uris.to_fs_path(folder.uri)
            if path:
                ls.settings.remove_folder(path)
        ls.reanalyse_all()



def _documents(server: RankdebugServer) -> None:
    """Open, change, save and close: what the document runner analyses."""

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RankdebugServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        if language_of(doc.language_id, uris.to_fs_path(doc.uri) or doc.uri) is not None:
            ls.documents.changed(doc.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RankdebugServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.documents.tracked(params.text_document.uri):
            ls.documents.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RankdebugServer, params: types.DidSaveTextDocumentParams) -> None:
        # Files next to the script (the entry, a hostfile) may have changed too.
        if ls.documents.tracked(params.text_document.uri):
            ls.documents.changed(params.text_document.uri, force=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RankdebugServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.documents.tracked(uri):
            ls.documents.closed(uri)
            ls.published.pop(uri, None)
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))



def _features(server: RankdebugServer) -> None:
    """Code lenses, hovers and quick fixes from the newest analysis."""

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lens(ls: RankdebugServer,
                        params: types.CodeLensParams) -> Lenses | None:
        # Written as they are (rankdebug.lsp.protocol).
        return await ls.documents.current_lenses(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: RankdebugServer, params: types.HoverParams) -> types.Hover | None:
        analysis = await ls.documents.current(params.text_document.uri)
        if analysis is None:
            return None
        return hover.hover(analysis, params.position)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_action(ls: RankdebugServer,
                          params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        analysis = await ls.documents.current(uri)
        current = analysis.diagnostics if analysis is not None else []
        return actions.code_actions(uri, params, current) or None



def _commands(server: RankdebugServer) -> None:
    """``workspace/executeCommand``: adapters in ``rankdebug.lsp.commands``."""

    # Arguments are read here, not by pygls: a malformed one is answered with the error
    # envelope the extension shows, not an LSP error.
    converter = default_converter()  # type: ignore[no-untyped-call]  # pygls' own

    def read(kind: type[A], raw: tuple[Any, ...], name: str) -> A | dict[str, Any]:
        return commands.read_args(kind, raw, converter.structure, name)

    @server.command("rankdebug.plan")
    async def plan_command(ls: RankdebugServer, *raw: Any) -> dict[str, Any]:
        args = read(PlanArgs, raw, "rankdebug.plan")
        return args if isinstance(args, dict) else await commands.plan(ls, args)

    @server.command("rankdebug.debugPlan")
    async def debug_plan_command(ls: RankdebugServer, *raw: Any) -> dict[str, Any]:
        args = read(DebugPlanArgs, raw, "rankdebug.debugPlan")
        return args if isinstance(args, dict) else await commands.debug_plan(ls, args)

    @server.command("rankdebug.launchJson")
    async def launch_json_command(ls: RankdebugServer, *raw: Any) -> dict[str, Any]:
        args = read(LaunchJsonArgs, raw, "rankdebug.launchJson")
        return (args if isinstance(args, dict)
                else await commands.launch_json_command(ls, args))

    @server.command("rankdebug.smoke")
    async def smoke_command(ls: RankdebugServer, *raw: Any) -> dict[str, Any]:
        args = read(PlanArgs, raw, "rankdebug.smoke")
        return args if isinstance(args, dict) else await commands.smoke_command(ls, args)

    @server.command("rankdebug.checkRanks")
    async def check_ranks_command(ls: RankdebugServer, *args: Any) -> dict[str, Any]:
        raw = args[0] if args and isinstance(args[0], dict) else {}
        return await commands.check_ranks(ls, raw)


async def _watch_files(ls: RankdebugServer) -> None:
    """Ask to hear of files created or deleted (entry scripts, hostfiles, configs)."""
    caps = ls.client_capabilities.workspace
    watched = caps.did_change_watched_files if caps else None
    if not (watched and watched.dynamic_registration):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(watchers=[
        types.FileSystemWatcher(glob_pattern=f"**/*.{ext}",
                                kind=types.WatchKind.Create | types.WatchKind.Delete)
        for ext in ("py", "yaml", "yml", "json", "sh")
    ] + [types.FileSystemWatcher(glob_pattern="**/hostfile*",
                                 kind=types.WatchKind.Create | types.WatchKind.Delete)])
    try:
        await asyncio.wait_for(ls.client_register_capability_async(types.RegistrationParams(
            registrations=[types.Registration(
                id="rankdebug-watch", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=options)])), 5.0)
    except Exception as exc:
        ls.log(f"cannot watch files: {exc!r}", types.MessageType.Warning)


async def _pull_settings(ls: RankdebugServer, *, always: bool = False) -> None:
    """Ask the client for the ``rankdebug`` section (global and per folder), when it can."""
    caps = ls.client_capabilities.workspace
    if not (caps and caps.configuration):
        return
    if not always and ls.settings.configured:
        return
    folders = list(ls.settings.folders)
    items = [types.ConfigurationItem(section=SECTION)]
    items += [types.ConfigurationItem(scope_uri=uris.from_fs_path(f), section=SECTION)
              for f in folders]
    try:
        result = await asyncio.wait_for(
            ls.workspace_configuration_async(types.ConfigurationParams(items=items)), 5.0)
    except Exception as exc:
        ls.log(f"could not read settings from the client: {exc!r}", types.MessageType.Warning)
        return
    if not result:
        return
    payload: dict[str, Any] = {}
    if isinstance(result[0], dict):
        payload["globalSettings"] = result[0]
    per = []
    for folder, value in zip(folders, result[1:], strict=False):
        if isinstance(value, dict):
            per.append({**value, "workspace": uris.from_fs_path(folder)})
    payload["settings"] = per
    if payload.get("globalSettings") or per:
        ls.update_settings(payload)
        ls.reanalyse_all()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Start the Rank Debugger language server (LSP over stdio)."
    parser.add_argument("--stdio", action="store_true",
                        help="talk LSP on stdin/stdout (the default and only transport)")
    parser.add_argument("--log-level", default="WARNING",
                        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                        help="level of the log written to stderr")


def run(args: argparse.Namespace) -> int:
    memory.system_allocator()  # may start this process again, before anything is read
    logging.basicConfig(level=getattr(args, "log_level", "WARNING"), stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    server = create_server()
    memory.tune_gc()
    # The loop, with lenses to send while the pool goes on to the diagnostics, gets the
    # GIL within 1 ms rather than 5.
    sys.setswitchinterval(0.001)
    try:
        server.start_io()
    finally:
        server.close()
    # LSP: 0 after shutdown then exit, 1 when the client went away (or exited) without it.
    return 0 if server.shutdown_requested else 1
