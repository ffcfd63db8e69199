"""``PipelinedResponse``: the body is made in its own task a bounded number of chunks ahead of
the sender, everything arrives in order, and errors on either side come out as themselves."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio
import trio.testing

from cedar.http_api.streaming import AHEAD, PipelinedResponse


class Recorder:
    """An ASGI ``send`` that can be held (a slow client) or made to fail (a client gone)."""

    def __init__(self, fail_at: int | None = None, hold_after: int | None = None) -> None:
        self.messages: list[dict[str, Any]] = []
        self.gate = trio.Event()
        self.fail_at = fail_at
        self.hold_after = hold_after
        if hold_after is None:
            self.gate.set()

    async def __call__(self, message: Any) -> None:
        if self.hold_after is None or len(self.messages) >= self.hold_after:
            await self.gate.wait()
        if self.fail_at is not None and len(self.messages) == self.fail_at:
            raise OSError("client went away")
        self.messages.append(message)

    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.messages if m["type"] == "http.response.body"]


def test_every_chunk_in_order_then_the_end() -> None:
    async def body() -> AsyncIterator[bytes]:
        for i in range(50):
            yield f"{i},".encode()

    send = Recorder()
    trio.run(PipelinedResponse(body()).stream_response, send)
    assert send.messages[0]["type"] == "http.response.start"
    assert b"".join(send.bodies()) == "".join(f"{i}," for i in range(50)).encode()
    assert send.messages[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


def test_a_held_client_bounds_the_chunks_made_ahead() -> None:
    made = [0]

    async def body() -> AsyncIterator[bytes]:
        for _ in range(100):
            made[0] += 1
            yield b"x" * 10

    async def main() -> None:
        send = Recorder(hold_after=1)  # the client stops reading after the head
        async with trio.open_nursery() as nursery:
            nursery.start_soon(PipelinedResponse(body()).stream_response, send)
            await trio.sleep(0.05)
            await trio.testing.wait_all_tasks_blocked()
            held = made[0]
            send.gate.set()
        assert held <= AHEAD + 3  # buffered + one being sent + one waiting to be put
        assert len(send.bodies()) == 101

    trio.run(main)


def test_an_error_in_the_body_is_raised_as_itself_after_what_was_made() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b"first"
        raise RuntimeError("the schedd went away")

    send = Recorder()
    with pytest.raises(RuntimeError, match="schedd went away"):
        trio.run(PipelinedResponse(body()).stream_response, send)
    assert send.bodies() == [b"first"]


def test_a_client_gone_closes_the_body_and_is_raised_as_itself() -> None:
    closed = []

    async def body() -> AsyncIterator[bytes]:
        try:
            for _ in range(1000):
                yield b"y"
        finally:
            closed.append(True)

    send = Recorder(fail_at=3)
    with pytest.raises(OSError, match="went away"):
        trio.run(PipelinedResponse(body()).stream_response, send)
    assert closed == [True]
