"""The sans-I/O core every driver runs a protocol with: what the drivers share, written once.

A driver (blocking socket, Trio stream, recorded bytes, memory pair) only moves bytes.  The rest
used to be kept by hand in each of them and drifted (``read_raw`` ignored the call's deadline in
the socket and Trio drivers); it lives here:

* stepping the protocol (:class:`ProtocolRunner`) and throwing transport errors into it;
* holding back ``Send(flush=False)`` messages and writing them in one go;
* cutting messages (or raw bytes) out of what has arrived, asking for more only when needed;
* how long each wait may take: the per-wait ``timeout`` and the whole call's :class:`Deadline`,
  checked before *every* wait (messages and raw bytes alike), and how a timeout is worded.

:class:`DriverCore` answers each call with the driver's next step:

* :class:`Flush` -- write ``data`` (waiting at most ``limit`` seconds), then call
  :meth:`DriverCore.wrote`;
* :class:`NeedData` -- read some bytes (waiting at most ``limit`` seconds), then call
  :meth:`DriverCore.received` (``b""`` = the peer closed); with ``early``, a driver that can
  tell that nothing is readable right now may call :meth:`DriverCore.idle` instead;
* :class:`Deliver` -- hand values to the consumer, then call :meth:`DriverCore.delivered`;
* :class:`~cedar.stream.protocol.Offload` -- call its ``function`` with :meth:`DriverCore.limit`
  where it blocks no other task, then hand the result to :meth:`DriverCore.computed`;
* :class:`Finished` -- the protocol's result.

A transport failure is reported with :meth:`DriverCore.failed` (it is thrown into the protocol,
which may explain it).
"""

from __future__ import annotations

import time
from typing import Any

from cedar.errors import CedarError, CedarTimeout, ConnectionClosed
from cedar.record import Record
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import (
    Action,
    Deliver,
    Finished,
    Offload,
    Protocol,
    ProtocolRunner,
    ReadMessage,
    ReadRaw,
    Write,
)

#: Held-back messages (``Send(flush=False)``) are written once they reach this many bytes.
WRITE_BATCH = 256 << 10
#: Least plaintext of a streamed message handed out early (see :meth:`DriverCore.idle`).
EARLY_PIECE = 16 << 10


class Deadline:
    """The moment a whole call must be over, however the peer paces its bytes.

    A per-read timeout alone lets a peer that drips one byte per read keep a call alive
    forever; every wait of a channel given a deadline is cut to the time left.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left (negative once past)."""
        return self._at - time.monotonic()

    def __repr__(self) -> str:
        return f"<Deadline {self.seconds} s, {max(self.remaining(), 0.0):.1f} s left>"


def deadline_passed(deadline: Deadline, doing: str, peer: str) -> CedarTimeout:
    """The error of a call that ran out of its deadline while ``doing`` something to ``peer``."""
    return CedarTimeout(
        f"the call did not finish within its {deadline.seconds} s deadline ({doing} {peer}); "
        "the peer is slow or stalled (raise timeout= if it is just slow)"
    )


class Waits:
    """How long a channel may wait, and how it says that it waited too long.

    ``timeout`` bounds each single wait; ``deadline`` (optional) the whole call.  Every driver
    words its failures with these, so a caller sees the same message whichever API it uses.
    """

    def __init__(self, timeout: float, peer: str, deadline: Deadline | None) -> None:
        self.timeout = timeout
        self.peer = peer
        self.deadline = deadline

    def limit(self, doing: str) -> float:
        """How long the next wait may take; :class:`CedarTimeout` once the deadline has passed."""
        if self.deadline is None:
            return self.timeout
        left = self.deadline.remaining()
        if left <= 0:
            raise self.timed_out(doing)
        return min(self.timeout, left)

    def timed_out(self, doing: str) -> CedarTimeout:
        """The error for a wait that ran out (the deadline's wording once it is the cause)."""
        if self.deadline is not None and self.deadline.remaining() < 0.05:  # timers round
            return deadline_passed(self.deadline, doing, self.peer)
        return CedarTimeout(f"timed out after {self.timeout} s {doing} {self.peer}")

    def already_closed(self) -> ConnectionClosed:
        """The error for using a connection this side has closed."""
        return ConnectionClosed(f"connection to {self.peer} is already closed")


class Flush(Record, frozen=True):
    """Driver step: write ``data`` within ``limit`` seconds (``payload``: the message in clear,
    when ``data`` is exactly one message; for drivers that record messages)."""

    __slots__ = ("data", "limit", "payload")
    data: bytes
    limit: float
    payload: bytes

    def __init__(self, data: bytes, limit: float, payload: bytes = b"") -> None:
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "limit", limit)
        object.__setattr__(self, "payload", payload)


class NeedData(Record, frozen=True):
    """Driver step: read more bytes within ``limit`` seconds.

    ``early``: a streamed message is being read; if nothing is readable right now, the driver
    may call :meth:`DriverCore.idle` to decode what has arrived instead of waiting idle.
    """

    __slots__ = ("limit", "early")
    limit: float
    early: bool

    def __init__(self, limit: float, early: bool = False) -> None:
        object.__setattr__(self, "limit", limit)
        object.__setattr__(self, "early", early)


Step = Flush | NeedData | Deliver | Finished | Offload


class DriverCore:
    """Runs one protocol for a driver, without I/O (see the module docstring for the steps)."""

    __slots__ = ("_after_flush", "_batch", "_chunks", "_no_early", "_reading", "_runner",
                 "_size", "conn", "waits")  # fmt: skip

    def __init__(
        self,
        conn: CedarConnection,
        protocol: Protocol[Any],
        waits: Waits,
        *,
        batch_writes: bool = True,
    ) -> None:
        self.conn = conn
        self.waits = waits
        self._runner = ProtocolRunner(conn, protocol)
        self._batch = batch_writes
        self._chunks: list[Write] = []  # held-back messages (Send(flush=False))
        self._size = 0
        self._after_flush: Action | None = None  # what to go on with after a Flush (None: resume)
        self._reading: ReadMessage | ReadRaw | None = None  # the read a NeedData is for
        self._no_early = False  # idle() found nothing to hand out: wait for bytes now

    def start(self) -> Step:
        """Run the protocol up to its first step for the driver."""
        return self._advance(self._runner.start())

    def wrote(self) -> Step:
        """The bytes of the last :class:`Flush` are written."""
        action, self._after_flush = self._after_flush, None
        return self._advance(self._runner.resume(None) if action is None else action)

    def received(self, data: bytes) -> Step:
        """Bytes read after a :class:`NeedData` (``b""``: the peer closed the connection)."""
        action = self._reading
        assert action is not None, "received() without a NeedData"
        self._reading = None
        self._no_early = False
        self.conn.receive_data(data)
        return self._advance(action)

    def idle(self) -> Step:
        """Nothing is readable right now (after a ``NeedData(early=True)``).

        Hands the protocol the part of the streamed message received so far if it is big enough
        to be worth decoding meanwhile; otherwise the next step waits for bytes.
        """
        action = self._reading
        assert isinstance(action, ReadMessage), "idle() without a NeedData(early=True)"
        self._reading = None
        message = self.conn.early_piece(EARLY_PIECE)
        if message is not None:
            return self._advance(self._runner.resume(message))
        self._no_early = True
        return self._advance(action)

    def delivered(self) -> Step:
        """The values of the last :class:`Deliver` were handed to the consumer."""
        return self._advance(self._runner.resume(None))

    def limit(self) -> float:
        """How long an :class:`Offload`'s function may take: what the call's deadline leaves
        (at least the per-wait timeout when there is no deadline)."""
        deadline = self.waits.deadline
        return self.waits.timeout if deadline is None else max(0.0, deadline.remaining())

    def computed(self, value: Any) -> Step:
        """The result of the last :class:`Offload`'s function."""
        return self._advance(self._runner.resume(value))

    def failed(self, error: CedarError) -> Step:
        """The transport failed during the last step: throw ``error`` into the protocol."""
        self._after_flush = self._reading = None
        self._no_early = False
        return self._advance(self._runner.throw(error))

    def close(self) -> None:
        """Abandon the protocol (runs its ``finally`` blocks)."""
        self._runner.close()

    def _flush(self, after: Action | None) -> Step:
        """Write what is held back, then go on with ``after`` (``None``: resume the protocol)."""
        chunks = self._chunks
        if len(chunks) == 1:
            data, payload = chunks[0].data, chunks[0].payload
        else:
            data, payload = b"".join(write.data for write in chunks), b""
        chunks.clear()
        self._size = 0
        try:
            limit = self.waits.limit("sending to")
        except CedarError as exc:
            return self._advance(self._runner.throw(exc))
        self._after_flush = after
        return Flush(data, limit, payload)

    def _advance(self, action: Action) -> Step:
        """Step the protocol until it needs the driver."""
        runner = self._runner
        while True:
            if isinstance(action, Write):
                self._chunks.append(action)
                self._size += len(action.data)
                if action.flush or not self._batch or self._size >= WRITE_BATCH:
                    return self._flush(None)
                action = runner.resume(None)
                continue
            if self._chunks:  # held-back messages go out before any wait, value or result
                return self._flush(action)
            if isinstance(action, ReadMessage):
                try:
                    message = self.conn.next_message(action.part_size)
                except CedarError as exc:
                    action = runner.throw(exc)
                    continue
                if message is not None:
                    action = runner.resume(message)
                    continue
            elif isinstance(action, ReadRaw):
                try:
                    raw = self.conn.next_raw(action.max_bytes)
                except CedarError as exc:
                    action = runner.throw(exc)
                    continue
                if raw is not None:
                    action = runner.resume(raw)
                    continue
            else:
                return action  # Deliver, Finished or Offload
            try:  # a real wait: bounded by the timeout and what is left of the deadline
                limit = self.waits.limit("waiting for")
            except CedarError as exc:
                action = runner.throw(exc)
                continue
            self._reading = action
            early = isinstance(action, ReadMessage) and action.part_size is not None
            return NeedData(limit, early and not self._no_early)
