"""LightningCLI: Trainer and data flags on the command line over a --config YAML."""

from __future__ import annotations

from pathlib import Path

from smoke_helpers import changed, of_command, write

# Lightning docs, "Configure hyperparameters from the CLI (Intermediate)": main.py builds a
# LightningCLI (written anew here).
MAIN = """
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.demos.boring_classes import DemoModel, BoringDataModule


def cli_main():
    cli = LightningCLI(DemoModel, BoringDataModule)


if __name__ == "__main__":
    cli_main()
"""
CONFIG = """
trainer:
  max_epochs: 100
  devices: 8
  accumulate_grad_batches: 4
data:
  batch_size: 64
  num_workers: 8
"""


def test_docs_command(tmp_path: Path) -> None:
    write(tmp_path / "main.py", MAIN)
    # The docs' "python main.py fit --model.learning_rate 0.01 --trainer.fast_dev_run True".
    result = of_command("python main.py fit --model.learning_rate 0.01 --trainer.max_epochs=10",
                        tmp_path)
    assert result.frameworks == ["lightning"]
    assert result.argv[-10:] == ["--trainer.max_steps", "3", "--trainer.limit_val_batches", "0",
                                 "--trainer.num_sanity_val_steps", "0", "--trainer.logger",
                                 "False", "--trainer.enable_checkpointing", "False"]
    assert "lightning" in result.packages


def test_config_values_are_overridden_on_the_command_line(tmp_path: Path) -> None:
    write(tmp_path / "main.py", MAIN)
    write(tmp_path / "config.yaml", CONFIG)
    result = of_command("python main.py fit --config config.yaml", tmp_path)
    devices = changed(result, "--trainer.devices")
    assert (devices.old, devices.new, devices.where) == ("8", "2",
                                                         "config.yaml: trainer.devices")
    assert changed(result, "--data.batch_size").old == "64"
    assert changed(result, "--data.num_workers").new == "0"
    assert changed(result, "--trainer.accumulate_grad_batches").new == "1"
    assert result.files == []  # jsonargparse takes every key on the command line
