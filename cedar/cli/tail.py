"""``cedar tail``: the end of a running job's stdout, stderr or output files (``condor_tail``).

``cedar tail [-f] [-stderr] [-no-stdout] [-maxbytes N] [-auxfile F]... JOB [FILE...]`` prints
the last ``-maxbytes`` bytes (default 1024, shared by all files) of the job's stdout, or of its
stderr with ``-stderr``, and of each named file (one of its ``transfer_output_files``),
in that order, as they are.  ``-f`` then keeps printing what the job writes until it ends; unlike
``condor_tail -follow`` it never reprints the start of stdout (spec 08 §8.5, quirk 1).

Errors are ``condor_tail``'s lines (``No such job: 7.0``, ``Failed to peek at file from starter:
...``) with exit status 1.  Where ``condor_tail`` retries every 2 s forever for a job that is
not running, ``cedar tail`` says so and exits 1, unless ``-auto-retry`` asks it to wait.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import BinaryIO

from cedar.cli.common import EXIT_OK, EXIT_REFUSED, add_common_options, condor_style, guarded
from cedar.commands import Schedd
from cedar.commands.base import pause
from cedar.commands.peek import (
    DEFAULT_MAX_BYTES,
    FOLLOW_INTERVAL,
    MAX_PEEK_BYTES,
    JobNotRunning,
    PeekError,
    PeekFileError,
    PeekRefused,
)
from cedar.errors import InvalidArgument


def build_parser() -> argparse.ArgumentParser:
    """``condor_tail``'s options, plus ``-auxfile`` and cedar's ``--timeout``/``--debug``."""
    parser = argparse.ArgumentParser(
        prog="cedar tail",
        description="Show the end of a running job's stdout, stderr or output files.",
        epilog="By default only stdout is shown; a FILE may be any of the job's "
        "transfer_output_files. Exit status 1 when the job is not running or a file is refused.",
    )
    parser.add_argument("--pool", metavar="HOST[:PORT]", help="the collector to find the schedd")
    parser.add_argument("--name", metavar="NAME", help="the schedd's name (default: local)")
    parser.add_argument(
        "--maxbytes",
        metavar="N",
        default=str(DEFAULT_MAX_BYTES),
        help=f"bytes to show, shared by all files (default {DEFAULT_MAX_BYTES})",
    )
    parser.add_argument("-f", "--follow", action="store_true", help="keep showing new output")
    parser.add_argument("--stderr", action="store_true", help="the job's stderr instead of stdout")
    parser.add_argument("--no-stdout", action="store_true", help="not the job's stdout")
    parser.add_argument(
        "--auxfile",
        action="append",
        default=[],
        metavar="FILE",
        help="also one of the job's transfer_output_files (repeatable)",
    )
    parser.add_argument(
        "--auto-retry", action="store_true", help="wait for a job that is not running yet"
    )
    add_common_options(parser)
    parser.add_argument("job", metavar="JOB", help="CLUSTER.PROC (or CLUSTER: its proc 0)")
    parser.add_argument("files", nargs="*", metavar="FILE", help="files of the job's sandbox")
    return parser


def _max_bytes(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_PEEK_BYTES:
        raise InvalidArgument(
            f"maxbytes ({text}) is not valid: give a number of bytes from 0 to {MAX_PEEK_BYTES}"
        )
    return value


def _message(exc: PeekError, job: str) -> str:
    """``condor_tail``'s wording for each refusal."""
    if isinstance(exc, JobNotRunning):
        if exc.hold_reason:
            return f"{exc} (held: {exc.hold_reason})"
        return str(exc)
    if isinstance(exc, PeekRefused) and str(exc).startswith("Failed to receive transfer queue"):
        return str(exc)
    if isinstance(exc, (PeekFileError, PeekRefused)):
        return f"Failed to peek at file from starter: {exc}"
    return f"Failed to peek at job {job}: {exc}"


def run(args: argparse.Namespace, out: BinaryIO | None = None) -> int:
    """Show the files; 0 on success, 1 when the job cannot be peeked at."""
    sink = out or sys.stdout.buffer
    max_bytes = _max_bytes(str(args.maxbytes))
    stdout = not (args.stderr or args.no_stdout)
    files = [*args.files, *args.auxfile]
    schedd = Schedd(name=args.name, pool=args.pool, timeout=args.timeout)
    try:
        if args.follow:
            for piece in schedd.follow(
                args.job,
                stdout=stdout,
                stderr=args.stderr,
                files=files,
                max_bytes=max_bytes,
                wait=args.auto_retry,
            ):
                sink.write(piece.data)
                sink.flush()
            return EXIT_OK
        while True:
            try:
                result = schedd.peek(
                    args.job, stdout=stdout, stderr=args.stderr, files=files, max_bytes=max_bytes
                )
                break
            except JobNotRunning as exc:
                if not (args.auto_retry and exc.retry):
                    raise
                pause(FOLLOW_INTERVAL)
    except PeekError as exc:
        partial = getattr(exc, "result", None)
        if partial is not None:
            for peeked in partial.files:
                sink.write(peeked.data)
            sink.flush()
        sys.stderr.write(_message(exc, str(args.job)) + "\n")
        return EXIT_REFUSED
    for peeked in result.files:
        sink.write(peeked.data)
    sink.flush()
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (``cedar tail`` mounts :func:`build_parser` and :func:`run`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    debug = "--debug" in argv or "-debug" in argv
    return guarded("cedar tail", debug, lambda: run(parser.parse_args(condor_style(argv, parser))))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
