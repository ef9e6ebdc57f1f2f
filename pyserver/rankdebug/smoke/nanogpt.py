"""nanoGPT-style "poor man's configurator" scripts: module-level defaults, then
``exec(open('configurator.py').read())``, which runs config files named on the command line
and applies ``--key=value`` overrides (karpathy/nanoGPT configurator.py).

The configurator refuses unknown keys and a value of another type than the default, so only
keys the script or its config file define are set, each in the default's type."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Unpack

from rankdebug.smoke import base, configs, reads
from rankdebug.smoke.args import ArgList
from rankdebug.smoke.context import Rewrite, as_int, smaller
from rankdebug.smoke.knobs import Found, Knobs, Rule, tune

NAME = "nanogpt"
PACKAGES: tuple[str, ...] = ("torch",)
_CONFIGURATOR = re.compile(r"""exec\(\s*open\(\s*['"]([^'"]*configurator\.py)['"]""")


def detect(rw: Rewrite) -> bool:
    return bool(_CONFIGURATOR.search(rw.source or ""))


def parallel(rw: Rewrite) -> int:
    return 1


def constants(source: str) -> dict[str, object]:
    """Module-level ``name = <literal>`` assignments (the configurator's keys)."""
    tree = reads.parse(source)
    if tree is None:
        return {}
    out: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            out[node.targets[0].id] = _value(node.value)
    return out


_ARITHMETIC = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator,
               ast.unaryop)


def _value(node: ast.expr) -> object:
    """A literal, or constant arithmetic (``5 * 8``); None for anything else (the key is
    still defined, its value just not known here)."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    tree = ast.Expression(node)
    if all(isinstance(n, _ARITHMETIC) for n in ast.walk(tree)):
        try:  # safe: the tree holds constants and operators only
            return eval(compile(tree, "<config>", "eval"), {"__builtins__": {}})
        except (ArithmeticError, TypeError, ValueError):
            return None
    return None


class Configurator(Knobs):
    """``--key=value`` over config files over the script's defaults."""

    def __init__(self, args: ArgList, layers: list[tuple[str, dict[str, object]]]) -> None:
        self.args = args
        self.layers = layers  # (label, values), the last one wins

    def _default(self, name: str) -> tuple[str, object] | None:
        for label, values in reversed(self.layers):
            if name in values:
                return label, values[name]
        return None

    def find(self, name: str) -> Found | None:
        hit = self.args.find((f"--{name}",))
        if hit is not None and hit.joined:
            return Found(hit.value, f"--{name}", f"--{name}=",
                         self.args.items[hit.index].known)
        default = self._default(name)
        if default is None:
            return None
        label, value = default
        return Found(None if value is None else str(value), name, f"{label}: {name}")

    def put(self, name: str, value: object) -> str:
        text = self.text(name, value)
        self.args.set((f"--{name}",), text, joined=True)
        return text

    def text(self, name: str, value: object) -> str:
        return _typed(value, self._default(name))

    def delete(self, name: str) -> bool:
        return self.args.remove((f"--{name}",)) is not None

    def spelled(self, name: str) -> str:
        return f"--{name}"

    def defines(self, name: str) -> bool:
        return self._default(name) is not None


def _typed(value: object, default: tuple[str, object] | None) -> str:
    """The configurator asserts ``type(new) == type(default)``: write the default's type."""
    kind = type(default[1]) if default else type(value)
    if kind is bool:
        return "True" if value in (True, "True", "true", 1) else "False"
    if kind is float and isinstance(value, int | float):
        return repr(float(value))
    if kind is str:
        text = str(value)
        try:
            ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text
        return repr(text)  # a string that reads as a number must stay a string
    return str(value)


def rewrite(rw: Rewrite) -> None:
    rw.need(*PACKAGES)
    script = rw.plan.entry.target.display if rw.plan.entry else "the script"
    layers: list[tuple[str, dict[str, object]]] = [(script, constants(rw.source or ""))]
    for arg in rw.args.items:
        if arg.known and "=" not in arg.text and not arg.text.startswith("-"):
            rw.reads("config", arg.text, "a config file the configurator runs")
            layers.append((arg.text, constants(configs.read_text(rw.resolve(arg.text)) or "")))
    match = _CONFIGURATOR.search(rw.source or "")
    if match:
        rw.reads("config", match.group(1), "exec(open(...)) in the script (from the cwd)")
    knobs = Configurator(rw.args, layers)
    rw.configurator = True
    for _, values in layers[1:]:  # what the config files set, for the devices check
        rw.values.update({k: str(v) for k, v in values.items() if v is not None})
    steps, world = rw.settings.steps, rw.data_parallel

    def known(name: str, new: object, why: str, **rule: Unpack[Rule]) -> None:
        if knobs.defines(name):
            tune(rw, knobs, name, new, why, **rule)

    if not knobs.defines("max_iters"):
        rw.lack("no step limit found (no max_iters): the smoke run ends the job after "
                f"{steps} optimizer steps")
        rw.stop_after_steps("the script defines no max_iters")
    else:
        # Its loop decides what max_iters counts: the run-time stop makes it the steps.
        rw.stop_after_steps("the script's loop decides what max_iters counts (nanoGPT's "
                            "makes max_iters + 1 optimizer steps)")
    known("max_iters", steps, "the loop's own limit; the run-time stop below holds the run "
          f"to {steps} optimizer steps")
    known("batch_size", 1, base.BATCH)
    known("block_size", rw.settings.seq_len, base.SEQUENCE, keep_if=smaller(rw.settings.seq_len))
    known("gradient_accumulation_steps", world,
          f"one micro-batch per rank and step (the script divides it by the {world} ranks)")
    known("eval_iters", 1, "one batch for the evaluation at step 0", keep_if=smaller(1))
    known("eval_interval", steps + 1, "no evaluation (nor a checkpoint) after step 0",
          keep_if=lambda v: (as_int(v) or 0) > steps)
    known("log_interval", 1, base.LOG_EVERY)
    known("always_save_checkpoint", False, base.NO_SAVE)
    known("wandb_log", False, base.NO_REMOTE)
    known("compile", False, "no compilation: the first step starts at once")
    init = knobs.find("init_from")
    resume = init is not None and init.value == "resume"
    if resume:
        rw.note("init_from=resume reads out_dir: the smoke run keeps it (and may save there)")
    elif knobs.defines("out_dir"):
        known("out_dir", str(rw.folder.subdir("output")), base.OUTPUT)
    if init is not None and init.value and init.value.startswith("gpt2"):
        rw.reads("model", init.value, init.where, hub=True)
    dataset = knobs.find("dataset")
    if dataset is not None and dataset.value and re.search(
            r"""join\(\s*['"]data['"]\s*,\s*dataset\s*\)""", rw.source or ""):
        rw.reads("data", str(Path("data") / dataset.value), dataset.where)
