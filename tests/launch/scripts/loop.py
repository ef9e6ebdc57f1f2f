"""A script that runs for a while; its planted breakpoint is never reached."""

import time


def never_called():
    return 0  # NEVER


total = 0
for i in range(400):
    total += i  # LATE
    time.sleep(0.05)
print("total", total)
