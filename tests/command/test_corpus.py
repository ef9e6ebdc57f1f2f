"""The corpus: launch scripts in the styles of real projects, each with its expected plan.

Every ``tests/corpus/NAME.{sh,md,sbatch,slurm}`` has a ``NAME.expect.json`` beside it::

    {"source": "repo/path or URL it is modelled on, or 'synthetic'",
     "cases": [{"line": N, "plan": {...contract fields...}, "warnings_match": ["regex", ...]}]}

``plan`` is a subset of the ``rankdebug plan`` contract (shared/design.md): every key given
must equal the engine's value exactly (``span`` is compared on the keys given only), and each
``warnings_match`` regex must match at least one warning. The expectations were derived by
hand from the launchers' semantics, not from the engine's output.

Every case runs through the in-process API; a representative subset also runs through the
real ``rankdebug plan --file ... --line ... --json`` command. Both run with the corpus folder
as the working directory, so hostfiles, YAML configs and followed scripts resolve relatively.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rankdebug.command import plan_file

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
SCRIPT_SUFFIXES = (".sh", ".md", ".sbatch", ".slurm")
CONTRACT_FIELDS = (
    "launcher", "nnodes", "node_rank", "nproc_per_node", "world_size",
    "entry", "entry_args", "env", "span",
)


def _script_for(expect: Path) -> Path:
    stem = expect.name[: -len(".expect.json")]
    found = [CORPUS / f"{stem}{suffix}" for suffix in SCRIPT_SUFFIXES
             if (CORPUS / f"{stem}{suffix}").is_file()]
    assert len(found) == 1, f"{expect.name}: expected exactly one script beside it, found {found}"
    return found[0]


def _load() -> list[tuple[Path, dict[str, Any], str]]:
    out = []
    for expect in sorted(CORPUS.glob("*.expect.json")):
        data = json.loads(expect.read_text(encoding="utf-8"))
        script = _script_for(expect)
        for case in data["cases"]:
            out.append((script, case, data["source"]))
    return out


CASES = _load()
IDS = [f"{script.name}:{case['line']}" for script, case, _ in CASES]

# Cases where the engine disagrees with an expectation we hold to be right (see the reasons).
# strict: when the engine is fixed these start passing, and the mark must then be removed.
ENGINE_MISMATCHES: dict[str, str] = {}


def _params(cases: list[tuple[Path, dict[str, Any], str]], ids: list[str]) -> list[Any]:
    return [
        pytest.param(*c, id=i, marks=pytest.mark.xfail(strict=True, reason=ENGINE_MISMATCHES[i]))
        if i in ENGINE_MISMATCHES else pytest.param(*c, id=i)
        for c, i in zip(cases, ids, strict=True)
    ]


def _cli_subset() -> set[str]:
    """One case per launcher, per script kind, plus the ones that read files beside them."""
    chosen: dict[str, str] = {}
    for (script, case, _), case_id in zip(CASES, IDS, strict=True):
        for key in (f"launcher:{case['plan']['launcher']}", f"suffix:{script.suffix}",
                    f"warns:{bool(case.get('warnings_match'))}"):
            chosen.setdefault(key, case_id)
    picked = set(chosen.values())
    for case_id in IDS:
        if case_id.split(":")[0].startswith((
            "follow_", "deepspeed_hostfile_", "llamafactory_lora_multi_gpu_multi_node",
            "accelerate_fsdp_config", "design_example",
        )):
            picked.add(case_id)
    return picked


CLI_IDS = _cli_subset()
CLI_CASES = [c for c, i in zip(CASES, IDS, strict=True) if i in CLI_IDS]
CLI_CASE_IDS = [i for i in IDS if i in CLI_IDS]


# ---------------------------------------------------------------- comparison


def _same(expected: Any, actual: Any) -> bool:
    """Equality that also tells 4 from "4", 1 from True and 1 from 1.0."""
    if type(expected) is not type(actual):
        return False
    if isinstance(expected, dict):
        return expected.keys() == actual.keys() and all(
            _same(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return len(expected) == len(actual) and all(
            _same(a, b) for a, b in zip(expected, actual, strict=True)
        )
    if isinstance(expected, str) and "{corpus}" in expected:
        # Paths the engine computes from the working directory (`pwd`, $(dirname "$0")).
        expected = expected.replace("{corpus}", str(CORPUS))
    return bool(expected == actual)


def _list_diff(expected: list[Any], actual: list[Any]) -> str:
    lines = []
    for i in range(max(len(expected), len(actual))):
        e = expected[i] if i < len(expected) else "<absent>"
        a = actual[i] if i < len(actual) else "<absent>"
        mark = "  " if i < len(expected) and i < len(actual) and _same(e, a) else "!!"
        lines.append(f"      {mark} [{i}] expected {e!r:40} actual {a!r}")
    return "\n".join(lines)


def plan_mismatches(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Human-readable differences between an expected plan subset and an actual plan."""
    problems = []
    for key, want in expected.items():
        if key not in actual:
            problems.append(f"  {key}: missing from the plan (expected {want!r})")
            continue
        got = actual[key]
        if key == "span" and isinstance(want, dict) and isinstance(got, dict):
            for sub, sub_want in want.items():
                if not _same(sub_want, got.get(sub)):
                    problems.append(f"  span.{sub}: expected {sub_want!r}, actual {got.get(sub)!r}")
            continue
        if _same(want, got):
            continue
        if isinstance(want, list) and isinstance(got, list):
            problems.append(f"  {key}: lists differ\n{_list_diff(want, got)}")
        else:
            problems.append(f"  {key}: expected {want!r}, actual {got!r}")
    return problems


def check(script: Path, case: dict[str, Any], actual: dict[str, Any], how: str) -> None:
    problems = plan_mismatches(case["plan"], actual)
    warnings = actual.get("warnings") or []
    for rx in case.get("warnings_match", []):
        if not any(re.search(rx, w) for w in warnings):
            problems.append(f"  warnings: none matches {rx!r}; warnings were {warnings!r}")
    if problems:
        shown = {k: actual.get(k) for k in (*CONTRACT_FIELDS, "ranks", "warnings")}
        pytest.fail(
            f"{how}: {script.name} line {case['line']}\n"
            + "\n".join(problems)
            + "\nactual plan (contract fields):\n"
            + json.dumps(shown, indent=2, ensure_ascii=False),
            pytrace=False,
        )


# ---------------------------------------------------------------- the corpus itself


def test_corpus_is_big_and_well_formed() -> None:
    assert len({script for script, _, _ in CASES}) >= 70
    scripts = {p for p in CORPUS.iterdir() if p.is_file() and p.suffix in SCRIPT_SUFFIXES}
    expected = {_script_for(e) for e in CORPUS.glob("*.expect.json")}
    assert scripts == expected, f"scripts without expectations: {sorted(scripts - expected)}"
    for script, case, source in CASES:
        where = f"{script.name}:{case['line']}"
        assert source, where
        plan = case["plan"]
        required = set(CONTRACT_FIELDS)
        if plan["launcher"] == "other":
            required -= {"entry", "entry_args"}
        assert required <= plan.keys(), f"{where}: missing {sorted(required - plan.keys())}"
        n_lines = len(script.read_text(encoding="utf-8").splitlines())
        span = plan["span"]
        assert 1 <= span["start_line"] <= case["line"] <= span["end_line"] <= n_lines, where
        for rx in case.get("warnings_match", []):
            re.compile(rx)


def test_comparison_is_strict() -> None:
    assert plan_mismatches({"nproc_per_node": 4}, {"nproc_per_node": "4"})
    assert plan_mismatches({"nnodes": 1}, {"nnodes": True})
    span = {"span": {"start_line": 3, "end_line": 9}}
    assert plan_mismatches({"span": {"start_line": 2}}, span)
    assert not plan_mismatches({"span": {"start_line": 3}}, span)
    assert plan_mismatches({"env": {}}, {"env": {"A": "1"}})
    assert plan_mismatches({"entry_args": ["a"]}, {"entry_args": ["a", "b"]})


# ---------------------------------------------------------------- in-process, every case


@pytest.mark.parametrize(("script", "case", "source"), _params(CASES, IDS))
def test_plan_in_process(script: Path, case: dict[str, Any], source: str) -> None:
    plan = plan_file(script, case["line"], cwd=CORPUS)
    actual = plan.to_json()
    json.dumps(actual)  # the plan must be JSON as it stands
    check(script, case, actual, "plan_file")


# ---------------------------------------------------------------- the real command, a subset


def _rankdebug() -> list[str]:
    exe = shutil.which("rankdebug", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "rankdebug"]


def _clean_env() -> dict[str, str]:
    """What a process needs, nothing a plan could read (CUDA_VISIBLE_DEVICES, HOME, SLURM_*)."""
    keep = ("PATH", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP", "VIRTUAL_ENV", "PYTHONPATH")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["LANG"] = env["LC_ALL"] = "C.UTF-8"
    return env


@pytest.mark.parametrize(("script", "case", "source"), _params(CLI_CASES, CLI_CASE_IDS))
def test_plan_through_cli(script: Path, case: dict[str, Any], source: str) -> None:
    proc = subprocess.run(
        [*_rankdebug(), "plan", "--file", script.name, "--line", str(case["line"]), "--json"],
        cwd=CORPUS, env=_clean_env(), capture_output=True, text=True, timeout=120, check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, (
        f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    )
    check(script, case, json.loads(proc.stdout), "rankdebug plan")
