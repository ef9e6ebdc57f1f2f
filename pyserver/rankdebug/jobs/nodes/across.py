"""``--hosts``: the same verbs on the job's other nodes, over SSH, merged into one answer.

A job rankdebug did not start has no supervisor that knows its nodes, and its ranks run
nothing of ours; each node knows its own ranks. So ``rankdebug jobs|stacks|attach --hosts
a,b`` runs that verb on each host (``ssh HOST python -m rankdebug VERB … --json``) beside
this machine's, and joins the answers: ranks of one job on several nodes (the same
rendezvous, ``MASTER_ADDR:MASTER_PORT`` and ``TORCHELASTIC_RUN_ID``, as every rank of a
torchrun, Slurm or MPI job shares) make one job, each rank naming its host.

Nothing is installed on a host. Where this machine's Python and rankdebug are at the same
paths there (a shared home, a shared environment), those run; otherwise rankdebug and
debugpy are copied once into the user's private folder there (``tools-VERSION``).
"""

from __future__ import annotations

import functools
import io
import json
import shlex
import subprocess
import sys
import tarfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import rankdebug
from rankdebug.jobs.analysis.stacks import RankStack
from rankdebug.jobs.discover import Discovery, Job, Rank
from rankdebug.jobs.nodes import agent_link, fanin, node_agent
from rankdebug.pyspy import Frame, Thread
from rankdebug.ssh import PRIVATE_ROOT_SH, SshOptions, parse_hosts

NOT_THERE = 75  # the remote script's "rankdebug is not on this host yet"
AT_ONCE = 32  # hosts asked at once (each a thread waiting on its answer)
_RANK_FIELDS = {f.name for f in fields(Rank)}
_JOB_FIELDS = {f.name for f in fields(Job)} - {"ranks"}


@dataclass(frozen=True)
class Remote:
    """The other hosts, and how ``ssh`` reaches them."""

    hosts: tuple[str, ...]
    options: SshOptions = field(default_factory=SshOptions)

    def ssh(self, host: str) -> list[str]:
        return [*self.options.base(), *_shared(), host]


def _shared() -> list[str]:
    """One SSH connection per host for a run of verbs (Training Jobs refreshes every few
    seconds; a new connection costs ~0.4 s): a ControlMaster in the user's private folder
    that ends 30 s after its last use. None where that folder cannot be had."""
    from rankdebug.runtime import registry

    try:
        folder = registry.root()
    except (OSError, registry.RegistryError):
        return []
    return ["-o", "ControlMaster=auto", "-o", f"ControlPath={folder}/ssh-%C",
            "-o", "ControlPersist=30"]


def unreached(rank: int | None, host: str) -> str:
    """What a verb says of a rank of another host that no ``--hosts`` reaches (its pid is
    that host's: nothing of it is read here)."""
    return f"rank {rank} runs on {host}: add --hosts {host}"


class RemoteVerbError(RuntimeError):
    """A host could not run the verb: the message names the host and the command."""


def add_arguments(parser: Any) -> None:
    parser.add_argument("--hosts", default=None, metavar="HOST[,HOST...]",
                        help="also the job's ranks on these hosts, over SSH")
    parser.add_argument("--ssh-config", default=None, metavar="FILE",
                        help="an SSH configuration file for --hosts (ssh -F)")
    parser.add_argument("--ssh-option", dest="ssh_options", action="append", default=[],
                        metavar="KEY=VALUE", help="an SSH option for --hosts (repeatable)")


def remote_of(args: Any) -> Remote | None:
    hosts = parse_hosts(getattr(args, "hosts", None))
    if not hosts:
        return None
    return Remote(hosts, SshOptions(args.ssh_config, tuple(args.ssh_options)))


# --- running a verb there ---------------------------------------------------------------


@functools.cache  # one walk of the package per process, not one per verb and host
def _here() -> tuple[str, str]:
    """(folder holding the rankdebug package, a key naming this version of it)."""
    pkg = Path(rankdebug.__file__).resolve().parent
    newest = max((p.stat().st_mtime_ns for p in pkg.rglob("*.py")), default=0)
    return str(pkg.parent), f"{rankdebug.__version__}-{newest % 10**9}"


def _script(verb: list[str], module: str = "rankdebug") -> str:
    """``python -m MODULE VERB…`` on the host (a word ``$a`` is the shell's variable,
    set before: the agent's path there)."""
    parent, key = _here()
    args = " ".join('"$a"' if w == "$a" else shlex.quote(w) for w in verb)
    py = shlex.quote(sys.executable)
    mod = shlex.quote(module)
    return (
        PRIVATE_ROOT_SH
        + f"if [ -x {py} ] && [ -d {shlex.quote(parent + '/rankdebug')} ]; then "
        f"PYTHONPATH={shlex.quote(parent)}${{PYTHONPATH:+:$PYTHONPATH}} exec {py} -m {mod} "
        f"{args}; fi; "
        f't="$r/tools-{key}"; if [ -d "$t/rankdebug" ]; then PYTHONPATH="$t" exec python3 -m '
        f"{mod} {args}; fi; exit {NOT_THERE}"
    )


def _ship_script() -> str:
    _, key = _here()
    return (
        PRIVATE_ROOT_SH + "umask 077; "
        f't="$r/tools-{key}"; mkdir -p "$t.$$" && tar -xzf - -C "$t.$$" && '
        '{ mv "$t.$$" "$t" 2>/dev/null || rm -rf "$t.$$"; }'
    )


def _tools_tar() -> bytes:
    from rankdebug.packages import package_dir

    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        for name, path in (("rankdebug", str(Path(rankdebug.__file__).resolve().parent)),
                           ("debugpy", package_dir("debugpy"))):
            tar.add(path, arcname=name,
                    filter=lambda i: None if i.name.endswith(".pyc") else i)
    return data.getvalue()


def run_verb(remote: Remote, host: str, verb: list[str], timeout: float = 60.0
             ) -> subprocess.CompletedProcess[str]:
    """``rankdebug VERB…`` on ``host``, asked of the warm agent there (``node_agent``,
    started on first use) where it answers that verb; else run there over SSH, rankdebug
    copied there first if it is not there."""
    if verb[0] not in node_agent.VERBS:  # attach: a process of its own there, as ever
        return run_once(remote, host, verb, timeout)
    key = _here()[1]
    start = (PRIVATE_ROOT_SH  # the agent's socket: in the private folder, named by version
             + f'umask 077; mkdir -p "$r" || exit 3; a="$r/agent-{key}.sock"; ')
    there = agent_link.Host(remote.ssh(host), key,
                            lambda: run_once(remote, host, ["start", "$a"],
                                             agent_link.START_S, agent=start))
    try:
        got = agent_link.ask(there, verb, timeout)
    except agent_link.NoAnswer as exc:
        raise RemoteVerbError(f"{host}: {exc}") from exc
    if got is not None:
        return got
    return run_once(remote, host, verb, timeout)


AGENT = "rankdebug.jobs.nodes.node_agent"


def run_once(remote: Remote, host: str, verb: list[str], timeout: float = 60.0,
             agent: str = "") -> subprocess.CompletedProcess[str]:
    """``rankdebug VERB…`` on ``host`` over SSH (``agent``: shell words that set ``$a``;
    then ``python -m rankdebug.jobs.nodes.node_agent VERB…`` instead); rankdebug copied there
    first if it is not there."""
    argv = [*remote.ssh(host), agent + _script(verb, AGENT if agent else "rankdebug")]
    try:
        got = subprocess.run(argv, check=False, capture_output=True, text=True,
                             timeout=timeout)
        if got.returncode == NOT_THERE:
            ship = [*remote.ssh(host), _ship_script()]
            shipped = subprocess.run(ship, check=False, input=_tools_tar(),
                                     capture_output=True, timeout=timeout)
            if shipped.returncode != 0:
                raise RemoteVerbError(_failed(host, ship, shipped.stderr.decode(
                    errors="replace")))
            got = subprocess.run(argv, check=False, capture_output=True, text=True,
                                 timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise RemoteVerbError(_failed(host, argv, f"no answer in {timeout:.0f} s")) from exc
    except OSError as exc:
        raise RemoteVerbError(_failed(host, argv, str(exc))) from exc
    if got.returncode == 255:  # ssh's own failure: the host cannot be reached
        raise RemoteVerbError(_failed(host, argv, got.stderr))
    return got


def _failed(host: str, argv: list[str], detail: str) -> str:
    lines = [x for x in detail.strip().splitlines() if x.strip()]
    said = lines[-1] if lines else "no message"
    shown = [*argv[:-1], "…"] if len(argv[-1]) > 60 else argv
    return f"{host}: {said} (the command was: {shlex.join(shown)})"


def on_hosts(remote: Remote, verb: Callable[[str], list[str]], timeout: float = 60.0
             ) -> list[tuple[str, dict[str, Any] | None, str | None]]:
    """Run ``verb(host)`` on every host at once: (host, its JSON answer, or the error)."""
    def one(host: str) -> tuple[str, dict[str, Any] | None, str | None]:
        try:
            got = run_verb(remote, host, verb(host), timeout)
        except RemoteVerbError as exc:
            return host, None, str(exc)
        try:
            answer = json.loads(got.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return host, None, _failed(host, [*remote.ssh(host), "rankdebug", *verb(host)],
                                       got.stderr or "no JSON answer")
        return host, answer, None

    with ThreadPoolExecutor(max_workers=min(AT_ONCE, len(remote.hosts)) or 1) as pool:
        return list(pool.map(one, remote.hosts))


# --- jobs -------------------------------------------------------------------------------


def job_from_json(data: dict[str, Any]) -> Job:
    job = Job(**{k: v for k, v in data.items() if k in _JOB_FIELDS})
    job.dir = None  # that host's folder, not one of this machine's
    job.ranks = [Rank(**{k: v for k, v in r.items() if k in _RANK_FIELDS})
                 for r in data.get("ranks") or []]
    return job


def _key(job: Job) -> tuple[str, str] | None:
    """What one job's ranks share on every node."""
    if job.rendezvous is None:
        return None
    return job.rendezvous, job.run_id or ""


def merge_jobs(found: Discovery, answers: list[tuple[str, dict[str, Any] | None, str | None]]
               ) -> Discovery:
    """This machine's jobs with the other hosts': one job per rendezvous, ranks sorted."""
    by_key = {k: j for j in found.jobs if (k := _key(j)) is not None}
    nodes: list[dict[str, Any]] = [{"host": found.host, "scan_ms": found.scan_ms}]
    joined: dict[int, Job] = {}
    for host, answer, error in answers:
        if answer is None:
            found.warnings.append(error or f"{host}: no answer")
            nodes.append({"host": host, "error": error})
            continue
        # Its hostname names its ranks, unless it is this machine's too (containers,
        # namespaces): then the name it was reached by.
        name = str(answer.get("host") or host)
        if name == found.host:
            name = host
        parts: dict[str, str] = {}  # a job's id here -> the id the host gives its part
        nodes.append({"host": name, "ssh": host, "scan_ms": answer.get("scan_ms"),
                      "jobs": parts})
        found.warnings.extend(f"{host}: {w}" for w in answer.get("warnings") or [])
        for data in answer.get("jobs") or []:
            job = job_from_json(data)
            job.host = name
            for rank in job.ranks:
                rank.host = name
            key = _key(job)
            mine = by_key.get(key) if key is not None else None
            if mine is None:
                parts[job.id] = job.id
                found.jobs.append(job)
                if key is not None:
                    by_key[key] = job
                continue
            parts[mine.id] = job.id
            mine.ranks.extend(job.ranks)
            joined[id(mine)] = mine
            if mine.world_size is None:
                mine.world_size = job.world_size
    for job in joined.values():  # once, at the end: one sort, not one per host
        job.ranks.sort(key=lambda r: (r.rank is None, r.rank or 0, r.pid or 0))
    found.nodes = nodes
    return found


# --- one round: each host finds its part of the job itself ---------------------------------
#
# A verb of one job (stacks, eval, diagnose) need not ask every host for its jobs first and
# then for the verb: the job's rendezvous, as this machine's part of it names it, lets each
# host find its own part (``--rendezvous``, hidden), so every host is asked once.

def rendezvous_of(job: Job) -> str | None:
    """What ``--rendezvous`` takes for ``job``: ``MASTER_ADDR:PORT|RUN_ID``."""
    key = _key(job)
    return f"{key[0]}|{key[1]}" if key is not None else None


def by_rendezvous(jobs: list[Job], text: str) -> Job | None:
    """The job of ``--rendezvous TEXT`` among this host's."""
    rdzv, _, run_id = text.partition("|")
    return next((j for j in jobs if _key(j) == (rdzv, run_id)), None)


def one_round(remote: Remote | None, here: Discovery, job_text: str
              ) -> tuple[Job, list[tuple[str, str, str]]] | None:
    """With ``--hosts``: the job ``job_text`` names among this machine's, and the parts to
    ask (every host, its name read from its answer, the job found there by rendezvous);
    None where this machine has no part of it with a rendezvous, or knows ranks of it on
    other hosts (a ``launch --hosts`` job): ask for the jobs first."""
    from rankdebug.jobs.discover import find_job

    if remote is None:
        return None
    job = find_job(here.jobs, job_text)
    if job is None or rendezvous_of(job) is None \
            or any(r.host != here.host for r in job.ranks):
        return None
    return job, [(host, "", "-") for host in remote.hosts]


def name_of(said: object, ssh_host: str, here: str) -> str:
    """A host's name for its ranks: the hostname it gave, unless this machine has it too
    (containers, namespaces): then the name it was reached by."""
    name = str(said or ssh_host)
    return ssh_host if name == here else name


def parts(found: Discovery, job: Job) -> list[tuple[str, str, str]]:
    """Where ``job`` runs besides here: (ssh host, its hostname, the job's id there)."""
    out = []
    for node in found.nodes:
        there = (node.get("jobs") or {}).get(job.id)
        if node.get("ssh") and there is not None:
            out.append((str(node["ssh"]), str(node["host"]), str(there)))
    return out



# --- stacks -----------------------------------------------------------------------------


def stacks_from_json(report: dict[str, Any], host: str) -> list[RankStack]:
    """The ranks of a host's ``rankdebug stacks --json``, as this machine's reads give them."""
    out = []
    for r in report.get("ranks") or []:
        threads = [Thread(
            name=str(t.get("name") or ""), thread_id=t.get("thread_id"),
            os_thread_id=t.get("os_thread_id"), main=t.get("main") is True,
            active=t.get("active") is True, owns_gil=t.get("owns_gil") is True,
            frames=[Frame(str(f.get("name") or ""), str(f.get("file") or ""),
                          int(f.get("line") or 0)) for f in t.get("frames") or []],
            raised=t.get("raised")) for t in r.get("threads") or []]
        out.append(RankStack(pid=int(r.get("pid") or 0), rank=r.get("rank"), host=host,
                             threads=threads, error=r.get("error"),
                             collective=r.get("collective"), collectives=r.get("collectives"),
                             seconds=float(r.get("seconds") or 0.0), via=r.get("via")))
    return out


def remote_stacks(remote: Remote, where: list[tuple[str, str, str]], verb: list[str],
                  timeout: float, here: str = "") -> list[RankStack]:
    """``rankdebug stacks THERE_ID VERB…`` on each host at once, as RankStacks; a host that
    fails gives one errored entry naming it. A part with no name (``one_round``) is named
    by its answer (``here``: this machine's hostname)."""
    def one(part: tuple[str, str, str]) -> list[RankStack]:
        ssh_host, name, there = part
        name = name or ssh_host
        try:
            got = run_verb(remote, ssh_host, ["stacks", there, "--json", "--node-answer",
                                              *verb], timeout)
            report = json.loads(got.stdout.strip().splitlines()[-1])
        except (RemoteVerbError, ValueError, IndexError) as exc:
            return [RankStack(pid=0, rank=None, host=name, error=str(exc))]
        if "error" in report and "ranks" not in report:
            return [RankStack(pid=0, rank=None, host=name,
                              error=f"{name}: {report['error'].get('message')}")]
        if report.get("fanin") == fanin.FORMAT:  # its ranks as classes (``jobs.fanin``)
            if not part[1]:
                name = name_of(report.get("host"), ssh_host, here)
            try:
                return fanin.stacks_of_answer(report, name)
            except (ValueError, TypeError, IndexError, KeyError) as exc:
                return [RankStack(pid=0, rank=None, host=name,
                                  error=f"{name}: a malformed answer ({exc})")]
        return stacks_from_json(report, name)

    with ThreadPoolExecutor(max_workers=min(AT_ONCE, len(where)) or 1) as pool:
        return [rs for got in pool.map(one, where) for rs in got]
