"""``cedar status`` (also ``cedar query``): the collector's ads as condor_status 25 prints them.

Slots by default; ``-schedd``, ``-master``, ``-collector``, ``-negotiator``, ``-submitters``,
``-startd`` (the StartD daemon ads of 25.x), ``-any``, ... choose the ad type (a bare type word
such as ``schedd`` as the first argument is cedar's older spelling and still works);
``-avail``/``-claimed`` restrict slots; ``-total`` prints the Total footer alone; NAME arguments
select ``Name == NAME || Machine == NAME`` (a NAME without ``@`` is a host name and must
resolve, as condor_status).  Every output sorts ads by ``Machine`` then ``Name`` (natural
order), as condor_status does; ``-sort no`` keeps the collector's order and streams.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from cedar.cli.common import EXIT_REFUSED, Progress, UsageError
from cedar.cli.listing import ListingArgs, ListingTool, Opt
from cedar.errors import CommandError, InvalidArgument
from cedar.numbers import AdType
from cedar.output import STATUS_TABLES, status_sort_key

if TYPE_CHECKING:
    from cedar.classad_wire.classad import ClassAd
    from cedar.commands import Collector

__all__ = ["STATUS_OPTIONS", "main", "run"]

PROG = "cedar status"

#: Type options: option name -> (ad type, default table).
TYPES: dict[str, tuple[AdType, str | None]] = {
    "slot": (AdType.SLOT, "slots"),
    "schedd": (AdType.SCHEDD, "schedd"),
    "master": (AdType.MASTER, "master"),
    "collector": (AdType.COLLECTOR, "collector"),
    "negotiator": (AdType.NEGOTIATOR, "negotiator"),
    "submitters": (AdType.SUBMITTER, "submitters"),
    "startd": (AdType.START_DAEMON, "startd"),
    "any": (AdType.ANY, "any"),
    "generic": (AdType.GENERIC, "any"),
    "defrag": (AdType.DEFRAG, "any"),
    "license": (AdType.LICENSE, "any"),
    "storage": (AdType.STORAGE, "any"),
    "grid": (AdType.GRID, "any"),
    "accounting": (AdType.ACCOUNTING, "any"),
}

STATUS_OPTIONS: list[Opt] = [
    *(Opt(name, 2 if name != "submitters" else 3, 0, f"{name} ads") for name in TYPES),
    Opt("subsystem", 3, 1, "ads of this type (slot, schedd, ... or a generic MyType)", "TYPE"),
    Opt("avail", 2, 0, "unclaimed slots that can run a job"),
    Opt("claimed", 2, 0, "claimed slots, with their user"),
    Opt("total", 3, 0, "only the Total footer"),
    Opt("state", 4, 0, "slots with their state and activity times"),
    Opt("server", 3, 0, "slots with memory, disk, MIPS and KFLOPS"),
    Opt("run", 2, 0, "schedds running jobs"),
    Opt("compact", 3, 0, "(not supported: prints the slot table)"),
    Opt("sort", 3, 1, "'no': keep the collector's order (and stream)", "no"),
    Opt("natural", 3, 0, "natural sort order (the default)"),
    Opt("wide", 2, 0, "do not truncate (cedar never truncates)"),
    Opt("target-type", 3, 1, "TargetType to send (generic ads)", "NAME"),
    Opt("direct", 3, 1, "ask this daemon (a sinful, or a name to locate) for its ads", "NAME"),
]

MISSING = (
    "-absent, -annex-name, -annex-slots, -ckptsrvr, -cod, -data, -diagnose, -java, "
    "-vm, -ads, -gpus, -broken, -healthy, -statistics, -target, "
    "-compact's own table, -claimed's footer, -sort EXPR (only 'no'), "
    "-merge, -print-format, -aaf, -af:T/:Y (accepted, ignored), -expert, -version"
)


def _handle(opt: Opt, modifier: str, values: list[str], args: ListingArgs) -> None:
    name = opt.name
    if name in TYPES:
        args.flags["type"] = name
    elif name == "subsystem":
        args.flags["subsystem"] = values[0]
    elif name in ("avail", "claimed", "total", "compact", "natural", "wide"):
        args.flags[name] = True
    elif name in ("state", "server", "run"):
        args.flags["view"] = name
    elif name in ("sort", "target-type", "direct"):
        args.flags[name] = values[0]


def _name_constraint(name: str) -> str:
    """``Name == N || Machine == N``; a short host name (no ``@``, no ``.``) must resolve,
    and is replaced by its full name (as condor_status)."""
    if "@" not in name and "." not in name:
        try:
            info = socket.getaddrinfo(name, None, flags=socket.AI_CANONNAME)
        except (OSError, UnicodeError):
            raise LookupError(f"unknown host {name}") from None
        name = (info[0][3] if info and info[0][3] else name) if info else name
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'(Name == "{quoted}" || Machine == "{quoted}")'


def run(args: ListingArgs, out: TextIO, err: TextIO) -> int:
    """Run a scanned ``cedar status``."""
    from cedar.commands import Collector

    flags = args.flags
    positionals = list(args.positionals)
    type_name = flags.get("type")
    subsystem = flags.get("subsystem")
    if type_name is None and subsystem is None and positionals:
        # cedar's older spelling: a type word first (``cedar status schedd``)
        try:
            AdType.from_name(positionals[0])
        except (ValueError, KeyError):
            pass
        else:
            subsystem = positionals.pop(0)
    table_name: str | None = "slots"
    if subsystem is not None:
        try:
            ad_type = AdType.from_name(subsystem)
        except (ValueError, KeyError):
            raise UsageError(f"unknown ad type {subsystem!r}") from None
        table_name = _table_for(ad_type)
    elif type_name is not None:
        ad_type, table_name = TYPES[type_name]
    else:
        ad_type = AdType.SLOT
    view = flags.get("view")
    if view == "run" and type_name in (None, "schedd") and subsystem is None:
        ad_type, table_name = AdType.SCHEDD, "run"
    elif view in ("state", "server") and table_name == "slots":
        table_name = view
    if flags.get("avail") and table_name == "slots":
        table_name = "avail"
    if flags.get("claimed") and table_name == "slots":
        table_name = "claimed"
    table = STATUS_TABLES.get(table_name) if table_name else None
    names = []
    for name in positionals:
        try:
            names.append(_name_constraint(name))
        except LookupError as exc:
            err.write(f"{PROG}: {exc}\n")
            return EXIT_REFUSED
    parts = list(args.constraints)
    if names:
        parts.append(" || ".join(names))
    if table is not None and table.constraint:  # the views that select (-avail, -run, ...)
        parts.append(table.constraint)
    args.constraints = parts
    constraint = args.constraint_tree()  # parsed once; the client sends the tree
    request = args.output
    try:
        request.custom()
    except InvalidArgument as exc:
        # condor_status stops before its query with status 1 and nothing on stdout (observed:
        # ``-af Name Cpus slot2@HOST`` takes the name for a third expression)
        err.write(f"{PROG}: {exc}\n")
        return EXIT_REFUSED
    totals_only = bool(flags.get("total"))
    default = None
    if table is not None:
        default = table.projection if not totals_only else _total_projection(table_name)
    projection = request.projection(default)
    if projection is not None and request.custom() is not None:
        projection = sorted({*projection, "Machine", "Name"}, key=str.lower)  # the sort keys
    collector = Collector(flags.get("pool"), timeout=args.timeout)
    direct = flags.get("direct")
    if direct is not None:  # the daemon itself answers (through CCB when it is behind one)
        try:
            address = _direct_address(collector, str(direct), ad_type)
        except LookupError as exc:
            err.write(f"Error: {exc}\n")
            return EXIT_REFUSED
        collector = Collector(address, timeout=args.timeout)
    stream = collector.query_iter(
        ad_type,
        constraint,
        projection,
        flags.get("limit"),
        target_type=flags.get("target-type"),
    )
    ads: Iterable[ClassAd] = Progress("ads", err).track(stream)
    table_only = request.form is None and not request.af and not request.formats
    sorting = str(flags.get("sort", "")).lower() != "no"
    custom = request.custom()
    if sorting and custom is not None and not getattr(custom, "headings", False):
        # -af/-format: each ad's line made as it arrives, only the lines kept and sorted
        lines = [(status_sort_key(ad), custom.line(ad)) for ad in ads]
        lines.sort(key=_first)
        out.writelines([line for _, line in lines])
        return 0
    # a default table sorts its own rows (whatever -sort says), -total needs no order at all
    if not table_only and sorting:
        ads = sorted(ads, key=status_sort_key)
    if request.write(ads, out, spaced_xml=True):
        return 0
    if table is None:  # a type without a table of ours: condor's generic columns
        table = STATUS_TABLES["any"]
    out.write(table.render(ads, totals_only=totals_only))
    return 0


#: The daemon ``-direct NAME`` locates for each ad type (the others: a generic daemon).
_DIRECT_DAEMONS = {
    AdType.SLOT: "STARTD",
    AdType.STARTD: "STARTD",
    AdType.START_DAEMON: "STARTD",
    AdType.SCHEDD: "SCHEDD",
    AdType.SUBMITTER: "SCHEDD",
    AdType.MASTER: "MASTER",
    AdType.COLLECTOR: "COLLECTOR",
    AdType.NEGOTIATOR: "NEGOTIATOR",
}


def _direct_address(collector: Collector, target: str, ad_type: AdType) -> str:
    """``-direct``'s daemon: a sinful as given, else located by name through the collector
    (condor_status's "Failed to locate startd NAME" when it is not there)."""
    if target.startswith("<"):
        return target
    daemon = _DIRECT_DAEMONS.get(ad_type, "GENERIC")
    try:
        return collector.locate(daemon, target).address
    except CommandError:
        raise LookupError(f"Failed to locate {daemon.lower()} {target}") from None


def _first(item: tuple[Any, ...]) -> Any:
    return item[0]


def _table_for(ad_type: AdType) -> str:
    for name, (kind, table) in TYPES.items():
        if kind is ad_type and table is not None:
            return table if name != "slot" else "slots"
    return "slots" if ad_type is AdType.STARTD else "any"


def _total_projection(table_name: str | None) -> list[str] | None:
    table = STATUS_TABLES.get(table_name or "")
    if table is None:
        return None
    if table_name in ("slots", "avail"):
        return ["Arch", "Machine", "Name", "OCU", "OpSys", "State", "Activity"]
    return list(table.projection)


def main(argv: Sequence[str] | None = None, prog: str = PROG, out: TextIO | None = None) -> int:
    """Entry point (``cedar status ...``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_argv(argv, out or sys.stdout, sys.stderr, prog)


#: ``cedar status``'s command line (scanned and run by the listing tools' one path).
TOOL = ListingTool("[OPTIONS] [NAME ...] [OPTIONS]", STATUS_OPTIONS, MISSING, _handle, run)


def run_argv(argv: Sequence[str], out: TextIO, err: TextIO, prog: str = PROG) -> int:
    """Scan and run a command line, writing to ``out``/``err``; returns the exit code
    (errors as one line on ``err``, an unknown option with the usage)."""
    return TOOL.run_argv(argv, out, err, prog)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
