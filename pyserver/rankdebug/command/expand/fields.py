"""Word splitting: unquoted expansion results break into words at blanks."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rankdebug.command.state import Scalar, normalize
from rankdebug.command.words import Part

_IFS = re.compile(r"[ \t\n]+")


class Fields:
    """Words being built by word splitting."""

    def __init__(self) -> None:
        self.done: list[list[Part]] = []
        self.cur: list[Part] = []
        self.has = False  # the current field exists even if empty (quoted "" or "$@" item)

    def add(self, parts: Iterable[Part]) -> None:
        """Parts that are not split (quoted, or literal)."""
        self.cur.extend(parts)
        self.has = True

    def split(self, parts: Iterable[Part]) -> None:
        """An unquoted expansion's parts: known text splits at blanks."""
        for part in parts:
            if not part.known:
                self.add((part,))
                continue
            for i, piece in enumerate(_IFS.split(part.text)):
                if i > 0 and (self.cur or self.has):
                    self.done.append(self.cur)
                    self.cur, self.has = [], False
                if piece:
                    self.add((Part(piece),))

    def end_word(self) -> None:
        """Between two items of "$@": a new word, even when empty."""
        self.done.append(self.cur)
        self.cur, self.has = [], True

    def words(self) -> list[Scalar]:
        if self.cur or self.has:
            self.done.append(self.cur)
        return [normalize(tuple(parts)) or (Part(""),) for parts in self.done]
