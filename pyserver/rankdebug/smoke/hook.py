"""The run-time half of a smoke run, for knobs no flag or config copy reaches: the hook
(``rankdebug.runtime.smoke_hook``) is copied as ``boot/sitecustomize.py`` into the command's
private folder, that folder goes first on the command's PYTHONPATH, and its settings go in
the command's environment. It ends the job after the smoke run's optimizer steps where the
script's own limit cannot be trusted to, and sets TrainingArguments a script builds in code.
Nothing is written when neither is needed."""

from __future__ import annotations

import json
import os
from pathlib import Path

from rankdebug.runtime import smoke_hook
from rankdebug.smoke.context import Rewrite

WHERE = "run time: rankdebug's smoke hook (on PYTHONPATH)"


def install(rw: Rewrite) -> dict[str, object]:
    """Write the hook and set its variables when the rewrite asked for it; returns the
    ``hook`` entry of the answer (empty when there is none)."""
    if rw.stop_reason is None and not rw.runtime_args:
        return {}
    steps = rw.settings.steps
    text = Path(smoke_hook.__file__).read_text(encoding="utf-8")
    path = rw.folder.write("sitecustomize.py", text, under="boot")
    rw.env[smoke_hook.STEPS] = str(steps)
    rw.change(smoke_hook.STEPS, None, steps,
              f"the smoke run ends the job itself after {steps} optimizer steps: "
              f"{rw.stop_reason or 'the script builds its arguments in code'}", WHERE)
    if rw.runtime_args:
        rw.env[smoke_hook.TRAINING_ARGS] = json.dumps(rw.runtime_args, separators=(",", ":"))
    before = rw.env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    boot = str(path.parent)
    rw.env["PYTHONPATH"] = os.pathsep.join(
        [boot, *(p for p in before.split(os.pathsep) if p and p != boot)])
    return {"path": str(path), "steps": steps, "training_args": rw.runtime_args or None}
