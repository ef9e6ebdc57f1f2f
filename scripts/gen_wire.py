"""Writes what is generated from the declared messages (``rankdebug.protocol``): the JSON
Schema in docs/schema/ and the extension's TypeScript types. ``--check``: exit 1 (and say
which) when a written file differs from what would be written now.

    python scripts/gen_wire.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rankdebug.protocol import fields, launch

ROOT = Path(__file__).resolve().parent.parent


def outputs() -> dict[Path, str]:
    return {
        ROOT / "docs" / "schema" / "launch-events.schema.json":
            fields.schema("rankdebug launch --json events", launch.EVENTS),
        ROOT / "extension" / "src" / "core" / "generated" / "launchEvents.ts":
            fields.typescript("pyserver/rankdebug/protocol/launch.py", launch.EVENTS,
                              "Wire", "LaunchWire"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    stale = []
    for path, text in outputs().items():
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.relative_to(ROOT))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for path in stale:
        print(f"{path} is stale: run python scripts/gen_wire.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
