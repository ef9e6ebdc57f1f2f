"""The "poor man's configurator" of nanoGPT-style scripts (the pattern of
karpathy/nanoGPT's configurator.py, written anew): ``exec``'d by train.py, it runs config
files named on the command line, then applies ``--key=value`` to the script's globals.
A key the script does not define, or a value of another type, is refused."""

import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    if "=" not in arg:
        assert not arg.startswith("--"), f"not a config file: {arg}"
        print(f"config file: {arg}")
        with open(arg) as f:
            exec(f.read())
    else:
        assert arg.startswith("--"), f"not a --key=value override: {arg}"
        key, val = arg[2:].split("=", 1)
        if key not in globals():
            raise ValueError(f"unknown config key: {key}")
        try:
            attempt = literal_eval(val)
        except (SyntaxError, ValueError):
            attempt = val
        kind = type(globals()[key])
        assert type(attempt) is kind, f"{key}: {attempt!r} is not a {kind.__name__}"
        print(f"override: {key} = {attempt}")
        globals()[key] = attempt
