"""``rankdebug diagnose JOB``: why a job is stuck, from a hung or diverged job to the rank
that holds it and the place in the user's code, in one step.

Every rank is read a few times a moment apart (``watch``: stacks and, from the kernel, what
each main thread did between reads), each rank judged over the reads (``seen``: waiting,
running, stuck, raised, exited, unknown), the ranks classed by where they are (``classes``)
and what holds the job said (``findings``); ``report`` prints it, ``cli`` is the verb.

``--json`` prints one object a line::

    {"event": "class", "ranks": [0, 1, 2], "state": "waiting",
     "collective": {"op": "all_reduce", "seq": 6, "group": "0"} | null,
     "where": {"file", "line", "function"}, "frames": [{"file", "line", "function"}, ...]}
        one per class, largest first; frames innermost first, the user's place ``where``
        (all null for a rank with no stack: exited, unknown); state one of waiting (in a
        collective), running (progressing), stuck (no progress in Python), exited, raised,
        unknown
    {"event": "rank", "rank", "pid", "host", "state", "manner", "via", "collective",
     "where", "frames", "collectives", "seconds", "cpu", "wakes", "reads", "waited", ...}
        one per rank: what was seen of it (``--hosts`` reads other nodes through these)
    {"event": "collectives", "group": "0", "desc": "default_pg",
     "positions": [{"ranks": [0, 1, 2], "op": "all_reduce" | null, "seq": 6,
                    "context": "DDP bucket, from backward" | null}, ...]}
        per process group its handlers named, as ``jobs.analysis.collective_check`` reads a rank's
        place: the collective each rank waits in (or the recorder has open), else the
        number of the last it issued
    {"event": "culprit", "ranks": [3], "why": "...", "where": {...} | null}
        one per finding; or, for a healthy job, {"event": "healthy", "why": "..."}
    {"event": "done", "seconds": 1.2, "ranks_read": 4,
     "ranks_unread": [{"rank": 5, "reason": "..."}]}
        last
"""
