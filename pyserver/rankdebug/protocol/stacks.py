"""``rankdebug stacks --json``: the one object it prints (``jobs.analysis.stacks.report``),
declared with each nested object. The extension reads it (``core/stacks.ts``, held by tsc
to the types generated from here); the real-job tests check every answer against it
(``fields.shape_problem``). What a rank's handler says of itself (its ``collectives``, a
held thread's ``raised``) is passed on as the rank said it: an object, not declared here
(``runtime.handler``, ``runtime.collectives``)."""

from __future__ import annotations

from rankdebug.protocol.fields import Field, Shape, nullable, optional, shape_of

_FRAME = {"name": Field("str", "the function"), "file": Field("str"), "line": Field("int"),
          "library": Field("bool", "library code (the extension dims it)"),
          "short": Field("str", "the file's short place with the line (`torch/nn/x.py:12`)")}

SHAPES: dict[str, Shape] = {s.name: s for s in (
    shape_of("Answer", "What `rankdebug stacks --json` prints.",
       job=nullable("str", "the job's id; null for --pid processes"),
       time=Field("number", "when it read, in seconds since the epoch"),
       seconds=Field("number", "what the reads took"),
       ranks=Field("[Rank]", "every rank (or --pid process) read, as the last read found it"),
       groups=Field("[Group]", "ranks with the same stack, one row per thread stack: the "
                    "main threads' first, largest first"),
       odd=Field("[int]", "the odd ranks (a process that is no rank: minus its pid)"),
       samples=Field("int", "the reads taken"),
       tree=Field("[Node]", "the main threads merged into one tree, outermost frame first"),
       collectives=Field("[Mismatch]", "the process groups whose ranks are at different "
                         "collectives, in every read")),
    shape_of("Rank", "One rank as read.",
       rank=nullable("int", "null for a process that is no rank"), pid=Field("int"),
       host=nullable("str"), error=nullable("str", "why it could not be read"),
       collective=nullable("Waiting", "the collective it waits in"),
       collectives=nullable("object", "its handler's `runtime.collectives` state, as it said it "
                      "(`{\"error\": ...}` when the rank could not tell)"),
       seconds=Field("number", "what its read took"),
       via=nullable("str", "`handler` or `py-spy`"),
       threads=Field("[Thread]")),
    shape_of("Thread", "One thread of a rank.",
       name=Field("str"), thread_id=nullable("int"), os_thread_id=nullable("int"),
       main=Field("bool"), active=Field("bool"), owns_gil=Field("bool"),
       raised=nullable("object", "held at an uncaught exception: {exception, message, file, line, "
                 "function}, as the rank said"),
       frames=Field("[Frame]", "innermost first")),
    shape_of("Frame", "One frame.", **_FRAME),
    shape_of("Group", "Ranks whose thread has the very same frames.",
       thread=Field("str"), main=Field("bool"),
       ranks=Field("[int?]", "their ranks (null: a process that is no rank)"),
       pids=Field("[int]"), label=Field("str", "the ranks as one label (`0-3,8`)"),
       summary=Field("str", "`all_reduce ← train_step ← main`: innermost first"),
       collective=nullable("str", "the collective its ranks wait in"),
       collective_text=nullable("str", "that collective with its number and who issued it "
                          "(`all_reduce #4 (DDP bucket, from backward)`)"),
       active=Field("bool"), odd=Field("bool", "not the largest main-thread row"),
       raised=nullable("str", "the exception a held thread of these ranks raised"),
       frames=Field("[Frame]", "innermost first")),
    shape_of("Node", "A frame of the merged tree, with the ranks at it.",
       **_FRAME, count=Field("int", "how many ranks are at it"), ranks=Field("[int]"),
       children=Field("[Node]", "the frames called from it, largest branch first")),
    shape_of("Waiting", "The collective a rank waits in: its handler's word (from PyTorch's "
       "records) or the torch.distributed call on its stack.",
       name=Field("str", "the collective (`all_reduce`)"), file=nullable("str"),
       line=nullable("int"),
       thread=Field("str", "the thread that waits"),
       seq=optional("int", "its sequence number in its process group (handler only)", null=True),
       group=optional("str", "that process group (handler only)", null=True),
       context=optional("str", "what issued it (handler only)", null=True),
       label=optional("str", "`all_reduce #4 (DDP bucket, from backward)` (handler only)",
                      null=True)),
    shape_of("Mismatch", "A process group whose ranks are at different collectives.",
       group=Field("str"), desc=nullable("str", "the group's description"),
       odd=Field("[int]", "the ranks apart from the largest position"),
       message=Field("str", "one sentence"),
       positions=Field("[Position]", "each position with its ranks, the largest first")),
    shape_of("Position", "Where some ranks of a group are.",
       ranks=Field("[int]"), op=nullable("str", "the collective; null: none open"),
       seq=nullable("int"), context=nullable("str")),
)}
