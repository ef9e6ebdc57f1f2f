"""Which collective this rank waits in, and how far each of its process groups has got, read
from PyTorch's own records while the main thread is blocked (``rankdebug stacks``).

torch's Flight Recorder (on by default for gloo and NCCL in recent releases;
``TORCH_FR_BUFFER_SIZE=0`` turns it off) keeps the last collectives of every group with their
sequence numbers and the thread that issued each. An entry is open until its work is
done: gloo marks none "completed" (its state stays "scheduled") but retires each as it
finishes, waited on or not; NCCL's entries turn "completed" and are retired later. An open
entry is the truth about a group, whichever code issued it: DDP's reducer issues its bucket
all_reduce from C++ inside ``backward`` and the bucket rebuild's broadcast inside
``DistributedDataParallel._pre_forward``, with no torch.distributed frame on the stack.

The main thread waits in a collective when (in this order)
- it is inside a torch.distributed call (the group's newest open entry, else the call's
  name and the group's counter when the recorder is off);
- it is off the CPU inside an installed package's call into C++ (not a wait of the standard
  library's: a queue, an Event) while an entry it issued is open: DDP's reducer inside
  ``backward``, its bucket rebuild inside ``_pre_forward``;
- it is in ``work.wait()`` of an async collective: the call of ``.wait()`` is read from the
  frame's current instruction and its source; the ``Work`` it waits on (a local, an
  attribute of one, an item of a list) gives the operation, the oldest open entry of that
  operation its group and number. A ``.wait()`` on something else (``threading.Event``) is
  not taken for a collective: where the receiver cannot be read without running code
  (``dist.all_reduce(...).wait()``, a property), an open entry must say so.

The collective the main thread waits in has a ``context``: who issued it, from its stack
("DDP bucket, from backward", "DDP bucket rebuild, from forward", "FSDP, from forward"; None
for the user's own call), and a ``label``, the text shown for it: ``all_reduce #5 (DDP
bucket, from backward)``. (The recorder's own stacks are not read: symbolizing them the first
time imports much of torch into the rank and takes seconds.)

``state()`` -> ``{"current": {"op", "group", "desc", "seq", "source", "file", "line",
"context", "label"} | None, "groups": {name: {"desc", "ranks", "issued", "done",
"open": {"op", "seq", "context"} | None}}, "recorder": bool}`` (``open``: the group's oldest
open entry; ``recorder``: whether a Flight Recorder is on, without which a collective issued
from C++ cannot be seen) or None when torch.distributed is not initialised. Stdlib only
(torch is read from ``sys.modules``), Python 3.9 and later.
"""

from __future__ import annotations

import ast
import dis
import linecache
import pickle
import re
import sys
import threading

from rankdebug.runtime.frames import user_file

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
        out[name] = {"desc": _desc(getattr(pg, "group_desc", "")),
                     "ranks": sorted(int(r) for r in world.pg_group_ranks.get(pg, {})),
                     "counter": seq, "issued": None, "done": None}
    return out


# An installed package's file (not the standard library's, not the user's).
_PACKAGE_FILE = re.compile(r"[/\\](site|dist)-packages[/\\]")
# torch.distributed's own files: passed over to find the code that issued a collective.
_C10D_FILES = re.compile(r"torch[/\\]distributed[/\\](distributed_c10d|c10d_logger)\.py$")
_AUTOGRAD_FILE = re.compile(r"torch[/\\]autograd[/\\]")
_DDP_FILE = re.compile(r"torch[/\\]nn[/\\]parallel[/\\]distributed\.py$")
# The library a collective came from, by the first of its files on the issuing stack.
_LIBRARIES = (
    (_DDP_FILE, "DDP"),
    (re.compile(r"torch[/\\]distributed[/\\]algorithms[/\\]ddp_comm_hooks[/\\]"), "DDP hook"),
    (re.compile(r"torch[/\\]distributed[/\\]fsdp[/\\]"), "FSDP"),
    (re.compile(r"torch[/\\]distributed[/\\]tensor[/\\]"), "DTensor"),
    (re.compile(r"torch[/\\]distributed[/\\]pipelining[/\\]"), "pipelining"),
    (re.compile(r"[/\\]deepspeed[/\\]"), "DeepSpeed"),
    (re.compile(r"[/\\]megatron[/\\]"), "Megatron"),
    (re.compile(r"[/\\]accelerate[/\\]"), "Accelerate"),
)
# Decorators' inner functions and module plumbing: never the call a user's code made.
GENERIC = frozenset({
    "wrapper", "inner", "wrapped", "_fn", "fn", "decorate_context", "__call__",
    "_call_impl", "_wrapped_call_impl", "wrap", "_wrapper", "func", "new_fn",
})


def _stack(frame: Any) -> list[tuple[str, str, int]]:
    """A live frame and those under it, innermost first: (function, file, line)."""
    out = []
    while frame is not None:
        out.append((frame.f_code.co_name, frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return out


def context(frames: list[tuple[str, str, int]]) -> str | None:
    """Who issued a collective, from the stack that issued it (innermost first): "DDP bucket,
    from backward", "DDP bucket rebuild, from forward", "FSDP, from forward", "from gather";
    None for a call of the user's own code."""
    skip = 0
    while skip < len(frames) and _C10D_FILES.search(frames[skip][1]):
        skip += 1
    rest = frames[skip:]
    if not rest:
        return None
    native = skip == 0  # no torch.distributed call on top: issued from C++
    _, path, line = rest[0]
    chain: list[tuple[str, str, int]] = []  # the library frames under the user's code
    for frame in rest:
        if user_file(frame[1]):
            break
        chain.append(frame)
    kind = None
    if native and _AUTOGRAD_FILE.search(path) and "torch.nn.parallel.distributed" in sys.modules:
        kind = "DDP bucket"  # the reducer's all_reduce, from autograd's hooks in C++
    elif native and _DDP_FILE.search(path) and "_rebuild_buckets" in linecache.getline(path, line):
        kind = "DDP bucket rebuild"
    else:
        for fname, fpath, _ in chain:
            found = next((lib for pattern, lib in _LIBRARIES if pattern.search(fpath)), None)
            if found is not None:
                kind = f"{found} init" if fname == "__init__" else found
                break
    call = next((f[0] for f in reversed(chain) if f[0] not in GENERIC), None)
    parts = [kind] if kind else []
    # "from" the call the user's code made into the library (none where no user frame is
    # under it, or the user called torch.distributed itself).
    if call is not None and call != "__init__" and len(chain) < len(rest):
        parts.append(f"from {call}")
    return ", ".join(parts) or None


def _desc(raw: object) -> str:
    """A group's description; torch writes ``undefined`` for a group made without one
    (``new_group()`` with no ``group_desc``): no description, not a name."""
    text = str(raw or "")
    return "" if text == "undefined" else text


def label(op: str, seq: int | None = None, group: str | None = None,
          context: str | None = None) -> str:
    """``all_reduce #5 (DDP bucket, from backward)``; the group where it is not the default
    one (``#3 (group 1)``)."""
    text = f"{op} #{seq}" if seq is not None else op
    extra = [part for part in (context, None if group in (None, "0") else f"group {group}")
             if part]
    return f"{text} ({', '.join(extra)})" if extra else text


def _op_name(entry: dict[str, Any]) -> str:
    """``gloo:all_reduce`` -> ``all_reduce``."""
    return str(entry.get("profiling_name")).split(":", 1)[-1]


# The recorders' dumps: gloo's and other CPU backends' (``_dump_fr_trace``), NCCL's in a CUDA
# build (``_dump_nccl_trace``); the same pickled format.
_DUMPS = ("_dump_fr_trace", "_dump_nccl_trace")


def _entries() -> tuple[list[dict[str, Any]], bool]:
    """Every entry the Flight Recorders hold, and whether a recorder is on (it knows the
    process groups even before their first entry; ``TORCH_FR_BUFFER_SIZE=0`` leaves it
    empty)."""
    c10d = sys.modules.get("torch._C._distributed_c10d")
    out: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    on = False
    for name in _DUMPS:
        dump = getattr(c10d, name, None)
        if dump is None:
            continue
        try:
            # No stack traces: their first symbolizing imports much of torch (dynamo,
            # inductor, onnx) into the rank and takes seconds (2.8 s measured, torch 2.13).
            raw = pickle.loads(dump(includeCollectives=True, includeStackTraces=False,
                                    onlyActive=False))
        except Exception:  # an older signature, or a recorder that cannot dump
            continue
        if not isinstance(raw, dict):
            continue
        entries = [e for e in raw.get("entries") or [] if isinstance(e, dict)]
        on = on or bool(entries or raw.get("pg_config"))
        for entry in entries:
            key = (entry.get("process_group"), entry.get("collective_seq_id"),
                   entry.get("profiling_name"), entry.get("time_created_ns"))
            if key not in seen:
                seen.add(key)
                out.append(entry)
    return out, on


def _is_open(entry: dict[str, Any]) -> bool:
    """Not done yet: neither retired nor completed (gloo retires an entry as its work ends)."""
    return not entry.get("retired") and entry.get("state") != "completed"


def _flight_recorder(groups: dict[str, dict[str, Any]]
                     ) -> tuple[dict[str, list[dict[str, Any]]], bool]:
    """Fill each group's issued/done numbers from the Flight Recorder; the entries still
    open, per group, oldest first (empty when the recorder is off), and whether it is on."""
    open_: dict[str, list[dict[str, Any]]] = {}
    entries, on = _entries()
    for entry in entries:
        if entry.get("is_p2p"):
            continue
        try:
            name, desc = str(entry["process_group"][0]), _desc(entry["process_group"][1])
            seq = int(entry["collective_seq_id"])
        except (KeyError, TypeError, ValueError):
            continue
        group = groups.setdefault(name, {"desc": desc, "ranks": [], "counter": None,
                                         "issued": None, "done": None})
        group["issued"] = max(group["issued"] or 0, seq)
        if not _is_open(entry):
            group["done"] = max(group["done"] or 0, seq)
        else:
            open_.setdefault(name, []).append(entry)
    for waiting in open_.values():
        waiting.sort(key=lambda e: int(e["collective_seq_id"]))
    return open_, on


def _main_frame() -> Any:
    return sys._current_frames().get(threading.main_thread().ident or 0)


def _in_python(dist: Any) -> dict[str, Any] | None:
    """The torch.distributed call the main thread is inside, and its group's name."""
    frame = _main_frame()
    world = _world(dist)
    while frame is not None:
        code = frame.f_code
        if code.co_filename.endswith(_C10D_FILE) and not code.co_name.startswith("_"):
            group = frame.f_locals.get("group")
            if group is None and world is not None:
                group = world.default_pg
            name = world.pg_names.get(group) if world is not None and group else None
            return {"op": code.co_name, "group": str(name) if name is not None else None,
                    "file": code.co_filename, "line": frame.f_lineno, "frame": frame}
        frame = frame.f_back
    return None


def _waits(thread: threading.Thread) -> bool:
    """Whether ``thread`` is off the CPU (sleeping in a wait), by its state in /proc; True
    where that cannot be read (not Linux)."""
    try:
        with open(f"/proc/self/task/{thread.native_id}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2:][:1] not in (b"R",)
    except (OSError, ValueError, AttributeError):
        return True


def _in_native(open_: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The oldest open entry that the main thread waits in from inside an installed
    package's call into C++, as DDP's reducer does (its bucket all_reduce inside
    ``backward``, its rebuild's broadcast inside ``_pre_forward``), with no torch.distributed
    frame on the stack. That needs: the main thread's innermost frame is a package's (not
    the user's code, not the standard library's waits: a queue, an Event) at a call, the
    thread is off the CPU, and an open entry was issued on it (or on a thread with no Python,
    as autograd's device threads). None otherwise."""
    main = threading.main_thread()
    frame = _main_frame()
    if frame is None or not _PACKAGE_FILE.search(frame.f_code.co_filename):
        return None
    lasti = frame.f_lasti
    try:
        if lasti < 0 or not dis.opname[frame.f_code.co_code[lasti]].startswith("CALL"):
            return None
    except IndexError:
        return None
    python = {str(ident) for ident in sys._current_frames()} - {str(main.ident)}
    found = [e for waiting in open_.values() for e in waiting
             if str(e.get("thread_id")) not in python]
    if not found or not _waits(main):
        return None
    entry = min(found, key=lambda e: int(e.get("time_created_ns") or 0))
    return {"op": _op_name(entry), "group": str(entry["process_group"][0]),
            "seq": int(entry["collective_seq_id"]), "source": "flight recorder",
            "file": frame.f_code.co_filename, "line": frame.f_lineno,
            "context": context(_stack(frame))}


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
    "seq", "source", "file", "line", "context"} (group and seq None where unknown); None
    when its innermost frame is not in a ``.wait()`` of a collective's Work."""
    frame = _main_frame()
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
        entry = min(entries, key=lambda e: int(e.get("time_created_ns") or 0))
        return {"op": _op_name(entry), "group": str(entry["process_group"][0]),
                "seq": int(entry["collective_seq_id"]), "source": "flight recorder",
                "context": context(_stack(frame)), **here}
    if op is None:
        return None  # no Work read and no record: nothing says it is a collective
    only = list(groups) if len(groups) == 1 else [None]
    return {"op": op, "group": only[0], "seq": None, "source": "stack",
            "context": context(_stack(frame)), **here}


def state() -> dict[str, Any] | None:
    dist = sys.modules.get("torch.distributed")
    if dist is None or not getattr(dist, "is_initialized", lambda: False)():
        return None
    groups = _groups(dist)
    open_, recorder = _flight_recorder(groups)
    current: dict[str, Any] | None = None
    here = _in_python(dist)
    if here is not None:
        name = here["group"]
        group = groups.get(name or "", {})
        waiting = open_.get(name or "")
        issued_by = context(_stack(here["frame"]))
        if waiting:  # the newest: the call on the stack issued it
            entry = waiting[-1]
            current = {"op": _op_name(entry), "seq": int(entry["collective_seq_id"]),
                       "source": "flight recorder", "context": issued_by}
        else:
            current = {"op": here["op"], "seq": group.get("counter"), "source": "stack",
                       "context": issued_by}
        current.update(group=name, file=here["file"], line=here["line"])
    else:
        try:
            current = _in_native(open_) or _in_work_wait(dist, groups, open_)
        except Exception:  # reading another thread's frame: never the handler's end
            current = None
    if current is not None:
        current["desc"] = groups.get(current["group"] or "", {}).get("desc")
        current["label"] = label(current["op"], current["seq"], current["group"],
                                 current["context"])
    for name, group in groups.items():
        if group["issued"] is None:  # no recorder: the counter (it counts p2p ops too)
            group["issued"] = group["counter"]
        del group["counter"]
        waiting = open_.get(name)
        group["open"] = None
        if waiting:  # who issued it is known where the main thread waits in it
            seq = int(waiting[0]["collective_seq_id"])
            mine = current is not None and (current["group"], current["seq"]) == (name, seq)
            group["open"] = {"op": _op_name(waiting[0]), "seq": seq,
                             "context": current["context"] if current and mine else None}
    return {"current": current, "groups": groups, "recorder": recorder}
