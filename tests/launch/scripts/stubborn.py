"""loop.py's loop in a process that ignores SIGTERM (a rank whose launcher or code traps
it): when its supervisor is killed outright, the parent-death signal does not end it."""

import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
done = False  # the test's debugger sets it
total = 0
for i in range(1200):
    total += i  # LATE
    if done:
        break
    time.sleep(0.05)
print("total", total)
