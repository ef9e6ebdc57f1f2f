"""Staged checks (``rankdebug smoke --check``): what fails in seconds before a run fails in
minutes. Each stage passes or fails with its reason; the first failure ends the run.

    entry      the script (or module, or program) is there and compiles
    imports    its top-level imports resolve, in the interpreter the command runs
    paths      the data, model and config paths the command names exist (a hub id is
               reported, never downloaded)
    launcher   the launcher is installed (program on PATH, package importable)
    framework  the frameworks the rewrite found are importable, with their versions
    devices    the GPUs the command expects are visible (a CPU/gloo run passes without; a
               script that asks for CUDA or NCCL fails without, offering the CPU change)

Nothing of the job runs: the entry is compiled, not executed, and imports are resolved
with ``importlib.util.find_spec`` in a subprocess (which runs no package code)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rankdebug.command import LaunchPlan
from rankdebug.smoke import devices, paths, probe
from rankdebug.smoke.model import Smoke

# Packages that are a launcher's own (its program or `python -m` module comes from them).
LAUNCHER_PACKAGES = {"torchrun": "torch", "torch.distributed.launch": "torch",
                     "deepspeed": "deepspeed", "accelerate": "accelerate",
                     "llamafactory-cli": "llamafactory", "colossalai": "colossalai",
                     "msrun": "mindspore", "ray": "ray"}


@dataclass(frozen=True, slots=True)
class Stage:
    name: str
    ok: bool
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"stage": self.name, "ok": self.ok, "reason": self.reason}


def run(plan: LaunchPlan, result: Smoke, cwd: Path) -> Iterator[Stage]:
    """The stages in order; stops after the first that fails."""
    env = probe.command_env(result.env)
    entry = probe.locate_entry(plan, cwd, env)
    if not entry.ok:
        yield Stage("entry", False, entry.reason)
        return
    launcher_pkg = LAUNCHER_PACKAGES.get(plan.launcher)
    wanted = [p for p in (launcher_pkg, *result.packages) if p]
    found = probe.run_probe(entry, wanted, cwd, env)
    if found.error:
        yield Stage("entry", False, found.error)
        return
    compiled = ""
    if found.entry_file:
        same = entry.script is not None and found.entry_file == str(entry.script)
        compiled = " and compiles" + ("" if same else f" ({found.entry_file})")
    yield Stage("entry", True, entry.reason + compiled)
    for stage in (_imports(found), paths.check(result.inputs, cwd, env),
                  _launcher(plan, launcher_pkg, found, env),
                  _framework(result, found), devices.check(plan, result)):
        name, ok, reason = stage
        yield Stage(name, ok, reason)
        if not ok:
            return


def _imports(found: probe.Probe) -> tuple[str, bool, str]:
    if found.missing:
        listed = "; ".join(f"{name} ({where})" for name, where in found.missing.items())
        return "imports", False, f"not importable with {found.python}: {listed}"
    if found.entry_file is None:
        return "imports", True, "the entry is a program: its imports are not read"
    n = len(found.imported)
    listed = f": {', '.join(found.imported)}" if found.imported else ""
    return "imports", True, (f"{n} top-level import{'s' if n != 1 else ''} beyond the standard "
                             f"library resolve{'s' if n == 1 else ''} with {found.python}{listed}")


def _launcher(plan: LaunchPlan, package: str | None, found: probe.Probe,
              env: dict[str, str]) -> tuple[str, bool, str]:
    program = plan.argv[0].value if plan.argv else None
    if plan.launcher in ("python", "other"):
        return "launcher", True, f"no launcher: {program} starts the job itself"
    if program and not probe.is_python(program) and probe.which(program, env) is None:
        return "launcher", False, f"{program} is not on PATH"
    if package is None:
        return "launcher", True, f"{plan.launcher}: {probe.which(program or '', env)}"
    version = found.versions.get(package)
    if package not in found.versions:
        return "launcher", False, (f"{plan.launcher} needs the package {package}, which "
                                   f"{found.python} cannot import")
    return "launcher", True, f"{plan.launcher} ({package} {version or 'version unknown'})"


def _framework(result: Smoke, found: probe.Probe) -> tuple[str, bool, str]:
    if not result.packages:
        return "framework", True, "no framework package to import"
    missing = [p for p in result.packages if p not in found.versions]
    if missing:
        needed = ", ".join(f"{p} (for {result.packages[p]})" for p in missing)
        return "framework", False, f"{needed}: cannot be imported with {found.python}"
    listed = ", ".join(f"{p} {found.versions[p] or '(version unknown)'}"
                       for p in result.packages)
    return "framework", True, listed

