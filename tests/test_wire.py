"""The declared messages (rankdebug.protocol) and what is generated from them: the JSON
Schema and the extension's TypeScript types are current, and the check reads a message as
its declaration says (the launch tests check every event a real job prints with it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rankdebug.protocol import fields, launch

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
