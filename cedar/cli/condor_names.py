"""The ``condor_*`` names, opt-in: cedar behaving as HTCondor's tools for programs that run them.

``cedar condor-commands DIR`` writes one small launcher per name into DIR; each runs cedar
under that name with the interpreter cedar runs with.  The user puts DIR on PATH (appended,
so an HTCondor installed later wins).  cedar refuses when a real HTCondor tool of a name is
already on PATH, unless ``--force``: the names never shadow a real installation unasked.
``cedar.cli.main`` also dispatches on ``argv[0]`` (a link named ``condor_q`` to ``cedar``).

This module is imported by every launcher: it imports nothing heavy at the top, so a
launcher starts no slower than ``cedar SUBCOMMAND``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from cedar.cli.main import CONDOR_NAMES as NAMES

#: The line every launcher carries, by which cedar knows a file it wrote (and may rewrite).
MARKER = "# written by 'cedar condor-commands'"

LAUNCHER = """\
#!{python}
{marker}: HTCondor's {name}, played by cedar (docs/condor-commands.md)
import sys
from cedar.cli.condor_names import main
sys.exit(main({name!r}))
"""


def main(name: str, argv: Sequence[str] | None = None) -> int:
    """Run cedar as the ``condor_*`` tool ``name`` with ``argv`` (default: the process's)."""
    from cedar.cli.main import run_as

    return run_as(name, sys.argv[1:] if argv is None else argv)


# --------------------------------------------------------------------------- cedar condor-commands


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``cedar condor-commands``."""
    parser = argparse.ArgumentParser(
        prog="cedar condor-commands",
        description="Write launchers named condor_submit, condor_q, ... into DIR, so that "
        "programs which run HTCondor's tools work with cedar. Put DIR on PATH to use them.",
        epilog="exit codes: 0 written, 1 refused (a real HTCondor tool of a name is on PATH, "
        "or DIR holds a file cedar did not write), 2 usage.",
    )
    parser.add_argument("directory", nargs="?", metavar="DIR", help="where to write them")
    parser.add_argument("--list", action="store_true", help="print the names and exit")
    parser.add_argument(
        "--force",
        action="store_true",
        help="write them even where a real HTCondor tool of the name is on PATH or a file "
        "of the name is in DIR",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def run(args: argparse.Namespace) -> int:
    """Write the launchers (or list the names)."""
    out = sys.stdout
    if args.list:
        out.write("".join(f"{name}\n" for name in NAMES))
        return 0
    if not args.directory:
        sys.stderr.write("cedar condor-commands: give a directory (or --list)\n")
        return 2
    directory = os.path.abspath(args.directory)
    conflicts = [] if args.force else _conflicts(directory)
    if conflicts:
        sys.stderr.write(
            "cedar condor-commands: refusing to write condor_* names that would stand for "
            "these files (--force to write them anyway):\n"
            + "".join(f"  {path}\n" for path in conflicts)
        )
        return 1
    os.makedirs(directory, exist_ok=True)
    for name in NAMES:
        path = os.path.join(directory, name)
        text = LAUNCHER.format(python=sys.executable, marker=MARKER, name=name)
        _write_executable(path, text)
        out.write(f"wrote {path}\n")
    out.write(
        f'Put them on your PATH, after any HTCondor installation: export PATH="$PATH:{directory}"\n'
    )
    return 0


def _conflicts(directory: str) -> list[str]:
    """The files a launcher would stand beside or replace: a real tool of a name anywhere on
    PATH, or a file of a name in DIR that cedar did not write."""
    found = []
    places = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    for name in NAMES:
        for place in [*places, directory]:
            path = os.path.join(os.path.abspath(place), name)
            foreign = os.path.isfile(path) and not _ours(path)
            if foreign and (place == directory or os.access(path, os.X_OK)):
                found.append(path)
    return sorted(set(found))


def _ours(path: str) -> bool:
    """Whether ``path`` is a launcher cedar wrote (its marker in its first lines)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return MARKER.encode() in head


def _write_executable(path: str, text: str) -> None:
    """Write ``text`` to ``path`` as a new executable file (replacing one atomically)."""
    temporary = f"{path}.cedar-tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(temporary, 0o755)
    os.replace(temporary, path)
