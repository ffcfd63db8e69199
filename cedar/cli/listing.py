"""The command lines of the listing tools (``cedar q``, ``cedar status``) as condor users type
them: one or two dashes, any unambiguous abbreviation down to each option's condor minimum
(``-const``, ``-l``, ``-af:jh``), options before or after positionals, ``-af`` taking every
following argument up to the next option, ``-format FMT EXPR`` repeatable, repeated
``-constraint`` options ANDed (:mod:`cedar.classad_wire.constraints`), repeated ``-af`` lists
concatenated.  argparse cannot express ``-af``'s greed or ``-af:h``, so this is a small table
scanner; what it produces is turned into output by :mod:`cedar.output`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from cedar.cli.common import (
    DEFAULT_TIMEOUT,
    EXIT_USAGE,
    UsageError,
    combined_constraint_tree,
    guarded,
)
from cedar.output import whole_writer, write_ads
from cedar.record import Record

if TYPE_CHECKING:  # imported where used: `--help` loads no ClassAd machinery
    from cedar.classad_wire.classad import ClassAd
    from cedar.classad_wire.expr import Expr
    from cedar.output.autoformat import AutoFormat
    from cedar.output.printf import Printf

__all__ = ["ListingArgs", "ListingTool", "Opt", "OutputRequest", "scan"]


class Opt(Record, frozen=True):
    """One option: its full name, the shortest abbreviation condor accepts, how many values
    it takes (``-1``: ``-af``'s "everything up to the next option"), and its help line."""

    __slots__ = ("name", "minimum", "values", "help", "metavar")
    name: str
    minimum: int
    values: int
    help: str
    metavar: str

    def __init__(
        self, name: str, minimum: int, values: int = 0, help: str = "", metavar: str = ""
    ) -> None:
        self._set(name, minimum, values, help, metavar)


class OutputRequest(Record):
    """What the user asked to see, independent of the tool."""

    __slots__ = ("af", "af_modifiers", "formats", "form", "attributes")

    def __init__(
        self,
        af: list[str] | None = None,
        af_modifiers: str = "",
        formats: list[tuple[str, str]] | None = None,
        form: str | None = None,  # "long", "json", "xml"
        attributes: list[str] | None = None,
    ) -> None:
        self.af = [] if af is None else af
        self.af_modifiers = af_modifiers
        self.formats = [] if formats is None else formats
        self.form = form
        self.attributes = attributes

    def custom(self) -> AutoFormat | Printf | None:
        """The compiled ``-af`` or ``-format`` request (``-af`` wins when both are given)."""
        if self.af:
            from cedar.output.autoformat import AutoFormat

            return AutoFormat(self.af, self.af_modifiers)
        if self.formats:
            from cedar.output.printf import Printf

            return Printf(self.formats)
        return None

    def projection(self, default: Sequence[str] | None) -> list[str] | None:
        """The attributes to ask for: ``-attributes``, else what ``-af``/``-format`` read,
        else ``default`` (``None``: whole ads)."""
        if self.attributes:
            return list(self.attributes)
        custom = self.custom()
        if custom is not None:
            return custom.projection() or None
        if self.form is not None:
            return None
        return None if default is None else list(default)

    def write(self, ads: Iterable[ClassAd], out: TextIO, spaced_xml: bool = False) -> bool:
        """Write ``ads`` as ``-af``/``-format``/``-long``/``-json``/``-xml`` asked (streaming);
        False when none was asked (a default table follows)."""
        custom = self.custom()
        if custom is not None:
            for line in custom.lines(ads):
                out.write(line)
            return True
        if self.form is not None:
            write_ads(ads, whole_writer(self.form, self.attributes, spaced_xml=spaced_xml), out)
            return True
        return False


class ListingArgs(Record):
    """The scanned command line."""

    __slots__ = ("output", "constraints", "positionals", "flags", "timeout", "debug", "help")

    def __init__(
        self,
        output: OutputRequest | None = None,
        constraints: list[str] | None = None,
        positionals: list[str] | None = None,
        flags: dict[str, Any] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        debug: bool = False,
        help: bool = False,
    ) -> None:
        self.output = OutputRequest() if output is None else output
        self.constraints = [] if constraints is None else constraints
        self.positionals = [] if positionals is None else positionals
        self.flags: dict[str, Any] = {} if flags is None else flags
        self.timeout = timeout
        self.debug = debug
        self.help = help

    def constraint(self) -> str | None:
        """Every ``-constraint`` ANDed (the one constraint rule); usage error if one is bad."""
        from cedar.classad_wire.unparse import unparse

        combined = self.constraint_tree()
        return None if combined is None else unparse(combined, old=True)

    def constraint_tree(self) -> Expr | None:
        """:meth:`constraint` as the tree the clients send as it is (each part parsed once)."""
        return combined_constraint_tree(self.constraints)


#: The options every listing tool has (the tools add their own).
COMMON_OPTIONS = (
    Opt("autoformat", 2, -1, "print these expressions' values, one ad per line", "EXPR ..."),
    Opt("af", 2, -1, "-af[:jlhVr,tng]: the same as -autoformat", "EXPR ..."),
    Opt("format", 2, 2, "printf-style FMT of EXPR (repeatable)", "FMT EXPR"),
    Opt("long", 1, 0, "whole ads, Name = value (-long:json, -long:xml)"),
    Opt("json", 2, 0, "whole ads as one JSON list"),
    Opt("xml", 2, 0, "whole ads in XML"),
    Opt("attributes", 2, 1, "only these attributes (A,B,...)", "A,B"),
    Opt("constraint", 4, 1, "only ads for which EXPR is true (repeatable: ANDed)", "EXPR"),
    Opt("limit", 3, 1, "at most N ads", "N"),
    Opt("pool", 1, 1, "the collector to ask (HOST[:PORT])", "HOST"),
    Opt(
        "timeout", 4, 1, f"limit for every network wait (default {DEFAULT_TIMEOUT:g} s)", "SECONDS"
    ),
    Opt("debug", 2, 0, "show the traceback of an error"),
    Opt("help", 1, 0, "print this and exit"),
)

_FORMS = {"": "long", "long": "long", "json": "json", "xml": "xml"}


def _match(word: str, options: Sequence[Opt]) -> Opt | None:
    exact = [opt for opt in options if opt.name == word]
    if exact:
        return exact[0]
    for opt in options:
        if len(word) >= opt.minimum and opt.name.startswith(word):
            return opt
    return None


def scan(
    argv: Sequence[str],
    options: Sequence[Opt],
    handle: Callable[[Opt, str, list[str], ListingArgs], None],
) -> ListingArgs:
    """Scan ``argv`` against ``COMMON_OPTIONS`` + ``options``; ``handle`` is called for each
    tool-specific option (with its modifier text after ``:`` and its values).

    Raises :class:`UsageError` for an unknown option or a missing value.
    """
    table = [*options, *COMMON_OPTIONS]
    args = ListingArgs()
    index = 0
    while index < len(argv):
        arg = argv[index]
        index += 1
        if arg == "--":
            args.positionals.extend(argv[index:])
            break
        if not arg.startswith("-") or arg == "-" or _is_number(arg):
            args.positionals.append(arg)
            continue
        word, _, modifier = arg.lstrip("-").partition(":")
        word, eq, inline = word.partition("=")
        opt = _match(word.lower(), table)
        if opt is None:
            raise UsageError(f"unknown option {arg}")
        values: list[str] = [inline] if eq else []
        if opt.values == -1:
            while index < len(argv) and (not argv[index].startswith("-") or argv[index] == "-"):
                values.append(argv[index])
                index += 1
            if not values:
                raise UsageError(f"{arg} needs at least one attribute or expression")
        else:
            while len(values) < opt.values:
                if index >= len(argv):
                    raise UsageError(f"{arg} needs {opt.values} value(s): {opt.metavar}")
                values.append(argv[index])
                index += 1
        _common(opt, modifier, values, args, handle)
    return args


def _is_number(arg: str) -> bool:
    return arg[1:].replace(".", "", 1).isdigit()


def _common(
    opt: Opt,
    modifier: str,
    values: list[str],
    args: ListingArgs,
    handle: Callable[[Opt, str, list[str], ListingArgs], None],
) -> None:
    out = args.output
    name = opt.name
    if name in ("af", "autoformat"):
        out.af.extend(values)
        out.af_modifiers += modifier
    elif name == "format":
        out.formats.append((values[0], values[1]))
    elif name == "long":
        if modifier.lower() not in _FORMS:
            raise UsageError(f"unknown -long form {modifier!r} (json, xml)")
        out.form = _FORMS[modifier.lower()]
    elif name in ("json", "xml"):
        out.form = name
    elif name == "attributes":
        out.attributes = [a for a in values[0].replace(",", " ").split() if a]
    elif name == "constraint":
        args.constraints.append(values[0])
    elif name == "limit":
        try:
            args.flags["limit"] = int(values[0])
        except ValueError:
            raise UsageError(f"-limit needs a number, not {values[0]!r}") from None
    elif name == "timeout":
        try:
            args.timeout = float(values[0])
        except ValueError:
            raise UsageError(f"-timeout needs seconds, not {values[0]!r}") from None
    elif name == "debug":
        args.debug = True
    elif name == "help":
        args.help = True
    elif name == "pool":
        args.flags["pool"] = values[0]
    else:
        handle(opt, modifier, values, args)


def usage(prog: str, synopsis: str, options: Sequence[Opt], missing: str) -> str:
    """The ``-help`` text: synopsis, every option, and the condor options cedar lacks."""
    lines = [
        f"usage: {prog} {synopsis}",
        "",
        "options (one or two dashes, condor's abbreviations):",
    ]
    for opt in [*options, *COMMON_OPTIONS]:
        head = f"  -{opt.name}" + (f" {opt.metavar}" if opt.metavar else "")
        lines.append(f"{head:<34} {opt.help}")
    lines += ["", f"not supported (condor options cedar lacks): {missing}"]
    return "\n".join(lines) + "\n"


class ListingTool(Record, frozen=True):
    """What sets one listing tool apart: its synopsis, own options, the condor options it
    lacks, its option handler and its runner.  :meth:`run_argv` is the command-line path every
    listing tool shares."""

    __slots__ = ("synopsis", "options", "missing", "handle", "run")
    synopsis: str
    options: Sequence[Opt]
    missing: str
    handle: Callable[[Opt, str, list[str], ListingArgs], None]
    run: Callable[[ListingArgs, TextIO, TextIO], int]

    def __init__(
        self,
        synopsis: str,
        options: Sequence[Opt],
        missing: str,
        handle: Callable[[Opt, str, list[str], ListingArgs], None],
        run: Callable[[ListingArgs, TextIO, TextIO], int],
    ) -> None:
        self._set(synopsis, options, missing, handle, run)

    def run_argv(self, argv: Sequence[str], out: TextIO, err: TextIO, prog: str) -> int:
        """Scan and run a command line, writing to ``out``/``err``; returns the exit code
        (errors as one line on ``err``, an unknown option with the usage)."""
        debug = any(arg in ("-debug", "--debug") for arg in argv)
        text = usage(prog, self.synopsis, self.options, self.missing)

        def action() -> int:
            try:
                args = scan(argv, self.options, self.handle)
            except UsageError as exc:
                err.write(f"{prog}: {exc}\n{text}")
                return EXIT_USAGE
            if args.help:
                out.write(text)
                return 0
            return self.run(args, out, err)

        return guarded(prog, debug, action, err)
