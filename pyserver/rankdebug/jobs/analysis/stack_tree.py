"""Every rank's main-thread stack merged into one tree (DDT's parallel stack view): the
outermost frame at the root, each node a frame (function, file, line) with the ranks that
are at it; where ranks part ways the tree branches.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rankdebug.pyspy import Frame
from rankdebug.ranks import compact


@dataclass
class Node:
    frame: Frame
    ranks: list[int] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {**self.frame.to_json(), "count": len(self.ranks), "ranks": self.ranks,
                "children": [c.to_json() for c in self.children]}


def merge(stacks: Iterable[tuple[int, list[Frame]]]) -> list[Node]:
    """``(rank, frames innermost first)`` pairs → the roots, largest branch first. Ranks
    that share one frames list (a class of a node's answer, ``jobs.fanin``) are walked
    down the tree once, together: the cost grows with the classes, not the ranks."""
    classes: dict[int, tuple[list[Frame], list[int]]] = {}
    for rank, frames in stacks:
        classes.setdefault(id(frames), (frames, []))[1].append(rank)
    return merge_classes(classes.values())


def merge_classes(classes: Iterable[tuple[list[Frame], list[int]]]) -> list[Node]:
    """``(frames innermost first, the ranks at them)`` pairs → the roots."""
    roots: list[Node] = []
    index: dict[tuple[int, tuple[str, str, int]], Node] = {}  # (id of level, frame) → node
    for frames, ranks in classes:
        level = roots
        for frame in reversed(frames):  # outermost first
            at = (id(level), (frame.name, frame.file, frame.line))
            node = index.get(at)
            if node is None:
                node = index[at] = Node(frame)
                level.append(node)
            node.ranks.extend(ranks)
            level = node.children
    _order(roots)
    return roots


def _order(nodes: list[Node]) -> None:
    nodes.sort(key=lambda n: (-len(n.ranks), min(n.ranks)))
    for node in nodes:
        node.ranks.sort()
        _order(node.children)


def render(roots: list[Node], total: int) -> list[str]:
    """Indented lines: ranks at the node, the frame; library frames marked ``·``. A chain of
    nodes with the same ranks is drawn at one indentation level."""
    lines: list[str] = []

    def walk(node: Node, depth: int, same_as_parent: bool) -> None:
        count = f"{len(node.ranks)}/{total}"
        who = "" if same_as_parent else f"  [{compact(node.ranks)}]"
        mark = "·" if node.frame.library else " "
        lines.append(f"  {count:>7} {'  ' * depth}{mark}{node.frame.name}  "
                     f"{node.frame.short()}{who}")
        branching = len(node.children) > 1
        for child in node.children:
            walk(child, depth + (1 if branching else 0), child.ranks == node.ranks)

    for root in roots:
        walk(root, 0, False)
    return lines
