"""The command-line path every listing tool shares (``ListingTool.run_argv``), on a toy tool:
its own options reach its handler, ``-help`` and usage errors are answered before it runs, and
its errors meet the user as one line with the documented exit code."""

from __future__ import annotations

import io
from typing import TextIO

from cedar.cli.common import EXIT_UNREACHABLE, EXIT_USAGE
from cedar.cli.listing import ListingArgs, ListingTool, Opt
from cedar.errors import CedarConnectionError

SEEN: list[tuple[str, str, list[str]]] = []


def _handle(opt: Opt, modifier: str, values: list[str], args: ListingArgs) -> None:
    SEEN.append((opt.name, modifier, values))


def _run(args: ListingArgs, out: TextIO, err: TextIO) -> int:
    if args.positionals == ["down"]:
        raise CedarConnectionError("nobody home")
    out.write(f"ran {args.positionals} {args.constraints}\n")
    return 5


TOY = ListingTool("[THING ...]", (Opt("shout", 2, 1, "say it", "WORD"),), "-quiet", _handle, _run)


def _call(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = TOY.run_argv(list(argv), out, err, "toy")
    return status, out.getvalue(), err.getvalue()


def test_own_and_common_options_then_run() -> None:
    SEEN.clear()
    status, out, err = _call("a", "-sh:x", "loud", "-const", "X == 1", "b")
    assert (status, out, err) == (5, "ran ['a', 'b'] ['X == 1']\n", "")
    assert SEEN == [("shout", "x", ["loud"])]


def test_help_and_usage_errors_do_not_run() -> None:
    status, out, err = _call("-help", "down")
    assert status == 0 and err == ""
    assert out.startswith("usage: toy [THING ...]\n") and "-shout WORD" in out
    assert out.rstrip().endswith("not supported (condor options cedar lacks): -quiet")
    status, out, err = _call("-nosuch", "down")
    assert status == EXIT_USAGE and out == ""
    assert err.startswith("toy: unknown option -nosuch\nusage: toy [THING ...]\n")


def test_errors_are_one_line_with_their_exit_code() -> None:
    status, out, err = _call("down")
    assert (status, out) == (EXIT_UNREACHABLE, "")
    assert err == "toy: nobody home\n"
