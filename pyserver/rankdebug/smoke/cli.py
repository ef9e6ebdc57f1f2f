"""`rankdebug smoke`: the smoke version of a training command, and its staged checks."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rankdebug.command import CommandError, LaunchPlan, plan_args
from rankdebug.errors import BadInput, RankdebugError, report
from rankdebug.smoke import checks, devices
from rankdebug.smoke.context import Settings
from rankdebug.smoke.model import Smoke
from rankdebug.smoke.rewrite import refuse_unfit, smoke

PROG = "rankdebug smoke"
DEFAULT = Settings()


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "The smoke version of a training command: the same launcher, script and data, shrunk "
        "to a run of seconds (2 ranks per node, a few steps, the smallest batch, short "
        "sequences, no evaluation, saving or remote logging), each change explained. The "
        "user's files are never edited: changed configs are copies in a private folder. "
        "--check runs staged checks instead (entry, imports, paths, launcher, framework, "
        "devices) and stops at the first failure.")
    parser.epilog = ("examples: rankdebug smoke -- torchrun --nproc_per_node 8 train.py   |   "
                     "rankdebug smoke --json --file run.sh --line 12   |   "
                     "rankdebug smoke --check -- llamafactory-cli train sft.yaml")
    parser.add_argument("--file", help="script or Markdown file holding the command")
    parser.add_argument("--line", type=int, help="1-based line inside the command (with --file)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object (with --check: one JSON line per stage)")
    parser.add_argument("--check", action="store_true",
                        help="run the staged checks; exit 1 at the first that fails")
    parser.add_argument("--cwd", help="directory the command runs in (default: .)")
    parser.add_argument("--nproc", type=_positive,
                        help="ranks per node in the smoke run (default: at most 2)")
    parser.add_argument("--steps", type=_positive, default=DEFAULT.steps,
                        help=f"optimizer steps of the smoke run (default: {DEFAULT.steps})")
    parser.add_argument("--cpu", action="store_true",
                        help="run the ranks on the CPU: the script's device and backend "
                             "knobs become cpu and gloo, and no GPU is visible")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="the command, after --, when no --file is given")


def _plan(args: argparse.Namespace, cwd: Path) -> LaunchPlan:
    # Variables of this environment count; any other stays unknown (never empty).
    return plan_args(args, caller_env=dict(os.environ), cwd=cwd, env_complete=False)


def run(args: argparse.Namespace) -> int:
    cwd = Path(args.cwd).absolute() if args.cwd else Path.cwd()
    try:
        if not cwd.is_dir():
            raise BadInput(f"--cwd {args.cwd}: no such folder")
        plan = _plan(args, cwd)
        refuse_unfit(plan)
        result = smoke(plan, cwd=cwd, settings=Settings(steps=args.steps, nproc=args.nproc,
                                                        cpu=args.cpu))
    except CommandError as exc:
        return report(BadInput(exc.message, exc.line, exc.column), as_json=args.json, prog=PROG)
    except RankdebugError as exc:
        return report(exc, as_json=args.json, prog=PROG)
    except Exception as exc:  # a bug of ours must still not print a traceback
        print(f"{PROG}: internal error: {exc!r}", file=sys.stderr)
        return report(BadInput(f"internal error: {type(exc).__name__}: {exc}"),
                      as_json=args.json, prog=PROG)
    if args.check:
        return _check(plan, result, cwd, as_json=args.json)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        print(text(result))
    return 0


def _check(plan: LaunchPlan, result: Smoke, cwd: Path, *, as_json: bool) -> int:
    for stage in checks.run(plan, result, cwd):
        if as_json:
            print(json.dumps(stage.to_json(), ensure_ascii=False), flush=True)
        else:
            print(f"{'pass' if stage.ok else 'FAIL'}  {stage.name:<9} {stage.reason}", flush=True)
        if not stage.ok:
            return 1
    return 0


def text(result: Smoke) -> str:
    """The human form: what changed and why, then the command to run."""
    shape = result.plan
    lines = [f"smoke run ({', '.join(result.frameworks) or 'no framework recognised'}; "
             f"launcher {shape.get('launcher')})"]
    for c in result.changes:
        lines.append(f"  {c.name}: {_shown(c.old, '(unset)')} -> "
                     f"{_shown(c.new, '(removed)')}    {c.why}  [{c.where}]")
    lines += [f"  copy: {f}" for f in result.files]
    lines += [f"  missing: {m}" for m in result.missing]
    if result.gpu_uses and not any(c.name == "CUDA_VISIBLE_DEVICES" for c in result.changes):
        lines.append(f"  devices: asks for GPUs ({devices.uses_text(result)})"
                     + (f"; on the CPU: {devices.cpu_offer(result)}"
                        if devices.cpu_offer(result) else ""))
    lines += [f"  note: {n}" for n in result.notes]
    lines += ["", result.command]
    return "\n".join(lines)


def _shown(value: str | None, none: str) -> str:
    return none if value is None else (value or "''")
