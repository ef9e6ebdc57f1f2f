"""``rankdebug jobs --json``: the one object it prints (``jobs.discover.Discovery.to_json``),
declared with each nested object. The extension reads it (``core/jobList.ts readJobs``,
held by tsc to the types generated from here); the real-job tests check every answer
against it (``fields.shape_problem``)."""

from __future__ import annotations

from rankdebug.protocol.fields import Field, Shape, nullable, shape_of

SHAPES: dict[str, Shape] = {s.name: s for s in (
    shape_of("Answer", "What `rankdebug jobs --json` prints.",
       host=Field("str", "this machine's hostname"),
       time=Field("number", "when it looked, in seconds since the epoch"),
       scan_ms=Field("number", "what the /proc scan took"),
       processes=Field("int", "how many processes the scan looked at"),
       jobs=Field("[Job]", "every job found: the registry's, then the scan's"),
       warnings=Field("[str]", "what went wrong on the way (the answer is still whole)"),
       registry=nullable("str", "the job registry's folder, made private if missing: watched for "
                   "jobs coming and going; null when the registry was not read"),
       nodes=Field("[object]", "with --hosts: every host asked, {host, ssh, scan_ms, jobs} "
                   "or {host, error}", optional=True)),
    shape_of("Job", "One job.",
       id=Field("str", "the registry id, or LAUNCHERPID@HOST for a job the scan found"),
       source=Field("str", "`registry` (started by `rankdebug launch`) or `scan`"),
       host=Field("str", "the machine the job was found on"),
       launcher=nullable("str", "`torchrun`, `deepspeed`, ...; `other` when unknown"),
       launcher_pid=nullable("int", "scan: the ranks' parent; registry: `rankdebug launch`"),
       command=Field("[str]", "the command's argv"),
       cwd=nullable("str"), start_time=nullable("number", "seconds since the epoch"),
       world_size=nullable("int", "null when no rank says"),
       rendezvous=nullable("str", "MASTER_ADDR:MASTER_PORT"),
       run_id=nullable("str", "TORCHELASTIC_RUN_ID"),
       armed=Field("bool", "started with `rankdebug launch --arm`"),
       ranks=Field("[Rank]", "its ranks, by number"),
       dir=nullable("str", "a registry job's folder here (its ctl.sock takes the job's commands); "
              "null for a job the scan found, or one on another host")),
    shape_of("Rank", "One rank of a job.",
       pid=nullable("int"), rank=nullable("int"), local_rank=nullable("int"),
       world_size=nullable("int"),
       host=Field("str", "the machine"),
       port=nullable("int", "a debug adapter listening for this rank"),
       address=nullable("str", "where that port listens"),
       state=Field("str", "starting, running, raised, listening, attached or exited"),
       proc_state=nullable("str", "running, sleeping, disk-wait, stopped, traced or zombie"),
       cpu=nullable("number", "percent of one core: since the previous sample (--sample), else "
              "the lifetime average"), cpu_time=nullable("number", "seconds"),
       rss=nullable("int", "bytes"), threads=nullable("int"),
       gpu=nullable("[Gpu]", "the GPUs it uses (nvidia-smi)"),
       cuda_visible_devices=nullable("str"), command=Field("[str]"), cwd=nullable("str"),
       start_time=nullable("number", "seconds since the epoch"),
       armed=Field("bool", "serves a control socket (attach, eval, stacks)"),
       socket=nullable("str", "that socket's path"),
       raised=nullable("Raised", "held at an uncaught exception (rankdebug.runtime.hold), or a "
                 "chosen rank its debugger stopped at one; kept after an attach"),
       collective=nullable("Collective", "a chosen rank of `rankdebug launch` waiting in a "
                     "collective: a group step it has not finished, or shown paused while a "
                     "peer is stopped"),
       role=nullable("str", "a Ray actor rank's role"),
       coords=nullable("object", "parallel coordinates ({dp: 1, tp: 3}) from the job's DeviceMesh "
                 "or Megatron's parallel_state, outermost first; null while unknown")),
    shape_of("Gpu", "A GPU a rank uses.",
       index=nullable("int"), uuid=Field("str"), memory_mib=nullable("int")),
    shape_of("Raised", "Where a rank held at an uncaught exception raised it (as the rank said).",
       exception=Field("str"), message=nullable("any"), file=nullable("any"), line=nullable("any"),
       function=nullable("any")),
    shape_of("Collective", "The collective a rank waits in, from PyTorch's records where known.",
       name=Field("str"), seq=nullable("int"), group=nullable("str")),
)}
