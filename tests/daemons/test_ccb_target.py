"""The CCB target (:class:`CcbTarget`) against a hostile broker, in one process.

The broker is a cedar daemon serving ``CCB_REGISTER``: it registers the target, then forwards
a flood of requests (and one without its fields) whose requester accepts the reversed
connection and never says a word.  The target dials at most ``max_reversed`` of them at once,
refuses the rest with a result, ignores the malformed one, and stays registered.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any

import pytest
import trio

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.daemons.ccb_target import CcbTarget
from cedar.daemons.daemon import CommandRequest, Daemon
from cedar.numbers import Command
from cedar.stream.protocol import Protocol, Receive, Send
from tests.robustness.helpers import plain_policy

FLOOD = 10
CAP = 3

#: Runs a target against a broker whose ``CCB_REGISTER`` is ``register`` until ``done`` is
#: set (or 30 s), then stops both; returns the target and its daemon for the assertions.
TargetRun = Callable[..., tuple[CcbTarget, Daemon]]


@pytest.fixture
def run_target() -> TargetRun:
    """The set-up every test here shares: a broker daemon serving ``register`` (a protocol),
    a target daemon registered with it through :class:`CcbTarget` (CLAIMTOBE, in clear)."""

    def run(
        register: Callable[[CommandRequest], Protocol[None]],
        done: threading.Event,
        *,
        broker_policy: Any = None,
        **options: Any,
    ) -> tuple[CcbTarget, Daemon]:
        broker = Daemon("broker", "COLLECTOR", policy=broker_policy or plain_policy())
        broker.register(Command.CCB_REGISTER, register, permission="DAEMON")
        target_daemon = Daemon("target", "STARTD", policy=plain_policy())
        security = ClientSecurity(SecurityConfig(methods=["CLAIMTOBE"], crypto_methods=[]))
        made: list[CcbTarget] = []

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                await nursery.start(broker.serve)
                await nursery.start(target_daemon.serve)
                made.append(CcbTarget(target_daemon, broker.address, security=security, **options))
                nursery.start_soon(made[0].run)
                with trio.move_on_after(30):
                    await trio.to_thread.run_sync(done.wait, abandon_on_cancel=True)
                nursery.cancel_scope.cancel()

        trio.run(main)
        return made[0], target_daemon

    return run


def test_a_flood_of_forwarded_requests_is_bounded(run_target: TargetRun) -> None:
    silent = socket.create_server(("127.0.0.1", 0))  # accepts (backlog), never speaks
    silent_address = f"<127.0.0.1:{silent.getsockname()[1]}>"
    results: list[ClassAd] = []
    registration: list[ClassAd] = []
    done = threading.Event()

    def register(request: CommandRequest) -> Protocol[None]:
        registration.append(get_classad((yield from request.read_payload())))
        reply = request.writer()
        put_classad(reply, ClassAd({"CCBID": "127.0.0.1:1#5", "ClaimId": "42", "Command": 67}))
        yield Send(reply)
        for number in range(FLOOD):
            forward = request.writer()
            put_classad(forward, ClassAd({"Command": 68, "MyAddress": silent_address,
                                          "ClaimId": f"id{number}", "RequestID": str(number),
                                          "Name": "flood"}))  # fmt: skip
            yield Send(forward)
        malformed = request.writer()
        put_classad(malformed, ClassAd({"Command": 68, "Name": "no fields"}))
        yield Send(malformed)
        while len(results) < FLOOD:
            results.append(get_classad((yield Receive())))
        done.set()
        yield Receive()  # hold the registration open

    with silent:
        target, target_daemon = run_target(register, done, max_reversed=CAP, reconnect=60)
    assert target.contact == "127.0.0.1:1#5"
    assert "CCBID=127.0.0.1:1#5" in target_daemon.address
    assert registration[0]["Command"] == Command.CCB_REGISTER
    assert str(registration[0]["Name"]).startswith("STARTD <127.0.0.1:")
    assert len(results) == FLOOD  # the malformed request got none
    dialled = [r for r in results if r["Result"] is True]
    refused = [r for r in results if r["Result"] is False]
    assert len(dialled) == CAP
    assert {r["ErrorString"] for r in refused} == {"too many reversed connections at once"}
    assert sorted(int(str(r["RequestID"])) for r in results) == list(range(FLOOD))


def test_a_quiet_registration_sends_heartbeats(run_target: TargetRun) -> None:
    """Nothing from the broker for ``heartbeat`` seconds: the target sends ``{Command = 441}``
    (spec 09 §4.2), and again after the broker's echo."""
    beats: list[ClassAd] = []
    done = threading.Event()

    def register(request: CommandRequest) -> Protocol[None]:
        get_classad((yield from request.read_payload()))
        reply = request.writer()
        put_classad(reply, ClassAd({"CCBID": "127.0.0.1:1#6", "ClaimId": "7", "Command": 67}))
        yield Send(reply)
        while len(beats) < 2:
            beat = get_classad((yield Receive()))
            beats.append(beat)
            echo = request.writer()
            put_classad(echo, beat)
            yield Send(echo)
        done.set()
        yield Receive()

    run_target(register, done, broker_policy=plain_policy(connection_timeout=30), heartbeat=1)
    assert [dict(beat.items()) for beat in beats] == [{"Command": 441}] * 2
