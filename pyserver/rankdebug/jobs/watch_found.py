"""``rankdebug watch JOB``: the hang watch of a job found running (plain ``torchrun``,
deepspeed, accelerate …, not started by ``rankdebug launch``), with the rule and the events
of the supervisor's own watch (``rankdebug.hang_rule``), and nothing in the job changed.

    rankdebug watch JOB --hang-seconds 120 --json

Its signal. A supervised job's watch counts each rank's collectives through the rank's
handler; a found job has no handler, and putting one in would change the job. What the
kernel says of a rank without touching it cannot show progress soundly: CPU time and wakes
keep coming from a rank that polls a queue or spins in a data loop while the others wait
(the very hangs to find), and a rank waiting in an NCCL collective spins in the CUDA driver.
So the clock runs from the start and from each proof of progress, and when it passes S
the diagnosis (``rankdebug diagnose``: a few py-spy reads of every rank, 1 to 3 s) decides
as the rule says, with one difference the missing signal calls for: as the clock proved no
stillness, any rank seen moving is progress (one rank training on while another sits in a
subprocess is not called stuck); culprits among ranks that all stand still are the hang.
A healthy job costs one diagnosis every S seconds; a hang is said within S and the
diagnosis of the last look that saw progress. The only progress seen between diagnoses:
ranks that were not there before (an elastic restart). Per tick the watch reads only
``/proc/PID/stat`` of the ranks it knows, to end when the job does.

``--json`` lines: ``{"event": "watching", "job", "seconds", "ranks"}`` first; ``hang`` and
``hang_over`` as ``rankdebug launch --json`` says them; ``{"event": "ended", "job"}`` when no
rank of the job runs any more (exit status 0). A job ``rankdebug launch`` supervises, an
unknown job or a bad option: exit status 2 with the error envelope.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
import time
from typing import Any

from rankdebug.errors import BadInput, report
from rankdebug.hang_rule import HangRule, tick_of
from rankdebug.jobs.discover import Job, discover, find_job
from rankdebug.runtime import procstat

PROG = "rankdebug watch"
MAX_S = 7 * 24 * 3600.0
GONE_LOOKS = 3  # looks with no rank before the job counts as ended (an elastic restart's gap)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Watch a training job found running (not started by rankdebug "
                          "launch) for hangs, as rankdebug launch --hang-seconds does, "
                          "without touching it; ends when the job does.")
    parser.add_argument("job", help="job id, id prefix or launcher pid (see `rankdebug jobs`)")
    parser.add_argument("--hang-seconds", type=float, default=120.0, metavar="S",
                        help="say a hang when no rank has made progress for S seconds "
                             "(default %(default)s)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")


def _start(pid: int) -> bytes | None:
    """The process's start time (clock ticks since boot): a pid used again is another one."""
    found = procstat.fields(f"/proc/{pid}/stat")
    return found[procstat.START_TIME] if found else None


class FoundSignal:
    """The progress a found job shows without being touched: ranks that were not there
    before. ``look`` says whether any rank of it still runs."""

    def __init__(self, job: Job) -> None:
        self.job_id = job.id
        self.ranks = self._of(job)
        self._new = False
        self._empty = 0

    @staticmethod
    def _of(job: Job) -> dict[int, bytes]:
        pids = [r.pid for r in job.ranks if r.pid is not None and r.state != "exited"]
        return {pid: start for pid in pids if (start := _start(pid)) is not None}

    def look(self) -> bool:
        """Whether the job still runs; a rank gone sends the watch to find the job again
        (new ranks are progress)."""
        if all(_start(pid) == start for pid, start in self.ranks.items()) and self.ranks:
            return True
        job = find_job(discover(registry=False, gpus=False).jobs, self.job_id)
        ranks = self._of(job) if job is not None else {}
        if any(self.ranks.get(pid) != start for pid, start in ranks.items()):
            self._new = True
        self.ranks = ranks
        self._empty = 0 if ranks else self._empty + 1
        return self._empty < GONE_LOOKS

    def progressed(self) -> bool:
        new, self._new = self._new, False
        return new

    def counted(self) -> bool:
        return False


class _Out:
    """Lines for the reader: JSON or words; one writer at a time."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.lock = threading.Lock()

    def say(self, event: dict[str, Any]) -> None:
        if self.as_json:
            text = json.dumps(event, ensure_ascii=False)
        elif event["event"] == "watching":
            text = (f"watching {event['job']} ({event['ranks']} ranks): a hang is said after "
                    f"{event['seconds']:g} s without progress")
        elif event["event"] == "hang":
            text = f"hang: {event['why']}"
        elif event["event"] == "hang_over":
            text = f"the job moved on after {event['seconds']:g} s"
        else:
            text = f"{event['job']} has ended"
        with self.lock:
            print(text, flush=True)


def _job(text: str) -> Job:
    found = discover(gpus=False)
    job = find_job(found.jobs, text)
    if job is None:
        raise BadInput(f"no job {text!r} (see `rankdebug jobs`)")
    if job.source == "registry":
        raise BadInput(f"job {job.id} was started by rankdebug launch: its supervisor watches "
                       "it (--hang-seconds)")
    if not any(r.pid is not None and r.state != "exited" for r in job.ranks):
        raise BadInput(f"job {job.id} has no running rank to watch")
    return job


def run(args: argparse.Namespace) -> int:
    seconds = args.hang_seconds
    if not 0 < seconds <= MAX_S:
        return report(BadInput(f"--hang-seconds must be more than 0 and at most {MAX_S:g}"),
                      as_json=args.json, prog=PROG)
    try:
        job = _job(args.job)
    except BadInput as exc:
        return report(exc, as_json=args.json, prog=PROG)
    out = _Out(args.json)
    # SIGTERM (the editor hiding the view) ends the watch as Ctrl-C does, at once and quietly:
    # a diagnosis under way is ended with it (subprocess.run kills its child on the way out).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    found = FoundSignal(job)
    rule = HangRule(seconds, job.id, found, lambda: False, out.say)
    rule.moving_is_progress = True  # nothing proved the job still: the clock only ran
    out.say({"event": "watching", "job": job.id, "seconds": seconds, "ranks": len(found.ranks)})
    tick = tick_of(seconds)
    try:
        while True:
            time.sleep(tick)
            if not found.look():
                out.say({"event": "ended", "job": job.id})
                return 0
            rule.step()
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # the reader has gone: so has the point of watching
        return 0

