"""A single-process script that runs about two seconds: a pause sent as the client
configures lands before it starts or while it runs, never after it has ended."""

import time

total = 0
for i in range(200):
    total += i  # LOOP
    time.sleep(0.01)
print("total", total)
