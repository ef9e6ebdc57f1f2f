"""workspace/executeCommand: rankdebug.plan, debugPlan, launchJson and jobs."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import execute, open_doc

pytestmark = pytest.mark.asyncio(loop_scope="module")

SCRIPT = """#!/bin/bash
export NCCL_DEBUG=INFO
CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nproc_per_node 4 \\
    train.py --lr 1e-4
"""


async def test_plan_of_a_document_position(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    plan = await execute(client, "rankdebug.plan",
                         {"uri": doc.uri, "position": {"line": 3, "character": 4}})
    assert plan["launcher"] == "torchrun"
    assert plan["world_size"] == 4
    assert plan["entry"] == {"kind": "script", "target": "train.py"}
    assert plan["entry_args"] == ["--lr", "1e-4"]
    assert plan["env"] == {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}
    assert plan["span"]["start_line"] == 3 and plan["span"]["end_line"] == 4
    assert [r["rank"] for r in plan["ranks"]] == [0, 1, 2, 3]


async def test_plan_uses_the_unsaved_text(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    doc.replace(SCRIPT.replace("--nproc_per_node 4", "--nproc_per_node 2"))
    plan = await execute(client, "rankdebug.plan", {"uri": doc.uri, "line": 2})
    assert plan["world_size"] == 2


async def test_plan_of_text_and_of_argv(client: LanguageClient) -> None:
    plan = await execute(client, "rankdebug.plan",
                         {"text": "deepspeed --num_gpus 2 train.py", "line": 0})
    assert plan["launcher"] == "deepspeed"
    assert plan["world_size"] == 2
    plan = await execute(client, "rankdebug.plan",
                         {"argv": ["torchrun", "--nproc_per_node", "3", "train.py"]})
    assert plan["world_size"] == 3


async def test_plan_errors_carry_a_position(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    result = await execute(client, "rankdebug.plan", {"uri": doc.uri, "line": 0})
    assert result["error"]["line"] == 1
    assert "comment" in result["error"]["message"]
    result = await execute(client, "rankdebug.plan", {})
    assert "give uri" in result["error"]["message"]


async def test_badly_typed_arguments_are_the_error_envelope(client: LanguageClient) -> None:
    """Read by the server, not pygls: the extension shows the message (an LSP error would
    be logged as a server error)."""
    for args in ({"position": "nowhere", "uri": 3}, ["not", "an", "object"]):
        result = await execute(client, "rankdebug.plan", args)
        assert "rankdebug.plan" in result["error"]["message"], result
    result = await execute(client, "rankdebug.debugPlan")
    assert "takes one argument" in result["error"]["message"], result


async def test_debug_plan_gives_argv_cwd_and_attach_configurations(
        client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    result = await execute(client, "rankdebug.debugPlan",
                           {"uri": doc.uri, "line": 3, "ranks": [3, 1],
                            "breakpoints": ["train.py:4"]})
    path = str(workspace / Path(doc.uri).name)
    assert result["argv"] == [
        sys.executable, "-m", "rankdebug", "launch", "--json", "--ranks", "1,3",
        "--break", "train.py:4", "--file", path, "--line", "3",
    ]
    assert result["cwd"] == str(workspace)
    assert result["ranks"] == [1, 3]
    assert result["plan"]["world_size"] == 4
    assert [c["name"] for c in result["configurations"]] == ["rank 1", "rank 3"]
    conf = result["configurations"][0]
    assert conf["type"] == "rankdebug" and conf["request"] == "attach"
    assert conf["ranks"] == [1]
    assert result["compound"]["configurations"] == ["rank 1", "rank 3"]
    assert result["compound"]["stopAll"] is True
    assert result["warnings"] == []


async def test_debug_plan_settings_and_spec_strings(client: LanguageClient,
                                                    workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    result = await execute(client, "rankdebug.debugPlan", {
        "uri": doc.uri, "line": 2, "ranks": "local0",
        "settings": {"basePort": 6000, "wait": False, "collectiveTimeout": 600,
                     "interpreter": ["/opt/py/bin/python"]},
    })
    argv = result["argv"]
    assert argv[:7] == ["/opt/py/bin/python", "-m", "rankdebug", "launch", "--json",
                        "--ranks", "0"]
    assert "--no-wait" in argv
    assert argv[argv.index("--base-port") + 1] == "6000"
    assert argv[argv.index("--collective-timeout") + 1] == "600"
    doc.replace(SCRIPT + "echo changed\n")
    result = await execute(client, "rankdebug.debugPlan", {"uri": doc.uri, "line": 2})
    assert any("unsaved" in w for w in result["warnings"])


async def test_debug_plan_armed(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    armed = await execute(client, "rankdebug.debugPlan",
                          {"uri": doc.uri, "line": 3, "arm": True})
    argv = armed["argv"]
    assert argv[3:6] == ["launch", "--json", "--arm"] and "--ranks" not in argv
    assert armed["ranks"] == [] and armed["configurations"] == [] and armed["armed"] is True
    both = await execute(client, "rankdebug.debugPlan",
                         {"uri": doc.uri, "line": 3, "arm": True, "ranks": "1"})
    assert both["argv"][3:8] == ["launch", "--json", "--ranks", "1", "--arm"]
    assert both["ranks"] == [1]
    plain = await execute(client, "rankdebug.debugPlan", {"uri": doc.uri, "line": 3})
    assert "--arm" not in plain["argv"] and plain["armed"] is False


async def test_debug_plan_rejects_ranks_outside_the_job(client: LanguageClient,
                                                        workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    result = await execute(client, "rankdebug.debugPlan",
                           {"uri": doc.uri, "line": 2, "ranks": "7"})
    assert "outside the job" in result["error"]["message"]


async def test_debug_plan_of_an_argv(client: LanguageClient) -> None:
    result = await execute(client, "rankdebug.debugPlan", {
        "argv": ["torchrun", "--nproc_per_node", "2", "train.py"], "ranks": "all"})
    assert result["argv"][-5:] == ["--", "torchrun", "--nproc_per_node", "2", "train.py"]
    assert result["ranks"] == [0, 1]


async def test_launch_json_for_rankdebug_and_debugpy(client: LanguageClient,
                                                     workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    result = await execute(client, "rankdebug.launchJson",
                           {"uri": doc.uri, "line": 2, "ranks": "0,2"})
    configs = {c["name"]: c for c in result["configurations"]}
    launch = configs["train.py: debug ranks 0,2"]
    assert launch["type"] == "rankdebug" and launch["request"] == "launch"
    assert launch["command"] == ["torchrun", "--nproc_per_node", "4", "train.py", "--lr", "1e-4"]
    assert launch["env"] == {"NCCL_DEBUG": "INFO", "CUDA_VISIBLE_DEVICES": "0,1,2,3"}
    assert launch["cwd"] == "${workspaceFolder}"
    rank2 = configs["train.py: rank 2 (debugpy, port 5679)"]
    assert rank2["type"] == "debugpy" and rank2["request"] == "attach"
    assert rank2["connect"] == {"host": "127.0.0.1", "port": 5679}
    assert configs["train.py: rank 0 (rankdebug)"]["connect"]["port"] == 5678
    seed = configs["train.py: whole job (debugpy)"]
    assert seed["type"] == "debugpy" and seed["request"] == "launch"
    assert seed["module"] == "torch.distributed.run"
    assert seed["args"] == ["--nproc_per_node", "4", "train.py", "--lr", "1e-4"]
    assert seed["subProcess"] is True and seed["justMyCode"] is False
    assert seed["env"]["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    names = {c["name"]: c["configurations"] for c in result["compounds"]}
    assert names["train.py: ranks 0,2 (debugpy)"] == [
        "train.py: rank 0 (debugpy, port 5678)", "train.py: rank 2 (debugpy, port 5679)"]
    term = result["terminalCommand"]
    assert term[term.index("--base-port") + 1] == "5678"
    assert term[term.index("--ranks") + 1] == "0,2"


async def test_launch_json_for_plain_python(client: LanguageClient) -> None:
    result = await execute(client, "rankdebug.launchJson",
                           {"text": "python -m my.trainer --epochs 1", "ranks": "0"})
    seed = next(c for c in result["configurations"] if c["name"].endswith("(debugpy)")
                and c["request"] == "launch")
    assert seed["module"] == "my.trainer"
    assert seed["args"] == ["--epochs", "1"]


async def test_check_ranks_reads_a_typed_choice(client: LanguageClient) -> None:
    ranks = [{"rank": r, "node_rank": r // 2, "local_rank": r % 2} for r in range(4)]
    got = await execute(client, "rankdebug.checkRanks",
                        {"spec": "local0 arm", "allowArm": True, "ranks": ranks})
    assert got == {"rankSpec": "0,2", "ranks": [0, 2], "arm": True}
    got = await execute(client, "rankdebug.checkRanks", {"spec": "1, 3", "worldSize": 4})
    assert got == {"rankSpec": "1,3", "ranks": [1, 3], "arm": False}
    for bad in ({"spec": "7", "ranks": ranks}, {"spec": "1 arm"}, {"spec": "*"}, {"spec": 3},
                {"spec": "1", "ranks": [{"rank": "x"}]}):
        got = await execute(client, "rankdebug.checkRanks", bad)
        assert got["error"]["message"], bad


async def test_debug_plan_of_an_unsaved_document(client: LanguageClient) -> None:
    uri = "untitled:Untitled-1"
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(
            uri=uri, language_id="shellscript", version=1,
            text="export NCCL_DEBUG=INFO\nCUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 "
                 "train.py\n")))
    result = await execute(client, "rankdebug.debugPlan", {"uri": uri, "line": 1})
    assert result["argv"][-6:] == ["--", "CUDA_VISIBLE_DEVICES=0,1", "torchrun",
                                   "--nproc_per_node", "2", "train.py"]
    assert result["env"] == {"NCCL_DEBUG": "INFO"}
    assert result["ranks"] == [0]


async def test_launch_json_seed_needs_a_python_module_form(client: LanguageClient) -> None:
    result = await execute(client, "rankdebug.launchJson",
                           {"text": "deepspeed --num_gpus 2 train.py --deepspeed ds.json",
                            "ranks": [1]})
    seed = next(c for c in result["configurations"] if c["name"].endswith("whole job (debugpy)"))
    assert seed["module"] == "deepspeed.launcher.runner"
    assert seed["args"] == ["--num_gpus", "2", "train.py", "--deepspeed", "ds.json"]
    result = await execute(client, "rankdebug.launchJson",
                           {"text": "mpirun -np 2 python train.py", "ranks": "0"})
    assert not any(c["name"].endswith("whole job (debugpy)") for c in result["configurations"])
    assert any("mpirun has no `python -m` form" in w for w in result["warnings"])


async def test_debug_plan_with_the_extensions_cli_prefix(client: LanguageClient,
                                                         workspace: Path) -> None:
    doc = open_doc(client, workspace, SCRIPT)
    main = "/ext/python/rankdebug_main.py"
    result = await execute(client, "rankdebug.debugPlan", {
        "uri": doc.uri, "line": 2, "ranks": "0",
        "settings": {"interpreter": ["/usr/bin/python3", main], "cwd": str(workspace)}})
    assert result["argv"][:4] == ["/usr/bin/python3", main, "launch", "--json"]


async def test_plan_of_terminal_text_with_a_cwd(client: LanguageClient, workspace: Path) -> None:
    result = await execute(client, "rankdebug.plan", {
        "text": "torchrun --nproc_per_node 2 pretrain.py", "language": "shellscript",
        "settings": {"cwd": str(workspace / "scripts")}})
    assert result["cwd"] == str(workspace / "scripts")
    assert not [d for d in result["diagnostics"] if d["code"] == "missing-entry"]


NANOGPT = Path(__file__).resolve().parents[2] / "examples" / "smoke" / "nanogpt"


async def test_smoke_of_a_document_in_the_folder_its_commands_run_in(
        client: LanguageClient, workspace: Path) -> None:
    """``rankdebug.smoke``: ``rankdebug smoke --json``'s answer for the command as the editor
    has it (unsaved text too), its relative paths read from the workspace folder (the
    ``cwd`` setting's default) although the script sits in scripts/."""
    nano = workspace / "nano"
    if not nano.exists():
        shutil.copytree(NANOGPT, nano)
    text = "torchrun --standalone --nproc_per_node 8 nano/train.py nano/config/char.py\n"
    doc = open_doc(client, workspace / "scripts", text)
    doc.replace(text.replace("--nproc_per_node 8", "--nproc_per_node 4"))
    result = await execute(client, "rankdebug.smoke", {"uri": doc.uri, "line": 0})
    assert {"argv", "env", "changes", "files", "original"} <= set(result), result
    assert result["frameworks"] == ["nanogpt"]
    assert result["plan"]["cwd"] == str(workspace)
    assert result["plan"]["from"]["nproc_per_node"] == 4  # the unsaved text
    assert result["original"]["argv"][:4] == ["torchrun", "--standalone", "--nproc_per_node", "4"]
    assert "--max_iters=3" in result["argv"]


async def test_smoke_errors_carry_a_position(client: LanguageClient, workspace: Path) -> None:
    doc = open_doc(client, workspace, "echo hi\ntorchrun --nproc_per_node\n")
    result = await execute(client, "rankdebug.smoke", {"uri": doc.uri, "line": 1})
    assert result["error"]["line"] == 2 and result["error"]["message"], result
