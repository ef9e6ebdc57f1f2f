"""The job registry: one folder per job, one JSON file per rank, readable by the owner only.

Layout (shared/design.md, "Job registry")::

    $XDG_RUNTIME_DIR/rankdebug/          (fallback /tmp/rankdebug-$UID), mode 0700
        <job id>/                        mode 0700
            job.json                     the supervisor: pid, command, cwd, host, start time
            rank-<N>.json                pid, rank, local_rank, world_size, host, port,
                                         state, command, cwd, start time
            ctl.sock                     the supervisor's control socket (ranks report here)

Files are written whole (temporary file + rename) with mode 0600, so a reader never sees
half a file. Used by ``rankdebug launch`` (writer), by ``rankdebug.breakpoint`` in jobs it
did not start, and by ``rankdebug jobs`` and the VS Code view (readers).
Pure Python, 3.9 and later.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import time
from collections.abc import Iterator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

class RegistryError(Exception):
    """The registry folder is unusable (not ours, or open to other users)."""


# The longest socket a job makes in its folder, and a Unix socket path's limit (Linux).
LONGEST_SOCKET = "rank-1048575.sock"
MAX_SOCKET_PATH = 107


def location() -> str:
    """Where the registry's root folder is (nothing is made or checked)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    uid = os.getuid()
    if runtime and os.path.isdir(runtime) and os.stat(runtime).st_uid == uid:
        return os.path.join(runtime, "rankdebug")
    return os.path.join("/tmp", f"rankdebug-{uid}")


def check_socket_room(folder: str) -> None:
    """Raise RegistryError when the job's sockets would not fit in ``folder``'s path."""
    longest = os.path.join(folder, LONGEST_SOCKET)
    if len(longest.encode()) > MAX_SOCKET_PATH:
        raise RegistryError(f"the job registry's path {os.path.dirname(folder)} is too long "
                            f"for a job's sockets (a socket path has at most "
                            f"{MAX_SOCKET_PATH} bytes); set XDG_RUNTIME_DIR to a shorter "
                            "folder of yours")


def root() -> str:
    """The registry's root folder, created with mode 0700 if missing; checked otherwise."""
    path = location()
    _private_dir(path)
    return path


def _private_dir(path: str) -> None:
    """Create ``path`` 0700, or accept it only as a real folder of this user's (never a
    link, never another user's folder, whatever its mode): another user who planted it
    could read the job's files or plant fake ranks in it."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise RegistryError(f"{path} is a symbolic link, not a folder of yours{_FIX}")
    if not stat.S_ISDIR(info.st_mode):
        raise RegistryError(f"{path} is not a folder{_FIX}")
    if info.st_uid != os.getuid():
        raise RegistryError(f"{path} belongs to {_user(info.st_uid)}, "
                            f"mode {stat.S_IMODE(info.st_mode):04o}, not to you{_FIX}")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)


_FIX = ("; rankdebug will not use it (remove it, or set XDG_RUNTIME_DIR to a folder "
        "only you can write, and rankdebug keeps its registry there)")


def _user(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def new_job_id() -> str:
    """A job id that sorts by start time and is unique on this host."""
    return time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"


def job_dir(job: str) -> str:
    if not job or "/" in job or job.startswith("."):
        raise RegistryError(f"bad job id {job!r}")
    return os.path.join(root(), job)


def create_job(job: str, info: dict[str, Any]) -> str:
    """Create the job's folder (0700) and write ``job.json``; returns the folder. A folder
    this call made is removed again when the entry cannot be written (a full or read-only
    disk), and the error says where and why in a line."""
    path = job_dir(job)
    made = not os.path.isdir(path)
    entry = {"job": job, "host": socket.gethostname(), "start_time": time.time()}
    entry.update(info)
    try:
        _private_dir(path)
        _write(os.path.join(path, "job.json"), entry)
    except OSError as exc:
        if made:
            remove_job(job)
        raise RegistryError(unwritable(exc)) from None
    return path


def unwritable(exc: OSError) -> str:
    """One line for a registry that cannot be written (a full or read-only disk)."""
    return (f"cannot write the job registry at {location()}: {exc.strerror or exc} (free "
            "space there, or set XDG_RUNTIME_DIR to a folder of yours where rankdebug can "
            "write)")


def write_rank(job: str, entry: dict[str, Any]) -> None:
    """Write (replace) one rank's entry; ``entry["rank"]`` names the file."""
    path = job_dir(job)
    _private_dir(path)
    _write(os.path.join(path, f"rank-{int(entry['rank'])}.json"), entry)


def update_rank(job: str, rank: int, **fields: Any) -> dict[str, Any]:
    """Merge ``fields`` into a rank's entry (created if missing); returns the new entry.
    The supervisor and the rank both merge into it: under the job's lock, neither's fields
    are lost to the other's write."""
    with _entries_locked(job):
        current = read_rank(job, rank) or {"rank": rank}
        current.update(fields)
        write_rank(job, current)
    return current


@contextlib.contextmanager
def _entries_locked(job: str) -> Iterator[None]:
    """The job's lock for read-merge-write of its entries; unlocked where the folder has
    none to give (gone, full): the merge is then as good as a plain write."""
    import fcntl

    try:
        fd = os.open(os.path.join(job_dir(job), ".entries.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def update_job(job: str, **fields: Any) -> None:
    """Merge ``fields`` into the job's ``job.json`` (only its supervisor writes it)."""
    path = os.path.join(job_dir(job), "job.json")
    current = _read(path) or {"job": job}
    current.update(fields)
    _write(path, current)


def read_rank(job: str, rank: int) -> dict[str, Any] | None:
    return _read(os.path.join(job_dir(job), f"rank-{rank}.json"))


def read_job(job: str) -> dict[str, Any] | None:
    """``{"job": ..., <job.json fields>, "ranks": [entries sorted by rank]}``, or None."""
    path = job_dir(job)
    if not os.path.isdir(path):
        return None
    out: dict[str, Any] = _read(os.path.join(path, "job.json")) or {"job": job}
    ranks = []
    for name in os.listdir(path):
        if name.startswith("rank-") and name.endswith(".json"):
            entry = _read(os.path.join(path, name))
            if entry is not None:
                ranks.append(entry)
    out["ranks"] = sorted(ranks, key=lambda e: int(e.get("rank", 0)))
    return out


def list_jobs() -> list[dict[str, Any]]:
    """Every job in the registry (as ``read_job`` gives it), oldest first."""
    base = root()
    jobs = []
    for name in sorted(os.listdir(base)):
        if os.path.isdir(os.path.join(base, name)):
            job = read_job(name)
            if job is not None:
                jobs.append(job)
    return jobs


def prune() -> list[str]:
    """Remove the folders of jobs whose supervisor on this host is gone (it was killed with
    SIGKILL, or the machine rebooted with a persistent /tmp); returns their ids."""
    host = socket.gethostname()
    gone = []
    base = root()
    for name in sorted(os.listdir(base)):
        path = os.path.join(base, name)
        if not os.path.isdir(path) or os.path.islink(path):
            continue
        info = _read(os.path.join(path, "job.json"))
        pid = info.get("pid") if info is not None else None
        if info is None and _abandoned(path):
            import shutil

            shutil.rmtree(path, ignore_errors=True)  # a launch that failed to write it
            gone.append(name)
            continue
        if info is None or info.get("host", host) != host or not isinstance(pid, int):
            continue  # half-written, another host's, or not a job folder: not ours to judge
        if not pid_alive(pid):
            import shutil

            shutil.rmtree(path, ignore_errors=True)
            gone.append(name)
    return gone


ABANDONED_S = 60.0


def _abandoned(path: str) -> bool:
    """A job folder with no ``job.json`` that nothing has touched for ``ABANDONED_S``: what
    a launch leaves when its disk filled up while it wrote the entry (a launch writes it
    first, within milliseconds of making the folder)."""
    try:
        names = os.listdir(path)
        newest = max([os.lstat(path).st_mtime,
                      *(os.lstat(os.path.join(path, n)).st_mtime for n in names)])
    except OSError:
        return False
    if any(not (n.startswith(("job.json", "rank-")) and n.endswith(".tmp")) for n in names):
        return False  # something else lives there: not ours to judge
    return time.time() - newest > ABANDONED_S


def remove_rank(job: str, rank: int) -> None:
    """Remove one rank's entry, and the job's folder when no rank is left in it."""
    path = job_dir(job)
    with contextlib.suppress(FileNotFoundError):
        os.remove(os.path.join(path, f"rank-{rank}.json"))
    if not any(n.startswith("rank-") for n in os.listdir(path)):
        remove_job(job)


def remove_job(job: str) -> None:
    """Remove the job's folder and everything in it; no error if it is gone."""
    import shutil  # not loaded in ranks until their job ends

    shutil.rmtree(job_dir(job), ignore_errors=True)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write(path: str, entry: dict[str, Any]) -> None:
    """Write whole or not at all: a failed write (a full disk) leaves no temporary file."""
    tmp = f"{path}.{os.getpid()}.tmp"
    data = json.dumps(entry, sort_keys=True).encode()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
