"""How the job's ranks end, as the supervisor tells it: which rank processes to watch
(``rank_exits``, from a scan of /proc), the chosen ranks that never started (said once,
after ``MISSING_RANK_S``), a chosen rank that ended before its script finished (the job
ends after ``ABNORMAL_GRACE_S``, the launcher given that long to notice first), and, when
the job failed, the rank that ended first (said once)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from rankdebug import launcher_table
from rankdebug.debugplan.job_env import JobRun
from rankdebug.supervise import procs
from rankdebug.supervise.rank_conns import RankConn, RankConns
from rankdebug.supervise.rank_exits import RankExits

# A chosen rank not started by then is worth a word (RANKDEBUG_MISSING_RANK_S: tests).
MISSING_RANK_S = float(os.environ.get("RANKDEBUG_MISSING_RANK_S", "") or 30.0)
ABNORMAL_GRACE_S = 1.0  # a rank ended badly: give the launcher this long to notice first


class RankEnds:
    def __init__(self, plan: JobRun, conns: RankConns, say: Callable[[str], None]) -> None:
        self.plan = plan
        self.conns = conns
        self.say = say
        self.exits = RankExits()
        self.abnormal_at: float | None = None  # when a chosen rank ended badly
        self._started_at = time.monotonic()
        self._scanned_at = 0.0
        self._missing_said = False
        self._first_said = False

    def tick(self, stopping: bool) -> None:
        self._notice_missing()
        if not stopping:
            self._watch()

    def abnormal(self) -> bool:
        """A chosen rank ended badly, and the launcher had its while to notice."""
        return (self.abnormal_at is not None
                and time.monotonic() - self.abnormal_at > ABNORMAL_GRACE_S)

    def _watch(self) -> None:
        """New rank processes get watched (``rank_exits``): every second for the first 30 s,
        when ranks start, then every 10 s (an elastic restart); the scan reads /proc."""
        now = time.monotonic()
        every = 1.0 if now - self._started_at < 30 else 10.0
        if now - self._scanned_at < every:
            return
        self._scanned_at = now
        self.exits.watch(procs.rank_pids(procs.descendants(os.getpid())))

    def say_first_ended(self) -> None:
        """The job failed: name the rank that ended first (once)."""
        first = self.exits.first()
        if first is None or self._first_said:
            return
        self._first_said = True
        self.say(f"rank {first.rank} (pid {first.pid}) ended first; the launcher's own "
                 "message says how it ended")

    def _notice_missing(self) -> None:
        """Say once, after ``MISSING_RANK_S``, which chosen ranks never started and what the
        launcher did start: a launcher that starts fewer processes than its flags say
        (``accelerate launch --cpu`` starts one) would otherwise leave the user waiting
        without a word."""
        if self._missing_said or not self.plan.chosen:
            return
        if time.monotonic() - self._started_at < MISSING_RANK_S:
            return
        self._missing_said = True
        seen = {c.rank for c in self.conns.by_cid.values() if c.rank is not None}
        missing = [r for r in self.plan.chosen if r not in seen]
        if not missing:
            return
        started = procs.ranks_started(procs.descendants(os.getpid()))
        what = (f"the launcher has started rank(s) {', '.join(map(str, started))} so far"
                if started else "the launcher has started no rank so far")
        self.say(f"rank(s) {', '.join(map(str, missing))} chosen but not started after "
                 f"{MISSING_RANK_S:.0f} s; {what}. The launcher may start fewer processes "
                 f"than the command asks for (accelerate launch --cpu starts one, for "
                 f"example), or the job is still loading.")

    def closed(self, conn: RankConn | None) -> None:
        """A rank's connection closed: a chosen rank whose script did not finish ended
        badly (where the launcher counts a rank's end as a failure)."""
        if (conn is None or conn.rank is None or not conn.chosen or conn.finished
                or not launcher_table.get(self.plan.launcher).rank_end_fails):
            return
        first = self.exits.first_before(conn.rank)
        if first is None:
            self.say(f"rank {conn.rank} ended before its script finished")
        else:  # the launcher stopped it: the user wants the rank that failed
            self._first_said = True
            self.say(f"rank {conn.rank} ended before its script finished: rank "
                     f"{first.rank} (pid {first.pid}) had ended first, and the launcher "
                     f"stops every rank once one fails (its own message says how rank "
                     f"{first.rank} ended)")
        if self.abnormal_at is None:
            self.abnormal_at = time.monotonic()

    def close(self) -> None:
        self.exits.close()
