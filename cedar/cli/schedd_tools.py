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
from typing import TYPE_CHECKING, TextIO

from cedar.cli.common import Progress, UsageError
from cedar.cli.schedd_options import add_common, schedd_from
from cedar.submit_language import Submit

if TYPE_CHECKING:
    from cedar.commands.schedd import SubmitResult


def subcommand_parser(name: str) -> argparse.ArgumentParser:
    """The parser of ``cedar submit``."""
    if name == "submit":
        p = argparse.ArgumentParser(
            prog="cedar submit", description="submit jobs from a submit description file"
        )
        p.add_argument(
            "words",
            nargs="*",
            metavar="FILE|NAME=VALUE",
            help="the submit description file ('-' or none: standard input), and macros "
            "defined before it",
        )
        p.add_argument(
            "--spool",
            action="store_true",
            help="send the input files to the schedd (remote submit)",
        )
        p.add_argument(
            "--remote",
            metavar="NAME",
            help="submit to the schedd NAME, sending the input files (--name NAME --spool)",
        )
        p.add_argument(
            "-a",
            "--append",
            action="append",
            default=[],
            metavar="LINE",
            help="a line after the description, set before each of its queue statements",
        )
        p.add_argument("--batch-name", metavar="NAME", help="the jobs' batch name")
        p.add_argument(
            "--queue",
            nargs="+",
            metavar="ARGS",
            help="the queue statement's arguments, for a description without one",
        )
        p.add_argument("--terse", action="store_true", help="print the job ids only: C.P - C.P")
        p.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="print each job's ad as submitted (condor_submit -verbose's layout)",
        )
        p.add_argument(
            "--dry-run",
            metavar="FILE",
            help="write the job ads to FILE ('-': standard output), submit nothing",
        )
        add_common(p)
        p.set_defaults(handler=run_submit)
        return p
    raise ValueError(f"no subcommand {name!r} here")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run a parsed ``submit`` command line."""
    return int(args.handler(args, out))


def description_from(args: argparse.Namespace) -> Submit:
    """The description a ``cedar submit`` command line names, read as condor_submit reads it
    with its command line (:meth:`Submit.from_command_line`)."""
    files = [word for word in args.words if "=" not in word]
    if len(files) > 1:
        raise UsageError(f"one submit description file, not {len(files)}: {' '.join(files)}")
    macros = [(name.strip(), value.strip()) for name, _, value in _assignments(args.words)]
    path = files[0] if files else "-"
    if path == "-":
        text, submit_file = sys.stdin.read(), None
    else:
        try:  # read here: an unreadable file is a usage error (exit 2), as the README says
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            if args.prog == "condor_submit":  # its words, on stderr, exit 1 (25.13.2)
                sys.stderr.write(
                    f"\nERROR: Failed to open command file ({path}) ({exc.strerror})\n"
                )
                raise SystemExit(1) from None
            raise UsageError(f"cannot read submit file {path}: {exc.strerror}") from None
        submit_file = path
    appended = list(args.append)
    if args.batch_name is not None:
        appended.append(f"batch_name = {args.batch_name}")
    return Submit.from_command_line(
        text,
        submit_file=submit_file,
        macros=macros,
        appended=appended,
        queue=" ".join(args.queue) if args.queue else None,
    )


def _assignments(words: list[str]) -> list[tuple[str, str, str]]:
    """The ``NAME=VALUE`` words of the command line, split at their first ``=``."""
    return [word.partition("=") for word in words if "=" in word]


def run_submit(args: argparse.Namespace, out: TextIO) -> int:
    """``cedar submit FILE``: prints the cluster id it created.  As ``condor_submit``, a
    description it refuses is reported as condor_submit does: ``Submitting job(s)`` (no
    newline; ``Dry-Run job(s)`` and a newline under -dry-run) on stdout, ``ERROR: ...`` on
    stderr, exit 1 (observed on 25.13.2)."""
    if args.prog != "condor_submit":
        return _submit(args, out)
    from cedar.submit_language.errors import SubmitError

    try:
        return _submit(args, out)
    except SubmitError as exc:
        out.write("Dry-Run job(s)\n" if args.dry_run is not None else "Submitting job(s)")
        out.flush()
        sys.stderr.write(f"ERROR: {exc}\n")
        return 1


def _submit(args: argparse.Namespace, out: TextIO) -> int:
    if args.remote is not None:  # condor_submit -remote: that schedd, with spooling
        args.name, args.spool = args.remote, True
    if args.dry_run is not None and (args.json or args.spool):
        raise UsageError("--dry-run writes condor_submit's ads: not with --json or --spool")
    description = description_from(args)
    if args.dry_run is not None:
        return dry_run(description, args.dry_run, out, prog=args.prog)
    if getattr(args, "spool", False):
        from cedar.cli.spool_tools import run_spooled_submit

        return run_spooled_submit(args, description, out)
    schedd = schedd_from(args)
    if args.prog == "condor_submit":  # the jobs say which tool submitted them
        from cedar.submit_language.settings import SubmitSettings

        schedd.settings = SubmitSettings.from_config()
        schedd.settings.submit_method = CONDOR_SUBMIT_METHOD
    with Progress("submitting").working():
        result = schedd.submit(description)
    if args.json:
        out.write(json.dumps({"cluster": result.cluster, "procs": result.num_procs}) + "\n")
    elif args.terse:
        last = result.first_proc + result.num_procs - 1
        out.write(f"{result.cluster}.{result.first_proc} - {result.cluster}.{last}\n")
    elif args.verbose:
        out.write(verbose_text(result))
    else:
        out.write("Submitting job(s)" + "." * result.num_procs + "\n")
        out.write(f"{result.num_procs} job(s) submitted to cluster {result.cluster}.\n")
    warn_unused(description, prog=args.prog)
    return 0


#: ``JobSubmitMethod`` of a job condor_submit submitted (0; 2 is the Python bindings', which
#: ``cedar submit`` sets, as the library does; observed on 25.13.2).
CONDOR_SUBMIT_METHOD = 0


def verbose_text(result: SubmitResult) -> str:
    """condor_submit -verbose's report (observed on 25.13.2): ``Submitting job(s)``, then per
    job ``** Proc C.P:`` and its ad as ``-long`` prints it, then an empty line; no count."""
    from cedar.output.whole import long_text

    parts = ["Submitting job(s)\n"]
    for proc, ad in enumerate(result.proc_ads, start=result.first_proc):
        parts.append(f"** Proc {result.cluster}.{proc}:\n{long_text(ad)}")
    return "".join(parts) + "\n"


def dry_run(description: Submit, destination: str, out: TextIO, prog: str = "cedar submit") -> int:
    """``-dry-run FILE``: the ads condor_submit would send for cluster 1, written as
    condor_submit writes them (observed): a blank line and ``Name=value`` lines a job (the
    cluster ad with the first), a ``.`` a job on standard output, then the count."""
    ads = description.build(1)
    blocks = [{"ClusterId": "1", **ads.cluster_ad}]
    if not ads.late_materialization:  # a factory's procs are the schedd's: none printed
        blocks[0].update(ads.proc_ads[0])
        blocks.extend(ads.proc_ads[1:])
    text = ["\n" + "".join(f"{k}={v}\n" for k, v in block.items()) for block in blocks]
    dots = "" if ads.late_materialization else "."
    out.write("Dry-Run job(s)")
    if destination == "-":
        out.write(dots.join(text) + dots)
    else:
        try:
            with open(destination, "w", encoding="utf-8") as handle:
                handle.write("".join(text))
        except OSError as exc:
            raise UsageError(f"cannot write {destination}: {exc.strerror}") from None
        out.write(dots * len(blocks))
    out.write(f"\n{ads.num_procs} job(s) dry-run to cluster 1.\n")
    warn_unused(description, prog=prog)
    return 0


def warn_unused(description: Submit, err: TextIO | None = None, prog: str = "cedar submit") -> None:
    """condor_submit's warning for each line nothing used (a typo, usually), on stderr."""
    err = err or sys.stderr
    for line in description.unused:
        err.write(f"WARNING: the line '{line}' was unused by {prog}. Is it a typo?\n")
