"""Client of the schedd: job queries, submission, actions, edits and history (spec 05 §3–§6).

:class:`Schedd` is blocking, :class:`AsyncSchedd` runs on Trio; both share the protocol
coroutines below and differ only in the driver (``run_command`` / ``run_command_async``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cedar.auth.client import ClientSecurity, CommandSession
from cedar.classad_wire import ClassAd, get_classad, parse_expr, put_classad
from cedar.classad_wire.expr import to_expr
from cedar.commands import qmgmt
from cedar.commands.base import (
    DEFAULT_TIMEOUT,
    iterate_command,
    iterate_command_async,
    run_command,
    run_command_async,
)
from cedar.commands.qmgmt import SubmitOutcome
from cedar.commands.submit_lang import Submit, SubmitSettings
from cedar.errors import CedarError, ClassAdError, CommandError, PermissionDenied, ProtocolError
from cedar.numbers import (
    ACTION_REASON_ATTRIBUTE,
    ActionResult,
    Command,
    JobAction,
    SetAttributeFlags,
)
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Emit, Protocol, Receive, Send

__all__ = [
    "ActResult",
    "AsyncSchedd",
    "JobAction",
    "Schedd",
    "SubmitResult",
    "act_request",
    "history_request",
    "locate_schedd",
    "parse_job_spec",
    "query_request",
]

T = TypeVar("T")
_JOB_ID = re.compile(r"\s*(\d+)(?:\.(-?\d+))?\s*\Z")
#: Attribute-count/ads limits of one history reply message are enforced by get_classad and
#: the connection's message size cap; this bounds how many records we accept in total.
MAX_RESULTS = 10_000_000


#: Result code -> text (``ActResult.count(code)``).
RESULT_NAMES = {result.value: result.text for result in ActionResult}


@dataclass
class ActResult:
    """The schedd's answer to an action: totals per result code and, in long mode, per job."""

    action: JobAction
    ad: ClassAd
    totals: dict[int, int] = field(default_factory=dict)
    jobs: dict[str, int] = field(default_factory=dict)

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


@dataclass
class SubmitResult:
    """What a submission created: ``cluster``, procs ``first_proc`` … ``+num_procs-1``."""

    cluster: int
    first_proc: int
    num_procs: int
    cluster_ad: ClassAd
    warning: str | None = None

    def job_ids(self) -> list[str]:
        """``["c.0", "c.1", …]``."""
        return [f"{self.cluster}.{p}" for p in range(self.first_proc, self.num_procs)]


# --------------------------------------------------------------------------- request ads


def _requirements(constraint: str | None) -> Any:
    text = "true" if constraint is None or not str(constraint).strip() else str(constraint)
    try:
        return parse_expr(f"(({text}))")
    except ClassAdError as exc:
        raise ValueError(f"invalid constraint {text!r}: {exc}") from None


def query_request(
    constraint: str | None = None,
    projection: Iterable[str] = (),
    limit: int = -1,
    *,
    summary_only: bool = False,
    my_jobs: str | None = None,
    send_server_time: bool = True,
) -> ClassAd:
    """The QUERY_JOB_ADS request ad as the bindings build it (spec 05 §3.2)."""
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
    return ad


def parse_job_spec(spec: Any) -> tuple[list[tuple[int, int]] | None, str | None]:
    """Job ids or a constraint from ``"12"``, ``"12.3"``, ``12``, a list of those, or a
    constraint string.  Returns ``(ids, None)`` or ``(None, constraint)``; a bare cluster
    becomes the constraint ``ClusterId == N``."""
    if isinstance(spec, int) and not isinstance(spec, bool):
        return None, f"ClusterId == {spec}"
    if isinstance(spec, str):
        m = _JOB_ID.match(spec)
        if m is None:
            return None, spec
        if m.group(2) is None:
            return None, f"ClusterId == {int(m.group(1))}"
        return [(int(m.group(1)), int(m.group(2)))], None
    ids: list[tuple[int, int]] = []
    clusters: list[int] = []
    for item in spec:
        if isinstance(item, tuple):
            ids.append((int(item[0]), int(item[1])))
            continue
        m = _JOB_ID.match(str(item))
        if m is None:
            raise ValueError(f"{item!r} is not a job id (cluster or cluster.proc)")
        if m.group(2) is None:
            clusters.append(int(m.group(1)))
        else:
            ids.append((int(m.group(1)), int(m.group(2))))
    if clusters and not ids:
        return None, " || ".join(f"ClusterId == {c}" for c in clusters)
    if clusters:
        raise ValueError("mix either whole clusters or cluster.proc ids, not both")
    return ids, None


def act_request(
    action: JobAction, job_spec: Any, reason: str | None = None, *, long: bool = False
) -> ClassAd:
    """The ACT_ON_JOBS request ad (spec 05 §5.2)."""
    ids, constraint = parse_job_spec(job_spec)
    ad = ClassAd()
    ad["JobAction"] = int(action)
    attr = ACTION_REASON_ATTRIBUTE.get(action)
    if attr is not None and reason is not None:
        ad[attr] = reason
    if ids is not None:
        ad["ActionIds"] = ",".join(f"{c}.{p}" for c, p in ids)
    else:
        try:
            ad.set_expr("ActionConstraint", parse_expr(constraint or "false"))
        except ClassAdError as exc:
            raise ValueError(f"invalid constraint {constraint!r}: {exc}") from None
    ad["ActionResultType"] = 1 if long else 2
    return ad


def history_request(
    constraint: str | None = None,
    projection: Iterable[str] = (),
    match: int = -1,
    since: int | str | None = None,
    *,
    stream: bool = True,
    forwards: bool = False,
    scan_limit: int | None = None,
) -> ClassAd:
    """The QUERY_SCHEDD_HISTORY request ad (spec 05 §6.2)."""
    ad = ClassAd()
    ad["Projection"] = [str(p) for p in projection]
    if constraint is not None:
        try:
            ad.set_expr("Requirements", parse_expr(str(constraint)))
        except ClassAdError as exc:
            raise ValueError(f"invalid constraint {constraint!r}: {exc}") from None
    ad["NumJobMatches"] = int(match)
    if since is not None:
        if isinstance(since, int):
            text = f"ClusterID == {since}"
        else:
            m = _JOB_ID.match(since)
            if m is not None and m.group(2) is not None:
                text = f"ClusterID == {m.group(1)} && ProcID == {m.group(2)}"
            elif m is not None:
                text = f"ClusterID == {m.group(1)}"
            else:
                text = since
        ad.set_expr("Since", parse_expr(text))
    if stream:
        ad["StreamResults"] = True
    if forwards:
        ad["HistoryReadForwards"] = True
    if scan_limit is not None:
        ad["ScanLimit"] = int(scan_limit)
    return ad


# --------------------------------------------------------------------------- protocols


_RESULT_TOTAL = re.compile(r"result_total_([0-9]{1,9})")


def _int_value(ad: ClassAd, name: str) -> int | None:
    try:
        value = ad.get(name)
    except ClassAdError:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _remote_error(ad: ClassAd, what: str) -> CommandError:
    code = _int_value(ad, "ErrorCode")
    try:
        text = ad.get("ErrorString") or ad.get("ErrorReason")
    except ClassAdError:
        text = None
    return CommandError(f"{what} failed on the schedd (ErrorCode {code}): {text or 'no reason'}")


def query_protocol(session: CommandSession, request: ClassAd) -> Protocol[ClassAd]:
    """Send a job query; emit each job ad; return the summary ad (spec 05 §3.3)."""
    writer = session.payload_writer()
    put_classad(writer, request)
    yield Send(writer)
    count = 0
    while True:
        reply = yield Receive()
        ad = get_classad(reply)
        reply.end_of_message()
        if _int_value(ad, "Owner") == 0:
            if _int_value(ad, "ErrorCode"):
                raise _remote_error(ad, "the job query")
            return ad
        count += 1
        if count > MAX_RESULTS:
            raise ProtocolError("the schedd sent more job ads than any queue holds")
        yield Emit(ad)


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
    code = _int_value(ad, "JobAction") or int(request["JobAction"])
    try:
        action = JobAction(code)
    except ValueError:
        raise ProtocolError(f"the schedd answered for unknown job action {code}") from None
    result = ActResult(action, ad)
    for name in ad:
        low = name.lower()
        value = _int_value(ad, name)
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
    if _int_value(ad, "ActionResult") != 1:
        return result
    yield Send(session.conn.writer().put_int(1))
    confirm = yield Receive()
    if confirm.get_int() != 1:
        raise CommandError("the schedd did not commit the job action")
    return result


def history_protocol(session: CommandSession, request: ClassAd) -> Protocol[ClassAd]:
    """QUERY_SCHEDD_HISTORY: emit each record; return the final ad (spec 05 §6.3)."""
    writer = session.payload_writer()
    put_classad(writer, request)
    yield Send(writer)
    count = 0
    reader: MessageReader | None = None
    while True:
        if reader is None or reader.at_end():
            reader = yield Receive()
        ad = get_classad(reader)
        owner = _int_value(ad, "Owner")
        if owner == 1:
            continue  # the streaming header: per-record messages follow
        if owner == 0:
            if _int_value(ad, "ErrorCode"):
                raise _remote_error(ad, "the history query")
            malformed = _int_value(ad, "MalformedAds") or 0
            matches = _int_value(ad, "NumJobMatches")
            if malformed:
                raise CommandError(f"the schedd's history holds {malformed} malformed record(s)")
            if matches is not None and matches != count:
                raise ProtocolError(f"history sent {count} records but announced {matches}")
            return ad
        count += 1
        if count > MAX_RESULTS:
            raise ProtocolError("the schedd sent more history records than allowed")
        yield Emit(ad)


def _qmgmt_body(
    work: Callable[[CedarConnection], Protocol[T]],
) -> Callable[[CommandSession], Protocol[T]]:
    def body(session: CommandSession) -> Protocol[T]:
        if session.raw:
            raise PermissionDenied("QMGMT_WRITE_CMD needs an authenticated (negotiated) session")
        return (yield from work(session.conn))

    return body


def edit_protocol(
    conn: CedarConnection,
    job_spec: Any,
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
    ids, constraint = parse_job_spec(job_spec)
    if no_ack:
        flags |= SetAttributeFlags.NO_ACK
    if ids is not None:
        for cluster, proc in ids:
            yield from qmgmt.set_attribute(conn, cluster, proc, attr, value, flags)
        count = len(ids)
    else:
        count = yield from qmgmt.set_attribute_by_constraint(
            conn, constraint or "false", attr, value, flags
        )
    yield from qmgmt.commit_transaction(conn)
    yield from qmgmt.close_socket(conn)
    return count


def _value_text(value: Any) -> str:
    """An edit value: expression text as given, or a Python value as a ClassAd literal."""
    from cedar.classad_wire import unparse

    if isinstance(value, str):
        return value
    return unparse(to_expr(value), old=True)


def _ad_texts(ad: Mapping[str, Any] | ClassAd) -> dict[str, str]:
    """A ClassAd (or a mapping of Python values, strings being string literals) as
    name → wire text, for SetAttribute."""
    if not isinstance(ad, ClassAd):
        ad = ClassAd(dict(ad))
    return {name: ad.raw_text(name) for name in ad}


# --------------------------------------------------------------------------- locating


def locate_schedd(name: str | None = None, pool: str | None = None, *, security: Any = None) -> str:
    """The address of a schedd: ``name`` in ``pool`` (collector lookup), or the local one
    (``SCHEDD_HOST``/address files, then the collector; spec 06 §3.2–§3.3)."""
    from cedar.commands.collector import Collector, _read_address_file

    if name and re.fullmatch(r"[^<>:@\s]+:\d+|<.*>", name):
        return name
    if name is None and pool is None:
        from cedar.config import default_config

        config = default_config()
        host = config.get("SCHEDD_HOST")
        if host:
            name = host
        else:
            for knob in ("SCHEDD_DAEMON_AD_FILE", "SCHEDD_ADDRESS_FILE"):
                path = config.get(knob)
                address = _read_address_file(path) if path else None
                if address:
                    return address
    collector = Collector(pool, security=security)
    return collector.locate("schedd", name).address


# --------------------------------------------------------------------------- clients


# Requests and bodies built once for both clients, which then differ only by their ``await``.


def _act_body(
    action: JobAction | str | int, job_spec: Any, reason: str | None, long: bool
) -> Callable[[CommandSession], Protocol[ActResult]]:
    request = act_request(JobAction.from_name(action), job_spec, reason, long=long)
    return lambda session: act_protocol(session, request)


def _edit_work(
    job_spec: Any, attr: str, value: Any, flags: int
) -> Callable[[CedarConnection], Protocol[int]]:
    text = _value_text(value)
    return lambda conn: edit_protocol(conn, job_spec, attr, text, flags)


def _history_body(
    constraint: str | None, projection: Iterable[str], match: int, since: int | str | None
) -> Callable[[CommandSession], Protocol[ClassAd]]:
    request = history_request(constraint, projection, match, since)
    return lambda session: history_protocol(session, request)


def _reschedule_body(session: CommandSession) -> Protocol[None]:
    """The payload-less RESCHEDULE sent after a submit (a hint to the negotiator)."""
    return session.send_empty_payload()


class _ScheddBase:
    def __init__(
        self,
        address: str | ClassAd | None = None,
        *,
        name: str | None = None,
        pool: str | None = None,
        security: ClientSecurity | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        settings: SubmitSettings | None = None,
    ) -> None:
        if isinstance(address, ClassAd):
            address = address.get("ScheddIpAddr") or address.get("MyAddress")
        self._address = address
        self._name = name
        self._pool = pool
        self.security = security
        self.timeout = timeout
        self.settings = settings
        #: The summary ad of the last completed query.
        self.last_summary: ClassAd | None = None

    @property
    def address(self) -> str:
        """The schedd's sinful string (located on first use)."""
        if self._address is None:
            self._address = locate_schedd(self._name, self._pool, security=self.security)
        return self._address

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._address or self._name or 'local'}>"

    def _build(
        self, description: Any, count: int | None, itemdata: Any, submit_dir: str | None
    ) -> Callable[[int], qmgmt.ProcAds]:
        if isinstance(description, str):
            description = Submit(description)
        if isinstance(description, Submit):
            settings = self.settings or SubmitSettings.from_config()
            if settings.submit_method is None:
                settings.submit_method = 2

            def build(cluster: int) -> qmgmt.ProcAds:
                ads = description.build(
                    cluster,
                    count=count,
                    itemdata=itemdata,
                    settings=settings,
                    submit_dir=submit_dir,
                )
                return ads.cluster_ad, ads.proc_ads

            return build
        cluster_ad = _ad_texts(description)
        procs = itemdata if itemdata is not None else [{} for _ in range(count or 1)]
        proc_ads = [{"JobStatus": cluster_ad.pop("JobStatus", "1"), **_ad_texts(p)} for p in procs]
        cluster_ad.pop("ProcId", None)
        return lambda cluster: (cluster_ad, proc_ads)

    def _query_call(
        self,
        constraint: str | None,
        projection: Iterable[str],
        limit: int,
        with_auth: bool,
        summary_only: bool,
        my_jobs: str | None,
    ) -> tuple[Command, Callable[[CommandSession], Protocol[ClassAd]]]:
        """The command and body of ``query_iter``; the body keeps :attr:`last_summary`."""
        request = query_request(
            constraint, projection, limit, summary_only=summary_only, my_jobs=my_jobs
        )
        command = Command.QUERY_JOB_ADS_WITH_AUTH if with_auth else Command.QUERY_JOB_ADS

        def body(session: CommandSession) -> Protocol[ClassAd]:
            summary = yield from query_protocol(session, request)
            self.last_summary = summary
            return summary

        return command, body

    @staticmethod
    def _result(outcome: SubmitOutcome) -> SubmitResult:
        ad = ClassAd()
        for name, text in outcome.cluster_ad.items():
            ad.set_expr(name, parse_expr(text, old=True))
        return SubmitResult(outcome.cluster, 0, outcome.num_procs, ad, outcome.warning)


class Schedd(_ScheddBase):
    """Blocking schedd client.

    ``Schedd("<127.0.0.1:9618?sock=schedd>")`` talks to that address; ``Schedd(name=…,
    pool=…)`` or ``Schedd()`` locates it as the condor tools do.
    """

    def _run(self, command: int, body: Callable[[CommandSession], Protocol[T]]) -> T:
        return run_command(
            self.address, command, body, security=self.security, timeout=self.timeout
        )

    def _iterate(self, command: int, body: Callable[[CommandSession], Protocol[Any]]) -> Any:
        return iterate_command(
            self.address, command, body, security=self.security, timeout=self.timeout
        )

    def query_iter(
        self,
        constraint: str | None = None,
        projection: Iterable[str] = (),
        limit: int = -1,
        *,
        with_auth: bool = False,
        summary_only: bool = False,
        my_jobs: str | None = None,
    ) -> Iterator[ClassAd]:
        """Stream job ads as they arrive; :attr:`last_summary` is set at the end."""
        call = self._query_call(constraint, projection, limit, with_auth, summary_only, my_jobs)
        yield from self._iterate(*call)

    def query(
        self,
        constraint: str | None = None,
        projection: Iterable[str] = (),
        limit: int = -1,
        **options: Any,
    ) -> list[ClassAd]:
        """All matching job ads."""
        return list(self.query_iter(constraint, projection, limit, **options))

    def transaction(self, work: Callable[[CedarConnection], Protocol[T]]) -> T:
        """Run ``work`` (QMGMT RPCs from :mod:`cedar.commands.qmgmt`) on one QMGMT_WRITE_CMD
        connection; anything not committed when it ends (or raises) is aborted."""
        return self._run(Command.QMGMT_WRITE_CMD, _qmgmt_body(work))

    def submit(
        self,
        description: Submit | str | ClassAd | Mapping[str, Any],
        count: int | None = None,
        *,
        itemdata: Sequence[Mapping[str, Any]] | None = None,
        submit_dir: str | None = None,
    ) -> SubmitResult:
        """Submit a description (or a cluster ad plus ``itemdata`` proc ads) in one
        transaction; on any failure nothing is left in the queue."""
        build = self._build(description, count, itemdata, submit_dir)
        outcome = self.transaction(lambda conn: qmgmt.submit_transaction(conn, build))
        self._reschedule()
        return self._result(outcome)

    def _reschedule(self) -> None:
        with contextlib.suppress(CedarError):  # only a hint to the negotiator
            self._run(Command.RESCHEDULE, _reschedule_body)

    def act(
        self,
        action: JobAction | str | int,
        job_spec: Any,
        reason: str | None = None,
        *,
        long: bool = False,
    ) -> ActResult:
        """Hold/release/remove/… jobs by ids, cluster or constraint (ACT_ON_JOBS)."""
        return self._run(Command.ACT_ON_JOBS, _act_body(action, job_spec, reason, long))

    def hold(self, job_spec: Any, reason: str | None = None) -> ActResult:
        """Hold jobs."""
        return self.act(JobAction.Hold, job_spec, reason)

    def release(self, job_spec: Any, reason: str | None = None) -> ActResult:
        """Release held jobs."""
        return self.act(JobAction.Release, job_spec, reason)

    def remove(self, job_spec: Any, reason: str | None = None) -> ActResult:
        """Remove jobs."""
        return self.act(JobAction.Remove, job_spec, reason)

    def edit(self, job_spec: Any, attr: str, value: Any, flags: int = 0) -> int:
        """Set ``attr`` to ``value`` (expression text, or a Python value) on jobs, in one
        transaction; returns the number of jobs."""
        return self.transaction(_edit_work(job_spec, attr, value, flags))

    def history(
        self,
        constraint: str | None = None,
        projection: Iterable[str] = (),
        match: int = -1,
        since: int | str | None = None,
    ) -> Iterator[ClassAd]:
        """Stream history records, newest first."""
        body = _history_body(constraint, projection, match, since)
        yield from self._iterate(Command.QUERY_SCHEDD_HISTORY, body)


class AsyncSchedd(_ScheddBase):
    """The Trio twin of :class:`Schedd` (same arguments, ``await``-able methods)."""

    async def _run(self, command: int, body: Callable[[CommandSession], Protocol[T]]) -> T:
        return await run_command_async(
            self.address, command, body, security=self.security, timeout=self.timeout
        )

    def _iterate(
        self, command: int, body: Callable[[CommandSession], Protocol[Any]]
    ) -> AsyncIterator[Any]:
        return iterate_command_async(
            self.address, command, body, security=self.security, timeout=self.timeout
        )

    async def query_iter(
        self,
        constraint: str | None = None,
        projection: Iterable[str] = (),
        limit: int = -1,
        *,
        with_auth: bool = False,
        summary_only: bool = False,
        my_jobs: str | None = None,
    ) -> AsyncIterator[ClassAd]:
        """Stream job ads as they arrive."""
        call = self._query_call(constraint, projection, limit, with_auth, summary_only, my_jobs)
        async for ad in self._iterate(*call):
            yield ad

    async def query(
        self,
        constraint: str | None = None,
        projection: Iterable[str] = (),
        limit: int = -1,
        **options: Any,
    ) -> list[ClassAd]:
        """All matching job ads."""
        return [ad async for ad in self.query_iter(constraint, projection, limit, **options)]

    async def transaction(self, work: Callable[[CedarConnection], Protocol[T]]) -> T:
        """As :meth:`Schedd.transaction`."""
        return await self._run(Command.QMGMT_WRITE_CMD, _qmgmt_body(work))

    async def submit(
        self,
        description: Submit | str | ClassAd | Mapping[str, Any],
        count: int | None = None,
        *,
        itemdata: Sequence[Mapping[str, Any]] | None = None,
        submit_dir: str | None = None,
    ) -> SubmitResult:
        """As :meth:`Schedd.submit`."""
        build = self._build(description, count, itemdata, submit_dir)
        outcome = await self.transaction(lambda conn: qmgmt.submit_transaction(conn, build))
        with contextlib.suppress(CedarError):
            await self._run(Command.RESCHEDULE, _reschedule_body)
        return self._result(outcome)

    async def act(
        self,
        action: JobAction | str | int,
        job_spec: Any,
        reason: str | None = None,
        *,
        long: bool = False,
    ) -> ActResult:
        """As :meth:`Schedd.act`."""
        return await self._run(Command.ACT_ON_JOBS, _act_body(action, job_spec, reason, long))

    async def edit(self, job_spec: Any, attr: str, value: Any, flags: int = 0) -> int:
        """As :meth:`Schedd.edit`."""
        return await self.transaction(_edit_work(job_spec, attr, value, flags))

    async def history(
        self,
        constraint: str | None = None,
        projection: Iterable[str] = (),
        match: int = -1,
        since: int | str | None = None,
    ) -> AsyncIterator[ClassAd]:
        """As :meth:`Schedd.history`."""
        body = _history_body(constraint, projection, match, since)
        async for ad in self._iterate(Command.QUERY_SCHEDD_HISTORY, body):
            yield ad
