"""``python -m cedar.compat run prog.py ARGS...``: run a program written for the HTCondor
bindings with :func:`cedar.compat.install` in effect; ``python -m cedar.compat run -m module``
runs a module the same way; ``--force`` uses the compat modules even where the real ones are
installed (to compare both)."""

from __future__ import annotations

import os
import runpy
import sys

from cedar.compat import child_environment, install, install_hook

USAGE = (
    "usage: python -m cedar.compat run [--force] (PROGRAM.py | -m MODULE) [ARGS...]\n"
    "       python -m cedar.compat install-hook   (for every program of this environment)"
)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["install-hook"]:
        print(f"wrote {install_hook()}")
        return 0
    force = len(args) > 1 and args[1] == "--force"
    if force:
        del args[1]
    if len(args) < 2 or args[0] != "run" or (args[1] == "-m" and len(args) < 3):
        print(USAGE, file=sys.stderr)
        return 2
    install(force=force)
    child_environment(os.environ, force=force)
    if args[1] == "-m":
        sys.argv = [args[2], *args[3:]]
        runpy.run_module(args[2], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args[1:]
        runpy.run_path(args[1], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
