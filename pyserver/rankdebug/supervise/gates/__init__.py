"""The gate in front of each chosen rank's debugger: it relays DAP between the
client and the rank, holds the rank until its breakpoints arrive, and lets the group layer
stop, continue and step the ranks together (gate: the endpoint; client: one client's
session; preset: breakpoints sent with the launch; said: what the client configured;
waiting: where an untraced rank waits; dapwire: the DAP fields the gate reads)."""
