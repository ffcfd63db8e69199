"""``cedar q``: the job queue as condor_q 25 prints it.

Your own jobs by default (every user's with ``-allusers``, with a job id or owner, or as a
queue superuser: the schedd decides),
one line per batch (``-nobatch``: per job; ``-hold``, ``-run``, ``-idle``: those jobs with their
own columns; ``-totals``: the totals alone; ``-factory``: the late-materialization factories),
and the ``Total for ...`` lines.  ``-af``,
``-format``, ``-long``, ``-json``, ``-xml`` and ``-attributes`` go through :mod:`cedar.output`.
condor_q sorts jobs by id before printing anything; ``-stream-results`` prints each job as it
arrives (as condor_q does).  Options may come before or after the restriction list.

With an analysis option (``-analyze``, ``-better-analyze``, ...) the command line is
:mod:`cedar.cli.analyze`'s, as condor_q's analysis is a program of its own.
"""

from __future__ import annotations

import getpass
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO, cast

from cedar.cli.common import Progress, UsageError
from cedar.cli.listing import ListingArgs, ListingTool, Opt
from cedar.errors import CedarError, CommandError
from cedar.output import (
    BATCH_PROJECTION,
    FACTORY_CONSTRAINT,
    FACTORY_PROJECTION,
    HOLD_CODES_PROJECTION,
    VIEW_CONSTRAINTS,
    batch_lines,
    factory_lines,
    hold_code_lines,
    jobads_banner,
    jobads_totals_line,
    q_view,
    schedd_banner,
    totals_lines,
)

if TYPE_CHECKING:  # imported where used: `cedar q --help` loads no ClassAd machinery
    from cedar.classad_wire.classad import ClassAd
    from cedar.classad_wire.expr import Expr
    from cedar.output import WholeAdWriter

__all__ = ["Q_OPTIONS", "main", "run"]

PROG = "cedar q"

Q_OPTIONS: list[Opt] = [
    Opt("allusers", 3, 0, "the jobs of every user (also -all)"),
    Opt("nobatch", 3, 0, "one line per job"),
    Opt("batch", 3, 0, "one line per batch (the default)"),
    Opt("hold", 2, 0, "held jobs, with the hold reason"),
    Opt("run", 2, 0, "running jobs, with their host"),
    Opt("idle", 2, 0, "idle jobs, with their requests"),
    Opt("totals", 3, 0, "only the totals lines"),
    Opt("factory", 3, 0, "the late-materialization factories (their cluster ads)"),
    Opt("wide", 2, 0, "do not truncate (cedar never truncates)"),
    Opt("global", 2, 0, "the queues of every schedd in the pool"),
    Opt("name", 2, 1, "the schedd's name", "NAME"),
    Opt("submitter", 3, 1, "the jobs of this submitter", "USER"),
    Opt("stream-results", 3, 0, "print each job as it arrives (no sorting)"),
    Opt("cputime", 2, 0, "CPU_TIME (the job's user CPU) instead of RUN_TIME"),
    Opt("hold-codes", 6, 0, "the held jobs counted by owner and hold code/subcode"),
    Opt("jobads", 4, 1, "the jobs of FILE (condor_q -long's output), not a schedd's", "FILE"),
    Opt("currentrun", 2, 0, "RUN_TIME of the current run (as without it: condor 25 does so)"),
    Opt("addr", 3, 1, "the schedd's address (sinful or host:port); skips the lookup", "ADDR"),
]

MISSING = (
    "-userlog, -jobset, -autocluster, -unmatchable, "
    "-dag, -expert, -grid, -io, -print-format, -aaf, -af:T/:Y (accepted, ignored), "
    "-schedd-constraint, -version"
)

_USER = re.compile(r"^[\w.@-]+$")
_VIEWS = ("hold", "run", "idle", "nobatch", "batch", "totals")


def _handle(opt: Opt, modifier: str, values: list[str], args: ListingArgs) -> None:
    name = opt.name
    if name in _VIEWS:
        if name in ("hold", "run", "idle", "totals"):
            args.flags.setdefault("states", []).append(name)
        else:
            args.flags["batch"] = name == "batch"
    elif name in (
        "allusers",
        "wide",
        "global",
        "stream-results",
        "factory",
        "cputime",
        "currentrun",
    ):
        args.flags[name] = True
    elif name == "hold-codes":  # ordered with -hold: the later of the two decides
        args.flags.setdefault("states", []).append(name)
    elif name in ("name", "submitter", "addr", "jobads"):
        args.flags[name] = values[0]
    else:
        args.flags.setdefault("extra", []).append((name, modifier, values))


def restriction(items: Sequence[str]) -> tuple[str | None, bool]:
    """The constraint of the restriction list (job ids and owners, ORed) and whether it names
    anything (which lifts the "only your jobs" default, as condor_q)."""
    from cedar.jobid import ids_constraint_text, match_job_id

    parts = []
    for item in items:
        job = match_job_id(item, lenient=True)  # condor_q's reading: " 1.2", "+1", "1."
        if job is not None:
            parts.append(f"({ids_constraint_text([job])})")
        elif _USER.match(item):
            parts.append(f'(Owner == "{item}")')
        else:
            raise UsageError(f"{item!r} is neither a job id (CLUSTER or CLUSTER.PROC) nor a user")
    return (" || ".join(parts) or None), bool(parts)


def _job_key(ad: ClassAd) -> tuple[int, int]:
    try:  # the common case: two integer literals (no evaluator, no closure)
        key = (ad["ClusterId"], ad["ProcId"])
        if key[0].__class__ is int and key[1].__class__ is int:
            return key
    except Exception:  # noqa: BLE001 - absent or odd: the careful way below
        pass

    def number(name: str) -> int:
        try:
            value = ad.eval(name)
        except Exception:  # noqa: BLE001 - a malformed id sorts first, never crashes
            return -1
        return value if isinstance(value, int) and not isinstance(value, bool) else -1

    return (number("ClusterId"), number("ProcId"))


def by_job_id(ads: Iterable[ClassAd], render: Callable[[ClassAd], str]) -> Iterator[str]:
    """condor_q's order (cluster, proc) in bounded memory: each ad is rendered as it arrives
    and only its text is kept until the end."""
    rendered = [(_job_key(ad), render(ad)) for ad in ads]
    rendered.sort(key=lambda item: item[0])
    for _, text in rendered:
        yield text


def run(args: ListingArgs, out: TextIO, err: TextIO) -> int:
    """Run a scanned ``cedar q``."""
    from cedar.commands import Collector, Schedd

    flags = args.flags
    ids_constraint, named = restriction(args.positionals)
    # observed: under -constraint condor_q's batch view leaves DONE empty; with a restriction
    # list or none it counts the procs that have left
    count_done = not args.constraints
    states = flags.get("states", [])
    view_names = [s for s in states if s in VIEW_CONSTRAINTS]
    view_name = view_names[-1] if view_names else None
    parts = [ids_constraint, *args.constraints]
    factory = bool(flags.get("factory"))
    # condor_q -hold-codes (observed): the held jobs only, whatever else is printed (-af,
    # -long, -totals); its table unless a later -hold asks for that one; not with -run/-idle;
    # over -factory
    hold_family = [s for s in states if s in ("hold", "hold-codes")]
    hold_codes = bool(hold_family) and hold_family[-1] == "hold-codes" and "totals" not in states
    if hold_codes and view_name in ("run", "idle"):
        raise UsageError(f"-hold-codes cannot be combined with -{view_name}")
    if "hold-codes" in states and view_name is None:
        parts.append("JobStatus == 5")
    factory = factory and not hold_codes
    if factory:  # condor_q -factory: the factories' cluster ads, not the procs
        parts.append(f"({FACTORY_CONSTRAINT})")
    elif view_name is not None:
        parts.append(VIEW_CONSTRAINTS[view_name])
    submitter = flags.get("submitter")
    if submitter:  # observed: condor_q -submitter compares Owner (a full user name matches none)
        parts.append(f'(Owner == "{_quoted(submitter)}")')
    args.constraints = [p for p in parts if p]
    constraint = args.constraint_tree()  # parsed once: the client sends the tree as it is
    my_jobs = None
    # condor_q asks for "only my jobs" as root too (observed: root with testuser's IDTOKEN
    # gets testuser's jobs and the "Total for testuser@..." line); the schedd lifts the
    # restriction for a queue superuser, which root's FS identity (condor@...) is
    if not (flags.get("allusers") or named or submitter):
        my_jobs = getpass.getuser()
    limit = flags.get("limit", -1)
    totals_only = "totals" in states
    cputime = bool(flags.get("cputime"))
    request = args.output
    custom = request.custom()
    if factory:
        default: Sequence[str] = FACTORY_PROJECTION
    elif hold_codes:
        default = HOLD_CODES_PROJECTION
    elif view_name is not None:
        default = q_view(view_name, cputime=cputime).projection
    elif flags.get("batch", True) and not totals_only:
        default = BATCH_PROJECTION
    else:
        default = q_view("nobatch", cputime=cputime).projection
    projection = request.projection(default)
    if custom is not None and projection is not None:
        projection = sorted({*projection, "ClusterId", "ProcId"}, key=str.lower)

    schedds: list[tuple[Any, str]]
    jobads = flags.get("jobads")
    if jobads is not None:
        schedds = [(JobAdsFile(jobads, constraint), jobads)]
    elif flags.get("global"):
        collector = Collector(flags.get("pool"), timeout=args.timeout)
        schedds = [
            (Schedd(ad, timeout=args.timeout), str(ad.get("Name") or ""))
            for ad in collector.query(
                "schedd", GLOBAL_SCHEDDS, projection=["Name", "MyAddress", "Machine"]
            )
        ]
    else:
        schedd = Schedd(
            flags.get("addr"), name=flags.get("name"), pool=flags.get("pool"),
            timeout=args.timeout,
        )  # fmt: skip
        schedds = [(schedd, flags.get("name") or _local_name())]
    for schedd, schedd_name in schedds:
        stream = schedd.query_iter(
            constraint,
            projection or (),
            limit,
            my_jobs=my_jobs,
            with_auth=my_jobs is not None,
            summary_only=totals_only and custom is None and request.form is None,
            include_cluster_ads=factory,
        )
        ads = Progress("jobs", err).track(stream)
        streaming = flags.get("stream-results", False)
        whole = request.form is not None or custom is not None
        if whole and totals_only:
            _drain(ads)
            if request.form == "long":
                out.write(_long(stream.summary))
                continue
        elif whole:
            batches: Iterable[Iterable[ClassAd]] = [ads]
            if not streaming and limit < 0 and custom is None and not factory and not jobads:
                # condor_q's order without waiting for the whole queue: id windows (whole
                # ads only: -af/-format lines are small, one query costs less)
                batches = _windows(schedd, constraint, projection, my_jobs, err) or batches
            _write_whole(request, batches, out, streaming)
            continue
        # condor_q prints the banner once the answer is in (with -stream-results: at once)
        body: Iterable[str]
        if factory:
            body = factory_lines(ads)
        elif hold_codes:
            body = hold_code_lines(ads)
        elif totals_only:
            _drain(ads)
            body = []
        elif view_name is not None or not flags.get("batch", True):
            view = q_view(view_name or "nobatch", cputime=cputime)
            now = schedd.now if jobads is not None else int(time.time())
            body = view.lines(ads, now, streaming)
        else:
            body = batch_lines(ads, count_done)  # it orders the batches itself
        if not streaming:
            body = list(body)
        if jobads is not None:
            out.write(jobads_banner(jobads, schedd.now))
        elif submitter:
            full = submitter if "@" in submitter else f"{submitter}@{_uid_domain()}"
            out.write(submitter_banner(full, schedd_name, schedd.locate()))
        else:
            out.write(schedd_banner(schedd_name, schedd.locate()))
        for line in body:
            out.write(line)
        if factory or hold_codes or view_name in ("run", "idle"):
            continue  # condor_q prints no totals under these views
        if jobads is not None:
            out.write(("" if totals_only else "\n") + jobads_totals_line(schedd.ads) + "\n")
            continue
        summary = stream.summary
        if summary is None:
            from cedar.classad_wire.classad import ClassAd

            summary = ClassAd()
        out.write(("" if totals_only else "\n") + totals_lines(summary) + "\n")
    return 0


#: The schedds ``-global`` lists: those whose collector ad counts a job (observed on 25.13.2
#: with advertised copies of a schedd ad: any one of these five counts at 1 lists it, the
#: flocked, local and scheduler-universe counts do not).  A listed schedd is printed even when
#: none of its jobs matches (banner, heading, totals).
GLOBAL_SCHEDDS = (
    "TotalJobAds > 0 || TotalIdleJobs > 0 || TotalRunningJobs > 0 || TotalHeldJobs > 0 || "
    "TotalRemovedJobs > 0"
)


def _uid_domain() -> str:
    """The configuration's UID_DOMAIN (condor_q names a bare submitter ``user@UID_DOMAIN``)."""
    from cedar.config import default_config

    return default_config().get("UID_DOMAIN") or _local_name()


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def submitter_banner(submitter: str, schedd_name: str, address: str) -> str:
    """``-- Submitter: USER : <addr?... : SCHEDD @ date`` (condor_q -submitter)."""
    banner = schedd_banner(schedd_name, address)
    head, _, when = banner.rpartition(" @ ")
    short = head.split(" : ", 1)[1]
    return f"\n\n-- Submitter: {submitter} : {short} : {schedd_name} @ {when}"


def _long(summary: ClassAd | None) -> str:
    from cedar.output import long_text

    return long_text(summary) if summary is not None else ""


def _drain(ads: Iterable[ClassAd]) -> None:
    for _ in ads:
        pass


def _windows(
    schedd: Any, constraint: str | Expr | None, projection: Any, my_jobs: str | None, err: TextIO
) -> Iterator[Iterable[ClassAd]] | None:
    """The queue as id windows (:mod:`cedar.cli.qorder`), or ``None`` for a small queue."""
    from cedar.cli.qorder import in_windows, job_windows

    with_auth = my_jobs is not None
    windows = job_windows(schedd, with_auth)
    if windows is None:
        return None
    progress = Progress("jobs", err)
    queries = in_windows(
        schedd, windows, constraint, projection or (), my_jobs=my_jobs, with_auth=with_auth
    )
    return (progress.track(query) for query in queries)


def _write_whole(
    request: Any, batches: Iterable[Iterable[ClassAd]], out: TextIO, streaming: bool
) -> None:
    """Whole ads or ``-af``/``-format`` lines; each batch sorted by job id on its own (the
    batches come in id order: :func:`_windows`), or as they come when ``streaming``."""
    from cedar.output import JsonWriter, whole_writer

    custom = request.custom()
    if custom is not None:
        if streaming:
            for ads in batches:
                for line in custom.lines(ads):
                    out.write(line)
            return
        # -af:h sizes its columns from every ad: sort the ads; otherwise render each ad as it
        # arrives and keep only its text.
        if _needs_first(custom):
            ordered = sorted((ad for ads in batches for ad in ads), key=_job_key)
            for line in custom.lines(ordered):
                out.write(line)
            return
        for ads in batches:
            out.writelines(by_job_id(ads, custom.line))
        return
    writer = whole_writer(request.form, request.attributes)
    out.write(writer.begin())
    if streaming:
        for ads in batches:
            for ad in ads:
                out.write(writer.ad(ad))
        out.write(writer.end())
        return
    binary = _utf8_buffer(out)
    if binary is not None:
        _write_whole_bytes(writer, batches, out, binary)
        return
    if isinstance(writer, JsonWriter):
        # The JSON separators depend on position: render each ad alone, join in id order.
        first = True
        for ads in batches:
            for text in by_job_id(ads, writer.text):
                out.write(("[\n" if first else "\n,\n") + text)
                first = False
        out.write("" if first else "\n]\n")
        return
    for ads in batches:
        for text in by_job_id(ads, writer.ad):
            out.write(text)
    out.write(writer.end())


def _utf8_buffer(out: TextIO) -> BinaryIO | None:
    """The byte stream under ``out`` when its text goes out as UTF-8 (a console's or a
    pipe's stdout), flushed so that bytes written to it come after the text; else ``None``."""
    buffer = getattr(out, "buffer", None)
    encoding = str(getattr(out, "encoding", "") or "").lower().replace("-", "").replace("_", "")
    if buffer is None or encoding != "utf8":
        return None
    out.flush()
    return cast("BinaryIO", buffer)


def _write_whole_bytes(
    writer: WholeAdWriter, batches: Iterable[Iterable[ClassAd]], out: TextIO, binary: BinaryIO
) -> None:
    """:func:`_write_whole`'s sorted ``-long``/``-json``/``-xml`` as bytes: an ad read from the
    wire is printed from its values as received (nothing decoded or encoded: the CPU of a
    large listing is per value), any other ad as its text in UTF-8; a received byte that is
    not UTF-8 goes out as it came either way, as condor_q prints it."""
    from cedar.output import JsonWriter

    json = isinstance(writer, JsonWriter)
    text_of = writer.text if isinstance(writer, JsonWriter) else writer.ad
    errors = str(getattr(out, "errors", None) or "strict")  # out's encoding is UTF-8

    def render(ad: ClassAd) -> bytes:
        data = writer.ad_bytes(ad)
        if data is not None:
            return data
        text = text_of(ad)
        try:  # a byte that is not UTF-8 was decoded to a surrogate: its own byte again
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return text.encode("utf-8", errors)

    first = True  # writer.begin() is written already
    for ads in batches:
        rendered = [(_job_key(ad), render(ad)) for ad in ads]
        rendered.sort(key=_first)
        for _, data in rendered:
            if json:
                binary.write(b"[\n" if first else b"\n,\n")
            binary.write(data)
            first = False
    if json:
        binary.write(b"" if first else b"\n]\n")
    else:
        binary.write(writer.end().encode("utf-8", errors))
    binary.flush()


def _first(item: tuple[tuple[int, int], bytes]) -> tuple[int, int]:
    return item[0]


def _needs_first(custom: Any) -> bool:
    return bool(getattr(custom, "headings", False))


class JobAdsFile:
    """``-jobads FILE`` in place of a schedd: the file's ads (condor_q -long's output) that
    match the query's constraint, in the file's order; ``-limit`` is ignored and no owner
    default applies, as condor_q does (observed).  An unreadable file: condor's message."""

    #: The longest line read: a file with none (``/dev/zero``) fails at once, never filling memory.
    MAX_LINE = 1 << 20

    def __init__(self, path: str, constraint: Expr | None) -> None:
        from cedar.classad_wire.classad import ClassAd
        from cedar.classad_wire.constraints import matches

        self.ads: list[ClassAd] = []

        def take(lines: list[str]) -> None:
            # as condor_q: a line that is not an assignment is passed over, an ad that does
            # not parse is left out (a file of garbage lists no jobs)
            try:
                ad = ClassAd.parse_old("\n".join(line for line in lines if "=" in line))
            except CedarError:
                return
            if len(ad) and matches(constraint, ad):
                self.ads.append(ad)

        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as handle:
                lines: list[str] = []  # the ad being read; ads are separated by blank lines
                number = 0
                while line := handle.readline(self.MAX_LINE + 1):
                    number += 1
                    if len(line) > self.MAX_LINE:
                        raise CommandError(f"{path}: line {number} is over 1 MiB")
                    if line.strip(" \t\r\n"):
                        lines.append(line.rstrip("\n"))
                    elif lines:
                        take(lines)
                        lines = []
                if lines:
                    take(lines)
        except OSError:
            raise CommandError(f"Can't open file of ClassAds: {path}") from None
        #: As a schedd query's (read after the jobs): none, the totals are counted.
        self.summary = None
        #: The clock of the banner and of a running job's RUN_TIME: the schedd's when it
        #: wrote the ads (their ServerTime), else now (observed).
        times = [ad.get("ServerTime") for ad in self.ads]
        self.now = max([t for t in times if isinstance(t, int)], default=int(time.time()))

    def query_iter(self, *args: Any, **kwargs: Any) -> JobAdsFile:
        """The matching jobs, whatever is asked: all of each ad is already here."""
        return self

    def __iter__(self) -> Iterator[ClassAd]:
        return iter(self.ads)


def _local_name() -> str:
    """The local schedd's Name as condor_q's banner shows it (the short host name)."""
    import socket

    return socket.gethostname().split(".")[0]


def main(argv: Sequence[str] | None = None, prog: str = PROG, out: TextIO | None = None) -> int:
    """Entry point (``cedar q ...``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_argv(argv, out or sys.stdout, sys.stderr, prog)


#: ``cedar q``'s command line (scanned and run by the listing tools' one path).
TOOL = ListingTool(
    "[OPTIONS] [CLUSTER | CLUSTER.PROC | OWNER ...] [OPTIONS]", Q_OPTIONS, MISSING, _handle, run
)


def run_argv(argv: Sequence[str], out: TextIO, err: TextIO, prog: str = PROG) -> int:
    """Scan and run a command line, writing to ``out``/``err``; returns the exit code
    (errors as one line on ``err``, an unknown option with the usage)."""
    if any("analyze" in arg for arg in argv):  # -analyze, -better-analyze: another program
        from cedar.cli import analyze

        if analyze.wants_analysis(argv):
            return analyze.main(argv, out)  # guarded there
    return TOOL.run_argv(argv, out, err, prog)
