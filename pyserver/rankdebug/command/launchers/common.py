"""Helpers the launcher modules share: reading numbers, devices, hostfiles, programs."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.options import Parsed, fully_unknown
from rankdebug.command.plan import Entry, EntryKind, LaunchPlan, known_int
from rankdebug.command.words import Part, Span, Word
from rankdebug.launcher_table import Launcher

# Variables that say which accelerators a process sees, in the order they are consulted.
VISIBLE_DEVICE_VARS = (
    "CUDA_VISIBLE_DEVICES",
    "ASCEND_RT_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
)

_TRUTHY = ("1", "true", "y", "yes")


def why(word: Word) -> str:
    """`` (reason)`` when the shell said why a word is unknown."""
    return f" ({word.reason})" if word.reason else ""


def basename(word: Word) -> str | None:
    """The last path component of a word when it is known (``$ENV/bin/python`` → python)."""
    tail: list[str] = []
    for part in reversed(word.parts):
        if not part.known:
            return None
        if "/" in part.text:
            tail.append(part.text.rsplit("/", 1)[1])
            break
        tail.append(part.text)
    name = "".join(reversed(tail))
    return name or None


def is_python(word: Word) -> bool:
    name = basename(word)
    return name is not None and launcher_table.is_python_name(name)


# -- reading numbers ---------------------------------------------------------------


def not_known(plan: LaunchPlan, label: str, word: Word) -> None:
    """Warn that the value ``label`` gives (``--nnodes``, ``PET_NNODES``) is not known."""
    plan.warn(f"{label} is {word.display}, which is not known{why(word)}", word.span)


def read_int(plan: LaunchPlan, word: Word, label: str) -> int | None:
    """``word`` as a whole number, else None with a warning naming ``label``."""
    n = known_int(word)
    if n is not None:
        return n
    if word.value is None:
        not_known(plan, label, word)
    else:
        plan.warn(f"{label} is {word.value!r}, which is not a whole number", word.span,
                  code="bad-value")
    return None


@dataclass(frozen=True, slots=True)
class Setting:
    """Where a value came from: an option as written, an environment variable, a file."""

    word: Word | None  # None: the option was given without its value
    label: str


def setting(ctx: Context, parsed: Parsed, name: str, env: str | None = None) -> Setting | None:
    """The option ``name`` if given, else the environment variable ``env`` if set."""
    use = parsed.get(name)
    if use is not None:
        return Setting(use.value, use.flag)
    if env is not None and env in ctx.env:
        return Setting(ctx.env[env], env)
    return None


def opaque_note(parsed: Parsed) -> str:
    return ", ".join(w.display for w in parsed.opaque)


def option_int(ctx: Context, parsed: Parsed, name: str, default: int | None) -> int | None:
    """The number option ``--NAME`` gives, or ``default`` (see :func:`resolve_int`)."""
    return resolve_int(ctx.plan, setting(ctx, parsed, name), parsed, default, "--" + name)


def resolve_int(
    plan: LaunchPlan,
    found: Setting | None,
    parsed: Parsed,
    default: int | None,
    what: str,
) -> int | None:
    """An option's number; its default when absent, unless unknown words may set it."""
    if found is None:
        if parsed.opaque:
            plan.warn(
                f"{what} is not given, and {opaque_note(parsed)} may set it",
                parsed.opaque[0].span,
            )
            return None
        return default
    if found.word is None:
        return None
    return read_int(plan, found.word, found.label)


def env_flag(ctx: Context, name: str) -> bool | None:
    """An on/off environment variable: False when unset, None when unknown."""
    word = ctx.env.get(name)
    if word is None:
        return False
    if word.value is None:
        return None
    return word.value.strip().lower() in _TRUTHY


def env_int(ctx: Context, name: str, default: int | None) -> int | None:
    """A whole-number environment variable, ``default`` when unset; None with a warning
    when it is unknown or not a whole number."""
    word = ctx.env.get(name)
    if word is None:
        return default
    return read_int(ctx.plan, word, name)


def not_exported(ctx: Context, names: Sequence[str], tool: str, span: Span) -> None:
    """Warn about variables ``tool`` reads that the script sets but does not export."""
    for name in names:
        if name in ctx.shell_vars and name not in ctx.env:
            ctx.plan.warn(f"{name} is set but not exported, so {tool} does not see it; use "
                          f"`export {name}`", span, code="not-exported")


def unknown_subcommand(plan: LaunchPlan, tool: str, word: Word, known: Sequence[str], *,
                       missing: bool = False) -> None:
    """A subcommand ``tool`` does not have (or none given, or not known here): said with the
    nearest one, as the tool would refuse it."""
    choices = ", ".join(known)
    if missing:
        plan.warn(f"{tool} needs one of {choices} after it", word.span, code="missing-entry",
                  severity="error")
    elif word.value is None:
        plan.warn(f"the {tool} command {word.display} is not known{why(word)}", word.span)
    else:
        near = difflib.get_close_matches(word.value, known, n=1, cutoff=0.6)
        hint = f"; did you mean {near[0]}?" if near else f" (it has {choices})"
        plan.warn(f"{tool} has no command {word.value}{hint}", word.span,
                  code="unknown-command", severity="error", fix=near[0] if near else None)


def product(a: int | None, b: int | None) -> int | None:
    return a * b if a is not None and b is not None else None


# -- devices -----------------------------------------------------------------------


def count_visible(value: str) -> int | None:
    """How many devices a CUDA_VISIBLE_DEVICES-style list names; None for 'all'.

    CUDA stops at the first invalid entry (``0,1,-1,2`` is two devices, ``-1`` none).
    """
    text = value.strip()
    if text.lower() == "all":
        return None
    if text.lower() in ("", "none", "void", "nodevfiles"):
        return 0
    n = 0
    for raw in text.split(","):
        item = raw.strip()
        if item.isdigit() or item.startswith(("GPU-", "MIG-")):
            n += 1
        else:
            break
    return n


def visible_var(ctx: Context) -> tuple[str, Word] | None:
    """The first device-visibility variable the process sees."""
    for name in VISIBLE_DEVICE_VARS:
        word = ctx.env.get(name)
        if word is not None:
            return name, word
    return None


def visible_devices(ctx: Context) -> int | None:
    """Devices visible to each process when a visibility variable says so."""
    found = visible_var(ctx)
    if found is None or found[1].value is None:
        return None
    return count_visible(found[1].value)


def device_count(ctx: Context, what: str, span: Span | None = None) -> int | None:
    """The visible device count for ``what``; None with a warning saying why not."""
    plan = ctx.plan
    found = visible_var(ctx)
    if found is None:
        plan.warn(
            f"{what} depends on how many GPUs the machine has, and CUDA_VISIBLE_DEVICES "
            "is not set",
            span,
        )
        return None
    name, word = found
    if word.value is None:
        plan.warn(f"{what} depends on {name}, which is {word.display} and not known{why(word)}",
                  span)
        return None
    n = count_visible(word.value)
    if n is None:
        plan.warn(f"{what} depends on {name}={word.value}, which does not say how many", span)
    return n


# -- words -------------------------------------------------------------------------


def _word_from(parts: Sequence[Part], like: Word) -> Word:
    parts = tuple(parts) or (Part(""),)
    known = all(p.known for p in parts)
    return Word(parts, like.span, "".join(p.text for p in parts), None if known else like.reason)


def split_last(word: Word, sep: str) -> tuple[Word, Word] | None:
    """Split a word at the last ``sep`` in its known text (``$ADDR:29500`` → ``$ADDR``, 29500)."""
    parts = word.parts
    for pi in range(len(parts) - 1, -1, -1):
        part = parts[pi]
        if part.known and sep in part.text:
            k = part.text.rindex(sep)
            head, tail = part.text[:k], part.text[k + len(sep) :]
            left = [*parts[:pi], *((Part(head),) if head else ())]
            right = [*((Part(tail),) if tail else ()), *parts[pi + 1 :]]
            return _word_from(left, word), _word_from(right, word)
    return None


def endpoint(plan: LaunchPlan, word: Word | None) -> None:
    """Fill master_addr/master_port from ``host:port``."""
    if word is None:
        return
    parts = split_last(word, ":")
    if parts is None:
        if word.value is not None and word.value:
            plan.master_addr = word
        return
    host, port = parts
    if host.display:
        plan.master_addr = host
    if port.display:
        plan.master_port = port


# -- files -------------------------------------------------------------------------


def can_check(ctx: Context, path: str) -> bool:
    """Whether a missing file at ``path`` really is missing (not just unresolvable here)."""
    try:
        return Path(path).expanduser().is_absolute() or ctx.cwd is not None
    except (OSError, RuntimeError):
        return False


def hostfile_not_read(plan: LaunchPlan, label: str, word: Word) -> None:
    """Warn that the hostfile ``label`` names is not known or cannot be read here."""
    if word.value is None:
        not_known(plan, label, word)
    else:
        plan.warn(f"the hostfile {word.value} cannot be read here, so the nodes it lists are "
                  "not known", word.span, code="unreadable-file")


def read_hostfile(ctx: Context, word: Word | None) -> list[tuple[str, int | None]] | None:
    """Hosts and slots of an MPI-style hostfile (``host slots=N``, ``host:N`` or ``host``)."""
    if word is None or word.value is None:
        return None
    text = ctx.read_text(word.value)
    if text is None:
        return None
    hosts: list[tuple[str, int | None]] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        host = fields[0]
        slots: int | None = None
        if ":" in host and host.rsplit(":", 1)[1].isdigit():
            host, count = host.rsplit(":", 1)
            slots = int(count)
        for item in fields[1:]:
            key, _, val = item.partition("=")
            if key in ("slots", "slot") and val.isdigit():
                slots = int(val)
        hosts.append((host, slots))
    return hosts


def uniform(counts: Sequence[int | None]) -> int | None:
    """The common value of per-node counts, or None when unknown or uneven."""
    if not counts or any(c is None for c in counts):
        return None
    first = counts[0]
    return first if all(c == first for c in counts) else None


def load_yaml_mapping(text: str) -> dict[str, object] | None:
    """A YAML config file's top-level mapping, or None when it is not one."""
    import yaml  # only when a config file is read: importing it costs ~70 ms

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


# -- entry -------------------------------------------------------------------------


def set_entry(
    plan: LaunchPlan, kind: EntryKind, target: Word, index: int, args_from: int
) -> None:
    """The launched program: ``target`` at argv ``index``; its arguments from ``args_from``."""
    plan.entry = Entry(kind, target)
    plan.entry_index = index
    plan.entry_args = list(plan.argv[args_from:])


def flag_kind(parsed: Parsed) -> EntryKind:
    """The entry's kind for launchers with ``--no_python`` and ``--module`` flags."""
    if parsed.has("no_python"):
        return "cli"
    if parsed.has("module"):
        return "module"
    return "script"


def warn_unknown_program(plan: LaunchPlan, what: str, target: Word) -> None:
    """Warn when nothing of the program's word is known (``$SCRIPT`` unset)."""
    if fully_unknown(target):
        plan.warn(f"the {what} {target.display} is not known{why(target)}", target.span)


def launcher_entry(plan: LaunchPlan, parsed: Parsed, tool: str, kind: EntryKind) -> None:
    """Entry of a launcher whose first positional is the program (argparse REMAINDER)."""
    argv = plan.argv
    at = parsed.end
    if at >= len(argv):
        if not any(d.code == "missing-value" for d in plan.diagnostics):  # said there
            plan.warn(f"{tool} is given no program to run",
                      argv[-1].span if argv else plan.span, code="missing-entry")
        return
    target = argv[at]
    set_entry(plan, kind, target, at, at + 1)
    warn_unknown_program(plan, "program", target)


@dataclass(frozen=True, slots=True)
class PyCall:
    """What ``python [flags] ...`` runs."""

    kind: EntryKind | None  # None: an interactive interpreter
    target: Word | None
    index: int  # argv index of the script, the module name, or "-c"
    args_from: int

    @property
    def module(self) -> str | None:
        if self.kind != "module" or self.target is None:
            return None
        return self.target.value


_PY_ARG_LONG = ("--check-hash-based-pycs",)


def parse_python(argv: Sequence[Word], start: int) -> PyCall:
    """Skip the interpreter's own flags (``-u -O -X dev -W ignore``) from ``argv[start]``."""
    i = start
    while i < len(argv):
        w = argv[i]
        if w.value is None:
            if w.known_prefix.startswith("-"):
                i += 1
                continue
            return PyCall("script", w, i, i + 1)
        found = _python_word(argv, i, w.value)
        if isinstance(found, PyCall):
            return found
        i = found
    return PyCall(None, None, len(argv), len(argv))


def _python_word(argv: Sequence[Word], i: int, text: str) -> PyCall | int:
    """What the known word ``argv[i]`` runs, or the index of the next word to read."""
    w = argv[i]
    if text == "-":
        return PyCall("cli", w, i, i + 1)
    if text == "--":
        return _python_next(argv, i + 1, "script")
    if not text.startswith("-"):
        return PyCall("script", w, i, i + 1)
    if text.startswith("--"):
        return i + (2 if text in _PY_ARG_LONG else 1)
    return _python_flags(argv, i, text)


def _python_flags(argv: Sequence[Word], i: int, text: str) -> PyCall | int:
    """One-letter flags, clustered or not: ``-u``, ``-OO``, ``-c CODE``, ``-mpkg``, ``-X dev``."""
    w = argv[i]
    for j in range(1, len(text)):
        c = text[j]
        if c == "c":
            return PyCall("cli", w, i, i + 1)
        if c == "m":
            if j + 1 < len(text):
                return PyCall("module", w.suffix_after(j + 1), i, i + 1)
            return _python_next(argv, i + 1, "module")
        if c in "WX":
            return i + (2 if j + 1 == len(text) else 1)  # the value may be the next word
    return i + 1


def _python_next(argv: Sequence[Word], i: int, kind: EntryKind) -> PyCall:
    """``argv[i]`` as the script or module (``-- x.py``, ``-m MODULE``), when there is one."""
    if i < len(argv):
        return PyCall(kind, argv[i], i, i + 1)
    return PyCall(None, None, i, i)


def program_or_module(argv: Sequence[Word], row: Launcher) -> int | None:
    """Where a launcher's arguments start: after one of ``row.programs``, or after
    ``python -m`` one of ``row.modules``; None when the command is neither."""
    if argv and basename(argv[0]) in row.programs:
        return 1
    return python_module_start(argv, row.modules)


def python_module_start(argv: Sequence[Word], modules: Sequence[str]) -> int | None:
    """For ``python [flags] -m MODULE ...`` with MODULE in ``modules``: the index after it."""
    if not argv or not is_python(argv[0]):
        return None
    call = parse_python(argv, 1)
    if call.kind == "module" and call.module in modules:
        return call.args_from
    return None


def single_process(plan: LaunchPlan) -> None:
    plan.nnodes = 1
    plan.node_rank = 0
    plan.nproc_per_node = 1
    plan.world_size = 1

