"""Where an importable package is installed (``debugpy``, ``rankdebug`` itself): what a job's
boot folder links to, what a node without them is sent, and where the adapter runs from. One
home for the supervisor and the ``--hosts`` verbs."""

from __future__ import annotations

import importlib.util

from rankdebug.errors import BadInput


def package_dir(module: str) -> str:
    """The folder of an importable package, e.g. ``debugpy``; BadInput when it has none."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise BadInput(f"cannot find the {module} package")
    return str(next(iter(spec.submodule_search_locations)))
