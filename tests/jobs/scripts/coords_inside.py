"""Reads ``rankdebug.runtime.coords`` from inside each rank of a plain torchrun job (gloo,
4 ranks) at each stage of building its layout, and writes what it read to
MARKER_DIR/coords-RANK.json:

- "before": after init_process_group, before any mesh;
- "mesh": after ``init_device_mesh("cpu", (2, 2), ("dp", "tp"))`` and a slice of it;
- "again_ms": a second read (kept once found);
- "frozen": the cache emptied and the collector's objects frozen (``gc.freeze()``: the
  meshes are no longer found that way; the process groups still say the layout);
- "permuted": a fresh read after a second, larger-first mesh of the same ranks in reverse
  order (``DeviceMesh("cpu", [[3, 2], [1, 0]], ("pp", "cp"))``) is made, the cache emptied.
"""

import gc
import json
import os
import time

import torch.distributed as dist

from rankdebug.runtime import coords

OUT = os.environ["MARKER_DIR"]

dist.init_process_group("gloo")
rank = dist.get_rank()
said = {"before": coords.read()}
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh  # noqa: E402

mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
tp = mesh["tp"]
t0 = time.perf_counter()
said["mesh"] = coords.read()
said["mesh_ms"] = (time.perf_counter() - t0) * 1000
t0 = time.perf_counter()
coords.read()
said["again_ms"] = (time.perf_counter() - t0) * 1000
coords._cache = coords._Cache()
gc.freeze()
said["frozen"] = coords.read()
gc.unfreeze()
coords._cache = coords._Cache()
other = DeviceMesh("cpu", [[3, 2], [1, 0]], mesh_dim_names=("pp", "cp"))
said["permuted"] = coords.read()
with open(os.path.join(OUT, f"coords-{rank}.json"), "w") as f:
    json.dump(said, f)
dist.barrier()
dist.destroy_process_group()
