"""The chosen ranks debugged as one: stop together, group commands, run to a line together.

Each chosen rank's gate relays its DAP session and reports the adapter's ``stopped`` and
``continued`` events here; the job's own requests go back through the same gate (the client
then sees the events they cause, as if it had asked). What this gives, as Linaro DDT and
TotalView give HPC programs:

- **Stop together** (the default; ``alone`` turns it off): when a chosen rank stops (a
  breakpoint, an exception, a step, a pause), every other chosen rank that runs is paused
  where it is, so that each shows where it was when the first stopped. A rank that runs
  untraced is told to attach and pause (``Gate.held``).
- **Group commands** (``continue``, ``pause``, ``step``): on a set of ranks at once. A group
  step reports ``arrived`` when every rank has stopped again; a rank that has not after
  ``BLOCKED_AFTER_S`` is read and reported ``blocked`` in the collective it waits in, which
  is not a hang: its peers are stopped. The rank's own handler (``runtime.handler``, served
  by every chosen rank from a thread of its own, so it answers while the main thread waits)
  names the operation, its process group, its sequence number and who issued it from
  PyTorch's records (``runtime.collectives``; also a collective torch issues from C++, as
  DDP's bucket all_reduce inside ``backward``); where it cannot answer, ``py-spy`` reads the
  stack from outside and gives the operation's name alone.
- **Run to a line** (TotalView's barrier point): every rank of the group runs to the line and
  holds there; ``arrived`` when the last is there. The line is a breakpoint of the job's
  own for the while, removed again when the group has arrived.

Events (``--json``): ``stopped`` (rank, reason, file, line, function; ``waiting``, and where
known ``seq``, ``group`` and ``context``, for a rank shown paused in a collective),
``continued``, ``arrived`` (command, ranks) and ``blocked`` (rank, in; ``seq``, ``group`` and
``context`` where known). ``context`` says who issued the collective ("DDP bucket, from
backward"); the client's stop reads "Paused: waiting in all_reduce #4 (DDP bucket, from
backward)". The registry entry of a rank that waits in a collective has ``collective`` (its
name), ``seq``, ``group`` and ``context`` (``rankdebug jobs --json``: the rank's
``collective``).

The layer, one module per part: ``state.py`` (what is known of each rank and of each group
command in flight), ``stops.py`` (``Together``: the gates' reports, stop together, where a
rank stopped), ``commands.py`` (the group commands), ``late.py`` (ranks asked to stop that
have not: read from outside, shown waiting or reported blocked).
"""

from rankdebug.supervise.together.state import (
    ACTIVE_READS,
    BLOCKED_AFTER_S,
    GROUP_COMMANDS,
    CommandError,
    Flight,
    JobSide,
    RankDebug,
)
from rankdebug.supervise.together.stops import Together

__all__ = ["ACTIVE_READS", "BLOCKED_AFTER_S", "GROUP_COMMANDS", "CommandError", "Flight",
           "JobSide", "RankDebug", "Together"]
