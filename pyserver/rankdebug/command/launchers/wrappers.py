"""Wrapper commands in front of the real command (``env A=B``, ``nohup``, ``numactl ...``),
and the program an outer launcher (srun, mpirun, ``ray job submit``) runs after them."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rankdebug.command.launchers import xtuner
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import basename, is_python, parse_python, set_entry
from rankdebug.command.words import Word


@dataclass(slots=True)
class Unwrapped:
    """What wrapper commands in front of the real command do."""

    index: int  # argv index of the real command (len(argv) when there is none)
    env: dict[str, Word] = field(default_factory=dict)  # `env A=B`, `sudo A=B`
    unset: set[str] = field(default_factory=set)  # `env -u A`
    clear_env: bool = False  # `env -i`
    wrappers: list[str] = field(default_factory=list)  # names, outermost first


_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")


def _assignment(word: Word) -> tuple[str, Word] | None:
    m = _ASSIGN.match(word.known_prefix)
    if m is None:
        return None
    return m.group(1), word.suffix_after(m.end())


def _skip_opts(
    argv: Sequence[Word],
    i: int,
    short_values: str = "",
    long_values: Sequence[str] = (),
    *,
    digits: bool = False,
) -> int:
    """Skip getopt-style options; ``short_values``/``long_values`` take a value."""
    while i < len(argv):
        text = argv[i].value
        if text is None or not text.startswith("-") or text == "-":
            return i
        if text == "--":
            return i + 1
        if text.startswith("--"):
            name = text[2:]
            i += 2 if name in long_values else 1
            continue
        if digits and text[1:].isdigit():  # `nice -10`
            i += 1
            continue
        j = 1
        skip = 1
        while j < len(text):
            if text[j] in short_values:
                skip = 1 if j + 1 < len(text) else 2
                break
            j += 1
        i += skip
    return i


def _wrap_env(argv: Sequence[Word], i: int, out: Unwrapped) -> int:
    while i < len(argv):
        w = argv[i]
        text = w.value
        if (text is not None and text.startswith("-") and text != "--") or text == "-":
            if text in ("-i", "--ignore-environment", "-"):
                out.clear_env = True
                out.env.clear()
                i += 1
            elif text in ("-u", "--unset"):
                if i + 1 < len(argv) and argv[i + 1].value:
                    out.unset.add(argv[i + 1].value or "")
                    out.env.pop(argv[i + 1].value or "", None)
                i += 2
            elif text.startswith("--unset="):
                out.unset.add(text[8:])
                out.env.pop(text[8:], None)
                i += 1
            elif text.startswith("-u"):
                out.unset.add(text[2:])
                out.env.pop(text[2:], None)
                i += 1
            elif text in ("-C", "--chdir", "-S", "--split-string"):
                i += 2
            else:
                i += 1
            continue
        if text == "--":
            i += 1
            continue
        assigned = _assignment(w)
        if assigned is None:
            return i
        out.env[assigned[0]] = assigned[1]
        out.unset.discard(assigned[0])
        i += 1
    return i


def _wrap_sudo(argv: Sequence[Word], i: int, out: Unwrapped) -> int:
    i = _skip_opts(argv, i, "ugCpDhrtTRU", ("user", "group", "close-from", "prompt", "chdir",
                                             "host", "role", "type", "command-timeout",
                                             "chroot", "other-user"))
    while i < len(argv):
        assigned = _assignment(argv[i])
        if assigned is None:
            break
        out.env[assigned[0]] = assigned[1]
        i += 1
    return i


def _wrap_taskset(argv: Sequence[Word], i: int, out: Unwrapped) -> int:
    i = _skip_opts(argv, i)
    return i + 1  # the mask or CPU list


def _wrap_timeout(argv: Sequence[Word], i: int, out: Unwrapped) -> int:
    i = _skip_opts(argv, i, "sk", ("signal", "kill-after"))
    return i + 1  # the duration


def _wrap_command(argv: Sequence[Word], i: int, out: Unwrapped) -> int:
    if i < len(argv) and argv[i].value in ("-v", "-V"):
        return -1  # `command -v x` only prints where x is
    return _skip_opts(argv, i)


def _runner(short_values: str = "", long_values: Sequence[str] = ()
            ) -> Callable[[Sequence[Word], int, Unwrapped], int]:
    """An environment manager's ``run`` (``uv run``, ``conda run -n ENV``): the command after
    its options runs with the environment's interpreter and this environment's variables.
    Its other verbs (``uv pip``, ``conda install``) run no command of the user's."""
    def skip(argv: Sequence[Word], i: int, out: Unwrapped) -> int:
        if i >= len(argv) or argv[i].value != "run":
            return -1
        return _skip_opts(argv, i + 1, short_values, long_values)

    return skip


def _opts(short_values: str = "", long_values: Sequence[str] = (), *, digits: bool = False
          ) -> Callable[[Sequence[Word], int, Unwrapped], int]:
    def skip(argv: Sequence[Word], i: int, out: Unwrapped) -> int:
        return _skip_opts(argv, i, short_values, long_values, digits=digits)

    return skip


_WRAPPERS: dict[str, Callable[[Sequence[Word], int, Unwrapped], int]] = {
    "env": _wrap_env,
    "nohup": _opts(),
    "time": _opts("fo", ("format", "output")),
    "exec": _opts("a"),
    "nice": _opts("n", ("adjustment",), digits=True),
    "numactl": _opts(
        "imNCpPwbs",
        ("interleave", "membind", "cpunodebind", "physcpubind", "preferred", "preferred-many",
         "weighted-interleave", "offset", "length", "shmmode", "shm", "file", "shmid", "mode"),
    ),
    "taskset": _wrap_taskset,
    "timeout": _wrap_timeout,
    "stdbuf": _opts("ioe", ("input", "output", "error")),
    "setsid": _opts(),
    "sudo": _wrap_sudo,
    "command": _wrap_command,
    # Environment managers: the options of theirs that take a value.
    "uv": _runner("pw", ("with", "with-editable", "with-requirements", "python", "package",
                         "extra", "group", "only-group", "no-group", "env-file", "directory",
                         "project", "index", "default-index", "index-url",
                         "extra-index-url", "find-links", "cache-dir", "config-file",
                         "python-preference", "color", "allow-insecure-host",
                         "index-strategy", "keyring-provider", "resolution", "prerelease",
                         "exclude-newer", "link-mode", "refresh-package",
                         "reinstall-package", "upgrade-package", "no-binary-package",
                         "no-build-package", "no-build-isolation-package", "config-setting",
                         "no-extra", "no-sources-package")),
    "conda": _runner("np", ("name", "prefix", "cwd")),
    "mamba": _runner("np", ("name", "prefix", "cwd")),
    "micromamba": _runner("npr", ("name", "prefix", "cwd", "root-prefix")),
    "poetry": _runner("CP", ("directory", "project")),
    "pdm": _runner("p", ("project", "venv")),
    "pixi": _runner("e", ("environment", "manifest-path", "executable")),
    "pipenv": _runner(),
}
WRAPPER_NAMES: tuple[str, ...] = tuple(_WRAPPERS)


def unwrap_full(argv: Sequence[Word], start: int = 0) -> Unwrapped:
    """Skip wrapper commands from ``argv[start]``; say what they do to the environment.

    Wrappers: ``env [-i] [-u X] A=B...``, ``nohup``, ``time``, ``exec``, ``nice [-n N]``,
    ``numactl ...``, ``taskset [opts] MASK``, ``timeout [opts] DURATION``, ``stdbuf ...``,
    ``setsid``, ``sudo [-E] [A=B...]``, ``command``, and the ``run`` of an environment
    manager (``uv``, ``conda``, ``mamba``, ``micromamba``, ``poetry``, ``pdm``, ``pixi``,
    ``pipenv``). Later assignments win.
    """
    out = Unwrapped(start)
    i = start
    while i < len(argv):
        name = basename(argv[i])
        handler = _WRAPPERS.get(name or "")
        if handler is None:
            break
        after = handler(argv, i + 1, out)
        if after < 0:
            break
        out.wrappers.append(name or "")
        i = min(after, len(argv))
    out.index = i
    return out


def unwrap(argv: Sequence[Word], start: int = 0) -> tuple[int, dict[str, Word]]:
    """Index of the real command after wrappers, and the ``env A=B`` assignments made."""
    out = unwrap_full(argv, start)
    return out.index, out.env


def splice_code(ctx: Context, index: int) -> Context | None:
    """When the command at ``argv[index:]`` (after wrappers) runs shell code (``eval
    WORDS``, ``bash -c CODE``), put the words of the command the code runs in its place,
    with what the code sets before it. None when there is no such code or it runs nothing
    that can be read; the context to plan with otherwise (``plan.argv`` is changed)."""
    plan = ctx.plan
    if ctx.inline is None:
        return None
    at, _ = unwrap(plan.argv, index)
    found = ctx.inline(plan.argv, at, ctx.env) if at < len(plan.argv) else None
    here = plan.argv[at].span if at < len(plan.argv) else plan.span
    if isinstance(found, str):
        plan.warn(found, here, code="inline")
        return None
    if found is None:
        return None
    plan.argv = [*plan.argv[:at], *found.argv]
    plan.env.update(found.inline_env)
    plan.script_env.update(found.exported)
    cwd = ctx.cwd
    if found.cwd != plan.cwd:
        plan.cwd = found.cwd
        cwd = Path(found.cwd) if found.cwd is not None else None
    plan.warn(f"{found.what} runs the command held in its words; the plan is that "
              "command's", here, severity="info", code="inline")
    env = {**ctx.env, **found.exported, **found.inline_env}
    return dataclasses.replace(ctx, env=env, cwd=cwd)


def program_entry(ctx: Context, index: int) -> None:
    """Entry of a program an outer launcher (srun, mpirun) runs directly."""
    plan = ctx.plan
    argv = plan.argv
    at, _env = unwrap(argv, index)
    if at >= len(argv):
        plan.warn("no program to run", argv[-1].span if argv else plan.span,
                  code="missing-entry")
        return
    prog = argv[at]
    if is_python(prog):
        call = parse_python(argv, at + 1)
        if call.kind is not None and call.target is not None:
            set_entry(plan, call.kind, call.target, call.index, call.args_from)
            return
    set_entry(plan, "cli", prog, at, at + 1)
    if basename(prog) in xtuner.ROW.programs:
        xtuner.as_task(plan, prog)
