"""Replaying recorded conversations against our own client and server.

For a clear-text conversation the recorded *server* messages are fed to our client coroutine
(with :class:`ReplayChannel`), and the recorded *client* messages to our server; what ours send
is compared with what the real peer sent.  Comparison goes through the dissector, so both sides
are read the same way: message by message, same kind, same decoded fields, and ClassAds as sets
of attributes (order may differ; values that change on every run are ignored).

Which coroutines replay which conversations is the table :data:`KINDS` ("conversation kind ->
client factory, server factory"); an entry without a factory is reported as not replayable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio
import trio.testing

from cedar.auth.client import start_command
from cedar.auth.sharedport import send_preamble
from cedar.capture.dissect import DecodedMessage, DissectedConversation, dissect
from cedar.capture.messages import Conversation
from cedar.capture.tcp import C2S, S2C
from cedar.capture.writer import write_capture
from cedar.classad_wire import ClassAd
from cedar.commands import collector as collector_commands
from cedar.commands import schedd as schedd_commands
from cedar.commands.numbers import Command
from cedar.errors import CedarError
from cedar.server.daemon import Daemon
from cedar.stream.drivers import ReplayChannel
from cedar.stream.protocol import Protocol

#: Attributes whose values legitimately differ between runs (keys, pids, clocks, versions).
VOLATILE = frozenset(
    name.lower()
    for name in (
        "ECDHPublicKey",
        "ServerPid",
        "RemoteVersion",
        "Nonce",
        "Sid",
        "ServerTime",
        "QDate",
        "EnteredCurrentStatus",
        "LastHeardFrom",
        "MyCurrentTime",
        "CondorVersion",
        "SubmitVersion",
        "CondorPlatform",
    )
)


@dataclass
class ReplayContext:
    """What a factory may need: the recorded conversation, decoded."""

    capture: str
    conversation: Conversation
    dissected: DissectedConversation

    def request_ad(self) -> ClassAd:
        """The recorded client request ad (the first ad the client sent)."""
        for message in self.dissected.messages:
            if message.direction == C2S and message.ads and message.kind != "DC_AUTHENTICATE":
                return message.ads[0][1]
        raise CedarError("the recorded conversation has no client request ad")

    def result_ads(self) -> list[ClassAd]:
        """The result ads the real server sent (job/summary ads excluded where marked)."""
        ads: list[ClassAd] = []
        for message in self.dissected.messages:
            if message.direction == S2C and message.kind in ("QUERY_RESULT", "JOB_AD", "HISTORY"):
                ads.extend(ad for _, ad in message.ads if ad.get("Owner") not in (0, 1))
        return ads


ClientFactory = Callable[[ReplayContext], Protocol[Any]]
ServerFactory = Callable[[ReplayContext], Daemon]


@dataclass(frozen=True)
class ReplayKind:
    """How to replay one kind of conversation."""

    name: str
    commands: frozenset[int]
    #: Clear-text start forms this entry can replay ("raw", "negotiated", "resumed").
    starts: frozenset[str]
    client: ClientFactory | None = None
    server: ServerFactory | None = None
    #: Why a side is missing (shown in reports).
    missing: str = ""


@dataclass
class ReplayReport:
    """Outcome of replaying one side of one conversation."""

    capture: str
    conversation: int
    kind: str
    side: str  # "client" or "server"
    differences: list[str] = field(default_factory=list)
    skipped: str | None = None
    results: list[Any] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.skipped is None and not self.differences


def _sinful(ctx: ReplayContext) -> str:
    host, port = ctx.conversation.server
    sock = ctx.dissected.facts.get("shared_port_id")
    return f"<{host}:{port}?sock={sock}>" if sock else f"<{host}:{port}>"


def _raw_client(body: Callable[[Any, ClassAd], Protocol[Any]]) -> ClientFactory:
    """A client that starts the recorded command raw (with the preamble if there was one)."""

    def factory(ctx: ReplayContext) -> Protocol[Any]:
        def protocol(conn: Any) -> Protocol[Any]:
            sock = ctx.dissected.facts.get("shared_port_id")
            if sock:
                preamble = ctx.dissected.messages[0].fields
                yield from send_preamble(
                    conn,
                    sock,
                    client_name=preamble["client_name"],
                    deadline=preamble["deadline"],
                )
            command = ctx.dissected.command
            assert command is not None
            session = yield from start_command(
                conn, command, security=None, target=_sinful(ctx), raw=True
            )
            return (yield from body(session, ctx.request_ad()))

        return protocol  # type: ignore[return-value]

    return factory


KINDS: dict[str, ReplayKind] = {
    "collector-query": ReplayKind(
        "collector-query",
        frozenset(
            c
            for c in Command
            if c.name.startswith("QUERY_")
            and c not in (Command.QUERY_JOB_ADS, Command.QUERY_JOB_ADS_WITH_AUTH)
            and c not in (Command.QUERY_SCHEDD_HISTORY, Command.QUERY_USERREC_ADS)
        ),
        frozenset({"raw"}),
        client=_raw_client(collector_commands.query_protocol),
        missing="MockCollector cannot serve a stream that is not a listening socket "
        "(own_ad() needs daemon.address), and projected result ads lack the key attributes "
        "AdStore.add requires",
    ),
    "job-query": ReplayKind(
        "job-query",
        frozenset({Command.QUERY_JOB_ADS, Command.QUERY_JOB_ADS_WITH_AUTH}),
        frozenset({"raw"}),
        client=_raw_client(schedd_commands.query_protocol),
        missing="no mock schedd in cedar.server yet",
    ),
    "history": ReplayKind(
        "history",
        frozenset({Command.QUERY_SCHEDD_HISTORY}),
        frozenset({"raw"}),
        client=_raw_client(schedd_commands.history_protocol),
        missing="no mock schedd in cedar.server yet",
    ),
    "submit": ReplayKind(
        "submit",
        frozenset({Command.QMGMT_WRITE_CMD}),
        frozenset({"negotiated"}),
        missing="negotiated CLAIMTOBE/BLOWFISH client start not replayable yet; no mock schedd",
    ),
    "act": ReplayKind(
        "act",
        frozenset({Command.ACT_ON_JOBS}),
        frozenset({"negotiated"}),
        missing="negotiated CLAIMTOBE/BLOWFISH client start not replayable yet; no mock schedd",
    ),
    "ping": ReplayKind(
        "ping",
        frozenset({Command.DC_SEC_QUERY}),
        frozenset({"negotiated"}),
        missing="negotiated CLAIMTOBE/BLOWFISH client start not replayable yet",
    ),
    "reschedule": ReplayKind(
        "reschedule",
        frozenset({Command.RESCHEDULE}),
        frozenset({"resumed"}),
        missing="needs the cached session of an earlier conversation",
    ),
}


def kind_of(conv: DissectedConversation) -> ReplayKind | None:
    """The table entry for a conversation's command, if any."""
    for kind in KINDS.values():
        if conv.command in kind.commands:
            return kind
    return None


# -- comparison -----------------------------------------------------------------------------


def _ad_set(ad: ClassAd) -> dict[str, str]:
    return {n.lower(): ad.raw_text(n) for n in ad if n.lower() not in VOLATILE}


def _fields(message: DecodedMessage) -> dict[str, Any]:
    skip = {"request", "expected"}
    return {k: v for k, v in message.fields.items() if k not in skip}


def compare_messages(expected: list[DecodedMessage], actual: list[DecodedMessage]) -> list[str]:
    """Human-readable differences between two decoded message lists (empty if equivalent)."""
    out = []
    for exp, act in zip(expected, actual, strict=False):
        where = f"message {exp.index} ({exp.direction})"
        if exp.direction != act.direction or exp.kind != act.kind:
            out.append(f"{where}: expected {exp.kind} {exp.direction}, got {act.kind}")
            continue
        if act.problem:
            out.append(f"{where}: ours cannot be decoded: {act.problem}")
        if _fields(exp) != _fields(act) and exp.kind not in ("DC_AUTHENTICATE",):
            out.append(f"{where}: fields differ: {_fields(exp)} != {_fields(act)}")
        if len(exp.ads) != len(act.ads):
            out.append(f"{where}: {len(exp.ads)} ads expected, got {len(act.ads)}")
        for (label, a), (_, b) in zip(exp.ads, act.ads, strict=False):
            sa, sb = _ad_set(a), _ad_set(b)
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


def _redissect(chunks: list[tuple[str, bytes]]) -> DissectedConversation:
    (conv,) = [c for c in dissect(write_capture([chunks])) if c.transport == "tcp"]
    return conv


# -- the two replays ------------------------------------------------------------------------


def replay_client(ctx: ReplayContext, kind: ReplayKind) -> ReplayReport:
    """Run our client against the recorded server messages; compare what it sent."""
    report = ReplayReport(ctx.capture, ctx.conversation.number, kind.name, "client")
    if kind.client is None:
        report.skipped = kind.missing or "no client coroutine"
        return report
    recorded = ctx.conversation.messages
    server_bytes = b"".join(m.wire for m in recorded if m.direction == S2C)
    channel = ReplayChannel(server_bytes)
    try:
        protocol = kind.client(ctx)(channel.conn)  # type: ignore[operator]
        report.results = list(channel.iterate(protocol))
    except CedarError as exc:
        report.differences.append(f"our client failed: {exc}")
    # Put our messages where the real client's were and decode both the same way.
    ours = iter(channel.sent)
    chunks: list[tuple[str, bytes]] = []
    for message in recorded:
        if message.direction == C2S:
            mine = next(ours, None)
            if mine is None:
                report.differences.append(f"our client did not send message {len(chunks) + 1}")
                break
            chunks.append((C2S, mine))
        else:
            chunks.append((S2C, message.wire))
    extra = list(ours)
    if extra:
        report.differences.append(f"our client sent {len(extra)} more message(s)")
    if not report.differences:
        mine_conv = _redissect(chunks)
        report.differences += compare_messages(ctx.dissected.messages, mine_conv.messages)
    expected = [_ad_set(ad) for ad in ctx.result_ads()]
    got = [_ad_set(ad) for ad in report.results if isinstance(ad, ClassAd)]
    if got != expected:
        report.differences.append(
            f"decoded results differ: {len(expected)} recorded ads, ours {len(got)}"
        )
    return report


async def _serve(daemon: Daemon, client_bytes: bytes) -> bytes:
    ours, theirs = trio.testing.memory_stream_pair()
    received = bytearray()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(daemon.handle_stream, theirs)
        await ours.send_all(client_bytes)
        while True:
            data = await ours.receive_some(65536)
            if not data:
                break
            received += data
    return bytes(received)


def replay_server(ctx: ReplayContext, kind: ReplayKind) -> ReplayReport:
    """Run our server against the recorded client messages; compare its replies."""
    report = ReplayReport(ctx.capture, ctx.conversation.number, kind.name, "server")
    if kind.server is None:
        report.skipped = kind.missing or "no server handler"
        return report
    recorded = ctx.conversation.messages
    client = [m for m in recorded if m.direction == C2S]
    if any(m.direction == C2S for m in recorded[len(client) :]):
        report.skipped = "several request/reply rounds (not needed by the replayed kinds)"
        return report
    try:
        daemon = kind.server(ctx)
    except ValueError as exc:
        report.skipped = f"cannot rebuild the server's state from the capture: {exc}"
        return report
    replies = trio.run(_serve, daemon, b"".join(m.wire for m in client))
    chunks = [(C2S, b"".join(m.wire for m in client))]
    if replies:
        chunks.append((S2C, replies))
    mine = _redissect(chunks)
    expected = [m for m in ctx.dissected.messages if m.direction == S2C]
    report.differences += compare_messages(
        expected, [m for m in mine.messages if m.direction == S2C]
    )
    return report


def replay_capture(path: str) -> list[ReplayReport]:
    """Replay both sides of every clear-text conversation of a capture."""
    from cedar.capture.messages import load_conversations

    reports = []
    raw_convs = {c.number: c for c in load_conversations(path)}
    for dissected in dissect(path):
        kind = kind_of(dissected)
        conv = raw_convs[dissected.number]
        if kind is None or dissected.transport != "tcp":
            continue
        ctx = ReplayContext(path, conv, dissected)
        if dissected.start not in kind.starts or any(m.encrypted for m in dissected.messages):
            for side in ("client", "server"):
                reports.append(
                    ReplayReport(
                        path,
                        dissected.number,
                        kind.name,
                        side,
                        skipped=f"{dissected.start} start"
                        + (", encrypted" if dissected.facts.get("encrypted") else "")
                        + " not replayable: "
                        + (kind.missing or "unsupported start"),
                    )
                )
            continue
        reports.append(replay_client(ctx, kind))
        reports.append(replay_server(ctx, kind))
    return reports
