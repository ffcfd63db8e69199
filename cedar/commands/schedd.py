"""Client of the schedd: job queries, submission, actions, edits and history (spec 05 §3–§6).

This module does no I/O: request ads, protocol coroutines, result types and the pure parts of
locating a schedd and building a submission.  The clients are written once in
:mod:`cedar.commands._async.schedd` (``AsyncSchedd``; ``Schedd`` is generated from it) and
exported by :mod:`cedar.commands`.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar, Union

from cedar.auth.client import CommandSession
from cedar.classad_wire import ClassAd, get_classad, parse_expr, put_classad, unparse
from cedar.classad_wire.expr import Expr, Literal, Paren, to_expr
from cedar.commands.base import (
    AdWriter,
    Batcher,
    ShapedWriter,
    int_value,
    item_parser,
    result_limit_exceeded,
)
from cedar.commands.collector import DaemonLocation, daemon_address, read_address_file
from cedar.commands.constraint import Constraint, constraint_text, constraint_tree
from cedar.config import default_config
from cedar.errors import (
    ClassAdError,
    CommandError,
    InvalidArgument,
    PermissionDenied,
    ProtocolError,
)
from cedar.jobid import JobId, ids_constraint_text, match_job_id, parse_job_id
from cedar.numbers import (
    ACTION_REASON_ATTRIBUTE,
    ActionResult,
    Command,
    DaemonType,
    JobAction,
    SetAttributeFlags,
)
from cedar.record import Record
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Emit, Protocol, Receive, Send, StreamedMessage

if TYPE_CHECKING:  # imported where used: a query loads no submission, spool or transfer code
    from cedar.commands import qmgmt
    from cedar.commands import spool as spool_lib
    from cedar.commands.filetransfer import ProgressCallback
    from cedar.commands.history import history_protocol, history_request
    from cedar.commands.qmgmt import SubmitOutcome
    from cedar.submit_language import Submit, SubmitSettings

__all__ = [
    "ActResult",
    "AdWriter",
    "JobAction",
    "JobSpec",
    "ScheddLocation",
    "ShapedWriter",
    "SubmitDescription",
    "SubmitResult",
    "act_request",
    "history_protocol",
    "history_request",
    "local_schedd",
    "location_address",
    "parse_job_spec",
    "query_request",
]

T = TypeVar("T")

if not TYPE_CHECKING:  # (type checkers see the imports above)

    def __getattr__(name: str) -> object:
        """``history_protocol``/``history_request``, re-exported from :mod:`.history` on
        first use (a job query does not load the history client)."""
        if name in ("history_protocol", "history_request"):
            from cedar.commands import history

            return getattr(history, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Which jobs an action or edit applies to: a cluster (``12``, ``"12"``), a job (``"12.3"``),
#: a list of those (or of ``(cluster, proc)`` pairs), or a constraint string.
JobSpec = int | str | Expr | Iterable[int | str | tuple[int, int]]
#: What ``submit`` accepts: a submit description (text or :class:`Submit`), or a cluster ad
#: (a ClassAd, or a mapping of Python values) with ``itemdata`` as the proc ads.
SubmitDescription = Union["Submit", str, ClassAd, Mapping[str, object]]  # noqa: UP007 - lazy Submit


#: Result code -> text (``ActResult.count(code)``).
RESULT_NAMES = {result.value: result.text for result in ActionResult}


class ActResult(Record):
    """The schedd's answer to an action: totals per result code and, in long mode, per job."""

    __slots__ = (
        "action",
        "ad",
        "totals",
        "jobs",
    )

    def __init__(
        self,
        action: JobAction,
        ad: ClassAd,
        totals: dict[int, int] | None = None,
        jobs: dict[str, int] | None = None,
    ) -> None:
        self.action = action
        self.ad = ad
        self.totals: dict[int, int] = {} if totals is None else totals
        self.jobs: dict[str, int] = {} if jobs is None else jobs

    @property
    def succeeded(self) -> int:
        """Jobs the action applied to."""
        return self.totals.get(1, 0)

    @property
    def changed(self) -> bool:
        """Whether anything was changed (and so committed)."""
        return bool(self.ad.get("ActionResult") == 1)

    def count(self, code: int) -> int:
        """Jobs with result ``code`` (see :data:`RESULT_NAMES`)."""
        return self.totals.get(code, 0)


class SubmitResult(Record):
    """What a submission created: ``cluster``, procs ``first_proc`` … ``+num_procs-1``."""

    __slots__ = (
        "cluster",
        "first_proc",
        "num_procs",
        "cluster_ad",
        "warning",
        "proc_ads",
    )

    def __init__(
        self,
        cluster: int,
        first_proc: int,
        num_procs: int,
        cluster_ad: ClassAd,
        warning: str | None = None,
        proc_ads: list[ClassAd] | None = None,
    ) -> None:
        self.cluster = cluster
        self.first_proc = first_proc
        self.num_procs = num_procs
        self.cluster_ad = cluster_ad
        self.warning = warning
        #: Each job's ad as submitted (cluster attributes overlaid with the proc's): what
        #: :meth:`Schedd.spool` reads the input files from.
        self.proc_ads: list[ClassAd] = [] if proc_ads is None else proc_ads

    def job_ids(self) -> list[str]:
        """``["c.0", "c.1", …]``."""
        return [
            f"{self.cluster}.{p}" for p in range(self.first_proc, self.first_proc + self.num_procs)
        ]


# --------------------------------------------------------------------------- request ads


def _requirements(constraint: Constraint) -> Expr:
    # the bindings' form, ((constraint)), built on the tree: the constraint is parsed only once
    tree = constraint_tree(constraint)
    return Paren(Paren(Literal(True) if tree is None else tree))


def query_request(
    constraint: Constraint = None,
    projection: Iterable[str] = (),
    limit: int = -1,
    *,
    summary_only: bool = False,
    my_jobs: str | None = None,
    send_server_time: bool = True,
    include_cluster_ads: bool = False,
) -> ClassAd:
    """The QUERY_JOB_ADS request ad as the bindings build it (spec 05 §3.2).

    ``include_cluster_ads`` also asks for the factories' cluster ads (``condor_q -factory``
    sends ``IncludeClusterAd = true``; a cluster ad has no ``ProcId``).
    """
    ad = ClassAd()
    ad["Projection"] = "\n".join(projection)
    ad.set_expr("Requirements", _requirements(constraint))
    if limit is not None and limit >= 0:
        ad["LimitResults"] = int(limit)
    ad["SendServerTime"] = send_server_time
    if summary_only:
        ad["SummaryOnly"] = True
    if my_jobs is not None:
        ad["Me"] = my_jobs
        ad["MyJobs"] = "(Owner == Me)"
    if include_cluster_ads:
        ad["IncludeClusterAd"] = True
    return ad


def shared_query_request(
    constraint: Constraint,
    projection: tuple[str, ...],
    limit: int = -1,
    *,
    summary_only: bool = False,
    my_jobs: str | None = None,
    include_cluster_ads: bool = False,
) -> ClassAd:
    """:func:`query_request`, one ad per distinct request, shared: a client repeating a query
    neither re-parses its constraint nor re-encodes the ad (it keeps its encoding).  The ad is
    only ever sent, never changed.  Arguments that cannot be a cache key build a new ad."""
    options = {
        "summary_only": summary_only,
        "my_jobs": my_jobs,
        "include_cluster_ads": include_cluster_ads,
    }
    try:
        return _shared_query_request(constraint, projection, limit, **options)
    except TypeError:  # unhashable (e.g. an expression object as the constraint)
        return query_request(constraint, projection, limit, **options)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=64)
def _shared_query_request(
    constraint: Constraint,
    projection: tuple[str, ...],
    limit: int,
    *,
    summary_only: bool,
    my_jobs: str | None,
    include_cluster_ads: bool,
) -> ClassAd:
    return query_request(
        constraint,
        projection,
        limit,
        summary_only=summary_only,
        my_jobs=my_jobs,
        include_cluster_ads=include_cluster_ads,
    )


def parse_job_spec(
    spec: JobSpec,
) -> tuple[list[tuple[int, int]] | None, str | Expr | None]:
    """Job ids or a constraint from ``"12"``, ``"12.3"``, ``12``, a list of those, or a
    constraint (string or parsed tree, which is handed on as it is).  Returns ``(ids, None)``
    or ``(None, constraint)``; a bare cluster becomes the constraint ``ClusterId == N``."""
    if isinstance(spec, Expr):
        return None, spec
    if isinstance(spec, bool):
        raise InvalidArgument(f"{spec!r} is not a job id, list of job ids or constraint")
    if isinstance(spec, int):
        return None, ids_constraint_text([JobId(spec)])  # raises for a negative or huge cluster
    if isinstance(spec, str):
        job = match_job_id(spec.strip())  # blanks around are forgiven (the bindings refuse)
        if job is None:
            return None, spec
        if job.proc is None:
            return None, ids_constraint_text([job])
        return [(job.cluster, job.proc)], None
    ids: list[tuple[int, int]] = []
    clusters: list[JobId] = []
    for item in spec:
        if isinstance(item, tuple):
            ids.append((int(item[0]), int(item[1])))
            continue
        job = parse_job_id(item.strip() if isinstance(item, str) else str(item))
        if job.proc is None:
            clusters.append(job)
        else:
            ids.append((job.cluster, job.proc))
    if clusters and not ids:
        return None, ids_constraint_text(clusters)
    if clusters:
        raise InvalidArgument("mix either whole clusters or cluster.proc ids, not both")
    return ids, None


def act_request(
    action: JobAction,
    job_spec: JobSpec,
    reason: str | None = None,
    *,
    long: bool = False,
    subcode: int | None = None,
) -> ClassAd:
    """The ACT_ON_JOBS request ad (spec 05 §5.2).  ``subcode`` (a hold only) becomes the
    jobs' ``HoldReasonSubCode``, as ``condor_hold -subcode`` sends it."""
    ids, constraint = parse_job_spec(job_spec)
    ad = ClassAd()
    ad["JobAction"] = int(action)
    attr = ACTION_REASON_ATTRIBUTE.get(action)
    if attr is not None and reason is not None:
        ad[attr] = reason
    if subcode is not None:
        if action != JobAction.Hold:
            raise InvalidArgument("a hold subcode only goes with the hold action")
        ad["HoldReasonSubCode"] = int(subcode)
    if ids is not None:
        ad["ActionIds"] = ",".join(f"{c}.{p}" for c, p in ids)
    else:
        ad.set_expr("ActionConstraint", constraint_tree(constraint) or Literal(False))
    ad["ActionResultType"] = 1 if long else 2
    return ad


# --------------------------------------------------------------------------- protocols


_RESULT_TOTAL = re.compile(r"result_total_([0-9]{1,9})")


def _remote_error(ad: ClassAd, what: str) -> CommandError:
    code = int_value(ad, "ErrorCode")
    try:
        text = ad.get("ErrorString") or ad.get("ErrorReason")
    except ClassAdError:
        text = None
    return CommandError(f"{what} failed on the schedd (ErrorCode {code}): {text or 'no reason'}")


def is_summary(ad: ClassAd) -> bool:
    """Whether an ad of a job query's reply is the summary that ends it (``Owner = 0``)."""
    return int_value(ad, "Owner") == 0


def checked_summary(ad: ClassAd) -> ClassAd:
    """The summary ad, or the remote error it carries (``ErrorCode`` set; spec 05 §3.3)."""
    if int_value(ad, "ErrorCode"):
        raise _remote_error(ad, "the job query")
    return ad


def query_protocol(session: CommandSession, request: ClassAd) -> Protocol[ClassAd]:
    """Send a job query; emit each job ad; return the summary ad (spec 05 §3.3)."""
    writer = session.payload_writer()
    put_classad(writer, request)
    yield Send(writer)
    while True:
        reply = yield Receive()
        ad = get_classad(reply)
        reply.end_of_message()
        if is_summary(ad):
            return checked_summary(ad)
        yield Emit(ad)


#: Ads in one list of :func:`query_lists_protocol` at most.
QUERY_LIST_SIZE = 256


def _one_ad(reader: MessageReader) -> ClassAd:
    """The ad of a job query's message (a message holds exactly one)."""
    ad = get_classad(reader)
    reader.end_of_message()
    return ad


def query_lists_protocol(
    session: CommandSession, request: ClassAd, max_results: int
) -> Protocol[ClassAd]:
    """:func:`query_protocol` emitting lists of ads: the messages the connection already holds
    are read in a plain loop, with no trip through the driver per ad (a reply of 40 000
    one-ad messages costs one driver step per socket read); what was read is emitted before
    each wait, so every ad is handed on as soon as it has arrived.  The driver counts lists:
    ``max_results`` is counted here, ad by ad."""
    writer = session.payload_writer()
    put_classad(writer, request)
    yield Send(writer)
    stream = StreamedMessage(part_size=None, conn=session.conn)
    held, read = stream.held, stream.read
    ads: list[ClassAd] = []
    count = 0
    while True:
        reader = held()
        if reader is None:
            if ads:
                yield Emit(ads)
                ads = []
            ad = yield from read(_one_ad)
        else:
            ad = _one_ad(reader)
        if is_summary(ad):
            if ads:
                yield Emit(ads)
            return checked_summary(ad)
        count += 1
        if count > max_results:
            raise result_limit_exceeded("the schedd", max_results)
        ads.append(ad)
        if len(ads) >= QUERY_LIST_SIZE:
            yield Emit(ads)
            ads = []


def query_chunks_protocol(
    session: CommandSession,
    request: ClassAd,
    shaped: ShapedWriter,
    other: AdWriter,
    chunk_size: int,
    max_results: int,
) -> Protocol[ClassAd]:
    """:func:`query_protocol` for a reader that wants each ad as bytes (a listing's JSON):
    emits lists of them, about ``chunk_size`` bytes a list (:class:`Batcher`, which counts
    ``max_results`` ads); returns the summary ad.

    An ad of a recurring shape goes from its message's bytes to ``shaped`` with no ad made,
    any other through :func:`get_classad` to ``other``.  Messages the connection already
    holds are read without yielding to the driver: a reply of many one-ad messages costs one
    driver step per socket read, not one per ad."""
    writer = session.payload_writer()
    put_classad(writer, request)
    yield Send(writer)
    stream = StreamedMessage(part_size=None, conn=session.conn)  # whole messages, one ad each
    batch = Batcher(chunk_size, max_results, "the schedd")
    parse = item_parser(shaped, other, is_summary, (b"0",), one_per_message=True)
    return checked_summary((yield from batch.protocol(stream, parse)))


def act_protocol(session: CommandSession, request: ClassAd) -> Protocol[ActResult]:
    """ACT_ON_JOBS: request ad, result ad, then confirm and wait for the commit (§5.1)."""
    writer = session.payload_writer()
    put_classad(writer, request)
    yield Send(writer)
    reply = yield Receive()
    if reply.remaining == 8:
        # A refusal is a bare I(0) (a result ad has >= 4 attributes): spec 05 §5.1.
        raise PermissionDenied("the schedd refused the job action (bad request or not allowed)")
    ad = get_classad(reply)
    code = int_value(ad, "JobAction") or int(request["JobAction"])
    try:
        action = JobAction(code)
    except ValueError:
        raise ProtocolError(f"the schedd answered for unknown job action {code}") from None
    result = ActResult(action, ad)
    for name in ad:
        low = name.lower()
        value = int_value(ad, name)
        if value is None:
            continue
        total = _RESULT_TOTAL.fullmatch(low)
        if total:
            result.totals[int(total.group(1))] = value
        elif low.startswith("job_"):
            parts = low.split("_")
            if len(parts) == 3:
                result.jobs[f"{parts[1]}.{parts[2]}"] = value
                result.totals[value] = result.totals.get(value, 0) + 1
    if int_value(ad, "ActionResult") != 1:
        return result
    yield Send(session.conn.writer().put_int(1))
    confirm = yield Receive()
    if confirm.get_int() != 1:
        raise CommandError("the schedd did not commit the job action")
    return result


def qmgmt_body(
    work: Callable[[CedarConnection], Protocol[T]],
) -> Callable[[CommandSession], Protocol[T]]:
    def body(session: CommandSession) -> Protocol[T]:
        if session.raw:
            raise PermissionDenied("QMGMT_WRITE_CMD needs an authenticated (negotiated) session")
        return (yield from work(session.conn))

    return body


def edit_protocol(
    conn: CedarConnection,
    job_spec: JobSpec,
    attr: str,
    value: str,
    flags: int = 0,
    *,
    no_ack: bool = True,
) -> Protocol[int]:
    """Set ``attr`` on the jobs in one transaction; returns the number of jobs changed.

    ``no_ack`` adds NoAck as the bindings do; condor_qedit sends without it, so every call
    is answered (spec 05 §5.5).
    """
    from cedar.commands import qmgmt

    ids, constraint = parse_job_spec(job_spec)
    if no_ack:
        flags |= SetAttributeFlags.NO_ACK
    if ids is not None:
        for cluster, proc in ids:
            yield from qmgmt.set_attribute(conn, cluster, proc, attr, value, flags)
        count = len(ids)
    else:
        count = yield from qmgmt.set_attribute_by_constraint(
            conn, constraint_text(constraint or "false"), attr, value, flags
        )
    yield from qmgmt.commit_transaction(conn)
    yield from qmgmt.close_socket(conn)
    return count


def _value_text(value: object) -> str:
    """An edit value: expression text as given, or a Python value as a ClassAd literal."""
    if isinstance(value, str):
        return value
    return unparse(to_expr(value), old=True)


def _ad_texts(ad: Mapping[str, object] | ClassAd) -> dict[str, str]:
    """A ClassAd (or a mapping of Python values, strings being string literals) as
    name → wire text, for SetAttribute."""
    if not isinstance(ad, ClassAd):
        ad = ClassAd(dict(ad))
    return {name: ad.raw_text(name) for name in ad}


# --------------------------------------------------------------------------- locating


#: What ``Schedd(location)`` accepts: an address (sinful or ``host:port``), a location from
#: ``Collector.locate``, the schedd's (location) ad, or None for the local schedd.
ScheddLocation = str | DaemonLocation | ClassAd | None

_ADDRESS = re.compile(r"[^<>:@\s]+:\d+|<.*>")


def location_address(location: ScheddLocation) -> str | None:
    """The address in what a user passed as the schedd's location (None: look it up)."""
    return daemon_address(location, DaemonType.SCHEDD)


def local_schedd(name: str | None, pool: str | None) -> tuple[str | None, str | None]:
    """Where to find a schedd without the network: ``(address, None)`` when ``name`` is an
    address or the configuration's address files know the local schedd, else ``(None, name)``
    with the name to ask the collector for (``SCHEDD_HOST`` for the local one; spec 06
    §3.2-§3.3).  Reads configuration files: blocking."""
    if name and _ADDRESS.fullmatch(name):
        return name, None
    if name is None and pool is None:
        config = default_config()
        host = config.get("SCHEDD_HOST")
        if host:
            return None, host
        for knob in ("SCHEDD_DAEMON_AD_FILE", "SCHEDD_ADDRESS_FILE"):
            path = config.get(knob)
            address = read_address_file(path) if path else None
            if address:
                return address, None
    return None, name


# --------------------------------------------------------------------------- clients


def act_body(
    action: JobAction | str | int,
    job_spec: JobSpec,
    reason: str | None,
    long: bool,
    subcode: int | None = None,
) -> Callable[[CommandSession], Protocol[ActResult]]:
    request = act_request(JobAction.from_name(action), job_spec, reason, long=long, subcode=subcode)
    return lambda session: act_protocol(session, request)


def edit_work(
    job_spec: JobSpec, attr: str, value: object, flags: int
) -> Callable[[CedarConnection], Protocol[int]]:
    text = _value_text(value)
    return lambda conn: edit_protocol(conn, job_spec, attr, text, flags)


def reschedule_body(session: CommandSession) -> Protocol[None]:
    """The payload-less RESCHEDULE sent after a submit (a hint to the negotiator)."""
    return session.send_empty_payload()


def submit_builder(
    description: SubmitDescription,
    count: int | None,
    itemdata: Sequence[Mapping[str, object]] | None,
    submit_dir: str | None,
    settings: SubmitSettings,
    spool: bool = False,
) -> Callable[[int], qmgmt.Built]:
    """What a submission sends, built once its cluster id is known.

    ``settings`` is not changed: a missing ``submit_method`` means "Python bindings" (2) for
    this submission only.  ``spool`` puts the jobs on the spooling hold (spec 07 §3.1).
    """
    build = _submit_builder(description, count, itemdata, submit_dir, settings, spool)
    if not spool:
        return build
    from cedar.commands import spool as spool_lib
    from cedar.submit_language.factory import JobFactory

    def build_on_hold(cluster: int) -> qmgmt.Built:
        built = build(cluster)
        if isinstance(built, JobFactory):
            raise InvalidArgument("spool=True cannot be combined with late materialization")
        cluster_ad, proc_ads = built
        cluster_copy, proc_copies = dict(cluster_ad), [dict(p) for p in proc_ads]
        spool_lib.spooling_hold(cluster_copy, proc_copies)
        return cluster_copy, proc_copies

    return build_on_hold


def _submit_builder(
    description: SubmitDescription,
    count: int | None,
    itemdata: Sequence[Mapping[str, object]] | None,
    submit_dir: str | None,
    settings: SubmitSettings,
    spool: bool = False,
) -> Callable[[int], qmgmt.Built]:
    from cedar.submit_language import Submit
    from cedar.submit_language.factory import job_factory, max_materialize

    if isinstance(description, str):
        description = Submit(description)
    if isinstance(description, Submit):
        submit = description
        if settings.submit_method is None:
            import dataclasses  # here: a query does not pay for it (start-up, issue 39)

            settings = dataclasses.replace(settings, submit_method=2)
        final = settings
        items: list[Mapping[str, str]] | None = None
        if itemdata is not None:
            items = [{k: str(v) for k, v in item.items()} for item in itemdata]

        def build(cluster: int) -> qmgmt.Built:
            ads = submit.build(  # spool: translated as condor_submit -spool (refuses hold)
                cluster,
                count=count,
                itemdata=items,
                settings=final,
                submit_dir=submit_dir,
                spool=spool,
            )
            if ads.late_materialization and ads.proc_ads:
                return job_factory(
                    submit,
                    ads,
                    max_materialize=max_materialize(submit),
                    itemdata=items,
                    submit_dir=submit_dir,
                )
            return ads.cluster_ad, ads.proc_ads

        return build
    cluster_ad = _ad_texts(description)
    procs = itemdata if itemdata is not None else [{} for _ in range(count or 1)]
    proc_ads = [{"JobStatus": cluster_ad.pop("JobStatus", "1"), **_ad_texts(p)} for p in procs]
    cluster_ad.pop("ProcId", None)
    return lambda cluster: (cluster_ad, proc_ads)


def submit_result(outcome: SubmitOutcome) -> SubmitResult:
    """What :meth:`Schedd.submit` returns for a committed submission.

    Each distinct text is parsed once: the procs of a large cluster repeat the same few.
    """
    parsed: dict[str, Expr] = {}

    def expr(text: str) -> Expr:
        value = parsed.get(text)
        if value is None:
            value = parsed[text] = parse_expr(text, old=True)
        return value

    ad = ClassAd()
    for name, text in outcome.cluster_ad.items():
        ad.set_expr(name, expr(text))
    ad["ClusterId"] = outcome.cluster
    procs = []
    for index, proc_texts in enumerate(outcome.proc_ads):
        proc = ad.copy()
        for name, text in proc_texts.items():
            if name != "ProcId":
                proc.set_expr(name, expr(text))
        proc["ProcId"] = index
        procs.append(proc)
    return SubmitResult(outcome.cluster, 0, outcome.num_procs, ad, outcome.warning, procs)


def spool_body(
    jobs: SubmitResult | Iterable[ClassAd], progress: ProgressCallback | None
) -> Callable[[CommandSession], Protocol[list[spool_lib.SpooledJob]]]:
    """The body of :meth:`Schedd.spool`: each job's input files, from its submitted ad."""
    from cedar.commands import spool as spool_lib

    ads = jobs.proc_ads if isinstance(jobs, SubmitResult) else list(jobs)
    work = []
    for ad in ads:
        cluster, proc = ad.get("ClusterId"), ad.get("ProcId")
        if not isinstance(cluster, int) or not isinstance(proc, int):
            raise ValueError("every job ad to spool needs integer ClusterId and ProcId")
        work.append((cluster, proc, spool_lib.input_items(ad)))
    return lambda session: spool_lib.spool_protocol(session, work, progress=progress)


def retrieve_body(
    job_spec: str | Iterable[str] | int,
    destination: str | os.PathLike[str] | None,
    progress: ProgressCallback | None,
    max_bytes: int | None = None,
) -> Callable[[CommandSession], Protocol[list[spool_lib.RetrievedJob]]]:
    """The body of :meth:`Schedd.retrieve`."""
    from cedar.commands import spool as spool_lib

    constraint = spool_lib.job_ids_constraint(job_spec)
    target = None if destination is None else os.fspath(destination)
    return lambda session: spool_lib.retrieve_protocol(
        session, constraint, destination=target, progress=progress, max_bytes=max_bytes
    )


def job_query_command(with_auth: bool) -> Command:
    """QUERY_JOB_ADS, or QUERY_JOB_ADS_WITH_AUTH to be seen as ourselves (``MyJobs``)."""
    return Command.QUERY_JOB_ADS_WITH_AUTH if with_auth else Command.QUERY_JOB_ADS
