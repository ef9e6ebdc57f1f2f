"""A stand-in for torchtune's ``tune`` (torchtune/_cli/run.py, trimmed to ``tune run``),
which is not installed here: its parser is torchrun's with the script renamed ``recipe``;
a torchrun option before the recipe runs torchrun's ``run()`` in this process, else the
recipe runs here (``runpy``). Built-in recipes are names, found in $TUNE_RECIPES (as
torchtune finds its own in its package)."""

import os
import runpy
import sys

from torch.distributed.run import get_args_parser, run

RECIPES = os.environ.get("TUNE_RECIPES") or os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    if sys.argv[1:2] != ["run"]:
        sys.exit("tune_stub: only `tune run` is modelled")
    parser = get_args_parser()
    for action in parser._actions:
        if action.dest == "training_script":
            action.dest = "recipe"
        elif action.dest == "training_script_args":
            action.dest = "recipe_args"
    args = parser.parse_args(sys.argv[2:])
    if "--config" not in args.recipe_args:
        parser.error("The '--config' argument is required.")
    args.recipe = os.path.join(RECIPES, args.recipe + ".py")
    distributed = len(sys.argv) - 2 > len(args.recipe_args) + 1
    if distributed:
        args.training_script = args.recipe
        args.training_script_args = args.recipe_args
        run(args)
    else:
        sys.argv = [args.recipe, *args.recipe_args]
        runpy.run_path(args.recipe, run_name="__main__")


if __name__ == "__main__":
    main()
