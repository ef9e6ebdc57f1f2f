"""The PEP 768 way in (``rankdebug.jobs.injector.remote_exec``), as far as Python 3.11 can check it:
which way a rank is reached, and the script ``sys.remote_exec`` would run, run here in a real
3.11 rank the way CPython 3.14 runs it (``PyRun_String`` in a fresh namespace, in the main
thread): the rank then listens, a DAP client stops in it, and a second run does nothing.
``sys.remote_exec`` itself needs Python 3.14, which this machine does not have."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dap_client import DAPClient
from rankdebug.jobs import attach as att
from rankdebug.jobs import procfs
from rankdebug.jobs.injector import inject, remote_exec
from rankdebug.runtime import adapter_wrapper

OURS = (sys.version_info.major, sys.version_info.minor)
LOOP = """
import os, time
open("ready", "w").close()
while True:
    time.sleep(0.05)  # LOOP
"""


@contextlib.contextmanager
def _python(tmp: Path, *options: str, env: dict[str, str] | None = None
            ) -> Iterator[subprocess.Popen[str]]:
    """A real Python process looping in ``loop.py`` (started with ``options``); its stderr
    goes to ``stderr.txt`` once it is killed."""
    (tmp / "loop.py").write_text(LOOP)
    with contextlib.suppress(FileNotFoundError):
        (tmp / "ready").unlink()
    proc = subprocess.Popen([sys.executable, *options, str(tmp / "loop.py")], cwd=tmp,
                            env={**os.environ, **(env or {})}, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 30
        while not (tmp / "ready").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "no start"
            time.sleep(0.02)
        yield proc
    finally:
        proc.kill()
        (tmp / "stderr.txt").write_text(proc.communicate()[1])


def test_which_way_a_rank_is_reached(tmp_path: Path) -> None:
    with _python(tmp_path) as proc:
        # This interpreter (3.11) has no sys.remote_exec: the injector it is.
        assert remote_exec.why_not(proc.pid) == (
            f"rankdebug runs on Python {OURS[0]}.{OURS[1]}; PEP 768 needs 3.14")
        # A 3.14 rankdebug and a rank of another version: not usable either.
        said = remote_exec.why_not(proc.pid, ours=(3, 14))
        assert said == f"process {proc.pid} runs Python {OURS[0]}.{OURS[1]}, rankdebug 3.14"
        # Nothing switched off: a 3.14 rankdebug would use it on a 3.14 rank.
        assert remote_exec.switched_off(proc.pid) is None
    with _python(tmp_path, "-X", "disable_remote_debug") as proc:
        assert remote_exec.switched_off(proc.pid) == (
            f"process {proc.pid} was started with -X disable_remote_debug")
    with _python(tmp_path, "-u", "-Xdisable_remote_debug") as proc:
        assert "-X disable_remote_debug" in str(remote_exec.switched_off(proc.pid))
    with _python(tmp_path, env={"PYTHON_DISABLE_REMOTE_DEBUG": "1"}) as proc:
        assert remote_exec.switched_off(proc.pid) == (
            f"process {proc.pid} has PYTHON_DISABLE_REMOTE_DEBUG set")
    # -E: the interpreter ignores the variable, so it does not switch anything off.
    with _python(tmp_path, "-E", env={"PYTHON_DISABLE_REMOTE_DEBUG": "1"}) as proc:
        assert remote_exec.switched_off(proc.pid) is None
    with _python(tmp_path, env={"PYTHON_DISABLE_REMOTE_DEBUG": ""}) as proc:
        assert remote_exec.switched_off(proc.pid) is None


@pytest.mark.parametrize(("argv", "options"), [
    (["python", "-u", "-X", "dev", "train.py", "-X", "disable_remote_debug"], ["-u", "-Xdev"]),
    (["python", "-c", "pass", "-X", "disable_remote_debug"], []),
    (["python", "-m", "torch.distributed.run", "-E"], []),
    (["python", "-uE", "-Wignore", "t.py"], ["-uE", "-Wignore"]),
    (["python", "-W", "error", "--", "-X"], ["-Werror"]),
    (["python"], []),
])
def test_interpreter_options_stop_at_the_script(argv: list[str], options: list[str]) -> None:
    assert remote_exec._interpreter_options(argv) == options


def test_send_on_a_python_without_remote_exec_takes_the_script_back(tmp_path: Path) -> None:
    path = remote_exec.write(str(tmp_path), 1, "pass")
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert remote_exec.send(os.getpid(), path) == "this Python has no sys.remote_exec"
    assert not os.path.exists(path)


def _run_as_cpython_would(pid: int, path: str) -> None:
    """What CPython 3.14's ``run_remote_debugger_script`` does in the target's main thread:
    read the file, ``PyRun_String`` it in a fresh dict. (Here the injector gets the main
    thread there.)"""
    code = f"exec(open({path!r}, 'rb').read().decode(), {{}})"
    assert inject.run_python(pid, code, 30) in (0, None)


def test_the_remote_exec_script_attaches_a_real_rank_once(tmp_path: Path) -> None:
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    with _python(tmp_path) as proc:
        port = att.free_port("127.0.0.1")
        wrapper = adapter_wrapper.write(str(folder), proc.pid)
        code = att.attach_code("127.0.0.1", port, wrapper)
        path = remote_exec.write(str(folder), proc.pid, code)
        compile(Path(path).read_text(), path, "exec")  # valid Python
        _run_as_cpython_would(proc.pid, path)
        assert att.wait_listening(port, proc.pid, 60), "the script did not make it listen"
        assert not os.path.exists(path)  # it took its file: no fallback will run
        assert remote_exec.started(proc.pid, path, within=0)
        # Its names are gone from the namespace it ran in, and __main__ got none.
        client = DAPClient("127.0.0.1", port)
        try:
            line = next(n for n, t in enumerate(LOOP.splitlines(), 1) if "# LOOP" in t)
            client.attach({str(tmp_path / "loop.py"): [line]})
            stopped = client.stopped(timeout=60)
            frame = client.top_frame(stopped["threadId"])
            assert frame["line"] == line
            assert client.evaluate("os.getpid()", frame["id"]) == str(proc.pid)
            assert client.evaluate("[n for n in globals() if 'rankdebug' in n or "
                                   "n.startswith('_won')]", frame["id"]) == "[]"
        finally:
            client.disconnect()
        # The race the deletion settles: the rank read the script just before the fallback
        # took it back (deleted it), and runs it after: its code does nothing.
        late = remote_exec.write(str(folder), proc.pid, "open('late-ran', 'w').close()")
        body = Path(late).read_text()
        assert not remote_exec.started(proc.pid, late, within=0.2)  # taken back
        assert not os.path.exists(late)
        assert inject.run_python(proc.pid, f"exec({body!r}, {{}})", 30) in (0, None)
        assert inject.run_python(proc.pid, "open('after', 'w').close()", 30) in (0, None)
        deadline = time.monotonic() + 20
        while not (tmp_path / "after").exists():  # the main thread has run both
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert not (tmp_path / "late-ran").exists()
        assert proc.poll() is None


def test_the_script_runs_its_code_once_whoever_runs_it_first(tmp_path: Path) -> None:
    """Two runs of one script (a pending run after the rank already took it): the code runs
    once; its names never leak into the namespace."""
    marker = tmp_path / "ran"
    path = remote_exec.write(str(tmp_path), 7, f"open({str(marker)!r}, 'a').write('x')")
    body = Path(path).read_text()
    runner = textwrap.dedent("""
        import sys
        body = open(sys.argv[1]).read()
        for _ in range(2):
            ns = {}
            exec(body, ns)
            # (__warningregistry__: the test's own unclosed file)
            assert set(ns) <= {"__builtins__", "__warningregistry__"}, sorted(ns)
    """)
    out = subprocess.run([sys.executable, "-c", runner, path], capture_output=True,
                         text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert marker.read_text() == "x"
    assert not os.path.exists(path)
    assert body.startswith("import os as _os\n")


class _StandIn:
    """``sys.remote_exec`` for a Python that has none (3.11 here), as CPython 3.14 behaves:
    the file is read and run in a fresh namespace by the target's main thread, later
    (here: through the injector, on a thread of its own, after ``delay``); ``refuse``: what
    it raises instead (a build or a rank without remote debugging); ``never``: the main
    thread never gets to run it (it waits in C)."""

    def __init__(self, delay: float = 0.3, refuse: str | None = None,
                 never: bool = False) -> None:
        self.delay, self.refuse, self.never = delay, refuse, never
        self.asked: list[tuple[int, str]] = []

    def __call__(self, pid: int, path: str) -> None:
        if self.refuse is not None:
            raise RuntimeError(self.refuse)
        self.asked.append((pid, path))
        if self.never:
            return

        def later() -> None:
            time.sleep(self.delay)
            if os.path.exists(path):
                _run_as_cpython_would(pid, path)

        import threading

        threading.Thread(target=later, daemon=True).start()


@pytest.mark.parametrize(("stand_in", "via"), [
    (_StandIn(), "remote_exec"),
    (_StandIn(refuse="Remote debugging is not enabled in the remote process"), "ptrace"),
    (_StandIn(never=True), "ptrace"),
], ids=["taken", "refused", "never-run"])
def test_attach_takes_the_pep768_way_and_falls_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stand_in: _StandIn,
        via: str) -> None:
    """``attach.attach`` as it runs on Python 3.14, ``sys.remote_exec`` played by
    ``_StandIn``: the rank that runs the script listens through it; one whose interpreter
    refuses, or never runs it within ``CLAIM_S``, gets the injector, and the script, taken
    back, never runs after."""
    monkeypatch.setattr(remote_exec, "why_not", lambda pid, ours=None: None)
    monkeypatch.setattr(sys, "remote_exec", stand_in, raising=False)
    monkeypatch.delenv("RANKDEBUG_INJECT", raising=False)
    with _python(tmp_path) as proc:
        done = att.attach(proc.pid, timeout=60)
        assert done.via == via
        assert done.port in procfs.listening_ports()
        for _, path in stand_in.asked:
            assert not os.path.exists(path)  # taken by the rank, or back by the fallback
        client = DAPClient("127.0.0.1", done.port)
        try:
            line = next(n for n, t in enumerate(LOOP.splitlines(), 1) if "# LOOP" in t)
            client.attach({str(tmp_path / "loop.py"): [line]})
            frame = client.top_frame(client.stopped(timeout=60)["threadId"])
            assert client.evaluate("os.getpid()", frame["id"]) == str(proc.pid)
        finally:
            client.disconnect()
        assert proc.poll() is None
    said = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in said and "already been called" not in said, said
