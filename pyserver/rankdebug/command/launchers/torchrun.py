"""torchrun and ``python -m torch.distributed.run``.

Options are torch/distributed/run.py's ``get_args_parser()`` (torch 2.13): argparse
with abbreviations, each option spelled with dashes and with underscores. Options
with ``action=env`` take their default from ``PET_<DEST>`` (``PET_NPROC_PER_NODE``),
flags with ``check_env`` from ``PET_<DEST>=1``.

Entry: the first positional word. With ``-m`` it is a module and ``entry_index``
points at the module name (not at ``-m``, which is a torchrun option); with
``--no-python`` it is a program run as is; with ``--run-path`` a script run in the
agent's interpreter.
"""

from __future__ import annotations

from collections.abc import Sequence

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import (
    Setting,
    device_count,
    endpoint,
    launcher_entry,
    not_known,
    product,
    program_or_module,
    resolve_int,
    setting,
)
from rankdebug.command.options import Opt, Parsed, Spec, both, both_flag, flag, parse_options
from rankdebug.command.plan import EntryKind, LaunchPlan, NprocPerNode
from rankdebug.command.words import Word

ROW = launcher_table.BY_NAME["torchrun"]
NAME = ROW.name

OPTIONS: tuple[Opt, ...] = (
    Opt("nnodes", ("--nnodes",), help="Number of nodes, or MIN:MAX for an elastic job."),
    both("nproc_per_node", "Workers per node: an int, or auto, cpu, gpu, xpu."),
    both("rdzv_backend", "Rendezvous backend (static, c10d, etcd...)."),
    both("rdzv_endpoint", "Rendezvous endpoint, host:port."),
    both("rdzv_id", "User-defined job id for the rendezvous."),
    both("rdzv_conf", "Extra rendezvous configuration (k1=v1,k2=v2)."),
    flag("standalone", "--standalone", help="Single node: a local c10d rendezvous on a free port."),
    both("max_restarts", "Worker group restarts before failing."),
    both("monitor_interval", "Seconds between worker checks."),
    both("start_method", "spawn, fork or forkserver."),
    both("event_log_handler", "Registered event logging handler."),
    Opt("role", ("--role",), help="User-defined role of the workers."),
    flag("module", "-m", "--module", help="Run the entry as a module, like python -m."),
    both_flag("no_python", "Run the entry as a program, without python."),
    both_flag("run_path", "Run the script with runpy.run_path in the agent's interpreter."),
    both("log_dir", "Base directory for log files."),
    Opt("redirects", ("-r", "--redirects"), help="Redirect std streams into log files."),
    Opt("tee", ("-t", "--tee"), help="Tee std streams into log files and the console."),
    both("local_ranks_filter", "Show only these local ranks' logs on the console."),
    both("duplicate_stdout_filters", "Copy stdout lines matching these filters to a file."),
    both("duplicate_stderr_filters", "Copy stderr lines matching these filters to a file."),
    both("node_rank", "Rank of this node (static rendezvous)."),
    both("master_addr", "Address of node 0 (static rendezvous)."),
    both("master_port", "Port on node 0 (static rendezvous)."),
    both("local_addr", "Address of this node."),
    both("logs_specs", "torchrun.logs_specs entry point name."),
    both("numa_binding", "Bind workers to CPUs near their GPUs."),
    both("signals_to_handle", "Signals forwarded to the workers."),
    both("shutdown_timeout", "Seconds to wait before killing workers."),
    both_flag("virtual_local_rank", "LOCAL_RANK 0 for every worker, one GPU each."),
)

SPEC = Spec(NAME, OPTIONS, abbrev=True, argparse=True)

_DEVICE_WORDS = ("auto", "gpu", "cpu")


def matches(argv: Sequence[Word]) -> int | None:
    return program_or_module(argv, ROW)


def parse(ctx: Context, start: int) -> None:
    parse_torch(ctx, start, SPEC)


def _check_env(ctx: Context, parsed: Parsed, name: str) -> bool:
    """A ``check_env`` flag: given, or ``PET_<NAME>`` set to a non-zero number."""
    if parsed.has(name):
        return True
    word = ctx.env.get("PET_" + name.upper())
    if word is None:
        return False
    if word.value is None:
        not_known(ctx.plan, f"PET_{name.upper()}", word)
        return False
    text = word.value.strip()
    return text.lstrip("-").isdigit() and int(text) != 0


def parse_torch(ctx: Context, start: int, spec: Spec) -> None:
    """torchrun's semantics, shared with torch.distributed.launch."""
    plan = ctx.plan
    parsed = parse_options(plan, plan.argv, start, spec)
    numbers_of(ctx, parsed)

    kind: EntryKind = "script"
    if parsed.has("run_path") or _check_env(ctx, parsed, "run_path"):
        kind = "script"
    elif parsed.has("no_python") or _check_env(ctx, parsed, "no_python"):
        kind = "cli"
        if parsed.has("module"):
            use = parsed.get("module")
            plan.warn("--no-python and --module cannot be used together",
                      use.record.span if use else None, code="conflict", severity="error")
    elif _check_env(ctx, parsed, "module"):
        kind = "module"
    launcher_entry(plan, parsed, spec.tool, kind)


def numbers_of(ctx: Context, parsed: Parsed) -> None:
    """The plan's numbers and rendezvous from torchrun's options as read (``parsed``) and
    its ``PET_*`` variables."""
    plan = ctx.plan
    standalone = _check_env(ctx, parsed, "standalone")
    nnodes_set = setting(ctx, parsed, "nnodes", "PET_NNODES")
    if standalone:
        plan.nnodes = 1
        if nnodes_set is not None and nnodes_set.word is not None and (
            nnodes_set.word.value not in ("1", "1:1")
        ):
            plan.warn(
                f"--standalone runs a single node; {nnodes_set.label} {nnodes_set.word.display} "
                "does not match",
                nnodes_set.word.span,
                code="conflict",
            )
    else:
        _nnodes(plan, parsed, nnodes_set)

    per_node = _nproc(ctx, parsed, setting(ctx, parsed, "nproc_per_node", "PET_NPROC_PER_NODE"))

    plan.node_rank = resolve_int(plan, setting(ctx, parsed, "node_rank", "PET_NODE_RANK"),
                                 parsed, 0, "--node-rank")
    plan.world_size = product(plan.nnodes, per_node)

    backend = setting(ctx, parsed, "rdzv_backend", "PET_RDZV_BACKEND")
    rdzv = setting(ctx, parsed, "rdzv_endpoint", "PET_RDZV_ENDPOINT")
    if not standalone:
        if rdzv is not None and rdzv.word is not None and rdzv.word.display:
            endpoint(plan, rdzv.word)
        else:
            addr = setting(ctx, parsed, "master_addr", "PET_MASTER_ADDR")
            port = setting(ctx, parsed, "master_port", "PET_MASTER_PORT")
            plan.master_addr = addr.word if addr else None
            plan.master_port = port.word if port else None
        if (
            backend is not None
            and backend.word is not None
            and backend.word.value not in (None, "static")
            and plan.nnodes != 1
            and not parsed.has("node_rank")
        ):
            plan.warn(
                f"with the {backend.word.value} rendezvous, node ranks are assigned when "
                "the nodes meet",
                backend.word.span,
                severity="info",
                code="rendezvous",
            )


def numbers_from(ctx: Context, nnodes: Setting | None, nproc: Setting | None,
                 node_rank: Setting | None) -> None:
    """torchrun's numbers from values another tool hands it as torchrun's options (ms-swift
    passes NPROC_PER_NODE, NNODES and NODE_RANK on); an option not handed on falls back on
    torchrun's ``PET_*`` variable, then on its default."""
    plan = ctx.plan
    none = Parsed(start=0, end=0)
    _nnodes(plan, none, nnodes or setting(ctx, none, "nnodes", "PET_NNODES"))
    per_node = _nproc(ctx, none, nproc or setting(ctx, none, "nproc_per_node",
                                                  "PET_NPROC_PER_NODE"))
    plan.node_rank = resolve_int(plan, node_rank or setting(ctx, none, "node_rank",
                                                            "PET_NODE_RANK"),
                                 none, 0, "--node-rank")
    plan.world_size = product(plan.nnodes, per_node)


def _nnodes(plan: LaunchPlan, parsed: Parsed, found: Setting | None) -> None:
    if found is None:
        plan.nnodes = resolve_int(plan, None, parsed, 1, "--nnodes")
        return
    word = found.word
    if word is None:
        return
    text = word.value
    if text is None:
        not_known(plan, found.label, word)
        return
    parts = text.strip().split(":")
    if len(parts) == 1 and parts[0].isdigit():
        plan.nnodes = int(parts[0])
    elif len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
        low, high = int(parts[0]), int(parts[1])
        if low == high:
            plan.nnodes = low
        else:
            plan.nnodes_range = (low, high)
            plan.warn(
                f"{found.label} {text} is elastic: between {low} and {high} nodes may join, "
                "so the world size is decided at run time",
                word.span,
            )
    else:
        plan.warn(f"{found.label} is {text!r}, which is neither N nor MIN:MAX", word.span,
                  code="bad-value")


def _nproc(ctx: Context, parsed: Parsed, found: Setting | None) -> int | None:
    """Set plan.nproc_per_node from ``found``; return the per-node count when it is known."""
    plan = ctx.plan
    if found is None:
        n = resolve_int(plan, None, parsed, 1, "--nproc-per-node")
        plan.nproc_per_node = n
        return n
    word = found.word
    if word is None:
        return None
    if word.value is None:
        not_known(plan, found.label, word)
        return None
    value = word.value.strip()
    if value.isdigit():
        plan.nproc_per_node = int(value)
        return int(value)
    if value not in _DEVICE_WORDS and not value.isidentifier():
        # torch's determine_local_world_size: an int, or a device kind's name.
        plan.warn(f"{found.label} {value} is not a count: torchrun takes a number, or a "
                  "device kind (auto, cpu, gpu, xpu ...), and refuses anything else",
                  word.span, code="bad-value", severity="error")
        return None
    if value not in _DEVICE_WORDS:
        plan.warn(f"{found.label} {value} counts devices that cannot be seen from here",
                  word.span)
        return None
    return _per_device(ctx, found.label, value, word)


def _per_device(ctx: Context, label: str, value: str, word: Word) -> int | None:
    """``--nproc-per-node auto|gpu|cpu``: the worker count when the devices are known."""
    plan = ctx.plan
    nproc: NprocPerNode = "auto" if value == "auto" else "gpu" if value == "gpu" else "cpu"
    plan.nproc_per_node = nproc
    if value == "cpu":
        plan.warn(f"{label} cpu starts one worker per CPU core, and the core count is "
                  "not known", word.span)
        return None
    count = device_count(ctx, f"{label} {value}", word.span)
    if count == 0:
        if value == "gpu":
            plan.warn(f"{label} gpu, but no GPU is visible: torchrun will fail",
                      word.span, severity="error", code="no-devices")
        else:
            plan.warn(f"{label} auto with no visible GPU starts one worker per CPU core, "
                      "and the core count is not known", word.span)
        return None
    return count
