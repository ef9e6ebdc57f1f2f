"""``rankdebug debug``: a pdb-like prompt over a job's chosen ranks (their gates' DAP sessions
and the job's group layer), for a terminal: ``commands`` reads a line, ``session`` holds the
ranks (``views``: what it knows of each), ``group`` runs continue/step/pause over them,
``reading`` their stacks and values, ``breaks`` their breakpoints, ``link`` is one rank's DAP
connection, ``render`` prints, ``start`` runs the job through ``rankdebug launch``,
``console`` is the prompt, ``cli`` the verb."""
