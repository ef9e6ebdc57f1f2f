"""Which collective this rank waits in, and how far each of its process groups has got, read
from PyTorch's own records while the main thread is blocked (``rankdebug stacks``).

torch's Flight Recorder (on by default for gloo and NCCL in recent releases;
``TORCH_FR_BUFFER_SIZE=0`` turns it off) keeps the last collectives of every group with their
sequence numbers; gloo never marks an entry completed, so "retired" tells a finished one.
Without it (an older torch, or turned off) the main thread's Python stack still names the
operation and its group, and the group's own counter gives the number.

An async collective (``work = dist.all_reduce(t, async_op=True)``, then ``work.wait()``) leaves
no torch.distributed frame on the stack: the main thread is in C++, at the call of
``.wait()`` in the user's (or a library's) frame. That call is read from the frame's current
instruction and its source; the ``Work`` it waits on (a local, an attribute of one, an item of
a list) gives the operation, and the oldest unretired Flight Recorder entry of that operation
its group and number. A ``.wait()`` on something else (``threading.Event``) is not taken for
a collective: where the receiver cannot be read without running code
(``dist.all_reduce(...).wait()``, a property), an open entry of the recorder must say so.

``state()`` → ``{"current": {"op", "group", "desc", "seq", "source", "file", "line"} | None,
"groups": {name: {"desc", "ranks", "issued", "done"}}}`` or None when torch.distributed is
not initialised. Stdlib only (torch is read from ``sys.modules``), Python 3.9 and later.
"""

from __future__ import annotations

import ast
import dis
import linecache
import pickle
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_C10D_FILE = "distributed_c10d.py"
_MISSING = object()
# c10d's OpType (a Work's ``_get_op_type()``) -> the torch.distributed call that makes it.
_OP_CALLS = {
    "BROADCAST": "broadcast", "ALLREDUCE": "all_reduce",
    "ALLREDUCE_COALESCED": "all_reduce_coalesced", "REDUCE": "reduce",
    "ALLGATHER": "all_gather", "_ALLGATHER_BASE": "all_gather_into_tensor",
    "ALLGATHER_COALESCED": "all_gather_coalesced", "GATHER": "gather", "SCATTER": "scatter",
    "REDUCE_SCATTER": "reduce_scatter", "_REDUCE_SCATTER_BASE": "reduce_scatter_tensor",
    "ALLTOALL_BASE": "all_to_all_single", "ALLTOALL": "all_to_all", "SEND": "send",
    "RECV": "recv", "RECVANYSOURCE": "recv", "BARRIER": "barrier",
}
# The torch.distributed calls that return a Work with ``async_op=True``.
_ASYNC_CALLS = frozenset({
    *_OP_CALLS.values(), "isend", "irecv", "batch_isend_irecv", "all_gather_object",
})


def _world(dist: Any) -> Any:
    return getattr(getattr(dist, "distributed_c10d", None), "_world", None)


def _groups(dist: Any) -> dict[str, dict[str, Any]]:
    """Every process group this rank is in: name -> desc, global ranks, its counter."""
    world = _world(dist)
    out: dict[str, dict[str, Any]] = {}
    if world is None:
        return out
    for pg in list(world.pg_map):
        name = str(world.pg_names.get(pg, getattr(pg, "group_name", "?")))
        try:
            seq: int | None = int(pg._get_sequence_number_for_group())
        except Exception:  # a backend without the counter
            seq = None
        out[name] = {"desc": str(getattr(pg, "group_desc", "") or ""),
                     "ranks": sorted(int(r) for r in world.pg_group_ranks.get(pg, {})),
                     "counter": seq, "issued": None, "done": None}
    return out


def _flight_recorder(groups: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Fill each group's issued/done numbers from the Flight Recorder; the entries not yet
    retired, per group (empty when the recorder is off)."""
    c10d = sys.modules.get("torch._C._distributed_c10d")
    dump = getattr(c10d, "_dump_fr_trace", None)
    if dump is None:
        return {}
    try:
        raw = pickle.loads(dump(includeCollectives=True, includeStackTraces=False,
                                onlyActive=False))
    except Exception:  # an older signature, or a recorder that cannot dump
        return {}
    open_: dict[str, list[dict[str, Any]]] = {}
    for entry in raw.get("entries", []):
        if entry.get("is_p2p"):
            continue
        name = str(entry["process_group"][0])
        group = groups.setdefault(name, {"desc": str(entry["process_group"][1]), "ranks": [],
                                         "counter": None, "issued": None, "done": None})
        seq = int(entry["collective_seq_id"])
        group["issued"] = max(group["issued"] or 0, seq)
        if entry.get("retired"):
            group["done"] = max(group["done"] or 0, seq)
        else:
            open_.setdefault(name, []).append(entry)
    return open_


def _in_python(dist: Any) -> dict[str, Any] | None:
    """The torch.distributed call the main thread is inside, and its group's name."""
    frame = sys._current_frames().get(threading.main_thread().ident or 0)
    world = _world(dist)
    while frame is not None:
        code = frame.f_code
        if code.co_filename.endswith(_C10D_FILE) and not code.co_name.startswith("_"):
            group = frame.f_locals.get("group")
            if group is None and world is not None:
                group = world.default_pg
            name = world.pg_names.get(group) if world is not None and group else None
            return {"op": code.co_name, "group": str(name) if name is not None else None,
                    "file": code.co_filename, "line": frame.f_lineno}
        frame = frame.f_back
    return None


def _op_key(name: str) -> str:
    """``all_reduce``, ``gloo:all_reduce`` and ``ALLREDUCE`` alike: ``allreduce``."""
    return name.split(":", 1)[-1].replace("_", "").lower()


def _call_at(frame: Any) -> ast.Call | None:
    """The call the frame is executing (its current instruction is a call), as written in
    its source; None when the frame is not in a call or its source cannot be read."""
    code = frame.f_code
    lasti = frame.f_lasti
    if lasti < 0:  # not started
        return None
    try:
        if not dis.opname[code.co_code[lasti]].startswith("CALL"):
            return None
    except IndexError:
        return None
    lines = linecache.getlines(code.co_filename, frame.f_globals)
    where = None
    if hasattr(code, "co_positions"):  # 3.11+: the call's own span, columns in UTF-8 bytes
        try:
            where = list(code.co_positions())[lasti // 2]
        except IndexError:
            where = None
    if where is not None and None not in where and where[1] <= len(lines):
        first, last, start, end = where
        raw = [line.encode() for line in lines[first - 1:last]]
        raw[-1] = raw[-1][:end]
        raw[0] = raw[0][start:]
        text = b"".join(raw).decode(errors="replace")
        try:
            node = ast.parse(f"(\n{text}\n)", mode="eval").body
        except SyntaxError:
            return None
        return node if isinstance(node, ast.Call) else None
    # 3.9, 3.10: the line's one call of ``.wait(...)``, if it has exactly one.
    line = lines[frame.f_lineno - 1].strip() if 0 < frame.f_lineno <= len(lines) else ""
    try:
        tree = ast.parse(line)
    except SyntaxError:
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "wait"]
    return calls[0] if len(calls) == 1 else None


def _read(node: ast.AST, frame: Any) -> Any:
    """The value of a name, an attribute held in an object's ``__dict__`` or an item of a
    list, tuple or dict, read from the frame without running any of the program's code;
    _MISSING otherwise (a call, a property, a computed index)."""
    if isinstance(node, ast.Name):
        for space in (frame.f_locals, frame.f_globals, frame.f_builtins):
            if node.id in space:
                return space[node.id]
        return _MISSING
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Attribute):
        base = _read(node.value, frame)
        try:
            attrs = vars(base) if base is not _MISSING else None
        except TypeError:  # no __dict__ (slots, builtins)
            return _MISSING
        return attrs.get(node.attr, _MISSING) if type(attrs) is dict else _MISSING
    if isinstance(node, ast.Subscript):
        base = _read(node.value, frame)
        key = _read(node.slice, frame)
        if type(base) in (list, tuple, dict) and type(key) in (int, str):
            try:
                return base[key]
            except (IndexError, KeyError, TypeError):
                return _MISSING
    return _MISSING


def _work_op(work: Any, c10d: Any) -> str | None:
    """The torch.distributed call that made ``work`` (``all_reduce``), from its OpType."""
    try:
        kind = work._get_op_type()
        names = {int(v): k for k, v in c10d.OpType.__members__.items()}
        name = getattr(kind, "name", None) or names.get(int(kind))
    except Exception:  # an older Work without its OpType
        return None
    return _OP_CALLS.get(name, str(name).lower()) if name else None


def _in_work_wait(dist: Any, groups: dict[str, dict[str, Any]],
                  open_: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The async collective the main thread waits for in ``work.wait()``: {"op", "group",
    "seq", "source", "file", "line"} (group and seq None where unknown); None when its
    innermost frame is not in a ``.wait()`` of a collective's Work."""
    frame = sys._current_frames().get(threading.main_thread().ident or 0)
    if frame is None:
        return None
    call = _call_at(frame)
    if call is None or not isinstance(call.func, ast.Attribute) or call.func.attr != "wait":
        return None
    c10d = sys.modules.get("torch._C._distributed_c10d")
    work_type = getattr(c10d, "Work", None)
    receiver = call.func.value
    work = _read(receiver, frame)
    op: str | None = None
    if work is not _MISSING:
        if work_type is None or not isinstance(work, work_type):
            return None  # an Event, a Future, a process: not a collective
        try:
            if work.is_completed():
                return None  # done: wait() returns at once
        except Exception:  # a Work that cannot tell
            pass
        op = _work_op(work, c10d)
    elif isinstance(receiver, ast.Call):  # dist.all_reduce(t, async_op=True).wait()
        called = receiver.func
        name = (called.attr if isinstance(called, ast.Attribute)
                else called.id if isinstance(called, ast.Name) else None)
        op = name if name in _ASYNC_CALLS else None
    entries = [e for waiting in open_.values() for e in waiting
               if op is None or _op_key(str(e["profiling_name"])) == _op_key(op)]
    here = {"file": frame.f_code.co_filename, "line": frame.f_lineno}
    if entries:  # the oldest one still open: the one the others wait behind
        entry = min(entries, key=lambda e: int(e.get("record_id", 0)))
        return {"op": str(entry["profiling_name"]).split(":", 1)[-1],
                "group": str(entry["process_group"][0]),
                "seq": int(entry["collective_seq_id"]), "source": "flight recorder", **here}
    if op is None:
        return None  # no Work read and no record: nothing says it is a collective
    only = list(groups) if len(groups) == 1 else [None]
    return {"op": op, "group": only[0], "seq": None, "source": "stack", **here}


def state() -> dict[str, Any] | None:
    dist = sys.modules.get("torch.distributed")
    if dist is None or not getattr(dist, "is_initialized", lambda: False)():
        return None
    groups = _groups(dist)
    open_ = _flight_recorder(groups)
    current: dict[str, Any] | None = None
    here = _in_python(dist)
    if here is not None:
        name = here["group"]
        group = groups.get(name or "", {})
        waiting = open_.get(name or "")
        if waiting:
            entry = max(waiting, key=lambda e: int(e["collective_seq_id"]))
            current = {"op": str(entry["profiling_name"]).split(":", 1)[-1],
                       "seq": int(entry["collective_seq_id"]), "source": "flight recorder"}
        else:
            current = {"op": here["op"], "seq": group.get("counter"), "source": "stack"}
        current.update(group=name, desc=group.get("desc"), file=here["file"],
                       line=here["line"])
    else:
        try:
            current = _in_work_wait(dist, groups, open_)
        except Exception:  # reading another thread's frame: never the handler's end
            current = None
        if current is not None:
            current["desc"] = groups.get(current["group"] or "", {}).get("desc")
    for group in groups.values():
        if group["issued"] is None:  # no recorder: the counter (it counts p2p ops too)
            group["issued"] = group["counter"]
        del group["counter"]
    return {"current": current, "groups": groups}
