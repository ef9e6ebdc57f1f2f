"""Hit-hooks: planted without moving any line, and the first hit attaches (real debugpy)."""

from __future__ import annotations

import ast
import sys
import textwrap

from rankdebug.runtime import hithook

SRC = textwrap.dedent('''\
    """doc"""
    from __future__ import annotations
    import os


    @staticmethod
    def f(xs):
        t = 0
        for x in xs:
            if x:
                t += x
            else:
                t -= 1
        try:
            t = int(
                t)
        except ValueError:
            pass
        return t
    ''')


def _hook_parents(tree: ast.Module) -> list[tuple[int, int]]:
    """(line of the statement after each hook, hook's own line) pairs."""
    out = []
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                if hithook._is_hook(stmt):
                    out.append((block[i + 1].lineno, stmt.lineno))
    return sorted(out)


def test_plant_before_the_statement_of_each_line() -> None:
    tree, planted = hithook.plant(ast.parse(SRC), {6, 8, 9, 11, 13, 16, 18, 5})
    assert planted == {5, 6, 8, 9, 11, 13, 16, 18}
    # line 5 (blank) and 6 (decorator) -> the def (its first line is the decorator's)
    assert _hook_parents(tree) == [(7, 0), (8, 0), (9, 0), (11, 0), (13, 0), (15, 0), (18, 0)]


def test_no_hook_before_docstring_or_future_import() -> None:
    tree, planted = hithook.plant(ast.parse(SRC), {1, 2})
    assert planted == set()
    assert _hook_parents(tree) == []


def test_line_numbers_of_the_code_are_unchanged() -> None:
    tree, _ = hithook.plant(ast.parse(SRC), {8, 11, 16})
    code = compile(tree, "f.py", "exec")
    plain = compile(SRC, "f.py", "exec")

    def lines(c: object) -> set[int]:
        got = {n for _, _, n in c.co_lines() if n}  # type: ignore[attr-defined]
        for const in c.co_consts:  # type: ignore[attr-defined]
            if hasattr(const, "co_lines"):
                got |= lines(const)
        return got

    assert lines(code) == lines(plain)


# --- real jobs -------------------------------------------------------------------------

import os  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from launch_helpers import SCRIPTS, Launch, line_of, read_json, tool  # noqa: E402

from dap_client import DAPClient  # noqa: E402


def _stop_once(launch: Launch, script: str, line: int, rank: int, name: str,
               check: Callable[[DAPClient, int], None] | None = None) -> None:
    """Attach to the rank that listens, stop at ``line`` (in function ``name``), read RANK
    (and ``check(client, frame id)``), clear the breakpoint, continue: the job exits 0."""
    ev = launch.event("listening")
    assert ev["rank"] == rank
    client = DAPClient(str(ev["host"]), int(ev["port"]))
    client.attach({script: [line]})
    stopped = client.stopped()
    assert stopped["reason"] == "breakpoint"
    frame = client.top_frame(stopped["threadId"])
    assert (frame["line"], frame["name"]) == (line, name)
    expr = 'int(__import__("os").environ.get("RANK", "0"))'
    assert client.evaluate(expr, frame["id"]) == str(rank)
    if check is not None:
        check(client, frame["id"])
    client.request("setBreakpoints", {"source": {"path": script}, "breakpoints": []})
    client.cont(stopped["threadId"])
    assert launch.exited() == 0
    client.close()


@pytest.mark.timeout(120)
def test_hit_mode_stops_rank_1_in_the_main_script(tmp_path: Path) -> None:
    script = str(SCRIPTS / "ddp_steps.py")
    line = line_of("ddp_steps.py")
    launch = Launch(["--ranks", "1", "--attach", "hit", "--break", f"ddp_steps.py:{line}",
                     "--", tool("torchrun"), "--nproc_per_node", "2", script], tmp_path)
    try:
        _stop_once(launch, script, line, 1, "<module>")
    finally:
        launch.close()
    assert read_json(tmp_path / "rank-0.json")["debugpy"] is False


@pytest.mark.timeout(120)
def test_hit_mode_stops_in_an_imported_module(tmp_path: Path) -> None:
    module = os.path.realpath(SCRIPTS / "helper_mod.py")
    line = line_of("helper_mod.py")
    launch = Launch(["--ranks", "0", "--attach", "hit", "--break", f"{module}:{line}", "--",
                     sys.executable, str(SCRIPTS / "uses_helper.py")], tmp_path)
    try:
        _stop_once(launch, module, line, 0, "scale")
    finally:
        launch.close()


def _attach_on_request(tmp_path: Path, options: list[str]) -> Launch:
    """Start loop.py with `options`, attach rank 0 through {"command": "attach"}, stop at
    the # LATE line, let the loop end, and check the job exits 0."""
    import subprocess
    import threading

    script = str(SCRIPTS / "loop.py")
    late = line_of("loop.py", "# LATE")
    launch = Launch(["--ranks", "0", "--attach", "hit", "--control", *options, "--",
                     sys.executable, script], tmp_path, stdin=subprocess.PIPE)
    try:
        ev = launch.event("listening")
        client = DAPClient(str(ev["host"]), int(ev["port"]))
        attached = threading.Thread(target=client.attach, args=({script: [late]},), daemon=True)
        attached.start()
        launch.command({"command": "attach", "rank": 0})
        attached.join(60)
        stopped = client.stopped()
        frame = client.top_frame(stopped["threadId"])
        assert frame["line"] == late
        client.evaluate("done = True", frame["id"])
        client.request("setBreakpoints", {"source": {"path": script}, "breakpoints": []})
        client.cont(stopped["threadId"])
        assert launch.exited() == 0
        client.close()
    finally:
        launch.close()
    return launch


@pytest.mark.timeout(120)
def test_attach_before_any_hit_on_request(tmp_path: Path) -> None:
    """--control: {"command": "attach"} attaches a rank that has hit nothing yet, so that
    breakpoints that were not planted (and pauses) work."""
    never = line_of("loop.py", "# NEVER")
    _attach_on_request(tmp_path, ["--break", f"{SCRIPTS / 'loop.py'}:{never}"])


@pytest.mark.timeout(120)
def test_armed_rank_attaches_only_when_asked(tmp_path: Path) -> None:
    """--attach hit with no --break: the rank runs untraced and attaches on request."""
    launch = _attach_on_request(tmp_path, [])
    assert launch.job is not None


@pytest.mark.timeout(120)
def test_hit_mode_with_python_dash_m(tmp_path: Path) -> None:
    """``python -m module``: runpy compiles the main module through the import system."""
    script = os.path.realpath(SCRIPTS / "single.py")
    line = line_of("single.py")
    launch = Launch(["--ranks", "0", "--break", f"{script}:{line}", "--", sys.executable,
                     "-m", "single"], tmp_path)
    try:
        _stop_once(launch, script, line, 0, "<module>")
    finally:
        launch.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("attach", ["hit", "start"])
def test_debugger_sends_each_message_at_once(tmp_path: Path, attach: str) -> None:
    """pydevd writes a message's header and body apart; without TCP_NODELAY on its socket
    to the adapter every response waited ~40 ms for a delayed ACK."""
    script = str(SCRIPTS / "ddp_steps.py")
    line = line_of("ddp_steps.py")
    launch = Launch(["--ranks", "0", "--attach", attach, "--", tool("torchrun"),
                     "--nproc_per_node", "1", script], tmp_path)

    def sends_at_once(client: DAPClient, frame: int) -> None:
        sock = '__import__("pydevd").get_global_debugger().writer.sock'
        assert client.evaluate(f"{sock}.getsockopt(6, 1)", frame) != "0"  # TCP_NODELAY

    try:
        _stop_once(launch, script, line, 0, "<module>", sends_at_once)
    finally:
        launch.close()
