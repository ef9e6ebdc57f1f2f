"""A tolerant option parser shared by the launcher modules.

Each launcher describes its options once, as a :class:`Spec` built from :class:`Opt`
entries copied from the real tool's source (argparse, click, getopt tables). The
parser then reads an evaluated argv the way that tool would, as far as it matters
for a launch plan:

* ``--opt value`` and ``--opt=value``; short ``-n 4``, ``-n4``, ``-n=4`` and flag
  clusters (``-uq``);
* every spelling the tool accepts (``--nproc-per-node`` and ``--nproc_per_node``),
  and, for tools that treat ``-`` and ``_`` alike (accelerate), any mix of them;
* unambiguous prefix abbreviations where the tool allows them (argparse's
  ``allow_abbrev``, getopt_long);
* single-dash long options where the tool has them (Open MPI's ``-np``);
* options taking two values (``--mca KEY VALUE``) and optional values that only
  attach with ``=`` (getopt's ``optional_argument``);
* the first positional word ends the launcher's options (argparse REMAINDER), as
  does ``--``.

Every option read is recorded as an :class:`OptionUse` in ``plan.options`` with its
span, so the language server can hover it. An option the tool does not know gets an
``unknown-flag`` diagnostic naming the closest valid spelling (difflib), which is
also offered as the diagnostic's ``fix``; that happens only for tools whose full
option list is in the spec (``Spec.complete``).

Words the shell could not evaluate at all (``$DIST_ARGS`` with DIST_ARGS unset) may
hold any number of options or be the program itself; see :func:`parse_options`.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, InitVar, dataclass, field

from rankdebug.command.plan import LaunchPlan, OptionUse, Severity
from rankdebug.command.words import Span, Word


@dataclass(frozen=True, slots=True)
class Opt:
    """One option of a tool: its canonical name and every spelling the tool accepts."""

    name: str
    flags: tuple[str, ...]
    # How many following words it takes: 0 for a flag, 2 for ``--mca KEY VALUE``.
    nargs: int = 1
    # getopt's optional_argument: a value only when attached (``--exclusive=user``).
    optional: bool = False
    help: str = ""
    # Ends the options, like python's -m: what follows is the program's.
    ends: bool = False

    @property
    def takes_value(self) -> bool:
        return self.nargs > 0 and not self.optional


def value(name: str, *flags: str, help: str = "", nargs: int = 1) -> Opt:
    """An option that takes a value (``--nnodes 2``)."""
    return Opt(name, flags or (f"--{name}",), nargs, False, help)


def flag(name: str, *flags: str, help: str = "") -> Opt:
    """An option that takes no value (``--standalone``)."""
    return Opt(name, flags or (f"--{name}",), 0, False, help)


def optional(name: str, *flags: str, help: str = "") -> Opt:
    """An option whose value, if any, is attached (``--exclusive`` or ``--exclusive=user``)."""
    return Opt(name, flags or (f"--{name}",), 1, True, help)


def both(name: str, help: str = "", *, nargs: int = 1) -> Opt:
    """An option spelled both ``--a-b`` and ``--a_b`` (torchrun's style)."""
    dashed = "--" + name.replace("_", "-")
    under = "--" + name
    flags = (dashed, under) if dashed != under else (under,)
    return Opt(name, flags, nargs, False, help)


def both_flag(name: str, help: str = "") -> Opt:
    dashed = "--" + name.replace("_", "-")
    under = "--" + name
    flags = (dashed, under) if dashed != under else (under,)
    return Opt(name, flags, 0, False, help)


def _split_dashes(text: str) -> tuple[str, str]:
    body = text.lstrip("-")
    return text[: len(text) - len(body)], body


@dataclass(eq=False)
class Spec:
    """The options of one tool, and how that tool reads them."""

    tool: str
    options: InitVar[Iterable[Opt]]
    _: KW_ONLY
    # argparse's allow_abbrev / getopt_long: unambiguous prefixes of long options.
    abbrev: bool = False
    # '-' and '_' are the same after the leading dashes (accelerate).
    dash_underscore: bool = False
    # Multi-letter options with one dash (Open MPI's -np, -hostfile).
    single_dash_long: bool = False
    # The full option list is known: unknown flags are reported.
    complete: bool = True
    unknown_severity: Severity = "error"
    # A lone "--" ends the options.
    double_dash: bool = True
    # argparse's reading: a word that starts with "-" (not a negative number) is never an
    # option's value, it is the next option ("expected one argument").
    argparse: bool = False
    opts: tuple[Opt, ...] = field(init=False)
    by_name: dict[str, Opt] = field(init=False)
    # Every spelling a user may write, for suggestions and completion.
    spellings: list[str] = field(init=False)

    def __post_init__(self, options: Iterable[Opt]) -> None:
        self.opts = tuple(options)
        self._long: dict[str, Opt] = {}
        self._short: dict[str, Opt] = {}
        for o in self.opts:
            for f in o.flags:
                dashes, body = _split_dashes(f)
                if dashes == "-" and len(body) == 1:
                    self._short[body] = o
                else:
                    self._long[self._norm(f)] = o
        self.by_name = {o.name: o for o in self.opts}
        self._sorted = sorted(self._long)
        self.spellings = []
        for o in self.opts:
            for f in o.flags:
                self.spellings.append(f)
                dashes, body = _split_dashes(f)
                if self.dash_underscore and "_" in body:
                    self.spellings.append(dashes + body.replace("_", "-"))

    def _norm(self, text: str) -> str:
        if not self.dash_underscore:
            return text
        dashes, body = _split_dashes(text)
        return dashes + body.replace("-", "_")

    def lookup(self, text: str) -> tuple[Opt | None, list[Opt]]:
        """The option a long flag (no ``=value``) names, else (None, ambiguous candidates)."""
        key = self._norm(text)
        exact = self._long.get(key)
        if exact is not None:
            return exact, []
        if not self.abbrev or not text.startswith("--") or len(text) < 3:
            return None, []
        cands: list[Opt] = []
        at = bisect.bisect_left(self._sorted, key)
        while at < len(self._sorted) and self._sorted[at].startswith(key):
            o = self._long[self._sorted[at]]
            if o not in cands:
                cands.append(o)
            at += 1
        if len(cands) == 1:
            return cands[0], []
        return None, cands

    def exact(self, text: str) -> Opt | None:
        """The option spelled exactly ``text`` (a long or single-dash long spelling)."""
        return self._long.get(self._norm(text))

    def short(self, char: str) -> Opt | None:
        return self._short.get(char)

    def is_option_word(self, word: Word) -> bool:
        """Whether a fully known word is one of this tool's options (for look-ahead)."""
        text = word.value
        if text is None or not text.startswith("-") or text in ("-", "--"):
            return False
        name = text.split("=", 1)[0]
        if text.startswith("--") or self.single_dash_long:
            found, _ = self.lookup(name)
            if found is not None:
                return True
        if self.exact(name) is not None:
            return True
        return not text.startswith("--") and len(text) >= 2 and self.short(text[1]) is not None

    def suggest(self, text: str) -> str | None:
        """The closest valid spelling of a misspelt flag."""
        pool = self.spellings
        best = difflib.get_close_matches(text, pool, n=1, cutoff=0.6)
        if not best and not text.startswith("--") and text.startswith("-") and len(text) > 2:
            # '-nproc_per_node': compare as if it had two dashes.
            best = difflib.get_close_matches("-" + text, pool, n=1, cutoff=0.6)
        return best[0] if best else None


@dataclass(slots=True)
class Use:
    """One option as read: the spec entry, the words holding its value(s), the record."""

    opt: Opt
    flag: str
    values: list[Word]
    record: OptionUse
    # argv index of the flag's word, and of the word holding the (first) value.
    index: int = -1
    value_index: int | None = None

    @property
    def value(self) -> Word | None:
        return self.values[0] if self.values else None


@dataclass(slots=True)
class Parsed:
    """What :func:`parse_options` read."""

    start: int
    # Index of the first word after the options: the program (entry), or len(argv).
    end: int
    uses: list[Use] = field(default_factory=list)
    # Unknown words read as (possibly several) options: they may set anything.
    opaque: list[Word] = field(default_factory=list)
    # The options ended at a "--".
    double_dash: bool = False
    # An option that ends the options (Opt.ends) was read.
    ended: bool = False
    # Diagnostics given for unknown flags (capped at MAX_REPORTS).
    reported: int = 0

    def get(self, name: str) -> Use | None:
        """The last use of an option (the one the tool keeps)."""
        for use in reversed(self.uses):
            if use.opt.name == name:
                return use
        return None

    def all(self, name: str) -> list[Use]:
        return [u for u in self.uses if u.opt.name == name]

    def has(self, name: str) -> bool:
        return self.get(name) is not None

    def word(self, name: str) -> Word | None:
        use = self.get(name)
        return use.value if use else None


# At most this many diagnostics about unknown words or flags per command.
MAX_REPORTS = 20


def join_spans(first: Span, last: Span) -> Span:
    return Span(first.start_line, first.start_col, last.end_line, last.end_col)


def sub_span(word: Word, start: int, length: int) -> Span | None:
    """The span of ``length`` characters from ``start`` in a word written unquoted on one line."""
    span = word.span
    text = word.value if word.value is not None else word.known_prefix
    if span.start_line != span.end_line or not word.source.startswith(text[: start + length]):
        return None
    if span.end_col - span.start_col < start + length:
        return None
    col = span.start_col + start
    return Span(span.start_line, col, span.start_line, col + length)


def _why(word: Word) -> str:
    return f" ({word.reason})" if word.reason else ""


def _opaque_is_options(argv: Sequence[Word], i: int, spec: Spec) -> int | None:
    """Decide whether an unknown word at option position holds options or is the program.

    Looks ahead past further unknown words and this tool's own options: a known,
    non-option word there is the program, so the unknown word(s) before it are
    options (``torchrun $DIST_ARGS pretrain.py``). Otherwise the first unknown word
    is the program (``torchrun --nproc_per_node 8 $SCRIPT --lr 1``).

    Returns the index of the program found ahead, or None when the word is the program.
    """
    j = i + 1
    while j < len(argv):
        w = argv[j]
        if fully_unknown(w):
            j += 1
            continue
        if not w.known_prefix.startswith("-"):
            return j
        after = _skip_known_option(argv, j, spec)
        if after is None:
            return None
        j = after
    return None


def _skip_known_option(argv: Sequence[Word], j: int, spec: Spec) -> int | None:
    """If ``argv[j]`` is one of the tool's options, the index after it and its values."""
    w = argv[j]
    text = w.value
    if text is None or not spec.is_option_word(w):
        return None
    name, eq, _ = text.partition("=")
    opt: Opt | None = None
    attached = bool(eq)
    if name.startswith("--") or (spec.single_dash_long and len(name) > 2):
        opt, _ = spec.lookup(name)
    if opt is None:
        opt = spec.exact(name)
    if opt is None and not name.startswith("--"):
        opt = spec.short(name[1])
        attached = len(text) > 2
    if opt is None:
        return j + 1
    return j + 1 + (opt.nargs if opt.takes_value and not attached else 0)


def _is_flag_word(word: Word) -> bool:
    """A word argparse reads as an option string, never as a value."""
    text = word.value
    if text is None or len(text) < 2 or not text.startswith("-") or " " in text:
        return False
    return not re.fullmatch(r"-\d+(\.\d*)?|-\.\d+", text)


_PROGRAM = re.compile(r"[^\s=]+\.(?:py|sh|bash|pyz)")


def _looks_like_program(word: Word) -> bool:
    return word.value is not None and bool(_PROGRAM.fullmatch(word.value))


def fully_unknown(word: Word) -> bool:
    """Whether nothing of the word is known (``$X``, not ``--opt=$X``)."""
    return not word.known and not any(p.known and p.text for p in word.parts)


def parse_options(
    plan: LaunchPlan,
    argv: Sequence[Word],
    start: int,
    spec: Spec,
    *,
    quiet: bool = False,
) -> Parsed:
    """Read the options of ``spec.tool`` from ``argv[start:]``.

    Stops at the first positional word (the program), which is ``Parsed.end``. Each option
    is appended to ``plan.options`` and unknown flags get diagnostics, unless ``quiet``.
    Unknown words that look like options (see :func:`_opaque_is_options`) go to
    ``Parsed.opaque`` with a warning.
    """
    reader = _Reader(plan, argv, spec, Parsed(start=start, end=len(argv)), not quiet, not quiet)
    return reader.read(start)


@dataclass
class _Reader:
    """One reading of a tool's options from an argv (see :func:`parse_options`)."""

    plan: LaunchPlan
    argv: Sequence[Word]
    spec: Spec
    parsed: Parsed
    record: bool  # append each option to plan.options
    report: bool  # diagnostics for unknown flags and missing values

    def read(self, start: int) -> Parsed:
        argv, parsed = self.argv, self.parsed
        program_at = -1  # where a look-ahead found the program: unknown words before are options
        i = start
        while i < len(argv):
            w = argv[i]
            if fully_unknown(w):
                if i > program_at:
                    program_at = _opaque_is_options(argv, i, self.spec) or -1
                if i >= program_at:
                    parsed.end = i
                    return parsed
                self._opaque(w, f"it may hold {self.spec.tool} options")
                i += 1
                continue
            end = self._end_of_options(i)
            if end is not None:
                parsed.end = end
                return parsed
            i = self._option(i)
            if parsed.ended:
                parsed.end = min(i, len(argv))
                return parsed
        parsed.end = len(argv)
        self._program_taken()
        return parsed

    def _program_taken(self) -> None:
        """``torchrun --nproc_per_node train.py``: the count was left out, the script read
        as the last option's value, and the tool is left no program. Said once, at the
        option; the value is dropped so nothing else reads the script as a count."""
        uses = self.parsed.uses
        last = uses[-1] if uses else None
        if (not self.report or last is None or last.value_index != len(self.argv) - 1
                or len(last.values) != 1 or not _looks_like_program(last.values[0])):
            return
        taken = last.values[0]
        self.plan.warn(f"{last.flag} is given no value: {taken.display} is read as its value, "
                       f"and {self.spec.tool} is left no program to run", last.record.span,
                       code="missing-value", severity="error")
        last.values = []
        bare = OptionUse(last.record.name, last.record.flag, None, self.argv[last.index].span)
        self.plan.options[:] = [bare if o is last.record else o for o in self.plan.options]
        last.record = bare

    def _end_of_options(self, i: int) -> int | None:
        """Where the program starts when ``argv[i]`` ends the options (a positional, ``--``)."""
        w = self.argv[i]
        prefix = w.known_prefix
        if not prefix.startswith("-") or (prefix == "-" and w.known):
            return i
        if w.value == "--" and self.spec.double_dash:
            self.parsed.double_dash = True
            return i + 1
        return None

    def _opaque(self, w: Word, may: str) -> None:
        """An unknown word read as (possibly several) options."""
        self.parsed.opaque.append(w)
        if self.report and len(self.parsed.opaque) <= MAX_REPORTS:
            self.plan.warn(f"{w.display} is not known{_why(w)}; {may}", w.span)

    def _use(self, opt: Opt, flag_text: str, index: int, values: list[Word], *,
             attached: bool = False) -> None:
        """Record the option at ``argv[index]`` and its values."""
        first = self.argv[index]
        span = join_spans(first.span, values[-1].span) if values else first.span
        use = OptionUse(opt.name, flag_text, values[0] if values else None, span)
        value_index = (index if attached else index + 1) if values else None
        self.parsed.uses.append(Use(opt, flag_text, values, use, index, value_index))
        if opt.ends:
            self.parsed.ended = True
        if self.record:
            self.plan.options.append(use)

    def _values(self, i: int, n: int) -> list[Word]:
        return list(self.argv[i + 1 : i + 1 + n])

    def _take(self, i: int, opt: Opt, flag_text: str) -> int:
        """The option at ``argv[i]`` with its value(s) in the next words."""
        values = self._values(i, opt.nargs)
        if self.spec.argparse and values and _is_flag_word(values[0]):
            if self.report:
                self.plan.warn(f"{flag_text} is given no value: the next word, "
                               f"{values[0].display}, is an option", self.argv[i].span,
                               code="missing-value", severity="error")
            self._use(opt, flag_text, i, [])
            return i + 1
        if len(values) < opt.nargs and self.report:
            self.plan.warn(f"{flag_text} needs a value", self.argv[i].span, code="missing-value",
                           severity=self.spec.unknown_severity)
        self._use(opt, flag_text, i, values)
        return i + 1 + len(values)

    def _option(self, i: int) -> int:
        """Read the option word ``argv[i]``; the index of the word after it and its values."""
        w = self.argv[i]
        spec = self.spec
        prefix = w.known_prefix
        name_part = prefix.split("=", 1)[0]
        is_long = prefix.startswith("--") or (
            len(name_part) > 2 and (spec.single_dash_long or spec.exact(name_part) is not None)
        )
        if not is_long:
            return self._short(i)
        attached: Word | None = None
        if "=" in prefix:
            attached = w.suffix_after(len(name_part) + 1)
        elif not w.known:
            # "--opt$X": the option's name itself is not known.
            self._opaque(w, f"it may be any {spec.tool} option")
            return i + 1
        opt, cands = spec.lookup(name_part)
        if opt is not None:
            return self._long(i, opt, name_part, attached)
        if prefix.startswith("--") or not spec.single_dash_long:
            return self._unknown_flag(i, name_part, attached is not None, cands)
        # A single-dash word that is no long option: read it as short option(s).
        return self._short(i)

    def _long(self, i: int, opt: Opt, flag_text: str, attached: Word | None) -> int:
        if attached is not None:
            values = [attached] if opt.nargs else []
            if opt.nargs == 0 and self.report:
                self.plan.warn(f"{flag_text} takes no value", self.argv[i].span,
                               code="bad-value", severity=self.spec.unknown_severity)
            if opt.nargs > 1:
                values += self._values(i, opt.nargs - 1)
            self._use(opt, flag_text, i, values, attached=True)
            return i + 1 + (opt.nargs - 1 if opt.nargs > 1 else 0)
        if not opt.takes_value:
            self._use(opt, flag_text, i, [])
            return i + 1
        return self._take(i, opt, flag_text)

    def _short(self, i: int) -> int:
        """Short options: clustered flags (``-uq``), a value attached or next (``-n4``)."""
        text = self.argv[i].known_prefix
        for j in range(1, len(text)):
            char = text[j]
            opt = self.spec.short(char)
            if opt is None:
                flag_text = text.split("=", 1)[0] if j == 1 else "-" + char
                return self._unknown_flag(i, flag_text, "=" in text, [], offset=j - 1)
            if opt.nargs == 0:
                self._use(opt, "-" + char, i, [])
                continue
            return self._short_value(i, j, opt)
        return i + 1

    def _short_value(self, i: int, j: int, opt: Opt) -> int:
        """``-n`` (the option at ``text[j]``) with its value attached or in the next word."""
        w = self.argv[i]
        text = w.known_prefix
        flag_text = "-" + text[j]
        rest_start = j + 1
        if rest_start < len(text) or not w.known:
            if text[rest_start : rest_start + 1] == "=":
                rest_start += 1
            self._use(opt, flag_text, i, [w.suffix_after(rest_start)], attached=True)
            return i + 1
        if opt.optional:
            self._use(opt, flag_text, i, [])
            return i + 1
        return self._take(i, opt, flag_text)

    def _unknown_flag(self, i: int, flag_text: str, attached: bool, ambiguous: list[Opt], *,
                      offset: int = 0) -> int:
        """Report an option the tool does not know; guess how many words it spans."""
        parsed = self.parsed
        parsed.reported += 1
        if parsed.reported > MAX_REPORTS:
            return i + 1  # a flood of unknown flags: no more suggestions or guesses
        best = self.spec.suggest(flag_text)
        if self.report and self.spec.complete:
            self._report_unknown(self.argv[i], flag_text, ambiguous, best, offset)
        if attached:
            return i + 1
        # A misspelt option that takes a value most likely has its value next.
        likely = self._likely(best, ambiguous)
        nxt = self.argv[i + 1] if i + 1 < len(self.argv) else None
        if likely is not None and likely.takes_value and nxt is not None and (
            not nxt.known_prefix.startswith("-")
        ):
            return i + 1 + likely.nargs
        return i + 1

    def _report_unknown(self, w: Word, flag_text: str, ambiguous: list[Opt], best: str | None,
                        offset: int) -> None:
        spec = self.spec
        span = sub_span(w, offset, len(flag_text)) if offset == 0 else None
        if ambiguous:
            names = ", ".join(o.flags[0] for o in ambiguous)
            self.plan.warn(
                f"{flag_text} is ambiguous for {spec.tool}: it could be {names}",
                span or w.span,
                code="ambiguous-flag",
                severity=spec.unknown_severity,
            )
            return
        message = f"{spec.tool} has no option {flag_text}"
        fix = None
        if best is not None:
            message += f"; did you mean {best}?"
            if span is not None or w.value == flag_text:
                fix = best
            elif w.value is not None:
                fix = best + w.value[len(flag_text) :]
        self.plan.warn(message, span or w.span, code="unknown-flag",
                       severity=spec.unknown_severity, fix=fix)

    def _likely(self, best: str | None, ambiguous: list[Opt]) -> Opt | None:
        """The option a misspelt flag most likely is."""
        spec = self.spec
        likely: Opt | None = None
        if best is not None:
            dashes, _ = _split_dashes(best)
            if dashes == "--" or spec.single_dash_long:
                likely, _ = spec.lookup(best)
            if likely is None and dashes == "-":
                likely = spec.short(best[1:2])
        if ambiguous and all(o.takes_value for o in ambiguous):
            likely = ambiguous[0]
        return likely
