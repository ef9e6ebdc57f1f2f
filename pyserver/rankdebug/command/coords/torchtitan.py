"""torchtitan's parallel degrees: its TOML's ``[parallelism]`` (``--job.config_file``) and
``--parallelism.<key>`` overrides on the command line, which win.

Read as torchtitan computes them (pytorch/torchtitan, torchtitan/distributed/
parallel_dims.py, ``ParallelDims._validate`` and ``build_mesh``): ``data_parallel_shard_degree``
-1 is ``world // (dp_replicate * cp * tp * pp)``; the product must equal the world size; the
dense mesh is unflattened as ``("pp", "dp_replicate", "dp_shard", "cp", "tp")`` (tp fastest),
its spmd mesh folds dp_replicate × dp_shard into ``dp``, and the sparse mesh ``("pp",
"dp_replicate", "efsdp", "ep", "etp")`` puts ep just above expert tp. The TOML path is found
as torchtitan/config/manager.py's ``_maybe_load_toml`` does (``--job.config_file`` or
``--job.config-file``, spaced or with ``=``). Configs given as Python registries (torchtitan
after its TOML era: ``--module``/``--config``) are not read.
"""

from __future__ import annotations

from collections.abc import Sequence

import tomllib

from rankdebug.command.coords.args import flag
from rankdebug.command.coords.files import line_of, read_text
from rankdebug.command.coords.layout import Axis, Layout, Mismatch, Read
from rankdebug.command.words import Word

CONFIG = "--job.config_file"
KEYS = {
    "data_parallel_replicate_degree": "dp_replicate",
    "data_parallel_shard_degree": "dp_shard",
    "context_parallel_degree": "cp",
    "tensor_parallel_degree": "tp",
    "pipeline_parallel_degree": "pp",
    "expert_parallel_degree": "ep",
    "expert_tensor_parallel_degree": "etp",
}
DEFAULTS = {"dp_replicate": 1, "dp_shard": -1, "cp": 1, "tp": 1, "pp": 1, "ep": 1, "etp": 1}


def read(args: Sequence[Word], world: int | None, file: str | None,
         cwd: str | None) -> Layout | Mismatch | None:
    """The layout when the command names a torchtitan TOML or ``--parallelism.*``."""
    degrees: dict[str, int] = {}
    reads: dict[str, Read] = {}
    _from_toml(args, file, cwd, degrees, reads)
    for key, short in KEYS.items():
        override = flag(args, f"--parallelism.{key}", file)
        if override is not None:
            value = override.number()
            if value is None:
                return None  # not known here: no guess rather than a wrong one
            degrees[short] = value
            reads[short] = override.read
    if not degrees or world is None:
        return None
    d = {**DEFAULTS, **degrees}
    rest = d["dp_replicate"] * d["cp"] * d["tp"] * d["pp"]
    if min(d[k] for k in ("dp_replicate", "cp", "tp", "pp", "ep", "etp")) < 1:
        return None
    if d["dp_shard"] < 0:
        d["dp_shard"] = world // rest
    if d["dp_shard"] < 1 or d["dp_shard"] * rest != world:
        return Mismatch(f"torchtitan needs dp_replicate × dp_shard × cp × tp × pp "
                        f"({d['dp_replicate']} × {d['dp_shard']} × {d['cp']} × {d['tp']} × "
                        f"{d['pp']}) to equal the world size ({world}); it stops with "
                        "'Invalid parallel dims'", next(iter(reads.values())))
    order = [("tp", d["tp"]), ("cp", d["cp"]), ("dp_shard", d["dp_shard"]),
             ("dp_replicate", d["dp_replicate"]), ("pp", d["pp"])]
    views = [Axis("dp", d["dp_replicate"] * d["dp_shard"], d["tp"] * d["cp"])]
    if d["ep"] > 1:
        views.append(Axis("ep", d["ep"], d["etp"]))
    return Layout.grid(order, world, "torchtitan", list(reads.values()), views)


def _from_toml(args: Sequence[Word], file: str | None, cwd: str | None,
               degrees: dict[str, int], reads: dict[str, Read]) -> None:
    """``[parallelism]`` of the TOML the command names, into ``degrees`` and ``reads``."""
    config = flag(args, CONFIG, file)
    loaded = read_text(config.value, cwd) if config and config.value is not None else None
    if loaded is None:
        return
    path, text = loaded
    try:
        section = tomllib.loads(text).get("parallelism")
    except tomllib.TOMLDecodeError:
        return
    if not isinstance(section, dict):
        return
    for key, short in KEYS.items():
        value = section.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            degrees[short] = value
            reads[short] = Read(f"[parallelism] {key}", str(value), path,
                                line_of(text, key, "parallelism"))
