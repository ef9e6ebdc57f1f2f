"""Framework CLIs that start a launcher themselves, debugged for real: Lightning Fabric's
``fabric run`` (installed), and stand-ins modelled on the sources of XTuner, ms-swift,
Axolotl and Composer (not installable here) and a detectron2-style script (scripts/*_stub.py,
each citing the file it follows)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from launch_helpers import SCRIPTS, Launch, line_of, read_json, tool

from dap_client import DAPClient

pytestmark = pytest.mark.timeout(180)


def _program(tmp: Path, name: str, stub: str) -> Path:
    """An executable ``name`` in tmp/bin running ``scripts/<stub>`` with this Python."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / name
    path.write_text(f"#!{sys.executable}\n" + (SCRIPTS / stub).read_text())
    path.chmod(0o755)
    return bin_dir


def _path(bin_dir: Path) -> str:
    return f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}" + os.environ.get(
        "PATH", "")


def _stop_once(launch: Launch, script: str, line: int, rank: int, rank_expr: str,
               env_expr: str | None = None, env_value: str | None = None) -> None:
    """The chosen rank stops at ``script:line``; it is ``rank`` by ``rank_expr``; the job ends
    well once it goes on."""
    ev = launch.event("listening")
    assert ev["rank"] == rank
    client = DAPClient(str(ev["host"]), int(ev["port"]))
    try:
        client.attach({script: [line]})
        stopped = client.stopped()
        assert stopped["reason"] == "breakpoint"
        frame = client.top_frame(stopped["threadId"])
        assert (frame["source"]["path"], frame["line"]) == (script, line)
        assert client.evaluate(rank_expr, frame["id"]) == str(rank)
        if env_expr is not None:
            assert client.evaluate(env_expr, frame["id"]) == env_value
        client.request("setBreakpoints", {"source": {"path": script}, "breakpoints": []})
        client.cont(stopped["threadId"])
        assert launch.exited() == 0, launch.stderr()
    finally:
        client.close()


RANK = 'int(os.environ.get("RANK", "0"))'


def test_fabric_run_debugs_a_rank_torchrun_starts_in_fabrics_process(tmp_path: Path) -> None:
    script = str(SCRIPTS / "ddp_steps.py")
    launch = Launch(["--ranks", "1", "--", tool("fabric"), "run", "--accelerator", "cpu",
                     "ddp_steps.py", "--devices", "2"], tmp_path)
    try:
        job = launch.event("job")
        assert (job["launcher"], job["ranks"]) == ("fabric", [1])
        # The options after the script are fabric's: LT_DEVICES is what fabric run read.
        _stop_once(launch, script, line_of("ddp_steps.py"), 1, RANK,
                   'os.environ["LT_DEVICES"]', "'2'")
    finally:
        launch.close()
    assert read_json(tmp_path / "rank-0.json")["debugpy"] is False


def test_xtuner_train_with_nproc_per_node_debugs_a_torchrun_rank(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    shutil.copy(SCRIPTS / "ddp_steps.py", tools / "train.py")
    script = str(tools / "train.py")
    env = {"PATH": _path(_program(tmp_path, "xtuner", "xtuner_stub.py")),
           "XTUNER_TOOLS": str(tools), "NPROC_PER_NODE": "2"}
    launch = Launch(["--ranks", "1", "--", "xtuner", "train", "my_config.py"], tmp_path,
                    env=env)
    try:
        job = launch.event("job")
        assert (job["launcher"], job["ranks"]) == ("xtuner", [1])
        _stop_once(launch, script, line_of("ddp_steps.py"), 1, RANK,
                   "sys.argv[-2:]", "['--launcher', 'pytorch']")
    finally:
        launch.close()


def test_swift_sft_with_a_config_env_debugs_a_torchrun_rank(tmp_path: Path) -> None:
    """NPROC_PER_NODE comes from the config file's ENV, which the plan reads too."""
    routes = tmp_path / "routes"
    routes.mkdir()
    shutil.copy(SCRIPTS / "ddp_steps.py", routes / "sft.py")
    script = str(routes / "sft.py")
    config = tmp_path / "sft.json"
    config.write_text(json.dumps({"ENV": {"NPROC_PER_NODE": 2}, "model": "tiny"}))
    env = {"PATH": _path(_program(tmp_path, "swift", "swift_stub.py")),
           "SWIFT_SCRIPTS": str(routes)}
    launch = Launch(["--ranks", "0", "--", "swift", "sft", str(config)], tmp_path, env=env)
    try:
        job = launch.event("job")
        assert (job["launcher"], job["ranks"]) == ("swift", [0])
        _stop_once(launch, script, line_of("ddp_steps.py"), 0, RANK,
                   "sys.argv[1:]", "['--model', 'tiny']")
    finally:
        launch.close()
    assert read_json(tmp_path / "rank-1.json")["debugpy"] is False


def _axolotl(tmp: Path) -> tuple[dict[str, str], str]:
    """PATH with ``axolotl``, PYTHONPATH with the test's ``axolotl.cli.train``; its path."""
    package = tmp / "pkgs" / "axolotl" / "cli"
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    shutil.copy(SCRIPTS / "axolotl_train.py", package / "train.py")
    env = {"PATH": _path(_program(tmp, "axolotl", "axolotl_stub.py")),
           "PYTHONPATH": str(tmp / "pkgs")}
    return env, str(package / "train.py")


def test_axolotl_train_hands_its_launcher_args_to_torchrun(tmp_path: Path) -> None:
    env, module = _axolotl(tmp_path)
    config = tmp_path / "config.yml"
    config.write_text("base_model: tiny\n")
    launch = Launch(["--ranks", "1", "--", "axolotl", "train", str(config), "--launcher",
                     "torchrun", "--", "--nproc_per_node=2"], tmp_path, env=env)
    try:
        job = launch.event("job")
        assert (job["launcher"], job["ranks"]) == ("axolotl", [1])
        _stop_once(launch, module, line_of("axolotl_train.py"), 1, RANK)
    finally:
        launch.close()


def test_axolotl_launcher_python_debugs_axolotls_own_process(tmp_path: Path) -> None:
    env, module = _axolotl(tmp_path)
    config = tmp_path / "config.yml"
    config.write_text("base_model: tiny\n")
    launch = Launch(["--ranks", "0", "--", "axolotl", "train", str(config), "--launcher",
                     "python"], tmp_path, env=env)
    try:
        _stop_once(launch, module, line_of("axolotl_train.py"), 0,
                   'int("RANK" in os.environ)', 'sys.argv[0].rsplit("/", 1)[-1]', "'axolotl'")
    finally:
        launch.close()


def test_composer_debugs_a_rank_it_starts(tmp_path: Path) -> None:
    script = str(SCRIPTS / "ddp_steps.py")
    env = {"PATH": _path(_program(tmp_path, "composer", "composer_stub.py"))}
    launch = Launch(["--ranks", "1", "--", "composer", "-n", "2", "ddp_steps.py"], tmp_path,
                    env=env)
    try:
        job = launch.event("job")
        assert (job["launcher"], job["ranks"]) == ("composer", [1])
        _stop_once(launch, script, line_of("ddp_steps.py"), 1, RANK,
                   'os.environ["LOCAL_WORLD_SIZE"]', "'2'")
    finally:
        launch.close()


def test_detectron2_style_script_with_one_gpu_debugs_its_own_process(tmp_path: Path) -> None:
    script = str(SCRIPTS / "d2_train_net.py")
    launch = Launch(["--ranks", "0", "--", sys.executable, script, "--num-gpus", "1",
                     "--config-file", "c.yaml"], tmp_path)
    try:
        job = launch.event("job")
        assert job["launcher"] == "detectron2"
        _stop_once(launch, script, line_of("d2_train_net.py"), 0, "args.machine_rank",
                   "args.config_file", "'c.yaml'")
    finally:
        launch.close()
