"""nanoGPT-style configurator scripts: script defaults, config files, --key=value."""

from __future__ import annotations

from pathlib import Path

from smoke_helpers import EXAMPLES, changed, digest, of_command, unchanged, write

# karpathy/nanoGPT config/train_shakespeare_char.py (@ 3adf61e1, the repository's head)
SHAKESPEARE_CHAR = """
# train a miniature character-level shakespeare model
# good for debugging and playing on macbooks and such

out_dir = 'out-shakespeare-char'
eval_interval = 250 # keep frequent because we'll overfit
eval_iters = 200
log_interval = 10 # don't print too too often

# we expect to overfit on this small dataset, so only save when val improves
always_save_checkpoint = False

wandb_log = False # override via command line if you like
wandb_project = 'shakespeare-char'
wandb_run_name = 'mini-gpt'

dataset = 'shakespeare_char'
gradient_accumulation_steps = 1
batch_size = 64
block_size = 256 # context of up to 256 previous characters

# baby GPT model :)
n_layer = 6
n_head = 6
n_embd = 384
dropout = 0.2

learning_rate = 1e-3 # with baby networks can afford to go a bit higher
max_iters = 5000
lr_decay_iters = 5000 # make equal to max_iters usually
min_lr = 1e-4 # learning_rate / 10 usually
beta2 = 0.99 # make a bit bigger because number of tokens per iter is small

warmup_iters = 100 # not super necessary potentially
"""

# karpathy/nanoGPT config/train_gpt2.py (@ 3adf61e1)
TRAIN_GPT2 = """
# config for training GPT-2 (124M) down to very nice loss of ~2.85 on 1 node of 8X A100 40GB
# launch as the following (e.g. in a screen session) and wait ~5 days:
# $ torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py

wandb_log = True
wandb_project = 'owt'
wandb_run_name='gpt2-124M'

# these make the total batch size be ~0.5M
# 12 batch size * 1024 block size * 5 gradaccum * 8 GPUs = 491,520
batch_size = 12
block_size = 1024
gradient_accumulation_steps = 5 * 8

# this makes total number of tokens be 300B
max_iters = 600000
lr_decay_iters = 600000

# eval stuff
eval_interval = 1000
eval_iters = 200
log_interval = 10

# weight decay
weight_decay = 1e-1
"""

# The defaults block of a script in nanoGPT's train.py shape (names and types as there;
# written anew), ending in the configurator's exec.
TRAIN_SHAPE = """
import os
out_dir = 'out'
eval_interval = 2000
log_interval = 1
eval_iters = 200
always_save_checkpoint = True
init_from = 'scratch'
wandb_log = False
dataset = 'openwebtext'
gradient_accumulation_steps = 5 * 8
batch_size = 12
block_size = 1024
max_iters = 600000
compile = True
exec(open('configurator.py').read())
data_dir = os.path.join('data', dataset)
"""


def _project(tmp_path: Path) -> None:
    write(tmp_path / "train.py", TRAIN_SHAPE)
    write(tmp_path / "configurator.py", "# the configurator\n")
    write(tmp_path / "config/train_shakespeare_char.py", SHAKESPEARE_CHAR)
    write(tmp_path / "config/train_gpt2.py", TRAIN_GPT2)


def test_the_readme_gpt2_command(tmp_path: Path) -> None:
    _project(tmp_path)
    before = digest(tmp_path)
    # nanoGPT's README: torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py
    result = of_command("torchrun --standalone --nproc_per_node=8 train.py "
                        "config/train_gpt2.py", tmp_path)
    assert result.frameworks == ["nanogpt"]
    assert "--nproc_per_node=2" in result.argv
    iters = changed(result, "max_iters")
    assert (iters.old, iters.new, iters.where) == ("600000", "3",
                                                   "config/train_gpt2.py: max_iters")
    assert "--max_iters=3" in result.argv  # the configurator's --key=value form
    accumulation = changed(result, "gradient_accumulation_steps")
    assert (accumulation.old, accumulation.new) == ("40", "2")  # divisible by 2 ranks
    assert changed(result, "wandb_log").new == "False"
    assert changed(result, "compile").where == "train.py: compile"  # the script's default
    unchanged(result, "eval_interval")  # 1000: no evaluation after step 0 anyway
    assert changed(result, "block_size").new == "128"
    assert {i.value for i in result.inputs} >= {"config/train_gpt2.py", "configurator.py",
                                                "data/openwebtext"}
    assert digest(tmp_path) == before


def test_a_command_line_override_is_changed_in_place(tmp_path: Path) -> None:
    _project(tmp_path)
    result = of_command("python train.py config/train_shakespeare_char.py --batch_size=32 "
                        "--compile=False --max_iters=100000", tmp_path)
    assert result.argv[3:6] == ["--batch_size=1", "--compile=False", "--max_iters=3"]
    assert changed(result, "--batch_size").old == "32"
    unchanged(result, "--compile")
    unchanged(result, "eval_interval")  # 250 is past step 3 already
    unchanged(result, "always_save_checkpoint")  # the config turned it off
    # One process: the accumulation divides by 1, and 1 already is the smallest.
    unchanged(result, "gradient_accumulation_steps")


def test_values_keep_the_type_the_configurator_asserts(tmp_path: Path) -> None:
    write(tmp_path / "train.py", "max_iters = 5000\neval_iters = 200.0\neval_interval = 2\n"
                                 "out_dir = '10'\nexec(open('configurator.py').read())\n")
    result = of_command("python train.py", tmp_path)
    assert "--eval_iters=1.0" in result.argv  # a float default stays a float
    assert "--max_iters=3" in result.argv
    assert "--eval_interval=4" in result.argv  # past the last step: one evaluation, at 0
    [out] = [w for w in result.argv if w.startswith("--out_dir=")]
    assert out.startswith("--out_dir=") and "rankdebug-smoke" in out


def test_no_step_limit_is_reported(tmp_path: Path) -> None:
    write(tmp_path / "train.py", "batch_size = 8\nexec(open('configurator.py').read())\n")
    result = of_command("python train.py", tmp_path)
    assert any("no step limit found" in m for m in result.missing)
    assert not any(w.startswith("--max_iters") for w in result.argv)


def test_resume_keeps_the_output_folder(tmp_path: Path) -> None:
    _project(tmp_path)
    result = of_command("python train.py --init_from=resume", tmp_path)
    unchanged(result, "out_dir")
    assert any("init_from=resume" in n for n in result.notes)


def test_the_bundled_example(tmp_path: Path) -> None:
    folder = EXAMPLES / "nanogpt"
    result = of_command("torchrun --standalone --nproc_per_node 2 train.py config/char.py",
                        folder)
    names = {c.name for c in result.changes}
    assert {"max_iters", "batch_size", "block_size", "eval_iters", "out_dir"} <= names
    assert result.missing == []
