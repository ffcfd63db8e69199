"""Replaying the ``ccb-*`` recordings (spec 09) against cedar's three CCB roles.

A CCB recording holds up to four kinds of conversation; each is replayed in the roles it has:

* **registration** (67): our broker (the mock collector) against the recorded target's
  messages (handshake, registration, heartbeats), and our target's registration against the
  recorded broker's;
* **request** (68): our requester (``CCB_REQUEST`` body, then the reply and, streaming, the
  relayed hello) against the recorded broker, and our broker against the recorded requester,
  the recorded target's result standing in for the target (:attr:`CcbBroker.offline`);
* **held connection** recorded from its middle: the request our broker forwards for the
  recorded request, and the result our target writes for the recorded forwarded request;
* **reversed connection** (69): our target's first bytes (preamble, hello) byte for byte, our
  requester's check of the recorded hello, and the command that follows -- with the roles
  swapped, as the requester is its CEDAR client -- by the generic replay in both roles (the
  relayed bytes of a streaming request likewise).

What cannot be replayed says why: AES-GCM under keys derived by ECDH from ephemeral keys the
recording does not hold (of an encrypted request, our broker's security response and method
choice are still replayed), and ``ClaimId`` secrets under the BLOWFISH key of a plain session
(cedar implements no BLOWFISH, and no key for it is recorded).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from cedar.auth.client import CommandSession
from cedar.auth.policy import Requirement
from cedar.auth.server_policy import LevelPolicy, ServerPolicy
from cedar.auth.sinful import Sinful
from cedar.capture.dissect import (
    DecodedMessage,
    DissectedConversation,
    dissect,
    dissect_conversation,
)
from cedar.capture.dissect_ccb import SECRET_NAME
from cedar.capture.messages import Conversation, load_conversations
from cedar.capture.replay import replay_client, replay_conversation, replay_server
from cedar.capture.replay_context import (
    PLAIN_METHODS,
    CaptureState,
    ReplayContext,
    ReplayKind,
    ReplayReport,
    server_policy,
)
from cedar.capture.tcp import C2S, S2C
from cedar.classad_wire import ClassAd
from cedar.commands.ccb import (
    BrokerContact,
    CcbRoute,
    read_ad,
    read_hello,
    request_ad,
    request_sender,
    send_ad,
)
from cedar.daemons.ccb_broker import CcbBroker
from cedar.daemons.ccb_model import (
    Request,
    forwarded,
    hello,
    parse_request,
    registration_ad,
    reply,
    result_for,
)
from cedar.daemons.ccb_target import reverse_hello
from cedar.daemons.collector import MockCollector
from cedar.numbers import Command
from cedar.stream.drivers import ReplayChannel

#: Why a BLOWFISH secret stops a replay (plain recordings, spec 09 §4.1).
BLOWFISH = (
    "its ClaimId is a secret under the session's BLOWFISH key (the recorded plain session's "
    "legacy cipher, keyed by an ECDH exchange whose private keys are not recorded); cedar "
    "implements AES only and cannot read it"
)
ENCRYPTED = (
    "AES-GCM encrypted under a session key derived by ECDH from ephemeral keys the recording "
    "does not hold (the default security): only the clear framing is read"
)
#: The attribute whose value a replay cannot reproduce: connect ids and cookies are random.
_CLAIM = frozenset({SECRET_NAME.lower()})


def _ads(ctx: ReplayContext, kind: str, direction: str | None = None) -> list[ClassAd]:
    return [
        ad
        for m in ctx.dissected.messages
        if m.kind == kind and (direction is None or m.direction == direction)
        for _label, ad in m.ads
    ]


def _trimmed(ctx: ReplayContext, last: int) -> ReplayContext:
    """The context with the recorded messages up to ``last`` (its 1-based index)."""
    dissected = copy.copy(ctx.dissected)
    dissected.messages = [m for m in ctx.dissected.messages if m.index <= last]
    return ReplayContext(ctx.capture, ctx.conversation, dissected)


def _index(ctx: ReplayContext, kind: str) -> int | None:
    return next((m.index for m in ctx.dissected.messages if m.kind == kind), None)


def _report(ctx: ReplayContext, kind: str, side: str, **fields: Any) -> ReplayReport:
    return ReplayReport(ctx.capture, ctx.dissected.number, kind, side, **fields)


def _prefix(report: ReplayReport) -> ReplayReport:
    """A replay of a conversation's first part: the recorded client's bytes ending there is
    not our server's failure."""
    report.differences = [d for d in report.differences if "closed by the peer" not in d]
    return report


def _same(kind: str, ours: ClassAd, recorded: ClassAd, ignore: frozenset[str]) -> list[str]:
    """An ad compared as a set of attributes (names folded), values of ``ignore`` unchecked."""
    a = {n.lower(): ("" if n.lower() in ignore else ours.raw_text(n)) for n in ours}
    b = {n.lower(): ("" if n.lower() in ignore else recorded.raw_text(n)) for n in recorded}
    return [] if a == b else [f"{kind}: ours {a}, recorded {b}"]


# -- registration (67) ------------------------------------------------------------------------


def _broker_for(ctx: ReplayContext, address: str, offline: Any = None) -> MockCollector:
    """Our broker as the recorded one: its address (the contacts it writes) and policy."""
    policy = server_policy(ctx)  # and DAEMON authenticated, as on the recorded pool
    daemon = LevelPolicy(methods=list(PLAIN_METHODS), authentication=Requirement.REQUIRED)
    policy = dataclasses.replace(policy, levels={**policy.levels, "DAEMON": daemon})
    collector = MockCollector("collector", policy=policy)
    collector.ccb = CcbBroker(collector, address=f"<{address}>")
    collector.ccb.offline = offline
    collector.ccb.register_on(collector)
    return collector


def _registration(ctx: ReplayContext, state: CaptureState) -> list[ReplayReport]:
    (registered,) = _ads(ctx, "CCB_REGISTERED") or [ClassAd()]
    (request,) = _ads(ctx, "CCB_REGISTER")
    address = str(registered.get("CCBID", "")).rpartition("#")[0]
    sent = _index(ctx, "CCB_REGISTER") or 0
    secret = _secret(ctx.dissected.messages[sent - 1])
    reports = []
    # our broker against the recorded target
    broker_ctx = _trimmed(ctx, sent - 1) if secret else ctx
    kind = ReplayKind(
        "ccb-register",
        frozenset({Command.CCB_REGISTER}),
        frozenset(),
        server=lambda c: _broker_for(c, address),
        ignore=_CLAIM,
    )
    server = replay_server(broker_ctx, kind, state)
    reports.append(_prefix(server) if secret else server)
    if secret:
        reports.append(
            _report(
                ctx,
                "ccb-register",
                "server",
                skipped=f"the re-registration after the handshake: {BLOWFISH}",
            )
        )
    # our target against the recorded broker: the handshake and our registration ad
    contact = request.get("CCBID") if secret else None
    ours = registration_ad(str(request["Name"]), contact, "cookie" if secret else None)

    def body(ctx: ReplayContext) -> Any:
        return lambda session: send_ad(session.conn, ours)

    kind = ReplayKind(
        "ccb-register",
        frozenset({Command.CCB_REGISTER}),
        frozenset(),
        client=body,
        check=lambda c, e, r: [],
        ignore=_CLAIM | _DAEMON_M1,
    )
    reports.append(replay_client(_trimmed(ctx, sent), kind, state))
    reports.append(
        _report(ctx, "ccb-register", "client", skipped=f"the broker's reply: {BLOWFISH}")
    )
    beats = [m for m in ctx.dissected.messages if m.kind == "CCB_ALIVE" and m.direction == C2S]
    ours_beat = _wire(ClassAd({"Command": 441}))
    differences = [f"heartbeat {m.index} differs" for m in beats if m.wire != ours_beat]
    reports.append(_report(ctx, "ccb-heartbeat", "target", differences=differences))
    return reports


#: What a daemon's M1 has and a tool's (our replayed client's) has not (spec 09 §4.1).
_DAEMON_M1 = frozenset({"servercommandsock", "parentuniqueid", "sessionduration", "serverpid"})


def _wire(ad: ClassAd, command: int | None = None) -> bytes:
    """The bytes of one message holding ``ad`` on a clear connection."""
    channel = ReplayChannel(b"")
    channel.run(send_ad(channel.conn, ad, command))
    return b"".join(channel.sent)


def _secret(message: DecodedMessage) -> bool:
    """Whether a recorded message holds a secret no key of ours can read."""
    return any(
        "<secret:" in ad.raw_text(SECRET_NAME) for _l, ad in message.ads if SECRET_NAME in ad
    )


# -- request (68) -----------------------------------------------------------------------------


def _request(
    ctx: ReplayContext,
    state: CaptureState,
    held: list[DissectedConversation],
    hellos: list[ClassAd],
) -> list[ReplayReport]:
    if ctx.dissected.start not in ("raw", "negotiated") or any(
        m.encrypted for m in ctx.dissected.messages
    ):
        return _encrypted_request(ctx, state)
    (recorded,) = _ads(ctx, "REQUEST") + _ads(ctx, "RAW_COMMAND")
    replies = _ads(ctx, "CCB_REPLY")
    relayed = _index(ctx, "CCB_HELLO")
    end = relayed or max(m.index for m in ctx.dissected.messages)
    parsed = parse_request(recorded)
    reports: list[ReplayReport] = []
    forwards = [
        ad for conv in held for m in conv.messages if m.kind == "CCB_FORWARDED" for _l, ad in m.ads
    ]
    target_hello = next(iter(hellos), None) or next(iter(_ads(ctx, "CCB_HELLO")), None)
    address = ctx.target()
    if parsed is not None and parsed.streaming and target_hello is not None:
        address = Sinful.parse(str(target_hello["MyAddress"]))  # the broker the target dialled

    def offline(request: Request) -> list[tuple[int | None, ClassAd]] | None:
        if str(request.ccbid) != "1":  # the recorded startd was ccbid 1 (captures/README.md)
            return None
        if request.streaming and target_hello is not None:
            return [(None, reply(True, proxy=True)), (Command.CCB_REVERSE_CONNECT, target_hello)]
        return [(None, reply(True))]

    broker = str(address)[1:-1]
    kind = ReplayKind(
        "ccb-request",
        frozenset({Command.CCB_REQUEST}),
        frozenset(),
        server=lambda c: _broker_for(c, broker, offline),
        ignore=_CLAIM,
        extra_ok=lambda c: not replies,
    )
    asked = next(m for m in ctx.dissected.messages if m.kind in ("REQUEST", "RAW_COMMAND"))
    if _secret(asked):  # the handshake is ours to answer; the request we cannot read
        reports.append(_prefix(replay_server(_trimmed(ctx, asked.index - 1), kind, state)))
        reports.append(_report(ctx, "ccb-request", "server", skipped=f"the request: {BLOWFISH}"))
    else:
        reports.append(replay_server(_trimmed(ctx, end), kind, state))
    if relayed is not None and _secret(ctx.dissected.messages[relayed - 1]):
        reports.append(
            _report(ctx, "ccb-request", "client", skipped=f"the relayed hello: {BLOWFISH}")
        )
        end = relayed - 1
    # our requester against the recorded broker
    contact = BrokerContact(address, str(recorded["CCBID"]))
    mine = request_ad(
        contact,
        str(recorded.get("ClaimId", "")),
        None if parsed and parsed.streaming else str(recorded["MyAddress"]),
        name=str(recorded["Name"]),
    )

    def body(ctx: ReplayContext) -> Any:
        def run(session: CommandSession) -> Any:
            yield from request_sender(mine)(session)  # raw: I(68) and the ad in one message
            if not replies:
                return None
            answer = yield from read_ad()
            if answer.get("ProxyMode") is True and end == relayed:
                return answer, (yield from read_hello())
            return answer, None

        return run

    def check(c: ReplayContext, emitted: list[Any], result: Any) -> list[str]:
        if not replies:
            return [] if result is None else ["our requester read a reply none was recorded"]
        answer, greeting = result
        out = _same("reply", answer, replies[0], frozenset())
        if greeting is not None:
            route = CcbRoute(address, [contact], connect_id=str(greeting[1].get("ClaimId")))
            if not route.hello_matches(greeting):
                out.append("the relayed hello is not ours")
        return out

    kind = ReplayKind(
        "ccb-request",
        frozenset({Command.CCB_REQUEST}),
        frozenset(),
        client=body,
        check=check,
        ignore=_CLAIM,
    )
    reports.append(replay_client(_trimmed(ctx, end), kind, state))
    # the broker's forwarded request and the target's result (the held connection)
    if parsed is not None and forwards:
        peer = "<{}:{}>".format(*ctx.conversation.client)
        where = f"<{broker}>" if parsed.streaming else parsed.my_address
        for recorded_forward in forwards:
            ours = forwarded(parsed, f"{parsed.name} on {peer}", "0", where)
            diff = _same("forwarded request", ours, recorded_forward, _CLAIM | {"requestid"})
            if not diff:
                reports.append(_report(ctx, "ccb-forward", "broker"))
                break
        else:
            reports.append(_report(ctx, "ccb-forward", "broker", differences=diff))
    return reports


def _encrypted_request(ctx: ReplayContext, state: CaptureState) -> list[ReplayReport]:
    """What is clear of an encrypted request: our broker's security response and method
    choice for the recorded requester's offer (a pool configured as the recorded one says)."""
    reports = [_report(ctx, "ccb-request", "client", skipped=ENCRYPTED)]
    chosen = _index(ctx, "AUTH_CHOSEN")
    recorded = ctx.handshake_reply()
    if ctx.dissected.start == "negotiated" and chosen is not None and recorded is not None:
        domain = str(recorded.get("TrustDomain", "localhost"))
        methods = str(recorded.get("AuthMethodsList", "FS")).split(",")
        level = LevelPolicy(methods=methods, encryption=Requirement.PREFERRED,
                            integrity=Requirement.PREFERRED)  # fmt: skip
        policy = ServerPolicy(levels={"DEFAULT": level}, uid_domain=domain, trust_domain=domain)

        def broker(c: ReplayContext) -> MockCollector:
            return MockCollector("collector", policy=policy)

        kind = ReplayKind("ccb-request", frozenset({Command.CCB_REQUEST}), frozenset(),
                          server=broker, extra_ok=lambda c: True)  # fmt: skip
        reports.append(_prefix(replay_server(_trimmed(ctx, chosen), kind, state)))
    reports.append(
        _report(ctx, "ccb-request", "server", skipped=f"past the handshake: {ENCRYPTED}")
    )
    return reports


def _results(
    ctx: ReplayContext, forwards: list[ClassAd], results: list[ClassAd]
) -> list[ReplayReport]:
    """Our target's result for each recorded forwarded request, against the recorded one."""
    reports = []
    for request, recorded in zip(forwards, results, strict=False):
        ours = result_for(request)
        if ours is None:
            reports.append(_report(ctx, "ccb-result", "target", differences=["no result"]))
            continue
        ours["Result"] = True
        reports.append(
            _report(
                ctx, "ccb-result", "target", differences=_same("result", ours, recorded, _CLAIM)
            )
        )
    return reports


# -- reversed connection (69) and the relay -----------------------------------------------------


def _reversed(ctx: ReplayContext, state: CaptureState) -> list[ReplayReport]:
    (greeting,) = _ads(ctx, "CCB_HELLO")
    at = _index(ctx, "CCB_HELLO") or 0
    preamble = ctx.preamble()
    where = str(greeting["MyAddress"])
    ours = ReplayChannel(b"")
    mine = hello(str(greeting["ClaimId"]), where, str(greeting["RequestID"]))
    name = str(preamble["client_name"]) if preamble else "STARTD"
    ours.run(reverse_hello(ours.conn, Sinful.parse(where), mine, name))
    recorded = [m.wire for m in ctx.dissected.messages if m.index <= at]
    differences = [] if b"".join(ours.sent) == b"".join(recorded) else ["our first bytes differ"]
    reports = [_report(ctx, "ccb-hello", "target", differences=differences)]
    command, ad = ReplayChannel(ctx.dissected.messages[at - 1].wire).run(read_hello())
    target = Sinful("127.0.0.5", 1, {"CCBID": "127.0.0.1:9760#1"})
    route = CcbRoute(target, [], connect_id=str(ad.get("ClaimId")))
    ok = route.hello_matches((command, ad)) and not CcbRoute(target, []).hello_matches(
        (command, ad)
    )
    reports.append(
        _report(
            ctx, "ccb-hello", "requester", differences=[] if ok else ["our requester's hello check"]
        )
    )
    return reports + _inner(ctx, at, state, swapped=True)


def _inner(
    ctx: ReplayContext, after: int, state: CaptureState, *, swapped: bool
) -> list[ReplayReport]:
    """The command after a hello (reversed: roles swapped) by the generic replay."""
    flip = {C2S: S2C, S2C: C2S}
    conv = ctx.conversation
    messages = [
        dataclasses.replace(m, direction=flip[m.direction] if swapped else m.direction)
        for m in conv.messages[after:]
    ]
    if not messages:
        return []
    inner = Conversation(
        conv.number,
        "tcp",
        conv.server if swapped else conv.client,
        conv.client if swapped else conv.server,
        messages[0].frame,
        messages[0].time,
        messages,
    )
    dissected = dissect_conversation(inner)
    return replay_conversation(ReplayContext(ctx.capture, inner, dissected), state)


def replay_ccb_capture(path: str) -> list[ReplayReport]:
    """Every role of every conversation of a ``ccb-*`` recording that can be replayed, and
    the reason for each that cannot."""
    state = CaptureState()
    raw = {c.number: c for c in load_conversations(path)}
    dissected = [c for c in dissect(path) if c.transport == "tcp"]
    held = [c for c in dissected if c.start == "held"]
    hellos = [
        ad
        for c in dissected
        if c.command == Command.CCB_REVERSE_CONNECT
        for m in c.messages
        if m.kind == "CCB_HELLO"
        for _l, ad in m.ads
    ]
    reports: list[ReplayReport] = []
    for conv in dissected:
        ctx = ReplayContext(path, raw[conv.number], conv)
        if conv.start == "held":
            continue
        if conv.command == Command.CCB_REGISTER:
            reports += _registration(ctx, state)
        elif conv.command == Command.CCB_REQUEST:
            reports += _request(ctx, state, held, hellos)
            relayed = _index(ctx, "CCB_HELLO")
            if relayed is not None:
                reports += _inner(ctx, relayed, state, swapped=False)
        elif conv.command == Command.CCB_REVERSE_CONNECT:
            reports += _reversed(ctx, state)
    for conv in held:  # the result our target writes for each recorded forwarded request
        ctx = ReplayContext(path, raw[conv.number], conv)
        reports += _results(ctx, _ads(ctx, "CCB_FORWARDED"), _ads(ctx, "CCB_RESULT"))
    return reports


__all__ = ["BLOWFISH", "ENCRYPTED", "replay_ccb_capture"]
