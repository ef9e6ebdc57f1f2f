"""What rankdebug's programs say to each other, declared once: each message of a channel
with its fields (``fields``: the vocabulary), checked at the boundary, and the source of the
JSON Schema in ``docs/schema/`` and the extension's TypeScript types in
``extension/src/core/generated/`` (``scripts/gen_wire.py`` writes both; a test fails when
either is stale).

Channels declared here: ``launch`` (``rankdebug launch --json``'s events). The control
socket's commands and rank reports are ``supervise.ctl_wire``; a rank's handler requests,
``runtime.handler`` (stdlib only, the rank side).
"""
