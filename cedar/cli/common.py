"""What every ``cedar`` subcommand shares: condor-style options, one default timeout, one
constraint check, exit codes, quiet interrupts and closed pipes, and progress on a terminal.

Exit codes (documented in the README):

====  =======================================================================
0     success
1     the pool answered "no": not authorized, no such job/daemon, a refused
      action or submit description, or (``hold``/``rm``/...) nothing matched
2     usage error: unknown option, malformed constraint, unreadable file
3     cannot reach the daemon: connection refused, timeout, lost connection
70    internal error (a bug: re-run with ``--debug`` and report the traceback)
130   interrupted (Ctrl-C)
141   standard output closed early (``cedar q | head``)
====  =======================================================================
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, TextIO, TypeVar

from cedar.errors import (
    CedarConnectionError,
    CedarError,
    ClassAdError,
    ConfigError,
    InvalidArgument,
    SecurityError,
)

if TYPE_CHECKING:
    from cedar.classad_wire.expr import Expr

#: The one default for every network wait of every subcommand (seconds; ``--timeout``): the
#: library's per-call deadline (``cedar.commands.DEFAULT_TIMEOUT``, not imported here: the CLI
#: starts without the protocol layers; ``tests/cli`` checks that they agree).
DEFAULT_TIMEOUT = 60.0

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
EXIT_PIPE = 141

#: condor-style single-dash spellings that are not simply ``-`` + a long option's name.
CONDOR_ALIASES = {
    "-l": "--long",
    "-const": "--constraint",
    "-autoformat": "--af",
    "-jsonl": "--json",
    "-attrs": "--attributes",
    "-statistics": "--statistics",
}

T = TypeVar("T")


class UsageError(InvalidArgument):
    """A bad command line (exit code 2)."""


def condor_style(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """Turn condor-style options (``-af``, ``-long``, ``-const``, ``-pool``...) into the long
    options ``parser`` knows; everything after ``--`` and every non-option is left alone.

    As condor's tools do, a single-dash option may be shortened to any unambiguous prefix
    (``-constr``, ``-reas``); an unknown one is left as it is, for the parser to refuse with
    the subcommand's usage.
    """
    known = [o for o in parser._option_string_actions if o.startswith("--")]  # no public API
    out: list[str] = []
    rest = False
    for arg in argv:
        if rest or arg == "--":
            rest = True
            out.append(arg)
            continue
        name, sep, value = arg.partition("=")
        if name in CONDOR_ALIASES and CONDOR_ALIASES[name] in known:
            out.append(CONDOR_ALIASES[name] + sep + value)
            continue
        if name.startswith("-") and not name.startswith("--") and len(name) > 2:
            lowered = name.lower()
            candidate = CONDOR_ALIASES.get(lowered, "-" + lowered)
            if candidate not in known:
                matches = [o for o in known if o.startswith(candidate)]
                candidate = matches[0] if len(matches) == 1 else candidate
            if candidate in known:
                out.append(candidate + sep + value)
                continue
        out.append(arg)
    return out


def parse_command_line(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """Parse a subcommand's arguments the condor way: single-dash spellings (see
    :func:`condor_style`), options before or after positionals; a bad command line prints
    *this parser's* usage and exits with :data:`EXIT_USAGE`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):  # intermixed parsing does not nest
            chosen: argparse.ArgumentParser | None = action.choices.get(argv[0]) if argv else None
            if chosen is None:
                return parser.parse_args(condor_style(argv, parser))
            # the parent's set_defaults() (argparse has no public accessor) and the choice
            namespace = argparse.Namespace(**getattr(parser, "_defaults", {}))
            setattr(namespace, action.dest, argv[0])
            return chosen.parse_intermixed_args(condor_style(argv[1:], chosen), namespace)
    return parser.parse_intermixed_args(condor_style(argv, parser))


def combined_constraint(parts: Sequence[str] | None) -> str | None:
    """Every ``-constraint`` given, ANDed (the one constraint rule,
    :mod:`cedar.classad_wire.constraints`), as text for the daemon; ``None`` for none.

    A malformed part is a :class:`UsageError` naming it."""
    from cedar.classad_wire.unparse import unparse

    combined = combined_constraint_tree(parts)
    return None if combined is None else unparse(combined, old=True)


def combined_constraint_tree(parts: Sequence[str | Expr | None] | None) -> Expr | None:
    """:func:`combined_constraint` as the tree the clients send as it is: each part is parsed
    once, here."""
    from cedar.classad_wire.constraints import and_constraints

    return and_constraints([parsed_constraint(part) for part in parts or ()])


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, as wide as :func:`terminal_columns` says: argparse asks
    ``shutil`` (~2 ms to import) while the parser is being built, not only for ``--help``."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = terminal_columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else standard output's terminal,
    else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """``--timeout`` and ``--debug``, on every subcommand."""
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"limit for every network wait (default {DEFAULT_TIMEOUT:g} s)",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an error (for bug reports)"
    )


def check_constraint(text: str | None) -> str | None:
    """The constraint unchanged, or :class:`UsageError` with the one message every subcommand
    gives for a malformed one."""
    parsed_constraint(text)
    return text


def parsed_constraint(text: str | Expr | None) -> Expr | None:
    """The constraint parsed by the one rule (``None`` for none), or :class:`UsageError` with
    the one message every subcommand gives for a malformed one.  Hand the tree on to the
    clients: they send it without parsing it again (a tree given here passes unchanged)."""
    from cedar.classad_wire.constraints import parse_constraint

    try:
        return parse_constraint(text)
    except ClassAdError as exc:  # "invalid constraint 'X': why"
        raise UsageError(
            f"{exc}; write a ClassAd expression such as 'Owner == \"alice\" && JobStatus == 1'"
        ) from None


def exit_code(exc: BaseException) -> int:
    """The documented exit code of an error."""
    if isinstance(exc, CedarConnectionError):  # including NotCedarPeer
        return EXIT_UNREACHABLE
    if isinstance(exc, InvalidArgument):
        from cedar.submit_language.errors import SubmitError  # here: the CLI starts without it

        if isinstance(exc, SubmitError):  # a refused submit description, as condor_submit
            return EXIT_REFUSED
    if isinstance(exc, (InvalidArgument, ClassAdError, ConfigError)):
        return EXIT_USAGE
    if isinstance(exc, (SecurityError, CedarError)):
        return EXIT_REFUSED
    if isinstance(exc, (ValueError, OSError)):
        return EXIT_USAGE
    return EXIT_INTERNAL


def _lines(text: str) -> str:
    """A message as the daemon wrote it (a schedd's refusal may have several lines), without
    blank or trailing space."""
    return "\n".join(line.rstrip() for line in str(text).strip().splitlines() if line.strip())


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def guarded(prog: str, debug: bool, action: Callable[[], int], err: TextIO | None = None) -> int:
    """Run ``action`` the way a user should see it: errors as one line on stderr with the
    documented exit code, Ctrl-C and a closed stdout quietly, tracebacks only with ``--debug``."""
    err = err or sys.stderr
    try:
        return action()
    except KeyboardInterrupt:
        if debug:
            import traceback

            traceback.print_exc()
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_PIPE
    except SystemExit:
        raise
    except Exception as raised:  # noqa: BLE001 - the one place errors meet the user
        if debug:
            import traceback

            traceback.print_exc()
        exc = _sole_cause(raised)
        if _interrupted(exc):
            return EXIT_INTERRUPTED
        code = exit_code(exc)
        if code == EXIT_INTERNAL:
            err.write(
                f"{prog}: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
                "(re-run with --debug and report the traceback)\n"
            )
        elif isinstance(exc, OSError) and not isinstance(exc, CedarError):
            name = f" {exc.filename}" if exc.filename else ""
            err.write(f"{prog}: cannot read{name}: {exc.strerror or exc}\n")
        else:
            err.write(f"{prog}: {_lines(str(exc))}\n")
        return code


def _sole_cause(exc: Exception) -> Exception:
    """The one error inside task groups that each hold one (a Trio nursery wraps what its task
    raised): the user meets that error, not the group."""
    while True:
        inner = getattr(exc, "exceptions", None)
        if not isinstance(inner, tuple) or len(inner) != 1 or not isinstance(inner[0], Exception):
            return exc
        exc = inner[0]


def _interrupted(exc: BaseException) -> bool:
    """Whether Ctrl-C is what went wrong: Python wraps a KeyboardInterrupt raised while a class
    is being made (``__set_name__``, as a lazy import may be doing) in a RuntimeError."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush stays quiet."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


class Progress:
    """ "N ads received" on stderr, only when stderr is a terminal and the operation has taken
    longer than a second (``CEDAR_PROGRESS_AFTER`` changes the delay)."""

    def __init__(self, what: str, err: TextIO | None = None) -> None:
        self.what = what
        self.err = err or sys.stderr
        self.count = 0
        self.start = time.monotonic()
        self.delay = float(os.environ.get("CEDAR_PROGRESS_AFTER", "1"))
        self.shown = False
        self.last = 0.0
        try:
            self.enabled = self.err.isatty()
        except (AttributeError, ValueError):
            self.enabled = False

    def track(self, items: Iterable[T]) -> Iterator[T]:
        """Pass ``items`` through, counting them (only when the count can be shown)."""
        if not self.enabled:
            yield from items
            self.done()
            return
        for item in items:
            self.count += 1
            if self.enabled:
                self._tick()
            yield item
        self.done()

    def _tick(self) -> None:
        now = time.monotonic()
        if now - self.start < self.delay or now - self.last < 0.1:
            return
        self.last = now
        self.shown = True
        self.err.write(f"\r{self.count} {self.what} received...")
        self.err.flush()

    @contextlib.contextmanager
    def working(self) -> Iterator[None]:
        """For one long call with nothing to count (a submit): "<what>... Ns" while it runs."""
        if not self.enabled:
            yield
            return
        import threading  # only for this ticker (start-up)

        finished = threading.Event()

        def tick() -> None:
            while True:
                elapsed = time.monotonic() - self.start
                if elapsed >= self.delay:
                    self.shown = True
                    self.err.write(f"\r{self.what}... {elapsed:.0f}s")
                    self.err.flush()
                if finished.wait(0.2):
                    return

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            finished.set()
            ticker.join()
            self.done()

    def done(self) -> None:
        """Erase the progress line."""
        if self.shown:
            self.err.write("\r\x1b[K")
            self.err.flush()
            self.shown = False
