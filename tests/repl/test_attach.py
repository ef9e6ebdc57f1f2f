"""``rankdebug debug JOB``: a job started by ``rankdebug launch`` in a terminal, debugged
from the prompt, then left running; a rank that has a client already is not taken."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from repl_helpers import PROMPT, SCRIPTS, debug, env, launcher, line_of, listening, registry_job


@pytest.fixture
def job(tmp_path: Path) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", "0,1", "--",
         launcher(tmp_path), "2"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL, text=True, cwd=SCRIPTS, env=env())
    try:
        job_id, _ = listening(proc, 2)
        yield job_id
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def test_attach_break_on_one_rank_then_detach_leaves_it_running(job: str) -> None:
    t = debug([job], ["list", "b steps.py:21 ranks 1", "c", "list", "p rank", "q"])
    assert t.code == 0, t.out + t.err
    assert t.head == [f"attached to job {job}: ranks 0,1 held"], t.out
    # Attached, the ranks run (they were waiting for a client: this one).
    assert t.after("list") == ["* rank 0  running", "* rank 1  running"]
    # `c` on running ranks waits for their next stop: rank 1 at its breakpoint, rank 0
    # paused with it (stop together).
    stops = t.after("c")
    assert "rank 1: stopped (breakpoint) at steps.py:21 in work" in stops, stops
    assert any(ln.startswith("rank 0: ") for ln in stops), stops
    # rank 0 answers too: its value, or (paused in time.sleep, native code) why not yet.
    answers = t.after("p rank")
    assert "rank 1: 1" in answers and any(a.startswith("rank 0: ") for a in answers), answers
    assert f"detached; job {job} runs on" in t.out
    # Still there, its ranks running, and open to the next client.
    entry = registry_job(job)
    assert entry is not None and len(entry["ranks"]) == 2
    again = debug([job], ["list", "r 0", "pause", "where", "q"])
    assert again.after("list") == ["* rank 0  running", "* rank 1  running"], again.out
    assert again.after("r 0") == ["current: rank 0"]
    paused = again.one("pause")
    assert paused.startswith("rank 0: ") and "steps.py" in paused, paused
    assert again.after("where")[0] == "rank 0:", again.out


def test_a_rank_with_a_client_already_is_not_taken_and_bad_jobs_are_one_line(job: str
                                                                              ) -> None:
    holder = subprocess.Popen([sys.executable, "-m", "rankdebug", "debug", job, "--ranks", "1"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              cwd=SCRIPTS, env=env())
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().startswith(f"attached to job {job}: rank 1 held")
        t = debug([job], ["list", "q"])
        assert t.code == 0, t.out + t.err
        assert "rank 1: not held: this rank already has a debugger client" in t.out, t.out
        assert t.after("list") == ["* rank 0  running",
                                   "  rank 1  not held: this rank already has a debugger "
                                   "client"]
        # Only rank 1 held elsewhere: asking for it alone gets nothing.
        alone = debug([job, "--ranks", "1"], [])
        assert alone.code == 1 and "not held" in alone.out
    finally:
        assert holder.stdin is not None
        holder.stdin.write("q\n")
        holder.stdin.close()
        holder.wait(30)
    for args, says in ((["nosuchjob"], "no job 'nosuchjob'"),
                       ([job, "--ranks", "7"], "no rank matching '7'"),
                       ([job, "--break", "x.py:1"], "only --ranks goes with a JOB"),
                       ([job, "--json"], "--json is not for the prompt"),
                       ([], "give a JOB")):
        bad = debug(args, [])
        assert bad.code == 2 and bad.out == "", (args, bad.out, bad.err)
        lines = bad.err.strip().splitlines()
        assert len(lines) == 1 and says in lines[0], (args, bad.err)


def test_ctrl_c_while_waiting_returns_to_the_prompt_and_the_job_lives(job: str) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "rankdebug", "debug", job],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=SCRIPTS, env=env())
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().startswith("attached")
        proc.stdin.write("c\n")  # no breakpoint: waits for a stop that does not come
        proc.stdin.flush()
        time.sleep(2.0)
        proc.send_signal(signal.SIGINT)
        proc.stdin.write("pause\nlist\nq\n")
        proc.stdin.close()
        out = proc.stdout.read()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "*** interrupted" in out, out
    after = out.split(PROMPT)
    listed = next(part for part in after if part.startswith("list"))
    assert listed.count("stopped") == 2 or listed.count("waiting in") + listed.count(
        "stopped") == 2, out
    assert registry_job(job) is not None


def test_a_stop_while_the_prompt_waits_is_one_line(job: str) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "rankdebug", "debug", job],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=SCRIPTS, env=env())
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().startswith("attached")
        proc.stdin.write("b steps.py:21 ranks 1\n")  # no `c`: the prompt just waits
        proc.stdin.flush()
        seen = []
        while not any("rank 1: stopped (breakpoint)" in ln for ln in seen):
            line = proc.stdout.readline()
            assert line, seen
            seen.append(line)
        said = next(ln for ln in seen if "rank 1: stopped (breakpoint)" in ln)
        assert said.strip().endswith("rank 1: stopped (breakpoint) at steps.py:21 in work")
        proc.stdin.write("list\nq\n")
        proc.stdin.close()
        rest = proc.stdout.read()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "* rank 1  stopped (breakpoint)  steps.py:21 in work" in rest, rest


def _read_until(fd: int, want: bytes, timeout: float = 60.0) -> bytes:
    import select

    got = b""
    deadline = time.monotonic() + timeout
    while want not in got:
        left = deadline - time.monotonic()
        assert left > 0, got
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the other side closed
                break
            if not chunk:
                break
            got += chunk
    return got


def test_on_a_terminal_the_prompt_edits_and_keeps_a_history(job: str, tmp_path: Path) -> None:
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "rankdebug", "debug", job], stdin=slave,
                            stdout=slave, stderr=slave, cwd=SCRIPTS,
                            env={**env(), "HOME": str(tmp_path), "TERM": "dumb"})
    os.close(slave)
    try:
        assert b"attached" in _read_until(master, PROMPT.encode())
        os.write(master, b"lisx\x7ft\r")  # a typo, erased (readline's editing)
        listed = _read_until(master, PROMPT.encode())
        assert b"* rank 0  running" in listed and b"* rank 1  running" in listed, listed
        os.write(master, b"q\r")
        _read_until(master, b"runs on")
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert (tmp_path / ".rankdebug_history").read_text().split()[-2:] == ["list", "q"]


def _launched(tmp: Path, *flags: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rankdebug", "launch", "--json", *flags, "--ranks", "0", "--",
         launcher(tmp), "4"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL, text=True, cwd=SCRIPTS, env=env())
    job_id, _ = listening(proc, 1)
    return proc, job_id


def test_armed_ranks_not_chosen_join_by_name_and_by_attach(tmp_path: Path) -> None:
    """An armed job with rank 0 chosen: `--ranks 1` starts rank 1's debugger and holds it;
    `attach 2-3` at the prompt adds ranks 2 and 3, which take breakpoints and group
    commands like the chosen rank."""
    proc, job = _launched(tmp_path, "--arm")
    try:
        one = debug([job, "--ranks", "1"], ["list", "p rank", "q"])
        assert one.code == 0, one.out + one.err
        assert one.head == [f"attached to job {job}: rank 1 held"], one.out
        assert one.after("list") == ["* rank 1  running"], one.out
        t = debug([job], ["list", "attach 2-3", "list", "attach 3", "b steps.py:"
                          f"{line_of('steps.py', 'BREAK')} ranks 3", "c", "p rank", "q"])
        assert t.code == 0, t.out + t.err
        # Without --ranks: the ranks that have endpoints (0 chosen, 1 started before).
        assert t.head == [f"attached to job {job}: ranks 0,1 held"], t.out
        assert t.after("attach 2-3") == ["attached ranks 2,3"], t.out
        assert [ln.split()[2] for ln in t.after("list", 1)] == ["0", "1", "2", "3"], t.out
        assert t.after("attach 3") == ["rank 3 already held"], t.out
        stops = t.after("c")
        assert any(s.startswith("rank 3: stopped (breakpoint) at steps.py:") for s in stops), t.out
        assert "rank 3: 3" in t.after("p rank"), t.out
        bad = debug([job], ["attach tp=0", "attach 9", "q"])
        assert bad.after("attach tp=0")[0].startswith("*** "), bad.out
        assert "no rank matching '9'" in bad.one("attach 9"), bad.out
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def test_a_rank_not_chosen_of_a_job_not_armed_is_refused_with_why(tmp_path: Path) -> None:
    proc, job = _launched(tmp_path)
    try:
        t = debug([job, "--ranks", "1"], [])
        assert t.code == 2, t.out + t.err
        said = t.out + t.err
        assert "rank 1 was not chosen and the job is not armed" in said, said
        assert "Traceback" not in said
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
