"""A plain ``python`` run: one process.

``python x.py`` runs a script, ``python -m pkg`` a module, ``python -c CODE`` code
(entry kind "cli", target ``-c``, entry_args the code and what follows). The
interpreter's own flags (``-u -O -B -X opt -W arg``) are skipped. Modules that are
launchers (``torch.distributed.run``, ``deepspeed.launcher.runner``, verl's
trainers...) belong to their own modules, which come first in MODULES.

A script that is a Ray driver (it imports ray and starts remote actors or tasks, as a
verl-style or Ray Train trainer does) is launcher ``ray``: its ranks are the actors it
starts, each with ``RANK`` in its runtime environment, and how many is not known here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers import detectron2, lightning
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    is_python,
    parse_python,
    set_entry,
    single_process,
    warn_unknown_program,
)
from rankdebug.command.launchers.ray import VERL_PREFIX
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Word
from rankdebug.launcher_table import LAUNCHER_MODULES

NAME = launcher_table.BY_NAME["python"].name
RAY = launcher_table.BY_NAME["ray"].name

# A Ray driver: `import ray` (or `from ray… import`) and something that starts remote work.
_IMPORTS_RAY = re.compile(r"^[ \t]*(?:import[ \t]+ray\b|from[ \t]+ray(?:\.[\w.]+)?[ \t]+import\b)",
                          re.MULTILINE)
_STARTS_REMOTE = re.compile(r"\.remote\(|\bray\.init\(|\bTorchTrainer\(|\bRayWorkerGroup\b")


def matches(argv: Sequence[Word]) -> int | None:
    if not argv or not is_python(argv[0]):
        return None
    call = parse_python(argv, 1)
    module = call.module
    if module is not None and (module in LAUNCHER_MODULES or module.startswith(VERL_PREFIX)):
        return None
    return 1


def parse(ctx: Context, start: int) -> None:
    plan = ctx.plan
    single_process(plan)
    call = parse_python(plan.argv, start)
    if call.kind is None or call.target is None:
        return
    set_entry(plan, call.kind, call.target, call.index, call.args_from)
    if call.kind == "script":
        warn_unknown_program(plan, "script", call.target)
        facts = script_facts(ctx, call.target.value) if call.target.value is not None else None
        if facts is not None and facts[2]:
            detectron2.parse(ctx, call.args_from)
            return
        if facts is not None and facts[3] is not None and lightning.plan_script(
                ctx, facts[3], call.target):
            return
        if facts is None:
            _spawn_flag_unread(plan, call.args_from, call.target)
        if facts is not None and facts[0]:
            ray_driver(plan, call.target)
            joined = _joins_cluster(facts[1], ctx.env_value("RAY_ADDRESS"))
            if joined:
                plan.warn(f"{joined}: the job joins a Ray cluster started without rankdebug, "
                          "whose workers never run its bootstrap (no rank can be debugged); "
                          "let the job start its own cluster (ray.init() with no address)",
                          call.target.span, code="ray-existing-cluster")


def is_ray_driver(source: str | None) -> bool:
    """The script imports ray and starts remote actors or tasks."""
    return bool(source and _IMPORTS_RAY.search(source) and _STARTS_REMOTE.search(source))


_ADDRESS = re.compile(r"\bray\.init\([^)]*\baddress\s*=\s*(?!None\b)")
# (path, mtime, size) -> (a Ray driver, ray.init(address=...) in it, starts its own workers
# from a flag, its Lightning Trainer/Fabric call): the language server plans a document's
# commands at every edit, and a script's text changes far less often.
_Facts = tuple[bool, bool, bool, "lightning.Call | None"]
_FACTS: dict[tuple[str, int, int], _Facts] = {}
_FACTS_MAX = 256
# A flag that makes a script start its own workers (detectron2's), for a script not read.
_SPAWN_FLAGS = ("--num-gpus",)


def spawning_script(ctx: Context, script: Word) -> bool:
    """Whether ``script`` (run as a program: ``./train_net.py``) starts its own workers from a
    flag; then it is planned as python runs it."""
    if script.value is None or not script.value.endswith(".py"):
        return False
    facts = script_facts(ctx, script.value)
    return facts is not None and facts[2]


def _spawn_flag_unread(plan: LaunchPlan, start: int, script: Word) -> None:
    """Say so when a script that cannot be read here is given a worker-count flag of a
    script that starts its own workers (detectron2's ``--num-gpus N``)."""
    for word in plan.argv[start:]:
        name = (word.value or "").split("=", 1)[0]
        if name in _SPAWN_FLAGS:
            plan.warn(f"{script.display} cannot be read here: if it starts its own workers "
                      f"from {name} (detectron2's launch()), the job has more than one "
                      "process", word.span, code="unreadable-file")
            return


def script_facts(ctx: Context, name: str) -> _Facts | None:
    """Whether the script ``name`` is a Ray driver, whether it joins a cluster by address,
    whether it starts its own workers from a flag, and its Lightning Trainer/Fabric call;
    None when it cannot be read."""
    path = ctx.resolve(name)
    try:
        info = path.stat() if path is not None else None
    except OSError:
        info = None
    if path is None or info is None:
        return None
    key = (str(path), info.st_mtime_ns, info.st_size)
    facts = _FACTS.get(key)
    if facts is None:
        source = ctx.read_text(str(path))
        facts = (is_ray_driver(source), bool(source and _ADDRESS.search(source)),
                 bool(source and detectron2.spawns_from_flag(source)),
                 lightning.find_call(source) if source else None)
        if len(_FACTS) >= _FACTS_MAX:
            _FACTS.clear()
        _FACTS[key] = facts
    return facts


def _joins_cluster(address_in_code: bool, ray_address: str | None) -> str | None:
    """Why the driver joins a running cluster (RAY_ADDRESS, ``ray.init(address=…)``)."""
    if ray_address and ray_address.strip() and ray_address.strip() != "local":
        return f"RAY_ADDRESS is {ray_address.strip()}"
    return "ray.init(address=…)" if address_in_code else None


def ray_driver(plan: LaunchPlan, script: Word) -> None:
    """A Ray driver: its ranks are actors whose number only the script knows."""
    plan.launcher = RAY
    plan.nnodes = plan.node_rank = plan.nproc_per_node = plan.world_size = None
    plan.warn(f"{script.display} is a Ray driver: its ranks are the actors it starts (RANK in "
              "their runtime environment); how many is not known here", script.span,
              severity="info", code="ray-driver")
