"""Two ranks that loop over an all_reduce until the job is stopped (a small step every 50 ms);
rank 0 alone reaches the line tagged `the e2e breakpoint` (at step 2), half a second after rank 1
has entered the all_reduce. The end-to-end scenario `together` debugs both ranks: when rank 0
stops there, rank 1 (waiting in the all_reduce) is shown paused too: ranks stop together.
Step Over All Ranks then brings rank 0 to the line tagged `the e2e step` (rank 1 still waits);
a breakpoint bound to rank 1 on the line tagged `the e2e bound breakpoint`, which both ranks
pass at every step, stops rank 1 only."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
state = torch.zeros(1)
step = 0
while True:
    tick = step  # the e2e bound breakpoint: both ranks pass here
    state += 1
    time.sleep(0.05)
    if rank == 0 and step == 2:
        time.sleep(0.5)  # rank 1 waits in the all_reduce by now
        seen = step  # the e2e breakpoint: rank 0 alone
        seen += 1  # the e2e step: Step Over All Ranks brings rank 0 here
    dist.all_reduce(state)
    step += 1
