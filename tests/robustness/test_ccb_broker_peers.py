"""Hostile peers at cedar's CCB broker (the mock collector, spec 09 §6-§7), over real sockets.

A flood of requests, a flood of registrations, a target that never connects back, a forged
reverse connection, a forged result and a target that sends garbage: each is refused with a
clear answer (or closed where the reference closes), nothing the broker holds grows past its
:class:`BrokerLimits`, and an honest requester is still served.  No test times anything: each
wait is bounded by the broker's ``request_timeout`` or the client's deadline.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import pytest

from cedar.auth.sinful import Sinful
from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.commands import ping
from cedar.commands.base import command_protocol
from cedar.commands.ccb import read_ad, send_ad
from cedar.daemons.ccb_model import BrokerLimits
from cedar.daemons.collector import MockCollector
from cedar.numbers import Command
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import SyncChannel
from cedar.stream.primitives import MessageWriter
from tests.daemons.ccb_setup import SECURITY, CcbSetup, ccb_setup
from tests.robustness.helpers import plain_policy
from tests.robustness.test_attacks import REQUEST_MEMORY, bounded_memory

LIMITS = BrokerLimits(
    max_targets=3, max_pending_per_target=4, max_pending=6, max_streaming=2, request_timeout=3
)


def _broker() -> MockCollector:
    return MockCollector(policy=plain_policy(), ccb_limits=LIMITS)


@contextlib.contextmanager
def honest_and_hostile() -> Iterator[tuple[CcbSetup, HostileTarget]]:
    """The broker with an honest cedar target (ccbid 1) and a scripted hostile one (ccbid 2)."""
    with ccb_setup(_broker()) as setup, HostileTarget(setup.broker.address) as hostile:
        yield setup, hostile


class HostileTarget:
    """A registration we drive by hand: it reads forwarded requests and answers as told."""

    def __init__(self, broker: str) -> None:
        self.broker = Sinful.parse(broker)
        self.channel = SyncChannel.connect(*self.broker.endpoint, timeout=30)

        def body(session: object) -> object:
            yield from send_ad(self.channel.conn, ClassAd({"Name": "HOSTILE", "Command": 67}))
            return (yield from read_ad())

        reply = self.channel.run(
            command_protocol(
                self.channel.conn,
                self.broker,
                Command.CCB_REGISTER,
                body,
                security=SECURITY,
                raw=False,
            )  # fmt: skip
        )
        self.ccbid = str(reply["CCBID"]).rpartition("#")[2]

    def forwarded(self) -> ClassAd:
        return self.channel.run(read_ad())

    def send(self, ad: ClassAd) -> None:
        self.channel.run(send_ad(self.channel.conn, ad))

    def __enter__(self) -> HostileTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.channel.close()


def _request(broker: str, ccbid: str, connect_id: str, *, streaming: bool = False) -> socket.socket:
    """A raw ``CCB_REQUEST`` (``I(68)`` and the ad in one message, spec 09 §5.2)."""
    ad = ClassAd({"Name": "FLOOD", "CCBID": ccbid, "ClaimId": connect_id,
                  "MyAddress": "" if streaming else "<127.0.0.1:1>"})  # fmt: skip
    if streaming:
        ad["CCBStreamingRequired"] = True
    return _raw(broker, Command.CCB_REQUEST, ad)


def _raw(broker: str, command: int, ad: ClassAd | None, extra: bytes = b"") -> socket.socket:
    sock = socket.create_connection(Sinful.parse(broker).endpoint, timeout=30)
    writer = MessageWriter().put_int(command)
    if ad is not None:
        put_classad(writer, ad)
    sock.sendall(CedarConnection().send_message(writer.getvalue()) + extra)
    return sock


def _answer(sock: socket.socket, *, close: bool = True) -> ClassAd | None:
    """The broker's reply ad, or None when it closed without one."""
    conn = CedarConnection()
    try:
        while (message := conn.next_message()) is None:
            data = sock.recv(65536)
            if not data:
                return None
            conn.receive_data(data)
    finally:
        if close:
            sock.close()
    return get_classad(message)


def test_a_request_flood_is_refused_beyond_the_caps_and_honest_requests_are_served() -> None:
    with bounded_memory(REQUEST_MEMORY), honest_and_hostile() as (setup, hostile):
        flood = [_request(setup.broker.address, hostile.ccbid, f"id{n}") for n in range(10)]
        forwarded = [hostile.forwarded() for _ in range(LIMITS.max_pending_per_target)]
        pending = setup.broker.ccb.targets[int(hostile.ccbid)].pending  # type: ignore[union-attr]
        assert len(pending) == LIMITS.max_pending_per_target
        assert ping(setup.address, "READ", security=SECURITY, timeout=20).authorized
        answers = [_answer(sock) for sock in flood]
    refused = [a for a in answers if a is not None and "too many requests pending" in str(a)]
    timed_out = [a for a in answers if a is not None and "timed out waiting" in str(a)]
    assert len(refused) == 10 - LIMITS.max_pending_per_target
    assert len(timed_out) == LIMITS.max_pending_per_target  # the target never called back
    assert all(a["Result"] is False for a in refused + timed_out)
    assert {str(ad["ClaimId"]) for ad in forwarded} <= {f"id{n}" for n in range(10)}


def test_a_registration_flood_is_capped() -> None:
    """Registrations beyond ``max_targets`` are closed unanswered; the registered target is
    still reached."""
    with ccb_setup(_broker()) as setup:
        flood = [
            _raw(setup.broker.address, Command.CCB_REGISTER, ClassAd({"Name": f"F{n}"}))
            for n in range(4)
        ]
        answers = [_answer(sock, close=False) for sock in flood]  # the accepted stay
        assert ping(setup.address, "READ", security=SECURITY, timeout=20).authorized
        for sock in flood:
            sock.close()
    accepted = [a for a in answers if a is not None]
    assert len(accepted) == LIMITS.max_targets - 1
    assert answers.count(None) == 4 - len(accepted)


def test_a_streaming_request_whose_target_never_connects_back_is_refused() -> None:
    with honest_and_hostile() as (setup, hostile):
        sock = _request(setup.broker.address, hostile.ccbid, "c0ffee", streaming=True)
        request = hostile.forwarded()
        answer = _answer(sock)
    assert str(request["MyAddress"]) == f"<{setup.broker.ccb.address}>"  # type: ignore[union-attr]
    assert answer is not None and answer["Result"] is False
    assert "did not connect back to the broker" in str(answer["ErrorString"])


def test_a_forged_reverse_connection_is_closed_and_the_real_one_relayed() -> None:
    """A hello with another connect id is closed without a word (spec 09 §7.4); the target's
    real one joins the requester, who gets ``ProxyMode`` and the hello."""
    with honest_and_hostile() as (setup, hostile):
        sock = _request(setup.broker.address, hostile.ccbid, "realid", streaming=True)
        request = hostile.forwarded()
        hello = {"MyAddress": str(request["MyAddress"]), "RequestID": str(request["RequestID"])}
        forged = _raw(setup.broker.address, Command.CCB_REVERSE_CONNECT,
                      ClassAd({"ClaimId": "forged", **hello}))  # fmt: skip
        assert _answer(forged) is None
        real = _raw(setup.broker.address, Command.CCB_REVERSE_CONNECT,
                    ClassAd({"ClaimId": "realid", **hello}))  # fmt: skip
        conn = CedarConnection()
        while (first := conn.next_message()) is None:
            conn.receive_data(sock.recv(65536))
        assert get_classad(first)["ProxyMode"] is True
        while (second := conn.next_message()) is None:
            conn.receive_data(sock.recv(65536))
        assert second.get_int() == Command.CCB_REVERSE_CONNECT
        assert get_classad(second)["ClaimId"] == "realid"
        real.sendall(b"relayed bytes")  # the relay copies whatever follows, verbatim
        assert sock.recv(64) == b"relayed bytes"
        real.close()
        sock.close()


@pytest.mark.parametrize("attack", ["wrong connect id", "garbage", "no ids"])
def test_a_lying_target_is_dropped_and_its_requester_refused(attack: str) -> None:
    """A result with another connect id or without its ids (spec 09 §6.4 step 6), or bytes
    that are no CEDAR message, end the target's registration; the requester waiting on it is
    refused at once, and the honest target is still reached."""
    with honest_and_hostile() as (setup, hostile):
        sock = _request(setup.broker.address, hostile.ccbid, "victim")
        request = hostile.forwarded()
        if attack == "garbage":
            hostile.channel.sock.sendall(b"\xff" * 64)  # type: ignore[attr-defined]
        elif attack == "no ids":
            hostile.send(ClassAd({"Result": True}))
        else:
            hostile.send(ClassAd({"Result": True, "ClaimId": "other", "MyAddress": "<1.2.3.4:5>",
                                  "RequestID": str(request["RequestID"])}))  # fmt: skip
        answer = _answer(sock)
        assert ping(setup.address, "READ", security=SECURITY, timeout=20).authorized
        assert int(hostile.ccbid) not in setup.broker.ccb.targets  # type: ignore[union-attr]
    assert answer is not None and answer["Result"] is False
    assert "disconnected" in str(answer["ErrorString"])


def test_malformed_requests_are_closed_without_a_reply() -> None:
    """No ``ClaimId``, a ``CCBID`` that is no number, or no ad at all (spec 09 §6.4 step 1)."""
    with ccb_setup(_broker()) as setup:
        broker = setup.broker.address
        bad = [
            _raw(broker, Command.CCB_REQUEST, ClassAd({"CCBID": "1", "MyAddress": "<1.2.3.4:5>"})),
            _raw(
                broker,
                Command.CCB_REQUEST,
                ClassAd({"CCBID": "x1", "ClaimId": "a", "MyAddress": "<1.2.3.4:5>"}),
            ),  # fmt: skip
            _raw(broker, Command.CCB_REQUEST, None),
        ]
        assert [_answer(sock) for sock in bad] == [None] * 3
        assert ping(setup.address, "READ", security=SECURITY, timeout=20).authorized


def test_a_target_gone_while_a_requester_waits_is_the_requesters_error() -> None:
    """The target's registration ends while cedar's requester waits: the broker refuses it
    at once and ``ping`` reports that broker's reason (well within its deadline)."""
    import threading

    from cedar.errors import CedarConnectionError

    with honest_and_hostile() as (setup, hostile):
        contact = f"{setup.broker.ccb.address}#{hostile.ccbid}"  # type: ignore[union-attr]
        address = str(Sinful("127.0.0.1", 1, {"CCBID": contact}))
        outcome: list[BaseException] = []

        def ask() -> None:
            try:
                ping(address, "READ", security=SECURITY, timeout=30)
            except CedarConnectionError as exc:
                outcome.append(exc)

        waiting = threading.Thread(target=ask)
        waiting.start()
        hostile.forwarded()  # the request reached the target, which now goes away
        hostile.channel.close()
        waiting.join(60)
    (error,) = outcome
    assert "the daemon registered as ccbid" in str(error) and "disconnected" in str(error)
