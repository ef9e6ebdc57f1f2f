"""The launch plan: what a training command will start, as far as it can be known.

Its JSON form is the `rankdebug plan` contract: README.md, "`rankdebug plan`: what will this
command start?". ``launcher`` is a name of ``rankdebug.launcher_table``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from rankdebug.command.words import Span, Word

if TYPE_CHECKING:
    from rankdebug.command.coords import Layout, Mismatch

EntryKind = Literal["script", "module", "cli"]
Severity = Literal["error", "warning", "info"]
NprocPerNode = int | Literal["auto", "gpu", "cpu"] | None


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A finding about a command, anchored to the text it is about."""

    message: str
    span: Span
    severity: Severity = "warning"
    code: str = "unknown-value"
    # Replacement text for `span` that fixes the problem, when there is one.
    fix: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "message": self.message,
            "severity": self.severity,
            "code": self.code,
            **span_json(self.span),
        }
        if self.fix is not None:
            out["fix"] = self.fix
        return out


@dataclass(frozen=True, slots=True)
class Entry:
    kind: EntryKind
    target: Word

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "target": self.target.display}


@dataclass(frozen=True, slots=True)
class RankInfo:
    rank: int
    node_rank: int | None
    local_rank: int | None

    def to_json(self) -> dict[str, object]:
        return {"rank": self.rank, "node_rank": self.node_rank, "local_rank": self.local_rank}


@dataclass(frozen=True, slots=True)
class OptionUse:
    """One launcher option as written: for hovers, diagnostics and quick fixes."""

    name: str  # canonical name, e.g. "nproc_per_node"
    flag: str  # as written, e.g. "--nproc-per-node"
    value: Word | None
    span: Span  # the flag and its value


@dataclass(slots=True)
class LaunchPlan:
    launcher: str
    argv: list[Word]
    span: Span
    nnodes: int | None = None
    node_rank: int | None = None
    nproc_per_node: NprocPerNode = None
    world_size: int | None = None
    entry: Entry | None = None
    entry_args: list[Word] = field(default_factory=list)
    # Index in argv where the launched program (entry) starts (smoke's rewrite changes the
    # words after it).
    entry_index: int | None = None
    # Inline assignments on the command itself (the contract's "env").
    env: dict[str, Word] = field(default_factory=dict)
    # Variables the script exported before the command; the job needs them too.
    script_env: dict[str, Word] = field(default_factory=dict)
    # Devices visible to each node, when CUDA_VISIBLE_DEVICES (or the like) says.
    visible_devices: int | None = None
    nnodes_range: tuple[int, int] | None = None
    # The launcher's own process runs the one rank, with no rank variable (`tune run`
    # without a torchrun option runs the recipe in itself).
    in_launcher: bool = False
    # The hosts the launcher spreads the job over, in node order, where the command (or
    # the allocation) names them: mpirun -H/hostfile, srun -w/SLURM_JOB_NODELIST, a
    # DeepSpeed hostfile.
    hosts: list[str] | None = None
    master_addr: Word | None = None
    master_port: Word | None = None
    cwd: str | None = None
    options: list[OptionUse] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Plans of commands nested in this one (e.g. `bash train.sh` followed into train.sh).
    followed: str | None = None
    background: bool = False

    @property
    def warnings(self) -> list[str]:
        return [d.message for d in self.diagnostics if d.severity != "info"]

    def warn(
        self,
        message: str,
        span: Span | None = None,
        *,
        code: str = "unknown-value",
        severity: Severity = "warning",
        fix: str | None = None,
    ) -> None:
        d = Diagnostic(message, span or self.span, severity, code, fix)
        if d not in self.diagnostics:
            self.diagnostics.append(d)

    def option(self, name: str) -> OptionUse | None:
        for use in self.options:
            if use.name == name:
                return use
        return None

    @property
    def ranks(self) -> list[RankInfo]:
        """Every rank of the job, when the numbers are known."""
        per_node = self.nproc_per_node if isinstance(self.nproc_per_node, int) else None
        if per_node is None and self.visible_devices and self.nproc_per_node in ("gpu", "auto"):
            per_node = self.visible_devices
        world = self.world_size
        if world is None or world <= 0 or world > 1_000_000:
            return []
        if per_node and per_node > 0:
            return [RankInfo(r, r // per_node, r % per_node) for r in range(world)]
        if self.nnodes == 1:
            return [RankInfo(r, 0, r) for r in range(world)]
        return [RankInfo(r, None, None) for r in range(world)]

    def read_coords(self) -> Layout | Mismatch | None:
        """The parallel layout (dp, tp, pp ...) the command's arguments or configs give; a
        Mismatch when its sizes cannot fit the world; None when it gives none. Read each
        time: the words move with the document."""
        from rankdebug.command.coords import Facts, layout_of

        script = self.entry.target.value if self.entry and self.entry.kind == "script" else None
        return layout_of(Facts(
            self.launcher, self.entry_args, self.world_size, self.cwd,
            # A followed script's (`bash train.sh`) words were written in that script.
            self.followed.rsplit(":", 1)[0] if self.followed else None, script,
            {o.name: o.value for o in self.options}))

    @property
    def coords(self) -> Layout | None:
        """The layout of :meth:`read_coords`, or None; sizes that cannot fit become a
        warning on the plan (``parallel-sizes``)."""
        from rankdebug.command.coords import Layout, Mismatch

        found = self.read_coords()
        if isinstance(found, Mismatch):
            at = found.at
            here = (Span.point(at.line - 1, at.column - 1)
                    if at.file is None and at.line and at.column and not self.followed
                    else None)
            where = f" ({at.name} {at.value}, {at.file}:{at.line})" if at.file else ""
            self.warn(found.message + where, here, code="parallel-sizes")
        return found if isinstance(found, Layout) else None

    def to_json(self) -> dict[str, object]:
        layout = self.coords
        return {
            "launcher": self.launcher,
            "nnodes": self.nnodes,
            "node_rank": self.node_rank,
            "nproc_per_node": self.nproc_per_node,
            "world_size": self.world_size,
            "entry": self.entry.to_json() if self.entry else None,
            "entry_args": [w.display for w in self.entry_args],
            "env": {k: w.display for k, w in self.env.items()},
            "ranks": [r.to_json() for r in self.ranks],
            "span": {
                "start_line": self.span.start_line + 1,
                "end_line": self.span.end_line + 1,
                "start_column": self.span.start_col + 1,
                "end_column": self.span.end_col + 1,
            },
            "warnings": self.warnings,
            # Beyond the contract: what the rest of the product needs.
            "argv": [w.display for w in self.argv],
            "unknown_argv": [i for i, w in enumerate(self.argv) if not w.known],
            "entry_index": self.entry_index,
            "script_env": {k: w.display for k, w in self.script_env.items()},
            "visible_devices": self.visible_devices,
            "nnodes_range": list(self.nnodes_range) if self.nnodes_range else None,
            "in_launcher": self.in_launcher,
            "hosts": self.hosts,
            "master_addr": self.master_addr.display if self.master_addr else None,
            "master_port": self.master_port.display if self.master_port else None,
            "cwd": self.cwd,
            "followed": self.followed,
            "background": self.background,
            # {dims, order, world_size, source, read, ranks: rank r's coordinates at [r]}
            "coords": ({**layout.to_json(), "ranks": [layout.coords_of(r.rank)
                                                      for r in self.ranks]}
                       if layout is not None else None),
            "options": [
                {"name": o.name, "flag": o.flag, "value": o.value.display if o.value else None,
                 **span_json(o.span)}
                for o in self.options
            ],
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def span_json(span: Span) -> dict[str, int]:
    """1-based lines and columns, end column exclusive, as the CLI prints positions."""
    return {
        "line": span.start_line + 1,
        "column": span.start_col + 1,
        "end_line": span.end_line + 1,
        "end_column": span.end_col + 1,
    }


def known_int(word: Word | None) -> int | None:
    """The word as a non-negative int when it is a known decimal number."""
    if word is None or word.value is None:
        return None
    text = word.value.strip()
    if text.isdigit():
        return int(text)
    return None
