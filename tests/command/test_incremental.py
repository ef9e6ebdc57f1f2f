"""DocumentPlans: after any sequence of edits, the same plans as planning from scratch."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tree_sitter import Node

from rankdebug.command import DocumentPlans, line_moves, plan_all
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.state import State

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
SCRIPTS = sorted(p for p in CORPUS.glob("*.sh") if p.stat().st_size < 20_000)[:40]
SNIPPETS = ["echo hi", "export NPROC=2", "N=$((N+1))", "if [ -z \"$X\" ]; then X=1; fi",
            "torchrun --nproc_per_node 4 t.py", "f() { torchrun --nnodes 2 a.py \"$@\"; }",
            "f --x", "for i in 1 2; do A=$i; done", "\\", "\"", "cd sub", "}", "'"]


def as_json(plans: list[LaunchPlan]) -> list[dict[str, object]]:
    return [p.to_json() for p in plans]


edits = st.lists(
    st.tuples(st.integers(0, 10_000), st.integers(0, 3), st.sampled_from(SNIPPETS)),
    min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=st.sampled_from(SCRIPTS), changes=edits)
def test_incremental_equals_full_after_edits(script: Path, changes: list[tuple[int, int, str]]
                                             ) -> None:
    text = script.read_text(encoding="utf-8", errors="replace")
    doc = DocumentPlans(cwd=CORPUS)
    plans, _ = doc.update(text)
    assert as_json(plans) == as_json(plan_all(text, cwd=CORPUS)[0])
    for where, kind, snippet in changes:
        lines = text.split("\n")
        i = where % (len(lines) + 1)
        if kind == 0:
            lines.insert(i, snippet)
        elif kind == 1 and i < len(lines):
            del lines[i]
        elif kind == 2 and i < len(lines):
            lines[i] = lines[i] + " " + snippet
        elif i < len(lines):
            lines[i] = lines[i].replace("2", "3")
        text = "\n".join(lines)
        plans, _ = doc.update(text)
        assert as_json(plans) == as_json(plan_all(text, cwd=CORPUS)[0]), (where, kind, snippet)


def test_an_edit_in_one_command_rewalks_only_around_it() -> None:
    blocks = [f"A{i}=1\nexport B{i}=2\ntorchrun --nproc_per_node {i % 4 + 1} t{i}.py\n"
              for i in range(200)]
    text = "".join(blocks)
    doc = DocumentPlans()
    doc.update(text)
    assert doc.last_mode == "full"
    edited = text.replace("t100.py", "t100.py --lr 1", 1)
    plans, _ = doc.update(edited)
    assert doc.last_mode == "incremental"
    assert doc.last_rewalked <= 2 * 8
    assert [w.value for w in plans[100].argv][-2:] == ["--lr", "1"]
    # A line added near the top moves every later plan down by one line.
    moved, _ = doc.update("echo start\n" + edited)
    assert doc.last_rewalked <= 2 * 8
    assert [p.span.start_line for p in moved] == [p.span.start_line + 1 for p in plans]
    assert as_json(moved) == as_json(plan_all("echo start\n" + edited)[0])


MOVING = """\
log() { echo "[$(date +%T)] $*"; }
if [ -n "$A" ]; then PORT=29500; else PORT=29600; fi
export NCCL_DEBUG=WARN
""" + "".join(
    f"echo {i}\nCUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node {i % 4 + 1} "
    f"--master_port $PORT t{i}.py --lr $LR{i}\n"
    f"deepspeed --num_gpus 2 t{i}.py\n" for i in range(40))


def test_moved_plans_read_like_plans_moved_at_once() -> None:
    """Lines added and removed above many commands, more times than a plan keeps moves
    pending (line_moves.MAX_MOVES): the plans read, compare and copy as planned afresh,
    whether their words were read in between or not."""
    doc = DocumentPlans()
    doc.update(MOVING)
    text = MOVING
    for n in range(line_moves.MAX_MOVES + 6):
        lines = text.split("\n")
        if n % 3 == 2:
            del lines[1]
        else:
            lines.insert(1, f"# {n}")
        text = "\n".join(lines)
        plans, _ = doc.update(text)
        fresh = plan_all(text)[0]
        assert [p.span for p in plans] == [p.span for p in fresh]
        if n % 10 == 9:  # (otherwise only their spans are read)
            assert as_json(plans) == as_json(fresh)
            assert plans == fresh and fresh == plans
            assert [copy.copy(p) for p in plans] == fresh
            assert [dataclasses.replace(p, cwd="/x") for p in plans] == [
                dataclasses.replace(p, cwd="/x") for p in fresh]
    # Moved, not yet read: the plans as walked are still behind them.
    assert all(line_moves.origin(p) is not p for p in doc.update("#\n" + text)[0])


def test_kept_states_hold_no_syntax_tree() -> None:
    """The states kept for the next edit name functions by their text, not by a node: a
    node keeps its whole tree alive, and there is a new tree per edit."""
    doc = DocumentPlans()
    text = MOVING
    doc.update(text)
    for n in range(30):
        text = text.replace(f"t{n}.py --lr", f"t{n}.py --lr2", 1)
        doc.update(text if n % 2 else "# top\n" + text)

    def nodes(state: State, seen: set[int]) -> int:
        if id(state) in seen:
            return 0
        seen.add(id(state))
        return sum(isinstance(fn.node, Node) + nodes(fn.defined_state, seen)
                   for fn in state.functions.values())

    kept = [rec.before for rec in doc._records if rec.before is not None]
    assert kept and all(nodes(state, set()) == 0 for state in kept)
    assert doc._final is not None  # its functions are nodes of the current tree, to call
    assert all(isinstance(fn.node, Node) for fn in doc._final.functions.values())
    assert all(nodes(fn.defined_state, set()) == 0 for fn in doc._final.functions.values())
