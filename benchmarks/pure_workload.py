"""A rank with no torch: heavy imports and a call-heavy build before its breakpoint line, for
measuring the debugger's cost on interpreters without a torch wheel here (3.12, 3.13)."""

import argparse  # noqa: F401
import asyncio  # noqa: F401
import decimal  # noqa: F401
import email.mime.multipart  # noqa: F401
import http.client  # noqa: F401
import json
import os
import unittest  # noqa: F401
import xml.dom.minidom  # noqa: F401


def node(depth: int) -> dict[str, object]:
    if depth == 0:
        return {"w": 1.0}
    return {"l": node(depth - 1), "r": node(depth - 1)}


def weigh(tree: dict[str, object]) -> float:
    if "w" in tree:
        return float(tree["w"])  # type: ignore[arg-type]
    return weigh(tree["l"]) + weigh(tree["r"])  # type: ignore[arg-type]


model = [weigh(node(15)) for _ in range(70)]  # about two seconds of Python calls
mark = os.environ.get("PURE_MARK")
if mark:
    with open(mark, "w") as f:
        json.dump({"reached": True}, f)
total = sum(model)  # BREAK
print("total", total)
