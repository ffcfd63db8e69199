"""Per-call deadlines and result bounds of the clients, against hostile server doubles.

Bounds are generous: a test fails only if a call runs far past its deadline (the old per-read
timeouts let a dripping server hold a call for minutes).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import trio

from cedar.auth.client_config import ClientSecurity, SecurityConfig
from cedar.auth.policy import Requirement
from cedar.classad_wire import ClassAd, put_classad
from cedar.commands import AsyncCollector, Collector, Schedd, ping
from cedar.daemons.daemon import CommandRequest, Daemon
from cedar.daemons.testing import mock_daemon
from cedar.errors import CedarTimeout, ResultLimitExceeded
from cedar.numbers import Command
from cedar.stream.protocol import Protocol, Send
from tests.loopback import serving

RAW = ClientSecurity(SecurityConfig(negotiation=Requirement.NEVER))
#: The longest any single call below may take, whatever the server does.
CALL_TIMEOUT = 2.0
#: "Finished in time": far below what the hostile server could hold a per-read timeout for.
BOUND = 15.0


def _drip(conn: socket.socket, stop: threading.Event) -> None:
    """A packet header announcing 1000 bytes, then one byte every 0.3 s."""
    conn.sendall(b"\x01\x00\x00\x03\xe8")
    while not stop.wait(0.3):
        conn.sendall(b"\x00")


@pytest.fixture
def dripping_server() -> Iterator[str]:
    """Accepts, then drips (:func:`_drip`) until the test ends."""
    with serving(_drip) as address:
        yield address


def _finishes_in_time(call: object) -> None:
    start = time.monotonic()
    with pytest.raises(CedarTimeout, match="deadline"):
        call()  # type: ignore[operator]
    assert time.monotonic() - start < BOUND


def test_ping_has_a_per_call_deadline(dripping_server: str) -> None:
    _finishes_in_time(lambda: ping(dripping_server, "READ", timeout=CALL_TIMEOUT))


def test_queries_have_a_per_call_deadline(dripping_server: str) -> None:
    collector = Collector(dripping_server, security=RAW, timeout=CALL_TIMEOUT)
    _finishes_in_time(lambda: collector.query("startd"))
    schedd = Schedd(dripping_server, security=RAW, timeout=CALL_TIMEOUT)
    _finishes_in_time(lambda: schedd.query())


def test_async_queries_have_a_per_call_deadline(dripping_server: str) -> None:
    async def main() -> None:
        collector = AsyncCollector(dripping_server, security=RAW, timeout=CALL_TIMEOUT)
        with pytest.raises(CedarTimeout, match="deadline"):
            await collector.query("startd")

    start = time.monotonic()
    trio.run(main)
    assert time.monotonic() - start < BOUND


def _endless_job_ads(request: CommandRequest) -> Protocol[None]:
    """A schedd double that answers a job query with job ads forever."""
    yield from request.read_payload()
    number = 0
    while True:
        number += 1
        writer = request.writer()
        put_classad(writer, ClassAd({"ClusterId": number, "ProcId": 0, "Cmd": "x" * 100}))
        yield Send(writer)


@pytest.fixture
def endless_schedd() -> Iterator[Daemon]:
    daemon, _ = mock_daemon(methods=("CLAIMTOBE",), daemon_type="SCHEDD")
    daemon.register(Command.QUERY_JOB_ADS, _endless_job_ads, permission="READ")
    with daemon.run_in_thread():
        yield daemon


def test_results_per_query_are_bounded(endless_schedd: Daemon) -> None:
    schedd = Schedd(endless_schedd.address, security=RAW, timeout=60, max_results=500)
    start = time.monotonic()
    with pytest.raises(ResultLimitExceeded, match="500"):
        schedd.query()
    assert time.monotonic() - start < BOUND


def test_an_endless_reply_ends_at_the_deadline(endless_schedd: Daemon) -> None:
    schedd = Schedd(endless_schedd.address, security=RAW, timeout=CALL_TIMEOUT)
    start = time.monotonic()
    with pytest.raises(CedarTimeout, match="deadline"):
        for _ in schedd.query_iter():
            pass
    assert time.monotonic() - start < BOUND
