"""Mistakes in launch commands that waste a GPU allocation, found before the job starts.

These go beyond the engine's own per-command diagnostics (``plan.diagnostics``): they
look at the file system or at several commands together.

- ``too-many-processes``: ``--nproc_per_node`` larger than the devices in
  ``CUDA_VISIBLE_DEVICES``; fix: the device count.
- ``missing-script``: the entry script does not exist relative to the working directory;
  fix: the path of a file that does exist (a near spelling, or the same name next to the
  document).
- ``port-in-use``: two commands that run at once (the first ends with ``&`` and no
  ``wait`` comes between) use the same master port; fix: a port no command uses.
- ``use-env``: ``torch.distributed.launch`` without ``--use-env`` while the entry script
  reads ``LOCAL_RANK`` from ``os.environ`` (and takes no ``--local-rank`` argument);
  fix: add ``--use-env``.

Every finding is a ``Diagnostic`` whose ``fix`` replaces its span. Ranges point at the
words as written; words that came from elsewhere (an ``export`` line, a followed script)
get the command's first line and no fix.

Values are read from a plan as walked (``origin``): a plan the last edits only moved
moves its words when they are first read, and only a finding needs them.
"""

from __future__ import annotations

import difflib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rankdebug import launcher_table
from rankdebug.command.entry import script_missing, script_path, script_target, where
from rankdebug.command.line_moves import origin
from rankdebug.command.plan import Diagnostic, LaunchPlan, OptionUse
from rankdebug.command.words import Span, Word
from rankdebug.lsp.positions import Lines

_NPROC_OPTIONS = ("nproc_per_node", "num_gpus", "num_processes", "nproc")
_WAIT = re.compile(r"(^|[;&|(]\s*|\bthen\s+|\bdo\s+)wait\b")
_READS_LOCAL_RANK = re.compile(
    r"""os\.(?:environ\s*(?:\[\s*|\.get\(\s*|\.setdefault\(\s*)|getenv\(\s*)["']LOCAL_RANK["']"""
)
_LOCAL_RANK_ARG = re.compile(r"""["']--local[-_]rank["']""")
MAX_SCRIPT_BYTES = 2 << 20
MAX_LISTING = 2000


@dataclass
class Findings:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Engine diagnostics a finding here replaces (by identity), not to be shown twice.
    superseded: set[int] = field(default_factory=set)


def run_checks(
    plans: Sequence[LaunchPlan],
    lines: Lines,
    document_path: str | None,
) -> Findings:
    out = Findings()
    seen: dict[tuple[str, str], str | bool | None] = {}
    for plan in plans:
        devices(plan, out)
        missing_script(plan, lines, document_path, out, seen)
        use_env(plan, lines, out)
    ports(plans, lines, out)
    return out


# -- helpers -----------------------------------------------------------------------


def inside(span: Span, outer: Span) -> bool:
    """Whether ``span`` is a real place inside ``outer`` (not a word from elsewhere)."""
    if span.start_line < outer.start_line or span.end_line > outer.end_line:
        return False
    if span.start_line == outer.start_line and span.start_col < outer.start_col:
        return False
    if span.end_line == outer.end_line and span.end_col > outer.end_col:
        return False
    return (span.start_line, span.start_col) < (span.end_line, span.end_col)


def written(word: Word, plan: LaunchPlan, lines: Lines) -> bool:
    """Whether a word is a literal written in the command itself (so it can be replaced)."""
    if plan.followed is not None or word.value is None or not inside(word.span, plan.span):
        return False
    return span_text(lines, word.span) == word.value


def span_text(lines: Lines, span: Span) -> str:
    if span.start_line == span.end_line:
        return lines.line(span.start_line)[span.start_col:span.end_col]
    parts = [lines.line(span.start_line)[span.start_col:]]
    parts += [lines.line(r) for r in range(span.start_line + 1, span.end_line)]
    parts.append(lines.line(span.end_line)[:span.end_col])
    return "\n".join(parts)


def head(plan: LaunchPlan) -> Span:
    """The command's first line, for findings about words written elsewhere."""
    s = plan.span
    if s.start_line == s.end_line:
        return s
    return Span(s.start_line, s.start_col, s.start_line, s.start_col + 1)


def _option(plan: LaunchPlan, names: Sequence[str]) -> OptionUse | None:
    for name in names:
        use = plan.option(name)
        if use is not None:
            return use
    return None


# -- nproc > visible devices -------------------------------------------------------


def devices(plan: LaunchPlan, out: Findings) -> None:
    n = plan.nproc_per_node
    visible = plan.visible_devices
    if not isinstance(n, int) or visible is None or visible <= 0 or n <= visible:
        return
    use = _option(plan, _NPROC_OPTIONS)
    value = use.value if use is not None else None
    fix: str | None = None
    if value is not None and plan.followed is None and inside(value.span, plan.span):
        span = value.span
        if value.value is not None and value.source == value.value:
            fix = str(visible)
    elif use is not None and plan.followed is None and inside(use.span, plan.span):
        span = use.span
    else:
        span = head(plan)
    plural = "s" if visible != 1 else ""
    out.diagnostics.append(Diagnostic(
        f"{n} processes per node, but CUDA_VISIBLE_DEVICES shows {visible} device{plural}: "
        f"ranks {visible} to {n - 1} of each node will find no GPU of their own",
        span, "warning", "too-many-processes", fix,
    ))


# -- missing entry script ----------------------------------------------------------


def missing_script(plan: LaunchPlan, lines: Lines, document_path: str | None,
                   out: Findings, seen: dict[tuple[str, str], str | bool | None]) -> None:
    target = script_target(origin(plan).entry)
    if target is None or plan.cwd is None:
        return
    # Scripts run the same entry many times: look each (cwd, target) up once.
    key = (plan.cwd, target)
    if key not in seen:
        seen[key] = _lookup(target, Path(plan.cwd), document_path)
    fix = seen[key]
    if fix is True:
        return
    entry = plan.entry
    assert entry is not None
    cwd = Path(plan.cwd)
    fix = fix if isinstance(fix, str) else None
    if written(entry.target, plan, lines):
        span = entry.target.span
    else:
        span, fix = head(plan), None
    message = f"{target} does not exist{where(target, cwd)}"
    if fix is not None:
        message += f"; did you mean {fix}?"
    out.diagnostics.append(Diagnostic(message, span, "warning", "missing-script", fix))


def _lookup(target: str, cwd: Path, document_path: str | None) -> str | bool | None:
    """True when the script exists (or cannot be checked), else a fix or None."""
    if not script_missing(target, cwd):
        return True
    return _script_fix(target, script_path(target, cwd), cwd, document_path)


def _script_fix(target: str, full: Path, cwd: Path, document_path: str | None) -> str | None:
    """A path, written like ``target``, to an existing file the user probably meant."""
    if document_path:
        beside = Path(document_path).parent / Path(target).name
        if beside.is_file():
            return _relative(beside, cwd, target)
    folder = full.parent
    try:
        if not folder.is_dir():
            return None
        names = []
        with os.scandir(folder) as it:
            for i, ent in enumerate(it):
                if i >= MAX_LISTING:
                    break
                if ent.is_file():
                    names.append(ent.name)
    except OSError:
        return None
    best = difflib.get_close_matches(full.name, names, n=1, cutoff=0.75)
    if not best:
        return None
    prefix = target[: len(target) - len(full.name)] if target.endswith(full.name) else ""
    return prefix + best[0]


def _relative(path: Path, cwd: Path, like: str) -> str:
    if Path(like).is_absolute():
        return str(path)
    try:
        return os.path.relpath(path, cwd)
    except ValueError:
        return str(path)


# -- the same master port in commands that run at once -----------------------------


@dataclass
class _Port:
    plan: LaunchPlan
    port: int
    written: bool  # given (plan.master_port), or torchrun's default

    @property
    def word(self) -> Word | None:
        """The port as written (None for the default)."""
        return self.plan.master_port if self.written else None


def _port_of(plan: LaunchPlan) -> _Port | None:
    walked = origin(plan)
    word = walked.master_port
    if word is not None:
        value = word.value
        if value is None or not value.strip().isdigit():
            return None
        return _Port(plan, int(value), True)
    default = launcher_table.get(plan.launcher).default_master_port
    if default is None or walked.option("standalone") is not None:
        return None
    if walked.option("rdzv_endpoint") is not None or walked.option("rdzv_backend") is not None:
        return None
    if plan.nnodes != 1:
        return None
    return _Port(plan, default, False)


def _same_host(a: LaunchPlan, b: LaunchPlan) -> bool:
    local = {None, "", "localhost", "127.0.0.1", "::1"}
    a, b = origin(a), origin(b)
    ha = a.master_addr.value if a.master_addr is not None else None
    hb = b.master_addr.value if b.master_addr is not None else None
    if ha in local and hb in local:
        return True
    return ha == hb and ha is not None


def _waits_between(lines: Lines, first: LaunchPlan, second: LaunchPlan) -> bool:
    for row in range(first.span.end_line, second.span.start_line + 1):
        text = lines.line(row)
        if "wait" not in text:
            continue
        if row == first.span.end_line:
            text = text[first.span.end_col:]
        if row == second.span.start_line:
            text = text[: second.span.start_col]
        code = text.split("#", 1)[0]
        if _WAIT.search(code.strip()):
            return True
    return False


def ports(plans: Sequence[LaunchPlan], lines: Lines, out: Findings) -> None:
    """One pass in document order: jobs started with ``&`` run until a ``wait``."""
    found = [p for p in (_port_of(plan) for plan in plans) if p is not None]
    if len(found) < 2:
        return
    used = {p.port for p in found}
    running: dict[int, list[_Port]] = {}
    previous: LaunchPlan | None = None
    for current in found:
        if running and previous is not None and _waits_between(lines, previous, current.plan):
            running.clear()
        previous = current.plan
        earlier = next((e for e in running.get(current.port, ())
                        if _same_host(e.plan, current.plan)), None)
        if earlier is not None:
            free = max(used) + 1
            used.add(free)
            _port_finding(earlier, current, free, lines, out)
        if current.plan.background:
            running.setdefault(current.port, []).append(current)


def _port_finding(earlier: _Port, later: _Port, free: int, lines: Lines,
                  out: Findings) -> None:
    plan = later.plan
    line = earlier.plan.span.start_line + 1
    default = f" ({plan.launcher}'s default)" if later.word is None else ""
    message = (f"port {later.port}{default} is also the master port of the command on line "
               f"{line}, which still runs (it ends with &): the second job cannot bind it")
    fix: str | None = None
    if later.word is not None:
        if written(later.word, plan, lines) and (
            earlier.word is None or earlier.word.span != later.word.span
        ):
            span, fix = later.word.span, str(free)
        else:
            span = head(plan)
    else:
        span, fix = _insert_port(plan, free, lines)
    out.diagnostics.append(Diagnostic(message, span, "warning", "port-in-use", fix))


def _insert_port(plan: LaunchPlan, port: int, lines: Lines) -> tuple[Span, str | None]:
    """Where ``--master_port N`` goes (before the first launcher option or the script)."""
    anchor: Span | None = None
    if plan.options and plan.followed is None:
        anchor = plan.options[0].span
    elif plan.entry is not None and plan.entry.kind == "script":
        anchor = plan.entry.target.span
    if anchor is None or plan.followed is not None or not inside(anchor, plan.span):
        return head(plan), None
    end = anchor.start_col
    for ch in lines.line(anchor.start_line)[anchor.start_col:]:
        if ch.isspace():
            break
        end += 1
    span = Span(anchor.start_line, anchor.start_col, anchor.start_line, end)
    original = span_text(lines, span)
    return span, f"--master_port {port} {original}"


# -- torch.distributed.launch without --use-env -----------------------------------

_script_cache: OrderedDict[tuple[str, int, int], bool] = OrderedDict()
_cache_lock = threading.Lock()


def reads_local_rank_env(path: Path) -> bool:
    """Whether a script reads LOCAL_RANK from os.environ and takes no --local-rank argument."""
    try:
        st = path.stat()
    except OSError:
        return False
    if st.st_size > MAX_SCRIPT_BYTES:
        return False
    key = (str(path), st.st_mtime_ns, st.st_size)
    with _cache_lock:
        if key in _script_cache:
            _script_cache.move_to_end(key)
            return _script_cache[key]
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    result = bool(_READS_LOCAL_RANK.search(text)) and not _LOCAL_RANK_ARG.search(text)
    with _cache_lock:
        _script_cache[key] = result
        while len(_script_cache) > 256:
            _script_cache.popitem(last=False)
    return result


def use_env(plan: LaunchPlan, lines: Lines, out: Findings) -> None:
    if plan.launcher != "torch.distributed.launch" or origin(plan).option("use_env") is not None:
        return
    entry = plan.entry
    if entry is None or entry.kind != "script" or entry.target.value is None or not plan.cwd:
        return
    script = Path(os.path.expanduser(entry.target.value))
    if not script.is_absolute():
        script = Path(plan.cwd) / script
    if not reads_local_rank_env(script):
        return
    note = next((d for d in plan.diagnostics if d.code == "local-rank-arg"), None)
    module = next((w for w in plan.argv if w.value == "torch.distributed.launch"), None)
    fix: str | None = None
    if note is not None and plan.followed is None and inside(note.span, plan.span):
        span = note.span
        out.superseded.add(id(note))
    elif module is not None and plan.followed is None and inside(module.span, plan.span):
        span = module.span
    else:
        span = head(plan)
    if span != head(plan):
        original = span_text(lines, span)
        if original.rstrip("'\"").endswith("torch.distributed.launch"):
            fix = original + " --use-env"
    name = entry.target.value
    out.diagnostics.append(Diagnostic(
        f"{name} reads LOCAL_RANK from os.environ, but without --use-env "
        "torch.distributed.launch passes --local-rank=N as an argument, which the script "
        "does not accept: add --use-env",
        span, "warning", "use-env", fix,
    ))
