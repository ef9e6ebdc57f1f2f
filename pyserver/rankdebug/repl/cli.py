"""``rankdebug debug``: a pdb-like prompt over a job's chosen ranks, for a terminal.

    rankdebug debug --ranks 1 -- torchrun --nproc_per_node 2 train.py   start, then debug
    rankdebug debug JOB                                                  attach to a running job
    rankdebug debug JOB --ranks 'tp=0'                                   only some of its ranks

Started, the job runs exactly as ``rankdebug launch`` runs it (every launch option is taken
here too); its chosen ranks wait for the prompt: set breakpoints (``b train.py:42``), then
``c``. Attached, the job's chosen ranks (the ones with a debug endpoint: ``rankdebug jobs``)
are held from now on and run on when the prompt is left. ``help`` at the prompt lists the
commands.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from rankdebug import ranks as rankspec
from rankdebug.errors import BadInput, fail, report
from rankdebug.repl import armed, commands, render
from rankdebug.repl.commands import BadCommand, Command
from rankdebug.repl.console import Console
from rankdebug.repl.session import Session
from rankdebug.repl.start import Started
from rankdebug.repl.views import SessionError
from rankdebug.runtime import registry
from rankdebug.supervise import cli as launch

PROG = "rankdebug debug"
START_S = 600.0  # how long the chosen ranks may take to listen (imports on a loaded node)
NOT_HERE = ("json", "control")  # launch options that make no sense at a prompt


def add_arguments(parser: argparse.ArgumentParser) -> None:
    launch.add_arguments(parser)  # the same options, the same meaning
    parser.description = ("A pdb-like prompt over a job's chosen ranks, for a terminal: start "
                          "the job (-- COMMAND, every option as rankdebug launch takes it) or "
                          "attach to one rankdebug launch started (JOB). `help` at the "
                          "prompt lists its commands; docs/terminal.md tells more.")
    parser.usage = ("rankdebug debug [--ranks SPEC] [launch options] -- COMMAND ... | "
                    "rankdebug debug JOB [--ranks SPEC]")


def _launch_args(args: argparse.Namespace, command: list[str]) -> list[str]:
    """``rankdebug launch``'s words for the options given here (those left at their default
    are left out), then the command."""
    parser = argparse.ArgumentParser(add_help=False)
    launch.add_arguments(parser)
    out: list[str] = []
    for action in parser._actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        value = getattr(args, action.dest, action.default)
        if not longs or action.dest in NOT_HERE or value == action.default:
            continue
        if isinstance(action, argparse._StoreTrueAction):
            out.append(longs[0])
        elif isinstance(action, argparse._AppendAction):
            out += [f"{longs[0]}={v}" for v in value]
        else:
            out.append(f"{longs[0]}={value}")
    return [*out, "--", *command] if command else out


def _given(args: argparse.Namespace) -> list[str]:
    """Launch options given beyond ``--ranks`` (for an attach, where they mean nothing)."""
    parser = argparse.ArgumentParser(add_help=False)
    launch.add_arguments(parser)
    return [a.option_strings[0] for a in parser._actions
            if a.option_strings and a.dest not in ("ranks", "help", "command")
            and getattr(args, a.dest, a.default) != a.default]


def run(args: argparse.Namespace) -> int:
    refused = _not_here(args)
    if refused is not None:
        return refused
    words = list(args.command)
    if words[:1] == ["--"] or args.file is not None:
        return _started(args, words[1:] if words[:1] == ["--"] else words)
    if words and not words[0].startswith("-") and not _is_launcher(words[0]):
        # `debug JOB --ranks 1`: the options after JOB (argparse gave them to the command).
        later = argparse.ArgumentParser(prog=PROG)
        add_arguments(later)
        more = later.parse_args(words[1:])
        if more.command:
            return fail(f"a JOB takes no command ({' '.join(more.command)!r}); give -- "
                        "COMMAND alone to start a job", as_json=False, prog=PROG)
        for name, value in vars(more).items():
            if value != later.get_default(name):
                setattr(args, name, value)
        refused = _not_here(args)
        if refused is not None:
            return refused
        extra = _given(args)
        if extra:
            return fail(f"{', '.join(extra)}: only --ranks goes with a JOB to attach to",
                        as_json=False, prog=PROG)
        return _attached(args, words[0])
    if words and _is_launcher(words[0]):
        return _started(args, words)
    return fail("give a JOB to attach to (see `rankdebug jobs`) or -- COMMAND to start",
                as_json=False, prog=PROG)


def _not_here(args: argparse.Namespace) -> int | None:
    for name in NOT_HERE:
        if getattr(args, name, False):
            return fail(f"--{name} is not for the prompt (rankdebug launch --{name} is for "
                        "programs)", as_json=False, prog=PROG)
    return None


def _is_launcher(word: str) -> bool:
    from rankdebug.launcher_table import LAUNCH_PROGRAM

    return bool(LAUNCH_PROGRAM.fullmatch(word.rsplit("/", 1)[-1]))


# --- starting a job --------------------------------------------------------------------

def _started(args: argparse.Namespace, command: list[str]) -> int:
    started = Started(_launch_args(args, command))
    first = started.next(START_S)
    if first is None or "error" in first or first.get("event") != "job":
        code = started.stop(None)
        error = (first or {}).get("error")
        if isinstance(error, dict):
            where = (f" (line {error.get('line')}, column {error.get('column')})"
                     if error.get("line") else "")
            print(f"{PROG}: {error.get('message')}{where}", file=sys.stderr)
            return 2
        print(f"{PROG}: the job did not start (exit status {code})", file=sys.stderr)
        return code or 1
    job, job_dir = str(first.get("job")), str(first.get("dir"))
    chosen = first.get("ranks")
    expected = set(chosen) if isinstance(chosen, list) else None
    console = Console()
    session = Session(job, job_dir, _cwd(job), console.say)
    session.own = True
    wait = not args.no_wait
    try:
        found = _ready(started, expected, console)
        if started.code is not None:
            console.say(f"the job ended before its ranks were ready (exit status "
                        f"{started.code})")
            return started.stop(None)
        session.add(found, start=not wait)
    except KeyboardInterrupt:
        session.quitting = True
        started.stop(os.path.join(job_dir, "ctl.sock"))
        console.say(f"interrupted; job {job} stopped")
        return 130

    def on_event(event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "listening" and isinstance(event.get("rank"), int):
            session.add([(event["rank"], str(event["host"]), int(event["port"]))],
                        start=not wait or session.run_once)
            console.say(f"rank {event['rank']}: held")
        elif kind == "exited" and not session.quitting:
            session.job_ended(started.code if started.code is not None else 1)
            console.say(f"the job ended (exit status {session.ended})")
            console.wake()

    started.follow(on_event)
    held = session.held()
    console.say(f"job {job}: {rankspec.label(held) if held else 'no rank'} held"
                + ("; not started: set breakpoints (b FILE:LINE), then c" if wait and held
                   else ""))
    _refused(session, console)
    quit_asked = _loop(session, console)
    console.close()
    if session.ended is not None and not quit_asked:
        return session.ended
    session.quitting = True
    started.stop(os.path.join(job_dir, "ctl.sock"))  # its status: the user's own doing
    console.say(f"job {job} stopped")
    return 0


def _ready(started: Started, expected: set[int] | None, console: Console
           ) -> list[tuple[int, str, int]]:
    """The ``(rank, host, port)`` of each chosen rank's gate, as they listen: every expected
    one (unknown: those that listen within 2 s of the first), unless the job ends first."""
    found: list[tuple[int, str, int]] = []
    said_waiting = False
    t0 = time.monotonic()
    while expected is None or {r for r, _, _ in found} < expected:
        event = started.next(2.0 if expected is None and found else 1.0)
        if event is None:
            if started.code is not None or (expected is None and found):
                break
            if not said_waiting and time.monotonic() - t0 > 3.0:
                said_waiting = True
                left = sorted((expected or set()) - {r for r, _, _ in found})
                console.say(f"waiting for {rankspec.label(left) if left else 'the ranks'} "
                            "to start …")
            if time.monotonic() - t0 > START_S:
                break
            continue
        if event.get("event") == "listening":
            found.append((int(event["rank"]), str(event["host"]), int(event["port"])))
        elif event.get("event") == "exited":
            break
    return found


def _cwd(job: str) -> str:
    try:
        entry = registry.read_job(job) or {}
    except (OSError, registry.RegistryError):
        entry = {}
    cwd = entry.get("cwd")
    return cwd if isinstance(cwd, str) and os.path.isdir(cwd) else os.getcwd()


# --- attaching to one -----------------------------------------------------------------

def _attached(args: argparse.Namespace, text: str) -> int:
    from rankdebug.jobs import job_coords
    from rankdebug.jobs.discover import discover, find_job

    found = discover(gpus=False)
    job = find_job(found.jobs, text)
    if job is None:
        return fail(f"no job {text!r} (see `rankdebug jobs`)", as_json=False, prog=PROG)
    if job.source != "registry":
        return fail(f"job {job.id} was not started by `rankdebug launch`: it has no debug "
                    f"endpoints (make a rank listen with `rankdebug attach {job.id} RANK`)",
                    as_json=False, prog=PROG)
    try:
        entry = registry.read_job(job.id) or {}
        named = job_coords.pick(args.ranks, job, found.host) if args.ranks else None
    except (OSError, registry.RegistryError) as exc:
        return fail(f"job registry: {exc}", as_json=False, prog=PROG)
    except BadInput as exc:
        return report(exc, as_json=False, prog=PROG)
    have = armed.recorded(entry)
    refused: list[str] = []
    if named is None:
        gates = sorted(have.values())
    else:
        # Named ranks without an endpoint (armed, not chosen) start their debuggers now.
        gates, refused = armed.gates(named, have, found.host)
    if not gates:
        which = f" among {args.ranks!r}" if args.ranks else ""
        hint = ("; name the ranks to debug with --ranks (0, 0-3, tp=0): an armed rank "
                "starts its debugger when named" if not args.ranks and
                any(r.armed for r in job.ranks) else "")
        why = "".join(f"\n  {line}" for line in refused)
        return fail(f"job {job.id} has no rank with a debug endpoint{which}{hint}{why}",
                    as_json=False, prog=PROG)
    console = Console()
    cwd = entry.get("cwd")
    session = Session(job.id, registry.job_dir(job.id),
                      cwd if isinstance(cwd, str) and os.path.isdir(cwd) else os.getcwd(),
                      console.say)
    session.on_all_gone = console.wake
    session.add(gates, start=True)
    held = session.held()
    console.say(f"attached to job {job.id}: {rankspec.label(held) if held else 'no rank'} held")
    for line in refused:
        console.say(f"not held: {line}")
    _refused(session, console)
    if not held:
        console.close()
        return 1
    _loop(session, console)
    console.close()
    if session.ended is None:
        session.quitting = True
        session.detach()
        console.say(f"detached; job {job.id} runs on")
    return 0


def _refused(session: Session, console: Console) -> None:
    for row in session.rows():
        if row.state == "refused":
            console.say(f"rank {row.rank}: not held: {row.why}")


# --- the prompt -------------------------------------------------------------------------

def _loop(session: Session, console: Console) -> bool:
    """Read and do commands until quit, the end of input or the job's end; True for quit."""
    while session.ended is None:
        try:
            line = console.read()
        except KeyboardInterrupt:
            if session.ended is not None:
                break
            console.say("")
            continue
        if line is None:
            return True
        try:
            cmd = commands.parse(line)
            if cmd is None:
                continue
            if cmd.name == "quit":
                return True
            for out in _do(session, cmd):
                console.say(out)
        except (BadCommand, SessionError) as exc:
            console.say(f"*** {exc}")
        except KeyboardInterrupt:
            console.say("*** interrupted; ranks still running go on (`pause` stops them)")
        except Exception as exc:  # nothing typed may end the session
            console.say(f"*** internal error: {type(exc).__name__}: {exc}")
    return False


def _do(session: Session, cmd: Command) -> list[str]:
    name, arg = cmd.name, cmd.arg
    if name == "list" or (name == "ranks" and not arg):
        return render.table(session.rows(), session.cwd)
    if name == "ranks":
        picked = session.choose(arg)
        return [f"current: {rankspec.label(picked)}"]
    if name in ("continue", "next", "step", "finish", "pause"):
        session.go(name, lambda: False)
        return []
    if name == "where":
        return session.stacks()
    if name == "p":
        return session.evaluate(arg)
    if name == "attach":
        return _attach_more(session, arg)
    if name == "break":
        if not arg:
            return _breaks(session)
        return session.add_break(arg)
    if name == "clear":
        return session.clear(arg)
    if name == "info":
        return _breaks(session)
    if name == "help":
        return [commands.help_text()]
    raise SessionError(f"{name}: not done here")


def _attach_more(session: Session, spec: str) -> list[str]:
    """``attach SPEC``: the named ranks join the session, armed ones started first; they
    run on (or stop at the breakpoints already set) and take the group commands."""
    try:
        picked, here = armed.pick(session.job, spec)
        have = armed.recorded(registry.read_job(session.job) or {})
    except (OSError, registry.RegistryError) as exc:
        raise SessionError(f"job registry: {exc}") from None
    except BadInput as exc:
        raise SessionError(exc.message) from None
    held = set(session.held())
    new = [r for r in picked if r.rank not in held]
    if not new:
        return [f"{rankspec.label([r.rank for r in picked if r.rank is not None])} "
                "already held"]
    gates, refused = armed.gates(new, have, here)
    if gates:
        session.add(gates, start=True)
    now = set(session.held())
    joined = sorted(g[0] for g in gates if g[0] in now)
    out = [f"attached {rankspec.label(joined)}"] if joined else []
    out += [f"not held: {why}" for why in refused]
    out += [f"rank {row.rank}: not held: {row.why}" for row in session.rows()
            if row.state == "refused" and row.rank in {g[0] for g in gates}]
    return out or ["no rank attached"]


def _breaks(session: Session) -> list[str]:
    if not session.breaks:
        return ["no breakpoints"]
    return [render.break_line(b, session.cwd) for b in session.breaks]
