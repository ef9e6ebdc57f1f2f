"""The declared messages (rankdebug.protocol) and what is generated from them: the JSON
Schema and the extension's TypeScript types are current, and the check reads a message as
its declaration says (the launch tests check every event a real job prints with it; the
control socket's ``ctl.check`` is the same vocabulary's, with its bounds)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rankdebug.protocol import attach, ctl, fields, launch, smoke, stacks
from rankdebug.protocol import eval as eval_lines
from rankdebug.protocol import jobs as jobs_answer

ROOT = Path(__file__).resolve().parent.parent


def test_generated_files_are_current() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_wire.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_schema_names_every_event_and_its_required_fields() -> None:
    schema = json.loads((ROOT / "docs" / "schema" / "launch-events.schema.json").read_text())
    variants = {v["title"]: v for v in schema["oneOf"]}
    assert set(variants) == set(launch.EVENTS)
    assert variants["listening"]["required"] == ["event", "rank", "host", "port"]
    assert variants["exited"]["properties"]["code"] == {"type": "integer",
                                                        "description": "its exit status"}


def test_a_message_is_checked_field_by_field() -> None:
    ok = {"event": "listening", "rank": 1, "host": "127.0.0.1", "port": 5678, "pid": 9,
          "job": "J"}
    assert fields.problem(ok, launch.EVENTS) is None
    assert fields.problem({**ok, "port": "5678"}, launch.EVENTS) == \
        "listening: port is '5678', not int"
    assert fields.problem({**ok, "rank": True}, launch.EVENTS) == \
        "listening: rank is True, not int"
    assert fields.problem({k: v for k, v in ok.items() if k != "rank"}, launch.EVENTS) == \
        "listening: no rank"
    assert fields.problem({**ok, "extra": 1}, launch.EVENTS) == "listening: undeclared extra"
    assert fields.problem({"event": "bogus"}, launch.EVENTS) == "unknown event 'bogus'"
    assert fields.problem({"event": "arrived", "command": "step", "ranks": [0, "1"]},
                          launch.EVENTS) == "arrived: ranks is [0, '1'], not [int]"


def _answer(**job: object) -> dict[str, object]:
    rank = {"pid": 7, "rank": 0, "local_rank": 0, "world_size": 1, "host": "n0", "port": None,
            "address": None, "state": "running", "proc_state": "sleeping", "cpu": 0.5,
            "cpu_time": 1.0, "rss": 1, "threads": 2, "gpu": None,
            "cuda_visible_devices": None, "command": ["python"], "cwd": "/w",
            "start_time": 1.0, "armed": False, "socket": None, "raised": None,
            "collective": None, "role": None, "coords": None}
    one = {"id": "J", "source": "registry", "host": "n0", "launcher": "torchrun",
           "launcher_pid": 6, "command": ["torchrun"], "cwd": "/w", "start_time": 1.0,
           "world_size": 1, "rendezvous": None, "run_id": None, "armed": False,
           "ranks": [rank], "dir": "/run/user/1/rankdebug/J", **job}
    return {"host": "n0", "time": 1.0, "scan_ms": 1.0, "processes": 3, "jobs": [one],
            "warnings": [], "registry": "/run/user/1/rankdebug"}


def test_the_jobs_answer_is_checked_object_by_object() -> None:
    shapes = jobs_answer.SHAPES
    assert fields.shape_problem(_answer(), shapes["Answer"], shapes) is None
    rank = _answer()["jobs"][0]["ranks"][0]  # type: ignore[index]
    assert fields.shape_problem(_answer(ranks=[{**rank, "port": "5678"}]), shapes["Answer"],
                                shapes) == "Answer.jobs[0].ranks[0].port is '5678', not int"
    assert fields.shape_problem(_answer(ranks=[{**rank, "gpu": [{"uuid": 3}]}]),
                                shapes["Answer"], shapes) == \
        "Answer.jobs[0].ranks[0].gpu[0].index is missing"
    assert fields.shape_problem(_answer(extra=1), shapes["Answer"], shapes) == \
        "Answer.jobs[0]: undeclared extra"
    assert fields.shape_problem(_answer(dir=None), shapes["Answer"], shapes) is None
    assert fields.shape_problem(_answer(armed=None), shapes["Answer"], shapes) == \
        "Answer.jobs[0].armed is null"
    schema = json.loads((ROOT / "docs" / "schema" / "jobs-answer.schema.json").read_text())
    assert schema["$defs"]["Job"]["properties"]["ranks"]["items"] == {"$ref": "#/$defs/Rank"}
    assert set(schema["$defs"]) == set(shapes)


def test_a_bounded_field_holds_its_range_its_length_and_no_nul() -> None:
    port = fields.Field("int", lo=0, hi=65535)
    assert [port.allows(v) for v in (0, 65535, -1, 65536, True, "1")] == \
        [True, True, False, False, False, False]
    name = fields.Field("str", most=3)
    assert [name.allows(v) for v in ("abc", "abcd", "a\0", "")] == [True, False, False, True]
    assert fields.Field("str").allows("a\0" * 9)  # unbounded: as before
    spec = fields.Field("ranks", lo=0, hi=3, most=8)
    assert [spec.allows(v) for v in (3, 4, "0-3", "0-3,5,6,7", [0, 3], [0, 4], [0] * 4,
                                     [0] * 5, [True], None, 1.0)] == \
        [True, False, True, False, True, False, True, False, False, False, False]


def test_an_open_message_lets_undeclared_fields_through() -> None:
    declared = {"x": fields.Message("x", "", {"n": fields.Field("int")}, more=True)}
    assert fields.problem({"event": "x", "n": 1, "newer": 2}, declared) is None
    assert fields.problem({"event": "x", "n": "1", "newer": 2}, declared) == \
        "x: n is '1', not int"


def test_a_missing_field_is_said_before_a_mistyped_one() -> None:
    with pytest.raises(ctl.Bad, match=r"^run-to needs line \(a line number from 1\)$"):
        ctl.check({"command": "run-to", "file": 5})
    with pytest.raises(ctl.Bad, match=r"^run-to: line must be a line number from 1, not 0$"):
        ctl.check({"command": "run-to", "file": "/a.py", "line": 0})
    with pytest.raises(ctl.Bad, match=r"^pause: ranks must be a rank spec .*, not 'a\\x00b'$"):
        ctl.check({"command": "pause", "ranks": "a\0b"})
    assert ctl.check({"command": "pause", "ranks": [0, 1], "newer": True}) == \
        ("command", "pause")
    assert ctl.check({"event": "listening", "rank": 1, "port": 65535, "argv": []}) == \
        ("event", "listening")


def test_the_ctl_schema_names_every_command_report_and_reply() -> None:
    schema = json.loads((ROOT / "docs" / "schema" / "ctl.schema.json").read_text())
    defs = schema["$defs"]
    assert [v["title"] for v in defs["command"]["oneOf"]] == list(ctl.COMMANDS)
    assert [v["title"] for v in defs["report"]["oneOf"]] == list(ctl.EVENTS)
    assert set(defs) == {"command", "report", "reply", *ctl.REPLIES}
    listening = next(v for v in defs["report"]["oneOf"] if v["title"] == "listening")
    assert listening["required"] == ["event", "rank"]
    assert listening["additionalProperties"] is True
    assert listening["properties"]["port"]["minimum"] == 0
    assert listening["properties"]["port"]["maximum"] == 65535
    pause = defs["command"]["oneOf"][1]
    assert [k.get("type") for k in pause["properties"]["ranks"]["anyOf"]] == \
        ["integer", "array", "string"]
    assert defs["Refused"]["properties"]["error"] == {"$ref": "#/$defs/Problem"}


def test_each_verbs_schema_holds_its_declaration() -> None:
    def schema(name: str) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((ROOT / "docs" / "schema" / name).read_text())
        return loaded

    assert set(schema("stacks-answer.schema.json")["$defs"]) == set(stacks.SHAPES)
    assert set(schema("smoke-answer.schema.json")["$defs"]) == {"answer", "stage",
                                                                *smoke.SHAPES}
    for name, declared in (("eval-lines.schema.json", eval_lines.LINES),
                           ("attach-lines.schema.json", attach.LINES)):
        lines = schema(name)["$defs"]["line"]["oneOf"]
        assert [v["title"] for v in lines] == list(declared)
    compare = schema("eval-lines.schema.json")["$defs"]["line"]["oneOf"][2]
    assert compare["properties"]["groups"] == {"type": "array",
                                               "items": {"$ref": "#/$defs/Group"}}
    group = schema("stacks-answer.schema.json")["$defs"]["Group"]["properties"]["ranks"]
    assert group["items"] == {"type": ["integer", "null"]}


def test_a_line_is_checked_with_its_nested_objects() -> None:
    good = {"event": "compare", "groups": [{"ranks": [0, 1], "text": "1"}], "at": None}
    assert fields.problem(good, eval_lines.LINES, shapes=eval_lines.SHAPES) is None
    assert fields.problem({**good, "groups": [{"ranks": [0], "text": 1}]}, eval_lines.LINES,
                          shapes=eval_lines.SHAPES) == "compare.groups[0].text is 1, not str"
    assert fields.problem({**good, "groups": [{"ranks": [None], "text": "1"}]},
                          eval_lines.LINES, shapes=eval_lines.SHAPES) == \
        "compare.groups[0].ranks is [None], not [int]"
    some = fields.Field("[int?]")
    assert some.allows([0, None]) and not some.allows([0, "1"]) and not some.allows(None)
