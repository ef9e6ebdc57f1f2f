"""Breakpoints bound to ranks by their condition (``ranks SPEC [and EXPR]``): what each
rank's gate makes of a client's ``setBreakpoints``, and how the answer maps back."""

from __future__ import annotations

from typing import Any

import pytest

from rankdebug.runtime import bound_breaks


@pytest.mark.parametrize(("condition", "expected"), [
    ("ranks 1", ("1", None)),
    ("ranks 1,3", ("1,3", None)),
    ("ranks 1, 3", ("1,3", None)),
    ("rank 2", ("2", None)),
    ("ranks 0-3 and loss > 1", ("0-3", "loss > 1")),
    ("  ranks local0  and  x == {'a': 1}  ", ("local0", "x == {'a': 1}")),
    ("ranks all", ("all", None)),
    ("ranks_seen > 3", None),  # a Python condition about a variable called ranks_seen
    ("ranks > 3", None),
    ("ranks x", None),
    ("x > 1", None),
    ("", None),
    (None, None),
    (3, None),
])
def test_binding_reads_the_rank_list_and_the_rest(condition: object,
                                                 expected: tuple[str, str | None] | None
                                                 ) -> None:
    assert bound_breaks.binding(condition) == expected


def _args(*bps: dict[str, Any]) -> dict[str, Any]:
    return {"source": {"path": "/w/train.py"}, "breakpoints": list(bps),
            "lines": [b["line"] for b in bps]}


def test_unbound_breakpoints_are_left_alone() -> None:
    args = _args({"line": 3}, {"line": 5, "condition": "x > 1"})
    assert bound_breaks.for_rank(args, 1, 1) == (args, None)


def test_a_rank_keeps_what_is_bound_to_it_and_the_rest_of_the_condition() -> None:
    args = _args({"line": 3}, {"line": 5, "condition": "ranks 1 and x > 1"},
                 {"line": 7, "condition": "ranks 0"}, {"line": 9, "condition": "ranks 0-1"})
    mine, mapping = bound_breaks.for_rank(args, 1, None)
    assert mine["breakpoints"] == [{"line": 3}, {"line": 5, "condition": "x > 1"},
                                   {"line": 9}]
    assert mine["lines"] == [3, 5, 9]
    assert mapping is not None
    assert mapping[:2] == [0, 1] and mapping[3] == 2
    assert isinstance(mapping[2], str) and "ranks 0" in mapping[2]
    # The client's own list of four, rank 0's line unverified with the reason.
    answer = {"breakpoints": [{"verified": True, "line": n, "id": n} for n in (3, 5, 9)]}
    body = bound_breaks.client_body(answer, mapping, None)
    assert [b.get("line") for b in body["breakpoints"]] == [3, 5, None, 9]
    assert body["breakpoints"][2]["verified"] is False
    assert "rank 1 ignores it" in body["breakpoints"][2]["message"]


def test_local_rank_specs_use_the_local_rank() -> None:
    args = _args({"line": 4, "condition": "ranks local1"})
    assert bound_breaks.for_rank(args, 5, 1)[0]["breakpoints"] == [{"line": 4}]
    assert bound_breaks.for_rank(args, 4, 0)[0]["breakpoints"] == []


def test_answer_without_binding_is_cut_to_the_clients_own_entries() -> None:
    answer = {"breakpoints": [{"line": 3}, {"line": 40}]}  # 40: a --break line added
    assert bound_breaks.client_body(answer, None, 1) == {"breakpoints": [{"line": 3}]}
    assert bound_breaks.client_body(answer, None, None) == answer


def test_a_short_answer_leaves_missing_entries_unverified() -> None:
    mapping: bound_breaks.Mapping = [0, 1]
    body = bound_breaks.client_body({"breakpoints": [{"verified": True}]}, mapping, None)
    assert body["breakpoints"] == [{"verified": True}, {"verified": False}]
