"""A script that runs for a while; its planted breakpoint is never reached."""

import time


def never_called():
    return 0  # NEVER


done = False  # the test's debugger sets it
total = 0
for i in range(1200):
    total += i  # LATE
    if done:
        break
    time.sleep(0.05)
print("total", total)
