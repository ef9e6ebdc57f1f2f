"""Shell variables as far as they are known, and how branches merge them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from rankdebug.command.words import Part

Scalar = tuple[Part, ...]
EMPTY: Scalar = ()


def unknown(source: str, reason: str) -> Scalar:
    return (Part(source, known=False, reason=reason),)


def known(text: str) -> Scalar:
    return (Part(text),)


def text_of(value: Scalar) -> str | None:
    """The scalar's text when every part is known."""
    if all(p.known for p in value):
        return "".join(p.text for p in value)
    return None


def reason_of(value: Scalar) -> str:
    for p in value:
        if not p.known:
            return p.reason
    return ""


def normalize(value: Scalar) -> Scalar:
    """Adjacent known parts joined, so equal values compare equal."""
    out: list[Part] = []
    for p in value:
        if p.known and out and out[-1].known:
            out[-1] = Part(out[-1].text + p.text)
        elif p.known and not p.text:
            continue
        else:
            out.append(p)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Var:
    value: Scalar = EMPTY
    items: tuple[Scalar, ...] | None = None  # set for arrays
    exported: bool = False
    integer: bool = False
    # Why an array's elements are unknown (its items are then meaningless).
    array_unknown: str = ""

    @property
    def is_array(self) -> bool:
        return self.items is not None

    @property
    def scalar(self) -> Scalar:
        """$NAME: a scalar's value, or an array's first element."""
        if self.items is None:
            return self.value
        if self.array_unknown:
            return unknown("", self.array_unknown)
        return self.items[0] if self.items else EMPTY


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    node: object  # tree_sitter.Node; kept opaque here
    segment: int
    defined_state: State
    # Where the definition is in the document now (bytes): kept current across edits
    # by the incremental planner, which may hold nodes of an older tree.
    start: int = 0
    end: int = 0


@dataclass
class State:
    vars: dict[str, Var] = field(default_factory=dict)
    # Positional parameters ($1...); None when they cannot be known.
    positional: list[Scalar] | None = field(default_factory=list)
    cwd: str | None = None
    script_path: str | None = None
    caller_env: Mapping[str, str] = field(default_factory=dict)
    # True when caller_env is the whole environment (so an absent name is unset).
    env_complete: bool = False
    functions: dict[str, Function] = field(default_factory=dict)
    # Names declared `local` in the functions being run (restored on return).
    local_frames: list[dict[str, Var | None]] = field(default_factory=list)

    def copy(self) -> State:
        return State(
            dict(self.vars),
            None if self.positional is None else list(self.positional),
            self.cwd,
            self.script_path,
            self.caller_env,
            self.env_complete,
            dict(self.functions),
            [dict(f) for f in self.local_frames],
        )

    def get(self, name: str) -> Var | None:
        var = self.vars.get(name)
        if var is not None:
            return var
        env = self.caller_env.get(name)
        if env is not None:
            return Var(known(env), exported=True)
        return None

    def set(self, name: str, var: Var) -> None:
        old = self.get(name)
        if old is not None:
            var = replace(var, exported=var.exported or old.exported,
                          integer=var.integer or old.integer)
        self.vars[name] = var

    def unset(self, name: str) -> None:
        self.vars.pop(name, None)
        if name in self.caller_env:
            # Shadow the caller's value: unset means unset.
            self.vars[name] = Var(EMPTY, exported=False, array_unknown="__unset__")

    def lookup(self, name: str) -> Var | None:
        """A variable that is set, or None."""
        var = self.get(name)
        if var is None or var.array_unknown == "__unset__":
            return None
        return var

    def chdir(self, target: str | None) -> None:
        if target is None:
            self.cwd = None
        elif target.startswith("/"):
            self.cwd = str(PurePosixPath(target))
        elif self.cwd is not None:
            self.cwd = _normpath(str(PurePosixPath(self.cwd) / target))

    def exported_vars(self) -> dict[str, Var]:
        return {k: v for k, v in self.vars.items()
                if v.exported and v.array_unknown != "__unset__"}


def _normpath(path: str) -> str:
    parts: list[str] = []
    absolute = path.startswith("/")
    for piece in path.split("/"):
        if piece in ("", "."):
            continue
        if piece == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif piece == ".." and absolute:
            continue
        else:
            parts.append(piece)
    return ("/" if absolute else "") + "/".join(parts) or "."


def merge(states: list[State], why: str) -> State:
    """The state after one of several paths ran: values that differ become unknown."""
    base = states[0].copy()
    if len(states) == 1:
        return base
    names: set[str] = set()
    for s in states:
        names.update(s.vars)
    for name in names:
        values = [s.vars.get(name) for s in states]
        first = values[0]
        if all(v == first for v in values):
            continue
        exported = any(v is not None and v.exported for v in values)
        present = [v for v in values if v is not None]
        if len(present) < len(values) and name in states[0].caller_env:
            present.append(Var(known(states[0].caller_env[name])))
        reason = f"${name} {why}"
        if any(v is not None and v.is_array for v in values):
            base.vars[name] = Var(EMPTY, (), exported, array_unknown=reason)
        else:
            base.vars[name] = Var(unknown(f"${name}", reason), exported=exported)
    if any(s.cwd != base.cwd for s in states):
        base.cwd = None
    if any(s.positional != base.positional for s in states):
        base.positional = None
    for s in states[1:]:
        for fname, fn in s.functions.items():
            base.functions.setdefault(fname, fn)
    return base
