"""Editing a command's words in place: ``--flag value``, ``--flag=value``, bare ``--flag``
and ``key=value`` overrides (Hydra, OmegaConf), keeping the form the user wrote."""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMBER = re.compile(r"-\d+(\.\d*)?([eE]-?\d+)?")


@dataclass(slots=True)
class Arg:
    text: str
    known: bool = True


@dataclass(frozen=True, slots=True)
class Hit:
    """A flag found: where it is, as written, and its value (None for a bare flag)."""

    index: int
    flag: str
    value: str | None
    joined: bool  # --flag=value

    @property
    def value_index(self) -> int:
        """The word holding the value: the flag's own for ``--flag=value`` or a bare flag."""
        return self.index if self.joined or self.value is None else self.index + 1

    @property
    def width(self) -> int:
        return self.value_index - self.index + 1


def spellings(*names: str) -> tuple[str, ...]:
    """``--max_steps`` and ``--max-steps``: HfArgumentParser and Lightning accept both."""
    out: list[str] = []
    for name in names:
        bare = name.lstrip("-")
        dashes = name[:len(name) - len(bare)] or "--"
        for form in (bare, bare.replace("_", "-"), bare.replace("-", "_")):
            if dashes + form not in out:
                out.append(dashes + form)
    return tuple(out)


def _is_value(arg: Arg) -> bool:
    return not arg.known or not arg.text.startswith("-") or bool(_NUMBER.fullmatch(arg.text))


class ArgList:
    """A run of words (a launcher's options, or the entry's arguments)."""

    def __init__(self, args: list[Arg]) -> None:
        self.items = args

    @classmethod
    def of(cls, *texts: str) -> ArgList:
        return cls([Arg(t) for t in texts])

    @property
    def texts(self) -> list[str]:
        return [a.text for a in self.items]

    def find(self, flags: tuple[str, ...], *, bare: bool = False) -> Hit | None:
        """The last use of any of ``flags`` (the last one wins in argparse). ``bare``: the
        flag never takes a separate value (``--do_eval``)."""
        found = None
        for i, arg in enumerate(self.items):
            if not arg.known:
                continue
            name, eq, value = arg.text.partition("=")
            if name not in flags:
                continue
            if eq:
                found = Hit(i, name, value, True)
            elif not bare and i + 1 < len(self.items) and _is_value(self.items[i + 1]):
                found = Hit(i, name, self.items[i + 1].text, False)
            else:
                found = Hit(i, name, None, False)
        return found

    def value(self, flags: tuple[str, ...]) -> str | None:
        hit = self.find(flags)
        return hit.value if hit else None

    def set(self, flags: tuple[str, ...], value: str, *, joined: bool = False) -> Hit | None:
        """Give the flag ``value`` where it is, or append ``flags[0] value`` (one word
        ``flags[0]=value`` when ``joined``); returns the use found before, or None."""
        hit = self.find(flags)
        if hit is None:
            self.items += [Arg(f"{flags[0]}={value}")] if joined else [Arg(flags[0]), Arg(value)]
        elif hit.joined:
            self.items[hit.index] = Arg(f"{hit.flag}={value}")
        elif hit.value is None:
            self.items.insert(hit.index + 1, Arg(value))
        else:
            self.items[hit.value_index] = Arg(value)
        return hit

    def remove(self, flags: tuple[str, ...], *, bare: bool = False,
               greedy: bool = False) -> Hit | None:
        """Remove every use of the flag (and its value; every value up to the next option
        when ``greedy``, for ``nargs="*"`` flags); returns the last one."""
        last = None
        while (hit := self.find(flags, bare=bare)) is not None:
            end = hit.index + hit.width
            while greedy and not hit.joined and end < len(self.items) and _is_value(
                    self.items[end]):
                end += 1
            del self.items[hit.index:end]
            last = hit
        return last

    # `key=value` overrides (Hydra: `+key=` adds, `++key=` forces; both name `key`).
    def override_index(self, key: str) -> int | None:
        for i in range(len(self.items) - 1, -1, -1):
            arg = self.items[i]
            if arg.known and arg.text.lstrip("+").partition("=")[0] == key and "=" in arg.text:
                return i
        return None

    def override(self, key: str) -> str | None:
        i = self.override_index(key)
        return None if i is None else self.items[i].text.partition("=")[2]

    def set_override(self, key: str, value: str) -> None:
        i = self.override_index(key)
        if i is None:
            self.items.append(Arg(f"{key}={value}"))
        else:
            prefix = self.items[i].text.partition("=")[0]
            self.items[i] = Arg(f"{prefix}={value}")

    def overrides(self) -> dict[str, str]:
        """Every ``key=value`` word (not an option), the last one for each key."""
        out: dict[str, str] = {}
        for arg in self.items:
            if arg.known and "=" in arg.text and not arg.text.startswith("-"):
                key, _, value = arg.text.partition("=")
                out[key.lstrip("+")] = value
        return out
