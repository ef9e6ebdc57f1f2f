"""The prompt's command reader and its renderings (pure functions: no job needed)."""

from __future__ import annotations

import pytest

from rankdebug.repl import render
from rankdebug.repl.commands import BadCommand, BreakSpec, Command, help_text, parse, parse_break


@pytest.mark.parametrize(("line", "want"), [
    ("c", Command("continue")), ("  n  ", Command("next")), ("bt", Command("where")),
    ("r tp=0 pp=1", Command("ranks", "tp=0 pp=1")), ("p x[0] + y", Command("p", "x[0] + y")),
    ("info b", Command("info", "b")), ("Q", Command("quit")), ("b 12", Command("break", "12")),
])
def test_commands_and_their_aliases(line: str, want: Command) -> None:
    assert parse(line) == want


def test_empty_lines_are_nothing() -> None:
    assert parse("") is None and parse("   \t") is None


@pytest.mark.parametrize(("line", "says"), [
    ("frobnicate 3", "unknown command 'frobnicate' (column 1)"),
    ("  c now", "continue takes nothing (column 5: 'now')"),
    ("p", "p needs an expression"),
    ("info bananas", "info takes breakpoints"),
    ("b train.py", "b takes FILE:LINE or LINE"),
    ("b train.py:0", "a line number starts at 1"),
    ("b :12:", "b takes FILE:LINE or LINE"),
])
def test_bad_lines_say_why_in_one_line(line: str, says: str) -> None:
    with pytest.raises(BadCommand) as exc:
        parse(line)
    assert says in str(exc.value) and "\n" not in str(exc.value)


def test_breakpoint_parts() -> None:
    assert parse_break("train.py:42") == BreakSpec("train.py", 42, None, None)
    assert parse_break("42 if loss > 4") == BreakSpec(None, 42, None, "loss > 4")
    assert parse_break("a/b c.py:7 ranks 0,2") == BreakSpec("a/b c.py", 7, "0,2", None)
    assert parse_break("m.py:3 ranks tp=0 pp=1 if step % 10 == 0") == BreakSpec(
        "m.py", 3, "tp=0 pp=1", "step % 10 == 0")
    assert parse_break("C:/x.py:9") == BreakSpec("C:/x.py", 9, None, None)


def test_values_are_grouped_largest_first_and_multiline_values_stay_aligned() -> None:
    lines = render.values([
        {"rank": 0, "text": "tensor([1., 2.])", "type": "Tensor"},
        {"rank": 1, "text": "tensor([1., 9.])", "type": "Tensor"},
        {"rank": 2, "text": "tensor([1., 2.])", "type": "Tensor"},
        {"rank": 3, "text": "a\nb", "type": "str"}])
    assert lines == ["ranks 0,2: tensor([1., 2.])", "rank 1: tensor([1., 9.])", "rank 3: a",
                     "        b"]


def test_stacks_alike_once_with_their_ranks() -> None:
    here = render.Where("/job/train.py", 3, "step")
    caller = render.Where("/job/train.py", 9, "main")
    other = render.Where("/job/train.py", 5, "load")
    lines = render.stacks([(0, [here, caller]), (1, [other, caller]), (2, [here, caller]),
                           (3, "rank 3: no answer within 30 s")], "/job")
    assert lines == ["ranks 0,2:", "  #0 train.py:3 in step", "  #1 train.py:9 in main",
                     "rank 1:", "  #0 train.py:5 in load", "  #1 train.py:9 in main",
                     "rank 3: rank 3: no answer within 30 s"]


def test_help_lists_every_command() -> None:
    text = help_text()
    for name in ("list", "ranks", "continue", "next", "step", "finish", "pause", "where", "p",
                 "break", "clear", "info", "quit"):
        assert f"  {name}" in text
