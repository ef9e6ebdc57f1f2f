"""Smoke runs: any training command shrunk to a run of seconds, each change explained.

- ``smoke(plan, cwd=..., settings=...)``: the smoke version of a launch plan (a ``Smoke``:
  argv, env, changes, config copies), one module per framework beside the launcher rewrite.
- ``checks.run(plan, smoke, cwd)``: the staged checks of ``rankdebug smoke --check``.

The user's files are never edited: changed configs are copies in a private folder
(``folder.py``), or overrides on the command line where the framework takes them.
"""

from __future__ import annotations

from rankdebug.smoke.context import Settings
from rankdebug.smoke.model import Change, Input, Smoke
from rankdebug.smoke.rewrite import smoke

__all__ = ["Change", "Input", "Settings", "Smoke", "smoke"]
