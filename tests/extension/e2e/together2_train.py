"""Two ranks that loop until the job is stopped (a small step every 50 ms, no collective);
rank 1 enters its loop 2 s after rank 0. The end-to-end scenario `together2` debugs both ranks
with no breakpoint and runs them to the line tagged `the e2e cursor` (Run Chosen Ranks to
Cursor): rank 0 gets there first and holds until rank 1 arrives.

Once the file `together2.crash` exists next to this script, rank 1 raises an uncaught
ValueError on the line tagged `the e2e raise` (its local `loss` is 7.25), half a second after
rank 0 has entered an all_reduce that waits for it. The process group's timeout is 3 s: were it
not raised while the job is debugged, rank 0's all_reduce would fail 3 s later and end the job."""

import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

CRASH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "together2.crash")

dist.init_process_group("gloo", timeout=timedelta(seconds=3))
rank = dist.get_rank()
state = torch.zeros(1)
if rank == 1:
    time.sleep(2.0)  # rank 1 is 2 s late to its loop
step = 0
while True:
    step += 1
    state += 1  # the e2e cursor: both ranks run to here
    time.sleep(0.05)
    if os.path.exists(CRASH):
        if rank == 1:
            time.sleep(0.5)  # rank 0 waits in the all_reduce by then
            loss = 7.25
            raise ValueError(f"loss is {loss}")  # the e2e raise: rank 1 alone
        dist.all_reduce(state)  # rank 0 waits here for rank 1, longer than the 3 s timeout
