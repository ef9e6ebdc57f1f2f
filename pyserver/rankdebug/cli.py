"""The ``rankdebug`` command: one sub-command per verb, each in its own module."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from rankdebug import __version__
from rankdebug.errors import BadInput, report
from rankdebug.runtime.registry import RegistryError

# verb -> module providing add_arguments(parser) and run(args) -> int.
# Imported lazily so `rankdebug plan` does not pay for the server or the runtime.
_VERBS: dict[str, tuple[str, str]] = {
    "plan": ("rankdebug.cli_plan", "print the launch plan of a training command"),
    "launch": ("rankdebug.supervise.cli", "run a job with chosen ranks under the debugger"),
    "server": ("rankdebug.server", "start the language server on stdio"),
    "jobs": ("rankdebug.jobs.cli_jobs", "list running training jobs and their ranks"),
    "stacks": ("rankdebug.jobs.cli_stacks", "every rank's Python stack, side by side"),
    "diagnose": ("rankdebug.jobs.diagnose.cli", "why a job is stuck: the rank that holds it"),
    "watch": ("rankdebug.jobs.watch_found", "watch a job found running for hangs"),
    "attach": ("rankdebug.jobs.cli_attach", "make a running rank listen for a debugger"),
    "eval": ("rankdebug.jobs.cli_eval", "evaluate an expression in a live rank"),
    "smoke": ("rankdebug.smoke.cli", "the smoke version of a training command, and checks"),
    "debug": ("rankdebug.repl.cli", "a pdb-like prompt over a job's chosen ranks (a terminal)"),
}


DESCRIPTION = """Debug chosen ranks of a distributed training job.

  rankdebug plan --json -- torchrun --nproc_per_node 4 train.py
  rankdebug launch --ranks 1 -- torchrun --nproc_per_node 4 train.py
  rankdebug --ranks 1 torchrun --nproc_per_node 4 train.py   (the same launch)
  rankdebug jobs

`rankdebug VERB --help` tells more of each verb."""


def _launch_options() -> set[str]:
    from rankdebug.supervise import cli as launch

    parser = argparse.ArgumentParser(add_help=False)
    launch.add_arguments(parser)
    return {o for action in parser._actions for o in action.option_strings}


# `rankdebug torchrun ...` and `rankdebug --ranks 1 torchrun ...` mean `rankdebug launch ...`
# (the VS Code terminal shim offers that spelling). Only launchers and launch's own options
# qualify, so a mistyped verb or option is an error, never a command that runs.
def _launch_shorthand(args: list[str]) -> bool:
    first = args[0]
    if first.startswith("-"):
        return first.partition("=")[0] in _launch_options()
    from rankdebug.launcher_table import LAUNCH_PROGRAM  # not for the verbs: imported here

    return bool(LAUNCH_PROGRAM.fullmatch(first.rsplit("/", 1)[-1]))


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rankdebug", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"rankdebug {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for verb, (_module, helptext) in _VERBS.items():
        sub.add_parser(verb, help=helptext, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] not in _VERBS and _launch_shorthand(args):
        args = ["launch", *args]
    if args[:1] == ["launch"] and "RANKDEBUG_WARM" in os.environ:
        from rankdebug import warm  # started ahead by an editor: the launch comes on a pipe

        return warm.serve(os.environ.pop(warm.ENV), main)
    if args and args[0].startswith("-") and args[0] not in ("-h", "--help", "--version"):
        print(f"rankdebug: unknown option {args[0]!r}; `rankdebug --help` lists the verbs",
              file=sys.stderr)
        return 2
    if not args or args[0] not in _VERBS:
        parser = _top_parser()
        parser.parse_args(args)  # --help, --version, or usage and an error (exit 2)
        parser.print_help()
        return 2
    try:
        module = importlib.import_module(_VERBS[args[0]][0])
    except ImportError as exc:  # a verb whose module is not installed in this build
        print(f"rankdebug {args[0]}: not available here ({exc})", file=sys.stderr)
        return 2
    verb_parser = argparse.ArgumentParser(prog=f"rankdebug {args[0]}")
    module.add_arguments(verb_parser)
    ns = verb_parser.parse_args(args[1:])
    try:
        result: int = module.run(ns)
    except RegistryError as exc:  # a planted or foreign registry folder: refused, not used
        return report(BadInput(f"job registry: {exc}"),
                      as_json=bool(getattr(ns, "json", False)), prog=f"rankdebug {args[0]}")
    return result
