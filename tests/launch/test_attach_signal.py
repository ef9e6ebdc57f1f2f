"""The attach-now signal lands between any two bytecodes of a rank's main thread, often in
the middle of ``import torch``. Where it lands inside the import system's own code (which may
hold the interpreter's import lock), the attach waits until just after: importing debugpy
there crashed the rank in CI (a NameError from inside ``importlib._bootstrap``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

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


def _preload_job(tmp_path: Path, preload: str) -> dict[int, dict[str, Any]]:
    """``--ranks 1 --attach hit``, a DAP client attached with no breakpoint (rank 1 never
    stops, so never attaches debugpy), RANKDEBUG_PRELOAD as given: what each rank had
    imported at its end (ddp_steps.py writes it)."""
    from launch_helpers import SCRIPTS, Launch, read_json, tool

    from dap_client import DAPClient

    tmp_path.mkdir()
    trace = tmp_path / "trace.txt"
    launch = Launch(["--ranks", "1", "--attach", "hit", "--", tool("torchrun"),
                     "--nproc_per_node", "2", str(SCRIPTS / "ddp_steps.py")], tmp_path,
                    env={"RANKDEBUG_PRELOAD": preload, "RANKDEBUG_TRACE_FILE": str(trace)})
    try:
        ev = launch.event("listening")
        client = DAPClient(str(ev["host"]), int(ev["port"]))
        client.attach({})
        assert launch.exited(120) == 0, launch.stderr()
        client.close()
    finally:
        launch.close()
    return {r: read_json(tmp_path / f"rank-{r}.json") for r in (0, 1)}


@pytest.mark.timeout(240)
def test_a_chosen_rank_preloads_debugpy_only_where_asked(tmp_path: Path) -> None:
    """RANKDEBUG_PRELOAD=1: the chosen rank imports debugpy beside its script (its hit then
    costs only the attach) and is not traced for it; the unchosen rank never imports it.
    RANKDEBUG_PRELOAD=0 (and this 2-core machine's default with 2 ranks): nothing before
    the hit."""
    on = _preload_job(tmp_path / "on", "1")
    assert on[1]["debugpy"] is True and on[0]["debugpy"] is False, on
    assert "debugpy loaded" in (tmp_path / "on" / "trace.txt").read_text()
    off = _preload_job(tmp_path / "off", "0")
    assert off[1]["debugpy"] is False and off[0]["debugpy"] is False, off


def test_the_default_preloads_where_a_core_is_spare(monkeypatch: pytest.MonkeyPatch) -> None:
    from rankdebug.runtime import attach_signal

    monkeypatch.delenv("RANKDEBUG_PRELOAD", raising=False)
    cores = len(os.sched_getaffinity(0))
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(cores))
    assert attach_signal.preload_wanted() is False  # every core has a rank
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(max(1, cores - 1)))
    assert attach_signal.preload_wanted() is (cores > 1)
    monkeypatch.setenv("RANKDEBUG_PRELOAD", "1")
    assert attach_signal.preload_wanted() is True
