"""Where a framework's knobs live, behind one interface: flags on the command line,
``key=value`` overrides over a config file (Hydra, OmegaConf), or a config copy's keys.

:func:`tune` reads a knob, writes the smoke value and records the change, so each framework
module is a list of knobs and reasons."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from rankdebug.smoke import configs
from rankdebug.smoke.args import ArgList, spellings
from rankdebug.smoke.context import Keep, Rewrite, as_number, plain_text


@dataclass(frozen=True, slots=True)
class Found:
    value: str | None  # None: a bare flag, or a null in a config
    spelled: str  # the knob as the framework spells it here
    where: str  # the flag, override or file key it was found in
    known: bool = True  # False: a shell word whose value is not known here ($X)


class Knobs(ABC):
    @abstractmethod
    def find(self, name: str) -> Found | None: ...

    @abstractmethod
    def put(self, name: str, value: object) -> str:
        """Write the knob; returns the text written."""

    def text(self, name: str, value: object) -> str:
        """How ``value`` is written for this knob (without writing it)."""
        return python_text(value)

    @abstractmethod
    def delete(self, name: str) -> bool: ...

    @abstractmethod
    def spelled(self, name: str) -> str: ...

    def where_new(self, name: str) -> str:
        return self.spelled(name)


def python_text(value: object) -> str:
    """How a value is written on a command line read by Python (``True``, ``3``)."""
    return str(value)


class Flags(Knobs):
    """``--name value`` (or ``--name=value``) among the entry's arguments. ``dashes``: the
    program takes ``--max-steps`` too (HfArgumentParser, jsonargparse), so both match."""

    def __init__(self, args: ArgList, *, dashes: bool = True, prefix: str = "--") -> None:
        self.args, self.dashes, self.prefix = args, dashes, prefix

    def flags(self, name: str) -> tuple[str, ...]:
        flag = f"{self.prefix}{name}"
        return spellings(flag) if self.dashes else (flag,)

    def find(self, name: str) -> Found | None:
        hit = self.args.find(self.flags(name))
        if hit is None:
            return None
        return Found(hit.value, hit.flag, hit.flag, self.args.items[hit.value_index].known)

    def put(self, name: str, value: object) -> str:
        text = python_text(value)
        self.args.set(self.flags(name), text)
        return text

    def delete(self, name: str) -> bool:
        return self.args.remove(self.flags(name)) is not None

    def spelled(self, name: str) -> str:
        return f"{self.prefix}{name}"


class Overrides(Knobs):
    """``key=value`` words after a config file (LLaMA-Factory, Hydra): the override wins,
    then the file's key. Writes are overrides; the file is never touched."""

    def __init__(self, args: ArgList, config: dict[str, Any] | None = None,
                 label: str = "") -> None:
        self.args, self.config = args, config
        self.file = Keys(config, label) if config is not None else None  # read, never written

    def find(self, name: str) -> Found | None:
        i = self.args.override_index(name)
        if i is not None:
            item = self.args.items[i]
            return Found(item.text.partition("=")[2], name, f"{name}= (command line)",
                         item.known)
        return self.file.find(name) if self.file is not None else None

    def put(self, name: str, value: object) -> str:
        text = self.text(name, value)
        self.args.set_override(name, text)
        return text

    def delete(self, name: str) -> bool:
        i = self.args.override_index(name)
        if i is None:
            return False
        del self.args.items[i]
        return True

    def spelled(self, name: str) -> str:
        return name

    def where_new(self, name: str) -> str:
        return f"{name}= (command line)"


class Keys(Knobs):
    """The keys of a config copy (a file the framework cannot override from the command
    line); ``label`` names the user's file."""

    def __init__(self, data: dict[str, Any], label: str) -> None:
        self.data, self.label = data, label

    def find(self, name: str) -> Found | None:
        held, value = configs.lookup(self.data, name)
        return Found(plain_text(value), name, f"{self.label}: {name}") if held else None

    def put(self, name: str, value: object) -> str:
        configs.set_dotted(self.data, name, value)
        return self.text(name, value)

    def text(self, name: str, value: object) -> str:
        return plain_text(value) or ""

    def delete(self, name: str) -> bool:
        *parents, last = name.split(".")
        node = configs.dotted(self.data, ".".join(parents)) if parents else self.data
        if isinstance(node, dict) and last in node:
            del node[last]
            return True
        return False

    def spelled(self, name: str) -> str:
        return name

    def where_new(self, name: str) -> str:
        return f"{self.label}: {name}"


class Layered(Knobs):
    """Flags on the command line over a config copy's keys: a knob the command sets is
    changed there, any other in the copy (torchtitan: ``--training.steps`` over the TOML)."""

    def __init__(self, flags: Flags, keys: Keys | None, *, write_keys: bool = True) -> None:
        # write_keys False: the config is only read; every change is a flag (jsonargparse
        # and Lightning take any key on the command line after --config).
        self.flags, self.keys, self.write_keys = flags, keys, write_keys

    def find(self, name: str) -> Found | None:
        found = self.flags.find(name)
        if found is None and self.keys is not None:
            found = self.keys.find(name)
            if found is not None and not self.write_keys:  # it will be changed as a flag
                found = Found(found.value, self.flags.spelled(name), found.where, found.known)
        return found

    def _target(self, name: str) -> Knobs:
        if self.keys is None or not self.write_keys or self.flags.find(name) is not None:
            return self.flags
        return self.keys

    def put(self, name: str, value: object) -> str:
        return self._target(name).put(name, value)

    def text(self, name: str, value: object) -> str:
        return self._target(name).text(name, value)

    def delete(self, name: str) -> bool:
        deleted = self.flags.delete(name)
        return (self.keys.delete(name) if self.keys is not None else False) or deleted

    def spelled(self, name: str) -> str:
        return name if self.keys is not None and self.write_keys else self.flags.spelled(name)

    def where_new(self, name: str) -> str:
        if self.keys is not None and self.write_keys:
            return self.keys.where_new(name)
        return self.flags.spelled(name)


class Rule(TypedDict, total=False):
    """When :func:`tune` leaves a knob alone. ``present_only``: the command does not set it
    (its default is fine); ``keep_if``: its old value passes this test."""

    present_only: bool
    keep_if: Keep | None


def tune(rw: Rewrite, knobs: Knobs, name: str, new: object, why: str,
         **rule: Unpack[Rule]) -> bool:
    """Give knob ``name`` the value ``new`` and record it; returns whether it changed."""
    found = knobs.find(name)
    if found is None and rule.get("present_only"):
        return False
    old = found.value if found else None
    keep_if = rule.get("keep_if")
    if found is not None and keep_if is not None and keep_if(old):
        return False
    if found is not None and same(old, knobs.text(name, new)):
        return False
    text = knobs.put(name, new)
    if found is not None and not found.known:
        rw.note(f"{found.where} {old} is not known here; the smoke run sets {text}")
    spelled = found.spelled if found else knobs.spelled(name)
    where = found.where if found else knobs.where_new(name)
    return rw.change(spelled, old, text, why, where)


def same(old: str | None, new: str) -> bool:
    """``1`` and ``1.0``, ``true`` and ``True``: the knob already has the smoke value."""
    if old is None:
        return False
    a, b = old.strip().strip("'\""), new.strip().strip("'\"")
    if a.lower() == b.lower():
        return True
    x, y = as_number(a), as_number(b)
    return x is not None and x == y


def drop(rw: Rewrite, knobs: Knobs, name: str, why: str) -> bool:
    """Remove knob ``name`` (a flag) and record it."""
    found = knobs.find(name)
    if found is None or not knobs.delete(name):
        return False
    rw.change(found.spelled, found.value if found.value is not None else "(set)", None, why,
              found.where)
    return True


def first(knobs: Knobs, *names: str) -> str | None:
    """The first of ``names`` the knobs hold (a knob spelled differently across versions)."""
    for name in names:
        if knobs.find(name) is not None:
            return name
    return None


class RunTime(Knobs):
    """Fields the smoke hook sets on an object the script builds in code (TrainingArguments,
    ``hook.py``): read from the call as written (``written``: name -> (text, literal)),
    written into ``values``, the hook's settings. ``label`` says where the call is."""

    def __init__(self, written: dict[str, tuple[str, bool]], label: str,
                 values: dict[str, object]) -> None:
        self.written, self.label, self.values = written, label, values

    def find(self, name: str) -> Found | None:
        if name in self.values:
            return Found(plain_text(self.values[name]), name, self.where_new(name))
        if name not in self.written:
            return None
        text, literal = self.written[name]
        return Found(text, name, self.where_new(name), literal)

    def put(self, name: str, value: object) -> str:
        self.values[name] = value
        return self.text(name, value)

    def text(self, name: str, value: object) -> str:
        return plain_text(value) or ""

    def delete(self, name: str) -> bool:
        return self.values.pop(name, None) is not None

    def spelled(self, name: str) -> str:
        return name

    def where_new(self, name: str) -> str:
        return self.label
