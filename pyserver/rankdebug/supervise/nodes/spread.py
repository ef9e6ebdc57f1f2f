"""What a launcher that starts every node's ranks itself (srun, mpirun, deepspeed) must
carry to the other nodes for ``rankdebug launch --hosts``.

The ranks there start with this machine's environment, as each launcher passes it on:

- srun passes the whole environment (``--export=ALL``, its default);
- Open MPI passes only what ``-x`` names, or ``mca_base_env_list`` lists, and refuses a
  command that uses both: where the command names ``-x`` our names are added as ``-x``
  words after ``mpirun``, else they go in ``OMPI_MCA_mca_base_env_list`` and the command
  stays as written (MPICH's Hydra passes everything and ignores that variable);
- DeepSpeed's runner passes a few prefixes and the lines of ``.deepspeed_env``: a file of
  the job's (``DS_ENV_FILE``) holds those lines and ours.

Each rank finds which node it is on from ``RANKDEBUG_NODES`` (host name → node).
"""

from __future__ import annotations

import os
import shlex
import socket
from collections.abc import Iterable, Mapping

from rankdebug import launcher_table
from rankdebug.debugplan.job_env import JobRun
from rankdebug.errors import BadInput
from rankdebug.ssh import is_host
from rankdebug.supervise.nodes.remote import carried

OMPI_LIST = "OMPI_MCA_mca_base_env_list"


def node_map(hostnames: Mapping[str, str], here: str) -> str:
    """``RANKDEBUG_NODES`` from node name → the host name it gave; refuses two nodes (or a
    node and this machine) with one name, whose ranks could not be told apart."""
    seen: dict[str, str] = {here: "node0 (this machine)"}
    for node, name in hostnames.items():
        if not name or "," in name or ":" in name:
            raise BadInput(f"{node} gave no usable host name ({name!r})")
        if name in seen:
            raise BadInput(f"{node} calls itself {name!r}, as {seen[name]} does: the ranks "
                           "there could not be told apart")
        seen[name] = node
    # Not '=': Open MPI's mca_base_env_list drops a value that holds one.
    return ",".join(f"{name}:{node}" for node, name in hostnames.items())


def spread(run: JobRun, here: Mapping[str, str], nodes: str, job_dir: str,
           launcher: str) -> None:
    """Add to the job's environment (and, for mpirun with ``-x``, its command) what carries
    the job's settings to the ranks on other nodes, as ``launcher`` passes it on."""
    env = run.env
    env["RANKDEBUG_NODES"] = nodes
    names = carried(env, here)
    if launcher == "mpirun":
        mpirun = launcher_table.get("mpirun").programs
        if run.argv and os.path.basename(run.argv[0]) in mpirun and (
                "-x" in run.argv or "--x" in run.argv):
            run.argv[1:1] = [w for k in names for w in ("-x", k)]
        else:  # ';'-separated names, their values taken from mpirun's environment
            own = env.get(OMPI_LIST, "")
            env[OMPI_LIST] = ";".join([*(x for x in own.split(";") if x),
                                       *(k for k in names if ";" not in k)])
    elif launcher == "deepspeed":
        _deepspeed_env(env, names, job_dir, run.cwd)
    # srun passes the whole environment; horovodrun passes its own (-x for each variable).


def _deepspeed_env(env: dict[str, str], names: list[str], job_dir: str, cwd: str
                   ) -> None:
    """DeepSpeed reads ``os.path.join(folder, DS_ENV_FILE)`` for its home and working
    folders; an absolute path is read (twice) instead of the user's own files, whose lines
    are kept first. Its pdsh runner (the default) makes each line ``export K=V;`` for a
    shell on each node: our values are shell-quoted."""
    lines: list[str] = []
    user_file = env.get("DS_ENV_FILE", ".deepspeed_env")
    for folder in (os.path.expanduser("~"), cwd):
        path = os.path.join(folder, user_file)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines += [x.rstrip("\n") for x in f if "=" in x]
        except OSError:
            continue
    lines += [f"{k}={shlex.quote(env[k])}" for k in names
              if k != "DS_ENV_FILE" and "\n" not in env[k]]
    path = os.path.join(job_dir, "deepspeed_env")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    env["DS_ENV_FILE"] = path


def other_hosts(named: Iterable[str]) -> list[str]:
    """The hosts a command names (``LaunchPlan.hosts``) that are not this machine, once
    each: the ones ``launch`` prepares when ``--hosts`` is not given."""
    here = {socket.gethostname(), socket.getfqdn(), "localhost", "127.0.0.1", "::1"}
    short = {h.split(".")[0] for h in here if not h.replace(".", "").isdigit()}
    out: list[str] = []
    for host in named:
        if not is_host(host) or host in here or host in out:
            continue
        if not host.replace(".", "").isdigit() and host.split(".")[0] in short:
            continue
        out.append(host)
    return out
