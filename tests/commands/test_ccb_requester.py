"""The CCB requester (spec 09 §5) against hostile and failing brokers, in one process.

The broker is a cedar :class:`Daemon` serving ``CCB_REQUEST``; each scenario decides what it
does with the request: refuse it, close without a word, never have the target call back, send
a forged reverse connection first, or let the target connect back.  "The target" is a relay
from the reversed connection to a real cedar daemon, so a whole ``ping`` runs over it.  Every
failure must be a clear :mod:`cedar` error within the call's deadline (no test times the call:
a hang would run into the test's own bounds).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.auth.sinful import Sinful
from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.commands import Collector, ping
from cedar.daemons.daemon import CommandRequest, Daemon, offload
from cedar.daemons.testing import RecordingQueryHandler, slot_ad
from cedar.errors import CedarConnectionError, CedarTimeout
from cedar.numbers import AdType, Command
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageWriter
from cedar.stream.protocol import Protocol, Receive, Send
from tests.robustness.helpers import plain_policy

SECURITY = ClientSecurity(SecurityConfig(methods=["CLAIMTOBE"], crypto_methods=[]))


def _hello(connect_id: str, my_address: str, command: int = Command.CCB_REVERSE_CONNECT) -> bytes:
    writer = MessageWriter().put_int(command)
    put_classad(writer, ClassAd({"ClaimId": connect_id, "MyAddress": my_address, "RequestID": "1"}))
    return CedarConnection().send_message(writer.getvalue())


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _call_back(my_address: str, hellos: list[bytes], target: tuple[str, int] | None) -> None:
    """The target's part: a connection per hello; the last one relayed to ``target``."""
    host, port = Sinful.parse(my_address).endpoint
    for index, hello in enumerate(hellos):
        back = socket.create_connection((host, port), timeout=10)
        back.sendall(hello)
        if index < len(hellos) - 1 or target is None:
            back.close()
            continue
        server = socket.create_connection(target, timeout=10)
        for a, b in ((back, server), (server, back)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()


class Broker:
    """``CCB_REQUEST`` handled as ``scenario`` says; ``requests`` keeps the ads received."""

    def __init__(self, scenario: str, target: tuple[str, int] | None = None) -> None:
        self.scenario = scenario
        self.target = target
        self.requests: list[ClassAd] = []

    def __call__(self, request: CommandRequest) -> Protocol[None]:
        ad = get_classad((yield from request.read_payload()))
        self.requests.append(ad)
        connect_id, my_address = str(ad["ClaimId"]), str(ad["MyAddress"])
        reply = ClassAd({"Result": True, "ErrorString": ""})
        if self.scenario == "refuse":
            reply = ClassAd({"Result": False, "ErrorString": "no daemon with that id (test)"})
        elif self.scenario == "silent":
            return
        elif self.scenario == "never":  # say yes, and the target never calls
            pass
        else:
            hellos = [_hello(connect_id, my_address)]
            if self.scenario == "forged":
                hellos[:0] = [_hello("0" * 40, my_address), _hello(connect_id, my_address, 70)]
            yield from offload(lambda: _call_back(my_address, hellos, self.target))
        writer = request.writer()
        put_classad(writer, reply)
        yield Send(writer)
        if self.scenario == "never":
            yield Receive()  # hold the connection until the requester gives up


@contextmanager
def brokers(*scenarios: str) -> Iterator[tuple[str, list[Broker]]]:
    """A target address with one ``CCBID`` contact per scenario (ccbid 7 at each broker)."""
    target = Daemon("target", "STARTD", policy=plain_policy())
    target.register(Command.QUERY_STARTD_ADS, RecordingQueryHandler([slot_ad()]))
    with ExitStack() as stack:
        stack.enter_context(target.run_in_thread())
        endpoint = Sinful.parse(target.address).endpoint
        handlers, contacts = [], []
        for scenario in scenarios:
            handler = Broker(scenario, endpoint)
            daemon = Daemon("broker", "COLLECTOR", policy=plain_policy())
            daemon.register(Command.CCB_REQUEST, handler, permission="READ")
            stack.enter_context(daemon.run_in_thread())
            handlers.append(handler)
            contacts.append(daemon.address[1:-1] + "#7")
        # Its own port is closed: only the broker can get us there.
        yield str(Sinful("127.0.0.1", 1, {"CCBID": " ".join(contacts)})), handlers


def test_reversed_connection_carries_the_command() -> None:
    with brokers("ok") as (address, (broker,)):
        result = ping(address, "READ", security=SECURITY, timeout=20)
        slots = Collector(address, security=SECURITY, timeout=20).query(AdType.SLOT)
    assert result.authorized
    assert result.route is not None and result.route.startswith("CCB reversed connection via")
    assert len(slots) > 0
    request = broker.requests[0]
    assert request["CCBID"] == "7" and request["Name"] == "TOOL"
    assert len(str(request["ClaimId"])) == 40 and str(request["MyAddress"]).startswith("<127.")


def test_forged_reverse_connections_are_dropped() -> None:
    """A wrong connect id and a wrong command come first; only the real one is adopted."""
    with brokers("forged") as (address, _):
        assert ping(address, "READ", security=SECURITY, timeout=20).authorized


def test_refusal_names_the_brokers_reason() -> None:
    with brokers("refuse") as (address, _), pytest.raises(CedarConnectionError) as caught:
        ping(address, "READ", security=SECURITY, timeout=20)
    assert "no daemon with that id (test)" in str(caught.value)
    assert "received failure message from CCB server" in str(caught.value)


def test_reverse_connection_that_never_comes_ends_at_the_deadline() -> None:
    with brokers("never") as (address, _), pytest.raises(CedarTimeout) as caught:
        ping(address, "READ", security=SECURITY, timeout=2)
    assert "deadline" in str(caught.value) or "timed out" in str(caught.value)


def test_broker_that_closes_without_reply_fails() -> None:
    with brokers("silent") as (address, _), pytest.raises(CedarConnectionError) as caught:
        ping(address, "READ", security=SECURITY, timeout=20)
    assert "through CCB" in str(caught.value)


@pytest.mark.parametrize("order", [("refuse", "ok"), ("silent", "ok"), ("ok", "refuse")])
def test_several_brokers_one_that_works_is_enough(order: tuple[str, str]) -> None:
    with brokers(*order) as (address, handlers):
        assert ping(address, "READ", security=SECURITY, timeout=20).authorized
    assert sum(len(h.requests) for h in handlers) >= 1


def test_flood_of_requests_each_gets_its_own_connection() -> None:
    """Twenty requesters at once: each adopts only its own reversed connection."""
    results: list[Any] = []
    with brokers("ok") as (address, (broker,)):
        threads = [
            threading.Thread(
                target=lambda: results.append(
                    ping(address, "READ", security=SECURITY, timeout=30).authorized
                )
            )
            for _ in range(20)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert results == [True] * 20
    assert len({str(ad["ClaimId"]) for ad in broker.requests}) == 20


def test_address_without_a_usable_contact_is_refused() -> None:
    address = str(Sinful("127.0.0.1", 1, {"CCBID": "no-hash-sign"}))
    with pytest.raises(CedarConnectionError) as caught:
        ping(address, "READ", security=SECURITY, timeout=5)
    assert "Bad CCB contact" in str(caught.value)


def test_a_client_on_the_targets_private_network_dials_it() -> None:
    """Same ``PrivNet`` as our ``PRIVATE_NETWORK_NAME``: no broker is asked (its address here
    is dead), the target's own address is dialled (spec 09 §3 step 1); another name: CCB."""
    from cedar.config import Config

    target = Daemon("target", "STARTD", policy=plain_policy())
    with target.run_in_thread():
        host, port = Sinful.parse(target.address).endpoint
        params = {"CCBID": "127.0.0.1:1#7", "PrivNet": "lab-net"}
        address = str(Sinful(host, port, params))

        def security(network: str) -> ClientSecurity:
            config = Config(settings={"PRIVATE_NETWORK_NAME": network})
            policy = SecurityConfig(methods=["CLAIMTOBE"], crypto_methods=[])
            policy.options["config"] = config
            return ClientSecurity(policy)

        near = ping(address, "READ", security=security("lab-net"), timeout=10)
        with pytest.raises(CedarConnectionError, match="through CCB"):
            ping(address, "READ", security=security("Lab-Net"), timeout=10)
    assert near.authorized and near.route == "direct (private network lab-net)"
