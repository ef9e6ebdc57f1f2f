"""Rank 0 stops at its breakpoint, then counts to 40 in 2 s; rank 1 sleeps 3 s first, so
the job's pause of rank 1 (stop together) lands long after rank 0 was continued. No
collective: each rank's progress is its own (MARKER_DIR/count-0)."""

import os
import time

rank = int(os.environ["RANK"])
if rank == 1:
    time.sleep(3.0)  # SLEEP
    after = rank  # AFTER
else:
    here = rank  # BREAK
    for count in range(40):
        time.sleep(0.05)
        with open(os.path.join(os.environ["MARKER_DIR"], "count-0"), "w") as f:
            f.write(str(count))
