"""``cedar-query``: ask a pool's collector for ads, printed the way ``condor_status`` prints them.

The default tables for slots and submitters reproduce ``condor_status`` 25.x byte for byte
(the captures' ``.out`` files are the reference); ``--af`` is ``condor_status -af``, ``--long``
the old ClassAd text form, ``--json`` one JSON list.  Also mounted as ``cedar query``.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from cedar.classad_wire import ClassAd, Error, Expr, Undefined, evaluate, parse_expr, unparse
from cedar.classad_wire.expr import AttrRef, fold
from cedar.classad_wire.wire import references
from cedar.cli.common import (
    EXIT_USAGE,
    Progress,
    add_common_options,
    check_constraint,
    condor_style,
    exit_code,
    guarded,
)
from cedar.commands import Collector
from cedar.errors import CedarError
from cedar.numbers import AdType

# -- value formatting ---------------------------------------------------------------------------


def format_value(value: Any) -> str:
    """One ``-af`` value: strings bare, ``undefined``/``error``, everything else in wire syntax."""
    if isinstance(value, str):
        return value
    if value is Undefined:
        return "undefined"
    if value is Error:
        return "error"
    return unparse(value, old=True)


def autoformat(ads: Iterable[ClassAd], expressions: Sequence[str]) -> Iterable[str]:
    """``condor_status -af``: each expression evaluated in each ad, space-separated, one line/ad."""
    parsed = [parse_expr(text, old=True) for text in expressions]
    for ad in ads:
        yield " ".join(format_value(_safe_eval(expr, ad)) for expr in parsed)


def _safe_eval(expr: Expr, ad: ClassAd) -> Any:
    try:
        if isinstance(expr, AttrRef) and not expr.absolute:
            return ad.eval(expr.name)  # a literal attribute skips the evaluator
        return evaluate(expr, ad)
    except CedarError:
        return Error


def af_projection(expressions: Sequence[str]) -> list[str]:
    """The attributes ``-af`` expressions need from the collector, sorted as condor_status does."""
    names: dict[str, str] = {}
    for text in expressions:
        for name in references(parse_expr(text, old=True)):
            names.setdefault(name, name)
        if fold(text.strip()) in names:  # a bare attribute keeps the user's spelling
            names[fold(text.strip())] = text.strip()
    return sorted(names.values(), key=fold)


def long_form(ad: ClassAd) -> str:
    """``condor_status -long``: ``Name = value`` lines sorted case-insensitively, then a blank."""
    names = sorted(ad, key=lambda n: fold(n))
    return "".join(f"{name} = {ad.raw_text(name)}\n" for name in names) + "\n"


def status_order(ads: Iterable[ClassAd]) -> list[ClassAd]:
    """condor_status's output order: by ``Machine``, then ``Name`` (stable, so ties keep the
    collector's order).  Observed in the captures for tables, ``-af`` and ``-long`` alike; runs
    of digits compare as numbers (``slot9`` before ``slot10``: observed against 25.13.2 with
    100 000 slots)."""
    return sorted(ads, key=lambda ad: (_natural(_text(ad, "Machine")), _natural(_text(ad, "Name"))))


_DIGITS = re.compile(r"\d+")


def _natural(text: str) -> str:
    """A sort key in which runs of digits compare by value (zero-padded), the rest as text."""
    return _DIGITS.sub(_pad_digits, text)


def _pad_digits(match: re.Match[str]) -> str:
    return match.group().zfill(24)


def json_list(ads: Iterable[ClassAd]) -> str:
    """One JSON list of ads, each in HTCondor's JSON form."""
    return "[\n" + ",\n".join(ad.to_json() for ad in ads) + "\n]\n"


# -- condor_status tables -----------------------------------------------------------------------


def _get(ad: ClassAd, name: str, default: Any = None) -> Any:
    try:
        value = ad.eval(name)
    except CedarError:
        return default
    return default if value is Undefined or value is Error else value


def _text(ad: ClassAd, name: str) -> str:
    value = _get(ad, name)
    return "" if value is None else format_value(value)


def _duration(seconds: int) -> str:
    """``D+HH:MM:SS`` as condor_status prints activity times."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days}+{hours:02d}:{minutes:02d}:{secs:02d}"


SLOT_PROJECTION = [
    "Activity",
    "Arch",
    "CondorLoadAvg",
    "EnteredCurrentActivity",
    "LastHeardFrom",
    "Machine",
    "Memory",
    "MyCurrentTime",
    "Name",
    "OCU",
    "OpSys",
    "State",
]
SUBMITTER_PROJECTION = ["HeldJobs", "IdleJobs", "Machine", "Name", "OCU", "RunningJobs"]

_SLOT_STATES = ("Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drained", "Backfill")


def slot_table(ads: Sequence[ClassAd]) -> str:
    """``condor_status`` (slots): the slot list, then the per-platform state summary."""
    ads = status_order(ads)
    width = max([34, *(len(_text(a, "Name")) for a in ads)])
    lines = [
        f"{'Name':<{width}} {'OpSys':<10} {'Arch':<8} {'State':<9} {'Activity':<8} "
        f"{'LoadAv':>6} {'Mem':<6} {'ActvtyTime':>11}",
        "",
    ]
    for ad in ads:
        load = _get(ad, "CondorLoadAvg")
        memory = _get(ad, "Memory")
        now = _get(ad, "MyCurrentTime") or _get(ad, "LastHeardFrom") or int(time.time())
        entered = _get(ad, "EnteredCurrentActivity")
        active = _duration(now - entered) if isinstance(entered, int) else "[Unknown]"
        lines.append(
            f"{_text(ad, 'Name'):<{width}} {_text(ad, 'OpSys'):<10} {_text(ad, 'Arch'):<8} "
            f"{_text(ad, 'State'):<9} {_text(ad, 'Activity'):<8} "
            f"{(f'{load:.3f}' if isinstance(load, (int, float)) else '?'):>6} "
            f"{(str(memory) if isinstance(memory, int) else '?'):>6} {active:>11}"
        )
    rows: dict[str, list[int]] = {}
    for ad in ads:
        label = f"{_text(ad, 'Arch')}/{_text(ad, 'OpSys')}"
        counts = rows.setdefault(label, [0] * 9)
        _count_slot(counts, ad)
    total = [sum(column) for column in zip(*rows.values(), strict=True)] if rows else [0] * 9
    label_width = max([14, *(len(label) + 2 for label in rows)])
    columns = ("Total", "Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drain",
               "Backfill", "BkIdle")  # fmt: skip
    widths = (5, 5, 7, 9, 7, 10, 6, 8, 6)

    def summary(label: str, values: Sequence[Any]) -> str:
        cells = " ".join(f"{v:>{w}}" for v, w in zip(values, widths, strict=True))
        return f"{label:>{label_width}} {cells}"

    lines += ["", summary("", columns), ""]
    lines += [summary(label, counts) for label, counts in sorted(rows.items())]
    lines += ["", summary("Total", total)]
    return "\n".join(lines) + "\n"


def _count_slot(counts: list[int], ad: ClassAd) -> None:
    counts[0] += 1
    state = _text(ad, "State")
    if state in _SLOT_STATES:
        counts[1 + _SLOT_STATES.index(state)] += 1
        if state == "Backfill" and _text(ad, "Activity") == "Idle":
            counts[8] += 1


def submitter_table(ads: Sequence[ClassAd]) -> str:
    """``condor_status -submitters``: per submitter, then totals per user and overall."""
    ads = status_order(ads)
    width = max([4, *(len(_text(a, "Name")) for a in ads)])
    counts = ("RunningJobs", "IdleJobs", "HeldJobs")
    lines = [f"{'Name':<{width}} {'Machine':<12} {'RunningJobs':>11} {'IdleJobs':>10} "
             f"{'HeldJobs':>10}", ""]  # fmt: skip
    per_user: dict[str, list[int]] = {}
    for ad in ads:
        values = [_get(ad, name, 0) for name in counts]
        values = [v if isinstance(v, int) else 0 for v in values]
        lines.append(
            f"{_text(ad, 'Name'):<{width}} {_text(ad, 'Machine'):<12} {values[0]:>11} "
            f"{values[1]:>10} {values[2]:>10}"
        )
        user = per_user.setdefault(_text(ad, "Name"), [0, 0, 0])
        for index, value in enumerate(values):
            user[index] += value
    total = (
        [sum(column) for column in zip(*per_user.values(), strict=False)] if per_user else [0, 0, 0]
    )
    lines += ["", f"{'':<{width}}{'RunningJobs':>11} {'IdleJobs':>10} {'HeldJobs':>10}", ""]
    for name, values in per_user.items():
        lines.append(f"{name:<{width}}{values[0]:>11} {values[1]:>10} {values[2]:>10}")
    lines += ["", f"{'Total':>{width}}{total[0]:>11} {total[1]:>10} {total[2]:>10}"]
    return "\n".join(lines) + "\n"


def _row(cells: Sequence[str], widths: Sequence[int]) -> str:
    return " ".join(f"{c:<{w}}" for c, w in zip(cells, widths, strict=True)).rstrip()


def _columns_table(columns: Sequence[tuple[str, str]]) -> Callable[[Sequence[ClassAd]], str]:
    """A plain left-aligned table of (header, attribute) columns, widths from the data."""

    def render(ads: Sequence[ClassAd]) -> str:
        rows = [[_text(ad, attr) for _h, attr in columns] for ad in status_order(ads)]
        widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, (h, _a) in enumerate(columns)]
        out = [
            " ".join(f"{h:<{w}}" for (h, _a), w in zip(columns, widths, strict=False)).rstrip(),
            "",
        ]
        out += [
            " ".join(f"{c:<{w}}" for c, w in zip(r, widths, strict=False)).rstrip() for r in rows
        ]
        return "\n".join(out) + "\n"

    return render


_SCHEDD_COLUMNS = (("Name", "Name"), ("Machine", "Machine"), ("RunningJobs", "TotalRunningJobs"),
                   ("IdleJobs", "TotalIdleJobs"), ("HeldJobs", "TotalHeldJobs"))  # fmt: skip
_DAEMON_COLUMNS = (("Name", "Name"), ("Machine", "Machine"), ("Version", "CondorVersion"))
_ANY_COLUMNS = (("MyType", "MyType"), ("TargetType", "TargetType"), ("Name", "Name"))


def default_format(ad_type: AdType) -> tuple[list[str] | None, Callable[[Sequence[ClassAd]], str]]:
    """The projection and renderer of the default (no ``--af/--long/--json``) output."""
    if ad_type in (AdType.STARTD, AdType.SLOT):
        return list(SLOT_PROJECTION), slot_table
    if ad_type is AdType.SUBMITTER:
        return list(SUBMITTER_PROJECTION), submitter_table
    columns: Sequence[tuple[str, str]]
    if ad_type is AdType.SCHEDD:
        columns = _SCHEDD_COLUMNS
    elif ad_type is AdType.ANY:
        columns = _ANY_COLUMNS
    else:
        columns = _DAEMON_COLUMNS
    return sorted({a for _h, a in columns}, key=fold), _columns_table(columns)


# -- command line -------------------------------------------------------------------------------


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The ``cedar-query`` arguments (pass a sub-parser to mount it as ``cedar query``)."""
    if parser is None:
        parser = argparse.ArgumentParser(
            prog="cedar-query", description="Query an HTCondor collector for ads."
        )
    parser.add_argument(
        "type",
        metavar="TYPE",
        help="ad type: slots, startd, schedd, master, submitters, negotiator, collector, "
        "accounting, generic, credd, defrag, any, ... (a generic MyType with --target-type)",
    )
    parser.add_argument("--pool", metavar="HOST[:PORT]", help="collector(s), comma-separated")
    parser.add_argument("--constraint", metavar="EXPR", help="only ads for which EXPR is true")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--af", nargs="+", metavar="ATTR", help="print these values, one ad/line")
    output.add_argument("--long", action="store_true", help="print whole ads, Name = value")
    output.add_argument("--json", action="store_true", help="print one JSON list of ads")
    parser.add_argument("--attributes", metavar="A,B", help="only fetch these attributes")
    parser.add_argument("--limit", type=int, metavar="N", help="at most N ads")
    parser.add_argument("--target-type", metavar="NAME", help="TargetType to send (generic ads)")
    add_common_options(parser)
    return parser


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run a parsed ``cedar-query``; 0 on success, else the exit code of
    :mod:`cedar.cli.common` with a one-line message on stderr."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        check_constraint(args.constraint)
        ad_type = AdType.from_name(args.type)
        projection: list[str] | None = None
        if args.attributes:
            projection = [a for a in args.attributes.replace(",", " ").split() if a]
        render: Callable[[Sequence[ClassAd]], str] | None = None
        if args.af:
            projection = projection or af_projection([*args.af, "Machine", "Name"])
        elif not (args.long or args.json):
            default_projection, render = default_format(ad_type)
            projection = projection or default_projection
        collector = Collector(args.pool, timeout=args.timeout)
        ads = status_order(
            Progress("ads", err).track(
                collector.query_iter(
                    ad_type, args.constraint, projection, args.limit, target_type=args.target_type
                )
            )
        )
        if args.af:
            for line in autoformat(ads, args.af):
                out.write(line + "\n")
        elif args.long:
            for ad in ads:
                out.write(long_form(ad))
        elif args.json:
            out.write(json_list(ads))
        else:
            assert render is not None
            if ads:
                out.write(render(ads))
    except (CedarError, ValueError) as exc:
        err.write(f"{getattr(args, 'prog', 'cedar-query')}: {exc}\n")
        return exit_code(exc) if isinstance(exc, CedarError) else EXIT_USAGE
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point (``cedar-query``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    debug = "--debug" in argv or "-debug" in argv
    return guarded("cedar-query", debug, lambda: run(parser.parse_args(condor_style(argv, parser))))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
