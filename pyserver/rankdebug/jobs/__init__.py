"""Running jobs: find them, read every rank's stack, attach a debugger to any rank.

Modules: ``discover`` (registry + ``/proc`` scan), ``stacks`` (stacks from armed ranks'
handlers or py-spy dumps, grouped), ``armed`` (requests to armed ranks' control sockets),
``attach`` (debugpy injected: ``inject``'s ptrace, else gdb), ``ptrace`` (why ptrace is
refused, and the fix),
``gpu`` (nvidia-smi, where present), and the CLI verbs ``cli_jobs``, ``cli_stacks``,
``cli_attach``, ``cli_eval``.

``rankdebug jobs --json`` prints one object (what the language server's ``rankdebug.jobs``
command and the Training Jobs view read; declared, and checked in the tests, by
``rankdebug.protocol.jobs``)::

    {"host": "node0", "time": 1795355200.8, "scan_ms": 2.3, "processes": 94,
     "warnings": [],
     "registry": "/run/user/1000/rankdebug" | null,   # the registry's root (made 0700 if
                                  # missing): an editor watches it for jobs coming and going
     "jobs": [{
        "id": "20261122-134622-10902" | "4242@node0",  # registry id | launcher pid@host
        "source": "registry" | "scan",
        "host": "node0",
        "launcher": "torchrun",      # plan's launcher names; "other" when unknown
        "launcher_pid": 4242,        # scan: the ranks' parent; registry: `rankdebug launch`
        "command": ["torchrun", "--nproc_per_node", "4", "train.py"],   # argv
        "cwd": "/home/me/proj", "start_time": 1795355182.8,   # seconds since the epoch
        "world_size": 4,             # null when no rank says
        "rendezvous": "127.0.0.1:29500" | null, "run_id": "…" | null,
        "armed": false,              # started with `rankdebug launch --arm`
        "dir": "/run/user/1000/rankdebug/<job>" | null,   # registry: the job's folder here
                                     # (its ctl.sock takes commands); scan, other host: null
        "ranks": [{
            "pid": 4250, "rank": 0, "local_rank": 0, "world_size": 4,
            "host": "node0",          # the machine
            "port": 5678 | null,      # a debug adapter listening for this rank
            "address": "127.0.0.1" | null,   # where that port listens
            "state": "starting" | "running" | "raised" | "listening" | "attached" | "exited",
            "proc_state": "running" | "sleeping" | "disk-wait" | "stopped" | "traced"
                          | "zombie" | null,
            "cpu": 98.5,              # percent of one core (lifetime average on one scan)
            "cpu_time": 12.3, "rss": 268435456, "threads": 9,
            "gpu": null | [{"index": 0, "uuid": "GPU-…", "memory_mib": 4000}],
            "cuda_visible_devices": "0,1" | null,
            "command": [...], "cwd": "...", "start_time": 1795355184.5,
            "armed": false,           # serves a control socket (attach, eval, stacks)
            "socket": "/run/user/1000/rankdebug/<job>/rank-0.sock" | null,
            # held at an uncaught exception (rankdebug.runtime.hold), or a chosen rank its
            # debugger stopped at one (state "paused" then); kept after an attach
            "raised": null | {"exception": "ValueError", "message": "...",
                              "file": "/home/me/proj/model.py", "line": 88,
                              "function": "forward"},
            # rankdebug launch: a chosen rank waiting in a collective (a group step it has
            # not finished, or shown paused while a peer is stopped); seq and group from
            # PyTorch's records, null where the rank could not say
            "collective": null | {"name": "all_reduce", "seq": 6 | null,
                                  "group": "0" | null},
            # a Ray actor rank of a rankdebug launch job: its role ("actor/rollout/ref")
            "role": null | "critic",
            # parallel coordinates from the job's DeviceMesh or Megatron's parallel_state,
            # outermost dimension first (jobs.job_coords); null while unknown
            "coords": null | {"dp": 1, "tp": 3}}]}]}

The table (``rankdebug jobs``) ends such a rank's line with ``raised ValueError at
model.py:88``, or ``waiting in all_reduce #6 (group 0)``.

Jobs are identified by their registry id, or, for jobs found by the scan, by
``LAUNCHERPID@HOST``; every verb also takes a unique prefix of an id or the launcher's pid.
Only the current user's processes are ever listed or touched.
"""
