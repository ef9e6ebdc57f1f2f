"""``rankdebug debug -- CMD``: the job started as ``rankdebug launch`` starts it, its chosen
ranks driven from the prompt (stdlib-only ranks: scripts/steps.py)."""

from __future__ import annotations

import re
from pathlib import Path

from repl_helpers import alive, debug, job_of, launcher, line_of, registry_job, wait_for

PID = "p __import__('os').getpid()"
# The lines the transcripts below name (steps.py: BREAK 21, NEXT 22, CALL 30).
assert (line_of("steps.py", "BREAK"), line_of("steps.py", "NEXT"),
        line_of("steps.py", "CALL")) == (21, 22, 30)


def test_break_continue_step_print_where_then_quit_ends_the_job(tmp_path: Path) -> None:
    # --stop alone: both ranks run to the breakpoint themselves (stop together would pause
    # the later one wherever it is: tests/repl/test_attach.py and the bad-input test have it).
    t = debug(["--ranks", "0,1", "--stop", "alone", "--", launcher(tmp_path), "2"], [
        "list", "b steps.py:21", "info b", "c", "list", "p rank", "p weight", "p 1/0", PID,
        "where", "n", "finish", "r 1", "c", "list", "q"])
    assert t.code == 0, t.out + t.err
    assert re.search(r"job \S+: ranks 0,1 held; not started", t.out), t.out
    # The ranks wait for the prompt: nothing ran before `c`.
    assert t.after("list") == ["* rank 0  not started (set breakpoints, then c)",
                               "* rank 1  not started (set breakpoints, then c)"]
    assert t.after("b steps.py:21") == ["breakpoint 1 at steps.py:21"]
    assert t.after("info b") == ["breakpoint 1 at steps.py:21"]
    assert t.after("c") == ["ranks 0,1: stopped (breakpoint) at steps.py:21 in work"]
    assert [" ".join(ln.split()) for ln in t.after("list", 1)] == [
        "* rank 0 stopped (breakpoint) steps.py:21 in work",
        "* rank 1 stopped (breakpoint) steps.py:21 in work"]
    # Answers grouped by value, as compare groups them; an exception is the rank's answer.
    values = t.after("p rank")
    assert {"rank 0: 0", "rank 1: 1"} <= set(values), values
    assert t.after("p weight") == ["ranks 0,1: 1.5"]
    assert t.after("p 1/0") == ["ranks 0,1: error: ZeroDivisionError: division by zero"]
    pids = [int(ln.rsplit(" ", 1)[1]) for ln in t.after(PID)]
    assert len(pids) == 2 and all(p > 1 for p in pids), pids
    where = t.after("where")
    assert where[0] == "ranks 0,1:" and where[1] == "  #0 steps.py:21 in work", where
    assert "  #1 steps.py:30 in rank_main" in where
    assert t.after("n") == ["ranks 0,1: stopped (step) at steps.py:22 in work"]
    assert t.after("finish") == ["ranks 0,1: stopped (step) at steps.py:30 in rank_main"]
    assert t.after("r 1") == ["current: rank 1"]
    # Only rank 1 runs to the breakpoint; rank 0 stays where it was.
    assert t.after("c", 1) == ["rank 1: stopped (breakpoint) at steps.py:21 in work"]
    assert t.after("list", 2) == ["  rank 0  stopped (step)        steps.py:30 in rank_main",
                                  "* rank 1  stopped (breakpoint)  steps.py:21 in work"]
    # quit ends the job it started: every rank gone, the registry entry removed.
    assert f"job {job_of(t)} stopped" in t.out
    assert registry_job(job_of(t)) is None
    wait_for("the ranks to end", lambda: not any(alive(p) for p in pids), 15)


def test_bad_input_is_one_line_and_the_prompt_goes_on(tmp_path: Path) -> None:
    t = debug(["--ranks", "0,1", "--", launcher(tmp_path), "2"], [
        "bogus", "n", "b nosuch.py:3", "b steps.py:9999", "b steps.py:x", "r 7", "r tp=0",
        "r 0-", "p", "n extra", "clear 4", "info x", "b steps.py:21 ranks 5",
        "b /dev/zero:1", "b .:1", "\udcff\udcfe\x01 bytes", "b steps.py:0",
        "b steps.py:21 ranks 1 if step >= 2", "b steps.py:21", "info b", "c", "p step",
        "clear", "info b"])
    # EOF (no quit) ends the session and the job too.
    assert t.code == 0, t.out + t.err
    errors = {typed: lines for typed, lines in t.blocks[:17]}
    for typed, lines in errors.items():
        assert len(lines) == 1 and lines[0].startswith("*** "), (typed, lines)
    assert "unknown command 'bogus' (column 1)" in errors["bogus"][0]
    assert "rank 0 and 1" in errors["n"][0] or "not started yet" in errors["n"][0]
    assert "nosuch.py" in errors["b nosuch.py:3"][0]
    assert "has 59 lines" in errors["b steps.py:9999"][0] or "lines; no line 9999" in \
        errors["b steps.py:9999"][0]
    assert "names no rank" in errors["r 7"][0]
    assert "tp" in errors["r tp=0"][0]
    assert "p needs an expression" in errors["p"][0]
    assert "takes nothing (column 3" in errors["n extra"][0]
    assert "no breakpoint 4" in errors["clear 4"][0]
    assert "names no rank" in errors["b steps.py:21 ranks 5"][0]
    assert "/dev/zero is not a file" in errors["b /dev/zero:1"][0]
    assert ". is not a file" in errors["b .:1"][0]
    assert "unknown command" in errors["\ufffd\ufffd\x01 bytes"][0]
    assert "a line number starts at 1" in errors["b steps.py:0"][0]
    assert t.after("b steps.py:21 ranks 1 if step >= 2") == [
        "breakpoint 1 at steps.py:21, rank 1, if step >= 2"]
    assert "already" in t.one("b steps.py:21")
    # The breakpoint is rank 1's alone, and its condition holds: rank 1 stops at step 2 or
    # later; rank 0 is paused wherever it was (stop together).
    stopped = t.after("c")
    assert "rank 1: stopped (breakpoint) at steps.py:21 in work" in stopped, stopped
    # (paused where it was: in time.sleep, native code, it is shown waiting there)
    assert any(ln.startswith("rank 0: ") and ("pause" in ln or "waiting in" in ln)
               for ln in stopped), stopped
    step = next(ln for ln in t.after("p step") if ln.startswith("rank 1: "))
    assert int(step.split(": ")[1]) >= 2, step
    assert t.after("clear") == ["deleted breakpoint 1 at steps.py:21"]
    assert t.after("info b", 1) == ["no breakpoints"]
    assert registry_job(job_of(t)) is None


def test_ranks_that_end_are_said_and_the_job_end_ends_the_prompt(tmp_path: Path) -> None:
    # The ranks end by themselves after 40 steps: `c` (no breakpoint) waits until they
    # have, each end is one line, and the job's end ends the session with its status.
    t = debug(["--ranks", "0,1", "--", launcher(tmp_path), "2"], ["c", "list", "q"],
              extra_env={"STEPS_END": "40"})
    assert t.code == 0, t.out + t.err
    ended = t.one("c")
    assert "rank 0: exited" in ended and "rank 1: exited" in ended, t.out
    assert "the job ended (exit status 0)" in t.out, t.out
    # The prompt ended with the job: nothing after `c` was read.
    assert [typed for typed, _ in t.blocks] == ["c"], t.out
    assert registry_job(job_of(t)) is None


def test_no_wait_runs_the_ranks_at_once_and_a_huge_line_is_one_error(tmp_path: Path) -> None:
    huge = "x" * 2_000_000
    t = debug(["--no-wait", "--ranks", "0,1", "--", launcher(tmp_path), "2"],
              ["list", huge, f"p {huge[:100_000]}", "pause", "p len(str(rank))"])
    assert t.code == 0, t.out[-2000:] + t.err[-2000:]
    assert not any("not started" in ln for ln in t.head), t.head
    assert t.after("list") == ["* rank 0  running", "* rank 1  running"]
    # Echoed cut, answered in one line; the prompt goes on.
    cut = [lines for typed, lines in t.blocks if typed.startswith("xxx")]
    assert len(cut) == 1 and len(cut[0]) == 1 and cut[0][0].startswith("*** unknown command")
    assert len(t.out) < 10_000, len(t.out)
    assert "pause" in [typed for typed, _ in t.blocks]
    assert t.after("p len(str(rank))") in (["ranks 0,1: 1"], ["rank 0: 1", "rank 1: 1"]) or all(
        ln.startswith(("rank", "ranks")) for ln in t.after("p len(str(rank))"))
