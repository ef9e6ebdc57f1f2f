"""debugpy's adapter as rankdebug runs it: only the job's owner gets in.

``peer`` names the user at the other end of a loopback TCP connection; ``main`` runs
debugpy's adapter with that check on every connection it accepts (and ends with the process
it serves); ``rankdebug.runtime.adapter_wrapper`` lets a rank with no supervisor spawn its
adapter that way. Used by ``supervise`` (gates, adapters) and ``jobs``
(attach); standard library only, debugpy imported by ``main`` when it runs.
"""
