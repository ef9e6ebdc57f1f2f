"""What rankdebug's programs say to each other, declared once: each message of a channel
with its fields (``fields``: the vocabulary), checked at the boundary, and the source of the
JSON Schema in ``docs/schema/`` and the extension's TypeScript types in
``extension/src/core/generated/`` (``scripts/gen_wire.py`` writes both; a test fails when
either is stale).

Channels declared here: ``launch`` (``rankdebug launch --json``'s events), ``jobs``
(``rankdebug jobs --json``'s answer, object by object) and ``ctl`` (the
job's control socket and ``--control``'s stdin: clients' commands, ranks' reports and the
replies, each with its bounded fields, handled by ``supervise.commands`` and
``supervise.rank_reports``); a rank's handler requests are ``runtime.handler``'s (stdlib
only, the rank side).
"""
