"""Parallel coordinates: a job's dimensions (dp, tp, pp, ...) and each rank's place in them.

- :class:`Layout` (``layout.py``): named dimensions over the ranks; ``coords_of(rank)``,
  ``table()`` (the rank → coordinates mapping ``rankdebug.ranks.select_coords`` takes).
- :func:`layout_of` (``from_command.py``): what a launch plan's command says (its
  :class:`Facts`), read the way each framework computes it, before anything runs; a plan
  asks through ``LaunchPlan.coords``.
"""

from __future__ import annotations

from rankdebug.command.coords.from_command import NOT_GIVEN, Facts, layout_of, why_unknown
from rankdebug.command.coords.layout import Axis, Layout, Mismatch, Read

__all__ = ["NOT_GIVEN", "Axis", "Facts", "Layout", "Mismatch", "Read", "layout_of", "why_unknown"]
