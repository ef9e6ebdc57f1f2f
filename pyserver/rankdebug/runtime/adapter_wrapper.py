"""The "python" a rank gives ``debugpy.configure(python=…)`` before ``debugpy.listen``, so that
the adapter it spawns is ``rankdebug.adapter.main``: owner-only, and ended with the process it
serves. Used where no supervisor starts the adapter: a process ``rankdebug attach`` injected
into, and ``rankdebug.breakpoint`` in a job rankdebug did not start.

debugpy spawns its adapter as ``[python, ADAPTER_DIR, ARGS…]``: one executable, no room for
``-m``. The wrapper is a two-line shell script in a private folder of this user's; it deletes
itself when run (the adapter is started once per attach).
"""

from __future__ import annotations

import os
import shlex
import sys

NAME_PREFIX = "adapter-python-"


def write(folder: str, serves: int, python: str = sys.executable) -> str:
    """Write the wrapper for the process ``serves`` into ``folder`` (0700, this user's own),
    running the adapter on ``python``: its path. The caller removes it if it was never run.
    Stdlib only, Python 3.9 and later (it runs inside ranks)."""
    # The folder holding the ``rankdebug`` package (a link to it, in a job's boot folder).
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(folder, f"{NAME_PREFIX}{serves}-{os.getpid()}")
    # The served process's environment is inherited: its PYTHONHOME or PYTHONPATH must not
    # make rankdebug's interpreter load another Python's modules.
    script = (
        "#!/bin/sh\n"
        f'rm -f "$0"\n'
        f"unset PYTHONHOME\n"
        f"PYTHONPATH={shlex.quote(here)} RANKDEBUG_SUPERVISOR_PID={int(serves)} "
        f'exec {shlex.quote(python)} -m rankdebug.adapter.main "$@"\n'
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o700)
    with os.fdopen(fd, "w") as f:
        f.write(script)
    return path
