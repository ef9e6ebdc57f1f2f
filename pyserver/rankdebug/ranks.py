"""Which ranks: the rank-spec grammar (``all``, ``N``, ``A-B``, ``localN``, ``nodeN``,
comma-joined), selectors by parallel coordinates (``tp=0``, ``pp=1 tp=0-3``, ``dp=0 and
tp=0``, ``pp=last``, ``tp=0,2``) and the quick-pick's choice (a spec and/or the word ``arm``).

A text with ``=`` is a selector, resolved to rank numbers against a coordinate table
(:func:`select_coords`, or :func:`resolve` for any RANKS argument) before anything else
reads it; rank numbers are written ``rank=1`` inside one (``rank=1 or tp=0``), so ``1,tp=0``
is refused with that hint.

``nodeN`` (also typed ``node N``) is every rank of node N; it needs the job's ranks known and
is resolved to rank numbers before any rank sees the spec.

Every layer reads a spec through here; the rank's bootstrap keeps a stdlib copy of
:func:`chosen` (``runtime.bootstrap.rank_chosen``), tested against the same cases.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from rankdebug.errors import BadInput
from rankdebug.runtime import rank_grammar

DEFAULT = "0"
_ITEM = rank_grammar.ITEM
MAX_RANK = rank_grammar.MAX_RANK
MAX_DIGITS = rank_grammar.MAX_DIGITS
MAX_SPEC = rank_grammar.MAX_SPEC
_NODE_WORD = re.compile(r"\bnode\s+(?=\d)", re.IGNORECASE)
_ARM = re.compile(r"^(?:--)?arm(?:ed)?$", re.IGNORECASE)
EXAMPLES = "0, 1,3, 0-3, all, local0 or node1"


class RanksError(BadInput):
    """A rank spec that is malformed or names ranks the job does not have."""


class RankLike(Protocol):
    @property
    def rank(self) -> int: ...

    @property
    def local_rank(self) -> int | None: ...


@dataclass(frozen=True)
class Selection:
    """The chosen ranks: ``spec`` for the bootstrap, ``ranks`` when the job's size is known
    (None when only each rank can tell, e.g. ``local0`` with unknown local ranks)."""

    spec: str
    ranks: list[int] | None

    def __str__(self) -> str:
        return ",".join(map(str, self.ranks)) if self.ranks is not None else self.spec


@dataclass(frozen=True)
class Choice:
    """What the quick-pick answers: ranks debugged from the start ('' for none) and whether
    every rank is armed."""

    spec: str
    arm: bool


def _short(item: str) -> str:
    return repr(item if len(item) <= 40 else item[:37] + "...")


def items(spec: str) -> list[str]:
    """The spec's items, lower-cased; raises RanksError (with the 1-based column of the item
    at fault) when one is malformed or names a rank past ``MAX_RANK``."""
    fault = rank_grammar.problem(spec)
    if fault is not None:
        kind, text, at = fault
        if kind == "long":
            raise RanksError(f"--ranks: the spec is {len(spec):,} characters long (at most "
                             f"{MAX_SPEC:,}); use ranges such as 0-1023", 1, at)
        if kind == "item":
            if is_selector(spec):
                raise RanksError(f"--ranks: {_short(spec.strip())} selects by parallel "
                                 f"coordinates, which are not known here; {NO_COORDS}", 1, 1)
            raise RanksError(f"--ranks: cannot read {_short(text)} (use N, A-B, all, localN "
                             "or nodeN)", 1, at)
        if kind == "past":
            item = spec[at - 1:].split(",", 1)[0].strip().lower()
            raise RanksError(f"--ranks: {_short(text)} in {_short(item)} is past the "
                             f"largest rank there can be ({MAX_RANK:,})", 1, at)
        if kind == "range":
            raise RanksError(f"--ranks: empty range {text!r}", 1, at)
        raise RanksError(f"--ranks is empty; give e.g. {EXAMPLES}")
    return [i for i in (raw.strip().lower() for raw in spec.split(",")) if i]


def normalise(raw: object, default: str = DEFAULT) -> str:
    """A spec from what a client sent: a string, a rank number or a list of numbers."""
    if raw is None:
        return default
    if isinstance(raw, bool):
        raise RanksError("ranks must be a string like '1,3' or a list of numbers")
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    if isinstance(raw, list) and raw and all(
        isinstance(r, int) and not isinstance(r, bool) and 0 <= r <= MAX_RANK for r in raw
    ):
        return compact(raw)
    if isinstance(raw, list) and any(isinstance(r, int) and r > MAX_RANK for r in raw):
        raise RanksError(f"ranks: a rank past the largest there can be ({MAX_RANK:,})")
    raise RanksError("ranks must be a string like '1,3' or a list of numbers")


def parse_choice(text: str, *, allow_arm: bool = True) -> Choice:
    """A typed or remembered choice: a spec, ``arm``, or both (``1,3 arm``, ``1,3+arm``).
    A selector (``tp=0 arm``) is kept as typed, less the word ``arm``, and checked for its
    syntax only: the job's coordinates resolve it."""
    if is_selector(text):
        words = text.split()
        arm = any(_ARM.match(w) for w in words)
        if arm and not allow_arm:
            raise RanksError(f"give ranks like {EXAMPLES} or {SELECTOR_EXAMPLES}")
        spec = " ".join(w for w in words if not _ARM.match(w)) if arm else text.strip()
        parse_selector(spec)
        return Choice(spec, arm)
    arm = False
    rest: list[str] = []
    for word in re.split(r"[\s+]+", _NODE_WORD.sub("node", text.strip())):
        if _ARM.match(word):
            arm = True
        elif word:
            rest.append(word)
    if arm and not allow_arm:
        raise RanksError(f"give ranks like {EXAMPLES}")
    spec = re.sub(r"\s*([,-])\s*", r"\1", " ".join(rest)).rstrip(",")
    if not spec:
        if arm:
            return Choice("", True)
        raise RanksError(f"give ranks like {EXAMPLES}")
    return Choice(",".join(items(spec)), arm)


def _spans(parts: Sequence[str]) -> list[tuple[int, int]]:
    """The numbered items of a checked spec as merged inclusive ranges, so that a spec
    costs what it says, not what it names."""
    spans: list[tuple[int, int]] = []
    for item in parts:
        if item == "all" or item.startswith(("local", "node")):
            continue
        first, _, last = item.partition("-")
        spans.append((int(first), int(last or first)))
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _explicit(parts: Sequence[str]) -> list[int]:
    """The ranks named by number, each once, in order (at most ``MAX_RANK + 1``)."""
    return [r for lo, hi in _spans(parts) for r in range(lo, hi + 1)]


def _largest(parts: Sequence[str]) -> int | None:
    spans = _spans(parts)
    return spans[-1][1] if spans else None


def numbers(item: str) -> list[int]:
    """The ranks an item of a well-formed spec names by number (none for ``all``, ``localN``
    and ``nodeN``)."""
    return _explicit([item])


def compact(ranks: Sequence[int]) -> str:
    """Rank numbers as a short spec: ``[0, 1, 2, 4]`` → ``0-2,4``; two in a row stay two
    (``0,1``). The extension's ``formatSpec`` writes the same (tested against cases made
    here: scripts/gen_wire.py)."""
    known = sorted(set(ranks))
    parts = []
    i = 0
    while i < len(known):
        j = i
        while j + 1 < len(known) and known[j + 1] == known[j] + 1:
            j += 1
        if i == j:
            parts.append(str(known[i]))
        elif j == i + 1:
            parts += [str(known[i]), str(known[j])]
        else:
            parts.append(f"{known[i]}-{known[j]}")
        i = j + 1
    return ",".join(parts)


def label(ranks: Sequence[int]) -> str:
    """``rank 3`` / ``ranks 0-2,4``."""
    return ("ranks " if len(set(ranks)) > 1 else "rank ") + compact(ranks)


# --- Selectors by parallel coordinates -------------------------------------------------------
#
#   selector := conj ("or" conj)*          union
#   conj     := term (["and"] term)*       a space or "and" is "and"
#   term     := DIM "=" value ("," value)*
#   value    := N | A-B | first | last | all | *
#
# DIM is a name the job's coordinates use (dp, tp, pp, cp, ep, dp_shard, ...; any case) or
# ``rank``. Values are checked against the dimension's size before anything is resolved.

Spans = list[tuple[int, int]]
"""Inclusive rank ranges, sorted and merged: what a spec or selector resolves to."""

Coords = Mapping[int, Mapping[str, int]]
"""rank → {dimension: index}: a job's (or a command's) parallel coordinates."""

RANK_DIM = "rank"
SELECTOR_EXAMPLES = "tp=0, pp=1 tp=0-3, dp=0 and tp=0, pp=last or tp=0,2"
NO_COORDS = ("parallel coordinates come from the command (Megatron/MindSpeed parallel sizes, "
             "torchtitan's [parallelism], DeepSpeed or verl tensor-parallel sizes) or from a "
             "running job's device mesh; give rank numbers instead (e.g. 0-3)")
_TOKEN = re.compile(r"(?P<space>\s+)|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<num>\d+)|"
                    r"(?P<op>[=,*-])", re.ASCII)


@dataclass(frozen=True)
class Value:
    """One value of a term: ``lo``-``hi`` (inclusive), or a word: first, last, all."""

    lo: int | str
    hi: int | str
    column: int


@dataclass(frozen=True)
class Term:
    """``dim=values``: ``dim`` lower-cased, ``column`` 1-based where it was written."""

    dim: str
    values: tuple[Value, ...]
    column: int


Selector = tuple[tuple[Term, ...], ...]
"""A parsed selector: a union of conjunctions of terms."""


def is_selector(text: str) -> bool:
    """Whether ``text`` selects by coordinates (it has an ``=``) rather than by number."""
    return "=" in text


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, 1-based column) of each token but spaces; raises at the first character
    that no token starts with."""
    out: list[tuple[str, str, int]] = []
    at = 0
    while at < len(text):
        m = _TOKEN.match(text, at)
        if m is None:
            bad = text[at]
            why = (" (a range is A-B, both ends included)" if bad == ":" else
                   " (digits and names are ASCII)" if not bad.isascii() else "")
            raise RanksError(f"--ranks: cannot read {bad!r} in a selector{why}; give e.g. "
                             f"{SELECTOR_EXAMPLES}", 1, at + 1)
        kind = m.lastgroup or "space"
        if kind != "space":
            out.append((kind, m.group(), at + 1))
        at = m.end()
    return out


def _number(text: str, column: int) -> int:
    if len(text.lstrip("0")) > MAX_DIGITS or int(text) > MAX_RANK:
        raise RanksError(f"--ranks: {_short(text)} is past any index there can be "
                         f"({MAX_RANK:,})", 1, column)
    return int(text)


class _Parser:
    """Recursive descent over :func:`_tokens`; every error names its column."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str, int] | None:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def end_column(self) -> int:
        return len(self.text.rstrip()) + 1

    def fail(self, message: str, column: int) -> RanksError:
        return RanksError(f"--ranks: {message}", 1, column)

    def selector(self) -> Selector:
        conjs = [self.conj()]
        while (tok := self.peek()) is not None:
            if tok[0] == "word" and tok[1].lower() == "or":
                self.i += 1
                conjs.append(self.conj(after="or"))
            elif tok[1] in "=-":
                raise self.fail(f"cannot read {tok[1]!r} here: a term is one dimension, '=' "
                                "and its values (e.g. tp=0-3)", tok[2])
            else:
                self.term()  # says what is wrong with it (a rank number, a lone ',')
        return tuple(conjs)

    def conj(self, after: str | None = None) -> tuple[Term, ...]:
        terms = [self.term(after)]
        while (tok := self.peek()) is not None and tok[0] == "word":
            word = tok[1].lower()
            if word == "or":
                break
            if word == "and":
                self.i += 1
                terms.append(self.term("and"))
            else:
                terms.append(self.term())
        return tuple(terms)

    def term(self, after: str | None = None) -> Term:
        tok = self.peek()
        if tok is None:
            what = f"{after!r} needs a term after it" if after else "a term is missing"
            raise self.fail(f"{what} (e.g. tp=0)", self.end_column())
        kind, text, column = tok
        if kind == "num" or (kind == "op" and text in "-*"):
            raise self.fail(f"rank numbers and coordinates cannot be mixed in one spec: write "
                            f"rank={text} inside a selector (e.g. rank={text} or tp=0), or "
                            "give only rank numbers", column)
        if kind != "word":
            raise self.fail(f"{text!r} needs a dimension before it (e.g. tp=0)", column)
        if text.lower() in ("and", "or"):
            raise self.fail(f"{text!r} joins two terms and needs one before it (e.g. dp=0 "
                            f"{text.lower()} tp=0)", column)
        nxt = self.peek(1)
        if nxt is None or nxt[1] != "=":
            raise self.fail(f"{_short(text)} needs '=' and a value (e.g. {text.lower()}=0)",
                            nxt[2] if nxt else column + len(text))
        self.i += 2
        values = [self.value(text, nxt[2] + 1)]
        while (tok := self.peek()) is not None and tok[1] == ",":
            self.i += 1
            following = self.peek(1)
            if following is not None and following[1] == "=":
                raise self.fail("',' joins values of one dimension (tp=0,2); join dimensions "
                                "with a space or 'and' (pp=1 tp=0)", tok[2])
            values.append(self.value(text, tok[2] + 1))
        return Term(text.lower(), tuple(values), column)

    def value(self, dim: str, column: int) -> Value:
        tok = self.peek()
        if tok is None or (tok[0] not in ("num", "word") and tok[1] != "*"):
            raise self.fail(f"{dim}= needs a value (e.g. {dim}=0, {dim}=0-3, {dim}=last)",
                            tok[2] if tok else column)
        self.i += 1
        kind, text, at = tok
        if kind == "word":
            word = text.lower()
            if word not in ("first", "last", "all"):
                raise self.fail(f"{_short(text)} is not a value of {dim} (give N, A-B, first, "
                                "last or all)", at)
            return Value(word, word, at)
        if text == "*":
            return Value("all", "all", at)
        lo = _number(text, at)
        hi = lo
        nxt = self.peek()
        if nxt is not None and nxt[1] == "-":
            self.i += 1
            end = self.peek()
            if end is None or end[0] != "num":
                raise self.fail(f"the range {text}- needs an end (e.g. {text}-{lo + 1})",
                                end[2] if end else self.end_column())
            self.i += 1
            hi = _number(end[1], end[2])
            if hi < lo:
                raise self.fail(f"empty range {lo}-{hi}", at)
        return Value(lo, hi, at)


def parse_selector(text: str) -> Selector:
    """The selector ``text`` parsed (not yet checked against any job); raises RanksError
    with the column of the first fault."""
    if len(text) > MAX_SPEC:
        raise RanksError(f"--ranks: the selector is {len(text):,} characters long (at most "
                         f"{MAX_SPEC:,})", 1, MAX_SPEC + 1)
    if not text.strip():
        raise RanksError(f"--ranks is empty; give e.g. {EXAMPLES}, or a selector such as tp=0")
    return _Parser(text).selector()


def sizes_of(coords: Coords) -> dict[str, int]:
    """Each dimension's size as the table shows it (its largest index + 1), in the order the
    dimensions first appear."""
    sizes: dict[str, int] = {}
    for where in coords.values():
        for dim, index in where.items():
            sizes[dim] = max(sizes.get(dim, 0), index + 1)
    return sizes


def _bounds(term: Term, size: int) -> list[tuple[int, int]]:
    """The term's values as inclusive index ranges, each checked against ``size``."""
    out = []
    for v in term.values:
        if v.lo == "all":
            out.append((0, size - 1))
        elif v.lo == "first":
            out.append((0, 0))
        elif v.lo == "last":
            out.append((size - 1, size - 1))
        else:
            assert isinstance(v.lo, int) and isinstance(v.hi, int)
            if v.hi >= size:
                bad = v.hi if v.lo == v.hi else f"{v.lo}-{v.hi}"
                raise RanksError(f"--ranks: {term.dim}={bad} is past the job's {term.dim} "
                                 f"(size {size}: {term.dim}=0-{size - 1})", 1, v.column)
            out.append((v.lo, v.hi))
    return out


def _describe(dims: Iterable[str]) -> str:
    names = list(dims)
    return ", ".join(names) if names else "no dimensions"


def select_coords(text: str, world: int | None, coords: Coords | None,
                  sizes: Mapping[str, int] | None = None, *, hint: str = NO_COORDS) -> Spans:
    """The ranks the selector ``text`` picks, as merged spans.

    ``coords`` maps rank → {dimension: index} (a plain dict, or a lazy mapping such as
    ``coords.Layout.table()``); ``sizes`` gives each dimension's size (default: from the
    table); ``world`` bounds ``rank=`` and the ranks considered (default: the table's).
    ``hint`` says where coordinates come from when ``coords`` is empty. Raises RanksError,
    one line with a column: syntax, an unknown dimension, a value past a size, no match.
    """
    parsed = parse_selector(text)
    if not coords:
        raise RanksError(f"--ranks: {_short(text.strip())} selects by parallel coordinates, and "
                         f"this job's are not known; {hint}", 1,
                         parsed[0][0].column)
    table_sizes = dict(sizes) if sizes is not None else sizes_of(coords)
    by_name = {d.lower(): d for d in table_sizes}
    top = world if world is not None else max(coords) + 1
    checked: list[list[tuple[str, list[tuple[int, int]]]]] = []
    for conj in parsed:
        terms = []
        for term in conj:
            if term.dim == RANK_DIM and RANK_DIM not in by_name:
                terms.append((RANK_DIM, _bounds(term, top)))
                continue
            dim = by_name.get(term.dim)
            if dim is None:
                raise RanksError(f"--ranks: unknown dimension {_short(term.dim)}: this job has "
                                 f"{_describe(table_sizes)}", 1, term.column)
            terms.append((dim, _bounds(term, table_sizes[dim])))
        checked.append(terms)

    def picks(rank: int) -> bool:
        where = coords.get(rank)
        if where is None:
            return False
        for terms in checked:
            for dim, ranges in terms:
                index = rank if dim == RANK_DIM and RANK_DIM not in by_name else where.get(dim)
                if index is None or not any(lo <= index <= hi for lo, hi in ranges):
                    break
            else:
                return True
        return False

    spans: Spans = []
    for rank in sorted(r for r in coords if 0 <= r < top):
        if picks(rank):
            if spans and spans[-1][1] == rank - 1:
                spans[-1] = (spans[-1][0], rank)
            else:
                spans.append((rank, rank))
    if not spans:
        raise RanksError(f"--ranks: no rank of this job has {_short(' '.join(text.split()))}", 1,
                         parsed[0][0].column)
    return spans


def spans_spec(spans: Spans) -> str:
    """Spans as a plain spec: ``[(0, 2), (4, 4)]`` → ``0-2,4``."""
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in spans)


def resolve(text: str, world: int | None, coords: Coords | None,
            sizes: Mapping[str, int] | None = None, *, hint: str = NO_COORDS) -> str:
    """Any RANKS argument as a plain spec: a selector resolved to rank numbers (see
    :func:`select_coords`), a plain spec checked and returned as written. The one call a verb
    needs before its existing plain-spec handling."""
    if is_selector(text):
        return spans_spec(select_coords(text, world, coords, sizes, hint=hint))
    return ",".join(items(text))


def _numbers_only(parts: Sequence[str]) -> bool:
    return all(i != "all" and not i.startswith(("local", "node")) for i in parts)


def _select_unknown(parts: list[str], world: int | None) -> Selection:
    """``parts`` against a job whose rank list is unknown (its size may be known)."""
    canonical = ",".join(parts)
    node = next((p for p in parts if p.startswith("node")), None)
    if node is not None:
        raise RanksError(f"--ranks: {node} needs the job's nodes, which are not known here; "
                         "give rank numbers")
    if world is not None:
        top = _largest(parts)
        if top is not None and top >= world:
            raise RanksError(f"--ranks: rank {top} is outside the job (world size {world})")
        if "all" in parts:
            return Selection(canonical, list(range(world)))
    if _numbers_only(parts):
        return Selection(canonical, sorted(set(_explicit(parts))))
    return Selection(canonical, None)


def select(spec: str, ranks: Sequence[RankLike], world_size: int | None = None,
           coords: Coords | None = None, *, hint: str = NO_COORDS) -> Selection:
    """Check ``spec`` against the job's ranks and resolve it to a list when they are known.

    ``ranks`` is the launch plan's rank list (empty when unknown); ``world_size`` bounds
    explicit numbers when the list is empty but the size is known. A selector is resolved
    through ``coords`` (see :func:`select_coords`) to rank numbers.
    """
    if is_selector(spec):
        world = len(ranks) if ranks else world_size
        spans = select_coords(spec, world, coords, hint=hint)
        return Selection(spans_spec(spans), [r for lo, hi in spans for r in range(lo, hi + 1)])
    parts = items(spec)
    if not ranks:
        return _select_unknown(parts, world_size)
    if any(p.startswith("local") for p in parts) and any(r.local_rank is None for r in ranks):
        return Selection(",".join(parts), None)  # each rank decides from LOCAL_RANK
    top = _largest(parts)
    if top is not None and top >= len(ranks):
        raise RanksError(f"--ranks: rank {top} is outside the job (world size {len(ranks)})")
    picked: set[int] = set()
    for item in parts:
        if item.startswith("node"):
            node = int(item[4:])
            if any(getattr(r, "node_rank", None) is None for r in ranks):
                raise RanksError(f"--ranks: {item} needs the job's nodes, which are not known "
                                 "here; give rank numbers")
            on_node = [r.rank for r in ranks if getattr(r, "node_rank", None) == node]
            if not on_node:
                raise RanksError(f"--ranks: the job has no node {node}")
            picked.update(on_node)
            continue
        if item.startswith("local"):
            want = int(item[5:])
            hits = [r.rank for r in ranks if r.local_rank == want]
            if not hits:
                raise RanksError(f"--ranks: no rank has local rank {want}")
            picked.update(hits)
            continue
        for r in range(len(ranks)) if item == "all" else _explicit([item]):
            if r >= len(ranks):
                raise RanksError(f"--ranks: rank {r} is outside the job (world size {len(ranks)})")
            picked.add(ranks[r].rank if item == "all" else r)
    ordered = sorted(picked)
    return Selection(",".join(map(str, ordered)), ordered)


def chosen(spec: str, rank: int, local_rank: int | None) -> bool:
    """Whether ``rank`` (with ``local_rank``) is picked by a well-formed ``spec``."""
    items(spec)  # raises for a malformed one
    return rank_grammar.chosen(spec, rank, local_rank)

