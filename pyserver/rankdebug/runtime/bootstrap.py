"""The in-rank bootstrap: copied as ``sitecustomize.py`` into a folder on the job's PYTHONPATH.

It runs at the start of every Python process of a debugged job and decides, from the
environment alone, whether this process is a rank, and whether it is a chosen one:

1. no ``RANKDEBUG_JOB``, or a process started by a rank as that same rank (DataLoader
   worker, spawned helper, subprocess: ``RANKDEBUG_ACTED`` names another pid and its rank
   variables name the rank that acted, ``RANKDEBUG_ACTED_RANK``): do nothing but chain to
   the sitecustomize it shadows; a copy a rank starts of itself as another rank (Lightning's
   subprocess launcher: ``LOCAL_RANK=1`` in rank 0's copy) is that rank, and acts; no rank
   variable (the launcher's own agent): only make a stop read as one line
   (``install_quiet_stop``);
2. any rank: install the collective-timeout guard (an import hook that patches
   ``torch.distributed`` when the script imports it; torch itself is not imported here);
3. a chosen rank only: import ``rankdebug.runtime.debug``, which starts debugpy;
4. with ``RANKDEBUG_ARM`` (``rankdebug launch --arm``), every rank: serve a control socket
   in the job's folder (``rankdebug.runtime.handler``: attach, eval, stacks on request);
5. every rank that is not chosen (armed or not): hold an uncaught exception for inspection
   (``sys.excepthook`` and ``threading.excepthook``; ``rankdebug.runtime.hold``, imported
   only when an exception comes; ``RANKDEBUG_HOLD=0`` turns it off).

Unchosen ranks of a job that is not armed import nothing: this file uses only modules
every interpreter has loaded before ``site`` runs (``sys``, ``os`` and the frozen import machinery).
Pure Python, 3.9 and later.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # no `typing` import at run time: unchosen ranks import nothing
    from collections.abc import Callable, Mapping, MutableMapping
    from typing import Any

# Rank variables, per launcher family: "RANK/LOCAL_RANK/WORLD_SIZE" triples, tried in order;
# "A|B": A, else B. The one table of them: the debug plan (which families a launcher's ranks
# use) and the job scan read it from here. The supervisor narrows them with
# RANKDEBUG_RANKVARS so a launcher's agent is never taken for a rank (under srun,
# torchrun's agent has SLURM_PROCID but no RANK).
TORCH_VARS = "RANK/LOCAL_RANK/WORLD_SIZE"
MPI_VARS = (
    "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_LOCAL_RANK/OMPI_COMM_WORLD_SIZE,"
    "PMIX_RANK/MPI_LOCALRANKID/PMI_SIZE,"
    "PMI_RANK/MPI_LOCALRANKID/PMI_SIZE"
)
SLURM_VARS = "SLURM_PROCID/SLURM_LOCALID/SLURM_NTASKS"
MINDSPORE_VARS = "RANK_ID/LOCAL_RANK|DEVICE_ID/RANK_SIZE"  # msrun
DEFAULT_RANKVARS = f"{TORCH_VARS},{MPI_VARS}"

_ACTED = "RANKDEBUG_ACTED"  # the pid of the rank process that acted
_ACTED_RANK = "RANKDEBUG_ACTED_RANK"  # the rank it acted as
_TOP = "RANKDEBUG_TOP"  # the pid of the job's first Python process without a rank


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    # ASCII digits only, and few of them: int() of 5,000 digits raises, and a rank's
    # variables must never stop it.
    if text.isascii() and text.isdigit() and len(text) <= 18:
        return int(text)
    return None


def first_number(env: Mapping[str, str], names: str) -> int | None:
    """The first of ``A|B|…`` that the environment sets to a number."""
    for name in names.split("|"):
        value = _int(env.get(name)) if name else None
        if value is not None:
            return value
    return None


def detect_rank(env: Mapping[str, str]) -> tuple[int, int | None, int | None] | None:
    """(rank, local_rank, world_size) of this process from the launcher's variables, or None.

    ``RANKDEBUG_RANKVARS`` lists ``RANK/LOCAL/SIZE`` triples; a triple whose rank name is
    ``=N`` means "rank N when nothing else says" (plain ``python`` runs are rank 0).
    """
    spec = env.get("RANKDEBUG_RANKVARS") or DEFAULT_RANKVARS
    for triple in spec.split(","):
        names = [*triple.split("/"), "", ""][:3]
        if names[0].startswith("=") and names[0].endswith("^"):
            # "=N^": rank N in a process the job's first Python process started (a launcher
            # that runs the one rank in a child python: accelerate's simple launcher).
            top = env.get(_TOP)
            fixed = _int(names[0][1:-1])
            if fixed is not None and top and top != str(os.getpid()):
                return fixed, fixed, 1
            continue
        if names[0].startswith("="):
            fixed = _int(names[0][1:])
            if fixed is not None:
                return fixed, fixed, None
            continue
        rank = first_number(env, names[0])
        if rank is None:
            continue
        return rank, first_number(env, names[1]), first_number(env, names[2])
    return None


def helper_of_rank(env: Mapping[str, str], pid: int) -> bool:
    """Whether the process with ``env`` was started by a rank as that same rank (a DataLoader
    worker, a subprocess: the rank already acted for it). A process a rank started whose rank
    variables name another rank is a rank itself: Lightning's ``_SubprocessScriptLauncher``
    re-runs the script from rank 0 with ``LOCAL_RANK``, ``NODE_RANK`` and ``WORLD_SIZE`` set
    for the copy, which inherits the rest of rank 0's environment, this variable included."""
    acted = env.get(_ACTED)
    if not acted or acted == str(pid):
        return False
    found = detect_rank(env)
    return found is None or str(found[0]) == env.get(_ACTED_RANK, str(found[0]))


def rank_chosen(spec: str, rank: int, local_rank: int | None) -> bool:
    """Whether ``rank`` is picked by ``spec``: ``all``, ``N``, ``A-B``, ``localN``, comma-joined."""
    for raw in spec.split(","):
        item = raw.strip().lower()
        if not item:
            continue
        if item == "all":
            return True
        if item.startswith("local"):
            want = _int(item[5:])
            if want is not None and local_rank == want:
                return True
            continue
        if "-" in item:
            lo_text, _, hi_text = item.partition("-")
            lo, hi = _int(lo_text), _int(hi_text)
            if lo is not None and hi is not None and lo <= rank <= hi:
                return True
            continue
        if _int(item) == rank:
            return True
    return False


# --- collective-timeout guard ----------------------------------------------------------

_C10D = "torch.distributed.distributed_c10d"
# Functions of distributed_c10d that take a ``timeout`` argument that bounds collectives.
_TIMEOUT_FUNCS = (
    "init_process_group",
    "new_group",
    "_new_group_with_tag",
    "new_subgroups",
    "new_subgroups_by_enumeration",
    "split_group",
    "monitored_barrier",
    "_set_pg_timeout",
)


class AfterImport:
    """A meta-path finder that waits for the module ``name`` and runs ``then(module)`` the
    moment it has loaded.

    It finds nothing itself: for ``name`` it asks the other finders, and wraps the found
    loader's ``exec_module`` (then it leaves ``sys.meta_path``).
    """

    def __init__(self, name: str, then: Callable[[Any], None]) -> None:
        self.name = name
        self.then = then

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != self.name:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        loader = getattr(spec, "loader", None)
        if loader is None or isinstance(loader, type) or not hasattr(loader, "exec_module"):
            return spec  # no loader, or one shared by many modules (frozen, built-in)
        run = loader.exec_module
        then = self.then
        wanted = self.name

        def exec_module(module: Any) -> None:
            run(module)
            if getattr(module, "__name__", None) == wanted:
                then(module)

        try:  # noqa: SIM105 (contextlib is not loaded yet: unchosen ranks import nothing)
            loader.exec_module = exec_module
        except (AttributeError, TypeError):
            pass  # a loader that refuses attributes: nothing done
        return spec


class GuardFinder(AfterImport):
    """Waits for torch's c10d module and raises its timeouts (before ``torch.distributed``
    copies its functions)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(_C10D, lambda module: patch_c10d(module, seconds))


def patch_c10d(module: Any, seconds: float) -> None:
    """Raise every process-group timeout of torch's c10d module to at least ``seconds``."""
    import datetime
    import functools
    import inspect

    floor = datetime.timedelta(seconds=seconds)

    def raised(value: Any) -> Any:
        if value is None:
            return floor
        if isinstance(value, datetime.timedelta) and value < floor:
            return floor
        return value

    default = getattr(module, "_get_default_timeout", None)
    if callable(default) and not getattr(default, "__rankdebug_guard__", False):
        module._get_default_timeout = _wrap_result(default, raised, functools)

    for name in _TIMEOUT_FUNCS:
        fn = getattr(module, name, None)
        if not callable(fn) or getattr(fn, "__rankdebug_guard__", False):
            continue
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            continue
        if "timeout" in params:
            setattr(module, name, _wrap_timeout(fn, params.index("timeout"), raised, functools))


def _wrap_result(fn: Callable[..., Any], raised: Callable[[Any], Any], functools: Any) -> Any:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        return raised(fn(*args, **kwargs))

    guarded = functools.wraps(fn)(guarded)
    guarded.__rankdebug_guard__ = True  # type: ignore[attr-defined]
    return guarded


def _wrap_timeout(
    fn: Callable[..., Any], index: int, raised: Callable[[Any], Any], functools: Any
) -> Any:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if len(args) > index:
            args = (*args[:index], raised(args[index]), *args[index + 1 :])
        else:
            kwargs["timeout"] = raised(kwargs.get("timeout"))
        return fn(*args, **kwargs)

    guarded = functools.wraps(fn)(guarded)
    guarded.__rankdebug_guard__ = True  # type: ignore[attr-defined]
    return guarded


def install_guard(seconds: float) -> None:
    """Arm the guard: patch c10d when it loads, or now if it already has."""
    module = sys.modules.get(_C10D)
    if module is not None:
        patch_c10d(module, seconds)
        return
    if not any(isinstance(f, GuardFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, GuardFinder(seconds))


# --- holding an uncaught exception ---------------------------------------------------


def hold_enabled(env: Mapping[str, str]) -> bool:
    """``RANKDEBUG_HOLD`` is unset, or anything but 0/false/no/off."""
    return env.get("RANKDEBUG_HOLD", "1").strip().lower() not in ("0", "false", "no", "off")


def watch_uncaught(start: Any) -> None:
    """Once debugpy is loaded, its stops at an uncaught exception are listed as held ranks
    for the command line (``hold.watch_debugger``). Registered, not imported: hold is loaded
    only when debugpy is (hold imports debug, so debug cannot import it back)."""
    if _watch_debugger not in start.after_debugpy:  # ``runtime.debugpy_start``
        start.after_debugpy.append(_watch_debugger)


def _watch_debugger() -> None:
    from rankdebug.runtime import hold

    hold.watch_debugger()


def install_hold(rank: int, local_rank: int | None, world_size: int | None) -> None:
    """Hold this rank at an uncaught exception (``rankdebug.runtime.hold``): the hooks are
    set now, at no cost; the module is imported only when an exception reaches them."""
    where = (rank, local_rank, world_size, os.getpid())
    previous = sys.excepthook

    def excepthook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        try:
            from rankdebug.runtime import hold
        except Exception:
            previous(kind, value, tb)
            return
        hold.on_uncaught(previous, kind, value, tb, where)

    sys.excepthook = excepthook
    threading = sys.modules.get("threading")
    if threading is not None:
        hook_threads(threading, where)
    else:
        sys.meta_path.insert(0, AfterImport("threading", lambda m: hook_threads(m, where)))


def hook_threads(threading: Any, where: tuple[int, int | None, int | None, int]) -> None:
    """Hold another thread's uncaught exception too (``threading.excepthook``)."""
    previous = threading.excepthook

    def thread_excepthook(args: Any) -> None:
        try:
            from rankdebug.runtime import hold
        except Exception:
            previous(args)
            return
        hold.on_thread_uncaught(previous, args, where)

    threading.excepthook = thread_excepthook


def install_quiet_stop() -> None:
    """In a launcher's own process: torch elastic's agent (torchrun, ``accelerate launch``)
    turns SIGTERM/SIGINT into a ``SignalException`` whose 25-line traceback is all a user
    sees of a stop. It ends with one line instead; any other exception prints as usual."""
    previous = sys.excepthook

    def excepthook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        if kind.__name__ != "SignalException":
            previous(kind, value, tb)
            return
        name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "launcher"
        sys.stderr.write(f"rankdebug: {name} (pid {os.getpid()}) stopped: {value}\n")

    sys.excepthook = excepthook


# --- chaining -------------------------------------------------------------------------


def chain_sitecustomize(here: str) -> None:
    """Run the ``sitecustomize`` this file shadows (the next one on sys.path), if any."""
    bootstrap = sys.modules.get("_frozen_importlib")
    external = sys.modules.get("_frozen_importlib_external")
    if bootstrap is None or external is None:
        return
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = external.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = bootstrap.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # what site.py would do with a broken sitecustomize
        sys.stderr.write(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{exc!r}\n")


# --- entry ----------------------------------------------------------------------------


def act(env: MutableMapping[str, str]) -> None:
    """Everything the bootstrap does in one process (see the module docstring)."""
    if not env.get("RANKDEBUG_JOB"):
        return
    if helper_of_rank(env, os.getpid()):
        return  # started by a rank as that rank: its parent already acted
    found = detect_rank(env)
    if found is None:  # the launcher's own process
        env.setdefault(_TOP, str(os.getpid()))
        install_quiet_stop()
        return
    rank, local_rank, world_size = found
    if env.get("RANKDEBUG_TRACE_FILE"):
        from rankdebug.runtime import marks

        marks.mark(f"rank {rank}", "boot")
    env[_ACTED] = str(os.getpid())
    env[_ACTED_RANK] = str(rank)
    try:
        seconds = float(env.get("RANKDEBUG_TIMEOUT", "86400") or "0")
    except ValueError:
        seconds = 86400.0
    if not 0 <= seconds <= 1e9:  # nan, inf and negatives: the default, not a crash
        seconds = 86400.0
    if seconds > 0:
        install_guard(seconds)
    chosen = rank_chosen(env.get("RANKDEBUG_RANKS", ""), rank, local_rank)
    armed = env.get("RANKDEBUG_ARM", "")
    if not chosen and hold_enabled(env):
        install_hold(rank, local_rank, world_size)  # chosen ranks have their debugger
    if not chosen and not armed:
        return
    try:
        from rankdebug.runtime import debug, debugpy_start

        watch_uncaught(debugpy_start)
        debug.prepare(rank, local_rank, world_size, chosen=chosen)
        if armed:
            debug.serve_handler(armed=True)  # in RANKDEBUG_ARM
        if chosen:
            debug.start(rank, local_rank, world_size)
    except Exception as exc:  # guest code: the script runs on, without a debugger
        sys.stderr.write(f"rankdebug: rank {rank}: cannot start the debugger: {exc!r}\n")


if __name__ == "sitecustomize":
    try:
        act(os.environ)
    finally:
        chain_sitecustomize(os.path.dirname(os.path.abspath(__file__)))
