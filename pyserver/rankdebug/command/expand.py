"""Bash word expansion over tree-sitter nodes, without running anything.

:class:`Expander` turns an argument node into argv words (:meth:`Expander.fields`) or into
one value without word splitting (:meth:`Expander.scalar`): quoting and escapes, parameter
expansion and its operators (``${X:-d}``, ``${#X}``, ``${!X}``, ``${X%.*}``, ``${X/a/b}``,
``${X:1:2}``, ``${X^^}``), positional parameters and ``"$@"``, arrays, word splitting, ``~``
and ``{1..4}``. :class:`Arith` evaluates ``$(( ))`` (and, for the walker, ``(( ))``, ``let``
and ``declare -i`` values). Command substitutions are never run; only pure idioms
(``$(pwd)``, ``$(dirname X)``, ``$(basename X)``, ``$(cd X && pwd)``, ``$(realpath X)``,
``$(echo ...)``, ``$(which X)``) are computed. Whatever cannot be known becomes an unknown
part that says why.

Statements (assignments, ``if``, ``[ ]`` tests, loops) are script.py's.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tree_sitter import Node

from rankdebug.command.hostlist import Stage, scontrol_hostnames
from rankdebug.command.state import (
    EMPTY,
    Scalar,
    State,
    Var,
    known,
    normalize,
    reason_of,
    text_of,
    unknown,
)
from rankdebug.command.syntax import Positions, binary_parts, text
from rankdebug.command.words import Part, Span, Word

_IFS = re.compile(r"[ \t\n]+")
MAX_DEPTH = 64
_BREAK = object()
# Parameters that change from run to run.
_VOLATILE = frozenset({"?", "$", "!", "-", "_", "RANDOM", "SECONDS", "LINENO", "BASHPID", "PPID",
                       "SRANDOM", "EPOCHSECONDS"})
_UNKNOWN_ARGS = {"@": "the script's arguments are not known here",
                 "*": "the script's arguments are not known here",
                 "#": "the number of arguments is not known here"}


class TooDeep(Exception):
    """Nesting beyond MAX_DEPTH: the caller turns it into a CommandError."""


@dataclass
class _Chunk:
    value: Scalar
    split: bool  # unquoted expansion result: subject to word splitting


Chunks = list[_Chunk | object]  # _Chunk, or _BREAK between the words of "$@"
Note = Callable[[str, Span], None]


@dataclass(frozen=True)
class _Param:
    """A parameter reference as written (``src``): its name and index, and whether it is
    inside double quotes."""

    name: str
    index: str | None
    src: str
    quoted: bool

    def chunk(self, value: Scalar) -> _Chunk:
        return _Chunk(value, not self.quoted)

    def unknown(self, reason: str) -> _Chunk:
        return _Chunk(unknown(self.src, reason), not self.quoted)


class _Fields:
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


class Expander:
    def __init__(self, state: State, pos: Positions, note: Note) -> None:
        self.state = state
        self.pos = pos
        self.note = note  # records a warning about an unknown value
        self.depth = 0
        # In `[ ]` tests a variable the script never sets reads as empty, as it
        # does for ${X:-default}; elsewhere it is unknown (it may come from the env).
        self.unset_empty = False

    # ---- public ---------------------------------------------------------

    def words(self, nodes: list[Node]) -> list[Word]:
        out: list[Word] = []
        for node in nodes:
            out.extend(self.fields(node))
        return out

    def fields(self, node: Node) -> list[Word]:
        """The argv words one argument node expands to (0, 1 or more)."""
        span = self.pos.span(node)
        src = text(node)
        words = []
        for norm in self.field_values(node):
            reason = reason_of(norm)
            words.append(Word(norm, span, src, reason or None))
        return words

    def field_values(self, node: Node) -> list[Scalar]:
        """Like fields(), without positions: for array items and loop lists."""
        t = node.type
        if t in ("word", "number") and node.child_count == 0:
            raw = text(node)
            if not any(ch in raw for ch in "\\~"):
                return [known(raw)] if raw else []
        if t == "raw_string":
            return [known(text(node)[1:-1])]
        if t == "brace_expression":
            return [known(s) for s in self._brace(node)]
        fields = _Fields()
        for ch in self._chunks(node, quoted=False):
            if not isinstance(ch, _Chunk):  # _BREAK
                fields.end_word()
            elif ch.split:
                fields.split(ch.value)
            else:
                fields.add(ch.value)
        return fields.words()

    def scalar(self, node: Node) -> Scalar:
        """The node's value without word splitting (assignment values, case words)."""
        t = node.type
        if t in ("word", "number") and node.child_count == 0:
            raw = text(node)
            if not any(ch in raw for ch in "\\~"):
                return known(raw) if raw else EMPTY
        elif t == "raw_string":
            return known(text(node)[1:-1])
        out: list[Part] = []
        for ch in self._chunks(node, quoted=True):
            if ch is _BREAK:
                out.append(Part(" "))
            else:
                assert isinstance(ch, _Chunk)
                out.extend(ch.value)
        return normalize(tuple(out))

    # ---- chunks ---------------------------------------------------------

    def _chunks(self, node: Node, quoted: bool) -> Chunks:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise TooDeep
            return self._chunks_inner(node, quoted)
        finally:
            self.depth -= 1

    def _chunks_inner(self, node: Node, quoted: bool) -> Chunks:
        t = node.type
        if t in ("string", "translated_string"):
            return self._string(node)
        if t in ("simple_expansion", "expansion"):
            return self._expansion(node, quoted)
        if t in ("concatenation", "command_name"):
            # A command's name is a word like any other: `$CMD args` expands and splits.
            return [chunk for c in node.children for chunk in self._chunks(c, quoted)]
        if t == "array":
            return [_Chunk(self.scalar(c), False) for c in node.named_children
                    if c.type != "comment"]
        return [] if t in ("$", '"', "'") else [self._single(node, quoted)]

    def _single(self, node: Node, quoted: bool) -> _Chunk:
        """A node that makes one chunk (a literal, an arithmetic or command substitution)."""
        make = _SINGLE.get(node.type)
        if make is None:
            # Anything else (test operators, heredoc parts): its literal text.
            return _Chunk(known(text(node)), False)
        value, splits = make(self, node)
        return _Chunk(value, splits and not quoted)

    def _word(self, node: Node) -> Scalar:
        raw = text(node)
        if "\\" in raw:
            raw = re.sub(r"\\\n", "", raw)
            raw = re.sub(r"\\(.)", r"\1", raw, flags=re.S)
        first = node.parent is None or node.parent.type != "concatenation" or (
            node.parent.children[0] == node)
        if raw.startswith("~") and first and text(node).startswith("~"):
            head, sep, rest = raw.partition("/")
            if head == "~":
                home = self.state.lookup("HOME")
                home_text = text_of(home.scalar) if home is not None else None
                if home_text is None:
                    return (Part("~", False, "~ is the home directory, not known here"),
                            Part(sep + rest))
                return known(f"{home_text}{sep}{rest}")
        return known(raw)

    def _string(self, node: Node) -> Chunks:
        out: Chunks = []
        children = [c for c in node.children if c.type != '"']
        only_at = len(children) == 1 and _is_at(children[0])
        if not children:
            return [_Chunk(EMPTY, False)]
        for c in children:
            if c.type == "string_content":
                out.append(_Chunk(known(_unescape_dq(text(c))), False))
            else:
                if lead := _lead(c):
                    out.append(_Chunk(known(lead), False))
                out.extend(self._chunks(c, quoted=True))
        if only_at:
            return out  # "$@" with no items is no word at all
        out.insert(0, _Chunk(EMPTY, False))  # a quoted string is a word even when empty
        return out

    # ---- parameters ------------------------------------------------------

    def _expansion(self, node: Node, quoted: bool) -> Chunks:
        src = text(node)
        kids = [c for c in node.children if c.type not in ("$", "${", "}")]
        prefix = ""
        if kids and kids[0].type in ("#", "!") and len(kids) > 1:
            prefix = kids[0].type
            kids = kids[1:]
        if not kids:
            return [_Chunk(known(src), False)]
        name, index = _target_name(kids[0])
        if name is None:
            return [_Chunk(unknown(src, f"{src} cannot be read"), False)]
        if prefix == "!":
            name = self._indirect(name, index, src)
            if name is None:
                return [_Chunk(unknown(src, f"{src}: indirect name is unknown"), False)]
            index = None
        items = self._param_items(name, index, src)  # list of scalars, or None when unset
        if prefix == "#":
            return [_length(items, index, src)]
        param = _Param(name, index, src, quoted)
        if kids[1:]:
            return self._operator(param, items, kids[1:])
        return self._emit(param, items)

    def _indirect(self, name: str, index: str | None, src: str) -> str | None:
        """The name ``${!name}`` refers to, when it is known."""
        ref_name = text_of(self._param_scalar(name, index, src))
        if ref_name is None or not re.fullmatch(r"\w+", ref_name):
            return None
        return ref_name

    def _emit(self, p: _Param, items: list[Scalar] | str | None) -> Chunks:
        if isinstance(items, str):
            return [p.unknown(items)]
        if items is None:
            return [self._unset(p)]
        if p.name in ("@", "*") or p.index in ("@", "*"):
            return _every_item(p, items)
        value = items[0] if items else EMPTY
        if value and not any(part.known and part.text.strip() for part in value):
            # Wholly unknown: show the reference as written ($SQUAD_DIR), keep the
            # inner reason. Partly known values keep their known words for splitting.
            return [p.unknown(reason_of(value))]
        return [p.chunk(value)]

    def _unset(self, p: _Param) -> _Chunk:
        """A parameter that is not set."""
        if self.state.env_complete or self.unset_empty or p.name in ("@", "*"):
            return p.chunk(EMPTY)
        if p.name.isdigit():
            return p.unknown(f"${p.name} is a script argument, and none was given")
        return p.unknown(f"${p.name} is not set in the script (it may come from the environment)")

    def _param_items(self, name: str, index: str | None, src: str) -> list[Scalar] | str | None:
        """Values of a parameter: a list (one item for a scalar), a reason if unknown,
        or None when unset."""
        st = self.state
        if name in ("@", "*", "#") or name.isdigit():
            return self._positional_items(name)
        if name in _VOLATILE:
            return f"${name} changes from run to run"
        if name == "PWD" and st.lookup("PWD") is None and st.cwd is not None:
            return [known(st.cwd)]
        if name == "BASH_SOURCE" and st.script_path:
            return [known(st.script_path)]
        var = st.lookup(name)
        if var is None or var.is_array:
            return None if var is None else self._array_items(var, index, src)
        return [var.value] if index in (None, "@", "*", "0") else None

    def _positional_items(self, name: str) -> list[Scalar] | str | None:
        """$0, $1..., $@, $* and $#."""
        st = self.state
        if name.isdigit() and int(name) == 0:
            return [known(st.script_path)] if st.script_path else "$0 is not known"
        if st.positional is None:
            return _UNKNOWN_ARGS.get(name, f"${name} is an argument that is not known here")
        if name in ("@", "*"):
            return list(st.positional)
        if name == "#":
            return [known(str(len(st.positional)))]
        n = int(name)
        return [st.positional[n - 1]] if n <= len(st.positional) else None

    def _array_items(self, var: Var, index: str | None, src: str) -> list[Scalar] | str | None:
        if var.array_unknown:
            return var.array_unknown
        assert var.items is not None
        if index is None or index in ("@", "*"):
            return list(var.items) if index else list(var.items[:1])
        i = self.arith_text(index)
        if i is None:
            return f"{src}: the index is not known"
        return [var.items[i]] if -len(var.items) <= i < len(var.items) else None

    def _param_scalar(self, name: str, index: str | None, src: str) -> Scalar:
        items = self._param_items(name, index, src)
        if isinstance(items, str):
            return unknown(src, items)
        if not items:
            return EMPTY
        return items[0]

    def _operator(self, p: _Param, items: list[Scalar] | str | None,
                  rest: list[Node]) -> Chunks:
        """``${X:-d}``, ``${X:+w}``, ``${X#p}``, ``${X/a/b}``, ``${X:1:2}``, ``${X^^}``..."""
        op = rest[0].type
        arg = self._op_arg(op, rest[1:])
        if isinstance(items, str):
            return [p.unknown(items)]
        if op == ":" and items is not None and (p.name in ("@", "*") or p.index in ("@", "*")):
            return self._slice(p, items, [a for a in rest[1:] if a.type != ":"])
        value = EMPTY
        if items is not None:
            value = _join(items) if p.index in ("@", "*") else items[0] if items else EMPTY
        if op in (":-", "-", ":=", "=", ":?", "?"):
            return self._use_default(p, items, op, arg, value)
        if op in (":+", "+"):
            return [_alternative(p, items is None, op, arg, value)]
        return [self._transform(p, items is None, rest, value)]

    def _slice(self, p: _Param, items: list[Scalar], nums: list[Node]) -> Chunks:
        """``${@:offset:length}`` and ``${A[@]:offset:length}``: items, not characters (the
        positional parameters count from $0)."""
        full = list(items)
        if p.index is None:  # $@ and $*: offset 0 is $0
            zero = self.state.script_path
            full.insert(0, known(zero) if zero else unknown("$0", "$0 is not known"))
        off = self._arith_node(nums[0]) if nums else None
        length = self._arith_node(nums[1]) if len(nums) > 1 else len(full)
        if off is None or length is None or length < 0:
            return [p.unknown("the slice's offset or length is not known")]
        if off < 0:
            off += len(full)
        sliced = full[off:off + length] if off >= 0 else []
        return _every_item(p, sliced)

    def _arith_node(self, node: Node) -> int | None:
        return Arith(self).eval(node) if node.type != "word" else self.arith_text(text(node))

    def _op_arg(self, op: str, args: list[Node]) -> Scalar:
        """The word after an operator (the default of ``${X:-default}``)."""
        if not args or op == ":":
            return EMPTY
        parts: list[Part] = []
        for a in args:
            if a.type in ("/", ":"):
                continue
            parts.extend(self.scalar(a))
        return normalize(tuple(parts))

    def _use_default(self, p: _Param, items: list[Scalar] | None, op: str, arg: Scalar,
                     value: Scalar) -> Chunks:
        """``${X:-d}``, ``${X:=d}``, ``${X:?msg}`` and their forms without ``:``."""
        unset = items is None
        empty = unset or text_of(value) == ""
        use_default = empty if op.startswith(":") else unset
        if not unset and op.startswith(":") and text_of(value) is None:
            # Set to something unknown: might be empty, so the default might apply.
            return [p.unknown(reason_of(value))]
        if not use_default:
            return self._emit(p, items)
        if op in (":=", "=") and not p.index:
            self.state.set(p.name, Var(arg))
        if op in (":?", "?"):
            return [p.unknown(f"${p.name} must be set ({p.src})")]
        return [p.chunk(arg)]

    def _transform(self, p: _Param, unset: bool, rest: list[Node], value: Scalar) -> _Chunk:
        """The string operators: ``${X#p}``, ``${X/a/b}``, ``${X:1:2}``, ``${X^^}``..."""
        if unset and not self.state.env_complete:
            return p.unknown(f"${p.name} is not set in the script")
        t = text_of(value)
        if t is None:
            return p.unknown(reason_of(value))
        result = _string_op(rest[0].type, t, rest, self, p.src)
        if result is None:
            return p.unknown(f"{p.src}: this expansion is not evaluated")
        return p.chunk(known(result))

    # ---- substitution, arithmetic, braces ------------------------------

    def _substitution(self, node: Node) -> Scalar:
        src = text(node)
        value = self._pure_substitution(node)
        if value is not None:
            return known(value)
        slurm = self._scontrol(node)
        if slurm is not None:
            out, why = slurm
            return known(out) if out is not None else unknown(src, f"{src[:60]}: {why}")
        held = self._cat_heredoc(node)
        if held is not None:
            return held
        short = src if len(src) <= 60 else src[:57] + "..."
        return unknown(src, f"{short} is a command; it is not run to read its output")

    def _pure_substitution(self, node: Node) -> str | None:
        """`$(pwd)`, `$(dirname X)`, `$(basename X)`, `$(cd X && pwd)`, `$(realpath X)`."""
        body = [c for c in node.named_children if c.type != "comment"]
        if len(body) != 1:
            return None
        stmt = body[0]
        if stmt.type == "list":
            return self._cd_pwd(stmt)
        if stmt.type != "command":
            return None
        vals = [text_of(self.scalar(a)) for a in stmt.children_by_field_name("argument")]
        pure = _PURE.get(_cmd_name(stmt))
        if pure is None or any(v is None for v in vals):
            return None
        return pure(self.state, [v for v in vals if v is not None])

    def _scontrol(self, node: Node) -> tuple[str | None, str] | None:
        """`$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)` and `| wc -l`."""
        body = [c for c in node.named_children if c.type != "comment"]
        if len(body) != 1 or body[0].type not in ("pipeline", "command"):
            return None
        cmds = body[0].named_children if body[0].type == "pipeline" else [body[0]]
        if not cmds or any(c.type != "command" for c in cmds) or _cmd_name(cmds[0]) != (
                "scontrol"):
            return None
        stages = []
        for cmd in cmds:
            args = cmd.children_by_field_name("argument")
            stages.append(Stage(_cmd_name(cmd), [text_of(self.scalar(a)) for a in args],
                                [text(a) for a in args]))
        env: dict[str, str | None] = {}
        for name in ("SLURM_JOB_NODELIST", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"):
            var = self.state.lookup(name)
            if var is not None and var.value is not None:
                env[name] = text_of(var.value)
        return scontrol_hostnames(stages, env)

    def _cat_heredoc(self, node: Node) -> Scalar | None:
        """`$(cat <<EOF ... EOF)`: the here-document, without its trailing newlines."""
        body = [c for c in node.named_children if c.type != "comment"]
        if len(body) != 1 or body[0].type != "redirected_statement":
            return None
        cmd = body[0].child_by_field_name("body")
        if cmd is None or cmd.type != "command" or _cmd_name(cmd) != "cat" or (
                cmd.children_by_field_name("argument")):
            return None
        value = self.stdin(cmd)
        if value is None:
            return None
        parts = list(value)
        while parts and parts[-1].known and parts[-1].text.endswith("\n"):
            stripped = parts[-1].text.rstrip("\n")
            parts[-1:] = [Part(stripped)] if stripped else []
        return normalize(tuple(parts))

    # ---- here-documents and here-strings ---------------------------------

    def stdin(self, command: Node) -> Scalar | None:
        """The input a command's here-document or here-string gives it; None when its
        input is anything else (the terminal, a file, a pipe)."""
        redirects = [c for c in command.children if c.type == "herestring_redirect"]
        parent = command.parent
        if parent is not None and parent.type == "redirected_statement" and (
                parent.child_by_field_name("body") == command):
            redirects += [c for c in parent.children if c.type.endswith("_redirect")]
        value: Scalar | None = None
        for r in redirects:
            if r.type == "heredoc_redirect":
                value = self.heredoc(r)
            elif r.type == "herestring_redirect":
                words = r.named_children
                value = normalize((*self.scalar(words[0]), Part("\n"))) if words else None
            elif r.type == "file_redirect" and text(r).lstrip("0").startswith("<"):
                value = None  # a file's contents are not read
        return value

    def heredoc(self, redirect: Node) -> Scalar:
        """A here-document's text: expanded unless its delimiter is quoted, leading tabs
        dropped for `<<-`."""
        body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
        start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
        tabs = any(c.type == "<<-" for c in redirect.children)
        if body is None:
            return EMPTY
        if start is not None and any(ch in text(start) for ch in "'\"\\"):
            return known(_heredoc_tabs(text(body), tabs, True).rstrip("\t" if tabs else ""))
        out: list[Part] = []
        raw = body.text or b""
        at = body.start_byte
        line_start = True
        for child in [*body.children, None]:
            end = child.start_byte if child is not None else body.end_byte
            literal = raw[at - body.start_byte:end - body.start_byte].decode("utf-8", "replace")
            if child is not None and child.type == "heredoc_content":
                end = child.end_byte
                literal = text(child) if not literal else literal + text(child)
            if literal:
                literal = re.sub(r"\\([$`\\])", r"\1", literal.replace("\\\n", ""))
                out.append(Part(_heredoc_tabs(literal, tabs, line_start)))
                line_start = literal.endswith("\n")
            if child is not None and child.type != "heredoc_content":
                if lead := _lead(child):
                    out.append(Part(lead))
                for chunk in self._chunks(child, quoted=True):
                    if isinstance(chunk, _Chunk):
                        out.extend(chunk.value)
                end = child.end_byte
                line_start = False
            at = end
        if tabs and out and out[-1].known:
            out[-1] = Part(out[-1].text.rstrip("\t"))  # the delimiter line's own tabs
        return normalize(tuple(out))

    def _cd_pwd(self, stmt: Node) -> str | None:
        """`$(cd X && pwd)`."""
        if len(stmt.named_children) != 2:
            return None
        first, second = stmt.named_children
        if not (second.type == "command" and _cmd_name(second) == "pwd"
                and first.type == "command" and _cmd_name(first) == "cd"):
            return None
        args = first.children_by_field_name("argument")
        if len(args) != 1:
            return None
        d = text_of(self.scalar(args[0]))
        if d is None or (self.state.cwd is None and not d.startswith("/")):
            return None
        probe = self.state.copy()
        probe.chdir(d)
        return probe.cwd

    def _arith_value(self, node: Node) -> Scalar:
        src = text(node)
        inner = [c for c in node.named_children]
        if not inner:
            return known("0")
        ev = Arith(self)
        value = ev.eval(inner[0])
        if value is None:
            return unknown(src, ev.reason or f"{src} cannot be computed")
        return known(str(value))

    def arith_text(self, expr: str) -> int | None:
        """Evaluate arithmetic written as text (`declare -i`, variable contents, `let`)."""
        expr = expr.strip()
        if re.fullmatch(r"-?\d+", expr):
            return int(expr)
        if not expr:
            return 0
        from rankdebug.command.syntax import parse

        tree = parse(f"_=$(({expr}))")
        root = tree.root_node
        if root.has_error:
            return None
        found = _find(root, "arithmetic_expansion")
        if found is None or not found.named_children:
            return None
        sub = Expander(self.state, Positions(f"_=$(({expr}))"), self.note)
        sub.depth = self.depth + 8
        return Arith(sub).eval(found.named_children[0])

    def _brace(self, node: Node) -> list[str]:
        nums = [text(c) for c in node.named_children]
        if len(nums) == 2 and all(re.fullmatch(r"-?\d+", n) for n in nums):
            a, b = int(nums[0]), int(nums[1])
            step = 1 if b >= a else -1
            if abs(b - a) > 10_000:
                return [text(node)]
            return [str(i) for i in range(a, b + step, step)]
        return [text(node)]


# Nodes that make one chunk: its value, and whether it is split when unquoted.
_SINGLE: dict[str, Callable[[Expander, Node], tuple[Scalar, bool]]] = {
    **dict.fromkeys(("word", "number", "extglob_pattern", "regex", "special_variable_name",
                     "variable_name"), lambda ex, n: (ex._word(n), False)),
    "raw_string": lambda ex, n: (known(text(n)[1:-1]), False),
    "ansi_c_string": lambda ex, n: (known(_ansi_c(text(n)[2:-1])), False),
    "arithmetic_expansion": lambda ex, n: (ex._arith_value(n), True),
    "command_substitution": lambda ex, n: (ex._substitution(n), True),
    "process_substitution": lambda ex, n: (
        unknown(text(n), f"{text(n)} is a process substitution"), False),
    "brace_expression": lambda ex, n: (known(" ".join(ex._brace(n))), True),
}


def _join(items: list[Scalar]) -> Scalar:
    """Items joined with spaces (``$*``, ``${A[*]}``)."""
    joined: list[Part] = []
    for i, item in enumerate(items):
        if i:
            joined.append(Part(" "))
        joined.extend(item)
    return tuple(joined)


def _length(items: list[Scalar] | str | None, index: str | None, src: str) -> _Chunk:
    """``${#X}`` and ``${#A[@]}``."""
    if isinstance(items, str):
        return _Chunk(unknown(src, items), False)
    if index in ("@", "*"):
        return _Chunk(known(str(len(items or []))), False)
    value = items[0] if items else EMPTY
    t = text_of(value)
    if t is None:
        return _Chunk(unknown(src, reason_of(value)), False)
    return _Chunk(known(str(len(t))), False)


def _every_item(p: _Param, items: list[Scalar]) -> Chunks:
    """``$@``, ``$*``, ``${A[@]}``, ``${A[*]}``: one word per item, or all in one."""
    if p.index == "@" or (p.name == "@" and p.index is None):
        out: Chunks = []
        for i, item in enumerate(items):
            if i and p.quoted:
                out.append(_BREAK)
            elif i:
                out.append(_Chunk(known(" "), True))
            out.append(p.chunk(item))
        return out
    if p.index == "*" or p.name == "*":
        return [p.chunk(_join(items))]
    return [p.chunk(items[0] if items else EMPTY)]


def _alternative(p: _Param, unset: bool, op: str, arg: Scalar, value: Scalar) -> _Chunk:
    """``${X:+word}`` and ``${X+word}``."""
    if op == ":+" and not unset and text_of(value) is None:
        return p.unknown(reason_of(value))
    empty = unset or text_of(value) == ""
    use_alt = not empty if op == ":+" else not unset
    return p.chunk(arg if use_alt else EMPTY)


# ---- pure command substitutions ---------------------------------------------------


def _operands(vals: list[str]) -> list[str]:
    return [v for v in vals if not v.startswith("-")]


def _pwd(state: State, vals: list[str]) -> str | None:
    return state.cwd if not vals else None


def _dirname(state: State, vals: list[str]) -> str | None:
    strs = _operands(vals)
    if len(strs) != 1:
        return None
    head = strs[0].rstrip("/").rsplit("/", 1)
    return (head[0] or "/") if len(head) == 2 else "."


def _basename(state: State, vals: list[str]) -> str | None:
    strs = _operands(vals)
    if not strs:
        return None
    base = strs[0].rstrip("/").rsplit("/", 1)[-1]
    if len(strs) == 2 and base.endswith(strs[1]):
        base = base[: -len(strs[1])]
    return base


def _realpath(state: State, vals: list[str]) -> str | None:
    strs = _operands(vals)
    if len(strs) != 1:
        return None
    p = strs[0]
    if not p.startswith("/"):
        if state.cwd is None:
            return None
        p = state.cwd + "/" + p
    probe = state.copy()
    probe.cwd = "/"
    probe.chdir(p)
    return probe.cwd


def _echo(state: State, vals: list[str]) -> str | None:
    return " ".join(vals) if all(not v.startswith("-") for v in vals) else None


def _which(state: State, vals: list[str]) -> str | None:
    """`which X`, `command -v X`, `type -P X`: where X is on the script's PATH. Running
    the name finds the same program, so without a known PATH (or when X is not on it
    here) the name stands for it; found here, the path does (a launcher that runs
    `python SCRIPT` needs a path, not a name)."""
    if len(vals) != 1 or not vals[0] or vals[0].startswith("-"):
        return None  # `which -a X` and `which X Y` print several lines
    name = vals[0]
    path_var = state.lookup("PATH")
    search = text_of(path_var.scalar) if path_var is not None else None
    if search is None:
        return name
    try:
        found = shutil.which(name, path=search)
    except (OSError, ValueError):
        found = None
    return found or name


def _command_v(state: State, vals: list[str]) -> str | None:
    return _which(state, vals[1:]) if vals[:1] == ["-v"] else None


def _type_path(state: State, vals: list[str]) -> str | None:
    return _which(state, vals[1:]) if vals[:1] in (["-P"], ["-p"]) else None


_PURE: dict[str, Callable[[State, list[str]], str | None]] = {
    "pwd": _pwd, "dirname": _dirname, "basename": _basename, "realpath": _realpath,
    "readlink": _realpath, "echo": _echo, "which": _which, "command": _command_v,
    "type": _type_path,
}


# ---- $(( )) ------------------------------------------------------------------------


class Arith:
    """$(( )) over tree-sitter nodes; None means unknown (reason in self.reason)."""

    def __init__(self, ex: Expander) -> None:
        self.ex = ex
        self.reason = ""

    def eval(self, node: Node) -> int | None:
        self.ex.depth += 1
        try:
            if self.ex.depth > MAX_DEPTH:
                raise TooDeep
            return self._eval(node)
        finally:
            self.ex.depth -= 1

    def _unknown(self, why: str) -> None:
        if not self.reason:
            self.reason = why

    def _var(self, name: str) -> int | None:
        t = self._var_text(name)
        if t is None:
            return None
        t = t.strip()
        if re.fullmatch(r"-?\d+", t):
            return int(t)
        if t == "":
            return 0
        v = self.ex.arith_text(t)
        if v is None:
            self._unknown(f"${name} is '{t}', not a number")
        return v

    def _var_text(self, name: str) -> str | None:
        """A variable's text in arithmetic ('' when unset and the environment is known)."""
        st = self.ex.state
        if name.isdigit() or name in ("#", "@", "RANDOM", "$", "?"):
            items = self.ex._param_items(name, None, "$" + name)
            if isinstance(items, str) or not items:
                self._unknown(items if isinstance(items, str) else f"${name} is not set")
                return None
            return text_of(items[0])
        var = st.lookup(name)
        if var is None:
            if st.env_complete:
                return ""
            self._unknown(f"${name} is not set in the script")
            return None
        t = text_of(var.scalar)
        if t is None:
            self._unknown(reason_of(var.scalar))
        return t

    def _eval(self, node: Node) -> int | None:
        evaluate = _ARITH.get(node.type)
        if evaluate is None:
            self._unknown(f"{text(node)} cannot be computed")
            return None
        return evaluate(self, node)

    def _word(self, node: Node) -> int | None:
        w = text(node)
        n = _parse_int(w)
        if n is not None:
            return n
        if re.fullmatch(r"[A-Za-z_]\w*", w):
            return self._var(w)
        self._unknown(f"'{w}' is not a number")
        return None

    def _expanded(self, node: Node) -> int | None:
        """An expansion, string or nested $(( )): its value read as a number."""
        value = self.ex.scalar(node)
        s = text_of(value)
        if s is None:
            self._unknown(reason_of(value))
            return None
        n = _parse_int(s.strip())
        if n is None:
            n = self.ex.arith_text(s)
        if n is None:
            self._unknown(f"{text(node)} is '{s}', not a number")
        return n

    def _parenthesized(self, node: Node) -> int | None:
        kids = node.named_children
        return self.eval(kids[0]) if kids else None

    def _unary(self, node: Node) -> int | None:
        kids = node.named_children
        op = next((c.type for c in node.children if not c.is_named), "")
        if not kids:
            return None
        v = self.eval(kids[0])
        if v is None:
            return None
        if op in ("++", "--"):
            return v  # value unchanged for our purposes; the variable becomes unknown
        return {"-": -v, "+": v, "!": int(not v), "~": ~v}.get(op)

    def _ternary(self, node: Node) -> int | None:
        kids = node.named_children
        if len(kids) != 3:
            return None
        c = self.eval(kids[0])
        if c is None:
            return None
        return self.eval(kids[1] if c else kids[2])

    def _binary(self, node: Node) -> int | None:
        parts = binary_parts(node)
        if parts is None:
            return None
        left, op_node, right = parts
        op = op_node.type
        if op in _ASSIGNMENTS:
            return self._assign(left, op, right)
        a = self.eval(left)
        if op == "&&" and a == 0:
            return 0
        if op == "||" and a not in (None, 0):
            return 1
        b = self.eval(right)
        if a is None or b is None:
            return None
        result = _binop(op, a, b)
        if result is None:
            self._unknown(f"{text(node)} cannot be computed")
        return result

    def _assign(self, left: Node, op: str, right: Node) -> int | None:
        """``X = 1``, ``X += 2``...: the value, and the variable set to it."""
        result = self.eval(right)
        if op != "=":
            cur = self.eval(left)
            result = None if cur is None or result is None else _binop(op[:-1], cur, result)
        name = text(left)
        if re.fullmatch(r"[A-Za-z_]\w*", name):
            self.ex.state.set(name, Var(known(str(result)) if result is not None
                                        else unknown("$" + name, self.reason)))
        return result


_ASSIGNMENTS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="})
_ARITH: dict[str, Callable[[Arith, Node], int | None]] = {
    "number": lambda ar, n: _parse_int(text(n)),
    "word": Arith._word,
    "variable_name": lambda ar, n: ar._var(text(n)),
    **dict.fromkeys(("simple_expansion", "expansion", "command_substitution", "string",
                     "arithmetic_expansion", "concatenation", "raw_string"), Arith._expanded),
    "parenthesized_expression": Arith._parenthesized,
    "unary_expression": Arith._unary,
    "postfix_expression": Arith._unary,
    "ternary_expression": Arith._ternary,
    "binary_expression": Arith._binary,
}


def _quotient(a: int, b: int) -> int | None:
    """Division as bash does it: truncated toward zero."""
    if b == 0:
        return None
    return abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)


def _remainder(a: int, b: int) -> int | None:
    q = _quotient(a, b)
    return None if q is None else a - q * b


_BINOPS: dict[str, Callable[[int, int], int | None]] = {
    "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
    "/": _quotient, "%": _remainder,
    "**": lambda x, y: x**y if 0 <= y <= 64 and abs(x) < 1 << 32 else None,
    "<<": lambda x, y: x << y if 0 <= y < 64 else None,
    ">>": lambda x, y: x >> y if 0 <= y < 64 else None,
    "&": lambda x, y: x & y, "|": lambda x, y: x | y, "^": lambda x, y: x ^ y,
    "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y),
    "<": lambda x, y: int(x < y), "<=": lambda x, y: int(x <= y),
    ">": lambda x, y: int(x > y), ">=": lambda x, y: int(x >= y),
    "&&": lambda x, y: int(bool(x and y)), "||": lambda x, y: int(bool(x or y)),
}


def _binop(op: str, a: int, b: int) -> int | None:
    fn = _BINOPS.get(op)
    try:
        return fn(a, b) if fn else None
    except (OverflowError, ValueError):
        return None


def _parse_int(s: str) -> int | None:
    s = s.strip()
    try:
        if re.fullmatch(r"-?0[xX][0-9a-fA-F]+", s):
            return int(s, 16)
        if re.fullmatch(r"-?0[0-7]+", s):
            return int(s, 8)
        if re.fullmatch(r"-?\d+", s):
            return int(s)
        m = re.fullmatch(r"(\d+)#([0-9a-zA-Z@_]+)", s)
        if m and 2 <= int(m.group(1)) <= 36:
            return int(m.group(2), int(m.group(1)))
    except ValueError:
        return None
    return None


# ---- ${X#pattern} and the other string operators ---------------------------------


def _string_op(op: str, value: str, rest: list[Node], ex: Expander, src: str) -> str | None:
    args = rest[1:]
    if op.startswith("/") and "\\" in src:
        return _escaped_replace(op, value, src)
    if op in ("#", "##", "%", "%%"):
        return _trim(op, value, _glob(_string_arg(ex, args, 0)))
    if op in ("/", "//", "/#", "/%"):
        pat, rep = _glob(_string_arg(ex, args, 0)), _string_arg(ex, args, 1)
        return None if pat is None or rep is None else _replace(op, value, pat, rep)
    if op == ":":
        return _substring(value, [a for a in args if a.type != ":"], ex)
    case = _CASE.get(op)
    return case(value) if case is not None else None


def _string_arg(ex: Expander, args: list[Node], i: int) -> str | None:
    """The operator's ``i``-th argument ('' when there is none; None when not known)."""
    vals = [a for a in args if a.type not in ("/", ":")]
    if i >= len(vals):
        return ""
    return text_of(ex.scalar(vals[i]))


def _escaped_replace(op: str, value: str, src: str) -> str | None:
    """tree-sitter splits `${X//\\//_}` wrongly; read escaped patterns from the text."""
    body = src[2:-1].split(op, 1)[-1] if src.startswith("${") else ""
    m = re.match(r"((?:\\.|[^/\\])*)(?:/(.*))?$", body, re.S)
    if m is None or "$" in body or "`" in body:
        return None
    pat_text, rep_text = m.group(1), m.group(2) or ""
    return _replace(op, value, _glob(pat_text) or "", re.sub(r"\\(.)", r"\1", rep_text))


def _trim(op: str, value: str, pat: str | None) -> str | None:
    """``${X#p}``, ``${X##p}``, ``${X%p}``, ``${X%%p}``."""
    if pat is None:
        return None
    lengths = range(len(value) + 1)
    order = list(lengths) if op in ("#", "%") else list(reversed(lengths))
    for n in order:
        piece = value[:n] if op.startswith("#") else value[len(value) - n:]
        if fnmatch.fnmatchcase(piece, pat):
            return value[n:] if op.startswith("#") else value[: len(value) - n]
    return value


def _substring(value: str, nums: list[Node], ex: Expander) -> str | None:
    """``${X:offset}`` and ``${X:offset:length}``."""
    if not nums:
        return None
    off = Arith(ex).eval(nums[0]) if nums[0].type != "word" else ex.arith_text(text(nums[0]))
    if off is None:
        return None
    if off < 0:
        off = max(0, len(value) + off)
    if len(nums) == 1:
        return value[off:]
    ln = ex.arith_text(text(nums[1]))
    if ln is None:
        return None
    end = off + ln if ln >= 0 else len(value) + ln
    return value[off:end]


_CASE: dict[str, Callable[[str], str]] = {
    "^^": str.upper,
    ",,": str.lower,
    "^": lambda v: v[:1].upper() + v[1:],
    ",": lambda v: v[:1].lower() + v[1:],
}


def _replace(op: str, value: str, pat: str, rep: str) -> str | None:
    if not pat:
        return value
    regex = fnmatch.translate(pat)[4:-3]  # strip (?s: ... )\Z
    try:
        if op == "/#":
            return re.sub("^" + regex, lambda _m: rep, value, count=1)
        if op == "/%":
            return re.sub(regex + "$", lambda _m: rep, value, count=1)
        return re.sub(regex, lambda _m: rep, value, count=0 if op == "//" else 1)
    except re.error:
        return None


def _glob(pattern: str | None) -> str | None:
    """A bash pattern as fnmatch reads it: backslash escapes become brackets."""
    if pattern is None or "\\" not in pattern:
        return pattern
    return re.sub(r"\\(.)", lambda m: f"[{m.group(1)}]" if m.group(1) in "*?[" else m.group(1),
                  pattern)


def _target_name(node: Node) -> tuple[str | None, str | None]:
    if node.type in ("variable_name", "special_variable_name"):
        return text(node), None
    if node.type == "subscript":
        name = node.child_by_field_name("name")
        idx = node.child_by_field_name("index")
        if name is None:
            return None, None
        return text(name), (text(idx) if idx is not None else None)
    if node.type in ("word", "number") and text(node).isdigit():
        return text(node), None
    return None, None


def _is_at(node: Node) -> bool:
    if node.type not in ("simple_expansion", "expansion"):
        return False
    kids = [c for c in node.children if c.type not in ("$", "${", "}")]
    if len(kids) != 1 and not (node.type == "expansion" and kids and kids[1:2]
                               and kids[1].type == ":"):  # "${@:2}" slices items too
        return False
    k = kids[0]
    if k.type == "special_variable_name":
        return text(k) == "@"
    if k.type == "subscript":
        idx = k.child_by_field_name("index")
        return idx is not None and text(idx) == "@"
    return False


def _lead(node: Node) -> str:
    """Blanks tree-sitter-bash puts inside an expansion's opening token when they are all
    that separates it from the expansion before it (`"$A $B"`: ` $B`): text, not syntax."""
    raw = text(node)
    return raw[: len(raw) - len(raw.lstrip(" \t\n"))] if raw[:1] in (" ", "\t", "\n") else ""


def _heredoc_tabs(body: str, tabs: bool, line_start: bool) -> str:
    """`<<-` drops the tabs that start each line of the here-document."""
    if not tabs:
        return body
    body = re.sub(r"\n\t+", "\n", body)
    return body.lstrip("\t") if line_start else body


def _unescape_dq(s: str) -> str:
    s = s.replace("\\\n", "")
    return re.sub(r'\\([$`"\\])', r"\1", s)


def _ansi_c(s: str) -> str:
    table = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a",
             "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "v": "\v"}
    return re.sub(r"\\(.)", lambda m: table.get(m.group(1), "\\" + m.group(1)), s)


def _cmd_name(node: Node) -> str:
    name = node.child_by_field_name("name")
    return text(name) if name is not None else ""


def _find(node: Node, type_: str) -> Node | None:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == type_:
            return n
        stack.extend(reversed(n.children))
    return None
