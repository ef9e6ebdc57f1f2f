"""Framework wrapper scripts known by convention, for when they are not on this machine
(a README read without the framework's tree, a script path not known here). A script that
is here is followed instead, as any other (planner._follow).

Each convention turns the script's arguments into the words it hands to ``eval``; the
planner reads them as that code (command/inline.py), so they run through the launcher's own
module. Unknown arguments stay unknown.

- mindformers' ``scripts/msrun_launcher.sh "PROGRAM ARGS" [WORKER_NUM ...]``: 1, 2, 6 or 9
  arguments (scripts/msrun_launcher.sh of mindspore-lab/mindformers, 2024):
  ``EXECUTE_ORDER [WORKER_NUM]`` on one machine (8 workers by default),
  ``EXECUTE_ORDER WORKER_NUM MASTER_PORT LOG_DIR JOIN CLUSTER_TIME_OUT`` on one machine,
  ``EXECUTE_ORDER WORKER_NUM LOCAL_WORKER MASTER_ADDR MASTER_PORT NODE_RANK LOG_DIR JOIN
  CLUSTER_TIME_OUT`` on several; it then runs ``eval $EXECUTE_ORDER`` with the msrun
  options first. (It also appends ``$MF_LOG_SUFFIX`` to the log folder and puts the
  framework's root on PYTHONPATH; neither changes the ranks.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rankdebug.command.words import Part, Word

# A convention: the script's arguments → the words it evals, or why it runs nothing.
Convention = Callable[[Sequence[Word]], "list[Word] | str"]


def _option(name: str, value: Word) -> Word:
    return Word((Part(f"--{name}="), *value.parts), value.span, f"--{name}={value.source}",
                value.reason)


def msrun_launcher(args: Sequence[Word]) -> list[Word] | str:
    """What mindformers' scripts/msrun_launcher.sh evals for ``args``."""
    n = len(args)
    if n not in (1, 2, 6, 9):
        return (f"msrun_launcher.sh takes 1, 2, 6 or 9 arguments, not {n}: it prints its "
                "usage and exits")
    here = args[0].span

    def default(text: str) -> Word:
        return Word.literal(text, here)

    worker = args[1] if n > 1 else default("8")
    if worker.value is not None and not worker.value.isdigit():
        return f"msrun_launcher.sh: worker_num={worker.value} is not a number, so it exits"
    settings: list[tuple[str, Word]] = [("worker_num", worker)]
    if n == 9:
        local = args[2]
        settings.append(("local_worker_num", local))
        # WORKER_NUM == LOCAL_WORKER runs on one node, without the two options (when not
        # known, with them: the ranks are the same either way).
        if local.value is None or worker.value is None or local.value != worker.value:
            settings += [("master_addr", args[3]), ("master_port", args[4]),
                         ("node_rank", args[5])]
        else:
            settings += [("master_port", args[4])]
        settings += [("log_dir", args[6]), ("join", args[7]), ("cluster_time_out", args[8])]
    elif n == 6:
        settings += [("local_worker_num", worker), ("master_port", args[2]),
                     ("log_dir", args[3]), ("join", args[4]), ("cluster_time_out", args[5])]
    else:
        settings += [("local_worker_num", worker), ("master_port", default("8118")),
                     ("log_dir", default("output/msrun_log")), ("join", default("False")),
                     ("cluster_time_out", default("7200"))]
    return [default("msrun"), *(_option(k, v) for k, v in settings), args[0]]


KNOWN: dict[str, Convention] = {
    "msrun_launcher.sh": msrun_launcher,
}
