"""`rankdebug plan`: print the launch plan of a training command as JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rankdebug.command import CommandError, LaunchPlan, plan_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print the launch plan of a training command as one JSON object: the launcher, node "
        "and process counts, world size, every rank, the entry script and its arguments, "
        "and diagnostics with positions. Nothing is run.")
    parser.epilog = ("examples: rankdebug plan -- torchrun --nproc_per_node 4 train.py   |   "
                     "rankdebug plan --file run.sh --line 12")
    parser.add_argument("--file", help="script or Markdown file holding the command")
    parser.add_argument("--line", type=int, help="1-based line inside the command (with --file)")
    parser.add_argument("--json", action="store_true",
                        help="JSON output (plan always prints JSON; accepted as in other verbs)")
    parser.add_argument("--cwd", help="directory relative paths resolve against (default: .)")
    parser.add_argument("--inherit-env", action="store_true",
                        help="read variables the script does not set from this environment")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="the command, after --, when no --file is given")


def run(args: argparse.Namespace) -> int:
    env = dict(os.environ) if args.inherit_env else None
    cwd = Path(args.cwd) if args.cwd else None
    try:
        plan: LaunchPlan = plan_args(args, caller_env=env, cwd=cwd)
    except CommandError as exc:
        print(json.dumps(exc.to_json()))
        return 2
    except Exception as exc:  # a bug of ours must still not print a traceback
        err = CommandError(f"internal error: {type(exc).__name__}: {exc}", None, None)
        print(json.dumps(err.to_json()))
        print(f"rankdebug: internal error while planning: {exc!r}", file=sys.stderr)
        return 2
    out = plan.to_json()
    errors = [d for d in plan.diagnostics if d.severity == "error"]
    if errors:
        # The plan is still printed (what could be read of it); the first error is also
        # given as the contract's envelope, and the exit status says the command is wrong.
        first = errors[0].to_json()
        out["error"] = {"message": first["message"], "line": first["line"],
                        "column": first["column"], "code": first["code"]}
    print(json.dumps(out, ensure_ascii=False))
    return 2 if errors else 0
