"""Flags of the launched program as written in the command: ``--name value``,
``--name=value`` or Hydra's ``key=value``, with where each was written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rankdebug.command.coords.layout import Read
from rankdebug.command.words import Word


@dataclass(frozen=True)
class Found:
    """A flag's value word (``value`` None when not fully known, e.g. ``$TP`` unset)."""

    name: str
    value: str | None
    word: Word
    file: str | None

    @property
    def read(self) -> Read:
        span = self.word.span
        return Read(self.name, self.word.display, self.file, span.start_line + 1,
                    span.start_col + 1)

    def number(self) -> int | None:
        """The value as an int (``-1`` allowed: torchtitan's "the rest"), else None."""
        text = (self.value or "").strip()
        body = text[1:] if text.startswith("-") else text
        if not body.isdigit() or len(body) > 9:
            return None
        return int(text)


def spellings(name: str) -> tuple[str, ...]:
    """``--tensor-model-parallel-size`` and ``--tensor_model_parallel_size``."""
    return tuple(dict.fromkeys((name, "--" + name[2:].replace("-", "_"),
                                "--" + name[2:].replace("_", "-"))))


def flag(args: Sequence[Word], name: str, file: str | None) -> Found | None:
    """The last ``name`` (either spelling) with its value, as argparse keeps the last."""
    names = spellings(name)
    found: Found | None = None
    for i, word in enumerate(args):
        text = word.known_prefix
        for n in names:
            if text == n and word.known and i + 1 < len(args):
                value = args[i + 1]
                found = Found(n, value.value, value, file)
            elif text.startswith(n + "="):
                value = word.suffix_after(len(n) + 1)
                found = Found(n, value.value, value, file)
    return found


def switch(args: Sequence[Word], name: str) -> bool:
    """Whether the store-true flag ``name`` (either spelling) is given."""
    names = spellings(name)
    return any(w.value in names for w in args)


def hydra(args: Sequence[Word], key: str, file: str | None) -> Found | None:
    """The last Hydra override ``key=value`` (also ``+key=``/``++key=``)."""
    found: Found | None = None
    for word in args:
        text = word.known_prefix.lstrip("+")
        if text.startswith(key + "="):
            cut = len(word.known_prefix) - len(text) + len(key) + 1
            value = word.suffix_after(cut)
            found = Found(key, value.value, value, file)
    return found
