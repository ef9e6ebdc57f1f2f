"""A verb's real ``--json`` output held to its declaration (``rankdebug.protocol``): the
tests that run ``jobs``, ``stacks``, ``eval``, ``attach`` or ``smoke`` check every answer
they get with ``problem``. The CLI's error envelope (``errors.envelope``) is the one error
shape of every verb, not a verb's own: it passes."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from rankdebug.protocol import attach, fields, jobs, smoke, stacks
from rankdebug.protocol import eval as eval_lines


def _envelope(line: object) -> bool:
    return (isinstance(line, dict) and set(line) == {"error"}
            and isinstance(line["error"], dict) and isinstance(line["error"].get("message"), str))


def problem(verb: str, lines: list[Any]) -> str | None:
    """What is wrong with ``verb``'s JSON lines (None: nothing); a verb not declared here
    passes."""
    for line in lines:
        if _envelope(line):
            continue
        found = _one(verb, line)
        if found:
            return found
    return None


def checked(args: tuple[str, ...], done: subprocess.CompletedProcess[str]
            ) -> subprocess.CompletedProcess[str]:
    """``done``, the run of ``rankdebug ARGS``, once its ``--json`` lines passed ``problem``
    (a verb that printed nothing passes: its test says what it expects)."""
    if args and "--json" in args and done.stdout.strip():
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        found = problem(args[0], lines)
        assert found is None, (found, lines)
    return done


def _one(verb: str, line: Any) -> str | None:
    if verb == "jobs":
        return fields.shape_problem(line, jobs.SHAPES["Answer"], jobs.SHAPES)
    if verb == "stacks":
        return fields.shape_problem(line, stacks.SHAPES["Answer"], stacks.SHAPES)
    if verb == "smoke":
        root = "Stage" if isinstance(line, dict) and "stage" in line else "Answer"
        return fields.shape_problem(line, smoke.SHAPES[root], smoke.SHAPES)
    if verb == "eval":
        return fields.problem(line, eval_lines.LINES, shapes=eval_lines.SHAPES)
    if verb == "attach":
        return fields.problem(line, attach.LINES)
    return None
