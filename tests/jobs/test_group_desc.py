"""A process group made without a description is read with none: torch writes ``undefined``
there, which the findings then printed as the group's name ("group 1 (undefined)")."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import json, os
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ["PORT"])
    dist.init_process_group("gloo", rank=0, world_size=1)
    plain = dist.new_group([0])
    named = dist.new_group([0], group_desc="sync")
    dist.barrier(group=plain)
    from rankdebug.runtime import collectives
    got = collectives._groups(dist)
    print(json.dumps(sorted(g["desc"] for g in got.values())))
    dist.destroy_process_group()
""")


def test_a_group_without_a_description_has_none() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=120, check=False, env={**os.environ, "PORT": str(port)})
    assert out.returncode == 0, out.stderr
    descs = json.loads(out.stdout.strip().splitlines()[-1])
    assert "undefined" not in descs
    assert "sync" in descs and "" in descs
