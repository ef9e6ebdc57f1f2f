"""Scripts whose Lightning Trainer/Fabric starts the ranks (launchers/lightning.py): counted
from the call in the script (``python train.py``), and checked as Lightning checks them under
``srun`` (its SLURMEnvironment)."""

from __future__ import annotations

from pathlib import Path

from test_launcher_modules import diags, env_of, numbers, plan

from rankdebug.command.plan import LaunchPlan
from rankdebug.command.sbatch import sbatch_directives
from rankdebug.command.words import Word

HEAD = ("import lightning as L\nimport pytorch_lightning as pl\n"
        "from lightning.fabric import Fabric\n"
        "from lightning.pytorch.demos.boring_classes import BoringModel\n"
        "from lightning.pytorch.strategies import DDPStrategy\n")


def _script(tmp: Path, call: str, name: str = "train.py") -> Path:
    (tmp / name).write_text(f"{HEAD}\ntrainer = {call}\ntrainer.fit(BoringModel())\n")
    return tmp


def _run(tmp: Path, call: str, command: str = "python train.py", **env: str) -> LaunchPlan:
    return plan(command, env_of(**env), cwd=_script(tmp, call))


def test_trainer_devices_count_the_processes_the_script_starts(tmp_path: Path) -> None:
    p = _run(tmp_path, 'L.Trainer(devices=4, strategy="ddp", accelerator="gpu")')
    assert (p.launcher, numbers(p)) == ("lightning", (1, 0, 4, 4))
    assert [r.rank for r in p.ranks] == [0, 1, 2, 3]
    # The copies it starts are ranks like rank 0 (the bootstrap reads their LOCAL_RANK): said
    # as a fact, not as a limit.
    [said] = diags(p, "ranks-as-copies")
    assert said.severity == "info" and "starts 3 more ranks as copies" in said.message
    assert not diags(p, "rank-in-child")
    # num_nodes and NODE_RANK (the same command on each node): the numbering of the other
    # nodes' ranks is said.
    p = _run(tmp_path, "pl.Trainer(devices=[0, 1], num_nodes=2)", NODE_RANK="1")
    assert (p.launcher, numbers(p)) == ("lightning", (2, 1, 2, 4))
    [multi] = diags(p, "multi-node")
    assert multi.severity == "warning" and "by their LOCAL_RANK" in multi.message
    p = _run(tmp_path, 'Fabric(accelerator="cuda", devices="0,1,2")')
    assert numbers(p) == (1, 0, 3, 3)


def test_one_device_is_a_plain_python_run(tmp_path: Path) -> None:
    for call in ("L.Trainer(devices=1)", 'L.Trainer(accelerator="cpu")',
                 'L.Trainer(accelerator="cpu", devices="auto", max_epochs=3)'):
        p = _run(tmp_path, call)
        assert (p.launcher, numbers(p), p.diagnostics) == ("python", (1, 0, 1, 1), []), call


def test_what_cannot_be_read_is_said(tmp_path: Path) -> None:
    # Every GPU of the machine: known from CUDA_VISIBLE_DEVICES, else said.
    p = _run(tmp_path, "L.Trainer()")
    assert (p.launcher, p.nproc_per_node, p.world_size) == ("lightning", None, None)
    assert any("every GPU of the machine" in m for m in p.warnings)
    p = _run(tmp_path, 'L.Trainer(devices=-1)', CUDA_VISIBLE_DEVICES="0,1")
    assert numbers(p) == (1, 0, 2, 2)
    p = _run(tmp_path, "L.Trainer(devices=args.devices, num_nodes=args.nodes)")
    assert (p.launcher, p.world_size) == ("lightning", None)
    assert any("devices is not known here (not a literal)" in m for m in p.warnings)
    assert any("num_nodes is not known here (not a literal)" in m for m in p.warnings)
    for call in ("L.Trainer(devices=[])", "L.Trainer(devices=0)", "L.Trainer(devices=True)"):
        p = _run(tmp_path, call)
        assert [d.severity for d in diags(p, "bad-value")] == ["error"], call
        assert not diags(p, "ranks-as-copies")
    # Spawned workers get their rank as an argument: no rank to pick.
    p = _run(tmp_path, 'L.Trainer(devices=2, strategy="ddp_spawn")')
    assert numbers(p) == (1, 0, 2, 2) and diags(p, "rank-not-in-env")
    p = _run(tmp_path, 'L.Trainer(devices=2, strategy=DDPStrategy(start_method="fork"))')
    assert diags(p, "rank-not-in-env")
    p = _run(tmp_path, "L.Trainer(devices=2, strategy=DDPStrategy(find_unused_parameters=True))")
    assert diags(p, "ranks-as-copies") and not diags(p, "rank-not-in-env")


def test_a_script_without_lightning_or_that_does_not_parse_stays_python(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("from mylib import Trainer\nTrainer(devices=8)\n")
    assert plan("python train.py", cwd=tmp_path).launcher == "python"
    # Hugging Face's Trainer in a script that names Lightning is not Lightning's.
    (tmp_path / "train.py").write_text("# ported from pytorch_lightning\n"
                                       "from transformers import Trainer\nTrainer(model)\n")
    assert plan("python train.py", cwd=tmp_path).launcher == "python"
    for source in ("import pytorch_lightning as pl\npl.Trainer(devices=2)\n",
                   "from lightning import pytorch\npytorch.Trainer(devices=2)\n",
                   "import lightning.pytorch\nlightning.pytorch.Trainer(devices=2)\n",
                   "from lightning.fabric import Fabric as F\nF(devices=2).launch()\n"):
        (tmp_path / "train.py").write_text(source)
        assert numbers(plan("python train.py", cwd=tmp_path)) == (1, 0, 2, 2), source
    (tmp_path / "train.py").write_text("import lightning\nL.Trainer(devices=8\n")
    assert plan("python train.py", cwd=tmp_path).launcher == "python"


def _sbatch(text: str) -> list[Word]:
    return sbatch_directives(text)


def test_under_srun_the_tasks_are_the_ranks_and_lightnings_checks_are_said(
        tmp_path: Path) -> None:
    _script(tmp_path, "L.Trainer(devices=4, num_nodes=2)")
    head = "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n"
    p = plan("srun python train.py", cwd=tmp_path, sbatch=_sbatch(head))
    assert (p.launcher, p.nnodes, p.nproc_per_node, p.world_size) == ("srun", 2, 4, 8)
    assert not diags(p, "lightning-slurm")
    # Lightning's validate_settings: devices against --ntasks-per-node, num_nodes against -N.
    p = plan("srun python train.py", cwd=tmp_path,
             sbatch=_sbatch("#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n"))
    messages = [d.message for d in diags(p, "lightning-slurm")]
    assert any("devices=4" in m and "set devices=2" in m for m in messages)
    assert any("num_nodes=2" in m and "set num_nodes=1" in m for m in messages)
    # --ntasks without --ntasks-per-node: Lightning's RuntimeError.
    p = plan("srun python train.py", cwd=tmp_path,
             sbatch=_sbatch("#SBATCH --nodes=2\n#SBATCH --ntasks=8\n"))
    assert any("without --ntasks-per-node" in d.message for d in diags(p, "lightning-slurm"))
    # A job named interactive is not a Slurm job to Lightning.
    p = plan("srun -J interactive python train.py", cwd=tmp_path, sbatch=_sbatch(head))
    assert diags(p, "slurm-interactive")


CLI_SCRIPT = """from lightning.pytorch.cli import LightningCLI


def cli_main():
    cli = LightningCLI(DemoModel, BoringDataModule, trainer_defaults={"accelerator": "cpu"})


if __name__ == "__main__":
    cli_main()
"""


def test_lightning_cli_reads_the_trainer_from_its_arguments_and_configs(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text(CLI_SCRIPT)
    (tmp_path / "cfg.yaml").write_text("trainer:\n  devices: 4\n  num_nodes: 2\n"
                                       "  strategy: ddp\nmodel:\n  lr: 1\n")

    def run(command: str) -> LaunchPlan:
        return plan(command, cwd=tmp_path)

    # trainer_defaults: one CPU process unless the command says more.
    assert (run("python main.py fit").launcher, numbers(run("python main.py fit"))) == (
        "python", (1, 0, 1, 1))
    p = run("python main.py fit --trainer.devices 3")
    assert (p.launcher, numbers(p)) == ("lightning", (1, 0, 3, 3))
    assert numbers(run("python main.py fit --trainer.devices=[0,1]")) == (1, 0, 2, 2)
    # The config file's trainer: section, then what follows it on the command line.
    assert numbers(run("python main.py fit --config cfg.yaml")) == (2, 0, 4, 8)
    assert numbers(run("python main.py fit -c cfg.yaml --trainer.num_nodes 1")) == (1, 0, 4, 4)
    assert numbers(run("python main.py fit --trainer.num_nodes 1 -c cfg.yaml")) == (2, 0, 4, 8)
    p = run("python main.py fit --config missing.yaml")
    assert p.world_size is None and diags(p, "unreadable-file")
    # Under srun, Lightning's checks read the same settings.
    p = plan("srun python main.py fit --trainer.devices 2", cwd=tmp_path,
             sbatch=_sbatch("#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n"))
    assert any("devices=2" in d.message and "set devices=4" in d.message
               for d in diags(p, "lightning-slurm"))
