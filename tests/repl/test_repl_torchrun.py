"""``rankdebug debug -- torchrun ...``: a real 2-rank gloo job on a dp x tp DeviceMesh, both
ranks held; their coordinates listed and chosen by selector, values read in each rank's frame,
a rank stepped alone into an all_reduce whose peer is stopped is said to be blocked there, and
continues once its peer does."""

from __future__ import annotations

from repl_helpers import debug, job_of, line_of, registry_job, tool

BREAK = line_of("gloo_steps.py", "BREAK")  # x = x + rank + 1
REDUCE = BREAK + 1  # dist.all_reduce(x)
AFTER = REDUCE + 1


def test_torchrun_gloo_two_ranks_break_print_step_blocked_continue() -> None:
    # --stop alone (a launch option, passed on): each rank runs to the breakpoint itself, so
    # that both are there (stop together would pause the later one wherever it is).
    t = debug(["--ranks", "0,1", "--stop", "alone", "--", tool("torchrun"),
               "--nproc-per-node", "2", "gloo_steps.py"], [
        f"b gloo_steps.py:{BREAK}", "c", "p x", "p rank", "p x + rank", "ranks", "r tp=1", "n",
        "p x", "n", "list", "r all", "c", "p x", "q"], timeout=400, extra_env={"MESH": "1"})
    assert t.code == 0, t.out + t.err[-3000:]
    assert t.after("c") == [f"ranks 0,1: stopped (breakpoint) at gloo_steps.py:{BREAK} in <module>"]
    assert t.after("p x") == ["ranks 0,1: tensor([0., 0., 0.])"]
    assert set(t.after("p rank")) == {"rank 0: 0", "rank 1: 1"}
    assert set(t.after("p x + rank")) == {"rank 0: tensor([0., 0., 0.])",
                                          "rank 1: tensor([1., 1., 1.])"}
    # The job's DeviceMesh (dp x tp, 1 x 2) gives the coordinates; a selector picks by them.
    assert [" ".join(ln.split()) for ln in t.after("ranks")] == [
        f"* rank 0 stopped (breakpoint) dp 0 · tp 0 gloo_steps.py:{BREAK} in <module>",
        f"* rank 1 stopped (breakpoint) dp 0 · tp 1 gloo_steps.py:{BREAK} in <module>"]
    assert t.after("r tp=1") == ["current: rank 1"]
    assert t.after("n") == [f"rank 1: stopped (step) at gloo_steps.py:{REDUCE} in <module>"]
    assert t.after("p x", 1) == ["rank 1: tensor([2., 2., 2.])"]  # 0 + rank + 1
    # Over the all_reduce while rank 0 is stopped: blocked, as the group layer reads it.
    assert t.after("n", 1) == ["rank 1: blocked in all_reduce #1 (its peers are stopped)"]
    assert [" ".join(ln.split()) for ln in t.after("list")] == [
        f"rank 0 stopped (breakpoint) dp 0 · tp 0 gloo_steps.py:{BREAK} in <module>",
        "* rank 1 blocked in all_reduce #1 dp 0 · tp 1"]
    # Continued together, the all_reduce completes: rank 1's step lands after it, rank 0
    # stops at its breakpoint of the next step (x is the sum: 1 + 2 = 3 on both).
    resumed = t.after("c", 1)
    assert f"rank 1: stopped (step) at gloo_steps.py:{AFTER} in <module>" in resumed, resumed
    assert f"rank 0: stopped (breakpoint) at gloo_steps.py:{BREAK} in <module>" in resumed, resumed
    assert t.after("p x", 2) == ["ranks 0,1: tensor([3., 3., 3.])"]
    assert registry_job(job_of(t)) is None
