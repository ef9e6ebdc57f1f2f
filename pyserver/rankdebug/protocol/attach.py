"""``rankdebug attach --json``: the lines it prints, one JSON object each: a ``listening``
per rank that listens (``rankdebug launch``'s own line for its ranks), a ``failed`` per
rank that could not be attached, and, for several ranks, one ``done`` last. The extension
reads them (``jobs/attachRanks.ts``; the types generated from here are
``core/generated/attachLines.ts``); the real-job tests check every line against them
(``fields.problem``)."""

from __future__ import annotations

from rankdebug.protocol.fields import Field, Message, message_of

_JOB = Field("str", "the job's id")



LINES: dict[str, Message] = {m.tag: m for m in (
    message_of("listening", "A rank's debug port accepts connections: attach a DAP client.",
             rank=Field("int", "the rank; null for a --pid process that is no rank",
                        null=True),
             host=Field("str", "the address to connect to"), port=Field("int", "the port"),
             pid=Field("int", "the rank's process id"),
             job=Field("str", "the job's id; null for a --pid process of no job", null=True),
             node=Field("str", "the host the rank runs on, when not this one",
                        optional=True),
             via=Field("str", "how debugpy was put in just now: `remote_exec`, `ptrace` or "
                       "`gdb` (absent: it listened already, or its handler started it)",
                       optional=True)),
    message_of("failed", "A rank of several could not be attached; the others go on.",
             rank=Field("int", "the rank"),
             pid=Field("int", "its process id; null when it does not run", null=True),
             job=_JOB, message=Field("str", "why")),
    message_of("done", "Every rank of several has listened or failed: last, once.",
             job=_JOB, attached=Field("[int]", "the ranks that listen"),
             failed=Field("[int]", "the ranks that could not be attached"),
             seconds=Field("number", "what it took")),
)}
