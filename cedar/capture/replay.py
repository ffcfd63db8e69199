"""Replaying recorded conversations against our own client and server.

One module because it is one registry: :data:`KINDS` ties each recorded command to the factories and
checks defined beside it (file-transfer kinds are apart, in :mod:`cedar.capture.replay_transfer`;
what every entry shares -- :class:`ReplayContext`, :class:`ReplayKind`, our peers configured like
the recorded ones -- is below both, in :mod:`cedar.capture.replay_context`).

Client side: our client -- :func:`cedar.commands.base.command_protocol` (shared-port preamble,
``start_command``, command body) with a :class:`SecurityConfig` like the recording's client --
runs against the recorded *server* messages (:class:`ReplayChannel`).  Server side: our mock
daemon (:meth:`Daemon.connection_protocol`, state seeded from the recording) runs against the
recorded *client* messages.  Either way our messages are put where the real peer's were and both
conversations are decoded by the dissector, so they are read the same way: message by message,
same kind, same decoded fields, ClassAds as sets of attributes (order may differ).

What may differ is explicit: :data:`VOLATILE` lists the values that change on every run, and
:data:`SERVER_DEVIATIONS` the attributes where our mock daemons deliberately differ from the
real ones (each with its reason).  Which coroutines replay which conversations is the table
:data:`KINDS`; an entry without a factory is reported as not replayable, with the reason.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

from cedar.auth.client import CommandSession
from cedar.capture import replay_transfer
from cedar.capture.dissect import DecodedMessage, DissectedConversation, dissect
from cedar.capture.errors import Unreconstructible
from cedar.capture.messages import load_conversations
from cedar.capture.replay_context import (
    CaptureState,
    ClientFactory,
    ReplayContext,
    ReplayKind,
    ReplayReport,
    client_security,
    mock_schedd,
    server_policy,
)
from cedar.capture.reseal import PREAMBLE, ResealingChannel
from cedar.capture.tcp import C2S, S2C
from cedar.capture.writer import write_capture
from cedar.classad_wire import ClassAd, evaluate, parse_expr
from cedar.classad_wire.wire import references
from cedar.commands import collector as collector_commands
from cedar.commands import history as history_commands
from cedar.commands import qmgmt
from cedar.commands import schedd as schedd_commands
from cedar.commands.base import DEFAULT_TIMEOUT, Body, command_protocol
from cedar.commands.ping import sec_query_body
from cedar.daemons.ad_store import QUERY_TABLES, AdStore
from cedar.daemons.collector import MockCollector
from cedar.daemons.daemon import Daemon
from cedar.daemons.schedd import HELD, IDLE, Job, JobQueue
from cedar.errors import CedarError
from cedar.numbers import Command, QmgmtCall
from cedar.stream.drivers import ReplayChannel
from cedar.submit_language.factory import JobFactory, digest_queue, parse_item_bytes

#: Attributes whose values legitimately differ between runs (keys, nonces, session ids, pids,
#: clocks, versions); their presence is still compared.
VOLATILE = frozenset(
    name.lower()
    for name in (
        "ECDHPublicKey",  # fresh ephemeral key per handshake
        "Nonce",  # random per resumption
        "Sid",  # session ids are made up by each server run
        "ServerPid",  # the client's pid
        "RemoteVersion",  # our version string vs the recorded tools'
        "CondorVersion",
        "SubmitVersion",
        "CondorPlatform",
        "ServerTime",  # clocks
        "QDate",
        "EnteredCurrentStatus",
        "LastHeardFrom",
        "MyCurrentTime",
    )
)

#: Attributes where our mock daemons deliberately differ from the recorded HTCondor daemons.
SERVER_DEVIATIONS: dict[str, str] = {
    "cryptomethods": "cedar's server implements only AES: a BLOWFISH-only client gets a session "
    "without crypto method (docs/security-findings.md #1)",
    "cryptomethodslist": "same: the shared crypto list is empty instead of BLOWFISH",
    "ecdhpublickey": "same: without a shared crypto method our server makes no ECDH key",
    "issuerkeys": "added by the IDTOKENS method, which the replay's CLAIMTOBE-only server lacks",
    "validcommands": "a mock daemon registers only the commands it implements",
}


# -- client side: bodies and result checks ----------------------------------------------------


def _check_results(ctx: ReplayContext, emitted: list[Any], result: Any) -> list[str]:
    """Queries: the ads we decoded are the recorded result ads."""
    expected = [_ad_set(ad) for ad in ctx.result_ads()]
    got = [_ad_set(ad) for ad in emitted if isinstance(ad, ClassAd)]
    if got != expected:
        return [f"decoded results differ: {len(expected)} recorded ads, ours {len(got)}"]
    return []


def _check_submit(ctx: ReplayContext, emitted: list[Any], result: Any) -> list[str]:
    (cluster,) = ctx.qmgmt_rvals(QmgmtCall.NewCluster)
    procs = len(ctx.qmgmt_rvals(QmgmtCall.NewProc))
    if not isinstance(result, qmgmt.SubmitOutcome):
        return ["our client returned no submit outcome"]
    factory = _recorded_factory(ctx)
    if factory is not None:  # late materialization: the schedd makes the procs
        procs = factory.total_procs
    if (result.cluster, result.num_procs) != (cluster, procs):
        return [f"decoded {result.cluster}/{result.num_procs} procs, recorded {cluster}/{procs}"]
    return []


def _check_act(ctx: ReplayContext, emitted: list[Any], result: Any) -> list[str]:
    ad = ctx.reply_ad("ACT_RESULT")
    expected = {
        int(name[len("result_total_") :]): ad[name]
        for name in ad
        if name.lower().startswith("result_total_")
    }
    if not isinstance(result, schedd_commands.ActResult) or result.totals != expected:
        got = getattr(result, "totals", None)
        return [f"decoded action totals {got}, recorded {expected}"]
    return []


def _check_edit(ctx: ReplayContext, emitted: list[Any], result: Any) -> list[str]:
    expected = ctx.qmgmt_rvals(QmgmtCall.SetAttributeByConstraint2) + ctx.qmgmt_rvals(
        QmgmtCall.SetAttributeByConstraint
    )
    if [result] != expected:
        return [f"decoded {result} jobs edited, recorded {expected}"]
    return []


def _check_ping(ctx: ReplayContext, emitted: list[Any], result: Any) -> list[str]:
    expected = ctx.reply_ad("SEC_QUERY_RESULT").get("AuthorizationSucceeded") is True
    return [] if result is expected else [f"decoded authorized={result}, recorded {expected}"]


def _no_check(ctx: ReplayContext, emitted: list[Any], result: Any) -> list[str]:
    return []


def _submit_body(ctx: ReplayContext) -> Body[Any]:
    """condor_submit's transaction with the recorded attributes (the submit file's ads)."""
    cluster_ad: dict[str, str] = {}
    proc_ads: dict[int, dict[str, str]] = {}
    for call in ctx.qmgmt_calls(QmgmtCall.SetAttribute, QmgmtCall.SetAttribute2):
        proc = int(call["proc"])
        target = cluster_ad if proc < 0 else proc_ads.setdefault(proc, {})
        target[call["name"]] = call["value"]
    flags = {int(c["flags"]) for c in ctx.qmgmt_calls(QmgmtCall.SetAttribute2)}
    (flag,) = flags or {0}
    factory = _recorded_factory(ctx)

    def build(cluster: int) -> qmgmt.Built:
        if factory is not None:
            return factory
        return cluster_ad, [proc_ads[p] for p in sorted(proc_ads)]

    return lambda session: qmgmt.submit_transaction(session.conn, build, flags=flag)


def _recorded_factory(ctx: ReplayContext) -> JobFactory | None:
    """The job factory a recorded late-materialization submission sent (None: procs)."""
    calls = ctx.qmgmt_calls(QmgmtCall.SetJobFactory)
    if not calls:
        return None
    digest = str(calls[0]["digest"])
    count, names, _items_file = digest_queue(digest)
    head = digest[: digest.rstrip("\n").rfind("\n") + 1]
    sent = ctx.qmgmt_calls(QmgmtCall.SendMaterializeData)
    rows = parse_item_bytes(str(sent[0]["items"]).encode("latin-1"), len(names)) if sent else None
    cluster_ad = {
        str(c["name"]): str(c["value"])
        for c in ctx.qmgmt_calls(QmgmtCall.SetAttribute, QmgmtCall.SetAttribute2)
        if int(c["proc"]) < 0
    }
    total = count * (len(rows) if rows is not None else 1)
    maximum = int(calls[0]["maximum"])
    return JobFactory(cluster_ad, maximum, total, head, count, names or ["Item"], rows)


def _edit_body(ctx: ReplayContext) -> Body[Any]:
    """condor_qedit: one SetAttributeByConstraint with the recorded arguments and flags."""
    (call,) = ctx.qmgmt_calls(QmgmtCall.SetAttributeByConstraint2)
    return lambda session: schedd_commands.edit_protocol(
        session.conn,
        call["constraint"],
        call["name"],
        call["value"],
        int(call["flags"]),
        no_ack=False,
    )


def _is_edit(ctx: ReplayContext) -> bool:
    rpcs = {call["rpc"] for call in ctx.qmgmt_calls()}
    return QmgmtCall.NewCluster not in rpcs and bool(
        rpcs & {QmgmtCall.SetAttributeByConstraint, QmgmtCall.SetAttributeByConstraint2}
    )


def _request_body(protocol: Callable[[CommandSession, ClassAd], Any]) -> ClientFactory:
    """A body sending the recorded request ad through ``protocol``."""
    return lambda ctx: lambda session: protocol(session, ctx.request_ad())


# -- server side: daemons seeded from the recording ---------------------------------------------

_PIN = re.compile(r'([A-Za-z_]\w*)\s*==\s*(-?\d+|"[^"\\]*"|true|false)\Z', re.IGNORECASE)


def constraint_pins(text: str) -> dict[str, str]:
    """Attributes a constraint fixes to a literal (``A == 1 && B == "x"``), else ``{}``.

    A recorded result ad matched the constraint, so such attributes had these values even
    when the projection left them out.
    """
    if "||" in text or re.search(r"\w\s*\(", text):
        return {}
    pins: dict[str, str] = {}
    for part in text.replace("(", " ").replace(")", " ").split("&&"):
        m = _PIN.match(part.strip())
        if m is None:
            return {}
        pins[m.group(1)] = m.group(2)
    return pins


def _requirements(ctx: ReplayContext, name: str = "Requirements") -> str:
    request = ctx.request_ad()
    return request.raw_text(name) if name in request else "true"


def _seed(ctx: ReplayContext, ads: list[ClassAd], constraint: str) -> list[ClassAd]:
    """The recorded result ads completed with what the constraint pins; raises
    :class:`Unreconstructible` when the constraint tests attributes the results lack (the
    projection left them out), since the server would then have nothing to match."""
    pins = constraint_pins(constraint)
    seeded = [_pinned(ad, pins) for ad in ads]
    needed = references(parse_expr(constraint))
    for ad in seeded:
        lacking = sorted(name for name in needed if name not in ad)
        if lacking:
            raise Unreconstructible(
                f"the recorded results lack {', '.join(lacking)}, which the constraint "
                f"{constraint} tests: the server's state cannot be rebuilt from the capture"
            )
    return seeded


def _pinned(ad: ClassAd, pins: dict[str, str]) -> ClassAd:
    ad = ad.copy()
    for name, literal in pins.items():
        if name not in ad:
            ad.set_expr(name, parse_expr(literal))
    return ad


def _collector(ctx: ReplayContext) -> Daemon:
    """A collector holding the recorded result ads, its clock at the recording's time."""
    store = AdStore(clock=lambda: ctx.conversation.first_time)
    command = ctx.dissected.command
    table = QUERY_TABLES.get(Command(command)) if command in QUERY_TABLES else None
    for ad in _seed(ctx, ctx.result_ads(), _requirements(ctx)):
        store.add(ad, table)
    return MockCollector("collector", policy=server_policy(ctx), store=store)


def _queue_of(ads: list[ClassAd]) -> JobQueue:
    """A queue holding ``ads`` as jobs (a proc id is made up when the projection lacks it)."""
    queue = JobQueue(name="schedd")
    for ad in ads:
        cluster = ad.get("ClusterId")
        cluster = cluster if isinstance(cluster, int) else 1
        proc = ad.get("ProcId")
        if not isinstance(proc, int):
            proc = sum(1 for c, _ in queue.jobs if c == cluster)
        owner = ClassAd({"Owner": ad["Owner"]}) if isinstance(ad.get("Owner"), str) else ClassAd()
        queue.clusters.setdefault(cluster, owner)
        queue.jobs[(cluster, proc)] = Job(cluster, proc, ad)
    return queue


def _job_query_schedd(ctx: ReplayContext) -> Daemon:
    """A schedd whose queue is the recorded result (constraint-pinned attributes filled in)."""
    return mock_schedd(ctx, _queue_of(_seed(ctx, ctx.result_ads(), _requirements(ctx))))


def _history_schedd(ctx: ReplayContext) -> Daemon:
    """A schedd whose job or epoch history holds the recorded records, plus what the final
    ad says it examined without returning: the record that ended a ``Since`` scan and
    records the constraint rejected (empty ads of an accepted type; spec 08 §4)."""
    if ctx.dissected.command == Command.GET_HISTORY:
        raise Unreconstructible("cedar has no mock startd to answer GET_HISTORY")
    request = ctx.request_ad()
    source = request.get("HistoryRecordSource")
    epochs = isinstance(source, str) and source.upper() == "JOB_EPOCH"
    type_filter = request.get("HistoryAdTypeFilter")
    named = (
        [t.upper() for t in re.split(r"[\s,]+", type_filter)]
        if isinstance(type_filter, str)
        else []
    )
    default_type = named[0] if len(named) == 1 and named[0] != "ALL" else "EPOCH"
    records = _seed(ctx, ctx.result_ads(), _requirements(ctx))
    # the final ad ends a history reply by the job query's summary rule (``Owner = 0``)
    history = ctx.messages(S2C, "HISTORY")
    final = [ad for m in history for _, ad in m.ads if schedd_commands.is_summary(ad)]
    examined = final[-1].get("AdCount") if final else None
    missing = (examined if isinstance(examined, int) else len(records)) - len(records)
    tail: list[ClassAd] = []
    if missing > 0 and "Since" in request:
        tail.append(_satisfying(request.raw_text("Since")))
        missing -= 1
    if missing > 0 and evaluate(parse_expr(_requirements(ctx)), ClassAd()) is True:
        raise Unreconstructible("records were examined but not returned, by no constraint")
    records += [ClassAd() for _ in range(missing)] + tail
    if epochs:
        for ad in records:
            if "EpochAdType" not in ad:
                kind = ad.get("TransferClass")
                ad["EpochAdType"] = kind if isinstance(kind, str) else default_type
    if request.get("HistoryReadForwards") is not True:
        records.reverse()  # newest first on the wire; the queue keeps the oldest first
    queue = JobQueue(name="schedd")
    if epochs:
        queue.epochs = records
    else:
        queue.history = records
    return mock_schedd(ctx, queue)


def _satisfying(constraint: str) -> ClassAd:
    """An ad for which ``constraint`` is true: its ``==`` pins and integer bounds."""
    ad = ClassAd()
    for name, literal in constraint_pins(constraint).items():
        ad.set_expr(name, parse_expr(literal))
    for name, op, number in re.findall(r"(\w+)\s*(<=|>=|<|>)\s*(-?\d+)", constraint):
        ad[name] = int(number) + {"<=": 0, ">=": 0, "<": -1, ">": 1}[op]
    if evaluate(parse_expr(constraint), ad) is not True:
        raise Unreconstructible(f"no record satisfying {constraint} can be made up")
    return ad


def _owned_jobs(ctx: ReplayContext, constraint: str, count: int, status: int) -> list[ClassAd]:
    """``count`` jobs of the recorded user matching ``constraint`` (its pinned attributes)."""
    owner = (ctx.user() or "nobody").partition("@")[0]
    pins = constraint_pins(constraint)
    return [
        _pinned(ClassAd({"ProcId": proc, "Owner": owner, "JobStatus": status}), pins)
        for proc in range(count)
    ]


def _act_schedd(ctx: ReplayContext) -> Daemon:
    """The queue the recorded result describes: ``result_total_1`` jobs the action applies to
    (matching the constraint, owned by the user), plus others up to ``TotalJobAds``."""
    request, result = ctx.request_ad(), ctx.reply_ad("ACT_RESULT")
    action = schedd_commands.JobAction(request["JobAction"])
    status = HELD if action == schedd_commands.JobAction.Release else IDLE
    constraint = request.raw_text("ActionConstraint") if "ActionConstraint" in request else ""
    hit = _owned_jobs(ctx, constraint, int(result.get("result_total_1", 0)), status)
    others = [
        ClassAd({"ClusterId": 1_000_000, "ProcId": i, "Owner": "someone", "JobStatus": status})
        for i in range(int(result.get("TotalJobAds", 0)) - len(hit))
    ]
    return mock_schedd(ctx, _queue_of(hit + others))


def _edit_schedd(ctx: ReplayContext) -> Daemon:
    """As many jobs of the user matching the recorded constraint as the schedd said it edited."""
    (call,) = ctx.qmgmt_calls(QmgmtCall.SetAttributeByConstraint2)
    (count,) = ctx.qmgmt_rvals(QmgmtCall.SetAttributeByConstraint2)
    return mock_schedd(ctx, _queue_of(_owned_jobs(ctx, call["constraint"], count, IDLE)))


def _submit_schedd(ctx: ReplayContext) -> Daemon:
    """An empty queue whose next cluster is the one the real schedd gave out."""
    queue = JobQueue(name="schedd")
    (queue.next_cluster,) = ctx.qmgmt_rvals(QmgmtCall.NewCluster)
    for reply in ctx.messages(S2C, "QMGMT_REPLY"):  # name the items file as the real one did
        spool_file = reply.fields.get("spool_file")
        if reply.fields.get("rpc") == QmgmtCall.SendMaterializeData and spool_file:
            queue.factory_spool = os.path.dirname(os.path.dirname(str(spool_file)))
    return mock_schedd(ctx, queue)


def _ping_daemon(ctx: ReplayContext) -> Daemon:
    """DC_SEC_QUERY is answered by the framework of any daemon; the target's type decides."""
    sock = ctx.dissected.facts.get("shared_port_id")
    if sock and not str(sock).startswith("collector"):
        return mock_schedd(ctx)
    return MockCollector("collector", policy=server_policy(ctx), store=AdStore())


_QUERIES = frozenset(
    c
    for c in Command
    if c.name.startswith("QUERY_")
    and c not in (Command.QUERY_JOB_ADS, Command.QUERY_JOB_ADS_WITH_AUTH)
    and c not in (Command.QUERY_SCHEDD_HISTORY, Command.QUERY_USERREC_ADS)
)
_CLEAR = frozenset({"raw", "negotiated", "resumed"})

KINDS: dict[str, ReplayKind] = {
    "collector-query": ReplayKind(
        "collector-query",
        _QUERIES,
        _CLEAR,
        client=_request_body(collector_commands.query_protocol),
        check=_check_results,
        server=_collector,
    ),
    "job-query": ReplayKind(
        "job-query",
        frozenset({Command.QUERY_JOB_ADS, Command.QUERY_JOB_ADS_WITH_AUTH}),
        _CLEAR,
        client=_request_body(schedd_commands.query_protocol),
        check=_check_results,
        server=_job_query_schedd,
    ),
    "history": ReplayKind(
        "history",
        frozenset({Command.QUERY_SCHEDD_HISTORY, Command.GET_HISTORY}),
        _CLEAR,
        client=_request_body(history_commands.history_protocol),
        check=_check_results,
        server=_history_schedd,
    ),
    "edit": ReplayKind(
        "edit",
        frozenset({Command.QMGMT_WRITE_CMD}),
        _CLEAR,
        client=_edit_body,
        check=_check_edit,
        server=_edit_schedd,
        match=_is_edit,
    ),
    "submit": ReplayKind(
        "submit",
        frozenset({Command.QMGMT_WRITE_CMD}),
        _CLEAR,
        client=_submit_body,
        check=_check_submit,
        server=_submit_schedd,
    ),
    "act": ReplayKind(
        "act",
        frozenset({Command.ACT_ON_JOBS}),
        _CLEAR,
        client=_request_body(schedd_commands.act_protocol),
        check=_check_act,
        server=_act_schedd,
    ),
    "ping": ReplayKind(
        "ping",
        frozenset({Command.DC_SEC_QUERY}),
        _CLEAR,
        client=lambda ctx: sec_query_body,
        check=_check_ping,
        server=_ping_daemon,
    ),
    "spool": ReplayKind(
        "spool",
        frozenset({Command.SPOOL_JOB_FILES_WITH_PERMS}),
        _CLEAR,
        client=replay_transfer.spool_client,
        check=replay_transfer.check_spool,
        server=replay_transfer.spool_server,
        ignore=replay_transfer.TRANSFER_IGNORED,
        extra_ok=replay_transfer.spool_extra_ok,
        client_skip=replay_transfer.spool_client_skip,
    ),
    "transfer-data": ReplayKind(
        "transfer-data",
        frozenset({Command.TRANSFER_DATA_WITH_PERMS}),
        _CLEAR,
        client=replay_transfer.transfer_client,
        check=replay_transfer.check_transfer,
        server=replay_transfer.transfer_server,
        ignore=replay_transfer.TRANSFER_IGNORED,
        client_skip=replay_transfer.transfer_client_skip,
    ),
    "reschedule": ReplayKind(
        "reschedule",
        frozenset({Command.RESCHEDULE}),
        _CLEAR,
        client=lambda ctx: lambda session: session.send_empty_payload(),
        check=_no_check,
        server=lambda ctx: mock_schedd(ctx),
    ),
}


def kind_of(conv: DissectedConversation, ctx: ReplayContext | None = None) -> ReplayKind | None:
    """The table entry for a conversation's command (narrowed by ``match`` given ``ctx``)."""
    for kind in KINDS.values():
        if conv.command in kind.commands and (kind.match is None or ctx is None or kind.match(ctx)):
            return kind
    return None


# -- comparison -----------------------------------------------------------------------------


def _ad_set(ad: ClassAd, ignore: frozenset[str] = frozenset()) -> dict[str, str]:
    """An ad as name -> value text, volatile values blanked (names kept), ``ignore`` dropped."""
    return {
        n.lower(): "" if n.lower() in VOLATILE else ad.raw_text(n)
        for n in ad
        if n.lower() not in ignore
    }


def _fields(message: DecodedMessage) -> dict[str, Any]:
    skip = {"request", "expected"}
    return {k: v for k, v in message.fields.items() if k not in skip}


def compare_messages(
    expected: list[DecodedMessage],
    actual: list[DecodedMessage],
    *,
    ignore: frozenset[str] = frozenset(),
    summaries_by_name: bool = False,
) -> list[str]:
    """Human-readable differences between two decoded message lists (empty if equivalent).

    ``ignore``: attributes left out of ad comparisons; ``summaries_by_name``: summary ads are
    compared by attribute names only (their counts describe server state the recording lacks).
    """
    out = []
    for exp, act in zip(expected, actual, strict=False):
        where = f"message {exp.index} ({exp.direction})"
        if exp.direction != act.direction or exp.kind != act.kind:
            out.append(f"{where}: expected {exp.kind} {exp.direction}, got {act.kind}")
            continue
        if act.problem:
            out.append(f"{where}: ours cannot be decoded: {act.problem}")
        if _fields(exp) != _fields(act):
            out.append(f"{where}: fields differ: {_fields(exp)} != {_fields(act)}")
        if len(exp.ads) != len(act.ads):
            out.append(f"{where}: {len(exp.ads)} ads expected, got {len(act.ads)}")
        for (label, a), (_, b) in zip(exp.ads, act.ads, strict=False):
            sa, sb = _ad_set(a, ignore), _ad_set(b, ignore)
            if summaries_by_name and schedd_commands.is_summary(a):
                sa, sb = dict.fromkeys(sa, ""), dict.fromkeys(sb, "")
            if sa != sb:
                missing = sorted(set(sa) - set(sb))
                extra = sorted(set(sb) - set(sa))
                changed = sorted(k for k in set(sa) & set(sb) if sa[k] != sb[k])
                out.append(
                    f"{where} [{label}]: missing {missing}, extra {extra}, changed "
                    + ", ".join(f"{k}: {sa[k]} -> {sb[k]}" for k in changed)
                )
    if len(expected) != len(actual):
        out.append(f"{len(expected)} messages expected, got {len(actual)}")
    return out


def _redissect(chunks: list[tuple[str, bytes]], key: bytes | None = None) -> DissectedConversation:
    keys = [key] if key is not None else None
    (conv,) = [c for c in dissect(write_capture([chunks]), keys=keys) if c.transport == "tcp"]
    return conv


def _channel(ctx: ReplayContext, peer: str) -> ReplayChannel:
    """The recorded ``peer`` for ours: as recorded, or re-protected when it was encrypted."""
    recorded = ctx.dissected.messages
    key = ctx.dissected.session_key
    if key is not None:
        return ResealingChannel(recorded, peer, key)
    played = [m for m in recorded if m.direction == peer and m.kind != PREAMBLE]
    return ReplayChannel(b"".join(m.wire for m in played))


def _played(channel: ReplayChannel, message: DecodedMessage) -> bytes:
    """The wire bytes ours received for a recorded message."""
    resealed = channel.resealed if isinstance(channel, ResealingChannel) else {}
    return resealed.get(message.index, message.wire)


# -- the two replays ------------------------------------------------------------------------


def replay_client(
    ctx: ReplayContext, kind: ReplayKind, state: CaptureState | None = None
) -> ReplayReport:
    """Run our client against the recorded server messages; compare what it sent."""
    state = state or CaptureState()
    report = ReplayReport(ctx.capture, ctx.conversation.number, kind.name, "client")
    if kind.client is None:
        report.skipped = kind.missing or "no client coroutine"
        return report
    skip = kind.client_skip(ctx) if kind.client_skip is not None else None
    if skip:
        report.skipped = skip
        return report
    command = ctx.dissected.command
    assert command is not None
    recorded = ctx.dissected.messages
    channel = _channel(ctx, S2C)
    handshake = ctx.handshake_ad()
    auth_command = handshake.get("AuthCommand") if handshake is not None else None
    preamble = ctx.preamble()
    result: Any = None
    try:
        protocol = command_protocol(
            channel.conn,
            ctx.target(),
            command,
            kind.client(ctx),
            security=client_security(ctx, state.client_sessions),
            deadline=int(preamble["deadline"]) if preamble else int(DEFAULT_TIMEOUT),
            local_address=ctx.conversation.client,
            peer_address=ctx.conversation.server,
            auth_command=auth_command if isinstance(auth_command, int) else None,
        )
        result = channel.run(protocol, on_emit=report.results.append)
    except CedarError as exc:
        report.differences.append(f"our client failed: {exc}")
    # Our preamble is a message like any other here: the client sends it.
    chunks = _interleave_client(recorded, channel, report, _extra_ok(kind, ctx))
    if not report.differences:
        mine = _redissect(chunks, ctx.dissected.session_key)
        report.differences += compare_messages(recorded, mine.messages, ignore=kind.ignore)
        assert kind.check is not None
        report.differences += kind.check(ctx, report.results, result)
    return report


def _extra_ok(kind: ReplayKind, ctx: ReplayContext) -> bool:
    return kind.extra_ok is not None and kind.extra_ok(ctx)


def _interleave_client(
    recorded: list[DecodedMessage],
    channel: ReplayChannel,
    report: ReplayReport,
    extra_ok: bool = False,
) -> list[tuple[str, bytes]]:
    mine = iter(channel.sent)
    chunks: list[tuple[str, bytes]] = []
    for message in recorded:
        if message.direction == C2S:
            wire = next(mine, None)
            if wire is None:
                report.differences.append(f"our client did not send message {message.index}")
                break
            chunks.append((C2S, wire))
        else:
            chunks.append((S2C, _played(channel, message)))
    extra = list(mine)
    if extra and not extra_ok:
        report.differences.append(f"our client sent {len(extra)} more message(s)")
    return chunks


def replay_server(
    ctx: ReplayContext, kind: ReplayKind, state: CaptureState | None = None
) -> ReplayReport:
    """Run our server against the recorded client messages; compare its replies."""
    state = state or CaptureState()
    report = ReplayReport(ctx.capture, ctx.conversation.number, kind.name, "server")
    if kind.server is None:
        report.skipped = kind.missing or "no server handler"
        return report
    try:
        daemon = kind.server(ctx)
    except Unreconstructible as exc:
        report.skipped = str(exc)
        return report
    daemon.sessions = state.server_sessions
    recorded = ctx.dissected.messages
    # The shared-port router consumes the preamble; the daemon never sees it (spec 03 §8.5).
    channel = _channel(ctx, C2S)
    try:
        channel.run(
            daemon.connection_protocol(
                channel.conn,
                local_address=ctx.conversation.server,
                peer_address=ctx.conversation.client,
            )
        )
    except CedarError as exc:
        report.differences.append(f"our server failed: {exc}")
    mine = iter(channel.sent)
    chunks: list[tuple[str, bytes]] = []
    for message in recorded:
        if message.direction == S2C:
            wire = next(mine, None)
            if wire is None:
                report.differences.append(f"our server did not send message {message.index}")
                break
            chunks.append((S2C, wire))
        else:
            chunks.append((C2S, _played(channel, message)))
    extra = list(mine)
    if extra and not _extra_ok(kind, ctx):
        report.differences.append(f"our server sent {len(extra)} more message(s)")
    if report.differences:
        return report
    ours = _redissect(chunks, ctx.dissected.session_key)
    report.differences += compare_messages(
        [m for m in recorded if m.direction == S2C],
        [m for m in ours.messages if m.direction == S2C],
        ignore=frozenset(SERVER_DEVIATIONS) | kind.ignore,
        summaries_by_name=not _summaries_determined(ctx),
    )
    _map_session(ctx, ours, state)
    return report


def _summaries_determined(ctx: ReplayContext) -> bool:
    """Whether the seeded state determines the job-query summary's counts: every job matched
    (constraint ``true``) and each carries its ``JobStatus``."""
    if ctx.dissected.command not in KINDS["job-query"].commands:
        return True
    try:
        trivial = evaluate(parse_expr(_requirements(ctx))) is True
    except CedarError:
        trivial = False
    return trivial and all("JobStatus" in ad for ad in ctx.result_ads())


def _map_session(ctx: ReplayContext, ours: DissectedConversation, state: CaptureState) -> None:
    """Make our server's new session resumable under the recorded session id."""
    recorded, mine = ctx.dissected.facts.get("session"), ours.facts.get("session")
    if ctx.dissected.start != "negotiated" or not recorded or not mine:
        return
    session = state.server_sessions.get(str(mine))
    if session is not None:
        state.server_sessions.add(dataclasses.replace(session, sid=str(recorded)))


def replay_capture(path: str, keys: Sequence[bytes] = ()) -> list[ReplayReport]:
    """Replay both sides of every clear-text conversation of a capture, in order, and of each
    encrypted one that one of ``keys`` opens (AES session keys derived from the recording)."""
    reports = []
    state = CaptureState(keys=list(keys))
    raw_convs = {c.number: c for c in load_conversations(path)}
    for dissected in dissect(path, keys=list(keys)):
        if dissected.transport == "tcp":
            reports += replay_conversation(ReplayContext(path, raw_convs[dissected.number],
                                                         dissected), state)  # fmt: skip
    return reports


def _readable(dissected: DissectedConversation, state: CaptureState) -> bool:
    """Clear, or encrypted and wholly opened by a key the caller gave (not one learned)."""
    encrypted = [m for m in dissected.messages if m.encrypted]
    if not encrypted:
        return True
    return dissected.session_key in state.keys and all(m.decrypted for m in encrypted)


def replay_conversation(ctx: ReplayContext, state: CaptureState) -> list[ReplayReport]:
    """Both sides of one conversation (none when no entry of :data:`KINDS` takes it; skipped
    ones, with the reason, when it is encrypted or resumes a session not replayed)."""
    path, dissected = ctx.capture, ctx.dissected
    kind = kind_of(dissected, ctx)
    if kind is None:
        return []
    session = str(dissected.facts.get("session"))
    if dissected.start == "resumed" and session not in state.negotiated:
        reason = "resumes a session whose (encrypted) negotiation was not replayed"
        return [
            ReplayReport(path, dissected.number, kind.name, side, skipped=reason)
            for side in ("client", "server")
        ]
    if dissected.start not in kind.starts or not _readable(dissected, state):
        reason = (
            f"{dissected.start} start"
            + (", encrypted" if dissected.facts.get("encrypted") else "")
            + " not replayable: only clear-text conversations are"
        )
        return [
            ReplayReport(path, dissected.number, kind.name, side, skipped=reason)
            for side in ("client", "server")
        ]
    reports = [replay_client(ctx, kind, state), replay_server(ctx, kind, state)]
    if dissected.start == "negotiated":
        state.negotiated.add(session)
    return reports


__all__ = [
    "KINDS",
    "SERVER_DEVIATIONS",
    "VOLATILE",
    "CaptureState",
    "ReplayContext",
    "ReplayKind",
    "ReplayReport",
    "Unreconstructible",
    "client_security",
    "compare_messages",
    "constraint_pins",
    "kind_of",
    "replay_capture",
    "replay_client",
    "replay_conversation",
    "replay_server",
    "server_policy",
]
