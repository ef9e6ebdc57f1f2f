"""A stand-in for Axolotl's ``axolotl`` (src/axolotl/cli/main.py's ``train`` command and
src/axolotl/cli/utils/train.py's ``launch_training``, trimmed), which is not installed here:
click with unknown options and the words after ``--`` handed to the launcher; ``--launcher
accelerate|torchrun`` execs ``LAUNCHER ARGS -m axolotl.cli.train CONFIG``, ``--launcher
python`` calls ``axolotl.cli.train.do_cli`` in this process. ``axolotl.cli.train`` is the
test's (``axolotl_train.py`` on PYTHONPATH)."""

import os
import sys

import click

LAUNCHER_COMMAND_MAPPING = {"accelerate": ["accelerate", "launch"], "torchrun": ["torchrun"]}


@click.group()
def cli() -> None:
    """Axolotl CLI (stand-in)."""


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("config", type=click.Path(exists=True, path_type=str))
@click.option("--launcher", type=click.Choice(["accelerate", "torchrun", "python"]),
              default="accelerate")
@click.pass_context
def train(ctx: click.Context, config: str, launcher: str) -> None:
    launcher_args = ctx.args if ctx.args else []
    if launcher == "python":
        from axolotl.cli.train import do_cli

        do_cli(config=config)
        return
    cmd = LAUNCHER_COMMAND_MAPPING[launcher] + launcher_args + ["-m", "axolotl.cli.train",
                                                                config]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvpe(cmd[0], cmd, os.environ)


if __name__ == "__main__":
    cli()
