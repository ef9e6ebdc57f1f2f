"""The ptrace injector (``jobs.injector.inject``) on real Python processes: code runs in the
target's ``__main__`` wherever its main thread is (asleep, busy in bytecode, in C holding the
GIL, waiting for the GIL), and the target goes on exactly as before: no interrupted system
call fails, no register it computes with changes."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rankdebug.jobs.injector import elf, inject

pytestmark = pytest.mark.skipif(not inject.supported(), reason="the injector is x86-64 only")
Target = tuple[Path, list[subprocess.Popen[str]]]


def _start(tmp: Path, body: str) -> subprocess.Popen[str]:
    script = tmp / "target.py"
    script.write_text(textwrap.dedent(body))
    proc = subprocess.Popen([sys.executable, str(script)], stderr=subprocess.PIPE, text=True,
                            cwd=tmp)
    deadline = time.monotonic() + 20
    while not (tmp / "ready").exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "the target did not start"
        time.sleep(0.02)
    return proc


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Target]:
    procs: list[subprocess.Popen[str]] = []
    yield tmp_path, procs
    for proc in procs:
        proc.kill()
        proc.wait()


def _wait_file(path: Path, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)
    return path.read_text()


def _stderr_after_kill(proc: subprocess.Popen[str]) -> str:
    proc.kill()
    _, err = proc.communicate()
    return err


SLEEPER = """
    import os, time
    n = 0
    open("ready", "w").close()
    while True:
        n += 1
        time.sleep(0.01)
        open("steps.tmp", "w").write(str(n))
        os.replace("steps.tmp", "steps")  # whole: the test reads it meanwhile
"""


def test_code_runs_in_main_of_a_sleeping_thread_which_sleeps_on(target: Target) -> None:
    tmp, procs = target
    proc = _start(tmp, SLEEPER)
    procs.append(proc)
    for i in range(5):  # again and again: each interrupted sleep must restart cleanly
        result = inject.run_python(proc.pid, f"open('seen-{i}', 'w').write(str(n))", 10)
        assert result == 0
        assert int(_wait_file(tmp / f"seen-{i}")) > 0  # ran in __main__, where n lives
    before = int((tmp / "steps").read_text())
    time.sleep(0.5)
    assert int((tmp / "steps").read_text()) > before + 5
    assert proc.poll() is None
    err = _stderr_after_kill(proc)
    assert "Traceback" not in err and "514" not in err, err


def test_an_exception_in_the_code_is_reported_and_the_target_lives(target: Target) -> None:
    tmp, procs = target
    proc = _start(tmp, SLEEPER)
    procs.append(proc)
    assert inject.run_python(proc.pid, "raise RuntimeError('from the injector')", 10) == -1
    time.sleep(0.2)
    assert proc.poll() is None
    assert "RuntimeError: from the injector" in _stderr_after_kill(proc)


def test_a_thread_busy_in_bytecode_gets_a_pending_call(target: Target) -> None:
    tmp, procs = target
    proc = _start(tmp, """
        n = 0
        open("ready", "w").close()
        while True:
            n += 1
    """)
    procs.append(proc)
    assert inject.run_python(proc.pid, "open('seen', 'w').write(str(n))", 10) is None
    assert int(_wait_file(tmp / "seen")) > 0
    assert proc.poll() is None
    err = _stderr_after_kill(proc)
    assert "Traceback" not in err, err


def test_a_thread_in_c_holding_the_gil(target: Target) -> None:
    """ctypes.PyDLL keeps the GIL through the call: the injected code must not wait for it."""
    tmp, procs = target
    proc = _start(tmp, """
        import ctypes
        libc = ctypes.PyDLL(None)
        open("ready", "w").close()
        while True:
            libc.usleep(200000)
    """)
    procs.append(proc)
    assert inject.run_python(proc.pid, "open('seen', 'w').write('in')", 10) == 0
    assert _wait_file(tmp / "seen") == "in"
    assert proc.poll() is None


def test_a_main_thread_waiting_for_the_gil_is_not_deadlocked(target: Target) -> None:
    """Another thread holds the GIL most of the time: the main thread is often caught waiting
    for it, which is never a place to call into Python from."""
    tmp, procs = target
    proc = _start(tmp, """
        import threading, time
        def spin():
            x = 0
            while True:
                x += 1
        threading.Thread(target=spin, daemon=True).start()
        open("ready", "w").close()
        while True:
            time.sleep(0.0005)
    """)
    procs.append(proc)
    for i in range(3):
        assert inject.run_python(proc.pid, f"open('seen-{i}', 'w').write('in')", 20) in (0, None)
        assert _wait_file(tmp / f"seen-{i}") == "in"
    assert proc.poll() is None


def test_registers_are_put_back(target: Target) -> None:
    """A float computation (vector registers) and a blocking read are interrupted again and
    again; every round still gives the first round's result."""
    tmp, procs = target
    proc = _start(tmp, """
        import math, os, threading
        def compute(n):
            first = None
            while True:
                total = sum(math.sin(i) * 1.0000001 for i in range(n))
                os.read(fd, 1) if n == 3000 else None  # a blocking read, often caught in
                if first is None:
                    first = total
                elif total != first:
                    open("mismatch", "w").write(f"{total!r} != {first!r}")
        fd, w = os.pipe()
        os.set_blocking(w, False)
        def feed():
            while True:
                try:
                    os.write(w, b"x")
                except BlockingIOError:
                    pass
                threading.Event().wait(0.001)
        threading.Thread(target=compute, args=(20000,), daemon=True).start()
        threading.Thread(target=feed, daemon=True).start()
        open("ready", "w").close()
        compute(3000)
    """)
    procs.append(proc)
    for _ in range(10):
        assert inject.run_python(proc.pid, "x = 1", 10) in (0, None)
    time.sleep(0.5)
    assert not (tmp / "mismatch").exists(), (tmp / "mismatch").read_text()
    assert proc.poll() is None
    err = _stderr_after_kill(proc)
    assert "Traceback" not in err, err


def test_a_process_that_is_not_python_is_refused(tmp_path: Path) -> None:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.1)
        with pytest.raises(inject.InjectError, match="no Python C API"):
            inject.run_python(proc.pid, "pass", 5)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_elf_finds_the_c_api_where_the_dynamic_linker_put_it() -> None:
    """Symbols read from the files on disk land where dlsym finds them in this process."""
    with open("/proc/self/maps") as f:
        maps = elf.mappings(f.read())
    found = elf.resolve(maps, ["PyRun_SimpleString", "PyGILState_Ensure"])
    assert found["PyRun_SimpleString"].address == ctypes.cast(
        ctypes.pythonapi.PyRun_SimpleString, ctypes.c_void_p).value
    assert found["PyGILState_Ensure"].address == ctypes.cast(
        ctypes.pythonapi.PyGILState_Ensure, ctypes.c_void_p).value
    libc = ctypes.CDLL(None)
    mmap_at = elf.resolve(maps, ["mmap"], prefer=[m.path for m in maps if "libc.so" in m.path])
    assert mmap_at["mmap"].address == ctypes.cast(libc.mmap, ctypes.c_void_p).value


def test_elf_refuses_what_is_not_elf(tmp_path: Path) -> None:
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"\x7fELF" + b"\x00" * 10)
    with pytest.raises(elf.ElfError):
        elf.symbols(str(junk), ["x"])
