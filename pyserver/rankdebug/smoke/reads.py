"""What an entry script reads from its command line, told from its source (nothing runs).

A smoke flag is only worth writing when the script's parser sees it: an ``argparse`` option
it adds, a field of a dataclass its ``HfArgumentParser`` parses from ``sys.argv``, or one
argument file it parses. A script that builds its ``TrainingArguments`` in code reads none of
them (a flag would be ignored, or refused as unknown)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

# TrainingArguments and the classes that extend it (transformers, TRL).
TRAINING_CLASSES = frozenset({
    "TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "GRPOConfig",
    "RewardConfig", "PPOConfig", "ORPOConfig", "KTOConfig", "CPOConfig", "RLOOConfig",
    "GKDConfig", "PRMConfig", "OnlineDPOConfig", "XPOConfig", "NashMDConfig", "BCOConfig"})
_HF_PARSERS = ("HfArgumentParser", "TrlParser")
_ARGV_PARSES = ("parse_args_into_dataclasses", "parse_args", "parse_known_args",
                "parse_intermixed_args", "parse_args_and_config")
_FILE_PARSES = ("parse_json_file", "parse_yaml_file")
# Other ways a script reads its command line; what they accept is not read here.
_OTHER_CLIS = ("Fire", "LightningCLI")
_OTHER_MODULES = ("fire", "click", "typer", "tyro", "jsonargparse", "hydra", "absl")


@dataclass(frozen=True, slots=True)
class Built:
    """A ``TrainingArguments(...)`` call in the script: its keywords as written."""

    cls: str
    line: int
    keywords: dict[str, str]  # name -> source text of the value
    literal: frozenset[str]  # the keywords whose value is a literal
    spread: bool  # it takes **kwargs: other fields may be set too


@dataclass(slots=True)
class Reading:
    argv: bool = False  # some parser reads sys.argv
    unknown: bool = False  # it reads its command line in a way not read here
    options: set[str] = field(default_factory=set)  # argparse options, "_" for "-"
    parsed: set[str] = field(default_factory=set)  # dataclasses HfArgumentParser parses
    file_arg: bool = False  # it parses one argument file named on the command line
    built: list[Built] = field(default_factory=list)
    fields: dict[str, set[str]] = field(default_factory=dict)  # dataclass -> its fields
    bases: dict[str, list[str]] = field(default_factory=dict)  # class -> its bases' names

    def is_training(self, cls: str) -> bool:
        """Whether ``cls`` is TrainingArguments or extends it (through this file's classes)."""
        seen: set[str] = set()
        todo = [cls]
        while todo:
            name = todo.pop()
            if name in TRAINING_CLASSES:
                return True
            if name not in seen:
                seen.add(name)
                todo += self.bases.get(name, [])
        return False

    @property
    def training_parsed(self) -> bool:
        """TrainingArguments' fields come from the command line."""
        return self.argv and any(self.is_training(c) for c in self.parsed)

    def accepts(self, name: str) -> bool:
        """Whether ``--name`` reaches the script: an option it adds, or a field of a dataclass
        its parser reads from the command line (TrainingArguments' own are not listed here:
        see ``training_parsed``)."""
        if not self.argv:
            return False
        key = name.replace("-", "_")
        if key in self.options:
            return True
        return any(key in self._fields(c) for c in self.parsed)

    def _fields(self, cls: str) -> set[str]:
        out: set[str] = set()
        todo, seen = [cls], set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            out |= self.fields.get(name, set())
            todo += self.bases.get(name, [])
        return out


def parse(source: str | None) -> ast.Module | None:
    """The script's syntax tree; None for one that does not parse here (a syntax error, or
    nesting too deep for the parser: a hostile file is read as unknown, never a crash)."""
    try:
        return ast.parse(source or "")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def read(source: str) -> Reading:
    """What ``source`` reads from its command line; a file that does not parse reads as
    unknown."""
    out = Reading()
    tree = parse(source)
    if tree is None:
        out.unknown = True
        return out
    names = _tuples(tree)
    for node in ast.walk(tree):  # the classes first: a call may make one of them
        if isinstance(node, ast.ClassDef):
            out.bases[node.name] = [n for n in (_name(b) for b in node.bases) if n]
            out.fields[node.name] = {s.target.id for s in node.body if isinstance(
                s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            _call(node, out, names)
        elif isinstance(node, ast.Attribute) and node.attr == "argv" and _name(
                node.value) == "sys":
            out.unknown = out.unknown or not _in_parse_call(node, tree)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            roots = [module] if module else [a.name for a in node.names]
            if any(r and r.split(".")[0] in _OTHER_MODULES for r in roots):
                out.unknown = True
    return out


def _call(node: ast.Call, out: Reading, names: dict[str, list[str]]) -> None:
    func = _name(node.func)
    if func in _HF_PARSERS and node.args:
        out.parsed |= set(_classes(node.args[0], names))
    elif func == "add_argument":
        for arg in node.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and \
                    arg.value.startswith("-"):
                out.options.add(arg.value.lstrip("-").replace("-", "_"))
    elif func in _ARGV_PARSES and isinstance(node.func, ast.Attribute):
        given = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "args"), None)
        if given is None or (isinstance(given, ast.Constant) and given.value is None) or (
                _mentions_argv(given)):
            out.argv = True
    elif func in _FILE_PARSES and isinstance(node.func, ast.Attribute):
        if any(_mentions_argv(a) for a in [*node.args, *(k.value for k in node.keywords)]):
            out.file_arg = out.argv = True
    elif func in _OTHER_CLIS:
        out.unknown = True
    if func is not None and out.is_training(func):
        keywords = {k.arg: ast.unparse(k.value) for k in node.keywords if k.arg}
        literal = frozenset(k.arg for k in node.keywords if k.arg and _is_literal(k.value))
        out.built.append(Built(func, node.lineno, keywords, literal,
                               any(k.arg is None for k in node.keywords)))


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _name(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _mentions_argv(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "argv" for n in ast.walk(node))


def _in_parse_call(argv: ast.Attribute, tree: ast.Module) -> bool:
    """Whether this ``sys.argv`` is an argument of a parse call read above (so it says
    nothing more)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) in (*_ARGV_PARSES, *_FILE_PARSES) \
                and any(n is argv for n in ast.walk(node)):
            return True
    return False


def _tuples(tree: ast.Module) -> dict[str, list[str]]:
    """``name = (A, B)`` assignments: the classes a parser may be given by name."""
    out: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple | ast.List):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = [n for n in (_name(e) for e in node.value.elts) if n]
    return out


def _classes(node: ast.expr, names: dict[str, list[str]]) -> list[str]:
    if isinstance(node, ast.Tuple | ast.List):
        return [n for n in (_name(e) for e in node.elts) if n]
    name = _name(node)
    if name is None:
        return []
    return names.get(name, [name])


def field_default(source: str, name: str) -> str | None:
    """The literal default of dataclass field or option ``name`` (``block_size: int = 64``,
    ``field(default=64)``, ``add_argument("--block_size", default=64)``), as text; None when
    it is not a literal or not found."""
    tree = parse(source)
    if tree is None:
        return None
    for node in ast.walk(tree):
        value: ast.expr | None = None
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
                node.target.id == name:
            value = node.value
            if isinstance(value, ast.Call) and _name(value.func) == "field":
                value = next((k.value for k in value.keywords if k.arg == "default"), None)
        elif isinstance(node, ast.Call) and _name(node.func) == "add_argument" and any(
                isinstance(a, ast.Constant) and isinstance(a.value, str) and
                a.value.lstrip("-").replace("-", "_") == name for a in node.args):
            value = next((k.value for k in node.keywords if k.arg == "default"), None)
        if value is not None and _is_literal(value):
            return str(ast.literal_eval(value))
    return None
