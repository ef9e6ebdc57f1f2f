"""Walking a script in order, as bash would run it, without running any command.

Assignments, `export`/`declare`/`local`, `unset`, `cd`, `source`, function calls,
`if`/`case` (decided when their conditions are known), loops and `&&`/`||` update the
state; each simple command met on the way is reported, with the state at that moment, to
a callback:

- walker.py: the Walker, its statements, function calls and `source`;
- assign.py: assignments, `declare`/`export`/`local` and `unset`;
- control.py: `if`, `case`, loops, `&&`/`||`;
- builtins.py: the builtins whose effects are followed (`cd`, `read`, `set --`...);
- conditions.py: `[ ]`, `[[ ]]` and `test`;
- walk.py: what these share.
"""
