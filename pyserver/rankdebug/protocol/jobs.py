"""``rankdebug jobs --json``: the one object it prints (``jobs.discover.Discovery.to_json``),
declared with each nested object. The extension reads it (``core/jobList.ts readJobs``,
held by tsc to the types generated from here); the real-job tests check every answer
against it (``fields.shape_problem``)."""

from __future__ import annotations

from rankdebug.protocol.fields import Field, Shape


def _s(name: str, doc: str, /, **fields: Field) -> Shape:
    return Shape(name, doc, fields)


def _n(kind: str, doc: str = "") -> Field:
    """A field that is always there and may be null."""
    return Field(kind, doc, null=True)


SHAPES: dict[str, Shape] = {s.name: s for s in (
    _s("Answer", "What `rankdebug jobs --json` prints.",
       host=Field("str", "this machine's hostname"),
       time=Field("number", "when it looked, in seconds since the epoch"),
       scan_ms=Field("number", "what the /proc scan took"),
       processes=Field("int", "how many processes the scan looked at"),
       jobs=Field("[Job]", "every job found: the registry's, then the scan's"),
       warnings=Field("[str]", "what went wrong on the way (the answer is still whole)"),
       registry=_n("str", "the job registry's folder, made private if missing: watched for "
                   "jobs coming and going; null when the registry was not read"),
       nodes=Field("[object]", "with --hosts: every host asked, {host, ssh, scan_ms, jobs} "
                   "or {host, error}", optional=True)),
    _s("Job", "One job.",
       id=Field("str", "the registry id, or LAUNCHERPID@HOST for a job the scan found"),
       source=Field("str", "`registry` (started by `rankdebug launch`) or `scan`"),
       host=Field("str", "the machine the job was found on"),
       launcher=_n("str", "`torchrun`, `deepspeed`, ...; `other` when unknown"),
       launcher_pid=_n("int", "scan: the ranks' parent; registry: `rankdebug launch`"),
       command=Field("[str]", "the command's argv"),
       cwd=_n("str"), start_time=_n("number", "seconds since the epoch"),
       world_size=_n("int", "null when no rank says"),
       rendezvous=_n("str", "MASTER_ADDR:MASTER_PORT"),
       run_id=_n("str", "TORCHELASTIC_RUN_ID"),
       armed=Field("bool", "started with `rankdebug launch --arm`"),
       ranks=Field("[Rank]", "its ranks, by number"),
       dir=_n("str", "a registry job's folder here (its ctl.sock takes the job's commands); "
              "null for a job the scan found, or one on another host")),
    _s("Rank", "One rank of a job.",
       pid=_n("int"), rank=_n("int"), local_rank=_n("int"), world_size=_n("int"),
       host=Field("str", "the machine"),
       port=_n("int", "a debug adapter listening for this rank"),
       address=_n("str", "where that port listens"),
       state=Field("str", "starting, running, raised, listening, attached or exited"),
       proc_state=_n("str", "running, sleeping, disk-wait, stopped, traced or zombie"),
       cpu=_n("number", "percent of one core: since the previous sample (--sample), else "
              "the lifetime average"), cpu_time=_n("number", "seconds"),
       rss=_n("int", "bytes"), threads=_n("int"),
       gpu=_n("[Gpu]", "the GPUs it uses (nvidia-smi)"),
       cuda_visible_devices=_n("str"), command=Field("[str]"), cwd=_n("str"),
       start_time=_n("number", "seconds since the epoch"),
       armed=Field("bool", "serves a control socket (attach, eval, stacks)"),
       socket=_n("str", "that socket's path"),
       raised=_n("Raised", "held at an uncaught exception (rankdebug.runtime.hold), or a "
                 "chosen rank its debugger stopped at one; kept after an attach"),
       collective=_n("Collective", "a chosen rank of `rankdebug launch` waiting in a "
                     "collective: a group step it has not finished, or shown paused while a "
                     "peer is stopped"),
       role=_n("str", "a Ray actor rank's role"),
       coords=_n("object", "parallel coordinates ({dp: 1, tp: 3}) from the job's DeviceMesh "
                 "or Megatron's parallel_state, outermost first; null while unknown")),
    _s("Gpu", "A GPU a rank uses.",
       index=_n("int"), uuid=Field("str"), memory_mib=_n("int")),
    _s("Raised", "Where a rank held at an uncaught exception raised it (as the rank said).",
       exception=Field("str"), message=_n("any"), file=_n("any"), line=_n("any"),
       function=_n("any")),
    _s("Collective", "The collective a rank waits in, from PyTorch's records where known.",
       name=Field("str"), seq=_n("int"), group=_n("str")),
)}
