"""Shell code run from words: ``eval "$CMD"``, ``bash -c "torchrun ... ${ARGS}"`` (also
after srun's or mpirun's options, see ``launchers.wrappers.splice_code``).

The words are joined as ``eval`` joins them, read as shell code and walked in the state
that code runs in: ``eval``'s is the script's own, ``bash -c``'s a new shell that sees the
environment only, with ``$0`` and ``$1``... from the words after the code. The first
launch command met (or the code's only command) stands in for the words. Parts of the
words not known here enter the code as variables holding them, so they stay unknown, with
their reasons, wherever the code puts them.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping, Sequence

from rankdebug.command.errors import CommandError
from rankdebug.command.expand.chunks import TooDeep
from rankdebug.command.launchers.base import Inlined, Inliner
from rankdebug.command.launchers.common import basename
from rankdebug.command.options import join_spans
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.script.walker import Report, Stop, Walker
from rankdebug.command.source import Segment
from rankdebug.command.state import Scalar, State, Var
from rankdebug.command.syntax import parse
from rankdebug.command.words import Part, Word
from rankdebug.launcher_table import OTHER

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_HOLDER = "__rankdebug_unknown_"
_HOLDER_REF = re.compile(r"\$\{(" + _HOLDER + r"\d+)\}|\$(" + _HOLDER + r"\d+)")
# Shell options that take the next word (`bash -o pipefail -c ...`).
_SHELL_VALUE_OPTS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})

PlanOne = Callable[[Report], LaunchPlan]


class _Code:
    """Shell code held in words: its text, and the unknown parts it holds by name."""

    def __init__(self, words: Sequence[Word], program: str, positional: list[Word] | None):
        self.words = list(words)
        self.program = program
        self.what = "eval" if positional is None else f"{program} -c"
        self.positional = positional  # `bash -c`: $0 and its arguments
        self.holders: dict[str, Scalar] = {}
        self.retried = False  # `$((` was read as `$( (` (see read_code)
        pieces = []
        for word in words:
            text = ""
            for part in word.parts:
                if part.known:
                    text += part.text
                else:
                    name = f"{_HOLDER}{len(self.holders)}"
                    self.holders[name] = (part,)
                    text += "${" + name + "}"
            pieces.append(text)
        self.text = " ".join(pieces)
        self.span = join_spans(words[0].span, words[-1].span)
        self.source = " ".join(w.source for w in words)

    def restore(self, word: Word) -> Word:
        """A word of the code, placed where the code is written, its unknown parts shown
        as the text they came from."""
        parts: list[Part] = []
        for part in word.parts:
            if not part.known:
                parts.append(Part(self._shown(part.text), False, self._shown(part.reason)))
            else:
                parts.extend(self._held(part.text))
        reason = next((p.reason for p in parts if not p.known), None)
        return Word(tuple(parts), self.span, self.source, reason)

    def _shown(self, text: str) -> str:
        def back(m: re.Match[str]) -> str:
            held = self.holders.get(m.group(1) or m.group(2))
            return held[0].text if held else m.group(0)

        if self.retried:
            text = text.replace("$( (", "$((")
        return _HOLDER_REF.sub(back, text)

    def _held(self, text: str) -> list[Part]:
        """Known text that holds a placeholder (the code quoted it, `'$X'`): the unknown
        part it stands for is unknown there too."""
        out: list[Part] = []
        at = 0
        for m in _HOLDER_REF.finditer(text):
            held = self.holders.get(m.group(1) or m.group(2))
            if held is None:
                continue
            if m.start() > at:
                out.append(Part(text[at:m.start()]))
            out.append(held[0])
            at = m.end()
        if at < len(text) or not out:
            out.append(Part(text[at:]))
        return out


def code_at(argv: Sequence[Word], at: int) -> _Code | None:
    """The code of ``eval WORDS`` or ``SHELL [options] -c CODE [NAME [ARGS]]`` at ``argv[at]``."""
    name = basename(argv[at])
    if name == "eval":
        words = list(argv[at + 1:])
        if words and words[0].value == "--":
            words = words[1:]
        return _Code(words, "eval", None) if words else None
    if name not in SHELLS:
        return None
    i, has_c = at + 1, False
    while i < len(argv):
        text = argv[i].value
        if text in ("-", "--"):
            i += 1
            break
        if text is None or not text.startswith(("-", "+")):
            break
        if text in _SHELL_VALUE_OPTS:
            i += 1
        elif not text.startswith("--") and "c" in text[1:]:
            has_c = True  # `-c`, `-lc`, `-xec`
        i += 1
    if not has_c or i >= len(argv):
        return None
    return _Code([argv[i]], name, list(argv[i + 1:]))


def _state(code: _Code, state: State, env: Mapping[str, Word]) -> State:
    """The state the code starts in, with the unknown parts it holds as variables."""
    if code.positional is None:
        inner = state.copy()
    else:
        # A new shell: the environment only; $0 and $1... from the words after the code.
        inner = State(
            caller_env={k: w.value for k, w in env.items() if w.value is not None},
            env_complete=state.env_complete,
            cwd=state.cwd,
            script_path=code.positional[0].value if code.positional else code.program,
            positional=[w.parts for w in code.positional[1:]],
        )
        for name, word in env.items():
            if word.value is None:
                inner.vars[name] = Var(word.parts, exported=True)
    for name, value in code.holders.items():
        inner.vars[name] = Var(value)
    return inner


def read_code(code: _Code, state: State, env: Mapping[str, Word],
              plan_one: PlanOne) -> Inlined | str | None:
    """The command the code runs: its first launch command, else its only command; why
    not, when the code cannot be read."""
    root = parse(code.text).root_node
    if root.has_error:
        # bash reads `$((` that is no arithmetic as `$( (`; tree-sitter-bash does not.
        retry = code.text.replace("$((", "$( (")
        root = parse(retry).root_node
        if root.has_error:
            return f"the code {code.what} runs cannot be read as shell"
        code.text, code.retried = retry, True
    first: list[LaunchPlan] = []
    launch: list[LaunchPlan] = []

    def on_command(rep: Report) -> None:
        try:
            plan = plan_one(rep)
        except CommandError:
            return
        first.append(plan)
        if plan.launcher != OTHER:
            launch.append(plan)
            raise Stop

    walker = Walker(on_command)
    with contextlib.suppress(Stop, TooDeep, RecursionError):
        walker.run([Segment(code.text, 0)], _state(code, state, env), {0: root})
    chosen = launch[0] if launch else first[0] if len(first) == 1 else None
    if chosen is None or not chosen.argv:
        return None
    return Inlined(
        argv=[code.restore(w) for w in chosen.argv],
        inline_env={k: code.restore(w) for k, w in chosen.env.items()},
        exported={k: code.restore(w) for k, w in chosen.script_env.items()
                  if not k.startswith(_HOLDER)},
        cwd=chosen.cwd,
        what=code.what,
    )


def inliner(state: State, plan_one: PlanOne) -> Inliner:
    """What ``Context.inline`` calls: the command of the code at ``argv[at]``, if any, in
    the environment ``env``."""

    def inline(argv: Sequence[Word], at: int, env: Mapping[str, Word]) -> Inlined | str | None:
        code = code_at(argv, at)
        return read_code(code, state, env, plan_one) if code is not None else None

    return inline
