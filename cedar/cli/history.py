"""``cedar history``: condor_history's options, sources and output (spec 08 §2-§5).

Sources: the schedd's job history (default), ``-epochs`` (one record per run),
``-transfer-history[:IOC]`` (URL-plugin transfer records), ``-startd`` (the startd's own
history; ``-name`` picks the startd), ``-daemon[:SUBSYS]`` and ``-file FILE`` (a history file
read here, no daemon).  Restrictions: job ids and owners (ORed), ``-constraint`` (repeated:
ANDed), ``-since``, ``-completedsince``, ``-scanlimit``.  Output: condor_history's default
table, ``-long``, ``-json``, ``-jsonl``, ``-xml``, ``-attributes``, ``-af[:mods]``, ``-format``
(through :mod:`cedar.output`).  Options are condor-style (single dash, unique prefixes
accepted) and may come before or after the positionals; ``--long`` spellings work too.

The parser is hand-written because condor_history's grammar is not argparse's: ``-af`` takes
every argument up to the next option, ``-format`` takes two, modifiers follow a colon.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, TextIO

from cedar.classad_wire import ClassAd
from cedar.classad_wire.constraints import and_constraints
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.jsonfmt import ad_to_json_sorted
from cedar.classad_wire.values import UndefinedType
from cedar.cli.common import DEFAULT_TIMEOUT, Progress, UsageError, guarded, parsed_constraint
from cedar.commands.history import history_request, iter_selected, read_history_file
from cedar.commands.schedd import parse_job_spec
from cedar.errors import ClassAdError, CommandError
from cedar.output import (
    AutoFormat,
    JsonWriter,
    Printf,
    XmlWriter,
    whole_writer,
    write_ads,
    write_lines,
)
from cedar.output.dates import short_date
from cedar.output.memo import Memo

__all__ = ["HistoryOptions", "build_parser", "main", "parse_options", "run"]

#: What the default table reads, sorted as condor_history sends it (spec 08 §3.2).
DEFAULT_PROJECTION = (
    "Args,Arguments,ClusterId,Cmd,CompletionDate,JobDescription,JobId,JobStatus,"
    "LastSuspensionTime,MATCH_EXP_JobDescription,NiceUser,Owner,ProcId,QDate,RemoteUserCpu,"
    "RemoteWallClockTime,TransferQueued,TransferringInput,TransferringOutput"
)
HEADING = " ID          OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD"
#: condor_history's ST column (observed with -file records of every JobStatus; 6 is " >").
STATUS = {1: "I", 2: "R", 3: "X", 4: "C", 5: "H", 6: " >", 7: "S", 8: "F", 9: "B"}
#: ``-daemon``'s table: (heading, attribute, printf width/precision), observed by giving every
#: attribute of a recorded schedd daemon-history record a distinct value (``-file``).
DAEMON_COLUMNS = (
    ("DUTY_CYCLE", "RecentDaemonCoreDutyCycle", "duty"),
    ("RunningJobs", "TotalRunningJobs", "11d"),
    ("IdleJobs", "TotalIdleJobs", "10d"),
    ("HeldJobs", "TotalHeldJobs", "10d"),
    ("Download", "TransferQueueNumDownloading", "8d"),
    ("Waiting", "TransferQueueNumWaitingToDownload", "7d"),
    ("WaitingMB", "FileTransferMBWaitingToDownload", "9.2f"),
    ("Upload", "TransferQueueNumUploading", "8d"),
    ("Waiting", "TransferQueueNumWaitingToUpload", "7d"),
    ("WaitingMB", "FileTransferMBWaitingToUpload", "9.2f"),
)
DAEMON_HEADING = (
    "TIMESTAMP   DUTY_CYCLE RunningJobs   IdleJobs   HeldJobs Download Waiting WaitingMB   "
    "Upload Waiting WaitingMB"
)
NO_TRANSFER_TABLE = (
    "Error: -transfer-history does not have a default print table. Please use -long, -json, "
    "-xml, or a custom print format."
)
_OWNER = re.compile(r"[\w.@+-]+\Z")

USAGE = """\
usage: cedar history [source] [restriction ...] [option ...]

source (default: the schedd's job history):
  -file FILE            read a history file here (no daemon)
  -schedd               the schedd's job history
  -epochs               one record per job run (the schedd's epoch history)
  -transfer-history[:IOC]
                        URL-plugin transfer records (Input, Output, Checkpoint)
  -startd               the startd's own history (-name picks the startd)
  -daemon[:SUBSYS]      snapshots of a daemon's ad (default SCHEDD)
  -type T[,T...]        record types to return (ALL, EPOCH, SPAWN, INPUT, ...)
  -name NAME            the schedd (or, with -startd, the startd) to ask
  -pool HOST[:PORT]     the pool's collector
  --addr ADDRESS        the daemon's address (no lookup)

restriction:
  CLUSTER | CLUSTER.PROC | OWNER
                        these jobs or owners (ORed)
  -constraint EXPR      records matching EXPR (repeat: ANDed)
  -since JOBID|EXPR     stop at this job, or at the first record matching EXPR
  -completedsince TIME  stop at the first record completed at or before TIME
  -scanlimit N          examine at most N records

option:
  -forwards | -backwards
                        oldest first | newest first (default)
  -limit N | -match N   print at most N records
  -long | -json | -jsonl | -xml
                        whole records
  -attributes A,B,...   only these attributes (with -long/-json/-jsonl/-xml)
  -af[:jlhVr,tng] EXPR ...
                        evaluated expressions, one line per record (repeat: concatenated)
  -format FMT EXPR      printf-style (repeatable)
  -wide                 accepted (condor_history's table is not truncated either)
  --timeout SECONDS     limit for every network wait (default {timeout:g} s)
  --debug               show the traceback of an error
  -help                 this text
"""

#: Option name -> (shortest accepted prefix, number of values).  condor's tools accept any
#: unique prefix of at least the given length.
OPTIONS: dict[str, tuple[int, int]] = {
    "help": (1, 0),
    "file": (2, 1),
    "schedd": (3, 0),
    "epochs": (2, 0),
    "transfer-history": (2, 0),
    "startd": (3, 0),
    "daemon": (2, 0),
    "type": (2, 1),
    "name": (1, 1),
    "pool": (1, 1),
    "addr": (4, 1),
    "constraint": (1, 1),
    "since": (3, 1),
    "completedsince": (3, 1),
    "scanlimit": (3, 1),
    "forwards": (3, 0),
    "backwards": (1, 0),
    "limit": (3, 1),
    "match": (1, 1),
    "long": (1, 0),
    "json": (2, 0),
    "jsonl": (5, 0),
    "xml": (1, 0),
    "attributes": (2, 1),
    "af": (2, 0),
    "autoformat": (2, 0),
    "format": (2, 2),
    "wide": (1, 0),
    "timeout": (3, 1),
    "debug": (3, 0),
}
_WITH_MODIFIER = {"transfer-history", "daemon", "af", "autoformat", "wide"}


@dataclass
class HistoryOptions:
    """A parsed ``cedar history`` command line."""

    source: str = "jobs"
    file: str | None = None
    transfer_types: str = ""
    subsystem: str | None = None
    record_types: list[str] = field(default_factory=list)
    name: str | None = None
    pool: str | None = None
    addr: str | None = None
    constraints: list[str] = field(default_factory=list)
    parsed_constraints: list[Expr] = field(default_factory=list)
    restrictions: list[str] = field(default_factory=list)
    since: str | None = None
    completed_since: str | None = None
    scan_limit: int | None = None
    forwards: bool = False
    limit: int = -1
    form: str | None = None  # long, json, jsonl, xml
    attributes: list[str] = field(default_factory=list)
    af_arguments: list[str] = field(default_factory=list)
    af_modifiers: str = ""
    formats: list[tuple[str, str]] = field(default_factory=list)
    timeout: float = DEFAULT_TIMEOUT
    debug: bool = False
    help: bool = False

    def constraint(self) -> Expr | None:
        """``-constraint`` terms ANDed with the job-id/owner terms ORed (one rule:
        :mod:`cedar.classad_wire.constraints`), as the tree the clients send as it is: the
        user's terms were parsed once, when the command line was read."""
        ors = [restriction_term(item) for item in self.restrictions]
        either = " || ".join(f"({term})" for term in ors) if ors else None
        try:
            return and_constraints([*self.parsed_constraints, either])
        except ClassAdError as exc:
            raise UsageError(f"invalid constraint: {exc}") from None

    def projection(self) -> str:
        """What to ask for: the printed expressions' attributes, the default table's, or
        (whole records) ``-attributes`` / everything."""
        if self.af_arguments or self.formats:
            names: dict[str, str] = {}
            for part in (self.autoformat(), self.printf()):
                for name in part.projection() if part is not None else ():
                    names.setdefault(name.lower(), name)
            return ",".join(sorted(names.values(), key=str.lower))
        if self.form is not None:
            return ",".join(sorted(self.attributes, key=str.lower))
        if self.source == "daemon":
            wanted = {"RecordWriteDate", *(attribute for _, attribute, _ in DAEMON_COLUMNS)}
            return ",".join(sorted(wanted, key=str.lower))
        return "" if self.source == "transfer" else DEFAULT_PROJECTION

    def autoformat(self) -> AutoFormat | None:
        if not self.af_arguments:
            return None
        return AutoFormat(self.af_arguments, self.af_modifiers, widths_from_headings=True)

    def printf(self) -> Printf | None:
        return Printf(self.formats) if self.formats else None

    def request(self) -> ClassAd:
        """The request ad condor_history sends for these options (spec 08 §3.2)."""
        try:
            return history_request(
                self.constraint(),
                self.projection(),
                self.limit,
                self.since,
                completed_since=self.completed_since,
                forwards=self.forwards,
                scan_limit=self.scan_limit,
                source=self.source,
                transfer_types=self.transfer_types if self.source == "transfer" else None,
                record_types=self.record_types or None,
                subsystem=self.subsystem,
            )
        except UsageError:
            raise
        except ValueError as exc:
            raise UsageError(str(exc)) from None


def restriction_term(item: str) -> str:
    """A positional: ``C`` / ``C.P`` (the one job-id grammar) or an owner name."""
    ids, constraint = parse_job_spec(item)
    if ids:
        ((cluster, proc),) = ids
        return f"ClusterId == {cluster} && ProcId == {proc}"
    if constraint != item:
        return str(constraint)
    if not _OWNER.match(item):
        raise UsageError(f"{item!r} is neither a job id (C or C.P) nor an owner name")
    return f'Owner == "{item}"'


def _option(arg: str) -> tuple[str, str] | None:
    """``(name, modifier)`` of an option argument, None for a positional."""
    if not arg.startswith("-") or arg == "-" or re.fullmatch(r"-\d+(\.\d+)?", arg):
        return None
    body = arg[2:] if arg.startswith("--") else arg[1:]
    word, _, modifier = body.partition(":")
    word = word.lower()
    if word in OPTIONS:
        return word, modifier
    found = [n for n, (least, _) in OPTIONS.items() if n.startswith(word) and len(word) >= least]
    if len(found) == 1:
        return found[0], modifier
    raise UsageError(f"unknown option {arg}")


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{what} needs an integer, not {text!r}") from None


def parse_options(argv: Sequence[str]) -> HistoryOptions:
    """Parse a command line; :class:`UsageError` on anything condor_history would refuse."""
    opts = HistoryOptions()
    args = list(argv)
    i = 0
    forwards_given = False
    while i < len(args):
        arg = args[i]
        i += 1
        parsed = _option(arg)
        if parsed is None:
            opts.restrictions.append(arg)
            continue
        name, modifier = parsed
        if modifier and name not in _WITH_MODIFIER:
            raise UsageError(f"option -{name} takes no ':' modifier")
        count = OPTIONS[name][1]
        values = args[i : i + count]
        if len(values) < count:
            raise UsageError(f"option -{name} needs {count} value(s)")
        i += count
        if name in ("af", "autoformat"):
            taken = 0
            while i + taken < len(args) and not args[i + taken].startswith("-"):
                taken += 1
            if not taken:
                raise UsageError("-af needs at least one attribute or expression")
            opts.af_arguments += args[i : i + taken]
            opts.af_modifiers += modifier
            i += taken
            continue
        _apply(opts, name, modifier, values)
        forwards_given = forwards_given or name == "forwards"
    if forwards_given and (opts.since is not None or opts.completed_since is not None):
        raise UsageError("-forwards cannot be combined with -since or -completedsince")
    if opts.since is not None and opts.completed_since is not None:
        raise UsageError("-since cannot be combined with -completedsince")
    # parsed once, here (the one message every subcommand gives for a malformed one)
    opts.parsed_constraints = [
        tree for tree in map(parsed_constraint, opts.constraints) if tree is not None
    ]
    return opts


def _apply(opts: HistoryOptions, name: str, modifier: str, values: list[str]) -> None:
    value = values[0] if values else ""
    if name == "help":
        opts.help = True
    elif name == "file":
        opts.file = value
    elif name == "schedd":
        opts.source = "jobs"
    elif name == "epochs":
        opts.source = "epochs"
    elif name == "transfer-history":
        opts.source = "transfer"
        opts.transfer_types = modifier.upper()
    elif name == "startd":
        opts.source = "startd"
    elif name == "daemon":
        opts.source = "daemon"
        opts.subsystem = modifier.upper() or None
    elif name == "type":
        opts.record_types += [t for t in re.split(r"[\s,]+", value) if t]
    elif name in ("name", "pool", "addr"):
        setattr(opts, name, value)
    elif name == "constraint":
        opts.constraints.append(value)
    elif name == "since":
        opts.since = value
    elif name == "completedsince":
        opts.completed_since = value
    elif name == "scanlimit":
        opts.scan_limit = _int(value, "-scanlimit")
    elif name == "forwards":
        opts.forwards = True
    elif name == "backwards":
        opts.forwards = False
    elif name in ("limit", "match"):
        opts.limit = _int(value, f"-{name}")
    elif name in ("long", "json", "jsonl", "xml"):
        opts.form = name
    elif name == "attributes":
        opts.attributes += [a for a in re.split(r"[\s,]+", value) if a]
    elif name == "format":
        opts.formats.append((values[0], values[1]))
    elif name == "timeout":
        try:
            opts.timeout = float(value)
        except ValueError:
            raise UsageError(f"--timeout needs a number, not {value!r}") from None
    elif name == "debug":
        opts.debug = True
    # "wide": accepted, nothing to do


# --------------------------------------------------------------------------- the table


_SCALARS = frozenset((int, float, str, bool))


def _value(ad: ClassAd, name: str) -> Any:
    """An attribute's value; None when it is missing, undefined or cannot be evaluated."""
    try:  # a literal: one lookup; absent: undefined without the evaluator
        value = ad[name]
    except KeyError:
        return None
    except ClassAdError:
        value = None
    if value.__class__ in _SCALARS:
        return value
    try:
        value = ad.eval(name)
    except (ClassAdError, KeyError):
        return None
    return None if isinstance(value, UndefinedType) else value


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _date(value: Any, width: str) -> str:
    """``MM/DD HH:MM`` as condor_history prints it: month right-aligned, day left-aligned."""
    stamp = _number(value)
    if stamp is None:
        return width
    return short_date(stamp)


def _c_div(a: int, b: int) -> tuple[int, int]:
    """C's integer division and remainder (both truncate toward zero)."""
    q = abs(a) // b * (1 if a >= 0 else -1)
    return q, a - q * b


def _run_time(value: Any) -> str:
    if value is None:
        value = 0  # undefined counts as 0; any other non-number prints nothing
    seconds = _number(value)
    if seconds is None:
        return ""
    days, rest = _c_div(int(seconds), 86400)
    hours, rest = _c_div(rest, 3600)
    minutes, secs = _c_div(rest, 60)
    return f"{days}+{hours:02d}:{minutes:02d}:{secs:02d}"


def _command(ad: ClassAd) -> str:
    for name in ("JobDescription", "MATCH_EXP_JobDescription"):
        description = _value(ad, name)
        if isinstance(description, str) and description:
            return f"({description})"
    cmd = _value(ad, "Cmd")
    if not isinstance(cmd, str):
        return ""
    args = _value(ad, "Args")
    if not isinstance(args, str):
        args = _value(ad, "Arguments")
    base = os.path.basename(cmd)
    return f"{base} {args}" if isinstance(args, str) and args else base


def table_row(ad: ClassAd) -> str:
    """One line of condor_history's default table (observed byte for byte, ``-file`` records
    with every kind of missing and odd value): absent fields as condor prints them."""
    return _job_cell(ad) + _row_rest(ad)


def _job_cell(ad: ClassAd) -> str:
    cluster, proc = _value(ad, "ClusterId"), _value(ad, "ProcId")
    job = "" if cluster is None and proc is None else f"{cluster}.{proc}"
    return f"{job:<12} "


#: What a line reads but the job id (the records of a cluster mostly share it).
_REST_INPUTS = ["Owner", "JobStatus", "QDate", "RemoteWallClockTime", "CompletionDate",
                "JobDescription", "MATCH_EXP_JobDescription", "Cmd", "Args",
                "Arguments"]  # fmt: skip


def _row_rest(ad: ClassAd) -> str:
    owner = _value(ad, "Owner")
    owner_text = owner[:14] if isinstance(owner, str) else "[????????????]"
    status = _value(ad, "JobStatus")
    letter = STATUS.get(status, "") if isinstance(status, int) else ""
    completed = _value(ad, "CompletionDate")
    return (
        f"{owner_text:<14} {_date(_value(ad, 'QDate'), '[?????????]'):>11} "
        f"{_run_time(_value(ad, 'RemoteWallClockTime')):>12} {letter:<2} "
        f"{_date(completed, ' ' * 11):>11} {_command(ad)}\n"
    )


def daemon_row(ad: ClassAd) -> str:
    """One line of ``-daemon``'s table (a schedd's periodic snapshot)."""
    cells = [_date(_value(ad, "RecordWriteDate"), " " * 11)]
    for _, attribute, spec in DAEMON_COLUMNS:
        number = _number(_value(ad, attribute))
        if spec == "duty":
            cells.append(f"{(number or 0.0) * 100:9.2f}%")
        elif spec.endswith("f"):
            cells.append(f"{number or 0.0:{spec}}")
        else:
            cells.append(f"{int(number or 0):{spec}}")
    return " ".join(cells) + "\n"


def table_lines(ads: Iterable[ClassAd]) -> Iterator[str]:
    """The heading (always), then one row per record as it arrives."""
    yield HEADING + "\n"
    rest = Memo(_REST_INPUTS, _row_rest)
    for ad in ads:
        yield _job_cell(ad) + rest(ad)


def _jsonl(ad: ClassAd) -> str:
    """``-jsonl``: the ``-json`` members on one line, nested values compacted."""
    text = ad_to_json_sorted(ad)
    if text == "{\n}":
        return "{}\n"
    inner = text[4:-2].split(",\n  ")
    return "{" + ",".join(re.sub(r"\n\s*", "", member) for member in inner) + "}\n"


class HistoryJson(JsonWriter):
    """condor_history's ``-json``: as condor_q's, but ``[`` ``]`` even for no records."""

    def end(self) -> str:
        return "\n]\n" if self.count else "[\n]\n"


class HistoryXml(XmlWriter):
    """condor_history's ``-xml``: an empty line after the prologue and after every ad."""

    def begin(self) -> str:
        return super().begin() + "\n"

    def ad(self, ad: ClassAd) -> str:
        return super().ad(ad) + "\n"

    def end(self) -> str:
        return super().end() + "\n"


def _projected(ads: Iterable[ClassAd], names: list[str]) -> Iterator[ClassAd]:
    """``-attributes`` for records that were not projected by a daemon (``-file``)."""
    wanted = {n.lower() for n in names}
    for ad in ads:
        out = ClassAd()
        for name in ad:
            if name.lower() in wanted:
                out.set_expr(name, ad.lookup(name))
        yield out


def write_output(opts: HistoryOptions, ads: Iterable[ClassAd], out: TextIO) -> None:
    """Print the records in the chosen form, each as it arrives."""
    af, printf = opts.autoformat(), opts.printf()
    if printf is not None:
        write_lines(printf.lines(ads), out)
    elif af is not None:
        write_lines(af.lines(ads), out)
    elif opts.form == "jsonl":
        for ad in ads:
            out.write(_jsonl(ad))
    elif opts.form == "json":
        write_ads(ads, HistoryJson(), out)
    elif opts.form == "xml":
        write_ads(ads, HistoryXml(), out)
    elif opts.form is not None:
        write_ads(ads, whole_writer(opts.form), out)
    elif opts.source == "daemon":
        out.write(DAEMON_HEADING + "\n")
        write_lines((daemon_row(ad) for ad in ads), out)
    else:
        write_lines(table_lines(ads), out)


# --------------------------------------------------------------------------- running


def records_from_file(opts: HistoryOptions, request: ClassAd) -> Iterator[ClassAd]:
    """``-file``: the records of a history file the request selects, as a daemon would."""
    from cedar.classad_wire.evaluate import evaluate

    def test(expr: Any, ad: ClassAd) -> bool:
        if expr is None:
            return True
        try:
            value = evaluate(expr, ad)
        except ClassAdError:
            return False
        return value is True or (
            isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0
        )

    assert opts.file is not None
    with open(opts.file, "rb") as handle:
        records = read_history_file(handle, forwards=opts.forwards)
        ads: Iterable[ClassAd] = iter_selected(((r.ad, r.type) for r in records), request, test)
        if opts.attributes and opts.form is not None:
            ads = _projected(ads, opts.attributes)
        yield from ads


def records_from_daemon(opts: HistoryOptions) -> Iterator[ClassAd]:
    """The records a daemon streams for the options (schedd, or the startd)."""
    from cedar.commands import Schedd, Startd

    if opts.source == "startd":
        startd = Startd(opts.addr, name=opts.name, pool=opts.pool, timeout=opts.timeout)
        yield from startd.history(
            opts.constraint(),
            opts.projection(),
            opts.limit,
            opts.since,
            completed_since=opts.completed_since,
            forwards=opts.forwards,
            scan_limit=opts.scan_limit,
            record_types=opts.record_types or None,
        )
        return
    schedd = Schedd(opts.addr, name=opts.name, pool=opts.pool, timeout=opts.timeout)
    yield from schedd.history(
        opts.constraint(),
        opts.projection(),
        opts.limit,
        opts.since,
        completed_since=opts.completed_since,
        forwards=opts.forwards,
        scan_limit=opts.scan_limit,
        source=opts.source,
        transfer_types=opts.transfer_types if opts.source == "transfer" else None,
        record_types=opts.record_types or None,
        subsystem=opts.subsystem,
    )


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run a parsed command line (``args.options``)."""
    out = out or sys.stdout
    opts: HistoryOptions = args.options
    if opts.help:
        out.write(USAGE.format(timeout=DEFAULT_TIMEOUT))
        return 0
    if opts.source == "transfer" and not (opts.form or opts.af_arguments or opts.formats):
        raise CommandError(NO_TRANSFER_TABLE)
    request = opts.request()  # refuses bad options before any network traffic
    if opts.file is not None:
        ads: Iterator[ClassAd] = records_from_file(opts, request)
    else:
        ads = records_from_daemon(opts)
    write_output(opts, Progress("records").track(ads), out)
    return 0


class HistoryParser(argparse.ArgumentParser):
    """condor_history's grammar behind argparse's interface (``cedar.cli.main`` mounts tools
    through ``build_parser().parse_args``); it knows no argparse options, so the generic
    condor-style rewriting leaves its arguments alone."""

    def __init__(self) -> None:
        super().__init__(prog="cedar history", add_help=False)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> argparse.Namespace:
        try:
            options = parse_options(sys.argv[1:] if args is None else args)
        except UsageError as exc:
            if str(exc).startswith("unknown option"):
                self.error(str(exc))  # the subcommand's usage, as condor_history
            raise
        return argparse.Namespace(options=options, debug=options.debug)

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(USAGE.format(timeout=DEFAULT_TIMEOUT).split("\n\n")[0] + "\n")
        sys.stderr.write(f"cedar history: error: {message}\n")
        raise SystemExit(2)

    def format_help(self) -> str:
        return USAGE.format(timeout=DEFAULT_TIMEOUT)


def build_parser() -> argparse.ArgumentParser:
    """The parser ``cedar.cli.main`` mounts."""
    return HistoryParser()


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """``cedar history ...`` (also ``python -m cedar.cli.history``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or "-debug" in argv
    parser = build_parser()
    return guarded("cedar history", debug, lambda: run(parser.parse_args(argv), out))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
