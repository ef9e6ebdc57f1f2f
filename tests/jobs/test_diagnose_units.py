"""``rankdebug diagnose``'s judgement without a job: a rank over reads (``seen.judge``), the
classes, the findings (each kind's sentence, and what is never said), the ``rank`` line's
round trip (what ``--hosts`` merges), the kernel counters' reading, and the verb's errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

from rankdebug.jobs.analysis.stacks import RankStack
from rankdebug.jobs.diagnose import activity, findings
from rankdebug.jobs.diagnose.classes import classes
from rankdebug.jobs.diagnose.seen import Seen, judge
from rankdebug.jobs.discover import Rank
from rankdebug.pyspy import Frame, Thread

TRAIN = "/home/me/proj/train.py"
C10D = "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py"


def frames(*names_lines: tuple[str, int], c10d: str | None = None) -> list[Frame]:
    """Innermost first: an optional torch.distributed frame, then the user's."""
    out = [Frame(c10d, C10D, 3252)] if c10d else []
    return out + [Frame(name, TRAIN, line) for name, line in names_lines]


def stack(rank: int, fr: list[Frame], current: dict[str, Any] | None = None,
          issued: int = 5) -> RankStack:
    rs = RankStack(pid=100 + rank, rank=rank, via="handler")
    rs.threads = [Thread("MainThread", 1, 100 + rank, True, False, False, fr)]
    rs.collectives = {"current": current, "groups": {
        "0": {"desc": "default_pg", "ranks": [0, 1, 2, 3], "issued": issued, "done": 5}}}
    if fr and fr[0].file == C10D:
        rs.collective = {"name": fr[0].name, "file": C10D, "line": 3252, "thread": "MainThread"}
    return rs


def rank(n: int) -> Rank:
    return Rank(pid=100 + n, rank=n, local_rank=n, world_size=4, host="node0")


def blocked() -> activity.Activity:
    return activity.Activity(seconds=1.0, ran=0.0, ready=0.0, wakes=0)


def waiting(n: int, op: str = "all_reduce", seq: int | None = 6, group: str | None = "0",
            line: int = 20) -> Seen:
    s = Seen(n, 100 + n, "node0", state="waiting", reads=3, waited=3, seconds=2.0,
             frames=frames(("train_step", line), ("main", 50), c10d=op),
             collective={"op": op, "seq": seq, "group": group})
    s.where = s.frames[1]
    return s


def stuck(n: int, manner: str, firm: bool, function: str = "load_batch") -> Seen:
    s = Seen(n, 100 + n, "node0", state="stuck", manner=manner, firm=firm, reads=3,
             seconds=2.0, cpu=97.0 if manner == "busy" else 0.0,
             frames=frames((function, 30), ("main", 48)))
    s.where = s.frames[0]
    return s


def verdict(seen: list[Seen]) -> findings.Verdict:
    groups, descs = findings.groups_of(seen)
    findings.settle(seen, groups)
    return findings.judge(seen, classes(seen), groups, descs)


def test_the_same_collective_in_every_read_is_waiting() -> None:
    cur = {"op": "all_reduce", "seq": 6, "group": "0"}
    reads = [stack(0, frames(("train_step", 20), ("main", 50), c10d="all_reduce"), cur, 6)
             for _ in range(3)]
    seen = judge(rank(0), reads, blocked(), 1.0, False)
    assert seen.state == "waiting" and seen.collective == cur
    assert seen.where is not None and (seen.where.name, seen.where.line) == ("train_step", 20)


def test_a_difference_read_at_different_moments_is_progress() -> None:
    """Caught in all_reduce #5, then #6: it went on between the reads (never 'waiting')."""
    reads = [stack(0, frames(("train_step", 20), ("main", 50), c10d="all_reduce"),
                   {"op": "all_reduce", "seq": seq, "group": "0"}, seq) for seq in (5, 5, 6)]
    seen = judge(rank(0), reads, blocked(), 1.0, False)
    assert seen.state == "running" and seen.progressed is True


def test_a_py_spy_read_that_woke_is_not_waiting() -> None:
    """No numbers, the same stack each time, but the thread woke: it may have gone round."""
    fr = frames(("train_step", 20), ("main", 50), c10d="all_reduce")
    reads = [RankStack(pid=100, rank=0, via="py-spy", collective={"name": "all_reduce"},
                       threads=[Thread("MainThread", 1, 100, True, False, False, fr)])
             for _ in range(3)]
    woke = activity.Activity(seconds=1.0, ran=0.01, ready=0.0, wakes=40)
    assert judge(rank(0), reads, woke, 1.0, False).state == "running"
    assert judge(rank(0), reads, blocked(), 1.0, False).state == "waiting"


def test_a_handler_and_a_py_spy_read_of_one_stack_agree() -> None:
    """py-spy qualifies nested functions (``f.<locals>.wrapper``), a handler does not."""
    a = frames(("train_step", 20), ("main", 50), c10d="all_reduce")
    b = [Frame("_exception_logger.<locals>.wrapper", C10D, 83) if f.file == C10D else f
         for f in a]
    cur = {"op": "all_reduce", "seq": 6, "group": "0"}
    spy = RankStack(pid=100, rank=0, via="py-spy", collective={"name": "all_reduce"},
                    threads=[Thread("MainThread", 1, 100, True, False, False, b)])
    seen = judge(rank(0), [spy, stack(0, a, cur, 6), stack(0, a, cur, 6)], blocked(), 1.0,
                 False)
    assert seen.state == "waiting" and seen.collective == cur


def test_one_read_proves_nothing() -> None:
    seen = judge(rank(0), [stack(0, frames(("load", 9)))], blocked(), 0.0, False)
    assert seen.state == "unknown" and seen.reason == "read only once"


def test_a_rank_that_issued_one_more() -> None:
    seen = [waiting(0, seq=7), waiting(1, seq=7), waiting(2, seq=7), waiting(3, seq=8)]
    v = verdict(seen)
    [found] = v.findings
    assert found.ranks == [3] and v.healthy is None
    assert "issued 1 more collective of that group than ranks 0-2" in found.why


def test_an_unread_rank_is_named_as_unread() -> None:
    other = Seen(3, None, None, reason="rank 3 runs on node1: add --hosts node1")
    v = verdict([waiting(0), waiting(1), waiting(2), other])
    [found] = v.findings
    assert found.ranks == [3] and found.where is None
    assert found.why.endswith("could not be read: rank 3 runs on node1: add --hosts node1")


def test_every_rank_in_one_collective_that_does_not_complete() -> None:
    v = verdict([waiting(r) for r in range(4)])
    [found] = v.findings
    assert found.ranks == [0, 1, 2, 3] and "did not complete" in found.why
    # Never said when a rank of the group was not read: it may be the one they wait for.
    v = verdict([*(waiting(r) for r in range(3)), Seen(3, None, None, reason="gone")])
    assert [f.ranks for f in v.findings] == [[3]]


def test_busy_in_one_function_is_stuck_only_if_ranks_wait_for_it() -> None:
    alone = [stuck(0, "busy", False), stuck(1, "busy", False)]
    v = verdict(alone)
    assert [s.state for s in alone] == ["running", "running"] and v.findings == []
    assert v.healthy is not None
    held = [waiting(0), waiting(1), waiting(2), stuck(3, "busy", False)]
    v = verdict(held)
    [found] = v.findings
    assert found.ranks == [3] and "spinning in Python" in found.why
    assert found.where is not None and found.where.name == "load_batch"


def test_a_slow_rank_is_said_not_blamed() -> None:
    slow = Seen(3, 103, "node0", state="running", moved=True, progressed=True, reads=3,
                seconds=2.0, frames=frames(("augment", 12), ("main", 48)))
    slow.where = slow.frames[0]
    v = verdict([waiting(0), waiting(1), waiting(2), slow])
    assert v.findings == [] and v.healthy is not None
    assert "rank 3 is behind" in v.healthy and "slow, not stuck" in v.healthy
    # Its stack moved but none of its collectives went on: the others wait for it.
    slow.state, slow.progressed = "running", False
    v = verdict([waiting(0), waiting(1), waiting(2), slow])
    assert [f.ranks for f in v.findings] == [[3]] and v.healthy is None


def test_ranks_blocked_with_nobody_waiting() -> None:
    v = verdict([stuck(r, "blocked", True, "next_batch") for r in range(2)])
    [found] = v.findings
    assert found.ranks == [0, 1] and "no rank waits in a collective" in found.why


def test_running_ranks_in_one_loop_make_one_class() -> None:
    def run(n: int, *fr: tuple[str, int]) -> Seen:
        s = Seen(n, 100 + n, "h", state="running", moved=True, reads=2,
                 frames=frames(*fr))
        s.where = s.frames[0]
        return s

    seen = [run(0, ("train", 79), ("main", 50)), run(1, ("train_step", 20), ("train", 79),
                                                      ("main", 50)),
            run(2, ("train", 83), ("main", 50)), run(3, ("evaluate", 5), ("main", 52))]
    got = classes(seen)
    assert [c.ranks for c in got] == [[0, 1, 2], [3]]
    assert got[0].where is not None and got[0].where.name == "train"


def test_a_rank_line_round_trips() -> None:
    s = waiting(2)
    s.cpu, s.wakes, s.collectives = 0.5, 0, {"current": None, "groups": {}}
    back = Seen.from_json(json.loads(json.dumps(s.to_json())))
    assert back.to_json() == s.to_json()
    junk = Seen.from_json({"rank": "x", "state": "bogus", "frames": [1, {"file": 3}]})
    assert (junk.rank, junk.state, junk.frames) == (None, "unknown", [])


def test_the_kernel_counters_of_a_blocked_and_a_busy_thread() -> None:
    """A real process: a child blocked on a pipe never wakes; one spinning is busy."""
    code = ("import sys, time\nif sys.argv[1] == 'spin':\n    while True: pass\n"
            "sys.stdin.read()\n")
    procs = {kind: subprocess.Popen([sys.executable, "-c", code, kind],
                                    stdin=subprocess.PIPE) for kind in ("block", "spin")}
    try:
        time.sleep(0.5)
        first = {k: activity.look(p.pid, time.monotonic()) for k, p in procs.items()}
        time.sleep(0.6)
        last = {k: activity.look(p.pid, time.monotonic()) for k, p in procs.items()}
        got = {k: activity.measure([(first[k], last[k])]) for k in procs}
        assert got["block"] is not None and got["block"].manner() == "blocked"
        assert got["spin"] is not None and got["spin"].manner() == "busy"
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
    assert activity.look(procs["spin"].pid, 0.0) is None  # gone
    assert activity.measure([(None, None)]) is None


def test_the_verb_refuses_a_bad_job_and_bad_options() -> None:
    def run(*args: str) -> tuple[int, Any]:
        out = subprocess.run([sys.executable, "-m", "rankdebug", "diagnose", *args, "--json"],
                             capture_output=True, text=True, timeout=60, check=False)
        return out.returncode, json.loads(out.stdout)

    code, said = run("no-such-job")
    assert code == 2 and said["error"]["message"].startswith("no job 'no-such-job'")
    assert set(said["error"]) == {"message", "line", "column"}
    code, said = run("x", "--samples", "1")
    assert code == 2 and "--samples" in said["error"]["message"]
    code, said = run("x", "--hosts=-oProxyCommand=touch /tmp/x")
    assert code == 2 and "error" in said
    text = subprocess.run([sys.executable, "-m", "rankdebug", "diagnose", "no-such-job"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert text.returncode == 2 and text.stdout == ""
    assert text.stderr.strip() == ("rankdebug diagnose: no job 'no-such-job' (see `rankdebug "
                                   "jobs`)")


def test_the_main_thread_counters_of_this_process() -> None:
    """``look`` reads the main thread (tid = pid), not the thread that asks."""
    got: list[activity.Counters | None] = []
    t = threading.Thread(target=lambda: got.append(activity.look(os.getpid(), 1.0)))
    t.start()
    t.join()
    assert got[0] is not None and got[0].run_ns > 0


def test_a_rank_read_without_numbers_is_not_said_in_another_collective() -> None:
    """Ranks 0 and 2 answer through their handlers (all_reduce #6 of group 0); rank 1 was
    read by py-spy in the same all_reduce call, with no number: it cannot be told apart, so
    it is not blamed ("the ranks are in different collectives" named it before). Rank 3,
    stuck elsewhere, is the finding."""
    one = waiting(1, seq=None, group=None)
    v = verdict([waiting(0), one, waiting(2), stuck(3, "blocked", True)])
    blamed = sorted(r for f in v.findings for r in f.ranks)
    assert blamed == [3], [f.why for f in v.findings]
    assert not any("different collectives" in f.why for f in v.findings)
    # At another place the same op is still a different call.
    elsewhere = waiting(1, seq=None, group=None, line=33)
    v = verdict([waiting(0), elsewhere, waiting(2), waiting(3)])
    assert any(1 in f.ranks for f in v.findings)


def test_a_rank_read_without_numbers_beside_a_numbered_one_is_not_blamed_by_the_culprit() -> None:
    """The hang watch's unarmed case: rank 0 (handler) in all_reduce #6, rank 1 (py-spy)
    in the same call, rank 2 in a barrier it entered instead: rank 2 alone is named, from
    either side."""
    two = waiting(2, op="barrier", seq=None, group=None, line=104)
    v = verdict([waiting(0), waiting(1, seq=None, group=None), two])
    assert [f.ranks for f in v.findings] == [[2]], [f.why for f in v.findings]


def test_ranks_blocked_at_different_lines_of_one_function_are_two_classes() -> None:
    """nanoGPT's loop is all ``<module>``: rank 0 blocked in ``backward`` at line 306, rank 1
    asleep at line 304. Two places, two classes (one class of both hid the culprit)."""
    zero = stuck(0, "blocked", True, "<module>")
    zero.frames = [Frame("_engine_run_backward", "/venv/lib/python3.11/site-packages/torch/"
                         "autograd/graph.py", 979), Frame("<module>", TRAIN, 306)]
    zero.where = zero.frames[1]
    one = stuck(1, "blocked", True, "<module>")
    one.frames = [Frame("<module>", TRAIN, 304)]
    one.where = one.frames[0]
    assert [c.ranks for c in classes([zero, one])] == [[0], [1]]
    # Spinning ranks in one function stay one class: their lines differ from read to read.
    spin = [stuck(r, "busy", False, "load_batch") for r in range(2)]
    spin[1].frames = frames(("load_batch", 31), ("main", 48))
    spin[1].where = spin[1].frames[0]
    assert [c.ranks for c in classes(spin)] == [[0, 1]]


def test_the_native_frames_name_ddp_s_collectives() -> None:
    """py-spy's ``--native`` frames of a main thread blocked in ``backward`` or in DDP's
    forward: the Reducer's wait says which collective, in the Flight Recorder's words."""
    from rankdebug.jobs.diagnose.native_wait import waited_in

    def native(*names: str) -> list[dict[str, Any]]:
        return [{"name": n, "filename": "libtorch_cpu.so", "line": 0} for n in names]

    assert waited_in(native("pthread_cond_wait", "std::condition_variable::wait",
                            "c10d::Reducer::finalize_backward",
                            "torch::autograd::Engine::thread_main")) == {
        "op": "all_reduce", "seq": None, "group": None, "context": "DDP bucket, from backward"}
    assert waited_in(native("c10d::Work::wait", "c10d::Reducer::sync_bucket_indices"))[
        "op"] == "broadcast"  # type: ignore[index]
    assert waited_in(native("pthread_cond_wait", "torch::autograd::Engine::execute")) is None
    assert waited_in([]) is None


def test_unnumbered_collectives_beside_a_rank_in_none_blame_that_rank_once() -> None:
    """A plain DDP job read by py-spy: ranks 0,1 in the bucket rebuild's broadcast, rank 2
    in backward's all_reduce (past the broadcast, but no number says so), rank 3 in its own
    code. Rank 3 is the one finding, said once; rank 2 is said beside it, not blamed."""
    a = [waiting(r, op="broadcast", seq=None, group=None) for r in (0, 1)]
    b = waiting(2, op="all_reduce", seq=None, group=None, line=21)
    v = verdict([*a, b, stuck(3, "blocked", True, "next_batch")])
    assert [f.ranks for f in v.findings] == [[3]], [f.why for f in v.findings]
    assert "rank 2 waits in all_reduce" in v.findings[0].why
    assert "different collectives" not in v.findings[0].why
    # With no rank outside a collective, the different calls are the finding, as before.
    v = verdict([*a, b])
    assert any("different collectives" in f.why for f in v.findings)


def test_variables_that_change_in_a_shared_frame_are_progress() -> None:
    """``busy_progress.changed``: two reads of a rank's frames (outermost first), each with
    its variables; a change in a frame both share is progress, one below where they part
    is not compared (the place's own test says that)."""
    from rankdebug.jobs.diagnose.busy_progress import changed

    main = (("<module>", TRAIN, 10), {})

    def ev(k: int, x: int = 7, line: int = 20) -> Any:
        return (("evaluate", TRAIN, line), {"k": str(k), "x": ("<Tensor", x)})

    assert changed([main, ev(3)], [main, ev(3, x=8)])  # a new batch bound: it computes
    assert changed([main, ev(3)], [main, ev(9)])  # its loop went on
    assert not changed([main, ev(3)], [main, ev(3)])  # the same values: spinning
    block = (("Block.forward", TRAIN, 104), {"self": ("<Block", 5)})
    lib = (("Linear.forward", "/venv/lib/python3.11/site-packages/torch/nn/linear.py", 134),
           {"input": ("<Tensor", 1)})
    assert changed([main, ev(3), block, lib], [main, ev(9), block, lib])
    poll = (("poll", TRAIN, 5), {"self": ("<Source", 1)})
    # The frames part below evaluate: only what both share is compared.
    assert not changed([main, ev(3), poll], [main, ev(3, line=21)])
    other = (("main", TRAIN, 30), {"k": "1"})
    assert not changed([other], [main])
