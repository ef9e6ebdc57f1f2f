"""Scripts whose Lightning ``Trainer(...)`` or ``Fabric(...)`` starts the ranks: ``python
train.py`` with ``Trainer(devices=4, strategy="ddp")``, and the same script under ``srun``.

Read from the script's source (``ast``; literal keyword arguments only): ``devices``
(default ``"auto"``), ``num_nodes`` (1), ``strategy`` (``"auto"``), ``accelerator``
(``"auto"``). Lightning-AI/pytorch-lightning:

- src/lightning/fabric/strategies/launchers/subprocess_script.py: with more than one device
  and a DDP-like strategy (``auto``, ``ddp``, ``fsdp``, ``deepspeed``...), the script's own
  process is local rank 0 and re-runs the script once per other device with ``LOCAL_RANK``,
  ``NODE_RANK`` and ``WORLD_SIZE`` in the child's environment (no ``RANK``); ``NODE_RANK``
  comes from the environment (default 0). Each copy inherits the rest of rank 0's
  environment, the bootstrap's ``RANKDEBUG_ACTED`` included: the bootstrap takes a copy whose
  LOCAL_RANK names another rank for that rank, not for rank 0's helper.
- ``*_spawn``, ``*_fork`` and ``*_notebook`` strategies start workers with
  ``torch.multiprocessing``, each given its rank as an argument: none in its environment.
- src/lightning/fabric/plugins/environments/slurm.py: under ``srun`` the tasks are the ranks
  (``SLURM_PROCID``, ``SLURM_NTASKS``) and ``validate_settings`` raises when
  ``SLURM_NTASKS_PER_NODE`` is not ``devices`` or ``SLURM_NNODES`` is not ``num_nodes``;
  ``--ntasks`` above 1 without ``--ntasks-per-node`` raises too; a job named ``bash`` or
  ``interactive`` is not taken for a Slurm job (Lightning starts its own processes).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from rankdebug import launcher_table
from rankdebug.command.launchers.base import Context
from rankdebug.command.launchers.common import count_visible, load_yaml_mapping, visible_var
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Span, Word

ROW = launcher_table.BY_NAME["lightning"]
NAME = ROW.name

# A keyword whose value is not a literal (``devices=args.devices``).
_UNREAD = object()
_MP = ("spawn", "fork", "notebook")


@dataclass(frozen=True)
class Call:
    """A ``Trainer(...)`` or ``Fabric(...)`` call of a script, as written."""

    kind: str  # "Trainer" or "Fabric"
    line: int  # 1-based, in the script
    devices: object
    num_nodes: object
    strategy: object
    accelerator: object


def matches(argv: Sequence[Word]) -> int | None:
    return None  # told from the script's source: see python.py


def parse(ctx: Context, start: int) -> None:
    """The script at ``argv[start - 1]`` (python.py hands it here by its source)."""
    script = ctx.plan.argv[start - 1]
    source = ctx.read_text(script.value) if script.value is not None else None
    call = find_call(source) if source is not None else None
    if call is not None:
        plan_script(ctx, call, script)


def find_call(source: str) -> Call | None:
    """The script's first ``Trainer(...)``/``Fabric(...)`` call in a script that imports
    Lightning; None when there is none or the script does not parse."""
    if "lightning" not in source:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names, modules = _lightning_names(tree)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and _is_lightning(node.func, names, modules)]
    if not calls:
        return None
    node = min(calls, key=lambda n: (n.lineno, n.col_offset))
    if any(k.arg is None for k in node.keywords):  # **options: any of them (both take
        # keywords only)
        unread: dict[str, object] = dict.fromkeys(("devices", "num_nodes", "strategy",
                                                   "accelerator"), _UNREAD)
    else:
        unread = {}
    values = {k.arg: _literal(k.value) for k in node.keywords if k.arg is not None}
    if _callee(node.func) == "LightningCLI":  # its Trainer's defaults; the command line's later
        defaults = values.get("trainer_defaults", {})
        values = ({str(k): v for k, v in defaults.items()} if isinstance(defaults, dict)
                  else dict.fromkeys(("devices", "num_nodes", "strategy", "accelerator"),
                                     _UNREAD))

    def get(name: str, default: object) -> object:
        return values.get(name, unread.get(name, default))

    return Call(_callee(node.func) or "", node.lineno, get("devices", "auto"),
                get("num_nodes", 1), get("strategy", "auto"), get("accelerator", "auto"))


_PACKAGES = ("lightning", "pytorch_lightning", "lightning_fabric")
_CLASSES = ("Trainer", "Fabric", "LightningCLI")


def _lightning_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound to Lightning's Trainer/Fabric (``from lightning import Trainer as T``) and
    to its modules (``import lightning as L``, ``import pytorch_lightning``)."""
    names: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and (
                node.module.split(".")[0] in _PACKAGES):
            for alias in node.names:
                if alias.name in _CLASSES:
                    names.add(alias.asname or alias.name)
                else:  # from lightning import pytorch as pl
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in _PACKAGES:
                    modules.add(alias.asname or alias.name.split(".")[0])
    return names, modules


def _is_lightning(func: ast.expr, names: set[str], modules: set[str]) -> bool:
    """``Trainer(...)`` imported from Lightning, or ``L.Trainer(...)``/``pl.Fabric(...)`` on a
    Lightning module (not Hugging Face's Trainer)."""
    if isinstance(func, ast.Name):
        return func.id in names
    if not isinstance(func, ast.Attribute) or func.attr not in _CLASSES:
        return False
    root: ast.expr = func.value
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id in modules


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Call):  # DDPStrategy(start_method="spawn"): its launcher
        name = _callee(node.func) or ""
        method = next((k.value for k in node.keywords if k.arg == "start_method"), None)
        start = _literal(method) if method is not None else "popen"
        return f"{name}:{start}"
    return _UNREAD


def _strategy_kind(strategy: object) -> str | None:
    """"mp" (torch.multiprocessing), "script" (the subprocess launcher), None (unread)."""
    if not isinstance(strategy, str):
        return None
    text = strategy.lower()
    if any(word in text for word in _MP):
        return "mp"
    return "script"


def devices_count(ctx: Context, call: Call, where: str, span: Span) -> int | None:
    """Processes per node as Lightning counts ``devices``; None with a warning."""
    plan = ctx.plan
    devices, accel = call.devices, call.accelerator
    if devices is _UNREAD:
        plan.warn(f"{where}: devices is not known here (not a literal), so neither is the "
                  "number of processes", span)
        return None
    if isinstance(devices, bool) or devices in ([], (), "", 0):
        plan.warn(f"{where}: devices={devices!r} starts no process (Lightning refuses it)",
                  span, code="bad-value", severity="error")
        return None
    if isinstance(devices, int) and devices > 0:
        return devices
    if isinstance(devices, str) and devices.strip().isdigit() and int(devices) > 0:
        return int(devices)
    if isinstance(devices, (list, tuple)):
        return len(devices) or None
    if isinstance(devices, str) and "," in devices:
        return len([d for d in devices.split(",") if d.strip()]) or None
    if accel == "cpu" and devices == "auto":
        return 1
    if devices in ("auto", -1, "-1"):
        found = visible_var(ctx)
        count = count_visible(found[1].value) if found and found[1].value else None
        if count is None:
            plan.warn(f"{where}: devices={devices!r} is every GPU of the machine, which is "
                      "known only where it runs", span)
        return count
    plan.warn(f"{where}: devices={devices!r} is not read here", span, code="bad-value")
    return None


def plan_script(ctx: Context, call: Call, script: Word) -> bool:
    """``python train.py`` whose Trainer/Fabric starts its own processes: fill the plan;
    False when the call runs in one process (the plan stays python's)."""
    plan = ctx.plan
    where = f"{script.display}:{call.line} {call.kind}(...)"
    span = script.span
    if call.kind == "LightningCLI":
        call = _cli_arguments(ctx, call, plan.entry_args)
    kind = _strategy_kind(call.strategy)
    per_node = devices_count(ctx, call, where, span)
    raw = call.num_nodes
    nodes = int(raw) if isinstance(raw, (int, str)) and not isinstance(raw, bool) and (
        str(raw).strip().isdigit() and int(raw) > 0) else None
    if per_node == 1 and nodes == 1:
        return False
    plan.launcher = NAME
    plan.nproc_per_node = per_node
    plan.nnodes = nodes
    if raw is _UNREAD:
        plan.warn(f"{where}: num_nodes is not known here (not a literal), so neither are the "
                  "nodes", span)
    elif nodes is None:
        plan.warn(f"{where}: num_nodes={raw!r} is not a number of nodes", span,
                  code="bad-value", severity="error")
    node_rank = ctx.env_value("NODE_RANK") or ctx.env_value("GROUP_RANK") or "0"
    plan.node_rank = int(node_rank) if node_rank.isdigit() else None
    plan.world_size = per_node * nodes if per_node is not None and nodes is not None else None
    if kind is None:
        shown = "not a literal" if call.strategy is _UNREAD else repr(call.strategy)
        plan.warn(f"{where}: the strategy ({shown}) is not read here, so how the processes "
                  "start is not known", span)
    elif kind == "mp":
        plan.warn(f"{where}: the {call.strategy} strategy starts its workers with "
                  "torch.multiprocessing, each given its rank as an argument, not in its "
                  "environment, so rankdebug cannot pick a rank out to debug; strategy=\"ddp\" "
                  "starts them as scripts with LOCAL_RANK set", span, code="rank-not-in-env")
    elif per_node is not None or not any(d.severity == "error" for d in plan.diagnostics):
        _children(plan, where, span, per_node)
    return True


_TRAINER_KEYS = ("devices", "num_nodes", "strategy", "accelerator")


def _cli_arguments(ctx: Context, call: Call, args: Sequence[Word]) -> Call:
    """LightningCLI's Trainer settings as jsonargparse reads them, in order: ``--config``
    (``-c``) YAML files' ``trainer:`` section, then ``--trainer.devices V`` (or ``=V``)."""
    found: dict[str, object] = {}
    i = 0
    while i < len(args):
        text = args[i].value
        name, eq, attached = (text or "").partition("=")
        value_word = None if eq else (args[i + 1] if i + 1 < len(args) else None)
        value = attached if eq else (value_word.value if value_word is not None else None)
        step = 1 if eq else 2
        if text is None:
            i += 1
            continue
        if name in ("--config", "-c"):
            trainer = _config_trainer(ctx, value)
            if trainer is None:
                ctx.plan.warn(f"the config file {value} cannot be read here; its trainer: "
                              "section may set devices and num_nodes", args[i].span,
                              code="unreadable-file")
                found.update(dict.fromkeys(_TRAINER_KEYS, _UNREAD))
            else:
                found.update({k: v for k, v in trainer.items() if k in _TRAINER_KEYS})
            i += step
            continue
        key = name.removeprefix("--trainer.")
        if name.startswith("--trainer.") and key in _TRAINER_KEYS:
            found[key] = _UNREAD if value is None else _cli_value(value)
            i += step
            continue
        i += 1
    return Call(call.kind, call.line, found.get("devices", call.devices),
                found.get("num_nodes", call.num_nodes), found.get("strategy", call.strategy),
                found.get("accelerator", call.accelerator))


def _config_trainer(ctx: Context, name: str | None) -> dict[str, object] | None:
    """The ``trainer:`` mapping of a LightningCLI config file (empty when it has none);
    None when the file cannot be read here."""
    text = ctx.read_text(name) if name else None
    data = load_yaml_mapping(text) if text is not None else None
    if data is None:
        return None
    trainer = data.get("trainer", {})
    return {str(k): v for k, v in trainer.items()} if isinstance(trainer, dict) else {}


def _cli_value(text: str) -> object:
    """A command-line value as jsonargparse would give it: a number, a list, or the text."""
    stripped = text.strip()
    if stripped.lstrip("-").isdigit():
        return int(stripped)
    if stripped.startswith("[") and stripped.endswith("]"):
        items = [t.strip() for t in stripped[1:-1].split(",") if t.strip()]
        return [int(t) if t.isdigit() else t for t in items]
    return stripped


def _children(plan: LaunchPlan, where: str, span: Span, per_node: int | None) -> None:
    """The subprocess launcher: the script's process is rank 0, the rest copies of it that
    Lightning starts with LOCAL_RANK set; the bootstrap takes each copy for the rank its
    LOCAL_RANK names (``bootstrap.helper_of_rank``), so any of them can be chosen."""
    count = f"{per_node - 1} more" if per_node is not None else "the other"
    plan.warn(f"{where}: the script's process is rank 0 and starts {count} ranks as copies of "
              "itself (LOCAL_RANK in their environment)", span, severity="info",
              code="ranks-as-copies")
    if plan.nnodes is not None and plan.nnodes > 1:
        plan.warn(f"{where}: the same command runs on each of the {plan.nnodes} nodes, with "
                  "NODE_RANK set to the node's number; a node other than node 0 numbers its "
                  "ranks by their LOCAL_RANK, as node 0 does (Lightning's global rank, "
                  "NODE_RANK x devices + LOCAL_RANK, is not in their environment): choose "
                  "them by local rank (local1), or run the script under torchrun", span,
                  code="multi-node")


def check_slurm(ctx: Context, call: Call, script: Word, job_name: str | None) -> None:
    """``srun python train.py``: Lightning's own checks of the Slurm numbers
    (``SLURMEnvironment.validate_settings`` and ``_validate_srun_variables``); ``job_name``:
    srun's ``-J`` when given."""
    plan = ctx.plan
    where = f"{script.display}:{call.line} {call.kind}(...)"
    if call.kind == "LightningCLI":
        call = _cli_arguments(ctx, call, plan.entry_args)
        where += " with the command's --trainer options"
    name = job_name or ctx.env_value("SLURM_JOB_NAME") or _sbatch_value(ctx, "--job-name", "-J")
    if name in ("bash", "interactive"):
        plan.warn(f"the job is named {name}, which Lightning does not take for a Slurm job: "
                  "each task starts processes of its own", script.span,
                  code="slurm-interactive")
        return
    per_node = plan.nproc_per_node if isinstance(plan.nproc_per_node, int) else None
    if per_node is not None and plan.world_size is not None and plan.world_size > 1 and (
            ctx.env_value("SLURM_NTASKS_PER_NODE") is None and plan.option("ntasks_per_node")
            is None and not _sbatch_has(ctx, "--ntasks-per-node")):
        plan.warn(f"Lightning refuses {plan.world_size} tasks without --ntasks-per-node "
                  f"(RuntimeError: use --ntasks-per-node={per_node})", script.span,
                  code="lightning-slurm", severity="error")
    devices = call.devices
    count = devices if isinstance(devices, int) and not isinstance(devices, bool) else (
        len(devices) if isinstance(devices, (list, tuple)) else None)
    if count is not None and count > 0 and per_node is not None and count != per_node:
        plan.warn(f"{where} has devices={count}, but Slurm starts {per_node} tasks per node: "
                  f"Lightning raises ValueError (set devices={per_node})", script.span,
                  code="lightning-slurm", severity="error")
    nodes = call.num_nodes
    if isinstance(nodes, int) and plan.nnodes is not None and nodes != plan.nnodes:
        plan.warn(f"{where} has num_nodes={nodes}, but the job has {plan.nnodes} nodes: "
                  f"Lightning raises ValueError (set num_nodes={plan.nnodes})", script.span,
                  code="lightning-slurm", severity="error")


def _sbatch_has(ctx: Context, flag: str) -> bool:
    return any((w.value or "").split("=", 1)[0] == flag for w in ctx.sbatch_args)


def _sbatch_value(ctx: Context, long: str, short: str) -> str | None:
    """The value of an ``#SBATCH`` option (the last one given)."""
    found = None
    args = list(ctx.sbatch_args)
    for i, word in enumerate(args):
        text = word.value or ""
        if text.startswith(long + "="):
            found = text[len(long) + 1:]
        elif text in (long, short) and i + 1 < len(args):
            found = args[i + 1].value
        elif text.startswith(short) and len(text) > len(short):
            found = text[len(short):]
    return found
