"""Where a script asks for CUDA or NCCL whatever the machine has, told from its source.

A use counts when no test around it lets the script pick the CPU: ``backend = "nccl"``,
``init_process_group("nccl")``, ``torch.device("cuda")``, ``x.cuda()``,
``device = f"cuda:{local_rank}"``, ``torch.cuda.set_device(...)``, an option's
``default="cuda"`` the command does not override. Inside ``if torch.cuda.is_available()``, a
``"cuda" if ... else "cpu"``, a ``try``, a comparison or a mapping it does not: the script
chooses. A test about anything else (``if ddp:``) chooses nothing about the device.

Each use names the knob a command-line value replaces (a configurator's module-level key,
an argparse option), or none: then it is fixed in code, and no smoke flag reaches it."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass

from rankdebug.smoke import reads

# Calls whose arguments (or these keywords) pick a device or a backend.
_CALLS = ("device", "init_process_group", "to", "set_device")
_KEYWORDS = ("device", "backend", "map_location")
# A test that mentions one of these chooses the device (or the backend) itself.
_DEVICE_WORDS = re.compile(r"cuda|gpu|device|cpu|nccl|gloo|backend|accelerat|mps|xpu|npu",
                           re.IGNORECASE)
_CHOOSERS = (ast.IfExp, ast.BoolOp, ast.Compare, ast.Try, ast.ExceptHandler, ast.Match,
             ast.Dict, ast.comprehension, ast.Lambda, ast.arguments)
CPU = {"nccl": "gloo", "cuda": "cpu"}


@dataclass(frozen=True, slots=True)
class Use:
    what: str  # as written (shortened): "backend = 'nccl'", "x.cuda()"
    line: int
    kind: str  # "nccl" or "cuda"
    knob: str | None  # a configurator key or an option (no dashes); None: fixed in code
    value: str = ""  # the value as the job gets it ("nccl", "cuda:0")

    def to_json(self) -> dict[str, object]:
        return {"what": self.what, "line": self.line, "kind": self.kind, "knob": self.knob,
                "value": self.value}


def scan(source: str | None, given: Mapping[str, str], *, configurator: bool) -> list[Use]:
    """The CUDA/NCCL uses of ``source``. ``given``: values the command line sets, by name
    (``_`` for ``-``); ``configurator``: module-level names are keys the command line sets
    (nanoGPT's configurator)."""
    tree = reads.parse(source)
    if tree is None:
        return []
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    top = set(tree.body)
    out: list[Use] = []
    for node in ast.walk(tree):
        use = _use(node, parents, top, given, configurator)
        if use is not None and not _chosen(node, parents):
            out.append(use)
    return sorted(set(out), key=lambda u: u.line)


def _use(node: ast.AST, parents: dict[ast.AST, ast.AST], top: set[ast.stmt],
         given: Mapping[str, str], configurator: bool) -> Use | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = node.func.value
        if node.func.attr == "cuda" and not node.args:
            return Use(_short(node), node.lineno, "cuda", None)
        if node.func.attr == "set_device" and isinstance(owner, ast.Attribute) and \
                owner.attr == "cuda":
            return Use(_short(node), node.lineno, "cuda", None)
        return None
    kind = _kind(node)
    if kind is None:
        return None
    parent = parents.get(node)
    line = getattr(node, "lineno", 0)
    if isinstance(parent, ast.Assign | ast.AnnAssign) and parent.value is node:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        name = next((n for n in (_target(t) for t in targets) if n), None)
        if name is None:
            return None
        if parent in top and name in given:  # the command line sets this module-level name
            return _given(name, given[name], line)
        knob = name if parent in top and configurator else None
        return Use(_short(parent), line, kind, knob, _text(node))
    if isinstance(parent, ast.keyword) and parent.arg == "default":
        option = _option(parents.get(parent))
        if option is not None:
            if option in given:
                return _given(option, given[option], line)
            return Use(f"--{option} (default {_short(node)})", line, kind, option, _text(node))
    call = parent.value if isinstance(parent, ast.keyword) else parent
    if isinstance(call, ast.Call) and node is not call.func and (
            _func(call) in _CALLS or (isinstance(parent, ast.keyword) and parent.arg in _KEYWORDS)):
        return Use(_short(call), line, kind, None, _text(node))
    return None


def _text(node: ast.AST) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else (
        ast.unparse(node))


def _kind(node: ast.AST) -> str | None:
    """"nccl" or "cuda" for such a literal (``"cuda:0"``, ``f"cuda:{rank}"`` too)."""
    if isinstance(node, ast.JoinedStr) and node.values:
        node = node.values[0]
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and node.value.startswith("cuda:")):
            return None
        return "cuda"
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
        return None
    text = node.value.strip().lower()
    if text == "nccl":
        return "nccl"
    if text == "cuda" or re.fullmatch(r"cuda:\d+", text):
        return "cuda"
    return None


def _given(name: str, value: str, line: int) -> Use | None:
    kind = _kind(ast.Constant(value.strip("'\"")))
    return Use(f"{name}={value} (command line)", line, kind, name, value) if kind else None


def _chosen(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether a test around ``node`` (up to its function) lets the script choose."""
    child, up = node, parents.get(node)
    while up is not None and not isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef
                                            | ast.ClassDef | ast.Module):
        if isinstance(up, _CHOOSERS):
            return True
        if isinstance(up, ast.If | ast.While) and (child is up.test or _DEVICE_WORDS.search(
                ast.unparse(up.test))):
            return True
        child, up = up, parents.get(up)
    return False


def _option(call: ast.AST | None) -> str | None:
    """``--device`` of ``add_argument("--device", default=...)``, as ``device``."""
    if not isinstance(call, ast.Call) or _func(call) != "add_argument":
        return None
    for arg in call.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and \
                arg.value.startswith("--"):
            return arg.value[2:].replace("-", "_")
    return None


def _func(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else (
        func.id if isinstance(func, ast.Name) else None)


def _target(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _short(node: ast.AST, width: int = 60) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def given_values(words: list[str]) -> dict[str, str]:
    """``--name=value`` and ``--name value`` among the entry's arguments, by ``name``
    (``_`` for ``-``); the last one wins."""
    out: dict[str, str] = {}
    for i, word in enumerate(words):
        if not word.startswith("--") or len(word) < 3:
            continue
        name, eq, value = word[2:].partition("=")
        if eq:
            out[name.replace("-", "_")] = value
        elif i + 1 < len(words) and not words[i + 1].startswith("-"):
            out[name.replace("-", "_")] = words[i + 1]
    return out
