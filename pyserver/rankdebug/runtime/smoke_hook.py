"""The smoke run's hook: copied as ``sitecustomize.py`` into the ``boot`` folder of a smoke
command's private folder, which the smoke command puts first on PYTHONPATH. It makes the
smoke run's claims hold where the script's own knobs cannot be set from outside:

- ``RANKDEBUG_SMOKE_STEPS=N``: every torch optimizer's steps are counted (torch's global
  step hooks); before a step past the N-th, the rank ends (exit 0, after a barrier with its
  peers when it has a process group). A script whose own limit ends it first never meets it.
  The rank ends as a ``SystemExit`` (the script's ``finally`` blocks and atexit handlers
  run) after its process groups are destroyed, then leaves before the interpreter's
  teardown: gloo's threads torn down there can abort a rank ("terminate called without an
  active exception", seen under load, pytorch/pytorch#190489), and a smoke run that stops
  itself must end with 0. Under ``rankdebug launch`` the rank-side exit handlers registered
  before this hook run first (they tell the supervisor the rank finished).
- ``RANKDEBUG_SMOKE_TRAINING_ARGS`` (a JSON object): fields set on every ``TrainingArguments``
  as it is made, before its ``__post_init__`` checks them, for a script that builds its
  arguments in code (``max_steps``, ``output_dir``, ``save_strategy``...).

Each effect is said once, on rank 0, as it happens. Then the ``sitecustomize`` this file
shadows runs (the next one on sys.path after this folder). Self-contained (the job's
interpreter may have no rankdebug), stdlib only, and it imports nothing until the script
imports torch's optimizers or transformers' TrainingArguments. Pure Python, 3.9 and later.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # no `typing` import at run time
    from collections.abc import Callable
    from typing import Any

STEPS = "RANKDEBUG_SMOKE_STEPS"
TRAINING_ARGS = "RANKDEBUG_SMOKE_TRAINING_ARGS"
_OPTIMIZER = "torch.optim.optimizer"
_TRAINING_ARGS_MODULE = "transformers.training_args"
# How long a stopping rank waits for its peers to stop too (they stop at the same step).
BARRIER_S = 60.0


def say(text: str) -> None:
    """One line on stderr, from rank 0 only (every rank does the same)."""
    if os.environ.get("RANK", "0").strip() in ("0", ""):
        sys.stderr.write(f"rankdebug smoke: {text}\n")
        sys.stderr.flush()


class AfterImport:
    """A meta-path finder that runs ``then(module)`` once module ``name`` has loaded: it finds
    nothing itself, it wraps the loader the other finders give (then leaves sys.meta_path)."""

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
            if find is not None:
                spec = find(name, path, target)
                if spec is not None:
                    break
        loader = getattr(spec, "loader", None)
        if loader is None or isinstance(loader, type) or not hasattr(loader, "exec_module"):
            return spec  # a loader shared by many modules (frozen, built-in): left alone
        run, then, wanted = loader.exec_module, self.then, self.name

        def exec_module(module: Any) -> None:
            run(module)
            if getattr(module, "__name__", None) == wanted:
                then(module)

        try:  # noqa: SIM105 (contextlib is not loaded this early)
            loader.exec_module = exec_module
        except (AttributeError, TypeError):
            pass
        return spec


def after_import(name: str, then: Callable[[Any], None]) -> None:
    module = sys.modules.get(name)
    if module is not None:
        then(module)
    else:
        sys.meta_path.insert(0, AfterImport(name, then))


# --- the step limit ---------------------------------------------------------------------


class StepLimit:
    """Counts each optimizer's steps; stops the rank before a step past ``limit``."""

    def __init__(self, limit: int) -> None:
        import atexit
        import weakref

        self.limit = limit
        self.done: Any = weakref.WeakKeyDictionary()  # optimizer -> its steps so far
        self.stopped = False
        # Registered before anything else: it runs after every other atexit handler.
        atexit.register(self.leave)

    def install(self, module: Any) -> None:
        pre = getattr(module, "register_optimizer_step_pre_hook", None)
        post = getattr(module, "register_optimizer_step_post_hook", None)
        if pre is None or post is None:
            say(f"this torch has no optimizer step hooks: {STEPS} cannot stop the run")
            return
        pre(self.before)
        post(self.after)

    def before(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self.done.get(optimizer, 0) >= self.limit:
            self.stop()

    def after(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self.done[optimizer] = self.done.get(optimizer, 0) + 1

    def stop(self) -> None:
        say(f"{self.limit} optimizer step{'s' if self.limit != 1 else ''} done: the smoke run "
            f"ends the job here ({STEPS}={self.limit}; the script would step on)")
        sys.stdout.flush()
        dist = sys.modules.get("torch.distributed")
        try:  # no peer is left inside a collective when this rank's process goes
            if dist is not None and dist.is_available() and dist.is_initialized():
                import datetime

                work = dist.barrier(async_op=True)
                if work is not None:
                    work.wait(timeout=datetime.timedelta(seconds=BARRIER_S))
                dist.destroy_process_group()  # its threads end while Python is whole
        except Exception:  # a peer that does not come: end anyway
            pass
        self.stopped = True
        raise SystemExit(0)

    def leave(self) -> None:
        """At exit after a stop: skip the interpreter's teardown (see the module's doc)."""
        if not self.stopped or not run_earlier_handlers():
            return
        for stream in (sys.stdout, sys.stderr):
            try:  # noqa: SIM105 (contextlib is not loaded this early)
                stream.flush()
            except Exception:
                pass
        os._exit(0)


# Exit handlers the rank side of ``rankdebug launch`` registers before this hook runs (so
# they would run after it): its bootstrap runs first on PYTHONPATH, then chains to this file.
_EARLIER_HANDLERS = (("rankdebug.runtime.debug", "_at_exit"), ("rankdebug.runtime.handler", "stop"))


def run_earlier_handlers() -> bool:
    """Run those of them this process has, once; False when one cannot be found (then the
    interpreter's own exit runs them, teardown and all)."""
    import atexit

    for module_name, name in _EARLIER_HANDLERS:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        handler = getattr(module, name, None)
        if not callable(handler):
            return False
        atexit.unregister(handler)
        try:
            handler()
        except Exception as exc:  # what atexit does with a failing handler
            sys.stderr.write(f"rankdebug smoke: exit handler {module_name}.{name}: {exc!r}\n")
    return True


def steps_limit(text: str | None) -> int | None:
    value = (text or "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


# --- TrainingArguments built in code ---------------------------------------------------


def patch_training_args(module: Any, values: dict[str, Any]) -> None:
    """Set ``values`` on every TrainingArguments (subclasses included) before its checks."""
    cls = getattr(module, "TrainingArguments", None)
    original = getattr(cls, "__post_init__", None)
    if cls is None or original is None or getattr(original, "__rankdebug_smoke__", False):
        return
    said: list[bool] = []

    def post_init(self: Any) -> None:
        names = getattr(type(self), "__dataclass_fields__", {})
        applied = {k: v for k, v in values.items() if k in names}
        for name, value in applied.items():
            setattr(self, name, value)
        if applied and not said:
            said.append(True)
            listed = ", ".join(f"{k}={v}" for k, v in applied.items())
            say(f"{type(self).__name__} set at run time (the script builds it in code): {listed}")
        original(self)

    post_init.__rankdebug_smoke__ = True  # type: ignore[attr-defined]
    post_init.__name__ = post_init.__qualname__ = "__post_init__"
    cls.__post_init__ = post_init


def training_args(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    import json

    try:
        values = json.loads(text)
    except ValueError:
        say(f"{TRAINING_ARGS} is not a JSON object: left out")
        return None
    return values if isinstance(values, dict) and values else None


# --- chaining and entry ------------------------------------------------------------------


def chain_sitecustomize(here: str) -> None:
    """Run the ``sitecustomize`` this file shadows: the first one on sys.path after this
    folder (a folder before it, such as ``rankdebug launch``'s boot folder, ran already)."""
    bootstrap = sys.modules.get("_frozen_importlib")
    external = sys.modules.get("_frozen_importlib_external")
    if bootstrap is None or external is None:
        return
    paths = [os.path.abspath(p or os.curdir) for p in sys.path]
    rest = sys.path[paths.index(here) + 1:] if here in paths else sys.path
    spec = external.PathFinder.find_spec("sitecustomize", [p for p in rest if p])
    if spec is None or spec.loader is None:
        return
    module = bootstrap.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # what site.py does with a broken sitecustomize
        sys.stderr.write(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{exc!r}\n")


def act(env: dict[str, str] | Any) -> None:
    limit = steps_limit(env.get(STEPS))
    if limit is not None:
        after_import(_OPTIMIZER, StepLimit(limit).install)
    values = training_args(env.get(TRAINING_ARGS))
    if values is not None:
        after_import(_TRAINING_ARGS_MODULE, lambda m: patch_training_args(m, values))


if __name__ == "sitecustomize":
    try:
        act(os.environ)
    except Exception as exc:  # guest code: the script runs on without the hook
        sys.stderr.write(f"rankdebug smoke: the hook is off: {exc!r}\n")
    finally:
        chain_sitecustomize(os.path.dirname(os.path.abspath(__file__)))
