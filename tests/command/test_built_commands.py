"""Commands as real repositories build them: in a variable run as `$CMD` or through `eval`,
as `bash -c CODE` (also under srun), with arguments gathered by `read <<EOF`, and with
`$(which X)` look-ups as the program."""

from __future__ import annotations

import os
from pathlib import Path

from rankdebug.command import plan_text
from rankdebug.command.plan import LaunchPlan


def shown(plan: LaunchPlan) -> list[str]:
    return [w.display for w in plan.argv]


def summary(plan: LaunchPlan) -> tuple[object, ...]:
    entry = (plan.entry.kind, plan.entry.target.display) if plan.entry else None
    return (plan.launcher, plan.nnodes, plan.nproc_per_node, plan.world_size, entry,
            [w.display for w in plan.entry_args])


# ---- a command held in a variable, run as `$CMD` ----------------------------------------


def test_unquoted_variable_as_the_command_splits_into_words() -> None:
    script = ('ARGS="--lr 1e-4 --epochs 3"\n'
              'CMD="torchrun --nproc_per_node 4 train.py ${ARGS}"\n'
              "$CMD\n")
    assert summary(plan_text(script, 3)) == (
        "torchrun", 1, 4, 4, ("script", "train.py"), ["--lr", "1e-4", "--epochs", "3"])


def test_variable_prefix_of_a_command() -> None:
    script = 'LAUNCH="torchrun --nproc_per_node=2"\nPY=python3\n$LAUNCH train.py\n$PY eval.py\n'
    assert summary(plan_text(script, 3))[:4] == ("torchrun", 1, 2, 2)
    assert summary(plan_text(script, 4)) == ("python", 1, 1, 1, ("script", "eval.py"), [])


def test_quotes_inside_a_variable_are_not_removed_by_splitting() -> None:
    # bash does not re-read quotes of an expansion: `'a` and `b'` are two words.
    script = "CMD=\"python train.py --name 'a b'\"\n$CMD\n"
    assert shown(plan_text(script, 2)) == ["python", "train.py", "--name", "'a", "b'"]


def test_empty_variable_before_the_command_leaves_the_command() -> None:
    script = 'PREFIX=""\n$PREFIX torchrun --nproc_per_node 2 train.py\n'
    assert summary(plan_text(script, 2))[:4] == ("torchrun", 1, 2, 2)


def test_unknown_variable_as_the_command_is_an_unknown_command() -> None:
    plan = plan_text("$LAUNCHER train.py\n", 1)
    assert plan.launcher == "other"
    assert any("LAUNCHER" in w for w in plan.warnings)


def test_function_called_through_a_variable_gets_its_arguments() -> None:
    script = ('run() {\n  torchrun --nproc_per_node "$1" train.py\n}\n'
              'STEP="run 8"\n$STEP\n')
    assert summary(plan_text(script, 2))[:4] == ("torchrun", 1, 8, 8)


# ---- $(which X) -------------------------------------------------------------------------


def test_which_names_the_program_when_the_path_is_not_known() -> None:
    plan = plan_text("$(which fairseq-train) data-bin --arch lstm\n", 1)
    assert summary(plan) == ("other", None, None, None, ("cli", "fairseq-train"),
                             ["data-bin", "--arch", "lstm"])
    assert plan.warnings == []
    for form in ("`which fairseq-train`", "$(command -v fairseq-train)",
                 "$(type -P fairseq-train)", '"$(which fairseq-train)"'):
        assert shown(plan_text(f"{form} data-bin\n", 1)) == ["fairseq-train", "data-bin"]


def test_which_finds_the_program_on_the_scripts_path(tmp_path: Path) -> None:
    tool = tmp_path / "fairseq-train"
    tool.write_text("#!/usr/bin/env python\n")
    tool.chmod(0o755)
    script = ("torchrun --nproc_per_node=8 $(which fairseq-train) data-bin\n"
              "$(which not-installed-anywhere) x\n")
    env = {"PATH": f"{tmp_path}{os.pathsep}/nonexistent"}
    plan = plan_text(script, 1, caller_env=env)
    # torchrun runs `python SCRIPT`: the script is the file `which` finds.
    assert summary(plan) == ("torchrun", 1, 8, 8, ("script", str(tool)), ["data-bin"])
    assert shown(plan_text(script, 2, caller_env=env))[0] == "not-installed-anywhere"


def test_which_with_options_or_several_names_is_not_read() -> None:
    for form in ("$(which -a python)", "$(which python python3)", "$(command python)"):
        plan = plan_text(f"{form} train.py\n", 1)
        assert not plan.argv[0].known, form


# ---- eval and bash -c -------------------------------------------------------------------


def test_eval_reads_the_words_again_as_shell() -> None:
    script = ('ARGS="--lr 1e-4"\n'
              "CMD=\"CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node gpu train.py "
              "--name 'a b' ${ARGS}\"\n"
              'eval "$CMD"\n'
              "eval $CMD\n")
    for line in (3, 4):
        plan = plan_text(script, line)
        # eval re-reads quotes and assignments, unlike `$CMD`.
        assert summary(plan) == ("torchrun", 1, "gpu", 2, ("script", "train.py"),
                                 ["--name", "a b", "--lr", "1e-4"])
        assert plan.visible_devices == 2
        assert {k: w.value for k, w in plan.env.items()} == {"CUDA_VISIBLE_DEVICES": "0,1"}
        assert plan.span.start_line == line - 1
        # The words stand where the code is written; none can be "fixed" in place.
        assert all(w.span.start_line == line - 1 and w.span.start_col >= 5 for w in plan.argv)
        assert any(d.code == "inline" and d.severity == "info" for d in plan.diagnostics)


def test_eval_of_single_quoted_code_sees_the_scripts_variables() -> None:
    script = "N=4\neval 'torchrun --nproc_per_node $N train.py'\n"
    assert summary(plan_text(script, 2))[:4] == ("torchrun", 1, 4, 4)


def test_unknown_parts_of_the_code_stay_unknown_with_their_reason() -> None:
    script = 'eval "torchrun --nproc_per_node $NGPUS train.py --data $DATA"\n'
    plan = plan_text(script, 1)
    assert plan.launcher == "torchrun" and plan.nproc_per_node is None
    assert [w.display for w in plan.entry_args] == ["--data", "$DATA"]
    assert any("$NGPUS" in w and "not set in the script" in w for w in plan.warnings)
    assert not any("__rankdebug" in w for w in plan.warnings + shown(plan))


def test_eval_of_an_unknown_command_says_so() -> None:
    plan = plan_text('eval "$CMD"\n', 1)
    assert plan.launcher == "other"
    assert any("$CMD" in w for w in plan.warnings)


def test_bash_c_is_a_new_shell_with_its_own_arguments() -> None:
    script = ('export NPROC=2\nLOCAL=9\n'
              "bash -c 'torchrun --nproc_per_node $NPROC train.py --tag $0 --seed $1 $LOCAL' "
              "run7 42\n")
    plan = plan_text(script, 3, caller_env={})
    assert summary(plan) == ("torchrun", 1, 2, 2, ("script", "train.py"),
                             ["--tag", "run7", "--seed", "42"])


def test_bash_c_options_and_commands_before_the_launcher(tmp_path: Path) -> None:
    script = ('bash -lc "export OMP_NUM_THREADS=4; cd sub && '
              'torchrun --nproc_per_node 2 train.py"\n')
    plan = plan_text(script, 1, cwd=tmp_path)
    assert summary(plan)[:4] == ("torchrun", 1, 2, 2)
    assert plan.cwd == str(tmp_path / "sub")
    assert plan.script_env["OMP_NUM_THREADS"].value == "4"


def test_srun_bash_c_plans_the_launcher_it_runs() -> None:
    script = ('ARGS="--epochs 3"\n'
              'srun --ntasks-per-node=1 bash -c "torchrun --nnodes 2 --nproc_per_node 8 '
              '--node_rank \\$SLURM_NODEID train.py ${ARGS}"\n'
              'srun -N 2 --ntasks-per-node=4 sh -c "python train.py ${ARGS}"\n'
              'mpirun -np 4 bash -c "python train.py"\n')
    plan = plan_text(script, 2)
    assert summary(plan) == ("torchrun", 2, 8, 16, ("script", "train.py"), ["--epochs", "3"])
    assert [w.display for w in plan.argv][:2] == ["srun", "--ntasks-per-node=1"]
    # A program srun runs from the code: srun's counts, the code's program.
    assert summary(plan_text(script, 3)) == ("srun", 2, 4, 8, ("script", "train.py"),
                                            ["--epochs", "3"])
    assert summary(plan_text(script, 4))[:5] == ("mpirun", 1, 4, 4, ("script", "train.py"))


def test_code_that_runs_no_launcher_stays_as_written() -> None:
    for command in ('bash -c "echo a; echo b"', "bash -c 'torchrun --x \"oops'",
                    "bash -c", "eval"):
        plan = plan_text(command + "\n", 1)
        assert plan.launcher == "other", command


def test_code_in_code_is_read_to_a_limit() -> None:
    inner = "torchrun --nproc_per_node 3 train.py"
    assert summary(plan_text(f"eval \"bash -c '{inner}'\"\n", 1))[:4] == ("torchrun", 1, 3, 3)
    deep = "eval " * 40 + inner + "\n"
    assert plan_text(deep, 1).launcher in ("torchrun", "other")


def test_plan_all_lists_commands_run_through_eval() -> None:
    from rankdebug.command import plan_all

    script = ('CMD="torchrun --nproc_per_node 2 train.py"\n'
              'eval "$CMD"\n$CMD\nbash -c "$CMD"\n`which torchrun` x.py\n')
    plans, _ = plan_all(script)
    assert [(p.span.start_line, p.launcher) for p in plans] == [
        (1, "torchrun"), (2, "torchrun"), (3, "torchrun"), (4, "torchrun")]


# ---- read <<EOF -------------------------------------------------------------------------


def test_read_gathers_arguments_from_a_here_document() -> None:
    script = ("MODEL=gpt2\n"
              "read -r -d '' ARGS <<EOF\n"
              "--model $MODEL \\\n"
              "    --lr 1e-4 \\$HOME \"quoted\"\n"
              "    --data $DATA_DIR\n"
              "EOF\n"
              "torchrun --nproc_per_node 2 train.py $ARGS\n")
    plan = plan_text(script, 7)
    assert [w.display for w in plan.entry_args] == [
        "--model", "gpt2", "--lr", "1e-4", "$HOME", '"quoted"', "--data", "$DATA_DIR"]
    assert [w.known for w in plan.entry_args].count(False) == 1


def test_read_of_a_quoted_here_document_keeps_its_text() -> None:
    script = ("read -r -d '' ARGS <<- 'END'\n"
              "\t--x $y\n"
              "\t  --z 1\n"
              "\tEND\n"
              "python t.py $ARGS\n")
    assert [w.display for w in plan_text(script, 5).entry_args] == ["--x", "$y", "--z", "1"]


def test_read_without_d_takes_the_first_line() -> None:
    script = "read -r A B <<EOF\n  one two three \nfour\nEOF\npython t.py $A $B\n"
    assert [w.display for w in plan_text(script, 5).entry_args] == ["one", "two", "three"]


def test_read_a_here_string_with_its_own_ifs() -> None:
    script = ('IFS="," read -r -a DEVS <<< "0,1,2,3"\n'
              'torchrun --nproc_per_node ${#DEVS[@]} train.py --first "${DEVS[0]}"\n')
    plan = plan_text(script, 2)
    assert plan.nproc_per_node == 4 and [w.value for w in plan.entry_args] == ["--first", "0"]


def test_mapfile_and_cat_here_documents() -> None:
    script = ("mapfile -t HOSTS <<EOF\nnode1\nnode2\nEOF\n"
              "ARGS=$(cat <<EOF\n--a 1\n--b 2\n\nEOF\n)\n"
              'python t.py --hosts "${HOSTS[@]}" $ARGS\n')
    assert [w.value for w in plan_text(script, 11).entry_args] == [
        "--hosts", "node1", "node2", "--a", "1", "--b", "2"]


def test_read_from_elsewhere_is_known_only_at_run_time() -> None:
    for read in ("read -r -d '' ARGS < args.txt", "read -r ARGS", "read -u 3 ARGS",
                 "cat args | read ARGS", "read -r -d '' ARGS <<< \"$UNSET\"",
                 "read -r -n 3 ARGS <<< 'abcdef'"):
        plan = plan_text(f"{read}\npython t.py $ARGS\n", 2)
        assert plan.entry_args and not plan.entry_args[0].known, read


def test_read_splits_as_bash_does(tmp_path: Path) -> None:
    """The splitting rules against bash itself, over awkward records and IFS values."""
    import itertools
    import shutil
    import subprocess

    from rankdebug.command.read import assign_fields, split_fields

    bash = shutil.which("bash")
    if bash is None:
        return
    records = ["a,b,c", "a,", ",a", "a,,b,", " a , b ", "a b  c ", "  ", "", "a,b,,",
               "1 ,  2 , 3 ", ",", "x\ty,z"]
    cases = list(itertools.product(records, [" \t\n", ",", ", ", " ,", ""], [1, 2, 3]))
    lines = []
    for record, ifs, count in cases:
        names = " ".join(f"V{i}" for i in range(count))
        values = " ".join(f'"$V{i}"' for i in range(count))
        ifs_q, record_q = _ansi(ifs), _ansi(record)
        lines.append(f"IFS=$'{ifs_q}' read -r {names} <<< $'{record_q}'; "
                     f"printf '%s\\x1f' {values}; "
                     f"IFS=$'{ifs_q}' read -r -a ARR <<< $'{record_q}'; "
                     'for x in "${ARR[@]}"; do printf "\\x1e%s" "$x"; done; echo')
    out = subprocess.run([bash, "-c", "\n".join(lines)], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    for (record, ifs, count), got in zip(cases, out, strict=False):
        names_part = got.partition("\x1e")[0]
        want_names = names_part.split("\x1f")[:count]
        want_array = got.split("\x1e")[1:]
        assert assign_fields(record, ifs, count) == want_names, (record, ifs, count)
        assert split_fields(record, ifs) == want_array, (record, ifs)


def _ansi(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'").replace("\t", "\\t").replace(
        "\n", "\\n")


def test_blanks_between_two_expansions_in_quotes_are_kept() -> None:
    # tree-sitter-bash puts such blanks inside the second expansion's `$` token.
    script = ('A=1\nB=2\nX="$A $B"\n'
              'echo "$X" "${A} ${B}" "$A\t$B" "$((A))  $B" "$(pwd) $B"\n'
              "read -r -d '' H <<EOF\n$A $B\nEOF\necho \"$H\"\n")
    assert shown(plan_text(script, 4, cwd=Path("/w"))) == [
        "echo", "1 2", "1 2", "1\t2", "1  2", "/w 2"]
    assert shown(plan_text(script, 8)) == ["echo", "1 2"]


def test_code_with_unknown_parts_in_its_own_quotes_and_arithmetic_like_substitutions() -> None:
    # The outer shell expands '$(…)' inside the double quotes; the inner code then quotes
    # what came out. `$(((X)) && …)` is a command substitution to bash, not arithmetic.
    script = ('srun bash -c "torchrun --nnodes=2 --nproc_per_node=4 '
              "--rdzv_conf=is_host=\\$(((SLURM_NODEID)) && echo 0 || echo 1) "
              "--rdzv_endpoint='$(scontrol show hostnames | head -n 1)':29500 train.py\"\n")
    plan = plan_text(script, 1)
    assert summary(plan) == ("torchrun", 2, 4, 8, ("script", "train.py"), [])
    shown_argv = shown(plan)
    assert "--rdzv_endpoint=$(scontrol show hostnames | head -n 1):29500" in shown_argv
    assert "--rdzv_conf=is_host=$(((SLURM_NODEID)) && echo 0 || echo 1)" in shown_argv
    assert not [w for w in plan.argv if "__rankdebug" in w.display or (
        w.reason and ("__rankdebug" in w.reason or "$( (" in w.reason))]
    broken = plan_text("bash -c 'torchrun $((1 +) train.py'\n", 1)
    assert broken.launcher == "other"
    assert "the code bash -c runs cannot be read as shell" in broken.warnings


def test_code_run_by_an_outer_launcher_keeps_its_own_assignments() -> None:
    """`mpirun -x V=a bash -c 'V=b deepspeed …'`: the code's own assignment is what
    deepspeed sees (bash runs it after mpirun exported its value), so it counts two devices."""
    script = ("mpirun -np 1 -x CUDA_VISIBLE_DEVICES=0 "
              "bash -c 'CUDA_VISIBLE_DEVICES=0,1 deepspeed train.py'\n")
    plan = plan_text(script, 1)
    assert plan.launcher == "deepspeed" and plan.nproc_per_node == 2
