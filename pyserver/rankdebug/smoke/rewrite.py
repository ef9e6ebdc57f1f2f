"""A launch plan -> its smoke run: the launcher's shape, then the framework's knobs."""

from __future__ import annotations

from pathlib import Path

from rankdebug.command import LaunchPlan
from rankdebug.errors import BadInput
from rankdebug.smoke import (
    cpu,
    deepspeed_json,
    hf_trainer,
    hook,
    lightning,
    llamafactory,
    megatron,
    nanogpt,
    ranks,
    torchtitan,
    verl_hydra,
)
from rankdebug.smoke.args import Arg, ArgList
from rankdebug.smoke.base import Framework
from rankdebug.smoke.context import Rewrite, Settings
from rankdebug.smoke.folder import Folder, key
from rankdebug.smoke.model import Smoke

# One training framework runs a command; the first that recognises it wins (the most
# specific first: LLaMA-Factory and TRL scripts also use HfArgumentParser).
PRIMARY: tuple[Framework, ...] = (llamafactory, verl_hydra, megatron, torchtitan, nanogpt,
                                  lightning, hf_trainer)
# Configs any of them may hand to DeepSpeed.
EXTRAS: tuple[Framework, ...] = (deepspeed_json,)


def refuse_unfit(plan: LaunchPlan) -> None:
    """A command there is no smoke version of: its first error (a flag without its value, a
    missing entry), or no program at all. Raises BadInput with the position."""
    errors = [d for d in plan.diagnostics if d.severity == "error" or (
        plan.entry is None and d.code == "missing-entry")]
    if errors:
        first = errors[0]
        raise BadInput(first.message, first.span.start_line + 1, first.span.start_col + 1,
                       code=first.code)
    if plan.entry is None:
        raise BadInput("the command runs no script, module or program",
                       plan.span.start_line + 1, plan.span.start_col + 1)


def smoke(plan: LaunchPlan, *, cwd: Path, settings: Settings | None = None) -> Smoke:
    """The smoke version of ``plan`` (``refuse_unfit`` first, where the plan comes from a
    user). Nothing is run; config copies are written."""
    if plan.cwd:  # the script's own `cd` before the command
        cwd = cwd / plan.cwd
    words = [Arg(w.display, w.known) for w in plan.argv]
    split = len(words) if plan.entry_index is None else plan.entry_index + 1
    env, notes = _env(plan)
    # Taken before the rewrite changes words and variables in place.
    original: dict[str, object] = {"argv": [w.text for w in words], "env": dict(env)}
    rw = Rewrite(plan=plan, cwd=cwd, settings=settings or Settings(),
                 head=ArgList(words[:split]), args=ArgList(words[split:]), env=env,
                 folder=Folder(key([w.text for w in words], str(cwd), env)), notes=notes)
    primary = next((f for f in PRIMARY if f.detect(rw)), None)
    frameworks = ([primary] if primary else []) + [f for f in EXTRAS if f.detect(rw)]
    rw.parallel = max([f.parallel(rw) for f in frameworks], default=1)
    ranks.plan_shape(rw)
    ranks.rewrite(rw)
    for framework in frameworks:
        rw.framework = framework.NAME
        framework.rewrite(rw)
    if primary is None:
        python = plan.entry is not None and plan.entry.kind in ("script", "module")
        rw.lack("no training framework recognised (Hugging Face Trainer, LLaMA-Factory, verl, "
                "DeepSpeed, Megatron, nanoGPT, torchtitan, Lightning): no step limit found, "
                + (f"the smoke run ends the job after {rw.settings.steps} torch optimizer "
                   "steps" if python else "the run may be long"))
        if python:
            rw.stop_after_steps("no step limit of the script's own was found")
    gpu_uses = cpu.apply(rw)
    hooked = hook.install(rw)
    _say_unapplied(rw)
    items = rw.head.items + rw.args.items
    unknown = [a.text for a in items if not a.known]
    if unknown:
        rw.note("not known here, kept as written (knobs inside them are not changed): "
                f"{', '.join(unknown[:5])}"
                + (" ..." if len(unknown) > 5 else ""))
    return Smoke(
        argv=[a.text for a in items], env=rw.env, changes=rw.changes, files=rw.files,
        notes=rw.notes, missing=rw.missing, frameworks=[f.NAME for f in frameworks],
        unknown={i for i, a in enumerate(items) if not a.known},
        plan=_shape(plan, rw), inputs=rw.inputs, packages=rw.packages,
        original=original, copies=rw.copies, not_applied=rw.not_applied, hook=hooked,
        gpu_uses=gpu_uses, cpu_change=rw.cpu_change, on_cpu=rw.settings.cpu,
        entry_name=plan.entry.target.display if plan.entry else None)


def _say_unapplied(rw: Rewrite) -> None:
    """The knobs no channel reaches, one line per reason (the editor's diff shows it)."""
    reasons: dict[str, list[str]] = {}
    for name, why in rw.not_applied:
        reasons.setdefault(why, []).append(name)
    for why, names in reasons.items():
        rw.lack(f"{why}: {', '.join(names)}")


def _env(plan: LaunchPlan) -> tuple[dict[str, str], list[str]]:
    """The variables the command needs: the script's exports, then its own assignments."""
    env: dict[str, str] = {}
    notes: list[str] = []
    for name, word in {**plan.script_env, **plan.env}.items():
        if word.known and word.value is not None:
            env[name] = word.value
        else:
            env.pop(name, None)
            notes.append(f"{name}={word.display} is not known here: left out")
    return env, notes


def _shape(plan: LaunchPlan, rw: Rewrite) -> dict[str, object]:
    before = {"nnodes": plan.nnodes, "nproc_per_node": plan.nproc_per_node,
              "world_size": plan.world_size}
    after = dict(before)
    if rw.per_node is not None:
        after = {"nnodes": rw.nodes, "nproc_per_node": rw.per_node, "world_size": rw.world}
    span = plan.span  # where the command is in its file (1-based), for the editor's diff
    return {"launcher": plan.launcher, "from": before, "to": after,
            "entry": plan.entry.to_json() if plan.entry else None, "cwd": str(rw.cwd),
            "span": {"start_line": span.start_line + 1, "end_line": span.end_line + 1,
                     "start_column": span.start_col + 1, "end_column": span.end_col + 1}}
