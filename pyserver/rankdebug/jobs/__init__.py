"""Running jobs: find them, read every rank's stack, attach a debugger to any rank.

Modules: ``discover`` (registry + ``/proc`` scan), ``stacks`` (stacks from armed ranks'
handlers or py-spy dumps, grouped), ``armed`` (requests to armed ranks' control sockets),
``attach`` (debugpy injected: ``inject``'s ptrace, else gdb), ``ptrace`` (why ptrace is
refused, and the fix),
``gpu`` (nvidia-smi, where present), and the CLI verbs ``cli_jobs``, ``cli_stacks``,
``cli_attach``, ``cli_eval``.

``rankdebug jobs --json`` prints one object (what the language server's ``rankdebug.jobs``
command and the Training Jobs view read): its shape, each field with what it means, is
declared once in ``rankdebug.protocol.jobs`` (schema: docs/schema/jobs-answer.schema.json).

The table (``rankdebug jobs``) ends such a rank's line with ``raised ValueError at
model.py:88``, or ``waiting in all_reduce #6 (group 0)``.

Jobs are identified by their registry id, or, for jobs found by the scan, by
``LAUNCHERPID@HOST``; every verb also takes a unique prefix of an id or the launcher's pid.
Only the current user's processes are ever listed or touched.
"""
