"""condor_q's default tables: the batch view, ``-nobatch``, ``-hold``, ``-run``, ``-idle`` and
the totals lines, byte for byte as condor_q 25.13.2 prints them (``docs/output.md``).

A view is a projection (what to ask the schedd for) plus a row function; the batch view also
needs every job of a batch before it can print the batch's line, so it groups; the per-job
views stream.  Times are printed in the local time zone, as the tools do.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from cedar.errors import CedarError
from cedar.numbers import JOB_SUMMARY_COUNTERS, JobStatus
from cedar.output.dates import banner_date, short_date
from cedar.output.memo import Memo

if TYPE_CHECKING:  # the tables only read ads they are given
    from cedar.classad_wire.classad import ClassAd

__all__ = [
    "BATCH_PROJECTION",
    "FACTORY_CONSTRAINT",
    "FACTORY_PROJECTION",
    "HOLD_CODES_PROJECTION",
    "factory_lines",
    "hold_code_lines",
    "job_key",
    "jobads_banner",
    "jobads_totals_line",
    "QView",
    "batch_lines",
    "q_view",
    "schedd_banner",
    "totals_lines",
]

_LETTER = {status.value: status.letter for status in JobStatus}
#: condor_q -nobatch's two-character ST cell: the letter, then a space, except a job
#: transferring its output, which is " >" (observed on 25.13.2 with -jobads).
_ST_CELL = {value: f"{letter:<2}" for value, letter in _LETTER.items()} | {6: " >"}
_UNIVERSES = {1: "Standard", 2: "Pipe", 3: "Linda", 4: "PVM", 5: "Vanilla", 6: "PVMd",
              7: "Scheduler", 8: "MPI", 9: "Grid", 10: "Java", 11: "Parallel", 12: "Local",
              13: "VM"}  # fmt: skip


_SCALARS = frozenset((int, float, str, bool))


def _get(ad: ClassAd, name: str) -> Any:
    """An attribute's value: a literal as it is (the common case, one lookup), an expression
    evaluated, ``None`` when absent or an error (a table cell never raises)."""
    try:
        value = ad[name]
    except KeyError:  # absent: undefined, without the evaluator
        return None
    except CedarError:  # unparsable text: the evaluator decides
        value = None
    if value.__class__ in _SCALARS:
        return value
    try:
        return ad.eval(name)
    except (CedarError, KeyError):
        return None


def _int(ad: ClassAd, name: str) -> int:
    value = _get(ad, name)
    kind = value.__class__
    if kind is int:
        return value  # type: ignore[no-any-return]
    if kind is bool or not isinstance(value, (int, float)):
        return 0
    return int(value)


def _str(ad: ClassAd, name: str) -> str:
    value = _get(ad, name)
    return value if isinstance(value, str) else ""


def _when(stamp: int) -> str:
    return short_date(stamp) if stamp else "???"


def _duration(seconds: int) -> str:
    seconds = max(0, seconds)
    return (
        f"{seconds // 86400}+{seconds % 86400 // 3600:02d}:{seconds % 3600 // 60:02d}:"
        f"{seconds % 60:02d}"
    )


def job_key(ad: ClassAd) -> tuple[int, int]:
    """(ClusterId, ProcId) of a job ad: condor_q's order."""
    try:  # the common case: two integer literals, one lookup each
        cluster = ad["ClusterId"]
        proc = ad["ProcId"]
        if cluster.__class__ is int and proc.__class__ is int:
            return (cluster, proc)
    except (KeyError, CedarError):  # absent or odd: the careful way below
        pass
    return (_int(ad, "ClusterId"), _int(ad, "ProcId"))


def _run_time(ad: ClassAd, now: int) -> str:
    """condor_q's RUN_TIME: a running, suspended or output-transferring job's current run
    (from the shadow's start, ``ShadowBday``, to the schedd's clock; 0 without a shadow), an
    idle or held job's last run (``LastRemoteWallClockTime``), 0 for a job removed or
    completed.  Observed on 25.13.2 with a job held, released and held again (not the runs'
    sum, the same with ``-currentrun``) and with one ad under each JobStatus (``-jobads``)."""
    status = _int(ad, "JobStatus")
    if status in (2, 6, 7):
        started = _int(ad, "ShadowBday")
        return _duration(max(0, now - started) if started else 0)
    if status in (3, 4):
        return _duration(0)
    return _duration(_int(ad, "LastRemoteWallClockTime"))


def _cpu_time(ad: ClassAd, now: int) -> str:
    """condor_q -cputime's CPU_TIME: the job's user CPU (``RemoteUserCpu``; its system CPU
    is not added: observed)."""
    return _duration(_int(ad, "RemoteUserCpu"))


def _command(ad: ClassAd) -> str:
    """condor_q's CMD: the executable's base name and the arguments."""
    cmd = _str(ad, "Cmd")
    args = _get(ad, "Args")
    if not isinstance(args, str):
        args = _get(ad, "Arguments")
    name = os.path.basename(cmd)
    return f"{name} {args}".rstrip() if isinstance(args, str) and args else name


def _size(ad: ClassAd) -> float:
    usage = _get(ad, "MemoryUsage")
    if isinstance(usage, (int, float)) and not isinstance(usage, bool):
        return float(usage)
    return _int(ad, "ImageSize") / 1024


class QView:
    """One per-job table of condor_q: its heading, projection and row function.

    The ID column is sized from the jobs listed (observed: ``  32.0    `` once a proc id has
    four digits, the heading's `` ID`` padded to match): cluster ids right-aligned in at least
    4, proc ids left-aligned in at least 3.  ``row`` gives the rest of a line.
    """

    def __init__(self, heading: str, projection: list[str], row: Any) -> None:
        self.heading = heading
        self.projection = projection
        self.row = row
        #: What ``row`` reads (the projection but the job id).
        self.inputs = [name for name in projection if name not in ("ClusterId", "ProcId")]

    def lines(self, ads: Iterable[ClassAd], now: int, streaming: bool = False) -> Iterator[str]:
        """The heading and one line per job: sorted by id, each rendered as it arrives and
        kept as text; ``streaming``: in arrival order, printed at once (minimal widths)."""
        if streaming:
            yield " ID".ljust(8) + self.heading + "\n"
            row = Memo(self.inputs, partial(self.row, now=now))
            for ad in ads:
                cluster, proc = job_key(ad)
                yield f"{cluster:>4}.{proc:<3}{row(ad)}\n"
            return
        # The rest of a line depends on the view's attributes but the id: the procs of a
        # cluster mostly share it, so it is computed once per distinct set of texts.
        row = Memo(self.inputs, partial(self.row, now=now))
        rows = [(job_key(ad), row(ad)) for ad in ads]
        rows.sort(key=_first)
        cluster_width = max([4, *(len(str(key[0])) for key, _ in rows)])
        proc_width = max([3, *(len(str(key[1])) for key, _ in rows)])
        yield " ID".ljust(cluster_width + 1 + proc_width) + self.heading + "\n"
        for (cluster, proc), rest in rows:
            yield f"{cluster:>{cluster_width}}.{proc:<{proc_width}}{rest}\n"


def _first(item: tuple[tuple[int, int], str]) -> tuple[int, int]:
    return item[0]


def _nobatch_row(ad: ClassAd, now: int, time_of: Any = _run_time) -> str:
    return (
        f" {_str(ad, 'Owner'):<14} {_when(_int(ad, 'QDate')):>11} "
        f"{time_of(ad, now):>12} {_ST_CELL.get(_int(ad, 'JobStatus'), '? ')} "
        f"{_int(ad, 'JobPrio'):<3} {_size(ad):>4.1f} {_command(ad)}"
    ).rstrip()


def _run_row(ad: ClassAd, now: int, time_of: Any = _run_time) -> str:
    host = _get(ad, "RemoteHost")
    return (
        f" {_str(ad, 'Owner'):<14} {_when(_int(ad, 'QDate')):>11} "
        f"{time_of(ad, now):>12} {host if isinstance(host, str) else ''}"
    ).rstrip()


def _hold_row(ad: ClassAd, now: int) -> str:
    code = _get(ad, "HoldReasonCode")
    sub = _get(ad, "HoldReasonSubCode")
    code_text = str(code) if isinstance(code, int) else ""
    sub_text = f"/{sub}" if isinstance(sub, int) and not isinstance(sub, bool) else ""
    return (
        f" {_str(ad, 'Owner'):<14} {_when(_int(ad, 'EnteredCurrentStatus')):>11} "
        f"{code_text:>4}{sub_text:<5}{_str(ad, 'HoldReason')}"
    ).rstrip()


def _idle_row(ad: ClassAd, now: int) -> str:
    from cedar.output.values import value_text

    universe = _UNIVERSES.get(_int(ad, "JobUniverse"), "Unknown")
    last = _get(ad, "LastRemoteHost")
    return (
        f" {_str(ad, 'Owner'):<14} {universe:<9} {_int(ad, 'RequestCpus'):>4} "
        f"{_int(ad, 'RequestMemory'):>6} {_int(ad, 'NumJobStarts'):>6} "
        f"{value_text(last if last is not None else _undefined())}"
    ).rstrip()


def _undefined() -> Any:
    from cedar.classad_wire.values import Undefined

    return Undefined


_COMMON = ["ClusterId", "ProcId", "Owner", "JobStatus"]
_VIEWS = {
    "nobatch": QView(
        " OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD",
        [
            *_COMMON,
            "QDate",
            "LastRemoteWallClockTime",
            "ShadowBday",
            "JobCurrentStartDate",
            "JobPrio",
            "MemoryUsage",
            "ImageSize",
            "Cmd",
            "Args",
            "Arguments",
        ],  # fmt: skip
        _nobatch_row,
    ),
    "run": QView(
        " OWNER            SUBMITTED     RUN_TIME HOST(S)",
        [
            *_COMMON,
            "QDate",
            "LastRemoteWallClockTime",
            "ShadowBday",
            "JobCurrentStartDate",
            "RemoteHost",
        ],  # fmt: skip
        _run_row,
    ),
    "hold": QView(
        " OWNER          HELD_SINCE  CODE/SUB HOLD_REASON",
        [*_COMMON, "EnteredCurrentStatus", "HoldReasonCode", "HoldReasonSubCode", "HoldReason"],
        _hold_row,
    ),
    "idle": QView(
        " OWNER          UNIVERSE  CPUS MEMORY STARTS LAST_HOST",
        [
            *_COMMON,
            "JobUniverse",
            "RequestCpus",
            "RequestMemory",
            "NumJobStarts",
            "LastRemoteHost",
        ],  # fmt: skip
        _idle_row,
    ),
}

#: The constraint each per-state view adds to the query (condor_q's -run/-hold/-idle).
VIEW_CONSTRAINTS = {"run": "JobStatus == 2", "hold": "JobStatus == 5", "idle": "JobStatus == 1"}


def q_view(name: str, cputime: bool = False) -> QView:
    """The per-job view ``nobatch``, ``run``, ``hold`` or ``idle``; with ``cputime`` (condor_q
    -cputime) the first two show CPU_TIME where they show RUN_TIME."""
    view = _VIEWS[name]
    if not cputime or name not in ("nobatch", "run"):
        return view
    return QView(
        view.heading.replace("RUN_TIME", "CPU_TIME"),
        [*view.projection, "RemoteUserCpu"],
        partial(view.row, time_of=_cpu_time),
    )


# -- the batch view -----------------------------------------------------------------------------

BATCH_PROJECTION = sorted(
    {
        "ClusterId",
        "ProcId",
        "Owner",
        "JobStatus",
        "QDate",
        "JobBatchName",
        "TotalSubmitProcs",
        "JobMaterializeNextProcId",
        "DAGManJobId",
    },  # fmt: skip
    key=str.lower,
)


def _batch_job(ad: ClassAd) -> tuple[str, str, int, int, int, int, int]:
    """What the batch view reads of a job but its proc id: (owner, batch label, cluster,
    status, QDate, TotalSubmitProcs, JobMaterializeNextProcId)."""
    name = _get(ad, "JobBatchName")
    cluster = _int(ad, "ClusterId")
    return (
        _str(ad, "Owner"),
        name if isinstance(name, str) and name else f"ID: {cluster}",
        cluster,
        _int(ad, "JobStatus"),
        _int(ad, "QDate"),
        _int(ad, "TotalSubmitProcs"),
        _int(ad, "JobMaterializeNextProcId"),
    )


_BATCH_INPUTS = [name for name in BATCH_PROJECTION if name != "ProcId"]


def batch_lines(ads: Iterable[ClassAd], count_done: bool = True) -> Iterator[str]:
    """condor_q's default view: one line per (owner, batch name or cluster), batches in the
    order of their first job id (the ads may come in any order: the jobs that share all but
    their proc id are counted together, with their lowest and highest proc id); the HOLD
    column only when some job is held.  ``count_done=False``: DONE stays ``_`` (condor_q
    under ``-constraint``, observed for factory and ordinary clusters alike)."""
    read = Memo(_BATCH_INPUTS, _batch_job)
    # job (but the proc id) -> [jobs, lowest proc id, highest proc id, first seen]
    groups: dict[tuple[str, str, int, int, int, int, int], list[int]] = {}
    for seen, ad in enumerate(ads):
        job = read(ad)
        proc = _proc_id(ad)
        group = groups.get(job)
        if group is None:
            groups[job] = [1, proc, proc, seen]
        else:
            group[0] += 1
            if proc < group[1]:
                group[1] = proc
            elif proc > group[2]:
                group[2] = proc
    if not groups:  # observed: the empty view keeps the narrow OWNER column and HOLD
        yield "OWNER BATCH_NAME      SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS\n"
        return
    # batch -> its groups, in the order the jobs came (the "first/last seen" rules of _done)
    batches: dict[tuple[str, str], list[tuple[tuple[Any, ...], list[int]]]] = {}
    for job, group in sorted(groups.items(), key=lambda item: item[1][3]):
        batches.setdefault((job[0], job[1]), []).append((job, group))
    ordered = sorted(
        batches.items(), key=lambda item: min((job[2], group[1]) for job, group in item[1])
    )
    any_held = any(job[3] == 5 for job in groups)
    hold_head = "   HOLD" if any_held else ""
    yield f"OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE{hold_head}  TOTAL JOB_IDS\n"
    for (owner, label), members in ordered:
        counts = {2: 0, 1: 0, 5: 0}
        per_cluster: dict[int, int] = {}  # TotalSubmitProcs, as first seen
        last_total: dict[int, int] = {}  # as last seen
        next_ids: dict[int, int] = {}  # JobMaterializeNextProcId > 0, as last seen
        present: dict[int, int] = {}
        jobs = 0
        for job, group in members:
            cluster, status, number = job[2], job[3], group[0]
            if status in counts:
                counts[status] += number
            per_cluster.setdefault(cluster, job[5])
            last_total[cluster] = job[5]
            if job[6] > 0:
                next_ids[cluster] = job[6]
            present[cluster] = present.get(cluster, 0) + number
            jobs += number
        total = max(sum(per_cluster.values()), jobs)
        done = _done(next_ids, last_total, present, total, jobs) if count_done else 0
        first = min((job[2], group[1]) for job, group in members)
        last = max((job[2], group[2]) for job, group in members)
        if len(per_cluster) > 1:
            job_ids = f"{first[0]}.{first[1]} ... {last[0]}.{last[1]}"
        elif jobs > 1:
            job_ids = f"{first[0]}.{first[1]}-{last[1]}"
        else:
            job_ids = f"{first[0]}.{first[1]}"

        def cell(value: int) -> str:
            return str(value) if value else "_"

        held = f" {cell(counts[5]):>6}" if any_held else ""
        submitted = min(job[4] for job, _ in members)
        yield (
            f"{owner:<8} {label:<11} {_when(submitted):>11} "
            f"{cell(done):>6} {cell(counts[2]):>6} {cell(counts[1]):>6}{held} "
            f"{total:>6} {job_ids}\n"
        )


def _proc_id(ad: ClassAd) -> int:
    try:
        proc = ad["ProcId"]
    except (KeyError, CedarError):
        return _int(ad, "ProcId")
    return proc if proc.__class__ is int else _int(ad, "ProcId")


def _done(
    next_ids: dict[int, int],
    totals: dict[int, int],
    present: dict[int, int],
    total: int,
    jobs: int,
) -> int:
    """The DONE column: for a factory cluster (late materialization) the procs it has made
    and that have left, ``JobMaterializeNextProcId - present`` (observed: procs not yet made
    are not done); for any other cluster what is missing of ``TotalSubmitProcs``."""
    if not next_ids:
        return total - jobs
    return sum(
        max(0, next_ids.get(cluster, totals[cluster]) - count) for cluster, count in present.items()
    )


# -- the factory view (condor_q -factory) -------------------------------------------------------

#: condor_q -factory's query: the factories' cluster ads only (sent with IncludeClusterAd).
FACTORY_CONSTRAINT = "(ProcId =?= undefined) && (JobMaterializeDigestFile =!= undefined)"
FACTORY_PROJECTION = sorted(
    {
        "ClusterId",
        "JobFactoryPaused",
        "JobMaterializeDigestFile",
        "JobMaterializeLimit",
        "JobMaterializeNextProcId",
        "JobMaterializePaused",
        "JobsHeld",
        "JobsIdle",
        "JobsPresent",
        "JobsRunning",
        "NiceUser",
        "Owner",
        "ProcId",
        "QDate",
    },  # fmt: skip
    key=str.lower,
)
#: The MODE column by ``JobFactoryPaused`` (observed: 0 running, 1 after condor_hold of the
#: cluster; other values were not seen and are printed as the number).
_FACTORY_MODES = {0: "Norm", 1: "Held"}
_FACTORY_HEADING = (
    " OWNER            SUBMITTED  LIMIT PRESNT   RUN    IDLE   HOLD NEXTID MODE DIGEST"
)


#: What condor_q -hold-codes reads of each held job.
HOLD_CODES_PROJECTION = ["ClusterId", "EnteredCurrentStatus", "HoldReason", "HoldReasonCode",
                         "HoldReasonSubCode", "JobStatus", "Owner", "ProcId"]  # fmt: skip


def hold_code_lines(ads: Iterable[ClassAd]) -> Iterator[str]:
    """condor_q -hold-codes's table: the held jobs counted by owner and hold code/subcode (in
    that order), each group shown by its lowest job id with that job's hold time and reason
    (observed: the lowest id, not the earliest held); a heading alone when none is held."""
    groups: dict[tuple[str, int, int], list[Any]] = {}
    for ad in ads:
        code, sub = _get(ad, "HoldReasonCode"), _get(ad, "HoldReasonSubCode")
        code = code if isinstance(code, int) and not isinstance(code, bool) else -1
        sub = sub if isinstance(sub, int) and not isinstance(sub, bool) else -1
        key = job_key(ad)
        group = groups.get((_str(ad, "Owner"), code, sub))
        if group is None:
            groups[(_str(ad, "Owner"), code, sub)] = [1, key, ad]
            continue
        group[0] += 1
        if key < group[1]:
            group[1:] = [key, ad]
    yield "OWNER          CODE/SUB    COUNT  OLDEST_JOB_ID HELD_SINCE  HOLD_REASON\n"
    for (owner, code, sub), (count, (cluster, proc), ad) in sorted(groups.items()):
        code_text = str(code) if code >= 0 else ""
        sub_text = f"/{sub}" if sub >= 0 else ""
        line = (
            f"{owner:<14} {code_text:>4}{sub_text:<5} {count:>8} {f'{cluster}.{proc}':<13} "
            f"{_when(_int(ad, 'EnteredCurrentStatus')):>11} {_str(ad, 'HoldReason')}"
        )
        yield line.rstrip() + "\n"


def factory_lines(ads: Iterable[ClassAd]) -> Iterator[str]:
    """condor_q -factory's table: one line per factory cluster ad, sorted by cluster id, the ID
    column as ``CLUSTER.`` and the DIGEST heading padded to the longest digest path (observed;
    no padding when no factory is listed)."""
    rows = []
    for ad in ads:
        paused = _get(ad, "JobFactoryPaused")
        if not isinstance(paused, int) or isinstance(paused, bool):
            paused = _int(ad, "JobMaterializePaused")
        mode = _FACTORY_MODES.get(paused, str(paused))
        digest = _str(ad, "JobMaterializeDigestFile")
        rest = (
            f" {_str(ad, 'Owner'):<14} {_when(_int(ad, 'QDate')):>11} "
            f"{_int(ad, 'JobMaterializeLimit'):>6} {_int(ad, 'JobsPresent'):>6} "
            f"{_int(ad, 'JobsRunning'):>6} {_int(ad, 'JobsIdle'):>6} {_int(ad, 'JobsHeld'):>6} "
            f"{_int(ad, 'JobMaterializeNextProcId'):>6} {mode:<4} {digest}"
        )
        rows.append((_int(ad, "ClusterId"), rest.rstrip(), len(digest)))
    rows.sort(key=lambda row: row[0])
    cluster_width = max([4, *(len(str(row[0])) for row in rows)])
    digest_width = max([0, *(row[2] for row in rows)])
    heading = _FACTORY_HEADING[: -len("DIGEST")] + "DIGEST".ljust(digest_width)
    yield " ID".ljust(cluster_width + 4) + heading + "\n"
    for cluster, rest, _ in rows:
        yield f"{cluster:>{cluster_width}}.   {rest}\n"


# -- banner and totals --------------------------------------------------------------------------


def schedd_banner(name: str, address: str, when: float | None = None) -> str:
    """The ``-- Schedd: NAME : <addr?... @ date`` line (with its two empty lines before)."""
    short = address.split("?", 1)[0] + "?..." if "?" in address else address
    return f"\n\n-- Schedd: {name} : {short} @ {banner_date(when)}\n"


def _summary_line(label: str, counts: Mapping[str, Any]) -> str:
    def get(key: str) -> int:
        value = counts.get(key, 0)
        return value if isinstance(value, int) else 0

    return (
        f"Total for {label}: {get('Jobs')} jobs; {get('Completed')} completed, "
        f"{get('Removed')} removed, {get('Idle')} idle, {get('Running')} running, "
        f"{get('Held')} held, {get('Suspended')} suspended"
    )


def jobads_banner(path: str, when: float) -> str:
    """condor_q -jobads's ``-- Jobads: FILE @ date`` line (``when``: the ads' ServerTime)."""
    return f"\n\n-- Jobads: {path} @ {banner_date(when)}\n"


def jobads_totals_line(ads: Iterable[ClassAd]) -> str:
    """condor_q -jobads's one totals line, counted from the jobs listed as the schedd counts
    its summary (there is none), padded with spaces to 138 columns as condor_q 25.13.2 writes
    it (observed)."""
    counts: dict[str, int] = {"Jobs": 0}
    for ad in ads:
        counts["Jobs"] += 1
        name = JOB_SUMMARY_COUNTERS.get(_int(ad, "JobStatus"))
        if name is not None:
            counts[name] = counts.get(name, 0) + 1
    return (_summary_line("query", counts) + " ").ljust(138) + "\n"


def totals_lines(summary: ClassAd, me: str | None = None) -> str:
    """The three (or two) ``Total for ...`` lines from the schedd's summary ad."""
    counts = {}
    for name, _ in summary.raw_items():
        value = _get(summary, name)
        if isinstance(value, int):
            counts[name] = value
    lowered = {k.lower(): v for k, v in counts.items()}

    def prefixed(prefix: str) -> dict[str, int]:
        size = len(prefix)
        return {k[size:]: v for k, v in counts.items() if k.lower().startswith(prefix.lower())}

    out = _summary_line("query", counts) + " \n"
    name = me if me is not None else _str(summary, "MyName")
    if name and any(k.startswith("my") for k in lowered):
        out += _summary_line(name, prefixed("My")) + " \n"
    out += _summary_line("all users", prefixed("Allusers")) + "\n"
    return out
