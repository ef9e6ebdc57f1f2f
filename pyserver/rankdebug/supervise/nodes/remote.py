"""The other nodes of a multi-node job, reached over SSH (``rankdebug launch --hosts``).

Nothing runs on a node but the job and, for as long as it runs, ``node_runner``; nothing
is installed there. Per node, one SSH connection (a ControlMaster in the job's folder,
with the user's own SSH configuration) carries everything:

- the job's command, started by ``node_runner`` with the job's ``RANKDEBUG_*`` variables;
  its stdin is the channel whose end stops the job there;
- the supervisor's control socket, forwarded as a socket in the job's folder on the node
  (``-R path:path``): ranks there report to the supervisor as local ranks do;
- a chosen rank's debugger: debugpy listens on the node's loopback (owner-only), and the
  supervisor reaches it through a socket in its own folder (``-O forward -L path:host:port``).
  Both ends are Unix sockets in 0700 folders or owner-checked: no other user on either
  machine can reach a rank.

The boot folder (``sitecustomize.py``, rankdebug, debugpy) is made on the node: links where
this machine's packages are there too (a shared home), else copied over the connection.

Two ways a job reaches its other nodes:

- *started here*: the launcher runs once per node (torchrun, accelerate): ``node_runner``
  starts the same command there, with its ``--node_rank``, in a folder of the node's own
  (``$r/JOB/nodeN``);
- *spread by the launcher* (srun, mpirun, deepspeed): the launcher here starts the ranks
  there itself, with this machine's environment, whose paths name the job's folder here.
  So the folder is made at the same path on the node, the control socket forwarded to the
  same path, and ``node_runner`` only watches: its channel's end ends what the job left
  there.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rankdebug.errors import BadInput
from rankdebug.ssh import PRIVATE_ROOT_SH, SSH_MARK, SshOptions

CONNECT_TIMEOUT_S = 20.0


class RemoteError(BadInput):
    """A node cannot be reached or prepared."""


@dataclass
class RemoteNode:
    """One other node of the job: its SSH connection and what runs there."""

    host: str
    index: int  # node rank: this machine is 0
    ssh: SshOptions
    local_dir: str  # the job's folder here
    mux: str = ""
    dir: str = ""  # the job's folder on the node
    python: str = ""
    hostname: str = ""  # as the node names itself (a rank there: socket.gethostname())
    master: subprocess.Popen[bytes] | None = None
    runner: subprocess.Popen[bytes] | None = None
    forwards: dict[str, str] = field(default_factory=dict)  # port or socket there -> socket here
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def name(self) -> str:
        return f"node{self.index}"

    def _marked(self) -> dict[str, str]:
        """This environment, marked as the job's SSH (the janitor ends such processes when
        the supervisor is killed outright: the nodes' runners then see their channel end)."""
        return {**os.environ, SSH_MARK: os.path.basename(self.local_dir)}

    def _ssh(self, *extra: str) -> list[str]:
        return [*self.ssh.base(), "-o", f"ControlPath={self.mux}", *extra, self.host]

    def _fail(self, what: str, argv: list[str], detail: str) -> RemoteError:
        detail = detail.strip().splitlines()[-1] if detail.strip() else "no message"
        return RemoteError(f"cannot {what} {self.host} (node {self.index}): {detail}; the "
                           f"command was: {shlex.join(argv)}")

    # --- connection ---------------------------------------------------------------------

    def connect(self) -> None:
        """Open the node's SSH connection (a ControlMaster), or raise naming the host."""
        self.mux = os.path.join(self.local_dir, f"ssh-{self.index}")
        argv = [*self._ssh("-o", "ControlMaster=yes", "-o", "ControlPersist=no",
                           "-o", "ExitOnForwardFailure=yes", "-N")]
        self.master = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       start_new_session=True, env=self._marked())
        deadline = time.monotonic() + CONNECT_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.master.poll() is not None:
                err = self.master.stderr.read() if self.master.stderr else b""
                raise self._fail("connect to", argv, err.decode(errors="replace"))
            if os.path.exists(self.mux):
                check = subprocess.run(self._ssh("-O", "check"), check=False,
                                       capture_output=True)
                if check.returncode == 0:
                    return
            time.sleep(0.05)
        self.close()
        raise self._fail("connect to", argv, f"no connection after {CONNECT_TIMEOUT_S:.0f} s")

    def run(self, command: str, data: bytes = b"", timeout: float = 60.0,
            what: str = "run a command on") -> str:
        """Run a shell command on the node over the connection; its stdout. A failure
        raises ``cannot WHAT HOST``."""
        argv = self._ssh()
        try:
            got = subprocess.run([*argv, command], check=False, input=data,
                                 capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise self._fail(what, [*argv, command], f"timed out: {exc}") from exc
        if got.returncode != 0:
            raise self._fail(what, [*argv, command], got.stderr.decode(errors="replace"))
        return got.stdout.decode(errors="replace")

    # --- the job's folder there ---------------------------------------------------------

    def prepare(self, job: str, packages: dict[str, str], bootstrap: str,
                same_path: bool = False) -> bool:
        """Make the job's folder on the node, with its boot folder (see the module doc):
        ``$r/JOB/nodeN``, or with ``same_path`` the job's folder path here (its parent
        must be the user's alone). False: with ``same_path``, the node sees this machine's
        folder itself (it is this machine, or shares the folder): nothing was made."""
        here_python = sys.executable
        if same_path:
            # A marker only this machine's folder holds tells a node that shares it.
            # One per node: nodes are prepared at once, and each removes its own.
            marker = os.path.join(self.local_dir, f".probe-{self.index}")
            Path(marker).touch(mode=0o600)
            where = (f"d={shlex.quote(self.local_dir)}; [ -e {shlex.quote(marker)} ] && "
                     "{ echo shared; exit 0; }; p=$(dirname \"$d\"); umask 077; "
                     'mkdir -p "$p" && [ -O "$p" ] && [ "$(stat -c %a "$p")" = 700 ] || '
                     '{ echo "$p is missing or not private to this user" >&2; exit 3; }; '
                     '{ mkdir "$d" && mkdir -p "$d/boot/dbg"; } || '
                     '{ echo "cannot make $d" >&2; exit 3; }; echo "$d"; ')
        else:
            where = (PRIVATE_ROOT_SH
                     + f'umask 077; d="$r/{job}/node{self.index}"; mkdir -p "$d/boot/dbg" && '
                     'echo "$d"; ')
        probe = (
            where
            + "uname -n; "
            + "".join(f"[ -d {shlex.quote(p)} ] && echo yes || echo no; "
                      for p in packages.values())
            + f"[ -x {shlex.quote(here_python)} ] && echo {shlex.quote(here_python)} || "
            "command -v python3 || echo python3"
        )
        try:
            lines = self.run(f"sh -c {shlex.quote(probe)}").splitlines()
        finally:
            if same_path:
                with contextlib.suppress(OSError):
                    os.remove(marker)
        if lines[:1] == ["shared"]:
            return False
        if len(lines) < 3 + len(packages):
            raise self._fail("prepare the job's folder on", self._ssh(), "unexpected answer")
        self.dir = lines[0].strip()
        self.hostname = lines[1].strip()
        present = [x.strip() == "yes" for x in lines[2:2 + len(packages)]]
        self.python = lines[2 + len(packages)].strip()
        data = io.BytesIO()
        with tarfile.open(fileobj=data, mode="w:gz") as tar:
            _add_bytes(tar, "boot/sitecustomize.py", Path(bootstrap).read_bytes())
            for (where, path), there in zip(packages.items(), present, strict=True):
                if not there:  # not on the node: copied (.pyc left out)
                    tar.add(path, arcname=f"boot/{where}", filter=_no_bytecode)
        links = "".join(
            f"ln -s {shlex.quote(path)} {shlex.quote(self.dir + '/boot/' + where)}; "
            for (where, path), there in zip(packages.items(), present, strict=True) if there)
        unpack = f"umask 077; cd {shlex.quote(self.dir)} && tar -xzf - && {links}true"
        self.run(f"sh -c {shlex.quote(unpack)}", data.getvalue())
        return True

    # --- the job there ------------------------------------------------------------------

    def start(self, argv: list[str] | None, env: dict[str, str], cwd: str, ctl: str,
              stdout: int | None) -> None:
        """Start ``node_runner`` with the job's command (None: the launcher here starts the
        ranks there; it only watches); the control socket forwarded."""
        remote_ctl = f"{self.dir}/ctl.sock"
        runner = (f"cd {shlex.quote(self.dir)} && PYTHONPATH={shlex.quote(self.dir + '/boot')} "
                  f"exec {shlex.quote(self.python)} -m rankdebug.supervise.nodes.runner")
        ssh = self._ssh("-R", f"{remote_ctl}:{ctl}")
        self.runner = subprocess.Popen([*ssh, runner], stdin=subprocess.PIPE, stdout=stdout,
                                       start_new_session=True, env=self._marked())
        spec = {"argv": argv, "env": env, "cwd": cwd, "dir": self.dir,
                "parent": argv is not None}  # $r/JOB/nodeN: JOB goes once empty
        assert self.runner.stdin is not None
        self.runner.stdin.write((_json(spec) + "\n").encode("utf-8"))
        self.runner.stdin.flush()

    def wait_socket(self, path: str, timeout: float = 15.0) -> None:
        """Wait until ``path`` (a forwarded socket) is there on the node; raises naming it."""
        check = (f"i=0; while [ ! -S {shlex.quote(path)} ]; do i=$((i+1)); "
                 f"[ $i -gt {int(timeout * 20)} ] && exit 3; sleep 0.05; done")
        # sh -c: whatever the user's login shell is.
        self.run(f"sh -c {shlex.quote(check)}", timeout=timeout + 10,
                 what="forward the job's control socket to")

    def forward(self, port: int) -> str:
        """A socket in the job's folder here that reaches ``127.0.0.1:port`` on the node."""
        return self._forward(str(port), f"127.0.0.1:{port}", f"n{self.index}-{port}.sock",
                             "reach the rank's debugger on")

    def forward_socket(self, there: str) -> str:
        """A socket in the job's folder here that reaches the socket ``there`` on the node
        (a rank's handler)."""
        name = f"n{self.index}-h{abs(hash(there)) % 10**8}.sock"
        return self._forward(there, there, name, "reach a rank's handler on")

    def _forward(self, key: str, target: str, name: str, what: str) -> str:
        # One at a time: ranks' forwards are asked from threads of their own, and each
        # socket here must be made once.
        with self._lock:
            known = self.forwards.get(key)
            if known is not None:
                return known
            path = os.path.join(self.local_dir, name)
            argv = self._ssh("-O", "forward", "-L", f"{path}:{target}")
            got = subprocess.run(argv, check=False, capture_output=True, timeout=30)
            if got.returncode != 0:
                raise self._fail(what, argv, got.stderr.decode(errors="replace"))
            self.forwards[key] = path
            return path

    def discard(self) -> None:
        """Remove what ``prepare`` made there (the job did not start), then close."""
        if self.dir and self.master is not None and self.master.poll() is None:
            with contextlib.suppress(RemoteError, OSError, subprocess.SubprocessError):
                self.run(f"rm -rf {shlex.quote(self.dir)}", timeout=20)
        self.close()

    def kill(self, pid: int, sig: int) -> None:
        """Signal a process on the node (a rank's attach signal, terminate)."""
        with contextlib.suppress(RemoteError, OSError, subprocess.SubprocessError):
            self.run(f"kill -{int(sig)} {int(pid)}", timeout=10)

    def stop(self) -> None:
        """End the job there: the runner's channel closes, it ends every process."""
        if self.runner is not None and self.runner.stdin is not None:
            with contextlib.suppress(OSError):
                self.runner.stdin.close()

    def wait(self, timeout: float) -> int | None:
        if self.runner is None:
            return 0
        try:
            return self.runner.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        """Close the connection (its forwards with it), the runner's ssh if still there."""
        self.stop()
        if self.runner is not None and self.runner.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.runner.wait(5.0)
            if self.runner.poll() is None:
                self.runner.kill()
                self.runner.wait()
        if self.master is not None and self.master.poll() is None:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(self._ssh("-O", "exit"), check=False, capture_output=True,
                               timeout=5)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.master.wait(2.0)
            if self.master.poll() is None:
                self.master.kill()
                self.master.wait()
        for path in self.forwards.values():
            with contextlib.suppress(OSError):
                os.remove(path)


def _json(value: object) -> str:
    return json.dumps(value)


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    tar.addfile(info, io.BytesIO(data))


def _no_bytecode(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if info.name.endswith(".pyc") or "/__pycache__" in info.name else info


def node_argv(argv: list[str], index: int) -> list[str]:
    """The command for node ``index``: a ``--node_rank``/``--node-rank`` value replaced."""
    out = list(argv)
    for i, word in enumerate(out):
        for flag in ("--node_rank", "--node-rank"):
            if word == flag and i + 1 < len(out):
                out[i + 1] = str(index)
            elif word.startswith(flag + "="):
                out[i] = f"{flag}={index}"
    return out


# Passed to the other nodes from this one's environment besides what the job itself sets:
# where the Python environment is, and the settings distributed jobs read.
_PASSED = ("PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHONPATH")
_PASSED_PREFIXES = ("RANKDEBUG_", "NCCL_", "GLOO_", "TORCH_", "TORCHELASTIC_", "PET_",
                    "MASTER_", "OMP_", "PYTORCH_", "HF_", "TRANSFORMERS_", "TP_SOCKET_")


def carried(env: Mapping[str, str], here: Mapping[str, str]) -> list[str]:
    """The variables a job adds to this machine's environment (``here``), and ours: what
    the other nodes need besides their own environment."""
    return sorted(k for k, v in env.items()
                  if k.startswith("RANKDEBUG_") or here.get(k) != v)


def node_env(job_env: dict[str, str], here: dict[str, str], local_dir: str, remote_dir: str,
             name: str) -> dict[str, str]:
    """The variables node ``name`` sets on top of its own environment: what the job adds to
    this one's (the script's exports, the RANKDEBUG_* settings), the Python environment's
    paths and the distributed settings; paths into the job's folder here point to its
    folder there."""
    names = set(carried(job_env, here))
    out = {k: v for k, v in job_env.items()
           if k in names or k in _PASSED or k.startswith(_PASSED_PREFIXES)}
    out = {k: v.replace(local_dir, remote_dir) for k, v in out.items()}
    # A rank on another node takes any free port there (``debug._port_for``): the ports
    # reserved here are this machine's, the gates'.
    out["RANKDEBUG_NODE"] = name
    return out
