"""Finding the entry and resolving imports in the interpreter the command runs, without
running any of the job's code: one subprocess that compiles the entry and calls
``importlib.util.find_spec`` on top-level names (which executes no package code)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rankdebug import launcher_table
from rankdebug.command import LaunchPlan
from rankdebug.command.entry import script_missing, script_path, script_target, where

TIMEOUT_S = 30

# Runs in the command's interpreter (any Python 3): resolves the entry and its top-level
# imports, and the versions of the packages asked for. Prints one JSON object.
PROBE = r"""
import ast, importlib.util, json, os, sys
a = json.loads(sys.argv[1])
out = {"python": "%s (Python %s)" % (sys.executable, sys.version.split()[0]), "missing": {},
       "versions": {}, "imported": [], "entry_file": None, "error": None}
if a["path0"] is not None:
    sys.path[:] = [a["path0"]] + [p for p in sys.path if p not in ("", os.getcwd())]
def spec(name):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
def locate(name):
    parts = name.split(".")
    s = spec(parts[0])
    if s is None:
        return None, parts[0]
    if len(parts) == 1 and not s.submodule_search_locations:
        return s.origin, None
    locs = list(s.submodule_search_locations or [])
    for i, part in enumerate(parts[1:], 1):
        nxt = None
        for loc in locs:
            d = os.path.join(loc, part)
            if os.path.isfile(d + ".py"):
                nxt = ("file", d + ".py")
                break
            if os.path.isdir(d):
                nxt = ("dir", d)
                break
        if nxt is None:
            return None, ".".join(parts[:i + 1])
        if nxt[0] == "file":
            return (nxt[1], None) if i == len(parts) - 1 else (None, ".".join(parts[:i + 2]))
        locs = [nxt[1]]
    main = os.path.join(locs[0], "__main__.py") if locs else ""
    return (main, None) if os.path.isfile(main) else (None, name + ".__main__")
entry = a["script"]
if a["module"]:
    entry, bad = locate(a["module"])
    if entry is None:
        out["error"] = "no module named %r (for -m %s)" % (bad, a["module"])
if entry and not out["error"]:
    out["entry_file"] = entry
    try:
        with open(entry, "rb") as f:
            tree = ast.parse(f.read(), entry)
        compile(tree, entry, "exec")
    except SyntaxError as e:
        out["error"] = "%s line %s: %s" % (entry, e.lineno, e.msg)
    except (OSError, ValueError) as e:
        out["error"] = "%s: %s" % (entry, e)
    else:
        stdlib = getattr(sys, "stdlib_module_names", ())
        for node in tree.body:
            names = []
            if isinstance(node, ast.Import):
                names = [x.name for x in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            for n in names:
                top = n.split(".")[0]
                if top in stdlib or top == "__future__" or top in out["imported"]:
                    continue
                out["imported"].append(top)
                if spec(top) is None:
                    out["missing"][top] = "line %d" % node.lineno
try:
    from importlib.metadata import packages_distributions, version
    dists = packages_distributions()
except ImportError:
    dists, version = {}, None
for p in a["packages"]:
    if spec(p) is None:
        continue
    v = None
    for d in (dists.get(p) or []) + [p]:
        try:
            v = version(d) if version else None
            break
        except Exception:
            pass
    out["versions"][p] = v
print(json.dumps(out))
"""


@dataclass
class Entry:
    ok: bool
    reason: str
    python: str
    script: Path | None = None
    module: str | None = None
    path0: str | None = None  # sys.path[0] the job's interpreter gets


@dataclass
class Probe:
    python: str
    entry_file: str | None = None
    error: str | None = None
    missing: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str | None] = field(default_factory=dict)
    imported: list[str] = field(default_factory=list)


def command_env(smoke_env: dict[str, str]) -> dict[str, str]:
    """The environment the smoke command runs in: this one, then the command's variables."""
    return {**os.environ, **smoke_env}


def is_python(program: str) -> bool:
    return launcher_table.is_python_name(Path(program).name)


def which(program: str, env: dict[str, str]) -> str | None:
    return shutil.which(program, path=env.get("PATH"))


def interpreter(plan: LaunchPlan, env: dict[str, str]) -> str:
    """The Python the job runs: the command's ``python``, else the launcher program's
    shebang interpreter, else this one."""
    words = [w.value for w in plan.argv[:(plan.entry_index or len(plan.argv)) + 1]]
    for word in words:
        if word and is_python(word):
            found = which(word, env)
            if found:
                return found
    program = which(words[0], env) if words and words[0] else None
    if program:
        shebang = _shebang(Path(program), env)
        if shebang:
            return shebang
    return sys.executable


def _shebang(path: Path, env: dict[str, str]) -> str | None:
    try:
        with path.open("rb") as f:
            first = f.readline(512).decode("utf-8", "replace")
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    parts = first[2:].split()
    if parts and Path(parts[0]).name == "env" and len(parts) > 1:
        parts = parts[1:]
    if not parts or not is_python(parts[0]):
        return None
    return parts[0] if Path(parts[0]).is_absolute() else which(parts[0], env)


def locate_entry(plan: LaunchPlan, cwd: Path, env: dict[str, str]) -> Entry:
    python = interpreter(plan, env)
    entry = plan.entry
    if entry is None:
        return Entry(False, "no entry script, module or program found in the command", python)
    target = entry.target.value
    if target is None:
        return Entry(False, f"the entry {entry.target.display} is not known here", python)
    if entry.kind == "module":
        return Entry(True, f"module {target}", python, module=target, path0=None)
    if entry.kind == "cli":
        found = which(target, env)
        if found is None:
            return Entry(False, f"{target} is not on PATH", python)
        return Entry(True, f"{target} is {found}", python)
    script = script_target(entry)
    if script is None:
        return Entry(True, f"{target} cannot be looked up here", python)
    if script_missing(script, cwd):
        return Entry(False, f"{script} does not exist{where(script, cwd)}", python)
    path = script_path(script, cwd)
    if not path.is_file():
        return Entry(False, f"{script} is not a file", python)
    return Entry(True, f"{script} is there", python, script=path, path0=str(path.parent))


def run_probe(entry: Entry, packages: list[str], cwd: Path, env: dict[str, str]) -> Probe:
    python_file = entry.script if entry.script and _is_python_file(entry.script) else None
    request = {"script": str(python_file) if python_file else None, "module": entry.module,
               "packages": packages,
               "path0": entry.path0 if python_file else None}
    try:
        done = subprocess.run([entry.python, "-c", PROBE, json.dumps(request)], cwd=cwd,
                              env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        return Probe(entry.python, error=f"the import check did not finish in {TIMEOUT_S} s")
    except OSError as exc:
        return Probe(entry.python, error=f"{entry.python} cannot run: {exc.strerror or exc}")
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return Probe(entry.python, error=f"{entry.python} could not check imports: {tail}")
    return Probe(python=str(data.get("python", entry.python)), entry_file=data["entry_file"],
                 error=data["error"], missing=dict(data["missing"]),
                 versions=dict(data["versions"]), imported=list(data["imported"]))


def _is_python_file(path: Path) -> bool:
    if path.suffix == ".py":
        return True
    try:
        with path.open("rb") as f:
            return b"python" in f.readline(256)
    except OSError:
        return False
