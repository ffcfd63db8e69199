"""Protocol coroutines: multi-step CEDAR exchanges written once, run over any transport.

A protocol is a generator that yields requests and never touches a socket::

    def ping(conn: CedarConnection) -> Protocol[int]:
        yield Send(conn.writer().put_int(60011))
        reply = yield Receive()          # a MessageReader for the next whole message
        return reply.get_int()

``Send`` sends one whole message, ``Receive`` waits for the next whole message (``SendRaw`` and
``ReceiveRaw`` move unframed bytes: clear-mode file bodies), ``Emit`` hands a
streamed result (e.g. one ad of a long query) to the consumer without buffering the rest.  Errors
of the transport (closed connection, timeout, forged packet) are thrown into the generator at the
``yield`` so a protocol can turn them into a more helpful error.  Protocols compose with
``yield from``.  :class:`ProtocolRunner` holds the stepping logic every driver shares.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageReader, MessageWriter

T = TypeVar("T")


@dataclass(frozen=True)
class Send:
    """Send one whole message."""

    message: MessageWriter | bytes


@dataclass(frozen=True)
class Receive:
    """Wait for the next whole message; the ``yield`` evaluates to a :class:`MessageReader`."""


@dataclass(frozen=True)
class SendRaw:
    """Write bytes straight to the stream, with no packet header (clear file bodies, 01 §7.2)."""

    data: bytes


@dataclass(frozen=True)
class ReceiveRaw:
    """Wait for 1..``max_bytes`` raw bytes (no framing); the ``yield`` evaluates to ``bytes``."""

    max_bytes: int


@dataclass(frozen=True)
class Emit:
    """Hand one streamed result to the consumer."""

    value: Any


Request = Send | Receive | SendRaw | ReceiveRaw | Emit
Protocol = Generator[Request, Any, T]


@dataclass(frozen=True)
class Write:
    """Driver action: write these bytes to the transport (``payload``: the message in clear)."""

    data: bytes
    payload: bytes = b""


@dataclass(frozen=True)
class ReadMessage:
    """Driver action: read until :meth:`CedarConnection.next_message` yields a message."""


@dataclass(frozen=True)
class ReadRaw:
    """Driver action: read until :meth:`CedarConnection.next_raw` yields bytes."""

    max_bytes: int


@dataclass(frozen=True)
class Deliver:
    """Driver action: pass a streamed value to the consumer."""

    value: Any


@dataclass(frozen=True)
class Finished:
    """Driver action: the protocol returned ``result``."""

    result: Any


Action = Write | ReadMessage | ReadRaw | Deliver | Finished


class ProtocolRunner:
    """Steps a protocol generator and turns its requests into transport actions."""

    def __init__(self, conn: CedarConnection, protocol: Protocol[Any]) -> None:
        self.conn = conn
        self._protocol = protocol

    def _translate(self, request: Request) -> Action:
        if isinstance(request, Send):
            message = request.message
            payload = message.getvalue() if isinstance(message, MessageWriter) else bytes(message)
            return Write(self.conn.send_message(payload), payload)
        if isinstance(request, Receive):
            return ReadMessage()
        if isinstance(request, SendRaw):
            return Write(self.conn.send_raw(request.data), b"")
        if isinstance(request, ReceiveRaw):
            return ReadRaw(request.max_bytes)
        if isinstance(request, Emit):
            return Deliver(request.value)
        raise TypeError(f"protocol yielded {request!r}, not Send/Receive/Emit")

    def start(self) -> Action:
        """Run the protocol up to its first request."""
        return self.resume(None)

    def resume(self, value: MessageReader | bytes | None) -> Action:
        """Continue after a request completed (``value`` is the message for a ``Receive``)."""
        try:
            return self._translate(self._protocol.send(value))
        except StopIteration as stop:
            return Finished(stop.value)

    def throw(self, error: BaseException) -> Action:
        """Raise a transport error inside the protocol at its current ``yield``."""
        try:
            return self._translate(self._protocol.throw(error))
        except StopIteration as stop:
            return Finished(stop.value)

    def close(self) -> None:
        """Abandon the protocol (runs its ``finally`` blocks)."""
        self._protocol.close()
