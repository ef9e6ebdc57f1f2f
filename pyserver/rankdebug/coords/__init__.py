"""Parallel coordinates: a job's dimensions (dp, tp, pp, ...) and each rank's place in them.

- :class:`Layout` (``layout.py``): named dimensions over the ranks; ``coords_of(rank)``,
  ``table()`` (the rank → coordinates mapping ``rankdebug.ranks.select_coords`` takes).
- :func:`layout_of` (``from_command.py``): what a launch plan's command says, read the way
  each framework computes it, before anything runs.
"""

from __future__ import annotations

from rankdebug.coords.from_command import NOT_GIVEN, layout_of, why_unknown
from rankdebug.coords.layout import Axis, Layout, Mismatch, Read

__all__ = ["NOT_GIVEN", "Axis", "Layout", "Mismatch", "Read", "layout_of", "why_unknown"]
