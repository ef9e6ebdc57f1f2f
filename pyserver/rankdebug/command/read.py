"""The ``read``, ``mapfile`` and ``readarray`` builtins over input the script itself gives
(a here-document or here-string): ``read -r -d '' ARGS <<EOF ... EOF`` gathers arguments
that are used unquoted later, ``IFS=, read -r -a DEVS <<< "$LIST"`` splits a list.

Splitting follows bash's read builtin: IFS whitespace at the ends is dropped and runs of it
are one separator; every other IFS character ends a field; the last name takes the rest of
the record. Input from anywhere else (a file, a pipe, ``-u FD``) is known only at run time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rankdebug.command.state import EMPTY, Scalar, Var, known, normalize, text_of, unknown
from rankdebug.command.words import Part

DEFAULT_IFS = " \t\n"
_NAME = re.compile(r"[A-Za-z_]\w*")
# Options whose value is the next word (or the rest of the same word).
_READ_VALUES = "adinNptu"
_MAPFILE_VALUES = "dnOsuCc"


@dataclass
class _Call:
    """What a read/mapfile call asks for."""

    names: list[str]
    array: bool
    raw: bool = False
    delim: str | None = "\n"  # None: not known; "" is NUL, as bash reads -d ''
    trim: bool = False  # mapfile -t
    other_input: bool = False  # -u FD, -n/-N counts: the input cannot be told here


def _call(builtin: str, words: list[str | None]) -> _Call:
    mapfile = builtin in ("mapfile", "readarray")
    takes = _MAPFILE_VALUES if mapfile else _READ_VALUES
    call = _Call([], array=mapfile)
    i = 0
    while i < len(words):
        word = words[i]
        if word is None or not word.startswith("-") or len(word) == 1:
            if word is not None and _NAME.fullmatch(word):
                call.names.append(word)
            i += 1
            continue
        for k, ch in enumerate(word[1:], start=1):
            if ch not in takes:
                call.raw |= ch == "r"
                call.trim |= mapfile and ch == "t"
                continue
            attached = word[k + 1:]
            val = attached if attached else (words[i + 1] if i + 1 < len(words) else "")
            i += 0 if attached else 1
            if ch == "a" and not mapfile:
                call.array = True
                if val is not None and _NAME.fullmatch(val):
                    call.names.append(val)
            elif ch == "d":
                call.delim = None if val is None else val[:1]
            elif ch in "unNsOCc" and not (mapfile and ch in "OCc"):
                call.other_input = True
            break
        i += 1
    if mapfile and not call.names:
        call.names.append("MAPFILE")
    if not mapfile and not call.names:
        call.names.append("REPLY")
    return call


def read_vars(builtin: str, words: list[str | None], stdin: Scalar | None, ifs: str | None,
              why: str) -> dict[str, Var]:
    """The variables a read/mapfile call sets. ``stdin`` is its input when the script gives
    it (None: not known here), ``ifs`` the IFS it splits with (None: not known), ``why``
    the reason given for values not known."""
    call = _call(builtin, words)
    values = None
    if stdin is not None and not call.other_input and call.delim is not None:
        values = _mapfile(call, stdin) if builtin in ("mapfile", "readarray") else (
            _read(call, stdin, ifs))
    if values is None:
        return {name: Var(EMPTY, (), array_unknown=f"${name} {why}") if call.array
                else Var(unknown("$" + name, f"${name} {why}")) for name in call.names}
    return values


def _record(call: _Call, data: Scalar) -> Scalar | None:
    """The input up to the delimiter (None when an unknown part may hold it)."""
    delim = call.delim or "\0"
    out: list[Part] = []
    for part in data:
        if not part.known:
            if delim != "\0":
                return None  # a value may hold a newline; no value holds a NUL
            out.append(part)
            continue
        text = part.text
        if not call.raw:
            text = text.replace("\\\n", "")
        if delim in text:
            out.append(Part(text[: text.index(delim)]))
            break
        out.append(Part(text))
    if not call.raw:
        out = [Part(re.sub(r"\\(.)", r"\1", p.text, flags=re.S)) if p.known else p
               for p in out]
    return normalize(tuple(out))


def _read(call: _Call, data: Scalar, ifs: str | None) -> dict[str, Var] | None:
    record = _record(call, data)
    if record is None or ifs is None:
        return None
    text = text_of(record)
    if text is None:
        if call.array or len(call.names) > 1:
            return None
        return {call.names[0]: Var(_strip(record, ifs))}  # one name: only the ends change
    if call.array:
        return {call.names[0]: Var(EMPTY, tuple(known(f) for f in split_fields(text, ifs)))}
    return {name: Var(known(value)) for name, value in zip(
        call.names, assign_fields(text, ifs, len(call.names)), strict=True)}


def _mapfile(call: _Call, data: Scalar) -> dict[str, Var] | None:
    text = text_of(data)
    if text is None:
        return None
    delim = call.delim or "\0"
    items = [line + ("" if call.trim else delim) for line in text.split(delim)]
    if items and items[-1] in ("", delim):
        items.pop()  # the text after the last delimiter, when there is none
    return {call.names[0]: Var(EMPTY, tuple(known(i) for i in items))}


def _white(ifs: str) -> str:
    return "".join(ch for ch in ifs if ch in DEFAULT_IFS)


def _strip(value: Scalar, ifs: str) -> Scalar:
    """IFS whitespace dropped from the known ends of a value."""
    white = _white(ifs)
    parts = list(value)
    if parts and parts[0].known:
        parts[0] = Part(parts[0].text.lstrip(white))
    if parts and parts[-1].known:
        parts[-1] = Part(parts[-1].text.rstrip(white))
    return normalize(tuple(parts))


def split_fields(text: str, ifs: str) -> list[str]:
    """The fields of ``read -a`` (and the words the names take)."""
    if not ifs:
        return [text] if text else []
    white = _white(ifs)
    fields: list[str] = []
    at = len(text) - len(text.lstrip(white))
    while at < len(text):
        end, after = _field(text, at, ifs, white)
        fields.append(text[at:end])
        at = after
    return fields


def assign_fields(text: str, ifs: str, count: int) -> list[str]:
    """The values of ``read A B C``: a field each, the rest of the record for the last."""
    if not ifs:
        return [text] + [""] * (count - 1)
    white = _white(ifs)
    out: list[str] = []
    at = len(text) - len(text.lstrip(white))
    while len(out) < count - 1 and at < len(text):
        end, after = _field(text, at, ifs, white)
        out.append(text[at:end])
        at = after
    last = text[at:].rstrip(white)
    fields = split_fields(last, ifs)
    if len(fields) == 1 and last and last[-1] in ifs and last[-1] not in white:
        last = last[:-1].rstrip(white)  # `a,` read into the last name is `a`
    out.append(last)
    return out + [""] * (count - len(out))


def _field(text: str, at: int, ifs: str, white: str) -> tuple[int, int]:
    """Where the field that starts at ``text[at]`` ends, and where the next one starts: past
    one separator, IFS whitespace around at most one other IFS character."""
    n = len(text)
    end = at
    while end < n and text[end] not in ifs:
        end += 1
    j = end
    while j < n and text[j] in white:
        j += 1
    if j < n and text[j] in ifs:
        j += 1
        while j < n and text[j] in white:
            j += 1
    return end, j
