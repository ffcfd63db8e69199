"""``cedar submit`` (its schedd options, shared with ``transfer-data``, are in
:mod:`cedar.cli.schedd_options`; ``q`` is :mod:`cedar.cli.q`, ``history``
:mod:`cedar.cli.history`, rm/hold/release/edit :mod:`cedar.cli.actions`).

It follows condor_submit's output and has ``--json``.  ``--pool HOST[:PORT]`` and ``--name NAME``
locate the schedd as the tools do; without them the HTCondor configuration decides.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from cedar.cli.common import Progress, UsageError
from cedar.cli.schedd_options import add_common, schedd_from
from cedar.commands.submit import Submit


def subcommand_parser(name: str) -> argparse.ArgumentParser:
    """The parser of ``cedar submit``."""
    if name == "submit":
        p = argparse.ArgumentParser(
            prog="cedar submit", description="submit jobs from a submit description file"
        )
        p.add_argument("file", help="submit description file ('-' for standard input)")
        p.add_argument(
            "--spool",
            action="store_true",
            help="send the input files to the schedd (remote submit)",
        )
        add_common(p)
        p.set_defaults(handler=run_submit)
        return p
    raise ValueError(f"no subcommand {name!r} here")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run a parsed ``submit`` command line."""
    return int(args.handler(args, out))


def run_submit(args: argparse.Namespace, out: TextIO) -> int:
    """``cedar submit FILE``: prints the cluster id it created."""
    if getattr(args, "spool", False):
        from cedar.cli.spool_tools import run_spooled_submit

        return run_spooled_submit(args, out)
    if args.file == "-":
        description = Submit(sys.stdin.read())
    else:
        try:  # read here: an unreadable file is a usage error (exit 2), as the README says
            with open(args.file, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise UsageError(f"cannot read submit file {args.file}: {exc.strerror}") from None
        description = Submit(text, submit_file=args.file)
    schedd = schedd_from(args)
    with Progress("submitting").working():
        result = schedd.submit(description)
    if args.json:
        out.write(json.dumps({"cluster": result.cluster, "procs": result.num_procs}) + "\n")
        warn_unused(description)
        return 0
    out.write("Submitting job(s)" + "." * result.num_procs + "\n")
    out.write(f"{result.num_procs} job(s) submitted to cluster {result.cluster}.\n")
    warn_unused(description)
    return 0


def warn_unused(description: Submit, err: TextIO | None = None) -> None:
    """condor_submit's warning for each line nothing used (a typo, usually), on stderr."""
    err = err or sys.stderr
    for line in description.unused:
        err.write(f"WARNING: the line '{line}' was unused by cedar submit. Is it a typo?\n")
