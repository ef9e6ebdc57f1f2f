"""The vocabulary of a declared message: its fields, each a JSON type that may be null or
absent, bounded where the channel needs it (a range, a most length, a rank spec), and the
three things made from a declaration: a check of a message, a JSON Schema, and TypeScript
interfaces."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_JSON = {"int": "integer", "str": "string", "bool": "boolean", "number": "number",
         "object": "object", "any": None}
_TS = {"int": "number", "str": "string", "bool": "boolean", "number": "number",
       "object": "Record<string, unknown>", "any": "unknown",
       "ranks": "number | number[] | string"}
_NO_NUL = "^[^\\u0000]*$"


@dataclass(frozen=True)
class Field:
    """One field: its JSON type (``int``, ``str``, ``bool``, ``number``, ``object``,
    ``any``, or a list of one of those: ``[int]``, whose items may be null: ``[int?]``;
    or, in an answer, a declared ``Shape``'s name; or ``ranks``, a rank spec as a client
    sends it: a rank number, a list of them or a text, whose grammar ``rankdebug.ranks``
    reads), whether it may be absent or null, and its bounds: ``lo``/``hi`` for an int (each
    one of a list or a spec), ``most`` characters for a text, which then holds no NUL (a
    path or a name never does). ``want`` is what an error says the value must be (``a
    process id``); ``doc`` when not given."""

    kind: str
    doc: str = ""
    optional: bool = False
    null: bool = False
    lo: int | None = None
    hi: int | None = None
    most: int | None = None
    want: str = ""

    def allows(self, value: object) -> bool:
        if value is None:
            return self.null
        return _is(self.kind, value) and self._within(value)

    @property
    def says(self) -> str:
        return self.want or self.doc or self.kind

    def _within(self, value: object) -> bool:
        if isinstance(value, list):
            if self.kind == "ranks" and self.lo is not None and self.hi is not None \
                    and len(value) > self.hi - self.lo + 1:
                return False  # more ranks than there are
            return all(self._within(v) for v in value)
        if isinstance(value, bool):
            return True
        if isinstance(value, int):
            return ((self.lo is None or value >= self.lo)
                    and (self.hi is None or value <= self.hi))
        if isinstance(value, str) and self.most is not None:
            return len(value) <= self.most and "\0" not in value
        return True


def nullable(kind: str, doc: str = "") -> Field:
    """A field that is always there and may be null."""
    return Field(kind, doc, null=True)


def optional(kind: str, doc: str = "", *, null: bool = False) -> Field:
    """A field that only some messages or answers have (``null``: and may be null)."""
    return Field(kind, doc, optional=True, null=null)


def _inner(kind: str) -> tuple[str, bool]:
    return (kind[1:-1], True) if kind.startswith("[") and kind.endswith("]") else (kind, False)


def _is(kind: str, value: object) -> bool:
    one, many = _inner(kind)
    if many:
        return isinstance(value, list) and all(_is(one, v) for v in value)
    if kind.endswith("?"):
        return value is None or _is(kind[:-1], value)
    if kind == "ranks":
        return any(_is(k, value) for k in ("int", "[int]", "str"))
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    return True  # any


@dataclass(frozen=True)
class Message:
    """One message of a channel: ``tag`` is the value of its discriminating key. ``more``:
    fields not declared are let through unchecked (a newer peer may say more)."""

    tag: str
    doc: str
    fields: Mapping[str, Field] = field(default_factory=dict)
    more: bool = False


def message_of(tag: str, doc: str, /, **fields: Field) -> Message:
    """A message whose fields are given by name: ``message_of("exited", "...", code=...)``."""
    return Message(tag, doc, fields)


def fault(message: Mapping[str, Any], declared: Mapping[str, Field]) -> str | None:
    """The first field ``message`` lacks, else the first whose value its declaration does
    not allow (None: none). The caller tells the two apart by ``name in message``."""
    for name, spec in declared.items():
        if name not in message and not spec.optional:
            return name
    for name, spec in declared.items():
        if name in message and not spec.allows(message[name]):
            return name
    return None


def problem(message: Mapping[str, Any], declared: Mapping[str, Message],
            key: str = "event", shapes: Mapping[str, Shape] | None = None) -> str | None:
    """What is wrong with ``message`` against the declarations (None: nothing): an
    unknown tag, a missing field, a field of another type, or one not declared; a field
    that names one of ``shapes`` is checked as that shape."""
    tag = message.get(key)
    if not isinstance(tag, str) or tag not in declared:
        return f"unknown {key} {tag!r}"
    one = declared[tag]
    name = fault(message, one.fields)
    if name is not None:
        if name not in message:
            return f"{tag}: no {name}"
        return f"{tag}: {name} is {message[name]!r}, not {one.fields[name].kind}"
    extra = [] if one.more else sorted(set(message) - set(one.fields) - {key})
    if extra:
        return f"{tag}: undeclared {', '.join(extra)}"
    if shapes:
        nested = Shape(tag, one.doc, one.fields)
        return shape_problem({k: v for k, v in message.items() if k in one.fields},
                             nested, shapes)
    return None


def _bounds(spec: Field, kind: str) -> dict[str, Any]:
    if kind == "int":
        return {k: v for k, v in (("minimum", spec.lo), ("maximum", spec.hi)) if v is not None}
    if kind == "str" and spec.most is not None:
        return {"maxLength": spec.most, "pattern": _NO_NUL}
    return {}


def _one_type(spec: Field, kind: str) -> dict[str, Any]:
    one, many = _inner(kind)
    if many:
        return {"type": "array", "items": _one_type(spec, one)}
    if kind.endswith("?"):
        out = _one_type(spec, kind[:-1])
        return {**out, "type": [out["type"], "null"]}
    if kind == "ranks":
        numbers = _one_type(spec, "[int]")
        if spec.lo is not None and spec.hi is not None:
            numbers["maxItems"] = spec.hi - spec.lo + 1
        return {"anyOf": [_one_type(spec, "int"), numbers, _one_type(spec, "str")]}
    json_type = _JSON[kind]
    return {"type": json_type, **_bounds(spec, kind)} if json_type else {}


def _schema_type(spec: Field) -> dict[str, Any]:
    out = _one_type(spec, spec.kind)
    if spec.null and "type" in out:
        out["type"] = [out["type"], "null"]
    elif spec.null and "anyOf" in out:
        out["anyOf"].append({"type": "null"})
    if spec.doc:
        out["description"] = spec.doc
    return out


def variants(declared: Mapping[str, Message], key: str = "event",
             shapes: Mapping[str, Shape] | None = None) -> list[dict[str, Any]]:
    """The JSON Schema of each message, told apart by ``key`` (a field that names one of
    ``shapes``: a reference to its ``$defs`` entry)."""
    out = []
    for one in declared.values():
        props: dict[str, Any] = {key: {"const": one.tag}}
        props.update({name: _shape_schema(spec, shapes or {})
                      for name, spec in one.fields.items()})
        out.append({
            "title": one.tag, "description": one.doc, "type": "object",
            "properties": props, "additionalProperties": one.more,
            "required": [key, *(n for n, s in one.fields.items() if not s.optional)],
        })
    return out


def schema(title: str, declared: Mapping[str, Message], key: str = "event") -> str:
    """A JSON Schema (2020-12) of the channel: one of the messages, told apart by ``key``."""
    body = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title,
            "oneOf": variants(declared, key)}
    return json.dumps(body, indent=2) + "\n"


def _ts_kind(kind: str, suffix: str = "", shapes: Mapping[str, Shape] | None = None) -> str:
    one, many = _inner(kind)
    if many:
        return _ts_kind(one, suffix, shapes) + "[]"
    if kind.endswith("?"):
        return f"({_ts_kind(kind[:-1], suffix, shapes)} | null)"
    return f"{kind}{suffix}" if shapes and kind in shapes else _TS[kind]


def _ts_type(spec: Field, suffix: str = "", shapes: Mapping[str, Shape] | None = None) -> str:
    base = _ts_kind(spec.kind, suffix, shapes)
    return f"{base} | null" if spec.null else base


def _camel(tag: str) -> str:
    return "".join(part.capitalize() for part in tag.replace("-", "_").split("_"))


def header(source: str) -> str:
    """The first lines of a generated TypeScript file."""
    return f"// Generated by scripts/gen_wire.py from {source}: do not edit.\n\n"


def typescript(source: str, declared: Mapping[str, Message], suffix: str,
               union: str, key: str = "event") -> str:
    """TypeScript interfaces of the channel (``<Tag><suffix>``) and their union."""
    return header(source) + interfaces(declared, suffix, union, key)


def interfaces(declared: Mapping[str, Message], suffix: str, union: str,
               key: str = "event", shapes: Mapping[str, Shape] | None = None) -> str:
    """The interfaces of ``typescript``, without the file's first lines (a field that
    names one of ``shapes``: ``<Name><suffix>``)."""
    out = []
    names = []
    for one in declared.values():
        name = f"{_camel(one.tag)}{suffix}"
        names.append(name)
        out += ["/** " + one.doc + " */", f"export interface {name} {{",
                f"    {key}: '{one.tag}';"]
        for field_name, spec in one.fields.items():
            if spec.doc:
                out.append(f"    /** {spec.doc} */")
            mark = "?" if spec.optional else ""
            out.append(f"    {field_name}{mark}: {_ts_type(spec, suffix, shapes)};")
        out += ["}", ""]
    out.append(f"export type {union} = {' | '.join(names)};")
    return "\n".join(out) + "\n"


# --- one answer of nested objects (a verb's ``--json`` object) -------------------------------


@dataclass(frozen=True)
class Shape:
    """An object of an answer: its fields, whose kinds may name other shapes (``Rank``,
    ``[Rank]``) besides the JSON types."""

    name: str
    doc: str
    fields: Mapping[str, Field] = field(default_factory=dict)


def shape_of(name: str, doc: str, /, **fields: Field) -> Shape:
    """A shape whose fields are given by name."""
    return Shape(name, doc, fields)


def shape_problem(value: object, shape: Shape, shapes: Mapping[str, Shape],
                  where: str = "") -> str | None:
    """What is wrong with ``value`` against ``shape`` (None: nothing), the first problem
    found, with where it is (``jobs[0].ranks[3].port``): a missing field, one of another
    type, or one not declared."""
    here = where or shape.name
    if not isinstance(value, dict):
        return f"{here} is {type(value).__name__}, not an object"
    for name, spec in shape.fields.items():
        at = f"{here}.{name}"
        if name not in value:
            if not spec.optional:
                return f"{at} is missing"
            continue
        item = value[name]
        if item is None:
            if not spec.null:
                return f"{at} is null"
            continue
        kind, many = _inner(spec.kind)
        if kind not in shapes:
            if not spec.allows(item):
                return f"{at} is {item!r}, not {spec.kind}"
            continue
        items = item if many else [item]
        if many and not isinstance(item, list):
            return f"{at} is {type(item).__name__}, not a list"
        for i, one in enumerate(items):
            found = shape_problem(one, shapes[kind], shapes, f"{at}[{i}]" if many else at)
            if found:
                return found
    extra = sorted(set(value) - set(shape.fields))
    return f"{here}: undeclared {', '.join(extra)}" if extra else None


def _shape_schema(spec: Field, shapes: Mapping[str, Shape]) -> dict[str, Any]:
    kind, many = _inner(spec.kind)
    if kind in shapes:
        ref: dict[str, Any] = {"$ref": f"#/$defs/{kind}"}
        out = {"type": "array", "items": ref} if many else ref
        if spec.null:
            out = {"anyOf": [out, {"type": "null"}]}
        if spec.doc:
            out = {**out, "description": spec.doc}
        return out
    return _schema_type(spec)


def shape_defs(shapes: Mapping[str, Shape]) -> dict[str, Any]:
    """The JSON Schema of each shape, by name (a schema's ``$defs``)."""
    defs = {}
    for one in shapes.values():
        defs[one.name] = {
            "description": one.doc, "type": "object", "additionalProperties": False,
            "properties": {n: _shape_schema(s, shapes) for n, s in one.fields.items()},
            "required": [n for n, s in one.fields.items() if not s.optional],
        }
    return defs


def shapes_schema(title: str, root: str, shapes: Mapping[str, Shape]) -> str:
    """A JSON Schema (2020-12) of an answer whose top object is ``root``."""
    body = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title,
            "$ref": f"#/$defs/{root}", "$defs": shape_defs(shapes)}
    return json.dumps(body, indent=2) + "\n"


def ref(name: str) -> dict[str, Any]:
    """A variant that is the shape ``name`` (of ``channel_schema``'s shapes)."""
    return {"$ref": f"#/$defs/{name}"}


def channel_schema(title: str, parts: Mapping[str, list[dict[str, Any]]],
                   shapes: Mapping[str, Shape]) -> str:
    """A JSON Schema (2020-12) of a channel whose line is one of several parts, each a list
    of variants (``variants`` of its messages, or ``ref`` to one of ``shapes``)."""
    defs = {name: {"oneOf": one} for name, one in parts.items()}
    defs.update(shape_defs(shapes))
    body = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title,
            "oneOf": [ref(name) for name in parts], "$defs": defs}
    return json.dumps(body, indent=2) + "\n"


def shapes_typescript(source: str, shapes: Mapping[str, Shape], suffix: str) -> str:
    """TypeScript interfaces of the shapes (``<Name><suffix>``)."""
    return header(source) + shape_interfaces(shapes, suffix)


def shape_interfaces(shapes: Mapping[str, Shape], suffix: str) -> str:
    """The interfaces of ``shapes_typescript``, without the file's first lines."""
    out = []
    for one in shapes.values():
        out += ["/** " + one.doc + " */", f"export interface {one.name}{suffix} {{"]
        for name, spec in one.fields.items():
            if spec.doc:
                out.append(f"    /** {spec.doc} */")
            mark = "?" if spec.optional else ""
            out.append(f"    {name}{mark}: {_ts_type(spec, suffix, shapes)};")
        out += ["}", ""]
    return "\n".join(out)
