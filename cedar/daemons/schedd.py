"""The mock schedd's network side: CEDAR commands in, :mod:`cedar.daemons.job_queue` calls out.

One module because it is one daemon's dispatch (the pure model is apart, in
:mod:`cedar.daemons.job_queue`; the collector's, :mod:`cedar.daemons.ad_store`).

One dispatch style, dispatch as data: a module-level table maps a number to an unbound method,
and the dispatcher hands the method the number it came for, so one method serves several
numbers.  :data:`SCHEDD_COMMANDS` maps each daemon command to ``(method, permission, payload)``
(the method reads ``request.command``); :data:`QMGMT_HANDLERS` maps each call inside
``QMGMT_WRITE_CMD`` to a method of ``(request, txn, call, args)``.  Tables rather than
``register`` calls in ``__init__``, because a table is what a reader checks against spec 05
(which number, at which level, by which method), and the collector's commands come from tables
too (``QUERY_TABLES``, ``UPDATES``, ``INVALIDATES``).

Seams (for anyone extending the schedd):

- The job queue model (jobs, transactions, ownership, state machine, history) lives in
  :mod:`cedar.daemons.job_queue`; this module only decodes requests, calls the model and encodes
  replies.  Rules about *what* may change belong in the model, not here.
- A daemon command is one :data:`SCHEDD_COMMANDS` entry; its method is a protocol coroutine
  ``(self, request) -> Protocol[None]``.
- A QMGMT call is one :data:`QMGMT_HANDLERS` entry.  Its method receives the call's arguments
  read by the layout of :data:`cedar.numbers.QMGMT_ARGUMENTS`, and returns the reply writer,
  :data:`NO_REPLY` (the call is answered by nothing, e.g. a deferred ``SetAttribute2``) or
  ``None`` (close the connection).  Add a call by declaring its layout in :mod:`cedar.numbers`,
  writing a ``_call_*`` method and one table entry; a :class:`QueueError` it raises becomes the
  usual ``-1, errno`` reply.

Spec 05 §3–§6 describes the commands served: QUERY_JOB_ADS(_WITH_AUTH), QMGMT_WRITE_CMD,
ACT_ON_JOBS, QUERY_SCHEDD_HISTORY, RESCHEDULE and the direct daemon queries.
"""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Callable
from functools import partial
from types import MethodType
from typing import Any

import trio

from cedar.auth.server_policy import ServerPolicy, real_pool_policy
from cedar.auth.version import CEDAR_PLATFORM_STRING, CEDAR_VERSION_STRING
from cedar.classad_wire import ClassAd, parse_expr, put_classad
from cedar.classad_wire.constraints import matches
from cedar.classad_wire.evaluate import evaluate
from cedar.classad_wire.expr import Expr
from cedar.commands.history import select_records, since_of
from cedar.daemons.ad_store import QueryAnswer, is_match, write_answer
from cedar.daemons.daemon import CommandRequest, Daemon, decode, offload, strict_ad
from cedar.daemons.errors import QueueError
from cedar.daemons.job_queue import (
    ATTRIBUTE_NAME,
    COMPLETED,
    HELD,
    IDLE,
    LIST_SEPARATORS,
    MAX_JOBS,
    REMOVED,
    RUNNING,
    SUSPENDED,
    TRANSFERRING,
    Job,
    JobQueue,
    Transaction,
    int_attr,
    owner_of,
)
from cedar.daemons.spool import handle_spool, handle_transfer_data
from cedar.errors import CedarError, ClassAdError, EvaluationBudgetExceeded, InvalidArgument
from cedar.numbers import (
    JOB_SUMMARY_COUNTERS,
    Arguments,
    Command,
    JobAction,
    QmgmtCall,
    SetAttributeFlags,
    read_arguments,
)
from cedar.stream.primitives import MessageReader, MessageWriter
from cedar.stream.protocol import Protocol, Receive, Send

log = logging.getLogger(__name__)

_SUMMARY_ORDER = [
    "Held",
    "Idle",
    "Jobs",
    "Owner",
    "MyType",
    "Removed",
    "Running",
    "Completed",
    "ErrorCode",
    "Suspended",
    "ServerTime",
    "AllusersHeld",
    "AllusersIdle",
    "AllusersJobs",
    "SchedulerHeld",
    "SchedulerIdle",
    "SchedulerJobs",
    "AllusersRemoved",
    "AllusersRunning",
    "SchedulerRemoved",
    "SchedulerRunning",
    "AllusersCompleted",
    "AllusersSuspended",
    "SchedulerCompleted",
    "AllusersSchedulerHeld",
    "AllusersSchedulerIdle",
    "AllusersSchedulerJobs",
    "AllusersSchedulerRemoved",
    "AllusersSchedulerRunning",
    "AllusersSchedulerCompleted",
]  # noqa: SIM905


def _count(counts: dict[str, int], prefix: str, ad: ClassAd) -> None:
    status = int_attr(ad, "JobStatus")
    sched = "Scheduler" if int_attr(ad, "JobUniverse") == 7 else ""
    counts[f"{prefix}{sched}Jobs"] = counts.get(f"{prefix}{sched}Jobs", 0) + 1
    name = JOB_SUMMARY_COUNTERS.get(status)
    if name and not (sched and name == "Suspended"):
        counts[f"{prefix}{sched}{name}"] = counts.get(f"{prefix}{sched}{name}", 0) + 1


def _error_ad(code: int, text: str, key: str = "ErrorString") -> ClassAd:
    ad = ClassAd()
    ad["Owner"] = 0
    ad["ErrorCode"] = code
    ad[key] = text
    return ad


def _projection(request: ClassAd) -> list[str] | None | int:
    """Projection names; None = all; an int error code (2/3) on a bad projection."""
    if "Projection" not in request:
        return None
    try:
        value = request.get("Projection")
    except ClassAdError:
        return 2
    if isinstance(value, str):
        names = [n for n in LIST_SEPARATORS.split(value) if n]
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        names = [n for n in value if n]
    else:
        return 3
    return names or None


def _record_type(ad: ClassAd) -> str:
    kind = ad.get("EpochAdType")
    return kind.upper() if isinstance(kind, str) else "JOB"


class MockSchedd(Daemon):
    """A schedd for tests, the demo and ``cedar pool`` (see the module docstring)."""

    def __init__(
        self,
        name: str = "mock-schedd",
        *,
        policy: ServerPolicy | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        queue: JobQueue | None = None,
        simulate: bool = False,
        tick: float = 1.0,
    ) -> None:
        super().__init__(name, "SCHEDD", policy=policy or real_pool_policy(), host=host, port=port)
        self.queue = queue or JobQueue(name=name)
        self.simulate = simulate
        self.tick = tick
        for command, (method, permission, payload) in SCHEDD_COMMANDS.items():
            self.register(
                command,
                MethodType(method, self),
                permission=permission,
                payload=payload,
                name=method.__name__,
            )

    def schedd_ad(self) -> ClassAd:
        """The ad this schedd advertises to a collector."""
        ad = ClassAd()
        ad["MyType"] = "Scheduler"
        ad["Name"] = self.name
        ad["Machine"] = self.host
        ad["MyAddress"] = self.address
        ad["ScheddIpAddr"] = self.address
        ad["CondorVersion"] = CEDAR_VERSION_STRING
        ad["CondorPlatform"] = CEDAR_PLATFORM_STRING
        counts: dict[str, int] = {}
        for job in self.queue.all_jobs():
            _count(counts, "", job)
        ad["TotalIdleJobs"] = counts.get("Idle", 0)
        ad["TotalRunningJobs"] = counts.get("Running", 0)
        ad["TotalHeldJobs"] = counts.get("Held", 0)
        ad["TotalJobAds"] = counts.get("Jobs", 0)
        return ad

    async def serve(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Serve, and run the state machine every ``tick`` seconds when simulating."""
        async with trio.open_nursery() as nursery:
            if self.simulate:
                nursery.start_soon(self._ticker)
            await nursery.start(super().serve)
            task_status.started(self)

    async def _ticker(self) -> None:
        while True:
            await trio.sleep(self.tick)
            self.queue.step()

    def submitter_ads(self) -> list[ClassAd]:
        """One ``Submitter`` ad per owner with jobs in the queue, with its job counts."""
        by_owner: dict[str, dict[str, int]] = {}
        for job in self.queue.all_jobs():
            owner = job.get("Owner")
            if isinstance(owner, str):
                _count(by_owner.setdefault(owner, {}), "", job)
        ads = []
        for owner, counts in sorted(by_owner.items()):
            ad = ClassAd()
            ad["MyType"] = "Submitter"
            ad["Name"] = f"{owner}@{self.host}"
            ad["ScheddName"] = self.name
            ad["MyAddress"] = self.address
            ad["IdleJobs"] = counts.get("Idle", 0)
            ad["RunningJobs"] = counts.get("Running", 0)
            ad["HeldJobs"] = counts.get("Held", 0)
            ads.append(ad)
        return ads

    # --- direct daemon queries ---------------------------------------------------------------

    def _handle_direct_query(self, request: CommandRequest) -> Protocol[None]:
        """Spec 05 §2.7: the schedd's own or submitter ads, filtered by ``Requirements`` only.

        Like the real schedd it ignores ``Projection`` and ``LimitResults``; it holds no
        claimed slots, so a slot query (5) gets the empty result.
        """
        reader = yield from request.read_payload()
        try:
            query = yield from decode(reader, strict_ad)
        except CedarError as exc:
            log.info("%s: unreadable direct query (%s); closing", self.name, exc)
            return
        if request.command == Command.QUERY_SCHEDD_ADS:
            candidates = [self.schedd_ad()]
        elif request.command == Command.QUERY_SUBMITTOR_ADS:
            candidates = self.submitter_ads()
        else:
            candidates = []
        requirements = query.get_expr("Requirements")
        try:
            answer = QueryAnswer(
                results=[
                    (ad, None)
                    for ad in candidates
                    if requirements is None
                    or is_match(evaluate(requirements, ad, query, budget=request.budget))
                ]
            )
        except EvaluationBudgetExceeded as exc:
            log.info("%s: direct query refused: %s; closing", self.name, exc)
            return
        yield Send(write_answer(request.writer(), answer))

    # --- job queries -----------------------------------------------------------------------

    def _handle_query(self, request: CommandRequest) -> Protocol[None]:
        reader = yield from request.read_payload()
        try:
            query = yield from decode(reader, strict_ad)
        except CedarError as exc:
            log.info("%s: unreadable job query (%s); closing", self.name, exc)
            return
        projection = _projection(query)
        if isinstance(projection, int):
            yield Send(
                self._ad(
                    request,
                    _error_ad(projection, "Unable to convert projection list to string list"),
                )
            )
            return
        requirements = query.get_expr("Requirements")
        limit = int_attr(query, "LimitResults", -1) if "LimitResults" in query else -1
        send_time = query.get("SendServerTime") is not False
        summary_only = query.get("SummaryOnly") is True
        with_clusters = query.get("IncludeClusterAd") is True
        my_name = self._my_name(request, query)
        now = int(time.time())
        allusers: dict[str, int] = {}
        counts: dict[str, int] = {}
        mine: dict[str, int] = {}

        def select() -> list[ClassAd]:
            """Count and pick the matching jobs (in a worker thread: constraints cost)."""
            selected: list[ClassAd] = []
            if with_clusters:  # factory cluster ads: matched, not counted as jobs
                for ad in self.queue.factory_ads():
                    if matches(requirements, ad, request.budget):
                        selected.append(ad)
            for ad in self.queue.all_jobs():
                _count(allusers, "Allusers", ad)
                if my_name is not None:
                    key = "User" if "@" in my_name else "Owner"
                    if ad.get(key) != my_name:
                        continue
                    _count(mine, "My", ad)
                if not matches(requirements, ad, request.budget):
                    continue
                if limit >= 0 and len(selected) >= limit:
                    continue
                _count(counts, "", ad)
                selected.append(ad)
            return selected

        try:
            selected = yield from offload(select)
        except EvaluationBudgetExceeded as exc:
            yield Send(self._ad(request, _error_ad(errno.E2BIG, f"query refused: {exc}")))
            return
        for ad in [] if summary_only else selected:
            writer = request.writer()
            put_classad(
                writer,
                ad,
                projection=projection,
                server_time=now if send_time else None,
                exclude_private=True,
            )
            yield Send(writer)
        summary = ClassAd()
        for name in _SUMMARY_ORDER:
            if name == "Owner":
                summary["Owner"] = 0
            elif name == "MyType":
                summary["MyType"] = "Summary"
            elif name == "ErrorCode":
                summary["ErrorCode"] = 0
            elif name == "ServerTime":
                summary["ServerTime"] = now
            elif name.startswith("Allusers"):
                summary[name] = allusers.get(name, 0)
            else:
                summary[name] = counts.get(name, 0)
        if my_name is not None:
            for name in _SUMMARY_ORDER:
                if name in ("Owner", "MyType", "ErrorCode", "ServerTime") or name.startswith(
                    "Allusers"
                ):
                    continue
                summary["My" + name] = mine.get("My" + name, 0)
            summary["MyName"] = my_name
        yield Send(self._ad(request, summary))

    def _my_name(self, request: CommandRequest, query: ClassAd) -> str | None:
        if "MyJobs" not in query:
            return None
        value = query.get("MyJobs")
        if value is False:
            return None
        if value is True:
            return request.user
        if request.authenticated and request.user:
            return request.user
        me = query.get("Me")
        return me if isinstance(me, str) else None

    @staticmethod
    def _ad(request: CommandRequest, ad: ClassAd) -> MessageWriter:
        writer = request.writer()
        put_classad(writer, ad)
        return writer

    # --- queue management ------------------------------------------------------------------

    def _handle_qmgmt(self, request: CommandRequest) -> Protocol[None]:
        """The RPC loop; an unknown call or wire error closes (aborting the transaction)."""
        txn = Transaction(self.queue, request.user)
        auto = False  # after a commit, changes apply one by one (spec 05 §4.1)
        first = request.payload_in_hand
        while True:
            try:
                if first:
                    reader = yield from request.read_payload()
                    first = False
                    if reader.at_end():
                        reader = yield Receive()
                else:
                    reader = yield Receive()
                call = reader.get_int()
            except CedarError:
                return  # disconnect: the transaction is dropped (aborted)
            try:
                # a constraint over the whole queue, or a commit that builds a factory's procs
                # (up to factories.MAX_FACTORY_PROCS): off the event loop
                if call in _SCANS or (txn.factories and call in _COMMITS):
                    reply = yield from offload(partial(self._rpc, request, txn, call, reader))
                else:
                    reply = self._rpc(request, txn, call, reader)
            except CedarError as exc:
                log.info("%s: bad QMGMT request (%s); closing", self.name, exc)
                return
            if reply is None:
                return
            if isinstance(reply, _NoReply):
                if auto and call in (QmgmtCall.SetAttribute2, QmgmtCall.SetAttribute):
                    self._auto_commit(txn)
                continue
            if call in (QmgmtCall.CommitTransaction, QmgmtCall.CommitTransactionNoFlags):
                auto = True
            elif call == QmgmtCall.BeginTransaction:
                auto = False
            elif auto and call in _WRITES:
                self._auto_commit(txn)
            yield Send(reply)

    @staticmethod
    def _auto_commit(txn: Transaction) -> None:
        try:
            txn.commit()
        except QueueError:
            txn.clear()

    def _rpc(
        self, request: CommandRequest, txn: Transaction, call: int, r: MessageReader
    ) -> QmgmtReply:
        """Dispatch one call through :data:`QMGMT_HANDLERS`; queue errors become replies."""
        handler = QMGMT_HANDLERS.get(call)
        if handler is None:
            log.info("%s: unknown QMGMT call %d; closing", self.name, call)
            return None
        try:
            return handler(self, request, txn, call, read_arguments(call, r))
        except QueueError as exc:
            writer = request.writer().put_int(-1).put_int(exc.errno)
            if call == QmgmtCall.NewCluster:
                put_classad(writer, _error_ad(exc.errno, str(exc), "ErrorReason"))
            return writer
        except EvaluationBudgetExceeded as exc:
            log.info("%s: QMGMT call %d refused: %s", self.name, call, exc)
            return request.writer().put_int(-1).put_int(errno.E2BIG)
        except ClassAdError:
            return request.writer().put_int(-1).put_int(errno.EINVAL)

    # QMGMT calls (see QMGMT_HANDLERS); the call number is already read and passed in.

    def _call_close(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        return None

    def _call_capabilities(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        caps = ClassAd()
        caps["UseJobsets"] = False
        caps["LateMaterialize"] = True
        caps["LateMaterializeVersion"] = 2
        return self._ad(request, caps)

    def _call_new_cluster(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        if not request.authenticated:
            raise QueueError(errno.EACCES, "anonymous users may not submit")
        return request.writer().put_int(txn.new_cluster())

    def _call_send_materialize_data(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        data = args.get("data")
        try:
            path, rows = txn.send_materialize_data(
                args.int("cluster"),
                data if isinstance(data, bytes) else b"",
                self.queue.factory_spool,
            )
        except QueueError as exc:  # this reply puts the file and row count before rval
            return request.writer().put_string("").put_int(0).put_int(-1).put_int(exc.errno)
        return request.writer().put_string(path).put_int(rows).put_int(0)

    def _call_set_job_factory(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        txn.set_job_factory(args.int("cluster"), args.int("maximum"), args.text("digest"))
        return request.writer().put_int(0)

    def _call_new_proc(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        return request.writer().put_int(txn.new_proc(args.int("cluster")))

    def _call_set_attribute(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        cluster, proc = args.int("cluster"), args.int("proc")
        value, name = args.text("value"), args.text("name")
        flags = args.int("flags") if call == QmgmtCall.SetAttribute2 else 0
        if flags & SetAttributeFlags.NO_ACK:  # SetAttribute_NoAck: errors surface at commit
            if txn.deferred is None:
                try:
                    txn.set_attribute(cluster, proc, name, value)
                except QueueError as exc:
                    txn.deferred = exc
            return NO_REPLY
        txn.set_attribute(cluster, proc, name, value)
        return request.writer().put_int(0)

    def _call_set_by_constraint(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        constraint, value, name = args.text("constraint"), args.text("value"), args.text("name")
        flags = args.int("flags") if call == QmgmtCall.SetAttributeByConstraint2 else 0
        if not ATTRIBUTE_NAME.match(name) or not value or "\n" in value or "\r" in value:
            raise QueueError(errno.EINVAL, "invalid attribute or value")
        count = txn.set_by_constraint(constraint, name, value, flags, request.budget)
        return request.writer().put_int(count)

    def _call_delete_attribute(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        cluster, proc, name = args.int("cluster"), args.int("proc"), args.text("name")
        txn.delete_attribute(cluster, proc, name)
        return request.writer().put_int(1)

    def _call_get_job_ad(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        ad = txn.job_ad(args.int("cluster"), args.int("proc"))
        if ad is None:
            return request.writer().put_int(-1).put_int(0)
        writer = request.writer().put_int(0)
        put_classad(writer, ad, exclude_private=True)
        return writer

    def _call_get_all_jobs(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        constraint, projection = args.text("constraint"), args.text("projection")
        expr = parse_expr(constraint or "true", old=True)
        writer = request.writer()
        names = [n for n in LIST_SEPARATORS.split(projection) if n] or None
        for ad in self.queue.all_jobs():
            if matches(expr, ad, request.budget):
                writer.put_int(0)
                put_classad(writer, ad, projection=names, server_time=int(time.time()))
        return writer.put_int(-1).put_int(0)

    def _call_begin(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        txn.clear()
        return request.writer().put_int(0)

    _call_abort = _call_begin  # both drop what the transaction holds

    def _call_commit(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        try:
            txn.commit()
        except QueueError as exc:
            txn.clear()
            writer = request.writer().put_int(-1).put_int(-exc.errno)
            put_classad(writer, _error_ad(2, str(exc), "ErrorReason"))
            return writer
        writer = request.writer().put_int(0)
        put_classad(writer, ClassAd())
        return writer

    def _call_set_effective_owner(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        owner = args.text("owner")
        if owner and owner_of(owner) == owner_of(request.user):
            return request.writer().put_int(0)
        raise QueueError(errno.EACCES, "SetEffectiveOwner refused")

    def _call_destroy_cluster(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        return request.writer().put_int(-1).put_int(0)

    def _call_get_attribute(
        self, request: CommandRequest, txn: Transaction, call: int, args: Arguments
    ) -> QmgmtReply:
        cluster, proc, name = args.int("cluster"), args.int("proc"), args.text("name")
        ad = txn.job_ad(cluster, proc)
        w = request.writer()
        if ad is None:
            return w.put_int(-1).put_int(errno.ENOENT)
        if name not in ad:
            return w.put_int(-1).put_int(errno.EINVAL)
        pending = (cluster, proc) in txn.edits or cluster in txn.new_clusters
        rval = 1 if pending else 0
        if call == QmgmtCall.GetAttributeExpr:
            return w.put_int(rval).put_string(ad.raw_text(name))
        try:
            value = evaluate(ad.lookup(name), ad)
        except CedarError:
            value = None
        if call == QmgmtCall.GetAttributeString:
            if not isinstance(value, str):
                return w.put_int(-1).put_int(errno.EINVAL)
            return w.put_int(rval).put_string(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return w.put_int(-1).put_int(errno.EINVAL)
        if call == QmgmtCall.GetAttributeInt:
            if not isinstance(value, int):
                return w.put_int(-1).put_int(errno.EINVAL)
            return w.put_int(rval).put_int(value)
        return w.put_int(rval).put_double(float(value))

    # --- actions ---------------------------------------------------------------------------

    def _handle_act(self, request: CommandRequest) -> Protocol[None]:
        reader = yield from request.read_payload()
        refuse = request.writer().put_int(0)
        try:
            ad = yield from decode(reader, strict_ad)
            action = JobAction(int_attr(ad, "JobAction", -1))
        except (CedarError, ValueError):
            yield Send(refuse)
            return
        if "ActionIds" in ad and "ActionConstraint" in ad or not request.authenticated:
            yield Send(refuse)
            return
        try:
            results, apply = yield from offload(
                partial(self.queue.act, request.user, action, ad, request.budget)
            )
        except (QueueError, EvaluationBudgetExceeded) as exc:
            log.info("%s: action refused: %s", self.name, exc)
            yield Send(refuse)
            return
        long = int_attr(ad, "ActionResultType", 2) == 1
        result = ClassAd()
        if long:
            for (c, p), code in results.items():
                result[f"job_{c}_{p}"] = code
        result["JobAction"] = int(action)
        result["TotalJobAds"] = len(self.queue.jobs)
        ok = any(code == 1 for code in results.values())
        result["ActionResult"] = 1 if ok else 0
        if not long:
            for code in range(7):
                result[f"result_total_{code}"] = sum(1 for v in results.values() if v == code)
        result["ActionResultType"] = 1 if long else 2
        result["IsQueueSuperUser"] = owner_of(request.user) in self.queue.superusers
        yield Send(self._ad(request, result))
        if not ok:
            return
        try:
            confirm = yield Receive()
            if confirm.get_int() != 1:
                return
        except CedarError:
            return
        apply()
        yield Send(request.writer().put_int(1))

    # --- history ---------------------------------------------------------------------------

    def _handle_history(self, request: CommandRequest) -> Protocol[None]:
        """QUERY_SCHEDD_HISTORY: the job history or the epoch history (spec 08 §2-§4)."""
        reader = yield from request.read_payload()
        try:
            query = yield from decode(reader, strict_ad)
        except CedarError as exc:
            log.info("%s: unreadable history query (%s); closing", self.name, exc)
            return
        projection = _projection(query)
        if isinstance(projection, int):
            yield Send(self._ad(request, _error_ad(projection, "bad projection")))
            return
        chosen = self._history_file(query)
        if isinstance(chosen, ClassAd):
            yield Send(self._ad(request, chosen))
            return
        forwards = query.get("HistoryReadForwards") is True
        try:
            since_of(query)
        except InvalidArgument as exc:
            log.info("%s: history query refused (%s); closing", self.name, exc)
            return  # the real helper exits: the client sees a silent close (spec 08 §3.4)
        if forwards and "Since" in query:
            log.info("%s: history query with Since and forwards; closing", self.name)
            return
        stream = query.get("StreamResults") is True
        with self.queue.lock:
            records = [(ad, _record_type(ad)) for ad in chosen]
        if not forwards:
            records.reverse()
        writer = request.writer()
        if stream:
            header = ClassAd()
            header["Owner"] = 1
            header["StreamResults"] = True
            put_classad(writer, header)
            yield Send(writer)
            writer = request.writer()

        def test(expr: Expr | None, ad: ClassAd) -> bool:
            return matches(expr, ad, request.budget)

        try:
            found = yield from offload(lambda: select_records(records, query, test))
        except EvaluationBudgetExceeded as exc:
            yield Send(self._ad(request, _error_ad(errno.E2BIG, f"history query refused: {exc}")))
            return
        scanned, selected = found.examined, found.selected
        sent = 0
        for ad in selected:
            put_classad(writer, ad, projection=projection, exclude_private=True)
            sent += 1
            if stream:
                yield Send(writer)
                writer = request.writer()
        final = ClassAd()
        final["Owner"] = 0
        final["AdCount"] = scanned
        final["MalformedAds"] = 0
        final["NumJobMatches"] = sent
        put_classad(writer, final)
        yield Send(writer)

    def _history_file(self, query: ClassAd) -> list[ClassAd] | ClassAd:
        """The records of the history file a request names, or the error ad a real schedd with
        the default configuration sends (spec 08 §2.2, §3.4)."""
        source = query.get("HistoryRecordSource")
        subsystem = query.get("DaemonHistorySubsys")
        source = source.upper() if isinstance(source, str) and source else None
        if source == "DAEMON" and not (isinstance(subsystem, str) and subsystem):
            return _error_ad(6, "Specified daemon history source without subsystem.")
        parts = [p for p in (subsystem if source == "DAEMON" else None, source) if p]
        knob = "_".join([*(str(p).upper() for p in parts), "HISTORY"])
        if query.get("HistoryFromDir") is True:
            knob += "_DIR"
        records = {"HISTORY": self.queue.history, "JOB_EPOCH_HISTORY": self.queue.epochs}
        if knob not in records:
            return _error_ad(
                5,
                f"{knob} undefined in remote configuration. No such related history to be queried.",
            )
        return records[knob]

    def _handle_spool(self, request: CommandRequest) -> Protocol[None]:
        """SPOOL_JOB_FILES_WITH_PERMS (488): the input sandboxes (:mod:`cedar.daemons.spool`)."""
        return handle_spool(self.queue, self.queue.spool, request)

    def _handle_transfer_data(self, request: CommandRequest) -> Protocol[None]:
        """TRANSFER_DATA_WITH_PERMS (489): the output sandboxes (:mod:`cedar.daemons.spool`)."""
        return handle_transfer_data(self.queue, self.queue.spool, request)

    def _handle_reschedule(self, request: CommandRequest) -> Protocol[None]:
        if request.payload_in_hand:
            yield from request.read_payload()
        if self.simulate:
            self.queue.step()


class _NoReply:
    """The marker a QMGMT method returns when the call gets no reply."""

    def __repr__(self) -> str:
        return "NO_REPLY"


NO_REPLY = _NoReply()
#: What a QMGMT method returns: the reply, :data:`NO_REPLY`, or ``None`` to close.
QmgmtReply = MessageWriter | _NoReply | None
QmgmtMethod = Callable[[MockSchedd, CommandRequest, Transaction, int, Arguments], QmgmtReply]

#: ``{command: (method, permission, payload)}``: every daemon command the mock schedd serves
#: (spec 05 §3-§6, 07 §4.1), at the level the reference registers it at.  519, 1112 and 478
#: force authentication by default (FORCE_AUTHENTICATION), as do 488/489 (spec 07 §4.1).
#: RESCHEDULE's client sends no payload.
SCHEDD_COMMANDS: dict[
    Command, tuple[Callable[[MockSchedd, CommandRequest], Protocol[None]], str, bool]
] = {
    Command.QUERY_JOB_ADS: (MockSchedd._handle_query, "READ", True),
    Command.QUERY_JOB_ADS_WITH_AUTH: (MockSchedd._handle_query, "READ", True),
    Command.QMGMT_WRITE_CMD: (MockSchedd._handle_qmgmt, "WRITE", True),
    Command.ACT_ON_JOBS: (MockSchedd._handle_act, "WRITE", True),
    Command.QUERY_SCHEDD_HISTORY: (MockSchedd._handle_history, "READ", True),
    Command.RESCHEDULE: (MockSchedd._handle_reschedule, "WRITE", False),
    Command.SPOOL_JOB_FILES_WITH_PERMS: (MockSchedd._handle_spool, "WRITE", True),
    Command.TRANSFER_DATA_WITH_PERMS: (MockSchedd._handle_transfer_data, "WRITE", True),
    Command.QUERY_SCHEDD_ADS: (MockSchedd._handle_direct_query, "READ", True),
    Command.QUERY_SUBMITTOR_ADS: (MockSchedd._handle_direct_query, "READ", True),
    Command.QUERY_STARTD_ADS: (MockSchedd._handle_direct_query, "READ", True),
}

#: ``{call: method}`` for every QMGMT call the mock schedd serves; any other call closes.
QMGMT_HANDLERS: dict[int, QmgmtMethod] = {
    QmgmtCall.CloseSocket: MockSchedd._call_close,
    QmgmtCall.GetCapabilities: MockSchedd._call_capabilities,
    QmgmtCall.NewCluster: MockSchedd._call_new_cluster,
    QmgmtCall.NewProc: MockSchedd._call_new_proc,
    QmgmtCall.SendMaterializeData: MockSchedd._call_send_materialize_data,
    QmgmtCall.SetJobFactory: MockSchedd._call_set_job_factory,
    QmgmtCall.SetAttribute: MockSchedd._call_set_attribute,
    QmgmtCall.SetAttribute2: MockSchedd._call_set_attribute,
    QmgmtCall.SetAttributeByConstraint: MockSchedd._call_set_by_constraint,
    QmgmtCall.SetAttributeByConstraint2: MockSchedd._call_set_by_constraint,
    QmgmtCall.DeleteAttribute: MockSchedd._call_delete_attribute,
    QmgmtCall.GetAttributeInt: MockSchedd._call_get_attribute,
    QmgmtCall.GetAttributeFloat: MockSchedd._call_get_attribute,
    QmgmtCall.GetAttributeString: MockSchedd._call_get_attribute,
    QmgmtCall.GetAttributeExpr: MockSchedd._call_get_attribute,
    QmgmtCall.GetJobAd: MockSchedd._call_get_job_ad,
    QmgmtCall.GetAllJobsByConstraint: MockSchedd._call_get_all_jobs,
    QmgmtCall.BeginTransaction: MockSchedd._call_begin,
    QmgmtCall.AbortTransaction: MockSchedd._call_abort,
    QmgmtCall.CommitTransaction: MockSchedd._call_commit,
    QmgmtCall.CommitTransactionNoFlags: MockSchedd._call_commit,
    QmgmtCall.SetEffectiveOwner: MockSchedd._call_set_effective_owner,
    QmgmtCall.DestroyCluster: MockSchedd._call_destroy_cluster,
}
#: Calls that evaluate a constraint over every job (run through :func:`offload`).
_SCANS = {
    QmgmtCall.GetAllJobsByConstraint,
    QmgmtCall.SetAttributeByConstraint,
    QmgmtCall.SetAttributeByConstraint2,
}
_COMMITS = frozenset({QmgmtCall.CommitTransaction, QmgmtCall.CommitTransactionNoFlags})
_WRITES = {
    QmgmtCall.SetAttribute,
    QmgmtCall.SetAttributeByConstraint,
    QmgmtCall.SetAttributeByConstraint2,
    QmgmtCall.DeleteAttribute,
}

# Re-exported for callers that imported the model from here before the split.
__all__ = [
    "COMPLETED",
    "HELD",
    "IDLE",
    "MAX_JOBS",
    "NO_REPLY",
    "QMGMT_HANDLERS",
    "REMOVED",
    "SCHEDD_COMMANDS",
    "RUNNING",
    "SUSPENDED",
    "TRANSFERRING",
    "Job",
    "JobQueue",
    "MockSchedd",
    "QueueError",
    "Transaction",
]
