"""``rankdebug launch --json``: the events it prints on stdout, one JSON object a line, in
the order a job goes through them (``supervise``: ``cli`` prints ``job``, ``job`` the rest,
``together`` the group layer's). The extension reads them (``core/events.ts``, checked
against the types generated from here)."""

from __future__ import annotations

from rankdebug.protocol.fields import Field, Message, message_of

_JOB = Field("str", "the job's id (`rankdebug jobs`)", optional=True)
_RANK = Field("int", "the rank")
_PID = Field("int", "the rank's process id", optional=True, null=True)
_WHERE = {
    "file": Field("str", "the file of the rank's top frame of user code", null=True),
    "line": Field("int", "its line", null=True),
    "function": Field("str", "its function", null=True),
}
_NUMBERED = {
    "seq": Field("int", "the collective's sequence number in its process group, from "
                 "PyTorch's records (where the rank could say)", optional=True, null=True),
    "group": Field("str", "that process group's name (`0` is the default group)",
                   optional=True, null=True),
    "context": Field("str", "what issued the collective, where known (`DDP bucket, from "
                     "backward`)", optional=True, null=True),
}



EVENTS: dict[str, Message] = {m.tag: m for m in (
    message_of("job", "The job started: first, once.",
             job=Field("str", "the job's id"),
             dir=Field("str", "the job's registry folder (its ctl.sock)"),
             pid=Field("int", "the pid of `rankdebug launch`"),
             ranks=Field("[int]", "the chosen ranks; null when only each rank can tell "
                         "(`local0` with unknown local ranks)", null=True),
             rank_spec=Field("str", "the chosen ranks as given"),
             armed=Field("bool", "every rank can be attached later"),
             attach_mode=Field("str", "`hit` or `start`"),
             launcher=Field("str", "the launcher (`torchrun`, `deepspeed`, ...)"),
             attach=Field("[object]", "a `rankdebug` attach configuration per chosen rank"),
             nodes=Field("[object]", "the job's nodes, {node, host}, when it runs on several",
                         optional=True)),
    message_of("listening", "A chosen rank's debug port accepts connections.",
             rank=_RANK, host=Field("str", "the address to connect to", null=True),
             port=Field("int", "the port", null=True), pid=_PID, job=_JOB,
             node=Field("str", "the node the rank runs on (`nodeN`), when not this one",
                        optional=True)),
    message_of("attached", "A client has attached to the rank and configured it.",
             rank=_RANK, pid=_PID, job=_JOB),
    message_of("stopped", "A chosen rank stopped (breakpoint, pause, step, exception...).",
             rank=_RANK, reason=Field("str", "DAP's stop reason"), **_WHERE,
             waiting=Field("str", "the collective a rank shown paused waits in (its stack "
                           "was read from outside)", optional=True),
             **_NUMBERED, job=_JOB),
    message_of("continued", "A chosen rank runs again.", rank=_RANK, job=_JOB),
    message_of("arrived", "Every rank of a group step or run-to has stopped.",
             command=Field("str", "`step` or `run-to`"),
             ranks=Field("[int]", "the ranks of the group"), job=_JOB),
    message_of("blocked", "A rank of a group step or run-to waits in a collective.",
             rank=_RANK, **{"in": Field("str", "the collective")},
             file=Field("str", "where it waits", optional=True, null=True),
             line=Field("int", "its line", optional=True, null=True),
             **_NUMBERED, job=_JOB),
    message_of("raised", "A rank is held alive at an uncaught exception.",
             rank=_RANK, pid=_PID, exception=Field("str", "the exception's type", null=True),
             message=Field("str", "its message", null=True), **_WHERE, job=_JOB),
    message_of("role", "A Ray actor rank's role, once it runs the actor's code.",
             rank=_RANK, role=Field("str", "`actor/rollout/ref`, `critic`"), job=_JOB),
    message_of("error", "A command or an attach could not be carried out; the job goes on.",
             message=Field("str", "what went wrong"),
             command=Field("str", "the command it answers", optional=True, null=True),
             rank=Field("int", "the rank it concerns", optional=True, null=True), job=_JOB),
    message_of("hang", "No rank has made progress for `--hang-seconds` (said once per hang; "
             "never while a chosen rank is stopped in the debugger or held at an exception).",
             job=Field("str", "the job's id"),
             seconds=Field("number", "how long no rank has made progress"),
             why=Field("str", "one sentence: the first culprit's, else what was seen"),
             culprits=Field("[object]", "the diagnosis' culprit findings, {ranks, why, where: "
                            "{file, line, function} | null} (`rankdebug diagnose --json`'s "
                            "`culprit` lines); empty when it names none")),
    message_of("hang_over", "A rank made progress again after a `hang`: the hang is over.",
             job=Field("str", "the job's id"),
             seconds=Field("number", "how long no rank had made progress")),
    message_of("exited", "The job ended: last, once.",
             code=Field("int", "its exit status")),
)}
