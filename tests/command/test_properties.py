"""Property tests: whatever the text, the reader raises nothing but its own error type.

``plan_text(text, line)`` either returns a plan whose JSON form serialises, or raises
``CommandError`` carrying a line >= 1. Inputs: arbitrary Unicode, shell-flavoured token soup,
and random mutations of the corpus scripts.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankdebug.command import CommandError, plan_text

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
SCRIPTS = sorted(
    p for p in CORPUS.iterdir() if p.is_file() and p.suffix in (".sh", ".sbatch", ".slurm", ".md")
)
TEXTS = [p.read_text(encoding="utf-8") for p in SCRIPTS]

COMMON = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)

SHELL_TOKENS = [
    "torchrun", "deepspeed", "accelerate launch", "llamafactory-cli train", "msrun",
    "mpirun -np 4", "srun", "colossalai run", "python -m torch.distributed.run",
    "python -m torch.distributed.launch",
    "python3 -m verl.trainer.main_ppo", "bash helpers/train_inner.sh", "./helpers/launch_ds.sh",
    "--nproc_per_node", "--nproc-per-node=", "--nnodes", "2:4", "--node_rank", "gpu", "auto", "8",
    "--num_gpus", "--include", "localhost:0,1", "--hostfile", "hostfiles/ds_hostfile",
    "--config_file", "configs/accelerate_fsdp.yaml", "--num_processes", "--worker_num=",
    "trainer.nnodes=", "trainer.n_gpus_per_node=", "-m", "--no-python", "train.py",
    "CUDA_VISIBLE_DEVICES=", "0,1", "FORCE_TORCHRUN=1", "NNODES=", "export ", "declare -a ",
    "local ",
    "X=", "$X", "${X}", "${X:-", "${X:=", "${X:+", "${#X}", "${A[@]}", "\"${A[@]}\"", "A=(", ")",
    "$((", "))", "$(", "`", "$@", "$*", "$1", "${1:-8}", "$#", "shift", "'", '"', "\\", "\\\n",
    "\n", "\r\n", " ", "\t", ";", "&&", "||", "|", "&", ">", "<", "2>&1", "<<EOF\n", "\nEOF\n",
    "<<<", "#", "# comment\n", "if [ -f x ]; then", "if [ \"$N\" -gt 1 ]; then", "else", "elif",
    "fi", "for i in 1 2; do", "while true; do", "done", "case $X in", "a)", ";;", "esac",
    "f() {", "}", "function g {", "{", "(", "[[", "]]", "!", "*", "?", "[a-z]", "~", "=", "+=",
    "#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=4", "```bash\n", "```\n", "$ ", "\x00",
    "\ufeff", "é", "\u2028",
]

shell_soup = st.lists(st.sampled_from(SHELL_TOKENS), max_size=60).map("".join)


def check_plan_text(text: str, line: int) -> None:
    try:
        plan = plan_text(text, line)
    except CommandError as e:
        assert e.line is not None, f"CommandError without a line: {e!r}"
        assert isinstance(e.line, int) and e.line >= 1, f"CommandError with line {e.line!r}"
        return
    json.dumps(plan.to_json())


@settings(COMMON, max_examples=150)
@given(text=st.text(max_size=400), line=st.integers(min_value=1, max_value=30))
def test_any_text(text: str, line: int) -> None:
    check_plan_text(text, line)


@settings(COMMON, max_examples=250)
@given(text=shell_soup, line=st.integers(min_value=1, max_value=20))
def test_shell_token_soup(text: str, line: int) -> None:
    check_plan_text(text, line)


@st.composite
def mutated_corpus_script(draw: st.DrawFn) -> tuple[str, int]:
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        n = len(text)
        i = draw(st.integers(min_value=0, max_value=n))
        j = draw(st.integers(min_value=i, max_value=min(n, i + 80)))
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "replace"]))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from(SHELL_TOKENS)) + text[i:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i] + draw(st.text(max_size=8)) + text[j:]
    n_lines = text.count("\n") + 1
    line = draw(st.integers(min_value=1, max_value=n_lines + 2))
    return text, line


@settings(COMMON, max_examples=200)
@given(mutated_corpus_script())
def test_mutated_corpus_scripts(sample: tuple[str, int]) -> None:
    text, line = sample
    check_plan_text(text, line)


@settings(COMMON, max_examples=60)
@given(index=st.integers(min_value=0, max_value=len(TEXTS) - 1), data=st.data())
def test_every_line_of_corpus_scripts(index: int, data: st.DataObject) -> None:
    text = TEXTS[index]
    line = data.draw(st.integers(min_value=1, max_value=text.count("\n") + 1))
    check_plan_text(text, line)
