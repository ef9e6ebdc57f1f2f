"""The attach-now signal lands between any two bytecodes of a rank's main thread, often in
the middle of ``import torch``. Where it lands inside the import system's own code (which may
hold the interpreter's import lock), the attach waits until just after: importing debugpy
there crashed the rank in CI (a NameError from inside ``importlib._bootstrap``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# A process that imports 400 fresh modules while a thread sends it the attach signal every
# half millisecond; the attach itself (``on_hit``) is replaced by a record of where the
# main thread was, so every signal the handler acts on is counted.
PROBE = textwrap.dedent('''
    import importlib, json, signal, sys, threading, time
    sys.path.insert(0, sys.argv[1])
    from rankdebug.runtime import attach_signal, debug, hithook

    where = []
    def record(frame):
        where.append(frame.f_code.co_filename)
        hithook.hooks.fired = False  # act on the next signal too
    debug.on_hit = record
    number = debug._arm_attach_signal()
    assert number is not None
    main = threading.main_thread().ident
    done = threading.Event()
    def ring():
        while not done.is_set():
            signal.pthread_kill(main, number)
            time.sleep(0.0005)
    threading.Thread(target=ring, daemon=True).start()
    for i in range(400):
        importlib.import_module(f"fresh_{i}")
    done.set()
    time.sleep(0.3)  # the deferred signals are sent again: let them land
    print(json.dumps({"where": where, "loaded": attach_signal.loader.loaded}))
''')


@pytest.mark.timeout(120)
def test_attach_signal_waits_out_the_import_system(tmp_path: Path) -> None:
    mods = tmp_path / "mods"
    mods.mkdir()
    for i in range(400):
        (mods / f"fresh_{i}.py").write_text(f"import os\nVALUE = {i}\n" + "x = 1\n" * 50)
    out = subprocess.run([sys.executable, "-c", PROBE, str(mods)], capture_output=True,
                         text=True, timeout=100, check=False)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["loaded"] is True  # debugpy imported by the helper thread, not the handler
    where: list[str] = result["where"]
    assert where, "the handler never acted on the signal"
    inside = [f for f in where if f.startswith("<frozen importlib")]
    assert inside == [], f"attached inside the import system {len(inside)} of {len(where)}"


@pytest.mark.timeout(120)
def test_a_failed_attach_is_said_and_the_rank_goes_on() -> None:
    """An attach that raises (an adapter gone, a broken debugpy) is said on stderr; the
    exception never reaches the training code, and a later signal may try again."""
    probe = textwrap.dedent('''
        import signal, sys, threading, time
        from rankdebug.runtime import debug, hithook
        tries = []
        def broken(frame):
            tries.append(1)
            raise OSError("adapter gone")
        debug.on_hit = broken
        number = debug._arm_attach_signal()
        for _ in range(2):
            n = len(tries)
            signal.pthread_kill(threading.main_thread().ident, number)
            deadline = time.monotonic() + 30
            while len(tries) == n and time.monotonic() < deadline:
                time.sleep(0.01)
        print("tries", len(tries), "fired", hithook.hooks.fired)
    ''')
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["tries", "2", "fired", "False"], out.stdout
    assert "could not attach the debugger: OSError: adapter gone" in out.stderr
    assert "Traceback" not in out.stderr
