"""A plain single-process script."""

import os

total = 0
for i in range(3):
    total += i  # BREAK
print("total", total, "rank", os.environ.get("RANK", "-"))
