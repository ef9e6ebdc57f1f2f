"""Bash word expansion over tree-sitter nodes, without running anything.

:class:`Expander` turns an argument node into argv words (:meth:`Expander.fields`) or into
one value without word splitting (:meth:`Expander.scalar`): quoting and escapes, parameter
expansion and its operators (``${X:-d}``, ``${#X}``, ``${!X}``, ``${X%.*}``, ``${X/a/b}``,
``${X:1:2}``, ``${X^^}``), positional parameters and ``"$@"``, arrays, word splitting, ``~``
and ``{1..4}``. :class:`Arith` evaluates ``$(( ))`` (and, for the walker, ``(( ))``, ``let``
and ``declare -i`` values). Command substitutions are never run; only pure idioms
(``$(pwd)``, ``$(dirname X)``, ``$(basename X)``, ``$(cd X && pwd)``, ``$(realpath X)``,
``$(echo ...)``) are computed. Whatever cannot be known becomes an unknown part that says why.

Statements (assignments, ``if``, ``[ ]`` tests, loops) are script.py's.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

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
from rankdebug.command.syntax import Positions, text
from rankdebug.command.words import Part, Span, Word

_IFS = re.compile(r"[ \t\n]+")
MAX_DEPTH = 64
_BREAK = object()


class TooDeep(Exception):
    """Nesting beyond MAX_DEPTH: the caller turns it into a CommandError."""


@dataclass
class _Chunk:
    value: Scalar
    split: bool  # unquoted expansion result: subject to word splitting


Note = Callable[[str, Span], None]


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
        chunks = self._chunks(node, quoted=False)
        result: list[list[Part]] = []
        cur: list[Part] = []
        has = False  # the current field exists even if empty (quoted "" or "$@" item)
        for ch in chunks:
            if ch is _BREAK:
                result.append(cur)
                cur, has = [], True
                continue
            assert isinstance(ch, _Chunk)
            if not ch.split:
                cur.extend(ch.value)
                has = True
                continue
            for part in ch.value:
                if not part.known:
                    cur.append(part)
                    has = True
                    continue
                pieces = _IFS.split(part.text)
                for i, piece in enumerate(pieces):
                    if i > 0 and (cur or has):
                        result.append(cur)
                        cur, has = [], False
                    if piece:
                        cur.append(Part(piece))
                        has = True
        if cur or has:
            result.append(cur)
        return [normalize(tuple(parts)) or (Part(""),) for parts in result]

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

    def _chunks(self, node: Node, quoted: bool) -> list[_Chunk | object]:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise TooDeep
            return self._chunks_inner(node, quoted)
        finally:
            self.depth -= 1

    def _chunks_inner(self, node: Node, quoted: bool) -> list[_Chunk | object]:
        t = node.type
        if t in ("word", "number", "extglob_pattern", "regex", "special_variable_name",
                 "variable_name"):
            return [_Chunk(self._word(node), False)]
        if t == "raw_string":
            return [_Chunk(known(text(node)[1:-1]), False)]
        if t == "ansi_c_string":
            return [_Chunk(known(_ansi_c(text(node)[2:-1])), False)]
        if t in ("string", "translated_string"):
            return self._string(node)
        if t == "concatenation":
            out: list[_Chunk | object] = []
            for c in node.children:
                out.extend(self._chunks(c, quoted))
            return out
        if t in ("simple_expansion", "expansion"):
            return self._expansion(node, quoted)
        if t == "arithmetic_expansion":
            return [_Chunk(self._arith_value(node), not quoted)]
        if t == "command_substitution":
            return [_Chunk(self._substitution(node), not quoted)]
        if t == "process_substitution":
            return [_Chunk(unknown(text(node), f"{text(node)} is a process substitution"), False)]
        if t == "brace_expression":
            return [_Chunk(known(" ".join(self._brace(node))), not quoted)]
        if t == "array":
            return [_Chunk(self.scalar(c), False) for c in node.named_children
                    if c.type != "comment"]
        if t in ("$", '"', "'"):
            return []
        # Anything else (test operators, heredoc parts): its literal text.
        return [_Chunk(known(text(node)), False)]

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

    def _string(self, node: Node) -> list[_Chunk | object]:
        out: list[_Chunk | object] = []
        children = [c for c in node.children if c.type != '"']
        only_at = len(children) == 1 and _is_at(children[0])
        if not children:
            return [_Chunk(EMPTY, False)]
        for c in children:
            if c.type == "string_content":
                out.append(_Chunk(known(_unescape_dq(text(c))), False))
            else:
                out.extend(self._chunks(c, quoted=True))
        if only_at:
            return out  # "$@" with no items is no word at all
        out.insert(0, _Chunk(EMPTY, False))  # a quoted string is a word even when empty
        return out

    # ---- parameters ------------------------------------------------------

    def _expansion(self, node: Node, quoted: bool) -> list[_Chunk | object]:
        src = text(node)
        kids = [c for c in node.children if c.type not in ("$", "${", "}")]
        prefix = ""
        if kids and kids[0].type in ("#", "!") and len(kids) > 1:
            prefix = kids[0].type
            kids = kids[1:]
        if not kids:
            return [_Chunk(known(src), False)]
        target = kids[0]
        rest = kids[1:]
        name, index = _target_name(target)
        if name is None:
            return [_Chunk(unknown(src, f"{src} cannot be read"), False)]
        if prefix == "!":
            ref = self._param_scalar(name, index, src)
            ref_name = text_of(ref)
            if ref_name is None or not re.fullmatch(r"\w+", ref_name):
                return [_Chunk(unknown(src, f"{src}: indirect name is unknown"), False)]
            name, index = ref_name, None
        items = self._param_items(name, index, src)  # list of scalars, or None when unset
        if prefix == "#":
            if isinstance(items, str):
                return [_Chunk(unknown(src, items), False)]
            if index in ("@", "*"):
                return [_Chunk(known(str(len(items or []))), False)]
            value = items[0] if items else EMPTY
            t = text_of(value)
            if t is None:
                return [_Chunk(unknown(src, reason_of(value)), False)]
            return [_Chunk(known(str(len(t))), False)]
        if rest:
            return self._operator(name, index, items, rest, src, quoted)
        return self._emit(items, index, name, src, quoted)

    def _emit(self, items: list[Scalar] | str | None, index: str | None, name: str, src: str,
              quoted: bool) -> list[_Chunk | object]:
        if isinstance(items, str):
            return [_Chunk(unknown(src, items), not quoted)]
        if items is None:
            if self.state.env_complete or self.unset_empty or name in ("@", "*"):
                return [_Chunk(EMPTY, not quoted)]
            reason = f"${name} is not set in the script" + (
                "" if name.isdigit() else " (it may come from the environment)")
            if name.isdigit():
                reason = f"${name} is a script argument, and none was given"
            return [_Chunk(unknown(src, reason), not quoted)]
        if name not in ("@", "*") and index not in ("@", "*"):
            value = items[0] if items else EMPTY
            if value and not any(p.known and p.text.strip() for p in value):
                # Wholly unknown: show the reference as written ($SQUAD_DIR), keep the
                # inner reason. Partly known values keep their known words for splitting.
                return [_Chunk(unknown(src, reason_of(value)), not quoted)]
        if index == "@" or (name == "@" and index is None):
            out: list[_Chunk | object] = []
            for i, item in enumerate(items):
                if i and quoted:
                    out.append(_BREAK)
                elif i:
                    out.append(_Chunk(known(" "), True))
                out.append(_Chunk(item, not quoted))
            return out
        if index == "*" or name == "*":
            joined: list[Part] = []
            for i, item in enumerate(items):
                if i:
                    joined.append(Part(" "))
                joined.extend(item)
            return [_Chunk(tuple(joined), not quoted)]
        return [_Chunk(items[0] if items else EMPTY, not quoted)]

    def _param_items(self, name: str, index: str | None, src: str) -> list[Scalar] | str | None:
        """Values of a parameter: a list (one item for a scalar), a reason if unknown,
        or None when unset."""
        st = self.state
        if name in ("@", "*"):
            if st.positional is None:
                return "the script's arguments are not known here"
            return list(st.positional)
        if name.isdigit():
            n = int(name)
            if n == 0:
                return [known(st.script_path)] if st.script_path else "$0 is not known"
            if st.positional is None:
                return f"${name} is an argument that is not known here"
            return [st.positional[n - 1]] if n <= len(st.positional) else None
        if name == "#":
            if st.positional is None:
                return "the number of arguments is not known here"
            return [known(str(len(st.positional)))]
        if name in ("?", "$", "!", "-", "_", "RANDOM", "SECONDS", "LINENO", "BASHPID", "PPID",
                    "SRANDOM", "EPOCHSECONDS"):
            return f"${name} changes from run to run"
        if name == "PWD" and st.lookup("PWD") is None and st.cwd is not None:
            return [known(st.cwd)]
        if name == "BASH_SOURCE" and st.script_path:
            return [known(st.script_path)]
        var = st.lookup(name)
        if var is None:
            return None
        if var.is_array:
            if var.array_unknown:
                return var.array_unknown
            assert var.items is not None
            if index is None or index in ("@", "*"):
                return list(var.items) if index else list(var.items[:1])
            i = self._index(index)
            if i is None:
                return f"{src}: the index is not known"
            return [var.items[i]] if -len(var.items) <= i < len(var.items) else None
        if index not in (None, "@", "*", "0"):
            return None
        return [var.value]

    def _param_scalar(self, name: str, index: str | None, src: str) -> Scalar:
        items = self._param_items(name, index, src)
        if isinstance(items, str):
            return unknown(src, items)
        if not items:
            return EMPTY
        return items[0]

    def _index(self, index: str) -> int | None:
        value = self.arith_text(index)
        return value

    def _operator(self, name: str, index: str | None, items: list[Scalar] | str | None,
                  rest: list[Node], src: str, quoted: bool) -> list[_Chunk | object]:
        op = rest[0].type
        args = rest[1:]
        arg_val: Scalar = EMPTY
        if args and op not in (":",):
            parts: list[Part] = []
            for a in args:
                if a.type in ("/", ":"):
                    continue
                parts.extend(self.scalar(a))
            arg_val = normalize(tuple(parts))
        unset = items is None
        unknown_reason = items if isinstance(items, str) else None
        value: Scalar = EMPTY
        if isinstance(items, list):
            value = items[0] if items else EMPTY
            if index in ("@", "*"):
                joined: list[Part] = []
                for i, it in enumerate(items):
                    if i:
                        joined.append(Part(" "))
                    joined.extend(it)
                value = tuple(joined)
        empty = unset or (unknown_reason is None and text_of(value) == "")
        if op in (":-", "-", ":=", "=", ":?", "?"):
            use_default = empty if op.startswith(":") else unset
            if unknown_reason is not None:
                return [_Chunk(unknown(src, unknown_reason), not quoted)]
            if not unset and op.startswith(":") and text_of(value) is None:
                # Set to something unknown: might be empty, so the default might apply.
                return [_Chunk(unknown(src, reason_of(value)), not quoted)]
            if use_default:
                if op in (":=", "=") and not index:
                    self.state.set(name, Var(arg_val))
                if op in (":?", "?"):
                    return [_Chunk(unknown(src, f"${name} must be set ({src})"), not quoted)]
                return [_Chunk(arg_val, not quoted)]
            return self._emit(items, index, name, src, quoted)
        if op in (":+", "+"):
            if unknown_reason is not None:
                return [_Chunk(unknown(src, unknown_reason), not quoted)]
            use_alt = not empty if op == ":+" else not unset
            if op == ":+" and not unset and text_of(value) is None:
                return [_Chunk(unknown(src, reason_of(value)), not quoted)]
            return [_Chunk(arg_val if use_alt else EMPTY, not quoted)]
        if unknown_reason is not None:
            return [_Chunk(unknown(src, unknown_reason), not quoted)]
        if unset and not self.state.env_complete:
            return [_Chunk(unknown(src, f"${name} is not set in the script"), not quoted)]
        t = text_of(value)
        if t is None:
            return [_Chunk(unknown(src, reason_of(value)), not quoted)]
        result = _string_op(op, t, rest, self, src)
        if result is None:
            return [_Chunk(unknown(src, f"{src}: this expansion is not evaluated"), not quoted)]
        return [_Chunk(known(result), not quoted)]

    # ---- substitution, arithmetic, braces ------------------------------

    def _substitution(self, node: Node) -> Scalar:
        src = text(node)
        value = self._pure_substitution(node)
        if value is not None:
            return known(value)
        short = src if len(src) <= 60 else src[:57] + "..."
        return unknown(src, f"{short} is a command; it is not run to read its output")

    def _pure_substitution(self, node: Node) -> str | None:
        """`$(pwd)`, `$(dirname X)`, `$(basename X)`, `$(cd X && pwd)`, `$(realpath X)`."""
        body = [c for c in node.named_children if c.type != "comment"]
        if len(body) != 1:
            return None
        stmt = body[0]
        if stmt.type == "list" and len(stmt.named_children) == 2:
            first, second = stmt.named_children
            if (second.type == "command" and _cmd_name(second) == "pwd"
                    and first.type == "command" and _cmd_name(first) == "cd"):
                args = first.children_by_field_name("argument")
                if len(args) == 1:
                    d = text_of(self.scalar(args[0]))
                    if d is None or (self.state.cwd is None and not d.startswith("/")):
                        return None
                    probe = self.state.copy()
                    probe.chdir(d)
                    return probe.cwd
            return None
        if stmt.type != "command":
            return None
        name = _cmd_name(stmt)
        args = [a for a in stmt.children_by_field_name("argument")]
        vals = [text_of(self.scalar(a)) for a in args]
        if any(v is None for v in vals):
            return None
        strs = [v for v in vals if v is not None and not v.startswith("-")]
        if name == "pwd" and not args:
            return self.state.cwd
        if name == "dirname" and len(strs) == 1:
            head = strs[0].rstrip("/").rsplit("/", 1)
            return (head[0] or "/") if len(head) == 2 else "."
        if name == "basename" and strs:
            base = strs[0].rstrip("/").rsplit("/", 1)[-1]
            if len(strs) == 2 and base.endswith(strs[1]):
                base = base[: -len(strs[1])]
            return base
        if name in ("realpath", "readlink") and len(strs) == 1:
            p = strs[0]
            if not p.startswith("/"):
                if self.state.cwd is None:
                    return None
                p = self.state.cwd + "/" + p
            probe = self.state.copy()
            probe.cwd = "/"
            probe.chdir(p)
            return probe.cwd
        if name == "echo" and all(not v.startswith("-") for v in vals if v is not None):
            return " ".join(v for v in vals if v is not None)
        return None

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
        st = self.ex.state
        if name.isdigit() or name in ("#", "@", "RANDOM", "$", "?"):
            items = self.ex._param_items(name, None, "$" + name)
            if isinstance(items, str) or not items:
                self._unknown(items if isinstance(items, str) else f"${name} is not set")
                return None
            t = text_of(items[0])
        else:
            var = st.lookup(name)
            if var is None:
                if st.env_complete:
                    return 0
                self._unknown(f"${name} is not set in the script")
                return None
            t = text_of(var.scalar)
            if t is None:
                self._unknown(reason_of(var.scalar))
                return None
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

    def _eval(self, node: Node) -> int | None:
        t = node.type
        if t == "number":
            return _parse_int(text(node))
        if t == "word":
            w = text(node)
            n = _parse_int(w)
            if n is not None:
                return n
            if re.fullmatch(r"[A-Za-z_]\w*", w):
                return self._var(w)
            self._unknown(f"'{w}' is not a number")
            return None
        if t == "variable_name":
            return self._var(text(node))
        if t in ("simple_expansion", "expansion", "command_substitution", "string",
                 "arithmetic_expansion", "concatenation", "raw_string"):
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
        if t == "parenthesized_expression":
            kids = node.named_children
            return self.eval(kids[0]) if kids else None
        if t in ("unary_expression", "postfix_expression"):
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
        if t == "ternary_expression":
            kids = node.named_children
            if len(kids) != 3:
                return None
            c = self.eval(kids[0])
            if c is None:
                return None
            return self.eval(kids[1] if c else kids[2])
        if t == "binary_expression":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            op_node = node.child_by_field_name("operator")
            if left is None or right is None or op_node is None:
                return None
            op = op_node.type
            if op in ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="):
                result = self.eval(right)
                if op != "=":
                    cur = self.eval(left)
                    result = None if cur is None or result is None else _binop(
                        op[:-1], cur, result)
                name = text(left)
                if re.fullmatch(r"[A-Za-z_]\w*", name):
                    self.ex.state.set(name, Var(known(str(result)) if result is not None
                                                else unknown("$" + name, self.reason)))
                return result
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
        self._unknown(f"{text(node)} cannot be computed")
        return None


def _binop(op: str, a: int, b: int) -> int | None:
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op in ("/", "%"):
            if b == 0:
                return None
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            return q if op == "/" else a - q * b
        if op == "**":
            return a**b if 0 <= b <= 64 and abs(a) < 1 << 32 else None
        if op == "<<":
            return a << b if 0 <= b < 64 else None
        if op == ">>":
            return a >> b if 0 <= b < 64 else None
        table: dict[str, Callable[[int, int], int]] = {
            "&": lambda x, y: x & y, "|": lambda x, y: x | y, "^": lambda x, y: x ^ y,
            "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y),
            "<": lambda x, y: int(x < y), "<=": lambda x, y: int(x <= y),
            ">": lambda x, y: int(x > y), ">=": lambda x, y: int(x >= y),
            "&&": lambda x, y: int(bool(x and y)), "||": lambda x, y: int(bool(x or y)),
        }
        fn = table.get(op)
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


def _string_op(op: str, value: str, rest: list[Node], ex: Expander, src: str) -> str | None:
    args = rest[1:]
    if op.startswith("/") and "\\" in src:
        # tree-sitter splits `${X//\//_}` wrongly; read escaped patterns from the text.
        body = src[2:-1].split(op, 1)[-1] if src.startswith("${") else ""
        m = re.match(r"((?:\\.|[^/\\])*)(?:/(.*))?$", body, re.S)
        if m is None or "$" in body or "`" in body:
            return None
        pat_text, rep_text = m.group(1), m.group(2) or ""
        return _replace(op, value, _glob(pat_text) or "", re.sub(r"\\(.)", r"\1", rep_text))

    def arg(i: int) -> str | None:
        vals = [a for a in args if a.type not in ("/", ":")]
        if i >= len(vals):
            return ""
        return text_of(ex.scalar(vals[i]))

    if op in ("#", "##", "%", "%%"):
        pat = _glob(arg(0))
        if pat is None:
            return None
        lengths = range(len(value) + 1)
        order = list(lengths) if op in ("#", "%") else list(reversed(lengths))
        for n in order:
            piece = value[:n] if op.startswith("#") else value[len(value) - n:]
            if fnmatch.fnmatchcase(piece, pat):
                return value[n:] if op.startswith("#") else value[: len(value) - n]
        return value
    if op in ("/", "//", "/#", "/%"):
        pat, rep = _glob(arg(0)), arg(1)
        if pat is None or rep is None:
            return None
        return _replace(op, value, pat, rep)
    if op == ":":
        nums = [a for a in args if a.type != ":"]
        if not nums:
            return None
        off = Arith(ex).eval(nums[0]) if nums[0].type != "word" else ex.arith_text(text(nums[0]))
        if off is None:
            return None
        if off < 0:
            off = max(0, len(value) + off)
        if len(nums) > 1:
            ln = ex.arith_text(text(nums[1]))
            if ln is None:
                return None
            end = off + ln if ln >= 0 else len(value) + ln
            return value[off:end]
        return value[off:]
    if op == "^^":
        return value.upper()
    if op == ",,":
        return value.lower()
    if op == "^":
        return value[:1].upper() + value[1:]
    if op == ",":
        return value[:1].lower() + value[1:]
    return None


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
    if len(kids) != 1:
        return False
    k = kids[0]
    if k.type == "special_variable_name":
        return text(k) == "@"
    if k.type == "subscript":
        idx = k.child_by_field_name("index")
        return idx is not None and text(idx) == "@"
    return False


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
