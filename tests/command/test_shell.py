"""The shell layer: finding the command at a line and evaluating it as bash would."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rankdebug.command import CommandError, plan_all, plan_text


def argv(script: str, line: int, **kw: object) -> list[str]:
    return [w.display for w in plan_text(script, line, **kw).argv]  # type: ignore[arg-type]


def values(script: str, line: int) -> list[str | None]:
    return [w.value for w in plan_text(script, line).argv]


# ---- finding the command --------------------------------------------------------------


def test_any_line_of_a_continued_command_finds_it() -> None:
    script = "echo start\ntorchrun --nproc_per_node 2 \\\n  train.py \\\n  --lr 1e-4\necho end\n"
    for line in (2, 3, 4):
        plan = plan_text(script, line)
        assert [w.display for w in plan.argv] == [
            "torchrun", "--nproc_per_node", "2", "train.py", "--lr", "1e-4"]
        assert (plan.span.start_line, plan.span.end_line) == (1, 3)


def test_line_with_several_commands_prefers_the_launcher() -> None:
    plan = plan_text("cd /tmp && torchrun train.py; echo done", 1)
    assert plan.argv[0].value == "torchrun"


def test_commands_inside_if_for_function_bodies() -> None:
    script = (
        "if [ -f x ]; then\n  torchrun a.py\nfi\n"
        "for s in 1 2; do\n  torchrun b.py --seed $s\ndone\n"
        "run() {\n  torchrun c.py \"$@\"\n}\nrun --x 1\n"
    )
    assert argv(script, 2) == ["torchrun", "a.py"]
    assert argv(script, 5) == ["torchrun", "b.py", "--seed", "$s"]
    # A function's command is read at its first call, with that call's arguments.
    assert argv(script, 8) == ["torchrun", "c.py", "--x", "1"]


def test_never_called_function_still_plans_with_unknown_arguments() -> None:
    plan = plan_text("train() {\n  torchrun t.py \"$@\"\n}\n", 2)
    assert plan.argv[0].value == "torchrun"
    assert not plan.argv[-1].known


@pytest.mark.parametrize(
    ("script", "line", "message"),
    [
        ("# just a comment\n", 1, "comment"),
        ("X=1\n", 1, "sets variables"),
        ("echo a\n\necho b\n", 2, "empty"),
        ("echo a\n", 5, "the document ends at line 1"),
        ("cat <<EOF\ntorchrun x.py\nEOF\n", 2, "here-document"),
        ("torchrun 'abc\n", 1, "unterminated single-quoted"),
        ('torchrun "abc\n', 1, "unterminated double-quoted"),
        ("if true; then\n  torchrun a.py\nfi\n", 3, "no command"),
    ],
)
def test_lines_without_a_command_explain_why(script: str, line: int, message: str) -> None:
    with pytest.raises(CommandError) as info:
        plan_text(script, line)
    assert message in info.value.message
    assert info.value.line is not None and info.value.line >= 1
    assert info.value.column is not None and info.value.column >= 1


def test_unterminated_quote_reports_where_it_opens() -> None:
    with pytest.raises(CommandError) as info:
        plan_text('export A=1\ntorchrun --name "oops \\\n  train.py\n', 2)
    assert (info.value.line, info.value.column) == (2, 17)


# ---- variables, quoting, splitting -----------------------------------------------------


def test_assignments_evaluate_in_order() -> None:
    script = (
        "NPROC=${NPROC:-4}\n"
        "NNODES=2\n"
        "WORLD=$((NPROC*NNODES))\n"
        "NAME=run_${WORLD}gpus\n"
        "torchrun --nproc_per_node $NPROC --name $NAME --world $WORLD t.py\n"
    )
    assert values(script, 5) == ["torchrun", "--nproc_per_node", "4", "--name", "run_8gpus",
                                 "--world", "8", "t.py"]


def test_parameter_operators() -> None:
    script = (
        'X=abc.py; E=""\n'
        "echo ${U:-d} ${E:-d} ${E-d} ${X:+alt} ${U:+alt}x ${#X} ${X%.py} ${X#a} "
        "${X/b/B} ${X^^} ${X:1:1} ${V:=set} $V\n"
    )
    # ${E-d} is set-but-empty: unquoted, it leaves no word at all.
    assert values(script, 2) == ["echo", "d", "d", "alt", "x", "6", "abc", "bc.py",
                                 "aBc.py", "ABC.PY", "b", "set", "set"]


def test_arrays_quoted_and_unquoted() -> None:
    script = (
        'ARGS=(--lr 1e-4 "--name a b")\n'
        "ARGS+=(--bf16)\n"
        'torchrun t.py "${ARGS[@]}" ${#ARGS[@]} "${ARGS[1]}" ${ARGS[*]}\n'
    )
    assert values(script, 3) == ["torchrun", "t.py", "--lr", "1e-4", "--name a b", "--bf16",
                                 "4", "1e-4", "--lr", "1e-4", "--name", "a", "b", "--bf16"]


def test_word_splitting_and_quoting() -> None:
    script = (
        'FLAGS="--a 1  --b 2"\n'
        "torchrun $FLAGS \"$FLAGS\" 'single $FLAGS' $'tab\\there' pre\"$FLAGS\"post "
        '"" a\\ b\n'
    )
    assert values(script, 2) == ["torchrun", "--a", "1", "--b", "2", "--a 1  --b 2",
                                 "single $FLAGS", "tab\there", "pre--a 1  --b 2post", "",
                                 "a b"]


def test_inline_env_prefix_is_the_plans_env_and_args_do_not_see_it() -> None:
    plan = plan_text("CUDA_VISIBLE_DEVICES=0,1 NCCL_DEBUG=INFO X=1 torchrun t.py $X\n", 1)
    assert {k: w.value for k, w in plan.env.items()} == {
        "CUDA_VISIBLE_DEVICES": "0,1", "NCCL_DEBUG": "INFO", "X": "1"}
    # bash expands $X before the prefix assignment applies: it is not set here.
    assert not plan.argv[-1].known


def test_exported_variables_reach_script_env_but_not_env() -> None:
    plan = plan_text("export NCCL_DEBUG=INFO\nLOCAL=1\ndeclare -x D=2\ntorchrun t.py\n", 4)
    assert plan.env == {}
    assert {k: w.value for k, w in plan.script_env.items()} == {"NCCL_DEBUG": "INFO", "D": "2"}


def test_caller_environment_when_given() -> None:
    script = "torchrun --nproc_per_node $GPUS t.py ${MISSING}\n"
    plan = plan_text(script, 1, caller_env={"GPUS": "8"})
    assert [w.value for w in plan.argv] == ["torchrun", "--nproc_per_node", "8", "t.py"]
    plan = plan_text(script, 1)
    assert plan.argv[2].value is None
    assert any("GPUS" in w for w in plan.warnings)


def test_script_arguments_default_to_none_given() -> None:
    script = 'N=${1:-8}\ntorchrun --nproc_per_node $N t.py "$@" $2\n'
    plan = plan_text(script, 2)
    assert [w.display for w in plan.argv] == ["torchrun", "--nproc_per_node", "8", "t.py", "$2"]
    assert any("$2" in w for w in plan.warnings)


# ---- what cannot be known stays unknown ------------------------------------------------


def test_command_substitution_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = (
        f"N=$(nvidia-smi -L | wc -l; touch {marker})\n"
        f"torchrun --nproc_per_node $N t.py `touch {marker}` --x \"; touch {marker}\"\n"
    )
    plan = plan_text(script, 2)
    assert plan.argv[2].value is None
    assert plan.argv[4].value is None
    assert plan.argv[-1].value == f"; touch {marker}"
    assert any("nvidia-smi" in w for w in plan.warnings)
    assert not marker.exists()


def test_pure_substitutions_are_computed(tmp_path: Path) -> None:
    script = (
        'DIR=$(cd "$(dirname "$0")" && pwd)\n'
        "ROOT=$(dirname $DIR)\n"
        "NAME=$(basename $0 .sh)\n"
        "torchrun $DIR/t.py --root $ROOT --name $NAME --here $(pwd)\n"
    )
    plan = plan_text(script, 4, path="scripts/run.sh", cwd=tmp_path)
    assert [w.value for w in plan.argv] == [
        "torchrun", f"{tmp_path}/scripts/t.py", "--root", str(tmp_path), "--name", "run",
        "--here", str(tmp_path)]


def test_branches_decided_when_conditions_are_known() -> None:
    script = (
        'if [ -z "$NNODES" ]; then NNODES=1; fi\n'
        'if [ "$NNODES" -gt 1 ]; then MODE=multi; else MODE=single; fi\n'
        "[[ $MODE == single ]] && PORT=29500 || PORT=29600\n"
        "case $MODE in single) N=4;; *) N=8;; esac\n"
        "torchrun --nnodes $NNODES --port $PORT --n $N t.py\n"
    )
    assert values(script, 5) == ["torchrun", "--nnodes", "1", "--port", "29500", "--n", "4",
                                 "t.py"]


def test_undecidable_branch_makes_differing_values_unknown() -> None:
    script = (
        "if command -v nvidia-smi; then N=8; SAME=1; else N=1; SAME=1; fi\n"
        "torchrun --n $N --same $SAME t.py\n"
    )
    plan = plan_text(script, 2)
    assert plan.argv[2].value is None
    assert plan.argv[4].value == "1"
    assert any("branch" in w and "line 1" in w for w in plan.warnings)


def test_loop_variable_is_unknown_inside_and_last_value_after() -> None:
    script = "for r in 0 1; do\n  torchrun --node_rank $r t.py\ndone\ntorchrun --x $r t.py\n"
    assert plan_text(script, 2).argv[2].value is None
    assert plan_text(script, 4).argv[2].value == "1"


def test_functions_locals_and_calls() -> None:
    script = (
        "setup() {\n  local tmp=1\n  export GPUS=$1\n}\n"
        "setup 4\n"
        "torchrun --nproc_per_node $GPUS t.py $tmp\n"
    )
    plan = plan_text(script, 6)
    assert plan.argv[2].value == "4"
    assert plan.argv[-1].value is None  # local did not leak


def test_source_reads_assignments_from_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "env.sh").write_text("export GPUS=2\nMODEL=llama\n")
    script = "source ./env.sh\ntorchrun --nproc_per_node $GPUS t.py --model $MODEL\n"
    plan = plan_text(script, 2, cwd=tmp_path)
    assert [w.value for w in plan.argv] == ["torchrun", "--nproc_per_node", "2", "t.py",
                                           "--model", "llama"]


def test_cd_changes_where_relative_paths_resolve(tmp_path: Path) -> None:
    plan = plan_text("cd sub/dir\ncd ..\ntorchrun t.py\n", 3, cwd=tmp_path)
    assert plan.cwd == f"{tmp_path}/sub"


def test_random_and_pid_are_unknown() -> None:
    plan = plan_text("PORT=$((RANDOM % 1000 + 29500))\ntorchrun --master_port $PORT t.py\n", 2)
    assert plan.argv[2].value is None


def test_sbatch_directives_become_slurm_variables() -> None:
    script = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:4\n"
        "torchrun --nnodes $SLURM_NNODES --nproc_per_node $SLURM_GPUS_ON_NODE t.py\n"
    )
    assert values(script, 5) == ["torchrun", "--nnodes", "2", "--nproc_per_node", "4", "t.py"]


# ---- Markdown ---------------------------------------------------------------------------


MARKDOWN = """# Training

Set up:

```bash
export GPUS=4
```

Then run:

```console
$ torchrun --nproc_per_node $GPUS \\
>     train.py --lr 1e-4
step 1 loss 2.3
```

```python
torchrun = "not shell"
```
"""


def test_markdown_blocks_share_state_and_prompts_are_stripped() -> None:
    plan = plan_text(MARKDOWN, 12, language="markdown")
    assert [w.value for w in plan.argv] == ["torchrun", "--nproc_per_node", "4", "train.py",
                                           "--lr", "1e-4"]
    assert (plan.span.start_line, plan.span.end_line) == (11, 12)
    assert plan.span.start_col == 2  # the column in the document, after "$ "


@pytest.mark.parametrize(("line", "message"), [(3, "not inside a shell code block"),
                                               (14, "empty"), (18, "not inside")])
def test_markdown_lines_outside_commands(line: int, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        plan_text(MARKDOWN, line, language="markdown")


def test_plan_all_lists_launch_commands_only() -> None:
    plans, _ = plan_all(MARKDOWN, language="markdown")
    assert [p.span.start_line for p in plans] == [11]


# ---- hostile bytes ---------------------------------------------------------------------


def test_crlf_is_read_and_warned() -> None:
    plan = plan_text(b"export N=2\r\ntorchrun --nproc_per_node $N t.py\r\n", 2)
    assert [w.value for w in plan.argv] == ["torchrun", "--nproc_per_node", "2", "t.py"]
    assert any("CRLF" in w for w in plan.warnings)


def test_nul_and_bad_utf8() -> None:
    with pytest.raises(CommandError) as info:
        plan_text(b"echo a\ntorchrun \x00 t.py\n", 2)
    assert (info.value.line, info.value.column) == (2, 10)
    plan = plan_text(b"torchrun t\xff.py\n", 1)
    assert any("UTF-8" in w for w in plan.warnings)


def test_deep_nesting_is_a_clean_error_or_unknown() -> None:
    deep = "echo $((" + "(" * 3000 + "1" + ")" * 3000 + "))\n"
    with pytest.raises(CommandError):
        plan_text(deep, 1)
    nested = "X=" + "$(" * 500 + "x" + ")" * 500 + "\ntorchrun $X\n"
    assert plan_text(nested, 2).argv[1].value is None


# ---- agreement with bash itself ---------------------------------------------------------

BASH_CASES = [
    'A=1; B="x y"; C=(p "q r"); echo $A "$B" $B "${C[@]}" ${C[1]} ${#C[@]}',
    'N=3; M=$((N*4+1)); echo $M $((M%5)) $(( (N+1)**2 )) $((N>2?10:20))',
    "X=path/to/file.tar.gz; echo ${X##*/} ${X%%.*} ${X#*/} ${X%.*} ${X//\\//_}",
    "E=; echo ${E:-a} ${E-b} ${U:-c} ${U-d} x${E:+e}x ${#U}",
    "echo 'a'\"b\"c $'d\\te' \"$(echo not run)\"" ,
    "s() { echo \"$#:$1\"; }; s a b; F=(1 2 3); echo ${F[@]:1}",
    'i=0; for k in a b c; do i=$((i+1)); done; echo $k',
    'V=abc; echo ${V:1} ${V:0:2} ${V: -1} ${V^} ${V^^}',
]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize("script", BASH_CASES)
def test_known_words_match_what_bash_prints(script: str) -> None:
    """For every word we call known, bash (running `echo`) agrees."""
    setup, _, final = script.rpartition(";")
    script = f"{setup}\n{final.strip()}"
    plan = plan_text(script, 2)
    ours = [w.value for w in plan.argv[1:]]
    cmd = script.replace("$(echo not run)", "not run")
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=True)
    theirs = out.stdout.rstrip("\n").split("\n")[-1]
    if all(v is not None for v in ours):
        assert " ".join(v or "" for v in ours) == theirs, (ours, theirs)


def test_space_after_backslash_ends_the_command_as_bash_does() -> None:
    script = "torchrun --nproc_per_node 2 \\ \n    train.py --lr 1\n"
    plan = plan_text(script, 1)
    assert [w.value for w in plan.argv] == ["torchrun", "--nproc_per_node", "2", " "]
    diag = next(d for d in plan.diagnostics if d.code == "space-after-backslash")
    assert (diag.span.start_line, diag.span.start_col) == (0, 28)
    assert diag.fix == "\\"
    assert plan_text(script, 2).argv[0].value == "train.py"


def test_escaped_space_before_hash_is_a_word_not_a_comment() -> None:
    # From accelerate's README: bash passes " #" and the words after it to torchrun.
    plan = plan_text("torchrun \\ # python -m torch.distributed.run \n", 1)
    assert [w.value for w in plan.argv] == ["torchrun", " #", "python", "-m",
                                           "torch.distributed.run"]
