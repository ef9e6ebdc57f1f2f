"""DeepSpeed's data parallelism, and its pipeline stages where the command says them.

DeepSpeed takes its number of stages in code (``PipelineModule(num_stages=...)``,
deepspeedai/DeepSpeed deepspeed/runtime/pipe/module.py; the config's ``pipeline.stages`` is
"auto" and does not set it), so stages are read only from the script flags that the public
examples pass into ``num_stages``: ``--pipeline-parallel-size`` (DeepSpeedExamples
training/pipeline_parallelism/train.py, which also spells it ``-p``: read when the entry
script itself declares ``'-p'`` for it) and GPT-NeoX's ``--pipe-parallel-size``. The grid is
``PipeDataParallelTopology``: ``ProcessTopology(axes=['pipe', 'data'])`` with the last axis
fastest (deepspeed/runtime/pipe/topology.py), so dp is fastest and pp slowest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rankdebug.command.coords.args import Found, flag
from rankdebug.command.coords.files import read_text
from rankdebug.command.coords.layout import Layout, Mismatch
from rankdebug.command.words import Word

PIPELINE = ("--pipeline-parallel-size", "--pipe-parallel-size")
_SHORT_P = re.compile(r"""add_argument\(\s*['"]-p['"]\s*,\s*['"]--pipeline[-_]parallel[-_]size""")


def read(args: Sequence[Word], world: int | None, file: str | None,
         entry: str | None, cwd: str | None) -> Layout | Mismatch | None:
    """dp over every rank, or pp × dp when the command gives pipeline stages."""
    if world is None:
        return None
    stages: Found | None = None
    for name in PIPELINE:
        stages = flag(args, name, file) or stages
    if stages is None and entry is not None and any(w.value == "-p" for w in args):
        loaded = read_text(entry, cwd)
        if loaded is not None and _SHORT_P.search(loaded[1]):
            stages = flag(args, "-p", file)
    if stages is None:
        return Layout.grid([("dp", world)], world, "deepspeed")
    pp = stages.number()
    if pp is None or pp < 1:
        return None
    if world % pp:
        return Mismatch(f"{pp} pipeline stages do not divide the world size ({world}); "
                        "DeepSpeed's topology needs pipe × data = world size", stages.read)
    return Layout.grid([("dp", world // pp), ("pp", pp)], world, "deepspeed", [stages.read])
