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

from collections.abc import Callable, Generator, Sequence
from typing import Any, TypeVar

from cedar.errors import ProtocolError
from cedar.record import Record
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageReader, MessageTruncated, MessageWriter

T = TypeVar("T")

#: Sets a field of a frozen instance (its own ``__setattr__`` refuses).
_set = object.__setattr__


class _Frozen(Record, frozen=True):
    """What the requests and actions below share: immutable, slotted, equal and hashed by
    their fields, shown as ``Name(field=value, ...)``, copied and pickled by value
    (:class:`cedar.record.Record`).

    Each class writes its ``__slots__`` and ``__init__`` by hand, setting its fields with
    ``object.__setattr__``: one is built per message sent or received, and ``@dataclass``
    constructed ~10-15% slower (Python 3.11, measured side by side).
    """

    __slots__ = ()


class Send(_Frozen):
    """Send one whole message.

    ``flush=False`` lets the driver hold it back and write it together with the messages that
    follow (at the latest before the protocol waits): for calls that are not answered, such as
    the attributes of a pipelined submission.  Holding back by default was measured to slow down
    real daemons (a resumed command answered 2-3x later when its two messages came together).
    """

    __slots__ = ("message", "flush")
    message: MessageWriter | bytes
    flush: bool

    def __init__(self, message: MessageWriter | bytes, flush: bool = True) -> None:
        _set(self, "message", message)
        _set(self, "flush", flush)


class Receive(_Frozen):
    """Wait for the next whole message; the ``yield`` evaluates to a :class:`MessageReader`.

    With ``part_size``, wait only for the next piece of at least that many bytes (or the end of
    the message): see :meth:`CedarConnection.next_message` and :class:`StreamedMessage`.
    """

    __slots__ = ("part_size",)
    part_size: int | None

    def __init__(self, part_size: int | None = None) -> None:
        _set(self, "part_size", part_size)


class SendRaw(_Frozen):
    """Write bytes straight to the stream, with no packet header (clear file bodies, 01 §7.2)."""

    __slots__ = ("data",)
    data: bytes

    def __init__(self, data: bytes) -> None:
        _set(self, "data", data)


class ReceiveRaw(_Frozen):
    """Wait for 1..``max_bytes`` raw bytes (no framing); the ``yield`` evaluates to ``bytes``."""

    __slots__ = ("max_bytes",)
    max_bytes: int

    def __init__(self, max_bytes: int) -> None:
        _set(self, "max_bytes", max_bytes)


class Emit(_Frozen):
    """Hand one streamed result to the consumer; with ``many``, a sequence of them in order.

    A reply decoded a packet at a time yields one ``Emit(ads, many=True)`` per packet: the
    per-item cost of stepping the protocol stack then does not grow with the number of ads.
    """

    __slots__ = ("value", "many")
    value: Any
    many: bool

    def __init__(self, value: Any, many: bool = False) -> None:
        _set(self, "value", value)
        _set(self, "many", many)


class Offload(_Frozen):
    """Run ``function`` -- blocking work outside this connection, such as a Kerberos KDC
    exchange -- where it blocks no other task, and resume with its result.

    The driver calls ``function(limit)`` with the seconds the call's deadline leaves (and stops
    waiting then): the blocking driver in place, the Trio driver in a worker thread.  It must
    not raise: an error is a value it returns for the protocol to judge.
    """

    __slots__ = ("function",)
    function: Callable[[float], Any]

    def __init__(self, function: Callable[[float], Any]) -> None:
        _set(self, "function", function)


Request = Send | Receive | SendRaw | ReceiveRaw | Emit | Offload
Protocol = Generator[Request, Any, T]


class Write(_Frozen):
    """Driver action: write these bytes to the transport (``payload``: the message in clear)."""

    __slots__ = ("data", "payload", "flush")
    data: bytes
    payload: bytes
    flush: bool

    def __init__(self, data: bytes, payload: bytes = b"", flush: bool = True) -> None:
        _set(self, "data", data)
        _set(self, "payload", payload)
        _set(self, "flush", flush)


class ReadMessage(_Frozen):
    """Driver action: read until :meth:`CedarConnection.next_message` yields a message."""

    __slots__ = ("part_size",)
    part_size: int | None

    def __init__(self, part_size: int | None = None) -> None:
        _set(self, "part_size", part_size)


class ReadRaw(_Frozen):
    """Driver action: read until :meth:`CedarConnection.next_raw` yields bytes."""

    __slots__ = ("max_bytes",)
    max_bytes: int

    def __init__(self, max_bytes: int) -> None:
        _set(self, "max_bytes", max_bytes)


class Deliver(_Frozen):
    """Driver action: pass a streamed value (``many``: each of a sequence) to the consumer."""

    __slots__ = ("value", "many")
    value: Any
    many: bool

    def __init__(self, value: Any, many: bool = False) -> None:
        _set(self, "value", value)
        _set(self, "many", many)

    def values(self) -> Sequence[Any]:
        """The delivered values, in order."""
        return self.value if self.many else (self.value,)


class Finished(_Frozen):
    """Driver action: the protocol returned ``result``."""

    __slots__ = ("result",)
    result: Any

    def __init__(self, result: Any) -> None:
        _set(self, "result", result)


Action = Write | ReadMessage | ReadRaw | Deliver | Finished | Offload


class ProtocolRunner:
    """Steps a protocol generator and turns its requests into transport actions."""

    def __init__(self, conn: CedarConnection, protocol: Protocol[Any]) -> None:
        self.conn = conn
        self._protocol = protocol

    def _translate(self, request: Request) -> Action:
        if isinstance(request, Send):
            message = request.message
            payload = message.getvalue() if isinstance(message, MessageWriter) else bytes(message)
            return Write(self.conn.send_message(payload), payload, request.flush)
        if isinstance(request, Receive):
            return ReadMessage(request.part_size)
        if isinstance(request, SendRaw):
            return Write(self.conn.send_raw(request.data), b"")
        if isinstance(request, ReceiveRaw):
            return ReadRaw(request.max_bytes)
        if isinstance(request, Emit):
            return Deliver(request.value, request.many)
        if isinstance(request, Offload):
            return request
        raise TypeError(f"protocol yielded {request!r}, not Send/Receive/Emit/Offload")

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


#: Plaintext gathered before a streamed message is decoded further (a few dozen ads).
STREAM_PART_SIZE = 256 << 10
#: Default bound on one item (e.g. one ad) of a streamed message.
MAX_STREAMED_ITEM = 16 << 20


class StreamedMessage:
    """Reads items (ads) from messages of any size while their packets arrive.

    A collector answers a query with one message holding every ad, which for a large pool is
    bigger than any sane message limit.  This keeps only the bytes of the item being decoded:
    ``item = yield from stream.read(get_classad)`` parses from what has arrived, and when the
    parser runs out of bytes (:class:`MessageTruncated`) it waits for the next piece and tries
    again from the item's start.  An item larger than ``max_item_size`` is refused, so memory
    stays bounded whatever the peer sends.  When one message is used up, the next ``read``
    starts on the next message (history sends several).

    ``part_size=None`` reads whole messages instead (each within the connection's message
    limit).  Given ``conn``, a piece the connection already holds is taken without a trip
    through the driver (:meth:`held`).
    """

    def __init__(
        self,
        *,
        part_size: int | None = STREAM_PART_SIZE,
        max_item_size: int = MAX_STREAMED_ITEM,
        conn: CedarConnection | None = None,
    ) -> None:
        self.part_size = part_size
        self.max_item_size = max_item_size
        self._reader: MessageReader | None = None
        self._short = False  # the reader ends inside an item (after read_batch)
        self._conn = conn

    def _held(self) -> MessageReader | None:
        """The next piece if the connection (when given) already holds it: taken here, without
        a trip through the driver, which would only take it from the connection too."""
        conn = self._conn
        return None if conn is None else conn.next_message(self.part_size)

    def _receive(self, leftover: bytes) -> Protocol[MessageReader]:
        if len(leftover) > self.max_item_size:
            raise ProtocolError(
                f"one item of the reply is larger than {self.max_item_size} bytes "
                "(the per-item limit of a streamed reply); the peer is misbehaving"
            )
        part = self._held()
        if part is None:
            part = yield Receive(self.part_size)
        if leftover:
            part = MessageReader(
                leftover + part.payload, crypto=part.crypto, complete=part.complete
            )
        self._reader = part
        return part

    def held(self) -> MessageReader | None:
        """The reader the next item starts in, when its bytes are at hand: the current message
        (or piece) while it has unread bytes, else the next one the connection already holds,
        taken without a trip through the driver.  None: a wait is needed (:meth:`read`).

        For a reader of many items, parsed from it with no generator per item; an item cut at
        the end of a piece (not ``complete``) is read again from its start by :meth:`read`,
        which receives the rest."""
        reader = self._reader
        if reader is None or (reader.complete and reader.at_end()):
            reader = self._held()
            if reader is None:
                return None
            self._reader = reader
        return reader

    def read(self, parse: Callable[[MessageReader], T]) -> Protocol[T]:
        """Parse the next item, receiving more of the message as needed."""
        reader = self._reader
        if reader is None or (reader.complete and reader.at_end()):
            reader = yield from self._receive(b"")
        while True:
            start = reader.offset
            try:
                return parse(reader)
            except MessageTruncated:
                if reader.complete:
                    raise
            reader = yield from self._receive(reader.payload[start:])

    def read_batch(
        self, parse: Callable[[MessageReader], tuple[list[T], bool]]
    ) -> Protocol[tuple[list[T], bool]]:
        """The items the bytes at hand hold (at least one), and whether the sequence ended.

        ``parse`` reads every item complete in the reader and stops before one that is cut
        short, raising :class:`MessageTruncated` only if there is none (see
        :func:`cedar.classad_wire.wire.get_flagged_classads`).  Receives more of the message only
        when not even one item is complete.
        """
        reader = self._reader
        if reader is None or (reader.complete and reader.at_end()):
            reader = yield from self._receive(b"")
        elif self._short:
            reader = yield from self._receive(reader.payload[reader.offset :])
        self._short = False
        while True:
            start = reader.offset
            try:
                items, ended = parse(reader)
            except MessageTruncated:
                if reader.complete:
                    raise
                reader = yield from self._receive(reader.payload[start:])
                continue
            self._short = not ended  # the rest of the next item is still on its way
            return items, ended

    def end_of_message(self) -> Protocol[None]:
        """Wait for the end of the current message and fail if it carries unread bytes."""
        reader = self._reader
        while reader is not None and not reader.complete:
            if not reader.at_end():
                break
            reader = yield from self._receive(b"")
        if reader is not None:
            reader.end_of_message()
