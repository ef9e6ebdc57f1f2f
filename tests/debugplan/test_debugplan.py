"""The debug plan: one pure function from a launch plan and a choice to what runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rankdebug import debugplan
from rankdebug.command import plan_argv
from rankdebug.command.plan import LaunchPlan
from rankdebug.command.words import Span, Word
from rankdebug.debugplan import Caller, LaunchOptions, Origin
from rankdebug.debugplan.job_env import JobPlaces, UnrunnableError, command_argv, job_run
from rankdebug.debugplan.launch_json import launch_json
from rankdebug.errors import BadInput
from rankdebug.ranks import RanksError


def _plan(*argv: str, env: dict[str, str] | None = None) -> LaunchPlan:
    span = Span(0, 0, 0, 0)
    plan = LaunchPlan("torchrun", [Word.literal(a) for a in argv], span)
    plan.env = {k: Word.literal(v) for k, v in (env or {}).items()}
    return plan


TORCHRUN = ["torchrun", "--nproc_per_node", "4", "train.py", "--lr", "1e-4"]


def _make(ranks: object = "1,3", **options: object) -> debugplan.DebugPlan:
    plan = plan_argv(TORCHRUN, cwd=Path("/work"))
    caller = Caller(cwd="/work", cli=("py", "-m", "rankdebug"))
    return debugplan.make(plan, Origin.of_argv(TORCHRUN), caller, ranks,
                          LaunchOptions(**options))  # type: ignore[arg-type]


def test_make_resolves_ranks_and_builds_argv_configs_title() -> None:
    d = _make()
    assert d.selection.ranks == [1, 3]
    assert d.argv == ("py", "-m", "rankdebug", "launch", "--json", "--ranks", "1,3", "--",
                      *TORCHRUN)
    assert d.title == "train.py"
    assert [c["name"] for c in d.configurations] == ["rank 1", "rank 3"]
    assert d.compound == {"name": "train.py · ranks 1,3",
                          "configurations": ["rank 1", "rank 3"], "stopAll": True}
    out = d.to_json()
    assert out["rankSpec"] == "1,3" and out["ranks"] == [1, 3] and out["title"] == "train.py"
    assert out["plan"]["world_size"] == 4 and out["armed"] is False


def test_options_become_flags() -> None:
    d = _make("0", host="0.0.0.0", base_port=6000, wait=False, collective_timeout=30,
              attach="hit", breaks=("train.py:7",), stop="alone")
    flags = list(d.argv[3:d.argv.index("--")])
    assert flags == ["launch", "--json", "--ranks", "0", "--no-wait", "--host", "0.0.0.0",
                     "--base-port", "6000", "--collective-timeout", "30", "--attach", "hit",
                     "--stop", "alone", "--break", "train.py:7"]
    assert d.breaks == ((os.path.realpath("/work/train.py"), 7),)


def test_armed_with_no_ranks_debugs_none() -> None:
    d = _make(None, arm=True)
    assert d.selection.ranks == [] and d.selection.spec == ""
    assert "--ranks" not in d.argv and "--arm" in d.argv
    assert d.configurations == ()


def test_bad_choices_are_bad_input() -> None:
    with pytest.raises(RanksError):
        _make("9")
    with pytest.raises(BadInput, match="FILE:LINE"):
        _make(breaks=("train.py",))
    with pytest.raises(BadInput, match="collective-timeout"):
        _make(collective_timeout=-1)


def test_file_origin_is_read_again_by_the_launcher() -> None:
    plan = plan_argv(TORCHRUN, cwd=Path("/work"))
    d = debugplan.make(plan, Origin.of_file("/work/run.sh"), Caller(cwd="/work"))
    assert d.argv[-4:] == ("--file", "/work/run.sh", "--line", "1")


def test_text_origin_with_unknown_words_says_save_first() -> None:
    plan = _plan("torchrun", "train.py")
    plan.argv.insert(1, Word.unknown("$NPROC", Span(0, 9, 0, 15), "unset variable"))
    with pytest.raises(BadInput, match="save it first"):
        debugplan.make(plan, Origin.of_text("torchrun $NPROC train.py"), Caller(cwd="/"))


def test_job_run_keeps_the_command_and_sets_the_environment(tmp_path: Path) -> None:
    plan = _plan("torchrun", "--nproc_per_node", "2", "train.py",
                 env={"CUDA_VISIBLE_DEVICES": "0,1"})
    plan.script_env = {"PYTHONPATH": Word.literal("/src")}
    d = debugplan.make(plan, Origin.of_argv(["x"]), Caller(cwd=str(tmp_path)), "1")
    places = JobPlaces(job="j", boot=tmp_path, debugpy_dir=tmp_path / "dbg", ports={1: 5999})
    out = job_run(d, places, base_env={"PATH": "/bin", "TORCH_NCCL_ENABLE_MONITORING": "1"})
    assert out.argv == ["torchrun", "--nproc_per_node", "2", "train.py"]
    assert out.env["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert out.env["PYTHONPATH"] == f"{tmp_path}{os.pathsep}/src"
    assert out.env["RANKDEBUG_PORTS"] == "1:5999"
    assert out.env["RANKDEBUG_RANKS"] == "1"
    assert out.env["RANKDEBUG_RANKVARS"] == "RANK/LOCAL_RANK/WORLD_SIZE"
    assert out.env["TORCH_NCCL_ENABLE_MONITORING"] == "1"  # the user's choice stands
    assert out.env["TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC"] == "86400"
    assert out.attach_configs("j")[0]["connect"] == {"host": "127.0.0.1", "port": 5999}


def test_job_run_refuses_unknown_words() -> None:
    plan = _plan("torchrun", "train.py")
    plan.argv.insert(1, Word.unknown("$NPROC", Span(0, 9, 0, 15), "unset variable"))
    with pytest.raises(UnrunnableError, match=r"\$NPROC.*word 2"):
        command_argv(plan)


def test_launch_json_numbers_ports_from_the_base() -> None:
    out = launch_json(_make(base_port=5678), workspace="/work", extra_env={})
    names = [c["name"] for c in out["configurations"]]
    assert "train.py: rank 3 (debugpy, port 5679)" in names
    assert out["terminalCommand"][-6:] == TORCHRUN
    with pytest.raises(BadInput, match="cannot be resolved"):
        plan = plan_argv(["torchrun", "--nproc_per_node", "$N", "t.py"], cwd=Path("/"))
        launch_json(debugplan.make(plan, Origin.of_argv(["x"]), Caller(cwd="/"), "local0"),
                    workspace=None, extra_env={})


def test_the_command_runs_where_its_script_says(tmp_path: Path) -> None:
    plan = _plan("torchrun", "train.py")
    plan.cwd = str(tmp_path / "examples")
    d = debugplan.make(plan, Origin.of_file(str(tmp_path / "examples/run.sh")),
                       Caller(cwd=str(tmp_path)), None, LaunchOptions(breaks=("train.py:3",)))
    places = JobPlaces(job="j", boot=tmp_path, debugpy_dir=tmp_path)
    run = job_run(d, places, base_env={})
    assert run.cwd == str(tmp_path / "examples")
    assert d.breaks == ((os.path.realpath(tmp_path / "examples" / "train.py"), 3),)
    assert d.cwd == str(tmp_path)


def test_the_editor_settings_choose_the_stop_mode() -> None:
    """``rankdebug.stopRanks`` reaches the launch options; a bad value is described."""
    from rankdebug.lsp.settings import Settings, apply

    problems: list[str] = []
    assert apply(Settings(), {"stopRanks": "alone"}, problems).launch_options().stop == "alone"
    assert Settings().launch_options().stop == "together"
    assert apply(Settings(), {"stopRanks": "sometimes"}, problems).stop_ranks == "together"
    assert problems and "stopRanks" in problems[0]


@pytest.mark.parametrize(("options", "said"), [
    ({"base_port": 99999}, "--base-port must be 0"),
    ({"base_port": -5}, "--base-port must be 0"),
    ({"collective_timeout": float("nan")}, "--collective-timeout must be"),
    ({"collective_timeout": float("inf")}, "--collective-timeout must be"),
    ({"host": "999.1.1.1"}, "is not an address to listen on"),
    ({"host": "a\x00b"}, "is not an address to listen on"),
])
def test_options_out_of_range_are_one_line(options: dict[str, object], said: str) -> None:
    """Each was a traceback (OverflowError from bind) or a wrong message before."""
    with pytest.raises(BadInput, match=said):
        LaunchOptions(**options)  # type: ignore[arg-type]
