"""Four stdlib-only ranks (no torch: they start fast) that loop until the job is stopped, for
the end-to-end scenario `sessioncap` (rankdebug.maxSessions 2): rank 0 alone reaches the line
tagged `the e2e breakpoint`, once, and only after every rank has run a step (each rank marks
its first step in a folder of the working directory named for the launcher's pid), so that
every chosen rank, with a session or not, has its debugger by then and stops with rank 0."""

import os
import time

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
ready = os.path.join(os.getcwd(), f".cap-ready-{os.getppid()}")
os.makedirs(ready, exist_ok=True)


def wait_a_little(step: int) -> int:
    time.sleep(0.1)  # a collective's stand-in
    return step + 1


step = 0
stopped_once = False
while True:
    if step == 1:
        open(os.path.join(ready, str(rank)), "w").close()
    if rank == 0 and not stopped_once and step > 1 and len(os.listdir(ready)) >= world:
        stopped_once = True
        seen = step  # the e2e breakpoint: rank 0 alone, once
    step = wait_a_little(step)
