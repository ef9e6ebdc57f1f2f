"""Runs the rankdebug CLI that ships with the VS Code extension.

    python rankdebug_main.py [-m rankdebug] VERB ARGS...   (plan, launch, server)
    python rankdebug_main.py --check                        one JSON line: can this Python run it?

The extension's ``dist/bundled/libs`` (the rankdebug package, pygls, tree-sitter and a
pure-Python debugpy) goes first on ``sys.path``, as in the python-tools extension template,
so the user's environment needs nothing installed. Without it (a source checkout) the
interpreter's own rankdebug is used.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "dist", "bundled", "libs")


def _use_bundled() -> None:
    if os.path.isdir(LIBS) and os.environ.get("RANKDEBUG_USE_ENVIRONMENT") != "1":
        sys.path.insert(0, LIBS)


def _check() -> int:
    info = {"ok": False, "version": sys.version.split()[0], "executable": sys.executable}
    if sys.version_info < (3, 10):
        info["problem"] = "Python 3.10 or later is needed, this is " + info["version"]
    else:
        try:
            import rankdebug
            import rankdebug.cli  # noqa: F401
            from rankdebug.command import plan_text  # noqa: F401  (tree-sitter loads)
        except Exception as exc:  # noqa: BLE001 - reported to the user as is
            info["problem"] = f"cannot load rankdebug: {exc}"
        else:
            info["ok"] = True
            info["rankdebug"] = getattr(rankdebug, "__version__", "?")
            info["bundled"] = os.path.dirname(os.path.dirname(rankdebug.__file__)) == LIBS
    print(json.dumps(info))
    return 0 if info["ok"] else 1


# Run by a child of the language server: compile the bundle, then leave the marker.
_COMPILE = (
    "import compileall, os, sys\n"
    "os.nice(10)\n"
    "if compileall.compile_dir(sys.argv[1], quiet=2, workers=1):\n"
    "    open(sys.argv[2], 'w').close()\n"
)


def _compile_bundle() -> None:
    """The bundle ships no bytecode (it would be one set per Python version), so the first
    job after an install compiled rankdebug and debugpy in its ranks, its adapters and its
    supervisor at once: 0.5-1 s at the first breakpoint, on the job's cores. The language
    server's start compiles it instead, once per Python version, at low priority."""
    tag = sys.implementation.cache_tag
    marker = os.path.join(LIBS, f".compiled-{tag}")
    if (tag is None or not os.path.isdir(LIBS) or os.path.exists(marker)
            or not os.access(LIBS, os.W_OK)):
        return
    import subprocess

    try:
        subprocess.Popen([sys.executable, "-c", _COMPILE, LIBS, marker],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        pass  # each process compiles what it imports, as before


def main() -> int:
    args = sys.argv[1:]
    if args[:2] == ["-m", "rankdebug"]:
        args = args[2:]
    _use_bundled()
    if args == ["--check"]:
        return _check()
    if args[:1] == ["server"] and os.environ.get("RANKDEBUG_USE_ENVIRONMENT") != "1":
        _compile_bundle()
    from rankdebug.cli import main as cli_main

    sys.argv = ["rankdebug", *args]
    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
