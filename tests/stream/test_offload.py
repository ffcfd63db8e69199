"""``Offload``: blocking work inside a protocol (a Kerberos KDC exchange) runs where it blocks
no other task -- a worker thread under Trio, in place for the blocking drivers -- and is bounded
by the call's deadline."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import trio
import trio.testing

from cedar.errors import CedarTimeout
from cedar.stream.drivers import MemoryPair, TrioChannel
from cedar.stream.driving import Deadline
from cedar.stream.protocol import Offload, Protocol


def offloading(function: Any) -> Protocol[Any]:
    result = yield Offload(function)
    return result


def idle() -> Protocol[None]:
    return None
    yield  # a generator that asks for nothing


def test_trio_runs_it_in_a_thread_while_other_tasks_run() -> None:
    """The function waits until another task of the loop has run: it returns only because the
    loop was free while it ran (run on the loop itself, it would never see the event)."""
    seen = threading.Event()
    limits: list[float] = []

    def blocking(limit: float) -> str:
        limits.append(limit)
        return "free" if seen.wait(30) else "blocked"

    async def main() -> str:
        left, _right = trio.testing.memory_stream_pair()
        channel = TrioChannel(left, deadline=Deadline(60))
        result = ""

        async def offload() -> None:
            nonlocal result
            result = await channel.run(offloading(blocking))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(offload)
            await trio.sleep(0)
            await trio.to_thread.run_sync(seen.set)  # this task ran meanwhile
        return result

    assert trio.run(main) == "free"
    assert 0 < limits[0] <= 60  # the function is told what the deadline leaves


def test_trio_stops_waiting_at_the_deadline() -> None:
    release = threading.Event()

    def stuck(limit: float) -> None:
        release.wait(30)

    async def main() -> None:
        left, _right = trio.testing.memory_stream_pair()
        channel = TrioChannel(left, peer="the KDC", deadline=Deadline(0.2))
        await channel.run(offloading(stuck))

    try:
        with pytest.raises(CedarTimeout):
            trio.run(main)
    finally:
        release.set()


def test_blocking_drivers_call_it_in_place() -> None:
    pair = MemoryPair()
    client, server = pair.run(offloading(lambda limit: ("done", limit > 0)), idle())
    assert client == ("done", True) and server is None
