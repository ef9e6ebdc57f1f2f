"""A host's warm agent that has had no question for ``IDLE_S`` ends and takes its socket file
with it; one whose file a newer agent has taken keeps its hands off that file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_AGENT = textwrap.dedent("""
    import os, socket, sys, threading
    from rankdebug.jobs.nodes import node_agent
    node_agent.IDLE_S = float(sys.argv[2])
    path = sys.argv[1]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)
    print("ready", flush=True)
    newer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def take_over():  # a newer agent's file in its place, while this one serves
        os.remove(path)
        newer.bind(path)

    if len(sys.argv) > 3:
        threading.Timer(0.2, take_over).start()
    node_agent.serve(listener, path)
    print("ended", flush=True)
""")


def _run(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _AGENT, str(path), "0.5", *extra],
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.timeout(90)
def test_an_idle_agent_ends_and_removes_its_socket(tmp_path: Path) -> None:
    path = tmp_path / "agent.sock"
    done = _run(path)
    assert done.stdout.split() == ["ready", "ended"], done.stderr
    assert not path.exists()


@pytest.mark.timeout(90)
def test_an_agent_leaves_a_newer_agents_socket_alone(tmp_path: Path) -> None:
    path = tmp_path / "agent.sock"
    done = _run(path, "replaced")
    assert done.stdout.split() == ["ready", "ended"], done.stderr
    assert path.exists()  # not this agent's file: left for its owner
