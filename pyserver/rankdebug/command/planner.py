"""From a document and a line to a launch plan: find the command, evaluate it, plan it."""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from tree_sitter import Node

from rankdebug.command import launchers, typos
from rankdebug.command.at_line import check_syntax, explain_empty, find_candidates, past_end
from rankdebug.command.entry import script_missing, script_target, where
from rankdebug.command.errors import CommandError
from rankdebug.command.expand.chunks import TooDeep
from rankdebug.command.expand.expander import Expander
from rankdebug.command.follow import followed, missing_wrapper, read_script, script_word
from rankdebug.command.inline import inliner
from rankdebug.command.launchers import wrapper_scripts
from rankdebug.command.launchers.base import Context, Inliner
from rankdebug.command.launchers.common import basename
from rankdebug.command.launchers.wrappers import WRAPPER_NAMES
from rankdebug.command.plan import Diagnostic, LaunchPlan
from rankdebug.command.sbatch import sbatch_directives, slurm_env
from rankdebug.command.script.walker import SOURCED_FIRST_LINE, Report, Stop, Walker
from rankdebug.command.source import Source, guess_language, load
from rankdebug.command.state import Scalar, State, Var, text_of, unknown
from rankdebug.command.syntax import (
    Positions,
    broken_text,
    glued_prefix,
    parse,
    readable_prefix,
    text,
)
from rankdebug.command.words import Part, Span, Word
from rankdebug.launcher_table import LAUNCH_PROGRAM, OTHER

# Command names worth evaluating when listing every launch command of a document: launcher
# programs, pythons and scripts, wrappers, sbatch and shells (which may be followed), and
# names that are not known before they are expanded.
_WRAPPERS = "|".join(re.escape(name) for name in WRAPPER_NAMES)
_LAUNCHY = re.compile(
    rf"(^|/)(?:{LAUNCH_PROGRAM.pattern}|pythonw|sbatch|bash|sh|zsh|eval|{_WRAPPERS})$|^[$`]")
MAX_FOLLOW = 4


class Where(TypedDict, total=False):
    """Where a document's commands run: the keyword arguments of ``plan_text``, ``plan_all``
    and ``DocumentPlans``."""

    # The document's path (it names $0 and BASH_SOURCE; its suffix tells Markdown).
    path: str | None
    # "shell" or "markdown" (default: from the path's suffix).
    language: str | None
    # Variables of the environment the script runs in.
    caller_env: Mapping[str, str] | None
    # Where relative paths (hostfiles, configs, `bash other.sh`) resolve.
    cwd: Path | None
    # Whether caller_env is the whole environment (names it lacks are unset); default: when
    # it is given.
    env_complete: bool | None


@dataclass
class Options:
    caller_env: Mapping[str, str] | None = None
    # Whether caller_env is the whole environment; default: when it is given.
    env_complete: bool | None = None
    cwd: Path | None = None
    path: str | None = None
    language: str | None = None
    # Script arguments ($1 ...): none by default; None when they cannot be known.
    positional: list[Scalar] | None = field(default_factory=list)
    follow_depth: int = 0
    extra_sbatch: list[Word] = field(default_factory=list)


def _base_state(source_text: str, opts: Options) -> tuple[State, list[Word]]:
    env = dict(opts.caller_env) if opts.caller_env is not None else {}
    sbatch = [*sbatch_directives(source_text), *opts.extra_sbatch]
    for name, value in slurm_env(sbatch).items():
        env.setdefault(name, value)
    state = State(
        caller_env=env,
        env_complete=opts.caller_env is not None if opts.env_complete is None
        else opts.env_complete,
        cwd=str(opts.cwd) if opts.cwd is not None else None,
        script_path=opts.path,
        positional=None if opts.positional is None else list(opts.positional),
    )
    return state, sbatch


def plan_document(data: bytes | str, line: int, opts: Options) -> LaunchPlan:
    """The plan of the command at 1-based `line` of a document."""
    if line < 1:
        raise CommandError(f"{line} is not a line number (lines start at 1)", 1, 1)
    source = load(data, path=opts.path, language=opts.language)
    row = line - 1
    try:
        plan = _plan_row(source, row, opts)
    except (TooDeep, RecursionError) as exc:
        raise CommandError("the command nests too deeply to read", line, 1) from exc
    _check_entry(plan)
    return plan


def _check_entry(plan: LaunchPlan) -> None:
    """An entry script that is not there, said as ``rankdebug launch`` refuses it. (The
    language server says it with a fix, for every command: lsp/checks.py.)"""
    target = script_target(plan.entry)
    if target is None or plan.cwd is None or plan.entry is None:
        return
    cwd = Path(plan.cwd)
    if script_missing(target, cwd):
        plan.warn(f"the entry script {target} does not exist{where(target, cwd)}: "
                  "rankdebug launch will not start it", plan.entry.target.span,
                  code="missing-script")


def _plan_row(source: Source, row: int, opts: Options) -> LaunchPlan:
    seg_index = next((i for i, s in enumerate(source.segments)
                      if s.first_line <= row < s.first_line + s.text.count("\n") + 1), None)
    if seg_index is None:
        if guess_language(opts.path, opts.language) == "markdown":
            raise CommandError("this line is not inside a shell code block", row + 1, 1)
        raise past_end(source, row + 1)
    seg = source.segments[seg_index]
    root = parse(seg.text).root_node
    pos = Positions(seg.text, seg.first_line)
    local_row = row - seg.first_line
    candidates = find_candidates(root, local_row)
    if not candidates:
        raise explain_empty(root, local_row, pos, seg)
    skipped = check_syntax(root, candidates, pos)
    wanted = {(seg_index, c.start_byte, c.end_byte) for c in candidates}
    in_function = any(_inside_function(c) for c in candidates)
    plans: dict[tuple[int, int, int], LaunchPlan] = {}
    reports: dict[tuple[int, int, int], list[Report]] = {}
    all_text = "\n".join(s.text for s in source.segments)
    state, sbatch = _base_state(all_text, opts)

    def on_command(rep: Report) -> None:
        key = (rep.segment, rep.node.start_byte, rep.node.end_byte)
        if key not in wanted:
            return
        if in_function:
            # A function may be called several times: read the command at every call.
            reports.setdefault(key, []).append(
                Report(rep.node, rep.pos, rep.state.copy(), rep.background, rep.segment))
            return
        if key in plans:
            return
        plans[key] = plan_report(rep, sbatch, opts)
        if plans[key].launcher != OTHER or len(plans) == len(wanted):
            raise Stop

    walker = Walker(on_command)
    with contextlib.suppress(Stop):
        walker.run(source.segments, state, {seg_index: root})
    for key, reps in reports.items():
        plans[key] = _plan_calls(reps, sbatch, opts)
    ordered = [plans[k] for k in sorted(plans, key=lambda k: (k[1], k[2]))]
    if not ordered:  # not reached by the walk (should not happen): plan with the end state
        rep = Report(candidates[0], pos, state, False, seg_index)
        ordered = [plan_report(rep, sbatch, opts)]
    chosen = next((p for p in ordered if p.launcher != OTHER), ordered[0])
    chosen.diagnostics[:0] = source.diagnostics
    chosen.diagnostics.extend(_broken_after(node, pos) for node in skipped)
    return chosen


def _broken_after(error: Node, pos: Positions) -> Diagnostic:
    """Said of a command bash runs before it stops at the broken text after it."""
    _, broken = readable_prefix(error)
    at = broken if broken is not None else error
    start = pos.span(at)
    return Diagnostic(
        f"the script cannot be read from here on ({broken_text(at, pos)}): bash runs the "
        "commands before it, then stops with a syntax error",
        Span(start.start_line, start.start_col, start.start_line,
             len(pos.line_text(at.start_point.row))), "warning", "syntax")



def _inside_function(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "function_definition":
            return True
        parent = parent.parent
    return False


def _plan_calls(reps: list[Report], sbatch: Sequence[Word], opts: Options) -> LaunchPlan:
    """A command in a function called several times: words that differ between the
    calls are unknown."""
    plans = [plan_report(r, sbatch, opts) for r in reps]
    first = plans[0]
    shown = [[w.display for w in p.argv] for p in plans]
    if all(s == shown[0] for s in shown):
        return first
    if any(len(s) != len(shown[0]) for s in shown):
        first.warn(f"this command differs between the {len(plans)} calls of its function; "
                   "showing the first", code="calls-differ")
        return first
    merged: list[Word] = []
    for i, word in enumerate(first.argv):
        if all(s[i] == shown[0][i] for s in shown):
            merged.append(word)
        else:
            why = f"{word.source} differs between the calls of its function ({len(plans)} calls)"
            merged.append(Word(unknown(word.source, why), word.span, word.source, why))
    return plan_report(reps[0], sbatch, opts, argv_override=merged)


def plan_all_commands(data: bytes | str | Source,
                      opts: Options) -> tuple[list[LaunchPlan], list[Diagnostic]]:
    """Every launch command of a document, in order, each with its own state."""
    source = data if isinstance(data, Source) else load(data, path=opts.path,
                                                          language=opts.language)
    all_text = "\n".join(s.text for s in source.segments)
    state, sbatch = _base_state(all_text, opts)
    seen: set[tuple[int, int, int]] = set()
    plans: list[LaunchPlan] = []

    def on_command(rep: Report) -> None:
        key = (rep.segment, rep.node.start_byte, rep.node.end_byte)
        if key in seen:
            return
        seen.add(key)
        plan = plan_launch(rep, sbatch, opts)
        if plan is not None:
            plans.append(plan)
        elif (slip := document_slip(rep)) is not None:
            walker.diagnostics.append(slip)

    walker = Walker(on_command)
    with contextlib.suppress(TooDeep, RecursionError):
        walker.run(source.segments, state)
    plans.sort(key=lambda p: (p.span.start_line, p.span.start_col))
    return plans, [*source.diagnostics, *walker.diagnostics]


def plan_launch(rep: Report, sbatch: Sequence[Word], opts: Options) -> LaunchPlan | None:
    """The plan of a reached command when it is a launch command of this document (not of
    a sourced file, not broken, launcher other than "other"), else None."""
    if rep.pos.line_of(rep.node) >= SOURCED_FIRST_LINE or rep.node.has_error:
        return None
    name = rep.node.child_by_field_name("name")
    if name is None or not _LAUNCHY.search(text(name)):
        return None
    try:
        plan = plan_report(rep, sbatch, opts)
    except CommandError:
        return None
    if plan.launcher == OTHER and not any(d.code == "missing-wrapper" for d in plan.diagnostics):
        return None
    return plan  # (a wrapper that is not there is said where it is run)


def plan_report(rep: Report, sbatch: Sequence[Word], opts: Options,
                argv_override: list[Word] | None = None) -> LaunchPlan:
    """Evaluate one reached command and plan it (with `argv_override` as its words)."""
    node, pos = rep.node, rep.pos
    glued = {c.start_byte for c in glued_prefix(node)}  # the walk has set them already
    scratch = rep.state.copy() if any(
        c.type == "variable_assignment" for c in node.children) else rep.state
    inline: dict[str, Word] = {}
    for child in node.children:
        if child.type != "variable_assignment" or child.start_byte in glued:
            continue
        name_node = child.child_by_field_name("name")
        value_node = child.child_by_field_name("value")
        if name_node is None:
            continue
        ex = Expander(scratch, pos)
        value = ex.scalar(value_node) if value_node is not None else ()
        name = text(name_node)
        word = Word(value or (Part(""),), pos.span(child), text(child),
                    next((p.reason for p in value if not p.known), None))
        inline[name] = word
        scratch.set(name, Var(value, exported=True))
    # Bash expands the words before the inline assignments take effect.
    ex = Expander(rep.state.copy() if "=" in text(node) else rep.state, pos)
    arg_nodes = [c for c in node.children
                 if c.type not in ("variable_assignment", "file_redirect", "herestring_redirect",
                                   "heredoc_redirect", "comment")
                 and c.is_named]
    argv = argv_override if argv_override is not None else ex.words(arg_nodes)
    escaped = _escaped_space_tail(node, pos)
    if argv_override is None and escaped is not None:
        argv.extend(escaped[0])
    state = rep.state
    script_env = {k: _var_word(v, k) for k, v in state.exported_vars().items()}
    env: dict[str, Word] = {k: Word.literal(v) for k, v in state.caller_env.items()}
    env.update(script_env)
    env.update(inline)
    shell_vars = _VarWords(state.vars)
    span = pos.span(_statement(node))
    if glued:  # the command starts at its name, below the assignments
        name_span = pos.span(node.child_by_field_name("name") or node)
        span = Span(name_span.start_line, name_span.start_col, span.end_line, span.end_col)
    plan = LaunchPlan(launcher=OTHER, argv=argv, span=span, env=inline,
                      script_env=script_env, cwd=state.cwd, background=rep.background)
    cwd = Path(state.cwd) if state.cwd is not None else None
    ctx = Context(plan, env, shell_vars, cwd, sbatch, _inliner(rep.state, sbatch, opts))
    if escaped is not None and escaped[1] is not None:
        plan.diagnostics.append(escaped[1])
    if not argv:
        return plan
    followed = _follow(plan, ctx, state, opts)
    if followed is not None:
        return followed
    launchers.plan_argv(ctx)
    _warn_unknown_words(plan)
    if plan.launcher == OTHER:
        found = typos.slip(node, pos, rep.state)
        if found is not None:
            plan.diagnostics.append(found)
    return plan


def document_slip(rep: Report) -> Diagnostic | None:
    """For a command that is no launch command: a launcher's name misspelt, as a
    diagnostic of the document."""
    if rep.pos.line_of(rep.node) >= SOURCED_FIRST_LINE or rep.node.has_error:
        return None
    return typos.slip(rep.node, rep.pos, rep.state)


def _inliner(state: State, sbatch: Sequence[Word], opts: Options) -> Inliner | None:
    """Reads code run from words (`eval "$CMD"`, `bash -c CODE`), one level deeper."""
    if opts.follow_depth >= MAX_FOLLOW:
        return None
    deeper = dataclasses.replace(opts, follow_depth=opts.follow_depth + 1)
    return inliner(state, lambda rep: plan_report(rep, sbatch, deeper))


_ESCAPED_SPACE = re.compile(r"^(\s*)\\ (.*)$")


def _escaped_space_tail(node: Node, pos: Positions) -> tuple[list[Word], Diagnostic | None] | None:
    r"""Bash reads `\ ` that starts a word as a word holding a space; tree-sitter-bash
    drops it, and reads a `#` right after it as a comment. Restore bash's words, and
    flag the classic mistake of a space after a line-continuation backslash."""
    row = node.end_point.row
    line = pos.line_text(row)
    rest = line.encode("utf-8")[node.end_point.column:].decode("utf-8", errors="replace")
    m = _ESCAPED_SPACE.match(rest)
    if m is None:
        return None
    sibling = node.next_sibling
    if sibling is not None and sibling.start_point.row == row and sibling.type != "comment":
        return None
    start_col = pos.col(row, node.end_point.column) + len(m.group(1))
    doc_row = row + pos.first_line
    tail = m.group(2)
    pieces = tail.split()
    first_piece = "" if tail[:1].isspace() or not pieces else pieces.pop(0)
    words = [Word.literal(" " + first_piece, Span(doc_row, start_col, doc_row,
                                                  start_col + 2 + len(first_piece)))]
    col = start_col + 2 + len(first_piece)
    for piece in pieces:
        at = line.find(piece, col)
        at = at if at >= 0 else col
        words.append(Word.literal(piece, Span(doc_row, at, doc_row, at + len(piece))))
        col = at + len(piece)
    diag = None
    if not tail.strip():
        diag = Diagnostic(
            "a space follows this backslash, so the line does not continue: the command "
            "ends here (with an extra argument holding a space) and the next line runs on "
            "its own", Span(doc_row, start_col, doc_row, len(line)), "error",
            "space-after-backslash", fix="\\")
    return words, diag


def _statement(node: Node) -> Node:
    """The command with its redirections and pipe stages: what a person calls the command."""
    while node.parent is not None and node.parent.type in ("redirected_statement", "pipeline"):
        node = node.parent
    return node


def _warn_unknown_words(plan: LaunchPlan) -> None:
    for word in [*plan.argv, *plan.env.values()]:
        if word.known:
            continue
        part = next(p for p in word.parts if not p.known)
        reason = part.reason or "it is not known"
        shown = word.display if len(word.display) <= 60 else word.display[:57] + "..."
        message = reason if part.text and part.text[:20] in reason else f"{shown}: {reason}"
        plan.warn(message, word.span)


class _VarWords(Mapping[str, Word]):
    """Shell variables as Words, converted only when a launcher asks for one."""

    def __init__(self, variables: Mapping[str, Var]) -> None:
        self._vars = variables

    def __getitem__(self, name: str) -> Word:
        var = self._vars[name]
        if var.array_unknown == "__unset__":
            raise KeyError(name)
        return _var_word(var, name)

    def __iter__(self) -> Iterator[str]:
        return (k for k, v in self._vars.items() if v.array_unknown != "__unset__")

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _var_word(var: Var, name: str) -> Word:
    if var.is_array:
        if var.array_unknown:
            return Word.unknown(f"${name}", Span.point(0, 0), var.array_unknown)
        items = [text_of(i) for i in var.items or ()]
        if all(i is not None for i in items):
            return Word.literal(" ".join(i or "" for i in items))
        return Word.unknown(f"${name}", Span.point(0, 0), f"${name} is partly unknown")
    parts = var.value or (Part(""),)
    reason = next((p.reason for p in parts if not p.known), None)
    return Word(parts, Span.point(0, 0), f"${name}", reason)


def _follow(plan: LaunchPlan, ctx: Context, state: State, opts: Options) -> LaunchPlan | None:
    """`bash train.sh ARGS`, `./train.sh`, `sbatch job.sbatch`: plan the script's command."""
    if opts.follow_depth >= MAX_FOLLOW:
        return None
    argv = plan.argv
    found = script_word(argv)
    if found is None:
        return None
    i, extra_sbatch = found
    script = argv[i].value
    data = read_script(ctx, script) if script is not None else None
    if script is None or data is None:
        conventional = _by_convention(plan, ctx, i)
        if conventional is None and script is not None:
            missing_wrapper(plan, ctx, opts.path, argv[i])
        return conventional
    inner_env = {k: v.value for k, v in ctx.env.items() if v.value is not None}
    sub = Options(
        caller_env=inner_env, env_complete=state.env_complete, cwd=ctx.cwd, path=script,
        positional=[w.parts for w in argv[i + 1:]],
        follow_depth=opts.follow_depth + 1, extra_sbatch=extra_sbatch,
    )
    try:
        inner_plans, _ = plan_all_commands(data, sub)
    except CommandError:
        return None
    return followed(inner_plans[0], plan, script) if inner_plans else None


def _by_convention(plan: LaunchPlan, ctx: Context, i: int) -> LaunchPlan | None:
    """A framework's wrapper script that is not here, planned from what it is known to run
    with these arguments (launchers/wrapper_scripts.py)."""
    script = plan.argv[i]
    name = basename(script) or ""
    convention = wrapper_scripts.KNOWN.get(name)
    if convention is None or ctx.inline is None:
        return None
    words = convention(plan.argv[i + 1:])
    if isinstance(words, str):
        plan.warn(words, script.span, code="wrapper-usage", severity="error")
        return None
    start, _ = launchers.unwrap(plan.argv)
    plan.argv = [*plan.argv[:start], Word.literal("eval", script.span), *words]
    plan.warn(f"{script.display} cannot be read here: planned from what {name} runs with "
              "these arguments, as the framework writes it", script.span, severity="info",
              code="convention")
    launchers.plan_argv(ctx)
    _warn_unknown_words(plan)
    return plan
