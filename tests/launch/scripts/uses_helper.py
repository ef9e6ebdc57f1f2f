"""A plain script whose breakpoint lives in an imported module."""

import sys

from helper_mod import scale

result = scale([1, 2, 3], 2)
print("result", result)
sys.exit(0 if result == [2, 4, 6] else 5)
