"""The ``rankdebug launch`` command line that runs a debug plan, and the variables it needs
from the caller (an editor or a terminal)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rankdebug.command.plan import LaunchPlan
from rankdebug.debugplan.options import DEFAULT_HANG_S, LOOPBACK, LaunchOptions
from rankdebug.debugplan.origin import Origin
from rankdebug.errors import BadInput


def option_flags(spec: str, options: LaunchOptions) -> list[str]:
    """``rankdebug launch``'s flags for ``spec`` and ``options`` (defaults left out)."""
    argv = ["--json"]
    if spec:
        argv += ["--ranks", spec]
    if options.arm:
        argv.append("--arm")
    if not options.wait:
        argv.append("--no-wait")
    if options.host != LOOPBACK:
        argv += ["--host", options.host]
    if options.base_port:
        argv += ["--base-port", str(options.base_port)]
    if options.collective_timeout is not None:
        argv += ["--collective-timeout", f"{options.collective_timeout:g}"]
    if options.hang_seconds != DEFAULT_HANG_S:
        argv += ["--hang-seconds", f"{options.hang_seconds:g}"]
    if options.attach != "auto":
        argv += ["--attach", options.attach]
    if options.stop != "together":
        argv += ["--stop", options.stop]
    for bp in options.breaks:
        argv += ["--break", bp]
    if options.hosts:
        argv += ["--hosts", ",".join(options.hosts)]
    if options.ssh_config:
        argv += ["--ssh-config", options.ssh_config]
    return argv


def command_words(origin: Origin, plan: LaunchPlan) -> list[str]:
    """How ``rankdebug launch`` is told the command: ``-- ARGV`` or ``--file F --line N``."""
    if origin.argv is not None:
        return ["--", *origin.argv]
    if origin.path is not None:
        return ["--file", origin.path, "--line", str(plan.span.start_line + 1)]
    words = [w.value for w in plan.argv]
    if any(w is None for w in words):
        raise BadInput("the command has words whose value is not known here, and it is not "
                       "in a saved file: save it first")
    env_words = [f"{k}={w.value}" for k, w in plan.env.items() if w.value is not None]
    return ["--", *env_words, *(w for w in words if w is not None)]


def launch_argv(cli: Sequence[str], origin: Origin, plan: LaunchPlan, spec: str,
                options: LaunchOptions) -> list[str]:
    """``[*cli, "launch", flags…, command…]``; ``cli`` is the prefix that runs rankdebug."""
    return [*cli, "launch", *option_flags(spec, options), *command_words(origin, plan)]


def run_env(origin: Origin, plan: LaunchPlan, extra: Mapping[str, str]) -> dict[str, str]:
    """Variables to add to the caller's environment for the run. With ``--file`` the
    launcher re-reads the script (exports included); a command passed after ``--`` from a
    text needs the variables its script exported before it."""
    env: dict[str, str] = {}
    if origin.path is None and origin.text is not None:
        env.update({k: w.value for k, w in plan.script_env.items() if w.value is not None})
    env.update(extra)
    return env
