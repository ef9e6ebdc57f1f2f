"""Bash word expansion over tree-sitter nodes, without running anything.

:class:`~rankdebug.command.expand.expander.Expander` turns an argument node into argv
words or into one value without word splitting; each kind of expansion has its module:

- expander.py: the words of a node: quoting and escapes, ``~``, ``{1..4}``;
- fields.py: word splitting;
- params.py: parameter expansion and its operators (``${X:-d}``, ``${#X}``, ``${!X}``),
  positional parameters and ``"$@"``, arrays; string_ops.py: ``${X%.*}``, ``${X/a/b}``,
  ``${X:1:2}``, ``${X^^}``;
- arith.py: ``$(( ))`` (and, for the walker, ``(( ))``, ``let`` and ``declare -i``);
- substitution.py: ``$( )``, never run: only pure idioms (``$(pwd)``, ``$(dirname X)``,
  ``$(cd X && pwd)``, ``$(which X)``...) are computed;
- heredoc.py: here-documents and here-strings;
- chunks.py: what these hand each other.

Whatever cannot be known becomes an unknown part that says why. Statements (assignments,
``if``, ``[ ]`` tests, loops) are the script walker's.
"""
