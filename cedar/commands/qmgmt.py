"""The queue-management RPC protocol (QMGMT_WRITE_CMD / QMGMT_READ_CMD, spec 05 §4).

Each function here is one RPC as a protocol coroutine over an already started command
(:class:`~cedar.stream.connection.CedarConnection` after ``start_command``): it sends
``I(rpc) …`` EOM and reads the reply ``I(rval) [I(terrno)] [payload]`` EOM (§4.2).  Errors
become :class:`QmgmtError` subclasses chosen by the schedd's errno.  :func:`submit_transaction`
composes them into the submission sequence of §4.7.
"""

from __future__ import annotations

import errno
import re
import struct
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

from cedar.classad_wire import ClassAd, get_classad, parse_expr
from cedar.commands.errors import (
    InvalidRequest,
    JobNotFound,
    QmgmtError,
    QmgmtPermissionDenied,
    SubmitRejected,
)
from cedar.errors import (
    CedarError,
    ClassAdError,
    ConnectionClosed,
    InvalidArgument,
    ProtocolError,
)
from cedar.numbers import (
    QMGMT_ARGUMENTS,
    Arg,
    ArgValue,
    QmgmtCall,
    SetAttributeFlags,
    write_arguments,
)
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageReader, MessageWriter
from cedar.stream.protocol import Protocol, Receive, Send

if TYPE_CHECKING:  # imported where used: a query or an edit loads no submission code
    from cedar.submit_language.factory import JobFactory

__all__ = [
    "CommitResult",
    "InvalidRequest",
    "JobNotFound",
    "QmgmtError",
    "QmgmtPermissionDenied",
    "SetAttributeFlags",
    "SubmitRejected",
    "abort_transaction",
    "begin_transaction",
    "check_attribute",
    "close_socket",
    "commit_transaction",
    "delete_attribute",
    "get_all_jobs_by_constraint",
    "get_attribute_expr",
    "get_attribute_float",
    "get_attribute_int",
    "get_attribute_string",
    "get_capabilities",
    "get_job_ad",
    "new_cluster",
    "new_proc",
    "send_materialize_data",
    "set_attribute",
    "set_attribute_by_constraint",
    "set_effective_owner",
    "set_job_factory",
    "submit_transaction",
]

#: Procs per pipeline window of a submission; at most two windows of NewProc answers are left
#: unread while it sends on (a few KB of replies: far below any socket buffer, so neither side
#: can block the other).
PIPELINE_WINDOW = 64
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: A CEDAR integer (8 bytes, big-endian; qmgmt ids and call numbers fit the signed range).
_INT = struct.Struct(">q")
#: GetAllJobsByConstraint is answered in one message; cap the ads we accept from it.
MAX_JOBS_IN_ONE_REPLY = 1_000_000


_NEW_CLUSTER_ERRORS = {
    -2: "MAX_JOBS_SUBMITTED exceeded",
    -3: "MAX_JOBS_PER_OWNER exceeded",
    -4: "MAX_JOBS_PER_SUBMISSION exceeded",
    -5: "user is disabled",
    -6: "unknown user",
    -7: "user not allowed to submit",
    -10: "internal error in the schedd",
}


def _error(what: str, rval: int, terrno: int, reason: str | None = None) -> QmgmtError:
    code = abs(terrno)
    if code in (errno.EACCES, errno.EPERM):
        cls: type[QmgmtError] = QmgmtPermissionDenied
        text = f"{what}: permission denied"
    elif code == errno.ENOENT:
        cls = JobNotFound
        text = f"{what}: no such job"
    elif code == errno.EINVAL:
        cls = InvalidRequest
        text = f"{what}: invalid request"
    elif code == errno.E2BIG:  # cedar's schedd: a value, job or constraint over its bounds
        cls = QmgmtError
        text = f"{what}: value too large or constraint over the schedd's evaluation budget"
    else:
        cls = QmgmtError
        text = f"{what} failed (rval {rval}, errno {terrno})"
    return cls(text, rval=rval, errno=terrno, reason=reason)


def check_attribute(name: str, value: str) -> None:
    """Validate a name/value pair before it is sent: the schedd does not parse values and
    would silently store an unparsable one as ``undefined`` (spec 05 §4.3 notes)."""
    if not _NAME.match(name):
        raise InvalidRequest(f"invalid attribute name {name!r}", errno=errno.EINVAL)
    if not value or "\n" in value or "\r" in value:
        raise InvalidRequest(
            f"invalid value for {name}: empty or contains a line break", errno=errno.EINVAL
        )
    try:
        parse_expr(value, old=True)
    except ClassAdError as exc:
        raise InvalidRequest(f"value of {name} is not a ClassAd expression: {exc}") from None


def _request(conn: CedarConnection, call: QmgmtCall, **args: ArgValue) -> MessageWriter:
    """``I(call)`` and the call's arguments, laid out by :data:`cedar.numbers.QMGMT_ARGUMENTS`."""
    writer = conn.writer().put_int(int(call))
    write_arguments(writer, call, **args)
    return writer


def _receive(what: str) -> Protocol[MessageReader]:
    try:
        reply = yield Receive()
    except ConnectionClosed:
        raise ConnectionClosed(
            f"the schedd closed the connection instead of answering {what}"
        ) from None
    return reply  # type: ignore[no-any-return]


def _optional_ad(reply: MessageReader) -> ClassAd | None:
    if reply.at_end():
        return None
    return get_classad(reply)


def _std_reply(what: str, *, with_ad: bool = False) -> Protocol[tuple[int, MessageReader]]:
    """Read ``I(rval) [I(terrno)]``; raise on rval < 0 (§4.2)."""
    reply = yield from _receive(what)
    rval = reply.get_int()
    if rval < 0:
        terrno = reply.get_int()
        reason = None
        if with_ad:
            ad = _optional_ad(reply)
            if ad is not None:
                reason = ad.get_string("ErrorReason")
        raise _error(what, rval, terrno, reason)
    return rval, reply


# --------------------------------------------------------------------------- the RPCs


def get_capabilities(conn: CedarConnection, mask: int = 0) -> Protocol[ClassAd]:
    """GetCapabilities (10036): the reply is a bare ad (``LateMaterialize`` etc.)."""
    yield Send(_request(conn, QmgmtCall.GetCapabilities, mask=mask))
    reply = yield from _receive("GetCapabilities")
    ad = get_classad(reply)
    reply.end_of_message()
    return ad


def new_cluster(conn: CedarConnection) -> Protocol[int]:
    """NewCluster (10002) → the new cluster id."""
    yield Send(_request(conn, QmgmtCall.NewCluster))
    reply = yield from _receive("NewCluster")
    rval = reply.get_int()
    if rval < 0:
        terrno = reply.get_int()
        ad = _optional_ad(reply)
        reason = (ad.get_string("ErrorReason") if ad else None) or _NEW_CLUSTER_ERRORS.get(rval)
        raise SubmitRejected(
            "the schedd refused to create a cluster", rval=rval, errno=terrno, reason=reason
        )
    if rval == 0:
        raise ProtocolError("NewCluster answered cluster id 0")
    return rval


def new_proc(conn: CedarConnection, cluster: int) -> Protocol[int]:
    """NewProc (10003) → the new proc id."""
    yield Send(_request(conn, QmgmtCall.NewProc, cluster=cluster))
    return (yield from _new_proc_reply(cluster))


def _new_proc_reply(cluster: int) -> Protocol[int]:
    """The answer to one NewProc (separate so that a submission can pipeline them)."""
    reply = yield from _receive("NewProc")
    rval = reply.get_int()
    if rval < 0:
        terrno = reply.get_int()
        reason = _NEW_CLUSTER_ERRORS.get(rval)
        if abs(terrno) in (errno.EACCES, errno.EPERM):
            raise _error(f"NewProc({cluster})", rval, terrno, reason)
        raise SubmitRejected(
            f"the schedd refused to create a job in cluster {cluster}",
            rval=rval,
            errno=terrno,
            reason=reason,
        )
    return rval


def set_attribute(
    conn: CedarConnection,
    cluster: int,
    proc: int,
    name: str,
    value: str,
    flags: int = 0,
) -> Protocol[None]:
    """SetAttribute (10006) or, with flags, SetAttribute2 (10027).  ``value`` is expression
    text in wire syntax.  With NO_ACK there is no reply; errors surface at the commit."""
    check_attribute(name, value)
    if flags:
        writer = _request(
            conn,
            QmgmtCall.SetAttribute2,
            cluster=cluster,
            proc=proc,
            value=value,
            name=name,
            flags=int(flags),
        )
    else:
        writer = _request(
            conn, QmgmtCall.SetAttribute, cluster=cluster, proc=proc, value=value, name=name
        )
    unanswered = bool(flags & SetAttributeFlags.NO_ACK)
    yield Send(writer, flush=not unanswered)  # unanswered: may leave with the next call
    if unanswered:
        return
    yield from _std_reply(f"SetAttribute({cluster}.{proc}, {name})")


def set_attribute_by_constraint(
    conn: CedarConnection, constraint: str, name: str, value: str, flags: int = 0
) -> Protocol[int]:
    """SetAttributeByConstraint (10021) / …2 (10032) → number of jobs matched (always
    answered, even with NO_ACK, spec 05 §4.3)."""
    check_attribute(name, value)
    call = QmgmtCall.SetAttributeByConstraint2 if flags else QmgmtCall.SetAttributeByConstraint
    args: dict[str, ArgValue] = {"constraint": constraint, "value": value, "name": name}
    if flags:
        args["flags"] = int(flags)
    yield Send(_request(conn, call, **args))
    rval, _ = yield from _std_reply(f"SetAttributeByConstraint({constraint}, {name})")
    return rval


def _get_attribute(
    conn: CedarConnection, call: QmgmtCall, cluster: int, proc: int, name: str
) -> Protocol[MessageReader]:
    yield Send(_request(conn, call, cluster=cluster, proc=proc, name=name))
    _, reply = yield from _std_reply(f"{call.name}({cluster}.{proc}, {name})")
    return reply


def get_attribute_int(conn: CedarConnection, cluster: int, proc: int, name: str) -> Protocol[int]:
    """GetAttributeInt (10009)."""
    reply = yield from _get_attribute(conn, QmgmtCall.GetAttributeInt, cluster, proc, name)
    return reply.get_int()


def get_attribute_float(
    conn: CedarConnection, cluster: int, proc: int, name: str
) -> Protocol[float]:
    """GetAttributeFloat (10008)."""
    reply = yield from _get_attribute(conn, QmgmtCall.GetAttributeFloat, cluster, proc, name)
    return reply.get_double()


def get_attribute_string(
    conn: CedarConnection, cluster: int, proc: int, name: str
) -> Protocol[str]:
    """GetAttributeString (10010): the string value without quotes."""
    reply = yield from _get_attribute(conn, QmgmtCall.GetAttributeString, cluster, proc, name)
    return reply.get_string()


def get_attribute_expr(conn: CedarConnection, cluster: int, proc: int, name: str) -> Protocol[str]:
    """GetAttributeExpr (10011): the expression text."""
    reply = yield from _get_attribute(conn, QmgmtCall.GetAttributeExpr, cluster, proc, name)
    return reply.get_string()


def delete_attribute(conn: CedarConnection, cluster: int, proc: int, name: str) -> Protocol[None]:
    """DeleteAttribute (10012)."""
    yield Send(_request(conn, QmgmtCall.DeleteAttribute, cluster=cluster, proc=proc, name=name))
    yield from _std_reply(f"DeleteAttribute({cluster}.{proc}, {name})")


def get_job_ad(conn: CedarConnection, cluster: int, proc: int) -> Protocol[ClassAd]:
    """GetJobAd (10018): the job's ad (proc −1 = the cluster ad)."""
    yield Send(_request(conn, QmgmtCall.GetJobAd, cluster=cluster, proc=proc))
    reply = yield from _receive("GetJobAd")
    rval = reply.get_int()
    if rval < 0:
        terrno = reply.get_int()
        raise JobNotFound(f"job {cluster}.{proc} does not exist", rval=rval, errno=terrno)
    return get_classad(reply)


def get_all_jobs_by_constraint(
    conn: CedarConnection, constraint: str, projection: Sequence[str] = ()
) -> Protocol[list[ClassAd]]:
    """GetAllJobsByConstraint (10026): every match in one reply message."""
    yield Send(
        _request(
            conn,
            QmgmtCall.GetAllJobsByConstraint,
            constraint=constraint,
            projection=",".join(projection),
        )
    )
    reply = yield from _receive("GetAllJobsByConstraint")
    ads: list[ClassAd] = []
    while True:
        rval = reply.get_int()
        if rval < 0:
            reply.get_int()
            return ads
        if len(ads) >= MAX_JOBS_IN_ONE_REPLY:
            raise ProtocolError("GetAllJobsByConstraint reply holds too many ads")
        ads.append(get_classad(reply))


def begin_transaction(conn: CedarConnection) -> Protocol[None]:
    """BeginTransaction (10023): needed before every batch after the first (§4.1)."""
    yield Send(_request(conn, QmgmtCall.BeginTransaction))
    yield from _std_reply("BeginTransaction")


def abort_transaction(conn: CedarConnection) -> Protocol[None]:
    """AbortTransaction (10024): drop everything since the transaction began."""
    yield Send(_request(conn, QmgmtCall.AbortTransaction))
    yield from _std_reply("AbortTransaction")


def set_effective_owner(conn: CedarConnection, owner: str) -> Protocol[None]:
    """SetEffectiveOwner (10030).  Never send "" (it makes the connection anonymous)."""
    if not owner:
        raise InvalidArgument(
            "SetEffectiveOwner with an empty owner would make the connection anonymous"
        )
    yield Send(_request(conn, QmgmtCall.SetEffectiveOwner, owner=owner))
    yield from _std_reply(f"SetEffectiveOwner({owner})")


@dataclass
class CommitResult:
    """The commit reply: ``warning`` from a ``WarningReason`` in the reply ad, if any."""

    ad: ClassAd | None = None
    warning: str | None = None


def commit_transaction(conn: CedarConnection, flags: int | None = None) -> Protocol[CommitResult]:
    """CommitTransactionNoFlags (10007) or CommitTransaction (10031) with ``flags``.

    The reply ad is optional (present only if the schedd knows our version, §4.5), so it is
    read only when bytes are left in the message.
    """
    if flags is None:
        yield Send(_request(conn, QmgmtCall.CommitTransactionNoFlags))
    else:
        yield Send(_request(conn, QmgmtCall.CommitTransaction, flags=flags))
    reply = yield from _receive("CommitTransaction")
    rval = reply.get_int()
    if rval < 0:
        terrno = reply.get_int()
        ad = _optional_ad(reply)
        reason = ad.get_string("ErrorReason") if ad is not None else None
        if abs(terrno) in (errno.EACCES, errno.EPERM):
            raise QmgmtPermissionDenied(
                "the schedd rejected the transaction: permission denied",
                rval=rval,
                errno=terrno,
                reason=reason,
            )
        raise SubmitRejected(
            "the schedd rejected the transaction", rval=rval, errno=terrno, reason=reason
        )
    ad = _optional_ad(reply)
    return CommitResult(ad, ad.get_string("WarningReason") if ad is not None else None)


def send_materialize_data(conn: CedarConnection, cluster: int, data: bytes) -> Protocol[str]:
    """SendMaterializeData (10039): the item rows of a factory, raw after ``I(flags=0)``.

    The reply is ``S(spool file) I(rows) I(rval) [I(terrno)]``; the file name goes into the
    digest's queue statement.  A row count other than the rows sent is a protocol error.
    """
    yield Send(_request(conn, QmgmtCall.SendMaterializeData, cluster=cluster, flags=0, data=data))
    reply = yield from _receive("SendMaterializeData")
    filename = reply.get_string()
    rows = reply.get_int()
    rval = reply.get_int()
    if rval < 0:
        raise _error(f"SendMaterializeData({cluster})", rval, reply.get_int())
    sent = data.count(b"\n")
    if rows != sent:
        raise ProtocolError(f"SendMaterializeData: the schedd stored {rows} rows of {sent}")
    return filename


def set_job_factory(
    conn: CedarConnection, cluster: int, maximum: int, digest: str, filename: str = ""
) -> Protocol[None]:
    """SetJobFactory (10037): the digest the schedd materializes cluster ``cluster`` from."""
    yield Send(
        _request(
            conn,
            QmgmtCall.SetJobFactory,
            cluster=cluster,
            maximum=maximum,
            filename=filename,
            digest=digest,
        )
    )
    yield from _std_reply(f"SetJobFactory({cluster})")


def close_socket(conn: CedarConnection) -> Protocol[None]:
    """CloseSocket (10028): no reply; the schedd ends the session."""
    yield Send(_request(conn, QmgmtCall.CloseSocket))


# --------------------------------------------------------------------------- submission


@dataclass
class SubmitOutcome:
    """What a submission created."""

    cluster: int
    num_procs: int
    cluster_ad: dict[str, str]
    proc_ads: list[dict[str, str]] = field(default_factory=list)
    warning: str | None = None


ProcAds = tuple[Mapping[str, str], Sequence[Mapping[str, str]]]
#: What a submission's ``build`` returns: every proc, or a job factory (late materialization).
Built = Union[ProcAds, "JobFactory"]  # noqa: UP007 - "JobFactory" is imported where used


def submit_transaction(
    conn: CedarConnection,
    build: Callable[[int], Built],
    *,
    flags: int = SetAttributeFlags.NO_ACK,
) -> Protocol[SubmitOutcome]:
    """The whole submission of spec 05 §4.7 on a started QMGMT_WRITE_CMD connection.

    ``build(cluster_id)`` returns (cluster ad, proc ads) as name → wire text; it runs after
    NewCluster so ``$(Cluster)`` can be expanded; a :class:`JobFactory` instead is sent as
    late materialization (:func:`_send_factory`).  Any failure before the commit aborts the
    transaction (explicitly when the connection still works), so nothing is left behind.
    """
    from cedar.submit_language.factory import JobFactory

    capabilities = yield from get_capabilities(conn)
    cluster = yield from new_cluster(conn)
    try:
        built = build(cluster)
        if isinstance(built, JobFactory):
            _check_ads(built.cluster_ad, [])
            if capabilities.get("LateMaterialize") is not True:
                raise SubmitRejected("the schedd does not offer late materialization")
    except (CedarError, ValueError):
        yield from _abort_quietly(conn)
        raise
    if isinstance(built, JobFactory):
        return (yield from _send_factory(conn, cluster, built, flags))
    try:
        cluster_ad, proc_ads = built
        if not proc_ads:
            raise InvalidArgument("a submission needs at least one job")
        _check_ads(cluster_ad, proc_ads)
    except (CedarError, ValueError):
        yield from _abort_quietly(conn)
        raise
    cluster_items = [("ClusterId", str(cluster))] + [
        (k, v) for k, v in cluster_ad.items() if k.lower() != "clusterid"
    ]
    requests = _SubmitRequests(conn, cluster, flags)
    try:
        yield from _send_procs(requests, cluster_items, proc_ads)
    except CedarError:
        yield from _abort_quietly(conn)  # a refused NewProc, a proc id out of order, ...
        raise
    result = yield from commit_transaction(conn)
    yield from close_socket(conn)
    return SubmitOutcome(
        cluster, len(proc_ads), dict(cluster_items), [dict(p) for p in proc_ads], result.warning
    )


def _send_factory(
    conn: CedarConnection, cluster: int, factory: JobFactory, flags: int
) -> Protocol[SubmitOutcome]:
    """Late materialization, in condor_submit's order (docs/late-materialization.md): the item
    rows, SetJobFactory, then the cluster ad alone; no NewProc.  The schedd makes the procs."""
    cluster_items = [("ClusterId", str(cluster))] + [
        (k, v) for k, v in factory.cluster_ad.items() if k.lower() != "clusterid"
    ]
    requests = _SubmitRequests(conn, cluster, flags)
    pipelined = bool(requests.flags & SetAttributeFlags.NO_ACK)
    try:
        items_file = None
        if factory.items is not None:
            items_file = yield from send_materialize_data(conn, cluster, factory.item_data())
        yield from set_job_factory(conn, cluster, factory.maximum, factory.digest(items_file))
        payloads = requests.set_attributes(-1, cluster_items)
        for (name, _), payload in zip(cluster_items, payloads, strict=True):
            yield Send(payload, flush=not pipelined)
            if not pipelined:
                yield from _std_reply(f"SetAttribute({cluster}.-1, {name})")
    except CedarError:
        yield from _abort_quietly(conn)
        raise
    result = yield from commit_transaction(conn)
    yield from close_socket(conn)
    return SubmitOutcome(cluster, factory.total_procs, dict(cluster_items), [], result.warning)


def _send_procs(
    requests: _SubmitRequests,
    cluster_items: list[tuple[str, str]],
    proc_ads: Sequence[Mapping[str, str]],
) -> Protocol[None]:
    """NewProc and the attributes of every proc, in the bindings' order: NewProc, the cluster
    ad once after the first, then per proc ``ProcId``, ``JobStatus`` and what differs.

    With NO_ACK only NewProc is answered: the calls of PIPELINE_WINDOW procs leave in one
    write and, while the schedd works on them, the next window is encoded; a window's answers
    are read one window later (the schedd handles the calls of one connection in order).  A
    proc id other than the expected one is a :class:`ProtocolError`.
    """
    cluster = requests.cluster
    unanswered: deque[int] = deque()
    pipelined = bool(requests.flags & SetAttributeFlags.NO_ACK)
    for index, proc_ad in enumerate(proc_ads):
        yield Send(requests.new_proc, flush=index == 0)
        if index == 0 or not pipelined:
            yield from _expect_proc(cluster, index)
        else:
            unanswered.append(index)
        calls = [(-1, cluster_items)] if index == 0 else []
        own = [("ProcId", str(index)), ("JobStatus", proc_ad.get("JobStatus", "1"))]
        own += [(k, v) for k, v in proc_ad.items() if k.lower() not in _SENT_FIRST]
        calls.append((index, own))
        for proc, items in calls:
            for (name, _), payload in zip(items, requests.set_attributes(proc, items), strict=True):
                yield Send(payload, flush=not pipelined)
                if not pipelined:  # without NO_ACK every SetAttribute is answered
                    yield from _std_reply(f"SetAttribute({cluster}.{proc}, {name})")
        if len(unanswered) >= 2 * PIPELINE_WINDOW:  # waiting flushes the newest window
            for _ in range(PIPELINE_WINDOW):
                yield from _expect_proc(cluster, unanswered.popleft())
    while unanswered:
        yield from _expect_proc(cluster, unanswered.popleft())


#: Per-proc attributes a submission sends itself, first, in this order.
_SENT_FIRST = ("procid", "jobstatus")


def _check_ads(cluster_ad: Mapping[str, str], proc_ads: Sequence[Mapping[str, str]]) -> None:
    """Validate every name/value pair before anything is sent; each distinct pair once
    (the procs of a large cluster repeat the same few).  ``ProcId`` is the submission's own."""
    checked: set[tuple[str, str]] = set()
    for ad in (cluster_ad, *proc_ads):
        for pair in ad.items():
            if pair not in checked and pair[0].lower() != "procid":
                check_attribute(*pair)
                checked.add(pair)


class _SubmitRequests:
    """The wire payloads of a submission's calls, each repeated piece encoded once.

    A SetAttribute is ``I(call) I(cluster) I(proc) S(value)`` and the rest (name[, flags],
    laid out by :data:`cedar.numbers.QMGMT_ARGUMENTS`): the head is encoded once, the rest once
    per attribute name; only the proc and the value are encoded per call.  Values must have
    been checked (:func:`_check_ads`).
    """

    def __init__(self, conn: CedarConnection, cluster: int, flags: int) -> None:
        self.conn = conn
        self.cluster = cluster
        self.flags = int(flags)
        self.call = QmgmtCall.SetAttribute2 if flags else QmgmtCall.SetAttribute
        expected = (("cluster", Arg.INT), ("proc", Arg.INT), ("value", Arg.STRING))
        if QMGMT_ARGUMENTS[self.call][:3] != expected:
            raise AssertionError("SetAttribute no longer starts with cluster, proc and value")
        self.new_proc = _request(conn, QmgmtCall.NewProc, cluster=cluster).getvalue()
        self._head = _INT.pack(self.call) + _INT.pack(cluster)
        self._after_value: dict[str, bytes] = {}

    def _value(self, value: str) -> bytes:
        return self.conn.writer().put_string(value).getvalue()

    def _rest(self, name: str) -> bytes:
        rest = self._after_value.get(name)
        if rest is None:
            args: dict[str, ArgValue] = {"cluster": 0, "proc": 0, "value": "0", "name": name}
            if self.flags:
                args["flags"] = self.flags
            payload = _request(self.conn, self.call, **args).getvalue()
            rest = self._after_value[name] = payload[3 * _INT.size + len(self._value("0")) :]
        return rest

    def set_attributes(self, proc: int, items: Sequence[tuple[str, str]]) -> list[bytes]:
        """The payloads of one SetAttribute per name/value pair of job ``proc``."""
        head = self._head + _INT.pack(proc)
        return [head + self._value(value) + self._rest(name) for name, value in items]


def _expect_proc(cluster: int, index: int) -> Protocol[None]:
    """Read one NewProc answer; it must be proc ``index``."""
    proc = yield from _new_proc_reply(cluster)
    if proc != index:
        raise ProtocolError(f"NewProc answered proc {proc}, expected {index}")


def _abort_quietly(conn: CedarConnection) -> Protocol[None]:
    """Abort and close; the schedd also aborts when the connection just drops."""
    try:
        yield from abort_transaction(conn)
        yield from close_socket(conn)
    except CedarError:
        pass
